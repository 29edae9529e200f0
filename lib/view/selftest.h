/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * damonctl selftest's judgement, apart from any I/O: checks with a result
 * and a reason, grouped by pipeline layer (0 environment, 1-7 the pipeline,
 * then DAMON); the layer checks computed from what the daemon answered
 * before and after a test window; and the verdict with its exit status.
 *
 *   FULLY INTEGRATED  a hardware memory-access source, every layer 1-7
 *                     passing on every CPU, and DAMON owned (or attached),
 *                     committed to and read back
 *   PLUMBING-ONLY     no layer 1-7 fails, but something short of that: the
 *                     software control samples, DAMON is not owned, a CPU
 *                     is in ERROR, a check was skipped, a layer-0 check failed
 *   UNUSABLE          a layer 1-7 check failed
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "damon-sysfs.h"
#include "pmu.h"
#include "stats-reply.h"

enum dp_selftest_result {
        DP_SELFTEST_PASS,
        DP_SELFTEST_FAIL,
        DP_SELFTEST_SKIP,
};

/* Layers 0-7 are the pipeline's; DAMON's checks come after them. */
#define DP_SELFTEST_LAYER_DAMON 8u

enum dp_selftest_verdict {
        DP_SELFTEST_FULLY_INTEGRATED,
        DP_SELFTEST_PLUMBING_ONLY,
        DP_SELFTEST_UNUSABLE,
};

/* damonctl selftest's exit status per verdict (0, 10, 11). */
#define DP_SELFTEST_EXIT_FULLY_INTEGRATED 0
#define DP_SELFTEST_EXIT_PLUMBING_ONLY 10
#define DP_SELFTEST_EXIT_UNUSABLE 11

#define DP_SELFTEST_NAME_MAX 24
#define DP_SELFTEST_REASON_MAX 512
#define DP_SELFTEST_CHECKS_MAX 32

struct dp_selftest_check {
        unsigned layer;
        char name[DP_SELFTEST_NAME_MAX];
        enum dp_selftest_result result;
        /* Passed, but not wholly (not every CPU got there): the verdict is
         * at most PLUMBING-ONLY. */
        bool partial;
        char reason[DP_SELFTEST_REASON_MAX];
};

struct dp_selftest_report {
        size_t n;
        struct dp_selftest_check checks[DP_SELFTEST_CHECKS_MAX];
        /* From the daemon's GetStats: its source is a hardware memory-access sampler. */
        bool hardware_source;
};

void dp_selftest_report_init(struct dp_selftest_report *r);

/* Appends a check; the reason is printf-formatted and cut to fit.  Returns
 * the check, or NULL when the report is full. */
struct dp_selftest_check *dp_selftest_add(struct dp_selftest_report *r, unsigned layer, const char *name,
                                          enum dp_selftest_result result, const char *format, ...)
        __attribute__((format(printf, 5, 6)));

const char *dp_selftest_result_name(enum dp_selftest_result result);       /* "PASS", "FAIL", "SKIP" */
const char *dp_selftest_verdict_name(enum dp_selftest_verdict verdict);    /* "FULLY INTEGRATED", ... */
int dp_selftest_verdict_exit_status(enum dp_selftest_verdict verdict);

/* The verdict over every check so far, and why in @why (one line). */
enum dp_selftest_verdict dp_selftest_verdict(const struct dp_selftest_report *r, char *why, size_t size);

/* "[PASS] L4 sampling: reason" (layer "DAMON" for DAMON's).  -EIO on a write error. */
int dp_selftest_check_print(FILE *f, const struct dp_selftest_check *c);
/* "verdict: PLUMBING-ONLY (exit 10): why".  -EIO on a write error. */
int dp_selftest_verdict_print(FILE *f, const struct dp_selftest_report *r);
/* {"checks": [{layer, name, result, partial, reason}...], "verdict", "exit_status", "reason"}; NULL on ENOMEM. */
json_t *dp_selftest_report_to_json(const struct dp_selftest_report *r);

/* ---- Layer 0: the environment, from facts the caller gathered ---- */

/* Which memory-access PMUs exist (@error: what dp_pmu_detect() returned). */
void dp_selftest_check_pmus(struct dp_selftest_report *r, const struct dp_pmu_set *set, int error);
/* DAMON's sysfs interface and its operations (@error: what dp_damon_discover() returned). */
void dp_selftest_check_damon_sysfs(struct dp_selftest_report *r, const struct dp_damon_tree *tree, int error);
/* The side-effect guard: every kdamond other than @own_kdamond (the one the
 * daemon owns or attached to, -1 for none) is foreign, and refuses any
 * DAMON write check. */
void dp_selftest_check_damon_guard(struct dp_selftest_report *r, const struct dp_damon_tree *tree, int error,
                                   int64_t own_kdamond);
/* The capability sets the daemon reports in GetStats (SKIP when it does not). */
void dp_selftest_check_capabilities(struct dp_selftest_report *r, const struct dp_stats_reply *stats);

/* ---- Layers 1-7 and DAMON, from the daemon's replies ---- */

struct dp_selftest_cpu {
        int64_t cpu;
        const char *state;              /* the wire name: "running", "error", ... */
        const char *failed_step;        /* with ERROR: create, bind, enable, run; else NULL */
        int64_t error;                  /* with ERROR: the errno */
};

struct dp_selftest_region {
        uint64_t start, end;
        int64_t nr_accesses;
        int64_t age;
};

struct dp_selftest_damon {
        bool answered;                  /* GetDamonView replied (false: an older daemon) */
        const char *role;               /* "owned", "attached", "observe_only", "off" */
        const char *reason;
        int64_t kdamond;                /* -1 unless owned or attached */
        int64_t commits, read_backs;    /* at the end of the window */
        bool workload_is_target;        /* DAMON's targets list the workload's pid */
        /* DAMON's regions of the workload (its tried_regions) */
        const struct dp_selftest_region *regions;
        size_t n_regions;
};

struct dp_selftest_observation {
        /* GetStats at the start and the end of the window */
        const struct dp_stats_reply *before, *after;
        /* GetCPUs at the end */
        const struct dp_selftest_cpu *cpus;
        size_t n_cpus;
        /* The workload and its hot area; how far outside it a hot region may reach */
        int64_t workload_pid;
        uint64_t hot_start, hot_end;
        uint64_t slack;
        /* GetTargets: the workload is a target; it should be (the daemon was
         * told its pid), so not being one fails rather than skips */
        bool workload_targeted, workload_expected;
        bool physical;                  /* the daemon tracks the physical address space */
        /* GetRegions of the workload, hottest first */
        const struct dp_selftest_region *regions;
        size_t n_regions;
        int64_t max_nr_accesses;
        struct dp_selftest_damon damon;
};

/* Whether the hottest regions (those at the top access rate, above 0) all
 * lie within [hot_start - slack, hot_end + slack). */
bool dp_selftest_hot_area_found(const struct dp_selftest_region *regions, size_t n, uint64_t hot_start,
                                uint64_t hot_end, uint64_t slack);

/* Adds the source (layer 0), layers 1-7 and DAMON.  -EINVAL without both snapshots. */
int dp_selftest_evaluate(struct dp_selftest_report *r, const struct dp_selftest_observation *o);
