/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The GetStats reply in the Prometheus text exposition format 0.0.4, for
 * scraping or node_exporter's textfile collector.
 *
 * Families, each with one # HELP and one # TYPE line:
 *   damon_perfd_source_info{name,pmu,hardware}        gauge, always 1
 *   damon_perfd_uptime_seconds                        gauge
 *   damon_perfd_sample_rate                           gauge, valid samples per second
 *   damon_perfd_cpu_state{cpu,state}                  gauge, 1 for the current state
 *   damon_perfd_<counter>_total{cpu}                  counter, per CPU
 *   damon_perfd_{ring_peak,kernel_lost,in_flight}{cpu} gauge, per CPU (levels)
 * Only per-CPU series are exported: a total beside them would be counted
 * twice by sum().
 */

#include <stdio.h>

#include "stats-reply.h"

/* Escapes a label value: backslash, double quote and line feed become \\, \"
 * and \n.  0, or -ENOMEM. */
int dp_prometheus_escape_label(const char *value, char **ret);

/* The metric family name of GetStats value @i (see stats-reply.h), e.g.
 * "damon_perfd_match_total", into @buf.  Returns @buf, or NULL past the end. */
char *dp_prometheus_metric_name(unsigned i, char *buf, size_t size);

/* Writes every family for @r to @f.  0, -ENOMEM, or -EIO on a write error. */
int dp_prometheus_write_stats(FILE *f, const struct dp_stats_reply *r);
