/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One CPU's channel: everything its reader thread and the tracker thread
 * share, and nothing else.  The reader produces into the SPSC queue and
 * writes the wake fd when the queue passes half full; the tracker consumes
 * and sleeps on the other end of that fd; each publishes its counters into
 * the CPU's stats once per batch, where the main loop reads them.  Neither
 * thread sees the other's struct.
 *
 * The manager owns the channels, one per configured CPU, for the daemon's
 * whole life: a CPU that fails or goes offline keeps its queue and counters.
 * Tests and benchmarks build channels directly, without samplers.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "source.h"
#include "spsc.h"

struct channel {
        int cpu;
        /* The source the CPU samples with (the tracker's probe label); may be NULL. */
        const struct dp_source *source;
        /* Produced by the CPU's reader, consumed by the tracker; NULL when it
         * could not be allocated. */
        struct dp_spsc *queue;
        /* The consumer's eventfd, written by the producer when the queue passes
         * half full or the consumer sleeps idle (channel_wake_if_needed());
         * -1 without a consumer. */
        atomic_int wake_fd;
        /* Set by the consumer before a sleep with nothing to do, so that the
         * first batch after a quiet spell wakes it instead of waiting out
         * the sleep; cleared by whoever wakes it. */
        atomic_bool consumer_idle;
        /* How long the producer may now go between two drains of its ring,
         * in ms (0: not said, the configured poll interval): the consumer
         * waits that long before it closes an aggregation. */
        atomic_uint poll_ms;
        /* The longest the consumer lets it go, in ms (0: as long as it likes):
         * while a queue fills fast, samples cannot wait long for a slow one;
         * while somebody looks at the view, it is not to be long out of date. */
        atomic_uint poll_cap_ms;
        /* The producer's eventfd, written by the consumer when it caps the
         * poll below the producer's current sleep, so that the cap holds from
         * now rather than from the producer's next wake-up; -1: none (the
         * cap then waits for that wake-up). */
        int poke_fd;
        /* Each owner's counters (dp_counters_publish()) and the CPU's state.
         * Cache-line aligned, which makes struct channel so too. */
        struct dp_cpu_stats stats;
};

/* @n channels without queues (cpu -1, no consumer, counters zero), cache-line
 * aligned; NULL when out of memory.  Free with channels_free(). */
struct channel *channels_new(size_t n);

/* Gives @c its CPU, source, a queue of @queue_capacity samples and, when an
 * eventfd can be had, its poke fd. */
int channel_open(struct channel *c, int cpu, const struct dp_source *source, size_t queue_capacity);

/* Frees every queue and the array; NULL is fine.  Only once neither side
 * runs any more. */
void channels_free(struct channel *channels, size_t n);

/* Consumer side: the eventfd to write when the queue passes half full; -1
 * for none, before the consumer closes it.  Set before any producer runs. */
void channel_set_wake_fd(struct channel *c, int fd);

/* Producer side, after each batch: wakes the consumer when the queue is past
 * half full, or when it sleeps idle and the batch brought samples (a test
 * or two, no syscall, otherwise). */
void channel_wake_if_needed(struct channel *c);

/* Consumer side: whether it may sleep idle now.  Marks every channel idle,
 * then looks at the queues once more: true when all are empty, so that a
 * batch pushed meanwhile cannot go unnoticed; false (and the marks cleared)
 * otherwise. */
bool channels_mark_idle(struct channel *channels, size_t n);

/* Consumer side, on waking: the marks cleared. */
void channels_clear_idle(struct channel *channels, size_t n);

/* Producer side: the longest it may now go between two drains. */
static inline void channel_set_poll_ms(struct channel *c, uint32_t ms) {
        atomic_store_explicit(&c->poll_ms, ms, memory_order_relaxed);
}

/* Producer side: its poll interval within what the consumer lets it. */
static inline uint32_t channel_capped_poll_ms(const struct channel *c, uint32_t ms) {
        uint32_t cap = atomic_load_explicit(&c->poll_cap_ms, memory_order_relaxed);

        return cap && ms > cap ? cap : ms;
}

/* Consumer side: every channel's cap (0: none); a producer sleeping longer
 * than a new cap is poked awake. */
void channels_cap_poll_ms(struct channel *channels, size_t n, uint32_t cap_ms);

/* Consumer side: the longest and the shortest poll interval any running
 * reader has said, at least @floor_ms; @floor_ms when none has said one. */
void channels_poll_span(const struct channel *channels, size_t n, uint32_t floor_ms, uint32_t *ret_longest,
                        uint32_t *ret_shortest);
