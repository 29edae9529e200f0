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
        json_int_t moved_start, moved_end;      /* test_workload_start_moving(): the window's second place */
};

/* Starts the workload with @argv (its path first, NULL-terminated) and
 * returns the JSON line it prints first; its pid into @w. */
static inline json_t *test_workload_spawn(struct test_workload *w, char *const argv[]) {
        char line[512];
        json_int_t pid;
        int pipefd[2];
        json_t *j;
        FILE *f;

        ck_assert_int_eq(pipe(pipefd), 0);
        w->pid = fork();
        ck_assert_int_ge(w->pid, 0);
        if (w->pid == 0) {
                dup2(pipefd[1], STDOUT_FILENO);
                close(pipefd[0]);
                execv(argv[0], argv);
                _exit(127);
        }
        close(pipefd[1]);
        f = fdopen(pipefd[0], "r");
        ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
        fclose(f);
        j = json_loads(line, 0, NULL);
        ck_assert_msg(j, "workload printed no JSON: %s", line);
        ck_assert_int_eq(json_unpack(j, "{s:I}", "pid", &pid), 0);
        ck_assert_int_eq(pid, w->pid);
        return j;
}

static inline const char *test_workload_path(void) {
        const char *path = getenv("DP_WORKLOAD");

        ck_assert_msg(path, "DP_WORKLOAD not set");
        return path;
}

/* @rate: hot-area passes per second, NULL for as fast as it goes. */
static inline void test_workload_start_rate(struct test_workload *w, const char *seconds, const char *rate) {
        char *argv[] = { (char *) test_workload_path(), "--hot-mib", "4", "--cold-mib", "32", "--seconds",
                         (char *) seconds, rate ? "--rate" : NULL, (char *) rate, NULL };
        json_t *j = test_workload_spawn(w, argv);

        ck_assert_int_eq(json_unpack(j, "{s:[II],s:[II]}", "hot", &w->hot_start, &w->hot_end, "cold",
                                     &w->cold_start, &w->cold_end), 0);
        json_decref(j);
}

/* A 4 MiB hot window, 8 MiB into a 64 MiB mapping touched once, that moves
 * to 48 MiB in after @move_after seconds: hot_* then moved_*; cold_* is the
 * mapping. */
static inline void test_workload_start_moving(struct test_workload *w, const char *seconds, const char *move_after) {
        char *argv[] = { (char *) test_workload_path(), "--shape", "window", "--span-mib", "64", "--window-mib", "4",
                         "--window-at-mib", "8", "--move-to-mib", "48", "--move-after", (char *) move_after,
                         "--seconds", (char *) seconds, NULL };
        json_t *j = test_workload_spawn(w, argv);

        ck_assert_int_eq(json_unpack(j, "{s:[II],s:[{s:[[II]]},{s:[[II]]}]}", "map", &w->cold_start, &w->cold_end,
                                     "phases", "hot", &w->hot_start, &w->hot_end, "hot", &w->moved_start,
                                     &w->moved_end), 0);
        json_decref(j);
}

static inline void test_workload_start(struct test_workload *w, const char *seconds) {
        test_workload_start_rate(w, seconds, "50");
}

static inline void test_workload_stop(const struct test_workload *w) {
        kill(w->pid, SIGTERM);
        waitpid(w->pid, NULL, 0);
}
