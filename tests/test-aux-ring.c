/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The AUX area protocol on in-memory images (stretches across the wrap point,
 * stale and impossible stretches, aux_tail release), an SPE producer that pads
 * like the driver, and the ring reader turning PERF_RECORD_AUX into samples
 * through the classify -> queue path. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "aux-ring.h"
#include "perf-event.h"
#include "ring-reader.h"

#include "check-main.h"

#define PAGE 4096
#define DATA (2 * PAGE)
#define AUX_SIZE 4096
#define MAX_RECORD 64           /* the driver pads when less than a record's worth is left */

/* ---- SPE records ---- */

struct spe_rec {
        uint64_t va_payload;    /* 0: no VA packet */
        uint8_t op_header, op_payload;
        int64_t context;        /* < 0: none */
        uint64_t ts;            /* 0: closed by END */
        uint64_t pa;            /* 0: none */
        bool stray_byte;        /* a byte that starts no packet, inside the record */
};

static size_t spe_build(uint8_t *out, const struct spe_rec *r) {
        size_t n = 0;

#define PUT(b) (out[n++] = (uint8_t) (b))
#define PUT_LE(v, k) for (unsigned _i = 0; _i < (k); _i++) PUT((uint64_t) (v) >> (8 * _i))
        PUT(0xb0);
        PUT_LE(0x4000000000400000ull, 8);       /* PC, EL2 */
        PUT(r->op_header);
        PUT(r->op_payload);
        if (r->stray_byte)
                PUT(0x0f);
        PUT(0x98);
        PUT_LE(77, 2);                          /* total latency */
        if (r->va_payload) {
                PUT(0xb2);
                PUT_LE(r->va_payload, 8);
        }
        if (r->pa) {
                PUT(0xb3);
                PUT_LE(r->pa, 8);
        }
        if (r->context >= 0) {
                PUT(0x64);
                PUT_LE(r->context, 4);
        }
        if (r->ts) {
                PUT(0x71);
                PUT_LE(r->ts, 8);
        } else
                PUT(0x01);
#undef PUT_LE
#undef PUT
        ck_assert_uint_le(n, MAX_RECORD);
        return n;
}

static struct spe_rec load_at(uint64_t va) {
        return (struct spe_rec) { .va_payload = va, .op_header = 0x49, .context = -1 };
}

/* Writes like the driver: records never straddle the end of the area. */
struct producer {
        uint8_t *area;
        uint64_t head;
};

static void produce(struct producer *p, const struct spe_rec *r) {
        uint8_t rec[MAX_RECORD];
        size_t n = spe_build(rec, r);
        uint64_t off = p->head & (AUX_SIZE - 1);

        if (AUX_SIZE - off < MAX_RECORD) {
                memset(p->area + off, 0x00, AUX_SIZE - off);
                p->head += AUX_SIZE - off;
                off = 0;
        }
        memcpy(p->area + off, rec, n);
        p->head += n;
}

/* ---- the protocol ---- */

static void set_header(void *record, uint32_t type, uint16_t size) {
        struct perf_event_header h = { .type = type, .size = size };

        memcpy(record, &h, sizeof(h));
}

static uint64_t aux_record[1 + 3 + 3];  /* header, body, TID|TIME|CPU trailer */

static const struct perf_event_header *make_aux_record(uint64_t offset, uint64_t size, uint64_t flags,
                                                       uint64_t time) {
        struct perf_event_header *h = (void *) aux_record;

        memset(aux_record, 0, sizeof(aux_record));
        h->type = PERF_RECORD_AUX;
        h->size = sizeof(aux_record);
        aux_record[1] = offset;
        aux_record[2] = size;
        aux_record[3] = flags;
        aux_record[4] = 99 | (100ull << 32);    /* pid, tid */
        aux_record[5] = time;
        aux_record[6] = 3;                      /* cpu */
        return h;
}

START_TEST(test_parse_aux) {
        const struct perf_event_header *h = make_aux_record(0x1000, 0x200, DP_AUX_FLAG_PARTIAL, 5);
        struct dp_aux_record a;

        ck_assert_int_eq(dp_perf_parse_aux(h, h->size, &a), 0);
        ck_assert_uint_eq(a.offset, 0x1000);
        ck_assert_uint_eq(a.size, 0x200);
        ck_assert_uint_eq(a.flags, DP_AUX_FLAG_PARTIAL);
        ck_assert_int_eq(dp_perf_parse_aux(h, 24, &a), -EBADMSG);       /* size disagrees with the header */
        set_header(aux_record, PERF_RECORD_AUX, 24);
        ck_assert_int_eq(dp_perf_parse_aux(aux_record, 24, &a), -EBADMSG);      /* too short for the body */
        set_header(aux_record, PERF_RECORD_LOST, 32);
        ck_assert_int_eq(dp_perf_parse_aux(aux_record, 32, &a), -EBADMSG);
        ck_assert_int_eq(dp_perf_parse_aux(NULL, 32, &a), -EBADMSG);
}
END_TEST

START_TEST(test_init_span_release) {
        static uint8_t area[AUX_SIZE];
        struct perf_event_mmap_page meta = {};
        struct dp_aux_ring ring;
        struct dp_aux_span span;
        const uint64_t T = 5 * AUX_SIZE + 1000;

        ck_assert_int_eq(dp_aux_ring_init(&ring, &meta, area, 3000), -EINVAL);
        meta.aux_size = 2 * AUX_SIZE;
        ck_assert_int_eq(dp_aux_ring_init(&ring, &meta, area, AUX_SIZE), -EINVAL);
        meta.aux_size = AUX_SIZE;
        meta.aux_tail = T;              /* a reader that restarts continues where the last one was */
        ck_assert_int_eq(dp_aux_ring_init(&ring, &meta, area, AUX_SIZE), 0);
        ck_assert_uint_eq(ring.tail, T);

        /* Inside the area: one segment. */
        ck_assert_int_eq(dp_aux_ring_span(&ring, T + 100, 200, &span), 0);
        ck_assert_uint_eq(span.n, 1);
        ck_assert_ptr_eq(span.seg[0].data, area + 1100);
        ck_assert_uint_eq(span.seg[0].size, 200);
        ck_assert_uint_eq(span.seg[0].offset, T + 100);

        /* Across the end: two, the second from the start of the area. */
        ck_assert_int_eq(dp_aux_ring_span(&ring, 6 * AUX_SIZE - 96, 296, &span), 0);
        ck_assert_uint_eq(span.n, 2);
        ck_assert_ptr_eq(span.seg[0].data, area + AUX_SIZE - 96);
        ck_assert_uint_eq(span.seg[0].size, 96);
        ck_assert_ptr_eq(span.seg[1].data, area);
        ck_assert_uint_eq(span.seg[1].size, 200);
        ck_assert_uint_eq(span.seg[1].offset, 6 * AUX_SIZE);

        /* The whole area from the tail; one byte more is more than the kernel can have kept. */
        ck_assert_int_eq(dp_aux_ring_span(&ring, T, AUX_SIZE, &span), 0);
        ck_assert_uint_eq(span.n, 2);
        ck_assert_uint_eq(span.seg[0].size + span.seg[1].size, AUX_SIZE);
        ck_assert_int_eq(dp_aux_ring_span(&ring, T + 1, AUX_SIZE, &span), -ERANGE);
        ck_assert_uint_eq(span.n, 0);
        ck_assert_int_eq(dp_aux_ring_span(&ring, T, 2 * AUX_SIZE, &span), -ERANGE);
        ck_assert_int_eq(dp_aux_ring_span(&ring, T - 1, 10, &span), -ESTALE);
        ck_assert_int_eq(dp_aux_ring_span(&ring, T + 7, 0, &span), 0);
        ck_assert_uint_eq(span.n, 0);

        /* Release only moves forward, and is what the kernel sees. */
        dp_aux_ring_release(&ring, T + 300);
        ck_assert_uint_eq(meta.aux_tail, T + 300);
        dp_aux_ring_release(&ring, T + 200);
        ck_assert_uint_eq(meta.aux_tail, T + 300);
        ck_assert_uint_eq(ring.tail, T + 300);
        ck_assert_int_eq(dp_aux_ring_span(&ring, T + 100, 200, &span), -ESTALE);

        __atomic_store_n(&meta.aux_head, 6 * AUX_SIZE + 17, __ATOMIC_RELEASE);
        ck_assert_uint_eq(dp_aux_ring_head(&ring), 6 * AUX_SIZE + 17);

        /* Free-running positions near the end of the u64 range still work. */
        meta.aux_tail = UINT64_MAX - 50;
        ck_assert_int_eq(dp_aux_ring_init(&ring, &meta, area, AUX_SIZE), 0);
        ck_assert_int_eq(dp_aux_ring_span(&ring, UINT64_MAX - 50, 100, &span), 0);
        ck_assert_uint_eq(span.n, 2);
        ck_assert_uint_eq(span.seg[0].size, 51);
        ck_assert_uint_eq(span.seg[1].size, 49);
        dp_aux_ring_release(&ring, UINT64_MAX - 50 + 100);
        ck_assert_uint_eq(meta.aux_tail, 49);
}
END_TEST

/* The producer pads, the consumer reads announced stretches of any length
 * (some across the wrap point): every record decodes, in order, whole. */
START_TEST(test_spe_stream_across_wraps) {
        static uint8_t area[AUX_SIZE];
        struct perf_event_mmap_page meta = { .aux_size = AUX_SIZE };
        struct producer p = { .area = area };
        struct dp_aux_ring ring;
        uint64_t next_va = 0x10000, expect_va = 0x10000, announced = 0, wraps = 0;
        unsigned seed = 1;

        ck_assert_int_eq(dp_aux_ring_init(&ring, &meta, area, AUX_SIZE), 0);
        for (int round = 0; round < 2000; round++) {
                int k = 1 + (int) (rand_r(&seed) % 20);
                struct dp_aux_span span;

                for (int i = 0; i < k && p.head + MAX_RECORD * 2 - ring.tail < AUX_SIZE; i++) {
                        struct spe_rec r = load_at(next_va);

                        r.ts = next_va;
                        produce(&p, &r);
                        next_va += 64;
                }
                ck_assert_int_eq(dp_aux_ring_span(&ring, announced, p.head - announced, &span), 0);
                wraps += span.n == 2;
                for (unsigned s = 0; s < span.n; s++) {
                        struct dp_spe_iter it;
                        struct dp_spe_record rec;

                        dp_spe_iter_init(&it, span.seg[s].data, span.seg[s].size, span.seg[s].offset);
                        while (dp_spe_next_record(&it, &rec)) {
                                ck_assert(rec.have & DP_SPE_HAVE_DATA_VA);
                                ck_assert_uint_eq(rec.va_payload, expect_va);
                                ck_assert_uint_eq(rec.timestamp, expect_va);
                                expect_va += 64;
                        }
                        ck_assert_uint_eq(it.bad_bytes, 0);
                        ck_assert_uint_eq(it.incomplete_records, 0);
                }
                announced = p.head;
                dp_aux_ring_release(&ring, announced);
        }
        ck_assert_uint_eq(expect_va, next_va);
        ck_assert_uint_gt(p.head, 50 * AUX_SIZE);
        ck_assert_uint_gt(wraps, 10);
        ck_assert_uint_eq(meta.aux_tail, p.head);
}
END_TEST

/* ---- the reader ---- */

struct fake {
        uint8_t *mem;                   /* control page + data ring */
        struct perf_event_mmap_page *meta;
        uint8_t *data;
        uint64_t head;
        uint8_t aux[AUX_SIZE];
        struct producer prod;
        uint8_t scratch[DP_PERF_RECORD_MAX] __attribute__((aligned(8)));
};

static int no_decode(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                     struct dp_sample *out) {
        (void) ps;
        (void) context;
        (void) out;
        return -ENODATA;
}

static const struct dp_source test_spe = {
        .name = "spe-test",
        .pmu = "arm_spe_0",
        .hardware = true,
        .decode = no_decode,
        .aux_format = DP_AUX_ARM_SPE,
};

static const struct dp_source test_plain = {
        .name = "plain-test",
        .pmu = "software",
        .decode = no_decode,
};

static void ring_write(struct fake *f, const void *rec, size_t size) {
        for (size_t i = 0; i < size; i++)
                f->data[(f->head + i) % DATA] = ((const uint8_t *) rec)[i];
        f->head += size;
        __atomic_store_n(&f->meta->data_head, f->head, __ATOMIC_RELEASE);
}

static void write_aux(struct fake *f, uint64_t offset, uint64_t size, uint64_t flags, uint64_t time) {
        const struct perf_event_header *h = make_aux_record(offset, size, flags, time);

        ring_write(f, h, h->size);
}

/* What perf_aux_output_end() does: the AUX record, then aux_head. */
static void announce(struct fake *f, uint64_t from, uint64_t flags, uint64_t time) {
        write_aux(f, from, f->prod.head - from, flags, time);
        __atomic_store_n(&f->meta->aux_head, f->prod.head, __ATOMIC_RELEASE);
}

static void empty_queue(struct dp_spsc *q) {
        const struct dp_sample *s;
        size_t n;

        while ((n = dp_spsc_peek(q, &s)) > 0)
                dp_spsc_consume(q, n);
}

static void switch_to(struct fake *f, uint32_t pid, uint32_t tid) {
        uint64_t rec[1 + 1 + 3] = {};
        struct perf_event_header *h = (void *) rec;

        h->type = PERF_RECORD_SWITCH_CPU_WIDE;
        h->misc = PERF_RECORD_MISC_SWITCH_OUT;
        h->size = sizeof(rec);
        rec[1] = pid | (uint64_t) tid << 32;    /* the next task */
        ring_write(f, rec, sizeof(rec));
}

static struct fake *fake_new(struct dp_ring_reader *r, struct dp_spsc **q, const struct dp_source *source,
                             bool want_phys) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
                .sample_id_all = 1,
        };
        struct fake *f = calloc(1, sizeof(*f));

        ck_assert_ptr_nonnull(f);
        f->mem = aligned_alloc(PAGE, PAGE + DATA);
        ck_assert_ptr_nonnull(f->mem);
        memset(f->mem, 0, PAGE + DATA);
        f->meta = (struct perf_event_mmap_page *) f->mem;
        f->meta->data_offset = PAGE;
        f->meta->data_size = DATA;
        f->meta->aux_offset = PAGE + DATA;
        f->meta->aux_size = AUX_SIZE;
        f->data = f->mem + PAGE;
        f->prod.area = f->aux;

        ck_assert_int_eq(dp_spsc_new(64, q), 0);
        ck_assert_int_eq(dp_ring_reader_init(r, &attr, source, *q, 3, want_phys), 0);
        ck_assert_int_eq(dp_perf_ring_init(&r->ring, f->meta, PAGE, DATA, f->scratch), 0);
        return f;
}

static void fake_free(struct fake *f, struct dp_spsc *q) {
        dp_spsc_free(q);
        free(f->mem);
        free(f);
}

/* The published AUX counters, all five, so that a stretch bumps exactly the ones it should. */
static void assert_aux_counters(const struct dp_counter_values *c, uint64_t truncated, uint64_t partial,
                                uint64_t collision, uint64_t bad_bytes, uint64_t no_data) {
        ck_assert_uint_eq(c->v[DP_C_AUX_TRUNCATED], truncated);
        ck_assert_uint_eq(c->v[DP_C_AUX_PARTIAL], partial);
        ck_assert_uint_eq(c->v[DP_C_AUX_COLLISION], collision);
        ck_assert_uint_eq(c->v[DP_C_SPE_BAD_BYTES], bad_bytes);
        ck_assert_uint_eq(c->v[DP_C_SPE_NO_DATA], no_data);
}

START_TEST(test_reader_decodes_aux_stretches) {
        struct dp_ring_reader r;
        struct dp_spsc *q;
        struct fake *f = fake_new(&r, &q, &test_spe, false);
        const struct dp_sample *s;
        struct spe_rec rec;
        uint64_t from;
        const char *which;

        ck_assert_int_eq(dp_ring_reader_attach_aux(&r, f->meta, f->aux, AUX_SIZE), 0);

        /* Before any switch record: nobody to attribute a sample without CONTEXT to. */
        from = f->prod.head;
        rec = load_at(0x00007f0000001000ull);
        produce(&f->prod, &rec);
        announce(f, from, 0, 1000);
        ck_assert_uint_eq(dp_ring_reader_drain(&r), 1);
        ck_assert_uint_eq(r.counters.v[DP_C_CALLBACK], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_NULL], 1);
        ck_assert_uint_eq(f->meta->aux_tail, f->prod.head);

        /* A task switches in; fill the area up to near its end (more than the
         * queue holds: overflow, not blocking). */
        switch_to(f, 300, 301);
        from = f->prod.head;
        while ((f->prod.head & (AUX_SIZE - 1)) < AUX_SIZE - 2 * MAX_RECORD) {
                rec = load_at(0x00007f0000002000ull);
                produce(&f->prod, &rec);
        }
        announce(f, from, 0, 1500);
        ck_assert_uint_eq(dp_ring_reader_drain(&r), 2);
        ck_assert_uint_eq(r.counters.v[DP_C_ENQUEUE], 64);
        ck_assert_uint_gt(r.counters.v[DP_C_OVERFLOW], 0);
        ck_assert_int_eq(dp_counters_check(&r.counters, &which), 0);
        empty_queue(q);
        r.counters = (struct dp_counter_values) {};

        /* A mix of records, the last ones across the wrap point. */
        from = f->prod.head;
        rec = load_at(0x00007f0000003000ull);           /* valid, pid from the switch */
        produce(&f->prod, &rec);
        rec = load_at(0x00ffff8000001000ull);           /* a kernel address */
        rec.context = 301;                              /* CONTEXT of the tracked thread */
        produce(&f->prod, &rec);
        rec = (struct spe_rec) { .op_header = 0x4a, .op_payload = 0x02, .context = -1 }; /* a branch */
        produce(&f->prod, &rec);
        rec = load_at(0x00007f0000004000ull);           /* damaged */
        rec.stray_byte = true;
        produce(&f->prod, &rec);
        rec = load_at(0x00007f0000005000ull);           /* a store by another thread, after the wrap */
        rec.op_payload = 0x01;
        rec.context = 555;
        produce(&f->prod, &rec);
        ck_assert_uint_lt(f->prod.head & (AUX_SIZE - 1), from & (AUX_SIZE - 1));
        rec = (struct spe_rec) { .va_payload = 0x5a00000000000000ull, .op_header = 0x49, .context = -1 };
        produce(&f->prod, &rec);                        /* address 0 under a tag */
        announce(f, from, DP_AUX_FLAG_COLLISION, 2000);

        ck_assert_uint_eq(dp_ring_reader_drain(&r), 1);
        ck_assert_uint_eq(r.counters.v[DP_C_CALLBACK], 5);
        ck_assert_uint_eq(r.counters.v[DP_C_VALID], 2);
        ck_assert_uint_eq(r.counters.v[DP_C_KERNEL], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_NULL], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_ADDR_ZERO], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_ENQUEUE], 2);
        /* Exactly the COLLISION flag, the stray byte and the branch, in the published counters. */
        assert_aux_counters(&r.counters, 0, 0, 1, 1, 1);
        ck_assert_uint_eq(r.aux.counts.records, 3);
        ck_assert(!r.aux.rearm);
        ck_assert_int_eq(dp_counters_check(&r.counters, &which), 0);
        ck_assert_uint_eq(f->meta->aux_tail, f->prod.head);
        ck_assert_uint_eq(f->meta->data_tail, f->head);

        ck_assert_uint_eq(dp_spsc_peek(q, &s), 2);
        ck_assert_uint_eq(s[0].vaddr, 0x7f0000003000ull);
        ck_assert_uint_eq(s[0].pid, 300);
        ck_assert_uint_eq(s[0].tid, 301);
        ck_assert_uint_eq(s[0].time, 2000);
        ck_assert_uint_eq(s[0].cpu, 3);
        ck_assert_uint_eq(s[0].latency, 77);
        ck_assert(s[0].flags & DP_SAMPLE_LOAD);
        ck_assert_uint_eq(s[1].vaddr, 0x7f0000005000ull);
        ck_assert_uint_eq(s[1].pid, 555);
        ck_assert(s[1].flags & DP_SAMPLE_STORE);
        fake_free(f, q);
}
END_TEST

START_TEST(test_reader_flags_ranges_and_clock) {
        struct dp_spe_clock clock = { .time_mult = 1, .offset_ns = 1000000 };
        struct dp_ring_reader r;
        struct dp_spsc *q;
        struct fake *f = fake_new(&r, &q, &test_spe, true);
        const struct dp_sample *s;
        struct spe_rec rec;
        uint64_t from;

        ck_assert_int_eq(dp_ring_reader_attach_aux(&r, f->meta, f->aux, AUX_SIZE), 0);
        r.aux.clock = &clock;
        switch_to(f, 300, 301);

        /* want_phys: a record with a PA is valid, one without is inv_phys; TS converted. */
        from = f->prod.head;
        rec = load_at(0x00007f0000001000ull);
        rec.pa = 0x80001000;
        rec.ts = 42;
        produce(&f->prod, &rec);
        rec = load_at(0x00007f0000002000ull);
        produce(&f->prod, &rec);
        /* A record cut off by the end of its stretch; the next stretch holds
         * just its END (which closes nothing) and says TRUNCATED | PARTIAL. */
        rec = load_at(0x00007f0000003000ull);
        produce(&f->prod, &rec);
        write_aux(f, from, f->prod.head - 1 - from, 0, 7);
        write_aux(f, f->prod.head - 1, 1, DP_AUX_FLAG_TRUNCATED | DP_AUX_FLAG_PARTIAL, 8);
        __atomic_store_n(&f->meta->aux_head, f->prod.head, __ATOMIC_RELEASE);

        ck_assert_uint_eq(dp_ring_reader_drain(&r), 3);
        ck_assert_uint_eq(r.counters.v[DP_C_CALLBACK], 3);
        ck_assert_uint_eq(r.counters.v[DP_C_VALID], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_INV_PHYS], 1);
        ck_assert_uint_eq(r.counters.v[DP_C_NULL], 1);
        ck_assert_uint_eq(r.aux.counts.incomplete, 1);
        assert_aux_counters(&r.counters, 1, 1, 0, 0, 0);
        ck_assert(r.aux.rearm);
        ck_assert_int_eq(dp_counters_check(&r.counters, NULL), 0);
        ck_assert_uint_eq(dp_spsc_peek(q, &s), 1);
        ck_assert_uint_eq(s[0].time, 1000042);
        ck_assert_uint_eq(s[0].paddr, 0x80001000);
        ck_assert_uint_eq(f->meta->aux_tail, f->prod.head);

        /* A stretch before the tail, or beyond what the area holds: bad, and aux_tail stays. */
        write_aux(f, f->prod.head - 10, 10, 0, 9);
        write_aux(f, f->prod.head, 2 * AUX_SIZE, 0, 10);
        ck_assert_uint_eq(dp_ring_reader_drain(&r), 2);
        ck_assert_uint_eq(r.aux.counts.bad_range, 2);
        ck_assert_uint_eq(r.counters.v[DP_C_BAD_RECORD], 2);
        assert_aux_counters(&r.counters, 1, 1, 0, 0, 0);        /* unchanged: bad ranges are bad_record */
        ck_assert_uint_eq(f->meta->aux_tail, f->prod.head);
        fake_free(f, q);
}
END_TEST

START_TEST(test_reader_without_aux_area) {
        struct dp_ring_reader r;
        struct dp_spsc *q;
        struct fake *f = fake_new(&r, &q, &test_plain, false);
        struct spe_rec rec = load_at(0x00007f0000001000ull);
        uint64_t rec_short[2] = {};

        /* Only AUX sources take an AUX area. */
        ck_assert_int_eq(dp_ring_reader_attach_aux(&r, f->meta, f->aux, AUX_SIZE), -EINVAL);
        /* AUX records of a reader without one are counted, not decoded; aux_tail is not touched. */
        produce(&f->prod, &rec);
        announce(f, 0, 0, 1);
        /* A switch record too short for its body is a bad record. */
        set_header(rec_short, PERF_RECORD_SWITCH_CPU_WIDE, 8);
        ring_write(f, rec_short, 8);
        ck_assert_uint_eq(dp_ring_reader_drain(&r), 2);
        ck_assert_uint_eq(r.aux.counts.records, 1);
        ck_assert_uint_eq(r.counters.v[DP_C_CALLBACK], 0);
        assert_aux_counters(&r.counters, 0, 0, 0, 0, 0);
        ck_assert_uint_eq(r.counters.v[DP_C_BAD_RECORD], 1);
        ck_assert_uint_eq(f->meta->aux_tail, 0);
        fake_free(f, q);
}
END_TEST

START_TEST(test_aux_map) {
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_PAGE_FAULTS,
                .sample_period = 1,
                .disabled = 1,
        };
        struct perf_event_mmap_page meta = {};
        struct dp_perf_mapping m;
        struct dp_aux_mapping aux;
        int fd, r;

        ck_assert_int_eq(dp_aux_map(-1, &meta, PAGE * 3, 2, &aux), -EINVAL);
        ck_assert_int_eq(dp_aux_map(0, &meta, PAGE * 3, 3, &aux), -EINVAL);
        ck_assert_int_eq(dp_aux_map(0, &meta, PAGE * 3 + 1, 2, &aux), -EINVAL);

        fd = dp_perf_event_open_cpu(&attr, 0, -1);
        if (fd < 0) {
                /* No perf_event_open here (unprivileged CI): the argument checks above still ran. */
                fprintf(stderr, "test_aux_map: perf_event_open: %s, skipping the kernel part\n", strerror(-fd));
                return;
        }
        ck_assert_int_eq(dp_perf_event_map(fd, 2, &m), 0);
        /* A software event has no AUX support: the kernel accepted the offsets
         * (EINVAL otherwise) and got as far as asking the PMU. */
        r = dp_aux_map(fd, m.base, m.length, 2, &aux);
        ck_assert_int_eq(r, -EOPNOTSUPP);
        ck_assert_ptr_null(aux.base);
        ck_assert_uint_eq(((struct perf_event_mmap_page *) m.base)->aux_offset, m.length);
        ck_assert_uint_eq(((struct perf_event_mmap_page *) m.base)->aux_size, 2 * m.page_size);
        dp_aux_unmap(&aux);
        dp_perf_event_unmap(&m);
        close(fd);
}
END_TEST

static Suite *aux_suite(void) {
        Suite *s = suite_create("aux-ring");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_parse_aux);
        tcase_add_test(tc, test_init_span_release);
        tcase_add_test(tc, test_spe_stream_across_wraps);
        tcase_add_test(tc, test_reader_decodes_aux_stretches);
        tcase_add_test(tc, test_reader_flags_ranges_and_clock);
        tcase_add_test(tc, test_reader_without_aux_area);
        tcase_add_test(tc, test_aux_map);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(aux_suite());
}
