/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "damon-perfd/stats.h"
#include "tracker-thread.h"

/* The counter table, per-CPU lines and the @top hottest regions, for people. */
void report_print(FILE *f, const struct dp_stats_view *view, struct tracker_thread *tracker, unsigned top);

/* The same as one JSON document: dp_stats_to_json() plus "regions". */
int report_write_json(FILE *f, const struct dp_stats_view *view, struct tracker_thread *tracker, unsigned top);
