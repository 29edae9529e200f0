/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "varlink-idl.h"

#include "check-main.h"

static struct dp_varlink_interface *parse_ok(const char *text) {
        struct dp_varlink_interface *iface = NULL;
        struct dp_varlink_idl_error error;
        int r = dp_varlink_idl_parse(text, &iface, &error);

        ck_assert_msg(r == 0, "parse failed: %d at %u:%u: %s", r, error.line, error.column, error.message);
        return iface;
}

static const struct dp_varlink_field *field(const struct dp_varlink_type *t, const char *name) {
        for (size_t i = 0; i < t->n_fields; i++)
                if (strcmp(t->fields[i].name, name) == 0)
                        return &t->fields[i];
        return NULL;
}

START_TEST(test_embedded_is_verbatim) {
        const char *path = getenv("DP_VARLINK_IDL");
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *text = NULL;
        size_t size = 0, n;

        ck_assert_msg(path, "DP_VARLINK_IDL not set");
        f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        text = malloc(1024 * 1024);
        ck_assert_ptr_nonnull(text);
        while ((n = fread(text + size, 1, 1024 * 1024 - 1 - size, f)) > 0)
                size += n;
        text[size] = '\0';
        ck_assert_uint_eq(strlen(dp_varlink_io_damon_perfd_idl), size);
        ck_assert(memcmp(dp_varlink_io_damon_perfd_idl, text, size) == 0);
}
END_TEST

START_TEST(test_our_interface) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface = parse_ok(dp_varlink_io_damon_perfd_idl);
        const struct dp_varlink_member *m;
        const struct dp_varlink_field *f;
        size_t methods = 0, types = 0, errors = 0;

        ck_assert_str_eq(iface->name, "io.damon.perfd");
        ck_assert_ptr_nonnull(iface->doc);
        ck_assert(strncmp(iface->doc, "damon-perfd samples memory accesses", 35) == 0);
        for (size_t i = 0; i < iface->n_members; i++) {
                methods += iface->members[i].kind == DP_VARLINK_MEMBER_METHOD;
                types += iface->members[i].kind == DP_VARLINK_MEMBER_TYPE;
                errors += iface->members[i].kind == DP_VARLINK_MEMBER_ERROR;
        }
        ck_assert_uint_eq(methods, 7);
        ck_assert_uint_eq(types, 13);
        ck_assert_uint_eq(errors, 2);
        ck_assert_ptr_nonnull(dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "DamonAgreement"));

        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "Source");
        ck_assert_ptr_nonnull(m);
        ck_assert_str_eq(m->doc, "Where samples come from.");
        f = field(m->type, "name");
        ck_assert_ptr_nonnull(f);
        ck_assert_str_eq(f->doc, "Configuration name, e.g. \"pagefault\".");
        ck_assert_ptr_null(field(m->type, "description")->doc);

        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "CPUState");
        ck_assert_int_eq(m->type->kind, DP_VARLINK_TYPE_ENUM);
        ck_assert_uint_eq(m->type->n_values, 6);
        ck_assert_str_eq(m->type->values[5], "error");

        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "Target");
        f = field(m->type, "kind");
        ck_assert_int_eq(f->type->kind, DP_VARLINK_TYPE_ENUM);
        ck_assert_str_eq(f->type->values[1], "physical");

        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "Event");
        f = field(m->type, "from");
        ck_assert(f->type->nullable);
        ck_assert_int_eq(f->type->kind, DP_VARLINK_TYPE_NAMED);
        ck_assert_ptr_eq(f->type->resolved, dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "CPUState"));

        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "GetStats");
        ck_assert_uint_eq(m->input->n_fields, 0);
        f = field(m->output, "capabilities");
        ck_assert_ptr_eq(f->type->resolved, dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "Capabilities"));
        ck_assert_int_eq(field(f->type->resolved->type, "bounding")->type->element->kind, DP_VARLINK_TYPE_STRING);
        f = field(m->output, "cpus");
        ck_assert_int_eq(f->type->kind, DP_VARLINK_TYPE_ARRAY);
        ck_assert_str_eq(f->type->element->name, "CPUStats");
        ck_assert_int_eq(field(m->output, "sample_rate")->type->kind, DP_VARLINK_TYPE_FLOAT);

        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "GetRegions");
        ck_assert_uint_eq(m->input->n_fields, 2);
        ck_assert(field(m->input, "target")->type->nullable);

        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_ERROR, "NoSuchTarget");
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(field(m->type, "target")->type->kind, DP_VARLINK_TYPE_INT);
        ck_assert_ptr_null(dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "NoSuchTarget"));
        /* Reload() reports an invalid configuration with every error. */
        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_ERROR, "ConfigurationInvalid");
        ck_assert_ptr_nonnull(m);
        ck_assert_int_eq(field(m->type, "errors")->type->kind, DP_VARLINK_TYPE_ARRAY);
        ck_assert_int_eq(field(m->type, "errors")->type->element->kind, DP_VARLINK_TYPE_STRING);
}
END_TEST

START_TEST(test_service_interface) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface = parse_ok(dp_varlink_org_varlink_service_idl);
        const struct dp_varlink_member *m;

        ck_assert_str_eq(iface->name, "org.varlink.service");
        ck_assert_uint_eq(iface->n_members, 8);
        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "GetInfo");
        ck_assert_uint_eq(m->output->n_fields, 5);
        ck_assert_int_eq(field(m->output, "interfaces")->type->kind, DP_VARLINK_TYPE_ARRAY);
        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_ERROR, "ExpectedMore");
        ck_assert_uint_eq(m->type->n_fields, 0);
        m = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "GetInterfaceDescription");
        ck_assert_str_eq(m->doc, "Get the description of an interface that is implemented by this service.");
}
END_TEST

/* Every kind of type, inline structs and enums, nesting, forward references. */
static const char full_grammar[] =
        "# doc\n"
        "interface org.example.more-test\n"
        "type Later (x: int)\n"
        "type All (\n"
        "  b: bool, i: int, f: float, s: string, o: object,\n"
        "  e: (one, two, three),\n"
        "  st: (first: int, second: ?string),\n"
        "  a: []string,\n"
        "  d: [string]int,\n"
        "  set: [string](),\n"
        "  n: ?string,\n"
        "  nas: ?[](first: int, second: string),\n"
        "  an: []?int,\n"
        "  named: Later,\n"
        "  tree: ?All\n"
        ")\n"
        "method Do(all: All, opt: ?[]Later) -> (ok: bool)\n"
        "error Failed ()\n";

START_TEST(test_full_grammar) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface = parse_ok(full_grammar);
        const struct dp_varlink_member *all = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "All");
        const struct dp_varlink_member *method = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "Do");
        const struct dp_varlink_type *t;
        const char *bad;
        json_t *v;

        ck_assert_str_eq(iface->name, "org.example.more-test");
        ck_assert_uint_eq(all->type->n_fields, 15);
        t = field(all->type, "nas")->type;
        ck_assert(t->nullable);
        ck_assert_int_eq(t->kind, DP_VARLINK_TYPE_ARRAY);
        ck_assert_int_eq(t->element->kind, DP_VARLINK_TYPE_STRUCT);
        t = field(all->type, "set")->type;
        ck_assert_int_eq(t->kind, DP_VARLINK_TYPE_MAP);
        ck_assert_uint_eq(t->element->n_fields, 0);
        ck_assert(field(all->type, "an")->type->element->nullable);
        ck_assert_ptr_eq(field(all->type, "tree")->type->resolved, all);

        v = json_loads("{\"all\": {\"b\": true, \"i\": 1, \"f\": 2, \"s\": \"x\", \"o\": {\"any\": [1]},"
                       " \"e\": \"two\", \"st\": {\"first\": 1}, \"a\": [\"p\", \"q\"], \"d\": {\"k\": 5},"
                       " \"set\": {\"m\": {}}, \"n\": null, \"nas\": [{\"first\": 1, \"second\": \"s\"}],"
                       " \"an\": [1, null, 3], \"named\": {\"x\": 9},"
                       " \"tree\": {\"b\": false, \"i\": 0, \"f\": 0.5, \"s\": \"\", \"o\": {}, \"e\": \"one\","
                       " \"st\": {\"first\": 2, \"second\": null}, \"a\": [], \"d\": {}, \"set\": {},"
                       " \"an\": [], \"named\": {\"x\": 0}}}}", 0, NULL);
        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq(dp_varlink_idl_validate_call(method, v, &bad), 0);
        json_decref(v);

        v = json_pack("{s:b}", "ok", 1);
        ck_assert_int_eq(dp_varlink_idl_validate_reply(method, v, NULL), 0);
        json_decref(v);
}
END_TEST

static const struct {
        const char *params;
        const char *bad;
} bad_params[] = {
        { "{}", "all" },                                                        /* missing */
        { "{\"all\": null}", "all" },                                           /* null, not nullable */
        { "{\"all\": {}, \"x\": 1}", "x" },                                     /* unknown wins the report */
        { "{\"all\": 5}", "all" },
        { "{\"opt\": \"no\", \"all\": {}}", "all" },
};

START_TEST(test_validate_bad_params) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface = parse_ok(full_grammar);
        const struct dp_varlink_member *method = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "Do");
        json_t *v = json_loads(bad_params[_i].params, 0, NULL);
        const char *bad = NULL;

        ck_assert_ptr_nonnull(v);
        ck_assert_int_eq(dp_varlink_idl_validate_call(method, v, &bad), -EINVAL);
        ck_assert_ptr_nonnull(bad);
        ck_assert_str_eq(bad, bad_params[_i].bad);
        json_decref(v);
}
END_TEST

/* One wrong value at a time inside an otherwise valid GetRegions/Event. */
START_TEST(test_validate_types) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface = parse_ok(dp_varlink_io_damon_perfd_idl);
        const struct dp_varlink_member *regions = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "GetRegions");
        const struct dp_varlink_member *monitor = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "Monitor");
        const struct dp_varlink_member *cpus = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, "GetCPUs");
        const char *bad;
        json_t *v;

#define CHECK(member, fn, text, expect, field_name)                                     \
        do {                                                                            \
                v = json_loads(text, 0, NULL);                                          \
                ck_assert_ptr_nonnull(v);                                               \
                bad = NULL;                                                             \
                ck_assert_int_eq(fn(member, v, &bad), expect);                          \
                if (field_name)                                                         \
                        ck_assert_str_eq(bad, (const char *) field_name);               \
                json_decref(v);                                                         \
        } while (0)

        CHECK(regions, dp_varlink_idl_validate_call, "{}", 0, NULL);
        CHECK(regions, dp_varlink_idl_validate_call, "{\"target\": 5, \"limit\": null}", 0, NULL);
        CHECK(regions, dp_varlink_idl_validate_call, "{\"target\": \"5\"}", -EINVAL, "target");
        CHECK(regions, dp_varlink_idl_validate_call, "{\"target\": 5.5}", -EINVAL, "target");
        CHECK(regions, dp_varlink_idl_validate_call, "{\"target\": true}", -EINVAL, "target");
        CHECK(regions, dp_varlink_idl_validate_call, "{\"limit\": [1]}", -EINVAL, "limit");
        CHECK(regions, dp_varlink_idl_validate_call, "{\"targets\": 1}", -EINVAL, "targets");
        CHECK(monitor, dp_varlink_idl_validate_call, "{\"samples\": 1}", -EINVAL, "samples");
        CHECK(monitor, dp_varlink_idl_validate_call, "{\"samples\": false, \"max_per_second\": 10}", 0, NULL);

        CHECK(monitor, dp_varlink_idl_validate_reply,
              "{\"event\": {\"kind\": \"state_change\", \"timestamp_usec\": 1, \"from\": \"bound\", \"to\": \"error\"}}",
              0, NULL);
        CHECK(monitor, dp_varlink_idl_validate_reply,
              "{\"event\": {\"kind\": \"state_change\", \"timestamp_usec\": 1, \"from\": \"BOGUS\"}}",
              -EINVAL, "event");
        CHECK(monitor, dp_varlink_idl_validate_reply,
              "{\"event\": {\"kind\": \"nope\", \"timestamp_usec\": 1}}", -EINVAL, "event");
        CHECK(monitor, dp_varlink_idl_validate_reply, "{\"event\": {\"kind\": \"drain\"}}", -EINVAL, "event");
        CHECK(monitor, dp_varlink_idl_validate_reply, "{}", -EINVAL, "event");
        CHECK(cpus, dp_varlink_idl_validate_reply, "{\"cpus\": []}", 0, NULL);
        CHECK(cpus, dp_varlink_idl_validate_reply, "{\"cpus\": [{}]}", -EINVAL, "cpus");
        CHECK(cpus, dp_varlink_idl_validate_reply, "{\"cpus\": {}}", -EINVAL, "cpus");
#undef CHECK

        /* wrong member kinds */
        v = json_object();
        ck_assert_int_eq(dp_varlink_idl_validate_error(regions, v, NULL), -EINVAL);
        ck_assert_int_eq(dp_varlink_idl_validate_call(NULL, v, NULL), -EINVAL);
        json_decref(v);
}
END_TEST

static const struct {
        const char *text;
        unsigned line;
        unsigned column;
        const char *message;    /* a part of it */
} bad_idl[] = {
        { "", 1, 1, "expected 'interface'" },
        { "# only a comment\n", 2, 1, "expected 'interface'" },
        { "type X ()\n", 1, 1, "expected 'interface' first" },
        { "interface foo\ntype X ()\n", 1, 11, "invalid interface name 'foo'" },
        { "interface a.b\n", 2, 1, "declares no" },
        { "interface a.b\ntype X (a: int)\ntype X (b: int)\n", 3, 1, "'X' defined twice" },
        { "interface a.b\ntype X (a: int)\nmethod X() -> ()\n", 3, 1, "'X' defined twice" },
        { "interface a.b\n\nmethod M(a: Y) -> ()\n", 3, 1, "undefined type 'Y'" },
        { "interface a.b\ntype X (a: Y)\nerror Y ()\n", 2, 1, "undefined type 'Y'" },
        { "interface a.b\ntype X (a: int,)\n", 2, 16, "trailing ','" },
        { "interface a.b\ntype X (a int)\n", 2, 11, "expected ',' or ')'" },
        { "interface a.b\nmethod M(a, b) -> ()\n", 2, 9, "method input must be a struct" },
        { "interface a.b\nmethod M() -> (a, b)\n", 2, 15, "method output must be a struct" },
        { "interface a.b\nmethod M() (a: int)\n", 2, 12, "expected '->'" },
        { "interface a.b\ntype x (a: int)\n", 2, 6, "invalid type name 'x'" },
        { "interface a.b\ntype X (a: ??int)\n", 2, 13, "'?' applied twice" },
        { "interface a.b\ntype X (a: [int]string)\n", 2, 13, "map keys must be 'string'" },
        { "interface a.b\ntype X (a: int, a: string)\n", 2, 17, "field 'a' defined twice" },
        { "interface a.b\ntype X (a, b, a)\n", 2, 15, "enum value 'a' defined twice" },
        { "interface a.b\ntype X (a, b: int)\n", 2, 13, "a typed field in an enum" },
        { "interface a.b\nfoo X ()\n", 2, 1, "expected 'type', 'method' or 'error', got 'foo'" },
        { "interface a.b\nmethod M() -> (\n  a: int\n", 4, 1, "got end of file" },
        { "interface a.b\ntype X (a: foo)\n", 2, 12, "unknown type 'foo'" },
        { "interface a.b\ntype X (_a: int)\n", 2, 9, "expected a field name" },
        { "interface a.b\ntype X (a__b: int)\n", 2, 9, "invalid field name 'a__b'" },
        { "interface a.b\ntype X (a: int) )\n", 2, 17, "expected 'type', 'method' or 'error'" },
        { "interface a.b\ntype X (a: int\n  # doc\n  b: int)\n", 4, 3, "expected ',' or ')', got 'b'" },
        { "interface a.b\nerror E (a, b)\n", 2, 9, "error parameters must be a struct" },
};

START_TEST(test_bad_idl) {
        struct dp_varlink_interface *iface = (struct dp_varlink_interface *) 0x1;
        struct dp_varlink_idl_error error;

        ck_assert_int_eq(dp_varlink_idl_parse(bad_idl[_i].text, &iface, &error), -EINVAL);
        ck_assert_ptr_eq(iface, (struct dp_varlink_interface *) 0x1);
        ck_assert_msg(strstr(error.message, bad_idl[_i].message), "case %d: message '%s'", _i, error.message);
        ck_assert_msg(error.line == bad_idl[_i].line && error.column == bad_idl[_i].column,
                      "case %d: at %u:%u, expected %u:%u (%s)", _i, error.line, error.column,
                      bad_idl[_i].line, bad_idl[_i].column, error.message);
}
END_TEST

START_TEST(test_deep_nesting) {
        char text[600] = "interface a.b\ntype X (a: ";
        struct dp_varlink_interface *iface = NULL;
        struct dp_varlink_idl_error error;

        for (int i = 0; i < 100; i++)
                strcat(text, "[]");
        strcat(text, "int)\n");
        ck_assert_int_eq(dp_varlink_idl_parse(text, &iface, &error), -EINVAL);
        ck_assert(strstr(error.message, "nested deeper"));
        ck_assert_uint_eq(error.line, 2);
        ck_assert_int_eq(dp_varlink_idl_parse(NULL, &iface, NULL), -EINVAL);
}
END_TEST

START_TEST(test_whitespace_and_crlf) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface =
                parse_ok("\r\n\tinterface\ta.b\r\n# d1\r\n# d2\r\ntype  X(a:int,b :\t[string]?bool)\r\n");
        const struct dp_varlink_member *x = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "X");

        ck_assert_str_eq(x->doc, "d1\nd2");
        ck_assert_int_eq(field(x->type, "b")->type->kind, DP_VARLINK_TYPE_MAP);
        ck_assert(field(x->type, "b")->type->element->nullable);
}
END_TEST

/* An interface of @fields documented fields whose last reference resolves to
 * nothing; returns its length. */
static size_t long_idl(char *text, size_t cap, int fields, int comment) {
        size_t len = 0;

        len += (size_t) snprintf(text + len, cap - len, "interface a.b\ntype X (\n");
        for (int i = 0; i < fields; i++) {
                len += (size_t) snprintf(text + len, cap - len, "  # ");
                memset(text + len, 'c', (size_t) comment);
                len += (size_t) comment;
                len += (size_t) snprintf(text + len, cap - len, "\n  f%d: []Y,\n", i);
        }
        /* Line 2 + 2 * fields + 1: a reference that resolves to nothing. */
        len += (size_t) snprintf(text + len, cap - len, "  z: Nope\n)\ntype Y (a: int)\n");
        ck_assert_uint_lt(len, cap);
        return len;
}

/* The fastest of seven parses of a failing interface, in seconds: the
 * fastest, so that a busy machine's preemptions drop out. */
static double failing_parse_seconds(const char *text, unsigned expect_line) {
        double best = 1e9;

        for (int rep = 0; rep < 7; rep++) {
                struct dp_varlink_interface *iface = NULL;
                struct dp_varlink_idl_error error;
                struct timespec t0, t1;

                clock_gettime(CLOCK_MONOTONIC, &t0);
                ck_assert_int_eq(dp_varlink_idl_parse(text, &iface, &error), -EINVAL);
                clock_gettime(CLOCK_MONOTONIC, &t1);
                ck_assert_msg(strstr(error.message, "undefined type 'Nope'"), "%s", error.message);
                ck_assert_uint_eq(error.line, expect_line);
                best = DP_MIN(best, (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
        }
        return best;
}

/* Found by fuzz-varlink: every type's line was counted from the start of the
 * text (time in types x bytes), and fields, enum values and members were
 * appended one realloc at a time and checked against all before them for
 * duplicates (time in their number squared).  Comments of 100 bytes keep
 * both texts (0.2 and 0.7 MB) in cache, so that the ratio is the parser's. */
START_TEST(test_long_idl_linear) {
        enum { FIELDS = 6000, COMMENT = 100, SCALE = 4 };
        size_t cap = 64 + (size_t) FIELDS * (COMMENT + 32);
        _cleanup_free_ char *text = malloc(cap);
        struct dp_varlink_interface *iface = NULL;
        double small, large;

        ck_assert_ptr_nonnull(text);
        /* Linear, judged by a ratio measured side by side rather than a wall
         * clock limit: four times the text costs about four times as much;
         * a parser quadratic in lines or bytes would cost sixteen. */
        long_idl(text, cap, FIELDS / SCALE, COMMENT);
        small = failing_parse_seconds(text, 2 + 2 * (FIELDS / SCALE) + 1);
        long_idl(text, cap, FIELDS, COMMENT);
        large = failing_parse_seconds(text, 2 + 2 * FIELDS + 1);
        ck_assert_msg(large < small * SCALE * 2.5, "%d times the text took %.1f times as long (%.4f vs %.4f s)",
                      SCALE, large / small, large, small);

        /* The same without the bad reference parses, each line still right. */
        strcpy(strstr(text, "  z: Nope"), "  z: Y\n)\ntype Y (a: int)\n");
        iface = parse_ok(text);
        ck_assert_uint_eq(dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, "Y")->line, 2 + 2 * FIELDS + 3);
        ck_assert_uint_eq(iface->members[0].type->n_fields, FIELDS + 1);
        ck_assert_uint_eq(iface->members[0].type->fields[FIELDS - 1].type->line, 2 + 2 * FIELDS);
        ck_assert_uint_eq(strlen(iface->members[0].type->fields[0].doc), COMMENT);
        dp_varlink_interface_free(iface);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("varlink-idl");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_embedded_is_verbatim);
        tcase_add_test(tc, test_our_interface);
        tcase_add_test(tc, test_service_interface);
        tcase_add_test(tc, test_full_grammar);
        tcase_add_loop_test(tc, test_validate_bad_params, 0, (int) DP_ARRAY_SIZE(bad_params));
        tcase_add_test(tc, test_validate_types);
        tcase_add_loop_test(tc, test_bad_idl, 0, (int) DP_ARRAY_SIZE(bad_idl));
        tcase_add_test(tc, test_deep_nesting);
        tcase_add_test(tc, test_whitespace_and_crlf);
        tcase_add_test(tc, test_long_idl_linear);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
