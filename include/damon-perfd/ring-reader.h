/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The per-CPU reader stage: take every record the kernel has put in one perf
 * ring, decode samples with the CPU's source, sort them into the sampling
 * layer's outcomes and queue the valid ones for the tracker.  Pure memory
 * work (the caller does the waiting), so tests drive it with synthetic rings.
 */

#include <stdbool.h>

#include "damon-perfd/counters.h"
#include "damon-perfd/perf-record.h"
#include "damon-perfd/perf-ring.h"
#include "damon-perfd/source.h"
#include "damon-perfd/spsc.h"

struct dp_ring_reader {
        struct dp_perf_ring ring;
        struct dp_perf_layout layout;
        const struct dp_source *source;
        struct dp_spsc *queue;
        uint16_t cpu;
        bool want_phys;                 /* samples without a physical address are inv_phys */
        struct dp_counter_values counters; /* reader-owned totals; the caller publishes them */
};

/* The sampling-layer outcome of one decoded sample: DP_C_VALID, DP_C_ADDR_ZERO,
 * DP_C_KERNEL or DP_C_INV_PHYS. */
enum dp_counter dp_sample_classify(const struct dp_sample *s, bool want_phys);

int dp_ring_reader_init(struct dp_ring_reader *r, const struct perf_event_attr *attr,
                        const struct dp_source *source, struct dp_spsc *queue, uint16_t cpu, bool want_phys);

/* One sample already parsed (from a ring or a perf.data file), counted as a
 * callback by the caller: decode, classify, queue.  The queue is published by
 * dp_spsc_publish(), once per batch. */
void dp_ring_reader_take_sample(struct dp_ring_reader *r, const struct dp_perf_sample *ps);

/* A non-sample record: loss, throttling; others are ignored. */
void dp_ring_reader_take_other(struct dp_ring_reader *r, const struct perf_event_header *h);

/* Handles every record available now, publishes the queued samples in one
 * batch and returns the ring space to the kernel.  Returns the number of
 * records handled. */
size_t dp_ring_reader_drain(struct dp_ring_reader *r);
