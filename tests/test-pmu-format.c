/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check-main.h"
#include "pmu.h"

static struct dp_pmu_field parse_ok(const char *text) {
        struct dp_pmu_field f;

        ck_assert_int_eq(dp_pmu_field_parse("f", text, &f), 0);
        return f;
}

START_TEST(test_parse_single_ranges) {
        struct dp_pmu_field f;

        f = parse_ok("config:0-15");
        ck_assert_int_eq(f.word, DP_PMU_CONFIG);
        ck_assert_uint_eq(f.mask, 0xffff);
        ck_assert_uint_eq(dp_pmu_field_width(&f), 16);
        ck_assert_str_eq(f.name, "f");

        f = parse_ok("config1:0-11");
        ck_assert_int_eq(f.word, DP_PMU_CONFIG1);
        ck_assert_uint_eq(f.mask, 0xfff);

        f = parse_ok("config2:0");
        ck_assert_int_eq(f.word, DP_PMU_CONFIG2);
        ck_assert_uint_eq(f.mask, 1);
        ck_assert_uint_eq(dp_pmu_field_width(&f), 1);

        f = parse_ok("config:63");
        ck_assert_uint_eq(f.mask, UINT64_C(1) << 63);

        f = parse_ok("config1:0-63");
        ck_assert_uint_eq(f.mask, UINT64_MAX);
        ck_assert_uint_eq(dp_pmu_field_width(&f), 64);

        f = parse_ok("config3:0-63");
        ck_assert_int_eq(f.word, DP_PMU_CONFIG3);
}
END_TEST

START_TEST(test_parse_multi_range) {
        struct dp_pmu_field f, g;

        /* The AMD core PMU's event select, split across the config word. */
        f = parse_ok("config:0-7,32-35");
        ck_assert_uint_eq(f.mask, UINT64_C(0xf000000ff));
        ck_assert_uint_eq(dp_pmu_field_width(&f), 12);

        g = parse_ok("config:32-35,0-7");
        ck_assert_uint_eq(g.mask, f.mask);

        f = parse_ok("config:0,2,4-5");
        ck_assert_uint_eq(f.mask, 0x35);
}
END_TEST

START_TEST(test_parse_trailing_whitespace) {
        /* sysfs ends files with a newline, SPE's single-bit fields with two. */
        ck_assert_uint_eq(parse_ok("config:19\n").mask, UINT64_C(1) << 19);
        ck_assert_uint_eq(parse_ok("config:0\n\n").mask, 1);
        ck_assert_uint_eq(parse_ok("config2:0-11 \t\n").mask, 0xfff);
}
END_TEST

static const char *const malformed[] = {
        "", "\n", "config", "config:", "config:a", "config:64", "config:0-64", "config:5-3", "config4:0",
        "conf:0", "Config:0", "config:0-7,", "config:0-7,,8", "config:0-7,4-9", "config:1,1", "config:0-7 x",
        " config:0", "config :0", "config: 0", "config:-1", "config:0--1", "config:00-999", "config:0-",
        "config1:0-11\nconfig:0", "config:0;1", "config:0x3", "config:1-2-3",
};

START_TEST(test_parse_malformed) {
        const char *text = malformed[_i];
        struct dp_pmu_field f = { .mask = 0x1234 };

        ck_assert_msg(dp_pmu_field_parse("f", text, &f) == -EBADMSG, "\"%s\" should be -EBADMSG", text);
        ck_assert_uint_eq(f.mask, 0x1234);     /* untouched on error */
}
END_TEST

START_TEST(test_parse_names) {
        struct dp_pmu_field f;
        char long_name[64];

        memset(long_name, 'n', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        ck_assert_int_eq(dp_pmu_field_parse(long_name, "config:0", &f), -ENAMETOOLONG);
        ck_assert_int_eq(dp_pmu_field_parse("", "config:0", &f), -EBADMSG);
        ck_assert_int_eq(dp_pmu_field_parse(NULL, "config:0", &f), -EINVAL);
        ck_assert_int_eq(dp_pmu_field_parse("f", NULL, &f), -EINVAL);
}
END_TEST

START_TEST(test_set_get_multi_range) {
        struct dp_pmu_field f = parse_ok("config:0-7,32-35");
        struct perf_event_attr attr = { .config = UINT64_C(0x0000000100000100) };
        uint64_t v;

        ck_assert_int_eq(dp_pmu_field_set(&f, 0xabc, &attr), 0);
        /* low byte into 0-7, the next nibble into 32-35 (bit 32 was ours); bit 8 survives */
        ck_assert_uint_eq(attr.config, UINT64_C(0xa000001bc));
        ck_assert_int_eq(dp_pmu_field_get(&f, &attr, &v), 0);
        ck_assert_uint_eq(v, 0xabc);

        /* Setting again replaces the old bits. */
        ck_assert_int_eq(dp_pmu_field_set(&f, 0x001, &attr), 0);
        ck_assert_uint_eq(attr.config, UINT64_C(0x101));
        ck_assert_int_eq(dp_pmu_field_set(&f, 0xfff, &attr), 0);
        ck_assert_uint_eq(attr.config, UINT64_C(0xf000001ff));
}
END_TEST

START_TEST(test_set_keeps_neighbours) {
        struct dp_pmu_field umask = parse_ok("config:8-15");
        struct perf_event_attr attr = { .config = 0xcd, .config1 = 7 };

        ck_assert_int_eq(dp_pmu_field_set(&umask, 0x01, &attr), 0);
        ck_assert_uint_eq(attr.config, 0x1cd);
        ck_assert_uint_eq(attr.config1, 7);
}
END_TEST

START_TEST(test_set_range_checks) {
        struct dp_pmu_field ldlat = parse_ok("config1:0-15"), bit = parse_ok("config:19"),
                            multi = parse_ok("config:0-7,32-35"), all = parse_ok("config2:0-63"),
                            zen5_ldlat = parse_ok("config1:0-11"), c3 = parse_ok("config3:0-3");
        struct perf_event_attr attr = { .config1 = 0x55 };

        ck_assert_int_eq(dp_pmu_field_set(&ldlat, 0xffff, &attr), 0);
        ck_assert_uint_eq(attr.config1, 0xffff);
        ck_assert_int_eq(dp_pmu_field_set(&ldlat, 0x10000, &attr), -ERANGE);
        ck_assert_uint_eq(attr.config1, 0xffff);        /* unchanged on error */

        ck_assert_int_eq(dp_pmu_field_set(&bit, 1, &attr), 0);
        ck_assert_int_eq(dp_pmu_field_set(&bit, 2, &attr), -ERANGE);
        ck_assert_int_eq(dp_pmu_field_set(&multi, 0x1000, &attr), -ERANGE);
        ck_assert_int_eq(dp_pmu_field_set(&zen5_ldlat, 4095, &attr), 0);
        ck_assert_int_eq(dp_pmu_field_set(&zen5_ldlat, 4096, &attr), -ERANGE);
        ck_assert_int_eq(dp_pmu_field_set(&all, UINT64_MAX, &attr), 0);
        ck_assert_uint_eq(attr.config2, UINT64_MAX);
        ck_assert_int_eq(dp_pmu_field_set(&c3, 1, &attr), -EOPNOTSUPP);
}
END_TEST

static void add_field(struct dp_pmu *pmu, const char *name, const char *text) {
        ck_assert_int_eq(dp_pmu_field_parse(name, text, &pmu->fields[pmu->n_fields]), 0);
        pmu->n_fields++;
}

static struct dp_pmu intel_cpu(void) {
        struct dp_pmu pmu = { .name = "cpu", .kind = DP_PMU_CORE, .type = 4 };

        add_field(&pmu, "event", "config:0-7");
        add_field(&pmu, "umask", "config:8-15");
        add_field(&pmu, "in_tx", "config:32");
        add_field(&pmu, "ldlat", "config1:0-15");
        return pmu;
}

START_TEST(test_apply_event) {
        struct dp_pmu pmu = intel_cpu();
        struct perf_event_attr attr = {};

        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0xcd,umask=0x1,ldlat=3\n", &attr), 0);
        ck_assert_uint_eq(attr.type, 4);
        ck_assert_uint_eq(attr.config, 0x1cd);
        ck_assert_uint_eq(attr.config1, 3);

        memset(&attr, 0, sizeof(attr));
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0x03,umask=0x82", &attr), 0);
        ck_assert_uint_eq(attr.config, 0x8203);

        /* A bare term means 1; decimal values work too. */
        memset(&attr, 0, sizeof(attr));
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=60,in_tx", &attr), 0);
        ck_assert_uint_eq(attr.config, (UINT64_C(1) << 32) | 60);

        ck_assert_int_eq(dp_pmu_set_field(&pmu, "ldlat", 30, &attr), 0);
        ck_assert_uint_eq(attr.config1, 30);
        ck_assert_int_eq(dp_pmu_set_field(&pmu, "nosuch", 1, &attr), -ENOENT);
}
END_TEST

START_TEST(test_apply_event_errors) {
        struct dp_pmu pmu = intel_cpu();
        struct perf_event_attr attr = {};

        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0xcd,frob=1", &attr), -ENOENT);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0x1cd", &attr), -ERANGE);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "ldlat=0x10000", &attr), -ERANGE);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0xffffffffffffffffff", &attr), -ERANGE);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "=3", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0xcd,,umask=1", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0xcd,", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=zz", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=0x1g", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(&pmu, "event=-1", &attr), -EBADMSG);
        ck_assert_int_eq(dp_pmu_apply_event(NULL, "event=1", &attr), -EINVAL);
}
END_TEST

static Suite *pmu_format_suite(void) {
        Suite *s = suite_create("pmu-format");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_single_ranges);
        tcase_add_test(tc, test_parse_multi_range);
        tcase_add_test(tc, test_parse_trailing_whitespace);
        tcase_add_loop_test(tc, test_parse_malformed, 0, (int) (sizeof(malformed) / sizeof(malformed[0])));
        tcase_add_test(tc, test_parse_names);
        tcase_add_test(tc, test_set_get_multi_range);
        tcase_add_test(tc, test_set_keeps_neighbours);
        tcase_add_test(tc, test_set_range_checks);
        tcase_add_test(tc, test_apply_event);
        tcase_add_test(tc, test_apply_event_errors);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(pmu_format_suite());
}
