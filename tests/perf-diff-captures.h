/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Captures for the differential test against perf (test-perf-diff.c), laid
 * out as `perf record` writes them on each machine (tests/perf-data-writer.h)
 * so that Debian's perf 6.1 decodes them as real ones:
 *
 *   IBS op   ibs_op event with RAW (and optionally the kernel-filled ADDR,
 *            PHYS_ADDR, DATA_SRC, WEIGHT), HEADER_ARCH x86_64, HEADER_CPUID
 *            "AuthenticAMD,family,model,stepping" (perf's amd-sample-raw
 *            decodes RAW only then), HEADER_PMU_CAPS zen4_ibs_extensions on
 *            Zen 4 (perf reads the extended data source only with it)
 *   PEBS     cpu/mem-loads/ (0x1cd) with DATA_SRC, WEIGHT or WEIGHT_STRUCT,
 *            PHYS_ADDR
 *   SPE      arm_spe_0 with AUXTRACE_INFO, TIME_CONV (1 tick = 1 ns),
 *            COMM records naming the threads, AUXTRACE payloads of packets,
 *            and HEADER_CPUID the MIDR
 *
 * Register and packet bits are written out here, not taken from lib/, so
 * that the decoders have to read them right.
 */

#include <stdbool.h>
#include <stdint.h>

#include "ibs-registers.h"
#include "perf-data-writer.h"

#define DIFF_ID_TYPES (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)
#define DIFF_RECORD_AUXTRACE_INFO 70
#define DIFF_RECORD_TIME_CONV 79
#define DIFF_HEADER_ARCH 6
#define DIFF_HEADER_PMU_CAPS 31

/* xorshift64*: a seeded, reproducible stream for the randomized parts. */
static inline uint64_t diff_rand(uint64_t *state) {
        uint64_t x = *state;

        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        *state = x;
        return x * 0x2545f4914f6cdd1dull;
}

static inline void diff_arch(struct pdw *w, const char *arch) {
        struct pdw_bytes x = {};

        pdw_string(&x, arch);
        pdw_feature(w, DIFF_HEADER_ARCH, x.b, x.n);
        pdw_bytes_free(&x);
}

/* HEADER_PMU_CAPS: u32 nr_pmu, then per PMU u32 nr_caps, {name, value}
 * strings, and the PMU's name. */
static inline void diff_pmu_cap(struct pdw *w, const char *pmu, const char *cap, const char *value) {
        struct pdw_bytes x = {};

        pdw_u32(&x, 1);
        pdw_u32(&x, 1);
        pdw_string(&x, cap);
        pdw_string(&x, value);
        pdw_string(&x, pmu);
        pdw_feature(w, DIFF_HEADER_PMU_CAPS, x.b, x.n);
        pdw_bytes_free(&x);
}

/* ---- AMD IBS op ---- */

#define DIFF_IBS_CAPS 0x7u            /* IBS present, fetch and op sampling */
#define DIFF_IBS_CAPS_BRNTRGT (1u << 5)
#define DIFF_IBS_CAPS_OPDATA4 (1u << 10)
#define DIFF_IBS_CAPS_ZEN4 (1u << 11)

struct diff_ibs_op {
        uint32_t caps;
        uint64_t ctl, rip, data, data2, data3, lin, phys, br_target, data4;
        /* The kernel-filled fields, for attrs that ask for them. */
        uint64_t addr, phys_addr, data_src, weight;
};

/* Zen 4 and later: family 0x19 models 0x10-0x1f and 0x60 on, and after. */
static inline bool diff_ibs_is_zen4(unsigned family, unsigned model) {
        return family > 0x19 || (family == 0x19 && model >= 0x10 && !(model >= 0x20 && model < 0x60));
}

/* An ibs_op capture of @sample_type on a @family/@model machine. */
static inline void diff_ibs_begin(struct pdw *w, unsigned family, unsigned model, uint64_t sample_type) {
        static const uint64_t ids[] = { 0x300 };
        struct perf_event_attr ibs = {
                .type = PDW_IBS_TYPE,
                .sample_period = 100000,
                .sample_type = sample_type | PERF_SAMPLE_RAW,
                .sample_id_all = 1,
        };
        char cpuid[64];

        memset(w, 0, sizeof(*w));
        pdw_attr(w, &ibs, ids, 1);
        pdw_pmu_mappings(w, pdw_pmus_amd, sizeof(pdw_pmus_amd) / sizeof(pdw_pmus_amd[0]));
        diff_arch(w, "x86_64");
        snprintf(cpuid, sizeof(cpuid), "AuthenticAMD,%u,%u,1", family, model);
        pdw_cpuid(w, cpuid);
        /* Zen 4 and later: the kernel shows the caps bit in sysfs, perf record copies it. */
        if (diff_ibs_is_zen4(family, model))
                diff_pmu_cap(w, "ibs_op", "zen4_ibs_extensions", "1");
}

static inline void diff_ibs_sample(struct pdw *w, uint64_t sample_type, const struct pdw_id *id,
                                   const struct diff_ibs_op *op) {
        struct pdw_bytes b = {};
        uint32_t n = 7 + !!(op->caps & DIFF_IBS_CAPS_BRNTRGT) + !!(op->caps & DIFF_IBS_CAPS_OPDATA4);

        if (sample_type & PERF_SAMPLE_IDENTIFIER)
                pdw_u64(&b, id->id);
        pdw_u32(&b, id->pid);
        pdw_u32(&b, id->tid);
        pdw_u64(&b, id->time);
        if (sample_type & PERF_SAMPLE_ADDR)
                pdw_u64(&b, op->addr);
        pdw_u32(&b, id->cpu);
        pdw_u32(&b, 0);
        /* RAW: u32 size, then the caps word and the registers; perf pads the
         * record, the size says what is the payload. */
        pdw_u32(&b, 4 + 8 * n);
        pdw_u32(&b, op->caps);
        pdw_u64(&b, op->ctl);
        pdw_u64(&b, op->rip);
        pdw_u64(&b, op->data);
        pdw_u64(&b, op->data2);
        pdw_u64(&b, op->data3);
        pdw_u64(&b, op->lin);
        pdw_u64(&b, op->phys);
        if (op->caps & DIFF_IBS_CAPS_BRNTRGT)
                pdw_u64(&b, op->br_target);
        if (op->caps & DIFF_IBS_CAPS_OPDATA4)
                pdw_u64(&b, op->data4);
        if (sample_type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
                pdw_u64(&b, op->weight);
        if (sample_type & PERF_SAMPLE_DATA_SRC)
                pdw_u64(&b, op->data_src);
        if (sample_type & PERF_SAMPLE_PHYS_ADDR)
                pdw_u64(&b, op->phys_addr);
        pdw_record(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, &b);
        pdw_bytes_free(&b);
}

/* ---- Intel PEBS ---- */

#define DIFF_PEBS_TYPES (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | \
                         PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR)

struct diff_pebs_sample {
        uint64_t addr, data_src, weight, phys_addr;
};

/* cpu/mem-loads,ldlat=30/P on an Ice Lake server, @weight_type WEIGHT or WEIGHT_STRUCT. */
static inline void diff_pebs_begin(struct pdw *w, uint64_t weight_type) {
        static const uint64_t ids[] = { 0x500 };
        struct perf_event_attr a = {
                .type = PERF_TYPE_RAW,
                .config = 0x1cd,
                .config1 = 30,
                .sample_period = 4000,
                .sample_type = DIFF_PEBS_TYPES | weight_type,
                .precise_ip = 3,
                .sample_id_all = 1,
        };

        memset(w, 0, sizeof(*w));
        pdw_attr(w, &a, ids, 1);
        pdw_pmu_mappings(w, pdw_pmus_intel, sizeof(pdw_pmus_intel) / sizeof(pdw_pmus_intel[0]));
        diff_arch(w, "x86_64");
        pdw_cpuid(w, "GenuineIntel,6,106,6");
}

static inline void diff_pebs_sample(struct pdw *w, uint64_t sample_type, const struct pdw_id *id,
                                    const struct diff_pebs_sample *s) {
        struct pdw_bytes b = {};

        pdw_u64(&b, 0x401000);          /* IP */
        pdw_u32(&b, id->pid);
        pdw_u32(&b, id->tid);
        pdw_u64(&b, id->time);
        pdw_u64(&b, s->addr);
        pdw_u32(&b, id->cpu);
        pdw_u32(&b, 0);
        pdw_u64(&b, 4000);              /* PERIOD */
        if (sample_type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
                pdw_u64(&b, s->weight);
        pdw_u64(&b, s->data_src);
        pdw_u64(&b, s->phys_addr);
        pdw_record(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, &b);
        pdw_bytes_free(&b);
}

/* ---- ARM SPE ---- */

/* One SPE record as the test builds it. */
struct diff_spe_rec {
        bool store;
        bool branch;                    /* a branch record: no data address, no sample */
        bool other;                     /* an "other" operation (OP-TYPE class 0): no sample either */
        bool more_packets;              /* also a previous-branch ADDRESS and a translation COUNTER */
        uint64_t pc;                    /* PC payload: address, EL 62:61, NS 63 */
        uint64_t va, pa;                /* payloads; pa 0: no PA packet */
        uint32_t events;
        int data_source;                /* -1: no DATA-SOURCE packet */
        unsigned data_source_size;      /* its payload bytes: 1 or 2 */
        int64_t context;                /* -1: no CONTEXT packet */
        uint16_t latency;               /* total latency COUNTER, 0: none */
        uint16_t issue;                 /* issue latency COUNTER, 0: none */
        uint64_t ts;                    /* 0: END-terminated */
        bool extended_counter;          /* the latency COUNTER with a two-byte (extended) header */
        unsigned align_pad;             /* 0, or an alignment pad to this boundary (2, 4, 8 or 16) before it */
};

static inline void diff_spe_addr(struct pdw_bytes *b, unsigned index, uint64_t payload) {
        pdw_u8(b, (uint8_t) (0xb0 | index));
        pdw_le(b, payload, 8);
}

/* The packets of @r appended to @b, whose first byte is at AUX offset @base. */
static inline void diff_spe_record(struct pdw_bytes *b, uint64_t base, const struct diff_spe_rec *r) {
        if (r->align_pad) {
                /* The extended alignment pad: 0x20 | n, 0x00, then zeros up to the
                 * next multiple of 2 << n (perf counts from the buffer's address,
                 * we from the AUX offset: with zeros after it both land on the
                 * same byte, the rest read as one-byte PADs). */
                unsigned n = (unsigned) __builtin_ctz(r->align_pad) - 1;

                pdw_u8(b, (uint8_t) (0x20 | n));
                pdw_u8(b, 0x00);
                while ((base + b->n) % r->align_pad != 0)
                        pdw_u8(b, 0x00);
        }
        diff_spe_addr(b, 0, r->pc);
        if (r->branch) {
                pdw_u8(b, 0x4a);                        /* OP-TYPE branch, conditional */
                pdw_u8(b, 0x01);
                diff_spe_addr(b, 1, 0x0000000000403000ull);
        } else if (r->other) {
                pdw_u8(b, 0x48);                        /* OP-TYPE other, not conditional */
                pdw_u8(b, 0x00);
        } else {
                pdw_u8(b, 0x49);                        /* OP-TYPE LD/ST, GP register */
                pdw_u8(b, r->store ? 0x01 : 0x00);
        }
        pdw_u8(b, 0x62);                                /* EVENTS, 4 bytes */
        pdw_le(b, r->events, 4);
        if (!r->branch && r->data_source >= 0) {
                pdw_u8(b, r->data_source_size == 2 ? 0x53 : 0x43);
                pdw_le(b, (uint64_t) r->data_source, r->data_source_size == 2 ? 2 : 1);
        }
        if (r->latency) {
                if (r->extended_counter) {
                        pdw_u8(b, 0x20);                /* extended header: index bits 4:3 = 0 */
                        pdw_u8(b, 0x98);
                } else
                        pdw_u8(b, 0x98);
                pdw_le(b, r->latency, 2);
        }
        if (r->issue) {
                pdw_u8(b, 0x99);
                pdw_le(b, r->issue, 2);
        }
        if (r->more_packets) {
                pdw_u8(b, 0x9a);                        /* COUNTER translation latency */
                pdw_le(b, 5, 2);
                diff_spe_addr(b, 4, 0x8000000000400ff0ull);     /* previous branch target */
        }
        if (!r->branch && !r->other) {
                diff_spe_addr(b, 2, r->va);
                if (r->pa)
                        diff_spe_addr(b, 3, r->pa);
        }
        if (r->context >= 0) {
                pdw_u8(b, 0x65);                        /* CONTEXT, EL2, 4 bytes */
                pdw_le(b, (uint64_t) r->context, 4);
        }
        if (r->ts) {
                pdw_u8(b, 0x71);
                pdw_le(b, r->ts, 8);
        } else
                pdw_u8(b, 0x01);
}

static inline void diff_spe_comm(struct pdw *w, uint32_t pid, uint32_t tid, const char *comm, uint64_t time) {
        struct pdw_bytes b = {};
        char name[16] = {};
        struct pdw_id id = { .pid = pid, .tid = tid, .time = time, .id = 0x200 };

        strncpy(name, comm, sizeof(name) - 1);
        pdw_u32(&b, pid);
        pdw_u32(&b, tid);
        pdw_put(&b, name, sizeof(name));
        pdw_sample_id(&b, DIFF_ID_TYPES, &id);
        pdw_record(w, PERF_RECORD_COMM, 0, &b);
        pdw_bytes_free(&b);
}

/* arm_spe_0 and the dummy event, AUXTRACE_INFO and TIME_CONV, for a machine
 * of @midr (HEADER_CPUID: "0x" and 16 hex digits). */
static inline void diff_spe_begin(struct pdw *w, uint64_t midr) {
        static const uint64_t spe_ids[] = { 0x100 }, dummy_ids[] = { 0x200 };
        struct perf_event_attr spe = {
                .type = PDW_SPE_TYPE,
                .config = 0x3,          /* ts_enable, pa_enable: perf record asks for PHYS_ADDR */
                .sample_period = 4096,
                .sample_type = PERF_SAMPLE_IP | DIFF_ID_TYPES | PERF_SAMPLE_PHYS_ADDR,
                .sample_id_all = 1,
                .disabled = 1,
        };
        struct perf_event_attr dummy = {
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_DUMMY,
                .sample_period = 1,
                .sample_type = DIFF_ID_TYPES,
                .sample_id_all = 1,
                .context_switch = 1,
                .comm = 1,
        };
        struct pdw_bytes b = {};
        char cpuid[32];

        memset(w, 0, sizeof(*w));
        pdw_attr(w, &spe, spe_ids, 1);
        pdw_attr(w, &dummy, dummy_ids, 1);
        pdw_pmu_mappings(w, pdw_pmus_arm, sizeof(pdw_pmus_arm) / sizeof(pdw_pmus_arm[0]));
        diff_arch(w, "aarch64");
        snprintf(cpuid, sizeof(cpuid), "0x%016llx", (unsigned long long) midr);
        pdw_cpuid(w, cpuid);

        /* TIME_CONV first, as perf record writes it: AUXTRACE_INFO takes its clock. */
        pdw_u64(&b, 0);                 /* time_shift */
        pdw_u64(&b, 1);                 /* time_mult */
        pdw_u64(&b, 0);                 /* time_zero */
        pdw_u64(&b, 0);                 /* time_cycles */
        pdw_u64(&b, 0);                 /* time_mask */
        pdw_u8(&b, 1);                  /* cap_user_time_zero */
        pdw_u8(&b, 0);                  /* cap_user_time_short */
        pdw_zeros(&b, 6);
        pdw_record(w, DIFF_RECORD_TIME_CONV, 0, &b);
        pdw_bytes_free(&b);

        pdw_u32(&b, 4);                 /* PERF_AUXTRACE_ARM_SPE */
        pdw_u32(&b, 0);
        pdw_u64(&b, PDW_SPE_TYPE);
        pdw_u64(&b, 1);                 /* per-CPU mmaps */
        pdw_record(w, DIFF_RECORD_AUXTRACE_INFO, 0, &b);
        pdw_bytes_free(&b);
}

/* The AUX stretch @payload of CPU @cpu at AUX @offset: the kernel's
 * PERF_RECORD_AUX, then perf's AUXTRACE record with the bytes. */
static inline void diff_spe_aux(struct pdw *w, uint32_t cpu, uint64_t offset, const struct pdw_bytes *payload,
                                uint64_t time) {
        struct pdw_id id = { .pid = UINT32_MAX, .tid = UINT32_MAX, .time = time, .id = 0x100, .cpu = cpu };
        struct pdw_bytes b = {};

        pdw_u64(&b, offset);
        pdw_u64(&b, payload->n);
        pdw_u64(&b, 0);
        pdw_sample_id(&b, DIFF_ID_TYPES, &id);
        pdw_record(w, PERF_RECORD_AUX, 0, &b);
        pdw_bytes_free(&b);
        pdw_auxtrace(w, offset, cpu, payload);
}
