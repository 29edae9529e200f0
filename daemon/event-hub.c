/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "event-hub.h"
#include "time-util.h"

#define HUB_CAPACITY 4096

struct event_hub {
        pthread_mutex_t lock;
        struct hub_event ring[HUB_CAPACITY];
        uint64_t head, tail;            /* free-running */
        uint64_t dropped;
        int fd;
        _Atomic uint32_t sample_rate;
};

uint64_t hub_now_usec(void) {
        return dp_now_ns(CLOCK_REALTIME) / NSEC_PER_USEC;
}

int event_hub_new(struct event_hub **ret) {
        struct event_hub *hub = calloc(1, sizeof(*hub));

        if (!hub)
                return -ENOMEM;
        hub->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (hub->fd < 0) {
                free(hub);
                return dp_negative_errno();
        }
        pthread_mutex_init(&hub->lock, NULL);
        *ret = hub;
        return 0;
}

void event_hub_free(struct event_hub *hub) {
        if (!hub)
                return;
        close(hub->fd);
        pthread_mutex_destroy(&hub->lock);
        free(hub);
}

int event_hub_fd(struct event_hub *hub) {
        return hub->fd;
}

void event_hub_push(struct event_hub *hub, const struct hub_event *e) {
        uint64_t one = 1;
        bool wake;

        if (!hub)
                return;
        pthread_mutex_lock(&hub->lock);
        if (hub->head - hub->tail == HUB_CAPACITY) {
                hub->tail++;
                hub->dropped++;
        }
        wake = hub->head == hub->tail;
        hub->ring[hub->head++ % HUB_CAPACITY] = *e;
        pthread_mutex_unlock(&hub->lock);
        /* One wakeup per burst: the reader takes everything that is there. */
        if (wake)
                (void) !write(hub->fd, &one, sizeof(one));
}

size_t event_hub_take(struct event_hub *hub, struct hub_event *out, size_t max, uint64_t *dropped) {
        uint64_t counter;
        size_t n = 0;

        (void) !read(hub->fd, &counter, sizeof(counter));
        pthread_mutex_lock(&hub->lock);
        while (n < max && hub->tail != hub->head)
                out[n++] = hub->ring[hub->tail++ % HUB_CAPACITY];
        *dropped = hub->dropped;
        hub->dropped = 0;
        if (hub->tail != hub->head) {
                /* More than @max waiting: keep the fd readable. */
                uint64_t one = 1;

                (void) !write(hub->fd, &one, sizeof(one));
        }
        pthread_mutex_unlock(&hub->lock);
        return n;
}

void event_hub_set_sample_rate(struct event_hub *hub, uint32_t per_second) {
        atomic_store_explicit(&hub->sample_rate, per_second, memory_order_relaxed);
}

uint32_t event_hub_sample_rate(const struct event_hub *hub) {
        return hub ? atomic_load_explicit(&((struct event_hub *) hub)->sample_rate, memory_order_relaxed) : 0;
}

const char *hub_event_kind_name(enum hub_event_kind kind) {
        static const char *const names[_HUB_KIND_MAX] = {
                [HUB_STATE_CHANGE] = "state_change",
                [HUB_SAMPLE] = "sample",
                [HUB_RING_OVERFLOW] = "ring_overflow",
                [HUB_REPORT_MISSED] = "report_missed",
                [HUB_DRAIN] = "drain",
        };

        return (unsigned) kind < _HUB_KIND_MAX ? names[kind] : "unknown";
}
