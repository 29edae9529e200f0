/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "damon-perfd/pmu.h"
#include "damon-perfd/source.h"

/* data_src of samples whose source has nothing to say: every field "not available". */
#define DATA_SRC_NA                                                                     \
        ((uint64_t) PERF_MEM_OP_NA << PERF_MEM_OP_SHIFT |                               \
         (uint64_t) PERF_MEM_LVL_NA << PERF_MEM_LVL_SHIFT |                             \
         (uint64_t) PERF_MEM_SNOOP_NA << PERF_MEM_SNOOP_SHIFT |                         \
         (uint64_t) PERF_MEM_LOCK_NA << PERF_MEM_LOCK_SHIFT |                           \
         (uint64_t) PERF_MEM_TLB_NA << PERF_MEM_TLB_SHIFT)

void dp_source_attr_common(const struct dp_source_options *options, struct perf_event_attr *attr) {
        attr->size = sizeof(*attr);
        attr->disabled = 1;
        attr->sample_id_all = 1;
        attr->use_clockid = 1;
        attr->clockid = CLOCK_MONOTONIC;
        attr->read_format = PERF_FORMAT_LOST;
        if (options->wakeup_bytes) {
                attr->watermark = 1;
                attr->wakeup_watermark = options->wakeup_bytes;
        } else
                attr->wakeup_events = 1;
}

int dp_source_decode_generic(const struct dp_perf_sample *ps, struct dp_sample *out) {
        if (!(ps->present & PERF_SAMPLE_ADDR))
                return -ENODATA;

        out->vaddr = ps->addr;
        out->pid = ps->pid;
        out->tid = ps->tid;
        out->time = ps->time;
        out->paddr = ps->phys_addr;
        out->data_src = ps->data_src;
        out->latency = (uint32_t) ps->weight; /* WEIGHT_STRUCT: var1_dw, the latency */
        out->flags = 0;
        if (ps->phys_addr)
                out->flags |= DP_SAMPLE_PHYS_VALID;
        if ((ps->present & PERF_SAMPLE_DATA_SRC) && ps->data_src && ps->data_src != DATA_SRC_NA) {
                union perf_mem_data_src src = { .val = ps->data_src };

                out->flags |= DP_SAMPLE_DATA_SRC_VALID;
                if (src.mem_op & PERF_MEM_OP_LOAD)
                        out->flags |= DP_SAMPLE_LOAD;
                if (src.mem_op & PERF_MEM_OP_STORE)
                        out->flags |= DP_SAMPLE_STORE;
        }
        if ((ps->present & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) && out->latency)
                out->flags |= DP_SAMPLE_LATENCY_VALID;
        return 0;
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
        int r;

        if (!source || !options || !plan)
                return -EINVAL;
        *plan = (struct dp_event_plan) {};
        if (source->build_events)
                return source->build_events(source, options, cpu, plan);

        r = source->build_attr(source, options, cpu, &plan->event[0].attr);
        if (r < 0) {
                snprintf(plan->note, sizeof(plan->note), "%s: cannot build the event for cpu %d (%s)",
                         source->name, cpu, strerror(-r));
                return r;
        }
        plan->n = 1;
        plan->event[0].leader = 0;
        plan->event[0].sampling = true;
        plan->event[0].role = source->name;
        snprintf(plan->pmu, sizeof(plan->pmu), "%s", source->pmu);
        return 0;
}
