/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "damon-hints.h"
#include "damon-view.h"

/* The tracker's target for a DAMON target: by tgid; the physical space is the
 * tracker's only target in paddr mode. */
static const struct dp_snapshot_target *tracker_target(const struct dp_tracker_snapshot *snap, uint32_t pid) {
        if (pid == 0)
                return snap->nr_targets == 1 ? &snap->targets[0] : NULL;
        return dp_snapshot_find_target(snap, pid);
}

static void add_pmu_view(const struct dp_tracker_snapshot *snap, const struct dp_snapshot_target *t,
                         struct dp_damon_view_row *row) {
        unsigned __int128 weighted = 0;
        uint64_t covered = 0, samples = 0;
        bool known = true;

        row->pmu_samples_known = true;
        if (!t)
                return;
        /* Regions are sorted; DAMON's regions are few, so a linear walk does. */
        for (size_t k = 0; k < t->nr_regions; k++) {
                const struct dp_snapshot_region *r = &snap->regions[t->first_region + k];
                uint64_t lo, hi, overlap;

                if (r->end <= row->start)
                        continue;
                if (r->start >= row->end)
                        break;
                lo = r->start > row->start ? r->start : row->start;
                hi = r->end < row->end ? r->end : row->end;
                overlap = hi - lo;
                covered += overlap;
                weighted += (unsigned __int128) r->last_nr_accesses * overlap;
                /* A count, never a share: a tracker region across the bounds
                 * with samples leaves how many fell inside unknown. */
                if (r->unknown & DP_REGION_LAST_SAMPLES_UNKNOWN)
                        known = false;
                else if (overlap == r->end - r->start)
                        samples += r->last_nr_samples;
                else if (r->last_nr_samples)
                        known = false;
        }
        row->pmu_bytes = covered;
        row->pmu_samples = known ? samples : 0;
        row->pmu_samples_known = known;
        /* Uncovered bytes count as unaccessed: the PMU saw nothing there. */
        row->pmu_nr_accesses = (uint32_t) (weighted / (row->end - row->start));
}

size_t dp_damon_view_build(const struct dp_damon_view_input *in, size_t n, const uint32_t *target_pids,
                           size_t n_targets, const struct dp_tracker_snapshot *snap, struct dp_damon_view_row *out) {
        const struct dp_snapshot_target *t = NULL;
        size_t target = 0, kept = 0;

        if (n_targets == 0 || !snap)
                return 0;
        t = tracker_target(snap, target_pids[0]);
        for (size_t i = 0; i < n; i++) {
                if (in[i].start >= in[i].end)
                        continue;       /* DAMON never reports these; skip rather than divide by zero */
                if (i > 0 && in[i].start < in[i - 1].end) {
                        if (++target >= n_targets)
                                break;
                        t = tracker_target(snap, target_pids[target]);
                }
                out[kept] = (struct dp_damon_view_row) {
                        .pid = target_pids[target],
                        .start = in[i].start,
                        .end = in[i].end,
                        .damon_nr_accesses = in[i].nr_accesses,
                        .damon_age = in[i].age,
                };
                add_pmu_view(snap, t, &out[kept]);
                kept++;
        }
        return kept;
}
