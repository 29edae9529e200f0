/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damon-perfd-workload: a process with a known hot area and a known cold
 * area, for the demo and the integration tests (the areas: workload-core.h).
 *
 * Prints one JSON line with its pid and both areas, then runs until
 * --seconds pass or it is signalled.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse-util.h"
#include "workload-core.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static size_t parse_size_mib(const char *s, const char *what) {
        uint64_t v;

        if (dp_parse_u64_in(s, 1, 65536, &v) < 0) {
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
        struct workload_areas a = {
                .page = (size_t) sysconf(_SC_PAGESIZE),
                .hot_bytes = 4u << 20,
                .cold_bytes = 64u << 20,
        };
        double seconds = 0, passes = 0;
        int c, r;

        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        a.hot_bytes = parse_size_mib(optarg, "hot-mib");
                        break;
                case 'c':
                        a.cold_bytes = parse_size_mib(optarg, "cold-mib");
                        break;
                case 's':
                        if (dp_parse_double(optarg, &seconds) < 0 || seconds < 0) {
                                fprintf(stderr, "workload: --seconds wants a number >= 0\n");
                                return EXIT_FAILURE;
                        }
                        break;
                case 'r':
                        if (dp_parse_double(optarg, &passes) < 0 || passes <= 0) {
                                fprintf(stderr, "workload: --rate wants passes per second > 0\n");
                                return EXIT_FAILURE;
                        }
                        break;
                default:
                        fprintf(stderr, "usage: %s [--hot-mib N] [--cold-mib N] [--seconds S] [--rate PASSES_PER_S]\n",
                                argv[0]);
                        return EXIT_FAILURE;
                }
        }

        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);

        r = workload_map(&a);
        if (r < 0) {
                fprintf(stderr, "workload: mapping %zu + %zu bytes: %s\n", a.cold_bytes, a.hot_bytes, strerror(-r));
                return EXIT_FAILURE;
        }
        workload_describe(stdout, &a);
        workload_run(&a, seconds, passes, &stop);
        return EXIT_SUCCESS;
}
