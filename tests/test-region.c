/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <inttypes.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "region.h"

#include "check-main.h"

#define P(n) ((uint64_t) (n) * DP_PAGE_SIZE)
#define R(s, e) ((struct dp_range) { .start = (s), .end = (e) })

static struct dp_region_limits limits(uint32_t min, uint32_t max) {
        return (struct dp_region_limits) { .min_nr_regions = min, .max_nr_regions = max, .max_nr_accesses = 20 };
}

static uint64_t set_pages(const struct dp_region_set *s) {
        uint64_t pages = 0;

        for (size_t i = 0; i < s->nr; i++)
                pages += (s->regions[i].end - s->regions[i].start) / DP_PAGE_SIZE;
        return pages;
}

/* Whether the union of the regions is exactly the (normalised) @expect.
 * Computed without per-step assertions: Check's are slow in hot loops. */
static bool covers_exactly(const struct dp_region_set *s, const struct dp_range *expect, size_t n) {
        size_t k = 0;

        for (size_t i = 0; i < s->nr; k++) {
                uint64_t start = s->regions[i].start, end = s->regions[i].end;

                while (++i < s->nr && s->regions[i].start == end)
                        end = s->regions[i].end;
                if (k >= n || start != expect[k].start || end != expect[k].end)
                        return false;
        }
        return k == n;
}

#define assert_covers_exactly(s, expect, n) ck_assert(covers_exactly((s), (expect), (n)))

static int compare_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

static const struct dp_region *region_at(const struct dp_region_set *s, uint64_t addr) {
        for (size_t i = 0; i < s->nr; i++)
                if (s->regions[i].start <= addr && addr < s->regions[i].end)
                        return &s->regions[i];
        return NULL;
}

/* Samples at random addresses of the set, counted as the tracker counts
 * them; their addresses are kept in @addrs (room for @max). */
static size_t sample_randomly(struct dp_region_set *s, struct dp_prng *gen, size_t count, uint64_t *addrs,
                              size_t max) {
        size_t n = 0;

        for (size_t k = 0; k < count && n < max; k++) {
                struct dp_region *r = &s->regions[dp_prng_between(gen, 0, s->nr - 1)];
                uint64_t addr = dp_prng_between(gen, r->start, r->end - 1);
                struct dp_region *found;

                /* Not ck_assert per sample: Check writes its pipe at every assertion. */
                if (dp_region_set_find(s, addr, &found) != DP_REGION_MATCH)
                        ck_abort_msg("no region holds %#" PRIx64 ", drawn from one", addr);
                dp_region_count_sample(found, addr);
                addrs[n++] = addr;
        }
        return n;
}

/* Whether each region whose last count is known has exactly the samples of
 * @addrs inside it, and the known and unknown ones add up to them all. */
static bool last_counts_exact(const struct dp_region_set *s, uint64_t *addrs, size_t n) {
        size_t k = 0;

        qsort(addrs, n, sizeof(*addrs), compare_u64);
        for (size_t i = 0; i < s->nr; i++) {
                const struct dp_region *r = &s->regions[i];
                uint64_t inside = 0;

                while (k < n && addrs[k] < r->start)
                        k++;
                while (k < n && addrs[k] < r->end)
                        inside++, k++;
                if (!(r->unknown & DP_REGION_LAST_SAMPLES_UNKNOWN) && inside != r->last_nr_samples)
                        return false;
        }
        return true;
}

START_TEST(test_init_even_split) {
        struct dp_region_limits l = limits(10, 1000);
        struct dp_range in[] = { R(P(100), P(200)) };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        ck_assert_uint_eq(s.nr, 10);
        for (size_t i = 0; i < s.nr; i++)
                ck_assert_uint_eq(s.regions[i].end - s.regions[i].start, P(10));
        assert_covers_exactly(&s, in, 1);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_init_uneven_ranges) {
        struct dp_region_limits l = limits(10, 1000);
        /* unsorted, unaligned, overlapping; a 90-page and a 10-page area, plus a tiny one */
        struct dp_range in[] = { R(P(1000) + 5, P(1010) - 7), R(P(0), P(50)), R(P(40), P(90)), R(P(2000), P(2001)) };
        struct dp_range expect[] = { R(P(0), P(90)), R(P(1000), P(1010)), R(P(2000), P(2001)) };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, DP_ARRAY_SIZE(in), &l), 0);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        ck_assert_uint_eq(s.nr, 10);
        assert_covers_exactly(&s, expect, DP_ARRAY_SIZE(expect));
        /* the big range got most of the pieces */
        ck_assert_ptr_nonnull(region_at(&s, P(0)));
        ck_assert_uint_le(region_at(&s, P(0))->end - region_at(&s, P(0))->start, P(12));
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_init_fewer_pages_than_min) {
        struct dp_region_limits l = limits(10, 1000);
        struct dp_range in[] = { R(P(7), P(10)) };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        ck_assert_uint_eq(s.nr, 3);     /* one per page */
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_init_errors) {
        struct dp_region_limits l = limits(10, 1000), bad = limits(10, 5);
        struct dp_range empty[] = { R(P(1), P(1)) }, inverted[] = { R(P(2), P(1)) }, ok[] = { R(0, P(1)) };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, empty, 1, &l), -EINVAL);
        ck_assert_int_eq(dp_region_set_init(&s, inverted, 1, &l), -EINVAL);
        ck_assert_int_eq(dp_region_set_init(&s, ok, 0, &l), -EINVAL);
        ck_assert_int_eq(dp_region_set_init(&s, ok, 1, &bad), -EINVAL);
        ck_assert_uint_eq(s.nr, 0);
}
END_TEST

START_TEST(test_init_bridges_too_many_ranges) {
        struct dp_region_limits l = limits(3, 8);
        struct dp_range in[20];
        struct dp_region_set s;

        for (size_t i = 0; i < 20; i++)
                in[i] = R(P(10 * i), P(10 * i + 1 + (i == 7 ? 5 : 0)));
        ck_assert_int_eq(dp_region_set_init(&s, in, 20, &l), 0);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        ck_assert_uint_eq(s.nr, 8);
        ck_assert_uint_eq(s.start, P(0));
        ck_assert_uint_eq(s.end, P(191));
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_merge_weighted_average) {
        struct dp_region_limits init = limits(3, 1000), one = limits(1, 1);
        struct dp_range in[] = { R(0, P(10)) };
        struct dp_prng rng = { 1 };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &init), 0);
        ck_assert_uint_eq(s.nr, 3);     /* 3, 3, 4 pages */
        s.regions[0].nr_accesses = 5;
        s.regions[1].nr_accesses = 5;
        s.regions[2].nr_accesses = 8;
        s.regions[0].nr_samples = 100;
        s.regions[1].nr_samples = 10;
        s.regions[2].nr_samples = 1;
        s.regions[0].age = 10;
        s.regions[0].last_nr_accesses = 5;
        s.regions[1].last_nr_accesses = 5;
        s.regions[2].last_nr_accesses = 8;

        ck_assert_int_eq(dp_region_set_aggregate(&s, &one, &rng), 0);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        ck_assert_uint_eq(s.nr, 1);
        ck_assert_uint_eq(s.regions[0].last_nr_accesses, (5 * 6 + 8 * 4) / 10);
        ck_assert_uint_eq(s.regions[0].last_nr_samples, 111);
        ck_assert_uint_eq(s.regions[0].nr_accesses, 0);
        ck_assert_uint_eq(s.regions[0].nr_samples, 0);
        /* ages 11, 1, 1 weighted by 3, 3, 4 pages */
        ck_assert_uint_eq(s.regions[0].age, (11 * 3 + 1 * 3 + 1 * 4) / 10);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_merge_respects_min_and_threshold) {
        struct dp_region_limits l = limits(4, 8);
        struct dp_range in[] = { R(0, P(80)) };
        struct dp_prng rng = { 2 };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        ck_assert_uint_eq(s.nr, 4);
        /* all equal: merge would collapse everything, min keeps 4 */
        ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
        ck_assert_uint_ge(s.nr, 4);
        ck_assert_uint_le(s.nr, 8);

        /* far apart counts never merge (threshold = 20 / 10 = 2) */
        dp_region_set_done(&s);
        l = limits(4, 8);
        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        l = limits(1, 6);
        for (size_t i = 0; i < s.nr; i++)
                s.regions[i].nr_accesses = (i % 2) ? 20 : 0;
        ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
        /* no merge, and 4 > 6 / 2 so no split either */
        ck_assert_uint_eq(s.nr, 4);
        for (size_t i = 0; i < s.nr; i++)
                ck_assert_uint_eq(s.regions[i].last_nr_accesses, (i % 2) ? 20 : 0);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_merge_brings_count_below_max) {
        struct dp_region_limits wide = limits(50, 1000), narrow = limits(2, 10);
        struct dp_range in[] = { R(0, P(1000)) };
        struct dp_prng rng = { 3 };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &wide), 0);
        ck_assert_uint_eq(s.nr, 50);
        /* a saw-tooth that no small threshold merges */
        for (size_t i = 0; i < s.nr; i++)
                s.regions[i].nr_accesses = (i % 2) ? 20 : 0;
        ck_assert_int_eq(dp_region_set_aggregate(&s, &narrow, &rng), 0);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        ck_assert_uint_le(s.nr, 10);
        ck_assert_uint_ge(s.nr, 2);
        assert_covers_exactly(&s, in, 1);
        dp_region_set_done(&s);
}
END_TEST

/* Split points between 10% and 90%; every piece's count is of the samples
 * that fell in it (they used to be shared out by size, so one sample always
 * landed in the rightmost piece). */
START_TEST(test_split_points) {
        struct dp_region_limits l = limits(1, 1000);
        struct dp_range in[] = { R(P(1000), P(2000)) };
        static uint64_t addrs[1000];

        for (uint64_t seed = 0; seed < 200; seed++) {
                struct dp_prng rng = { seed }, gen = { seed + 1000 };
                struct dp_region_set s;
                uint64_t left, total = 0;
                size_t n;

                ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
                /* One aggregation without samples: random cuts from then on. */
                ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
                ck_assert_uint_eq(s.nr, 2);
                left = (s.regions[0].end - s.regions[0].start) / DP_PAGE_SIZE;
                ck_assert_uint_ge(left, 100);
                ck_assert_uint_le(left, 900);

                n = sample_randomly(&s, &gen, seed % 7 == 0 ? 1 : 1000, addrs, DP_ARRAY_SIZE(addrs));
                ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
                ck_assert_int_eq(dp_region_set_check(&s), 0);
                /* Merged back (no access rates were set) and split where counted. */
                ck_assert_uint_ge(s.nr, 2);
                for (size_t i = 0; i < s.nr; i++) {
                        ck_assert_uint_eq(s.regions[i].unknown, 0);
                        total += s.regions[i].last_nr_samples;
                }
                ck_assert_uint_eq(total, n);
                ck_assert(last_counts_exact(&s, addrs, n));
                dp_region_set_done(&s);
        }
}
END_TEST

START_TEST(test_split_three_when_merged_back) {
        struct dp_region_limits l = limits(1, 1000);
        struct dp_range in[] = { R(0, P(1000)) };
        struct dp_prng rng = { 9 };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
        ck_assert_uint_eq(s.nr, 2);
        /* all idle: the two merge back into one, so the next split makes three */
        ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
        ck_assert_uint_eq(s.nr, 3);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_tiny_regions_not_split) {
        struct dp_region_limits l = limits(1, 1000);
        struct dp_range in[] = { R(0, P(1)), R(P(5), P(6)) };
        struct dp_prng rng = { 4 };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 2, &l), 0);
        for (int i = 0; i < 10; i++)
                ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
        ck_assert_uint_eq(s.nr, 2);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_age) {
        struct dp_region_limits l = limits(10, 10);
        struct dp_range in[] = { R(0, P(100)) };
        struct dp_prng rng = { 5 };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        for (int round = 0; round < 5; round++) {
                s.regions[0].nr_accesses = 5;                   /* stable */
                s.regions[1].nr_accesses = round % 2 ? 20 : 0;  /* flapping */
                s.regions[2].nr_accesses = 5 + round % 2;       /* within the threshold (2) */
                s.regions[4].nr_accesses = 20;                  /* keeps neighbours apart */
                s.regions[6].nr_accesses = 20;
                s.regions[8].nr_accesses = 20;
                ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);
                ck_assert_uint_eq(s.nr, 10);    /* min == max == 10: neither merge nor split */
        }
        /* 0 -> 5 crosses zero (age 0), then four stable rounds */
        ck_assert_uint_eq(s.regions[0].age, 4);
        ck_assert_uint_eq(s.regions[1].age, 0);
        ck_assert_uint_eq(s.regions[2].age, 4);
        ck_assert_uint_eq(s.regions[3].age, 5); /* idle throughout */
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_update_ranges_keeps_history) {
        struct dp_region_limits l = limits(10, 1000);
        struct dp_range in[] = { R(0, P(100)) };
        struct dp_range next[] = { R(P(80), P(120)), R(P(5), P(55)) };
        struct dp_range expect[] = { R(P(5), P(55)), R(P(80), P(120)) };
        const struct dp_region *r;
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        ck_assert_uint_eq(s.nr, 10);
        for (size_t i = 0; i < s.nr; i++) {
                s.regions[i].last_nr_accesses = (uint32_t) i + 1;
                s.regions[i].nr_accesses = (uint32_t) i + 1;
                s.regions[i].age = (uint32_t) i + 100;
                s.regions[i].last_nr_samples = 100;
        }

        ck_assert_int_eq(dp_region_set_update_ranges(&s, next, 2, &l), 0);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        assert_covers_exactly(&s, expect, 2);
        ck_assert_uint_ge(s.nr, 10);

        r = region_at(&s, P(5));        /* clipped from the first region */
        ck_assert_uint_eq(r->start, P(5));
        ck_assert_uint_eq(r->end, P(10));
        ck_assert_uint_eq(r->last_nr_accesses, 1);
        ck_assert_uint_eq(r->age, 100);
        /* Its 100 samples were somewhere in 10 pages: the count of these 5 is not known. */
        ck_assert(r->unknown & DP_REGION_LAST_SAMPLES_UNKNOWN);
        r = region_at(&s, P(52));       /* clipped from the sixth */
        ck_assert_uint_eq(r->end, P(55));
        ck_assert_uint_eq(r->last_nr_accesses, 6);
        r = region_at(&s, P(25));       /* untouched */
        ck_assert_uint_eq(r->start, P(20));
        ck_assert_uint_eq(r->end, P(30));
        ck_assert_uint_eq(r->nr_accesses, 3);
        ck_assert_uint_eq(r->last_nr_samples, 100);
        ck_assert_uint_eq(r->unknown, 0);
        r = region_at(&s, P(85));
        ck_assert_uint_eq(r->last_nr_accesses, 9);
        r = region_at(&s, P(110));      /* new memory: fresh */
        ck_assert_uint_eq(r->last_nr_accesses, 0);
        ck_assert_uint_eq(r->age, 0);
        ck_assert_uint_ge(r->start, P(100));
        ck_assert_ptr_null(region_at(&s, P(60)));

        /* errors leave the set untouched */
        ck_assert_int_eq(dp_region_set_update_ranges(&s, next, 0, &l), -EINVAL);
        assert_covers_exactly(&s, expect, 2);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_update_ranges_disjoint_replaces) {
        struct dp_region_limits l = limits(3, 10);
        struct dp_range in[] = { R(0, P(100)) }, next[] = { R(P(500), P(600)) };
        struct dp_region_set s;

        ck_assert_int_eq(dp_region_set_init(&s, in, 1, &l), 0);
        s.regions[0].last_nr_accesses = 7;
        ck_assert_int_eq(dp_region_set_update_ranges(&s, next, 1, &l), 0);
        ck_assert_int_eq(dp_region_set_check(&s), 0);
        ck_assert_uint_eq(s.nr, 3);
        assert_covers_exactly(&s, next, 1);
        for (size_t i = 0; i < s.nr; i++)
                ck_assert_uint_eq(s.regions[i].last_nr_accesses, 0);
        dp_region_set_done(&s);
}
END_TEST

START_TEST(test_lookup) {
        struct dp_region_limits l = limits(10, 1000);
        struct dp_range in[] = { R(P(10), P(20)), R(P(30), P(40)) };
        struct dp_region_set s;
        struct dp_region *r = NULL;

        ck_assert_int_eq(dp_region_set_init(&s, in, 2, &l), 0);
        ck_assert_int_eq(dp_region_set_find(&s, P(10) - 1, &r), DP_REGION_MISS_BOUND);
        ck_assert_int_eq(dp_region_set_find(&s, P(40), &r), DP_REGION_MISS_BOUND);
        ck_assert_int_eq(dp_region_set_find(&s, P(25), &r), DP_REGION_MISS_REGION);
        ck_assert_int_eq(dp_region_set_find(&s, P(20), &r), DP_REGION_MISS_REGION);
        ck_assert_int_eq(dp_region_set_find(&s, P(30) - 1, &r), DP_REGION_MISS_REGION);
        for (uint64_t a = P(10); a < P(40); a += 512) {
                enum dp_region_lookup res = dp_region_set_find(&s, a, &r);

                if (a >= P(20) && a < P(30)) {
                        ck_assert_int_eq(res, DP_REGION_MISS_REGION);
                        continue;
                }
                ck_assert_int_eq(res, DP_REGION_MATCH);
                ck_assert_ptr_eq(r, region_at(&s, a));
        }
        dp_region_set_done(&s);
}
END_TEST

/*
 * Property test: random ranges, limits and access patterns, many
 * aggregations and occasional re-bounding; every invariant after every step.
 */
#define MAX_ADDRS 10000

static void run_property(uint64_t seed) {
        static uint64_t addrs[MAX_ADDRS];
        struct dp_prng rng = { seed }, gen = { seed * 7919 + 1 };
        size_t nr_addrs;
        struct dp_region_limits l;
        struct dp_range in[40], expect[40];
        struct dp_region_set s;
        size_t n, n_expect;
        uint64_t pos = P(dp_prng_between(&gen, 0, 1000));

        l.min_nr_regions = (uint32_t) dp_prng_between(&gen, 1, 30);
        l.max_nr_regions = (uint32_t) dp_prng_between(&gen, l.min_nr_regions, 300);
        l.max_nr_accesses = (uint32_t) dp_prng_between(&gen, 1, 40);

        n = dp_prng_between(&gen, 1, DP_ARRAY_SIZE(in));
        for (size_t i = 0; i < n; i++) {
                pos += P(dp_prng_between(&gen, 0, 50)) + dp_prng_between(&gen, 0, 4095);
                in[i].start = pos;
                pos += dp_prng_between(&gen, 1, P(dp_prng_between(&gen, 1, 2000)));
                in[i].end = pos;
        }
        memcpy(expect, in, n * sizeof(*in));
        ck_assert_int_eq(dp_ranges_page_align(expect, n, &n_expect), 0);
        ck_assert_int_eq(dp_ranges_fit(expect, n_expect, l.max_nr_regions, &n_expect), 0);

        ck_assert_int_eq(dp_region_set_init(&s, in, n, &l), 0);

        for (int round = 0; round < 150; round++) {
                uint64_t samples = 0, pages = set_pages(&s);
                size_t hot_first = dp_prng_between(&gen, 0, s.nr - 1);

                ck_assert_int_eq(dp_region_set_check(&s), 0);
                ck_assert_uint_ge(s.nr, DP_MIN((uint64_t) l.min_nr_regions, pages));
                ck_assert_uint_le(s.nr, l.max_nr_regions);
                assert_covers_exactly(&s, expect, n_expect);

                for (size_t i = 0; i < s.nr; i++) {
                        struct dp_region *r = &s.regions[i];
                        bool hot = i >= hot_first && i < hot_first + 5;

                        r->nr_accesses = hot ? l.max_nr_accesses
                                             : (uint32_t) dp_prng_between(&gen, 0, l.max_nr_accesses / 4);
                }
                nr_addrs = sample_randomly(&s, &gen, dp_prng_between(&gen, 0, 20 * s.nr), addrs, MAX_ADDRS);
                for (size_t i = 0; i < s.nr; i++)
                        samples += s.regions[i].nr_samples;

                ck_assert_int_eq(dp_region_set_aggregate(&s, &l, &rng), 0);

                /* sample totals survive merge and split; current counts restart */
                uint64_t after = 0;
                bool rolled_over = true;
                for (size_t i = 0; i < s.nr; i++) {
                        rolled_over &= s.regions[i].nr_samples == 0 && s.regions[i].nr_accesses == 0 &&
                                       s.regions[i].last_nr_accesses <= l.max_nr_accesses;
                        after += s.regions[i].last_nr_samples;
                }
                ck_assert(rolled_over);
                ck_assert_uint_eq(after, samples);
                ck_assert(last_counts_exact(&s, addrs, nr_addrs));

                if (round % 37 == 36) {
                        /* Re-bound to a shifted window over part of the old space. */
                        uint64_t shift = P(dp_prng_between(&gen, 0, 100));
                        size_t m = dp_prng_between(&gen, 1, n);

                        for (size_t i = 0; i < m; i++) {
                                in[i].start += shift;
                                in[i].end += shift;
                        }
                        n = m;
                        memcpy(expect, in, n * sizeof(*in));
                        ck_assert_int_eq(dp_ranges_page_align(expect, n, &n_expect), 0);
                        ck_assert_int_eq(dp_ranges_fit(expect, n_expect, l.max_nr_regions, &n_expect), 0);
                        ck_assert_int_eq(dp_region_set_update_ranges(&s, in, n, &l), 0);
                }
        }
        dp_region_set_done(&s);
}

START_TEST(test_property) {
        for (uint64_t seed = 1; seed <= 40; seed++)
                run_property(seed);
}
END_TEST

START_TEST(test_deterministic) {
        struct dp_region_limits l = limits(10, 100);
        struct dp_range in[] = { R(0, P(10000)) };
        struct dp_region_set a, b;
        struct dp_prng ra = { 77 }, rb = { 77 };

        ck_assert_int_eq(dp_region_set_init(&a, in, 1, &l), 0);
        ck_assert_int_eq(dp_region_set_init(&b, in, 1, &l), 0);
        for (int i = 0; i < 20; i++) {
                a.regions[i % a.nr].nr_accesses = 20;
                b.regions[i % b.nr].nr_accesses = 20;
                ck_assert_int_eq(dp_region_set_aggregate(&a, &l, &ra), 0);
                ck_assert_int_eq(dp_region_set_aggregate(&b, &l, &rb), 0);
        }
        ck_assert_uint_eq(a.nr, b.nr);
        /* Field by field: the struct's tail padding is whatever the heap held. */
        for (size_t i = 0; i < a.nr; i++) {
                const struct dp_region *x = &a.regions[i], *y = &b.regions[i];

                ck_assert(x->start == y->start && x->end == y->end);
                ck_assert(x->access_mask == y->access_mask && x->next_access_mask == y->next_access_mask);
                ck_assert(x->nr_samples == y->nr_samples && x->last_nr_samples == y->last_nr_samples);
                ck_assert(x->cut[0] == y->cut[0] && x->cut[1] == y->cut[1]);
                ck_assert(x->below[0] == y->below[0] && x->below[1] == y->below[1]);
                ck_assert(x->nr_accesses == y->nr_accesses && x->next_nr_accesses == y->next_nr_accesses);
                ck_assert(x->last_nr_accesses == y->last_nr_accesses && x->age == y->age);
                ck_assert(x->unknown == y->unknown);
        }
        dp_region_set_done(&a);
        dp_region_set_done(&b);
}
END_TEST

static Suite *region_suite(void) {
        Suite *s = suite_create("region");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_init_even_split);
        tcase_add_test(tc, test_init_uneven_ranges);
        tcase_add_test(tc, test_init_fewer_pages_than_min);
        tcase_add_test(tc, test_init_errors);
        tcase_add_test(tc, test_init_bridges_too_many_ranges);
        tcase_add_test(tc, test_merge_weighted_average);
        tcase_add_test(tc, test_merge_respects_min_and_threshold);
        tcase_add_test(tc, test_merge_brings_count_below_max);
        tcase_add_test(tc, test_split_points);
        tcase_add_test(tc, test_split_three_when_merged_back);
        tcase_add_test(tc, test_tiny_regions_not_split);
        tcase_add_test(tc, test_age);
        tcase_add_test(tc, test_update_ranges_keeps_history);
        tcase_add_test(tc, test_update_ranges_disjoint_replaces);
        tcase_add_test(tc, test_lookup);
        tcase_add_test(tc, test_property);
        tcase_add_test(tc, test_deterministic);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(region_suite());
}
