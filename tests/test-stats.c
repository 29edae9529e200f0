/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The stats view: totals sum the CPUs, JSON has the io.damon.perfd shapes,
 * and the text names the software control for what it is. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

#include "check-main.h"

static void make_view(struct dp_stats_view *view, struct dp_cpu_stats *stats, struct dp_cpu_view *cpus) {
        const struct dp_cpu_stats *ptrs[2] = { &stats[0], &stats[1] };
        static const int ids[2] = { 0, 3 };
        struct dp_counter_values v = {0};

        for (int i = 0; i < 2; i++) {
                dp_cpu_stats_init(&stats[i]);
                v.v[DP_C_CALLBACK] = 10 * (i + 1);
                v.v[DP_C_VALID] = 10 * (i + 1);
                v.v[DP_C_ENQUEUE] = 10 * (i + 1);
                v.v[DP_C_RING_PEAK] = 5 + i;
                dp_counters_publish(&stats[i], DP_OWNER_READER, &v);
        }
        dp_cpu_transition(&stats[1], DP_CPU_ERROR, DP_STEP_CREATE, -EACCES);
        *view = (struct dp_stats_view) {
                .source = &dp_source_pagefault,
                .source_reason = "ibs_op: absent → pagefault (software positive control)",
                .uptime_ns = 2500000000ull,
                .cpus = cpus,
        };
        dp_stats_collect(view, ptrs, ids, 2);
}

START_TEST(test_collect_and_json) {
        struct dp_cpu_stats *stats = aligned_alloc(DP_CACHELINE, 2 * sizeof(*stats));
        struct dp_cpu_view cpus[2];
        struct dp_stats_view view;
        json_t *j, *cpu1;

        make_view(&view, stats, cpus);
        ck_assert_uint_eq(view.total.v[DP_C_CALLBACK], 30);
        ck_assert_uint_eq(view.total.v[DP_C_RING_PEAK], 6);     /* a level: max, not sum */
        ck_assert_uint_eq(dp_stats_count_state(&view, DP_CPU_ERROR), 1);

        j = dp_stats_to_json(&view);
        ck_assert_ptr_nonnull(j);
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "source"), "name")), "pagefault");
        ck_assert(json_is_false(json_object_get(json_object_get(j, "source"), "hardware")));
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "source"), "reason")),
                         "ibs_op: absent → pagefault (software positive control)");
        ck_assert_int_eq(json_integer_value(json_object_get(j, "uptime_usec")), 2500000);
        ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "totals"), "enqueue")), 30);
        ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(j, "totals"), "in_flight")), 30);
        cpu1 = json_array_get(json_object_get(j, "cpus"), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(cpu1, "cpu")), 3);
        ck_assert_str_eq(json_string_value(json_object_get(cpu1, "state")), "error");
        ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(cpu1, "counters"), "callback")), 20);
        /* every counter is there, by its name */
        for (int c = 0; c < _DP_C_MAX; c++)
                ck_assert_ptr_nonnull(json_object_get(json_object_get(j, "totals"), dp_counter_name(c)));
        json_decref(j);
        free(stats);
}
END_TEST

START_TEST(test_text_labels_the_control) {
        struct dp_cpu_stats *stats = aligned_alloc(DP_CACHELINE, 2 * sizeof(*stats));
        struct dp_cpu_view cpus[2];
        struct dp_stats_view view;
        char *text = NULL;
        size_t len = 0;
        FILE *f;

        make_view(&view, stats, cpus);
        f = open_memstream(&text, &len);
        dp_stats_print(f, &view);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(text, "SOFTWARE POSITIVE CONTROL"));
        ck_assert_ptr_nonnull(strstr(text, "\nsource choice: ibs_op: absent → pagefault (software positive control)\n"));
        ck_assert_ptr_nonnull(strstr(text, "CPU00: st=UNINIT"));
        ck_assert_ptr_nonnull(strstr(text, "CPU03: st=ERROR"));
        ck_assert_ptr_nonnull(strstr(text, "@create"));
        ck_assert_ptr_nonnull(strstr(text, "│ 7 match"));
        /* Every counter has a row, the AUX ones after layer 7. */
        for (int c = 0; c < _DP_C_MAX; c++) {
                char cell[64];

                snprintf(cell, sizeof(cell), " %s ", dp_counter_name(c));
                ck_assert_msg(strstr(text, cell), "%s missing", dp_counter_name(c));
        }
        ck_assert_ptr_nonnull(strstr(text, "│ aux        │ aux_truncated │"));
        free(text);
        free(stats);
}
END_TEST

/* A view without a choice (replay) still has the IDL's string, and no text line. */
START_TEST(test_reason_absent) {
        struct dp_stats_view view = { .source = &dp_source_pagefault };
        char *text = NULL;
        size_t len = 0;
        json_t *j;
        FILE *f;

        j = dp_stats_to_json(&view);
        ck_assert_ptr_nonnull(j);
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "source"), "reason")), "");
        json_decref(j);
        f = open_memstream(&text, &len);
        dp_stats_print(f, &view);
        fclose(f);
        ck_assert_ptr_null(strstr(text, "source choice"));
        free(text);
}
END_TEST

int main(void) {
        Suite *s = suite_create("stats");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_collect_and_json);
        tcase_add_test(tc, test_text_labels_the_control);
        tcase_add_test(tc, test_reason_absent);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
