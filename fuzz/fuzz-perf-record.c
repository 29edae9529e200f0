/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the perf record parsers (lib/perf/perf-record.c), the mmap ring
 * reader (lib/perf/perf-ring.c) and the reader stage (lib/queue/ring-reader.c).  Input:
 *
 *   bytes 0-3  sample_type (the 25 bits we know)
 *   byte 4     bits 0-4 read_format, bit 5 an unknown read_format bit, bit 6
 *              sample_id_all, bit 7 an unknown sample_type bit
 *   byte 5     bit 0 BRANCH_HW_INDEX, bit 1 BRANCH_COUNTERS, bit 2 an unknown
 *              branch bit, bits 3-5 attr.size (full, VER0..VER5, 0), bits 6-7
 *              the source (page fault x2, IBS, PEBS)
 *   byte 6, 7  registers in sample_regs_user / _intr (that many low bits)
 *   byte 8     ring: bits 0-2 data size (64 << n), bit 3 want_phys, bit 4
 *              shape the records, bit 5 a head off the 8-byte grid, bit 6 a
 *              head more than the ring away, bit 7 free-running positions
 *              just below 2^64 (they wrap)
 *   byte 9     where the tail starts in the ring, in 8-byte steps
 *   byte 10    queue capacity (2 << (n & 3))
 *   the rest   records: raw bytes, or (shaped) per record a type byte (bits
 *              0-3 pick the type, bit 4 gives a sample the layout's exact
 *              size, bits 5-7 misc), a size byte (words of body) and the body
 *
 * Invariants: the layout is refused exactly for what we cannot parse and
 * otherwise has the size its bits say; a parsed sample lies inside its
 * record, serialises back to the very same bytes, and decodes the same in
 * place as through the parser; the small parsers fail exactly when the record
 * is too short and read what lies at their offsets; the ring hands out the
 * records of the byte stream in order, wrapped ones whole, stops at the first
 * corrupt header with -EBADMSG and gives everything back; the reader counts
 * one callback per sample, keeps the counter sums, and queues exactly the
 * valid samples, as the slow path decodes them, in order.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "perf-record.h"
#include "perf-ring.h"
#include "ring-reader.h"
#include "source.h"
#include "spsc.h"

#include "fuzz.h"


#define KNOWN_SAMPLE ((UINT64_C(1) << 25) - 1)
#define KNOWN_READ ((UINT64_C(1) << 5) - 1)
#define KNOWN_BRANCH ((UINT64_C(1) << 20) - 1)
#define ID_BITS                                                                         \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |  \
         PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)
#define VARIABLE_BITS                                                                   \
        (PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | \
         PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX)

#define PAGE 4096
#define DATA_MAX 8192
#define STREAM_MAX 16384
#define EXPECTED_MAX 2048

static const struct dp_source *const sources[4] = {
        &dp_source_pagefault, &dp_source_pagefault, &dp_source_ibs, &dp_source_pebs,
};

static const uint32_t attr_sizes[8] = {
        sizeof(struct perf_event_attr), PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER1, PERF_ATTR_SIZE_VER2,
        PERF_ATTR_SIZE_VER3, PERF_ATTR_SIZE_VER4, PERF_ATTR_SIZE_VER5, 0,
};

/* Record types the shaper picks from. */
static const uint32_t shaped_types[16] = {
        PERF_RECORD_SAMPLE, PERF_RECORD_SAMPLE, PERF_RECORD_SAMPLE, PERF_RECORD_SAMPLE,
        PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES, PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE,
        PERF_RECORD_AUX, PERF_RECORD_SWITCH, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_COMM,
        PERF_RECORD_ITRACE_START, PERF_RECORD_MMAP2, 0, 77,
};

static uint64_t low_bits(unsigned n) {
        n %= 65;
        return n == 64 ? UINT64_MAX : (UINT64_C(1) << n) - 1;
}

/* ---- one record ---- */

struct writer {
        uint8_t *p;
        size_t at, cap;
        bool overflow;
};

static void put(struct writer *w, const void *src, size_t n) {
        if (n > w->cap - w->at) {
                w->overflow = true;
                return;
        }
        if (n)
                memcpy(w->p + w->at, src, n);
        w->at += n;
}

static void put_u64(struct writer *w, uint64_t v) {
        put(w, &v, 8);
}

static void put_u32(struct writer *w, uint32_t v) {
        put(w, &v, 4);
}

static void put_regs(struct writer *w, uint64_t mask, uint64_t abi, const uint64_t *regs) {
        put_u64(w, abi);
        if (abi != PERF_SAMPLE_REGS_ABI_NONE)
                put(w, regs, 8 * (size_t) __builtin_popcountll(mask));
}

/* The sample written back in the kernel's field order (perf_output_sample()),
 * an independent statement of the layout the parser must have read. */
static size_t serialise(const struct dp_perf_layout *l, const struct dp_perf_sample *s, const uint8_t *record,
                        bool with_hw_idx, uint8_t *buf, size_t cap) {
        struct writer w = { .p = buf, .cap = cap };
        uint64_t t = l->sample_type;

        put(&w, record, sizeof(struct perf_event_header));
        if (t & PERF_SAMPLE_IDENTIFIER)
                put_u64(&w, s->identifier);
        if (t & PERF_SAMPLE_IP)
                put_u64(&w, s->ip);
        if (t & PERF_SAMPLE_TID) {
                put_u32(&w, s->pid);
                put_u32(&w, s->tid);
        }
        if (t & PERF_SAMPLE_TIME)
                put_u64(&w, s->time);
        if (t & PERF_SAMPLE_ADDR)
                put_u64(&w, s->addr);
        if (t & PERF_SAMPLE_ID)
                put_u64(&w, s->id);
        if (t & PERF_SAMPLE_STREAM_ID)
                put_u64(&w, s->stream_id);
        if (t & PERF_SAMPLE_CPU) {
                put_u32(&w, s->cpu);
                /* The reserved half is not kept: copy it over. */
                put(&w, record + w.at, 4);
        }
        if (t & PERF_SAMPLE_PERIOD)
                put_u64(&w, s->period);
        if (t & PERF_SAMPLE_READ)
                put(&w, s->read, 8 * (size_t) s->read_words);
        if (t & PERF_SAMPLE_CALLCHAIN) {
                put_u64(&w, s->callchain_nr);
                if (s->callchain_nr <= cap)
                        put(&w, s->callchain, 8 * s->callchain_nr);
                else
                        w.overflow = true;
        }
        if (t & PERF_SAMPLE_RAW) {
                put_u32(&w, s->raw_size);
                put(&w, s->raw, s->raw_size);
        }
        if (t & PERF_SAMPLE_BRANCH_STACK) {
                put_u64(&w, s->branch_nr);
                if (with_hw_idx)
                        put_u64(&w, s->branch_hw_idx);
                if (s->branch_nr <= cap) {
                        put(&w, s->branch_entries, 24 * s->branch_nr);
                        if (l->branch_sample_type & DP_PERF_SAMPLE_BRANCH_COUNTERS)
                                put(&w, s->branch_counters, 8 * s->branch_nr);
                } else
                        w.overflow = true;
        }
        if (t & PERF_SAMPLE_REGS_USER)
                put_regs(&w, l->sample_regs_user, s->regs_user_abi, s->regs_user);
        if (t & PERF_SAMPLE_STACK_USER) {
                put_u64(&w, s->stack_user_size);
                if (s->stack_user_size <= cap) {
                        put(&w, s->stack_user, s->stack_user_size);
                        if (s->stack_user_size)
                                put_u64(&w, s->stack_user_dyn_size);
                } else
                        w.overflow = true;
        }
        if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
                put_u64(&w, s->weight);
        if (t & PERF_SAMPLE_DATA_SRC)
                put_u64(&w, s->data_src);
        if (t & PERF_SAMPLE_TRANSACTION)
                put_u64(&w, s->transaction);
        if (t & PERF_SAMPLE_REGS_INTR)
                put_regs(&w, l->sample_regs_intr, s->regs_intr_abi, s->regs_intr);
        if (t & PERF_SAMPLE_PHYS_ADDR)
                put_u64(&w, s->phys_addr);
        if (t & PERF_SAMPLE_CGROUP)
                put_u64(&w, s->cgroup);
        if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
                put_u64(&w, s->data_page_size);
        if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
                put_u64(&w, s->code_page_size);
        if (t & PERF_SAMPLE_AUX) {
                put_u64(&w, s->aux_size);
                if (s->aux_size <= cap)
                        put(&w, s->aux, s->aux_size);
                else
                        w.overflow = true;
        }
        return w.overflow ? SIZE_MAX : w.at;
}

/* @p with @n bytes lies inside the record body, or is NULL for nothing. */
static bool inside(const void *p, uint64_t n, const uint8_t *record, size_t size) {
        const uint8_t *q = p;

        if (n == 0)
                return p == NULL;
        return q >= record + sizeof(struct perf_event_header) && q <= record + size &&
               n <= (uint64_t) (record + size - q);
}

static void check_sample(const struct dp_perf_layout *l, const uint8_t *record, size_t size) {
        const struct perf_event_header *h = (const struct perf_event_header *) record;
        const uint8_t *body = record + sizeof(*h);
        struct dp_perf_sample s;
        struct dp_sample a, b;
        int r, ra, rb;

        memset(&s, 0x5a, sizeof(s));
        r = dp_perf_parse_sample(l, record, size, &s);
        CHECK(r == 0 || r == -EBADMSG);
        if (l->sample_size && size != l->sample_size)
                CHECK(r == -EBADMSG);
        if (r == 0) {
                static uint8_t again[65536 + 8];
                uint64_t regs_user = 8 * (uint64_t) __builtin_popcountll(l->sample_regs_user);
                uint64_t regs_intr = 8 * (uint64_t) __builtin_popcountll(l->sample_regs_intr);
                bool hw = l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX;
                size_t n;

                CHECK(s.present == l->sample_type);
                CHECK(size >= sizeof(*h) + l->fixed_size && size % 8 == 0);
#define AT(off, field, load) CHECK(l->off >= 0 ? s.field == load(body + l->off) : s.field == 0)
                AT(off_identifier, identifier, dp_load_u64);
                AT(off_ip, ip, dp_load_u64);
                AT(off_tid, pid, dp_load_u32);
                AT(off_time, time, dp_load_u64);
                AT(off_addr, addr, dp_load_u64);
                AT(off_id, id, dp_load_u64);
                AT(off_stream_id, stream_id, dp_load_u64);
                AT(off_cpu, cpu, dp_load_u32);
                AT(off_period, period, dp_load_u64);
#undef AT
                CHECK(inside(s.read, 8 * (uint64_t) s.read_words, record, size));
                CHECK(s.callchain_nr <= size && inside(s.callchain, 8 * s.callchain_nr, record, size));
                CHECK(inside(s.raw, s.raw_size, record, size));
                CHECK(s.branch_nr <= size && inside(s.branch_entries, 24 * s.branch_nr, record, size));
                CHECK(inside(s.branch_counters,
                             (l->branch_sample_type & DP_PERF_SAMPLE_BRANCH_COUNTERS) ? 8 * s.branch_nr : 0,
                             record, size));
                CHECK(inside(s.regs_user, s.regs_user_abi ? regs_user : 0, record, size));
                CHECK(inside(s.regs_intr, s.regs_intr_abi ? regs_intr : 0, record, size));
                CHECK(inside(s.stack_user, s.stack_user_size, record, size));
                CHECK(s.stack_user_dyn_size <= s.stack_user_size);
                CHECK(inside(s.aux, s.aux_size, record, size));
                if (!(l->sample_type & PERF_SAMPLE_READ))
                        CHECK(s.read == NULL && s.read_words == 0);
                if (!(l->sample_type & PERF_SAMPLE_RAW))
                        CHECK(s.raw == NULL && s.raw_size == 0);

                /* With HW_INDEX and no entries the parser may have taken the
                 * form without hw_idx; one of the two must give the record. */
                n = serialise(l, &s, record, hw, again, sizeof(again));
                if (n != size && hw && s.branch_nr == 0 && (l->sample_type & PERF_SAMPLE_BRANCH_STACK)) {
                        CHECK(s.branch_hw_idx == 0);
                        n = serialise(l, &s, record, false, again, sizeof(again));
                }
                CHECK(n == size);
                CHECK(memcmp(again, record, size) == 0);
        }

        /* In place (fixed layouts) and through the parser: one answer. */
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        a.cpu = b.cpu = 7;
        ra = dp_source_decode_record(&dp_source_pagefault, NULL, l, h, &a);
        if (r < 0)
                rb = r;
        else {
                if (s.present & PERF_SAMPLE_CPU)
                        b.cpu = (uint16_t) s.cpu;
                rb = dp_source_decode_generic(&s, NULL, &b);
        }
        CHECK(ra == rb);
        CHECK(ra == 0 || ra == -ENODATA || ra == -EBADMSG);
        if (ra != -EBADMSG)
                CHECK(memcmp(&a, &b, sizeof(a)) == 0);
        if (ra == 0) {
                CHECK(a.vaddr == s.addr);
                CHECK(!!(a.flags & DP_SAMPLE_PHYS_VALID) == (s.phys_addr != 0));
        }
}

static void check_other(const struct dp_perf_layout *l, const uint8_t *record, size_t size) {
        const uint8_t *body = record + sizeof(struct perf_event_header);
        const struct perf_event_header *h = (const struct perf_event_header *) record;
        struct dp_perf_sample_id sid;
        struct dp_aux_record aux;
        uint64_t a = 0, b = 0;
        int r;

        r = dp_perf_parse_sample_id(l, record, size, &sid);
        if (!l->sample_id_all)
                CHECK(r == 0 && sid.present == 0);
        else if (size < sizeof(*h) + l->id_trailer_size)
                CHECK(r == -EBADMSG);
        else {
                const uint8_t *p = record + size - l->id_trailer_size;

                CHECK(r == 0);
                CHECK(sid.present == (l->sample_type & ID_BITS));
                CHECK(l->id_trailer_size == 8 * __builtin_popcountll(l->sample_type & ID_BITS));
                if (sid.present & PERF_SAMPLE_TID) {
                        CHECK(sid.pid == dp_load_u32(p) && sid.tid == dp_load_u32(p + 4));
                        p += 8;
                }
                if (sid.present & PERF_SAMPLE_TIME) {
                        CHECK(sid.time == dp_load_u64(p));
                        p += 8;
                }
                if (sid.present & PERF_SAMPLE_ID) {
                        CHECK(sid.id == dp_load_u64(p));
                        p += 8;
                }
                if (sid.present & PERF_SAMPLE_STREAM_ID) {
                        CHECK(sid.stream_id == dp_load_u64(p));
                        p += 8;
                }
                if (sid.present & PERF_SAMPLE_CPU) {
                        CHECK(sid.cpu == dp_load_u32(p));
                        p += 8;
                }
                if (sid.present & PERF_SAMPLE_IDENTIFIER)
                        CHECK(sid.identifier == dp_load_u64(p));
        }

        r = dp_perf_parse_lost(record, size, &a, &b);
        CHECK(r == (size >= 24 ? 0 : -EBADMSG));
        if (r == 0)
                CHECK(a == dp_load_u64(body) && b == dp_load_u64(body + 8));
        r = dp_perf_parse_lost_samples(record, size, &a);
        CHECK(r == (size >= 16 ? 0 : -EBADMSG));
        if (r == 0)
                CHECK(a == dp_load_u64(body));
        r = dp_perf_parse_throttle(record, size, &a, &b);
        CHECK(r == (size >= 32 ? 0 : -EBADMSG));
        if (r == 0)
                CHECK(a == dp_load_u64(body) && b == dp_load_u64(body + 8));
        r = dp_perf_parse_aux(record, size, &aux);
        CHECK(r == ((size >= 32 && h->type == PERF_RECORD_AUX && h->size == size) ? 0 : -EBADMSG));
        if (r == 0)
                CHECK(aux.offset == dp_load_u64(body) && aux.size == dp_load_u64(body + 8) &&
                      aux.flags == dp_load_u64(body + 16));
}

/* ---- the stream of records ---- */

/* Builds well-formed records from descriptors, so that deep paths are
 * reached from random bytes; returns the stream's length. */
static size_t shape_stream(struct fuzz_input *in, const struct dp_perf_layout *l, uint8_t *out, size_t cap) {
        size_t len = 0;

        while (in->left > 0) {
                uint8_t kind = fuzz_u8(in), words = fuzz_u8(in);
                struct perf_event_header h = {
                        .type = shaped_types[kind & 15],
                        .misc = (uint16_t) ((kind >> 5) == 7 ? PERF_RECORD_MISC_SWITCH_OUT : (kind >> 5)),
                };
                size_t size = 8 + 8 * (size_t) (words % 48);

                if (h.type == PERF_RECORD_SAMPLE && (kind & 16) && l->sample_size)
                        size = l->sample_size;
                if (h.type == PERF_RECORD_COMM && (kind & 32))
                        h.misc = PERF_RECORD_MISC_COMM_EXEC;
                if (size > cap - len)
                        break;
                h.size = (uint16_t) size;
                memcpy(out + len, &h, sizeof(h));
                fuzz_take(in, out + len + sizeof(h), size - sizeof(h));
                len += size;
        }
        return len;
}

struct expected {
        size_t offset[EXPECTED_MAX];    /* of each record a well-behaved ring reader hands out */
        size_t n;
        bool corrupt;                   /* a bad header (or head) ends it */
        size_t samples;
        struct dp_sample valid[EXPECTED_MAX];   /* the valid samples, decoded the slow way */
        size_t n_valid;
};

/* What dp_perf_ring_next() must make of @len bytes from @tail to @head, as
 * the ring protocol and the record format say. */
static void expect_ring(const uint8_t *stream, uint64_t tail, uint64_t head, uint64_t ring_size,
                        struct expected *e) {
        uint64_t pos = tail;

        e->n = 0;
        e->corrupt = false;
        while (pos != head) {
                uint64_t left = head - pos;
                struct perf_event_header h;

                if (left > ring_size || left < 8 || pos % 8 != 0) {
                        e->corrupt = true;
                        return;
                }
                memcpy(&h, stream + (pos - tail), sizeof(h));
                if (h.size < 8 || h.size % 8 != 0 || h.size > left) {
                        e->corrupt = true;
                        return;
                }
                CHECK(e->n < EXPECTED_MAX);
                e->offset[e->n++] = pos - tail;
                pos += h.size;
        }
}

static void check_ring(const struct perf_event_attr *attr, const struct dp_perf_layout *l,
                       const struct dp_source *source, const uint8_t *stream, size_t len, uint8_t ring_ctl,
                       uint8_t tail_ctl, uint8_t queue_ctl) {
        static uint8_t mem[PAGE + DATA_MAX] __attribute__((aligned(PAGE)));
        static uint8_t scratch[DP_PERF_RECORD_MAX] __attribute__((aligned(8)));
        static struct expected e;
        struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *) mem;
        uint64_t size = UINT64_C(64) << (ring_ctl & 7), tail, head, stored;
        bool want_phys = ring_ctl & 8;
        struct dp_spsc *queue = NULL;
        const struct perf_event_header *h;
        const struct dp_sample *s;
        struct dp_perf_ring ring;
        struct dp_ring_reader r;
        size_t got, k, n;
        int err;

        /* The ring holds what fits; a record cut off at the head is corrupt. */
        stored = DP_MIN((uint64_t) len, size);
        tail = (ring_ctl & 0x80 ? UINT64_C(0) - 4 * size : 3 * size) + ((uint64_t) tail_ctl * 8 & (size - 1));
        head = tail + stored;
        if (ring_ctl & 0x20)
                head -= stored ? 4 : 0;
        if (ring_ctl & 0x40)
                head = tail + size + 8;

        memset(mem, 0, PAGE + size);
        meta->data_offset = PAGE;
        meta->data_size = size;
        meta->data_tail = tail;
        meta->data_head = head;
        for (uint64_t i = 0; i < stored; i++)
                mem[PAGE + ((tail + i) & (size - 1))] = stream[i];

        /* The bytes between tail and head, as the ring holds them. */
        {
                static uint8_t linear[DATA_MAX + 16];
                uint64_t span = DP_MIN(head - tail, size);

                for (uint64_t i = 0; i < span; i++)
                        linear[i] = mem[PAGE + ((tail + i) & (size - 1))];
                expect_ring(linear, tail, head, size, &e);
        }

        /* The records, one by one. */
        CHECK(dp_perf_ring_init(&ring, meta, PAGE, size, scratch) == 0);
        CHECK(dp_perf_ring_begin(&ring) == head - tail);
        for (got = 0; (h = dp_perf_ring_next(&ring, &err)); got++) {
                CHECK(err == 0);
                CHECK(got < e.n);
                CHECK((uintptr_t) h % 8 == 0);
                CHECK(h->size >= 8 && memcmp(h, stream + e.offset[got], h->size) == 0);
        }
        CHECK(got == e.n);
        CHECK(err == (e.corrupt ? -EBADMSG : 0));
        CHECK(ring.tail == head);
        /* The end is sticky. */
        CHECK(dp_perf_ring_next(&ring, &err) == NULL && err == 0);
        dp_perf_ring_end(&ring);
        CHECK(meta->data_tail == head);

        /* The same through the reader stage, against the slow path. */
        e.samples = e.n_valid = 0;
        for (size_t i = 0; i < e.n; i++) {
                const uint8_t *rec = stream + e.offset[i];
                struct perf_event_header hdr;
                struct dp_sample one = { .cpu = 3 };

                memcpy(&hdr, rec, sizeof(hdr));
                if (hdr.type != PERF_RECORD_SAMPLE)
                        continue;
                e.samples++;
                {
                        uint64_t *copy = fuzz_dup(rec, hdr.size);

                        if (dp_source_decode_record(source, NULL, l, (const struct perf_event_header *) copy, &one) == 0 &&
                            dp_sample_classify(&one, want_phys) == DP_C_VALID)
                                e.valid[e.n_valid++] = one;
                        free(copy);
                }
        }

        meta->data_tail = tail;
        CHECK(dp_spsc_new((size_t) 2 << (queue_ctl & 3), &queue) == 0);
        CHECK(dp_ring_reader_init(&r, attr, source, queue, 3, want_phys) == 0);
        CHECK(dp_perf_ring_init(&r.ring, meta, PAGE, size, scratch) == 0);
        CHECK(dp_ring_reader_drain(&r) == e.n);
        CHECK(meta->data_tail == head);
        CHECK(r.counters.v[DP_C_CALLBACK] == e.samples);
        CHECK(r.counters.v[DP_C_VALID] == e.n_valid);
        CHECK(dp_counters_check(&r.counters, NULL) == 0);
        if (e.corrupt)
                CHECK(r.counters.v[DP_C_BAD_RECORD] >= 1);
        k = 0;
        while ((n = dp_spsc_peek(queue, &s)) > 0) {
                for (size_t i = 0; i < n; i++, k++) {
                        CHECK(k < e.n_valid);
                        CHECK(memcmp(&s[i], &e.valid[k], sizeof(s[i])) == 0);
                }
                dp_spsc_consume(queue, n);
        }
        CHECK(k == r.counters.v[DP_C_ENQUEUE]);
        /* Nothing new: nothing happens. */
        CHECK(dp_ring_reader_drain(&r) == 0);
        CHECK(meta->data_tail == head);
        dp_spsc_free(queue);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static uint8_t stream[STREAM_MAX] __attribute__((aligned(8)));
        struct fuzz_input in = { data, size };
        struct perf_event_attr attr = {};
        struct dp_perf_layout layout;
        uint8_t fmt, branch, ring_ctl, tail_ctl, queue_ctl;
        uint64_t read_values[8];
        uint64_t lost;
        uint32_t attr_size;
        bool refuse;
        size_t len, pos;
        int r;

        attr.sample_type = fuzz_u32(&in) & KNOWN_SAMPLE;
        fmt = fuzz_u8(&in);
        branch = fuzz_u8(&in);
        attr.read_format = (fmt & 31) | (fmt & 32 ? UINT64_C(1) << 5 : 0);
        attr.sample_id_all = !!(fmt & 64);
        if (fmt & 128)
                attr.sample_type |= UINT64_C(1) << 25;
        attr.branch_sample_type = (branch & 1 ? PERF_SAMPLE_BRANCH_HW_INDEX : 0) |
                                  (branch & 2 ? DP_PERF_SAMPLE_BRANCH_COUNTERS : 0) |
                                  (branch & 4 ? UINT64_C(1) << 20 : 0) | PERF_SAMPLE_BRANCH_ANY;
        attr.size = attr_sizes[(branch >> 3) & 7];
        attr.sample_regs_user = low_bits(fuzz_u8(&in));
        attr.sample_regs_intr = low_bits(fuzz_u8(&in));
        ring_ctl = fuzz_u8(&in);
        tail_ctl = fuzz_u8(&in);
        queue_ctl = fuzz_u8(&in);

        /* The read(2) value of a single event, from the same bytes. */
        memcpy(read_values, data, DP_MIN(size, sizeof(read_values)));
        r = dp_perf_read_value_lost(attr.read_format, read_values, DP_MIN(size / 8, DP_ARRAY_SIZE(read_values)),
                                    &lost);
        CHECK(r == 0 || r == -EINVAL || r == -ENODATA || r == -EBADMSG);
        CHECK((r == -EINVAL) == !!(attr.read_format & (PERF_FORMAT_GROUP | ~KNOWN_READ)));

        r = dp_perf_layout_init(&layout, &attr);
        /* Fields beyond attr.size read as zero; size 0 is VER0. */
        attr_size = attr.size ? attr.size : PERF_ATTR_SIZE_VER0;
        refuse = (attr.sample_type & ~KNOWN_SAMPLE) || (attr.read_format & ~KNOWN_READ) ||
                 ((attr.sample_type & PERF_SAMPLE_WEIGHT) && (attr.sample_type & PERF_SAMPLE_WEIGHT_STRUCT)) ||
                 ((attr.sample_type & PERF_SAMPLE_BRANCH_STACK) && (attr.branch_sample_type & ~KNOWN_BRANCH) &&
                  attr_size >= PERF_ATTR_SIZE_VER2);
        CHECK(r == (refuse ? -EINVAL : 0));
        if (r < 0)
                return 0;
        CHECK(layout.sample_type == attr.sample_type);
        CHECK(layout.sample_regs_user == (attr_size >= PERF_ATTR_SIZE_VER3 ? attr.sample_regs_user : 0));
        CHECK(layout.sample_regs_intr == (attr_size >= PERF_ATTR_SIZE_VER4 ? attr.sample_regs_intr : 0));
        if (!(attr.sample_type & VARIABLE_BITS))
                CHECK(layout.sample_size == 8 + 8 * __builtin_popcountll(attr.sample_type));
        else
                CHECK(layout.sample_size == 0);

        if (ring_ctl & 16)
                len = shape_stream(&in, &layout, stream, sizeof(stream));
        else {
                len = fuzz_take(&in, stream, DP_MIN(in.left, sizeof(stream)));
                len -= len % 8;
        }

        /* Every record of the stream, each in an exact-size copy. */
        for (pos = 0; pos + 8 <= len;) {
                struct perf_event_header h;
                uint64_t *copy;

                memcpy(&h, stream + pos, sizeof(h));
                if (h.size < 8 || h.size % 8 != 0 || h.size > len - pos)
                        break;
                copy = fuzz_dup(stream + pos, h.size);
                if (h.type == PERF_RECORD_SAMPLE)
                        check_sample(&layout, (const uint8_t *) copy, h.size);
                else
                        check_other(&layout, (const uint8_t *) copy, h.size);
                free(copy);
                pos += h.size;
        }

        check_ring(&attr, &layout, sources[branch >> 6], stream, len, ring_ctl, tail_ctl, queue_ctl);
        return 0;
}
