/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lib/basic/parse-util.c: dp_parse_double() takes decimal fractions as
 * people write them and nothing else strtod() would.
 */
#include <check.h>
#include <errno.h>

#include "parse-util.h"

#include "check-main.h"

START_TEST(test_decimal_fractions) {
        static const struct {
                const char *text;
                double value;
        } good[] = {
                { "0", 0 }, { "5", 5 }, { "0.2", 0.2 }, { ".5", 0.5 }, { "5.", 5 }, { "-1.5", -1.5 },
                { "1e3", 1000 }, { "2.5E-1", 0.25 }, { "1e+2", 100 }, { "86400", 86400 },
        };

        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                double v = -42;

                ck_assert_msg(dp_parse_double(good[i].text, &v) == 0, "'%s' refused", good[i].text);
                ck_assert_double_eq(v, good[i].value);
        }
}
END_TEST

START_TEST(test_malformed) {
        static const char *const bad[] = {
                "", "-", ".", "-.", " 1", "1 ", "+1", "1x", "0x10", "0x1p3", "inf", "-inf", "nan", "infinity",
                "1,5", "e5", "--1", "1.2.3x", "\n1",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                double v = -42;

                ck_assert_msg(dp_parse_double(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
                ck_assert_double_eq(v, -42);
        }
        ck_assert_int_eq(dp_parse_double(NULL, &(double) { 0 }), -EINVAL);
        ck_assert_int_eq(dp_parse_double("1", NULL), -EINVAL);
}
END_TEST

START_TEST(test_out_of_range) {
        double v = -42;

        ck_assert_int_eq(dp_parse_double("1e400", &v), -ERANGE);
        ck_assert_int_eq(dp_parse_double("-1e400", &v), -ERANGE);
        ck_assert_double_eq(v, -42);
}
END_TEST

int main(void) {
        Suite *s = suite_create("parse-double");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_decimal_fractions);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_out_of_range);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
