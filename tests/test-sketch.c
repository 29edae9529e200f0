/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "check-main.h"
#include "macro.h"
#include "sketch.h"
#include "tracker.h"

START_TEST(test_add_decay_export) {
        struct dp_sketch s;
        _cleanup_free_ struct dp_sketch_entry *out = calloc(DP_SKETCH_SLOTS, sizeof(*out));
        size_t n;

        ck_assert_ptr_nonnull(out);
        ck_assert_int_eq(dp_sketch_init(&s), 0);
        dp_sketch_add(&s, 7, 0x7f0000010000, 1);
        dp_sketch_add(&s, 7, 0x7f0000013fff, 2);        /* the same 16 KiB granule, the next interval */
        dp_sketch_add(&s, 7, 0x400000, 2);
        dp_sketch_add(&s, 3, 0x7f0000010000, 2);        /* another process, same address */
        n = dp_sketch_export(&s, out);
        ck_assert_uint_eq(n, 3);
        /* By tgid, then address. */
        ck_assert_uint_eq(out[0].key, dp_sketch_key(3, 0x7f0000010000));
        ck_assert_uint_eq(out[1].key, dp_sketch_key(7, 0x400000));
        ck_assert_uint_eq(out[2].key, dp_sketch_key(7, 0x7f0000010000));
        ck_assert_uint_eq(out[2].weight, 2 * DP_SKETCH_WEIGHT);

        /* Decay: half and one each time; a single sample is gone after
         * eight, the double one outlives it. */
        dp_sketch_decay(&s);
        n = dp_sketch_export(&s, out);
        ck_assert_uint_eq(out[1].weight, DP_SKETCH_WEIGHT / 2 - 1);
        for (int i = 0; i < 7 && n == 3; i++) {
                dp_sketch_decay(&s);
                n = dp_sketch_export(&s, out);
        }
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(out[0].key, dp_sketch_key(7, 0x7f0000010000));

        /* The top of user space, five-level paging's too, and the largest pid, round-trip. */
        ck_assert_uint_eq(dp_sketch_key_start(dp_sketch_key(7, 0x7ffff7ff4000)), 0x7ffff7ff4000);
        ck_assert_uint_eq(dp_sketch_key_start(dp_sketch_key(4194303, 0xfffffffffc000)), 0xfffffffffc000);
        ck_assert_uint_eq(dp_sketch_key_tgid(dp_sketch_key(4194303, 0xfffffffffc000)), 4194303);

        dp_sketch_forget(&s, 7);
        ck_assert_uint_eq(dp_sketch_export(&s, out), 0);
        dp_sketch_done(&s);
}
END_TEST

/* DAMON's rule: a granule gains at most one sample's weight per sampling
 * interval.  A burst of samples in one interval (a first touch faulting in
 * each of a granule's pages) weighs as one; the same granule sampled in two
 * intervals weighs two, and the interval it last counted survives a decay. */
START_TEST(test_one_sample_per_interval) {
        struct dp_sketch s;
        _cleanup_free_ struct dp_sketch_entry *out = calloc(DP_SKETCH_SLOTS, sizeof(*out));

        ck_assert_ptr_nonnull(out);
        ck_assert_int_eq(dp_sketch_init(&s), 0);
        for (uint64_t page = 0; page < 4; page++)
                dp_sketch_add(&s, 5, 0x10000 + page * 4096, 40);        /* one granule, one interval */
        dp_sketch_add(&s, 5, 0x20000, 40);
        dp_sketch_add(&s, 5, 0x20000, 41);
        ck_assert_uint_eq(dp_sketch_export(&s, out), 2);
        ck_assert_uint_eq(out[0].weight, DP_SKETCH_WEIGHT);
        ck_assert_uint_eq(out[1].weight, 2 * DP_SKETCH_WEIGHT);

        dp_sketch_decay(&s);
        dp_sketch_add(&s, 5, 0x20000, 41);      /* still the interval it counted last */
        dp_sketch_add(&s, 5, 0x10000, 42);
        ck_assert_uint_eq(dp_sketch_export(&s, out), 2);
        ck_assert_uint_eq(out[0].weight, DP_SKETCH_WEIGHT / 2 - 1 + DP_SKETCH_WEIGHT);
        ck_assert_uint_eq(out[1].weight, DP_SKETCH_WEIGHT - 1);
        dp_sketch_done(&s);
}
END_TEST

/* A full table drops and counts; it never loops or overwrites. */
START_TEST(test_full_table_drops) {
        struct dp_sketch s;

        ck_assert_int_eq(dp_sketch_init(&s), 0);
        for (uint64_t i = 0; i < 2 * DP_SKETCH_SLOTS; i++)
                dp_sketch_add(&s, 1, i * DP_SKETCH_GRANULE, 1);
        ck_assert_uint_le(s.used, DP_SKETCH_SLOTS);
        ck_assert_uint_eq(s.used + s.dropped, 2 * DP_SKETCH_SLOTS);
        ck_assert_uint_ge(s.dropped, DP_SKETCH_SLOTS);
        dp_sketch_done(&s);
}
END_TEST

/* The tracker's snapshot hands each target its own sampled granules, once
 * asked to keep them. */
START_TEST(test_tracker_snapshot_granules) {
        struct dp_tracker_config c;
        struct dp_tracker *t;
        struct dp_tracker_snapshot snap = {};
        struct dp_counter_values cv = {};
        const struct dp_range r = { 0x100000, 0x10000000 };
        const struct dp_sample s[] = {
                { .vaddr = 0x200000, .pid = 9 }, { .vaddr = 0x210000, .pid = 9 },
                { .vaddr = 0x300000, .pid = 4 }, { .vaddr = 0x50000000, .pid = 4 },       /* out of bounds */
        };

        dp_tracker_config_init(&c);
        ck_assert_int_eq(dp_tracker_new(&c, &t), 0);
        ck_assert_int_eq(dp_tracker_keep_granules(t, true), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 9, &r, 1), 0);
        ck_assert_int_eq(dp_tracker_add_target(t, 4, &r, 1), 0);
        dp_tracker_account_batch(t, s, DP_ARRAY_SIZE(s), &cv);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.nr_targets, 2);
        ck_assert_uint_eq(snap.targets[0].tgid, 4);
        ck_assert_uint_eq(snap.targets[0].nr_granules, 1);
        ck_assert_uint_eq(snap.granules[snap.targets[0].first_granule].start, 0x300000);
        ck_assert_uint_eq(snap.targets[1].nr_granules, 2);
        ck_assert_uint_eq(snap.granules[snap.targets[1].first_granule + 1].start, 0x210000);

        ck_assert_int_eq(dp_tracker_remove_target(t, 9), 0);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.nr_granules, 1);

        /* Off forgets them, and samples then count in the regions only. */
        ck_assert_int_eq(dp_tracker_keep_granules(t, false), 0);
        cv = (struct dp_counter_values) {};
        dp_tracker_account_batch(t, s, DP_ARRAY_SIZE(s), &cv);
        ck_assert_int_eq(dp_tracker_snapshot(t, &snap), 0);
        ck_assert_uint_eq(snap.nr_granules, 0);
        ck_assert_uint_eq(snap.targets[0].nr_granules, 0);
        ck_assert_uint_eq(cv.v[DP_C_MATCH], 1);         /* 9 is gone */
        dp_tracker_snapshot_free(&snap);
        dp_tracker_free(t);
}
END_TEST

static Suite *sketch_suite(void) {
        Suite *s = suite_create("sketch");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_add_decay_export);
        tcase_add_test(tc, test_one_sample_per_interval);
        tcase_add_test(tc, test_full_table_drops);
        tcase_add_test(tc, test_tracker_snapshot_granules);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(sketch_suite());
}
