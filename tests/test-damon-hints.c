/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>

#include "check-main.h"
#include "damon-hints.h"
#include "macro.h"

#define PAGE 4096u

static struct dp_snapshot_region region(uint64_t start_page, uint64_t end_page, uint32_t nr_accesses) {
        return (struct dp_snapshot_region) {
                .start = start_page * PAGE,
                .end = end_page * PAGE,
                .last_nr_accesses = nr_accesses,
                .last_nr_samples = nr_accesses * 3,
        };
}

/* A cold area, a hot area and a cold area again, cut into many regions with
 * a little noise: the hint keeps exactly the two hot/cold edges. */
START_TEST(test_build_keeps_hot_edges) {
        struct dp_snapshot_region r[30];
        struct dp_range out[30];
        size_t n = 0;

        for (size_t i = 0; i < 30; i++) {
                uint32_t rate = (i >= 10 && i < 17) ? 18 + (uint32_t) (i % 2) : (uint32_t) (i % 2);

                r[i] = region(100 + 4 * i, 104 + 4 * i, rate);
        }
        ck_assert_int_eq(dp_damon_hints_build(r, 30, 20, 100, out, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(out[0].start, 100 * PAGE);
        ck_assert_uint_eq(out[0].end, 140 * PAGE);      /* the hot area starts at region 10 */
        ck_assert_uint_eq(out[1].end, 168 * PAGE);      /* and ends after region 16 */
        ck_assert_uint_eq(out[2].end, 220 * PAGE);
        ck_assert(dp_ranges_are_sorted_disjoint(out, n));
}
END_TEST

/* Gaps between mappings stay gaps while the budget allows it. */
START_TEST(test_build_respects_gaps_and_budget) {
        struct dp_snapshot_region r[] = {
                region(0, 10, 5), region(10, 20, 5), region(50, 60, 5), region(60, 70, 40), region(90, 95, 0),
        };
        struct dp_range out[DP_ARRAY_SIZE(r)];
        size_t n = 0;

        ck_assert_int_eq(dp_damon_hints_build(r, DP_ARRAY_SIZE(r), 40, 10, out, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_uint_eq(out[0].end, 20 * PAGE);
        ck_assert_uint_eq(out[1].start, 50 * PAGE);
        ck_assert_uint_eq(out[1].end, 60 * PAGE);
        ck_assert_uint_eq(out[3].start, 90 * PAGE);

        /* A budget of 2: the tolerance grows, then gaps are bridged. */
        ck_assert_int_eq(dp_damon_hints_build(r, DP_ARRAY_SIZE(r), 40, 2, out, &n), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(out[0].start, 0);
        ck_assert_uint_eq(out[1].end, 95 * PAGE);
        ck_assert(dp_ranges_are_sorted_disjoint(out, n));

        ck_assert_int_eq(dp_damon_hints_build(r, DP_ARRAY_SIZE(r), 40, 1, out, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(out[0].start, 0);
        ck_assert_uint_eq(out[0].end, 95 * PAGE);
}
END_TEST

/* Large inputs squeeze into any budget, always sorted, disjoint and covering. */
START_TEST(test_build_budget_sweep) {
        enum { N = 5000 };
        static struct dp_snapshot_region r[N];
        static struct dp_range out[N];
        size_t n;

        for (size_t i = 0; i < N; i++)
                r[i] = region(2 * i, 2 * i + 1 + (i % 3 == 0), (uint32_t) ((i * 7919) % 65));
        for (size_t budget = 1; budget <= N; budget = budget * 3 + 1) {
                ck_assert_int_eq(dp_damon_hints_build(r, N, 64, budget, out, &n), 0);
                ck_assert_uint_ge(n, 1);
                ck_assert_uint_le(n, budget);
                ck_assert(dp_ranges_are_sorted_disjoint(out, n));
                ck_assert_uint_eq(out[0].start, r[0].start);
                ck_assert_uint_eq(out[n - 1].end, r[N - 1].end);
        }
}
END_TEST

START_TEST(test_build_rejects_bad_input) {
        struct dp_snapshot_region r[] = { region(10, 20, 1), region(15, 30, 1) };
        struct dp_snapshot_region empty[] = { region(10, 10, 1) };
        struct dp_range out[2];
        size_t n = 99;

        ck_assert_int_eq(dp_damon_hints_build(r, 2, 10, 5, out, &n), -EINVAL);
        ck_assert_int_eq(dp_damon_hints_build(empty, 1, 10, 5, out, &n), -EINVAL);
        ck_assert_int_eq(dp_damon_hints_build(r, 0, 10, 5, out, &n), -EINVAL);
        ck_assert_int_eq(dp_damon_hints_build(r, 1, 10, 0, out, &n), -EINVAL);
        ck_assert_uint_eq(n, 99);
}
END_TEST

START_TEST(test_differ) {
        struct dp_range a[] = { { 0x10000, 0x20000 }, { 0x20000, 0x80000 } };
        struct dp_range near[] = { { 0x10000, 0x21000 }, { 0x21000, 0x80000 } };
        struct dp_range moved[] = { { 0x10000, 0x40000 }, { 0x40000, 0x80000 } };
        struct dp_range split[] = { { 0x10000, 0x20000 }, { 0x20000, 0x50000 }, { 0x50000, 0x80000 } };

        ck_assert(!dp_damon_hints_differ(a, 2, a, 2, 0));
        ck_assert(!dp_damon_hints_differ(a, 2, near, 2, 0x1000));
        ck_assert(dp_damon_hints_differ(a, 2, near, 2, 0xfff));
        ck_assert(dp_damon_hints_differ(a, 2, moved, 2, 0x4000));
        /* A new boundary is a material change, and so is a lost one. */
        ck_assert(dp_damon_hints_differ(a, 2, split, 3, 0x4000));
        ck_assert(dp_damon_hints_differ(split, 3, a, 2, 0x4000));
        ck_assert(dp_damon_hints_differ(a, 2, a, 0, 0x4000));
        ck_assert(!dp_damon_hints_differ(a, 0, a, 0, 0));
}
END_TEST

/* Three targets: 10 has 2 regions, 20 none sampled, 30 the most samples. */
static void make_snapshot(struct dp_tracker_snapshot *s, struct dp_snapshot_target *t, struct dp_snapshot_region *r) {
        r[0] = region(0, 10, 20);       /* hot: 20 of 20 */
        r[1] = region(10, 40, 2);
        r[2] = region(100, 200, 0);
        r[3] = region(500, 510, 10);    /* hot: exactly half */
        r[4] = region(510, 520, 9);     /* 27 samples, not hot */
        t[0] = (struct dp_snapshot_target) { .tgid = 10, .start = r[0].start, .end = r[1].end, .nr_regions = 2 };
        t[1] = (struct dp_snapshot_target) { .tgid = 20, .start = r[2].start, .end = r[2].end, .nr_regions = 1,
                                             .first_region = 2 };
        t[2] = (struct dp_snapshot_target) { .tgid = 30, .start = r[3].start, .end = r[4].end, .nr_regions = 2,
                                             .first_region = 3 };
        *s = (struct dp_tracker_snapshot) { .targets = t, .nr_targets = 3, .regions = r, .nr_regions = 5,
                                            .max_nr_accesses = 20 };
}

START_TEST(test_pick_targets_and_hot_fraction) {
        struct dp_snapshot_region r[5];
        struct dp_snapshot_target t[3];
        struct dp_tracker_snapshot s;
        uint32_t pick[4] = {};
        uint32_t only30 = 30, nobody = 99;

        make_snapshot(&s, t, r);
        /* 10: 66 samples; 30: 57; 20: none and so never picked. */
        ck_assert_uint_eq(dp_damon_pick_targets(&s, 4, pick), 2);
        ck_assert_uint_eq(pick[0], 10);
        ck_assert_uint_eq(pick[1], 30);
        ck_assert_uint_eq(dp_damon_pick_targets(&s, 1, pick), 1);
        ck_assert_uint_eq(pick[0], 10);
        ck_assert_uint_eq(dp_damon_pick_targets(&s, 0, pick), 0);
        /* Samples in the current aggregation only (a reader's whole poll
         * drained into it, the last one closed empty) count too. */
        r[2].nr_samples = 40;
        ck_assert_uint_eq(dp_damon_pick_targets(&s, 4, pick), 3);
        ck_assert_uint_eq(pick[2], 20);
        r[2].nr_samples = 0;

        ck_assert_ptr_eq(dp_snapshot_find_target(&s, 20), &t[1]);
        ck_assert_ptr_null(dp_snapshot_find_target(&s, 21));

        /* Hot: 10 pages of 40 (tgid 10); 10 of 20 (tgid 30); over all: 20 of 160. */
        ck_assert_uint_eq(dp_damon_hot_fraction(&s, &only30, 1), 5000);
        ck_assert_uint_eq(dp_damon_hot_fraction(&s, pick, 1), 2500);
        ck_assert_uint_eq(dp_damon_hot_fraction(&s, NULL, 0), 1250);
        ck_assert_uint_eq(dp_damon_hot_fraction(&s, &nobody, 1), 0);
}
END_TEST


#define G DP_SKETCH_GRANULE

/* Granule @index, last sampled in an interval of its own (as a hot area's are). */
/* The granule layout over one span [@start, @end). */
static int hints_in_span(const struct dp_snapshot_granule *g, size_t n, uint64_t start, uint64_t end, uint64_t max_gap,
                         size_t max_out, struct dp_range *out, size_t *ret_n) {
        struct dp_range span = { start, end };

        return dp_damon_hints_from_granules(g, n, &span, 1, max_gap, max_out, out, ret_n);
}

static struct dp_snapshot_granule granule(uint64_t index, uint32_t weight) {
        return (struct dp_snapshot_granule) { .start = index * G, .weight = weight, .interval = (uint32_t) index };
}

/* Two hot chunks far apart in a sparse span, one with an unsampled granule
 * inside, and a lightly sampled granule: the layout outlines both chunks
 * exactly and covers the span whole. */
START_TEST(test_granules_outline_chunks) {
        struct dp_snapshot_granule g[] = {
                granule(100, 900), granule(101, 800), granule(103, 1000), granule(104, 700),  /* 102 unsampled */
                granule(5000, 60),                                                          /* a stray sample, cold */
                granule(9000, 900), granule(9001, 1200),
        };
        struct dp_range out[16];
        size_t n = 0;

        ck_assert_int_eq(hints_in_span(g, DP_ARRAY_SIZE(g), 10 * G, 20000 * G, 4 * G, 16, out, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_uint_eq(out[0].start, 10 * G);
        ck_assert_uint_eq(out[1].start, 100 * G);
        ck_assert_uint_eq(out[1].end, 105 * G);
        ck_assert_uint_eq(out[3].start, 9000 * G);
        ck_assert_uint_eq(out[3].end, 9002 * G);
        ck_assert_uint_eq(out[4].end, 20000 * G);
        ck_assert(dp_ranges_are_sorted_disjoint(out, n));
        for (size_t i = 1; i < n; i++)
                ck_assert_uint_eq(out[i].start, out[i - 1].end);        /* nothing left out */
}
END_TEST

/* More hot chunks than the budget holds: the closest are bridged, the
 * layout stays within it; a hot range at the span's edge has no cold one
 * beyond it. */
START_TEST(test_granules_fit_budget) {
        struct dp_snapshot_granule g[8];
        struct dp_range out[5];
        size_t n = 0;

        for (size_t i = 0; i < 8; i++)
                g[i] = granule(i < 4 ? 10 * i : 1000 + 10 * i, DP_DAMON_HOT_MIN_WEIGHT);
        ck_assert_int_eq(hints_in_span(g, 8, 0, 2000 * G, 0, 5, out, &n), 0);
        ck_assert_uint_le(n, 5);
        ck_assert_uint_eq(out[0].start, 0);                     /* the first chunk starts the span: hot */
        ck_assert_uint_eq(out[0].end, 31 * G);                  /* the four low chunks, bridged */
        ck_assert_uint_eq(out[1].start, 31 * G);
        ck_assert_uint_eq(out[2].start, 1040 * G);
        ck_assert_uint_eq(out[2].end, 1071 * G);
        ck_assert_uint_eq(out[n - 1].end, 2000 * G);
}
END_TEST

/* A hot range needs DP_DAMON_HOT_MIN_WEIGHT: a lone granule sampled once
 * (as heavy as any window granule, so above the percentile threshold) is
 * noise and left cold, in the layout and in the sampled hot ranges alike;
 * a lone granule sampled often is kept, and so are many light granules
 * that weigh enough together. */
START_TEST(test_granules_stray_samples_are_not_hot) {
        const uint32_t one = DP_SKETCH_WEIGHT;
        struct dp_snapshot_granule g[40];
        struct dp_range out[16], hot[40];
        size_t n = 0, k = 0;

        g[k++] = granule(10, one);                                      /* a stray sample */
        for (size_t i = 0; i < 32; i++)                                 /* a window: light granules */
                g[k++] = granule(100 + i, one / 2);
        g[k++] = granule(500, 3 * one);                                 /* three samples: still too few */
        g[k++] = granule(900, DP_DAMON_HOT_MIN_WEIGHT);                 /* a small hot object */
        g[k++] = granule(1500, one);                                    /* a stray one last */

        ck_assert_int_eq(hints_in_span(g, k, 0, 2000 * G, 4 * G, 16, out, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_uint_eq(out[0].end, 100 * G);         /* 10 left in the cold range */
        ck_assert_uint_eq(out[1].start, 100 * G);
        ck_assert_uint_eq(out[1].end, 132 * G);
        ck_assert_uint_eq(out[2].end, 900 * G);         /* 500 left cold */
        ck_assert_uint_eq(out[3].start, 900 * G);
        ck_assert_uint_eq(out[3].end, 901 * G);
        ck_assert_uint_eq(out[4].end, 2000 * G);        /* 1500 left cold */

        ck_assert_int_eq(dp_damon_sampled_hot(g, k, 0, 2000 * G, 4 * G, hot), 2);
        ck_assert_uint_eq(hot[0].start, 100 * G);
        ck_assert_uint_eq(hot[1].start, 900 * G);

        /* Only strays: nothing hot, no hint. */
        ck_assert_int_eq(hints_in_span(g, 1, 0, 2000 * G, 4 * G, 16, out, &n), -ENODATA);
        ck_assert_int_eq(dp_damon_sampled_hot(g, 1, 0, 2000 * G, 4 * G, hot), 0);
}
END_TEST

static void assert_layout(const struct dp_range *out, size_t n, const struct dp_range *expect, size_t n_expect) {
        ck_assert_uint_eq(n, n_expect);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(out[i].start == expect[i].start && out[i].end == expect[i].end,
                              "range %zu: %#" PRIx64 "-%#" PRIx64, i, out[i].start, out[i].end);
}

/* A process's mappings as DAMON's vaddr operations take them: the span
 * without its two widest gaps, touching regions joined. */
START_TEST(test_vaddr_cover) {
        const struct dp_snapshot_region r[] = {
                { .start = 0, .end = 10 }, { .start = 10, .end = 20 }, { .start = 100, .end = 110 },
                { .start = 1000, .end = 1010 }, { .start = 1012, .end = 1020 }, { .start = 5000, .end = 5010 },
        };
        struct dp_range cover[3];
        size_t n = 0;

        ck_assert_int_eq(dp_damon_vaddr_cover(r, DP_ARRAY_SIZE(r), cover, &n), 0);
        assert_layout(cover, n, (const struct dp_range[]) { { 0, 110 }, { 1000, 1020 }, { 5000, 5010 } }, 3);
        ck_assert_int_eq(dp_damon_vaddr_cover(r, 2, cover, &n), 0);
        assert_layout(cover, n, (const struct dp_range[]) { { 0, 20 } }, 1);
        ck_assert_int_eq(dp_damon_vaddr_cover(r + 1, 2, cover, &n), 0);
        assert_layout(cover, n, (const struct dp_range[]) { { 10, 20 }, { 100, 110 } }, 2);
        ck_assert_int_eq(dp_damon_vaddr_cover(r, 0, cover, &n), -EINVAL);
        ck_assert_int_eq(dp_damon_vaddr_cover((const struct dp_snapshot_region[]) { { .start = 10, .end = 20 },
                                                                                      { .start = 30, .end = 5 } },
                                              2, cover, &n),
                         -EINVAL);
}
END_TEST

/* The layout stays inside what DAMON monitors: each cover range whole, a
 * hot chunk in the middle one outlined, nothing in the gaps between them
 * (where a layout over the whole span would put regions of terabytes). */
START_TEST(test_granules_layout_within_cover) {
        const struct dp_range cover[] = { { 0, 100 * G }, { 1000 * G, 2000 * G }, { 900000 * G, 900010 * G } };
        struct dp_snapshot_granule g[40];
        struct dp_range out[16];
        size_t n = 0;

        for (size_t i = 0; i < 32; i++)
                g[i] = granule(1500 + i, 1000);
        for (size_t i = 32; i < 40; i++)        /* a hot run across the middle range's end */
                g[i] = granule(1996 + i - 32, 1000);
        ck_assert_int_eq(dp_damon_hints_from_granules(g, 40, cover, 3, 4 * G, 16, out, &n), 0);
        assert_layout(out, n,
                      (const struct dp_range[]) { { 0, 100 * G },
                                                  { 1000 * G, 1500 * G },
                                                  { 1500 * G, 1532 * G },
                                                  { 1532 * G, 1996 * G },
                                                  { 1996 * G, 2000 * G },
                                                  { 900000 * G, 900010 * G } },
                      6);
        /* Too small a budget for three: the two nearest bridged. */
        ck_assert_int_eq(dp_damon_hints_from_granules(g, 40, cover, 3, 4 * G, 8, out, &n), 0);
        assert_layout(out, n,
                      (const struct dp_range[]) { { 0, 1500 * G },
                                                  { 1500 * G, 1532 * G },
                                                  { 1532 * G, 1996 * G },
                                                  { 1996 * G, 2000 * G },
                                                  { 900000 * G, 900010 * G } },
                      5);
        ck_assert_int_eq(dp_damon_hints_from_granules(g, 40, (const struct dp_range[]) { { 10, 20 }, { 0, 5 } }, 2, 4 * G,
                                                      16, out, &n),
                         -EINVAL);
}
END_TEST

START_TEST(test_granules_none) {
        struct dp_snapshot_granule g[] = { granule(100, 500) };
        struct dp_range out[4];
        size_t n = 0;

        ck_assert_int_eq(hints_in_span(g, 0, 0, 10 * G, 0, 4, out, &n), -ENODATA);
        /* A snapshot without any granule has no array to point into. */
        ck_assert_int_eq(hints_in_span(NULL, 0, 0, 10 * G, 0, 4, out, &n), -ENODATA);
        ck_assert_int_eq(hints_in_span(NULL, 1, 0, 10 * G, 0, 4, out, &n), -EINVAL);
        /* Outside the span. */
        ck_assert_int_eq(hints_in_span(g, 1, 0, 10 * G, 0, 4, out, &n), -ENODATA);
        ck_assert_int_eq(hints_in_span(g, 1, 0, 1000 * G, 0, 2, out, &n), -EINVAL);
        ck_assert_int_eq(hints_in_span(g, 1, 10, 10, 0, 4, out, &n), -EINVAL);
}
END_TEST

/* DAMON's finer split stays; only the hint's missing inner boundaries are
 * added; the hint's outer bounds and boundaries in DAMON's gaps are not. */
START_TEST(test_merge_adds_missing_boundaries) {
        const struct dp_range damon[] = { { 0, 100 * G }, { 100 * G, 300 * G }, { 500 * G, 900 * G } };
        /* hot [150,160) inside DAMON's second region; hot [310,320) in DAMON's
         * gap; hot [600,700) whose start DAMON lacks and whose end it lacks too. */
        const struct dp_range hint[] = { { 0, 150 * G }, { 150 * G, 160 * G }, { 160 * G, 310 * G },
                                         { 310 * G, 320 * G }, { 320 * G, 600 * G }, { 600 * G, 700 * G },
                                         { 700 * G, 1000 * G } };
        struct dp_range out[3 + 2 * 7];
        size_t n = 0, added = 0;

        ck_assert_int_eq(dp_damon_hints_merge(damon, 3, hint, 7, 0, 100, out, &n, &added), 0);
        ck_assert_uint_eq(added, 4);
        ck_assert_uint_eq(n, 7);
        ck_assert_uint_eq(out[0].end, 100 * G);         /* DAMON's own split kept */
        ck_assert_uint_eq(out[1].end, 150 * G);
        ck_assert_uint_eq(out[2].end, 160 * G);
        ck_assert_uint_eq(out[3].end, 300 * G);
        ck_assert_uint_eq(out[4].start, 500 * G);       /* the gap stays DAMON's */
        ck_assert_uint_eq(out[4].end, 600 * G);
        ck_assert_uint_eq(out[5].end, 700 * G);
        ck_assert_uint_eq(out[6].end, 900 * G);

        /* Merging again finds nothing missing: no commit. */
        struct dp_range again[3 + 2 * 7 + 2 * 7];
        ck_assert_int_eq(dp_damon_hints_merge(out, n, hint, 7, 0, 100, again, &n, &added), 0);
        ck_assert_uint_eq(added, 0);
        ck_assert_uint_eq(n, 7);
        /* With a tolerance of 60 granules, 150 and 160 lie near enough to
         * DAMON's edge at 100; 600 and 700 are still missing. */
        ck_assert_int_eq(dp_damon_hints_merge(damon, 3, hint, 7, 60 * G, 100, out, &n, &added), 0);
        ck_assert_uint_eq(added, 2);
        /* Over the budget. */
        ck_assert_int_eq(dp_damon_hints_merge(damon, 3, hint, 7, 0, 5, out, &n, &added), -E2BIG);
}
END_TEST

#define MIB (UINT64_C(1) << 20)

/* A layout of a cold region, a hot one and a cold one, and hot filter
 * ranges over part of each: every range is cut at the MiB multiples inside
 * an area, and nowhere else; the layout's own edges stay. */
START_TEST(test_grid_cuts_cells_inside_areas) {
        const struct dp_range layout[] = { { 0, 10 * MIB }, { 10 * MIB, 12 * MIB + MIB / 2 },
                                           { 12 * MIB + MIB / 2, 40 * MIB } };
        const struct dp_range areas[] = { { 8 * MIB + 4096, 14 * MIB }, { 30 * MIB, 31 * MIB } };
        const struct dp_range expect[] = {
                { 0, 9 * MIB }, { 9 * MIB, 10 * MIB },                                  /* 9 inside the area */
                { 10 * MIB, 11 * MIB }, { 11 * MIB, 12 * MIB }, { 12 * MIB, 12 * MIB + MIB / 2 },
                { 12 * MIB + MIB / 2, 13 * MIB }, { 13 * MIB, 40 * MIB },             /* 14: the area's end */
        };
        struct dp_range out[16];
        size_t n = 0;

        ck_assert_int_eq(dp_damon_hints_grid(layout, 3, areas, 2, MIB, 16, out, &n), 0);
        ck_assert_uint_eq(n, DP_ARRAY_SIZE(expect));
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_eq(out[i].start, expect[i].start);
                ck_assert_uint_eq(out[i].end, expect[i].end);
        }
        /* No area: the layout as it is. */
        ck_assert_int_eq(dp_damon_hints_grid(layout, 3, NULL, 0, MIB, 16, out, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(out[1].end, 12 * MIB + MIB / 2);
}
END_TEST

/* Cells that would not fit the budget widen by powers of two until they
 * do; a layout that needs no cut fits as it is; one over the budget, or a
 * cell that is no power of two, is refused. */
START_TEST(test_grid_widens_cells_to_fit) {
        const struct dp_range layout[] = { { 0, 64 * MIB } };
        const struct dp_range areas[] = { { 0, 64 * MIB } };
        const struct dp_range two[] = { { 0, MIB }, { MIB, 2 * MIB } };
        struct dp_range out[16];
        size_t n = 0;

        /* 1 MiB cells would make 64; 8 MiB cells make 8. */
        ck_assert_int_eq(dp_damon_hints_grid(layout, 1, areas, 1, MIB, 10, out, &n), 0);
        ck_assert_uint_eq(n, 8);
        ck_assert_uint_eq(out[0].end, 8 * MIB);
        ck_assert_uint_eq(out[7].start, 56 * MIB);
        ck_assert_uint_eq(out[7].end, 64 * MIB);
        /* Room for one range only: no cut fits, the layout does. */
        ck_assert_int_eq(dp_damon_hints_grid(layout, 1, areas, 1, MIB, 1, out, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(out[0].end, 64 * MIB);
        ck_assert_int_eq(dp_damon_hints_grid(two, 2, areas, 1, MIB, 1, out, &n), -E2BIG);
        ck_assert_int_eq(dp_damon_hints_grid(layout, 1, areas, 1, 3 * MIB, 16, out, &n), -EINVAL);
        ck_assert_int_eq(dp_damon_hints_grid(layout, 1, areas, 1, 0, 16, out, &n), -EINVAL);
        /* Unsorted areas. */
        const struct dp_range unsorted[] = { { 8 * MIB, 9 * MIB }, { 0, MIB } };
        ck_assert_int_eq(dp_damon_hints_grid(layout, 1, unsorted, 2, MIB, 16, out, &n), -EINVAL);
}
END_TEST

/* Near the top of the address space, no multiple of the cell wraps past it. */
START_TEST(test_grid_at_the_top_of_the_space) {
        const struct dp_range layout[] = { { UINT64_MAX - 3 * MIB, UINT64_MAX } };
        struct dp_range out[8];
        size_t n = 0;

        ck_assert_int_eq(dp_damon_hints_grid(layout, 1, layout, 1, MIB, 8, out, &n), 0);
        ck_assert_uint_eq(n, 4);
        ck_assert_uint_eq(out[3].end, UINT64_MAX);
        ck_assert_uint_eq(out[3].start, UINT64_MAX - MIB + 1);
}
END_TEST

/* A small hot window in a large span the process touched once: the touched
 * granules still weigh something, but far less than the window's; the
 * window alone is hot. */
START_TEST(test_granules_small_window_in_touched_span) {
        struct dp_snapshot_granule g[210];
        struct dp_range out[8];
        size_t n = 0;

        for (size_t i = 0; i < 210; i++)
                g[i] = granule(1000 + i, i >= 100 && i < 110 ? 9000 : 1000);
        ck_assert_int_eq(hints_in_span(g, 210, 1000 * G, 1210 * G, 4 * G, 8, out, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(out[1].start, 1100 * G);
        ck_assert_uint_eq(out[1].end, 1110 * G);
}
END_TEST

/* The layout @out of @n ranges is exactly @expect. */
/* A span faulted in by one first touch, the page-fault control sampling
 * every fault: each granule sampled once, 50 in each sampling interval.
 * Nothing in it is used; its edges say where memory is.  A window in it
 * sampled since, at other times, is the one used range, and the layout
 * gets its edges; a granule of the sweep that weighs more than a sample was
 * sampled again, though its last interval is still the sweep's. */
START_TEST(test_granules_first_touch_sweep_is_not_hot) {
        const uint32_t one = DP_SKETCH_WEIGHT;
        struct dp_snapshot_granule g[400];
        struct dp_range out[8], hot[8];
        size_t n = 0;

        for (size_t i = 0; i < 400; i++)
                g[i] = (struct dp_snapshot_granule) { .start = (1000 + i) * G, .weight = one, .interval = (uint32_t) i / 50 };
        ck_assert_int_eq(dp_damon_sampled_hot(g, 400, 0, 2000 * G, 4 * G, hot), 0);
        ck_assert_int_eq(hints_in_span(g, 400, 0, 2000 * G, 4 * G, 8, out, &n), 0);
        assert_layout(out, n, (const struct dp_range[]) { { 0, 1000 * G }, { 1000 * G, 1400 * G }, { 1400 * G, 2000 * G } },
                      3);

        for (size_t i = 200; i < 232; i++)
                g[i] = (struct dp_snapshot_granule) { .start = (1000 + i) * G, .weight = one / 2 + one, .interval = 1000 + (uint32_t) i };
        ck_assert_int_eq(dp_damon_sampled_hot(g, 400, 0, 2000 * G, 4 * G, hot), 1);
        ck_assert_int_eq(hints_in_span(g, 400, 0, 2000 * G, 4 * G, 8, out, &n), 0);
        assert_layout(out, n, (const struct dp_range[]) { { 0, 1000 * G }, { 1000 * G, 1200 * G }, { 1200 * G, 1232 * G },
                                                          { 1232 * G, 1400 * G }, { 1400 * G, 2000 * G } }, 5);

        for (size_t i = 300; i < 306; i++)
                g[i].weight = one + 1;
        ck_assert_int_eq(dp_damon_sampled_hot(g, 400, 0, 2000 * G, 4 * G, hot), 2);
        ck_assert_uint_eq(hot[1].start, 1300 * G);
        ck_assert_uint_eq(hot[1].end, 1306 * G);
}
END_TEST

/* Two chunks of a sparse mapping, each touched whole once and used since:
 * the first in a small part, which gets its own edges; the second in most
 * of it, which stays whole (its edges say all).  The used ranges alone are
 * what the samples call hot. */
START_TEST(test_granules_touched_chunks_keep_their_edges) {
        const uint32_t one = DP_SKETCH_WEIGHT;
        const struct dp_range expect[] = { { 0, 1000 * G }, { 1000 * G, 1010 * G }, { 1010 * G, 1030 * G },
                                           { 1030 * G, 1128 * G }, { 1128 * G, 5000 * G }, { 5000 * G, 5128 * G },
                                           { 5128 * G, 10000 * G } };
        struct dp_snapshot_granule g[256];
        struct dp_range out[16], hot[8];
        size_t n = 0;

        for (size_t i = 0; i < 256; i++) {
                uint64_t index = i < 128 ? 1000 + i : 5000 + i - 128;
                bool used = (index >= 1010 && index < 1030) || (index >= 5020 && index < 5100);

                g[i] = (struct dp_snapshot_granule) { .start = index * G, .weight = used ? 2 * one : one,
                                                      .interval = used ? (uint32_t) (2000 + i) : (uint32_t) i / 50 };
        }
        ck_assert_int_eq(hints_in_span(g, 256, 0, 10000 * G, 4 * G, 16, out, &n), 0);
        assert_layout(out, n, expect, DP_ARRAY_SIZE(expect));
        ck_assert_int_eq(dp_damon_sampled_hot(g, 256, 0, 10000 * G, 4 * G, hot), 2);
        ck_assert_uint_eq(hot[0].start, 1010 * G);
        ck_assert_uint_eq(hot[1].start, 5020 * G);
}
END_TEST

/* Granules far from all those known: a window that moved counts, a sparse
 * sampler's granules sampled again among known ones do not, nor do new ones
 * within the gap of a known one, on either side. */
START_TEST(test_granules_far_from_known) {
        const uint64_t g = DP_SKETCH_GRANULE, gap = 16 * g, base = 0x7f0000000000;
        struct dp_snapshot_granule before[64], now[64];
        size_t m = 0, n = 0;

        for (uint64_t i = 0; i < 64; i += 4)                    /* a sparse sampler's: every fourth */
                before[m++] = (struct dp_snapshot_granule) { .start = base + i * g, .weight = 256 };
        for (uint64_t i = 1; i < 64; i += 4)                    /* the area's others, sampled since */
                now[n++] = (struct dp_snapshot_granule) { .start = base + i * g, .weight = 256 };
        ck_assert_uint_eq(dp_granules_far_from(now, n, before, m, gap), 0);

        now[n++] = (struct dp_snapshot_granule) { .start = base + (60 + 16) * g };      /* within the gap */
        now[n++] = (struct dp_snapshot_granule) { .start = base + (60 + 17) * g };      /* beyond it */
        for (uint64_t i = 0; i < 20; i++)                                               /* the window moved */
                now[n++] = (struct dp_snapshot_granule) { .start = base + (1000 + i) * g };
        ck_assert_uint_eq(dp_granules_far_from(now, n, before, m, gap), 21);
        /* Before the first known one, and with nothing known. */
        before[0].start = base + 40 * g;
        ck_assert_uint_eq(dp_granules_far_from(now, 10, before, 1, gap), 6);
        ck_assert_uint_eq(dp_granules_far_from(now, n, NULL, 0, gap), n);
}
END_TEST

/* damonctl's agreement: DAMON's hot rows of the target against its sampled
 * hot granules; another target's rows do not count. */
START_TEST(test_target_agreement) {
        struct dp_snapshot_granule g[10];
        struct dp_snapshot_target t = { .tgid = 7, .start = 0, .end = 1000 * G, .nr_granules = 10 };
        struct dp_tracker_snapshot snap = { .targets = &t, .nr_targets = 1, .granules = g, .nr_granules = 10 };
        const struct dp_damon_view_row rows[] = {
                { .pid = 7, .start = 0, .end = 100 * G, .damon_nr_accesses = 0 },
                { .pid = 7, .start = 100 * G, .end = 120 * G, .damon_nr_accesses = 8 },
                { .pid = 7, .start = 120 * G, .end = 1000 * G, .damon_nr_accesses = 1 },
                { .pid = 9, .start = 500 * G, .end = 600 * G, .damon_nr_accesses = 20 },
        };
        struct dp_damon_agreement a;

        for (size_t i = 0; i < 10; i++)
                g[i] = granule(100 + i, 800);
        ck_assert_int_eq(dp_damon_target_agreement(rows, DP_ARRAY_SIZE(rows), 7, &snap, &t, 4 * G, &a), 0);
        ck_assert_uint_eq(a.max_nr_accesses, 8);
        ck_assert_uint_eq(a.hot_bytes, 20 * G);
        ck_assert_uint_eq(a.ref_bytes, 10 * G);
        ck_assert_double_eq_tol(a.precision, 0.5, 1e-9);
        ck_assert_double_eq_tol(a.recall, 1.0, 1e-9);
        ck_assert_uint_eq(a.chunks_found, 1);
}
END_TEST

static Suite *damon_hints_suite(void) {
        Suite *s = suite_create("damon-hints");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_build_keeps_hot_edges);
        tcase_add_test(tc, test_granules_first_touch_sweep_is_not_hot);
        tcase_add_test(tc, test_granules_touched_chunks_keep_their_edges);
        tcase_add_test(tc, test_build_respects_gaps_and_budget);
        tcase_add_test(tc, test_build_budget_sweep);
        tcase_add_test(tc, test_build_rejects_bad_input);
        tcase_add_test(tc, test_differ);
        tcase_add_test(tc, test_pick_targets_and_hot_fraction);
        tcase_add_test(tc, test_granules_outline_chunks);
        tcase_add_test(tc, test_granules_fit_budget);
        tcase_add_test(tc, test_granules_stray_samples_are_not_hot);
        tcase_add_test(tc, test_granules_none);
        tcase_add_test(tc, test_vaddr_cover);
        tcase_add_test(tc, test_granules_layout_within_cover);
        tcase_add_test(tc, test_merge_adds_missing_boundaries);
        tcase_add_test(tc, test_grid_cuts_cells_inside_areas);
        tcase_add_test(tc, test_grid_widens_cells_to_fit);
        tcase_add_test(tc, test_grid_at_the_top_of_the_space);
        tcase_add_test(tc, test_granules_small_window_in_touched_span);
        tcase_add_test(tc, test_granules_far_from_known);
        tcase_add_test(tc, test_target_agreement);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(damon_hints_suite());
}
