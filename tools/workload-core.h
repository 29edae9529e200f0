/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The demo workload's core, shared by damon-perfd-workload and damonctl
 * selftest (which runs it in a child of its own when the binary is not
 * installed): a known hot area and a known cold area.  The hot area is
 * dropped with MADV_DONTNEED and touched again, page by page, so every pass
 * faults on every hot page: that is what the page-fault positive control can
 * see.  The cold area is touched once and then left alone.
 */

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

struct workload_areas {
        size_t page, cold_bytes, hot_bytes;
        char *cold, *hot;
};

static inline double workload_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static inline void workload_touch(volatile char *p, size_t bytes, size_t page) {
        for (size_t off = 0; off < bytes; off += page)
                p[off]++;
}

/*
 * Lays out [guard][cold][guard][hot][guard] in one reservation: the PROT_NONE
 * guard pages keep each area its own VMA, never merged with a neighbour, so
 * the areas' bounds are exact for whoever checks where the hot regions are.
 * Touches the cold area once.  0 or a negative errno.
 */
static inline int workload_map(struct workload_areas *a) {
        size_t total = a->cold_bytes + a->hot_bytes + 3 * a->page;
        char *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (base == MAP_FAILED)
                return -errno;
        a->cold = base + a->page;
        a->hot = a->cold + a->cold_bytes + a->page;
        if (mprotect(a->cold, a->cold_bytes, PROT_READ | PROT_WRITE) < 0 ||
            mprotect(a->hot, a->hot_bytes, PROT_READ | PROT_WRITE) < 0)
                return -errno;
        /* Base pages, so that every touched page of the hot area faults again after MADV_DONTNEED. */
        madvise(base, total, MADV_NOHUGEPAGE);
        workload_touch(a->cold, a->cold_bytes, a->page);
        return 0;
}

/* The one line a workload prints first: its pid and both areas. */
static inline int workload_describe(FILE *f, const struct workload_areas *a) {
        fprintf(f, "{\"pid\": %ld, \"hot\": [%lu, %lu], \"cold\": [%lu, %lu]}\n", (long) getpid(),
                (unsigned long) (uintptr_t) a->hot, (unsigned long) (uintptr_t) (a->hot + a->hot_bytes),
                (unsigned long) (uintptr_t) a->cold, (unsigned long) (uintptr_t) (a->cold + a->cold_bytes));
        return fflush(f) == 0 ? 0 : -EIO;
}

/* Faults on the hot area, @passes_per_second times a second (0: as fast as
 * it can), until @seconds pass (0: forever) or *@stop is set. */
static inline void workload_run(const struct workload_areas *a, double seconds, double passes_per_second,
                                volatile sig_atomic_t *stop) {
        double start = workload_now();

        while (!*stop && (seconds == 0 || workload_now() - start < seconds)) {
                double pass_start = workload_now();

                madvise(a->hot, a->hot_bytes, MADV_DONTNEED);
                workload_touch(a->hot, a->hot_bytes, a->page);
                if (passes_per_second > 0) {
                        double left = 1.0 / passes_per_second - (workload_now() - pass_start);

                        if (left > 0) {
                                struct timespec ts = { (time_t) left, (long) ((left - (time_t) left) * 1e9) };

                                nanosleep(&ts, NULL);
                        }
                }
        }
}
