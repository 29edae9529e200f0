/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The perf.data header sections a replay reads (HEADER_PMU_MAPPINGS,
 * HEADER_CPUID) on well-formed and damaged bytes, the source chosen per
 * event from them, and the task history and thread map SPE attribution
 * uses.  Captures are built by tests/perf-data-writer.h. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "capture-source.h"
#include "decode-ibs.h"
#include "decode-spe.h"
#include "macro.h"
#include "perf-data-header.h"
#include "task-timeline.h"

#include "check-main.h"
#include "perf-data-writer.h"

#define ID_TYPES (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* ---- the source of each event ---- */

static struct dp_perf_data *open_writer(struct pdw *w) {
        struct dp_perf_data *data;
        size_t size;
        uint8_t *img = pdw_finish(w, &size);

        ck_assert_int_eq(dp_perf_data_open_memory(img, size, &data), 0);
        free(img);
        return data;
}

START_TEST(test_choice_per_event) {
        static const uint64_t ids[][1] = { { 1 }, { 2 }, { 3 }, { 4 }, { 5 }, { 6 } };
        struct perf_event_attr attrs[] = {
                { .type = PERF_TYPE_RAW, .config = 0x1cd, .config1 = 3, .precise_ip = 2 },     /* mem-loads */
                { .type = PERF_TYPE_RAW, .config = 0x82d0, .precise_ip = 2 },                  /* mem-stores */
                { .type = PERF_TYPE_RAW, .config = 0x3c },                                     /* cycles, raw */
                { .type = 99, .config = 1 },                                                   /* no mapping */
                { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS },
                { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_DUMMY },
        };
        static const char *const expected[] = { "pebs", "pebs", NULL, NULL, "pagefault", NULL };
        _cleanup_perf_data_ struct dp_perf_data *data = NULL, *amd = NULL;
        struct dp_capture_choice c;
        struct dp_perf_cpuid id;
        struct pdw w = {};

        for (size_t i = 0; i < DP_ARRAY_SIZE(attrs); i++) {
                attrs[i].sample_type = ID_TYPES | PERF_SAMPLE_ADDR;
                attrs[i].sample_id_all = 1;
                pdw_attr(&w, &attrs[i], ids[i], 1);
        }
        pdw_pmu_mappings(&w, pdw_pmus_intel, DP_ARRAY_SIZE(pdw_pmus_intel));
        pdw_cpuid(&w, "GenuineIntel,6,143,8");
        data = open_writer(&w);

        ck_assert_int_eq(dp_perf_data_cpuid(data, &id), 0);
        ck_assert_int_eq(id.kind, DP_CPUID_X86);
        ck_assert_str_eq(id.vendor, "GenuineIntel");
        ck_assert_uint_eq(id.family, 6);
        ck_assert_uint_eq(id.model, 143);
        ck_assert_uint_eq(id.stepping, 8);
        for (size_t i = 0; i < DP_ARRAY_SIZE(attrs); i++) {
                ck_assert_int_eq(dp_capture_choose(data, i, &id, &c), 0);
                if (expected[i])
                        ck_assert_msg(c.source && strcmp(c.source->name, expected[i]) == 0, "event %zu: %s", i,
                                      c.reason);
                else
                        ck_assert_msg(!c.source, "event %zu: %s", i, c.reason);
                ck_assert(c.reason[0]);
        }
        ck_assert_int_eq(dp_capture_choose(data, 0, &id, &c), 0);
        ck_assert_str_eq(c.pmu, "cpu");
        ck_assert_int_eq(dp_capture_choose(data, 3, &id, &c), 0);
        ck_assert_str_eq(c.pmu, "");
        ck_assert_ptr_nonnull(strstr(c.reason, "unknown"));
        ck_assert_int_eq(dp_capture_choose(data, 5, &id, &c), 0);
        ck_assert(!c.access);
        ck_assert_int_eq(dp_capture_choose(data, 6, &id, &c), -EINVAL);

        /* Malformed mappings: a clear error, and the choice made without them. */
        {
                static const uint8_t damaged[] = { 200, 0, 0, 0, 4, 0, 0, 0, 64, 0, 0, 0, 'c', 'p', 'u', 0 };
                _cleanup_perf_data_ struct dp_perf_data *bad = NULL;

                memset(&w, 0, sizeof(w));
                pdw_attr(&w, &attrs[0], ids[0], 1);
                pdw_attr(&w, &attrs[3], ids[3], 1);
                pdw_feature(&w, 16, damaged, sizeof(damaged));
                bad = open_writer(&w);
                ck_assert_int_eq(dp_capture_choose(bad, 0, NULL, &c), -EBADMSG);
                ck_assert_str_eq(c.source->name, "pebs");       /* PERF_TYPE_RAW: the core PMU */
                ck_assert_int_eq(dp_capture_choose(bad, 1, NULL, &c), -EBADMSG);
                ck_assert_ptr_null(c.source);
                ck_assert_ptr_nonnull(strstr(c.reason, "malformed"));
        }

        /* The same core event on an AMD machine is not PEBS. */
        memset(&w, 0, sizeof(w));
        pdw_attr(&w, &attrs[0], ids[0], 1);
        pdw_pmu_mappings(&w, pdw_pmus_amd, DP_ARRAY_SIZE(pdw_pmus_amd));
        pdw_cpuid(&w, "AuthenticAMD,25,1,1");
        amd = open_writer(&w);
        ck_assert_int_eq(dp_perf_data_cpuid(amd, &id), 0);
        ck_assert_int_eq(dp_capture_choose(amd, 0, &id, &c), 0);
        ck_assert_ptr_null(c.source);
}
END_TEST

/* ---- the header sections ---- */

START_TEST(test_pmu_mappings_section) {
        struct pdw_bytes x = {};
        char name[DP_PERF_PMU_NAME_MAX];

        pdw_u32(&x, 3);
        pdw_u32(&x, 4);
        pdw_string(&x, "cpu");
        pdw_u32(&x, 11);
        pdw_string(&x, "arm_spe_0");
        pdw_u32(&x, 12);
        pdw_string(&x, "ibs_op");

        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 11, name, sizeof(name)), 0);
        ck_assert_str_eq(name, "arm_spe_0");
        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 12, name, sizeof(name)), 0);
        ck_assert_str_eq(name, "ibs_op");
        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 5, name, sizeof(name)), -ENOENT);
        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 11, name, 4), -ENAMETOOLONG);

        /* Every cut of the section is malformed, whatever type is asked for. */
        for (size_t n = 0; n < x.n; n++) {
                ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, n, 4, name, sizeof(name)), -EBADMSG);
                ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, n, 12, name, sizeof(name)), -EBADMSG);
        }
        /* A count beyond what the bytes can hold. */
        memcpy(x.b, &(uint32_t) { 4 }, 4);
        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 4, name, sizeof(name)), -EBADMSG);
        memcpy(x.b, &(uint32_t) { UINT32_MAX }, 4);
        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 4, name, sizeof(name)), -EBADMSG);
        /* A string length past the end, and a string without its NUL. */
        memcpy(x.b, &(uint32_t) { 3 }, 4);
        memcpy(x.b + 8, &(uint32_t) { 1u << 30 }, 4);
        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 4, name, sizeof(name)), -EBADMSG);
        memcpy(x.b + 8, &(uint32_t) { 3 }, 4);
        ck_assert_int_eq(dp_perf_pmu_mappings_find(x.b, x.n, 4, name, sizeof(name)), -EBADMSG);
        ck_assert_int_eq(dp_perf_pmu_mappings_find(NULL, 0, 4, name, sizeof(name)), -EBADMSG);
        pdw_bytes_free(&x);
}
END_TEST

START_TEST(test_cpuid_strings) {
        static const char *const bad[] = {
                "", "AuthenticAMD", "AuthenticAMD,25,1", "AuthenticAMD,25,1,1,", "AuthenticAMD,-25,1,1",
                "AuthenticAMD,25,1,x", "Authentic AMD,25,1,1", ",25,1,1", "AuthenticAMD,99999999999,1,1",
                "0x410fd0c0", "0x00000000410fd0cg", "0x00000000410fd0c00", "IBM,3931",
        };
        struct dp_perf_cpuid id;
        struct pdw_bytes x = {};
        char text[64];

        ck_assert_int_eq(dp_perf_cpuid_parse("AuthenticAMD,25,1,1", &id), 0);
        ck_assert_int_eq(id.kind, DP_CPUID_X86);
        ck_assert_str_eq(id.vendor, "AuthenticAMD");
        ck_assert_uint_eq(id.family, 0x19);
        ck_assert_uint_eq(id.model, 1);
        ck_assert_uint_eq(id.stepping, 1);
        ck_assert_int_eq(dp_perf_cpuid_parse("0x00000000410fd0c0", &id), 0);
        ck_assert_int_eq(id.kind, DP_CPUID_ARM64);
        ck_assert_uint_eq(id.midr, 0x410fd0c0);
        ck_assert_uint_eq(id.implementer, 0x41);        /* Arm */
        ck_assert_uint_eq(id.part, 0xd0c);              /* Neoverse N1 */
        ck_assert_uint_eq(id.architecture, 0xf);
        for (size_t i = 0; i < DP_ARRAY_SIZE(bad); i++) {
                ck_assert_msg(dp_perf_cpuid_parse(bad[i], &id) == -EINVAL, "'%s' parsed", bad[i]);
                ck_assert_int_eq(id.kind, DP_CPUID_UNKNOWN);
        }

        pdw_string(&x, "GenuineIntel,6,143,8");
        ck_assert_int_eq(dp_perf_cpuid_string(x.b, x.n, text, sizeof(text)), 0);
        ck_assert_str_eq(text, "GenuineIntel,6,143,8");
        ck_assert_int_eq(dp_perf_cpuid_string(x.b, x.n, text, 8), -ENAMETOOLONG);
        for (size_t n = 0; n < x.n; n++)
                ck_assert_int_eq(dp_perf_cpuid_string(x.b, n, text, sizeof(text)), -EBADMSG);
        memset(x.b + 4, 'A', x.n - 4);  /* no NUL inside its length */
        ck_assert_int_eq(dp_perf_cpuid_string(x.b, x.n, text, sizeof(text)), -EBADMSG);
        pdw_bytes_free(&x);
}
END_TEST

/* Sections a capture lacks, and sections that lie outside the file. */
START_TEST(test_feature_sections_in_file) {
        static const uint64_t ids[] = { 1 };
        struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = PERF_COUNT_SW_PAGE_FAULTS,
                                     .sample_type = PERF_SAMPLE_ADDR };
        struct dp_perf_data *data;
        struct dp_perf_cpuid id;
        const uint8_t *section;
        char name[DP_PERF_PMU_NAME_MAX];
        struct pdw w = {};
        uint8_t *img;
        size_t size, n;

        pdw_attr(&w, &a, ids, 1);
        data = open_writer(&w);
        ck_assert_int_eq(dp_perf_data_feature(data, DP_PERF_HEADER_CPUID, &section, &n), -ENOENT);
        ck_assert_int_eq(dp_perf_data_cpuid(data, &id), -ENOENT);
        ck_assert_int_eq(dp_perf_data_pmu_name(data, 1, name, sizeof(name)), -ENOENT);
        ck_assert_int_eq(dp_perf_data_feature(data, 300, &section, &n), -ENOENT);
        dp_perf_data_free(data);

        memset(&w, 0, sizeof(w));
        pdw_attr(&w, &a, ids, 1);
        pdw_cpuid(&w, "0x00000000410fd0c0");
        pdw_pmu_mappings(&w, pdw_pmus_arm, DP_ARRAY_SIZE(pdw_pmus_arm));
        img = pdw_finish(&w, &size);
        ck_assert_int_eq(dp_perf_data_open_memory(img, size, &data), 0);
        ck_assert_int_eq(dp_perf_data_pmu_name(data, PDW_SPE_TYPE, name, sizeof(name)), 0);
        ck_assert_str_eq(name, "arm_spe_0");
        ck_assert_int_eq(dp_perf_data_cpuid(data, &id), 0);
        ck_assert_int_eq(id.kind, DP_CPUID_ARM64);
        dp_perf_data_free(data);

        /* The table entry of the second section (PMU mappings) points past the end. */
        {
                uint64_t data_off, data_size, bad = size + 1;

                memcpy(&data_off, img + 40, 8);
                memcpy(&data_size, img + 48, 8);
                memcpy(img + data_off + data_size + 16, &bad, 8);
                ck_assert_int_eq(dp_perf_data_open_memory(img, size, &data), -EBADMSG);
        }
        free(img);
}
END_TEST

/* ---- the switch history ---- */

START_TEST(test_task_timeline) {
        struct dp_task_timeline tl;
        struct dp_task_switch last;
        uint32_t pid, tid;

        dp_task_timeline_init(&tl);
        ck_assert_int_eq(dp_task_timeline_at(&tl, 5, &pid, &tid), -ENOENT);
        ck_assert_int_eq(dp_task_timeline_last(&tl, &last), -ENOENT);
        dp_task_timeline_note(&tl, 100, 1, 2);
        dp_task_timeline_note(&tl, 200, 3, 4);
        dp_task_timeline_note(&tl, 200, 3, 4);          /* no change: no note */
        dp_task_timeline_note(&tl, 150, 5, 5);          /* out of order: taken at 200 */
        ck_assert_uint_eq(tl.n, 3);
        ck_assert_int_eq(dp_task_timeline_at(&tl, 99, &pid, &tid), -ENOENT);
        ck_assert_int_eq(dp_task_timeline_at(&tl, 100, &pid, &tid), 0);
        ck_assert(pid == 1 && tid == 2);
        ck_assert_int_eq(dp_task_timeline_at(&tl, 199, &pid, &tid), 0);
        ck_assert(pid == 1 && tid == 2);
        ck_assert_int_eq(dp_task_timeline_at(&tl, 1000, &pid, &tid), 0);
        ck_assert(pid == 5 && tid == 5);
        ck_assert_int_eq(dp_task_timeline_pid_of(&tl, 4, &pid), 0);
        ck_assert_uint_eq(pid, 3);
        ck_assert_int_eq(dp_task_timeline_pid_of(&tl, 9, &pid), -ENOENT);

        /* Full: the oldest notes go, the latest stay. */
        for (uint32_t i = 0; i < 2 * DP_TASK_TIMELINE_SIZE; i++)
                dp_task_timeline_note(&tl, 1000 + i, 10 + i, 10 + i);
        ck_assert_uint_eq(tl.n, DP_TASK_TIMELINE_SIZE);
        ck_assert_int_eq(dp_task_timeline_last(&tl, &last), 0);
        ck_assert_uint_eq(last.time, 1000 + 2 * DP_TASK_TIMELINE_SIZE - 1);
        ck_assert_int_eq(dp_task_timeline_at(&tl, 1000 + DP_TASK_TIMELINE_SIZE - 1, &pid, &tid), -ENOENT);
        ck_assert_int_eq(dp_task_timeline_at(&tl, 1000 + DP_TASK_TIMELINE_SIZE, &pid, &tid), 0);
        ck_assert_uint_eq(pid, 10 + DP_TASK_TIMELINE_SIZE);
        ck_assert_int_eq(dp_task_timeline_pid_of(&tl, 3, &pid), -ENOENT);
}
END_TEST

START_TEST(test_thread_map) {
        static struct dp_thread_map map;        /* 64 KiB: not on the stack */
        uint32_t pid;

        memset(&map, 0, sizeof(map));
        ck_assert_int_eq(dp_thread_map_pid_of(&map, 5, &pid), -ENOENT);
        dp_thread_map_note(&map, 5, 5);
        dp_thread_map_note(&map, 5, 6);
        dp_thread_map_note(&map, 0, 7);         /* nobody: not noted */
        ck_assert_int_eq(dp_thread_map_pid_of(&map, 6, &pid), 0);
        ck_assert_uint_eq(pid, 5);
        ck_assert_int_eq(dp_thread_map_pid_of(&map, 7, &pid), -ENOENT);
        ck_assert_int_eq(dp_thread_map_pid_of(&map, 0, &pid), -ENOENT);
        dp_thread_map_note(&map, 9, 6);         /* a reused tid: the latest wins */
        ck_assert_int_eq(dp_thread_map_pid_of(&map, 6, &pid), 0);
        ck_assert_uint_eq(pid, 9);
        ck_assert_uint_eq(map.n, 2);

        /* Far more threads than slots: the latest are found, nothing breaks. */
        for (uint32_t t = 1; t <= 4 * DP_THREAD_MAP_SIZE; t++)
                dp_thread_map_note(&map, 1000000 + t, t);
        ck_assert_uint_le(map.n, DP_THREAD_MAP_SIZE);
        ck_assert_int_eq(dp_thread_map_pid_of(&map, 4 * DP_THREAD_MAP_SIZE, &pid), 0);
        ck_assert_uint_eq(pid, 1000000 + 4 * DP_THREAD_MAP_SIZE);
}
END_TEST

/* The decoder context a capture's CPUID gives: IBS errata for AMD only. */
START_TEST(test_source_context_from_cpuid) {
        struct dp_source_context ctx;
        struct dp_perf_cpuid id;

        ck_assert_int_eq(dp_perf_cpuid_parse("AuthenticAMD,25,1,1", &id), 0);
        dp_capture_source_context(&id, &ctx);
        ck_assert(dp_ibs_cpu_has_erratum_1293(&ctx.ibs_cpu));
        ck_assert_int_eq(dp_perf_cpuid_parse("AuthenticAMD,25,17,1", &id), 0);
        dp_capture_source_context(&id, &ctx);
        ck_assert_uint_eq(ctx.ibs_cpu.model, 0x11);
        ck_assert(!dp_ibs_cpu_has_erratum_1293(&ctx.ibs_cpu));
        /* Family 25 means nothing on another vendor's part. */
        ck_assert_int_eq(dp_perf_cpuid_parse("GenuineIntel,25,1,1", &id), 0);
        dp_capture_source_context(&id, &ctx);
        ck_assert_uint_eq(ctx.ibs_cpu.family, 0);
        ck_assert_int_eq(dp_perf_cpuid_parse("0x00000000410fd0c0", &id), 0);
        dp_capture_source_context(&id, &ctx);
        ck_assert_uint_eq(ctx.ibs_cpu.family, 0);
        dp_capture_source_context(NULL, &ctx);
        ck_assert(!dp_ibs_cpu_has_erratum_1293(&ctx.ibs_cpu));
}
END_TEST

/* arm64's short time counter: only the bits of time_mask count, from time_cycles. */
START_TEST(test_clock_short_counter) {
        struct dp_spe_clock c = { .time_shift = 1, .time_mult = 4, .time_zero = 100 };

        ck_assert_uint_eq(dp_spe_clock_to_ns(&c, 0x12345), 100 + 2 * 0x12345);
        c.cap_user_time_short = true;
        c.time_cycles = 0x1000;
        c.time_mask = 0xffff;
        ck_assert_uint_eq(dp_spe_clock_to_ns(&c, 0x12345), 100 + 2 * (0x1000 + ((0x12345 - 0x1000) & 0xffff)));
        ck_assert_uint_eq(dp_spe_clock_to_ns(&c, 0x1000), 100 + 2 * 0x1000);
}
END_TEST

static Suite *capture_header_suite(void) {
        Suite *s = suite_create("capture-header");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_choice_per_event);
        tcase_add_test(tc, test_pmu_mappings_section);
        tcase_add_test(tc, test_cpuid_strings);
        tcase_add_test(tc, test_feature_sections_in_file);
        tcase_add_test(tc, test_task_timeline);
        tcase_add_test(tc, test_thread_map);
        tcase_add_test(tc, test_source_context_from_cpuid);
        tcase_add_test(tc, test_clock_short_counter);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(capture_header_suite());
}
