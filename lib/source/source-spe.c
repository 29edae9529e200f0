/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pmu.h"
#include "parse-util.h"
#include "source.h"

/*
 * ARM SPE (drivers/perf/arm_spe_pmu.c).  Records go to an AUX area, not the
 * ring: the sampler maps plan->aux_pages pages of it, attaches it to the ring
 * reader, and the SPE packet decoder (decode-spe.h) turns them
 * into samples.  The driver
 * refuses frequency mode, raises a period below caps/min_interval to it and
 * keeps only bits 8-31 of the period (PMSIRR_EL1.INTERVAL).
 */

#define SPE_PERIOD_DEFAULT 4096
#define SPE_PERIOD_MAX UINT64_C(0xffffff00)
#define SPE_PERIOD_GRANULE 256
#define SPE_AUX_PAGES_DEFAULT 128       /* 512 KiB with 4 KiB pages */
#define SPE_AUX_PAGES_MIN 2             /* the driver's setup_aux needs two */

static int spe_set(const struct dp_pmu *pmu, const char *field, uint64_t value, struct perf_event_attr *attr,
                   struct dp_event_plan *plan) {
        int r = dp_pmu_set_field(pmu, field, value, attr);

        if (r == -ENOENT)
                return dp_event_plan_note(plan, -EOPNOTSUPP, "%s has no format/%s", pmu->name, field);
        if (r < 0)
                return dp_event_plan_note(plan, r, "%s: %s=%" PRIu64 " %s", pmu->name, field, value,
                                          r == -ERANGE ? "does not fit its format field" : strerror(-r));
        return 0;
}

static int spe_period(const struct dp_pmu *pmu, const struct dp_source_options *options, uint64_t *ret,
                      struct dp_event_plan *plan) {
        uint64_t period = options->sample_period ?: SPE_PERIOD_DEFAULT, min_interval = 0;
        const char *cap = dp_pmu_cap(pmu, "min_interval");

        if (cap) {
                if (dp_parse_uint(cap, 10, &min_interval, NULL) < 0)
                        return dp_event_plan_note(plan, -EBADMSG, "%s: caps/min_interval is malformed (\"%s\")",
                                                  pmu->name, cap);
        } else
                dp_event_plan_note(plan, 0, "%s: no caps/min_interval; the driver clamps the period itself",
                                   pmu->name);

        if (period > SPE_PERIOD_MAX)
                return dp_event_plan_note(plan, -ERANGE, "%s: period %" PRIu64 " exceeds the maximum %" PRIu64,
                                          pmu->name, period, SPE_PERIOD_MAX);
        if (period < min_interval) {
                dp_event_plan_note(plan, 0, "%s: period %" PRIu64 " raised to caps/min_interval %" PRIu64,
                                   pmu->name, period, min_interval);
                period = min_interval;
        }
        if (period % SPE_PERIOD_GRANULE) {
                uint64_t rounded = period / SPE_PERIOD_GRANULE * SPE_PERIOD_GRANULE;

                if (rounded < min_interval || rounded == 0)
                        rounded += SPE_PERIOD_GRANULE;
                dp_event_plan_note(plan, 0, "%s: period %" PRIu64 " set to %" PRIu64
                                   " (the interval register holds multiples of 256)", pmu->name, period, rounded);
                period = rounded;
        }
        *ret = period;
        return 0;
}

static int spe_build_events(const struct dp_source *source, const struct dp_source_options *options, int cpu,
                            struct dp_event_plan *plan) {
        struct perf_event_attr *attr = &plan->event[0].attr;
        uint32_t aux_pages = options->aux_pages ?: SPE_AUX_PAGES_DEFAULT;
        const struct dp_pmu *pmu;
        uint64_t period = 0;
        long page_size;
        int r;

        (void) source;
        if (cpu < 0)
                return dp_event_plan_note(plan, -EINVAL, "spe: invalid cpu %d", cpu);
        if (!options->pmus)
                return dp_event_plan_note(plan, -ENODEV, "spe: no detected PMUs were given");
        pmu = dp_pmu_set_for_cpu(options->pmus, DP_PMU_SPE, cpu);
        if (!pmu)
                return dp_event_plan_note(plan, -ENODEV, "spe: no usable arm_spe PMU covers cpu %d", cpu);
        snprintf(plan->pmu, sizeof(plan->pmu), "%s", pmu->name);

        if (options->sample_freq)
                return dp_event_plan_note(plan, -EINVAL,
                                          "%s: frequency mode is refused by the SPE driver; give a period",
                                          pmu->name);
        if (aux_pages < SPE_AUX_PAGES_MIN || (aux_pages & (aux_pages - 1)))
                return dp_event_plan_note(plan, -EINVAL,
                                          "%s: AUX area of %" PRIu32 " pages; it must be a power of two >= 2",
                                          pmu->name, aux_pages);
        r = spe_period(pmu, options, &period, plan);
        if (r < 0)
                return r;

        memset(attr, 0, sizeof(*attr));
        attr->type = pmu->type;
        attr->sample_period = period;

        /* Timestamps end each record; jitter avoids lock-step with loops. */
        r = spe_set(pmu, "ts_enable", 1, attr, plan);
        if (r >= 0)
                r = spe_set(pmu, "jitter", 1, attr, plan);
        if (r >= 0)
                r = spe_set(pmu, "load_filter", 1, attr, plan);
        if (r >= 0 && options->want_stores)
                r = spe_set(pmu, "store_filter", 1, attr, plan);
        /* Physical addresses need CAP_PERFMON at open (EACCES otherwise). */
        if (r >= 0 && options->want_phys)
                r = spe_set(pmu, "pa_enable", 1, attr, plan);
        if (r >= 0 && options->min_latency)
                r = spe_set(pmu, "min_latency", options->min_latency, attr, plan);
        if (r < 0)
                return r;

        /* Samples live in the AUX area; the ring carries AUX records with their sample_id. */
        attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
        dp_source_attr_common(options, attr);
        /* As perf: a guest's accesses are not the host process's that runs it. */
        attr->exclude_guest = 1;
        page_size = sysconf(_SC_PAGESIZE);
        if (page_size > 0)
                attr->aux_watermark = (uint32_t) ((uint64_t) aux_pages * (uint64_t) page_size / 2);

        plan->aux_pages = aux_pages;
        dp_event_plan_single(plan, "arm_spe");
        return 0;
}

const struct dp_source dp_source_spe = {
        .name = "spe",
        .pmu = "arm_spe",
        .description = "ARM SPE: sampled loads (and stores) with addresses and latency, via the AUX area",
        .hardware = true,
        /* SPE delivers no PERF_RECORD_SAMPLE: the ring reader decodes its AUX area
         * (dp_ring_reader_attach_aux(), decode-spe.h). */
        .decode = dp_source_decode_generic,
        .build_events = spe_build_events,
        .aux_format = DP_AUX_ARM_SPE,
};
