/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode-ibs.h"
#include "perf-data-header.h"
#include "replay.h"
#include "log.h"
#include "replay-run.h"
#include "report.h"
#include "time-util.h"

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
                log_warning_errno(r, "%s: malformed HEADER_CPUID (%m): no CPU errata applied", path);
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

/* The capture, and the source Source= decodes every event as (NULL: "auto",
 * each event by its PMU). */
static int capture_open(const struct manager_options *o, const char *path, struct dp_perf_data **ret_data,
                        const struct dp_source **ret_source) {
        int r;

        *ret_source = NULL;
        r = dp_perf_data_open(path, ret_data);
        if (r < 0)
                return log_error_errno(r, "%s: not a readable perf.data capture: %m", path);
        if (strcmp(o->config.source, "auto") != 0) {
                *ret_source = dp_source_find(o->config.source);
                if (!*ret_source) {
                        log_error("unknown source '%s'", o->config.source);
                        return -EINVAL;
                }
                log_info("%s: every event decoded as %s (Source=%s)", path, (*ret_source)->name, o->config.source);
        }
        log_machine(path, *ret_data);
        return 0;
}

/* A tracker as the configuration has it; @source_name is kept, not copied. */
static int tracker_new_configured(const struct manager_options *o, const char *source_name, struct dp_tracker **ret) {
        struct dp_tracker_config tc;

        dp_tracker_config_init(&tc);
        tc.mode = o->config.target_mode == DP_TARGETS_PHYS ? DP_TRACKER_PADDR : DP_TRACKER_VADDR;
        tc.min_nr_regions = o->config.min_nr_regions;
        tc.max_nr_regions = o->config.max_nr_regions;
        tc.sample_interval_ns = o->config.sample_interval_us * 1000;
        tc.aggr_interval_ns = o->config.aggr_interval_us * 1000;
        tc.max_targets = o->config.max_targets;
        tc.source = source_name;
        return dp_tracker_new(&tc, ret);
}

/* Which source decodes which event: @source for all, with the errata of the
 * machine the capture names; or (@source NULL) each event by its PMU, as the
 * capture names it.  *ret_primary: the source the report names. */
static int sources_choose(struct dp_replay *rp, const struct dp_perf_data *data, const struct dp_source *source,
                          struct capture_report *cr, const struct dp_source **ret_primary) {
        struct dp_source_context context;
        struct dp_perf_cpuid id;
        int r;

        *ret_primary = source ?: &dp_replay_generic_source;
        if (source) {
                dp_capture_source_context(dp_perf_data_cpuid(data, &id) == 0 ? &id : NULL, &context);
                dp_replay_set_source_context(rp, &context);
                return 0;
        }
        r = dp_replay_use_capture_sources(rp, data, log_choice, cr, ret_primary);
        if (r == -ENOENT)
                log_warning("%s: no memory-access event in the capture", cr->path);
        else if (r < 0)
                return log_error_errno(r, "%s: cannot choose the sources: %m", cr->path);
        return 0;
}

/* One pass over the capture: targets grow as their samples come.  Its
 * error, if any, after logging it: what was read before it still counts. */
static int replay_pass(struct dp_replay *rp, struct dp_perf_data *data, const struct dp_tracker *tracker,
                       const char *path) {
        uint64_t start = dp_now_ns(CLOCK_MONOTONIC);
        int r = dp_replay_run(rp, data);
        uint64_t elapsed = dp_now_ns(CLOCK_MONOTONIC) - start;

        if (r < 0)
                log_error_errno(r, "%s: %m; counting what was read before it", path);
        log_info("replayed %s: %zu targets, %zu CPUs, %.3f s", path, dp_tracker_nr_targets(tracker),
                 dp_replay_nr_cpus(rp), (double) elapsed / NSEC_PER_SEC);
        return r;
}

/* The replay's counters, per CPU and in total, as the report shows the daemon's. */
static int stats_view_fill(struct dp_replay *rp, const struct dp_source *primary, const struct capture_report *cr,
                           struct dp_stats_view *view) {
        struct dp_cpu_view *cpus = calloc(dp_replay_nr_cpus(rp) ?: 1, sizeof(*cpus));

        if (!cpus)
                return -ENOMEM;
        view->source = primary;
        view->source_reason = cr->have_reason ? cr->reason : NULL;
        view->cpus = cpus;
        view->n_cpus = dp_replay_nr_cpus(rp);
        for (size_t i = 0; i < view->n_cpus; i++) {
                cpus[i].cpu = (int) i;
                cpus[i].status.state = DP_CPU_UNINIT;
                dp_replay_counters(rp, i, &cpus[i].counters);
                dp_counters_sum(&view->total, &cpus[i].counters);
        }
        return 0;
}

/* The report on stdout.  @r is the replay's result: the text report passes
 * it on, the JSON one its own instead. */
static int report_write(const struct manager_options *o, const struct dp_stats_view *view,
                        const struct dp_tracker *tracker, int r) {
        struct dp_tracker_snapshot snap = {0};

        if (dp_tracker_snapshot(tracker, &snap) < 0)
                return -ENOMEM;
        if (o->dump_stats == DUMP_JSON)
                r = report_write_json(stdout, view, &snap, o->top);
        else
                report_print(stdout, view, &snap, o->top);
        dp_tracker_snapshot_free(&snap);
        return r < 0 ? r : 0;
}

int replay_run(const struct manager_options *o, const char *path) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        _cleanup_tracker_ struct dp_tracker *tracker = NULL;
        struct capture_report cr = { .path = path };
        const struct dp_source *source, *primary;
        char tracker_source[32];        /* the tracker keeps the pointer; named once chosen */
        struct dp_stats_view view = {0};
        struct dp_replay *rp = NULL;
        int r, replayed;

        r = capture_open(o, path, &data, &source);
        if (r < 0)
                return r;
        snprintf(tracker_source, sizeof(tracker_source), "%s", source ? source->name : "capture");
        r = tracker_new_configured(o, tracker_source, &tracker);
        if (r >= 0)
                r = dp_replay_new(source, tracker, o->config.target_mode == DP_TARGETS_PHYS, &rp);
        if (r >= 0)
                r = sources_choose(rp, data, source, &cr, &primary);
        if (r < 0) {
                dp_replay_free(rp);
                return r;
        }
        snprintf(tracker_source, sizeof(tracker_source), "%s", primary->name);

        replayed = replay_pass(rp, data, tracker, path);
        r = stats_view_fill(rp, primary, &cr, &view);
        dp_replay_free(rp);
        if (r >= 0)
                r = report_write(o, &view, tracker, replayed);
        free(view.cpus);
        return r;
}
