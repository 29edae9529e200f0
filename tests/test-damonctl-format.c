/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl's pure formatters: tables, human sizes, bars, Monitor event lines. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "monitor-event.h"
#include "table.h"

#include "check-main.h"

/* Renders @t into a string (caller frees). */
static char *render(struct dp_table *t, enum dp_table_style style, int *ret) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ck_assert_ptr_nonnull(f);
        *ret = dp_table_write(t, style, f);
        fclose(f);
        return buf;
}

/* Splits @text into lines in place; returns how many (at most @max). */
static size_t split_lines(char *text, char **lines, size_t max) {
        size_t n = 0;

        for (char *p = text; *p && n < max;) {
                char *nl = strchr(p, '\n');

                lines[n++] = p;
                if (!nl)
                        break;
                *nl = '\0';
                p = nl + 1;
        }
        return n;
}

START_TEST(test_table_box_alignment) {
        static const char *const headers[] = { "NAME", "COUNT", "BAR" };
        _cleanup_table_ struct dp_table *t = NULL;
        _cleanup_free_ char *out = NULL;
        char *lines[16];
        size_t n;
        int r;

        ck_assert_int_eq(dp_table_new(headers, 3, &t), 0);
        ck_assert_int_eq(dp_table_set_align(t, 1, DP_TABLE_RIGHT), 0);
        ck_assert_int_eq(dp_table_set_align(t, 3, DP_TABLE_RIGHT), -EINVAL);
        ck_assert_int_eq(dp_table_add_cell(t, "a"), 0);
        ck_assert_int_eq(dp_table_add_cellf(t, "%d", 7), 0);
        ck_assert_int_eq(dp_table_add_cell(t, "██▌"), 0);
        /* A rule between groups; not allowed in the middle of a row. */
        ck_assert_int_eq(dp_table_add_separator(t), 0);
        ck_assert_int_eq(dp_table_add_cell(t, "longer name"), 0);
        ck_assert_int_eq(dp_table_add_separator(t), -EBUSY);
        ck_assert_int_eq(dp_table_add_cellf(t, "%d", 123456), 0);
        ck_assert_int_eq(dp_table_add_cell(t, NULL), 0);
        ck_assert_uint_eq(dp_table_rows(t), 2);

        out = render(t, DP_TABLE_BOX, &r);
        ck_assert_int_eq(r, 0);
        n = split_lines(out, lines, DP_ARRAY_SIZE(lines));
        ck_assert_uint_eq(n, 7);
        ck_assert_str_eq(lines[0], "┌─────────────┬────────┬─────┐");
        ck_assert_str_eq(lines[1], "│ NAME        │  COUNT │ BAR │");
        ck_assert_str_eq(lines[2], "├─────────────┼────────┼─────┤");
        ck_assert_str_eq(lines[3], "│ a           │      7 │ ██▌ │");
        ck_assert_str_eq(lines[4], "├─────────────┼────────┼─────┤");
        ck_assert_str_eq(lines[5], "│ longer name │ 123456 │ -   │");
        ck_assert_str_eq(lines[6], "└─────────────┴────────┴─────┘");
        for (size_t i = 0; i < n; i++)
                ck_assert_uint_eq(dp_utf8_width(lines[i]), dp_utf8_width(lines[0]));
}
END_TEST

START_TEST(test_table_plain_and_errors) {
        static const char *const headers[] = { "A", "B" };
        _cleanup_table_ struct dp_table *t = NULL;
        _cleanup_free_ char *out = NULL, *partial = NULL;
        int r;

        ck_assert_int_eq(dp_table_new(headers, 0, &t), -EINVAL);
        ck_assert_int_eq(dp_table_new(headers, 2, &t), 0);
        ck_assert_int_eq(dp_table_set_align(t, 0, DP_TABLE_RIGHT), 0);
        /* A control character cannot break the line. */
        ck_assert_int_eq(dp_table_add_cell(t, "x\ny"), 0);
        ck_assert_int_eq(dp_table_add_cell(t, "v"), 0);
        ck_assert_int_eq(dp_table_add_cell(t, "1234"), 0);
        ck_assert_int_eq(dp_table_add_cell(t, "w"), 0);
        out = render(t, DP_TABLE_PLAIN, &r);
        ck_assert_int_eq(r, 0);
        /* Right-aligned first column, no trailing blanks on the last. */
        ck_assert_str_eq(out, "   A  B\n"
                              " x?y  v\n"
                              "1234  w\n");

        ck_assert_int_eq(dp_table_add_cell(t, "half"), 0);
        partial = render(t, DP_TABLE_BOX, &r);
        ck_assert_int_eq(r, -EBUSY);
}
END_TEST

START_TEST(test_table_empty) {
        static const char *const headers[] = { "ONLY" };
        _cleanup_table_ struct dp_table *t = NULL;
        _cleanup_free_ char *out = NULL;
        int r;

        ck_assert_int_eq(dp_table_new(headers, 1, &t), 0);
        out = render(t, DP_TABLE_BOX, &r);
        ck_assert_int_eq(r, 0);
        ck_assert_str_eq(out, "┌──────┐\n│ ONLY │\n├──────┤\n└──────┘\n");
}
END_TEST

START_TEST(test_utf8_width) {
        ck_assert_uint_eq(dp_utf8_width(""), 0);
        ck_assert_uint_eq(dp_utf8_width(NULL), 0);
        ck_assert_uint_eq(dp_utf8_width("abc"), 3);
        ck_assert_uint_eq(dp_utf8_width("┌─┐"), 3);
        ck_assert_uint_eq(dp_utf8_width("█▏x"), 3);
}
END_TEST

START_TEST(test_format_bytes) {
        char buf[DP_FORMAT_BYTES_MAX];

        ck_assert_str_eq(dp_format_bytes(0, buf, sizeof(buf)), "0 B");
        ck_assert_str_eq(dp_format_bytes(1023, buf, sizeof(buf)), "1023 B");
        ck_assert_str_eq(dp_format_bytes(1024, buf, sizeof(buf)), "1.0 KiB");
        ck_assert_str_eq(dp_format_bytes(1536, buf, sizeof(buf)), "1.5 KiB");
        ck_assert_str_eq(dp_format_bytes(4096 * 64, buf, sizeof(buf)), "256.0 KiB");
        /* Would round to "1024.0 KiB": shown in the next unit instead. */
        ck_assert_str_eq(dp_format_bytes(1024 * 1024 - 1, buf, sizeof(buf)), "1.0 MiB");
        ck_assert_str_eq(dp_format_bytes(100ULL << 20, buf, sizeof(buf)), "100.0 MiB");
        ck_assert_str_eq(dp_format_bytes(3ULL << 30, buf, sizeof(buf)), "3.0 GiB");
        ck_assert_str_eq(dp_format_bytes(UINT64_MAX, buf, sizeof(buf)), "16.0 EiB");
}
END_TEST

START_TEST(test_format_bar) {
        char buf[DP_FORMAT_BAR_SIZE(10)];

        ck_assert_str_eq(dp_format_bar(0, 10, 10, buf, sizeof(buf)), "          ");
        ck_assert_str_eq(dp_format_bar(10, 10, 10, buf, sizeof(buf)), "██████████");
        ck_assert_str_eq(dp_format_bar(99, 10, 10, buf, sizeof(buf)), "██████████");
        ck_assert_str_eq(dp_format_bar(5, 10, 10, buf, sizeof(buf)), "█████     ");
        /* 1/16 of 10 columns is 5 eighths. */
        ck_assert_str_eq(dp_format_bar(1, 16, 10, buf, sizeof(buf)), "▋         ");
        ck_assert_str_eq(dp_format_bar(1, 80, 10, buf, sizeof(buf)), "▏         ");
        ck_assert_str_eq(dp_format_bar(7, 0, 10, buf, sizeof(buf)), "          ");
        for (uint64_t v = 0; v <= 20; v++)
                ck_assert_uint_eq(dp_utf8_width(dp_format_bar(v, 20, 10, buf, sizeof(buf))), 10);
        ck_assert_ptr_null(dp_format_bar(1, 2, 10, buf, DP_FORMAT_BAR_SIZE(10) - 1));
}
END_TEST

static char *format_event(const char *json, int *ret) {
        json_error_t err;
        json_t *event = json_loads(json, 0, &err);
        char *line = NULL;

        ck_assert_msg(event, "bad test JSON: %s", err.text);
        *ret = dp_monitor_event_format(event, true, &line);
        json_decref(event);
        return line;
}

START_TEST(test_monitor_event_lines) {
        static const struct {
                const char *json, *line;
        } cases[] = {
                { "{\"kind\":\"state_change\",\"timestamp_usec\":1000000000123456,\"cpu\":1,"
                  "\"from\":\"enabled\",\"to\":\"running\"}",
                  "2001-09-09 01:46:40.123456 CPU01 state_change enabled -> running" },
                { "{\"kind\":\"state_change\",\"timestamp_usec\":1000000000000000,\"cpu\":3,"
                  "\"from\":\"running\",\"to\":\"error\",\"errno\":9,\"failed_step\":\"run\"}",
                  "2001-09-09 01:46:40.000000 CPU03 state_change running -> error failed_step=run "
                  "errno=9 (Bad file descriptor)" },
                { "{\"kind\":\"sample\",\"timestamp_usec\":0,\"cpu\":0,\"pid\":4242,\"addr\":140737488351232}",
                  "1970-01-01 00:00:00.000000 CPU00 sample pid=4242 addr=0x7ffffffff000" },
                { "{\"kind\":\"report_missed\",\"timestamp_usec\":1,\"cpu\":0,\"pid\":1,\"addr\":20480,"
                  "\"reason\":\"miss_tgid\",\"from\":null}",
                  "1970-01-01 00:00:00.000001 CPU00 report_missed pid=1 addr=0x5000 reason=miss_tgid" },
                { "{\"kind\":\"ring_overflow\",\"timestamp_usec\":2000000,\"cpu\":12,\"depth\":65536,\"count\":17}",
                  "1970-01-01 00:00:02.000000 CPU12 ring_overflow count=17 depth=65536" },
                /* No CPU; an unknown field still shows, sanitised. */
                { "{\"kind\":\"drain\",\"timestamp_usec\":2000000,\"count\":5120,\"note\":\"a\\nb\",\"x\":[1]}",
                  "1970-01-01 00:00:02.000000 drain count=5120 note=a?b x=[1]" },
                /* A kind this client does not know. */
                { "{\"kind\":\"future\",\"timestamp_usec\":2000000,\"cpu\":2,\"level\":3}",
                  "1970-01-01 00:00:02.000000 CPU02 future level=3" },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                int r;
                _cleanup_free_ char *line = format_event(cases[i].json, &r);

                ck_assert_int_eq(r, 0);
                ck_assert_str_eq(line, cases[i].line);
        }
}
END_TEST

START_TEST(test_monitor_event_rejects_bad_shapes) {
        static const char *const bad[] = {
                "[]",
                "{}",
                "{\"kind\":1,\"timestamp_usec\":1}",
                "{\"kind\":\"drain\"}",
                "{\"kind\":\"drain\",\"timestamp_usec\":\"now\"}",
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(bad); i++) {
                int r;
                char *line = format_event(bad[i], &r);

                ck_assert_int_eq(r, -EBADMSG);
                ck_assert_ptr_null(line);
        }
        ck_assert_int_eq(dp_monitor_event_format(NULL, true, NULL), -EINVAL);
}
END_TEST

int main(void) {
        Suite *s = suite_create("damonctl-format");
        TCase *tc = tcase_create("format");

        tcase_add_test(tc, test_table_box_alignment);
        tcase_add_test(tc, test_table_plain_and_errors);
        tcase_add_test(tc, test_table_empty);
        tcase_add_test(tc, test_utf8_width);
        tcase_add_test(tc, test_format_bytes);
        tcase_add_test(tc, test_format_bar);
        tcase_add_test(tc, test_monitor_event_lines);
        tcase_add_test(tc, test_monitor_event_rejects_bad_shapes);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
