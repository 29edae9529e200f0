/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The basic helpers every layer leans on: strict number parsing
 * (parse-util.h), the clock (time-util.h) and whole-file reads (fileio.h).
 * dp_read_file()'s refusal of a symlink is in test-proc-parse.c.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "time-util.h"

#include "check-main.h"

/* ---- parse-util ---- */

START_TEST(test_parse_uint_whole) {
        static const struct {
                const char *text;
                uint64_t value;
        } good[] = {
                { "0", 0 },
                { "7", 7 },
                { "42", 42 },
                { "007", 7 },                   /* base 10: leading zeros are decimal */
                { "18446744073709551615", UINT64_MAX },
        };
        static const char *const malformed[] = {
                "", " 1", "\t1", "+1", "-1", "- 1", "1 ", "1\n", "12a", "x", "0x10", "1.5",
        };
        uint64_t v;

        for (size_t i = 0; i < DP_ARRAY_SIZE(good); i++) {
                v = 1234;
                ck_assert_msg(dp_parse_uint(good[i].text, 10, &v, NULL) == 0, "'%s' refused", good[i].text);
                ck_assert_uint_eq(v, good[i].value);
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(malformed); i++)
                ck_assert_msg(dp_parse_uint(malformed[i], 10, &v, NULL) == -EINVAL, "'%s' not -EINVAL",
                              malformed[i]);
        ck_assert_int_eq(dp_parse_uint(NULL, 10, &v, NULL), -EINVAL);
        ck_assert_int_eq(dp_parse_uint("1", 10, NULL, NULL), -EINVAL);

        ck_assert_int_eq(dp_parse_uint("18446744073709551616", 10, &v, NULL), -ERANGE);
        ck_assert_int_eq(dp_parse_uint("99999999999999999999999", 10, &v, NULL), -ERANGE);
}
END_TEST

START_TEST(test_parse_uint_bases) {
        uint64_t v;

        /* Base 0: the C prefixes. */
        ck_assert_int_eq(dp_parse_uint("0x1f", 0, &v, NULL), 0);
        ck_assert_uint_eq(v, 31);
        ck_assert_int_eq(dp_parse_uint("0X1F", 0, &v, NULL), 0);
        ck_assert_uint_eq(v, 31);
        ck_assert_int_eq(dp_parse_uint("010", 0, &v, NULL), 0);
        ck_assert_uint_eq(v, 8);
        ck_assert_int_eq(dp_parse_uint("0", 0, &v, NULL), 0);
        ck_assert_uint_eq(v, 0);
        ck_assert_int_eq(dp_parse_uint("123", 0, &v, NULL), 0);
        ck_assert_uint_eq(v, 123);
        ck_assert_int_eq(dp_parse_uint("0xffffffffffffffff", 0, &v, NULL), 0);
        ck_assert_uint_eq(v, UINT64_MAX);
        ck_assert_int_eq(dp_parse_uint("0x10000000000000000", 0, &v, NULL), -ERANGE);
        ck_assert_int_eq(dp_parse_uint("0x", 0, &v, NULL), -EINVAL);
        ck_assert_int_eq(dp_parse_uint("08", 0, &v, NULL), -EINVAL);     /* not octal */
        ck_assert_int_eq(dp_parse_uint("0x1g", 0, &v, NULL), -EINVAL);
        ck_assert_int_eq(dp_parse_uint("-0x1", 0, &v, NULL), -EINVAL);

        /* Base 16. */
        ck_assert_int_eq(dp_parse_uint("1f", 16, &v, NULL), 0);
        ck_assert_uint_eq(v, 31);
        ck_assert_int_eq(dp_parse_uint("10", 16, &v, NULL), 0);
        ck_assert_uint_eq(v, 16);
        ck_assert_int_eq(dp_parse_uint("0xA0", 16, &v, NULL), 0);
        ck_assert_uint_eq(v, 160);
        ck_assert_int_eq(dp_parse_uint("1fg", 16, &v, NULL), -EINVAL);
        ck_assert_int_eq(dp_parse_uint(" 1f", 16, &v, NULL), -EINVAL);
        ck_assert_int_eq(dp_parse_uint("10000000000000000", 16, &v, NULL), -ERANGE);
}
END_TEST

START_TEST(test_parse_uint_end) {
        const char *text = "12,34-5", *end = NULL;
        uint64_t v;

        ck_assert_int_eq(dp_parse_uint(text, 10, &v, &end), 0);
        ck_assert_uint_eq(v, 12);
        ck_assert_ptr_eq(end, text + 2);
        ck_assert_int_eq(dp_parse_uint(end + 1, 10, &v, &end), 0);
        ck_assert_uint_eq(v, 34);
        ck_assert_ptr_eq(end, text + 5);

        /* The whole string is fine too: end at its NUL. */
        ck_assert_int_eq(dp_parse_uint("99", 10, &v, &end), 0);
        ck_assert_uint_eq(v, 99);
        ck_assert_int_eq(*end, '\0');
        ck_assert_int_eq(dp_parse_uint("0x2a:", 0, &v, &end), 0);
        ck_assert_uint_eq(v, 42);
        ck_assert_str_eq(end, ":");

        /* Still at least one digit first, and overflow still -ERANGE. */
        ck_assert_int_eq(dp_parse_uint("", 10, &v, &end), -EINVAL);
        ck_assert_int_eq(dp_parse_uint(",1", 10, &v, &end), -EINVAL);
        ck_assert_int_eq(dp_parse_uint(" 1", 10, &v, &end), -EINVAL);
        ck_assert_int_eq(dp_parse_uint("+1", 10, &v, &end), -EINVAL);
        ck_assert_int_eq(dp_parse_uint("18446744073709551616,", 10, &v, &end), -ERANGE);
}
END_TEST

START_TEST(test_parse_ranges) {
        uint64_t u64;
        uint32_t u32;
        long long ll;

        ck_assert_int_eq(dp_parse_u64_in("5", 1, 10, &u64), 0);
        ck_assert_uint_eq(u64, 5);
        ck_assert_int_eq(dp_parse_u64_in("1", 1, 10, &u64), 0);
        ck_assert_uint_eq(u64, 1);
        ck_assert_int_eq(dp_parse_u64_in("10", 1, 10, &u64), 0);
        ck_assert_uint_eq(u64, 10);
        ck_assert_int_eq(dp_parse_u64_in("0", 1, 10, &u64), -ERANGE);
        ck_assert_int_eq(dp_parse_u64_in("11", 1, 10, &u64), -ERANGE);
        ck_assert_int_eq(dp_parse_u64_in("18446744073709551616", 0, UINT64_MAX, &u64), -ERANGE);
        ck_assert_int_eq(dp_parse_u64_in("0x5", 0, 10, &u64), -EINVAL);         /* decimal only */
        ck_assert_int_eq(dp_parse_u64_in("", 0, 10, &u64), -EINVAL);
        ck_assert_int_eq(dp_parse_u64_in(" 5", 0, 10, &u64), -EINVAL);
        ck_assert_int_eq(dp_parse_u64_in("-5", 0, 10, &u64), -EINVAL);
        ck_assert_int_eq(dp_parse_u64_in("5,", 0, 10, &u64), -EINVAL);

        ck_assert_int_eq(dp_parse_u32_in("4294967295", 0, UINT32_MAX, &u32), 0);
        ck_assert_uint_eq(u32, UINT32_MAX);
        ck_assert_int_eq(dp_parse_u32_in("4294967296", 0, UINT32_MAX, &u32), -ERANGE);
        ck_assert_int_eq(dp_parse_u32_in("128", 128, 2048, &u32), 0);
        ck_assert_uint_eq(u32, 128);
        ck_assert_int_eq(dp_parse_u32_in("127", 128, 2048, &u32), -ERANGE);
        ck_assert_int_eq(dp_parse_u32_in("+128", 128, 2048, &u32), -EINVAL);

        ck_assert_int_eq(dp_parse_int_in("-5", -10, 10, &ll), 0);
        ck_assert_int_eq(ll, -5);
        ck_assert_int_eq(dp_parse_int_in("10", -10, 10, &ll), 0);
        ck_assert_int_eq(ll, 10);
        ck_assert_int_eq(dp_parse_int_in("-10", -10, 10, &ll), 0);
        ck_assert_int_eq(ll, -10);
        ck_assert_int_eq(dp_parse_int_in("-11", -10, 10, &ll), -ERANGE);
        ck_assert_int_eq(dp_parse_int_in("11", -10, 10, &ll), -ERANGE);
        ck_assert_int_eq(dp_parse_int_in("-9223372036854775808", LLONG_MIN, LLONG_MAX, &ll), 0);
        ck_assert(ll == LLONG_MIN);
        ck_assert_int_eq(dp_parse_int_in("9223372036854775807", LLONG_MIN, LLONG_MAX, &ll), 0);
        ck_assert(ll == LLONG_MAX);
        ck_assert_int_eq(dp_parse_int_in("9223372036854775808", LLONG_MIN, LLONG_MAX, &ll), -ERANGE);
        ck_assert_int_eq(dp_parse_int_in("-9223372036854775809", LLONG_MIN, LLONG_MAX, &ll), -ERANGE);
        ck_assert_int_eq(dp_parse_int_in("", -10, 10, &ll), -EINVAL);
        ck_assert_int_eq(dp_parse_int_in("-", -10, 10, &ll), -EINVAL);
        ck_assert_int_eq(dp_parse_int_in("--1", -10, 10, &ll), -EINVAL);
        ck_assert_int_eq(dp_parse_int_in("- 1", -10, 10, &ll), -EINVAL);
        ck_assert_int_eq(dp_parse_int_in("+1", -10, 10, &ll), -EINVAL);
        ck_assert_int_eq(dp_parse_int_in(" 1", -10, 10, &ll), -EINVAL);
        ck_assert_int_eq(dp_parse_int_in("1x", -10, 10, &ll), -EINVAL);
        ck_assert_int_eq(dp_parse_int_in(NULL, -10, 10, &ll), -EINVAL);
}
END_TEST

/* ---- time-util ---- */

START_TEST(test_now_monotonic) {
        uint64_t first = dp_now_ns(CLOCK_MONOTONIC), last = first;

        ck_assert_uint_gt(first, 0);
        for (int i = 0; i < 100000; i++) {
                uint64_t now = dp_now_ns(CLOCK_MONOTONIC);

                ck_assert_uint_ge(now, last);
                last = now;
        }
        /* A sleep of 2 ms shows as at least 2 ms. */
        last = dp_now_ns(CLOCK_MONOTONIC);
        ck_assert_int_eq(usleep(2 * USEC_PER_MSEC), 0);
        ck_assert_uint_ge(dp_now_ns(CLOCK_MONOTONIC) - last, 2 * NSEC_PER_MSEC);
        /* The same clock as clock_gettime() itself, in nanoseconds. */
        ck_assert_uint_ge(dp_now_ns(CLOCK_REALTIME) / NSEC_PER_SEC, (uint64_t) time(NULL) - 1);
}
END_TEST

/* ---- fileio ---- */

/* A temporary file holding @size bytes of @data repeated; its path in @path. */
static void make_file(char path[static 32], const char *data, size_t size) {
        size_t n = strlen(data);
        int fd;

        strcpy(path, "/tmp/test-basic-XXXXXX");
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        for (size_t done = 0; done < size;) {
                size_t chunk = DP_MIN(n, size - done);

                ck_assert_int_eq(write(fd, data, chunk), (ssize_t) chunk);
                done += chunk;
        }
        ck_assert_int_eq(close(fd), 0);
}

START_TEST(test_read_file_small_and_empty) {
        _cleanup_free_ char *buf = NULL, *empty = NULL;
        char path[32];
        size_t len = 99;

        make_file(path, "hello\nworld\n", 12);
        ck_assert_int_eq(dp_read_file(path, &buf, &len), 0);
        unlink(path);
        ck_assert_uint_eq(len, 12);
        ck_assert_str_eq(buf, "hello\nworld\n");
        ck_assert_int_eq(buf[len], '\0');

        make_file(path, "", 0);
        len = 99;
        ck_assert_int_eq(dp_read_file(path, &empty, &len), 0);
        unlink(path);
        ck_assert_uint_eq(len, 0);
        ck_assert_ptr_nonnull(empty);
        ck_assert_str_eq(empty, "");
}
END_TEST

START_TEST(test_read_file_grows) {
        /* Larger than the first buffer, and not a multiple of its doublings. */
        const size_t size = 100 * 1024 + 7;
        _cleanup_free_ char *buf = NULL;
        char path[32];
        size_t len = 0;

        make_file(path, "0123456789abcdef", size);
        ck_assert_int_eq(dp_read_file(path, &buf, &len), 0);
        unlink(path);
        ck_assert_uint_eq(len, size);
        ck_assert_uint_eq(strlen(buf), size);
        for (size_t i = 0; i < size; i++)
                ck_assert_int_eq(buf[i], "0123456789abcdef"[i % 16]);
}
END_TEST

START_TEST(test_read_file_errors) {
        char *buf = NULL;
        size_t len = 0;

        ck_assert_int_eq(dp_read_file(NULL, &buf, &len), -EINVAL);
        ck_assert_int_eq(dp_read_file("/proc/self/status", NULL, &len), -EINVAL);
        ck_assert_int_eq(dp_read_file("/proc/self/status", &buf, NULL), -EINVAL);
        ck_assert_int_eq(dp_read_file("/nonexistent/test-basic", &buf, &len), -ENOENT);
        ck_assert_int_eq(dp_read_file("/tmp", &buf, &len), -EISDIR);
        ck_assert_ptr_null(buf);
}
END_TEST

int main(void) {
        Suite *s = suite_create("basic");
        TCase *parse = tcase_create("parse-util"), *time_util = tcase_create("time-util"),
              *fileio = tcase_create("fileio");

        tcase_add_test(parse, test_parse_uint_whole);
        tcase_add_test(parse, test_parse_uint_bases);
        tcase_add_test(parse, test_parse_uint_end);
        tcase_add_test(parse, test_parse_ranges);
        tcase_add_test(time_util, test_now_monotonic);
        tcase_add_test(fileio, test_read_file_small_and_empty);
        tcase_add_test(fileio, test_read_file_grows);
        tcase_add_test(fileio, test_read_file_errors);
        suite_add_tcase(s, parse);
        suite_add_tcase(s, time_util);
        suite_add_tcase(s, fileio);
        return dp_check_run(s);
}
