/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One CPU's sampler: the perf events its source's plan asks for (one ring,
 * maybe an AUX area) and the reader thread that drains them into the CPU's
 * channel (channel.h), walked through UNINIT → CREATED → BOUND → ENABLED →
 * RUNNING.  A failure at any step leaves this CPU in ERROR and the others
 * untouched.
 */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "aux-ring.h"
#include "channel.h"
#include "counters.h"
#include "cpu-hotplug.h"
#include "event-hub.h"
#include "perf-event.h"
#include "pmu.h"
#include "ring-reader.h"
#include "source.h"
#include "test-seam.h"

struct sampler_options {
        const struct dp_source *source;
        struct dp_source_options source_options;
        size_t ring_pages;              /* data pages per CPU ring, a power of two */
        size_t queue_capacity;          /* samples per CPU queue, a power of two */
        unsigned poll_ms;               /* reader wakes at least this often */
        struct event_hub *hub;          /* state changes go here too; may be NULL */
        const struct dp_source_context *source_context; /* the decoders' (IBS errata); may be NULL */
        const struct test_seam *test;   /* injected failures; may be NULL */
};

struct sampler {
        /* Its CPU, queue and counters: all the reader shares with other threads. */
        struct channel *channel;
        /* The source's event plan for this CPU and one fd per planned event
         * (-1 when not open); fd and attr are those of the ring event. */
        struct dp_event_plan plan;
        int fds[DP_EVENT_PLAN_MAX];
        int fd;
        struct perf_event_attr attr;
        struct dp_perf_mapping map;
        struct dp_aux_mapping aux;      /* AUX sources only */
        uint8_t *scratch;
        struct dp_ring_reader reader;
        struct dp_counter_values control; /* create/bind/enable, owned by the control thread */

        pthread_t thread;
        bool thread_started;
        int stop_fd;                    /* eventfd shared by all readers: readable means stop */
        const atomic_bool *stop;
        atomic_bool halt;               /* this reader alone stops: its CPU went offline */
        struct dp_event_liveness liveness; /* the reader's: its event's time_enabled */
        uint64_t kernel_lost_base;      /* kernel_lost of the events closed before, so it stays cumulative */
        unsigned poll_ms;
        struct event_hub *hub;
        const struct test_seam *test;
};

/* Sets the sampler of @channel's CPU up to ENABLED; on failure the CPU is in
 * ERROR and the negative errno is returned.  @channel (opened, see
 * channel_open(); one without a queue fails at create) must outlive the
 * sampler. */
int sampler_setup(struct sampler *s, struct channel *channel, const struct sampler_options *options, int stop_fd,
                  const atomic_bool *stop);

/* A CPU in ERROR (offline ones included, once back): close what is left, and
 * walk it up to RUNNING again, keeping its queue and counters.  0 when there
 * was nothing to retry. */
int sampler_retry(struct sampler *s, const struct sampler_options *options);

/* Starts the reader thread, which moves the CPU to RUNNING. */
int sampler_start(struct sampler *s);

/*
 * The CPU went offline: its events are dead (see cpu-hotplug.h).  A running
 * reader is asked to stop, and puts the CPU in ERROR at "offline" (-ENODEV)
 * once it has drained its ring a last time; without one the events close and
 * the CPU goes there now.  Never blocks: the event loop calls it.  The
 * channel stays, for the tracker and for sampler_retry(), which opens the CPU
 * again when it is back.
 */
void sampler_offline(struct sampler *s);

/* Joins a reader that has ended by itself (ERROR) and closes its dead
 * events, without waiting for one that still runs. */
void sampler_reap(struct sampler *s);

/* Joins the reader (which drains its ring a last time once @stop is set) and
 * closes the event; the CPU ends in UNINIT unless it is in ERROR.  The
 * channel's queue keeps its samples for the tracker's last drain. */
void sampler_stop(struct sampler *s);

/* Stops the sampler and frees its buffers; the channel is the manager's. */
void sampler_free(struct sampler *s);

/* Re-enables the ring event's group leader, e.g. after the kernel stopped it
 * on a truncated AUX stretch. */
int sampler_enable_ring(struct sampler *s);

/* Disables every group leader (their members follow). */
void sampler_disable(struct sampler *s);

/* Applies a state transition and logs it; returns what dp_cpu_transition() returns. */
int sampler_transition(struct sampler *s, enum dp_cpu_state to, enum dp_cpu_step step, int error);
