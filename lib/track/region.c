/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "region.h"

#define PAGE_SHIFT 12

typedef unsigned __int128 u128;

static uint64_t region_pages(const struct dp_region *r) {
        return (r->end - r->start) >> PAGE_SHIFT;
}

static uint64_t total_pages(const struct dp_region_set *s) {
        uint64_t total = 0;

        for (size_t i = 0; i < s->nr; i++)
                total += region_pages(&s->regions[i]);
        return total;
}

static uint32_t abs_diff(uint32_t a, uint32_t b) {
        return a > b ? a - b : b - a;
}

static uint32_t weighted_average(uint32_t a, uint64_t weight_a, uint32_t b, uint64_t weight_b) {
        /* Regions under 8 TiB keep the sum in 64 bits, where division is an
         * instruction rather than a libgcc call; same quotient either way. */
        if (dp_likely(((weight_a | weight_b) >> 31) == 0))
                return (uint32_t) (((uint64_t) a * weight_a + (uint64_t) b * weight_b) / (weight_a + weight_b));
        return (uint32_t) (((u128) a * weight_a + (u128) b * weight_b) / (weight_a + weight_b));
}

int dp_region_limits_validate(const struct dp_region_limits *l) {
        if (!l || l->min_nr_regions < 1 || l->max_nr_regions < l->min_nr_regions || l->max_nr_accesses < 1)
                return -EINVAL;
        return 0;
}

/* Copies, widens to pages, coalesces, and bridges gaps down to max_nr_regions. */
static int normalize_ranges(const struct dp_range *ranges, size_t n, const struct dp_region_limits *l,
                            struct dp_range **ret, size_t *ret_n) {
        _cleanup_free_ struct dp_range *copy = NULL;
        size_t nr;
        int r;

        if (n == 0 || !ranges)
                return -EINVAL;
        copy = malloc(n * sizeof(*copy));
        if (!copy)
                return -ENOMEM;
        memcpy(copy, ranges, n * sizeof(*copy));

        r = dp_ranges_page_align(copy, n, &nr);
        if (r < 0)
                return r;
        if (nr == 0)
                return -EINVAL;
        r = dp_ranges_fit(copy, nr, l->max_nr_regions, &nr);
        if (r < 0)
                return r;

        *ret = DP_TAKE_PTR(copy);
        *ret_n = nr;
        return 0;
}

static int set_reserve(struct dp_region_set *s, size_t need) {
        struct dp_region *regions;
        uint64_t *starts;
        size_t cap;

        if (need <= s->cap)
                return 0;
        cap = DP_MAX(need, DP_MAX(s->cap * 2, (size_t) 16));

        regions = reallocarray(s->regions, cap, sizeof(*regions));
        if (!regions)
                return -ENOMEM;
        s->regions = regions;
        starts = reallocarray(s->starts, cap, sizeof(*starts));
        if (!starts)
                return -ENOMEM;
        s->starts = starts;
        s->cap = cap;
        return 0;
}

/* Rebuilds what the lookup reads; call after any change of boundaries. */
static void set_reindex(struct dp_region_set *s) {
        for (size_t i = 0; i < s->nr; i++)
                s->starts[i] = s->regions[i].start;
        s->start = s->nr > 0 ? s->regions[0].start : 0;
        s->end = s->nr > 0 ? s->regions[s->nr - 1].end : 0;
        s->last_hit = 0;
}

static bool cut_valid(const struct dp_region *r, unsigned k) {
        return r->cut[k] > r->start && r->cut[k] < r->end;
}

/* A page-aligned point between 10% and 90% of [start, end), as DAMON splits:
 * random, or without @rng the middle of that span.  0 when too small. */
static uint64_t pick_cut(uint64_t start, uint64_t end, struct dp_prng *rng) {
        uint64_t pages = (end - start) >> PAGE_SHIFT, lo, hi;

        if (pages < 2)
                return 0;
        lo = DP_MAX((pages + 9) / 10, (uint64_t) 1);
        hi = DP_MIN(pages * 9 / 10, pages - 1);
        if (lo > hi)
                return 0;
        return start + ((rng ? dp_prng_between(rng, lo, hi) : lo + (hi - lo) / 2) << PAGE_SHIFT);
}

/* Where @r will be split when the aggregation now opening closes: cut[0],
 * and cut[1] inside [start, cut[0]) for a three-way split.  Only for a
 * region with no sample counted yet in this aggregation. */
static void choose_cuts(struct dp_region *r, struct dp_prng *rng) {
        uint64_t at = pick_cut(r->start, r->end, rng), at2 = at ? pick_cut(r->start, at, rng) : 0;

        r->cut[0] = at ?: r->start;
        r->cut[1] = at2 ?: r->start;
        r->below[0] = r->below[1] = 0;
}

/* The bounds and cuts of @r, ascending, with the samples of the current
 * aggregation below each.  Returns how many (2 to 4). */
static size_t known_points(const struct dp_region *r, uint64_t *pos, uint64_t *below) {
        size_t n = 0;

        pos[n] = r->start, below[n++] = 0;
        if (cut_valid(r, 1))
                pos[n] = r->cut[1], below[n++] = r->below[1];
        if (cut_valid(r, 0))
                pos[n] = r->cut[0], below[n++] = r->below[0];
        pos[n] = r->end, below[n++] = r->nr_samples;
        return n;
}

/* The samples of the current aggregation below @x in @r, when they are
 * known: at a bound or a cut, or inside a stretch between two that got none. */
static bool samples_below(const struct dp_region *r, uint64_t x, uint64_t *ret) {
        uint64_t pos[4], below[4];
        size_t n = known_points(r, pos, below);

        if ((r->unknown & DP_REGION_SAMPLES_UNKNOWN) || r->nr_samples > UINT32_MAX)
                return false;
        for (size_t i = 0; i + 1 < n; i++)
                if (pos[i] <= x && x <= pos[i + 1]) {
                        if (x != pos[i] && x != pos[i + 1] && below[i] != below[i + 1])
                                return false;
                        *ret = x == pos[i + 1] ? below[i + 1] : below[i];
                        return true;
                }
        return false;
}

/* floor(total * (x - r->start) / size(r)): an estimate, for counts marked
 * unknown, which only decisions (never a display) may use. */
static uint64_t prefix_share(uint64_t total, const struct dp_region *r, uint64_t x) {
        uint64_t part = (x - r->start) >> PAGE_SHIFT;

        /* As in weighted_average(): 64 bits whenever the product fits. */
        if (dp_likely(((total | part) >> 32) == 0))
                return total * part / region_pages(r);
        return (uint64_t) ((u128) total * part / region_pages(r));
}

/* The piece [start, end) of @from in the middle of an aggregation, with its
 * history: intensive values copied; the sample count exact where the cuts
 * tell it, else an estimate marked unknown, as the last aggregation's is
 * unless nothing was sampled. */
static struct dp_region cut_piece(const struct dp_region *from, uint64_t start, uint64_t end) {
        struct dp_region piece = *from;
        uint64_t a, b;

        piece.start = start;
        piece.end = end;
        if (start == from->start && end == from->end)
                return piece;
        if (samples_below(from, start, &a) && samples_below(from, end, &b)) {
                piece.nr_samples = b - a;
                for (unsigned k = 0; k < 2; k++)
                        if (cut_valid(from, k) && from->cut[k] > start && from->cut[k] < end)
                                piece.below[k] = (uint32_t) (from->below[k] - a);
                        else
                                piece.cut[k] = start, piece.below[k] = 0;
        } else {
                piece.unknown |= DP_REGION_SAMPLES_UNKNOWN;
                piece.nr_samples = prefix_share(from->nr_samples, from, end) -
                                   prefix_share(from->nr_samples, from, start);
                piece.cut[0] = piece.cut[1] = start;
                piece.below[0] = piece.below[1] = 0;
        }
        if (from->last_nr_samples)
                piece.unknown |= DP_REGION_LAST_SAMPLES_UNKNOWN;
        piece.last_nr_samples = prefix_share(from->last_nr_samples, from, end) -
                                prefix_share(from->last_nr_samples, from, start);
        return piece;
}

/* The cut of [start, end) among @n candidates nearest the middle of the span
 * a split may cut in (10% to 90%); -1 when none is in it. */
static int nearest_cut(const uint64_t *pos, size_t n, uint64_t start, uint64_t end) {
        uint64_t pages = (end - start) >> PAGE_SHIFT, lo, hi, mid, best_d = UINT64_MAX;
        int best = -1;

        if (pages < 2)
                return -1;
        lo = start + (DP_MAX((pages + 9) / 10, (uint64_t) 1) << PAGE_SHIFT);
        hi = start + (DP_MIN(pages * 9 / 10, pages - 1) << PAGE_SHIFT);
        mid = lo + (hi - lo) / 2;
        for (size_t i = 0; i < n; i++) {
                uint64_t d = pos[i] > mid ? pos[i] - mid : mid - pos[i];

                if (pos[i] >= lo && pos[i] <= hi && d < best_d)
                        best = (int) i, best_d = d;
        }
        return best;
}

/* The cuts of @left and @right merged into @left (its end not yet moved):
 * the ones nearest the middle of the merged region, and of its left part;
 * never the seam, where the split would just undo the merge. */
static void merge_cuts(struct dp_region *left, const struct dp_region *right) {
        uint64_t pos[4], below[4], lp[4], lb[4], rp[4], rb[4];
        size_t n = 0, nl = known_points(left, lp, lb), nr = known_points(right, rp, rb);
        int first, second;

        for (size_t i = 1; i + 1 < nl; i++)
                pos[n] = lp[i], below[n++] = lb[i];
        for (size_t i = 1; i + 1 < nr; i++)
                pos[n] = rp[i], below[n++] = left->nr_samples + rb[i];
        left->cut[0] = left->cut[1] = left->start;
        left->below[0] = left->below[1] = 0;
        if (((left->unknown | right->unknown) & DP_REGION_SAMPLES_UNKNOWN) ||
            left->nr_samples + right->nr_samples > UINT32_MAX)
                return;
        first = nearest_cut(pos, n, left->start, right->end);
        if (first < 0)
                return;
        left->cut[0] = pos[first], left->below[0] = (uint32_t) below[first];
        second = nearest_cut(pos, (size_t) first, left->start, pos[first]);
        if (second >= 0)
                left->cut[1] = pos[second], left->below[1] = (uint32_t) below[second];
}

static void merge_into(struct dp_region *left, const struct dp_region *right) {
        uint64_t pl = region_pages(left), pr = region_pages(right);

        merge_cuts(left, right);
        left->unknown |= right->unknown;

        left->nr_accesses = weighted_average(left->nr_accesses, pl, right->nr_accesses, pr);
        left->last_nr_accesses = weighted_average(left->last_nr_accesses, pl, right->last_nr_accesses, pr);
        left->age = weighted_average(left->age, pl, right->age, pr);
        left->nr_samples += right->nr_samples;
        left->last_nr_samples += right->last_nr_samples;
        left->next_nr_accesses = weighted_average(left->next_nr_accesses, pl, right->next_nr_accesses, pr);
        left->access_mask |= right->access_mask;
        left->next_access_mask |= right->next_access_mask;
        left->end = right->end;
}

/*
 * Splits regions evenly until there are min_nr_regions (or one per page).
 * Extra pieces go one at a time to the region whose pieces are currently
 * largest, so sizes come out as even as page granularity allows.
 */
static int ensure_min(struct dp_region_set *s, const struct dp_region_limits *l) {
        _cleanup_free_ uint64_t *pieces = NULL;
        uint64_t target = DP_MIN((uint64_t) l->min_nr_regions, total_pages(s));
        size_t w;
        int r;

        if (s->nr >= target)
                return 0;

        pieces = malloc(s->nr * sizeof(*pieces));
        if (!pieces)
                return -ENOMEM;
        for (size_t i = 0; i < s->nr; i++)
                pieces[i] = 1;

        for (uint64_t extra = target - s->nr; extra > 0; extra--) {
                size_t best = SIZE_MAX;

                for (size_t i = 0; i < s->nr; i++) {
                        uint64_t pages = region_pages(&s->regions[i]);

                        if (pieces[i] >= pages)
                                continue;
                        /* pages_i / pieces_i > pages_best / pieces_best */
                        if (best == SIZE_MAX ||
                            (u128) pages * pieces[best] > (u128) region_pages(&s->regions[best]) * pieces[i])
                                best = i;
                }
                pieces[best]++; /* exists: target <= total pages */
        }

        r = set_reserve(s, target);
        if (r < 0)
                return r;

        /* Back to front, so every write lands at or after the region being read. */
        w = target;
        for (size_t i = s->nr; i-- > 0;) {
                struct dp_region whole = s->regions[i];
                uint64_t pages = region_pages(&whole);

                for (uint64_t k = pieces[i]; k-- > 0;) {
                        uint64_t a = whole.start + ((uint64_t) ((u128) pages * k / pieces[i]) << PAGE_SHIFT);
                        uint64_t b = whole.start + ((uint64_t) ((u128) pages * (k + 1) / pieces[i]) << PAGE_SHIFT);

                        s->regions[--w] = cut_piece(&whole, a, b);
                }
        }
        s->nr = target;
        return 0;
}

/*
 * One left-to-right merge pass: folds a region into its left neighbour when
 * they touch, their nr_accesses differ by at most @thres and the result is
 * at most @limit_pages, while more than @floor regions remain.
 */
static void merge_pass(struct dp_region_set *s, uint64_t thres, uint64_t limit_pages, size_t floor) {
        size_t out = 0, count = s->nr;

        for (size_t i = 0; i < s->nr; i++) {
                struct dp_region *cur = &s->regions[i];

                if (out > 0) {
                        struct dp_region *prev = &s->regions[out - 1];

                        if (count > floor && prev->end == cur->start &&
                            abs_diff(prev->nr_accesses, cur->nr_accesses) <= thres &&
                            region_pages(prev) + region_pages(cur) <= limit_pages) {
                                merge_into(prev, cur);
                                count--;
                                continue;
                        }
                }
                if (out != i)
                        s->regions[out] = *cur;
                out++;
        }
        s->nr = out;
}

/*
 * DAMON's merge: the threshold starts at @thres and doubles while the count
 * is above max, until it covers every possible nr_accesses.  DAMON may stay
 * above max when the size limit blocks merges; a last pass without it makes
 * the limit hard here.  Never goes below min_nr_regions.
 */
static void merge_regions(struct dp_region_set *s, const struct dp_region_limits *l, uint64_t thres) {
        uint64_t limit_pages = DP_MAX(total_pages(s) / l->min_nr_regions, (uint64_t) 1);

        merge_pass(s, thres, limit_pages, l->min_nr_regions);
        while (s->nr > l->max_nr_regions && thres < l->max_nr_accesses) {
                thres = thres ? thres * 2 : 1;
                merge_pass(s, thres, limit_pages, l->min_nr_regions);
        }
        if (s->nr > l->max_nr_regions)
                merge_pass(s, UINT64_MAX, UINT64_MAX, l->max_nr_regions);
}

/*
 * The cuts of @cur, the region of an aggregation that just closed, for a
 * split into @subs pieces, ascending, with the samples below each.  With
 * samples, only where the region counted them, so that every piece's count
 * is of samples that fell in it (none: it stays whole this time); without
 * (or when its count is unknown anyway), at random points as DAMON splits.
 */
static size_t split_cuts(const struct dp_region *cur, size_t subs, struct dp_prng *rng, uint64_t *pos,
                         uint64_t *below) {
        uint64_t at, at2;
        size_t n = 0;

        if (cur->last_nr_samples == 0 || (cur->unknown & DP_REGION_LAST_SAMPLES_UNKNOWN)) {
                at = pick_cut(cur->start, cur->end, rng);
                at2 = at && subs == 3 ? pick_cut(cur->start, at, rng) : 0;
                if (at2)
                        pos[n] = at2, below[n++] = 0;
                if (at)
                        pos[n] = at, below[n++] = 0;
                return n;
        }
        if (subs == 3 && cut_valid(cur, 1))
                pos[n] = cur->cut[1], below[n++] = cur->below[1];
        if (cut_valid(cur, 0))
                pos[n] = cur->cut[0], below[n++] = cur->below[0];
        else if (n == 0 && cut_valid(cur, 1))
                pos[n] = cur->cut[1], below[n++] = cur->below[1];
        return n;
}

/*
 * Splits every region in two (three when the last split was merged right
 * back, as DAMON does, since the middle may differ) at page-aligned points
 * between 10% and 90%, if there are at most max/2 regions.  Runs after the
 * counts rolled over: each piece's last_nr_samples comes from the cuts.
 */
static int split_regions(struct dp_region_set *s, const struct dp_region_limits *l, struct dp_prng *rng) {
        size_t nr = s->nr, subs, need, w;
        int r;

        if (nr > l->max_nr_regions / 2)
                return 0;
        subs = nr == s->nr_at_last_split && nr < l->max_nr_regions / 3 ? 3 : 2;
        need = nr * subs;
        r = set_reserve(s, need);
        if (r < 0)
                return r;

        /* Back to front into the top of the array, then slide down. */
        w = need;
        for (size_t i = nr; i-- > 0;) {
                struct dp_region cur = s->regions[i];
                uint64_t pos[2], below[2], end = cur.end, above = cur.last_nr_samples;
                size_t n = split_cuts(&cur, subs, rng, pos, below);

                for (size_t j = n; j-- > 0;) {
                        struct dp_region piece = cur;

                        piece.start = pos[j];
                        piece.end = end;
                        piece.last_nr_samples = above - below[j];
                        s->regions[--w] = piece;
                        end = pos[j];
                        above = below[j];
                }
                cur.end = end;
                cur.last_nr_samples = above;
                s->regions[--w] = cur;
        }
        memmove(s->regions, s->regions + w, (need - w) * sizeof(*s->regions));
        s->nr = need - w;
        s->nr_at_last_split = nr;
        return 0;
}

int dp_region_set_aggregate(struct dp_region_set *s, const struct dp_region_limits *l, struct dp_prng *rng) {
        uint32_t max_accesses = 0;
        uint64_t thres;
        int r;

        if (!s || !rng || dp_region_limits_validate(l) < 0 || s->nr == 0)
                return -EINVAL;

        for (size_t i = 0; i < s->nr; i++)
                max_accesses = DP_MAX(max_accesses, s->regions[i].nr_accesses);
        thres = max_accesses / 10;

        /* Age counts aggregations with a stable rate; crossing zero always resets. */
        for (size_t i = 0; i < s->nr; i++) {
                struct dp_region *reg = &s->regions[i];

                if (abs_diff(reg->nr_accesses, reg->last_nr_accesses) > thres ||
                    (reg->nr_accesses == 0) != (reg->last_nr_accesses == 0))
                        reg->age = 0;
                else if (reg->age < UINT32_MAX)
                        reg->age++;
        }

        merge_regions(s, l, thres);

        for (size_t i = 0; i < s->nr; i++) {
                struct dp_region *reg = &s->regions[i];

                reg->last_nr_accesses = reg->nr_accesses;
                /* What was counted ahead of this aggregation's end starts the next one. */
                reg->nr_accesses = reg->next_nr_accesses;
                reg->access_mask = reg->next_access_mask;
                reg->next_nr_accesses = 0;
                reg->next_access_mask = 0;
                reg->last_nr_samples = reg->nr_samples;
                reg->nr_samples = 0;
                /* Past 32 bits the counts below the cuts wrapped. */
                reg->unknown = (reg->unknown & DP_REGION_SAMPLES_UNKNOWN) || reg->last_nr_samples > UINT32_MAX
                                       ? DP_REGION_LAST_SAMPLES_UNKNOWN : 0;
        }

        r = split_regions(s, l, rng);
        for (size_t i = 0; i < s->nr; i++)
                choose_cuts(&s->regions[i], rng);
        set_reindex(s);
        return r;
}

/* Cuts for the regions that have none and nothing counted yet (new ones,
 * or pieces of a re-bounding): any cut then knows its counts.  Without an
 * rng here, the middle; the next aggregation draws at random again. */
static void add_missing_cuts(struct dp_region_set *s) {
        for (size_t i = 0; i < s->nr; i++) {
                struct dp_region *reg = &s->regions[i];

                if (!cut_valid(reg, 0) && !cut_valid(reg, 1) && reg->nr_samples == 0 &&
                    !(reg->unknown & DP_REGION_SAMPLES_UNKNOWN))
                        choose_cuts(reg, NULL);
        }
}

int dp_region_set_init(struct dp_region_set *s, const struct dp_range *ranges, size_t n,
                       const struct dp_region_limits *l) {
        _cleanup_free_ struct dp_range *norm = NULL;
        size_t nr_norm;
        int r;

        if (!s)
                return -EINVAL;
        *s = (struct dp_region_set) {};
        r = dp_region_limits_validate(l);
        if (r < 0)
                return r;
        r = normalize_ranges(ranges, n, l, &norm, &nr_norm);
        if (r < 0)
                return r;

        r = set_reserve(s, nr_norm);
        if (r < 0)
                goto fail;
        for (size_t i = 0; i < nr_norm; i++)
                s->regions[i] = (struct dp_region) { .start = norm[i].start, .end = norm[i].end };
        s->nr = nr_norm;

        r = ensure_min(s, l);
        if (r < 0)
                goto fail;
        add_missing_cuts(s);
        set_reindex(s);
        return 0;

fail:
        dp_region_set_done(s);
        return r;
}

void dp_region_set_done(struct dp_region_set *s) {
        if (!s)
                return;
        free(s->regions);
        free(s->starts);
        *s = (struct dp_region_set) {};
}

static int push_region(struct dp_region_set *s, struct dp_region reg) {
        int r = set_reserve(s, s->nr + 1);

        if (r < 0)
                return r;
        s->regions[s->nr++] = reg;
        return 0;
}

int dp_region_set_update_ranges(struct dp_region_set *s, const struct dp_range *ranges, size_t n,
                                const struct dp_region_limits *l) {
        _cleanup_free_ struct dp_range *norm = NULL;
        struct dp_region_set next = {};
        size_t nr_norm, j = 0;
        int r;

        if (!s)
                return -EINVAL;
        r = dp_region_limits_validate(l);
        if (r < 0)
                return r;
        r = normalize_ranges(ranges, n, l, &norm, &nr_norm);
        if (r < 0)
                return r;

        /* Upper bound: pieces <= old + ranges, holes <= pieces + ranges. */
        r = set_reserve(&next, 2 * (s->nr + nr_norm) + nr_norm);
        if (r < 0)
                goto fail;

        for (size_t i = 0; i < nr_norm; i++) {
                const struct dp_range *range = &norm[i];
                uint64_t pos = range->start;

                /* Regions ending before this range are outside every later range too. */
                while (j < s->nr && s->regions[j].end <= range->start)
                        j++;

                /* Don't advance j past the last one: it may reach into the next range. */
                for (size_t k = j; k < s->nr && s->regions[k].start < range->end; k++) {
                        const struct dp_region *old = &s->regions[k];
                        uint64_t a = DP_MAX(old->start, range->start), b = DP_MIN(old->end, range->end);

                        if (a > pos) {
                                r = push_region(&next, (struct dp_region) { .start = pos, .end = a });
                                if (r < 0)
                                        goto fail;
                        }
                        r = push_region(&next, cut_piece(old, a, b));
                        if (r < 0)
                                goto fail;
                        pos = b;
                }
                if (pos < range->end) {
                        r = push_region(&next, (struct dp_region) { .start = pos, .end = range->end });
                        if (r < 0)
                                goto fail;
                }
        }

        if (next.nr > l->max_nr_regions)
                merge_regions(&next, l, 0);
        r = ensure_min(&next, l);
        if (r < 0)
                goto fail;
        add_missing_cuts(&next);
        set_reindex(&next);
        next.nr_at_last_split = s->nr_at_last_split;

        dp_region_set_done(s);
        *s = next;
        return 0;

fail:
        dp_region_set_done(&next);
        return r;
}

int dp_region_set_check(const struct dp_region_set *s) {
        if (!s || s->nr == 0 || !s->regions || !s->starts || s->nr > s->cap || s->last_hit >= s->nr)
                return -EUCLEAN;

        for (size_t i = 0; i < s->nr; i++) {
                const struct dp_region *reg = &s->regions[i];

                if (reg->start >= reg->end)
                        return -EUCLEAN;
                if ((reg->start | reg->end) & (DP_PAGE_SIZE - 1))
                        return -EUCLEAN;
                if (s->starts[i] != reg->start)
                        return -EUCLEAN;
                if (i > 0 && reg->start < s->regions[i - 1].end)
                        return -EUCLEAN;
        }
        if (s->start != s->regions[0].start || s->end != s->regions[s->nr - 1].end)
                return -EUCLEAN;
        return 0;
}

void dp_region_set_add_age(struct dp_region_set *set, uint64_t n) {
        for (size_t i = 0; n && i < set->nr; i++)
                set->regions[i].age = dp_region_age_add(set->regions[i].age, n);
}
