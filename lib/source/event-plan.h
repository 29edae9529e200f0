/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pmu.h"

/* ---- What a source opens on one CPU ---- */

#define DP_EVENT_PLAN_MAX 3

struct dp_event_spec {
        struct perf_event_attr attr;
        size_t leader;          /* index of the group leader; itself when it leads or stands alone */
        bool sampling;          /* its samples must reach the ring (mmap, or SET_OUTPUT to plan->ring) */
        const char *role;       /* "mem-loads-aux", "mem-loads", "mem-stores", "ibs_op", "arm_spe", ... */
};

/*
 * The events one CPU needs, in the order they must be opened (a leader
 * before its members).  The sampler:
 *  - opens event[i] with group_fd = fd[event[i].leader] when leader != i,
 *    else -1;
 *  - maps the ring on event[ring] and redirects every other sampling event
 *    into it with PERF_EVENT_IOC_SET_OUTPUT (all share one sample_type);
 *  - when aux_pages > 0, maps an AUX area of that many pages on event[ring]
 *    (SPE) before enabling;
 *  - enables each leader (leader == i); members follow their leader.
 * Leaders and standalone events are opened disabled, members not.
 */
struct dp_event_plan {
        size_t n;
        struct dp_event_spec event[DP_EVENT_PLAN_MAX];
        size_t ring;
        uint32_t aux_pages;
        char pmu[DP_PMU_NAME_MAX];      /* the PMU serving this CPU (hybrid: cpu_core or cpu_atom) */
        char note[256];                 /* adjustments made (clamps, roundings), or why building failed */
};

/* Makes @plan the one sampling event in event[0], which leads itself and
 * carries the ring, playing @role. */
void dp_event_plan_single(struct dp_event_plan *plan, const char *role);

/* Appends a formatted sentence to @plan->note ("; " between sentences) and
 * returns @error, so builders can write `return dp_event_plan_note(plan, -ERANGE, ...)`. */
int dp_event_plan_note(struct dp_event_plan *plan, int error, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* Whether two plans open the very same events (attrs, groups, ring, AUX area, note). */
bool dp_event_plan_equal(const struct dp_event_plan *a, const struct dp_event_plan *b);

/* @plan for @cpus (text, e.g. "0-3,6") of @source as damon-perfd
 * --print-events shows it: a "# cpus" line, the note, and per event a
 * "# event" line (role, group, ring) and its attr as `perf record -vv`
 * prints it (perf-attr-print.h).  -EIO when @f fails. */
int dp_event_plan_fprint(FILE *f, const struct dp_event_plan *plan, const char *source, const char *cpus);
