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

/* DAMOS schemes for the kdamond the daemon owns ([DAMON] Scheme=; parsed and
 * printed by config-scheme.h).  Sizes in bytes, nr_accesses in sampling
 * intervals per aggregation (or a percentage of them), ages in microseconds
 * (or aggregation intervals): converted to DAMON's units when written. */
#define DP_CONFIG_MAX_SCHEMES 8
#define DP_SCHEME_MAX_GOALS 4
#define DP_SCHEME_MAX_FILTERS 8
#define DP_SCHEME_MAX_NID 65535         /* target_nid=, goal nodes, node filters */
#define DP_SCHEME_ORIGIN_MAX 96         /* "file:line" */
#define DP_SCHEME_MEMCG_MAX 128

enum dp_scheme_action {
        DP_SCHEME_STAT,
        DP_SCHEME_PAGEOUT,
        DP_SCHEME_LRU_PRIO,
        DP_SCHEME_LRU_DEPRIO,
        DP_SCHEME_MIGRATE_HOT,
        DP_SCHEME_MIGRATE_COLD,
        DP_SCHEME_HUGEPAGE,
        DP_SCHEME_NOHUGEPAGE,
        _DP_SCHEME_ACTION_MAX,
};

enum dp_scheme_goal_metric {
        DP_GOAL_HOT_FRACTION,           /* user_input, fed by the daemon with the hot fraction (1/10000) */
        DP_GOAL_SOME_MEM_PSI_US,
        DP_GOAL_NODE_MEM_USED_BP,       /* with a node */
        DP_GOAL_NODE_MEM_FREE_BP,       /* with a node */
        _DP_GOAL_METRIC_MAX,
};

enum dp_scheme_filter_type {
        DP_FILTER_ANON,
        DP_FILTER_MEMCG,                /* memcg_path */
        DP_FILTER_YOUNG,
        DP_FILTER_ADDR,                 /* [addr_start, addr_end) */
        DP_FILTER_TARGET,               /* DAMON target index */
        DP_FILTER_HOT,                  /* addr filters kept up to date with the PMU's hot ranges */
        DP_FILTER_NODE,                 /* addr filters over a NUMA node's memory (nid) */
        _DP_FILTER_TYPE_MAX,
};

enum dp_scheme_unit {
        DP_UNIT_RAW,                    /* DAMON's own unit */
        DP_UNIT_PERCENT,                /* nr_accesses: of the sampling intervals in an aggregation */
        DP_UNIT_USEC,                   /* age: a time span */
};

struct dp_scheme_range {
        uint64_t min, max;
        enum dp_scheme_unit unit;
};

struct dp_scheme_goal {
        enum dp_scheme_goal_metric metric;
        uint64_t target;
        uint32_t nid;
};

struct dp_scheme_filter {
        enum dp_scheme_filter_type type;
        bool allow;                     /* allow= (6.14), else reject= */
        bool matching;                  /* false: "!" */
        uint64_t start, end;            /* addr */
        uint32_t target_idx;
        uint32_t nid;                   /* node */
        char memcg_path[DP_SCHEME_MEMCG_MAX];
};

struct dp_damon_scheme {
        enum dp_scheme_action action;
        int32_t target_nid;             /* migrate_*: required; else -1 */
        struct dp_scheme_range sz, nr_accesses, age;
        uint64_t quota_ms, quota_bytes, quota_reset_ms;
        uint32_t weight_sz, weight_nr_accesses, weight_age;
        struct dp_scheme_goal goals[DP_SCHEME_MAX_GOALS];
        size_t n_goals;
        bool wmarks;                    /* metric free_mem_rate, else none */
        uint64_t wmarks_interval_us;
        uint32_t wmarks_high, wmarks_mid, wmarks_low;   /* per thousand */
        struct dp_scheme_filter filters[DP_SCHEME_MAX_FILTERS];
        size_t n_filters;
        char origin[DP_SCHEME_ORIGIN_MAX];      /* where it was configured, for messages */
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
        /* own: schemes after the daemon's stat scheme (none: that one alone) */
        struct dp_damon_scheme damon_schemes[DP_CONFIG_MAX_SCHEMES];
        size_t damon_n_schemes;

        /* [API] of damon-perfd.conf; empty = the daemon's default */
        char api_socket[108];           /* sun_path */
        char api_socket_group[64];
};

void dp_config_init(struct dp_config *c);

/* Checks ranges and relations between settings; 0 or -EINVAL with a static
 * explanation in *why. */
int dp_config_validate(const struct dp_config *c, const char **why);
