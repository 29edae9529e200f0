/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "pmu.h"
#include "source.h"
#include "source-choose.h"

void dp_source_attr_common(const struct dp_source_options *options, struct perf_event_attr *attr) {
        attr->size = sizeof(*attr);
        attr->disabled = 1;
        attr->sample_id_all = 1;
        attr->use_clockid = 1;
        attr->clockid = CLOCK_MONOTONIC;
        /* time_enabled: a CPU's event stops counting time once the kernel
         * detaches it (its CPU went offline), which is how the reader notices. */
        attr->read_format = PERF_FORMAT_LOST | PERF_FORMAT_TOTAL_TIME_ENABLED;
        if (options->wakeup_bytes) {
                attr->watermark = 1;
                attr->wakeup_watermark = options->wakeup_bytes;
        } else
                attr->wakeup_events = 1;
}

int dp_source_attr_sampling(const struct dp_source_options *options, uint64_t default_period,
                            struct perf_event_attr *attr, struct dp_event_plan *plan) {
        if (options->sample_period && options->sample_freq)
                return dp_event_plan_note(plan, -EINVAL, "set a sample period or a frequency, not both");
        if (options->sample_freq) {
                attr->freq = 1;
                attr->sample_freq = options->sample_freq;
        } else if (options->sample_period || !attr->sample_period) {
                attr->freq = 0;
                attr->sample_period = options->sample_period ?: default_period;
        }
        attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                            PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
        /* The kernel derives it by walking page tables in the NMI: only when asked. */
        if (options->want_phys)
                attr->sample_type |= PERF_SAMPLE_PHYS_ADDR;
        dp_source_attr_common(options, attr);
        return 0;
}

int dp_source_decode_generic(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                             struct dp_sample *out) {
        (void) context;
        if (!(ps->present & PERF_SAMPLE_ADDR))
                return -ENODATA;
        dp_source_fill_generic(out, ps->present, ps->addr, ps->pid, ps->tid, ps->time, ps->phys_addr,
                               ps->data_src, ps->weight);
        return 0;
}

int dp_source_decode_record(const struct dp_source *source, const struct dp_source_context *context,
                            const struct dp_perf_layout *layout, const struct perf_event_header *h,
                            struct dp_sample *out) {
        struct dp_perf_sample ps;
        int r;

        if (dp_source_reads_in_place(source, layout, h))
                return dp_source_decode_in_place(layout, h, out);

        r = dp_perf_parse_sample(layout, h, h->size, &ps);
        if (r < 0)
                return r;
        if (ps.present & PERF_SAMPLE_CPU)
                out->cpu = (uint16_t) ps.cpu;
        return source->decode(&ps, context, out);
}

const struct dp_source *dp_source_find(const char *name) {
        static const struct dp_source *const sources[] = {
                &dp_source_pagefault, &dp_source_ibs, &dp_source_pebs, &dp_source_spe,
        };

        if (!name)
                return NULL;
        /* "event:<libpfm event>": the string itself travels in dp_source_options.event. */
        if (strncmp(name, DP_SOURCE_EVENT_PREFIX, strlen(DP_SOURCE_EVENT_PREFIX)) == 0)
                return &dp_source_event;
        for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
                if (strcmp(sources[i]->name, name) == 0)
                        return sources[i];
        return NULL;
}

int dp_source_build_events(const struct dp_source *source, const struct dp_source_options *options, int cpu,
                           struct dp_event_plan *plan) {
        if (!source || !options || !plan)
                return -EINVAL;
        *plan = (struct dp_event_plan) {};
        return source->build_events(source, options, cpu, plan);
}
