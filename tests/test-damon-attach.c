/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Attaching to a foreign kdamond (tests/damon-fake.h): only matching targets'
 * regions are written, every overwritten value is recorded before the write,
 * and the restore, also after a crash, gives back the tree byte for byte. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "damon-session.h"
#include "config.h"
#include "macro.h"

/* A foreign running kdamond with two process targets and a user_input goal. */
static void make_foreign_attachable(void) {
        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake_admin_write("kdamonds/0/contexts/nr_contexts", "1");
        fake_admin_write(CTX "targets/nr_targets", "2");
        fake_admin_write(CTX "targets/0/pid_target", "111");
        fake_admin_write(CTX "targets/0/regions/nr_regions", "1");
        fake_admin_write(CTX "targets/0/regions/0/start", "4096");
        fake_admin_write(CTX "targets/0/regions/0/end", "8192");
        fake_admin_write(CTX "targets/1/pid_target", "222");
        fake_admin_write(CTX "targets/1/regions/nr_regions", "2");
        fake_admin_write(CTX "targets/1/regions/0/start", "65536");
        fake_admin_write(CTX "targets/1/regions/0/end", "131072");
        fake_admin_write(CTX "targets/1/regions/1/start", "196608");
        fake_admin_write(CTX "targets/1/regions/1/end", "262144");
        fake_admin_write(CTX "schemes/nr_schemes", "1");
        fake_admin_write(CTX "schemes/0/action", "pageout");
        fake_admin_write(CTX "schemes/0/quotas/goals/nr_goals", "2");
        fake_admin_write(CTX "schemes/0/quotas/goals/0/current_value", "5");
        fake_admin_write(CTX "schemes/0/quotas/goals/1/target_metric", "some_mem_psi_us");
        fake_admin_write("kdamonds/0/state", "on");
}

static const struct dp_damon_range three_regions[] = { { 0x10000, 0x18000 }, { 0x18000, 0x20000 },
                                                        { 0x30000, 0x40000 } };
static const struct dp_damon_range one_region[] = { { 0x10000, 0x40000 } };

static void attach_and_commit(struct dp_damon_fs *fs, struct dp_damon_state *st) {
        const struct dp_damon_target_hint hints[] = {
                { .pid = 222, .regions = three_regions, .nr_regions = 3 },
                { .pid = 333, .regions = one_region, .nr_regions = 1 },        /* no such target */
        };
        static const char *const expected[] = {
                CTX "targets/1/regions/nr_regions=3",
                CTX "targets/1/regions/0/start=65536",
                CTX "targets/1/regions/0/end=98304",
                CTX "targets/1/regions/1/start=98304",
                CTX "targets/1/regions/1/end=131072",
                CTX "targets/1/regions/2/start=196608",
                CTX "targets/1/regions/2/end=262144",
                "kdamonds/0/state=commit",
        };
        static const char *const originals[][2] = {
                { CTX "targets/1/regions/0/start", "65536" },
                { CTX "targets/1/regions/0/end", "131072" },
                { CTX "targets/1/regions/1/start", "196608" },
                { CTX "targets/1/regions/1/end", "262144" },
                { CTX "targets/1/regions/nr_regions", "2" },
        };
        struct dp_damon_decision d = decide(fs, DP_DAMON_ATTACH, 0, false);
        struct dp_damon_state saved = {};

        ck_assert_int_eq(d.role, DP_DAMON_ROLE_ATTACHED);
        ck_assert_int_eq(dp_damon_attach_start(fs, &d, state_path(), st), 0);
        ck_assert_uint_eq(fake.n_log, 0);               /* attaching writes nothing */
        ck_assert_int_eq(dp_damon_fs_granted_kdamond(fs), 0);
        ck_assert_int_eq(st->kdamond_pid, FAKE_FIRST_PID);

        ck_assert_int_eq(dp_damon_commit_hints(fs, st, state_path(), hints, 2), 0);
        assert_log(expected, DP_ARRAY_SIZE(expected));
        ck_assert_str_eq(fake_get(CTX "targets/0/regions/0/start"), "4096");  /* target 111: untouched */
        ck_assert_int_eq(dp_damon_state_load(state_path(), &saved), 0);
        ck_assert_int_eq(saved.role, DP_DAMON_ROLE_ATTACHED);
        ck_assert_uint_eq(saved.nr_originals, DP_ARRAY_SIZE(originals));
        for (size_t i = 0; i < DP_ARRAY_SIZE(originals); i++) {
                ck_assert_str_eq(saved.originals[i].path, originals[i][0]);
                ck_assert_str_eq(saved.originals[i].value, originals[i][1]);
        }
        dp_damon_state_done(&saved);
}

START_TEST(test_attach_restore_exact) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ char *before = NULL, *after = NULL;
        const struct dp_damon_target_hint shrink = { .pid = 222, .regions = one_region, .nr_regions = 1 };
        static const char *const restored[] = {
                CTX "schemes/0/quotas/goals/0/current_value=5",
                CTX "targets/1/regions/nr_regions=2",
                CTX "targets/1/regions/1/end=262144",
                CTX "targets/1/regions/1/start=196608",
                CTX "targets/1/regions/0/end=131072",
                CTX "targets/1/regions/0/start=65536",
                "kdamonds/0/state=commit",
        };
        struct dp_damon_state st = {};

        make_foreign_attachable();
        before = fake_snapshot();
        attach_and_commit(fs, &st);

        /* Shrinking records nothing new: the region directories are ours now. */
        fake_log_clear();
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &shrink, 1), 0);
        ck_assert_uint_eq(st.nr_originals, 5);
        ck_assert_str_eq(fake.log[0], CTX "targets/1/regions/nr_regions=1");

        /* Every user_input goal of the context is fed; its value is an original too. */
        fake_log_clear();
        ck_assert_int_eq(dp_damon_feed_goal(fs, &st, state_path(), 3000), 0);
        ck_assert_uint_eq(fake.n_log, 2);
        ck_assert_str_eq(fake.log[0], CTX "schemes/0/quotas/goals/0/current_value=3000");
        ck_assert_uint_eq(st.nr_originals, 6);

        fake_log_clear();
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
        assert_log(restored, DP_ARRAY_SIZE(restored));
        after = fake_snapshot();
        fake_assert_same(before, after);
        ck_assert_int_eq(access(state_path(), F_OK), -1);
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
        ck_assert_uint_eq(fake.n_log, DP_ARRAY_SIZE(restored));
}
END_TEST

/* A crash while attached: the next start adopts the recorded originals, so
 * its restore still brings back the owner's values, not ours. */
START_TEST(test_attach_crash_recovery) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ char *before = NULL, *after = NULL;
        const struct dp_damon_target_hint shrink = { .pid = 222, .regions = one_region, .nr_regions = 1 };
        struct dp_damon_state crashed = {}, st = {}, prev = {};
        struct dp_damon_decision d;
        struct dp_damon_tree t;

        make_foreign_attachable();
        before = fake_snapshot();
        attach_and_commit(fs, &crashed);
        crashed.daemon_pid = dead_pid;
        ck_assert_int_eq(dp_damon_state_save(&crashed, state_path()), 0);
        dp_damon_state_done(&crashed);
        dp_damon_fs_free(fs);
        fs = open_fake();

        ck_assert_int_eq(dp_damon_discover(fs, &t), 0);
        ck_assert_int_eq(dp_damon_state_load(state_path(), &prev), 0);
        ck_assert_int_eq(dp_damon_decide(DP_DAMON_ATTACH, 0, 0, &t, &prev, false, false, &d), 0);
        dp_damon_state_done(&prev);
        ck_assert_int_eq(d.role, DP_DAMON_ROLE_ATTACHED);
        ck_assert(d.recover);
        fake_log_clear();
        ck_assert_int_eq(dp_damon_attach_start(fs, &d, state_path(), &st), 0);
        ck_assert_uint_eq(fake.n_log, 0);
        ck_assert_uint_eq(st.nr_originals, 5);
        ck_assert_int_eq(st.daemon_pid, getpid());
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &shrink, 1), 0);
        ck_assert_uint_eq(st.nr_originals, 5);
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
        after = fake_snapshot();
        fake_assert_same(before, after);
}
END_TEST

/* Attached to a paddr context: target 0 takes the hint with pid 0. */
START_TEST(test_attach_paddr) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        const struct dp_damon_target_hint hint = { .pid = 0, .regions = one_region, .nr_regions = 1 };
        struct dp_damon_state st = {};
        struct dp_damon_decision d;

        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake_admin_write("kdamonds/0/contexts/nr_contexts", "1");
        fake_admin_write(CTX "operations", "paddr");
        fake_admin_write(CTX "targets/nr_targets", "1");
        d = decide(fs, DP_DAMON_ATTACH, 0, true);
        ck_assert_int_eq(dp_damon_attach_start(fs, &d, state_path(), &st), 0);
        ck_assert_int_eq(dp_damon_commit_hints(fs, &st, state_path(), &hint, 1), 0);
        /* Off: written, not committed (the owner's "on" will read it). */
        ck_assert_str_eq(fake.log[fake.n_log - 1], CTX "targets/0/regions/0/end=262144");
        ck_assert_str_eq(fake_get(CTX "targets/0/pid_target"), "0");
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
        ck_assert_str_eq(fake_get(CTX "targets/0/regions/nr_regions"), "0");
}
END_TEST

/* The administrator's schemes are read with their stats and never changed:
 * the only write is the update_schemes_stats command, and the tree, state
 * file aside, is byte for byte what it was. */
START_TEST(test_attach_schemes_read_only) {
        static const char *const expected[] = { "kdamonds/0/state=update_schemes_stats" };
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ struct dp_damon_scheme_info *info = NULL;
        _cleanup_free_ char *before = NULL, *after = NULL;
        struct dp_damon_state st = {};
        struct dp_damon_decision d;
        size_t n = 0;

        make_foreign_attachable();
        fake_admin_write(CTX "schemes/0/access_pattern/age/min", "30");
        fake_file(CTX "schemes/0/stats/nr_applied", "12", 0400);
        fake_file(CTX "schemes/0/stats/sz_applied", "49152", 0400);
        before = fake_snapshot();
        d = decide(fs, DP_DAMON_ATTACH, 0, false);
        ck_assert_int_eq(dp_damon_attach_start(fs, &d, state_path(), &st), 0);
        fake_log_clear();
        ck_assert_int_eq(dp_damon_read_schemes(fs, 0, 0, &info, &n), 0);
        assert_log(expected, DP_ARRAY_SIZE(expected));
        ck_assert_uint_eq(n, 1);
        ck_assert_str_eq(info[0].action, "pageout");
        ck_assert_uint_eq(info[0].age_min, 30);
        ck_assert_uint_eq(info[0].nr_goals, 2);
        ck_assert_uint_eq(info[0].nr_applied, 12);
        ck_assert_uint_eq(info[0].sz_applied, 49152);
        after = fake_snapshot();
        fake_assert_same(before, after);
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
        ck_assert_uint_eq(st.nr_originals, 0);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("damon-attach");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_attach_restore_exact);
        tcase_add_test(tc, test_attach_crash_recovery);
        tcase_add_test(tc, test_attach_paddr);
        tcase_add_test(tc, test_attach_schemes_read_only);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
