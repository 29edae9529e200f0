/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "stats.h"
#include "tracker.h"

/* The counter table, per-CPU lines and the @top hottest regions of @snap
 * (NULL: none), for people. */
void report_print(FILE *f, const struct dp_stats_view *view, const struct dp_tracker_snapshot *snap, unsigned top);

/* The same as one JSON document: GetStats()'s reply plus "nr_targets",
 * "nr_regions" and "hottest" (GetRegions()'s Region objects). */
int report_write_json(FILE *f, const struct dp_stats_view *view, const struct dp_tracker_snapshot *snap,
                      unsigned top);
