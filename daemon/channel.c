/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "channel.h"

struct channel *channels_new(size_t n) {
        struct channel *channels;

        channels = aligned_alloc(DP_CACHELINE, (n ?: 1) * sizeof(*channels));
        if (!channels)
                return NULL;
        memset(channels, 0, (n ?: 1) * sizeof(*channels));
        for (size_t i = 0; i < n; i++) {
                channels[i].cpu = -1;
                atomic_init(&channels[i].wake_fd, -1);
                channels[i].poke_fd = -1;
                dp_cpu_stats_init(&channels[i].stats);
        }
        return channels;
}

int channel_open(struct channel *c, int cpu, const struct dp_source *source, size_t queue_capacity) {
        c->cpu = cpu;
        c->source = source;
        if (c->poke_fd < 0)
                c->poke_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        return dp_spsc_new(queue_capacity, &c->queue);
}

void channels_free(struct channel *channels, size_t n) {
        for (size_t i = 0; channels && i < n; i++) {
                dp_spsc_free(channels[i].queue);
                if (channels[i].poke_fd >= 0)
                        close(channels[i].poke_fd);
        }
        free(channels);
}

void channel_set_wake_fd(struct channel *c, int fd) {
        atomic_store_explicit(&c->wake_fd, fd, memory_order_relaxed);
}

void channel_wake_if_needed(struct channel *c) {
        int fd = atomic_load_explicit(&c->wake_fd, memory_order_relaxed);
        size_t depth;

        if (fd < 0 || !c->queue)
                return;
        depth = dp_spsc_depth_producer(c->queue);
        if (depth > dp_spsc_capacity(c->queue) / 2) {
                (void) eventfd_write(fd, 1);
                return;
        }
        if (depth == 0)
                return;
        /* The queue's head was published (release) before this load of the
         * mark: a full fence keeps the two in order, so that either the
         * consumer sees the samples or this sees its mark (and mark_idle()
         * does the same from its side). */
        atomic_thread_fence(memory_order_seq_cst);
        if (atomic_load_explicit(&c->consumer_idle, memory_order_relaxed) &&
            atomic_exchange(&c->consumer_idle, false))
                (void) eventfd_write(fd, 1);
}

bool channels_mark_idle(struct channel *channels, size_t n) {
        for (size_t i = 0; i < n; i++)
                atomic_store(&channels[i].consumer_idle, true);
        /* The marks before the queues' heads (see channel_wake_if_needed()). */
        atomic_thread_fence(memory_order_seq_cst);
        for (size_t i = 0; i < n; i++)
                if (channels[i].queue && dp_spsc_depth_consumer(channels[i].queue) > 0) {
                        channels_clear_idle(channels, n);
                        return false;
                }
        return true;
}

void channels_clear_idle(struct channel *channels, size_t n) {
        for (size_t i = 0; i < n; i++)
                atomic_store_explicit(&channels[i].consumer_idle, false, memory_order_relaxed);
}

void channels_poll_span(const struct channel *channels, size_t n, uint32_t floor_ms, uint32_t *ret_longest,
                        uint32_t *ret_shortest) {
        uint32_t longest = floor_ms, shortest = UINT32_MAX;

        for (size_t i = 0; i < n; i++) {
                uint32_t ms;

                ms = atomic_load_explicit(&channels[i].poll_ms, memory_order_relaxed);
                /* A CPU without a running reader (failed, offline) brings nothing. */
                if (!channels[i].queue || ms == 0)
                        continue;
                ms = DP_MAX(ms, floor_ms);
                longest = DP_MAX(longest, ms);
                shortest = DP_MIN(shortest, ms);
        }
        *ret_longest = longest;
        *ret_shortest = shortest == UINT32_MAX ? floor_ms : shortest;
}

void channels_cap_poll_ms(struct channel *channels, size_t n, uint32_t cap_ms) {
        for (size_t i = 0; i < n; i++) {
                struct channel *c = &channels[i];

                if (atomic_load_explicit(&c->poll_cap_ms, memory_order_relaxed) == cap_ms)
                        continue;
                atomic_store_explicit(&c->poll_cap_ms, cap_ms, memory_order_relaxed);
                if (cap_ms && c->poke_fd >= 0 && atomic_load_explicit(&c->poll_ms, memory_order_relaxed) > cap_ms)
                        (void) eventfd_write(c->poke_fd, 1);
        }
}
