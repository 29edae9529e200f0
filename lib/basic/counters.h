/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The observability model: per-CPU counters for the seven pipeline layers.
 * The per-CPU sampler state machine, whose word struct dp_cpu_stats also
 * holds, is cpu-state.h.
 *
 * Each counter has exactly one writer thread.  Writers keep running totals in
 * a private struct dp_counter_values and publish the range they own once per
 * batch into a seqcount-protected block on its own cache line, so a reader on
 * another thread gets a consistent copy of each block without taking a lock,
 * and the hot path only touches thread-private memory.
 *
 * Invariants (per CPU and in total, in any snapshot):
 *   valid + null + addr_zero + kernel + inv_phys == callback
 *   enqueue + overflow == valid
 *   dequeue + in_flight == enqueue        (in_flight >= 0)
 *   match + miss_tgid + miss_region + miss_bound == dequeue
 *   update <= match
 * The AUX counters (aux_truncated .. spe_no_data) are outside these sums: a
 * flagged stretch's records, and incomplete ones, still count as callbacks;
 * skipped bytes and records without a data address never do.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "macro.h"

enum dp_counter {
        /* Layers 1-3, written by the control thread that sets samplers up. */
        DP_C_CREATE,            /* perf_event_open succeeded */
        DP_C_BIND,              /* ring mapped */
        DP_C_ENABLE,            /* event enabled */
        /* Layers 4-5, written by the CPU's ring reader. */
        DP_C_CALLBACK,          /* PERF_RECORD_SAMPLE records seen */
        DP_C_VALID,             /* ... decoded with a usable address */
        DP_C_NULL,              /* ... malformed, or without an address */
        DP_C_ADDR_ZERO,         /* ... address 0 */
        DP_C_KERNEL,            /* ... kernel address */
        DP_C_INV_PHYS,          /* ... physical target, but no physical address */
        DP_C_ENQUEUE,           /* valid samples queued for the tracker */
        DP_C_OVERFLOW,          /* valid samples dropped: queue full */
        DP_C_RING_PEAK,         /* deepest queue occupancy seen (a level, not a count) */
        DP_C_LOST,              /* kernel PERF_RECORD_LOST totals */
        DP_C_LOST_SAMPLES,      /* kernel PERF_RECORD_LOST_SAMPLES totals */
        DP_C_KERNEL_LOST,       /* PERF_FORMAT_LOST as last read (a level) */
        DP_C_THROTTLE,          /* PERF_RECORD_THROTTLE */
        DP_C_UNTHROTTLE,        /* PERF_RECORD_UNTHROTTLE */
        DP_C_BAD_RECORD,        /* non-sample records or ring headers that were corrupt */
        DP_C_WAKEUP,            /* reader passes over the ring */
        /* Layers 5-7, written by the region tracker. */
        DP_C_DEQUEUE,           /* samples taken from the queue */
        DP_C_DRAIN,             /* non-empty drain batches */
        DP_C_MATCH,             /* samples attributed to a region */
        DP_C_MISS_TGID,         /* no such target */
        DP_C_MISS_REGION,       /* inside the target's bounds, in no region */
        DP_C_MISS_BOUND,        /* outside the target's bounds */
        DP_C_UPDATE,            /* region access-count increments (<= match, DAMON-style) */
        /* AUX sources (ARM SPE), written by the CPU's ring reader.  Outside the
         * callback chain: they count stretches, bytes and records that never
         * became a callback of their own. */
        DP_C_AUX_TRUNCATED,     /* PERF_RECORD_AUX flagged TRUNCATED: the kernel stopped the event */
        DP_C_AUX_PARTIAL,       /* ... flagged PARTIAL: the stretch holds a damaged record */
        DP_C_AUX_COLLISION,     /* ... flagged COLLISION: samples collided in the hardware */
        DP_C_SPE_BAD_BYTES,     /* SPE bytes skipped to resynchronise on a packet boundary */
        DP_C_SPE_NO_DATA,       /* SPE records without a data address (branches, other ops): not a callback */
        _DP_C_MAX,
};

enum dp_counter_owner {
        DP_OWNER_CONTROL,
        DP_OWNER_READER,
        DP_OWNER_TRACKER,
        _DP_OWNER_MAX,
};

struct dp_counter_values {
        uint64_t v[_DP_C_MAX];
};

struct dp_counter_block {
        _Atomic uint32_t seq;
        _Atomic uint64_t v[_DP_C_MAX];
} DP_ALIGNED_CACHELINE;

struct dp_cpu_stats {
        /* The CPU's state, step and error packed in one word (cpu-state.h), so
         * readers see a consistent triple. */
        _Atomic uint64_t status;
        struct dp_counter_block block[_DP_OWNER_MAX];
};

const char *dp_counter_name(enum dp_counter c);
enum dp_counter_owner dp_counter_owner(enum dp_counter c);
/* Counters that are levels (peaks, last reads) rather than monotonic counts. */
bool dp_counter_is_level(enum dp_counter c);

/* Zeroes @s: every counter 0, the state DP_CPU_UNINIT. */
void dp_cpu_stats_init(struct dp_cpu_stats *s);

/* Writer side: publish @owner's counters from the private @values. */
void dp_counters_publish(struct dp_cpu_stats *s, enum dp_counter_owner owner,
                         const struct dp_counter_values *values);

/* Reader side: a consistent copy of every block, downstream owners read first
 * so that each stage never appears ahead of the one feeding it. */
void dp_counters_snapshot(const struct dp_cpu_stats *s, struct dp_counter_values *out);

/* Adds @b into @a (levels take the maximum). */
void dp_counters_sum(struct dp_counter_values *a, const struct dp_counter_values *b);

static inline uint64_t dp_counters_in_flight(const struct dp_counter_values *v) {
        return v->v[DP_C_ENQUEUE] - v->v[DP_C_DEQUEUE];
}

/* Checks the invariants above; returns 0, or -EPROTO naming the first broken
 * one in *which (a static string). */
int dp_counters_check(const struct dp_counter_values *v, const char **which);
