/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The tracker's state, shared by tracker.c (matching, counting, aggregation)
 * and tracker-snapshot.c (the snapshots readers take): private to the layer. */

#include "tracker.h"

/* Power of two above DP_TRACKER_UNKNOWN_MAX, so probing always finds a hole. */
#define UNKNOWN_SLOTS 128

struct dp_target {
        uint32_t tgid;
        size_t index;                   /* in dp_tracker.targets */
        struct dp_region_set set;
        /* Quiet targets age lazily: an aggregation that closes with no sample
         * of a target in it or in the two before is not applied to it (its
         * regions stand as they are, at no cost); the closes it missed are
         * added to its ages when it is sampled again, and to the ages shown
         * meanwhile. */
        uint64_t sampled_aggr;          /* nr_aggregations when it last matched a sample */
        uint64_t aggregated_at;         /* nr_aggregations after its last aggregation */
        uint64_t misses;                /* its samples outside its regions since its ranges were set */
        uint64_t ranges_aggr;           /* nr_aggregations when its ranges were set */
};

struct target_slot {
        uint32_t tgid;
        struct dp_target *target;       /* NULL: empty */
};

struct dp_tracker {
        /* Read or written per sample. */
        enum dp_tracker_mode mode;
        uint64_t epoch;
        uint64_t window_start_ns;       /* sample time at which the current aggregation began */
        uint64_t window_first_epoch;    /* epoch at which it began, for samples without a time */
        uint64_t interval_reciprocal;   /* 2^64 / sample_interval_ns, rounded up */
        uint32_t max_nr_accesses;
        uint64_t nr_aggregations;       /* a matched sample marks its target with it */
        struct dp_target *last_target;
        struct target_slot *slots;      /* open addressing, linear probing, load <= 1/2 */
        uint32_t slot_shift;            /* 32 - log2(number of slots) */
        size_t slot_mask;
        struct dp_target *paddr_target;
        uint32_t last_unknown;
        bool last_unknown_valid;
        const char *source;             /* for the sample probe */

        /* Unknown tgids, deduplicated. */
        uint32_t unknown[UNKNOWN_SLOTS];
        bool unknown_used[UNKNOWN_SLOTS];
        size_t nr_unknown;
        uint64_t unknown_dropped;

        /* Cold. */
        struct dp_target **targets;
        size_t nr_targets;
        struct dp_tracker_config config;
        struct dp_region_limits limits;
        struct dp_prng rng;
        bool clock_started;
        uint64_t next_sample_ns;
        uint64_t next_aggr_epoch;
        uint64_t split_failures;
        struct dp_sketch sketch;        /* where samples fall, exactly */
        bool keep_granules;             /* the sketch is fed (dp_tracker_keep_granules()) */
};
