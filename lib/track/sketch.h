/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where samples fall, exactly: a sparse, decaying count of sampled 16 KiB
 * granules per target (four pages: a hot area's edges to within 12 KiB;
 * 65536 slots hold 1 GiB of sampled memory), at most one a sampling
 * interval (dp_sketch_add()).  The adaptive regions find a hot area only as fast
 * as their random splits stumble on it; every sample already carries its
 * exact address, so the granules show hot areas, however small and far
 * apart, as soon as they are sampled.  The DAMON hints are built from them
 * (dp_damon_hints_from_granules()).
 *
 * A fixed table of DP_SKETCH_SLOTS entries (open addressing, linear probing
 * of at most DP_SKETCH_PROBE slots): adding is a hash, a few compares and an
 * add, no allocation; a sample that finds no slot is dropped and counted.
 * Every DP_SKETCH_DECAY_AGGREGATIONS aggregations the weights halve (less
 * one): a granule sampled once is forgotten after eight halvings, about
 * three seconds at 100 ms aggregations; the table is rebuilt then, without
 * the forgotten ones (a rebuild walks the whole table, hence not every
 * aggregation).
 */

#include <stddef.h>
#include <stdint.h>

#define DP_SKETCH_SHIFT 14                      /* 16 KiB granules */
#define DP_SKETCH_GRANULE (UINT64_C(1) << DP_SKETCH_SHIFT)
#define DP_SKETCH_BITS 16
#define DP_SKETCH_SLOTS (1u << DP_SKETCH_BITS)
#define DP_SKETCH_PROBE 32u
#define DP_SKETCH_WEIGHT 256u                   /* one sample's weight, fresh */
#define DP_SKETCH_DECAY_AGGREGATIONS 4u

struct dp_sketch_entry {
        uint64_t key;                           /* tgid << 42 | granule index; DP_SKETCH_EMPTY if free */
        uint32_t weight;
        uint32_t interval;                      /* the sampling interval last counted (its low bits) */
};
#define DP_SKETCH_EMPTY UINT64_MAX

struct dp_sketch {
        struct dp_sketch_entry *slots, *spare;  /* spare: the rebuild's */
        size_t used;
        uint64_t dropped;                       /* samples that found no slot */
};

int dp_sketch_init(struct dp_sketch *s);
void dp_sketch_done(struct dp_sketch *s);

/* A tgid below 2^22 (the kernel's PID_MAX_LIMIT) and a granule index of 42
 * bits: addresses below 2^56, five-level paging's user space included. */
#define DP_SKETCH_INDEX_BITS 42
#define DP_SKETCH_INDEX_MASK ((UINT64_C(1) << DP_SKETCH_INDEX_BITS) - 1)

static inline uint64_t dp_sketch_key(uint32_t tgid, uint64_t addr) {
        return (uint64_t) tgid << DP_SKETCH_INDEX_BITS | ((addr >> DP_SKETCH_SHIFT) & DP_SKETCH_INDEX_MASK);
}

static inline uint32_t dp_sketch_key_tgid(uint64_t key) {
        return (uint32_t) (key >> DP_SKETCH_INDEX_BITS);
}

static inline uint64_t dp_sketch_key_start(uint64_t key) {
        return (key & DP_SKETCH_INDEX_MASK) << DP_SKETCH_SHIFT;
}

/* Hot path: one sample of @tgid at @addr, in sampling interval @interval.
 * As DAMON counts at most one access of a region per sampling interval, a
 * granule gains at most one sample's weight per interval: a burst, such as
 * the first touch faulting in every page of an area, weighs as one sample,
 * not as many, and does not outweigh the memory in steady use for seconds. */
static inline void dp_sketch_add(struct dp_sketch *s, uint32_t tgid, uint64_t addr, uint64_t interval) {
        uint64_t key = dp_sketch_key(tgid, addr);
        uint32_t h = (uint32_t) ((key * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - DP_SKETCH_BITS));

        for (uint32_t i = 0; i < DP_SKETCH_PROBE; i++) {
                struct dp_sketch_entry *e = &s->slots[(h + i) & (DP_SKETCH_SLOTS - 1)];

                if (e->key == key) {
                        if (e->interval == (uint32_t) interval)
                                return;
                        e->interval = (uint32_t) interval;
                        e->weight = e->weight > UINT32_MAX - DP_SKETCH_WEIGHT ? UINT32_MAX : e->weight + DP_SKETCH_WEIGHT;
                        return;
                }
                if (e->key == DP_SKETCH_EMPTY) {
                        *e = (struct dp_sketch_entry) { key, DP_SKETCH_WEIGHT, (uint32_t) interval };
                        s->used++;
                        return;
                }
        }
        s->dropped++;
}

/* Every DP_SKETCH_DECAY_AGGREGATIONS aggregations: every weight halves,
 * forgotten granules go. */
void dp_sketch_decay(struct dp_sketch *s);

/* Forgets every granule of @tgid (a target removed). */
void dp_sketch_forget(struct dp_sketch *s, uint32_t tgid);

/* The live entries, sorted by key (so by tgid, then address), into @out
 * (room for DP_SKETCH_SLOTS); their count. */
size_t dp_sketch_export(const struct dp_sketch *s, struct dp_sketch_entry *out);
