/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Half-open address ranges [start, end) and the few set operations the
 * region tracker needs on them: sorting, coalescing, and squeezing a long
 * list of ranges into at most N by bridging the smallest gaps (DAMON's
 * "three regions" idea for vaddr, generalised to any N).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_PAGE_SIZE UINT64_C(4096)
#define DP_PAGE_MASK (~(DP_PAGE_SIZE - 1))

struct dp_range {
        uint64_t start;
        uint64_t end;   /* exclusive */
};

static inline uint64_t dp_range_size(const struct dp_range *r) {
        return r->end - r->start;
}

static inline bool dp_range_contains(const struct dp_range *r, uint64_t addr) {
        return addr >= r->start && addr < r->end;
}

/* Sorts by start, then end. */
void dp_ranges_sort(struct dp_range *ranges, size_t n);

/* Sorts, drops empty ranges, and merges overlapping or touching ones, in
 * place.  Returns -EINVAL (array untouched) if a range has start > end. */
int dp_ranges_coalesce(struct dp_range *ranges, size_t n, size_t *ret_n);

/* Widens every range to page boundaries (start down, end up; an end in the
 * last page of the address space is clamped to the last page boundary),
 * then coalesces. */
int dp_ranges_page_align(struct dp_range *ranges, size_t n, size_t *ret_n);

/* Input must be sorted and disjoint (as dp_ranges_coalesce leaves it), else
 * -EINVAL.  If n > max, bridges the n - max smallest gaps (ties: the lower
 * gap first) so that exactly max ranges remain; in place.  max must be >= 1.
 * Returns -ENOMEM if the gap table cannot be allocated. */
int dp_ranges_fit(struct dp_range *ranges, size_t n, size_t max, size_t *ret_n);

/* Sum of sizes. */
uint64_t dp_ranges_total_size(const struct dp_range *ranges, size_t n);

/* True if sorted, non-empty and pairwise disjoint (touching allowed). */
bool dp_ranges_are_sorted_disjoint(const struct dp_range *ranges, size_t n);
