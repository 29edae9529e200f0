/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Lock-free single-producer/single-consumer queue of struct dp_sample, one per
 * CPU: the CPU's ring reader produces, the region tracker consumes.
 *
 * head and tail are free-running 64-bit counters (they never wrap in practice)
 * and a slot index is counter & mask.  head - tail is the occupancy.
 *
 * Memory ordering:
 *   - The producer writes slots, then store-releases head (dp_spsc_publish).
 *     The consumer load-acquires head, so every slot below it is fully
 *     written when the consumer reads it.
 *   - The consumer reads slots, then store-releases tail (dp_spsc_consume).
 *     The producer load-acquires tail, so it never overwrites a slot that is
 *     still being read.
 *   - Each side keeps a private copy of the other side's index and reloads
 *     it only when the copy says full (producer) or empty (consumer); in the
 *     steady state each side touches the other's cache line once per batch.
 *
 * Each side's private fields, each published index and the read-only fields
 * have a cache line of their own.  The published indices are deliberately not
 * on the private lines: a consumer polling an empty queue would otherwise pull
 * the producer's line away on every poll and stall each per-sample write to
 * head_pending (measured with bench/bench-spsc: batched throughput rose by
 * 60-80% when they were split).  struct dp_spsc is therefore cache-line aligned:
 * embed it in static or automatic storage, or allocate it with
 * aligned_alloc()/posix_memalign() (or use dp_spsc_new()); dp_spsc_init()
 * refuses a misaligned object.
 *
 * Exactly one thread may call the producer functions and exactly one thread
 * the consumer functions.  Nothing here locks, allocates or enters the kernel
 * except dp_spsc_init/new/destroy/free.
 */

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "sample.h"

#define DP_SPSC_CAPACITY_MAX (UINT64_C(1) << 28)

struct dp_spsc {
        /* Producer-private line: written per sample, never read by the consumer. */
        uint64_t head_pending DP_ALIGNED_CACHELINE; /* next slot to fill; committed up to here */
        uint64_t head_published;                    /* producer's copy of head */
        uint64_t tail_cache;                        /* producer's copy of tail */

        /* Written by the producer once per batch, polled by the consumer. */
        _Atomic uint64_t head DP_ALIGNED_CACHELINE;

        /* Consumer-private line. */
        uint64_t tail_private DP_ALIGNED_CACHELINE; /* consumer's copy of tail */
        uint64_t head_cache;                        /* consumer's copy of head */

        /* Written by the consumer once per batch, read by the producer when full. */
        _Atomic uint64_t tail DP_ALIGNED_CACHELINE;

        /* Read-only after init. */
        uint64_t mask DP_ALIGNED_CACHELINE;         /* capacity - 1 */
        struct dp_sample *slots;                    /* cache-line aligned */
};

/* @capacity must be a power of two in [2, DP_SPSC_CAPACITY_MAX].  Returns
 * -EINVAL for a bad capacity or a misaligned @q, -ENOMEM if the slots cannot
 * be allocated.  The slots are zeroed, which also pre-faults them so the hot
 * path takes no page faults. */
int dp_spsc_init(struct dp_spsc *q, size_t capacity);
/* Frees the slots; safe to call twice, and on a zeroed struct. */
void dp_spsc_destroy(struct dp_spsc *q);

/* Allocates a correctly aligned queue and initializes it. */
int dp_spsc_new(size_t capacity, struct dp_spsc **ret);
/* Destroys and frees a queue from dp_spsc_new(); NULL is fine. */
void dp_spsc_free(struct dp_spsc *q);

static inline size_t dp_spsc_capacity(const struct dp_spsc *q) {
        return (size_t) q->mask + 1;
}

/* ---- Producer side ---- */

/* The next free slot, to be filled in place and then dp_spsc_commit()ed, or
 * NULL when the queue is full.  Reserving again without a commit returns the
 * same slot. */
static inline struct dp_sample *dp_spsc_reserve(struct dp_spsc *q) {
        uint64_t pos = q->head_pending;

        if (dp_unlikely(pos - q->tail_cache > q->mask)) {
                q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire);
                if (pos - q->tail_cache > q->mask)
                        return NULL;
        }
        return &q->slots[pos & q->mask];
}

/* Adds the reserved slot to the pending batch; the consumer sees it only after
 * dp_spsc_publish().  Must follow a successful dp_spsc_reserve(). */
static inline void dp_spsc_commit(struct dp_spsc *q) {
        q->head_pending++;
}

/* Makes every committed slot visible to the consumer. */
static inline void dp_spsc_publish(struct dp_spsc *q) {
        /* Skipping a no-op store leaves the consumer's copy of the line valid. */
        if (q->head_published != q->head_pending) {
                q->head_published = q->head_pending;
                atomic_store_explicit(&q->head, q->head_pending, memory_order_release);
        }
}

/* Copies @s into the queue as a pending (unpublished) sample.  Returns 0, or
 * -ENOBUFS when full, in which case nothing changed. */
static inline int dp_spsc_push(struct dp_spsc *q, const struct dp_sample *s) {
        struct dp_sample *slot = dp_spsc_reserve(q);

        if (dp_unlikely(!slot))
                return -ENOBUFS;
        *slot = *s;
        dp_spsc_commit(q);
        return 0;
}

/* Copies as many of the @n samples at @samples as fit, as pending samples, and
 * returns how many that was (0 when full).  Filling a local batch and handing
 * it over here is faster than writing slots one by one: whole cache lines are
 * written at once, so far fewer stores wait for the consumer's copies of those
 * lines to be invalidated. */
static inline size_t dp_spsc_push_many(struct dp_spsc *q, const struct dp_sample *samples, size_t n) {
        uint64_t pos = q->head_pending, capacity = q->mask + 1, room, index, first_part;

        room = capacity - (pos - q->tail_cache);
        if (room < n) {
                q->tail_cache = atomic_load_explicit(&q->tail, memory_order_acquire);
                room = capacity - (pos - q->tail_cache);
        }
        n = (size_t) DP_MIN((uint64_t) n, room);
        if (n == 0)
                return 0;

        index = pos & q->mask;
        first_part = DP_MIN((uint64_t) n, capacity - index);
        memcpy(&q->slots[index], samples, first_part * sizeof(*samples));
        if (n > first_part)
                memcpy(q->slots, samples + first_part, (n - first_part) * sizeof(*samples));
        q->head_pending = pos + n;
        return n;
}

/* Occupancy including pending samples, as the producer sees it.  May lag
 * behind the consumer, i.e. over-estimate, by what it consumed since; reads
 * the line the consumer publishes tail on, so call it once per batch. */
static inline size_t dp_spsc_depth_producer(const struct dp_spsc *q) {
        return (size_t) (q->head_pending - atomic_load_explicit(&q->tail, memory_order_relaxed));
}

/* ---- Consumer side ---- */

/* Sets *first to the oldest published sample and returns how many published
 * samples follow it contiguously (up to the end of the slot array); 0 and
 * *first = NULL when empty.  The samples stay valid until dp_spsc_consume(). */
static inline size_t dp_spsc_peek(struct dp_spsc *q, const struct dp_sample **first) {
        uint64_t tail = q->tail_private;
        uint64_t avail = q->head_cache - tail;
        uint64_t index, contiguous;

        if (avail == 0) {
                q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire);
                avail = q->head_cache - tail;
                if (avail == 0) {
                        *first = NULL;
                        return 0;
                }
        }

        index = tail & q->mask;
        contiguous = q->mask + 1 - index;
        *first = &q->slots[index];
        return (size_t) DP_MIN(avail, contiguous);
}

/* How many samples the producer has published since the queue began, as the
 * consumer sees it now: two calls apart give the queue's intake meanwhile,
 * whatever the consumer took.  Reads the line the producer publishes head on:
 * once per batch, not per sample. */
static inline uint64_t dp_spsc_published_consumer(struct dp_spsc *q) {
        q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire);
        return q->head_cache;
}

/* Occupancy now, as the consumer sees it (published samples only); for the
 * consumer's thread only.  Reads the line the producer publishes head on:
 * once per batch, not per sample. */
static inline size_t dp_spsc_depth_consumer(struct dp_spsc *q) {
        return (size_t) (dp_spsc_published_consumer(q) - q->tail_private);
}

/* Releases the @n oldest samples to the producer.  @n is clamped to what the
 * consumer has seen published, so a caller bug cannot hand out unwritten
 * slots or slots the producer still owns. */
static inline void dp_spsc_consume(struct dp_spsc *q, size_t n) {
        uint64_t tail = q->tail_private;
        uint64_t seen = q->head_cache - tail;

        if (n > seen)
                n = (size_t) seen;
        if (n > 0) {
                q->tail_private = tail + n;
                atomic_store_explicit(&q->tail, tail + n, memory_order_release);
        }
}

/* Copies up to @max published samples into @out, across the wrap point, and
 * consumes them.  Returns the number copied. */
static inline size_t dp_spsc_pop(struct dp_spsc *q, struct dp_sample *out, size_t max) {
        uint64_t tail = q->tail_private;
        uint64_t avail = q->head_cache - tail;
        uint64_t index, first_part;
        size_t n;

        if (avail < max) {
                q->head_cache = atomic_load_explicit(&q->head, memory_order_acquire);
                avail = q->head_cache - tail;
        }
        n = (size_t) DP_MIN(avail, (uint64_t) max);
        if (n == 0)
                return 0;

        index = tail & q->mask;
        first_part = DP_MIN((uint64_t) n, q->mask + 1 - index);
        memcpy(out, &q->slots[index], first_part * sizeof(*out));
        if (n > first_part)
                memcpy(out + first_part, q->slots, (n - first_part) * sizeof(*out));

        q->tail_private = tail + n;
        atomic_store_explicit(&q->tail, tail + n, memory_order_release);
        return n;
}
