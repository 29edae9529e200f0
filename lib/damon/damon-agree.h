/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * How well DAMON's hot regions agree with a reference hot set: the figures
 * of the value benchmark (DAMON's regions against the workload's true hot
 * set) and of damonctl damon (against the regions the PMU samples call
 * hot).  Pure: regions in, numbers out.
 *
 * A DAMON region is hot when its nr_accesses is at least half the highest
 * nr_accesses among the regions that overlap @window (and not 0): DAMON's
 * counts are relative to its own sampling, so only the ratio means anything.
 */

#include <stddef.h>
#include <stdint.h>

#include "damon-view.h"
#include "range.h"

struct dp_damon_agreement {
        uint64_t hot_bytes;             /* DAMON's hot bytes inside the window */
        uint64_t ref_bytes;             /* the reference set's bytes inside the window */
        uint64_t both_bytes;            /* hot in both */
        double precision;               /* both / hot; 0 when DAMON calls nothing hot */
        double recall;                  /* both / ref; 0 when the reference is empty */
        size_t chunks_found;            /* reference ranges with at least half their bytes hot in DAMON */
        size_t nr_chunks;               /* reference ranges inside the window */
        size_t nr_regions;              /* DAMON regions overlapping the window */
        uint32_t max_nr_accesses;       /* the highest count among them */
};

/*
 * @regions: DAMON's regions in any order (several targets may be mixed in:
 * pass only one target's, or a window only it maps).  @ref: the reference
 * hot set, sorted and disjoint.  Only bytes inside @window count.  -EINVAL
 * for an unsorted @ref or an empty window, -ENOMEM.
 */
int dp_damon_agree(const struct dp_damon_view_input *regions, size_t n, const struct dp_range *ref, size_t nr_ref,
                   struct dp_range window, struct dp_damon_agreement *ret);

/* The hot regions of @regions clipped to @window, sorted and coalesced, into
 * @out (room for @n); their count.  Same hotness rule as above. */
size_t dp_damon_hot_ranges(const struct dp_damon_view_input *regions, size_t n, struct dp_range window,
                           struct dp_range *out);
