/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "pmu.h"
#include "decode-pebs.h"
#include "parse-util.h"
#include "source.h"

/* After <linux/perf_event.h> (via pmu.h), so libpfm uses the kernel's attr. */
#include <perfmon/pfmlib_perf_event.h>

#include "pfm.h"

/*
 * Intel PEBS load-latency sampling (arch/x86/events/intel/core.c, ds.c).
 *
 * Loads are encoded by libpfm for the plain "cpu" PMU
 * (MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=N:precise=P).  When libpfm cannot
 * (no table for this CPU, or a hybrid cpu_core/cpu_atom, which libpfm 4.13
 * has no tables for) the kernel's own events/mem-loads string is applied
 * through the PMU's format fields instead.  mem-loads-aux and mem-stores
 * always come from sysfs: they are the kernel's definitions.
 */

#define PEBS_PERIOD_DEFAULT 1000
#define PEBS_LDLAT_DEFAULT 30           /* cycles, as perf mem uses */
#define PEBS_PRECISE 2

/* The precise level: 2 unless the PMU says it can do less. */
static int pebs_precise(const struct dp_pmu *pmu, unsigned *ret, struct dp_event_plan *plan) {
        const char *cap = dp_pmu_cap(pmu, "max_precise");
        uint64_t max;

        *ret = PEBS_PRECISE;
        if (!cap)
                return 0;
        if (dp_parse_uint(cap, 10, &max, NULL) < 0)
                return dp_event_plan_note(plan, -EBADMSG, "%s: caps/max_precise is malformed (\"%s\")", pmu->name,
                                          cap);
        if (max == 0)
                return dp_event_plan_note(plan, -EOPNOTSUPP, "%s: caps/max_precise is 0 (no PEBS)", pmu->name);
        if (max < *ret)
                *ret = (unsigned) max;
        return 0;
}

/* An events/ string through the format fields: the kernel's definition of the event. */
static int pebs_sysfs_event(const struct dp_pmu *pmu, const char *what, const char *event,
                            struct perf_event_attr *attr, struct dp_event_plan *plan) {
        int r = dp_pmu_apply_event(pmu, event, attr);

        if (r < 0)
                return dp_event_plan_note(plan, r, "%s: events/%s \"%s\" does not fit its format (%s)", pmu->name,
                                          what, event, strerror(-r));
        return 0;
}

static int pebs_loads_sysfs(const struct dp_pmu *pmu, uint32_t ldlat, unsigned precise,
                            struct perf_event_attr *attr, struct dp_event_plan *plan) {
        int r;

        r = pebs_sysfs_event(pmu, "mem-loads", pmu->mem_loads, attr, plan);
        if (r < 0)
                return r;
        r = dp_pmu_set_field(pmu, "ldlat", ldlat, attr);
        if (r < 0)
                return dp_event_plan_note(plan, r == -ENOENT ? -EOPNOTSUPP : r,
                                          "%s: cannot set ldlat=%" PRIu32 " (%s)", pmu->name, ldlat,
                                          r == -ENOENT ? "no format/ldlat" : strerror(-r));
        attr->precise_ip = precise;
        return 0;
}

/* libpfm for the plain cpu PMU; false (with a note) when it cannot, so sysfs takes over. */
static bool pebs_loads_pfm(const struct dp_pmu *pmu, const struct dp_source_options *options, uint32_t ldlat,
                           unsigned precise, struct perf_event_attr *attr, struct dp_event_plan *plan) {
        struct perf_event_attr encoded = {}, kernel = {};
        char event[128], why[128];
        int r;

        if (strcmp(pmu->name, "cpu") != 0) {
                dp_event_plan_note(plan, 0, "%s: hybrid PMU, loads encoded from events/mem-loads", pmu->name);
                return false;
        }
        if (options->pfm_pmu && !options->pfm_pmu[0]) {
                dp_event_plan_note(plan, 0, "%s: libpfm not asked; loads encoded from events/mem-loads", pmu->name);
                return false;
        }
        snprintf(event, sizeof(event), "%s%sMEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=%" PRIu32 ":precise=%u",
                 options->pfm_pmu ?: "", options->pfm_pmu ? "::" : "", ldlat, precise);
        r = dp_pfm_encode(event, &encoded, why, sizeof(why));
        if (r < 0) {
                dp_event_plan_note(plan, 0, "%s: %s (%s); loads encoded from events/mem-loads", pmu->name, event,
                                   why);
                return false;
        }
        if (encoded.type != pmu->type) {
                dp_event_plan_note(plan, 0, "%s: libpfm encoded type %" PRIu32 " but the PMU has type %" PRIu32
                                   "; loads encoded from events/mem-loads", pmu->name, encoded.type, pmu->type);
                return false;
        }
        /* A disagreement with the kernel's own string is worth a line in the log. */
        if (dp_pmu_apply_event(pmu, pmu->mem_loads, &kernel) >= 0 &&
            dp_pmu_set_field(pmu, "ldlat", ldlat, &kernel) >= 0 &&
            (kernel.config != encoded.config || kernel.config1 != encoded.config1))
                dp_event_plan_note(plan, 0, "%s: libpfm config %#" PRIx64 "/%#" PRIx64
                                   " differs from events/mem-loads %#" PRIx64 "/%#" PRIx64 "; using libpfm's",
                                   pmu->name, (uint64_t) encoded.config, (uint64_t) encoded.config1,
                                   (uint64_t) kernel.config, (uint64_t) kernel.config1);
        attr->type = encoded.type;
        attr->config = encoded.config;
        attr->config1 = encoded.config1;
        attr->config2 = encoded.config2;
        attr->precise_ip = encoded.precise_ip;
        dp_event_plan_note(plan, 0, "%s: loads encoded by libpfm (%s)", pmu->name, event);
        return true;
}

static int pebs_build_events(const struct dp_source *source, const struct dp_source_options *options, int cpu,
                             struct dp_event_plan *plan) {
        uint32_t ldlat = options->min_latency ?: PEBS_LDLAT_DEFAULT;
        struct dp_event_spec *loads;
        const struct dp_pmu *pmu;
        unsigned precise;
        int r;

        (void) source;
        if (cpu < 0)
                return dp_event_plan_note(plan, -EINVAL, "pebs: invalid cpu %d", cpu);
        if (!options->pmus)
                return dp_event_plan_note(plan, -ENODEV, "pebs: no detected PMUs were given");
        pmu = dp_pmu_set_for_cpu(options->pmus, DP_PMU_CORE, cpu);
        if (!pmu)
                return dp_event_plan_note(plan, -ENODEV, "pebs: no core PMU with mem-loads covers cpu %d", cpu);
        snprintf(plan->pmu, sizeof(plan->pmu), "%s", pmu->name);
        if (options->want_stores && !pmu->mem_stores[0])
                return dp_event_plan_note(plan, -EOPNOTSUPP, "%s lists no mem-stores event", pmu->name);
        r = pebs_precise(pmu, &precise, plan);
        if (r < 0)
                return r;

        /* SPR and hybrid big cores: mem-loads with DATA_SRC needs mem-loads-aux leading its
         * group, or the open fails with ENODATA. */
        if (pmu->mem_loads_aux[0]) {
                struct dp_event_spec *aux = &plan->event[plan->n];

                r = pebs_sysfs_event(pmu, "mem-loads-aux", pmu->mem_loads_aux, &aux->attr, plan);
                if (r < 0)
                        return r;
                /* A counting leader: only the member samples (precise needs sampling, so none here). */
                dp_source_attr_common(options, &aux->attr);
                aux->attr.exclude_guest = 1;
                aux->leader = plan->n;
                aux->sampling = false;
                aux->role = "mem-loads-aux";
                plan->n++;
        }

        loads = &plan->event[plan->n];
        if (!pebs_loads_pfm(pmu, options, ldlat, precise, &loads->attr, plan)) {
                r = pebs_loads_sysfs(pmu, ldlat, precise, &loads->attr, plan);
                if (r < 0)
                        return r;
        }
        r = dp_source_attr_sampling(options, PEBS_PERIOD_DEFAULT, &loads->attr, plan);
        if (r < 0)
                return r;
        /* As perf: a guest's accesses are not the host process's that runs it. */
        loads->attr.exclude_guest = 1;
        if (plan->n > 0) {
                loads->leader = 0;
                loads->attr.disabled = 0;       /* follows its leader */
        } else
                loads->leader = plan->n;
        loads->sampling = true;
        loads->role = "mem-loads";
        plan->ring = plan->n;
        plan->n++;

        if (options->want_stores) {
                struct dp_event_spec *stores = &plan->event[plan->n];

                r = pebs_sysfs_event(pmu, "mem-stores", pmu->mem_stores, &stores->attr, plan);
                if (r < 0)
                        return r;
                stores->attr.precise_ip = precise;
                r = dp_source_attr_sampling(options, PEBS_PERIOD_DEFAULT, &stores->attr, plan);
                if (r < 0)
                        return r;
                stores->attr.exclude_guest = 1;
                stores->leader = plan->n;
                stores->sampling = true;
                stores->role = "mem-stores";
                plan->n++;
        }
        return 0;
}

static int pebs_decode(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                       struct dp_sample *out) {
        (void) context;
        return dp_pebs_decode(ps, out);
}

const struct dp_source dp_source_pebs = {
        .name = "pebs",
        .pmu = "cpu",
        .description = "Intel PEBS load-latency sampling (mem-loads, optionally mem-stores)",
        .hardware = true,
        .decode = pebs_decode,
        .build_events = pebs_build_events,
};
