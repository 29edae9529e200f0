/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sampler.h"

int sampler_transition(struct sampler *s, enum dp_cpu_state to, enum dp_cpu_step step, int error) {
        int from = dp_cpu_transition(s->stats, to, step, error);

        if (from < 0)
                return from;
        log_cpu_transition(s->cpu, from, to, step, error, s->reader.source ? s->reader.source->pmu : "?");
        event_hub_push(s->hub, &(struct hub_event) {
                .kind = HUB_STATE_CHANGE,
                .timestamp_usec = hub_now_usec(),
                .cpu = s->cpu,
                .from = from,
                .to = to,
                .failed_step = step,
                .error = error,
        });
        return from;
}

static int fail(struct sampler *s, enum dp_cpu_step step, int error) {
        sampler_transition(s, DP_CPU_ERROR, step, error);
        dp_perf_event_unmap(&s->map);
        if (s->fd >= 0)
                close(s->fd);
        s->fd = -1;
        return error;
}

/* CREATED → BOUND → ENABLED, from UNINIT; the queue and scratch exist already. */
static int sampler_open(struct sampler *s, const struct sampler_options *options) {
        int r;

        r = options->source->build_attr(options->source, &options->source_options, s->cpu, &s->attr);
        if (r < 0)
                return fail(s, DP_STEP_CREATE, r);
        r = dp_perf_event_open_cpu(&s->attr, s->cpu, -1);
        if (r < 0)
                return fail(s, DP_STEP_CREATE, r);
        s->fd = r;
        s->control.v[DP_C_CREATE]++;
        dp_counters_publish(s->stats, DP_OWNER_CONTROL, &s->control);
        sampler_transition(s, DP_CPU_CREATED, DP_STEP_NONE, 0);

        /* The reader's layout must follow the attr the kernel accepted (read_format may have been trimmed);
         * its counters carry on across reopening. */
        {
                struct dp_counter_values kept = s->reader.counters;

                r = dp_ring_reader_init(&s->reader, &s->attr, options->source, s->queue, (uint16_t) s->cpu,
                                        options->source_options.want_phys);
                s->reader.counters = kept;
        }
        if (r < 0)
                return fail(s, DP_STEP_BIND, r);
        r = dp_perf_event_map(s->fd, options->ring_pages, &s->map);
        if (r < 0)
                return fail(s, DP_STEP_BIND, r);
        r = dp_perf_ring_init(&s->reader.ring, s->map.base, s->map.page_size, s->map.data_size, s->scratch);
        if (r < 0)
                return fail(s, DP_STEP_BIND, r);
        s->control.v[DP_C_BIND]++;
        dp_counters_publish(s->stats, DP_OWNER_CONTROL, &s->control);
        sampler_transition(s, DP_CPU_BOUND, DP_STEP_NONE, 0);

        r = dp_perf_event_enable(s->fd);
        if (r < 0)
                return fail(s, DP_STEP_ENABLE, r);
        s->control.v[DP_C_ENABLE]++;
        dp_counters_publish(s->stats, DP_OWNER_CONTROL, &s->control);
        sampler_transition(s, DP_CPU_ENABLED, DP_STEP_NONE, 0);
        return 0;
}

int sampler_setup(struct sampler *s, int cpu, const struct sampler_options *options, struct dp_cpu_stats *stats,
                  int stop_fd, const atomic_bool *stop) {
        int r;

        *s = (struct sampler) {
                .cpu = cpu,
                .fd = -1,
                .stats = stats,
                .stop_fd = stop_fd,
                .stop = stop,
                .poll_ms = options->poll_ms,
                .hub = options->hub,
        };
        s->reader.source = options->source;

        r = dp_spsc_new(options->queue_capacity, &s->queue);
        if (r < 0)
                return fail(s, DP_STEP_CREATE, r);
        s->scratch = malloc(DP_PERF_RECORD_MAX);
        if (!s->scratch)
                return fail(s, DP_STEP_CREATE, -ENOMEM);
        return sampler_open(s, options);
}

int sampler_retry(struct sampler *s, const struct sampler_options *options) {
        int r;

        if (dp_cpu_get_status(s->stats).state != DP_CPU_ERROR || !s->queue || !s->scratch)
                return 0;
        /* The reader has exited (or never ran); the tracker keeps draining the queue meanwhile. */
        if (s->thread_started) {
                pthread_join(s->thread, NULL);
                s->thread_started = false;
        }
        dp_perf_event_unmap(&s->map);
        if (s->fd >= 0)
                close(s->fd);
        s->fd = -1;
        sampler_transition(s, DP_CPU_UNINIT, DP_STEP_NONE, 0);
        r = sampler_open(s, options);
        if (r < 0)
                return r;
        return sampler_start(s);
}

void sampler_stop(struct sampler *s) {
        if (s->thread_started) {
                pthread_join(s->thread, NULL);
                s->thread_started = false;
        }
        if (s->fd >= 0 && dp_cpu_get_status(s->stats).state != DP_CPU_ERROR)
                sampler_transition(s, DP_CPU_UNINIT, DP_STEP_NONE, 0);
        dp_perf_event_unmap(&s->map);
        if (s->fd >= 0)
                close(s->fd);
        s->fd = -1;
}

void sampler_free(struct sampler *s) {
        sampler_stop(s);
        dp_spsc_free(s->queue);
        s->queue = NULL;
        free(s->scratch);
        s->scratch = NULL;
}
