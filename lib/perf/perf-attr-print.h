/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <linux/perf_event.h>
#include <stdio.h>

/*
 * A perf_event_attr as `perf record -vv` prints it before each open
 * (tools/perf/util/perf_event_attr_fprintf.c): the same field names, order
 * and formats, fields that are 0 left out, between two lines of dashes.  So
 * what the daemon would open can be put beside what perf would open, field
 * by field (damon-perfd --print-events, tests/perf-attr-diff.py).
 */

/* The sample_type or read_format bits as perf names them, joined by '|';
 * bits perf has no name for as a trailing hex number.  @buf holds at least
 * 256 bytes. */
const char *dp_perf_sample_type_names(uint64_t sample_type, char *buf, size_t size);
const char *dp_perf_read_format_names(uint64_t read_format, char *buf, size_t size);

/* The whole block; -EIO when @f fails. */
int dp_perf_attr_fprint(FILE *f, const struct perf_event_attr *attr);
