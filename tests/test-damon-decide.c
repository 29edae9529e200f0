/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure parts of DAMON control: the role decision and the state file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "test-tree.h"
#include "config.h"
#include "damon-control.h"
#include "macro.h"

/* ---- decisions ---- */

static struct dp_damon_tree tree_of(unsigned nr_kdamonds) {
        struct dp_damon_tree t = { .nr_kdamonds = nr_kdamonds, .nr_listed = nr_kdamonds };

        for (unsigned k = 0; k < nr_kdamonds; k++)
                t.kdamonds[k] = (struct dp_damon_kdamond_info) { .index = k, .pid = -1, .nr_contexts = 1,
                                                                 .operations = "vaddr", .nr_targets = 1 };
        if (nr_kdamonds > 0)
                strcpy(t.features.avail_operations, "vaddr fvaddr paddr");
        return t;
}

static void set_running(struct dp_damon_tree *t, unsigned k, int pid) {
        t->kdamonds[k].running = true;
        t->kdamonds[k].pid = pid;
        t->any_running = true;
}

static struct dp_damon_decision decide(int mode, int kdamond, unsigned context, const struct dp_damon_tree *t,
                                       const struct dp_damon_state *prev, bool alive, bool paddr) {
        struct dp_damon_decision d;

        ck_assert_int_eq(dp_damon_decide(mode, kdamond, context, t, prev, alive, paddr, &d), 0);
        ck_assert_msg(d.reason[0], "every decision has a reason");
        return d;
}

START_TEST(test_decide_off_and_bad_mode) {
        struct dp_damon_tree t = tree_of(0);
        struct dp_damon_decision d = decide(DP_DAMON_OFF, -1, 0, &t, NULL, false, false);

        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OFF);
        ck_assert_int_eq(dp_damon_decide(42, -1, 0, &t, NULL, false, false, &d), -EINVAL);
        ck_assert_str_eq(dp_damon_role_name(DP_DAMON_ROLE_OFF), "off");
        ck_assert_str_eq(dp_damon_role_name(DP_DAMON_ROLE_OBSERVE), "observe_only");
        ck_assert_str_eq(dp_damon_role_name(DP_DAMON_ROLE_OWNED), "owned");
        ck_assert_str_eq(dp_damon_role_name(DP_DAMON_ROLE_ATTACHED), "attached");
}
END_TEST

START_TEST(test_decide_own) {
        struct dp_damon_state prev = { .role = DP_DAMON_ROLE_OWNED, .daemon_pid = 999, .kdamond_pid = 4242 };
        struct dp_damon_tree t = tree_of(0);
        struct dp_damon_decision d;

        /* No kdamond at all: ours to create. */
        d = decide(DP_DAMON_OWN, -1, 0, &t, NULL, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
        ck_assert(!d.recover);
        ck_assert_uint_eq(d.kdamond, 0);
        ck_assert_str_eq(d.reason, "no kdamond exists: creating kdamond 0 (vaddr)");
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, true);       /* a stale file changes nothing */
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
        ck_assert(!d.recover);

        /* A foreign kdamond, running or not. */
        t = tree_of(1);
        set_running(&t, 0, 77);
        d = decide(DP_DAMON_OWN, -1, 0, &t, NULL, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_str_eq(d.reason, "kdamond 0 is running (pid 77) and is not ours: observe only");
        t = tree_of(1);
        d = decide(DP_DAMON_OWN, -1, 0, &t, NULL, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_msg(strstr(d.reason, "destroy"), "%s", d.reason);

        /* Our leftover: off, or running with the pid we recorded. */
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
        ck_assert(d.recover);
        ck_assert_msg(strstr(d.reason, "leftover of damon-perfd pid 999"), "%s", d.reason);
        set_running(&t, 0, 4242);
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
        ck_assert(d.recover);
        set_running(&t, 0, 4243);               /* restarted by someone else */
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        prev.kdamond_pid = -1;                  /* crashed before recording the pid: no proof */
        set_running(&t, 0, 4242);
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        prev.kdamond_pid = 4242;

        /* The previous daemon lives: its kdamond is not a leftover. */
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, true, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_str_eq(d.reason, "damon-perfd pid 999 still holds the DAMON state file: observe only");

        /* Another kdamond beside ours: writing nr_kdamonds would destroy it. */
        t = tree_of(2);
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);

        /* An attached state names no kdamond of ours. */
        t = tree_of(1);
        prev.role = DP_DAMON_ROLE_ATTACHED;
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        prev.role = DP_DAMON_ROLE_OFF;          /* a restored state is no state */
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, true, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_msg(strstr(d.reason, "not ours"), "%s", d.reason);
}
END_TEST

START_TEST(test_decide_own_operations) {
        struct dp_damon_state prev = { .role = DP_DAMON_ROLE_OWNED, .daemon_pid = 999, .kdamond_pid = -1 };
        struct dp_damon_tree t = tree_of(1);
        struct dp_damon_decision d;

        strcpy(t.features.avail_operations, "paddr");
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_str_eq(d.reason, "DAMON offers operations \"paddr\", not vaddr: observe only");
        d = decide(DP_DAMON_OWN, -1, 0, &t, &prev, false, true);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
}
END_TEST

START_TEST(test_decide_attach) {
        struct dp_damon_state prev = { .role = DP_DAMON_ROLE_ATTACHED, .daemon_pid = 999, .kdamond = 1 };
        struct dp_damon_tree t = tree_of(2);
        struct dp_damon_decision d;

        d = decide(DP_DAMON_ATTACH, -1, 0, &t, NULL, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        d = decide(DP_DAMON_ATTACH, 2, 0, &t, NULL, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_str_eq(d.reason, "kdamond 2 does not exist (nr_kdamonds is 2): observe only");
        d = decide(DP_DAMON_ATTACH, 1, 1, &t, NULL, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_str_eq(d.reason, "kdamond 1 has no context 1 (nr_contexts is 1): observe only");

        d = decide(DP_DAMON_ATTACH, 1, 0, &t, NULL, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_ATTACHED);
        ck_assert_uint_eq(d.kdamond, 1);
        ck_assert_uint_eq(d.context, 0);
        ck_assert(!d.recover);
        ck_assert_str_eq(d.reason, "attaching to kdamond 1 context 0 (off)");
        set_running(&t, 1, 55);
        d = decide(DP_DAMON_ATTACH, 1, 0, &t, &prev, false, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_ATTACHED);
        ck_assert(d.recover);
        ck_assert_str_eq(d.reason, "attaching to kdamond 1 context 0 (running, pid 55), recovering a previous attach");
        d = decide(DP_DAMON_ATTACH, 1, 0, &t, &prev, true, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
}
END_TEST

/* ---- the state file ---- */

static const char *state_path(void) {
        static char path[PATH_MAX];

        ck_assert((size_t) snprintf(path, sizeof(path), "%s/damon.state", tmp_root) < sizeof(path));
        return path;
}

static void setup(void) {
        test_tree_make("/tmp/dp-damon-state-XXXXXX");
}

START_TEST(test_state_round_trip) {
        struct dp_damon_state s = { .role = DP_DAMON_ROLE_OWNED, .daemon_pid = 123, .kdamond_pid = -1 };
        struct dp_damon_state l = {};

        ck_assert_int_eq(dp_damon_state_load(state_path(), &l), -ENOENT);
        ck_assert_int_eq(dp_damon_state_save(&s, state_path()), 0);
        ck_assert_int_eq(dp_damon_state_load(state_path(), &l), 0);
        ck_assert_int_eq(l.role, DP_DAMON_ROLE_OWNED);
        ck_assert_int_eq(l.daemon_pid, 123);
        ck_assert_uint_eq(l.kdamond, 0);
        ck_assert_int_eq(l.kdamond_pid, -1);
        ck_assert_uint_eq(l.nr_originals, 0);

        s = (struct dp_damon_state) { .role = DP_DAMON_ROLE_ATTACHED, .daemon_pid = 7, .kdamond = 3, .context = 0,
                                      .kdamond_pid = 88 };
        ck_assert_int_eq(dp_damon_state_add_original(&s, "kdamonds/3/contexts/0/targets/0/regions/0/start", "4096"), 0);
        ck_assert_int_eq(dp_damon_state_add_original(&s, "kdamonds/3/contexts/0/schemes/0/action", ""), 0);
        ck_assert_int_eq(dp_damon_state_add_original(&s, "kdamonds/3/x", "a b"), 0);
        ck_assert_int_eq(dp_damon_state_add_original(&s, "kdamonds/3/x y", "1"), -EINVAL);
        ck_assert_int_eq(dp_damon_state_add_original(&s, "kdamonds/3/x", "1\n2"), -EINVAL);
        ck_assert_int_eq(dp_damon_state_add_original(&s, "kdamonds/3/x",
                                                     "0123456789012345678901234567890123456789012345678901234567890123"),
                         -E2BIG);
        ck_assert_int_eq(dp_damon_state_save(&s, state_path()), 0);
        ck_assert_int_eq(access(state_path(), F_OK), 0);
        {
                char tmp[PATH_MAX];

                ck_assert((size_t) snprintf(tmp, sizeof(tmp), "%s.tmp", state_path()) < sizeof(tmp));
                ck_assert_int_ne(access(tmp, F_OK), 0);         /* renamed over the file */
        }
        ck_assert_int_eq(dp_damon_state_load(state_path(), &l), 0);
        ck_assert_int_eq(l.role, DP_DAMON_ROLE_ATTACHED);
        ck_assert_uint_eq(l.kdamond, 3);
        ck_assert_int_eq(l.kdamond_pid, 88);
        ck_assert_uint_eq(l.nr_originals, 3);
        ck_assert_str_eq(l.originals[0].path, "kdamonds/3/contexts/0/targets/0/regions/0/start");
        ck_assert_str_eq(l.originals[0].value, "4096");
        ck_assert_str_eq(l.originals[1].value, "");
        ck_assert_str_eq(l.originals[2].value, "a b");
        ck_assert_ptr_eq(dp_damon_state_find_original(&l, "kdamonds/3/x"), &l.originals[2]);
        ck_assert_ptr_null(dp_damon_state_find_original(&l, "kdamonds/3/y"));
        dp_damon_state_done(&l);
        dp_damon_state_done(&s);
        ck_assert_ptr_null(s.originals);

        s.role = DP_DAMON_ROLE_OBSERVE;
        ck_assert_int_eq(dp_damon_state_save(&s, state_path()), -EINVAL);
        ck_assert_int_eq(dp_damon_state_remove(state_path()), 0);
        ck_assert_int_eq(dp_damon_state_remove(state_path()), 0);
        ck_assert_int_eq(dp_damon_state_load(state_path(), &l), -ENOENT);
}
END_TEST

#define GOOD_HEAD "version=1\nrole=attached\ndaemon_pid=5\nkdamond=0\ncontext=0\nkdamond_pid=-1\n"

START_TEST(test_state_garbled) {
        static const char *const garbled[] = {
                "garbage",
                "",
                GOOD_HEAD,                                              /* truncated: no end */
                GOOD_HEAD "end\nrole=owned\n",                          /* something after end */
                GOOD_HEAD "colour=blue\nend\n",                         /* unknown key */
                GOOD_HEAD "kdamond=0\nend\n",                           /* twice */
                "version=2\nrole=owned\ndaemon_pid=5\nkdamond=0\ncontext=0\nkdamond_pid=-1\nend\n",
                "version=1\nrole=observe\ndaemon_pid=5\nkdamond=0\ncontext=0\nkdamond_pid=-1\nend\n",
                "version=1\nrole=owned\ndaemon_pid=0\nkdamond=0\ncontext=0\nkdamond_pid=-1\nend\n",
                "version=1\nrole=owned\ndaemon_pid=5x\nkdamond=0\ncontext=0\nkdamond_pid=-1\nend\n",
                "version=1\nrole=owned\ndaemon_pid=5\nkdamond=-1\ncontext=0\nkdamond_pid=-1\nend\n",
                "version=1\nrole=owned\ndaemon_pid=5\nkdamond=0\ncontext=0\nkdamond_pid=-2\nend\n",
                "version=1\nrole=owned\ndaemon_pid=5\ncontext=0\nkdamond_pid=-1\nend\n",   /* no kdamond */
                "version=1\nrole=owned\ndaemon_pid=5\nkdamond=0\ncontext=0\nkdamond_pid=-1\n"
                "original=kdamonds/0/state on\nend\n",                  /* owned has no originals */
                GOOD_HEAD "original=kdamonds/1/state on\nend\n",        /* not our kdamond */
                GOOD_HEAD "original=kdamonds/0/../1/state on\nend\n",
                GOOD_HEAD "original=/kdamonds/0/state on\nend\n",
                GOOD_HEAD "original=kdamonds/0/ on\nend\n",
                GOOD_HEAD "original=kdamonds/0/state\nend\n",           /* no value separator */
                GOOD_HEAD "end",                                        /* (this one is fine: see below) */
        };
        struct dp_damon_state l = { .daemon_pid = -7 };

        for (size_t i = 0; i + 1 < DP_ARRAY_SIZE(garbled); i++) {
                put("damon.state", garbled[i]);
                ck_assert_msg(dp_damon_state_load(state_path(), &l) == -EBADMSG, "accepted: %s", garbled[i]);
                ck_assert_int_eq(l.daemon_pid, -7);     /* untouched */
        }
        put("damon.state", garbled[DP_ARRAY_SIZE(garbled) - 1]);
        ck_assert_int_eq(dp_damon_state_load(state_path(), &l), 0);
        dp_damon_state_done(&l);

        {
                /* A NUL byte hidden in the middle. */
                int fd = open(state_path(), O_WRONLY | O_TRUNC);
                static const char text[] = GOOD_HEAD "\0end\n";

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, text, sizeof(text) - 1), (ssize_t) sizeof(text) - 1);
                close(fd);
                ck_assert_int_eq(dp_damon_state_load(state_path(), &l), -EBADMSG);
        }
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("damon-decide");
        TCase *tc = tcase_create("decide");
        TCase *files = tcase_create("state-file");

        tcase_add_test(tc, test_decide_off_and_bad_mode);
        tcase_add_test(tc, test_decide_own);
        tcase_add_test(tc, test_decide_own_operations);
        tcase_add_test(tc, test_decide_attach);
        suite_add_tcase(s, tc);
        tcase_add_checked_fixture(files, setup, tree_teardown);
        tcase_add_test(files, test_state_round_trip);
        tcase_add_test(files, test_state_garbled);
        suite_add_tcase(s, files);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
