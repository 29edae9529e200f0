/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DAMON sessions against fake trees (tests/damon-fake.h): owning, committing
 * hints, feeding the goal, reading back, restoring, recovering after a
 * crash, and leaving a foreign kdamond byte for byte as it was.  Attaching:
 * test-damon-attach.c. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "damon-session.h"
#include "config.h"
#include "damon-control.h"
#include "macro.h"

static const struct dp_damon_range regions_a[] = { { 0x1000, 0x3000 }, { 0x5000, 0x6000 } };
static const struct dp_damon_target_hint two_targets[] = {
        { .pid = 100, .regions = regions_a, .nr_regions = 2 },
        { .pid = 200 },
};

static struct dp_damon_own_params vaddr_params(bool goal) {
        return (struct dp_damon_own_params) {
                .operations = "vaddr",
                .sample_us = 5000,
                .aggr_us = 100000,
                .update_us = 1000000,
                .min_nr_regions = 10,
                .max_nr_regions = 1000,
                .quota_goal = goal,
                .goal_target_value = 2000,
                .targets = two_targets,
                .nr_targets = 2,
        };
}

/* Creates and turns on our kdamond 0 (vaddr) in an empty tree. */
static void own(struct dp_damon_fs *fs, bool goal, struct dp_damon_state *st) {
        struct dp_damon_own_params p = vaddr_params(goal);
        struct dp_damon_decision d = decide(fs, DP_DAMON_OWN, -1, false);

        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), st), 0);
        fake_log_clear();
}

static const char *const own_sequence[] = {
        "kdamonds/nr_kdamonds=1",
        "kdamonds/0/contexts/nr_contexts=1",
        CTX "operations=vaddr",
        CTX "monitoring_attrs/intervals/sample_us=5000",
        CTX "monitoring_attrs/intervals/aggr_us=100000",
        CTX "monitoring_attrs/intervals/update_us=1000000",
        CTX "monitoring_attrs/nr_regions/min=10",
        CTX "monitoring_attrs/nr_regions/max=1000",
        CTX "targets/nr_targets=2",
        CTX "targets/0/pid_target=100",
        CTX "targets/0/regions/nr_regions=2",
        CTX "targets/0/regions/0/start=4096",
        CTX "targets/0/regions/0/end=12288",
        CTX "targets/0/regions/1/start=20480",
        CTX "targets/0/regions/1/end=24576",
        CTX "targets/1/pid_target=200",
        CTX "schemes/nr_schemes=1",
        CTX "schemes/0/action=stat",
        CTX "schemes/0/access_pattern/sz/min=0",
        CTX "schemes/0/access_pattern/sz/max=18446744073709551615",
        CTX "schemes/0/access_pattern/nr_accesses/min=0",
        CTX "schemes/0/access_pattern/nr_accesses/max=4294967295",
        CTX "schemes/0/access_pattern/age/min=0",
        CTX "schemes/0/access_pattern/age/max=4294967295",
        CTX "schemes/0/quotas/goals/nr_goals=1",
        CTX "schemes/0/quotas/goals/0/target_metric=user_input",
        CTX "schemes/0/quotas/goals/0/target_value=2000",
        CTX "schemes/0/quotas/goals/0/current_value=0",
        CTX "schemes/0/watermarks/metric=none",
        "kdamonds/0/state=on",
};

START_TEST(test_own_start_sequence) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_own_params p = vaddr_params(true);
        struct dp_damon_state st = {}, saved = {};
        struct dp_damon_decision d = decide(fs, DP_DAMON_OWN, -1, false);

        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), 0);
        assert_log(own_sequence, DP_ARRAY_SIZE(own_sequence));
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "on");
        ck_assert_str_eq(fake_get(CTX "targets/0/regions/1/end"), "24576");
        ck_assert_str_eq(fake_get(CTX "targets/1/regions/nr_regions"), "0");
        ck_assert_str_eq(fake_get(CTX "schemes/0/quotas/goals/0/target_metric"), "user_input");
        ck_assert_int_eq(st.role, DP_DAMON_ROLE_OWNED);
        ck_assert_int_eq(st.daemon_pid, getpid());
        ck_assert_uint_eq(st.kdamond, 0);
        ck_assert_int_eq(st.kdamond_pid, FAKE_FIRST_PID);
        ck_assert_int_eq(dp_damon_state_load(state_path(), &saved), 0);
        ck_assert_int_eq(saved.role, DP_DAMON_ROLE_OWNED);
        ck_assert_int_eq(saved.daemon_pid, getpid());
        ck_assert_int_eq(saved.kdamond_pid, FAKE_FIRST_PID);
        ck_assert_int_eq(dp_damon_fs_granted_kdamond(fs), 0);
        ck_assert_uint_eq(dp_damon_fs_refused(fs), 0);
        dp_damon_state_done(&saved);
}
END_TEST

/* A failing write stops the sequence; only the undo follows it. */
START_TEST(test_own_start_failure_undone) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_own_params p = vaddr_params(true);
        struct dp_damon_decision d = decide(fs, DP_DAMON_OWN, -1, false);
        struct dp_damon_state st = {};

        /* schemes/nr_schemes becomes a directory as soon as the context exists. */
        FAKE_FMT(fake.sabotage, CTX "schemes/nr_schemes");
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -EISDIR);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), CTX "schemes/nr_schemes");
        ck_assert_uint_eq(fake.n_log, 17);
        ck_assert_str_eq(fake.log[15], CTX "targets/1/pid_target=200");        /* the last before the failure */
        ck_assert_str_eq(fake.log[16], "kdamonds/nr_kdamonds=0");               /* kdamond off: no "off" */
        ck_assert(!fake_exists("kdamonds/0"));
        ck_assert_int_eq(access(state_path(), F_OK), -1);
        ck_assert_int_eq(dp_damon_fs_granted_kdamond(fs), -1);
        ck_assert_int_eq(st.role, DP_DAMON_ROLE_OFF);   /* untouched */

        /* The same after turning on: the state file vanished, so "on" fails. */
        fake_log_clear();
        FAKE_FMT(fake.sabotage, "kdamonds/0/state");
        fake.sabotage_remove = true;
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -ENOENT);
        ck_assert_str_eq(fake.log[fake.n_log - 2], CTX "schemes/0/watermarks/metric=none");
        ck_assert_str_eq(fake.log[fake.n_log - 1], "kdamonds/nr_kdamonds=0");
        ck_assert_int_eq(access(state_path(), F_OK), -1);
}
END_TEST

START_TEST(test_own_start_refusals) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_own_params p = vaddr_params(false);
        struct dp_damon_decision d = decide(fs, DP_DAMON_OWN, -1, false), observe = { .role = DP_DAMON_ROLE_OBSERVE };
        struct dp_damon_state st = {};

        ck_assert_int_eq(dp_damon_own_start(fs, &observe, &p, state_path(), &st), -EPERM);
        p.nr_targets = 0;
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -EINVAL);
        p = vaddr_params(false);
        p.operations = "fvaddr";
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -EINVAL);
        p = vaddr_params(false);
        p.min_nr_regions = 2;
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -EINVAL);
        ck_assert_uint_eq(fake.n_log, 0);

        /* vaddr missing from avail_operations: found once the context exists. */
        fake.avail = "paddr";
        p = vaddr_params(false);
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -EOPNOTSUPP);
        ck_assert_uint_eq(fake.n_log, 3);
        ck_assert_str_eq(fake.log[2], "kdamonds/nr_kdamonds=0");
        ck_assert_int_eq(access(state_path(), F_OK), -1);

        /* Someone created a kdamond after the decision. */
        fake_log_clear();
        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake.avail = "vaddr paddr";
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -EEXIST);
        ck_assert_uint_eq(fake.n_log, 0);
        ck_assert_int_eq(access(state_path(), F_OK), -1);
}
END_TEST

/* A foreign kdamond, running or stopped: observe only, and not one byte of
 * the tree changes whatever the daemon-facing API is asked. */
static void check_foreign_untouched(bool running) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ char *before = NULL, *after = NULL;
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        struct dp_damon_own_params p = vaddr_params(true);
        struct dp_damon_state st = {}, forged = { .role = DP_DAMON_ROLE_OWNED, .daemon_pid = 1 };
        struct dp_damon_decision d, forged_d = { .role = DP_DAMON_ROLE_OWNED };
        size_t n = 0;

        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake_admin_write("kdamonds/0/contexts/nr_contexts", "1");
        fake_admin_write(CTX "targets/nr_targets", "1");
        fake_admin_write(CTX "targets/0/pid_target", "555");
        fake_admin_write(CTX "schemes/nr_schemes", "1");
        fake_admin_write(CTX "schemes/0/action", "pageout");
        fake_admin_write(CTX "schemes/0/quotas/goals/nr_goals", "1");
        if (running)
                fake_admin_write("kdamonds/0/state", "on");
        before = fake_snapshot();

        d = decide(fs, DP_DAMON_OWN, -1, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        ck_assert_msg(strstr(d.reason, "not ours"), "%s", d.reason);

        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), -EPERM);
        ck_assert_int_eq(dp_damon_own_start(fs, &forged_d, &p, state_path(), &st), -EEXIST);
        ck_assert_int_eq(dp_damon_attach_start(fs, &d, state_path(), &st), -EPERM);
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), two_targets, 2), -EPERM);
        ck_assert_int_eq(dp_damon_feed_goal(fs, &st, state_path(), 5), -EPERM);
        /* Even a forged session state writes nothing: no start granted anything. */
        ck_assert_int_eq(dp_damon_commit_hints(fs, &forged, state_path(), two_targets, 2), -EPERM);
        ck_assert_int_eq(dp_damon_feed_goal(fs, &forged, state_path(), 5), -EPERM);
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), -EPERM);
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);

        after = fake_snapshot();
        fake_assert_same(before, after);
        ck_assert_uint_eq(fake.n_log, 0);
        ck_assert_uint_eq(dp_damon_fs_refused(fs), 3);
        ck_assert_int_eq(access(state_path(), F_OK), -1);
}

START_TEST(test_foreign_running_untouched) {
        check_foreign_untouched(true);
}
END_TEST

START_TEST(test_foreign_stopped_untouched) {
        check_foreign_untouched(false);
}
END_TEST

START_TEST(test_commit_owned) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        static const struct dp_damon_range r1[] = { { 0x10000, 0x20000 } };
        static const struct dp_damon_range r2[] = { { 0x1000, 0x2000 }, { 0x8000, 0x9000 }, { 0xa000, 0xb000 } };
        const struct dp_damon_target_hint hints[] = {
                { .pid = 100, .regions = r1, .nr_regions = 1 },
                { .pid = 300, .regions = r2, .nr_regions = 3 },
        };
        static const char *const expected[] = {
                CTX "targets/0/pid_target=100",
                CTX "targets/0/regions/nr_regions=1",
                CTX "targets/0/regions/0/start=65536",
                CTX "targets/0/regions/0/end=131072",
                CTX "targets/1/pid_target=300",
                CTX "targets/1/regions/nr_regions=3",
                CTX "targets/1/regions/0/start=4096",
                CTX "targets/1/regions/0/end=8192",
                CTX "targets/1/regions/1/start=32768",
                CTX "targets/1/regions/1/end=36864",
                CTX "targets/1/regions/2/start=40960",
                CTX "targets/1/regions/2/end=45056",
                "kdamonds/0/state=commit",
        };
        static const char *const fewer[] = {
                CTX "targets/nr_targets=1",
                CTX "targets/0/pid_target=300",
                CTX "targets/0/regions/nr_regions=3",
                CTX "targets/0/regions/0/start=4096",
                CTX "targets/0/regions/0/end=8192",
                CTX "targets/0/regions/1/start=32768",
                CTX "targets/0/regions/1/end=36864",
                CTX "targets/0/regions/2/start=40960",
                CTX "targets/0/regions/2/end=45056",
                "kdamonds/0/state=commit",
        };
        struct dp_damon_state st = {};

        own(fs, false, &st);
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), hints, 2), 0);
        assert_log(expected, DP_ARRAY_SIZE(expected));
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "on");

        fake_log_clear();
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), hints + 1, 1), 0);
        assert_log(fewer, DP_ARRAY_SIZE(fewer));
        ck_assert_str_eq(fake_get(CTX "targets/nr_targets"), "1");
        ck_assert(!fake_exists(CTX "targets/1"));
}
END_TEST

/* The kdamond stopped under us (every target exited): the commit turns it on
 * again and records the new pid. */
START_TEST(test_commit_turns_on_again) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_state st = {}, saved = {};

        own(fs, false, &st);
        fake_admin_write("kdamonds/0/state", "off");
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), two_targets, 2), 0);
        ck_assert_str_eq(fake.log[fake.n_log - 1], "kdamonds/0/state=on");
        ck_assert_int_eq(st.kdamond_pid, FAKE_FIRST_PID + 1);
        ck_assert_int_eq(dp_damon_state_load(state_path(), &saved), 0);
        ck_assert_int_eq(saved.kdamond_pid, FAKE_FIRST_PID + 1);
        dp_damon_state_done(&saved);
}
END_TEST

START_TEST(test_commit_invalid_refused) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        static const struct dp_damon_range unsorted[] = { { 0x5000, 0x6000 }, { 0x1000, 0x2000 } };
        static const struct dp_damon_range overlapping[] = { { 0x1000, 0x3000 }, { 0x2000, 0x4000 } };
        static const struct dp_damon_range empty[] = { { 0x1000, 0x1000 } };
        static const struct dp_damon_range inverted[] = { { 0x2000, 0x1000 } };
        static const struct dp_damon_range three[] = { { 0, 1 }, { 1, 2 }, { 2, 3 } };
        const struct dp_damon_target_hint bad[][2] = {
                { { .pid = 1, .regions = unsorted, .nr_regions = 2 } },
                { { .pid = 1, .regions = overlapping, .nr_regions = 2 } },
                { { .pid = 1, .regions = empty, .nr_regions = 1 } },
                { { .pid = 1, .regions = inverted, .nr_regions = 1 } },
                { { .pid = 1, .regions = NULL, .nr_regions = 1 } },
                { { .pid = 0, .regions = three, .nr_regions = 1 } },            /* vaddr needs a pid */
                { { .pid = 7 }, { .pid = 7 } },                                 /* twice the same */
                { { .pid = 1, .regions = three, .nr_regions = 3 } },            /* over max (2, below) */
        };
        struct dp_damon_state st = {};

        own(fs, false, &st);
        fake_admin_write(CTX "monitoring_attrs/nr_regions/max", "2");
        for (size_t i = 0; i < DP_ARRAY_SIZE(bad); i++)
                ck_assert_msg(dp_damon_commit_hints(fs, &st, state_path(), bad[i], bad[i][1].pid ? 2 : 1) == -EINVAL,
                              "layout %zu accepted", i);
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), bad[0], 0), -EINVAL);   /* no target */
        ck_assert_uint_eq(fake.n_log, 0);
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &bad[7][0], 1), -EINVAL);
        fake_admin_write(CTX "monitoring_attrs/nr_regions/max", "3");
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &bad[7][0], 1), 0);
}
END_TEST

/* addr_unit (6.18): addresses in units; starts round down, ends up, and a
 * region swallowed by its predecessor's rounding is dropped. */
START_TEST(test_commit_addr_unit) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        static const struct dp_damon_range ram[] = { { 0x100000000, 0x180000000 } };
        static const struct dp_damon_range hot[] = {
                { 0x1000, 0x3800 }, { 0x3800, 0x4800 }, { 0x4900, 0x4a00 }, { 0x10000, 0x10001 },
        };
        const struct dp_damon_target_hint phys = { .pid = 0, .regions = ram, .nr_regions = 1 };
        const struct dp_damon_target_hint hint = { .pid = 0, .regions = hot, .nr_regions = 4 };
        const struct dp_damon_target_hint two[] = { hint, hint }, pid = { .pid = 5, .regions = ram, .nr_regions = 1 },
                                          none = { .pid = 0 };
        static const char *const expected[] = {
                CTX "targets/0/regions/nr_regions=3",
                CTX "targets/0/regions/0/start=1",
                CTX "targets/0/regions/0/end=4",
                CTX "targets/0/regions/1/start=4",
                CTX "targets/0/regions/1/end=5",
                CTX "targets/0/regions/2/start=16",
                CTX "targets/0/regions/2/end=17",
                "kdamonds/0/state=commit",
        };
        struct dp_damon_own_params p = vaddr_params(false);
        struct dp_damon_decision d;
        struct dp_damon_state st = {};

        tree_teardown();
        fake_make(true);
        fs = open_fake();
        p.operations = "paddr";
        p.targets = &phys;
        p.nr_targets = 1;
        d = decide(fs, DP_DAMON_OWN, -1, true);
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), 0);
        ck_assert_str_eq(fake_get(CTX "operations"), "paddr");
        ck_assert_str_eq(fake_get(CTX "targets/0/pid_target"), "0");           /* never written for paddr */
        ck_assert_str_eq(fake_get(CTX "targets/0/regions/0/start"), "4294967296");

        fake_log_clear();
        fake_admin_write(CTX "addr_unit", "4096");
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &hint, 1), 0);
        assert_log(expected, DP_ARRAY_SIZE(expected));

        /* paddr: exactly one target, pid 0, with regions. */
        fake_log_clear();
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), two, 2), -EINVAL);
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &pid, 1), -EINVAL);
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &none, 1), -EINVAL);
        fake_admin_write(CTX "addr_unit", "0");
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &hint, 1), -EBADMSG);
        ck_assert_uint_eq(fake.n_log, 0);
}
END_TEST

START_TEST(test_commit_error_stops) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_state st = {};

        own(fs, false, &st);
        FAKE_FMT(fake.sabotage, CTX "targets/1/pid_target");
        fake.sabotage_remove = true;
        fake_apply_sabotage();
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), two_targets, 2), -ENOENT);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), CTX "targets/1/pid_target");
        ck_assert_uint_eq(fake.n_log, 5);
        ck_assert_str_eq(fake.log[4], CTX "targets/0/regions/1/end=24576");    /* then nothing, no commit */

        FAKE_FMT(fake.sabotage, CTX "targets/0/regions/0/start");
        fake.sabotage_remove = false;
        fake_apply_sabotage();
        fake_log_clear();
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), two_targets, 2), -EISDIR);
        ck_assert_uint_eq(fake.n_log, 1);
}
END_TEST

START_TEST(test_feed_goal) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        static const char *const expected[] = {
                CTX "schemes/0/quotas/goals/0/current_value=1234",
                "kdamonds/0/state=commit_schemes_quota_goals",
        };
        struct dp_damon_state st = {};

        own(fs, true, &st);
        ck_assert_int_eq(dp_damon_feed_goal(fs, &st, state_path(), 1234), 0);
        assert_log(expected, DP_ARRAY_SIZE(expected));

        /* Off: the value is written for the next start, and nothing committed. */
        fake_admin_write("kdamonds/0/state", "off");
        fake_log_clear();
        ck_assert_int_eq(dp_damon_feed_goal(fs, &st, state_path(), 99), 0);
        ck_assert_uint_eq(fake.n_log, 1);
        ck_assert_str_eq(fake.log[0], CTX "schemes/0/quotas/goals/0/current_value=99");
        ck_assert_str_eq(fake_get(CTX "schemes/0/quotas/goals/0/current_value"), "99");

        /* Goals of another metric are not ours to feed. */
        fake_admin_write(CTX "schemes/0/quotas/goals/0/target_metric", "some_mem_psi_us");
        fake_log_clear();
        ck_assert_int_eq(dp_damon_feed_goal(fs, &st, state_path(), 1), -ENOENT);
        ck_assert_uint_eq(fake.n_log, 0);
}
END_TEST

START_TEST(test_feed_goal_none) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_state st = {};

        own(fs, false, &st);
        ck_assert_int_eq(dp_damon_feed_goal(fs, &st, state_path(), 1), -ENOENT);
        ck_assert_uint_eq(fake.n_log, 0);
}
END_TEST

START_TEST(test_read_tried) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        struct dp_damon_state st = {};
        size_t n = 99;

        own(fs, false, &st);
        fake.tried[0] = (struct fake_region) { 0x1000, 0x3000, 5, 2 };
        fake.tried[1] = (struct fake_region) { 0x5000, 0x6000, 0, 17 };
        fake.n_tried = 2;
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), 0);
        ck_assert_uint_eq(fake.n_log, 1);
        ck_assert_str_eq(fake.log[0], "kdamonds/0/state=update_schemes_tried_regions");
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(tried[0].start, 0x1000);
        ck_assert_uint_eq(tried[0].end, 0x3000);
        ck_assert_uint_eq(tried[0].nr_accesses, 5);
        ck_assert_uint_eq(tried[0].age, 2);
        ck_assert_uint_eq(tried[0].scheme, 0);
        ck_assert_uint_eq(tried[1].start, 0x5000);
        ck_assert_uint_eq(tried[1].age, 17);
        free(DP_TAKE_PTR(tried));

        fake.n_tried = 0;
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(tried);
}
END_TEST

/* 6.12 numbers tried regions with one counter across the schemes: with two
 * schemes, scheme 0 has regions 0, 2, 4 and scheme 1 has 1, 3, 5.  Every
 * region of the first is read, none taken for the end of the list; the
 * second's are not read at all. */
START_TEST(test_read_tried_one_counter) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        struct dp_damon_state st = {};
        size_t n = 0;

        own(fs, false, &st);
        fake_admin_write(CTX "schemes/nr_schemes", "2");
        for (size_t i = 0; i < 3; i++)
                fake.tried[i] = (struct fake_region) { 0x1000 * (2 * i + 1), 0x1000 * (2 * i + 2), (unsigned) i, 0 };
        fake.n_tried = 3;
        fake.tried_one_counter = true;
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), 0);
        ck_assert(fake_exists(CTX "schemes/0/tried_regions/4"));
        ck_assert_uint_eq(n, 3);
        for (size_t i = 0; i < 3; i++) {
                ck_assert_uint_eq(tried[i].scheme, 0);
                ck_assert_uint_eq(tried[i].start, 0x1000 * (2 * i + 1));
                ck_assert_uint_eq(tried[i].nr_accesses, i);
        }
}
END_TEST

/* A first scheme without tried regions (an administrator's, matching a
 * narrow pattern): the next one's are read. */
START_TEST(test_read_tried_first_with_regions) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        struct dp_damon_state st = {};
        size_t n = 0;

        own(fs, false, &st);
        fake_admin_write(CTX "schemes/nr_schemes", "3");
        fake.tried[0] = (struct fake_region) { 0x1000, 0x3000, 5, 2 };
        fake.n_tried = 1;
        fake.tried_skip_scheme0 = true;
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(tried[0].scheme, 1);
        ck_assert_uint_eq(tried[0].start, 0x1000);
}
END_TEST

START_TEST(test_read_tried_garbage) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        struct dp_damon_state st = {};
        size_t n = 99;

        own(fs, false, &st);
        fake.tried[0] = (struct fake_region) { 0x1000, 0x3000, 5, 2 };
        fake.tried[1] = (struct fake_region) { 0x5000, 0x6000, 0, 17 };
        fake.n_tried = 2;
        FAKE_FMT(fake.tried_garbage_rel, "1/nr_accesses");
        FAKE_FMT(fake.tried_garbage, "lots");
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), -EBADMSG);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), CTX "schemes/0/tried_regions/1/nr_accesses");
        ck_assert_ptr_null(tried);
        ck_assert_uint_eq(n, 0);

        FAKE_FMT(fake.tried_garbage_rel, "0/end");      /* end <= start */
        FAKE_FMT(fake.tried_garbage, "4096");
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), -EBADMSG);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), CTX "schemes/0/tried_regions/0");

        FAKE_FMT(fake.tried_garbage, "99999999999");   /* nr_accesses beyond 32 bits */
        FAKE_FMT(fake.tried_garbage_rel, "0/nr_accesses");
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), -EBADMSG);
}
END_TEST

/* Found by fuzz-sysfs: an nr_schemes beyond the scheme directories was
 * walked to the end, one empty scheme at a time (4 billion: for days). */
START_TEST(test_read_tried_nr_schemes_garbled) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        static const char *const counts[] = { "2", "4000000000" };
        struct dp_damon_state st = {};
        size_t n = 99;

        own(fs, false, &st);
        /* Schemes without regions are walked on to the count: no further. */
        fake.n_tried = 0;
        for (size_t i = 0; i < DP_ARRAY_SIZE(counts); i++) {
                fake_file(CTX "schemes/nr_schemes", counts[i], 0600);
                ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), -EBADMSG);
                ck_assert_str_eq(dp_damon_fs_error_path(fs), CTX "schemes/nr_schemes");
                ck_assert_ptr_null(tried);
                ck_assert_uint_eq(n, 0);
        }
        fake_file(CTX "schemes/nr_schemes", "1", 0600);
        fake.tried[0] = (struct fake_region) { 0x1000, 0x3000, 5, 2 };
        fake.n_tried = 1;
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), 0);
        ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(test_read_tried_addr_unit) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        struct dp_damon_state st = {};
        size_t n = 0;

        tree_teardown();
        fake_make(true);
        fs = open_fake();
        own(fs, false, &st);
        fake_admin_write(CTX "addr_unit", "4096");
        fake.tried[0] = (struct fake_region) { 1, 3, 1, 1 };
        fake.n_tried = 1;
        ck_assert_int_eq(dp_damon_read_tried(fs, 0, 0, &tried, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(tried[0].start, 4096);
        ck_assert_uint_eq(tried[0].end, 3 * 4096);
}
END_TEST

START_TEST(test_kdamond_running) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        bool on = true;

        ck_assert_int_eq(dp_damon_kdamond_running(fs, 0, &on), -ENOENT);
        fake_admin_write("kdamonds/nr_kdamonds", "1");
        ck_assert_int_eq(dp_damon_kdamond_running(fs, 0, &on), 0);
        ck_assert(!on);
        fake_admin_write("kdamonds/0/state", "on");
        ck_assert_int_eq(dp_damon_kdamond_running(fs, 0, &on), 0);
        ck_assert(on);
        fake_file("kdamonds/0/state", "commit", 0600);
        ck_assert_int_eq(dp_damon_kdamond_running(fs, 0, &on), -EBADMSG);
}
END_TEST

START_TEST(test_restore_owned) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ char *empty = fake_snapshot(), *after = NULL;
        static const char *const expected[] = { "kdamonds/0/state=off", "kdamonds/nr_kdamonds=0" };
        struct dp_damon_state st = {};

        own(fs, true, &st);
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
        assert_log(expected, DP_ARRAY_SIZE(expected));
        after = fake_snapshot();
        fake_assert_same(empty, after);
        ck_assert_int_eq(access(state_path(), F_OK), -1);
        ck_assert_int_eq(st.role, DP_DAMON_ROLE_OFF);
        ck_assert_int_eq(dp_damon_fs_granted_kdamond(fs), -1);
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);         /* idempotent */
        ck_assert_uint_eq(fake.n_log, 2);
}
END_TEST

/* Someone turned our kdamond off and on again with their own settings: it
 * is theirs now, and the restore leaves it alone. */
START_TEST(test_restore_owned_taken_over) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_state st = {};

        own(fs, false, &st);
        fake_admin_write("kdamonds/0/state", "off");
        fake_admin_write("kdamonds/0/state", "on");
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), -EEXIST);
        ck_assert_uint_eq(fake.n_log, 0);
        ck_assert_int_eq(access(state_path(), F_OK), 0);
        ck_assert_int_eq(st.role, DP_DAMON_ROLE_OWNED);
}
END_TEST

/* A dead daemon's kdamond 0, off or still running with the recorded pid,
 * is recovered: removed and created again. */
static void check_crash_recovery(bool running) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_state crashed = {}, st = {};
        struct dp_damon_own_params p = vaddr_params(false);
        struct dp_damon_decision d;

        own(fs, false, &crashed);
        if (!running)
                fake_admin_write("kdamonds/0/state", "off");
        crashed.daemon_pid = dead_pid;
        ck_assert_int_eq(dp_damon_state_save(&crashed, state_path()), 0);
        dp_damon_fs_free(fs);                   /* the crash: a new process, a new fs, no grant */
        fs = open_fake();

        d = decide(fs, DP_DAMON_OWN, -1, false);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
        ck_assert(d.recover);
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), 0);
        if (running) {
                ck_assert_str_eq(fake.log[0], "kdamonds/0/state=off");
                ck_assert_str_eq(fake.log[1], "kdamonds/nr_kdamonds=0");
        } else
                ck_assert_str_eq(fake.log[0], "kdamonds/nr_kdamonds=0");
        ck_assert_str_eq(fake.log[fake.n_log - 1], "kdamonds/0/state=on");
        ck_assert_int_eq(st.daemon_pid, getpid());
        ck_assert_int_eq(st.kdamond_pid, FAKE_FIRST_PID + 1);
}

START_TEST(test_crash_recovery_off) {
        check_crash_recovery(false);
}
END_TEST

START_TEST(test_crash_recovery_running) {
        check_crash_recovery(true);
}
END_TEST

/* A garbled state file is no state: a foreign kdamond stays foreign even
 * if the file meant to claim it. */
START_TEST(test_garbled_state_is_no_state) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ char *before = NULL, *after = NULL;
        struct dp_damon_state prev = {};
        struct dp_damon_decision d;
        struct dp_damon_tree t;

        fake_admin_write("kdamonds/nr_kdamonds", "1");
        before = fake_snapshot();
        put("damon.state", "version=1\nrole=owned\ndaemon_pid=999999\nkdamond=0\ncontext=0\nkdamond_pid=-1\n");
        ck_assert_int_eq(dp_damon_state_load(state_path(), &prev), -EBADMSG);
        ck_assert_int_eq(dp_damon_discover(fs, &t), 0);
        ck_assert_int_eq(dp_damon_decide(DP_DAMON_OWN, -1, 0, &t, NULL, false, false, &d), 0);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OBSERVE);
        after = fake_snapshot();
        fake_assert_same(before, after);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("damon-control");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_own_start_sequence);
        tcase_add_test(tc, test_own_start_failure_undone);
        tcase_add_test(tc, test_own_start_refusals);
        tcase_add_test(tc, test_foreign_running_untouched);
        tcase_add_test(tc, test_foreign_stopped_untouched);
        tcase_add_test(tc, test_commit_owned);
        tcase_add_test(tc, test_commit_turns_on_again);
        tcase_add_test(tc, test_commit_invalid_refused);
        tcase_add_test(tc, test_commit_addr_unit);
        tcase_add_test(tc, test_commit_error_stops);
        tcase_add_test(tc, test_feed_goal);
        tcase_add_test(tc, test_feed_goal_none);
        tcase_add_test(tc, test_read_tried);
        tcase_add_test(tc, test_read_tried_one_counter);
        tcase_add_test(tc, test_read_tried_first_with_regions);
        tcase_add_test(tc, test_read_tried_garbage);
        tcase_add_test(tc, test_read_tried_nr_schemes_garbled);
        tcase_add_test(tc, test_read_tried_addr_unit);
        tcase_add_test(tc, test_kdamond_running);
        tcase_add_test(tc, test_restore_owned);
        tcase_add_test(tc, test_restore_owned_taken_over);
        tcase_add_test(tc, test_crash_recovery_off);
        tcase_add_test(tc, test_crash_recovery_running);
        tcase_add_test(tc, test_garbled_state_is_no_state);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
