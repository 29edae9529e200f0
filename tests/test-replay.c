/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Replay of a real `perf record -e page-faults -d -a` capture through the
 * pipeline agrees exactly with `perf script` on the same file. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "replay.h"

#include "check-main.h"

struct key {
        uint32_t pid, tid, cpu;
        uint64_t addr;
};

struct keys {
        struct key *v;
        size_t n, cap;
};

static void keys_add(struct keys *k, struct key x) {
        if (k->n == k->cap) {
                k->cap = k->cap ? 2 * k->cap : 4096;
                k->v = realloc(k->v, k->cap * sizeof(*k->v));
                ck_assert_ptr_nonnull(k->v);
        }
        k->v[k->n++] = x;
}

static int key_cmp(const void *a, const void *b) {
        const struct key *x = a, *y = b;

        if (x->addr != y->addr)
                return x->addr < y->addr ? -1 : 1;
        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        if (x->tid != y->tid)
                return x->tid < y->tid ? -1 : 1;
        return (x->cpu > y->cpu) - (x->cpu < y->cpu);
}

static void on_sample(const struct dp_sample *s, void *userdata) {
        keys_add(userdata, (struct key) { s->pid, s->tid, s->cpu, s->vaddr });
}

static char *testdata(const char *name) {
        const char *dir = getenv("DP_TESTDATA");
        char *path;

        ck_assert_msg(dir, "DP_TESTDATA is not set");
        ck_assert_int_gt(asprintf(&path, "%s/%s", dir, name), 0);
        return path;
}

/* perf script's default columns: comm pid/tid [cpu] secs.usecs: addr ip */
static size_t read_script(struct keys *valid) {
        char *path = testdata("pagefault-system.perf.script");
        FILE *f = fopen(path, "re");
        char line[1024];
        size_t lines = 0;

        ck_assert_msg(f, "cannot open %s", path);
        while (fgets(line, sizeof(line), f)) {
                char *p = strchr(line, '/'), *q;
                unsigned pid, tid, cpu;
                uint64_t addr;

                /* The comm may contain spaces: find "pid/tid" by the slash before " [". */
                q = strstr(line, " [");
                ck_assert_ptr_nonnull(q);
                for (p = q; p > line && p[-1] != ' '; p--)
                        ;
                ck_assert_int_eq(sscanf(p, "%u/%u [%u] %*[0-9.]: %" SCNx64, &pid, &tid, &cpu, &addr), 4);
                lines++;
                if (addr != 0 && !(addr >> 63))
                        keys_add(valid, (struct key) { pid, tid, cpu, addr });
        }
        fclose(f);
        free(path);
        return lines;
}

/* With @plan, targets come from a first pass; without, they grow in the run. */
static void check_agreement(bool plan) {
        char *path = testdata("pagefault-system.perf.data");
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        struct keys expected = {0}, got = {0};
        struct dp_tracker_config tc;
        struct dp_tracker *tracker;
        struct dp_replay *rp;
        struct dp_counter_values total = {0}, c;
        const char *which;
        size_t lines;
        int targets;

        lines = read_script(&expected);
        ck_assert_int_eq(dp_perf_data_open(path, &data), 0);
        dp_tracker_config_init(&tc);
        ck_assert_int_eq(dp_tracker_new(&tc, &tracker), 0);
        ck_assert_int_eq(dp_replay_new(&dp_source_pagefault, tracker, false, &rp), 0);
        dp_replay_set_sample_hook(rp, on_sample, &got);

        if (plan) {
                targets = dp_replay_plan_targets(rp, data);
                ck_assert_int_gt(targets, 0);
        }
        ck_assert_int_eq(dp_replay_run(rp, data), 0);
        if (plan)
                ck_assert_uint_eq(dp_tracker_nr_targets(tracker), (size_t) targets);
        else
                ck_assert_uint_gt(dp_tracker_nr_targets(tracker), 0);

        for (size_t cpu = 0; cpu < dp_replay_nr_cpus(rp); cpu++) {
                dp_replay_counters(rp, cpu, &c);
                ck_assert_msg(dp_counters_check(&c, &which) == 0, "CPU%zu: %s", cpu, which);
                dp_counters_sum(&total, &c);
        }
        /* Every record perf script shows was a callback; every valid one reached the tracker. */
        ck_assert_uint_eq(total.v[DP_C_CALLBACK], lines);
        ck_assert_uint_eq(total.v[DP_C_VALID], expected.n);
        ck_assert_uint_eq(total.v[DP_C_DEQUEUE], expected.n);
        ck_assert_uint_eq(dp_counters_in_flight(&total), 0);
        /* Targets come from the capture, so every valid sample has its region. */
        ck_assert_uint_eq(total.v[DP_C_MATCH], expected.n);
        ck_assert_uint_gt(total.v[DP_C_UPDATE], 0);

        /* Same samples: pid, tid, cpu and address, one for one. */
        ck_assert_uint_eq(got.n, expected.n);
        qsort(got.v, got.n, sizeof(*got.v), key_cmp);
        qsort(expected.v, expected.n, sizeof(*expected.v), key_cmp);
        for (size_t i = 0; i < got.n; i++)
                ck_assert_msg(key_cmp(&got.v[i], &expected.v[i]) == 0,
                              "sample %zu differs: %u/%u cpu %u %#" PRIx64 " vs %u/%u cpu %u %#" PRIx64, i,
                              got.v[i].pid, got.v[i].tid, got.v[i].cpu, got.v[i].addr, expected.v[i].pid,
                              expected.v[i].tid, expected.v[i].cpu, expected.v[i].addr);

        /* And so the same count per page. */
        for (size_t i = 0, j = 0; i < got.n; i = j) {
                size_t n_got = 0, n_expected = 0;

                for (j = i; j < got.n && got.v[j].addr >> 12 == got.v[i].addr >> 12; j++)
                        n_got++;
                for (size_t k = i; k < expected.n && expected.v[k].addr >> 12 == got.v[i].addr >> 12; k++)
                        n_expected++;
                ck_assert_uint_eq(n_got, n_expected);
        }

        dp_replay_free(rp);
        dp_tracker_free(tracker);
        free(got.v);
        free(expected.v);
        free(path);
}

START_TEST(test_replay_agrees_with_perf_script) {
        check_agreement(true);
}
END_TEST

/* One pass, targets grown as their samples come: the same samples, all matched. */
START_TEST(test_replay_one_pass_agrees_with_perf_script) {
        check_agreement(false);
}
END_TEST

static int pid_cmp(const void *a, const void *b) {
        const struct key *x = a, *y = b;

        return (x->pid > y->pid) - (x->pid < y->pid);
}

struct aggregations {
        uint32_t tgid;
        size_t n;
        uint64_t last_end_ns;
        bool increasing;
};

static void on_aggregation(const struct dp_tracker *t, void *userdata) {
        struct aggregations *a = userdata;
        uint64_t end = dp_tracker_window_start_ns(t);
        const struct dp_region *regions;
        size_t n;

        if (end <= a->last_end_ns)
                a->increasing = false;
        a->last_end_ns = end;
        a->n++;
        ck_assert_int_eq(dp_tracker_target_regions(t, a->tgid, &regions, &n), 0);
        ck_assert_uint_gt(n, 0);
}

START_TEST(test_replay_aggregation_hook_and_busiest_target) {
        char *path = testdata("pagefault-system.perf.data");
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        struct aggregations a = { .increasing = true };
        struct keys script = {0};
        struct dp_tracker_config tc;
        struct dp_tracker *tracker;
        struct dp_replay *rp;
        uint32_t pid, busiest = 0;
        uint64_t samples, most = 0;

        /* The busiest process by perf script's own count. */
        read_script(&script);
        qsort(script.v, script.n, sizeof(*script.v), pid_cmp);
        for (size_t i = 0, j; i < script.n; i = j) {
                for (j = i; j < script.n && script.v[j].pid == script.v[i].pid; j++)
                        ;
                if (j - i > most) {
                        most = j - i;
                        busiest = script.v[i].pid;
                }
        }

        ck_assert_int_eq(dp_perf_data_open(path, &data), 0);
        dp_tracker_config_init(&tc);
        ck_assert_int_eq(dp_tracker_new(&tc, &tracker), 0);
        ck_assert_int_eq(dp_replay_new(NULL, tracker, false, &rp), 0);
        ck_assert_int_eq(dp_replay_busiest_target(rp, &pid, &samples), -ENOENT);
        ck_assert_int_gt(dp_replay_plan_targets(rp, data), 1);
        ck_assert_int_eq(dp_replay_busiest_target(rp, &pid, &samples), 0);
        ck_assert_uint_eq(pid, busiest);
        ck_assert_uint_eq(samples, most);

        a.tgid = pid;
        dp_replay_set_aggregation_hook(rp, on_aggregation, &a);
        ck_assert_int_eq(dp_replay_run(rp, data), 0);
        /* Every aggregation seen once, each ending later than the one before;
         * the capture is 0.57 s long and an aggregation 100 ms. */
        ck_assert_uint_eq(a.n, dp_tracker_nr_aggregations(tracker));
        ck_assert_uint_ge(a.n, 5);
        ck_assert_uint_le(a.n, 7);
        ck_assert(a.increasing);

        dp_replay_free(rp);
        dp_tracker_free(tracker);
        free(script.v);
        free(path);
}
END_TEST

START_TEST(test_replay_truncated_capture_counts_what_it_read) {
        char *path = testdata("pagefault-system.perf.data");
        FILE *f = fopen(path, "re");
        _cleanup_free_ uint8_t *buf = malloc(4 << 20);
        struct dp_perf_data *data = NULL;
        struct dp_tracker_config tc;
        struct dp_tracker *tracker;
        struct dp_replay *rp;
        struct dp_counter_values c;
        size_t size;

        ck_assert_ptr_nonnull(f);
        size = fread(buf, 1, 4 << 20, f);
        fclose(f);
        ck_assert_uint_gt(size, 100000);
        /* A capture cut in the data section: either refused at open, or replayed up to the cut. */
        if (dp_perf_data_open_memory(buf, size / 2, &data) == 0) {
                dp_tracker_config_init(&tc);
                ck_assert_int_eq(dp_tracker_new(&tc, &tracker), 0);
                ck_assert_int_eq(dp_replay_new(NULL, tracker, false, &rp), 0);
                ck_assert_int_le(dp_replay_run(rp, data), 0);
                for (size_t cpu = 0; cpu < dp_replay_nr_cpus(rp); cpu++) {
                        dp_replay_counters(rp, cpu, &c);
                        ck_assert_int_eq(dp_counters_check(&c, NULL), 0);
                }
                dp_replay_free(rp);
                dp_tracker_free(tracker);
                dp_perf_data_free(data);
        }
        free(path);
}
END_TEST

/* A capture of page-fault samples with the physical addresses @phys: one
 * attr, IP TID TIME ADDR CPU PHYS_ADDR, laid out as perf writes it. */
static size_t phys_capture(const uint64_t *phys, size_t n, uint8_t *buf, size_t cap) {
        const size_t ids = 104, attrs = ids + 8, data = attrs + 128 + 16, sample = 8 + 6 * 8;
        struct perf_event_attr attr = {
                .type = PERF_TYPE_SOFTWARE,
                .size = 128,
                .config = PERF_COUNT_SW_PAGE_FAULTS,
                .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                               PERF_SAMPLE_CPU | PERF_SAMPLE_PHYS_ADDR,
        };
        uint64_t header[7] = { 0, 104, 128 + 16, attrs, 128 + 16, data, n * sample };
        uint64_t id_section[2] = { ids, 8 }, id = 1;

        ck_assert_uint_le(data + n * sample, cap);
        memset(buf, 0, data + n * sample);
        memcpy(header, "PERFILE2", 8);
        memcpy(buf, header, sizeof(header));
        memcpy(buf + ids, &id, 8);
        memcpy(buf + attrs, &attr, DP_MIN(sizeof(attr), (size_t) 128));
        memcpy(buf + attrs + 128, id_section, sizeof(id_section));
        for (size_t i = 0; i < n; i++) {
                struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = (uint16_t) sample };
                uint64_t body[6] = { 0x401000, 42 | (uint64_t) 42 << 32, 1000000 * (i + 1), 0x7f0000001000, 0,
                                     phys[i] };
                uint8_t *p = buf + data + i * sample;

                memcpy(p, &h, sizeof(h));
                memcpy(p + sizeof(h), body, sizeof(body));
        }
        return data + n * sample;
}

/* Found by fuzz-perf-data: a physical address in the last 2 MiB of the
 * address space gave a target range whose end wrapped to 0, which the
 * tracker refuses: the whole replay failed with EINVAL. */
START_TEST(test_replay_top_of_address_space) {
        static const uint64_t phys[] = { 0x100000000, 0xffffffffffffe000, 0x100000040, UINT64_MAX };
        uint8_t buf[1024];
        size_t size = phys_capture(phys, DP_ARRAY_SIZE(phys), buf, sizeof(buf));

        for (int plan = 0; plan < 2; plan++) {
                _cleanup_perf_data_ struct dp_perf_data *data = NULL;
                struct dp_tracker_config tc;
                struct dp_tracker *tracker;
                struct dp_replay *rp;
                struct dp_counter_values c;

                ck_assert_int_eq(dp_perf_data_open_memory(buf, size, &data), 0);
                dp_tracker_config_init(&tc);
                tc.mode = DP_TRACKER_PADDR;
                ck_assert_int_eq(dp_tracker_new(&tc, &tracker), 0);
                ck_assert_int_eq(dp_replay_new(NULL, tracker, true, &rp), 0);
                if (plan)
                        ck_assert_int_eq(dp_replay_plan_targets(rp, data), 1);
                ck_assert_int_eq(dp_replay_run(rp, data), 0);
                ck_assert_uint_eq(dp_tracker_nr_targets(tracker), 1);
                ck_assert_uint_eq(dp_replay_nr_cpus(rp), 1);
                dp_replay_counters(rp, 0, &c);
                ck_assert_int_eq(dp_counters_check(&c, NULL), 0);
                ck_assert_uint_eq(c.v[DP_C_CALLBACK], DP_ARRAY_SIZE(phys));
                ck_assert_uint_eq(c.v[DP_C_DEQUEUE], DP_ARRAY_SIZE(phys));
                /* All but the last page of the address space lie in the target
                 * (ranges end on a page boundary, and cannot end at 2^64). */
                ck_assert_uint_eq(c.v[DP_C_MATCH] + c.v[DP_C_MISS_REGION], DP_ARRAY_SIZE(phys) - 1);
                ck_assert_uint_eq(c.v[DP_C_MISS_BOUND], 1);
                dp_replay_free(rp);
                dp_tracker_free(tracker);
        }
}
END_TEST

int main(void) {
        Suite *s = suite_create("replay");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_replay_agrees_with_perf_script);
        tcase_add_test(tc, test_replay_one_pass_agrees_with_perf_script);
        tcase_add_test(tc, test_replay_aggregation_hook_and_busiest_target);
        tcase_add_test(tc, test_replay_truncated_capture_counts_what_it_read);
        tcase_add_test(tc, test_replay_top_of_address_space);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
