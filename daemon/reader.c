/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The reader thread of one CPU.  One thread per CPU, pinned to it: the ring
 * and the queue's producer side stay in that CPU's cache, and a CPU that
 * fails or goes away affects nobody else.  It sleeps in epoll until the
 * kernel's wakeup watermark is reached, the poll interval passes, or the
 * daemon stops; each wakeup handles the whole ring in one batch.  All it
 * shares with the tracker is its CPU's channel (channel.h).
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>

#include "channel.h"
#include "log.h"
#include "sampler.h"
#include "time-util.h"

#define LOST_READ_INTERVAL_NS 1000000000ull
/* A reader sleeps until the kernel's watermark says its ring is half full
 * (a burst) or QUIET_POLL_MAX_MS pass, whichever comes first: on a virtual
 * machine a wake-up costs 50-300 us of CPU, as much as thousands of samples,
 * so it waits for as many as the ring holds without risk (10 s rather than 5:
 * README's fourth round of #17 has the figures).  The tracker holds
 * it to a second while somebody looks at the view (tracker-thread.c's
 * FRESH_POLL_MS), and to the configured poll while its queues cannot afford
 * a longer one (channel_capped_poll_ms()); a CPU's hotplug is noticed at
 * the next wake-up, too.  It says its interval in its channel, and
 * the tracker waits that long before it closes an aggregation: a slower poll
 * makes a later view, never a sample counted out of its own interval. */
#define QUIET_POLL_MAX_MS 10000

/* epoll_wait()'s timeout for a poll of @poll_ms: one of a second or more
 * ends on the second grid, where the other threads' slow wake-ups fall too
 * (dp_second_grid_ns()); rounded up, so that it never wakes just short of it
 * and again right after. */
static int poll_timeout_ms(uint32_t poll_ms) {
        uint64_t now, deadline;

        if (poll_ms < 1000)
                return (int) poll_ms;
        now = dp_now_ns(CLOCK_MONOTONIC);
        deadline = dp_second_grid_ns(now + (poll_ms - 1000) * NSEC_PER_MSEC + 1);
        return (int) ((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

/* The kernel's lost count; true when the event's time_enabled stood still
 * since the last call: the kernel detached it, its CPU went offline (perhaps
 * only for a moment, see cpu-hotplug.h). */
static bool read_event(struct sampler *s) {
        struct dp_perf_event_reading now;

        if (dp_perf_event_read_single(s->fd, s->attr.read_format, &now) < 0)
                return false;
        if (now.has_lost)
                s->reader.counters.v[DP_C_KERNEL_LOST] = s->kernel_lost_base + now.lost;
        return now.has_time_enabled && dp_event_liveness_stalled(&s->liveness, now.time_enabled);
}

static void drain_and_publish(struct sampler *s, bool stopping) {
        dp_ring_reader_drain(&s->reader);
        dp_counters_publish(&s->channel->stats, DP_OWNER_READER, &s->reader.counters);
        channel_wake_if_needed(s->channel);
        /* A truncated AUX stretch made the kernel disable the event; the drain
         * has made room, so sampling may go on. */
        if (s->reader.aux.rearm) {
                s->reader.aux.rearm = false;
                if (!stopping) {
                        int r = sampler_enable_ring(s);

                        if (r < 0)
                                log_warning_errno(r, "cpu%d: cannot re-enable the event after AUX truncation: %m",
                                                  s->channel->cpu);
                }
        }
}

/* An epoll fd watching the event's ring, the stop fd and the channel's poke
 * fd, or a negative errno. */
static int open_epoll(const struct sampler *s) {
        _cleanup_close_ int ep = epoll_create1(EPOLL_CLOEXEC);
        int poke = s->channel->poke_fd;

        if (ep < 0)
                return dp_negative_errno();
        if (epoll_ctl(ep, EPOLL_CTL_ADD, s->fd, &(struct epoll_event) { .events = EPOLLIN, .data.fd = s->fd }) < 0 ||
            epoll_ctl(ep, EPOLL_CTL_ADD, s->stop_fd,
                      &(struct epoll_event) { .events = EPOLLIN, .data.fd = s->stop_fd }) < 0 ||
            (poke >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, poke, &(struct epoll_event) { .events = EPOLLIN, .data.fd = poke }) < 0))
                return dp_negative_errno();
        return DP_TAKE_FD(ep);
}

static void *reader_main(void *arg) {
        struct sampler *s = arg;
        struct epoll_event events[3];
        uint64_t next_lost_read = 0;
        uint32_t poll_ms = s->poll_ms, slept_ms;
        uint64_t now;
        enum dp_cpu_step failed_step = DP_STEP_RUN;
        char name[16];
        cpu_set_t set;
        int ep, r = 0;

        snprintf(name, sizeof(name), "dp-reader/%d", s->channel->cpu);
        (void) pthread_setname_np(pthread_self(), name);
        CPU_ZERO(&set);
        CPU_SET(s->channel->cpu, &set);
        /* Best effort: a reader on another CPU is slower, not wrong. */
        (void) sched_setaffinity(0, sizeof(set), &set);

        ep = open_epoll(s);
        if (ep < 0) {
                sampler_transition(s, DP_CPU_ERROR, DP_STEP_RUN, ep);
                return NULL;
        }

        sampler_transition(s, DP_CPU_RUNNING, DP_STEP_NONE, 0);
        while (!atomic_load_explicit(s->stop, memory_order_acquire) &&
               !atomic_load_explicit(&s->halt, memory_order_acquire)) {
                int n = epoll_wait(ep, events, DP_ARRAY_SIZE(events), poll_timeout_ms(poll_ms));
                bool hangup = false;

                if (n < 0 && errno != EINTR) {
                        r = dp_negative_errno();
                        break;
                }
                for (int i = 0; i < n; i++) {
                        eventfd_t poked;

                        if (events[i].data.fd == s->fd && (events[i].events & (EPOLLHUP | EPOLLERR)))
                                hangup = true;
                        else if (events[i].data.fd == s->channel->poke_fd)
                                (void) eventfd_read(s->channel->poke_fd, &poked);
                }

                drain_and_publish(s, false);
                now = dp_now_ns(CLOCK_MONOTONIC);
                slept_ms = poll_ms;
                poll_ms = channel_capped_poll_ms(s->channel, DP_MAX((uint32_t) QUIET_POLL_MAX_MS, s->poll_ms));
                /* The longer of the two, for one round: what came during the
                 * last sleep may not have been drained when the tracker looks. */
                channel_set_poll_ms(s->channel, DP_MAX(slept_ms, poll_ms));
                if (now >= next_lost_read) {
                        if (read_event(s)) {
                                log_info("CPU%d: its perf event stopped counting time: the kernel detached it",
                                         s->channel->cpu);
                                r = -ENODEV;
                                failed_step = DP_STEP_OFFLINE;
                                break;
                        }
                        next_lost_read = now + LOST_READ_INTERVAL_NS;
                }
                if (hangup) {
                        /* The event is gone, e.g. its CPU went offline. */
                        r = -ENODEV;
                        break;
                }
        }

        /* Stop producing, then take what the kernel wrote up to that point. */
        sampler_disable(s);
        (void) read_event(s);
        drain_and_publish(s, true);
        channel_set_poll_ms(s->channel, 0);     /* nothing more to wait for */
        if (atomic_load_explicit(&s->halt, memory_order_acquire)) {
                /* Asked by sampler_offline(): the CPU went offline. */
                r = -ENODEV;
                failed_step = DP_STEP_OFFLINE;
        }
        if (r < 0)
                sampler_transition(s, DP_CPU_ERROR, failed_step, r);
        close(ep);
        return NULL;
}

int sampler_start(struct sampler *s) {
        int r;

        if (dp_cpu_get_status(&s->channel->stats).state != DP_CPU_ENABLED)
                return -EINVAL;
        atomic_store_explicit(&s->halt, false, memory_order_relaxed);
        r = -pthread_create(&s->thread, NULL, reader_main, s);
        if (r < 0) {
                sampler_transition(s, DP_CPU_ERROR, DP_STEP_RUN, r);
                return r;
        }
        s->thread_started = true;
        return 0;
}
