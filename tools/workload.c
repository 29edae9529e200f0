/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damon-perfd-workload: a process with a known hot area and a known cold
 * area, for the demo and the integration tests.  The hot area is dropped with
 * MADV_DONTNEED and touched again, page by page, so every pass faults on
 * every hot page: that is what the page-fault positive control can see.  The
 * cold area is touched once and then left alone.
 *
 * Prints one JSON line with its pid and both areas, then runs until
 * --seconds pass or it is signalled.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static double now_seconds(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/*
 * Lays out [guard][cold][guard][hot][guard] in one reservation: the PROT_NONE
 * guard pages keep each area its own VMA, never merged with a neighbour, so
 * the areas' bounds are exact for whoever checks where the hot regions are.
 */
static void map_areas(size_t cold_bytes, size_t hot_bytes, size_t page, char **cold, char **hot) {
        size_t total = cold_bytes + hot_bytes + 3 * page;
        char *base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (base == MAP_FAILED) {
                fprintf(stderr, "workload: mmap of %zu bytes: %s\n", total, strerror(errno));
                exit(EXIT_FAILURE);
        }
        *cold = base + page;
        *hot = *cold + cold_bytes + page;
        if (mprotect(*cold, cold_bytes, PROT_READ | PROT_WRITE) < 0 ||
            mprotect(*hot, hot_bytes, PROT_READ | PROT_WRITE) < 0) {
                fprintf(stderr, "workload: mprotect: %s\n", strerror(errno));
                exit(EXIT_FAILURE);
        }
        /* Base pages, so that every touched page of the hot area faults again after MADV_DONTNEED. */
        madvise(base, total, MADV_NOHUGEPAGE);
}

static void touch(volatile char *p, size_t bytes, size_t page) {
        for (size_t off = 0; off < bytes; off += page)
                p[off]++;
}

static size_t parse_size_mib(const char *s, const char *what) {
        char *end;
        unsigned long v = strtoul(s, &end, 10);

        if (*s == '\0' || *end != '\0' || v == 0 || v > 65536) {
                fprintf(stderr, "workload: --%s wants MiB between 1 and 65536, got '%s'\n", what, s);
                exit(EXIT_FAILURE);
        }
        return (size_t) v << 20;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "hot-mib", required_argument, NULL, 'h' },
                { "cold-mib", required_argument, NULL, 'c' },
                { "seconds", required_argument, NULL, 's' },
                { "rate", required_argument, NULL, 'r' },
                {}
        };
        size_t hot_bytes = 4u << 20, cold_bytes = 64u << 20;
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        double seconds = 0, pass_interval = 0;
        char *hot, *cold, *end;
        double start;
        int c;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        hot_bytes = parse_size_mib(optarg, "hot-mib");
                        break;
                case 'c':
                        cold_bytes = parse_size_mib(optarg, "cold-mib");
                        break;
                case 's':
                        seconds = strtod(optarg, &end);
                        if (*end || seconds < 0) {
                                fprintf(stderr, "workload: --seconds wants a number >= 0\n");
                                return EXIT_FAILURE;
                        }
                        break;
                case 'r': {
                        double passes = strtod(optarg, &end);

                        if (*end || passes <= 0) {
                                fprintf(stderr, "workload: --rate wants passes per second > 0\n");
                                return EXIT_FAILURE;
                        }
                        pass_interval = 1.0 / passes;
                        break;
                }
                default:
                        fprintf(stderr, "usage: %s [--hot-mib N] [--cold-mib N] [--seconds S] [--rate PASSES_PER_S]\n",
                                argv[0]);
                        return EXIT_FAILURE;
                }
        }

        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);

        map_areas(cold_bytes, hot_bytes, page, &cold, &hot);
        touch(cold, cold_bytes, page);

        printf("{\"pid\": %ld, \"hot\": [%lu, %lu], \"cold\": [%lu, %lu]}\n", (long) getpid(),
               (unsigned long) (uintptr_t) hot, (unsigned long) (uintptr_t) (hot + hot_bytes),
               (unsigned long) (uintptr_t) cold, (unsigned long) (uintptr_t) (cold + cold_bytes));
        fflush(stdout);

        start = now_seconds();
        while (!stop && (seconds == 0 || now_seconds() - start < seconds)) {
                double pass_start = now_seconds();

                madvise(hot, hot_bytes, MADV_DONTNEED);
                touch(hot, hot_bytes, page);
                if (pass_interval > 0) {
                        double left = pass_interval - (now_seconds() - pass_start);

                        if (left > 0) {
                                struct timespec ts = { (time_t) left, (long) ((left - (time_t) left) * 1e9) };

                                nanosleep(&ts, NULL);
                        }
                }
        }
        return EXIT_SUCCESS;
}
