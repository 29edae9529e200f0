/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A perf.data writer for tests: captures laid out as `perf record` writes
 * them (tools/perf/util/header.c, perf_session__write_header()):
 *
 *   file header (PERFILE2, 104 bytes, feature bitmap)
 *   each attr's ID array
 *   attrs: perf_event_attr + {offset, size} of its IDs
 *   data section: records (and AUXTRACE payloads) as built
 *   feature section table: {offset, size} per set feature bit, in bit order
 *   feature sections (HEADER_PMU_MAPPINGS, HEADER_CPUID, ...)
 *
 * Records are appended to the data section with their bodies built by the
 * caller (pdw_bytes helpers); pdw_sample_id() writes the sample_id trailer
 * an attr's sample_type asks for.  Checks abort the test on misuse.
 */

#include <check.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PDW_MAX_ATTRS 8
#define PDW_MAX_IDS 16
#define PDW_MAX_FEATURES 8
#define PDW_HEADER_SIZE 104
#define PDW_NAME_ALIGN 64

struct pdw_bytes {
        uint8_t *b;
        size_t n, cap;
};

static inline void pdw_put(struct pdw_bytes *x, const void *p, size_t n) {
        if (x->n + n > x->cap) {
                x->cap = (x->n + n) * 2 + 64;
                x->b = realloc(x->b, x->cap);
                ck_assert_ptr_nonnull(x->b);
        }
        if (n)
                memcpy(x->b + x->n, p, n);
        x->n += n;
}

static inline void pdw_u8(struct pdw_bytes *x, uint8_t v) {
        pdw_put(x, &v, 1);
}

static inline void pdw_u32(struct pdw_bytes *x, uint32_t v) {
        pdw_put(x, &v, 4);
}

static inline void pdw_u64(struct pdw_bytes *x, uint64_t v) {
        pdw_put(x, &v, 8);
}

/* Little-endian @n bytes of @v (SPE payloads). */
static inline void pdw_le(struct pdw_bytes *x, uint64_t v, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                pdw_u8(x, (uint8_t) (v >> (8 * i)));
}

static inline void pdw_zeros(struct pdw_bytes *x, size_t n) {
        while (n--)
                pdw_u8(x, 0);
}

static inline void pdw_pad8(struct pdw_bytes *x) {
        pdw_zeros(x, (8 - x->n % 8) % 8);
}

static inline void pdw_bytes_free(struct pdw_bytes *x) {
        free(x->b);
        *x = (struct pdw_bytes) {};
}

/* A header string: u32 len (NUL and padding to 64 included), then the text. */
static inline void pdw_string(struct pdw_bytes *x, const char *s) {
        size_t len = strlen(s) + 1, aligned = (len + PDW_NAME_ALIGN - 1) / PDW_NAME_ALIGN * PDW_NAME_ALIGN;

        pdw_u32(x, (uint32_t) aligned);
        pdw_put(x, s, len);
        pdw_zeros(x, aligned - len);
}

struct pdw {
        struct perf_event_attr attrs[PDW_MAX_ATTRS];
        uint64_t ids[PDW_MAX_ATTRS][PDW_MAX_IDS];
        size_t n_ids[PDW_MAX_ATTRS];
        size_t n_attrs;
        struct {
                unsigned bit;
                struct pdw_bytes body;
        } features[PDW_MAX_FEATURES];
        size_t n_features;
        struct pdw_bytes data;
};

static inline void pdw_attr(struct pdw *w, const struct perf_event_attr *a, const uint64_t *ids, size_t n) {
        ck_assert_uint_lt(w->n_attrs, PDW_MAX_ATTRS);
        ck_assert_uint_le(n, PDW_MAX_IDS);
        w->attrs[w->n_attrs] = *a;
        w->attrs[w->n_attrs].size = sizeof(*a);
        memcpy(w->ids[w->n_attrs], ids, n * sizeof(*ids));
        w->n_ids[w->n_attrs] = n;
        w->n_attrs++;
}

static inline void pdw_feature(struct pdw *w, unsigned bit, const void *bytes, size_t n) {
        ck_assert_uint_lt(w->n_features, PDW_MAX_FEATURES);
        ck_assert_uint_lt(bit, 256);
        w->features[w->n_features].bit = bit;
        w->features[w->n_features].body = (struct pdw_bytes) {};
        pdw_put(&w->features[w->n_features].body, bytes, n);
        w->n_features++;
}

struct pdw_pmu {
        uint32_t type;
        const char *name;
};

/* PMU tables as real machines have them (type numbers are dynamic). */
#define PDW_SPE_TYPE 11
#define PDW_IBS_TYPE 12

static const struct pdw_pmu pdw_pmus_arm[] = {
        { 1, "software" }, { 2, "tracepoint" }, { 5, "breakpoint" }, { 8, "armv8_pmuv3_0" },
        { PDW_SPE_TYPE, "arm_spe_0" },
};
static const struct pdw_pmu pdw_pmus_amd[] = {
        { 1, "software" }, { 2, "tracepoint" }, { 4, "cpu" }, { 5, "breakpoint" }, { PDW_IBS_TYPE, "ibs_op" },
        { 13, "ibs_fetch" },
};
static const struct pdw_pmu pdw_pmus_intel[] = {
        { 1, "software" }, { 4, "cpu" }, { 5, "breakpoint" }, { 9, "intel_pt" },
};

/* HEADER_PMU_MAPPINGS (16): u32 nr, then {u32 type, string name} each. */
static inline void pdw_pmu_mappings(struct pdw *w, const struct pdw_pmu *pmus, size_t n) {
        struct pdw_bytes x = {};

        pdw_u32(&x, (uint32_t) n);
        for (size_t i = 0; i < n; i++) {
                pdw_u32(&x, pmus[i].type);
                pdw_string(&x, pmus[i].name);
        }
        pdw_feature(w, 16, x.b, x.n);
        pdw_bytes_free(&x);
}

/* HEADER_CPUID (9): one string. */
static inline void pdw_cpuid(struct pdw *w, const char *cpuid) {
        struct pdw_bytes x = {};

        pdw_string(&x, cpuid);
        pdw_feature(w, 9, x.b, x.n);
        pdw_bytes_free(&x);
}

/* The sample_id trailer (or the leading ID fields of a sample) in the order
 * the kernel writes them for @sample_type. */
struct pdw_id {
        uint32_t pid, tid;
        uint64_t time;
        uint64_t id;
        uint32_t cpu;
};

static inline void pdw_sample_id(struct pdw_bytes *x, uint64_t sample_type, const struct pdw_id *id) {
        if (sample_type & PERF_SAMPLE_TID) {
                pdw_u32(x, id->pid);
                pdw_u32(x, id->tid);
        }
        if (sample_type & PERF_SAMPLE_TIME)
                pdw_u64(x, id->time);
        if (sample_type & PERF_SAMPLE_ID)
                pdw_u64(x, id->id);
        if (sample_type & PERF_SAMPLE_STREAM_ID)
                pdw_u64(x, 0);
        if (sample_type & PERF_SAMPLE_CPU) {
                pdw_u32(x, id->cpu);
                pdw_u32(x, 0);
        }
        if (sample_type & PERF_SAMPLE_IDENTIFIER)
                pdw_u64(x, id->id);
}

/* A record of @type with @body (padded to 8 bytes) in the data section. */
static inline void pdw_record(struct pdw *w, uint32_t type, uint16_t misc, const struct pdw_bytes *body) {
        struct perf_event_header h = { .type = type, .misc = misc };
        size_t size = sizeof(h) + (body->n + 7) / 8 * 8;

        ck_assert_uint_le(size, UINT16_MAX);
        h.size = (uint16_t) size;
        pdw_put(&w->data, &h, sizeof(h));
        pdw_put(&w->data, body->b, body->n);
        pdw_pad8(&w->data);
}

/* Bytes straight into the data section: the payload after an AUXTRACE record. */
static inline void pdw_raw(struct pdw *w, const void *bytes, size_t n) {
        pdw_put(&w->data, bytes, n);
}

#define PDW_RECORD_AUXTRACE 71     /* perf's own record type (tools/perf/util/event.h) */

/* perf's PERF_RECORD_AUXTRACE {size, offset, reference, idx, tid, cpu}
 * for CPU @cpu's AUX bytes @payload at AUX @offset, then the bytes, padded
 * to 8 as perf pads them (the padding counted in size). */
static inline void pdw_auxtrace(struct pdw *w, uint64_t offset, uint32_t cpu, const struct pdw_bytes *payload) {
        struct pdw_bytes b = {}, p = {};

        pdw_put(&p, payload->b, payload->n);
        pdw_pad8(&p);
        pdw_u64(&b, p.n);
        pdw_u64(&b, offset);
        pdw_u64(&b, 0x1234);
        pdw_u32(&b, cpu);
        pdw_u32(&b, UINT32_MAX);
        pdw_u32(&b, cpu);
        pdw_u32(&b, 0);
        pdw_record(w, PDW_RECORD_AUXTRACE, 0, &b);
        pdw_raw(w, p.b, p.n);
        pdw_bytes_free(&b);
        pdw_bytes_free(&p);
}

static inline void pdw_put_u64_at(uint8_t *p, uint64_t v) {
        memcpy(p, &v, 8);
}

/* The whole file; free() it.  Frees the writer's buffers. */
static inline uint8_t *pdw_finish(struct pdw *w, size_t *ret_size) {
        const size_t attr_entry = sizeof(struct perf_event_attr) + 16;
        struct pdw_bytes f = {};
        size_t ids_at, attrs_at, data_at, table_at, order[PDW_MAX_FEATURES];
        uint64_t bitmap[4] = {};

        pdw_zeros(&f, PDW_HEADER_SIZE);
        ids_at = f.n;
        for (size_t i = 0; i < w->n_attrs; i++)
                pdw_put(&f, w->ids[i], w->n_ids[i] * 8);
        attrs_at = f.n;
        for (size_t i = 0, id_off = ids_at; i < w->n_attrs; i++) {
                pdw_put(&f, &w->attrs[i], sizeof(w->attrs[i]));
                pdw_u64(&f, id_off);
                pdw_u64(&f, w->n_ids[i] * 8);
                id_off += w->n_ids[i] * 8;
        }
        ck_assert_uint_eq(f.n % 8, 0);
        data_at = f.n;
        pdw_put(&f, w->data.b, w->data.n);

        /* Sections in bit order: sort the features by bit. */
        for (size_t i = 0; i < w->n_features; i++)
                order[i] = i;
        for (size_t i = 0; i < w->n_features; i++)
                for (size_t j = i + 1; j < w->n_features; j++)
                        if (w->features[order[j]].bit < w->features[order[i]].bit) {
                                size_t t = order[i];

                                order[i] = order[j];
                                order[j] = t;
                        }
        table_at = f.n;
        pdw_zeros(&f, 16 * w->n_features);
        for (size_t k = 0; k < w->n_features; k++) {
                size_t i = order[k];

                bitmap[w->features[i].bit / 64] |= 1ull << (w->features[i].bit % 64);
                pdw_put_u64_at(f.b + table_at + 16 * k, f.n);
                pdw_put_u64_at(f.b + table_at + 16 * k + 8, w->features[i].body.n);
                pdw_put(&f, w->features[i].body.b, w->features[i].body.n);
                pdw_bytes_free(&w->features[i].body);
        }

        memcpy(f.b, "PERFILE2", 8);
        pdw_put_u64_at(f.b + 8, PDW_HEADER_SIZE);
        pdw_put_u64_at(f.b + 16, attr_entry);
        pdw_put_u64_at(f.b + 24, attrs_at);
        pdw_put_u64_at(f.b + 32, w->n_attrs * attr_entry);
        pdw_put_u64_at(f.b + 40, data_at);
        pdw_put_u64_at(f.b + 48, w->data.n);
        for (size_t i = 0; i < 4; i++)
                pdw_put_u64_at(f.b + 72 + 8 * i, bitmap[i]);

        pdw_bytes_free(&w->data);
        *ret_size = f.n;
        return f.b;
}
