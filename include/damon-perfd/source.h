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

struct dp_pmu_set;
struct dp_event_plan;

/* What a source's AUX area holds, if it has one. */
enum dp_aux_format {
        DP_AUX_NONE,            /* no AUX area: samples are PERF_RECORD_SAMPLE records */
        DP_AUX_ARM_SPE,         /* ARM SPE packets (damon-perfd/decode-spe.h) */
};

struct dp_source_options {
        uint64_t sample_period;         /* events per sample; 0 = the source's default */
        bool want_phys;                 /* ask for PERF_SAMPLE_PHYS_ADDR */
        uint32_t wakeup_bytes;          /* ring fill level that wakes the reader */

        /* Hardware sources (damon-perfd/pmu.h). */
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
        /* Fills @attr for @cpu; 0 or a negative errno. */
        int (*build_attr)(const struct dp_source *source, const struct dp_source_options *options,
                          int cpu, struct perf_event_attr *attr);
        /* Turns one parsed sample into @out (whose cpu the caller has set);
         * -ENODATA when the record carries no data address. */
        int (*decode)(const struct dp_perf_sample *ps, struct dp_sample *out);
        /* Optional: every event @cpu needs (groups, a second event, an AUX
         * area).  Sources without it open the one event build_attr gives. */
        int (*build_events)(const struct dp_source *source, const struct dp_source_options *options,
                            int cpu, struct dp_event_plan *plan);
        /* AUX sources: how to read the AUX area their PERF_RECORD_AUX records
         * announce (the ring reader decodes it; see dp_ring_reader_attach_aux()). */
        enum dp_aux_format aux_format;
};

extern const struct dp_source dp_source_pagefault;
extern const struct dp_source dp_source_ibs;    /* AMD IBS op (lib/source-ibs.c) */
extern const struct dp_source dp_source_pebs;   /* Intel PEBS load latency (lib/source-pebs.c) */
extern const struct dp_source dp_source_spe;    /* ARM SPE, AUX area (lib/source-spe.c) */
extern const struct dp_source dp_source_event;  /* Source=event:<libpfm event> (lib/source-pebs.c) */

/* Looks a source up by configuration name ("pagefault", "ibs", "pebs",
 * "spe", or "event:..." for dp_source_event); NULL when unknown. */
const struct dp_source *dp_source_find(const char *name);

/* The events @source needs on @cpu: build_events when the source has it,
 * else the single event of build_attr.  On failure @plan->note says why. */
int dp_source_build_events(const struct dp_source *source, const struct dp_source_options *options, int cpu,
                           struct dp_event_plan *plan);

/* Fields every source sets the same way: disabled at open, sample_id_all,
 * CLOCK_MONOTONIC timestamps, watermark wakeups, PERF_FORMAT_LOST. */
void dp_source_attr_common(const struct dp_source_options *options, struct perf_event_attr *attr);

/* Generic decode of kernel-filled fields (ADDR, PHYS_ADDR, DATA_SRC, WEIGHT). */
int dp_source_decode_generic(const struct dp_perf_sample *ps, struct dp_sample *out);
