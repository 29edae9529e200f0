/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The daemon's settings, with their defaults.  Each one's key in
 * damon-perfd.conf, parser, printer and options: config-keys.h. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_CONFIG_MAX_PIDS 64

/* What the daemon may do with the kernel's DAMON ([DAMON] Mode=). */
enum dp_damon_mode {
        DP_DAMON_OFF,           /* never read or write DAMON sysfs */
        DP_DAMON_OWN,           /* create our own kdamond when none exists, else observe only */
        DP_DAMON_ATTACH,        /* write hints into the named kdamond/context */
};

/* A DAMOS quota goal fed with a metric from the samples ([DAMON] QuotaGoal=). */
enum dp_damon_goal {
        DP_DAMON_GOAL_NONE,
        DP_DAMON_GOAL_HOT_FRACTION,     /* hot bytes / monitored bytes, in 1/10000 */
};

#define DP_CONFIG_DEFAULT_DAMON_ROOT "/sys/kernel/mm/damon/admin"
#define DP_CONFIG_DEFAULT_DAMON_STATE "/run/damon-perfd/damon.state"

enum dp_target_mode {
        DP_TARGETS_ALL,         /* every process seen, up to max_targets */
        DP_TARGETS_PIDS,        /* only the configured pids */
        DP_TARGETS_PHYS,        /* the physical address space */
};

struct dp_config {
        char source[256];               /* "auto", a source name, or "event:<libpfm event>" */
        char cpus[256];                 /* CPU list; empty = every online CPU */
        uint64_t sample_period;         /* 0 = the source's default */
        uint32_t ring_pages;            /* data pages per CPU ring, power of two */
        uint32_t queue_capacity;        /* samples per CPU queue, power of two */
        uint32_t poll_ms;               /* reader wakes at least this often */

        enum dp_target_mode target_mode;
        uint32_t pids[DP_CONFIG_MAX_PIDS];
        size_t n_pids;
        uint32_t max_targets;
        uint32_t min_nr_regions, max_nr_regions;
        uint64_t sample_interval_us, aggr_interval_us, maps_refresh_us;

        /* [DAMON] */
        enum dp_damon_mode damon_mode;
        char damon_root[256];           /* the "admin" directory of DAMON sysfs */
        char damon_state_file[256];     /* what we changed, for restore and crash recovery */
        int32_t damon_kdamond;          /* attach: kdamond index; -1 = unset */
        uint32_t damon_context;         /* attach: context index */
        uint64_t damon_hint_interval_us;
        uint32_t damon_max_targets;     /* own, vaddr: the hottest processes handed to DAMON */
        enum dp_damon_goal damon_goal;
        uint32_t damon_goal_target;     /* the goal's target_value, in the metric's unit */

        /* [API] of damon-perfd.conf; empty = the daemon's default */
        char api_socket[108];           /* sun_path */
        char api_socket_group[64];
};

void dp_config_init(struct dp_config *c);

/* Checks ranges and relations between settings; 0 or -EINVAL with a static
 * explanation in *why. */
int dp_config_validate(const struct dp_config *c, const char **why);
