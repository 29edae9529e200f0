/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "source.h"

static int pagefault_build_events(const struct dp_source *source, const struct dp_source_options *options,
                                  int cpu, struct dp_event_plan *plan) {
        struct perf_event_attr *attr = &plan->event[0].attr;

        if (cpu < 0)
                return dp_event_plan_note(plan, -EINVAL, "%s: cannot build the event for cpu %d (%s)",
                                          source->name, cpu, strerror(EINVAL));

        memset(attr, 0, sizeof(*attr));
        attr->type = PERF_TYPE_SOFTWARE;
        attr->config = PERF_COUNT_SW_PAGE_FAULTS;
        attr->sample_period = options->sample_period ?: 1;
        attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU;
        /* Accepted, but always 0 for page faults: the sample precedes the mapping. */
        if (options->want_phys)
                attr->sample_type |= PERF_SAMPLE_PHYS_ADDR;
        dp_source_attr_common(options, attr);

        snprintf(plan->pmu, sizeof(plan->pmu), "%s", source->pmu);
        dp_event_plan_single(plan, source->name);
        return 0;
}

const struct dp_source dp_source_pagefault = {
        .name = "pagefault",
        .pmu = "software",
        .description = "software page-fault event (positive control, not hardware memory-access sampling)",
        .hardware = false,
        .decode = dp_source_decode_generic,
        .build_events = pagefault_build_events,
};
