/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "probes.h"
#include "log.h"
#include "sampler.h"

int sampler_transition(struct sampler *s, enum dp_cpu_state to, enum dp_cpu_step step, int error) {
        int from = dp_cpu_transition(&s->channel->stats, to, step, error);

        if (from < 0)
                return from;
        log_cpu_transition(s->channel->cpu, from, to, step, error, s->reader.source ? s->reader.source->pmu : "?");
        DP_PROBE4(state_change, s->channel->cpu, dp_cpu_state_name(from), dp_cpu_state_name(to), -error);
        event_hub_push(s->hub, &(struct hub_event) {
                .kind = HUB_STATE_CHANGE,
                .timestamp_usec = hub_now_usec(),
                .cpu = s->channel->cpu,
                .from = from,
                .to = to,
                .failed_step = step,
                .error = error,
        });
        return from;
}

/* Unmaps and closes everything the plan opened; the CPU's state is the caller's. */
static void close_events(struct sampler *s) {
        /* The AUX area lies beyond the ring in the same event's mapping: it goes first. */
        dp_aux_unmap(&s->aux);
        dp_perf_event_unmap(&s->map);
        for (size_t i = 0; i < DP_EVENT_PLAN_MAX; i++) {
                if (s->fds[i] >= 0)
                        close(s->fds[i]);
                s->fds[i] = -1;
        }
        s->fd = -1;
}

static int fail(struct sampler *s, enum dp_cpu_step step, int error) {
        sampler_transition(s, DP_CPU_ERROR, step, error);
        close_events(s);
        return error;
}

static bool is_leader(const struct dp_event_plan *plan, size_t i) {
        return plan->event[i].leader == i;
}

int sampler_enable_ring(struct sampler *s) {
        int fd = s->fds[s->plan.event[s->plan.ring].leader];

        return fd >= 0 ? dp_perf_event_enable(fd) : -EBADF;
}

void sampler_disable(struct sampler *s) {
        for (size_t i = 0; i < s->plan.n; i++)
                if (is_leader(&s->plan, i) && s->fds[i] >= 0)
                        (void) dp_perf_event_disable(s->fds[i]);
}

/* Every event of the plan, leaders before their members. */
static int open_events(struct sampler *s, const struct sampler_options *options) {
        struct dp_event_plan *plan = &s->plan;
        int cpu = s->channel->cpu, r;

        r = dp_source_build_events(options->source, &options->source_options, cpu, plan);
        if (r < 0) {
                log_error("cpu%d: %s", cpu, plan->note[0] ? plan->note : strerror(-r));
                return r;
        }
        if (plan->n == 0 || plan->n > DP_EVENT_PLAN_MAX || plan->ring >= plan->n || !plan->event[plan->ring].sampling) {
                log_error("cpu%d: %s built a malformed event plan (%zu events, ring %zu)", cpu,
                          options->source->name, plan->n, plan->ring);
                return -EINVAL;
        }
        if (plan->note[0])
                log_info("cpu%d: %s on %s: %s", cpu, options->source->name, plan->pmu, plan->note);

        for (size_t i = 0; i < plan->n; i++) {
                size_t leader = plan->event[i].leader;

                if (leader > i) {
                        log_error("cpu%d: event %zu (%s) is led by the later event %zu", cpu, i,
                                  plan->event[i].role ?: "?", leader);
                        return -EINVAL;
                }
                r = s->test ? test_seam_fail_open(s->test, cpu) : 0;
                if (r == 0)
                        r = dp_perf_event_open_cpu(&plan->event[i].attr, cpu, leader == i ? -1 : s->fds[leader]);
                if (r < 0)
                        return log_debug_errno(r, "cpu%d: cannot open %s: %m", cpu, plan->event[i].role ?: "?");
                s->fds[i] = r;
        }
        s->fd = s->fds[plan->ring];
        s->attr = plan->event[plan->ring].attr;
        return 0;
}

/* The ring on the ring event, every other sampling event redirected into it,
 * and the AUX area when the plan wants one. */
static int bind_events(struct sampler *s, const struct sampler_options *options) {
        const struct dp_event_plan *plan = &s->plan;
        int r;

        r = dp_perf_event_map(s->fd, options->ring_pages, &s->map);
        if (r < 0)
                return r;
        r = dp_perf_ring_init(&s->reader.ring, s->map.base, s->map.page_size, s->map.data_size, s->scratch);
        if (r < 0)
                return r;
        for (size_t i = 0; i < plan->n; i++)
                if (i != plan->ring && plan->event[i].sampling &&
                    ioctl(s->fds[i], PERF_EVENT_IOC_SET_OUTPUT, s->fd) < 0)
                        return dp_negative_errno();
        if (plan->aux_pages > 0) {
                r = dp_aux_map(s->fd, s->map.base, s->map.length, plan->aux_pages, &s->aux);
                if (r < 0)
                        return r;
                r = dp_ring_reader_attach_aux(&s->reader, s->map.base, s->aux.base, s->aux.length);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* CREATED → BOUND → ENABLED, from UNINIT; the queue and scratch exist already.
 * Each step counts once per CPU, however many events the plan has. */
static int sampler_open(struct sampler *s, const struct sampler_options *options) {
        int r;

        r = open_events(s, options);
        if (r < 0)
                return fail(s, DP_STEP_CREATE, r);
        s->control.v[DP_C_CREATE]++;
        dp_counters_publish(&s->channel->stats, DP_OWNER_CONTROL, &s->control);
        sampler_transition(s, DP_CPU_CREATED, DP_STEP_NONE, 0);

        /* The reader's layout must follow the attr the kernel accepted (read_format may have been trimmed);
         * its counters carry on across reopening. */
        {
                struct dp_counter_values kept = s->reader.counters;

                r = dp_ring_reader_init(&s->reader, &s->attr, options->source, s->channel->queue,
                                        (uint16_t) s->channel->cpu, options->source_options.want_phys);
                s->reader.counters = kept;
                dp_ring_reader_set_context(&s->reader, options->source_context);
                /* A new event counts its losses from 0. */
                s->kernel_lost_base = kept.v[DP_C_KERNEL_LOST];
                s->liveness = (struct dp_event_liveness) {};
        }
        if (r < 0)
                return fail(s, DP_STEP_BIND, r);
        r = bind_events(s, options);
        if (r < 0)
                return fail(s, DP_STEP_BIND, r);
        s->control.v[DP_C_BIND]++;
        dp_counters_publish(&s->channel->stats, DP_OWNER_CONTROL, &s->control);
        sampler_transition(s, DP_CPU_BOUND, DP_STEP_NONE, 0);

        /* Members follow their leader. */
        for (size_t i = 0; i < s->plan.n; i++)
                if (is_leader(&s->plan, i)) {
                        r = dp_perf_event_enable(s->fds[i]);
                        if (r < 0) {
                                sampler_disable(s);
                                return fail(s, DP_STEP_ENABLE, r);
                        }
                }
        s->control.v[DP_C_ENABLE]++;
        dp_counters_publish(&s->channel->stats, DP_OWNER_CONTROL, &s->control);
        sampler_transition(s, DP_CPU_ENABLED, DP_STEP_NONE, 0);
        return 0;
}

int sampler_setup(struct sampler *s, struct channel *channel, const struct sampler_options *options, int stop_fd,
                  const atomic_bool *stop) {
        *s = (struct sampler) {
                .channel = channel,
                .fds = { [0 ... DP_EVENT_PLAN_MAX - 1] = -1 },
                .fd = -1,
                .stop_fd = stop_fd,
                .stop = stop,
                .poll_ms = options->poll_ms,
                .hub = options->hub,
                .test = options->test,
        };
        s->reader.source = options->source;

        /* channel_open() could not allocate it: with a validated capacity, only for want of memory. */
        if (!channel->queue)
                return fail(s, DP_STEP_CREATE, -ENOMEM);
        s->scratch = malloc(DP_PERF_RECORD_MAX);
        if (!s->scratch)
                return fail(s, DP_STEP_CREATE, -ENOMEM);
        return sampler_open(s, options);
}

int sampler_retry(struct sampler *s, const struct sampler_options *options) {
        int r;

        if (dp_cpu_get_status(&s->channel->stats).state != DP_CPU_ERROR || !s->channel->queue || !s->scratch)
                return 0;
        /* The reader has exited (or never ran); the tracker keeps draining the queue meanwhile. */
        if (s->thread_started) {
                pthread_join(s->thread, NULL);
                s->thread_started = false;
        }
        close_events(s);
        sampler_transition(s, DP_CPU_UNINIT, DP_STEP_NONE, 0);
        r = sampler_open(s, options);
        if (r < 0)
                return r;
        return sampler_start(s);
}

void sampler_offline(struct sampler *s) {
        struct dp_cpu_status status = dp_cpu_get_status(&s->channel->stats);

        if (dp_hotplug_is_offline(status))
                return;
        if (s->thread_started && status.state != DP_CPU_ERROR) {
                /* It drains its ring a last time, then moves the CPU to ERROR at offline itself. */
                atomic_store_explicit(&s->halt, true, memory_order_release);
                return;
        }
        /* No reader, or one that failed by itself and is on its way out. */
        if (s->thread_started) {
                pthread_join(s->thread, NULL);
                s->thread_started = false;
        }
        close_events(s);
        sampler_transition(s, DP_CPU_ERROR, DP_STEP_OFFLINE, -ENODEV);
}

void sampler_reap(struct sampler *s) {
        if (!s->thread_started || dp_cpu_get_status(&s->channel->stats).state != DP_CPU_ERROR)
                return;
        if (pthread_tryjoin_np(s->thread, NULL) != 0)
                return;         /* still on its way out */
        s->thread_started = false;
        close_events(s);
}

void sampler_stop(struct sampler *s) {
        if (s->thread_started) {
                pthread_join(s->thread, NULL);
                s->thread_started = false;
        }
        if (s->fd >= 0 && dp_cpu_get_status(&s->channel->stats).state != DP_CPU_ERROR)
                sampler_transition(s, DP_CPU_UNINIT, DP_STEP_NONE, 0);
        close_events(s);
}

void sampler_free(struct sampler *s) {
        sampler_stop(s);
        free(s->scratch);
        s->scratch = NULL;
}
