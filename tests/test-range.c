/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "range.h"

#include "check-main.h"

#define R(s, e) ((struct dp_range) { .start = (s), .end = (e) })

START_TEST(test_sort) {
        struct dp_range r[] = { R(50, 60), R(10, 20), R(10, 15), R(0, 5) };

        dp_ranges_sort(r, DP_ARRAY_SIZE(r));
        ck_assert_uint_eq(r[0].start, 0);
        ck_assert_uint_eq(r[1].start, 10);
        ck_assert_uint_eq(r[1].end, 15);
        ck_assert_uint_eq(r[2].end, 20);
        ck_assert_uint_eq(r[3].start, 50);
}
END_TEST

START_TEST(test_coalesce) {
        struct dp_range r[] = {
                R(100, 200), R(0, 10), R(10, 20),      /* touching */
                R(150, 300), R(120, 130),              /* overlapping, contained */
                R(500, 500),                           /* empty: dropped */
                R(400, 450),
        };
        size_t n;

        ck_assert_int_eq(dp_ranges_coalesce(r, DP_ARRAY_SIZE(r), &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(r[0].start, 0);
        ck_assert_uint_eq(r[0].end, 20);
        ck_assert_uint_eq(r[1].start, 100);
        ck_assert_uint_eq(r[1].end, 300);
        ck_assert_uint_eq(r[2].start, 400);
        ck_assert_uint_eq(r[2].end, 450);
        ck_assert(dp_ranges_are_sorted_disjoint(r, n));
        ck_assert_uint_eq(dp_ranges_total_size(r, n), 20 + 200 + 50);
}
END_TEST

START_TEST(test_coalesce_rejects_inverted) {
        struct dp_range r[] = { R(0, 10), R(30, 20) };
        size_t n = 12345;

        ck_assert_int_eq(dp_ranges_coalesce(r, DP_ARRAY_SIZE(r), &n), -EINVAL);
        ck_assert_uint_eq(n, 12345);
        /* untouched */
        ck_assert_uint_eq(r[1].start, 30);
        ck_assert_int_eq(dp_ranges_coalesce(NULL, 0, &n), 0);
        ck_assert_uint_eq(n, 0);
}
END_TEST

START_TEST(test_page_align) {
        struct dp_range r[] = {
                R(0x1001, 0x1002),      /* one page */
                R(0x2fff, 0x3001),      /* two pages, touches the first */
                R(0x10000, 0x10000),    /* empty */
                R(UINT64_MAX - 100, UINT64_MAX), /* clamped inside the last page: empty */
        };
        size_t n;

        ck_assert_int_eq(dp_ranges_page_align(r, DP_ARRAY_SIZE(r), &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(r[0].start, 0x1000);
        ck_assert_uint_eq(r[0].end, 0x4000);
}
END_TEST

START_TEST(test_fit_bridges_smallest_gaps) {
        /* gaps: 10, 1000, 5, 200 */
        struct dp_range r[] = { R(0, 10), R(20, 30), R(1030, 1040), R(1045, 1050), R(1250, 1300) };
        struct dp_range copy[DP_ARRAY_SIZE(r)];
        size_t n;

        memcpy(copy, r, sizeof(r));
        ck_assert_int_eq(dp_ranges_fit(copy, 5, 5, &n), 0);
        ck_assert_uint_eq(n, 5);

        memcpy(copy, r, sizeof(r));
        ck_assert_int_eq(dp_ranges_fit(copy, 5, 3, &n), 0);
        /* bridged 5 and 10, kept 1000 and 200: DAMON's three regions */
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(copy[0].start, 0);
        ck_assert_uint_eq(copy[0].end, 30);
        ck_assert_uint_eq(copy[1].start, 1030);
        ck_assert_uint_eq(copy[1].end, 1050);
        ck_assert_uint_eq(copy[2].start, 1250);
        ck_assert_uint_eq(copy[2].end, 1300);

        memcpy(copy, r, sizeof(r));
        ck_assert_int_eq(dp_ranges_fit(copy, 5, 1, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(copy[0].start, 0);
        ck_assert_uint_eq(copy[0].end, 1300);
}
END_TEST

START_TEST(test_fit_ties_and_errors) {
        struct dp_range r[] = { R(0, 10), R(20, 30), R(40, 50) };  /* equal gaps */
        struct dp_range bad[] = { R(0, 10), R(5, 30) };
        size_t n;

        ck_assert_int_eq(dp_ranges_fit(r, 3, 2, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(r[0].end, 30);        /* the lower gap went first */
        ck_assert_uint_eq(r[1].start, 40);

        ck_assert_int_eq(dp_ranges_fit(bad, 2, 1, &n), -EINVAL);
        ck_assert_int_eq(dp_ranges_fit(r, 2, 0, &n), -EINVAL);
}
END_TEST

START_TEST(test_fit_random_property) {
        struct dp_range r[200];
        unsigned seed = 42;

        for (int round = 0; round < 50; round++) {
                uint64_t pos = 0, covered_before, first, last;
                size_t n = 1 + (size_t) (rand_r(&seed) % 200), m, max = 1 + (size_t) (rand_r(&seed) % 50);

                for (size_t i = 0; i < n; i++) {
                        pos += 1 + (uint64_t) (rand_r(&seed) % 1000);
                        r[i].start = pos;
                        pos += 1 + (uint64_t) (rand_r(&seed) % 1000);
                        r[i].end = pos;
                }
                covered_before = dp_ranges_total_size(r, n);
                first = r[0].start;
                last = r[n - 1].end;

                ck_assert_int_eq(dp_ranges_fit(r, n, max, &m), 0);
                ck_assert_uint_eq(m, DP_MIN(n, max));
                ck_assert(dp_ranges_are_sorted_disjoint(r, m));
                ck_assert_uint_eq(r[0].start, first);
                ck_assert_uint_eq(r[m - 1].end, last);
                ck_assert_uint_ge(dp_ranges_total_size(r, m), covered_before);
        }
}
END_TEST

static Suite *range_suite(void) {
        Suite *s = suite_create("range");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_sort);
        tcase_add_test(tc, test_coalesce);
        tcase_add_test(tc, test_coalesce_rejects_inverted);
        tcase_add_test(tc, test_page_align);
        tcase_add_test(tc, test_fit_bridges_smallest_gaps);
        tcase_add_test(tc, test_fit_ties_and_errors);
        tcase_add_test(tc, test_fit_random_property);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(range_suite());
}
