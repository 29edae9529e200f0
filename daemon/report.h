/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <jansson.h>
#include <stdio.h>

#include "stats.h"
#include "tracker.h"

/* A region's last_nr_samples for JSON: null when it is not the count of
 * samples that fell in the region (DP_REGION_LAST_SAMPLES_UNKNOWN). */
json_t *report_region_samples(const struct dp_snapshot_region *r);

/* The counter table, per-CPU lines and the @top hottest regions of @snap
 * (NULL: none), for people. */
void report_print(FILE *f, const struct dp_stats_view *view, const struct dp_tracker_snapshot *snap, unsigned top);

/* The same as one JSON document: GetStats()'s reply plus "nr_targets",
 * "nr_regions" and "hottest" (GetRegions()'s Region objects). */
int report_write_json(FILE *f, const struct dp_stats_view *view, const struct dp_tracker_snapshot *snap,
                      unsigned top);
