/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>

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
                dp_cpu_stats_init(&channels[i].stats);
        }
        return channels;
}

int channel_open(struct channel *c, int cpu, const struct dp_source *source, size_t queue_capacity) {
        c->cpu = cpu;
        c->source = source;
        return dp_spsc_new(queue_capacity, &c->queue);
}

void channels_free(struct channel *channels, size_t n) {
        for (size_t i = 0; channels && i < n; i++)
                dp_spsc_free(channels[i].queue);
        free(channels);
}

void channel_set_wake_fd(struct channel *c, int fd) {
        atomic_store_explicit(&c->wake_fd, fd, memory_order_relaxed);
}

void channel_wake_if_full(const struct channel *c) {
        int fd = atomic_load_explicit(&c->wake_fd, memory_order_relaxed);

        if (fd >= 0 && c->queue && dp_spsc_depth_producer(c->queue) > dp_spsc_capacity(c->queue) / 2)
                (void) eventfd_write(fd, 1);
}
