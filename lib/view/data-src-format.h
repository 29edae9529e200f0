/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A union perf_mem_data_src in words, exactly as `perf script -F data_src`
 * writes them after the hex value (tools/perf/util/mem-events.c,
 * perf_script__meminfo_scnprintf()):
 *
 *   |OP LOAD|LVL L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A
 *
 * OP and LCK name their first set bit (NA first), LVL the legacy bits joined
 * by " or " (or the hop count when mem_hops is set), then mem_lvl_num, then
 * " hit"/" miss"; SNP the snoop then the snoopx bits; TLB likewise; BLK each
 * bit with a leading blank.  perf cuts its line at 99 characters (hex value
 * included); this writes it whole.
 */

#include <stddef.h>
#include <stdint.h>

/* Longest text dp_data_src_format() writes, NUL included. */
#define DP_DATA_SRC_TEXT_MAX 256

/* Writes the text into @buf; returns its length, or -ENOBUFS when cut. */
int dp_data_src_format(uint64_t data_src, char *buf, size_t size);
