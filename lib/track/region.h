/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * DAMON-like adaptive regions of one monitoring target.
 *
 * A region set is a sorted array of non-overlapping, page-aligned regions
 * [start, end).  Samples are attributed to regions between aggregations;
 * at every aggregation regions with similar access counts are merged and
 * then all regions are split at random points, so region boundaries drift
 * towards the real boundaries of hot and cold areas while the region count
 * stays within [min_nr_regions, max_nr_regions] (here per target, where
 * DAMON counts per context).
 *
 * Counting follows DAMON: nr_accesses is the number of sampling intervals
 * ("epochs") of the current aggregation in which the region got at least
 * one sample, so it ranges over 0..aggr/sample.  Raw sample counts are kept
 * beside it.  Intensive values (nr_accesses, age) are copied when a region
 * is cut and size-weighted when merged.  Sample counts are counts of the
 * samples that fell in the region, never shares: a region chooses when its
 * aggregation opens where it will be split (cut[]) and counts the samples
 * below each cut, so a split there knows each piece's count (a region with
 * samples is split nowhere else), and merges sum.  Where a cut elsewhere
 * cannot know (re-bounding clips a region that had samples), the count is
 * marked unknown (enum dp_region_unknown) and must not be shown; it is then
 * kept as an estimate by size, for decisions only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"
#include "range.h"

/* The first 64 bytes are what matching a sample touches; the rest is read
 * at aggregations and snapshots. */
struct dp_region {
        uint64_t end;                   /* exclusive */
        /* Private: one bit per sampling interval of the current (and the next)
         * aggregation that has already been counted in nr_accesses. */
        uint64_t access_mask;
        uint64_t next_access_mask;
        uint64_t nr_samples;            /* samples in the current aggregation */
        /* Where the split at the end of this aggregation will cut (cut[0]
         * for two pieces, cut[1] < cut[0] too for three), and the samples of
         * this aggregation below each (while nr_samples fits 32 bits; beyond,
         * the count is marked unknown); a cut outside (start, end) is none. */
        uint64_t cut[2];
        uint32_t below[2];
        uint32_t nr_accesses;           /* sampling intervals with >= 1 sample, current aggregation */
        uint32_t next_nr_accesses;      /* counted early for the next aggregation (samples ahead of the tick) */

        uint64_t start;
        uint64_t last_nr_samples;       /* samples in the last completed aggregation */
        uint32_t last_nr_accesses;      /* ... last completed aggregation: the access rate */
        uint32_t age;                   /* aggregations since the rate last changed materially */
        uint32_t unknown;               /* enum dp_region_unknown: counts no sample count can be given for */
};

_Static_assert(offsetof(struct dp_region, start) == 64, "what matching touches fills one cache line");

enum dp_region_unknown {
        DP_REGION_SAMPLES_UNKNOWN = 1u << 0,            /* nr_samples is not the count of this region */
        DP_REGION_LAST_SAMPLES_UNKNOWN = 1u << 1,       /* last_nr_samples is not */
};

/* Hot path: one sample at @addr, inside @r. */
static inline void dp_region_count_sample(struct dp_region *r, uint64_t addr) {
        r->nr_samples++;
        r->below[0] += addr < r->cut[0];
        r->below[1] += addr < r->cut[1];
}

/* A region counts at most one access per sampling interval, in a 64-bit mask. */
#define DP_MAX_NR_ACCESSES 64

struct dp_region_set {
        struct dp_region *regions;
        uint64_t *starts;               /* starts[i] == regions[i].start, dense for the search */
        size_t nr;
        size_t cap;
        size_t last_hit;                /* index of the last matched region */
        uint64_t start;                 /* regions[0].start */
        uint64_t end;                   /* regions[nr - 1].end */
        size_t nr_at_last_split;
};

struct dp_region_limits {
        uint32_t min_nr_regions;        /* >= 1 */
        uint32_t max_nr_regions;        /* >= min_nr_regions */
        uint32_t max_nr_accesses;       /* aggr_interval / sample_interval, >= 1 */
};

/* splitmix64: tiny, fast, and deterministic for a given seed. */
struct dp_prng {
        uint64_t state;
};

static inline uint64_t dp_prng_next(struct dp_prng *p) {
        uint64_t z = (p->state += UINT64_C(0x9e3779b97f4a7c15));

        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/* Uniform in [lo, hi], lo <= hi (modulo bias is irrelevant at these sizes). */
static inline uint64_t dp_prng_between(struct dp_prng *p, uint64_t lo, uint64_t hi) {
        uint64_t span = hi - lo + 1;

        return span == 0 ? dp_prng_next(p) : lo + dp_prng_next(p) % span;
}

int dp_region_limits_validate(const struct dp_region_limits *l);

/*
 * Builds the regions of a new target from @ranges (any order, may overlap;
 * widened to pages, coalesced, and if there are more than max_nr_regions of
 * them the smallest gaps are bridged).  Ranges are then split evenly until
 * there are min_nr_regions regions (or one per page).  -EINVAL if nothing
 * remains, -ENOMEM.  On error *s is left empty.
 */
int dp_region_set_init(struct dp_region_set *s, const struct dp_range *ranges, size_t n,
                       const struct dp_region_limits *l);
void dp_region_set_done(struct dp_region_set *s);

/*
 * Re-bounds the regions to new @ranges (normalised as above), like DAMON's
 * damon_set_regions(): regions wholly outside are dropped, overlapping ones
 * are clipped and keep their history, and holes inside the ranges get fresh
 * regions.  The count is then brought back within the limits.  On error
 * (-EINVAL, -ENOMEM) the set is unchanged.
 */
int dp_region_set_update_ranges(struct dp_region_set *s, const struct dp_range *ranges, size_t n,
                                const struct dp_region_limits *l);

/* @age plus @n aggregations, saturating. */
static inline uint32_t dp_region_age_add(uint32_t age, uint64_t n) {
        return (uint32_t) DP_MIN((uint64_t) age + n, UINT32_MAX);
}

/* Adds @n aggregations to every region's age (saturating): aggregations
 * that closed while the set was left alone. */
void dp_region_set_add_age(struct dp_region_set *set, uint64_t n);

/*
 * One aggregation: update ages, merge similar neighbours (adaptive
 * threshold, region count kept >= min and brought <= max), roll the current
 * counts into last_*, then split regions at random points if there are at
 * most max/2.  Returns -ENOMEM if the split could not grow the arrays (the
 * set stays valid, just unsplit).
 */
int dp_region_set_aggregate(struct dp_region_set *s, const struct dp_region_limits *l, struct dp_prng *rng);

/* Checks every structural invariant; 0 or -EUCLEAN. */
int dp_region_set_check(const struct dp_region_set *s);

enum dp_region_lookup {
        DP_REGION_MATCH,
        DP_REGION_MISS_REGION,  /* inside the bounds, in a hole */
        DP_REGION_MISS_BOUND,   /* outside [start, end) */
};

/*
 * Hot path: finds the region holding @addr.  Tries the last hit first, then
 * a branch-free binary search over the dense starts[] array.
 */
static inline enum dp_region_lookup dp_region_set_find(struct dp_region_set *s, uint64_t addr,
                                                       struct dp_region **ret) {
        const uint64_t *base;
        size_t i, n;

        if (addr < s->start || addr >= s->end)
                return DP_REGION_MISS_BOUND;

        i = s->last_hit;
        if (s->starts[i] <= addr && addr < s->regions[i].end) {
                *ret = &s->regions[i];
                return DP_REGION_MATCH;
        }

        /* Last index with starts[i] <= addr; one exists since addr >= start. */
        base = s->starts;
        n = s->nr;
        while (n > 1) {
                size_t half = n >> 1;

                base = base[half] <= addr ? base + half : base;
                n -= half;
        }
        i = (size_t) (base - s->starts);

        if (addr >= s->regions[i].end)
                return DP_REGION_MISS_REGION;
        s->last_hit = i;
        *ret = &s->regions[i];
        return DP_REGION_MATCH;
}
