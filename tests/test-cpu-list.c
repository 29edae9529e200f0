/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>

#include "config.h"
#include "cpu-list.h"

#include "check-main.h"

START_TEST(test_parse_good) {
        struct dp_cpu_list l;

        ck_assert_int_eq(dp_cpu_list_parse("0-1\n", &l), 0);
        ck_assert_uint_eq(l.n, 2);
        ck_assert_int_eq(l.cpu[1], 1);

        ck_assert_int_eq(dp_cpu_list_parse("8,0-2,5,2", &l), 0);
        ck_assert_uint_eq(l.n, 5);
        ck_assert_int_eq(l.cpu[0], 0);
        ck_assert_int_eq(l.cpu[3], 5);
        ck_assert_int_eq(l.cpu[4], 8);
        ck_assert(dp_cpu_list_contains(&l, 5));
        ck_assert(!dp_cpu_list_contains(&l, 4));
}
END_TEST

START_TEST(test_parse_bad) {
        static const char *const bad[] = { "", "\n", "a", "1-", "-1", "3-1", "1,,2", "1,", "1 2", "0-1x" };
        struct dp_cpu_list l;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(dp_cpu_list_parse(bad[i], &l) == -EINVAL, "'%s' accepted", bad[i]);
        ck_assert_int_eq(dp_cpu_list_parse("4096", &l), -ERANGE);
        ck_assert_int_eq(dp_cpu_list_parse("0-99999999999999999999", &l), -ERANGE);
}
END_TEST

START_TEST(test_config_validate) {
        struct dp_config c;
        const char *why;

        dp_config_init(&c);
        ck_assert_int_eq(dp_config_validate(&c, &why), 0);
        c.ring_pages = 3;
        ck_assert_int_eq(dp_config_validate(&c, &why), -EINVAL);
        ck_assert_ptr_nonnull(why);

        dp_config_init(&c);
        c.min_nr_regions = 2000;
        ck_assert_int_eq(dp_config_validate(&c, &why), -EINVAL);

        dp_config_init(&c);
        c.aggr_interval_us = c.sample_interval_us - 1;
        ck_assert_int_eq(dp_config_validate(&c, &why), -EINVAL);

        dp_config_init(&c);
        c.target_mode = DP_TARGETS_PIDS;
        ck_assert_int_eq(dp_config_validate(&c, &why), -EINVAL);
        c.pids[c.n_pids++] = 1;
        ck_assert_int_eq(dp_config_validate(&c, &why), 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("cpu-list");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_good);
        tcase_add_test(tc, test_parse_bad);
        tcase_add_test(tc, test_config_validate);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
