/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-plan.h"
#include "parse-util.h"
#include "pmu.h"
#include "source.h"

/*
 * The events a source would open on one CPU with options the daemon's
 * configuration does not reach (stores, IBS's L3-miss filter and op
 * counting, load-latency thresholds, a frequency), printed as damon-perfd
 * --print-events prints them, for tests/perf-attr-diff.py.  PMUs are read
 * from /sys/bus/event_source/devices, or --root.
 *
 *   print-plan [--root DIR] [--period N] [--freq N] [--phys] [--stores]
 *              [--l3-miss-only] [--count-ops] [--min-latency N] SOURCE CPU
 */

static int parse_number(const char *name, const char *text, uint64_t *ret) {
        if (dp_parse_u64_in(text, 0, UINT64_MAX, ret) < 0) {
                fprintf(stderr, "print-plan: --%s: not a number: '%s'\n", name, text);
                return -EINVAL;
        }
        return 0;
}

static int parse_options(int argc, char **argv, const char **root, struct dp_source_options *o) {
        static const struct option options[] = {
                { "root", required_argument, NULL, 'r' },       { "period", required_argument, NULL, 'p' },
                { "freq", required_argument, NULL, 'f' },       { "phys", no_argument, NULL, 'P' },
                { "stores", no_argument, NULL, 's' },           { "l3-miss-only", no_argument, NULL, 'l' },
                { "count-ops", no_argument, NULL, 'c' },        { "min-latency", required_argument, NULL, 'm' },
                {},
        };
        uint64_t v;
        int opt;

        while ((opt = getopt_long(argc, argv, "", options, NULL)) >= 0) {
                switch (opt) {
                case 'r':
                        *root = optarg;
                        break;
                case 'p':
                        if (parse_number("period", optarg, &o->sample_period) < 0)
                                return -EINVAL;
                        break;
                case 'f':
                        if (parse_number("freq", optarg, &o->sample_freq) < 0)
                                return -EINVAL;
                        break;
                case 'm':
                        if (parse_number("min-latency", optarg, &v) < 0 || v > UINT32_MAX)
                                return -EINVAL;
                        o->min_latency = (uint32_t) v;
                        break;
                case 'P':
                        o->want_phys = true;
                        break;
                case 's':
                        o->want_stores = true;
                        break;
                case 'l':
                        o->l3_miss_only = true;
                        break;
                case 'c':
                        o->count_ops = true;
                        break;
                default:
                        return -EINVAL;
                }
        }
        return argc - optind == 2 ? 0 : -EINVAL;
}

int main(int argc, char **argv) {
        struct dp_source_options o = {};
        const struct dp_source *source;
        struct dp_pmu_set *pmus = NULL;
        struct dp_event_plan plan;
        const char *root = NULL;
        uint64_t cpu;
        int r;

        if (parse_options(argc, argv, &root, &o) < 0) {
                fprintf(stderr, "usage: print-plan [--root DIR] [--period N] [--freq N] [--phys] [--stores]\n"
                                "                  [--l3-miss-only] [--count-ops] [--min-latency N] SOURCE CPU\n");
                return EXIT_FAILURE;
        }
        source = dp_source_find(argv[optind]);
        if (!source || dp_parse_u64_in(argv[optind + 1], 0, DP_CPU_MAX - 1, &cpu) < 0) {
                fprintf(stderr, "print-plan: unknown source '%s' or bad CPU '%s'\n", argv[optind], argv[optind + 1]);
                return EXIT_FAILURE;
        }
        r = dp_pmu_detect(root, &pmus);
        if (r < 0) {
                fprintf(stderr, "print-plan: cannot read PMUs: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        o.pmus = pmus;
        r = dp_source_build_events(source, &o, (int) cpu, &plan);
        if (r >= 0)
                r = dp_event_plan_fprint(stdout, &plan, source->name, argv[optind + 1]);
        else
                fprintf(stderr, "print-plan: %s on cpu %s: %s\n", source->name, argv[optind + 1],
                        plan.note[0] ? plan.note : strerror(-r));
        dp_pmu_set_free(pmus);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
