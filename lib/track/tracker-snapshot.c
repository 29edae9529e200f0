/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Snapshots of the tracker's regions and sampled granules, for readers on
 * other threads, and the hottest regions of a snapshot. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "tracker-internal.h"

static int snapshot_target_compare(const void *a, const void *b) {
        const struct dp_snapshot_target *x = a, *y = b;

        return x->tgid < y->tgid ? -1 : x->tgid > y->tgid;
}

/* Room for @nr_targets, @nr_regions and @nr_granules; on -ENOMEM the
 * contents are as they were (an array may have grown). */
static int snapshot_reserve(struct dp_tracker_snapshot *snap, size_t nr_targets, size_t nr_regions,
                            size_t nr_granules) {
        if (nr_granules > snap->granules_cap) {
                struct dp_snapshot_granule *p = reallocarray(snap->granules, nr_granules, sizeof(*p));

                if (!p)
                        return -ENOMEM;
                snap->granules = p;
                snap->granules_cap = nr_granules;
        }
        if (nr_regions > snap->regions_cap) {
                size_t cap = DP_MAX(nr_regions, snap->regions_cap * 2);
                struct dp_snapshot_region *p = reallocarray(snap->regions, cap, sizeof(*p));

                if (!p)
                        return -ENOMEM;
                snap->regions = p;
                snap->regions_cap = cap;
        }
        if (nr_targets > snap->targets_cap) {
                size_t cap = DP_MAX(nr_targets, snap->targets_cap * 2);
                struct dp_snapshot_target *p = reallocarray(snap->targets, cap, sizeof(*p));

                if (!p)
                        return -ENOMEM;
                snap->targets = p;
                snap->targets_cap = cap;
        }
        return 0;
}

/* The sketch's granules, sorted by tgid and address, each target given its
 * run of them (granules of removed targets are left unreferenced). */
static void snapshot_granules(const struct dp_tracker *t, struct dp_tracker_snapshot *snap) {
        struct dp_sketch_entry *e = (struct dp_sketch_entry *) snap->granules;
        size_t n, ti = 0;

        /* The entries are exported into the granule array and converted in
         * place: both are 16 bytes, and entry i is read before granule i is
         * written.  Both are sorted by tgid, so each target's run is found
         * on the way (the targets, just made, have none yet). */
        _Static_assert(sizeof(struct dp_sketch_entry) == sizeof(struct dp_snapshot_granule), "same size");
        n = dp_sketch_export(&t->sketch, e);
        for (size_t i = 0; i < n; i++) {
                struct dp_sketch_entry x;
                uint32_t tgid;

                memcpy(&x, &e[i], sizeof(x));
                snap->granules[i] = (struct dp_snapshot_granule) {
                        .start = dp_sketch_key_start(x.key),
                        .weight = x.weight,
                        .interval = x.interval,
                };
                tgid = dp_sketch_key_tgid(x.key);
                while (ti < snap->nr_targets && snap->targets[ti].tgid < tgid)
                        ti++;
                if (ti < snap->nr_targets && snap->targets[ti].tgid == tgid &&
                    snap->targets[ti].nr_granules++ == 0)
                        snap->targets[ti].first_granule = i;
        }
        snap->nr_granules = n;
}

int dp_tracker_snapshot(const struct dp_tracker *t, struct dp_tracker_snapshot *snap) {
        size_t pos = 0;
        int r;

        if (!t || !snap)
                return -EINVAL;
        r = snapshot_reserve(snap, t->nr_targets, dp_tracker_nr_regions(t), t->sketch.used);
        if (r < 0)
                return r;

        for (size_t i = 0; i < t->nr_targets; i++) {
                const struct dp_region_set *set = &t->targets[i]->set;
                uint64_t missed = t->nr_aggregations - t->targets[i]->aggregated_at;

                snap->targets[i] = (struct dp_snapshot_target) {
                        .tgid = t->targets[i]->tgid,
                        .start = set->start,
                        .end = set->end,
                        .nr_regions = set->nr,
                        .first_region = pos,
                        .misses = t->targets[i]->misses,
                        .sampled_since_ranges = t->targets[i]->sampled_aggr > t->targets[i]->ranges_aggr,
                };
                for (size_t k = 0; k < set->nr; k++) {
                        const struct dp_region *reg = &set->regions[k];

                        snap->regions[pos++] = (struct dp_snapshot_region) {
                                .start = reg->start,
                                .end = reg->end,
                                .last_nr_samples = reg->last_nr_samples,
                                .nr_samples = reg->nr_samples,
                                .last_nr_accesses = reg->last_nr_accesses,
                                .nr_accesses = reg->nr_accesses,
                                .age = dp_region_age_add(reg->age, missed),
                                .unknown = reg->unknown,
                        };
                }
        }
        snap->nr_targets = t->nr_targets;
        snap->nr_regions = pos;
        if (snap->nr_targets > 1)
                qsort(snap->targets, snap->nr_targets, sizeof(*snap->targets), snapshot_target_compare);
        snapshot_granules(t, snap);

        snap->epoch = t->epoch;
        snap->nr_aggregations = t->nr_aggregations;
        snap->max_nr_accesses = t->limits.max_nr_accesses;
        snap->sample_interval_ns = t->config.sample_interval_ns;
        snap->aggr_interval_ns = t->config.aggr_interval_ns;
        return 0;
}

int dp_tracker_snapshot_copy(const struct dp_tracker_snapshot *src, struct dp_tracker_snapshot *dst) {
        int r;

        if (!src || !dst)
                return -EINVAL;
        r = snapshot_reserve(dst, src->nr_targets, src->nr_regions, src->nr_granules);
        if (r < 0)
                return r;
        if (src->nr_granules)
                memcpy(dst->granules, src->granules, src->nr_granules * sizeof(*src->granules));
        dst->nr_granules = src->nr_granules;
        if (src->nr_targets)
                memcpy(dst->targets, src->targets, src->nr_targets * sizeof(*src->targets));
        if (src->nr_regions)
                memcpy(dst->regions, src->regions, src->nr_regions * sizeof(*src->regions));
        dst->nr_targets = src->nr_targets;
        dst->nr_regions = src->nr_regions;
        dst->epoch = src->epoch;
        dst->nr_aggregations = src->nr_aggregations;
        dst->max_nr_accesses = src->max_nr_accesses;
        dst->sample_interval_ns = src->sample_interval_ns;
        dst->aggr_interval_ns = src->aggr_interval_ns;
        return 0;
}

void dp_tracker_snapshot_free(struct dp_tracker_snapshot *snap) {
        if (!snap)
                return;
        free(snap->targets);
        free(snap->regions);
        free(snap->granules);
        *snap = (struct dp_tracker_snapshot) {};
}

/* > 0 if @a is hotter than @b. */
static int hotness_compare(const struct dp_hot_region *a, const struct dp_hot_region *b) {
        if (a->region.last_nr_accesses != b->region.last_nr_accesses)
                return a->region.last_nr_accesses > b->region.last_nr_accesses ? 1 : -1;
        if (a->region.last_nr_samples != b->region.last_nr_samples)
                return a->region.last_nr_samples > b->region.last_nr_samples ? 1 : -1;
        if (a->region.age != b->region.age)
                return a->region.age > b->region.age ? 1 : -1;
        if (a->tgid != b->tgid)
                return a->tgid < b->tgid ? 1 : -1;
        if (a->region.start != b->region.start)
                return a->region.start < b->region.start ? 1 : -1;
        return 0;
}

static int hottest_first(const void *a, const void *b) {
        return -hotness_compare(a, b);
}

/* Min-heap on hotness: the root is the coolest of the kept regions. */
static void heap_sift_down(struct dp_hot_region *heap, size_t n, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;

                if (l < n && hotness_compare(&heap[l], &heap[m]) < 0)
                        m = l;
                if (r < n && hotness_compare(&heap[r], &heap[m]) < 0)
                        m = r;
                if (m == i)
                        return;
                struct dp_hot_region tmp = heap[i];
                heap[i] = heap[m];
                heap[m] = tmp;
                i = m;
        }
}

static void heap_sift_up(struct dp_hot_region *heap, size_t i) {
        while (i > 0) {
                size_t parent = (i - 1) / 2;

                if (hotness_compare(&heap[i], &heap[parent]) >= 0)
                        return;
                struct dp_hot_region tmp = heap[i];
                heap[i] = heap[parent];
                heap[parent] = tmp;
                i = parent;
        }
}

size_t dp_snapshot_hottest(const struct dp_tracker_snapshot *snap, size_t n, struct dp_hot_region *out) {
        size_t kept = 0;

        if (!snap || !out || n == 0)
                return 0;

        for (size_t ti = 0; ti < snap->nr_targets; ti++) {
                const struct dp_snapshot_target *target = &snap->targets[ti];

                for (size_t k = 0; k < target->nr_regions; k++) {
                        struct dp_hot_region cand = {
                                .tgid = target->tgid,
                                .target_index = ti,
                                .region = snap->regions[target->first_region + k],
                        };

                        if (kept < n) {
                                out[kept] = cand;
                                heap_sift_up(out, kept++);
                        } else if (hotness_compare(&cand, &out[0]) > 0) {
                                out[0] = cand;
                                heap_sift_down(out, kept, 0);
                        }
                }
        }

        qsort(out, kept, sizeof(*out), hottest_first);
        return kept;
}
