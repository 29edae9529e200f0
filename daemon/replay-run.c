/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf-data-header.h"
#include "replay.h"
#include "log.h"
#include "replay-run.h"
#include "report.h"

struct capture_report {
        const char *path;
        char reason[256];       /* the first access event's, for the report */
        bool have_reason;
};

/* Each event's source and why, in the log; the first access event's reason
 * goes into the report beside its source. */
static void log_choice(size_t index, const struct dp_capture_choice *choice, void *userdata) {
        struct capture_report *cr = userdata;
        const char *name = !choice->access ? "none" : choice->source ? choice->source->name
                                                                       : dp_replay_generic_source.name;

        log_info("%s: event %zu (PMU %s): source %s: %s", cr->path, index, choice->pmu[0] ? choice->pmu : "?", name,
                 choice->reason);
        if (choice->access && !cr->have_reason) {
                snprintf(cr->reason, sizeof(cr->reason), "event %zu: %s", index, choice->reason);
                cr->have_reason = true;
        }
}

/* Which machine took the capture, and whether IBS errata apply to it. */
static void log_machine(const char *path, const struct dp_perf_data *data) {
        struct dp_source_context context;
        struct dp_perf_cpuid id;
        int r;

        r = dp_perf_data_cpuid(data, &id);
        if (r == -ENOENT) {
                log_info("%s: no HEADER_CPUID: no CPU errata applied", path);
                return;
        }
        if (r == -EINVAL) {
                log_info("%s: HEADER_CPUID of an architecture we do not know: no CPU errata applied", path);
                return;
        }
        if (r < 0) {
                log_warning("%s: malformed HEADER_CPUID (%s): no CPU errata applied", path, strerror(-r));
                return;
        }
        if (id.kind == DP_CPUID_ARM64) {
                log_info("%s: captured on arm64, MIDR 0x%016" PRIx64 " (implementer 0x%02x, part 0x%03x)", path,
                         id.midr, id.implementer, id.part);
                return;
        }
        dp_capture_source_context(&id, &context);
        log_info("%s: captured on %s family 0x%x model 0x%x stepping %u%s", path, id.vendor, id.family, id.model,
                 id.stepping, dp_ibs_cpu_has_erratum_1293(&context.ibs_cpu) ? " (IBS erratum 1293 applies)" : "");
}

int replay_run(const struct manager_options *o, const char *path) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        _cleanup_tracker_ struct dp_tracker *tracker = NULL;
        _cleanup_free_ struct dp_cpu_view *cpus = NULL;
        struct dp_tracker_snapshot snap = {0};
        struct capture_report cr = { .path = path };
        const struct dp_source *source = NULL, *primary;
        bool automatic = strcmp(o->config.source, "auto") == 0;
        char tracker_source[32];        /* the tracker keeps the pointer; named once chosen */
        struct dp_tracker_config tc;
        struct dp_stats_view view = {0};
        struct dp_replay *rp = NULL;
        struct timespec t0, t1;
        int r;

        r = dp_perf_data_open(path, &data);
        if (r < 0) {
                log_error("%s: not a readable perf.data capture: %s", path, strerror(-r));
                return r;
        }
        if (!automatic) {
                source = dp_source_find(o->config.source);
                if (!source) {
                        log_error("unknown source '%s'", o->config.source);
                        return -EINVAL;
                }
                log_info("%s: every event decoded as %s (Source=%s)", path, source->name, o->config.source);
        }
        log_machine(path, data);

        dp_tracker_config_init(&tc);
        tc.mode = o->config.target_mode == DP_TARGETS_PHYS ? DP_TRACKER_PADDR : DP_TRACKER_VADDR;
        tc.min_nr_regions = o->config.min_nr_regions;
        tc.max_nr_regions = o->config.max_nr_regions;
        tc.sample_interval_ns = o->config.sample_interval_us * 1000;
        tc.aggr_interval_ns = o->config.aggr_interval_us * 1000;
        tc.max_targets = o->config.max_targets;
        snprintf(tracker_source, sizeof(tracker_source), "%s", source ? source->name : "capture");
        tc.source = tracker_source;
        r = dp_tracker_new(&tc, &tracker);
        if (r >= 0)
                r = dp_replay_new(source, tracker, tc.mode == DP_TRACKER_PADDR, &rp);
        if (r < 0) {
                dp_replay_free(rp);
                return r;
        }
        primary = source ?: &dp_replay_generic_source;
        if (automatic) {
                /* Each event by its PMU, as the capture names it. */
                r = dp_replay_use_capture_sources(rp, data, log_choice, &cr, &primary);
                if (r == -ENOENT)
                        log_warning("%s: no memory-access event in the capture", path);
                else if (r < 0) {
                        log_error("%s: cannot choose the sources: %s", path, strerror(-r));
                        dp_replay_free(rp);
                        return r;
                }
        } else {
                struct dp_source_context context;
                struct dp_perf_cpuid id;

                dp_capture_source_context(dp_perf_data_cpuid(data, &id) == 0 ? &id : NULL, &context);
                dp_replay_set_source_context(rp, &context);
        }
        snprintf(tracker_source, sizeof(tracker_source), "%s", primary->name);

        clock_gettime(CLOCK_MONOTONIC, &t0);
        /* One pass: targets grow as their samples come. */
        r = dp_replay_run(rp, data);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (r < 0)
                log_error("%s: %s; counting what was read before it", path, strerror(-r));
        log_info("replayed %s: %zu targets, %zu CPUs, %.3f s", path, dp_tracker_nr_targets(tracker), dp_replay_nr_cpus(rp),
                 (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);

        cpus = calloc(dp_replay_nr_cpus(rp) ?: 1, sizeof(*cpus));
        if (!cpus) {
                dp_replay_free(rp);
                return -ENOMEM;
        }
        view.source = primary;
        view.source_reason = cr.have_reason ? cr.reason : NULL;
        view.cpus = cpus;
        view.n_cpus = dp_replay_nr_cpus(rp);
        for (size_t i = 0; i < view.n_cpus; i++) {
                cpus[i].cpu = (int) i;
                cpus[i].status.state = DP_CPU_UNINIT;
                dp_replay_counters(rp, i, &cpus[i].counters);
                dp_counters_sum(&view.total, &cpus[i].counters);
        }
        dp_replay_free(rp);

        if (dp_tracker_snapshot(tracker, &snap) < 0)
                return -ENOMEM;
        if (o->dump_stats == DUMP_JSON)
                r = report_write_json(stdout, &view, &snap, o->top);
        else
                report_print(stdout, &view, &snap, o->top);
        dp_tracker_snapshot_free(&snap);
        return r < 0 ? r : 0;
}
