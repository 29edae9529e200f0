/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A sample source: which perf event to open on each CPU and how its records
 * become struct dp_sample.  The software page-fault event is the positive
 * control; hardware sources (IBS op, PEBS, SPE) slot in beside it with their
 * own attr builders and decoders.  A source that is not a hardware
 * memory-access sampler says so in @hardware, and that label travels with
 * every counter and region it produces.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "damon-perfd/perf-record.h"
#include "damon-perfd/sample.h"

struct dp_source_options {
        uint64_t sample_period;         /* events per sample; 0 = the source's default */
        bool want_phys;                 /* ask for PERF_SAMPLE_PHYS_ADDR */
        uint32_t wakeup_bytes;          /* ring fill level that wakes the reader */
};

struct dp_source {
        const char *name;               /* configuration name, e.g. "pagefault" */
        const char *pmu;                /* PMU name as in /sys/bus/event_source/devices */
        const char *description;
        bool hardware;                  /* false: a software positive control, not memory-access sampling */
        /* Fills @attr for @cpu; 0 or a negative errno. */
        int (*build_attr)(const struct dp_source *source, const struct dp_source_options *options,
                          int cpu, struct perf_event_attr *attr);
        /* Turns one parsed sample into @out (whose cpu the caller has set);
         * -ENODATA when the record carries no data address. */
        int (*decode)(const struct dp_perf_sample *ps, struct dp_sample *out);
};

extern const struct dp_source dp_source_pagefault;

/* Looks a source up by configuration name; NULL when unknown. */
const struct dp_source *dp_source_find(const char *name);

/* Fields every source sets the same way: disabled at open, sample_id_all,
 * CLOCK_MONOTONIC timestamps, watermark wakeups, PERF_FORMAT_LOST. */
void dp_source_attr_common(const struct dp_source_options *options, struct perf_event_attr *attr);

/* Generic decode of kernel-filled fields (ADDR, PHYS_ADDR, DATA_SRC, WEIGHT). */
int dp_source_decode_generic(const struct dp_perf_sample *ps, struct dp_sample *out);
