/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A sample source: which perf event to open on each CPU and how its records
 * become struct dp_sample.  The software page-fault event is the positive
 * control; hardware sources (IBS op, PEBS, SPE) slot in beside it with their
 * own event builders and decoders.  A source that is not a hardware
 * memory-access sampler says so in @hardware, and that label travels with
 * every counter and region it produces.
 */

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

#include "event-plan.h"
#include "perf-record.h"
#include "sample.h"
#include "source-context.h"

struct dp_pmu_set;

/* What a source's AUX area holds, if it has one. */
enum dp_aux_format {
        DP_AUX_NONE,            /* no AUX area: samples are PERF_RECORD_SAMPLE records */
        DP_AUX_ARM_SPE,         /* ARM SPE packets (decode-spe.h) */
};

struct dp_source_options {
        uint64_t sample_period;         /* events per sample; 0 = the source's default */
        bool want_phys;                 /* ask for PERF_SAMPLE_PHYS_ADDR */
        uint32_t wakeup_bytes;          /* ring fill level that wakes the reader */

        /* Hardware sources (pmu.h). */
        const struct dp_pmu_set *pmus;  /* detected PMUs; hardware sources fail with -ENODEV without */
        uint64_t sample_freq;           /* samples/s instead of a period (IBS, PEBS); SPE refuses */
        uint32_t min_latency;           /* load-latency threshold, cycles: PEBS ldlat, IBS ldlat
                                         * (Zen5, 128-2048), SPE min_latency; 0 = source default */
        bool l3_miss_only;              /* IBS: sample only ops that missed L3 (l3missonly) */
        bool count_ops;                 /* IBS: count dispatched ops, not cycles (cnt_ctl) */
        bool want_stores;               /* PEBS: add mem-stores; SPE: store_filter beside load_filter */
        const char *pfm_pmu;            /* PEBS: libpfm PMU for the cpu PMU ("spr", "icl"); NULL = the
                                         * host's; "" = no libpfm, the kernel's sysfs strings only */
        const char *event;              /* Source=event:...: the libpfm event string */
        uint32_t aux_pages;             /* SPE: AUX area pages, a power of two >= 2; 0 = default */
};

struct dp_source {
        const char *name;               /* configuration name, e.g. "pagefault" */
        const char *pmu;                /* PMU name as in /sys/bus/event_source/devices */
        const char *description;
        bool hardware;                  /* false: a software positive control, not memory-access sampling */
        /* Turns one parsed sample into @out (whose cpu the caller has set);
         * -ENODATA when the record carries no data address.  @context is what
         * is known of the machine the sample comes from (IBS errata), NULL
         * for nothing. */
        int (*decode)(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                      struct dp_sample *out);
        /* Every event @cpu needs (groups, a second event, an AUX area) into
         * @plan, which the caller has zeroed; on failure @plan->note says why.
         * Called through dp_source_build_events(). */
        int (*build_events)(const struct dp_source *source, const struct dp_source_options *options,
                            int cpu, struct dp_event_plan *plan);
        /* AUX sources: how to read the AUX area their PERF_RECORD_AUX records
         * announce (the ring reader decodes it; see dp_ring_reader_attach_aux()). */
        enum dp_aux_format aux_format;
};

extern const struct dp_source dp_source_pagefault;
extern const struct dp_source dp_source_ibs;    /* AMD IBS op (lib/source/source-ibs.c) */
extern const struct dp_source dp_source_pebs;   /* Intel PEBS load latency (lib/source/source-pebs.c) */
extern const struct dp_source dp_source_spe;    /* ARM SPE, AUX area (lib/source/source-spe.c) */
extern const struct dp_source dp_source_event;  /* Source=event:<libpfm event> (lib/source/source-event.c) */

/* Looks a source up by configuration name ("pagefault", "ibs", "pebs",
 * "spe", or "event:..." for dp_source_event); NULL when unknown. */
const struct dp_source *dp_source_find(const char *name);

/* The events @source needs on @cpu: the one way to build them (callers
 * wanting a single event take plan->event[0].attr).  On failure
 * @plan->note says why. */
int dp_source_build_events(const struct dp_source *source, const struct dp_source_options *options, int cpu,
                           struct dp_event_plan *plan);

/* Fields every source sets the same way: disabled at open, sample_id_all,
 * CLOCK_MONOTONIC timestamps, watermark wakeups, PERF_FORMAT_LOST and TOTAL_TIME_ENABLED. */
void dp_source_attr_common(const struct dp_source_options *options, struct perf_event_attr *attr);

/* A sampling event of a source whose samples carry the kernel-filled fields
 * (PEBS, Source=event:...): @options' period or frequency (a period @attr
 * already has, e.g. from a libpfm string, stays unless @options sets one;
 * @default_period when neither), the sample fields the generic decode reads
 * (PHYS_ADDR only when asked) and dp_source_attr_common().  -EINVAL with a
 * note when both a period and a frequency are set. */
int dp_source_attr_sampling(const struct dp_source_options *options, uint64_t default_period,
                            struct perf_event_attr *attr, struct dp_event_plan *plan);

/* Generic decode of kernel-filled fields (ADDR, PHYS_ADDR, DATA_SRC, WEIGHT). */
int dp_source_decode_generic(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                             struct dp_sample *out);

/* One PERF_RECORD_SAMPLE of @layout (@h->size bytes, 8-byte aligned) through
 * @source into @out: the CPU when the record has one (else @out->cpu is left
 * as the caller set it), then source->decode.  For dp_source_decode_generic
 * and a layout of fixed size the fields are read in place, with the very same
 * result.  -EBADMSG for a malformed record, else what decode returns. */
int dp_source_decode_record(const struct dp_source *source, const struct dp_source_context *context,
                            const struct dp_perf_layout *layout, const struct perf_event_header *h,
                            struct dp_sample *out);

/* data_src of samples whose source has nothing to say: every field "not available". */
#define DP_DATA_SRC_NA                                                                  \
        ((uint64_t) PERF_MEM_OP_NA << PERF_MEM_OP_SHIFT |                               \
         (uint64_t) PERF_MEM_LVL_NA << PERF_MEM_LVL_SHIFT |                             \
         (uint64_t) PERF_MEM_SNOOP_NA << PERF_MEM_SNOOP_SHIFT |                         \
         (uint64_t) PERF_MEM_LOCK_NA << PERF_MEM_LOCK_SHIFT |                           \
         (uint64_t) PERF_MEM_TLB_NA << PERF_MEM_TLB_SHIFT)

/* What dp_source_decode_generic() makes of the kernel-filled fields, wherever
 * they were read from. */
static inline void dp_source_fill_generic(struct dp_sample *out, uint64_t present, uint64_t addr, uint32_t pid,
                                          uint32_t tid, uint64_t time, uint64_t phys_addr, uint64_t data_src,
                                          uint64_t weight) {
        uint16_t flags = 0;

        out->vaddr = addr;
        out->pid = pid;
        out->tid = tid;
        out->time = time;
        out->paddr = phys_addr;
        out->data_src = data_src;
        out->latency = (uint32_t) weight; /* WEIGHT_STRUCT: var1_dw, the latency */
        if (phys_addr)
                flags |= DP_SAMPLE_PHYS_VALID;
        if ((present & PERF_SAMPLE_DATA_SRC) && data_src && data_src != DP_DATA_SRC_NA) {
                union perf_mem_data_src src = { .val = data_src };

                flags |= DP_SAMPLE_DATA_SRC_VALID;
                if (src.mem_op & PERF_MEM_OP_LOAD)
                        flags |= DP_SAMPLE_LOAD;
                if (src.mem_op & PERF_MEM_OP_STORE)
                        flags |= DP_SAMPLE_STORE;
        }
        if ((present & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && (uint32_t) weight)
                flags |= DP_SAMPLE_LATENCY_VALID;
        out->flags = flags;
}

/* Whether dp_source_decode_record() reads this sample record in place: the
 * generic decode, a layout of fixed size that @h has, an aligned record.
 * Its fields are then exactly the layout's, e.g. vaddr the ADDR at off_addr
 * and DP_SAMPLE_PHYS_VALID a non-zero PHYS_ADDR at off_phys_addr. */
static inline bool dp_source_reads_in_place(const struct dp_source *source, const struct dp_perf_layout *layout,
                                            const struct perf_event_header *h) {
        return source->decode == dp_source_decode_generic && layout->sample_size &&
               h->size == layout->sample_size && (uintptr_t) h % 8 == 0;
}

/* A field at a fixed offset of a sample body, 0 when absent. */
static inline uint64_t dp_source_field_u64(const uint8_t *body, int16_t off) {
        return off >= 0 ? dp_load_u64(body + off) : 0;
}

/* dp_source_decode_record() of a record dp_source_reads_in_place(), inline
 * for the readers' loops. */
static inline int dp_source_decode_in_place(const struct dp_perf_layout *layout, const struct perf_event_header *h,
                                            struct dp_sample *out) {
        const uint8_t *body = (const uint8_t *) h + sizeof(*h);

        if (layout->off_cpu >= 0)
                out->cpu = (uint16_t) dp_load_u32(body + layout->off_cpu);
        if (layout->off_addr < 0)
                return -ENODATA;
        dp_source_fill_generic(out, layout->sample_type, dp_load_u64(body + layout->off_addr),
                               layout->off_tid >= 0 ? dp_load_u32(body + layout->off_tid) : 0,
                               layout->off_tid >= 0 ? dp_load_u32(body + layout->off_tid + 4) : 0,
                               dp_source_field_u64(body, layout->off_time),
                               dp_source_field_u64(body, layout->off_phys_addr),
                               dp_source_field_u64(body, layout->off_data_src),
                               dp_source_field_u64(body, layout->off_weight));
        return 0;
}
