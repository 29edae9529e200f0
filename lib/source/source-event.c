/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pfm.h"
#include "source.h"

/*
 * Source=event:<libpfm event>: the escape hatch for an event this daemon has
 * no source of its own for.  libpfm encodes the string; the samples go
 * through the generic decode, so only kernel-filled fields (ADDR, DATA_SRC,
 * WEIGHT) reach the tracker, and nothing checks that the event samples
 * memory accesses at all.
 */

#define EVENT_PERIOD_DEFAULT 1000

static int event_build_events(const struct dp_source *source, const struct dp_source_options *options, int cpu,
                              struct dp_event_plan *plan) {
        struct perf_event_attr *attr = &plan->event[0].attr;
        char why[128];
        int r;

        if (cpu < 0)
                return dp_event_plan_note(plan, -EINVAL, "event: invalid cpu %d", cpu);
        if (!options->event || !options->event[0])
                return dp_event_plan_note(plan, -EINVAL, "event: no libpfm event string given");
        memset(attr, 0, sizeof(*attr));
        r = dp_pfm_encode(options->event, attr, why, sizeof(why));
        if (r < 0)
                return dp_event_plan_note(plan, r, "event:%s: %s", options->event, why);
        r = dp_source_attr_sampling(options, EVENT_PERIOD_DEFAULT, attr, plan);
        if (r < 0)
                return r;

        snprintf(plan->pmu, sizeof(plan->pmu), "%s", source->pmu);
        dp_event_plan_single(plan, source->name);
        return 0;
}

const struct dp_source dp_source_event = {
        .name = "event",
        .pmu = "libpfm",
        .description = "a libpfm-encoded event given as Source=event:... (not verified as memory sampling)",
        .hardware = false,
        .decode = dp_source_decode_generic,
        .build_events = event_build_events,
};
