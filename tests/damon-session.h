/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What the DAMON control tests share: a fake tree per test (setup/teardown),
 * a dp_damon_fs on it with the kernel-playing hook, the state file's place,
 * the decision as the daemon takes it, and an exact check of the writes. */

#include <check.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "damon-fake.h"
#include "damon-control.h"

#define CTX "kdamonds/0/contexts/0/"

static inline const char *state_path(void) {
        static char path[PATH_MAX];

        FAKE_FMT(path, "%s/damon.state", tmp_root);
        return path;
}

static inline struct dp_damon_fs *open_fake(void) {
        struct dp_damon_fs *fs = NULL;

        ck_assert_int_eq(dp_damon_fs_open(fake.admin, &fs), 0);
        dp_damon_fs_set_after_write(fs, fake_after_write, NULL);
        return fs;
}

/* The writes that reached files since the last fake_log_clear(), exactly. */
static inline void assert_log(const char *const *expected, size_t n) {
        for (size_t i = 0; i < n && i < fake.n_log; i++)
                ck_assert_msg(strcmp(fake.log[i], expected[i]) == 0, "write %zu: \"%s\", expected \"%s\"", i,
                              fake.log[i], expected[i]);
        ck_assert_msg(fake.n_log == n, "%zu writes, expected %zu (last: %s)", fake.n_log, n,
                      fake.n_log ? fake.log[fake.n_log - 1] : "none");
}

/* A pid that belonged to a process that has exited (made before anything
 * is allocated, so that the child leaves valgrind nothing to report). */
static pid_t dead_pid;

static inline pid_t make_dead_pid(void) {
        pid_t pid = fork();

        ck_assert_int_ge(pid, 0);
        if (pid == 0)
                _exit(0);
        ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
        return pid;
}

static inline void setup(void) {
        dead_pid = make_dead_pid();
        fake_make(false);
}

static inline void teardown(void) {
        tree_teardown();
}

static inline struct dp_damon_decision decide(struct dp_damon_fs *fs, int mode, int kdamond, bool paddr) {
        struct dp_damon_state prev = {};
        struct dp_damon_decision d;
        struct dp_damon_tree t;
        bool have;

        ck_assert_int_eq(dp_damon_discover(fs, &t), 0);
        have = dp_damon_state_load(state_path(), &prev) == 0;
        ck_assert_int_eq(dp_damon_decide(mode, kdamond, 0, &t, have ? &prev : NULL, false, paddr, &d), 0);
        dp_damon_state_done(&prev);
        return d;
}
