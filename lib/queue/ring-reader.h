/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The per-CPU reader stage: take every record the kernel has put in one perf
 * ring, decode samples with the CPU's source, sort them into the sampling
 * layer's outcomes and queue the valid ones for the tracker.  Pure memory
 * work (the caller does the waiting), so tests drive it with synthetic rings.
 */

#include <stdbool.h>

#include "aux-ring.h"
#include "counters.h"
#include "decode-spe.h"
#include "perf-record.h"
#include "perf-ring.h"
#include "source.h"
#include "spsc.h"

/* Reader-private detail of the AUX stretches, for tests and tools; what an
 * operator needs (aux_truncated, aux_partial, aux_collision, spe_bad_bytes,
 * spe_no_data) is in the published counters.  Every SPE record that is a
 * memory access still goes through
 * callback = valid + null + addr_zero + kernel + inv_phys. */
struct dp_aux_counts {
        uint64_t records;               /* PERF_RECORD_AUX records seen */
        uint64_t bytes;                 /* AUX bytes decoded */
        uint64_t overwrite;             /* stretches flagged DP_AUX_FLAG_OVERWRITE */
        uint64_t bad_range;             /* stretches that could not be read (also counted bad_record) */
        uint64_t incomplete;            /* SPE records cut off at a stretch's end (also callback + null) */
};

/* The AUX side of a reader (zeroed by dp_ring_reader_init(); attached by
 * dp_ring_reader_attach_aux()). */
struct dp_ring_reader_aux {
        struct dp_aux_ring ring;
        enum dp_aux_format format;      /* DP_AUX_NONE until attached */
        /* The task current on this CPU as PERF_RECORD_SWITCH_CPU_WIDE, COMM
         * (exec) and ITRACE_START tell it; attributes SPE records that carry
         * no CONTEXT packet.  0 = unknown: such samples count as null. */
        uint32_t pid, tid;
        /* Optional: SPE timestamps to sample time.  NULL: every sample of a
         * stretch gets the time of its PERF_RECORD_AUX (the event's clock). */
        const struct dp_spe_clock *clock;
        /* Set by a TRUNCATED stretch: the kernel disabled the event; the caller
         * re-enables it (PERF_EVENT_IOC_ENABLE) after the drain and clears this. */
        bool rearm;
        struct dp_aux_counts counts;
};

/* What became of one sample record, for tools that show every one
 * (damonctl decode --format=perf.data); never set in the daemon. */
struct dp_sample_outcome {
        const struct dp_source *source;           /* the decoder it went through */
        const struct perf_event_header *record;   /* the PERF_RECORD_SAMPLE, or NULL (SPE, or parsed already) */
        const struct dp_perf_layout *layout;      /* with @record */
        const struct dp_perf_sample *parsed;      /* dp_ring_reader_take_sample()'s sample, or NULL */
        const struct dp_spe_record *spe;          /* an SPE record, or NULL (also for one cut off) */
        const struct dp_spe_context *spe_context; /* with @spe */
        const struct dp_sample *sample;           /* what the decoder made of it; NULL when it failed */
        enum dp_counter outcome;                  /* the layer-4 counter it went to (DP_C_VALID ... DP_C_INV_PHYS) */
};

typedef void (*dp_sample_observer_fn)(const struct dp_sample_outcome *o, void *userdata);

struct dp_ring_reader {
        struct dp_perf_ring ring;
        struct dp_perf_layout layout;
        const struct dp_source *source;
        struct dp_spsc *queue;
        uint16_t cpu;
        bool want_phys;                 /* samples without a physical address are inv_phys */
        struct dp_counter_values counters; /* reader-owned totals; the caller publishes them */
        struct dp_ring_reader_aux aux;  /* AUX sources only */
        /* What the source's decode may need of the machine (IBS errata); NULL
         * after dp_ring_reader_init(), see dp_ring_reader_set_context(). */
        const struct dp_source_context *context;
        /* Told of every sample record's outcome (dp_ring_reader_set_observer());
         * NULL in the daemon, where it costs one predictable branch. */
        dp_sample_observer_fn observe;
        void *observe_data;
};

/* The sampling-layer outcome of one decoded sample: DP_C_VALID, DP_C_ADDR_ZERO,
 * DP_C_KERNEL or DP_C_INV_PHYS. */
static inline enum dp_counter dp_sample_classify(const struct dp_sample *s, bool want_phys) {
        if (s->vaddr == 0)
                return DP_C_ADDR_ZERO;
        /* The upper half of the address space is the kernel's on x86-64 and arm64. */
        if (s->vaddr >> 63)
                return DP_C_KERNEL;
        if (want_phys && !(s->flags & DP_SAMPLE_PHYS_VALID))
                return DP_C_INV_PHYS;
        return DP_C_VALID;
}

int dp_ring_reader_init(struct dp_ring_reader *r, const struct perf_event_attr *attr,
                        const struct dp_source *source, struct dp_spsc *queue, uint16_t cpu, bool want_phys);

/* The context samples are decoded in (dp_source.decode), which must
 * outlive the reader; NULL for none.  Set once, after init: it costs
 * nothing per sample beyond a test on the paths that call the source's
 * decode (never the in-place decode of kernel-filled fields). */
void dp_ring_reader_set_context(struct dp_ring_reader *r, const struct dp_source_context *context);

/* Every sample record's outcome to @fn as it is filed (NULL: none).  Runs
 * of fixed-size records are then taken one by one, not in place in bulk. */
void dp_ring_reader_set_observer(struct dp_ring_reader *r, dp_sample_observer_fn fn, void *userdata);

/* One sample already parsed (from a ring or a perf.data file), counted as a
 * callback by the caller: decode, classify, queue.  The queue is published by
 * dp_spsc_publish(), once per batch. */
void dp_ring_reader_take_sample(struct dp_ring_reader *r, const struct dp_perf_sample *ps);

/* One PERF_RECORD_SAMPLE of @layout (the ring's own, or that of the attr a
 * perf.data record belongs to), counted as a callback: decoded in place when
 * the source allows (dp_source_decode_record()), classified, queued. */
void dp_ring_reader_take_record(struct dp_ring_reader *r, const struct dp_perf_layout *layout,
                                const struct perf_event_header *h);

/* The same for @n samples of one fixed-size layout (layout->sample_size
 * bytes each) that follow each other from @first, as dp_perf_data_next_run()
 * gives them. */
void dp_ring_reader_take_records(struct dp_ring_reader *r, const struct dp_perf_layout *layout,
                                 const struct perf_event_header *first, size_t n);

/* A non-sample record: loss, throttling, AUX (with an attached AUX area),
 * task switches; others are ignored. */
void dp_ring_reader_take_other(struct dp_ring_reader *r, const struct perf_event_header *h);

/* Attaches the mapped AUX area (@aux, @aux_size bytes; @meta is the ring's
 * control page) of an AUX source (source->aux_format != DP_AUX_NONE).
 * -EINVAL for other sources or a bad area. */
int dp_ring_reader_attach_aux(struct dp_ring_reader *r, struct perf_event_mmap_page *meta, const void *aux,
                              uint64_t aux_size);

/* One PERF_RECORD_AUX: decodes the stretch it announces into samples through
 * the same classify and queue path as ring samples (each memory-access record
 * one callback), then gives the stretch back to the kernel.  @time is the
 * record's sample_id time, used for samples without a converted timestamp.
 * Publishing the queue is the caller's, as for take_sample. */
void dp_ring_reader_take_aux(struct dp_ring_reader *r, const struct dp_aux_record *aux, uint64_t time);

/* AUX bytes the caller holds rather than an attached area (the payload of a
 * perf.data PERF_RECORD_AUXTRACE), decoded as SPE with @ctx through the same
 * path as take_aux, up to @max_records records.  Returns the bytes consumed:
 * @seg->size, or less when it stopped at a record boundary after
 * @max_records (call again with the rest, at @seg->offset + that). */
size_t dp_ring_reader_take_spe_bytes(struct dp_ring_reader *r, const struct dp_aux_segment *seg,
                                     const struct dp_spe_context *ctx, size_t max_records);

/* Handles every record available now, publishes the queued samples in one
 * batch and returns the ring space to the kernel.  Returns the number of
 * records handled. */
size_t dp_ring_reader_drain(struct dp_ring_reader *r);
