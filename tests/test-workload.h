/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Starts the demo workload (DP_WORKLOAD) for a test and reads where its hot
 * and cold areas are; stops it by the pid it started. */

#include <check.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct test_workload {
        pid_t pid;
        json_int_t hot_start, hot_end, cold_start, cold_end;
};

/* @rate: hot-area passes per second, NULL for as fast as it goes. */
static inline void test_workload_start_rate(struct test_workload *w, const char *seconds, const char *rate) {
        const char *path = getenv("DP_WORKLOAD");
        char line[512];
        json_int_t pid;
        int pipefd[2];
        json_t *j;
        FILE *f;

        ck_assert_msg(path, "DP_WORKLOAD not set");
        ck_assert_int_eq(pipe(pipefd), 0);
        w->pid = fork();
        ck_assert_int_ge(w->pid, 0);
        if (w->pid == 0) {
                dup2(pipefd[1], STDOUT_FILENO);
                close(pipefd[0]);
                if (rate)
                        execl(path, path, "--hot-mib", "4", "--cold-mib", "32", "--rate", rate, "--seconds", seconds,
                              NULL);
                else
                        execl(path, path, "--hot-mib", "4", "--cold-mib", "32", "--seconds", seconds, NULL);
                _exit(127);
        }
        close(pipefd[1]);
        f = fdopen(pipefd[0], "r");
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        fclose(f);
        j = json_loads(line, 0, NULL);
        ck_assert_msg(j, "workload printed no JSON: %s", line);
        ck_assert_int_eq(json_unpack(j, "{s:I,s:[II],s:[II]}", "pid", &pid, "hot", &w->hot_start, &w->hot_end,
                                     "cold", &w->cold_start, &w->cold_end), 0);
        ck_assert_int_eq(pid, w->pid);
        json_decref(j);
}

static inline void test_workload_start(struct test_workload *w, const char *seconds) {
        test_workload_start_rate(w, seconds, "50");
}

static inline void test_workload_stop(const struct test_workload *w) {
        kill(w->pid, SIGTERM);
        waitpid(w->pid, NULL, 0);
}
