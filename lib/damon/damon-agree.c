/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "damon-agree.h"
#include "macro.h"

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1) {
        uint64_t s = DP_MAX(a0, b0), e = DP_MIN(a1, b1);

        return e > s ? e - s : 0;
}

static uint32_t window_max(const struct dp_damon_view_input *regions, size_t n, struct dp_range w, size_t *nr) {
        uint32_t max = 0;

        *nr = 0;
        for (size_t i = 0; i < n; i++)
                if (overlap(regions[i].start, regions[i].end, w.start, w.end)) {
                        max = DP_MAX(max, regions[i].nr_accesses);
                        (*nr)++;
                }
        return max;
}

size_t dp_damon_hot_ranges(const struct dp_damon_view_input *regions, size_t n, struct dp_range window,
                           struct dp_range *out) {
        size_t nr, k = 0;
        uint32_t max = window_max(regions, n, window, &nr);

        if (max == 0)
                return 0;
        for (size_t i = 0; i < n; i++) {
                const struct dp_damon_view_input *r = &regions[i];

                if ((uint64_t) r->nr_accesses * 2 < max || !overlap(r->start, r->end, window.start, window.end))
                        continue;
                out[k++] = (struct dp_range) { DP_MAX(r->start, window.start), DP_MIN(r->end, window.end) };
        }
        (void) dp_ranges_coalesce(out, k, &k);  /* clipped ranges are never inverted */
        return k;
}

/* Bytes of [r) covered by the sorted, disjoint @hot, from *@j on (which
 * advances past ranges wholly below @r, as later @r lie higher still). */
static uint64_t covered(const struct dp_range *hot, size_t nh, size_t *j, struct dp_range r) {
        uint64_t sum = 0;

        while (*j < nh && hot[*j].end <= r.start)
                (*j)++;
        for (size_t k = *j; k < nh && hot[k].start < r.end; k++)
                sum += overlap(hot[k].start, hot[k].end, r.start, r.end);
        return sum;
}

int dp_damon_agree(const struct dp_damon_view_input *regions, size_t n, const struct dp_range *ref, size_t nr_ref,
                   struct dp_range window, struct dp_damon_agreement *ret) {
        _cleanup_free_ struct dp_range *hot = NULL;
        struct dp_damon_agreement a = {};
        size_t nh, j = 0;

        if (window.end <= window.start || (nr_ref > 0 && !dp_ranges_are_sorted_disjoint(ref, nr_ref)))
                return -EINVAL;
        hot = calloc(n ?: 1, sizeof(*hot));
        if (!hot)
                return -ENOMEM;
        a.max_nr_accesses = window_max(regions, n, window, &a.nr_regions);
        nh = dp_damon_hot_ranges(regions, n, window, hot);
        a.hot_bytes = dp_ranges_total_size(hot, nh);

        for (size_t i = 0; i < nr_ref; i++) {
                struct dp_range r = { DP_MAX(ref[i].start, window.start), DP_MIN(ref[i].end, window.end) };
                uint64_t both;

                if (r.end <= r.start)
                        continue;
                both = covered(hot, nh, &j, r);
                a.nr_chunks++;
                a.ref_bytes += r.end - r.start;
                a.both_bytes += both;
                if (both * 2 >= r.end - r.start)
                        a.chunks_found++;
        }
        a.precision = a.hot_bytes ? (double) a.both_bytes / (double) a.hot_bytes : 0;
        a.recall = a.ref_bytes ? (double) a.both_bytes / (double) a.ref_bytes : 0;
        *ret = a;
        return 0;
}
