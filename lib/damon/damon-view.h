/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * DAMON's view beside the PMU's: each region DAMON reports (its
 * tried_regions) with DAMON's own access count and age, next to what the
 * sampled accesses say about the same addresses.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracker.h"

/* One region as DAMON reports it in a scheme's tried_regions. */
struct dp_damon_view_input {
        uint64_t start, end;
        uint32_t nr_accesses, age;
};

struct dp_damon_view_row {
        uint32_t pid;                   /* the DAMON target's process; 0 for the physical space */
        uint64_t start, end;
        uint32_t damon_nr_accesses;     /* DAMON: sampling intervals with an access, last aggregation */
        uint32_t damon_age;
        uint32_t pmu_nr_accesses;       /* the PMU's, overlap-weighted over the tracker's regions */
        uint64_t pmu_samples;           /* samples in the last aggregation that fell in the region, */
        bool pmu_samples_known;         /* when every tracker region across its bounds got none */
        uint64_t pmu_bytes;             /* how much of the region the tracker covers */
};

/*
 * Joins DAMON's regions @in (in DAMON's order: target by target, each
 * ascending; a start below the previous end begins the next target, as
 * DAMON lists no target index: a process's first region, its text, always
 * lies below the previous process's last, its stack) with
 * the tracker's @snap.  @target_pids names DAMON's targets in order (0 for
 * the physical space, matched to the tracker's single paddr target).
 * Regions beyond the last named target are dropped.  @out needs room for @n
 * rows; returns how many were written.
 */
size_t dp_damon_view_build(const struct dp_damon_view_input *in, size_t n, const uint32_t *target_pids,
                           size_t n_targets, const struct dp_tracker_snapshot *snap, struct dp_damon_view_row *out);
