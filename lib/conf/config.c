/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "config.h"

void dp_config_init(struct dp_config *c) {
        *c = (struct dp_config) {
                .source = "auto",
                /* 512 KiB, perf record's own default and, with the control page, just
                 * perf_event_mlock_kb's budget per CPU: ~13k page-fault samples of 40
                 * bytes, the reader woken at half (bench/README: performance). */
                .ring_pages = 128,
                .queue_capacity = 65536,
                .poll_ms = 100,
                .target_mode = DP_TARGETS_ALL,
                .max_targets = 256,
                .min_nr_regions = 10,           /* DAMON's defaults */
                .max_nr_regions = 1000,
                .sample_interval_us = 5000,
                .aggr_interval_us = 100000,
                .maps_refresh_us = 1000000,
                .damon_mode = DP_DAMON_OWN,
                .damon_root = DP_CONFIG_DEFAULT_DAMON_ROOT,
                .damon_state_file = DP_CONFIG_DEFAULT_DAMON_STATE,
                .damon_kdamond = -1,
                .damon_hint_interval_us = 1000000,
                .damon_max_targets = 8,
                .damon_goal = DP_DAMON_GOAL_NONE,
                .damon_goal_target = 2000,
        };
}

static bool is_pow2(uint64_t v) {
        return v && !(v & (v - 1));
}

int dp_config_validate(const struct dp_config *c, const char **why) {
        const char *bad = NULL;

        if (!is_pow2(c->ring_pages) || c->ring_pages > 65536)
                bad = "ring pages must be a power of two up to 65536";
        else if (!is_pow2(c->queue_capacity) || c->queue_capacity < 64 || c->queue_capacity > (1u << 24))
                bad = "queue capacity must be a power of two between 64 and 16777216";
        else if (c->poll_ms == 0 || c->poll_ms > 10000)
                bad = "poll interval must be between 1 and 10000 ms";
        else if (c->target_mode == DP_TARGETS_PIDS && c->n_pids == 0)
                bad = "pid targets need at least one pid";
        else if (c->max_targets == 0)
                bad = "max targets must be at least 1";
        else if (c->min_nr_regions < 3 || c->min_nr_regions > c->max_nr_regions)
                bad = "regions need 3 <= min <= max (as DAMON)";
        else if (c->sample_interval_us == 0 || c->aggr_interval_us < c->sample_interval_us)
                bad = "intervals need 0 < sample <= aggregation";
        else if (c->aggr_interval_us / c->sample_interval_us > 64)
                bad = "an aggregation may span at most 64 sampling intervals";
        else if (c->maps_refresh_us < c->aggr_interval_us)
                bad = "maps refresh interval must be at least the aggregation interval";
        else if (c->damon_mode == DP_DAMON_ATTACH && c->damon_kdamond < 0)
                bad = "DAMON Mode=attach needs Kdamond= naming the kdamond to attach to";
        else if (c->damon_mode != DP_DAMON_OFF && (c->damon_root[0] != '/' || c->damon_state_file[0] != '/'))
                bad = "DAMON SysfsRoot= and StateFile= must be absolute paths";
        else if (c->damon_hint_interval_us < 100000)
                bad = "DAMON hint interval must be at least 100ms";
        else if (c->damon_max_targets == 0)
                bad = "DAMON max targets must be at least 1";

        if (why)
                *why = bad;
        return bad ? -EINVAL : 0;
}
