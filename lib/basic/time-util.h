/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define NSEC_PER_USEC 1000ull
#define NSEC_PER_MSEC 1000000ull
#define NSEC_PER_SEC 1000000000ull
#define USEC_PER_MSEC 1000ull
#define USEC_PER_SEC 1000000ull
#define USEC_PER_MINUTE (60 * USEC_PER_SEC)
#define USEC_PER_HOUR (60 * USEC_PER_MINUTE)

/* @clock's time in nanoseconds (CLOCK_MONOTONIC: perf's sample clock). */
static inline uint64_t dp_now_ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

/* The first whole second of CLOCK_MONOTONIC at or after @ns.  The threads
 * that wake about once a second meet there, so that on one CPU they run back
 * to back instead of each waking it from idle: on a virtual machine a wake-up
 * from idle costs 50-300 us of CPU, one right behind another a third of that. */
static inline uint64_t dp_second_grid_ns(uint64_t ns) {
        return (ns + NSEC_PER_SEC - 1) / NSEC_PER_SEC * NSEC_PER_SEC;
}

/* systemd time spans: "5000us", "100ms", "1s 500ms", "1min 30s", "2min",
 * "1h"; a bare number is seconds.  Units: us usec, ms msec, s sec, m min,
 * h hr.  Numbers may have a fraction ("1.5", "0.25min", ".5s"), counted to the
 * microsecond and the rest dropped, as systemd's parse_sec().  -EINVAL when
 * malformed (garbage, a sign, "5.", "1.5.5"), -ERANGE on overflow. */
int dp_timespan_parse(const char *text, uint64_t *ret_usec);
/* The same within [@min_usec, @max_usec]: -ERANGE outside (an overflow too),
 * -EINVAL when malformed; *ret_usec is set only on success. */
int dp_timespan_parse_in(const char *text, uint64_t min_usec, uint64_t max_usec, uint64_t *ret_usec);
/* Room for any dp_timespan_format() result ("5124095576h 1min 49s 551ms 615us"). */
#define DP_TIMESPAN_MAX 48
/* The shortest exact form ("1s 500ms", "0"); -ENOBUFS when @size is short. */
int dp_timespan_format(uint64_t usec, char *buf, size_t size);
