/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Runs damonctl (DP_DAMONCTL) as a user would, against the daemon at
 * @address, and collects its exit status, stdout and stderr through files
 * in @dir.  Shared by the fake-daemon and the end-to-end tests. */

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

struct run {
        int status;
        char *out, *err;
};

static inline void run_done(struct run *r) {
        free(r->out);
        free(r->err);
        *r = (struct run) {0};
}

/* The whole file, or "" when it does not exist. */
static inline char *slurp(const char *path) {
        char *text = NULL;
        size_t size = 0;
        FILE *in = fopen(path, "r"), *out = open_memstream(&text, &size);
        int c;

        ck_assert_ptr_nonnull(out);
        while (in && (c = fgetc(in)) != EOF)
                fputc(c, out);
        if (in)
                fclose(in);
        fclose(out);
        return text;
}

/* Starts damonctl with @args (NULL-terminated), as @uid when it is not 0. */
static inline pid_t ctl_spawn(const char *dir, const char *address, uid_t uid, const char *const *args) {
        const char *ctl = getenv("DP_DAMONCTL");
        const char *argv[16] = { ctl };
        char out[256], err[256];
        size_t n = 1;
        pid_t pid;

        ck_assert_msg(ctl, "DP_DAMONCTL not set");
        for (; args[n - 1] && n < DP_ARRAY_SIZE(argv) - 1; n++)
                argv[n] = args[n - 1];
        argv[n] = NULL;
        snprintf(out, sizeof(out), "%s/stdout", dir);
        snprintf(err, sizeof(err), "%s/stderr", dir);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
                int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

                if (o < 0 || e < 0 || dup2(o, STDOUT_FILENO) < 0 || dup2(e, STDERR_FILENO) < 0)
                        _exit(126);
                setenv("DAMON_PERFD_ADDRESS", address, 1);
                if (uid != 0 && (setgid(uid) < 0 || setuid(uid) < 0))
                        _exit(126);
                execv(ctl, (char *const *) argv);
                _exit(127);
        }
        return pid;
}

static inline struct run ctl_collect(const char *dir, pid_t pid) {
        char path[256];
        struct run r = {0};
        int status;

        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        snprintf(path, sizeof(path), "%s/stdout", dir);
        r.out = slurp(path);
        snprintf(path, sizeof(path), "%s/stderr", dir);
        r.err = slurp(path);
        return r;
}
