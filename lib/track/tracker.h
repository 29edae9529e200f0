/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The region tracker: monitoring targets (processes by tgid, or one
 * physical address space), each with DAMON-like adaptive regions, and the
 * per-sample matcher that attributes samples to regions.
 *
 * Threading: a tracker belongs to one thread (the tracker thread).  Other
 * threads read its state only through snapshots that this thread takes.
 *
 * Time: dp_tracker_tick() advances a sampling "epoch" once per elapsed
 * sampling interval; a region counts at most one access per epoch, and
 * every aggr_interval/sample_interval epochs an aggregation merges, rolls
 * over and splits the regions.  If ticks come late, the epoch catches up
 * by the number of whole intervals elapsed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "range.h"
#include "region.h"
#include "sample.h"
#include "sketch.h"

enum dp_tracker_mode {
        DP_TRACKER_VADDR,       /* targets are processes, matched by sample->pid and ->vaddr */
        DP_TRACKER_PADDR,       /* one target, matched by sample->paddr (DP_SAMPLE_PHYS_VALID) */
};

struct dp_tracker_config {
        enum dp_tracker_mode mode;
        uint32_t min_nr_regions;        /* per target; default 10 */
        uint32_t max_nr_regions;        /* per target; default 1000 */
        uint64_t sample_interval_ns;    /* default 5 ms */
        uint64_t aggr_interval_ns;      /* default 100 ms; a multiple of the sample interval is best */
        uint32_t max_targets;           /* default 1024; paddr mode has at most one */
        uint64_t seed;                  /* for the random split points */
        const char *source;             /* the samples' source, e.g. "pagefault", for the sample probe
                                         * (probes.h); static, NULL: "unknown" */
};

/* Capacity of the set of unknown tgids awaiting dp_tracker_take_unknown(). */
#define DP_TRACKER_UNKNOWN_MAX 96

struct dp_tracker;

void dp_tracker_config_init(struct dp_tracker_config *c);

/* -EINVAL for an inconsistent config (min 0 or > max, a zero interval,
 * aggr < sample, max_targets 0 or > 1M), -ENOMEM. */
int dp_tracker_new(const struct dp_tracker_config *c, struct dp_tracker **ret);
void dp_tracker_free(struct dp_tracker *t);

static inline void dp_tracker_freep(struct dp_tracker **t) {
        dp_tracker_free(*t);
}
#define _cleanup_tracker_ __attribute__((cleanup(dp_tracker_freep)))

/*
 * Adds a target with initial @ranges (see dp_region_set_init() for how they
 * are normalised).  In paddr mode @tgid is just a handle (use 0).
 * -EEXIST if present (or, in paddr mode, if a target exists), -ENOSPC at
 * max_targets, -EINVAL for empty or inverted ranges, -ENOMEM.
 */
int dp_tracker_add_target(struct dp_tracker *t, uint32_t tgid, const struct dp_range *ranges, size_t n);

/* Re-bounds a target to a fresh read of its ranges, keeping the history of
 * overlapping regions.  -ENOENT, -EINVAL, -ENOMEM (target unchanged). */
int dp_tracker_set_ranges(struct dp_tracker *t, uint32_t tgid, const struct dp_range *ranges, size_t n);

/* -ENOENT if there is no such target. */
int dp_tracker_remove_target(struct dp_tracker *t, uint32_t tgid);

bool dp_tracker_has_target(const struct dp_tracker *t, uint32_t tgid);
size_t dp_tracker_nr_targets(const struct dp_tracker *t);
size_t dp_tracker_nr_regions(const struct dp_tracker *t);

/* The live regions of a target, valid until the next tick or target change.
 * A quiet target's ages lack the closes it missed (dp_tracker_snapshot()
 * has them). */
int dp_tracker_target_regions(const struct dp_tracker *t, uint32_t tgid,
                              const struct dp_region **ret_regions, size_t *ret_n);

/*
 * Hot path.  Attributes one sample and increments exactly one of
 * c->v[DP_C_MATCH], [DP_C_MISS_TGID], [DP_C_MISS_REGION], [DP_C_MISS_BOUND];
 * on a match also counts the sample in the region, and the region's first
 * sample in the current epoch bumps nr_accesses and c->v[DP_C_UPDATE].
 * In paddr mode a sample without DP_SAMPLE_PHYS_VALID is a bound miss.
 * No allocation, lock, syscall or division.
 */
void dp_tracker_account(struct dp_tracker *t, const struct dp_sample *s, struct dp_counter_values *c);
void dp_tracker_account_batch(struct dp_tracker *t, const struct dp_sample *s, size_t n,
                              struct dp_counter_values *c);

/*
 * How many of @n samples, oldest first, belong to the aggregations open now
 * (the current one and the next): from the first sample of the one after on,
 * they should wait, in their queue, for the tick that opens it, so that each
 * still counts in its own sampling interval.  (dp_tracker_account() files a
 * sample from further ahead under the next aggregation's last interval.)
 * All @n before the first tick; a sample without a time, or timed after
 * @now_ns (the samples' clock now: CLOCK_MONOTONIC live), never waits.  One
 * comparison when none waits.
 */
size_t dp_tracker_open_prefix(const struct dp_tracker *t, const struct dp_sample *s, size_t n, uint64_t now_ns);

/* What dp_tracker_account() would file @s under (DP_C_MATCH or a DP_C_MISS_*),
 * without counting anything: for showing sampled records to people. */
enum dp_counter dp_tracker_classify(struct dp_tracker *t, const struct dp_sample *s);

/*
 * Moves up to @max of the tgids that missed (no target, vaddr mode) since
 * the last call into @out, each once, and forgets them.  Returns how many.
 * While max_targets targets exist no tgids are recorded.
 */
size_t dp_tracker_take_unknown(struct dp_tracker *t, uint32_t *out, size_t max);
/* Unknown tgids not recorded because the set was full. */
uint64_t dp_tracker_unknown_dropped(const struct dp_tracker *t);

/*
 * Advances time.  The first call starts the clock.  Returns true if an
 * aggregation happened (then the regions changed: re-read them).
 */
bool dp_tracker_tick(struct dp_tracker *t, uint64_t now_ns);

/* aggr_interval / sample_interval: the largest possible nr_accesses. */
uint32_t dp_tracker_max_nr_accesses(const struct dp_tracker *t);
uint64_t dp_tracker_epoch(const struct dp_tracker *t);
uint64_t dp_tracker_nr_aggregations(const struct dp_tracker *t);
/* When the current aggregation began, in the ticks' time: right after an
 * aggregation, the end of the one just completed.  0 before the first tick. */
uint64_t dp_tracker_window_start_ns(const struct dp_tracker *t);
/* The earliest time, in the ticks' time, at which dp_tracker_tick() closes
 * the current aggregation: what a caller that ticks only when something is
 * due sleeps until.  0 before the first tick. */
uint64_t dp_tracker_aggregation_due_ns(const struct dp_tracker *t);
/* Aggregations where a target could not grow its arrays to split. */
uint64_t dp_tracker_split_failures(const struct dp_tracker *t);
/* Samples the granule sketch had no room for. */
uint64_t dp_tracker_sketch_dropped(const struct dp_tracker *t);

/* Whether samples are also counted into the granule sketch (sketch.h).  Only
 * the DAMON hints and the agreement figures read it, so it is off until
 * whoever gives hints turns it on: it takes 2 MiB, a sample costs a hash
 * probe into it, and it a walk every DP_SKETCH_DECAY_AGGREGATIONS
 * aggregations.  Turning it off frees it, every granule forgotten.  0, or
 * -ENOMEM (left off). */
int dp_tracker_keep_granules(struct dp_tracker *t, bool keep);

/* ---- Snapshots: copies for other threads ---- */

struct dp_snapshot_region {
        uint64_t start;
        uint64_t end;
        uint64_t last_nr_samples;
        uint64_t nr_samples;            /* so far in the current aggregation */
        uint32_t last_nr_accesses;
        uint32_t nr_accesses;           /* so far in the current aggregation */
        uint32_t age;
        uint32_t unknown;               /* enum dp_region_unknown: counts that must not be shown */
};

struct dp_snapshot_target {
        uint32_t tgid;
        uint64_t start;                 /* bounds */
        uint64_t end;
        size_t nr_regions;
        size_t first_region;            /* index into dp_tracker_snapshot.regions */
        size_t nr_granules;             /* the target's sampled granules (sketch.h), ascending */
        size_t first_granule;           /* index into dp_tracker_snapshot.granules */
        /* Its samples that fell outside its regions since its ranges were
         * last set (dp_tracker_set_ranges()): its address space has grown
         * where it is sampled, its maps are worth a read. */
        uint64_t misses;
        /* Whether it was sampled in an aggregation after the one its ranges
         * were set in: a target that was not needs no fresh maps. */
        bool sampled_since_ranges;
};

/* A sampled 16 KiB granule (sketch.h) of its target's run: its start,
 * decaying weight (one fresh sample weighing DP_SKETCH_WEIGHT) and the
 * sampling interval it was last counted in (its low 32 bits). */
struct dp_snapshot_granule {
        uint64_t start;
        uint32_t weight;
        uint32_t interval;
};

/* Zero-initialise before first use; reused (and grown) across calls. */
struct dp_tracker_snapshot {
        struct dp_snapshot_target *targets;     /* sorted by tgid */
        size_t nr_targets;
        size_t targets_cap;
        struct dp_snapshot_region *regions;
        size_t nr_regions;
        size_t regions_cap;
        struct dp_snapshot_granule *granules;   /* by target (sorted by tgid), then start */
        size_t nr_granules;
        size_t granules_cap;
        uint64_t epoch;
        uint64_t nr_aggregations;
        uint32_t max_nr_accesses;
        uint64_t sample_interval_ns;
        uint64_t aggr_interval_ns;
};

/* -ENOMEM leaves the previous contents. */
int dp_tracker_snapshot(const struct dp_tracker *t, struct dp_tracker_snapshot *snap);
/* Copies @src into @dst (grown as needed); -ENOMEM leaves @dst as it was. */
int dp_tracker_snapshot_copy(const struct dp_tracker_snapshot *src, struct dp_tracker_snapshot *dst);
void dp_tracker_snapshot_free(struct dp_tracker_snapshot *snap);

struct dp_hot_region {
        uint32_t tgid;
        size_t target_index;            /* into snap->targets */
        struct dp_snapshot_region region;
};

/*
 * The @n hottest regions, hottest first: by last_nr_accesses, then
 * last_nr_samples, then age (ties: lower tgid, lower address).  Fills @out
 * (room for @n) and returns how many were written.
 */
size_t dp_snapshot_hottest(const struct dp_tracker_snapshot *snap, size_t n, struct dp_hot_region *out);
