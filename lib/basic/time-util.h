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

/* systemd time spans: "5000us", "100ms", "1s 500ms", "2min", "1h"; a bare
 * number is seconds.  Units: us usec, ms msec, s sec, m min, h hr.
 * -EINVAL when malformed, -ERANGE on overflow. */
int dp_timespan_parse(const char *text, uint64_t *ret_usec);
/* The shortest exact form ("1s 500ms", "0"); -ENOBUFS when @size is short. */
int dp_timespan_format(uint64_t usec, char *buf, size_t size);
