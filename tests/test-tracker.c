/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "damon-hints.h"
#include "macro.h"
#include "tracker.h"

#include "check-main.h"

#define P(n) ((uint64_t) (n) * DP_PAGE_SIZE)
#define R(s, e) ((struct dp_range) { .start = (s), .end = (e) })
#define MS UINT64_C(1000000)

static struct dp_tracker *new_tracker(enum dp_tracker_mode mode) {
        struct dp_tracker_config c;
        struct dp_tracker *t = NULL;

        dp_tracker_config_init(&c);
        c.mode = mode;
        ck_assert_int_eq(dp_tracker_new(&c, &t), 0);
        return t;
}

static struct dp_sample vsample(uint32_t pid, uint64_t vaddr) {
        return (struct dp_sample) { .pid = pid, .tid = pid, .vaddr = vaddr };
}

static uint64_t sum_misses_and_matches(const struct dp_counter_values *c) {
        return c->v[DP_C_MATCH] + c->v[DP_C_MISS_TGID] + c->v[DP_C_MISS_REGION] + c->v[DP_C_MISS_BOUND];
}

START_TEST(test_config) {
        struct dp_tracker_config c, bad;
        struct dp_tracker *t = NULL;

        dp_tracker_config_init(&c);
        ck_assert_uint_eq(c.min_nr_regions, 10);
        ck_assert_uint_eq(c.max_nr_regions, 1000);
        ck_assert_uint_eq(c.sample_interval_ns, 5 * MS);
        ck_assert_uint_eq(c.aggr_interval_ns, 100 * MS);
        ck_assert_uint_eq(c.max_targets, 1024);

        bad = c;
        bad.min_nr_regions = 0;
        ck_assert_int_eq(dp_tracker_new(&bad, &t), -EINVAL);
        bad = c;
        bad.max_nr_regions = 5;
        ck_assert_int_eq(dp_tracker_new(&bad, &t), -EINVAL);
        bad = c;
        bad.sample_interval_ns = 0;
        ck_assert_int_eq(dp_tracker_new(&bad, &t), -EINVAL);
        bad = c;
        bad.aggr_interval_ns = MS;
        ck_assert_int_eq(dp_tracker_new(&bad, &t), -EINVAL);
        bad = c;
        bad.aggr_interval_ns = 65 * c.sample_interval_ns;     /* more than 64 intervals */
        ck_assert_int_eq(dp_tracker_new(&bad, &t), -EINVAL);
        bad = c;
        bad.max_targets = 0;
        ck_assert_int_eq(dp_tracker_new(&bad, &t), -EINVAL);
        bad = c;
        bad.mode = 7;
        ck_assert_int_eq(dp_tracker_new(&bad, &t), -EINVAL);
        ck_assert_ptr_null(t);

        ck_assert_int_eq(dp_tracker_new(&c, &t), 0);
        ck_assert_uint_eq(dp_tracker_max_nr_accesses(t), 20);
        dp_tracker_free(t);
}
END_TEST

START_TEST(test_targets) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(P(10), P(20)) };
        const struct dp_region *regions;
        size_t n;

        ck_assert_int_eq(dp_tracker_add_target(t, 42, r, 1), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 42, r, 1), -EEXIST);
        ck_assert_int_eq(dp_tracker_add_target(t, 43, r, 0), -EINVAL);
        ck_assert(dp_tracker_has_target(t, 42));
        ck_assert(!dp_tracker_has_target(t, 43));
        ck_assert_uint_eq(dp_tracker_nr_targets(t), 1);
        ck_assert_uint_eq(dp_tracker_nr_regions(t), 10);
        ck_assert_int_eq(dp_tracker_target_regions(t, 42, &regions, &n), 0);
        ck_assert_uint_eq(n, 10);
        ck_assert_uint_eq(regions[0].start, P(10));
        ck_assert_int_eq(dp_tracker_target_regions(t, 43, &regions, &n), -ENOENT);
        ck_assert_int_eq(dp_tracker_set_ranges(t, 43, r, 1), -ENOENT);
        ck_assert_int_eq(dp_tracker_remove_target(t, 43), -ENOENT);
        ck_assert_int_eq(dp_tracker_remove_target(t, 42), 0);
        ck_assert_uint_eq(dp_tracker_nr_targets(t), 0);
        ck_assert(!dp_tracker_has_target(t, 42));
}
END_TEST

START_TEST(test_many_targets_hash) {
        struct dp_tracker_config c;
        _cleanup_tracker_ struct dp_tracker *t = NULL;
        struct dp_range r[] = { R(P(1), P(2)) };
        struct dp_counter_values cv = {};

        dp_tracker_config_init(&c);
        c.min_nr_regions = 1;
        c.max_targets = 600;
        ck_assert_int_eq(dp_tracker_new(&c, &t), 0);

        /* Strided pids collide in the table; removal must keep chains intact. */
        for (uint32_t i = 0; i < 600; i++)
                ck_assert_int_eq(dp_tracker_add_target(t, i * 4096 + 1, r, 1), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 999999, r, 1), -ENOSPC);
        for (uint32_t i = 0; i < 600; i += 3)
                ck_assert_int_eq(dp_tracker_remove_target(t, i * 4096 + 1), 0);
        for (uint32_t i = 0; i < 600; i++)
                ck_assert(dp_tracker_has_target(t, i * 4096 + 1) == (i % 3 != 0));
        ck_assert_uint_eq(dp_tracker_nr_targets(t), 400);

        /* and the hot path agrees */
        for (uint32_t i = 0; i < 600; i++) {
                struct dp_sample s = vsample(i * 4096 + 1, P(1) + 8);

                dp_tracker_account(t, &s, &cv);
        }
        ck_assert_uint_eq(cv.v[DP_C_MATCH], 400);
        ck_assert_uint_eq(cv.v[DP_C_MISS_TGID], 200);

        for (uint32_t i = 0; i < 600; i++)
                if (i % 3 != 0)
                        ck_assert_int_eq(dp_tracker_remove_target(t, i * 4096 + 1), 0);
        ck_assert_uint_eq(dp_tracker_nr_targets(t), 0);
}
END_TEST

START_TEST(test_match_and_miss_reasons) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(P(10), P(20)), R(P(30), P(40)) };
        struct dp_counter_values c = {};
        struct dp_sample s;
        const struct dp_region *regions;
        size_t n;

        ck_assert_int_eq(dp_tracker_add_target(t, 100, r, 2), 0);

        s = vsample(100, P(15) + 3);
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MATCH], 1);
        ck_assert_uint_eq(c.v[DP_C_UPDATE], 1);

        s = vsample(101, P(15));
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_TGID], 1);

        s = vsample(100, P(25));
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_REGION], 1);

        s = vsample(100, P(5));
        dp_tracker_account(t, &s, &c);
        s = vsample(100, P(40));
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_BOUND], 2);

        ck_assert_uint_eq(sum_misses_and_matches(&c), 5);
        ck_assert_uint_eq(c.v[DP_C_DEQUEUE], 0);        /* the caller's counter */

        /* classify says the same, and counts nothing */
        s = vsample(100, P(15));
        ck_assert_int_eq(dp_tracker_classify(t, &s), DP_C_MATCH);
        s = vsample(101, P(15));
        ck_assert_int_eq(dp_tracker_classify(t, &s), DP_C_MISS_TGID);
        s = vsample(100, P(25));
        ck_assert_int_eq(dp_tracker_classify(t, &s), DP_C_MISS_REGION);
        s = vsample(100, P(40));
        ck_assert_int_eq(dp_tracker_classify(t, &s), DP_C_MISS_BOUND);
        ck_assert_uint_eq(sum_misses_and_matches(&c), 5);

        ck_assert_int_eq(dp_tracker_target_regions(t, 100, &regions, &n), 0);
        for (size_t i = 0; i < n; i++) {
                bool hit = regions[i].start <= P(15) && P(15) < regions[i].end;

                ck_assert_uint_eq(regions[i].nr_samples, hit ? 1 : 0);
                ck_assert_uint_eq(regions[i].nr_accesses, hit ? 1 : 0);
        }
}
END_TEST

/* A target's samples outside its regions are counted for it (its maps are
 * then worth a read) until its ranges are set again, and whether it was
 * sampled since is told. */
START_TEST(test_target_misses) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(P(10), P(20)), R(P(30), P(40)) }, grown[] = { R(P(10), P(50)) };
        struct dp_tracker_snapshot snap = {};
        struct dp_counter_values c = {};
        struct dp_sample s;

        ck_assert_int_eq(dp_tracker_add_target(t, 100, r, 2), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 200, r, 2), 0);
        s = vsample(100, P(15));
        dp_tracker_account(t, &s, &c);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.targets[0].misses, 0);

        s = vsample(100, P(25));                /* between its ranges */
        dp_tracker_account(t, &s, &c);
        s = vsample(100, P(45));                /* beyond them */
        dp_tracker_account(t, &s, &c);
        s = vsample(300, P(45));                /* nobody's */
        dp_tracker_account(t, &s, &c);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.targets[0].tgid, 100);
        ck_assert_uint_eq(snap.targets[0].misses, 2);
        ck_assert_uint_eq(snap.targets[1].misses, 0);

        ck_assert_int_eq(dp_tracker_set_ranges(t, 100, grown, 1), 0);
        s = vsample(100, P(45));
        dp_tracker_account(t, &s, &c);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.targets[0].misses, 0);
        ck_assert_uint_eq(c.v[DP_C_MISS_REGION] + c.v[DP_C_MISS_BOUND], 2);

        /* Sampled since its ranges were set: only in a later aggregation. */
        ck_assert(!snap.targets[0].sampled_since_ranges);
        ck_assert(!dp_tracker_tick(t, 1000 * MS));      /* starts the clock */
        ck_assert(dp_tracker_tick(t, 1100 * MS));
        s = vsample(100, P(15));
        dp_tracker_account(t, &s, &c);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert(snap.targets[0].sampled_since_ranges);
        ck_assert(!snap.targets[1].sampled_since_ranges);
        ck_assert_int_eq(dp_tracker_set_ranges(t, 100, grown, 1), 0);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert(!snap.targets[0].sampled_since_ranges);
        dp_tracker_snapshot_free(&snap);
}
END_TEST

START_TEST(test_one_update_per_epoch) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(0, P(100)) };
        struct dp_counter_values c = {};
        const struct dp_region *regions;
        size_t n;

        ck_assert_int_eq(dp_tracker_add_target(t, 1, r, 1), 0);
        ck_assert(!dp_tracker_tick(t, 1000 * MS));      /* starts the clock */

        for (int i = 0; i < 1000; i++) {
                struct dp_sample s = vsample(1, P(i % 100));

                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(c.v[DP_C_MATCH], 1000);
        ck_assert_uint_eq(c.v[DP_C_UPDATE], 10);        /* 10 regions, one epoch */

        ck_assert(!dp_tracker_tick(t, 1004 * MS));      /* not a full interval yet */
        for (int i = 0; i < 100; i++) {
                struct dp_sample s = vsample(1, P(i));

                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(c.v[DP_C_UPDATE], 10);

        ck_assert(!dp_tracker_tick(t, 1005 * MS));
        ck_assert_uint_eq(dp_tracker_epoch(t), 2);
        for (int i = 0; i < 100; i++) {
                struct dp_sample s = vsample(1, P(i));

                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(c.v[DP_C_UPDATE], 20);
        ck_assert_int_eq(dp_tracker_target_regions(t, 1, &regions, &n), 0);
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_eq(regions[i].nr_accesses, 2);
                ck_assert_uint_eq(regions[i].nr_samples, 120);
        }
}
END_TEST

START_TEST(test_tick_and_aggregation) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(0, P(100)) };
        struct dp_counter_values c = {};
        const struct dp_region *regions;
        uint64_t now = 0;
        size_t n, aggregations = 0;

        ck_assert_int_eq(dp_tracker_add_target(t, 1, r, 1), 0);
        ck_assert(!dp_tracker_tick(t, now));
        /* A sample in region 0 in every epoch: nr_accesses reaches exactly 20. */
        for (int epoch = 0; epoch < 20; epoch++) {
                struct dp_sample s = vsample(1, P(0));

                dp_tracker_account(t, &s, &c);
                now += 5 * MS;
                aggregations += dp_tracker_tick(t, now);
        }
        ck_assert_uint_eq(aggregations, 1);
        ck_assert_uint_eq(dp_tracker_nr_aggregations(t), 1);
        ck_assert_int_eq(dp_tracker_target_regions(t, 1, &regions, &n), 0);
        ck_assert_uint_eq(regions[0].last_nr_accesses, 20);
        ck_assert_uint_eq(regions[0].nr_accesses, 0);
        {
                uint64_t samples = 0;

                for (size_t i = 0; i < n; i++)
                        samples += regions[i].last_nr_samples;
                ck_assert_uint_eq(samples, 20);
        }

        /* A late tick catches up: 200 ms at once is one aggregation, not two. */
        now += 200 * MS;
        ck_assert(dp_tracker_tick(t, now));
        ck_assert_uint_eq(dp_tracker_nr_aggregations(t), 2);
        ck_assert(!dp_tracker_tick(t, now + MS));
}
END_TEST

/* A target with no sample in an aggregation nor in the two before is left
 * alone when it closes (its regions as they were, at no cost per close), and
 * its ages count the closes all the same, shown, after a maps refresh and
 * once sampled again. */
START_TEST(test_quiet_target_ages_lazily) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(0, P(100)) };
        struct dp_tracker_snapshot snap = {};
        struct dp_counter_values c = {};
        const struct dp_region *regions;
        struct dp_region before[64];
        uint64_t now = 0;
        size_t n, n_before;

        ck_assert_int_eq(dp_tracker_add_target(t, 1, r, 1), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 2, r, 1), 0);
        ck_assert(!dp_tracker_tick(t, now));
        /* Ten aggregations: pid 1 sampled in each, pid 2 never. */
        for (int aggr = 0; aggr < 10; aggr++)
                for (int epoch = 0; epoch < 20; epoch++) {
                        struct dp_sample s = vsample(1, P(epoch * 5));

                        dp_tracker_account(t, &s, &c);
                        now += 5 * MS;
                        (void) dp_tracker_tick(t, now);
                }
        ck_assert_uint_eq(dp_tracker_nr_aggregations(t), 10);

        /* pid 2 was last aggregated at the third close: its regions stand. */
        ck_assert_int_eq(dp_tracker_target_regions(t, 2, &regions, &n), 0);
        ck_assert_uint_le(n, DP_ARRAY_SIZE(before));
        memcpy(before, regions, n * sizeof(*regions));
        n_before = n;
        for (int epoch = 0; epoch < 20; epoch++) {
                now += 5 * MS;
                (void) dp_tracker_tick(t, now);
        }
        ck_assert_int_eq(dp_tracker_target_regions(t, 2, &regions, &n), 0);
        ck_assert_uint_eq(n, n_before);
        ck_assert_int_eq(memcmp(before, regions, n * sizeof(*regions)), 0);

        /* Shown: eleven closes since it was added, none with an access. */
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        for (size_t i = 0; i < snap.nr_targets; i++)
                if (snap.targets[i].tgid == 2)
                        for (size_t k = 0; k < snap.targets[i].nr_regions; k++)
                                ck_assert_uint_eq(snap.regions[snap.targets[i].first_region + k].age, 11);

        /* A maps refresh keeps what it had: the same ages, not the closes again. */
        ck_assert_int_eq(dp_tracker_set_ranges(t, 2, r, 1), 0);
        dp_tracker_snapshot_free(&snap);
        snap = (struct dp_tracker_snapshot) {};
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        for (size_t i = 0; i < snap.nr_targets; i++)
                if (snap.targets[i].tgid == 2)
                        for (size_t k = 0; k < snap.targets[i].nr_regions; k++)
                                ck_assert_uint_eq(snap.regions[snap.targets[i].first_region + k].age, 11);

        /* Sampled again: the closes it missed are in its ages. */
        {
                struct dp_sample s = vsample(2, P(0));

                dp_tracker_account(t, &s, &c);
        }
        for (int epoch = 0; epoch < 20; epoch++) {
                now += 5 * MS;
                (void) dp_tracker_tick(t, now);
        }
        ck_assert_int_eq(dp_tracker_target_regions(t, 2, &regions, &n), 0);
        for (size_t k = 0; k < n; k++)
                if (regions[k].last_nr_accesses == 0)
                        ck_assert_uint_ge(regions[k].age, 10);
        dp_tracker_snapshot_free(&snap);
}
END_TEST

/* The time the tracker says the aggregation is due is exactly when a tick
 * closes it, however irregular the ticks before it, late ones included. */
START_TEST(test_aggregation_due) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_prng gen = { 5 };
        uint64_t now = 3 * MS, due, last_due = 0;

        ck_assert_uint_eq(dp_tracker_aggregation_due_ns(t), 0);
        ck_assert_uint_eq(dp_tracker_aggregation_due_ns(NULL), 0);
        ck_assert(!dp_tracker_tick(t, now));
        ck_assert_uint_eq(dp_tracker_aggregation_due_ns(t), now + 100 * MS);

        for (int aggregation = 0; aggregation < 200; aggregation++) {
                due = dp_tracker_aggregation_due_ns(t);
                ck_assert_uint_gt(due, now);
                ck_assert_uint_gt(due, last_due);
                /* Ticks before it, at any pace, do not close it nor move it. */
                while (now + 1 < due) {
                        now = dp_prng_between(&gen, now + 1, DP_MIN(due, now + 30 * MS));
                        if (now >= due)
                                break;
                        ck_assert(!dp_tracker_tick(t, now));
                        ck_assert_uint_eq(dp_tracker_aggregation_due_ns(t), due);
                }
                /* On time, or up to 250 ms late. */
                now = due + (aggregation % 3 == 0 ? dp_prng_between(&gen, 0, 250 * MS) : 0);
                ck_assert(dp_tracker_tick(t, now));
                last_due = due;
        }
        ck_assert_uint_eq(dp_tracker_nr_aggregations(t), 200);
}
END_TEST

START_TEST(test_counter_sums_random) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        _cleanup_tracker_ struct dp_tracker *tb = new_tracker(DP_TRACKER_VADDR);
        struct dp_counter_values c = {}, cb = {};
        struct dp_prng gen = { 11 };
        uint64_t now = 0, total = 0;

        for (uint32_t pid = 1; pid <= 20; pid++) {
                struct dp_range r[] = { R(P(pid * 1000), P(pid * 1000 + 300)), R(P(pid * 1000 + 500), P(pid * 1000 + 900)) };

                ck_assert_int_eq(dp_tracker_add_target(t, pid, r, 2), 0);
                ck_assert_int_eq(dp_tracker_add_target(tb, pid, r, 2), 0);
        }

        for (int round = 0; round < 100; round++) {
                struct dp_sample batch[256];
                uint64_t match_before = c.v[DP_C_MATCH], update_before = c.v[DP_C_UPDATE];

                for (size_t i = 0; i < DP_ARRAY_SIZE(batch); i++) {
                        uint32_t pid = (uint32_t) dp_prng_between(&gen, 1, 24);

                        batch[i] = vsample(pid, P(pid * 1000) + dp_prng_between(&gen, 0, P(1100)));
                }
                for (size_t i = 0; i < DP_ARRAY_SIZE(batch); i++)
                        dp_tracker_account(t, &batch[i], &c);
                dp_tracker_account_batch(tb, batch, DP_ARRAY_SIZE(batch), &cb);
                total += DP_ARRAY_SIZE(batch);

                ck_assert_uint_eq(sum_misses_and_matches(&c), total);
                ck_assert_uint_le(c.v[DP_C_UPDATE], c.v[DP_C_MATCH]);
                /* at most one update per region per epoch */
                ck_assert_uint_le(c.v[DP_C_UPDATE] - update_before, dp_tracker_nr_regions(t));
                ck_assert_uint_le(c.v[DP_C_UPDATE] - update_before, c.v[DP_C_MATCH] - match_before);

                now += 5 * MS;
                ck_assert(dp_tracker_tick(t, now) == dp_tracker_tick(tb, now));
        }
        /* the batch variant is the same computation */
        ck_assert_int_eq(memcmp(&c, &cb, sizeof(c)), 0);
        ck_assert_uint_gt(c.v[DP_C_MISS_TGID], 0);
        ck_assert_uint_gt(c.v[DP_C_MISS_REGION], 0);
        ck_assert_uint_gt(c.v[DP_C_MISS_BOUND], 0);
        ck_assert_uint_gt(dp_tracker_nr_aggregations(t), 3);
}
END_TEST

START_TEST(test_region_sums_match_counters) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(0, P(1000)) };
        struct dp_counter_values c = {};
        struct dp_prng gen = { 5 };
        const struct dp_region *regions;
        uint64_t samples = 0, accesses = 0;
        size_t n;

        ck_assert_int_eq(dp_tracker_add_target(t, 7, r, 1), 0);
        ck_assert(!dp_tracker_tick(t, 0));
        for (int epoch = 1; epoch <= 10; epoch++) {
                for (int i = 0; i < 300; i++) {
                        struct dp_sample s = vsample(7, dp_prng_between(&gen, 0, P(1000) - 1));

                        dp_tracker_account(t, &s, &c);
                }
                ck_assert(!dp_tracker_tick(t, (uint64_t) epoch * 5 * MS));
        }
        ck_assert_int_eq(dp_tracker_target_regions(t, 7, &regions, &n), 0);
        for (size_t i = 0; i < n; i++) {
                samples += regions[i].nr_samples;
                accesses += regions[i].nr_accesses;
                ck_assert_uint_le(regions[i].nr_accesses, 10);
        }
        ck_assert_uint_eq(samples, c.v[DP_C_MATCH]);
        ck_assert_uint_eq(accesses, c.v[DP_C_UPDATE]);
        ck_assert_uint_eq(c.v[DP_C_MATCH], 3000);
}
END_TEST

START_TEST(test_unknown_tgids) {
        struct dp_tracker_config cfg;
        _cleanup_tracker_ struct dp_tracker *t = NULL;
        struct dp_range r[] = { R(0, P(10)) };
        struct dp_counter_values c = {};
        uint32_t out[200];
        uint32_t pids[] = { 500, 501, 500, 502, 500, 501, 500 };
        size_t n;

        dp_tracker_config_init(&cfg);
        cfg.max_targets = 3;
        ck_assert_int_eq(dp_tracker_new(&cfg, &t), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 1, r, 1), 0);

        for (size_t i = 0; i < DP_ARRAY_SIZE(pids); i++) {
                struct dp_sample s = vsample(pids[i], P(1));

                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(c.v[DP_C_MISS_TGID], DP_ARRAY_SIZE(pids));

        n = dp_tracker_take_unknown(t, out, 2);
        ck_assert_uint_eq(n, 2);
        n += dp_tracker_take_unknown(t, out + 2, DP_ARRAY_SIZE(out) - 2);
        ck_assert_uint_eq(n, 3);
        {
                bool seen[3] = {};

                for (size_t i = 0; i < n; i++) {
                        ck_assert(out[i] >= 500 && out[i] <= 502);
                        ck_assert(!seen[out[i] - 500]);
                        seen[out[i] - 500] = true;
                }
        }
        ck_assert_uint_eq(dp_tracker_take_unknown(t, out, DP_ARRAY_SIZE(out)), 0);

        /* Seen again after being taken: recorded again. */
        {
                struct dp_sample s = vsample(500, P(1));

                dp_tracker_account(t, &s, &c);
                s = vsample(503, P(1));
                dp_tracker_account(t, &s, &c);
        }
        /* Adding a target drops it from the set. */
        ck_assert_int_eq(dp_tracker_add_target(t, 503, r, 1), 0);
        ck_assert_uint_eq(dp_tracker_take_unknown(t, out, DP_ARRAY_SIZE(out)), 1);
        ck_assert_uint_eq(out[0], 500);

        /* At max_targets nothing is recorded: the daemon could not add them. */
        ck_assert_int_eq(dp_tracker_add_target(t, 504, r, 1), 0);
        {
                struct dp_sample s = vsample(600, P(1));

                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(dp_tracker_take_unknown(t, out, DP_ARRAY_SIZE(out)), 0);

        /* Once there is room again, the same stranger is recorded. */
        ck_assert_int_eq(dp_tracker_remove_target(t, 504), 0);
        {
                struct dp_sample s = vsample(600, P(1));

                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(dp_tracker_take_unknown(t, out, DP_ARRAY_SIZE(out)), 1);
        ck_assert_uint_eq(out[0], 600);

        /* Overflow: counted, never silent. */
        for (uint32_t pid = 1000; pid < 1000 + DP_TRACKER_UNKNOWN_MAX + 10; pid++) {
                struct dp_sample s = vsample(pid, P(1));

                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(dp_tracker_unknown_dropped(t), 10);
        ck_assert_uint_eq(dp_tracker_take_unknown(t, out, DP_ARRAY_SIZE(out)), DP_TRACKER_UNKNOWN_MAX);
}
END_TEST

START_TEST(test_paddr_mode) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_PADDR);
        struct dp_range ram[] = { R(0x1000, 0x9fc00), R(0x100000, 0xc0000000) };
        struct dp_counter_values c = {};
        struct dp_sample s = { .pid = 1234, .vaddr = 0x7f0000001000 };
        uint32_t out[4];

        s.paddr = 0x200000;
        s.flags = DP_SAMPLE_PHYS_VALID;
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_TGID], 1);      /* no target yet */

        ck_assert_int_eq(dp_tracker_add_target(t, 0, ram, 2), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 1, ram, 2), -EEXIST);

        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MATCH], 1);          /* any pid, by physical address */
        s.pid = 99;
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MATCH], 2);

        s.paddr = 0xa0000;
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_REGION], 1);    /* the hole under 1 MiB */
        s.paddr = 0x100000000;
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_BOUND], 1);
        s.paddr = 0x200000;
        s.flags = 0;
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_BOUND], 2);     /* no physical address */
        ck_assert_uint_eq(sum_misses_and_matches(&c), 6);
        ck_assert_uint_eq(dp_tracker_take_unknown(t, out, 4), 0);

        ck_assert_int_eq(dp_tracker_remove_target(t, 0), 0);
        s.flags = DP_SAMPLE_PHYS_VALID;
        dp_tracker_account(t, &s, &c);
        ck_assert_uint_eq(c.v[DP_C_MISS_TGID], 2);
}
END_TEST

START_TEST(test_set_ranges_keeps_history) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(0, P(100)) }, grown[] = { R(0, P(150)) };
        struct dp_counter_values c = {};
        const struct dp_region *regions;
        uint64_t now = 0;
        size_t n;

        ck_assert_int_eq(dp_tracker_add_target(t, 9, r, 1), 0);
        ck_assert(!dp_tracker_tick(t, now));
        for (int epoch = 0; epoch < 20; epoch++) {
                for (uint64_t a = 0; a < P(100); a += P(1)) {
                        struct dp_sample s = vsample(9, a);

                        dp_tracker_account(t, &s, &c);
                }
                now += 5 * MS;
                dp_tracker_tick(t, now);
        }
        ck_assert_uint_eq(dp_tracker_nr_aggregations(t), 1);

        ck_assert_int_eq(dp_tracker_set_ranges(t, 9, grown, 1), 0);
        ck_assert_int_eq(dp_tracker_target_regions(t, 9, &regions, &n), 0);
        for (size_t i = 0; i < n; i++) {
                if (regions[i].end <= P(100))
                        ck_assert_uint_eq(regions[i].last_nr_accesses, 20);
                else
                        ck_assert_uint_eq(regions[i].last_nr_accesses, 0);
        }
        ck_assert_uint_eq(regions[n - 1].end, P(150));
        ck_assert_int_eq(dp_tracker_set_ranges(t, 9, grown, 0), -EINVAL);
}
END_TEST

static uint64_t distance(uint64_t a, uint64_t b) {
        return a > b ? a - b : b - a;
}

/*
 * A hot area fed with samples in every epoch, with light background noise
 * elsewhere: after some aggregations the hottest regions lie on it, cover
 * it, and region boundaries have converged onto its edges.
 */
static void run_hot_area(uint64_t seed) {
        struct dp_tracker_config cfg;
        _cleanup_tracker_ struct dp_tracker *t = NULL;
        struct dp_range r[] = { R(0, P(10000)) };
        const uint64_t hot_start = P(4000), hot_end = P(4500), slack = P(25);
        struct dp_tracker_snapshot snap = {}, copy = {};
        const struct dp_snapshot_target *target;
        _cleanup_free_ struct dp_range *hints = NULL;
        size_t nh = 0;
        struct dp_hot_region hot[20];
        struct dp_counter_values c = {};
        struct dp_prng gen = { seed };
        const struct dp_region *regions;
        uint64_t now = 0, best_start = 0, best_end = 0, covered = 0;
        size_t n, got;

        dp_tracker_config_init(&cfg);
        cfg.seed = seed * 13;
        ck_assert_int_eq(dp_tracker_new(&cfg, &t), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 77, r, 1), 0);
        ck_assert(!dp_tracker_tick(t, now));
        while (dp_tracker_nr_aggregations(t) < 40) {
                for (int i = 0; i < 40; i++) {
                        struct dp_sample s = vsample(77, dp_prng_between(&gen, hot_start, hot_end - 1));

                        dp_tracker_account(t, &s, &c);
                }
                for (int i = 0; i < 3; i++) {
                        struct dp_sample s = vsample(77, dp_prng_between(&gen, 0, P(10000) - 1));

                        dp_tracker_account(t, &s, &c);
                }
                now += 5 * MS;
                dp_tracker_tick(t, now);
        }

        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        got = dp_snapshot_hottest(&snap, DP_ARRAY_SIZE(hot), hot);
        ck_assert_uint_eq(got, DP_MIN(DP_ARRAY_SIZE(hot), snap.nr_regions));

        /* The hottest is on the hot area and saw a sample in (nearly) every epoch. */
        ck_assert_uint_ge(hot[0].region.last_nr_accesses, 18);
        ck_assert_uint_ge(hot[0].region.start + slack, hot_start);
        ck_assert_uint_le(hot[0].region.end, hot_end + slack);

        /* Everything hot sits on the hot area and together covers most of it
         * (tiny regions at an edge see too few samples to look hot yet). */
        for (size_t i = 0; i < got; i++) {
                const struct dp_snapshot_region *reg = &hot[i].region;

                if (reg->last_nr_accesses < 15)
                        continue;
                ck_assert_uint_ge(reg->start + slack, hot_start);
                ck_assert_uint_le(reg->end, hot_end + slack);
                covered += DP_MIN(reg->end, hot_end) - DP_MAX(reg->start, hot_start);
        }
        ck_assert_uint_ge(covered, (hot_end - hot_start) * 8 / 10);

        /* The boundaries nearest the hot area's edges are close to them. */
        ck_assert_int_eq(dp_tracker_target_regions(t, 77, &regions, &n), 0);
        for (size_t i = 0; i < n; i++) {
                if (i == 0 || distance(regions[i].start, hot_start) < distance(best_start, hot_start))
                        best_start = regions[i].start;
                if (i == 0 || distance(regions[i].end, hot_end) < distance(best_end, hot_end))
                        best_end = regions[i].end;
        }
        ck_assert_uint_le(distance(best_start, hot_start), slack);
        ck_assert_uint_le(distance(best_end, hot_end), slack);

        /* A copy is the same, and the DAMON hint built from it, though far
         * coarser, keeps boundaries at both hot edges. */
        ck_assert_int_eq(dp_tracker_snapshot_copy(&snap, &copy), 0);
        ck_assert_uint_eq(copy.nr_regions, snap.nr_regions);
        ck_assert_int_eq(memcmp(copy.regions, snap.regions, snap.nr_regions * sizeof(*snap.regions)), 0);
        ck_assert_uint_eq(copy.max_nr_accesses, snap.max_nr_accesses);
        target = dp_snapshot_find_target(&copy, 77);
        ck_assert_ptr_nonnull(target);
        hints = calloc(target->nr_regions, sizeof(*hints));
        ck_assert_ptr_nonnull(hints);
        ck_assert_int_eq(dp_damon_hints_build(&copy.regions[target->first_region], target->nr_regions,
                                              copy.max_nr_accesses, 10, hints, &nh), 0);
        ck_assert_uint_le(nh, 10);
        best_start = best_end = 0;
        for (size_t i = 0; i < nh; i++) {
                if (i == 0 || distance(hints[i].start, hot_start) < distance(best_start, hot_start))
                        best_start = hints[i].start;
                if (i == 0 || distance(hints[i].end, hot_end) < distance(best_end, hot_end))
                        best_end = hints[i].end;
        }
        ck_assert_uint_le(distance(best_start, hot_start), slack);
        ck_assert_uint_le(distance(best_end, hot_end), slack);
        dp_tracker_snapshot_free(&snap);
        dp_tracker_snapshot_free(&copy);
}

START_TEST(test_hot_area_converges) {
        for (uint64_t seed = 1; seed <= 8; seed++)
                run_hot_area(seed);
}
END_TEST

START_TEST(test_snapshot_and_hottest) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_tracker_snapshot snap = {};
        struct dp_counter_values c = {};
        struct dp_hot_region hot[100];
        uint64_t now = 0;
        size_t got;

        for (uint32_t pid = 30; pid > 0; pid -= 10) {
                struct dp_range r[] = { R(P(pid * 100), P(pid * 100 + 10)) };

                ck_assert_int_eq(dp_tracker_add_target(t, pid, r, 1), 0);
        }
        ck_assert(!dp_tracker_tick(t, now));
        /* pid 20's first page: every epoch; pid 10's first page: every other. */
        while (dp_tracker_nr_aggregations(t) < 1) {
                struct dp_sample s = vsample(20, P(2000));

                dp_tracker_account(t, &s, &c);
                dp_tracker_account(t, &s, &c);
                if (dp_tracker_epoch(t) % 2) {
                        s = vsample(10, P(1000));
                        dp_tracker_account(t, &s, &c);
                }
                now += 5 * MS;
                dp_tracker_tick(t, now);
        }
        /* in progress counts show up too */
        {
                struct dp_sample s = vsample(30, P(3005));

                dp_tracker_account(t, &s, &c);
        }

        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.nr_targets, 3);
        ck_assert_uint_eq(snap.targets[0].tgid, 10);
        ck_assert_uint_eq(snap.targets[1].tgid, 20);
        ck_assert_uint_eq(snap.targets[2].tgid, 30);
        ck_assert_uint_eq(snap.nr_regions, dp_tracker_nr_regions(t));
        ck_assert_uint_eq(snap.max_nr_accesses, 20);
        ck_assert_uint_eq(snap.nr_aggregations, 1);
        for (size_t i = 0; i < snap.nr_targets; i++) {
                const struct dp_snapshot_target *st = &snap.targets[i];

                ck_assert_uint_eq(st->start, P(st->tgid * 100));
                ck_assert_uint_eq(st->end, P(st->tgid * 100 + 10));
                ck_assert_uint_eq(snap.regions[st->first_region].start, st->start);
                ck_assert_uint_eq(snap.regions[st->first_region + st->nr_regions - 1].end, st->end);
        }
        ck_assert_uint_eq(snap.regions[snap.targets[2].first_region + 5].nr_samples, 1);
        ck_assert_uint_eq(snap.regions[snap.targets[2].first_region + 5].nr_accesses, 1);

        got = dp_snapshot_hottest(&snap, 2, hot);
        ck_assert_uint_eq(got, 2);
        ck_assert_uint_eq(hot[0].tgid, 20);
        ck_assert_uint_eq(hot[0].region.last_nr_accesses, 20);
        ck_assert_uint_eq(hot[0].region.last_nr_samples, 40);
        ck_assert_uint_eq(hot[0].target_index, 1);
        ck_assert_uint_eq(hot[1].tgid, 10);
        ck_assert_uint_eq(hot[1].region.last_nr_accesses, 10);

        got = dp_snapshot_hottest(&snap, DP_ARRAY_SIZE(hot), hot);
        ck_assert_uint_eq(got, snap.nr_regions);
        for (size_t i = 1; i < got; i++)
                ck_assert_uint_ge(hot[i - 1].region.last_nr_accesses, hot[i].region.last_nr_accesses);
        ck_assert_uint_eq(dp_snapshot_hottest(&snap, 0, hot), 0);

        /* Reuse after a target went away. */
        ck_assert_int_eq(dp_tracker_remove_target(t, 20), 0);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.nr_targets, 2);
        ck_assert_uint_eq(snap.targets[1].tgid, 30);
        dp_tracker_snapshot_free(&snap);
        ck_assert_ptr_null(snap.regions);
}
END_TEST

/* Random churn of targets, re-bounding, samples and time: the counters
 * always add up and every target's regions stay well-formed (ASan watches
 * the caches for dangling pointers). */
START_TEST(test_churn) {
        struct dp_tracker_config cfg;
        _cleanup_tracker_ struct dp_tracker *t = NULL;
        struct dp_tracker_snapshot snap = {};
        struct dp_counter_values c = {};
        struct dp_prng gen = { 21 };
        uint64_t now = 0, total = 0;
        uint32_t unknown[DP_TRACKER_UNKNOWN_MAX];

        dp_tracker_config_init(&cfg);
        cfg.max_targets = 16;
        cfg.min_nr_regions = 3;
        cfg.max_nr_regions = 40;
        ck_assert_int_eq(dp_tracker_new(&cfg, &t), 0);

        for (int step = 0; step < 20000; step++) {
                uint32_t pid = (uint32_t) dp_prng_between(&gen, 1, 24);
                uint64_t op = dp_prng_between(&gen, 0, 99);
                struct dp_range r[2] = {
                        R(P(dp_prng_between(&gen, 0, 100)), P(dp_prng_between(&gen, 101, 300))),
                        R(P(dp_prng_between(&gen, 400, 500)), P(dp_prng_between(&gen, 501, 900))),
                };

                if (op < 3) {
                        int ret = dp_tracker_add_target(t, pid, r, 2);

                        ck_assert(ret == 0 || ret == -EEXIST || ret == -ENOSPC);
                } else if (op < 5) {
                        int ret = dp_tracker_remove_target(t, pid);

                        ck_assert(ret == 0 || ret == -ENOENT);
                } else if (op < 7) {
                        int ret = dp_tracker_set_ranges(t, pid, r, dp_prng_between(&gen, 1, 2));

                        ck_assert(ret == 0 || ret == -ENOENT);
                } else if (op < 8) {
                        dp_tracker_take_unknown(t, unknown, DP_ARRAY_SIZE(unknown));
                } else {
                        struct dp_sample batch[8];

                        for (size_t i = 0; i < DP_ARRAY_SIZE(batch); i++)
                                batch[i] = vsample(pid, dp_prng_between(&gen, 0, P(1000)));
                        dp_tracker_account_batch(t, batch, DP_ARRAY_SIZE(batch), &c);
                        total += DP_ARRAY_SIZE(batch);
                }
                now += dp_prng_between(&gen, 0, 2 * MS);
                dp_tracker_tick(t, now);
        }
        ck_assert_uint_eq(sum_misses_and_matches(&c), total);
        ck_assert_uint_le(c.v[DP_C_UPDATE], c.v[DP_C_MATCH]);
        ck_assert_uint_gt(dp_tracker_nr_aggregations(t), 10);

        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.nr_targets, dp_tracker_nr_targets(t));
        for (size_t i = 0; i < snap.nr_targets; i++) {
                const struct dp_snapshot_target *st = &snap.targets[i];
                bool well_formed = st->nr_regions >= 3 && st->nr_regions <= 40;

                for (size_t k = 0; k < st->nr_regions; k++) {
                        const struct dp_snapshot_region *reg = &snap.regions[st->first_region + k];

                        well_formed &= reg->start < reg->end && ((reg->start | reg->end) & (DP_PAGE_SIZE - 1)) == 0;
                        if (k > 0)
                                well_formed &= reg->start >= snap.regions[st->first_region + k - 1].end;
                }
                ck_assert(well_formed);
                if (i > 0)
                        ck_assert_uint_lt(snap.targets[i - 1].tgid, st->tgid);
        }
        dp_tracker_snapshot_free(&snap);
}
END_TEST

/* Samples are filed under the sampling interval of their own timestamp, so a
 * batch drained late still counts one access per interval it covers. */
START_TEST(test_sample_time_slots) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(0, P(10)) };
        struct dp_counter_values c = {};
        const struct dp_region *regions;
        const uint64_t t0 = 1000 * MS;
        size_t n;

        ck_assert_int_eq(dp_tracker_add_target(t, 1, r, 1), 0);
        ck_assert(!dp_tracker_tick(t, t0));

        /* One aggregation's worth, two samples per interval, all drained at once. */
        for (uint64_t slot = 0; slot < 20; slot++)
                for (int k = 0; k < 2; k++) {
                        struct dp_sample s = vsample(1, P(0));

                        s.time = t0 + slot * 5 * MS + (uint64_t) k * MS;
                        dp_tracker_account(t, &s, &c);
                }
        /* Three samples ahead of the tick that will close this aggregation. */
        for (uint64_t slot = 20; slot < 23; slot++) {
                struct dp_sample s = vsample(1, P(0));

                s.time = t0 + slot * 5 * MS;
                dp_tracker_account(t, &s, &c);
        }
        ck_assert_uint_eq(c.v[DP_C_MATCH], 43);
        ck_assert_uint_eq(c.v[DP_C_UPDATE], 23);

        ck_assert(dp_tracker_tick(t, t0 + 100 * MS));
        ck_assert_int_eq(dp_tracker_target_regions(t, 1, &regions, &n), 0);
        {
                uint32_t last = 0, now = 0;

                for (size_t i = 0; i < n; i++) {
                        last = DP_MAX(last, regions[i].last_nr_accesses);
                        now = DP_MAX(now, regions[i].nr_accesses);
                }
                ck_assert_uint_eq(last, 20);    /* every interval of the closed aggregation */
                ck_assert_uint_eq(now, 3);      /* the early ones open the next */
        }

        /* A sample from before the current aggregation lands in its first interval, once. */
        {
                struct dp_sample s = vsample(1, P(0));
                uint64_t before = c.v[DP_C_UPDATE];

                s.time = t0 + 50 * MS;
                dp_tracker_account(t, &s, &c);
                dp_tracker_account(t, &s, &c);
                ck_assert_uint_eq(c.v[DP_C_UPDATE], before);    /* slot 0 was already counted */
        }
}
END_TEST

static struct dp_sample timed_vsample(uint64_t time) {
        struct dp_sample s = vsample(1, P(0));

        s.time = time;
        return s;
}

/* The largest nr_accesses and last_nr_accesses of target 1's regions. */
static void peak_accesses(struct dp_tracker *t, uint32_t *now, uint32_t *last) {
        const struct dp_region *regions;
        size_t n;

        ck_assert_int_eq(dp_tracker_target_regions(t, 1, &regions, &n), 0);
        *now = *last = 0;
        for (size_t i = 0; i < n; i++) {
                *now = DP_MAX(*now, regions[i].nr_accesses);
                *last = DP_MAX(*last, regions[i].last_nr_accesses);
        }
}

/* A queue drained once an aggregation is due holds samples up to the lag
 * beyond it: those of the aggregation after next wait for the tick that
 * opens theirs, and then count in their own intervals, not all in the next
 * aggregation's last one. */
START_TEST(test_open_prefix) {
        _cleanup_tracker_ struct dp_tracker *t = new_tracker(DP_TRACKER_VADDR);
        struct dp_range r[] = { R(0, P(10)) };
        struct dp_counter_values c = {};
        const uint64_t t0 = 1000 * MS, drained = t0 + 250 * MS;
        struct dp_sample q[6];
        uint32_t now, last;

        ck_assert_int_eq(dp_tracker_add_target(t, 1, r, 1), 0);
        q[0] = timed_vsample(t0 + 10 * MS);
        q[1] = timed_vsample(t0 + 150 * MS);
        q[2] = timed_vsample(t0 + 199 * MS);
        /* The aggregation after next: [t0 + 200 ms, t0 + 300 ms). */
        q[3] = timed_vsample(t0 + 200 * MS);
        q[4] = timed_vsample(t0 + 225 * MS);
        q[5] = timed_vsample(t0 + 245 * MS);

        /* Before the clock starts nothing waits. */
        ck_assert_uint_eq(dp_tracker_open_prefix(t, q, 6, drained), 6);
        ck_assert(!dp_tracker_tick(t, t0));
        ck_assert_uint_eq(dp_tracker_open_prefix(t, q, 6, drained), 3);
        ck_assert_uint_eq(dp_tracker_open_prefix(t, q, 3, drained), 3);
        ck_assert_uint_eq(dp_tracker_open_prefix(t, q + 3, 3, drained), 0);
        ck_assert_uint_eq(dp_tracker_open_prefix(t, q, 0, drained), 0);
        {
                struct dp_sample untimed[2] = { vsample(1, P(0)), vsample(1, P(1)) };
                /* From a clock gone wrong: after they were drained. */
                struct dp_sample wild[2] = { timed_vsample(drained + 1), timed_vsample(UINT64_MAX) };

                ck_assert_uint_eq(dp_tracker_open_prefix(t, untimed, 2, drained), 2);
                ck_assert_uint_eq(dp_tracker_open_prefix(t, wild, 2, drained), 2);
        }
        {
                /* A poll interval longer than two aggregations: further ahead still, and it waits. */
                struct dp_sample far = timed_vsample(t0 + 400 * MS);

                ck_assert_uint_eq(dp_tracker_open_prefix(t, &far, 1, t0 + 450 * MS), 0);
        }
        {
                /* A long queue in time order, 245 us apart: the first of the
                 * aggregation after next is number 817 (t0 + 200.165 ms); one
                 * from the future before it does not move that. */
                static struct dp_sample many[1000];

                for (size_t i = 0; i < DP_ARRAY_SIZE(many); i++)
                        many[i] = timed_vsample(t0 + i * 245 * MS / 1000);
                ck_assert_uint_eq(dp_tracker_open_prefix(t, many, 1000, drained), 817);
                ck_assert_uint_eq(dp_tracker_open_prefix(t, many, 817, drained), 817);
                ck_assert_uint_eq(dp_tracker_open_prefix(t, many + 817, 183, drained), 0);
                many[400].time = UINT64_MAX;
                ck_assert_uint_eq(dp_tracker_open_prefix(t, many, 1000, drained), 817);
                many[816].time = UINT64_MAX;
                ck_assert_uint_eq(dp_tracker_open_prefix(t, many, 1000, drained), 817);
        }

        /* Drained at t0 + 250 ms, when the tick (150 ms behind) closes the first. */
        dp_tracker_account_batch(t, q, 3, &c);
        ck_assert(dp_tracker_tick(t, t0 + 100 * MS));
        ck_assert_uint_eq(dp_tracker_open_prefix(t, q + 3, 3, drained), 3);
        dp_tracker_account_batch(t, q + 3, 3, &c);
        ck_assert_uint_eq(c.v[DP_C_MATCH], 6);
        ck_assert_uint_eq(c.v[DP_C_UPDATE], 6);
        peak_accesses(t, &now, &last);
        ck_assert_uint_eq(last, 1);             /* t0 + 10 ms */
        ck_assert_uint_eq(now, 2);              /* t0 + 150, t0 + 199 ms */

        ck_assert(dp_tracker_tick(t, t0 + 200 * MS));
        peak_accesses(t, &now, &last);
        ck_assert_uint_eq(last, 2);
        ck_assert_uint_eq(now, 3);              /* three intervals of their own */
}
END_TEST

static Suite *tracker_suite(void) {
        Suite *s = suite_create("tracker");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_config);
        tcase_add_test(tc, test_targets);
        tcase_add_test(tc, test_target_misses);
        tcase_add_test(tc, test_many_targets_hash);
        tcase_add_test(tc, test_match_and_miss_reasons);
        tcase_add_test(tc, test_one_update_per_epoch);
        tcase_add_test(tc, test_tick_and_aggregation);
        tcase_add_test(tc, test_quiet_target_ages_lazily);
        tcase_add_test(tc, test_aggregation_due);
        tcase_add_test(tc, test_sample_time_slots);
        tcase_add_test(tc, test_open_prefix);
        tcase_add_test(tc, test_counter_sums_random);
        tcase_add_test(tc, test_region_sums_match_counters);
        tcase_add_test(tc, test_unknown_tgids);
        tcase_add_test(tc, test_paddr_mode);
        tcase_add_test(tc, test_set_ranges_keeps_history);
        tcase_add_test(tc, test_hot_area_converges);
        tcase_add_test(tc, test_snapshot_and_hottest);
        tcase_add_test(tc, test_churn);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(tracker_suite());
}
