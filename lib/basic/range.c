/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>

#include "macro.h"
#include "range.h"

static int range_compare(const void *a, const void *b) {
        const struct dp_range *x = a, *y = b;

        if (x->start != y->start)
                return x->start < y->start ? -1 : 1;
        if (x->end != y->end)
                return x->end < y->end ? -1 : 1;
        return 0;
}

void dp_ranges_sort(struct dp_range *ranges, size_t n) {
        if (n > 1)
                qsort(ranges, n, sizeof(*ranges), range_compare);
}

int dp_ranges_coalesce(struct dp_range *ranges, size_t n, size_t *ret_n) {
        size_t out = 0;

        if (n > 0 && !ranges)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (ranges[i].start > ranges[i].end)
                        return -EINVAL;

        dp_ranges_sort(ranges, n);

        for (size_t i = 0; i < n; i++) {
                if (ranges[i].start == ranges[i].end)
                        continue;
                if (out > 0 && ranges[i].start <= ranges[out - 1].end) {
                        ranges[out - 1].end = DP_MAX(ranges[out - 1].end, ranges[i].end);
                        continue;
                }
                ranges[out++] = ranges[i];
        }

        *ret_n = out;
        return 0;
}

int dp_ranges_page_align(struct dp_range *ranges, size_t n, size_t *ret_n) {
        const uint64_t last_boundary = UINT64_MAX & DP_PAGE_MASK;

        if (n > 0 && !ranges)
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (ranges[i].start > ranges[i].end)
                        return -EINVAL;

        for (size_t i = 0; i < n; i++) {
                struct dp_range *r = &ranges[i];

                if (r->start == r->end)
                        continue;       /* stays empty, coalesce drops it */
                r->start &= DP_PAGE_MASK;
                r->end = r->end > last_boundary ? last_boundary : (r->end + DP_PAGE_SIZE - 1) & DP_PAGE_MASK;
                if (r->start >= r->end)
                        r->end = r->start; /* only possible within the clamped last page */
        }

        return dp_ranges_coalesce(ranges, n, ret_n);
}

bool dp_ranges_are_sorted_disjoint(const struct dp_range *ranges, size_t n) {
        for (size_t i = 0; i < n; i++) {
                if (ranges[i].start >= ranges[i].end)
                        return false;
                if (i > 0 && ranges[i].start < ranges[i - 1].end)
                        return false;
        }
        return true;
}

struct gap {
        uint64_t size;
        size_t index;   /* the gap between ranges[index] and ranges[index + 1] */
};

static int gap_compare(const void *a, const void *b) {
        const struct gap *x = a, *y = b;

        if (x->size != y->size)
                return x->size < y->size ? -1 : 1;
        return x->index < y->index ? -1 : x->index > y->index;
}

int dp_ranges_fit(struct dp_range *ranges, size_t n, size_t max, size_t *ret_n) {
        _cleanup_free_ struct gap *gaps = NULL;
        _cleanup_free_ bool *bridged = NULL;
        size_t out = 0;

        if (max == 0 || (n > 0 && !ranges))
                return -EINVAL;
        if (!dp_ranges_are_sorted_disjoint(ranges, n))
                return -EINVAL;
        if (n <= max) {
                *ret_n = n;
                return 0;
        }

        gaps = malloc((n - 1) * sizeof(*gaps));
        bridged = calloc(n - 1, sizeof(*bridged));
        if (!gaps || !bridged)
                return -ENOMEM;

        for (size_t i = 0; i + 1 < n; i++)
                gaps[i] = (struct gap) { .size = ranges[i + 1].start - ranges[i].end, .index = i };
        qsort(gaps, n - 1, sizeof(*gaps), gap_compare);
        for (size_t i = 0; i < n - max; i++)
                bridged[gaps[i].index] = true;

        /* Each bridged gap folds the next range into the current one. */
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && bridged[i - 1])
                        ranges[out - 1].end = ranges[i].end;
                else
                        ranges[out++] = ranges[i];
        }

        *ret_n = out;
        return 0;
}

uint64_t dp_ranges_total_size(const struct dp_range *ranges, size_t n) {
        uint64_t total = 0;

        for (size_t i = 0; i < n; i++)
                total += dp_range_size(&ranges[i]);
        return total;
}
