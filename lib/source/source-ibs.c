/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "decode-ibs.h"
#include "pmu.h"
#include "source.h"

/*
 * AMD IBS op (arch/x86/events/amd/ibs.c).  The type and every config bit
 * come from ibs_op's sysfs entry; the period goes in attr.sample_period and
 * the kernel programs MaxCnt from it, because it refuses a raw MaxCnt in
 * config together with a period.
 */

/* MaxCnt counts in units of 16: 16 bits, plus 7 more (config 20-26) with OpCntExt. */
#define IBS_OP_PERIOD_UNIT 16
#define IBS_OP_PERIOD_MAX UINT64_C(0xffff0)             /* 1,048,560 */
#define IBS_OP_PERIOD_MAX_EXT UINT64_C(0x7fffff0)       /* 134,217,712 */
#define IBS_OP_PERIOD_DEFAULT 131072
/* Zen5 load-latency filter: 128-2048 cycles, in steps of 128 (ldlat >> 7 is programmed). */
#define IBS_LDLAT_MIN 128
#define IBS_LDLAT_MAX 2048
#define IBS_LDLAT_STEP 128

/*
 * Whether MaxCnt has its OpCntExt bits.  sysfs does not expose that CPUID
 * bit, but every CPU with the Zen4 IBS extensions has it; a future
 * caps/opcntext is honoured too.  Without either we keep the 20-bit limit,
 * which is always safe.
 */
static bool ibs_has_opcntext(const struct dp_pmu *pmu) {
        return dp_pmu_cap(pmu, "zen4_ibs_extensions") || dp_pmu_cap(pmu, "opcntext");
}

static int ibs_check_period(uint64_t period, bool opcntext, struct dp_event_plan *plan) {
        uint64_t max = opcntext ? IBS_OP_PERIOD_MAX_EXT : IBS_OP_PERIOD_MAX;

        if (period < IBS_OP_PERIOD_UNIT)
                return dp_event_plan_note(plan, -ERANGE, "ibs_op: period %" PRIu64 " is below the minimum of 16",
                                          period);
        if (period % IBS_OP_PERIOD_UNIT)
                return dp_event_plan_note(plan, -ERANGE,
                                          "ibs_op: period %" PRIu64 " is not a multiple of 16 (MaxCnt counts "
                                          "in units of 16)", period);
        if (period > max)
                return dp_event_plan_note(plan, -ERANGE,
                                          "ibs_op: period %" PRIu64 " exceeds the maximum %" PRIu64 " (%s)",
                                          period, max, opcntext ? "27-bit MaxCnt with OpCntExt"
                                                                : "16-bit MaxCnt; no OpCntExt");
        return 0;
}

/* A named format bit the caller asked for; its absence means the CPU or kernel lacks the feature. */
static int ibs_set(const struct dp_pmu *pmu, const char *field, uint64_t value, const char *feature,
                   struct perf_event_attr *attr, struct dp_event_plan *plan) {
        int r = dp_pmu_set_field(pmu, field, value, attr);

        if (r == -ENOENT)
                return dp_event_plan_note(plan, -EOPNOTSUPP, "%s has no format/%s: %s unsupported here",
                                          pmu->name, field, feature);
        if (r < 0)
                return dp_event_plan_note(plan, r, "%s: cannot set %s=%" PRIu64 " (%s)", pmu->name, field, value,
                                          strerror(-r));
        return 0;
}

static int ibs_build_events(const struct dp_source *source, const struct dp_source_options *options, int cpu,
                            struct dp_event_plan *plan) {
        struct perf_event_attr *attr = &plan->event[0].attr;
        const struct dp_pmu *pmu;
        int r;

        (void) source;
        if (cpu < 0)
                return dp_event_plan_note(plan, -EINVAL, "ibs: invalid cpu %d", cpu);
        if (!options->pmus)
                return dp_event_plan_note(plan, -ENODEV, "ibs: no detected PMUs were given");
        pmu = dp_pmu_set_for_cpu(options->pmus, DP_PMU_IBS_OP, cpu);
        if (!pmu)
                return dp_event_plan_note(plan, -ENODEV, "ibs: no usable ibs_op PMU for cpu %d", cpu);
        snprintf(plan->pmu, sizeof(plan->pmu), "%s", pmu->name);

        memset(attr, 0, sizeof(*attr));
        attr->type = pmu->type;

        if (options->sample_period && options->sample_freq)
                return dp_event_plan_note(plan, -EINVAL, "ibs_op: set a sample period or a frequency, not both");
        if (options->sample_freq) {
                attr->freq = 1;
                attr->sample_freq = options->sample_freq;
        } else {
                attr->sample_period = options->sample_period ?: IBS_OP_PERIOD_DEFAULT;
                r = ibs_check_period(attr->sample_period, ibs_has_opcntext(pmu), plan);
                if (r < 0)
                        return r;
        }

        if (options->count_ops) {
                r = ibs_set(pmu, "cnt_ctl", 1, "counting dispatched ops (IBS OpCnt)", attr, plan);
                if (r < 0)
                        return r;
        }
        if (options->l3_miss_only || options->min_latency) {
                r = ibs_set(pmu, "l3missonly", 1, "L3-miss filtering (Zen4 IBS extensions)", attr, plan);
                if (r < 0)
                        return r;
        }
        if (options->min_latency) {
                uint32_t ldlat = options->min_latency;

                if (ldlat < IBS_LDLAT_MIN || ldlat > IBS_LDLAT_MAX)
                        return dp_event_plan_note(plan, -ERANGE,
                                                  "ibs_op: load-latency threshold %" PRIu32 " is outside %d-%d "
                                                  "cycles", ldlat, IBS_LDLAT_MIN, IBS_LDLAT_MAX);
                r = ibs_set(pmu, "ldlat", ldlat, "load-latency filtering (Zen5 IBS ldlat)", attr, plan);
                if (r < 0)
                        return r;
                if (!options->l3_miss_only)
                        dp_event_plan_note(plan, 0, "ibs_op: ldlat implies l3missonly");
                if (ldlat % IBS_LDLAT_STEP)
                        dp_event_plan_note(plan, 0, "ibs_op: ldlat %" PRIu32 " acts as %" PRIu32
                                           " (the hardware compares in steps of 128)",
                                           ldlat, ldlat / IBS_LDLAT_STEP * IBS_LDLAT_STEP);
        }

        /* RAW for the full register set; the rest the kernel fills itself since ~6.1. */
        attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                            PERF_SAMPLE_RAW | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC;
        /* Only when asked, as perf mem -p: where IbsDcPhysAd is not valid the
         * kernel walks the page tables in the NMI for it, and RAW carries
         * IbsDcPhysAd where it is. */
        if (options->want_phys)
                attr->sample_type |= PERF_SAMPLE_PHYS_ADDR;
        /* No exclude_guest, which perf sets and then drops: IBS cannot filter
         * by mode (PERF_PMU_CAP_NO_EXCLUDE), so the kernel refuses it. */
        dp_source_attr_common(options, attr);

        dp_event_plan_single(plan, "ibs_op");
        return 0;
}

/* With the CPU's identity, errata apply (erratum 1293 on early Zen 3). */
static int ibs_decode(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                      struct dp_sample *out) {
        return dp_ibs_op_decode(ps, context ? &context->ibs_cpu : NULL, out);
}

const struct dp_source dp_source_ibs = {
        .name = "ibs",
        .pmu = "ibs_op",
        .description = "AMD IBS op: precise load/store sampling with data address, source and latency",
        .hardware = true,
        .decode = ibs_decode,
        .build_events = ibs_build_events,
};
