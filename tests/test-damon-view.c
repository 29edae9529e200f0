/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check-main.h"
#include "damon-view.h"
#include "macro.h"

#define PAGE 4096u

/* Tracker: tgid 7 with a cold [0,100) and a hot [100,110) page range;
 * tgid 9 with one region. */
static void make_snapshot(struct dp_tracker_snapshot *s, struct dp_snapshot_target *t, struct dp_snapshot_region *r) {
        r[0] = (struct dp_snapshot_region) { .start = 0, .end = 100 * PAGE, .last_nr_accesses = 0,
                                             .last_nr_samples = 0 };
        r[1] = (struct dp_snapshot_region) { .start = 100 * PAGE, .end = 110 * PAGE, .last_nr_accesses = 20,
                                             .last_nr_samples = 400 };
        r[2] = (struct dp_snapshot_region) { .start = 1000 * PAGE, .end = 1010 * PAGE, .last_nr_accesses = 4,
                                             .last_nr_samples = 10 };
        t[0] = (struct dp_snapshot_target) { .tgid = 7, .start = 0, .end = 110 * PAGE, .nr_regions = 2 };
        t[1] = (struct dp_snapshot_target) { .tgid = 9, .start = 1000 * PAGE, .end = 1010 * PAGE, .nr_regions = 1,
                                             .first_region = 2 };
        *s = (struct dp_tracker_snapshot) { .targets = t, .nr_targets = 2, .regions = r, .nr_regions = 3,
                                            .max_nr_accesses = 20 };
}

START_TEST(test_join) {
        struct dp_snapshot_region r[3];
        struct dp_snapshot_target t[2];
        struct dp_tracker_snapshot s;
        /* DAMON: target 7 in three regions (one straddling the hot edge), then
         * target 9 (addresses restart: how DAMON's listing shows a new target),
         * then a third target nobody named. */
        const struct dp_damon_view_input in[] = {
                { 0, 90 * PAGE, 0, 12 },
                { 90 * PAGE, 110 * PAGE, 9, 3 },
                { 110 * PAGE, 2000 * PAGE, 0, 1 },
                { 1000 * PAGE, 1005 * PAGE, 5, 2 },
                { 1005 * PAGE, 1005 * PAGE, 1, 1 },     /* empty: skipped */
                { 5 * PAGE, 6 * PAGE, 1, 1 },
        };
        const uint32_t pids[] = { 7, 9 };
        struct dp_damon_view_row out[DP_ARRAY_SIZE(in)];
        size_t n;

        make_snapshot(&s, t, r);
        n = dp_damon_view_build(in, DP_ARRAY_SIZE(in), pids, 2, &s, out);
        ck_assert_uint_eq(n, 4);

        ck_assert_uint_eq(out[0].pid, 7);
        ck_assert_uint_eq(out[0].pmu_nr_accesses, 0);
        ck_assert_uint_eq(out[0].pmu_bytes, 90 * PAGE);
        ck_assert_uint_eq(out[0].damon_age, 12);

        /* Half hot, half cold: rate 10 of 20, all 400 samples of the hot range. */
        ck_assert_uint_eq(out[1].pmu_nr_accesses, 10);
        ck_assert(out[1].pmu_samples_known);
        ck_assert_uint_eq(out[1].pmu_samples, 400);
        /* The cold region reaches across this one's start, but had no samples. */
        ck_assert(out[0].pmu_samples_known);
        ck_assert_uint_eq(out[0].pmu_samples, 0);
        ck_assert_uint_eq(out[1].damon_nr_accesses, 9);

        /* Beyond the tracker's bounds: nothing covered. */
        ck_assert_uint_eq(out[2].pmu_bytes, 0);
        ck_assert_uint_eq(out[2].pmu_nr_accesses, 0);

        ck_assert_uint_eq(out[3].pid, 9);
        ck_assert_uint_eq(out[3].pmu_nr_accesses, 4);
        /* Half of a region with 10 samples: how many fell in this half is not
         * known, and is not guessed as 5. */
        ck_assert(!out[3].pmu_samples_known);

        /* A tracker region whose own count is not known is never added in. */
        r[1].unknown = DP_REGION_LAST_SAMPLES_UNKNOWN;
        ck_assert_uint_eq(dp_damon_view_build(in, DP_ARRAY_SIZE(in), pids, 2, &s, out), 4);
        ck_assert(!out[1].pmu_samples_known);
        ck_assert(out[0].pmu_samples_known);
        r[1].unknown = 0;

        /* No named targets, nothing to show. */
        ck_assert_uint_eq(dp_damon_view_build(in, DP_ARRAY_SIZE(in), pids, 0, &s, out), 0);
}
END_TEST

/* The physical space is pid 0 and the tracker's only target. */
START_TEST(test_join_physical) {
        struct dp_snapshot_region r = { .start = 0x100000, .end = 0x200000, .last_nr_accesses = 6,
                                        .last_nr_samples = 60 };
        struct dp_snapshot_target t = { .tgid = 0, .start = 0x100000, .end = 0x200000, .nr_regions = 1 };
        struct dp_tracker_snapshot s = { .targets = &t, .nr_targets = 1, .regions = &r, .nr_regions = 1,
                                         .max_nr_accesses = 20 };
        const struct dp_damon_view_input in[] = { { 0x100000, 0x180000, 3, 5 } };
        const uint32_t pids[] = { 0 };
        struct dp_damon_view_row out[1];

        ck_assert_uint_eq(dp_damon_view_build(in, 1, pids, 1, &s, out), 1);
        ck_assert_uint_eq(out[0].pid, 0);
        ck_assert_uint_eq(out[0].pmu_nr_accesses, 6);
        ck_assert(!out[0].pmu_samples_known);          /* half of a region with 60 samples */
        ck_assert_uint_eq(out[0].pmu_bytes, 0x80000);
}
END_TEST

static Suite *damon_view_suite(void) {
        Suite *s = suite_create("damon-view");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_join);
        tcase_add_test(tc, test_join_physical);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(damon_view_suite());
}
