/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A point-in-time view of the pipeline's counters and CPU states, and its two
 * renderings: JSON (stable field names, shared by --dump-stats and the
 * varlink API) and the text table people read.
 */

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "counters.h"
#include "cpu-state.h"
#include "source.h"

struct dp_cpu_view {
        int cpu;
        struct dp_cpu_status status;
        struct dp_counter_values counters;
};

struct dp_stats_view {
        const struct dp_source *source;
        const char *source_reason;      /* why this source (found, refused, chosen); NULL: none given */
        uint64_t uptime_ns;
        double sample_rate;             /* valid samples per second, recently */
        size_t n_cpus;
        struct dp_cpu_view *cpus;       /* caller-owned */
        struct dp_counter_values total;
};

/* Takes a snapshot of @n CPUs' stats into @view->cpus (room for @n) and sums the total. */
void dp_stats_collect(struct dp_stats_view *view, const struct dp_cpu_stats *const *stats, const int *cpu_ids,
                      size_t n);

/* The shapes of io.damon.perfd (varlink/io.damon.perfd.varlink): Counters, Source,
 * and GetStats()'s reply {source, uptime_usec, sample_rate, totals, cpus[{cpu, state, counters}]}. */
json_t *dp_counters_to_json(const struct dp_counter_values *v);
json_t *dp_source_to_json(const struct dp_source *source, const char *reason);
json_t *dp_stats_to_json(const struct dp_stats_view *view);

/* The counter table by layer, then one line per CPU. */
void dp_stats_print(FILE *f, const struct dp_stats_view *view);

/* Number of CPUs in @state. */
size_t dp_stats_count_state(const struct dp_stats_view *view, enum dp_cpu_state state);
