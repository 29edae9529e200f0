/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the AUX area (lib/perf/aux-ring.c) as the ring reader drives it
 * (lib/queue/ring-reader.c): PERF_RECORD_AUX stretches anywhere relative to the
 * consumed tail, with any flags, between task-switch, COMM and ITRACE_START
 * records that say whose SPE records follow.  Input:
 *
 *   byte 0     bits 0-2 AUX area size (64 << n), bit 3 want_phys, bit 4 an
 *              SPE clock, bit 5 sample_id_all, bits 6-7 where positions start
 *              (0, a few areas in, just below 2^64, anywhere)
 *   byte 1     queue capacity (2 << (n & 7))
 *   u64        the start position, with bits 6-7 = 3
 *   then       up to 64 records, each a kind byte and its fields (below)
 *   the rest   the AUX area's bytes, repeated to fill it
 *
 * Invariants: dp_aux_ring_span() gives at most two segments that tile the
 * stretch inside the area exactly, or -ESTALE/-ERANGE exactly for stretches
 * the kernel cannot have announced; the reader gives back (aux_tail) exactly
 * the end of the last good stretch and never moves it back; it counts every
 * record, flag, bad range and byte; the current task follows the records; and
 * every SPE record becomes exactly the callback, sample and outcome the
 * decoder makes of it, queued in order.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux-ring.h"
#include "decode-spe.h"
#include "macro.h"
#include "ring-reader.h"

#include "fuzz.h"


#define PAGE 4096
#define DATA_SIZE 16384
#define AUX_MAX 8192
#define RECORDS_MAX 64
#define EXPECTED_MAX 8192
#define READER_CPU 5

enum kind {
        KIND_AUX,               /* a stretch near the tail */
        KIND_AUX_ANYWHERE,      /* a stretch at any position */
        KIND_SWITCH_OUT,        /* PERF_RECORD_SWITCH_CPU_WIDE, switching out: names the next task */
        KIND_SWITCH_IN,         /* ... switching in: the sample_id names the task */
        KIND_SWITCH,            /* PERF_RECORD_SWITCH */
        KIND_COMM,              /* PERF_RECORD_COMM, exec or not */
        KIND_ITRACE_START,
        KIND_SHORT,             /* an AUX or switch record too short for its body */
        _KIND_MAX,
};


/* What the reader must end up with, worked out from the records' meaning. */
struct model {
        uint64_t tail;
        uint32_t pid, tid;
        bool rearm;
        struct dp_aux_counts counts;
        struct dp_counter_values c;
        struct dp_sample valid[EXPECTED_MAX];
        size_t n_valid;
};

static void model_spe(struct model *m, const uint8_t *buf, size_t len, uint64_t offset,
                      const struct dp_spe_context *ctx, bool want_phys) {
        struct dp_spe_iter it;
        struct dp_spe_record rec;

        dp_spe_iter_init(&it, buf, len, offset);
        while (dp_spe_next_record(&it, &rec)) {
                struct dp_sample s = { .cpu = 0xffff };
                enum dp_counter outcome;
                int r = dp_spe_record_to_sample(&rec, ctx, &s);

                CHECK(r == 0 || r == -ENODATA || r == -EBADMSG);
                if (r == -ENODATA) {
                        m->c.v[DP_C_SPE_NO_DATA]++;
                        continue;
                }
                m->c.v[DP_C_CALLBACK]++;
                if (r < 0) {
                        m->c.v[DP_C_NULL]++;
                        continue;
                }
                CHECK(s.cpu == READER_CPU);
                outcome = dp_sample_classify(&s, want_phys);
                if (outcome == DP_C_VALID && s.pid == 0)
                        outcome = DP_C_NULL;
                m->c.v[outcome]++;
                if (outcome == DP_C_VALID) {
                        CHECK(m->n_valid < EXPECTED_MAX);
                        m->valid[m->n_valid++] = s;
                }
        }
        CHECK(it.pos == len);
        m->counts.bytes += len;
        m->counts.incomplete += it.incomplete_records;
        m->c.v[DP_C_CALLBACK] += it.incomplete_records;
        m->c.v[DP_C_NULL] += it.incomplete_records;
        m->c.v[DP_C_SPE_BAD_BYTES] += it.bad_bytes;
}

/* dp_aux_ring_span() against the area's arithmetic. */
static int check_span(const struct dp_aux_ring *ring, uint64_t offset, uint64_t size, struct dp_aux_span *span) {
        int r = dp_aux_ring_span(ring, offset, size, span);
        bool stale = (int64_t) (offset - ring->tail) < 0;
        bool too_far = !stale && (size > ring->size || offset - ring->tail > ring->size - size);
        uint64_t at = offset, total = 0;

        CHECK(r == (stale ? -ESTALE : too_far ? -ERANGE : 0));
        CHECK(span->n <= 2);
        if (r < 0) {
                CHECK(span->n == 0);
                return r;
        }
        CHECK(span->n == (size == 0 ? 0 : (offset & ring->mask) + size > ring->size ? 2 : 1));
        for (unsigned i = 0; i < span->n; i++) {
                const struct dp_aux_segment *seg = &span->seg[i];

                CHECK(seg->size > 0);
                CHECK(seg->offset == at);
                CHECK(seg->data == ring->data + (at & ring->mask));
                CHECK(seg->data + seg->size <= ring->data + ring->size);
                at += seg->size;
                total += seg->size;
        }
        CHECK(total == size);
        return 0;
}

/* One record as written, and what the model needs of it. */
struct planned {
        enum kind kind;
        uint64_t offset, size, flags;   /* AUX */
        struct dp_perf_sample_id sid;   /* the trailer */
        uint32_t pid, tid;              /* the body's task */
        uint16_t misc;
};

struct builder {
        uint8_t *p;
        size_t len;
        const struct dp_perf_layout *layout;
};

/* Appends a record: header, @body_size bytes of body, then the trailer. */
static void *record_add(struct builder *b, uint32_t type, uint16_t misc, size_t body_size, struct fuzz_input *in,
                        struct dp_perf_sample_id *sid) {
        size_t size = sizeof(struct perf_event_header) + body_size + b->layout->id_trailer_size;
        struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t) size };
        uint8_t *rec = b->p + b->len, *t;

        memcpy(rec, &h, sizeof(h));
        memset(rec + sizeof(h), 0, body_size);
        /* The trailer: tid, time, cpu, identifier. */
        *sid = (struct dp_perf_sample_id) {};
        t = rec + sizeof(h) + body_size;
        if (b->layout->sample_id_all) {
                uint64_t cpu = READER_CPU;

                sid->present = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
                sid->pid = fuzz_u8(in);
                sid->tid = sid->pid + fuzz_u8(in);
                sid->time = fuzz_u64(in);
                memcpy(t, &sid->pid, 4);
                memcpy(t + 4, &sid->tid, 4);
                memcpy(t + 8, &sid->time, 8);
                memcpy(t + 16, &cpu, 8);
                memset(t + 24, 0, 8);
        }
        b->len += size;
        return rec + sizeof(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static uint8_t mem[PAGE + DATA_SIZE] __attribute__((aligned(PAGE)));
        static uint8_t area[AUX_MAX] __attribute__((aligned(8)));
        static uint8_t scratch[DP_PERF_RECORD_MAX] __attribute__((aligned(8)));
        static struct model m;
        struct planned plan[RECORDS_MAX];
        struct fuzz_input in = { data, size };
        struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *) mem;
        struct dp_spe_clock clock = { .time_shift = 4, .time_mult = 3, .time_zero = 11, .offset_ns = 7 };
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER,
        };
        struct builder b = { .p = mem + PAGE };
        struct dp_perf_layout layout;
        struct dp_ring_reader r;
        struct dp_spsc *queue;
        const struct dp_sample *s;
        uint8_t ctl, queue_ctl, n_records;
        uint64_t aux_size, start;
        bool want_phys;
        size_t k, n;

        ctl = fuzz_u8(&in);
        queue_ctl = fuzz_u8(&in);
        aux_size = UINT64_C(64) << (ctl & 7);
        want_phys = ctl & 8;
        attr.sample_id_all = !!(ctl & 32);
        switch (ctl >> 6) {
        case 0:
                start = 0;
                break;
        case 1:
                start = 3 * aux_size + fuzz_u8(&in);
                break;
        case 2:
                start = UINT64_C(0) - aux_size - fuzz_u8(&in);
                break;
        default:
                start = fuzz_u64(&in);
                break;
        }
        CHECK(dp_perf_layout_init(&layout, &attr) == 0);
        b.layout = &layout;

        memset(mem, 0, sizeof(mem));
        meta->data_offset = PAGE;
        meta->data_size = DATA_SIZE;
        meta->aux_size = aux_size;
        meta->aux_tail = start;

        m = (struct model) { .tail = start };
        n_records = fuzz_u8(&in) % (RECORDS_MAX + 1);

        /* The records first: the AUX bytes come later in the input, so the
         * model works through them afterwards. */
        for (unsigned i = 0; i < n_records; i++) {
                struct planned *p = &plan[i];
                uint8_t kind = fuzz_u8(&in);
                uint8_t *body;

                *p = (struct planned) { .kind = (enum kind) (kind % _KIND_MAX) };
                switch (p->kind) {
                case KIND_AUX:
                case KIND_AUX_ANYWHERE:
                        if (p->kind == KIND_AUX)
                                p->offset = start + (uint64_t) (int64_t) (int16_t) fuzz_u16(&in);
                        else
                                p->offset = fuzz_u64(&in);
                        p->size = fuzz_u16(&in) % (2 * aux_size + 1);
                        p->flags = kind >> 4;
                        body = record_add(&b, PERF_RECORD_AUX, 0, 24, &in, &p->sid);
                        memcpy(body, &p->offset, 8);
                        memcpy(body + 8, &p->size, 8);
                        memcpy(body + 16, &p->flags, 8);
                        /* Stretches that follow each other, as the kernel writes them. */
                        if (p->kind == KIND_AUX && !(kind & 0x80))
                                start = p->offset + p->size;
                        break;
                case KIND_SWITCH_OUT:
                case KIND_SWITCH_IN:
                case KIND_ITRACE_START:
                case KIND_COMM:
                        p->pid = fuzz_u8(&in);
                        p->tid = p->pid + fuzz_u8(&in);
                        p->misc = p->kind == KIND_SWITCH_OUT ? PERF_RECORD_MISC_SWITCH_OUT :
                                  p->kind == KIND_COMM && (kind & 0x80) ? PERF_RECORD_MISC_COMM_EXEC : 0;
                        body = record_add(&b,
                                          p->kind == KIND_ITRACE_START ? PERF_RECORD_ITRACE_START :
                                          p->kind == KIND_COMM ? PERF_RECORD_COMM : PERF_RECORD_SWITCH_CPU_WIDE,
                                          p->misc, p->kind == KIND_COMM ? 24 : 8, &in, &p->sid);
                        memcpy(body, &p->pid, 4);
                        memcpy(body + 4, &p->tid, 4);
                        break;
                case KIND_SWITCH:
                        p->misc = kind & 0x80 ? PERF_RECORD_MISC_SWITCH_OUT : 0;
                        record_add(&b, PERF_RECORD_SWITCH, p->misc, 0, &in, &p->sid);
                        break;
                case KIND_SHORT:
                        /* No body and no trailer: too short for any of them. */
                        p->misc = kind & 0x80;
                        memcpy(b.p + b.len,
                               &(struct perf_event_header) { .type = (kind & 0x80) ? PERF_RECORD_AUX :
                                                                                     PERF_RECORD_SWITCH_CPU_WIDE,
                                                             .size = 8 },
                               8);
                        b.len += 8;
                        break;
                case _KIND_MAX:
                        break;
                }
        }
        meta->data_head = b.len;

        /* The AUX area: the rest of the input, repeated. */
        memset(area, 0, aux_size);
        if (in.left > 0)
                for (uint64_t i = 0; i < aux_size; i++)
                        area[i] = in.p[i % in.left];

        /* The model. */
        {
                /* Its own control page: releasing must not move the reader's tail. */
                static struct perf_event_mmap_page model_meta;
                struct dp_aux_ring model_ring = {
                        .meta = &model_meta, .data = area, .size = aux_size, .mask = aux_size - 1, .tail = m.tail,
                };

                for (unsigned i = 0; i < n_records; i++) {
                        const struct planned *p = &plan[i];
                        struct dp_aux_span span;

                        switch (p->kind) {
                        case KIND_AUX:
                        case KIND_AUX_ANYWHERE: {
                                struct dp_spe_context ctx = {
                                        .pid = m.pid,
                                        .tid = m.tid,
                                        .cpu = READER_CPU,
                                        .time = (p->sid.present & PERF_SAMPLE_TIME) ? p->sid.time : 0,
                                        .clock = (ctl & 16) ? &clock : NULL,
                                };

                                m.counts.records++;
                                m.c.v[DP_C_AUX_TRUNCATED] += !!(p->flags & DP_AUX_FLAG_TRUNCATED);
                                m.c.v[DP_C_AUX_PARTIAL] += !!(p->flags & DP_AUX_FLAG_PARTIAL);
                                m.c.v[DP_C_AUX_COLLISION] += !!(p->flags & DP_AUX_FLAG_COLLISION);
                                m.counts.overwrite += !!(p->flags & DP_AUX_FLAG_OVERWRITE);
                                m.rearm |= !!(p->flags & DP_AUX_FLAG_TRUNCATED);
                                if (check_span(&model_ring, p->offset, p->size, &span) < 0) {
                                        m.counts.bad_range++;
                                        m.c.v[DP_C_BAD_RECORD]++;
                                        break;
                                }
                                for (unsigned j = 0; j < span.n; j++)
                                        model_spe(&m, span.seg[j].data, span.seg[j].size, span.seg[j].offset,
                                                  &ctx, want_phys);
                                /* A good stretch starts at or after the tail: its end is the new tail. */
                                dp_aux_ring_release(&model_ring, p->offset + p->size);
                                CHECK(model_ring.tail == p->offset + p->size);
                                break;
                        }
                        case KIND_SWITCH_OUT:
                        case KIND_ITRACE_START:
                                m.pid = p->pid;
                                m.tid = p->tid;
                                break;
                        case KIND_COMM:
                                if (p->misc & PERF_RECORD_MISC_COMM_EXEC) {
                                        m.pid = p->pid;
                                        m.tid = p->tid;
                                }
                                break;
                        case KIND_SWITCH_IN:
                        case KIND_SWITCH:
                                /* A switch in: the trailer's task is the one now running. */
                                if (!(p->misc & PERF_RECORD_MISC_SWITCH_OUT) && (p->sid.present & PERF_SAMPLE_TID)) {
                                        m.pid = p->sid.pid;
                                        m.tid = p->sid.tid;
                                }
                                break;
                        case KIND_SHORT:
                                m.c.v[DP_C_BAD_RECORD]++;
                                break;
                        case _KIND_MAX:
                                break;
                        }
                }
                m.tail = model_ring.tail;
        }

        /* The reader. */
        CHECK(dp_spsc_new((size_t) 2 << (queue_ctl & 7), &queue) == 0);
        CHECK(dp_ring_reader_init(&r, &attr, &dp_source_spe, queue, READER_CPU, want_phys) == 0);
        CHECK(dp_perf_ring_init(&r.ring, meta, PAGE, DATA_SIZE, scratch) == 0);
        CHECK(dp_ring_reader_attach_aux(&r, meta, area, aux_size) == 0);
        if (ctl & 16)
                r.aux.clock = &clock;
        CHECK(dp_ring_reader_drain(&r) == n_records);

        CHECK(meta->data_tail == meta->data_head);
        CHECK(meta->aux_tail == m.tail);
        CHECK(r.aux.ring.tail == m.tail);
        CHECK(r.aux.pid == m.pid && r.aux.tid == m.tid);
        CHECK(r.aux.rearm == m.rearm);
        CHECK(memcmp(&r.aux.counts, &m.counts, sizeof(m.counts)) == 0);
        for (enum dp_counter c = DP_C_CALLBACK; c <= DP_C_INV_PHYS; c++)
                CHECK(r.counters.v[c] == m.c.v[c]);
        for (enum dp_counter c = DP_C_AUX_TRUNCATED; c < _DP_C_MAX; c++)
                CHECK(r.counters.v[c] == m.c.v[c]);
        CHECK(r.counters.v[DP_C_BAD_RECORD] == m.c.v[DP_C_BAD_RECORD]);
        CHECK(dp_counters_check(&r.counters, NULL) == 0);

        k = 0;
        while ((n = dp_spsc_peek(queue, &s)) > 0) {
                for (size_t i = 0; i < n; i++, k++) {
                        CHECK(k < m.n_valid);
                        CHECK(memcmp(&s[i], &m.valid[k], sizeof(s[i])) == 0);
                        CHECK(s[i].vaddr != 0 && s[i].vaddr >> 63 == 0 && s[i].pid != 0);
                }
                dp_spsc_consume(queue, n);
        }
        CHECK(k == r.counters.v[DP_C_ENQUEUE]);
        CHECK(k + r.counters.v[DP_C_OVERFLOW] == m.n_valid);
        dp_spsc_free(queue);
        return 0;
}
