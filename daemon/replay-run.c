/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "damon-perfd/replay.h"
#include "log.h"
#include "replay-run.h"
#include "report.h"

/* The capture's access event names its source; page faults are the control. */
static const struct dp_source *capture_source(struct dp_perf_data *data, const char *configured) {
        if (strcmp(configured, "auto") != 0)
                return dp_source_find(configured);
        for (size_t i = 0; i < dp_perf_data_attr_count(data); i++) {
                const struct perf_event_attr *a = dp_perf_data_attr(data, i);

                if (a->type == PERF_TYPE_SOFTWARE &&
                    (a->config == PERF_COUNT_SW_PAGE_FAULTS || a->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
                     a->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ))
                        return &dp_source_pagefault;
        }
        return NULL; /* the kernel-filled fields, whatever the PMU */
}

int replay_run(const struct manager_options *o, const char *path) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        _cleanup_tracker_ struct dp_tracker *tracker = NULL;
        _cleanup_free_ struct dp_cpu_view *cpus = NULL;
        struct dp_tracker_snapshot snap = {0};
        const struct dp_source *source;
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
        source = capture_source(data, o->config.source);
        if (!source && strcmp(o->config.source, "auto") != 0) {
                log_error("unknown source '%s'", o->config.source);
                return -EINVAL;
        }

        dp_tracker_config_init(&tc);
        tc.mode = o->config.target_mode == DP_TARGETS_PHYS ? DP_TRACKER_PADDR : DP_TRACKER_VADDR;
        tc.min_nr_regions = o->config.min_nr_regions;
        tc.max_nr_regions = o->config.max_nr_regions;
        tc.sample_interval_ns = o->config.sample_interval_us * 1000;
        tc.aggr_interval_ns = o->config.aggr_interval_us * 1000;
        tc.max_targets = o->config.max_targets;
        tc.source = source ? source->name : "capture";
        r = dp_tracker_new(&tc, &tracker);
        if (r >= 0)
                r = dp_replay_new(source, tracker, tc.mode == DP_TRACKER_PADDR, &rp);
        if (r < 0)
                return r;

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
        view.source = source ?: &dp_source_pagefault;
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
