/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check-main.h"
#include "damon-agree.h"
#include "macro.h"

#define MIB (1024u * 1024u)

/* DAMON: cold [0,10), hot [10,20) (count 10), lukewarm [20,30) (count 4, below
 * half of 10), hot [30,35) (count 6), cold [35,100) MiB; a region of another
 * process at [200,300) with count 50 that lies outside the window. */
static const struct dp_damon_view_input regions[] = {
        { 0, 10 * MIB, 0, 5 },
        { 10 * MIB, 20 * MIB, 10, 5 },
        { 20 * MIB, 30 * MIB, 4, 5 },
        { 30 * MIB, 35 * MIB, 6, 5 },
        { 35 * MIB, 100 * MIB, 0, 5 },
        { 200 * MIB, 300 * MIB, 50, 5 },
};
static const struct dp_range window = { 0, 100 * MIB };

START_TEST(test_precision_recall) {
        /* Truly hot: [10,20) and [30,40): DAMON hot [10,20) + [30,35), 15 MiB, all truly hot. */
        const struct dp_range ref[] = { { 10 * MIB, 20 * MIB }, { 30 * MIB, 40 * MIB } };
        struct dp_damon_agreement a;

        ck_assert_int_eq(dp_damon_agree(regions, DP_ARRAY_SIZE(regions), ref, 2, window, &a), 0);
        ck_assert_uint_eq(a.max_nr_accesses, 10);      /* the 50 outside the window does not count */
        ck_assert_uint_eq(a.nr_regions, 5);
        ck_assert_uint_eq(a.hot_bytes, 15 * MIB);
        ck_assert_uint_eq(a.ref_bytes, 20 * MIB);
        ck_assert_uint_eq(a.both_bytes, 15 * MIB);
        ck_assert_double_eq_tol(a.precision, 1.0, 1e-9);
        ck_assert_double_eq_tol(a.recall, 0.75, 1e-9);
        /* [30,40) has exactly half its bytes hot: found. */
        ck_assert_uint_eq(a.nr_chunks, 2);
        ck_assert_uint_eq(a.chunks_found, 2);
}
END_TEST

START_TEST(test_chunks_and_imprecision) {
        /* Small chunks: one inside DAMON's hot [10,20), one at [22,23) in the
         * lukewarm region, one at [36,37) in the cold tail. */
        const struct dp_range ref[] = { { 12 * MIB, 13 * MIB }, { 22 * MIB, 23 * MIB }, { 36 * MIB, 37 * MIB } };
        struct dp_damon_agreement a;

        ck_assert_int_eq(dp_damon_agree(regions, DP_ARRAY_SIZE(regions), ref, 3, window, &a), 0);
        ck_assert_uint_eq(a.chunks_found, 1);
        ck_assert_uint_eq(a.nr_chunks, 3);
        ck_assert_uint_eq(a.both_bytes, 1 * MIB);
        ck_assert_double_eq_tol(a.precision, 1.0 / 15, 1e-9);
        ck_assert_double_eq_tol(a.recall, 1.0 / 3, 1e-9);
}
END_TEST

START_TEST(test_nothing_hot) {
        const struct dp_damon_view_input cold[] = { { 0, 50 * MIB, 0, 1 }, { 50 * MIB, 100 * MIB, 0, 1 } };
        const struct dp_range ref[] = { { 10 * MIB, 20 * MIB } };
        struct dp_range hot[2];
        struct dp_damon_agreement a;

        ck_assert_int_eq(dp_damon_agree(cold, 2, ref, 1, window, &a), 0);
        ck_assert_uint_eq(a.hot_bytes, 0);
        ck_assert_double_eq(a.precision, 0);
        ck_assert_double_eq(a.recall, 0);
        ck_assert_uint_eq(a.chunks_found, 0);
        ck_assert_uint_eq(dp_damon_hot_ranges(cold, 2, window, hot), 0);
        /* No DAMON regions at all (no kdamond yet): the same zeros. */
        ck_assert_int_eq(dp_damon_agree(NULL, 0, ref, 1, window, &a), 0);
        ck_assert_uint_eq(a.nr_regions, 0);
        ck_assert_double_eq(a.recall, 0);
}
END_TEST

START_TEST(test_hot_ranges_clipped_and_merged) {
        /* Two touching hot regions straddling the window's end merge and are clipped. */
        const struct dp_damon_view_input in[] = { { 90 * MIB, 95 * MIB, 8, 1 }, { 95 * MIB, 120 * MIB, 8, 1 },
                                                  { 0, 90 * MIB, 1, 1 } };
        struct dp_range hot[3];

        ck_assert_uint_eq(dp_damon_hot_ranges(in, 3, window, hot), 1);
        ck_assert_uint_eq(hot[0].start, 90 * MIB);
        ck_assert_uint_eq(hot[0].end, 100 * MIB);
}
END_TEST

START_TEST(test_bad_input) {
        const struct dp_range unsorted[] = { { 30 * MIB, 40 * MIB }, { 10 * MIB, 20 * MIB } };
        struct dp_damon_agreement a;

        ck_assert_int_eq(dp_damon_agree(regions, 1, unsorted, 2, window, &a), -EINVAL);
        ck_assert_int_eq(dp_damon_agree(regions, 1, NULL, 0, (struct dp_range) { 5, 5 }, &a), -EINVAL);
}
END_TEST

static Suite *damon_agree_suite(void) {
        Suite *s = suite_create("damon-agree");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_precision_recall);
        tcase_add_test(tc, test_chunks_and_imprecision);
        tcase_add_test(tc, test_nothing_hot);
        tcase_add_test(tc, test_hot_ranges_clipped_and_merged);
        tcase_add_test(tc, test_bad_input);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(damon_agree_suite());
}
