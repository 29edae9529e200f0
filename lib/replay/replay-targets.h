/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Private to lib/replay/replay.c: which 2 MiB chunks (DP_REPLAY_CHUNK_SHIFT) each
 * process's valid samples touched, and the targets that grow by them when a
 * replay runs without a plan.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay.h"
#include "tracker.h"

/* Where the bounds of @chunk end: the next chunk's start, but the last
 * chunk of the address space (garbage, e.g. a physical address of all ones)
 * ends at UINT64_MAX, where a half-open range must. */
static inline uint64_t replay_chunk_end(uint64_t chunk) {
        uint64_t start = chunk << DP_REPLAY_CHUNK_SHIFT;

        return start > UINT64_MAX - (UINT64_C(1) << DP_REPLAY_CHUNK_SHIFT) ? UINT64_MAX :
               start + (UINT64_C(1) << DP_REPLAY_CHUNK_SHIFT);
}

struct replay_chunk {
        uint32_t pid;           /* 0 in paddr mode */
        uint64_t chunk;         /* address >> DP_REPLAY_CHUNK_SHIFT */
        uint64_t samples;
};

/* The distinct (pid, chunk) pairs with their sample counts: open addressing
 * in a power-of-two table at most half full; a slot without samples is
 * empty.  Zero-initialise. */
struct replay_chunk_set {
        struct replay_chunk *slots;
        size_t n, mask;
        size_t last;            /* the slot hit last: samples come in runs */
};

/* Counts a sample of @pid in @chunk: 1 when the pair is new, 0 when known,
 * -ENOMEM. */
int replay_chunk_set_add(struct replay_chunk_set *set, uint32_t pid, uint64_t chunk);
/* Moves the pairs to the front of set->slots, in no order; returns how many. */
size_t replay_chunk_set_pack(struct replay_chunk_set *set);
void replay_chunk_set_done(struct replay_chunk_set *set);

struct replay_grown_target;

/* Targets grown as a run meets their samples.  Zero-initialise. */
struct replay_growth {
        struct replay_chunk_set seen;
        struct replay_grown_target *slots;      /* by pid, open addressing */
        size_t n, mask;
        struct dp_range *ranges;                /* scratch */
        size_t ranges_cap;
};

/* A valid sample of @pid at @addr (virtual, or physical with pid 0) is about
 * to be accounted: when its chunk is new, the target grows by it, or is added
 * with it (none is past max_targets: its samples stay miss_tgid).  0 or a
 * negative errno from the tracker. */
int replay_growth_note(struct replay_growth *g, struct dp_tracker *tracker, uint32_t pid, uint64_t addr);
void replay_growth_done(struct replay_growth *g);
