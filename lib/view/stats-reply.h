/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The reply of io.damon.perfd.GetStats as a client sees it: parsed and
 * checked against the interface, turned into per-second rates between two
 * replies, and rendered as the counter table people read.
 *
 * The values are the interface's Counters: the pipeline counters of
 * counters.h, in that order, then in_flight.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "counters.h"

enum {
        DP_STATS_IN_FLIGHT = _DP_C_MAX,
        _DP_STATS_VALUES_MAX,
};

struct dp_stats_values {
        int64_t v[_DP_STATS_VALUES_MAX];
};

/* The field name of value @i in Counters, NULL past the end. */
const char *dp_stats_value_name(unsigned i);
/* Levels (ring_peak, kernel_lost, in_flight) are shown as values, not rates. */
bool dp_stats_value_is_level(unsigned i);

struct dp_stats_reply_cpu {
        int64_t cpu;
        const char *state;              /* as received; points into the document */
        struct dp_stats_values values;
};

struct dp_stats_reply {
        json_t *doc;                    /* a reference; the strings point into it */
        const char *source_name;
        const char *source_pmu;
        const char *source_description;
        bool source_hardware;
        const char *source_reason;      /* why this source; NULL from daemons that do not say */
        int64_t uptime_usec;
        double sample_rate;
        struct dp_stats_values totals;
        size_t n_cpus;
        struct dp_stats_reply_cpu *cpus;
        /* The daemon's capability sets, arrays of names in the document;
         * NULL from daemons that do not report them. */
        json_t *cap_effective, *cap_permitted, *cap_bounding;
};

/* Parses the reply parameters @params.  -EBADMSG when they do not have the
 * interface's shape, with the offending field named in @error; -ENOMEM. */
int dp_stats_reply_parse(json_t *params, struct dp_stats_reply *ret, char *error, size_t error_size);
void dp_stats_reply_done(struct dp_stats_reply *r);

/* The counters of @v as struct dp_counter_values, for dp_counters_check()
 * (in_flight is derived there). */
void dp_stats_values_to_counters(const struct dp_stats_values *v, struct dp_counter_values *out);

struct dp_stats_rates_cpu {
        int64_t cpu;
        const char *state;
        double v[_DP_STATS_VALUES_MAX];
};

/* Per-second rates of the counts between two replies, levels as their
 * current value.  @seconds is the daemon's uptime between the two. */
struct dp_stats_rates {
        double seconds;
        bool since_start;               /* averages since the daemon started (no usable previous reply) */
        bool restarted;                 /* ... because counts or uptime went back */
        double total[_DP_STATS_VALUES_MAX];
        size_t n_cpus;
        struct dp_stats_rates_cpu *cpus;
};

/* Rates from @prev to @cur.  With @prev NULL, or when the daemon restarted in
 * between (uptime or a count went back), the rates are averages since the
 * daemon started.  A CPU absent from @prev is averaged since the start too.
 * Zero elapsed time gives zero rates. */
int dp_stats_rates_compute(const struct dp_stats_reply *prev, const struct dp_stats_reply *cur,
                           struct dp_stats_rates *ret);
void dp_stats_rates_done(struct dp_stats_rates *r);

/* "12345", "12.3" below 100, "0" for none: what a rate cell shows.  Returns @buf. */
char *dp_format_rate(double rate, char *buf, size_t size);

/* The header (source, PMU, the software label, uptime, sample rate, and the
 * capabilities: "capabilities: CAP_A CAP_B (effective = permitted = bounding)",
 * or each set named when they differ), the counter table by layer, and one
 * line per CPU:
 *   CPU00: st=RUNNING cb=N enq=N deq=N ovf=N match=N miss=N upd=N
 * With @rates, the counts are per-second rates and levels are values.
 * -EIO on a write error. */
int dp_stats_reply_print(FILE *f, const struct dp_stats_reply *r, const struct dp_stats_rates *rates);
