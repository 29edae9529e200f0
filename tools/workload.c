/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damon-perfd-workload: a process with a known hot area and a known cold
 * area, for the demo and the integration tests (the areas: workload-core.h);
 * with --shape, one of the value benchmark's workloads (workload-value.h);
 * with --tier, the tiering or reclaim workload (workload-tier.h).
 *
 * Prints one JSON line with its pid and its areas, then runs until
 * --seconds pass or it is signalled.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parse-util.h"
#include "workload-core.h"
#include "workload-tier.h"
#include "workload-value.h"

static volatile sig_atomic_t stop, go;

static void on_signal(int sig) {
        (void) sig;
        stop = 1;
}

static void on_go(int sig) {
        (void) sig;
        go = 1;
}

static size_t parse_size_mib(const char *s, const char *what) {
        uint64_t v;

        if (dp_parse_u64_in(s, 1, 65536, &v) < 0) {
                fprintf(stderr, "workload: --%s wants MiB between 1 and 65536, got '%s'\n", what, s);
                exit(EXIT_FAILURE);
        }
        return (size_t) v << 20;
}

static double parse_number(const char *s, const char *what, double min) {
        double v;

        if (dp_parse_double(s, &v) < 0 || v < min) {
                fprintf(stderr, "workload: --%s wants a number >= %g, got '%s'\n", what, min, s);
                exit(EXIT_FAILURE);
        }
        return v;
}

enum {
        OPT_SHAPE = 0x100, OPT_SPAN, OPT_WINDOW, OPT_WINDOW_AT, OPT_MOVE_TO, OPT_MOVE_AFTER, OPT_CHUNKS,
        OPT_COLD_CHUNKS, OPT_CHUNK_KIB, OPT_SEED, OPT_TOUCH_MS, OPT_FAULTS, OPT_OBSERVE, OPT_OBSERVE_MS,
        OPT_OBSERVE_SPARED, OPT_TIER, OPT_SLOW_NODE, OPT_FAST_NODE, OPT_REPORT_MS, OPT_PIECES, OPT_WAIT_GO,
};

/* The tiering workload's own options (workload-tier.h); false if @c is none of them. */
static bool parse_tier_option(int c, const char *arg, struct tier_workload *t) {
        switch (c) {
        case OPT_TIER: t->mode = arg; break;
        case OPT_SLOW_NODE: t->slow_node = (int) parse_number(arg, "slow-node", 0); break;
        case OPT_FAST_NODE: t->fast_node = (int) parse_number(arg, "fast-node", 0); break;
        case OPT_REPORT_MS: t->report_ms = parse_number(arg, "report-ms", 10); break;
        case OPT_PIECES: t->pieces = (unsigned) parse_number(arg, "pieces", 1); break;
        case OPT_WAIT_GO: t->wait_go = true; break;
        default: return false;
        }
        return true;
}

/* The value benchmark's options (workload-value.h); false if @c is none of them. */
static bool parse_value_option(int c, const char *arg, struct value_workload *w) {
        switch (c) {
        case OPT_SHAPE: w->shape = arg; break;
        case OPT_SPAN: w->span_bytes = parse_size_mib(arg, "span-mib"); break;
        case OPT_WINDOW: w->window_bytes = parse_size_mib(arg, "window-mib"); break;
        case OPT_WINDOW_AT: w->window_at = (uint64_t) parse_number(arg, "window-at-mib", 0) << 20; break;
        case OPT_MOVE_TO: w->move_to = (uint64_t) parse_number(arg, "move-to-mib", 0) << 20; break;
        case OPT_MOVE_AFTER: w->move_after_s = parse_number(arg, "move-after", 0); break;
        case OPT_CHUNKS: w->nr_chunks = (unsigned) parse_number(arg, "chunks", 1); break;
        case OPT_COLD_CHUNKS: w->nr_cold_chunks = (unsigned) parse_number(arg, "cold-chunks", 0); break;
        case OPT_CHUNK_KIB: w->chunk_bytes = (uint64_t) parse_number(arg, "chunk-kib", 4) << 10; break;
        case OPT_SEED: w->seed = (unsigned) parse_number(arg, "seed", 0); break;
        case OPT_TOUCH_MS: w->touch_ms = parse_number(arg, "touch-ms", 0); break;
        case OPT_FAULTS: w->faults_per_s = parse_number(arg, "faults-per-s", 0); break;
        case OPT_OBSERVE: w->observe_dir = arg; break;
        case OPT_OBSERVE_MS: w->observe_ms = parse_number(arg, "observe-ms", 10); break;
        case OPT_OBSERVE_SPARED: w->spared_scheme = (int) parse_number(arg, "observe-spared", 0); break;
        default: return false;
        }
        return true;
}

static int run_value(struct value_workload *w) {
        struct value_observer *o = NULL;
        int r;

        r = value_map(w);
        if (r < 0) {
                fprintf(stderr, "workload: mapping the %s shape: %s\n", w->shape, strerror(-r));
                return EXIT_FAILURE;
        }
        w->t0 = workload_now();
        value_describe(w);
        if (w->observe_dir && (r = value_observe_start(w, &o)) < 0) {
                fprintf(stderr, "workload: starting the observer: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        value_run(w, &stop);
        value_observe_finish(o);
        return EXIT_SUCCESS;
}

/* With --wait-go, laid out and described, the workload waits for SIGUSR1
 * (blocked from the start, so that none is lost) before it uses anything:
 * a monitor started then sees the areas as a long-running process's, not
 * the sweep of their first touches, and the clock starts with the use. */
static void wait_for_go(const sigset_t *unblocked) {
        while (!go && !stop)
                sigsuspend(unblocked);
}

/* The tiering workload with the sizes, pace and length the others' options gave. */
static int run_tier(struct tier_workload *t, const struct workload_areas *a, const struct value_workload *w,
                    double seconds) {
        sigset_t go_set, unblocked;
        int r;

        sigemptyset(&go_set);
        sigaddset(&go_set, SIGUSR1);
        if (t->wait_go && sigprocmask(SIG_BLOCK, &go_set, &unblocked) < 0) {
                fprintf(stderr, "workload: blocking SIGUSR1: %s\n", strerror(errno));
                return EXIT_FAILURE;
        }

        t->hot_bytes = a->hot_bytes;
        t->cold_bytes = a->cold_bytes;
        t->touch_ms = w->touch_ms;
        t->faults_per_s = w->faults_per_s;
        t->seconds = seconds;
        r = tier_map(t);
        if (r < 0) {
                fprintf(stderr, "workload: mapping the %s workload: %s\n", t->mode, strerror(-r));
                return EXIT_FAILURE;
        }
        tier_describe(t);
        if (t->wait_go)
                wait_for_go(&unblocked);
        r = tier_run(t, &stop);
        if (r < 0) {
                fprintf(stderr, "workload: %s: %s\n", t->mode, strerror(-r));
                return EXIT_FAILURE;
        }
        return EXIT_SUCCESS;
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "hot-mib", required_argument, NULL, 'h' },
                { "cold-mib", required_argument, NULL, 'c' },
                { "seconds", required_argument, NULL, 's' },
                { "rate", required_argument, NULL, 'r' },
                { "shape", required_argument, NULL, OPT_SHAPE },
                { "span-mib", required_argument, NULL, OPT_SPAN },
                { "window-mib", required_argument, NULL, OPT_WINDOW },
                { "window-at-mib", required_argument, NULL, OPT_WINDOW_AT },
                { "move-to-mib", required_argument, NULL, OPT_MOVE_TO },
                { "move-after", required_argument, NULL, OPT_MOVE_AFTER },
                { "chunks", required_argument, NULL, OPT_CHUNKS },
                { "cold-chunks", required_argument, NULL, OPT_COLD_CHUNKS },
                { "chunk-kib", required_argument, NULL, OPT_CHUNK_KIB },
                { "seed", required_argument, NULL, OPT_SEED },
                { "touch-ms", required_argument, NULL, OPT_TOUCH_MS },
                { "faults-per-s", required_argument, NULL, OPT_FAULTS },
                { "observe", required_argument, NULL, OPT_OBSERVE },
                { "observe-ms", required_argument, NULL, OPT_OBSERVE_MS },
                { "observe-spared", required_argument, NULL, OPT_OBSERVE_SPARED },
                { "tier", required_argument, NULL, OPT_TIER },
                { "slow-node", required_argument, NULL, OPT_SLOW_NODE },
                { "fast-node", required_argument, NULL, OPT_FAST_NODE },
                { "report-ms", required_argument, NULL, OPT_REPORT_MS },
                { "pieces", required_argument, NULL, OPT_PIECES },
                { "wait-go", no_argument, NULL, OPT_WAIT_GO },
                {}
        };
        /* The value shapes' defaults: the moving window and sparse chunks. */
        struct value_workload w = {
                .span_bytes = 256u << 20, .window_bytes = 16u << 20, .window_at = 96u << 20,
                .move_to = 192u << 20, .nr_chunks = 32, .nr_cold_chunks = 32, .chunk_bytes = 2u << 20,
                .seed = 1, .touch_ms = 20, .faults_per_s = 1000, .observe_ms = 200,
                .spared_scheme = -1,
        };
        struct workload_areas a = {
                .page = (size_t) sysconf(_SC_PAGESIZE),
                .hot_bytes = 4u << 20,
                .cold_bytes = 64u << 20,
        };
        struct tier_workload t = { .slow_node = 1, .fast_node = 0, .report_ms = 200 };
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
                        if (parse_value_option(c, optarg, &w) || parse_tier_option(c, optarg, &t))
                                break;
                        fprintf(stderr, "usage: %s [--hot-mib N] [--cold-mib N] [--seconds S] [--rate PASSES_PER_S]\n"
                                "       %s --shape window|chunks [--span-mib N] [--window-mib N] [--window-at-mib N]\n"
                                "          [--move-to-mib N --move-after S] [--chunks N] [--cold-chunks N] [--chunk-kib N]\n"
                                "          [--seed N] [--touch-ms MS] [--faults-per-s N] [--observe KDAMOND_DIR]\n"
                                "          [--observe-ms MS] [--observe-spared SCHEME] [--seconds S]\n"
                                "       %s --tier tier|reclaim [--hot-mib N] [--cold-mib N] [--slow-node N]\n"
                                "          [--fast-node N] [--touch-ms MS] [--faults-per-s N] [--report-ms MS] [--pieces N]\n"
                                "          [--wait-go] [--seconds S]\n",
                                argv[0], argv[0], argv[0]);
                        return EXIT_FAILURE;
                }
        }

        signal(SIGTERM, on_signal);
        signal(SIGINT, on_signal);
        signal(SIGUSR1, on_go);
        if (t.mode)
                return run_tier(&t, &a, &w, seconds);
        if (w.shape) {
                w.seconds = seconds;
                return run_value(&w);
        }

        r = workload_map(&a);
        if (r < 0) {
                fprintf(stderr, "workload: mapping %zu + %zu bytes: %s\n", a.cold_bytes, a.hot_bytes, strerror(-r));
                return EXIT_FAILURE;
        }
        workload_describe(stdout, &a);
        workload_run(&a, seconds, passes, &stop);
        return EXIT_SUCCESS;
}
