/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [DAMON] Scheme= in the kdamond we own, against fake trees
 * (tests/damon-fake.h): every setting written in DAMON's units, each scheme
 * refused when the kernel lacks a file it needs (naming the config line and
 * the file, nothing left behind), removed on stop, the PMU-fed hot filter,
 * the node filters made address filters over a fake sysfs's memory blocks,
 * and the read-back of schemes with their stats. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check-main.h"
#include "damon-session.h"
#include "config.h"
#include "config-scheme.h"
#include "damon-control.h"
#include "damon-node.h"
#include "fileio.h"
#include "macro.h"

static const struct dp_damon_range phys_region[] = { { 0x100000, 0x900000 } };
static const struct dp_damon_target_hint phys_target[] = { { .pid = 0, .regions = phys_region, .nr_regions = 1 } };
static const struct dp_damon_range proc_region[] = { { 0x1000, 0x3000 } };
static const struct dp_damon_target_hint proc_target[] = { { .pid = 100, .regions = proc_region, .nr_regions = 1 } };

static struct dp_damon_scheme schemes[4];
static char refusal[512];

static size_t parse_schemes(const char *const *texts, size_t n) {
        char why[256];

        ck_assert_uint_le(n, DP_ARRAY_SIZE(schemes));
        for (size_t i = 0; i < n; i++) {
                ck_assert_msg(dp_scheme_parse(texts[i], &schemes[i], why, sizeof(why)) == 0, "%s: %s", texts[i], why);
                snprintf(schemes[i].origin, sizeof(schemes[i].origin), "t.conf:%zu", 7 + i);
        }
        return n;
}

static struct dp_damon_own_params params(bool paddr, size_t nr_schemes) {
        refusal[0] = '\0';
        return (struct dp_damon_own_params) {
                .operations = paddr ? "paddr" : "vaddr",
                .sample_us = 5000,
                .aggr_us = 100000,
                .update_us = 1000000,
                .min_nr_regions = 10,
                .max_nr_regions = 1000,
                .targets = paddr ? phys_target : proc_target,
                .nr_targets = 1,
                .schemes = schemes,
                .nr_schemes = nr_schemes,
                .refusal = refusal,
                .refusal_size = sizeof(refusal),
        };
}

static int own_with(struct dp_damon_fs *fs, bool paddr, const char *const *texts, size_t n,
                    struct dp_damon_state *st) {
        struct dp_damon_own_params p = params(paddr, parse_schemes(texts, n));
        struct dp_damon_decision d = decide(fs, DP_DAMON_OWN, -1, paddr);

        ck_assert_int_eq(d.role, DP_DAMON_ROLE_OWNED);
        return dp_damon_own_start(fs, &d, &p, state_path(), st);
}

static void assert_files(const char *const (*expected)[2], size_t n) {
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(strcmp(fake_get(expected[i][0]), expected[i][1]) == 0, "%s is \"%s\", expected \"%s\"",
                              expected[i][0], fake_get(expected[i][0]), expected[i][1]);
}

static const char *const tiering[] = {
        "migrate_hot target_nid=1 nr_accesses=50%-max age=1s-max quota_ms=20 quota_bytes=128M quota_reset=2s "
        "weights=1,2,3 goal=hot_fraction:2500 goal=node_mem_free_bp:500:1 wmarks=free_mem_rate:5s:500:400:200 "
        "reject=!anon allow=memcg:/work allow=hot",
        "pageout nr_accesses=0-0 age=10-max reject=addr:0x1000-0x3000 reject=target:0 reject=hot",
};

/* Every word lands in its file, in DAMON's units; our stat scheme stays 0. */
START_TEST(test_schemes_written) {
        static const char *const expected[][2] = {
                { CTX "schemes/nr_schemes", "3" },
                { CTX "schemes/0/action", "stat" },
                { CTX "schemes/1/action", "migrate_hot" },
                { CTX "schemes/1/target_nid", "1" },
                { CTX "schemes/1/access_pattern/sz/max", "18446744073709551615" },
                { CTX "schemes/1/access_pattern/nr_accesses/min", "10" },      /* 50% of 100ms/5ms */
                { CTX "schemes/1/access_pattern/nr_accesses/max", "4294967295" },
                { CTX "schemes/1/access_pattern/age/min", "10" },              /* 1s in 100ms aggregations */
                { CTX "schemes/1/quotas/ms", "20" },
                { CTX "schemes/1/quotas/bytes", "134217728" },
                { CTX "schemes/1/quotas/reset_interval_ms", "2000" },
                { CTX "schemes/1/quotas/weights/sz_permil", "1" },
                { CTX "schemes/1/quotas/weights/age_permil", "3" },
                { CTX "schemes/1/quotas/goals/nr_goals", "2" },
                { CTX "schemes/1/quotas/goals/0/target_metric", "user_input" },
                { CTX "schemes/1/quotas/goals/0/target_value", "2500" },
                { CTX "schemes/1/quotas/goals/1/target_metric", "node_mem_free_bp" },
                { CTX "schemes/1/quotas/goals/1/nid", "1" },
                { CTX "schemes/1/watermarks/metric", "free_mem_rate" },
                { CTX "schemes/1/watermarks/interval_us", "5000000" },
                { CTX "schemes/1/watermarks/low", "200" },
                { CTX "schemes/1/filters/nr_filters", "2" },                   /* no hot ranges yet */
                { CTX "schemes/1/filters/0/type", "anon" },
                { CTX "schemes/1/filters/0/matching", "N" },
                { CTX "schemes/1/filters/0/allow", "N" },
                { CTX "schemes/1/filters/1/type", "memcg" },
                { CTX "schemes/1/filters/1/memcg_path", "/work" },
                { CTX "schemes/1/filters/1/allow", "Y" },
                { CTX "schemes/2/action", "pageout" },
                { CTX "schemes/2/target_nid", "-1" },
                { CTX "schemes/2/access_pattern/nr_accesses/max", "0" },
                { CTX "schemes/2/access_pattern/age/min", "10" },
                { CTX "schemes/2/watermarks/metric", "none" },
                { CTX "schemes/2/filters/nr_filters", "2" },
                { CTX "schemes/2/filters/0/type", "addr" },
                { CTX "schemes/2/filters/0/addr_start", "4096" },
                { CTX "schemes/2/filters/0/addr_end", "12288" },
                { CTX "schemes/2/filters/1/type", "target" },
                { CTX "schemes/2/filters/1/damon_target_idx", "0" },
                { "kdamonds/0/state", "on" },
        };
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        _cleanup_free_ char *text = NULL;
        struct dp_damon_state st = {}, saved = {};
        size_t size;

        fake_make(true);
        fs = open_fake();
        ck_assert_int_eq(own_with(fs, true, tiering, 2, &st), 0);
        assert_files(expected, DP_ARRAY_SIZE(expected));
        ck_assert_str_eq(st.schemes, "stat,migrate_hot,pageout");
        ck_assert_int_eq(dp_damon_state_load(state_path(), &saved), 0);
        ck_assert_str_eq(saved.schemes, "stat,migrate_hot,pageout");
        ck_assert_int_eq(dp_read_file(state_path(), &text, &size), 0);
        ck_assert_ptr_nonnull(strstr(text, "\nschemes=stat,migrate_hot,pageout\n"));
        ck_assert_uint_eq(dp_damon_fs_refused(fs), 0);
        dp_damon_state_done(&saved);

        /* goal=hot_fraction is a user_input goal: the existing feed reaches it. */
        ck_assert_int_eq(dp_damon_feed_goal(fs, &st, state_path(), 4321), 0);
        ck_assert_str_eq(fake_get(CTX "schemes/1/quotas/goals/0/current_value"), "4321");
        ck_assert_str_eq(fake_get(CTX "schemes/1/quotas/goals/1/current_value"), "0");

        /* schemes= belongs to an owned kdamond only. */
        st.role = DP_DAMON_ROLE_ATTACHED;
        ck_assert_int_eq(dp_damon_state_save(&st, state_path()), 0);
        ck_assert_int_eq(dp_damon_state_load(state_path(), &saved), -EBADMSG);
}
END_TEST

/* A kernel without a file a scheme needs: refused before the scheme is
 * written, naming its config line and the file; nothing stays behind. */
START_TEST(test_schemes_refused_by_kernel) {
        static const struct {
                bool v618, pre611, paddr;
                const char *scheme, *missing;
        } cases[] = {
                { false, true, true, "migrate_cold target_nid=1", "schemes/1/target_nid" },
                { false, false, true, "pageout allow=anon", "schemes/1/filters/0/allow" },
                { false, false, true, "stat goal=node_mem_used_bp:9000:0", "schemes/1/quotas/goals/0/nid" },
                { false, false, false, "migrate_hot target_nid=0", "schemes/1/dests" },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
                _cleanup_free_ char *empty = NULL, *after = NULL;
                struct dp_damon_state st = {};
                const char *text[] = { cases[i].scheme };

                tree_teardown();
                fake_make(cases[i].v618);
                fake.pre611 = cases[i].pre611;
                empty = fake_snapshot();
                fs = open_fake();
                ck_assert_int_eq(own_with(fs, cases[i].paddr, text, 1, &st), -EOPNOTSUPP);
                ck_assert_msg(strncmp(refusal, "t.conf:7: Scheme=", 17) == 0, "%s", refusal);
                ck_assert_msg(strstr(refusal, cases[i].missing), "%s lacks %s", refusal, cases[i].missing);
                ck_assert_ptr_nonnull(strstr(dp_damon_fs_error_path(fs), cases[i].missing));
                after = fake_snapshot();
                fake_assert_same(empty, after);
                ck_assert_int_eq(access(state_path(), F_OK), -1);
                ck_assert_int_eq(dp_damon_fs_granted_kdamond(fs), -1);
        }
}
END_TEST

/* Stop removes our kdamond with its schemes, and the state file. */
START_TEST(test_schemes_restored) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        _cleanup_free_ char *empty = NULL, *after = NULL;
        struct dp_damon_state st = {};

        fake_make(true);
        empty = fake_snapshot();
        fs = open_fake();
        ck_assert_int_eq(own_with(fs, true, tiering, 2, &st), 0);
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
        after = fake_snapshot();
        fake_assert_same(empty, after);
        ck_assert_int_eq(access(state_path(), F_OK), -1);
}
END_TEST

/* The hot ranges become addr filters where the hot filter stands, the
 * scheme's other filters kept around them. */
START_TEST(test_hot_filter_update) {
        static const struct dp_damon_range hot[] = { { 0x200000, 0x300000 }, { 0x500000, 0x501000 } };
        static const char *const expected[][2] = {
                { CTX "schemes/1/filters/nr_filters", "4" },
                { CTX "schemes/1/filters/1/type", "memcg" },
                { CTX "schemes/1/filters/2/type", "addr" },
                { CTX "schemes/1/filters/2/addr_start", "2097152" },
                { CTX "schemes/1/filters/2/addr_end", "3145728" },
                { CTX "schemes/1/filters/2/allow", "Y" },
                { CTX "schemes/1/filters/2/matching", "Y" },
                { CTX "schemes/1/filters/3/addr_start", "5242880" },
                { CTX "schemes/2/filters/nr_filters", "4" },
                { CTX "schemes/2/filters/2/type", "addr" },
                { CTX "schemes/2/filters/2/allow", "N" },
                { CTX "schemes/2/filters/3/addr_end", "5246976" },
        };
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        struct dp_damon_state st = {}, attached = { .role = DP_DAMON_ROLE_ATTACHED };

        fake_make(true);
        fs = open_fake();
        ck_assert_int_eq(own_with(fs, true, tiering, 2, &st), 0);
        fake_log_clear();
        ck_assert_int_eq(dp_damon_write_hot_filters(fs, &st, state_path(), schemes, 2, hot, 2), 1);
        assert_files(expected, DP_ARRAY_SIZE(expected));
        /* Written, not committed: the pass commits once, with the hints. */
        for (size_t i = 0; i < fake.n_log; i++)
                ck_assert_str_ne(fake.log[i], "kdamonds/0/state=commit");
        ck_assert_int_eq(dp_damon_commit_written(fs, &st), 0);
        ck_assert_str_eq(fake.log[fake.n_log - 1], "kdamonds/0/state=commit");
        ck_assert_int_eq(dp_damon_commit_written(fs, &attached), -EPERM);

        /* None hot: the hot filter's entries go, the others stay. */
        ck_assert_int_eq(dp_damon_write_hot_filters(fs, &st, state_path(), schemes, 2, NULL, 0), 1);
        ck_assert_str_eq(fake_get(CTX "schemes/1/filters/nr_filters"), "2");
        ck_assert_str_eq(fake_get(CTX "schemes/2/filters/nr_filters"), "2");
        ck_assert_int_eq(dp_damon_write_hot_filters(fs, &attached, state_path(), schemes, 2, hot, 2), -EPERM);
        ck_assert_int_eq(dp_damon_write_hot_filters(fs, &st, state_path(), schemes, 2, (const struct dp_damon_range[]) {
                                 { 0x3000, 0x4000 }, { 0x1000, 0x2000 } }, 2), -EINVAL);
}
END_TEST

/* reject=!hot, for kernels without allow filters (before 6.14): the gaps
 * around the hot ranges, each rejected, so that the scheme acts inside the
 * hot ranges only; with none hot, on nothing. */
START_TEST(test_not_hot_filter) {
        static const char *const only_hot[] = { "migrate_hot target_nid=0 reject=anon reject=!hot" };
        static const struct dp_damon_range hot[] = { { 0x200000, 0x300000 }, { 0x500000, 0x501000 } };
        static const char *const expected[][2] = {
                { CTX "schemes/1/filters/nr_filters", "4" },
                { CTX "schemes/1/filters/0/type", "anon" },
                { CTX "schemes/1/filters/1/type", "addr" },
                { CTX "schemes/1/filters/1/matching", "Y" },
                { CTX "schemes/1/filters/1/allow", "N" },
                { CTX "schemes/1/filters/1/addr_start", "0" },
                { CTX "schemes/1/filters/1/addr_end", "2097152" },
                { CTX "schemes/1/filters/2/addr_start", "3145728" },
                { CTX "schemes/1/filters/2/addr_end", "5242880" },
                { CTX "schemes/1/filters/3/matching", "Y" },
                { CTX "schemes/1/filters/3/addr_start", "5246976" },
                { CTX "schemes/1/filters/3/addr_end", "18446744073709551615" },
        };
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        struct dp_damon_state st = {};

        fake_make(true);
        fs = open_fake();
        ck_assert_int_eq(own_with(fs, true, only_hot, 1, &st), 0);
        /* Nothing seen hot yet: one entry rejecting the whole space. */
        ck_assert_str_eq(fake_get(CTX "schemes/1/filters/nr_filters"), "2");
        ck_assert_str_eq(fake_get(CTX "schemes/1/filters/1/addr_start"), "0");
        ck_assert_str_eq(fake_get(CTX "schemes/1/filters/1/addr_end"), "18446744073709551615");
        ck_assert_str_eq(fake_get(CTX "schemes/1/filters/1/matching"), "Y");
        ck_assert_int_eq(dp_damon_write_hot_filters(fs, &st, state_path(), schemes, 1, hot, 2), 1);
        assert_files(expected, DP_ARRAY_SIZE(expected));
        ck_assert_int_eq(dp_damon_write_hot_filters(fs, &st, state_path(), schemes, 1, NULL, 0), 1);
        ck_assert_str_eq(fake_get(CTX "schemes/1/filters/nr_filters"), "2");
        ck_assert_str_eq(fake_get(CTX "schemes/1/filters/1/addr_end"), "18446744073709551615");
}
END_TEST

static struct dp_snapshot_region region(uint64_t start, uint64_t end, uint64_t samples) {
        return (struct dp_snapshot_region) { .start = start, .end = end, .last_nr_samples = samples };
}

/* Hot (dense in samples) regions joined where they touch; beyond max_out
 * the narrowest gaps are bridged, never a hot byte dropped. */
START_TEST(test_hot_filter_ranges) {
        /* The busiest, 0-10, has 20 samples in 10 bytes; the mean is 106 in
         * 1000 bytes.  20-30 is under half as dense but 80 times the mean. */
        const struct dp_snapshot_region regions[] = {
                region(0, 10, 20), region(10, 20, 12), region(20, 30, 9), region(30, 40, 10),
                region(100, 110, 15), region(200, 210, 20), region(300, 310, 0),
                region(310, 1000, 20),
        };
        const struct dp_snapshot_region unsorted[] = { region(10, 20, 20), region(0, 10, 20) };
        struct dp_damon_range out[8];

        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, DP_ARRAY_SIZE(regions), NULL, 0, 8, out), 3);
        ck_assert_uint_eq(out[0].start, 0);
        ck_assert_uint_eq(out[0].end, 40);
        ck_assert_uint_eq(out[1].start, 100);
        ck_assert_uint_eq(out[1].end, 110);
        ck_assert_uint_eq(out[2].start, 200);
        ck_assert_uint_eq(out[2].end, 210);
        /* Gaps 60 and 90: two outputs keep 90. */
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, DP_ARRAY_SIZE(regions), NULL, 0, 2, out), 2);
        ck_assert_uint_eq(out[0].start, 0);
        ck_assert_uint_eq(out[0].end, 110);
        ck_assert_uint_eq(out[1].start, 200);
        /* One: all of it. */
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, DP_ARRAY_SIZE(regions), NULL, 0, 1, out), 1);
        ck_assert_uint_eq(out[0].start, 0);
        ck_assert_uint_eq(out[0].end, 210);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, 0, NULL, 0, 4, out), 0);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, DP_ARRAY_SIZE(regions), NULL, 0, 0, out), -EINVAL);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(unsorted, 2, NULL, 0, 4, out), -EINVAL);
        /* The current aggregation's samples count too. */
        {
                struct dp_snapshot_region partial[] = { region(0, 10, 0), region(10, 1000, 0) };

                ck_assert_int_eq(dp_damon_hot_filter_ranges(partial, 2, NULL, 0, 4, out), 0);
                partial[0].nr_samples = 2;
                ck_assert_int_eq(dp_damon_hot_filter_ranges(partial, 2, NULL, 0, 4, out), 1);
                ck_assert_uint_eq(out[0].end, 10);
        }
}
END_TEST

/* A hot set mostly moved into one region: the rest, in another with a
 * fraction of the samples but as dense, stays in the filter (by rate it
 * fell under half the busiest and out). */
START_TEST(test_hot_filter_density) {
        const uint64_t M = 1 << 20;
        const struct dp_snapshot_region moved[] = {
                region(0, 12 * M, 30), region(12 * M, 500 * M, 0),
                region(500 * M, 504 * M, 10), region(504 * M, 1024 * M, 0),
        };
        /* Something far denser (a library's pages every exec faults on)
         * beside a hot set, in an otherwise idle space. */
        const struct dp_snapshot_region busy[] = {
                region(0, 1 * M, 400), region(1 * M, 100 * M, 0), region(100 * M, 116 * M, 40),
                region(116 * M, 2048 * M, 2),
        };
        struct dp_damon_range out[4];

        ck_assert_int_eq(dp_damon_hot_filter_ranges(moved, DP_ARRAY_SIZE(moved), NULL, 0, 4, out), 2);
        ck_assert_uint_eq(out[0].end, 12 * M);
        ck_assert_uint_eq(out[1].start, 500 * M);
        ck_assert_uint_eq(out[1].end, 504 * M);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(busy, DP_ARRAY_SIZE(busy), NULL, 0, 4, out), 2);
        ck_assert_uint_eq(out[0].end, 1 * M);
        ck_assert_uint_eq(out[1].start, 100 * M);
        ck_assert_uint_eq(out[1].end, 116 * M);
}
END_TEST

/* The sampled granules' hot ranges join the hot regions, in order whichever
 * list a range came from, overlapping or touching ones joined: the last hot
 * pages in a region too thin to count stay in the filter. */
START_TEST(test_hot_filter_sampled) {
        const struct dp_snapshot_region regions[] = {
                region(0, 100, 40), region(100, 200, 0), region(200, 500, 2), region(500, 1000, 0),
        };
        const struct dp_range sampled[] = { { 10, 20 }, { 90, 110 }, { 220, 240 }, { 260, 270 }, { 1000, 1010 } };
        const struct dp_range unsorted[] = { { 220, 240 }, { 10, 20 }, { 15, 30 } };
        const struct dp_range inverted[] = { { 30, 20 } };
        struct dp_damon_range out[8];

        /* 200-500 is too thin to count (2 samples in 300 bytes, under four
         * times the mean of 42 in 1000): its sampled ranges keep it. */
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, DP_ARRAY_SIZE(regions), NULL, 0, 8, out), 1);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, DP_ARRAY_SIZE(regions), sampled,
                                                    DP_ARRAY_SIZE(sampled), 8, out), 4);
        ck_assert_uint_eq(out[0].start, 0);
        ck_assert_uint_eq(out[0].end, 110);
        ck_assert_uint_eq(out[1].start, 220);
        ck_assert_uint_eq(out[1].end, 240);
        ck_assert_uint_eq(out[2].start, 260);
        ck_assert_uint_eq(out[3].start, 1000);
        ck_assert_uint_eq(out[3].end, 1010);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(NULL, 0, sampled, 2, 8, out), 2);
        /* Sampled ranges in any order, overlapping: joined all the same. */
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, 4, unsorted, 3, 8, out), 2);
        ck_assert_uint_eq(out[0].start, 0);
        ck_assert_uint_eq(out[0].end, 100);
        ck_assert_uint_eq(out[1].start, 220);
        ck_assert_uint_eq(out[1].end, 240);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, 4, inverted, 1, 8, out), -EINVAL);
        ck_assert_int_eq(dp_damon_hot_filter_ranges(regions, 4, NULL, 1, 8, out), -EINVAL);
}
END_TEST

/* When @held's range [@start, @end) was last seen, or UINT64_MAX if it is not held. */
static uint64_t held_seen(const struct dp_damon_held_range *held, size_t n, uint64_t start, uint64_t end) {
        for (size_t i = 0; i < n; i++)
                if (held[i].start == start && held[i].end == end)
                        return held[i].seen;
        return UINT64_MAX;
}

/* The filters hold a hot range for a while after a pass last found it: a
 * range found again, or inside one held, stays; one inside a fresh one gives
 * way to it; one not found within the hold goes; past the room the one seen
 * longest ago goes.  Joined, overlapping and touching held ranges are one. */
START_TEST(test_hot_filter_hold) {
        const struct dp_damon_range a = { 100, 200 }, b = { 300, 400 }, inside_a = { 120, 150 },
                                    around_b = { 250, 450 }, c = { 450, 500 }, d = { 900, 1000 },
                                    over_a = { 150, 300 }, next = { 300, 350 };
        struct dp_damon_held_range held[3];
        struct dp_range ranges[3];
        struct dp_damon_range out[3];
        size_t n;

        n = dp_damon_hold_hot(held, 0, 3, &a, 1, 0, 5);
        n = dp_damon_hold_hot(held, n, 3, &b, 1, 1, 5);
        ck_assert_uint_eq(n, 2);
        /* Nothing new at 4: both held; a's inside found at 3 keeps it past 5. */
        n = dp_damon_hold_hot(held, n, 3, NULL, 0, 4, 5);
        ck_assert_uint_eq(n, 2);
        n = dp_damon_hold_hot(held, n, 3, &inside_a, 1, 3, 5);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(held_seen(held, n, 100, 200), 3);
        n = dp_damon_hold_hot(held, n, 3, NULL, 0, 7, 5);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(held_seen(held, n, 100, 200), 3);
        /* A fresh range around a held one takes its place. */
        n = dp_damon_hold_hot(held, 0, 3, &b, 1, 10, 5);
        n = dp_damon_hold_hot(held, n, 3, &around_b, 1, 11, 5);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(held_seen(held, n, 250, 450), 11);
        /* Full: the oldest goes. */
        n = dp_damon_hold_hot(held, n, 3, &c, 1, 12, 5);
        n = dp_damon_hold_hot(held, n, 3, &a, 1, 13, 5);
        n = dp_damon_hold_hot(held, n, 3, &d, 1, 14, 5);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(held_seen(held, n, 250, 450), UINT64_MAX);
        ck_assert_uint_eq(held_seen(held, n, 450, 500), 12);
        ck_assert_uint_eq(held_seen(held, n, 100, 200), 13);
        ck_assert_uint_eq(held_seen(held, n, 900, 1000), 14);
        /* Held ranges overlap and touch; the filter joins them. */
        n = dp_damon_hold_hot(held, 0, 3, &a, 1, 20, 5);
        n = dp_damon_hold_hot(held, n, 3, &over_a, 1, 20, 5);
        n = dp_damon_hold_hot(held, n, 3, &next, 1, 20, 5);
        ck_assert_uint_eq(n, 3);
        for (size_t i = 0; i < n; i++)
                ranges[i] = (struct dp_range) { held[i].start, held[i].end };
        ck_assert_int_eq(dp_damon_hot_filter_ranges(NULL, 0, ranges, n, 3, out), 1);
        ck_assert_uint_eq(out[0].start, 100);
        ck_assert_uint_eq(out[0].end, 350);
}
END_TEST

/* The read-back asks DAMON for fresh stats and writes nothing else. */
START_TEST(test_read_schemes) {
        static const char *const expected[] = { "kdamonds/0/state=update_schemes_stats" };
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        _cleanup_free_ struct dp_damon_scheme_info *info = NULL;
        struct dp_damon_state st = {};
        size_t n = 0;

        fake_make(true);
        fs = open_fake();
        ck_assert_int_eq(own_with(fs, true, tiering, 2, &st), 0);
        fake_file(CTX "schemes/1/stats/nr_tried", "7", 0400);
        fake_file(CTX "schemes/1/stats/sz_applied", "65536", 0400);
        fake_file(CTX "schemes/2/stats/qt_exceeds", "3", 0400);
        fake_log_clear();
        ck_assert_int_eq(dp_damon_read_schemes(fs, 0, 0, &info, &n), 0);
        assert_log(expected, DP_ARRAY_SIZE(expected));
        ck_assert_uint_eq(n, 3);
        ck_assert_str_eq(info[0].action, "stat");
        ck_assert_str_eq(info[1].action, "migrate_hot");
        ck_assert_int_eq(info[1].target_nid, 1);
        ck_assert_uint_eq(info[1].nr_accesses_min, 10);
        ck_assert_uint_eq(info[1].quota_bytes, 134217728);
        ck_assert_uint_eq(info[1].nr_goals, 2);
        ck_assert_uint_eq(info[1].nr_filters, 2);
        ck_assert_str_eq(info[1].wmarks_metric, "free_mem_rate");
        ck_assert_uint_eq(info[1].nr_tried, 7);
        ck_assert_uint_eq(info[1].sz_applied, 65536);
        ck_assert_uint_eq(info[2].qt_exceeds, 3);
        ck_assert_int_eq(info[2].target_nid, -1);

        /* A count beyond the directories is garbled. */
        fake_file(CTX "schemes/nr_schemes", "9", 0600);
        free(info);
        info = NULL;
        ck_assert_int_eq(dp_damon_read_schemes(fs, 0, 0, &info, &n), -EBADMSG);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), CTX "schemes/nr_schemes");
}
END_TEST

/* A fake machine's nodes below tmp_root: 128 MiB blocks, node 0 in blocks
 * 0-2 and 5 (two pieces), node 1 in 3-4, node 2 without memory. */
#define BLOCK UINT64_C(0x8000000)
static void fake_nodes(void) {
        put("devices/system/memory/block_size_bytes", "8000000\n");
        for (unsigned b = 0; b < 6; b++) {
                char rel[96];

                snprintf(rel, sizeof(rel), "devices/system/node/node%u/memory%u", b == 3 || b == 4 ? 1 : 0, b);
                put(rel, "");
        }
        /* Not memory blocks, though their names begin alike. */
        put("devices/system/node/node0/memory_side_cache", "");
        put("devices/system/node/node0/meminfo", "");
        put("devices/system/node/node2/cpumap", "0\n");
}

/* A node's memory blocks are joined into pieces; every way a node can fail
 * to give them is told apart. */
START_TEST(test_node_memory) {
        struct dp_range r[DP_DAMON_NODE_RANGES_MAX];

        fake_nodes();
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 0, r), 2);
        ck_assert_uint_eq(r[0].start, 0);
        ck_assert_uint_eq(r[0].end, 3 * BLOCK);
        ck_assert_uint_eq(r[1].start, 5 * BLOCK);
        ck_assert_uint_eq(r[1].end, 6 * BLOCK);
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 1, r), 1);
        ck_assert_uint_eq(r[0].start, 3 * BLOCK);
        ck_assert_uint_eq(r[0].end, 5 * BLOCK);
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 2, r), -ENODATA);
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 7, r), -ENOENT);

        /* Nine pieces: one filter each is too many. */
        for (unsigned b = 10; b < 26; b += 2) {
                char rel[96];

                snprintf(rel, sizeof(rel), "devices/system/node/node2/memory%u", b);
                put(rel, "");
        }
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 2, r), DP_DAMON_NODE_RANGES_MAX);
        put("devices/system/node/node2/memory30", "");
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 2, r), -E2BIG);

        put("devices/system/memory/block_size_bytes", "lots\n");
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 0, r), -EBADMSG);
        put("devices/system/memory/block_size_bytes", "0\n");
        ck_assert_int_eq(dp_damon_node_memory(tmp_root, 0, r), -EBADMSG);
}
END_TEST

static void assert_addr(const struct dp_scheme_filter *f, bool allow, bool matching, uint64_t start, uint64_t end) {
        ck_assert_int_eq(f->type, DP_FILTER_ADDR);
        ck_assert_int_eq(f->allow, allow);
        ck_assert_int_eq(f->matching, matching);
        ck_assert_uint_eq(f->start, start);
        ck_assert_uint_eq(f->end, end);
}

/* node:N becomes one address filter per piece, !node:N one unmatched over a
 * node in one piece or one per gap around a node in several, in the place
 * the node filter stood. */
START_TEST(test_node_filters_resolved) {
        static const char *const texts[] = {
                "migrate_hot target_nid=0 reject=anon reject=node:0 reject=!hot",
                "migrate_cold target_nid=1 reject=!node:1",
                "pageout reject=!node:0",
                "lru_prio allow=node:1",
        };
        struct dp_damon_scheme out[DP_ARRAY_SIZE(texts)];
        char why[256] = "";

        fake_nodes();
        parse_schemes(texts, DP_ARRAY_SIZE(texts));
        ck_assert_int_eq(dp_damon_resolve_node_filters(tmp_root, schemes, DP_ARRAY_SIZE(texts), out, why,
                                                       sizeof(why)), 0);
        ck_assert_uint_eq(out[0].n_filters, 4);
        ck_assert_int_eq(out[0].filters[0].type, DP_FILTER_ANON);
        assert_addr(&out[0].filters[1], false, true, 0, 3 * BLOCK);
        assert_addr(&out[0].filters[2], false, true, 5 * BLOCK, 6 * BLOCK);
        ck_assert_int_eq(out[0].filters[3].type, DP_FILTER_HOT);
        ck_assert_uint_eq(out[0].target_nid, 0);
        ck_assert_str_eq(out[0].origin, "t.conf:7");
        ck_assert_uint_eq(out[1].n_filters, 1);
        assert_addr(&out[1].filters[0], false, false, 3 * BLOCK, 5 * BLOCK);
        /* Node 0 starts at 0: no gap before it. */
        ck_assert_uint_eq(out[2].n_filters, 2);
        assert_addr(&out[2].filters[0], false, true, 3 * BLOCK, 5 * BLOCK);
        assert_addr(&out[2].filters[1], false, true, 6 * BLOCK, UINT64_MAX);
        ck_assert_uint_eq(out[3].n_filters, 1);
        assert_addr(&out[3].filters[0], true, true, 3 * BLOCK, 5 * BLOCK);
        /* What the configuration says stays as it was. */
        ck_assert_int_eq(schemes[0].filters[1].type, DP_FILTER_NODE);
}
END_TEST

/* A node filter the machine cannot give names the line, the filter and why;
 * one whose pieces leave no room among the other filters too. */
START_TEST(test_node_filters_refused) {
        static const struct {
                const char *scheme, *why;
                int error;
        } cases[] = {
                { "migrate_hot target_nid=0 reject=node:7", "t.conf:7: Scheme=migrate_hot: reject=node:7: no such node",
                  -ENOENT },
                { "pageout reject=!node:2", "t.conf:7: Scheme=pageout: reject=!node:2: it has no memory blocks",
                  -ENODATA },
                { "pageout reject=anon reject=young reject=!anon reject=!young reject=target:0 reject=target:1 reject=memcg:/a "
                  "reject=node:0", "t.conf:7: Scheme=pageout: its node filters take more than 8", -E2BIG },
        };
        struct dp_damon_scheme out[1];

        fake_nodes();
        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                const char *text[] = { cases[i].scheme };
                char why[256] = "";

                parse_schemes(text, 1);
                ck_assert_int_eq(dp_damon_resolve_node_filters(tmp_root, schemes, 1, out, why, sizeof(why)),
                                 cases[i].error);
                ck_assert_msg(strncmp(why, cases[i].why, strlen(cases[i].why)) == 0, "%s", why);
        }
}
END_TEST

/* The node filters as DAMON gets them: address filters in its units; one
 * not resolved first is not written at all (DAMON has no such type). */
START_TEST(test_node_filters_written) {
        static const char *const text[] = { "migrate_hot target_nid=1 reject=node:1 reject=!hot" };
        static const char *const expected[][2] = {
                { CTX "schemes/1/filters/nr_filters", "2" },
                { CTX "schemes/1/filters/0/type", "addr" },
                { CTX "schemes/1/filters/0/matching", "Y" },
                { CTX "schemes/1/filters/0/addr_start", "402653184" },
                { CTX "schemes/1/filters/0/addr_end", "671088640" },
                { CTX "schemes/1/filters/1/type", "addr" },
                { CTX "schemes/1/filters/1/addr_start", "0" },
        };
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        struct dp_damon_scheme resolved[1];
        struct dp_damon_state st = {};
        struct dp_damon_own_params p;
        struct dp_damon_decision d;

        fake_make(true);
        fake_nodes();
        fs = open_fake();
        ck_assert_int_eq(own_with(fs, true, text, 1, &st), -EINVAL);
        ck_assert_int_eq(dp_damon_resolve_node_filters(tmp_root, schemes, 1, resolved, NULL, 0), 0);
        p = params(true, 1);
        p.schemes = resolved;
        d = decide(fs, DP_DAMON_OWN, -1, true);
        ck_assert_int_eq(dp_damon_own_start(fs, &d, &p, state_path(), &st), 0);
        assert_files(expected, DP_ARRAY_SIZE(expected));
        ck_assert_int_eq(dp_damon_restore(fs, &st, state_path()), 0);
}
END_TEST

static Suite *damon_schemes_suite(void) {
        Suite *s = suite_create("damon-schemes");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_schemes_written);
        tcase_add_test(tc, test_schemes_refused_by_kernel);
        tcase_add_test(tc, test_schemes_restored);
        tcase_add_test(tc, test_hot_filter_update);
        tcase_add_test(tc, test_not_hot_filter);
        tcase_add_test(tc, test_hot_filter_ranges);
        tcase_add_test(tc, test_hot_filter_density);
        tcase_add_test(tc, test_hot_filter_sampled);
        tcase_add_test(tc, test_hot_filter_hold);
        tcase_add_test(tc, test_read_schemes);
        tcase_add_test(tc, test_node_memory);
        tcase_add_test(tc, test_node_filters_resolved);
        tcase_add_test(tc, test_node_filters_refused);
        tcase_add_test(tc, test_node_filters_written);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(damon_schemes_suite());
}
