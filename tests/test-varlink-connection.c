/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "varlink-connection.h"

#include "check-main.h"

static struct dp_varlink_connection *new_connection(size_t max_message, size_t max_output) {
        struct dp_varlink_connection_limits limits = { .max_message = max_message, .max_output = max_output };
        struct dp_varlink_connection *c = NULL;

        ck_assert_int_eq(dp_varlink_connection_new(&limits, &c), 0);
        return c;
}

/* Feeds a C string including its terminating NUL, i.e. one message. */
static int feed_message(struct dp_varlink_connection *c, const char *text) {
        return dp_varlink_connection_feed(c, text, strlen(text) + 1);
}

static void expect_call(struct dp_varlink_connection *c, const char *method) {
        struct dp_varlink_call_message m;

        ck_assert_int_eq(dp_varlink_connection_take_call(c, &m, NULL), 1);
        ck_assert_str_eq(m.method, method);
        dp_varlink_call_message_done(&m);
}

static void expect_no_call(struct dp_varlink_connection *c) {
        struct dp_varlink_call_message m;

        ck_assert_int_eq(dp_varlink_connection_take_call(c, &m, NULL), 0);
}

/* Takes all queued output and checks it is exactly the expected messages. */
static void expect_output(struct dp_varlink_connection *c, const char *const *messages, size_t n) {
        size_t size, off = 0;
        const char *out = dp_varlink_connection_output(c, &size);

        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_ge(size - off, strlen(messages[i]) + 1);
                ck_assert_str_eq(out + off, messages[i]);
                off += strlen(messages[i]) + 1;
        }
        ck_assert_uint_eq(off, size);
        dp_varlink_connection_output_advance(c, size);
        ck_assert_uint_eq(dp_varlink_connection_output_size(c), 0);
}

START_TEST(test_single_call) {
        struct dp_varlink_connection *c = new_connection(0, 0);
        json_t *p = json_pack("{s:i}", "x", 1);

        ck_assert(dp_varlink_connection_wants_input(c));
        ck_assert_int_eq(feed_message(c, "{\"method\":\"a.b.C\"}"), 0);
        ck_assert(!dp_varlink_connection_wants_input(c));
        ck_assert(!dp_varlink_connection_call_in_progress(c));
        expect_call(c, "a.b.C");
        ck_assert(dp_varlink_connection_call_in_progress(c));
        ck_assert(!dp_varlink_connection_call_wants_more(c));
        ck_assert(dp_varlink_connection_wants_input(c));
        ck_assert_int_eq(dp_varlink_connection_reply(c, p, NULL, true), -EINVAL);        /* no more */
        ck_assert_int_eq(dp_varlink_connection_reply(c, p, NULL, false), 0);
        ck_assert(!dp_varlink_connection_call_in_progress(c));
        ck_assert_int_eq(dp_varlink_connection_reply(c, p, NULL, false), -EBADE);        /* nothing to answer */
        expect_output(c, (const char *[]) { "{\"parameters\":{\"x\":1}}" }, 1);
        json_decref(p);
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_pipelined_in_order) {
        struct dp_varlink_connection *c = new_connection(0, 0);
        static const char calls[] = "{\"method\":\"a.b.One\"}\0{\"method\":\"a.b.Two\",\"more\":true}\0"
                                    "{\"method\":\"a.b.Three\",\"oneway\":true}\0{\"method\":\"a.b.Four\"}";
        json_t *p = json_object();

        /* all four in one write */
        ck_assert_int_eq(dp_varlink_connection_feed(c, calls, sizeof(calls)), 0);
        expect_call(c, "a.b.One");
        expect_no_call(c);                      /* One is still open */
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, "a.b.Failed", false), 0);
        expect_call(c, "a.b.Two");
        ck_assert(dp_varlink_connection_call_wants_more(c));
        for (int i = 0; i < 3; i++) {
                ck_assert_int_eq(dp_varlink_connection_reply(c, p, NULL, true), 0);
                expect_no_call(c);              /* the stream holds later calls back */
        }
        ck_assert_int_eq(dp_varlink_connection_reply(c, p, "a.b.Error", true), -EINVAL);
        ck_assert_int_eq(dp_varlink_connection_reply(c, p, NULL, false), 0);
        expect_call(c, "a.b.Three");            /* oneway: nothing is open after it */
        ck_assert(!dp_varlink_connection_call_in_progress(c));
        expect_call(c, "a.b.Four");
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, NULL, false), 0);
        expect_no_call(c);
        expect_output(c, (const char *[]) {
                "{\"error\":\"a.b.Failed\"}",
                "{\"parameters\":{},\"continues\":true}",
                "{\"parameters\":{},\"continues\":true}",
                "{\"parameters\":{},\"continues\":true}",
                "{\"parameters\":{}}",
                "{}",
        }, 6);
        dp_varlink_connection_feed_eof(c);
        ck_assert(dp_varlink_connection_is_finished(c));
        json_decref(p);
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_byte_at_a_time) {
        struct dp_varlink_connection *c = new_connection(0, 0);
        static const char calls[] = "{\"method\":\"a.b.One\",\"parameters\":{\"s\":\"\\u00e9\"}}\0"
                                    "{\"method\":\"a.b.Two\"}";
        struct dp_varlink_call_message m;
        int taken = 0;

        for (size_t i = 0; i < sizeof(calls); i++) {
                int r;

                ck_assert(dp_varlink_connection_wants_input(c));
                ck_assert_int_eq(dp_varlink_connection_feed(c, calls + i, 1), 0);
                r = dp_varlink_connection_take_call(c, &m, NULL);
                ck_assert_int_ge(r, 0);
                if (r == 0) {
                        ck_assert(calls[i] != '\0' || dp_varlink_connection_call_in_progress(c));
                        ck_assert(dp_varlink_connection_has_partial_input(c) ||
                                  !dp_varlink_connection_wants_input(c));
                        continue;
                }
                ck_assert_uint_eq(calls[i], '\0');      /* a call exactly when its NUL arrives */
                ck_assert_str_eq(m.method, taken == 0 ? "a.b.One" : "a.b.Two");
                if (taken == 0)
                        ck_assert_str_eq(json_string_value(json_object_get(m.parameters, "s")), "\xc3\xa9");
                dp_varlink_call_message_done(&m);
                ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, NULL, false), 0);
                taken++;
        }
        ck_assert_int_eq(taken, 2);
        ck_assert(!dp_varlink_connection_has_partial_input(c));
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_partial_output) {
        struct dp_varlink_connection *c = new_connection(0, 0);
        const char *expected = "{\"error\":\"a.b.E\"}";
        char got[64] = "";
        size_t size;

        ck_assert_int_eq(feed_message(c, "{\"method\":\"a.b.C\"}"), 0);
        expect_call(c, "a.b.C");
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, "a.b.E", false), 0);
        /* a writer that manages one byte at a time */
        for (size_t i = 0; dp_varlink_connection_output_size(c) > 0; i++) {
                const char *out = dp_varlink_connection_output(c, &size);

                ck_assert_uint_eq(size, strlen(expected) + 1 - i);
                got[i] = out[0];
                dp_varlink_connection_output_advance(c, 1);
        }
        ck_assert_str_eq(got, expected);
        ck_assert_ptr_null(dp_varlink_connection_output(c, &size));
        ck_assert_uint_eq(size, 0);
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_message_size_limit) {
        struct dp_varlink_connection *c = new_connection(32, 0);
        char exact[33 + 1];
        struct dp_varlink_call_message m;
        const char *reason;

        /* 32 bytes of JSON is fine */
        snprintf(exact, sizeof(exact), "{\"method\":\"a.b.C\",\"more\":false} ");
        ck_assert_uint_eq(strlen(exact), 32);
        ck_assert_int_eq(feed_message(c, exact), 0);
        expect_call(c, "a.b.C");
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, NULL, false), 0);

        /* 33 bytes without a NUL are not */
        ck_assert_int_eq(dp_varlink_connection_feed(c, "{\"method\":\"a.b.C\",\"more\":false}  ", 33), -EMSGSIZE);
        ck_assert_int_eq(dp_varlink_connection_get_error(c), -EMSGSIZE);
        ck_assert(!dp_varlink_connection_wants_input(c));
        ck_assert_int_eq(dp_varlink_connection_take_call(c, &m, &reason), -EMSGSIZE);
        ck_assert_int_eq(dp_varlink_connection_feed(c, "x", 1), -EMSGSIZE);
        dp_varlink_connection_free(c);
}
END_TEST

/* A valid call followed by an oversized one in the same read: the first is
 * still answered, then the connection fails. */
START_TEST(test_oversize_after_valid_call) {
        struct dp_varlink_connection *c = new_connection(32, 0);
        static const char data[] = "{\"method\":\"a.b.C\"}\0" "0123456789012345678901234567890123456789";
        struct dp_varlink_call_message m;

        ck_assert_int_eq(dp_varlink_connection_feed(c, data, sizeof(data) - 1), 0);
        expect_call(c, "a.b.C");
        ck_assert(!dp_varlink_connection_wants_input(c));
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, NULL, false), 0);
        ck_assert_int_eq(dp_varlink_connection_take_call(c, &m, NULL), -EMSGSIZE);
        expect_output(c, (const char *[]) { "{}" }, 1);
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_reply_too_large) {
        struct dp_varlink_connection *c = new_connection(32, 0);
        json_t *p = json_pack("{s:s}", "s", "0123456789012345678901234567890123456789");

        ck_assert_int_eq(feed_message(c, "{\"method\":\"a.b.C\"}"), 0);
        expect_call(c, "a.b.C");
        ck_assert_int_eq(dp_varlink_connection_reply(c, p, NULL, false), -EMSGSIZE);
        ck_assert(dp_varlink_connection_call_in_progress(c));   /* can still answer */
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, "a.b.TooBig", false), 0);
        expect_output(c, (const char *[]) { "{\"error\":\"a.b.TooBig\"}" }, 1);
        json_decref(p);
        dp_varlink_connection_free(c);
}
END_TEST

/* A client that never reads: output stops at the bound and the connection fails. */
START_TEST(test_output_bound) {
        struct dp_varlink_connection *c = new_connection(0, 256);
        json_t *p = json_pack("{s:s}", "s", "0123456789012345678901234567890123456789");
        size_t replies = 0;
        int r;

        ck_assert_int_eq(feed_message(c, "{\"method\":\"a.b.Monitor\",\"more\":true}"), 0);
        expect_call(c, "a.b.Monitor");
        while ((r = dp_varlink_connection_reply(c, p, NULL, true)) == 0)
                replies++;
        ck_assert_int_eq(r, -ENOBUFS);
        ck_assert_uint_eq(replies, 256 / (strlen("{\"parameters\":{\"s\":\"\"},\"continues\":true}") + 41));
        ck_assert_uint_le(dp_varlink_connection_output_size(c), 256);
        ck_assert_int_eq(dp_varlink_connection_get_error(c), -ENOBUFS);
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, NULL, false), -ENOBUFS);
        json_decref(p);
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_eof) {
        struct dp_varlink_connection *c = new_connection(0, 0);
        struct dp_varlink_call_message m;
        const char *reason = NULL;

        /* calls sent before a half-close are still answered */
        ck_assert_int_eq(feed_message(c, "{\"method\":\"a.b.C\"}"), 0);
        dp_varlink_connection_feed_eof(c);
        ck_assert(!dp_varlink_connection_is_finished(c));
        ck_assert_int_eq(dp_varlink_connection_feed(c, "x", 1), -EPIPE);
        expect_call(c, "a.b.C");
        ck_assert_int_eq(dp_varlink_connection_reply(c, NULL, NULL, false), 0);
        ck_assert(!dp_varlink_connection_is_finished(c));       /* output left */
        dp_varlink_connection_output_advance(c, 3);
        ck_assert(dp_varlink_connection_is_finished(c));
        dp_varlink_connection_free(c);

        /* a message without its NUL before the close is a protocol error */
        c = new_connection(0, 0);
        ck_assert_int_eq(dp_varlink_connection_feed(c, "{\"method\":\"a.b.C\"}", 18), 0);
        expect_no_call(c);
        dp_varlink_connection_feed_eof(c);
        ck_assert_int_eq(dp_varlink_connection_take_call(c, &m, &reason), -EBADMSG);
        ck_assert(strstr(reason, "NUL"));
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_malformed) {
        struct dp_varlink_connection *c = new_connection(0, 0);
        struct dp_varlink_call_message m;
        const char *reason = NULL;

        ck_assert_int_eq(feed_message(c, "{\"method\":\"a.b.C\",\"bogus\":1}"), 0);
        ck_assert_int_eq(dp_varlink_connection_take_call(c, &m, &reason), -EBADMSG);
        ck_assert_str_eq(reason, "unknown key in call");
        ck_assert_int_eq(dp_varlink_connection_get_error(c), -EBADMSG);
        ck_assert(!dp_varlink_connection_wants_input(c));
        ck_assert_int_eq(feed_message(c, "{\"method\":\"a.b.C\"}"), -EBADMSG);
        ck_assert_int_eq(dp_varlink_connection_take_call(c, &m, &reason), -EBADMSG);
        dp_varlink_connection_free(c);
}
END_TEST

START_TEST(test_feeding_past_wants_input) {
        struct dp_varlink_connection *c = new_connection(16, 0);
        char junk[DP_VARLINK_INPUT_SLACK];
        static const char call[] = "{\"method\":\"a.b.C\"}";
        int r = 0;

        memset(junk, '\0', sizeof(junk));       /* NULs: many empty messages */
        ck_assert_int_eq(dp_varlink_connection_feed(c, call, sizeof(call)), -EMSGSIZE);  /* 18 > 16 */
        dp_varlink_connection_free(c);

        c = new_connection(32, 0);
        ck_assert_int_eq(dp_varlink_connection_feed(c, call, sizeof(call)), 0);
        for (int i = 0; i < 4 && r == 0; i++)
                r = dp_varlink_connection_feed(c, junk, sizeof(junk));
        ck_assert_int_eq(r, -ENOBUFS);
        dp_varlink_connection_free(c);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("varlink-connection");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_single_call);
        tcase_add_test(tc, test_pipelined_in_order);
        tcase_add_test(tc, test_byte_at_a_time);
        tcase_add_test(tc, test_partial_output);
        tcase_add_test(tc, test_message_size_limit);
        tcase_add_test(tc, test_oversize_after_valid_call);
        tcase_add_test(tc, test_reply_too_large);
        tcase_add_test(tc, test_output_bound);
        tcase_add_test(tc, test_eof);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_feeding_past_wants_input);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
