/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "damon-hints.h"
#include "macro.h"

/* A hint region under construction: its rate is kept as a size-weighted sum
 * so that merging stays exact. */
struct hint {
        uint64_t start, end;
        uint64_t weighted;      /* sum of last_nr_accesses x bytes */
};

static uint64_t hint_rate(const struct hint *h) {
        return h->weighted / (h->end - h->start);
}

static uint64_t rate_distance(const struct hint *a, const struct hint *b) {
        uint64_t x = hint_rate(a), y = hint_rate(b);

        return x > y ? x - y : y - x;
}

static void hint_absorb(struct hint *into, const struct hint *next) {
        into->end = next->end;
        into->weighted += next->weighted;
}

/* One left-to-right pass merging each region into its predecessor while the
 * rates are within @tolerance (and, unless @across_gaps, the two touch). */
static size_t merge_similar(struct hint *h, size_t n, uint64_t tolerance, bool across_gaps) {
        size_t kept = 1;

        for (size_t i = 1; i < n; i++) {
                struct hint *last = &h[kept - 1];

                if ((across_gaps || last->end == h[i].start) && rate_distance(last, &h[i]) <= tolerance)
                        hint_absorb(last, &h[i]);
                else
                        h[kept++] = h[i];
        }
        return kept;
}

/* Halves the count by merging disjoint neighbour pairs, gaps or not, the
 * most similar pairs first being too costly to be worth it here: by now
 * every rate is within the tolerance anyway. */
static size_t merge_pairs(struct hint *h, size_t n, size_t target) {
        size_t kept = 0, i = 0;

        while (i < n) {
                h[kept] = h[i++];
                if (i < n && n - i + kept + 1 > target)
                        hint_absorb(&h[kept], &h[i++]);
                kept++;
        }
        return kept;
}

int dp_damon_hints_build(const struct dp_snapshot_region *regions, size_t n, uint32_t max_nr_accesses,
                         size_t max_out, struct dp_range *out, size_t *ret_n) {
        _cleanup_free_ struct hint *h = NULL;
        uint64_t tolerance;

        if (n == 0 || max_out == 0 || !regions || !out)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (regions[i].start >= regions[i].end || (i > 0 && regions[i].start < regions[i - 1].end))
                        return -EINVAL;

        h = calloc(n, sizeof(*h));
        if (!h)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                h[i] = (struct hint) {
                        .start = regions[i].start,
                        .end = regions[i].end,
                        .weighted = (uint64_t) regions[i].last_nr_accesses * (regions[i].end - regions[i].start),
                };

        tolerance = DP_MAX(max_nr_accesses / 10, 1u);
        n = merge_similar(h, n, tolerance, false);
        while (n > max_out && tolerance <= max_nr_accesses) {
                tolerance *= 2;
                n = merge_similar(h, n, tolerance, false);
        }
        while (n > max_out)
                n = merge_pairs(h, n, max_out);

        for (size_t i = 0; i < n; i++)
                out[i] = (struct dp_range) { .start = h[i].start, .end = h[i].end };
        *ret_n = n;
        return 0;
}

/* Whether every boundary of @a lies within @tolerance of a boundary of @b. */
static bool boundaries_covered(const struct dp_range *a, size_t na, const struct dp_range *b, size_t nb,
                               uint64_t tolerance) {
        size_t j = 0;

        /* Boundaries in order: start0, end0, start1, end1, ...; both lists ascend. */
        for (size_t i = 0; i < 2 * na; i++) {
                uint64_t x = i & 1 ? a[i / 2].end : a[i / 2].start;
                bool near = false;

                while (j < 2 * nb) {
                        uint64_t y = j & 1 ? b[j / 2].end : b[j / 2].start;

                        if (y + tolerance < x) {
                                j++;
                                continue;
                        }
                        near = y <= x + tolerance;
                        break;
                }
                if (!near)
                        return false;
        }
        return true;
}

bool dp_damon_hints_differ(const struct dp_range *a, size_t na, const struct dp_range *b, size_t nb,
                           uint64_t tolerance) {
        if (na == 0 || nb == 0)
                return na != nb;
        return !boundaries_covered(a, na, b, nb, tolerance) || !boundaries_covered(b, nb, a, na, tolerance);
}

/* The last aggregation's samples and the current one's so far: before a
 * kdamond exists, a reader polls every hint interval (500 ms) and brings one
 * aggregation (100 ms) all its samples at once.  A pass that looked between
 * that aggregation's drain and its close saw no last samples (for 10 s on
 * end in a traced reclaim guest run), and the kdamond came late or never. */
static uint64_t target_samples(const struct dp_tracker_snapshot *snap, const struct dp_snapshot_target *t) {
        uint64_t sum = 0;

        for (size_t k = 0; k < t->nr_regions; k++)
                sum += snap->regions[t->first_region + k].last_nr_samples +
                       snap->regions[t->first_region + k].nr_samples;
        return sum;
}

size_t dp_damon_pick_targets(const struct dp_tracker_snapshot *snap, size_t max, uint32_t *out) {
        _cleanup_free_ uint64_t *chosen_samples = NULL;
        size_t kept = 0;

        if (!snap || max == 0)
                return 0;
        chosen_samples = calloc(max, sizeof(*chosen_samples));
        if (!chosen_samples)
                return 0;

        /* Targets are few (MaxTargets); an insertion into a short sorted list does. */
        for (size_t i = 0; i < snap->nr_targets; i++) {
                uint64_t samples = target_samples(snap, &snap->targets[i]);
                size_t pos = kept;

                if (samples == 0)
                        continue;
                /* Equal counts keep the lower tgid first: targets come sorted by tgid. */
                while (pos > 0 && chosen_samples[pos - 1] < samples)
                        pos--;
                if (pos >= max)
                        continue;
                if (kept < max)
                        kept++;
                for (size_t k = kept - 1; k > pos; k--) {
                        chosen_samples[k] = chosen_samples[k - 1];
                        out[k] = out[k - 1];
                }
                chosen_samples[pos] = samples;
                out[pos] = snap->targets[i].tgid;
        }
        return kept;
}

const struct dp_snapshot_target *dp_snapshot_find_target(const struct dp_tracker_snapshot *snap, uint32_t tgid) {
        size_t lo = 0, hi = snap ? snap->nr_targets : 0;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;

                if (snap->targets[mid].tgid == tgid)
                        return &snap->targets[mid];
                if (snap->targets[mid].tgid < tgid)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static void add_target_bytes(const struct dp_tracker_snapshot *snap, const struct dp_snapshot_target *t,
                             uint64_t *hot, uint64_t *total) {
        for (size_t k = 0; k < t->nr_regions; k++) {
                const struct dp_snapshot_region *r = &snap->regions[t->first_region + k];

                *total += r->end - r->start;
                if (dp_damon_region_is_hot(r, snap->max_nr_accesses))
                        *hot += r->end - r->start;
        }
}

uint32_t dp_damon_hot_fraction(const struct dp_tracker_snapshot *snap, const uint32_t *tgids, size_t n) {
        uint64_t hot = 0, total = 0;

        if (!snap)
                return 0;
        if (n == 0)
                for (size_t i = 0; i < snap->nr_targets; i++)
                        add_target_bytes(snap, &snap->targets[i], &hot, &total);
        for (size_t i = 0; i < n; i++) {
                const struct dp_snapshot_target *t = dp_snapshot_find_target(snap, tgids[i]);

                if (t)
                        add_target_bytes(snap, t, &hot, &total);
        }
        if (total == 0)
                return 0;
        return (uint32_t) ((unsigned __int128) hot * 10000 / total);
}

static int weight_compare(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

        return x < y ? -1 : x > y;
}

/* An eighth of the 99th percentile's weight: one granule sampled in a burst
 * does not make the rest look cold, and a hot area of a few percent of the
 * sampled granules (a window in a span touched once) still sets the scale. */
static int hot_threshold(const struct dp_snapshot_granule *g, size_t n, uint32_t *ret) {
        _cleanup_free_ uint32_t *w = calloc(n, sizeof(*w));

        if (!w)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                w[i] = g[i].weight;
        qsort(w, n, sizeof(*w), weight_compare);
        *ret = DP_MAX(w[n * 99 / 100] / 8, 1u);
        return 0;
}

/* Granule @i was sampled once, in the same sampling interval as a granule
 * next to it: part of a sweep, such as a first touch faulting in every page
 * of an area (the page-fault control samples each fault), not a sign of
 * use.  A hot area's granules are sampled at different times, and one swept
 * again weighs more than a sample. */
static bool swept_once(const struct dp_snapshot_granule *g, size_t n, size_t i) {
        if (g[i].weight > DP_SKETCH_WEIGHT)
                return false;
        return (i > 0 && g[i - 1].start + DP_SKETCH_GRANULE == g[i].start && g[i - 1].interval == g[i].interval) ||
               (i + 1 < n && g[i].start + DP_SKETCH_GRANULE == g[i + 1].start && g[i + 1].interval == g[i].interval);
}

/* Hot granules inside [start, end), clustered: a range per run with gaps of
 * at most @max_gap, kept if its granules weigh DP_DAMON_HOT_MIN_WEIGHT
 * together; granules swept once count only if @with_swept.  Returns how
 * many were written to @hot (room for @n). */
static size_t cluster_hot(const struct dp_snapshot_granule *g, size_t n, uint32_t threshold, uint64_t start,
                          uint64_t end, uint64_t max_gap, bool with_swept, struct dp_range *hot) {
        uint64_t weight = 0;    /* of the last range */
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                uint64_t s = DP_MAX(g[i].start, start), e = DP_MIN(g[i].start + DP_SKETCH_GRANULE, end);

                if (g[i].weight < threshold || e <= s || (!with_swept && swept_once(g, n, i)))
                        continue;
                if (k > 0 && s <= hot[k - 1].end + max_gap) {
                        hot[k - 1].end = e;
                        weight += g[i].weight;
                        continue;
                }
                if (k > 0 && weight < DP_DAMON_HOT_MIN_WEIGHT)
                        k--;    /* too few samples to be more than noise */
                hot[k++] = (struct dp_range) { s, e };
                weight = g[i].weight;
        }
        if (k > 0 && weight < DP_DAMON_HOT_MIN_WEIGHT)
                k--;
        return k;
}

size_t dp_granules_far_from(const struct dp_snapshot_granule *now, size_t n, const struct dp_snapshot_granule *before,
                            size_t m, uint64_t gap) {
        size_t far = 0, j = 0;

        for (size_t i = 0; i < n; i++) {
                /* The first of @before not below now[i] by more than @gap. */
                while (j < m && before[j].start + gap < now[i].start)
                        j++;
                if (j == m || before[j].start > now[i].start + gap)
                        far++;
        }
        return far;
}

int dp_damon_sampled_hot(const struct dp_snapshot_granule *g, size_t n, uint64_t start, uint64_t end,
                         uint64_t max_gap, struct dp_range *out) {
        uint32_t threshold;
        int r;

        if (n == 0 || end <= start)
                return 0;
        r = hot_threshold(g, n, &threshold);
        if (r < 0)
                return r;
        return (int) cluster_hot(g, n, threshold, start, end, max_gap, false, out);
}

/* The @nt touched ranges, in order, into @out (room for 2 * @nu + @nt);
 * their count.  One is split at the edges of the @nu used ranges inside it
 * only when they cover less than a quarter of it: a window in an area
 * touched whole, not most of a chunk (whose edges say all, and whose used
 * part's edges move with every sample).  The used ranges are sorted,
 * disjoint and each inside a touched one (it has the same granules and
 * more). */
static size_t overlay(const struct dp_range *used, size_t nu, const struct dp_range *touched, size_t nt,
                      struct dp_range *out) {
        size_t i = 0, k = 0;

        for (size_t j = 0; j < nt; j++) {
                uint64_t len = touched[j].end - touched[j].start, used_len = 0, at = touched[j].start;
                size_t first = i;

                for (; i < nu && used[i].start < touched[j].end; i++)
                        used_len += used[i].end - used[i].start;
                if (used_len == 0 || 4 * used_len >= len) {
                        out[k++] = touched[j];
                        continue;
                }
                for (size_t u = first; u < i; u++) {
                        if (used[u].start > at)
                                out[k++] = (struct dp_range) { at, used[u].start };
                        out[k++] = used[u];
                        at = used[u].end;
                }
                if (at < touched[j].end)
                        out[k++] = (struct dp_range) { at, touched[j].end };
        }
        return k;
}

/* Appends @r to @out (room for @max) unless empty. */
static int emit(struct dp_range *out, size_t max, size_t *o, uint64_t start, uint64_t end) {
        if (end <= start)
                return 0;
        if (*o >= max)
                return -E2BIG;
        out[(*o)++] = (struct dp_range) { start, end };
        return 0;
}

/* The @k sorted, disjoint @ranges within each of the @nc @cover ranges,
 * clipped to it, with the cold ranges between them: into @out (room for
 * @max_out); their count in *@ret_n. */
static int lay_out(const struct dp_range *ranges, size_t k, const struct dp_range *cover, size_t nc,
                   size_t max_out, struct dp_range *out, size_t *ret_n) {
        size_t o = 0, i = 0;
        int r;

        for (size_t c = 0; c < nc; c++) {
                uint64_t at = cover[c].start;

                while (i < k && ranges[i].end <= cover[c].start)
                        i++;
                for (size_t j = i; j < k && ranges[j].start < cover[c].end; j++) {
                        uint64_t s = DP_MAX(ranges[j].start, at), e = DP_MIN(ranges[j].end, cover[c].end);

                        if ((r = emit(out, max_out, &o, at, s)) < 0 || (r = emit(out, max_out, &o, s, e)) < 0)
                                return r;
                        at = DP_MAX(at, e);
                }
                if ((r = emit(out, max_out, &o, at, cover[c].end)) < 0)
                        return r;
        }
        *ret_n = o;
        return 0;
}

int dp_damon_hints_from_granules(const struct dp_snapshot_granule *g, size_t n, const struct dp_range *cover,
                                 size_t nc, uint64_t max_gap, size_t max_out, struct dp_range *out,
                                 size_t *ret_n) {
        _cleanup_free_ struct dp_range *used = NULL, *touched = NULL, *ranges = NULL, *within = NULL;
        struct dp_range hull;
        uint32_t threshold;
        size_t nu, nt, k;
        int r;

        /* No granule yet (the snapshot's array not even made) is no data,
         * not a bad call: a failure would make the first commits back off. */
        if (!out || max_out < 3 || !cover || nc == 0 || !dp_ranges_are_sorted_disjoint(cover, nc) ||
            (n > 0 && !g))
                return -EINVAL;
        if (n == 0)
                return -ENODATA;
        /* Each cover range adds at most a cold range before and after its
         * hot ones, and splits one that crosses its edge: a small budget
         * bridges the narrowest gaps between them. */
        within = malloc(nc * sizeof(*within));
        if (!within)
                return -ENOMEM;
        memcpy(within, cover, nc * sizeof(*within));
        r = dp_ranges_fit(within, nc, max_out / 3, &nc);
        if (r < 0)
                return r;
        hull = (struct dp_range) { within[0].start, within[nc - 1].end };
        r = hot_threshold(g, n, &threshold);
        if (r < 0)
                return r;
        used = calloc(n, sizeof(*used));
        touched = calloc(n, sizeof(*touched));
        ranges = calloc(3 * n, sizeof(*ranges));
        if (!used || !touched || !ranges)
                return -ENOMEM;
        /* What is used, and apart from it what a sweep touched: a first
         * touch outlines where memory is (the chunks of a sparse mapping),
         * not which of it is used (a window inside an area touched whole). */
        nu = cluster_hot(g, n, threshold, hull.start, hull.end, max_gap, false, used);
        nt = cluster_hot(g, n, threshold, hull.start, hull.end, max_gap, true, touched);
        k = overlay(used, nu, touched, nt, ranges);
        if (k == 0)
                return -ENODATA;
        r = dp_ranges_fit(ranges, k, (max_out + 2 - 3 * nc) / 2, &k);
        if (r < 0)
                return r;
        return lay_out(ranges, k, within, nc, max_out, out, ret_n);
}

/* The cells grow no wider than this: past it a cut would not help DAMON. */
#define GRID_CELL_MAX (UINT64_C(1) << 40)

/* How many cuts at multiples of @cell (0: none) lie strictly inside both
 * [@s, @e) and one of the @na @areas; with @out, the pieces of [@s, @e)
 * appended at *@o (room checked by the caller's count). */
static size_t cut_cells(uint64_t s, uint64_t e, const struct dp_range *areas, size_t na, uint64_t cell,
                        struct dp_range *out, size_t *o) {
        uint64_t from = s;
        size_t cuts = 0;

        for (size_t a = 0; cell > 0 && a < na && areas[a].start < e; a++) {
                uint64_t lo = DP_MAX(areas[a].start, s), hi = DP_MIN(areas[a].end, e);

                /* at > lo: no multiple wrapped past the top of the space. */
                for (uint64_t at = lo - lo % cell + cell; at > lo && at < hi; at += cell) {
                        if (out)
                                out[(*o)++] = (struct dp_range) { from, at };
                        from = at;
                        cuts++;
                }
        }
        if (out)
                out[(*o)++] = (struct dp_range) { from, e };
        return cuts;
}

int dp_damon_hints_grid(const struct dp_range *layout, size_t n, const struct dp_range *areas, size_t na,
                        uint64_t min_cell, size_t max_out, struct dp_range *out, size_t *ret_n) {
        uint64_t cell;
        size_t o = 0;

        if (!layout || n == 0 || (na > 0 && !areas) || min_cell == 0 || (min_cell & (min_cell - 1)) ||
            min_cell > GRID_CELL_MAX || !out || !ret_n || !dp_ranges_are_sorted_disjoint(layout, n) ||
            !dp_ranges_are_sorted_disjoint(areas, na))
                return -EINVAL;
        if (n > max_out)
                return -E2BIG;
        for (cell = min_cell; cell <= GRID_CELL_MAX; cell *= 2) {
                size_t total = n;

                for (size_t i = 0; i < n && total <= max_out; i++)
                        total += cut_cells(layout[i].start, layout[i].end, areas, na, cell, NULL, NULL);
                if (total <= max_out)
                        break;
        }
        if (cell > GRID_CELL_MAX)
                cell = 0;       /* the layout as it is */
        for (size_t i = 0; i < n; i++)
                (void) cut_cells(layout[i].start, layout[i].end, areas, na, cell, out, &o);
        *ret_n = o;
        return 0;
}

int dp_damon_vaddr_cover(const struct dp_snapshot_region *regions, size_t n, struct dp_range out[static 3],
                         size_t *ret_n) {
        _cleanup_free_ struct dp_range *spans = NULL;
        size_t k;
        int r;

        if (n == 0 || !regions || !out || !ret_n)
                return -EINVAL;
        spans = malloc(n * sizeof(*spans));
        if (!spans)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                spans[i] = (struct dp_range) { regions[i].start, regions[i].end };
        /* Touching regions joined, then every gap but the two widest bridged. */
        r = dp_ranges_coalesce(spans, n, &k);
        if (r < 0)
                return r;
        if (k == 0)
                return -EINVAL;
        r = dp_ranges_fit(spans, k, 3, &k);
        if (r < 0)
                return r;
        memcpy(out, spans, k * sizeof(*out));
        *ret_n = k;
        return 0;
}

/* Adds @b as a split of the region being copied (*@cur, from @edge on) if
 * it lies strictly inside, away from its edges. */
static bool want_split(uint64_t cut_from, uint64_t region_end, uint64_t b, uint64_t tolerance) {
        return b > cut_from + tolerance && b + tolerance < region_end;
}

int dp_damon_hints_merge(const struct dp_range *damon, size_t nd, const struct dp_range *hint, size_t nh,
                         uint64_t tolerance, size_t max_out, struct dp_range *out, size_t *ret_n,
                         size_t *ret_added) {
        size_t o = 0, added = 0, j = 0;

        if ((nd && !dp_ranges_are_sorted_disjoint(damon, nd)) || (nh && !dp_ranges_are_sorted_disjoint(hint, nh)))
                return -EINVAL;
        for (size_t i = 0; i < nd; i++) {
                uint64_t from = damon[i].start;

                /* The hint's boundaries in order: start0, end0, start1, ...; the
                 * first start and the last end are its outer bounds. */
                for (; j < 2 * nh; j++) {
                        uint64_t b = j & 1 ? hint[j / 2].end : hint[j / 2].start;

                        if (j == 0 || j == 2 * nh - 1 || b <= from)
                                continue;
                        if (b >= damon[i].end)
                                break;
                        if (!want_split(from, damon[i].end, b, tolerance))
                                continue;
                        if (o + 1 >= max_out)
                                return -E2BIG;
                        out[o++] = (struct dp_range) { from, b };
                        from = b;
                        added++;
                }
                if (o >= max_out)
                        return -E2BIG;
                out[o++] = (struct dp_range) { from, damon[i].end };
        }
        *ret_n = o;
        *ret_added = added;
        return 0;
}

int dp_damon_target_agreement(const struct dp_damon_view_row *rows, size_t n, uint32_t pid,
                              const struct dp_tracker_snapshot *snap, const struct dp_snapshot_target *t,
                              uint64_t max_gap, struct dp_damon_agreement *ret) {
        _cleanup_free_ struct dp_damon_view_input *in = calloc(n ?: 1, sizeof(*in));
        _cleanup_free_ struct dp_range *hot = calloc(t->nr_granules ?: 1, sizeof(*hot));
        size_t k = 0;
        int nh;

        if (!in || !hot)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (rows[i].pid == pid)
                        in[k++] = (struct dp_damon_view_input) {
                                .start = rows[i].start, .end = rows[i].end, .nr_accesses = rows[i].damon_nr_accesses,
                        };
        nh = dp_damon_sampled_hot(&snap->granules[t->first_granule], t->nr_granules, t->start, t->end, max_gap, hot);
        if (nh < 0)
                return nh;
        return dp_damon_agree(in, k, hot, (size_t) nh, (struct dp_range) { t->start, t->end }, ret);
}
