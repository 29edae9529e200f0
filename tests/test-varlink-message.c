/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "varlink-message.h"

#include "check-main.h"

static int parse_call(const char *text, struct dp_varlink_call_message *m, const char **reason) {
        return dp_varlink_call_message_parse(text, strlen(text), m, reason);
}

START_TEST(test_names) {
        ck_assert(dp_varlink_interface_name_is_valid("io.damon.perfd"));
        ck_assert(dp_varlink_interface_name_is_valid("org.varlink.service"));
        ck_assert(dp_varlink_interface_name_is_valid("com.example-corp.a1"));
        ck_assert(dp_varlink_interface_name_is_valid("Org.Example"));
        ck_assert(!dp_varlink_interface_name_is_valid("perfd"));        /* one label */
        ck_assert(!dp_varlink_interface_name_is_valid("1io.damon"));
        ck_assert(!dp_varlink_interface_name_is_valid("io..damon"));
        ck_assert(!dp_varlink_interface_name_is_valid("io.damon."));
        ck_assert(!dp_varlink_interface_name_is_valid("io.-damon"));
        ck_assert(!dp_varlink_interface_name_is_valid("io.damon-"));
        ck_assert(!dp_varlink_interface_name_is_valid("io.da_mon"));
        ck_assert(!dp_varlink_interface_name_is_valid(""));
        ck_assert(!dp_varlink_interface_name_is_valid(NULL));

        ck_assert(dp_varlink_member_name_is_valid("GetStats"));
        ck_assert(dp_varlink_member_name_is_valid("CPU"));
        ck_assert(!dp_varlink_member_name_is_valid("getStats"));
        ck_assert(!dp_varlink_member_name_is_valid("Get_Stats"));
        ck_assert(!dp_varlink_member_name_is_valid(""));

        ck_assert(dp_varlink_field_name_is_valid("addr_zero"));
        ck_assert(dp_varlink_field_name_is_valid("UNINIT"));
        ck_assert(dp_varlink_field_name_is_valid("a1_b2"));
        ck_assert(!dp_varlink_field_name_is_valid("_a"));
        ck_assert(!dp_varlink_field_name_is_valid("a_"));
        ck_assert(!dp_varlink_field_name_is_valid("a__b"));
        ck_assert(!dp_varlink_field_name_is_valid("1a"));
        ck_assert(!dp_varlink_field_name_is_valid("a-b"));

        ck_assert(dp_varlink_qualified_name_is_valid("io.damon.perfd.GetStats"));
        ck_assert(!dp_varlink_qualified_name_is_valid("GetStats"));
        ck_assert(!dp_varlink_qualified_name_is_valid("io.damon.perfd."));
        ck_assert(!dp_varlink_qualified_name_is_valid("io.GetStats"));  /* interface "io" has one label */
        ck_assert(!dp_varlink_qualified_name_is_valid("io.damon.perfd.getStats"));
        ck_assert_uint_eq(dp_varlink_qualified_name_interface_length("io.damon.perfd.GetStats"), 14);
}
END_TEST

START_TEST(test_parse_call) {
        struct dp_varlink_call_message m;

        ck_assert_int_eq(parse_call("{\"method\":\"io.damon.perfd.GetStats\"}", &m, NULL), 0);
        ck_assert_str_eq(m.method, "io.damon.perfd.GetStats");
        ck_assert(json_is_object(m.parameters));
        ck_assert_uint_eq(json_object_size(m.parameters), 0);
        ck_assert(!m.oneway && !m.more && !m.upgrade);
        dp_varlink_call_message_done(&m);

        ck_assert_int_eq(parse_call(" { \"parameters\" : {\"limit\": 5}, \"more\": true,"
                                    " \"method\": \"io.damon.perfd.Monitor\" } ", &m, NULL), 0);
        ck_assert(m.more && !m.oneway);
        ck_assert_int_eq(json_integer_value(json_object_get(m.parameters, "limit")), 5);
        dp_varlink_call_message_done(&m);

        /* null parameters count as none; false flags are fine together */
        ck_assert_int_eq(parse_call("{\"method\":\"a.b.C\",\"parameters\":null,\"oneway\":false,\"more\":true}",
                                    &m, NULL), 0);
        ck_assert(json_is_object(m.parameters));
        ck_assert(m.more);
        dp_varlink_call_message_done(&m);

        ck_assert_int_eq(parse_call("{\"method\":\"a.b.C\",\"oneway\":true}", &m, NULL), 0);
        ck_assert(m.oneway);
        dp_varlink_call_message_done(&m);

        ck_assert_int_eq(parse_call("{\"method\":\"a.b.C\",\"upgrade\":true}", &m, NULL), 0);
        ck_assert(m.upgrade);
        dp_varlink_call_message_done(&m);

        /* not NUL-terminated: only size bytes count */
        ck_assert_int_eq(dp_varlink_call_message_parse("{\"method\":\"a.b.C\"}garbage", 18, &m, NULL), 0);
        dp_varlink_call_message_done(&m);
}
END_TEST

static const struct {
        const char *text;
        const char *why;
} bad_calls[] = {
        { "", "empty" },
        { "not json", "not JSON" },
        { "{\"method\":\"a.b.C\"", "truncated" },
        { "[\"method\"]", "array" },
        { "\"a.b.C\"", "string" },
        { "42", "number" },
        { "{\"method\":\"a.b.C\"} {}", "two values" },
        { "{}", "no method" },
        { "{\"parameters\":{}}", "no method" },
        { "{\"method\":42}", "method not a string" },
        { "{\"method\":\"GetStats\"}", "unqualified method" },
        { "{\"method\":\"io.damon.perfd.\"}", "empty member" },
        { "{\"method\":\"-io.x.Get\"}", "bad interface" },
        { "{\"method\":\"a.b.C\",\"parameters\":[]}", "parameters array" },
        { "{\"method\":\"a.b.C\",\"parameters\":\"x\"}", "parameters string" },
        { "{\"method\":\"a.b.C\",\"oneway\":1}", "oneway int" },
        { "{\"method\":\"a.b.C\",\"more\":\"true\"}", "more string" },
        { "{\"method\":\"a.b.C\",\"more\":null}", "more null" },
        { "{\"method\":\"a.b.C\",\"upgrade\":0}", "upgrade int" },
        { "{\"method\":\"a.b.C\",\"oneway\":true,\"more\":true}", "oneway+more" },
        { "{\"method\":\"a.b.C\",\"more\":true,\"upgrade\":true}", "more+upgrade" },
        { "{\"method\":\"a.b.C\",\"extra\":1}", "unknown key" },
        { "{\"method\":\"a.b.C\",\"Method\":\"a.b.C\"}", "unknown key (case)" },
        { "{\"method\":\"a.b.C\",\"method\":\"a.b.D\"}", "duplicate key" },
        { "{\"method\":\"a.b.C\",\"parameters\":{\"x\":1,\"x\":2}}", "duplicate key inside parameters" },
        { "{\"method\":\"a.b.\xff\"}", "invalid UTF-8" },
};

START_TEST(test_parse_call_rejects) {
        const char *reason = NULL;
        struct dp_varlink_call_message m = { .method = (char *) "untouched" };

        ck_assert_int_eq(parse_call(bad_calls[_i].text, &m, &reason), -EBADMSG);
        ck_assert_msg(reason && *reason, "no reason for %s", bad_calls[_i].why);
        ck_assert_str_eq(m.method, "untouched");
}
END_TEST

START_TEST(test_parse_call_reasons) {
        struct dp_varlink_call_message m;
        const char *reason;

        ck_assert_int_eq(parse_call("{\"method\":\"a.b.C\",\"method\":\"a.b.C\"}", &m, &reason), -EBADMSG);
        ck_assert_str_eq(reason, "duplicate key");
        ck_assert_int_eq(parse_call("[]", &m, &reason), -EBADMSG);
        ck_assert_str_eq(reason, "message is not a JSON object");
        ck_assert_int_eq(parse_call("{\"method\":\"a.b.C\",\"x\":1}", &m, &reason), -EBADMSG);
        ck_assert_str_eq(reason, "unknown key in call");
}
END_TEST

START_TEST(test_parse_too_large) {
        size_t n = DP_VARLINK_MESSAGE_SIZE_MAX + 1;
        _cleanup_free_ char *text = malloc(n);
        struct dp_varlink_call_message m;

        ck_assert_ptr_nonnull(text);
        memset(text, ' ', n);
        ck_assert_int_eq(dp_varlink_call_message_parse(text, n, &m, NULL), -EMSGSIZE);
}
END_TEST

START_TEST(test_parse_reply) {
        struct dp_varlink_reply_message r;
        const char *text;

        text = "{\"parameters\":{\"a\":1},\"continues\":true}";
        ck_assert_int_eq(dp_varlink_reply_message_parse(text, strlen(text), &r, NULL), 0);
        ck_assert(r.continues);
        ck_assert_ptr_null(r.error);
        ck_assert_int_eq(json_integer_value(json_object_get(r.parameters, "a")), 1);
        dp_varlink_reply_message_done(&r);

        text = "{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":{\"method\":\"a.b.C\"}}";
        ck_assert_int_eq(dp_varlink_reply_message_parse(text, strlen(text), &r, NULL), 0);
        ck_assert_str_eq(r.error, DP_VARLINK_ERROR_METHOD_NOT_FOUND);
        dp_varlink_reply_message_done(&r);

        text = "{}";
        ck_assert_int_eq(dp_varlink_reply_message_parse(text, strlen(text), &r, NULL), 0);
        ck_assert_uint_eq(json_object_size(r.parameters), 0);
        dp_varlink_reply_message_done(&r);

        text = "{\"method\":\"a.b.C\"}";
        ck_assert_int_eq(dp_varlink_reply_message_parse(text, strlen(text), &r, NULL), -EBADMSG);
        text = "{\"error\":\"NotQualified\"}";
        ck_assert_int_eq(dp_varlink_reply_message_parse(text, strlen(text), &r, NULL), -EBADMSG);
        text = "{\"error\":\"a.b.C\",\"continues\":true}";
        ck_assert_int_eq(dp_varlink_reply_message_parse(text, strlen(text), &r, NULL), -EBADMSG);
        text = "{\"continues\":\"yes\"}";
        ck_assert_int_eq(dp_varlink_reply_message_parse(text, strlen(text), &r, NULL), -EBADMSG);
}
END_TEST

START_TEST(test_format) {
        _cleanup_free_ char *text = NULL;
        struct dp_varlink_call_message m;
        json_t *p = json_pack("{s:i}", "limit", 3);
        size_t size;

        ck_assert_int_eq(dp_varlink_call_message_format("io.damon.perfd.GetRegions", p, false, true, &text, &size), 0);
        ck_assert_uint_eq(text[size - 1], '\0');
        ck_assert_uint_eq(strlen(text), size - 1);
        ck_assert_int_eq(dp_varlink_call_message_parse(text, size - 1, &m, NULL), 0);
        ck_assert_str_eq(m.method, "io.damon.perfd.GetRegions");
        ck_assert(m.more && !m.oneway);
        ck_assert(json_equal(m.parameters, p));
        dp_varlink_call_message_done(&m);
        free(DP_TAKE_PTR(text));

        ck_assert_int_eq(dp_varlink_reply_message_format(p, NULL, true, &text, &size), 0);
        ck_assert_str_eq(text, "{\"parameters\":{\"limit\":3},\"continues\":true}");
        free(DP_TAKE_PTR(text));

        ck_assert_int_eq(dp_varlink_reply_message_format(NULL, DP_VARLINK_ERROR_EXPECTED_MORE, false, &text, &size), 0);
        ck_assert_str_eq(text, "{\"error\":\"org.varlink.service.ExpectedMore\"}");
        ck_assert_uint_eq(size, strlen(text) + 1);
        free(DP_TAKE_PTR(text));

        ck_assert_int_eq(dp_varlink_reply_message_format(NULL, NULL, false, &text, &size), 0);
        ck_assert_str_eq(text, "{}");
        free(DP_TAKE_PTR(text));

        ck_assert_int_eq(dp_varlink_call_message_format("GetStats", NULL, false, false, &text, &size), -EINVAL);
        ck_assert_int_eq(dp_varlink_call_message_format("a.b.C", NULL, true, true, &text, &size), -EINVAL);
        ck_assert_int_eq(dp_varlink_reply_message_format(NULL, "a.b.C", true, &text, &size), -EINVAL);
        ck_assert_int_eq(dp_varlink_reply_message_format(NULL, "bad", false, &text, &size), -EINVAL);
        json_decref(p);
        p = json_array();
        ck_assert_int_eq(dp_varlink_reply_message_format(p, NULL, false, &text, &size), -EINVAL);
        ck_assert_ptr_null(text);
        json_decref(p);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("varlink-message");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_parse_call);
        tcase_add_loop_test(tc, test_parse_call_rejects, 0, (int) DP_ARRAY_SIZE(bad_calls));
        tcase_add_test(tc, test_parse_call_reasons);
        tcase_add_test(tc, test_parse_too_large);
        tcase_add_test(tc, test_parse_reply);
        tcase_add_test(tc, test_format);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
