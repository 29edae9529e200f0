/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Region hints for DAMON: what the PMU sees, reduced to a region layout that
 * DAMON can be given.  DAMON has no file through which userspace can set a
 * region's access count; what it does take is region boundaries.  So the
 * hint is a layout whose boundaries sit where the sampled access rate
 * changes: neighbouring tracker regions of similar rate are merged, and the
 * edges between hot and cold areas are kept.  DAMON then measures each
 * region itself, starting from boundaries that are already right.
 *
 * Everything here is pure: snapshots in, ranges and numbers out.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "damon-agree.h"
#include "damon-view.h"
#include "range.h"
#include "sketch.h"
#include "tracker.h"

/*
 * Builds the hint layout of one target from its snapshot @regions (sorted,
 * disjoint, as the tracker keeps them).  Touching neighbours whose access
 * rates (last_nr_accesses, size-weighted once merged) differ by at most a
 * tenth of @max_nr_accesses are merged; while more than @max_out regions
 * remain, the tolerance doubles, and once it exceeds the whole scale,
 * neighbours across gaps are merged pairwise too.  @out needs room for @n
 * ranges.  The result is sorted, disjoint and non-empty.  -EINVAL for an
 * empty or unsorted input or @max_out == 0, -ENOMEM.
 */
int dp_damon_hints_build(const struct dp_snapshot_region *regions, size_t n, uint32_t max_nr_accesses,
                         size_t max_out, struct dp_range *out, size_t *ret_n);

/*
 * Whether a new layout @b differs materially from the committed @a: some
 * boundary (a start or an end) of either is farther than @tolerance bytes
 * from every boundary of the other.  Moving by a page or two is not worth a
 * commit, which costs DAMON a sampling interval.
 */
bool dp_damon_hints_differ(const struct dp_range *a, size_t na, const struct dp_range *b, size_t nb,
                           uint64_t tolerance);

/*
 * The processes to hand to DAMON: up to @max targets of @snap with samples
 * in the last aggregation or the current one so far, most samples first
 * (ties: lower tgid).  Returns how many tgids were written to @out.
 */
size_t dp_damon_pick_targets(const struct dp_tracker_snapshot *snap, size_t max, uint32_t *out);

/* A region is hot when sampled in at least half of an aggregation's
 * sampling intervals. */
static inline bool dp_damon_region_is_hot(const struct dp_snapshot_region *r, uint32_t max_nr_accesses) {
        return r->last_nr_accesses > 0 && (uint64_t) r->last_nr_accesses * 2 >= max_nr_accesses;
}

/* Hot bytes per 10000 monitored bytes over the targets @tgids of @snap (all
 * targets when @n is 0); 0 when nothing is monitored. */
uint32_t dp_damon_hot_fraction(const struct dp_tracker_snapshot *snap, const uint32_t *tgids, size_t n);

/* The snapshot target with @tgid, or NULL. */
const struct dp_snapshot_target *dp_snapshot_find_target(const struct dp_tracker_snapshot *snap, uint32_t tgid);

/* What a hot range's granules must weigh together: four fresh samples.  A
 * stray sample or two (a thread's stack, an allocator's page) is not a hot
 * area; committing a boundary for it costs DAMON a region and the kdamond a
 * commit, and every pass would find another. */
#define DP_DAMON_HOT_MIN_WEIGHT (4 * DP_SKETCH_WEIGHT)

/*
 * The hint layout of one target from where its samples fall, exactly: of
 * its sampled granules @g (ascending), those weighing at least an eighth of
 * the 99th percentile are hot, but for those sampled once in a sweep (in the
 * same sampling interval as the granule next to them: a first touch, not
 * use); hot granules at most @max_gap bytes apart form one hot range, kept
 * if they weigh DP_DAMON_HOT_MIN_WEIGHT.  The ranges the sweeps touched
 * give their edges too, split at the hot ranges inside where those cover
 * less than a quarter of them.  While there are more than @max_out allows,
 * the closest are bridged.  The layout covers each of the @nc @cover ranges
 * whole (sorted, disjoint), those ranges clipped to them and the cold
 * ranges between: a commit sets DAMON's regions as given, and on Linux 6.12
 * it also restarts DAMON's own update of the address space
 * (damon_set_attrs()), so a layout that spanned the gaps between a
 * process's mappings would stay, in a few regions of terabytes that DAMON
 * needs seconds to split down to anything, as long as the hints come.
 * Where @max_out is below 3 * @nc, the narrowest gaps between the cover
 * ranges are bridged.  @out needs room for @max_out ranges.  -EINVAL for
 * bad arguments (@max_out < 3), -ENODATA when no granule lies inside,
 * -ENOMEM.
 */
int dp_damon_hints_from_granules(const struct dp_snapshot_granule *g, size_t n, const struct dp_range *cover,
                                 size_t nc, uint64_t max_gap, size_t max_out, struct dp_range *out,
                                 size_t *ret_n);

/* What DAMON's vaddr operations monitor of a process (its "three regions"):
 * the span of its tracker @regions without the two widest gaps between them
 * (dp_ranges_fit()).  Into @out; their count (1 to 3) in *@ret_n.  -EINVAL
 * for no regions, only empty ones or one whose start lies past its end,
 * -ENOMEM. */
int dp_damon_vaddr_cover(const struct dp_snapshot_region *regions, size_t n, struct dp_range out[static 3],
                         size_t *ret_n);

/* How many of the granules @now (ascending) lie farther than @gap from
 * every granule of @before (ascending): an area sampled that the granules
 * of an earlier snapshot did not know, such as a hot area that moved.  A
 * granule sampled again after it decayed lies among its old neighbours. */
size_t dp_granules_far_from(const struct dp_snapshot_granule *now, size_t n, const struct dp_snapshot_granule *before,
                            size_t m, uint64_t gap);

/* The sampled hot ranges themselves, as the layout above outlines them
 * (before fitting to a budget): into @out (room for @n); their count, 0
 * when none, or -ENOMEM. */
int dp_damon_sampled_hot(const struct dp_snapshot_granule *g, size_t n, uint64_t start, uint64_t end,
                         uint64_t max_gap, struct dp_range *out);

/*
 * What to commit when DAMON already has a layout: DAMON's own regions
 * @damon (one target's, ascending, as read back), split at each boundary of
 * the hint @hint (ascending) that DAMON lacks: one strictly inside a DAMON
 * region and farther than @tolerance from its edges.  The hint's outer
 * bounds and boundaries in gaps DAMON does not monitor are not added, so
 * DAMON keeps its finer split, its counts for every region left whole, and
 * its own view of the address space.  *@ret_added: boundaries added (0:
 * nothing worth a commit).  @out needs room for @nd + 2 * @nh.  -E2BIG if
 * the result would exceed @max_out regions (then commit the hint itself),
 * -EINVAL for unsorted input.
 */
int dp_damon_hints_merge(const struct dp_range *damon, size_t nd, const struct dp_range *hint, size_t nh,
                         uint64_t tolerance, size_t max_out, struct dp_range *out, size_t *ret_n,
                         size_t *ret_added);

/*
 * The @n-range layout @layout (sorted, disjoint) with every range cut into
 * cells where it lies inside one of the @na @areas (sorted, disjoint): at
 * each multiple of @cell strictly inside both, so that DAMON counts the
 * accesses of each cell apart and finds the hot ones within an aggregation
 * instead of splitting a wide region at random until it does.  The cell is
 * the smallest power of two from @min_cell up that keeps the result within
 * @max_out ranges.  @out needs room for @max_out.  -EINVAL for bad
 * arguments, -E2BIG when even the layout alone does not fit.
 */
int dp_damon_hints_grid(const struct dp_range *layout, size_t n, const struct dp_range *areas, size_t na,
                        uint64_t min_cell, size_t max_out, struct dp_range *out, size_t *ret_n);

/* How DAMON's regions of @pid among @rows (a read-back, as
 * dp_damon_view_build() joins it) agree with the ranges that @t's granules
 * in @snap call hot (dp_damon_sampled_hot() with @max_gap): what
 * damonctl damon shows.  -ENOMEM, or dp_damon_agree()'s errors. */
int dp_damon_target_agreement(const struct dp_damon_view_row *rows, size_t n, uint32_t pid,
                              const struct dp_tracker_snapshot *snap, const struct dp_snapshot_target *t,
                              uint64_t max_gap, struct dp_damon_agreement *ret);
