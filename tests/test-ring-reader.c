/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The reader stage over synthetic rings: every record ends in exactly one
 * counter, the queue overflows without blocking, loss and throttle records
 * are counted. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ring-reader.h"

#include "check-main.h"

#define PAGE 4096
#define DATA (2 * PAGE)

struct fake_ring {
        uint8_t *mem;
        struct perf_event_mmap_page *meta;
        uint8_t *data;
        uint64_t head;
        uint8_t scratch[DP_PERF_RECORD_MAX] __attribute__((aligned(8)));
};

static void fake_ring_init(struct fake_ring *f) {
        f->mem = aligned_alloc(PAGE, PAGE + DATA);
        ck_assert_ptr_nonnull(f->mem);
        memset(f->mem, 0, PAGE + DATA);
        f->meta = (struct perf_event_mmap_page *) f->mem;
        f->meta->data_offset = PAGE;
        f->meta->data_size = DATA;
        f->data = f->mem + PAGE;
        f->head = 0;
}

static void fake_ring_write(struct fake_ring *f, const void *rec, size_t size) {
        for (size_t i = 0; i < size; i++)
                f->data[(f->head + i) % DATA] = ((const uint8_t *) rec)[i];
        f->head += size;
        __atomic_store_n(&f->meta->data_head, f->head, __ATOMIC_RELEASE);
}

/* A page-fault sample as the kernel writes it for TID|TIME|ADDR|CPU. */
static void write_sample(struct fake_ring *f, uint32_t pid, uint64_t addr, uint16_t size_override) {
        struct {
                struct perf_event_header h;
                uint32_t pid, tid;
                uint64_t time, addr;
                uint32_t cpu, res;
        } rec = {
                .h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(rec) },
                .pid = pid, .tid = pid + 1, .time = 1000, .addr = addr, .cpu = 3,
        };

        /* A header may claim any size; only the record's own bytes are written. */
        if (size_override)
                rec.h.size = size_override;
        fake_ring_write(f, &rec, rec.h.size < sizeof(rec) ? rec.h.size : sizeof(rec));
}

/* sample_id trailer for TID|TIME|CPU: 24 bytes. */
static void write_lost(struct fake_ring *f, uint64_t lost) {
        uint64_t rec[1 + 2 + 3] = {0};
        struct perf_event_header *h = (void *) rec;

        h->type = PERF_RECORD_LOST;
        h->size = sizeof(rec);
        rec[1] = 42;
        rec[2] = lost;
        fake_ring_write(f, rec, sizeof(rec));
}

static void write_throttle(struct fake_ring *f, uint32_t type) {
        uint64_t rec[1 + 3 + 3] = {0};
        struct perf_event_header *h = (void *) rec;

        h->type = type;
        h->size = sizeof(rec);
        fake_ring_write(f, rec, sizeof(rec));
}

/* The page-fault event's attr for @cpu, as the sampler opens it: the plan's one event. */
static int pagefault_attr(const struct dp_source_options *o, int cpu, struct perf_event_attr *attr) {
        struct dp_event_plan plan;
        int r = dp_source_build_events(&dp_source_pagefault, o, cpu, &plan);

        if (r < 0)
                return r;
        ck_assert_uint_eq(plan.n, 1);
        *attr = plan.event[0].attr;
        return 0;
}

static void setup_reader(struct dp_ring_reader *r, struct fake_ring *f, struct dp_spsc *q, bool want_phys) {
        struct dp_source_options o = { .want_phys = want_phys };
        struct perf_event_attr attr;

        ck_assert_int_eq(pagefault_attr(&o, 0, &attr), 0);
        ck_assert_int_eq(dp_ring_reader_init(r, &attr, &dp_source_pagefault, q, 3, want_phys), 0);
        /* The fake rings' records carry no PHYS_ADDR, so test want_phys with the plain layout. */
        if (want_phys) {
                attr.sample_type &= ~(uint64_t) PERF_SAMPLE_PHYS_ADDR;
                ck_assert_int_eq(dp_perf_layout_init(&r->layout, &attr), 0);
        }
        ck_assert_int_eq(dp_perf_ring_init(&r->ring, f->meta, PAGE, DATA, f->scratch), 0);
}

START_TEST(test_every_record_counted_once) {
        struct fake_ring *f = malloc(sizeof(*f));
        struct dp_ring_reader r;
        struct dp_spsc *q;
        const struct dp_sample *s;
        const char *which;

        fake_ring_init(f);
        ck_assert_int_eq(dp_spsc_new(64, &q), 0);
        setup_reader(&r, f, q, false);

        write_sample(f, 100, 0x7f0000001000, 0);
        write_sample(f, 100, 0, 0);                     /* addr_zero */
        write_sample(f, 100, 0xffffffff81000000, 0);    /* kernel */
        write_sample(f, 100, 0x7f0000002000, 32);       /* truncated: null */
        write_lost(f, 7);
        write_throttle(f, PERF_RECORD_THROTTLE);
        write_throttle(f, PERF_RECORD_UNTHROTTLE);
        write_sample(f, 200, 0x7f0000003000, 0);
        ck_assert_uint_eq(dp_ring_reader_drain(&r), 8);

        ck_assert_uint_eq(r.counters.v[DP_C_CALLBACK], 5);
        ck_assert_uint_eq(r.counters.v[DP_C_VALID], 2);
        ck_assert_uint_eq(r.counters.v[DP_C_ADDR_ZERO], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_KERNEL], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_NULL], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_ENQUEUE], 2);
        ck_assert_uint_eq(r.counters.v[DP_C_LOST], 7);
        ck_assert_uint_eq(r.counters.v[DP_C_THROTTLE], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_UNTHROTTLE], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_RING_PEAK], 2);
        ck_assert_int_eq(dp_counters_check(&r.counters, &which), 0);

        /* The kernel got its space back, and the samples are decoded exactly. */
        ck_assert_uint_eq(f->meta->data_tail, f->head);
        ck_assert_uint_eq(dp_spsc_peek(q, &s), 2);
        ck_assert_uint_eq(s[0].pid, 100);
        ck_assert_uint_eq(s[0].tid, 101);
        ck_assert_uint_eq(s[0].vaddr, 0x7f0000001000);
        ck_assert_uint_eq(s[0].cpu, 3);
        ck_assert_uint_eq(s[0].time, 1000);
        ck_assert_uint_eq(s[1].pid, 200);
        dp_spsc_free(q);
        free(f->mem);
        free(f);
}
END_TEST

START_TEST(test_full_queue_overflows_without_blocking) {
        struct fake_ring *f = malloc(sizeof(*f));
        struct dp_ring_reader r;
        struct dp_spsc *q;

        fake_ring_init(f);
        ck_assert_int_eq(dp_spsc_new(4, &q), 0);
        setup_reader(&r, f, q, false);
        for (int i = 0; i < 10; i++)
                write_sample(f, 100, 0x7f0000001000 + i * 4096ull, 0);
        ck_assert_uint_eq(dp_ring_reader_drain(&r), 10);
        ck_assert_uint_eq(r.counters.v[DP_C_ENQUEUE], 4);
        ck_assert_uint_eq(r.counters.v[DP_C_OVERFLOW], 6);
        ck_assert_uint_eq(r.counters.v[DP_C_RING_PEAK], 4);
        ck_assert_int_eq(dp_counters_check(&r.counters, NULL), 0);
        dp_spsc_free(q);
        free(f->mem);
        free(f);
}
END_TEST

START_TEST(test_wrapping_records_and_corrupt_header) {
        struct fake_ring *f = malloc(sizeof(*f));
        struct dp_ring_reader r;
        struct dp_spsc *q;
        uint64_t total = 0;

        fake_ring_init(f);
        ck_assert_int_eq(dp_spsc_new(1024, &q), 0);
        setup_reader(&r, f, q, false);
        /* 40-byte records against an 8 KiB ring: many of them straddle the end. */
        for (int round = 0; round < 50; round++) {
                for (int i = 0; i < 100; i++)
                        write_sample(f, 100, 0x7f0000001000 + i * 4096ull, 0);
                total += dp_ring_reader_drain(&r);
                const struct dp_sample *s;
                size_t n;
                while ((n = dp_spsc_peek(q, &s)) > 0)
                        dp_spsc_consume(q, n);
        }
        ck_assert_uint_eq(total, 5000);
        ck_assert_uint_eq(r.counters.v[DP_C_VALID], 5000);

        /* A header claiming more than there is: counted, and the ring is skipped to head. */
        write_sample(f, 100, 0x7f0000001000, 0);
        write_sample(f, 100, 0x7f0000001000, 4000);
        dp_ring_reader_drain(&r);
        ck_assert_uint_eq(r.counters.v[DP_C_BAD_RECORD], 1);
        ck_assert_uint_eq(f->meta->data_tail, f->head);
        ck_assert_int_eq(dp_counters_check(&r.counters, NULL), 0);
        dp_spsc_free(q);
        free(f->mem);
        free(f);
}
END_TEST

static int decode_generic_copy(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                               struct dp_sample *out) {
        return dp_source_decode_generic(ps, context, out);
}

/* A run of samples taken at once is taken as one by one would: the same
 * counters (overflow included) and the same samples queued, whether the
 * source reads them in place or has them parsed. */
START_TEST(test_run_of_records) {
        const struct dp_source copy = { .name = "copy", .decode = decode_generic_copy };
        const struct dp_source *sources[] = { &dp_source_pagefault, &copy };
        struct rec {
                struct perf_event_header h;
                uint32_t pid, tid;
                uint64_t time, addr;
                uint32_t cpu, res;
        } recs[40];

        for (size_t i = 0; i < DP_ARRAY_SIZE(recs); i++)
                recs[i] = (struct rec) {
                        .h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(struct rec) },
                        .pid = 100 + (uint32_t) i, .tid = 7, .time = 1000 + i, .cpu = (uint32_t) i % 3,
                        .addr = i % 7 == 3 ? 0 : i % 11 == 5 ? 0xffffffff81000000 : 0x7f0000000000 + i * 4096,
                };
        for (size_t k = 0; k < DP_ARRAY_SIZE(sources); k++) {
                struct dp_source_options o = {};
                struct dp_ring_reader one, run;
                struct perf_event_attr attr;
                struct dp_spsc *q1, *q2;
                const struct dp_sample *a, *b;
                size_t n;

                ck_assert_int_eq(dp_spsc_new(16, &q1), 0);
                ck_assert_int_eq(dp_spsc_new(16, &q2), 0);
                ck_assert_int_eq(pagefault_attr(&o, 0, &attr), 0);
                ck_assert_int_eq(dp_ring_reader_init(&one, &attr, sources[k], q1, 3, false), 0);
                ck_assert_int_eq(dp_ring_reader_init(&run, &attr, sources[k], q2, 3, false), 0);
                ck_assert_uint_eq(one.layout.sample_size, sizeof(struct rec));

                for (size_t i = 0; i < DP_ARRAY_SIZE(recs); i++)
                        dp_ring_reader_take_record(&one, &one.layout, &recs[i].h);
                dp_ring_reader_take_records(&run, &run.layout, &recs[0].h, 25);
                dp_ring_reader_take_records(&run, &run.layout, &recs[25].h, DP_ARRAY_SIZE(recs) - 25);
                dp_ring_reader_take_records(&run, &run.layout, &recs[0].h, 0);
                ck_assert_mem_eq(one.counters.v, run.counters.v, sizeof(one.counters.v));
                ck_assert_uint_gt(one.counters.v[DP_C_OVERFLOW], 0);
                ck_assert_uint_gt(one.counters.v[DP_C_ADDR_ZERO], 0);
                ck_assert_uint_gt(one.counters.v[DP_C_KERNEL], 0);

                dp_spsc_publish(q1);
                dp_spsc_publish(q2);
                n = dp_spsc_peek(q1, &a);
                ck_assert_uint_eq(n, 16);
                ck_assert_uint_eq(dp_spsc_peek(q2, &b), n);
                ck_assert_mem_eq(a, b, n * sizeof(*a));
                ck_assert_uint_eq(a[1].cpu, 1);
                ck_assert_uint_eq(a[1].pid, 101);
                dp_spsc_free(q1);
                dp_spsc_free(q2);
        }
}
END_TEST

START_TEST(test_classify) {
        struct dp_sample s = { .vaddr = 0x1000 };

        ck_assert_int_eq(dp_sample_classify(&s, false), DP_C_VALID);
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_INV_PHYS);
        s.flags = DP_SAMPLE_PHYS_VALID;
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_VALID);
        s.vaddr = 0;
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_ADDR_ZERO);
        s.vaddr = 0xffff888000000000ull;
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_KERNEL);
}
END_TEST

START_TEST(test_want_phys_without_physical_address) {
        struct fake_ring *f = malloc(sizeof(*f));
        struct dp_ring_reader r;
        struct dp_spsc *q;

        fake_ring_init(f);
        ck_assert_int_eq(dp_spsc_new(64, &q), 0);
        setup_reader(&r, f, q, true);
        write_sample(f, 100, 0x7f0000001000, 0);
        dp_ring_reader_drain(&r);
        ck_assert_uint_eq(r.counters.v[DP_C_INV_PHYS], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_ENQUEUE], 0);
        ck_assert_int_eq(dp_counters_check(&r.counters, NULL), 0);
        dp_spsc_free(q);
        free(f->mem);
        free(f);
}
END_TEST

START_TEST(test_pagefault_attr) {
        struct dp_source_options o = { .sample_period = 0, .want_phys = true, .wakeup_bytes = 4096 };
        struct perf_event_attr attr;

        ck_assert_int_eq(pagefault_attr(&o, 0, &attr), 0);
        ck_assert_uint_eq(attr.type, PERF_TYPE_SOFTWARE);
        ck_assert_uint_eq(attr.config, PERF_COUNT_SW_PAGE_FAULTS);
        ck_assert_uint_eq(attr.sample_period, 1);
        ck_assert(attr.sample_type & PERF_SAMPLE_ADDR);
        ck_assert(attr.sample_type & PERF_SAMPLE_PHYS_ADDR);
        ck_assert_uint_eq(attr.disabled, 1);
        ck_assert_uint_eq(attr.watermark, 1);
        ck_assert_uint_eq(attr.wakeup_watermark, 4096);
        ck_assert_uint_eq(attr.sample_id_all, 1);
        ck_assert(!dp_source_pagefault.hardware);
        ck_assert_ptr_eq(dp_source_find("pagefault"), &dp_source_pagefault);
        ck_assert_ptr_null(dp_source_find("nonesuch"));
        ck_assert_int_eq(pagefault_attr(&o, -1, &attr), -EINVAL);
}
END_TEST

int main(void) {
        Suite *s = suite_create("ring-reader");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_every_record_counted_once);
        tcase_add_test(tc, test_full_queue_overflows_without_blocking);
        tcase_add_test(tc, test_wrapping_records_and_corrupt_header);
        tcase_add_test(tc, test_run_of_records);
        tcase_add_test(tc, test_classify);
        tcase_add_test(tc, test_want_phys_without_physical_address);
        tcase_add_test(tc, test_pagefault_attr);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
