/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Sample-matching throughput of the region tracker against a naive linear
 * search over all regions, single-threaded, measured side by side in one run
 * (repetitions interleaved) and reported as the median.
 *
 * Main table: 100 targets x 100 regions, pre-generated samples (91% matches,
 * 3% of each miss kind), two address streams: "random" (every sample a
 * random target and region) and "local" (runs of 16 samples in one region,
 * as page-fault bursts arrive).  Scaling table: 10 targets with 10..10000
 * regions each (100..100k in total), to show the ~log(n) cost of the search.
 *
 * The tracker's clock is not ticked while measuring, so regions stay put
 * and, after the first pass, matches take the no-update path.
 *
 * Static probes: the batch path as built (probes in when the usdt option is
 * on) against a copy of it compiled without them (tracker-probes-off.c), on
 * the same trackers and samples, to show what unattached probes cost.
 *
 *   bench-tracker [--seconds S] [--reps N] [--json FILE]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "probes.h"
#include "tracker.h"

#define NR_SAMPLES (1u << 16)
#define MAX_REPS 64
#define CHUNK 4096
#define BASE UINT64_C(0x7f0000000000)
#define REGION_PAGES 16
#define HOLE_PAGES 1024 /* a multiple of REGION_PAGES keeps regions aligned to their size */
#define UNKNOWN_TGID UINT32_C(999999)

/* tracker-probes-off.c: dp_tracker_account_batch() without static probes. */
void dp_tracker_account_batch_probes_off(struct dp_tracker *t, const struct dp_sample *s, size_t nr,
                                         struct dp_counter_values *c);

struct flat_region {
        uint32_t tgid;
        uint64_t start;
        uint64_t end;
        uint64_t nr_samples;
};

struct world {
        struct dp_tracker *tracker;
        struct flat_region *flat;       /* every region, for the naive search */
        size_t nr_flat;
        uint32_t nr_targets;
        uint32_t regions_per_target;
        struct dp_sample *samples;
        uint64_t expect[NR_SAMPLES / CHUNK][_DP_C_MAX]; /* outcome mix of each chunk */
};

enum variant {
        VARIANT_SINGLE,
        VARIANT_BATCH,
        VARIANT_NAIVE,
        VARIANT_BATCH_PROBES_OFF,
};

static const char *const variant_names[] = {
        [VARIANT_SINGLE] = "tracker, per sample",
        [VARIANT_BATCH] = "tracker, batch",
        [VARIANT_NAIVE] = "naive linear search",
        [VARIANT_BATCH_PROBES_OFF] = "tracker, batch, probes compiled out",
};

static double now_seconds(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static uint32_t target_tgid(uint32_t i) {
        return 1000 + 7 * i;
}

/* Two equal ranges with a hole between, so the tracker's min_nr_regions
 * split yields exactly @regions_per_target regions of REGION_PAGES each. */
static void target_ranges(uint32_t regions_per_target, struct dp_range r[2]) {
        uint64_t half = (uint64_t) (regions_per_target / 2) * REGION_PAGES * DP_PAGE_SIZE;

        r[0] = (struct dp_range) { BASE, BASE + half };
        r[1] = (struct dp_range) { BASE + half + HOLE_PAGES * DP_PAGE_SIZE,
                                   BASE + 2 * half + HOLE_PAGES * DP_PAGE_SIZE };
}

static int world_build(struct world *w, uint32_t nr_targets, uint32_t regions_per_target, bool local, uint64_t seed) {
        struct dp_tracker_config c;
        struct dp_prng gen = { seed };
        struct dp_range ranges[2];
        struct dp_sample current = {};
        size_t run = 0;
        int r;

        *w = (struct world) { .nr_targets = nr_targets, .regions_per_target = regions_per_target };
        dp_tracker_config_init(&c);
        c.min_nr_regions = regions_per_target;
        c.max_nr_regions = DP_MAX(regions_per_target, (uint32_t) 1000);
        c.max_targets = nr_targets;
        r = dp_tracker_new(&c, &w->tracker);
        if (r < 0)
                return r;

        target_ranges(regions_per_target, ranges);
        for (uint32_t i = 0; i < nr_targets; i++) {
                r = dp_tracker_add_target(w->tracker, target_tgid(i), ranges, 2);
                if (r < 0)
                        return r;
        }

        w->nr_flat = dp_tracker_nr_regions(w->tracker);
        if (w->nr_flat != (size_t) nr_targets * regions_per_target)
                return -EPROTO;
        w->flat = calloc(w->nr_flat, sizeof(*w->flat));
        w->samples = calloc(NR_SAMPLES, sizeof(*w->samples));
        if (!w->flat || !w->samples)
                return -ENOMEM;
        for (uint32_t i = 0, k = 0; i < nr_targets; i++) {
                const struct dp_region *regions;
                size_t n;

                r = dp_tracker_target_regions(w->tracker, target_tgid(i), &regions, &n);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < n; j++, k++)
                        w->flat[k] = (struct flat_region) { target_tgid(i), regions[j].start, regions[j].end, 0 };
        }

        for (size_t i = 0; i < NR_SAMPLES; i++) {
                uint64_t kind = dp_prng_between(&gen, 0, 99);
                struct dp_sample *s = &w->samples[i];

                if (kind < 91) {
                        if (run == 0) {
                                const struct flat_region *f = &w->flat[dp_prng_between(&gen, 0, w->nr_flat - 1)];

                                current = (struct dp_sample) { .pid = f->tgid, .tid = f->tgid };
                                current.vaddr = dp_prng_between(&gen, f->start, f->end - 1);
                                run = local ? 16 : 1;
                        }
                        *s = current;
                        if (local)
                                s->vaddr = (current.vaddr & ~(DP_PAGE_SIZE * REGION_PAGES - 1)) +
                                           dp_prng_between(&gen, 0, DP_PAGE_SIZE * REGION_PAGES - 1);
                        run--;
                        w->expect[i / CHUNK][DP_C_MATCH]++;
                        continue;
                }

                s->pid = target_tgid((uint32_t) dp_prng_between(&gen, 0, nr_targets - 1));
                if (kind < 94) {
                        s->pid = UNKNOWN_TGID;
                        s->vaddr = ranges[0].start;
                        w->expect[i / CHUNK][DP_C_MISS_TGID]++;
                } else if (kind < 97) {
                        s->vaddr = dp_prng_between(&gen, ranges[0].end, ranges[1].start - 1);
                        w->expect[i / CHUNK][DP_C_MISS_REGION]++;
                } else {
                        s->vaddr = dp_prng_between(&gen, 0, 1) ? ranges[1].end + dp_prng_between(&gen, 0, 1 << 30)
                                                               : dp_prng_between(&gen, 0, ranges[0].start - 1);
                        w->expect[i / CHUNK][DP_C_MISS_BOUND]++;
                }
                s->tid = s->pid;
        }
        return 0;
}

static void world_free(struct world *w) {
        dp_tracker_free(w->tracker);
        free(w->flat);
        free(w->samples);
        *w = (struct world) {};
}

/* The baseline: scan everything; on a miss, scan again to tell why. */
static void naive_account(struct world *w, const struct dp_sample *s, struct dp_counter_values *c) {
        uint64_t lo = UINT64_MAX, hi = 0;
        bool known = false;

        for (size_t j = 0; j < w->nr_flat; j++) {
                struct flat_region *f = &w->flat[j];

                if (f->tgid == s->pid && f->start <= s->vaddr && s->vaddr < f->end) {
                        f->nr_samples++;
                        c->v[DP_C_MATCH]++;
                        return;
                }
        }
        for (size_t j = 0; j < w->nr_flat; j++) {
                const struct flat_region *f = &w->flat[j];

                if (f->tgid != s->pid)
                        continue;
                known = true;
                lo = DP_MIN(lo, f->start);
                hi = DP_MAX(hi, f->end);
        }
        if (!known)
                c->v[DP_C_MISS_TGID]++;
        else if (s->vaddr >= lo && s->vaddr < hi)
                c->v[DP_C_MISS_REGION]++;
        else
                c->v[DP_C_MISS_BOUND]++;
}

/* Runs @v over the samples, chunk by chunk, for about @seconds; returns
 * samples/s and checks the outcome counts against the generated mix. */
static double measure(struct world *w, enum variant v, double seconds, bool *ok) {
        struct dp_counter_values c = {};
        uint64_t done = 0, expect[_DP_C_MAX] = {};
        size_t pos = 0;
        double start = now_seconds(), elapsed;

        do {
                const struct dp_sample *chunk = &w->samples[pos];

                switch (v) {
                case VARIANT_SINGLE:
                        for (size_t i = 0; i < CHUNK; i++)
                                dp_tracker_account(w->tracker, &chunk[i], &c);
                        break;
                case VARIANT_BATCH:
                        dp_tracker_account_batch(w->tracker, chunk, CHUNK, &c);
                        break;
                case VARIANT_NAIVE:
                        for (size_t i = 0; i < CHUNK; i++)
                                naive_account(w, &chunk[i], &c);
                        break;
                case VARIANT_BATCH_PROBES_OFF:
                        dp_tracker_account_batch_probes_off(w->tracker, chunk, CHUNK, &c);
                        break;
                }
                for (enum dp_counter k = DP_C_MATCH; k <= DP_C_MISS_BOUND; k++)
                        expect[k] += w->expect[pos / CHUNK][k];
                done += CHUNK;
                pos = (pos + CHUNK) % NR_SAMPLES;
                elapsed = now_seconds() - start;
        } while (elapsed < seconds);

        /* Every variant must reproduce the generated mix exactly. */
        for (enum dp_counter k = DP_C_MATCH; k <= DP_C_MISS_BOUND; k++)
                if (c.v[k] != expect[k])
                        *ok = false;
        if (c.v[DP_C_UPDATE] > c.v[DP_C_MATCH])
                *ok = false;
        return (double) done / elapsed;
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static double median(const double *v, size_t n) {
        double sorted[MAX_REPS];

        memcpy(sorted, v, n * sizeof(*v));
        qsort(sorted, n, sizeof(*sorted), compare_double);
        return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

struct row {
        const char *workload;
        enum variant variant;
        size_t world;           /* index into the worlds of its table */
        size_t baseline;        /* row index of the naive run to compare with */
        double rates[MAX_REPS];
        double median;
};

/* The batch path with static probes compiled in (as built) and out. */
struct probe_row {
        const char *workload;
        size_t world;
        double in[MAX_REPS], out[MAX_REPS];
        double in_median, out_median;
};

struct scale_row {
        uint32_t regions_per_target;
        double tracker[MAX_REPS], naive[MAX_REPS];
        double tracker_median, naive_median;
};

static int write_json(const char *path, const struct row *rows, size_t nr_rows, const struct scale_row *scale,
                      size_t nr_scale, const struct probe_row *probes, size_t nr_probes, size_t reps,
                      double seconds) {
        json_t *root, *main_rows, *scale_rows, *probe_rows;
        int r = 0;

        root = json_pack("{s:s, s:f, s:I, s:I, s:{s:i, s:i}, s:o, s:o, s:{s:b, s:o}}", "benchmark", "tracker",
                         "seconds", seconds, "repetitions", (json_int_t) reps, "samples", (json_int_t) NR_SAMPLES,
                         "main", "targets", 100, "regions_per_target", 100, "results", json_array(), "scaling",
                         json_array(), "usdt", "compiled_in", DP_USDT, "results", json_array());
        if (!root)
                return -ENOMEM;
        main_rows = json_object_get(root, "results");
        scale_rows = json_object_get(root, "scaling");
        probe_rows = json_object_get(json_object_get(root, "usdt"), "results");

        for (size_t i = 0; i < nr_rows && r == 0; i++) {
                json_t *rates = json_array(), *entry;

                for (size_t k = 0; k < reps; k++)
                        json_array_append_new(rates, json_real(rows[i].rates[k]));
                entry = json_pack("{s:s, s:s, s:f, s:f, s:f, s:o}", "workload", rows[i].workload, "variant",
                                  variant_names[rows[i].variant], "samples_per_sec_median", rows[i].median,
                                  "ns_per_sample", 1e9 / rows[i].median, "ratio_vs_naive",
                                  rows[i].median / rows[rows[i].baseline].median, "samples_per_sec", rates);
                if (!entry)
                        r = -ENOMEM;
                else
                        json_array_append_new(main_rows, entry);
        }
        for (size_t i = 0; i < nr_scale && r == 0; i++) {
                json_t *entry = json_pack("{s:i, s:I, s:f, s:f, s:f, s:f}", "targets", 10, "total_regions",
                                          (json_int_t) scale[i].regions_per_target * 10, "tracker_ns_per_sample",
                                          1e9 / scale[i].tracker_median, "naive_ns_per_sample",
                                          1e9 / scale[i].naive_median, "speedup",
                                          scale[i].tracker_median / scale[i].naive_median,
                                          "tracker_cost_vs_smallest",
                                          scale[0].tracker_median / scale[i].tracker_median);

                if (!entry)
                        r = -ENOMEM;
                else
                        json_array_append_new(scale_rows, entry);
        }
        for (size_t i = 0; i < nr_probes && r == 0; i++) {
                json_t *entry = json_pack("{s:s, s:f, s:f, s:f}", "workload", probes[i].workload,
                                          "probes_in_ns_per_sample", 1e9 / probes[i].in_median,
                                          "probes_out_ns_per_sample", 1e9 / probes[i].out_median,
                                          "in_vs_out", probes[i].out_median / probes[i].in_median);

                if (!entry)
                        r = -ENOMEM;
                else
                        json_array_append_new(probe_rows, entry);
        }
        if (r == 0 && json_dump_file(root, path, JSON_INDENT(2)) < 0)
                r = -EIO;
        json_decref(root);
        return r;
}

static void usage(FILE *f) {
        fprintf(f,
                "Usage: bench-tracker [--seconds S] [--reps N] [--json FILE]\n"
                "  --seconds S   measuring time per configuration and repetition (default 0.3)\n"
                "  --reps N      repetitions, the median is reported (default 7, max %d)\n"
                "  --json FILE   also write the results as JSON\n",
                MAX_REPS);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "seconds", required_argument, NULL, 's' },
                { "reps", required_argument, NULL, 'r' },
                { "json", required_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        static const uint32_t scale_sizes[] = { 10, 100, 1000, 10000 };
        struct row rows[] = {
                { "random", VARIANT_SINGLE, 0, 2 },
                { "random", VARIANT_BATCH, 0, 2 },
                { "random", VARIANT_NAIVE, 0, 2 },
                { "local", VARIANT_SINGLE, 1, 5 },
                { "local", VARIANT_BATCH, 1, 5 },
                { "local", VARIANT_NAIVE, 1, 5 },
        };
        struct scale_row scale[DP_ARRAY_SIZE(scale_sizes)] = {};
        struct probe_row probes[] = { { "random", 0 }, { "local", 1 } };
        struct world worlds[2], scale_worlds[DP_ARRAY_SIZE(scale_sizes)];
        const char *json_path = NULL;
        double seconds = 0.3;
        size_t reps = 7;
        bool ok = true;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                char *end;
                unsigned long v;

                switch (opt) {
                case 's':
                        errno = 0;
                        seconds = strtod(optarg, &end);
                        if (errno != 0 || end == optarg || *end != '\0' || !(seconds > 0 && seconds <= 60)) {
                                fprintf(stderr, "bench-tracker: --seconds needs a number in (0, 60]\n");
                                return EXIT_FAILURE;
                        }
                        break;
                case 'r':
                        errno = 0;
                        v = strtoul(optarg, &end, 10);
                        if (errno != 0 || end == optarg || *end != '\0' || optarg[0] == '-' || v < 1 || v > MAX_REPS) {
                                fprintf(stderr, "bench-tracker: --reps needs 1..%d\n", MAX_REPS);
                                return EXIT_FAILURE;
                        }
                        reps = v;
                        break;
                case 'j':
                        json_path = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                default:
                        usage(stderr);
                        return EXIT_FAILURE;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return EXIT_FAILURE;
        }

        if ((r = world_build(&worlds[0], 100, 100, false, 1)) < 0 ||
            (r = world_build(&worlds[1], 100, 100, true, 2)) < 0) {
                fprintf(stderr, "bench-tracker: setting up: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(scale_sizes); i++) {
                r = world_build(&scale_worlds[i], 10, scale_sizes[i], false, 3 + i);
                if (r < 0) {
                        fprintf(stderr, "bench-tracker: setting up: %s\n", strerror(-r));
                        return EXIT_FAILURE;
                }
                scale[i].regions_per_target = scale_sizes[i];
        }

        /* Interleave repetitions so drift in machine load hits every row alike. */
        for (size_t k = 0; k < reps; k++) {
                for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++)
                        rows[i].rates[k] = measure(&worlds[rows[i].world], rows[i].variant, seconds, &ok);
                for (size_t i = 0; i < DP_ARRAY_SIZE(scale); i++) {
                        scale[i].tracker[k] = measure(&scale_worlds[i], VARIANT_BATCH, seconds, &ok);
                        scale[i].naive[k] = measure(&scale_worlds[i], VARIANT_NAIVE, seconds, &ok);
                }
                /* Alternate which copy goes first, so neither always runs on a warmer cache. */
                for (size_t i = 0; i < DP_ARRAY_SIZE(probes); i++) {
                        struct world *w = &worlds[probes[i].world];

                        if (k % 2 == 0) {
                                probes[i].in[k] = measure(w, VARIANT_BATCH, seconds, &ok);
                                probes[i].out[k] = measure(w, VARIANT_BATCH_PROBES_OFF, seconds, &ok);
                        } else {
                                probes[i].out[k] = measure(w, VARIANT_BATCH_PROBES_OFF, seconds, &ok);
                                probes[i].in[k] = measure(w, VARIANT_BATCH, seconds, &ok);
                        }
                }
        }

        printf("Sample matching, 100 targets x 100 regions, %u pre-generated samples "
               "(91%% match, 3%% each miss kind), median of %zu x %.2f s\n\n", NR_SAMPLES, reps, seconds);
        printf("%-8s %-22s %14s %12s %12s\n", "stream", "variant", "samples/s", "ns/sample", "vs naive");
        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++) {
                rows[i].median = median(rows[i].rates, reps);
                printf("%-8s %-22s %14.0f %12.2f %11.1fx\n", rows[i].workload, variant_names[rows[i].variant],
                       rows[i].median, 1e9 / rows[i].median,
                       rows[i].median / median(rows[rows[i].baseline].rates, reps));
        }

        printf("\nCost per sample by size, 10 targets, random stream, batch variant\n\n");
        printf("%13s %16s %18s %10s %20s\n", "total regions", "tracker ns/smp", "naive ns/smp", "speedup",
               "tracker vs smallest");
        for (size_t i = 0; i < DP_ARRAY_SIZE(scale); i++) {
                scale[i].tracker_median = median(scale[i].tracker, reps);
                scale[i].naive_median = median(scale[i].naive, reps);
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(scale); i++)
                printf("%13u %16.2f %18.2f %9.0fx %19.2fx\n", scale[i].regions_per_target * 10,
                       1e9 / scale[i].tracker_median, 1e9 / scale[i].naive_median,
                       scale[i].tracker_median / scale[i].naive_median,
                       scale[0].tracker_median / scale[i].tracker_median);

        printf("\nStatic probes (USDT) on the batch path, not attached: compiled in vs out, "
               "100 targets x 100 regions%s\n\n",
               DP_USDT ? "" : "\n(this build has the usdt option off: both copies are without probes)");
        printf("%-8s %18s %19s %10s\n", "stream", "probes in ns/smp", "probes out ns/smp", "in vs out");
        for (size_t i = 0; i < DP_ARRAY_SIZE(probes); i++) {
                probes[i].in_median = median(probes[i].in, reps);
                probes[i].out_median = median(probes[i].out, reps);
                printf("%-8s %18.2f %19.2f %9.3fx\n", probes[i].workload, 1e9 / probes[i].in_median,
                       1e9 / probes[i].out_median, probes[i].out_median / probes[i].in_median);
        }

        if (!ok)
                fprintf(stderr, "\nbench-tracker: outcome counts did not match the generated mix!\n");

        if (json_path) {
                r = write_json(json_path, rows, DP_ARRAY_SIZE(rows), scale, DP_ARRAY_SIZE(scale), probes,
                               DP_ARRAY_SIZE(probes), reps, seconds);
                if (r < 0) {
                        fprintf(stderr, "bench-tracker: writing %s: %s\n", json_path, strerror(-r));
                        ok = false;
                }
        }

        for (size_t i = 0; i < DP_ARRAY_SIZE(worlds); i++)
                world_free(&worlds[i]);
        for (size_t i = 0; i < DP_ARRAY_SIZE(scale_worlds); i++)
                world_free(&scale_worlds[i]);
        return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
