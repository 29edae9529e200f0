/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The value benchmark's workloads (tests/qemu/value.sh, tools/bench --only
 * value), fair to DAMON alone and to DAMON with the daemon: the hot memory
 * is kept busy with plain stores, which DAMON sees through the accessed
 * bit, and a sparse stream of re-faults inside it stands in for a PMU's
 * samples (the page-fault control sees only faults).  Shapes:
 *   window: a span touched once, a hot window inside it that moves once;
 *   chunks: small hot chunks (and as many cold ones, touched once) at fixed
 *           pseudo-random offsets in a sparse MAP_NORESERVE mapping.
 * With --observe, a thread reads DAMON's own tried_regions every interval
 * and judges them against the true hot set (workload-observe.c).
 */

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "range.h"

#define VALUE_MAX_CHUNKS 1024
#define VALUE_MAX_PHASES 2

struct value_phase {
        double at_s;                    /* from the start of the hot phase */
        struct dp_range hot[VALUE_MAX_CHUNKS];
        size_t nr_hot;
};

struct value_workload {
        /* options */
        const char *shape;              /* "window" or "chunks" */
        uint64_t span_bytes, window_bytes, window_at, move_to;
        double move_after_s;            /* 0: the window never moves */
        unsigned nr_chunks, nr_cold_chunks, seed;
        uint64_t chunk_bytes;
        double touch_ms, faults_per_s, seconds;
        const char *observe_dir;        /* a kdamond's sysfs directory, or NULL */
        double observe_ms;
        int spared_scheme;              /* a scheme rejecting the PMU's hot ranges, judged too; -1: none */
        /* the layout */
        char *base;
        struct dp_range cold[VALUE_MAX_CHUNKS];
        size_t nr_cold;
        struct value_phase phases[VALUE_MAX_PHASES];
        size_t nr_phases;
        double t0;                      /* CLOCK_MONOTONIC seconds at the hot phase's start */
};

/* Maps and lays out the shape, touches everything once.  0 or a negative errno
 * (-EINVAL with a message on stderr for options that do not fit). */
int value_map(struct value_workload *w);
/* The one line it prints first: pid, mapping, hot set of each phase. */
void value_describe(const struct value_workload *w);
/* The hot phase, until --seconds or *@stop. */
void value_run(struct value_workload *w, volatile sig_atomic_t *stop);

/* The observer: started before value_run(), joined and summarised after. */
struct value_observer;
int value_observe_start(const struct value_workload *w, struct value_observer **ret);
void value_observe_finish(struct value_observer *o);
