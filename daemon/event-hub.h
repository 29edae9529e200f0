/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Lifecycle transitions and sampled records, from whichever thread sees
 * them, handed to the main loop for Monitor() subscribers.  Pushing takes a
 * mutex, so only bounded-rate producers use it: state changes, and samples
 * the tracker picks at most a budget's worth per second.  A full hub drops
 * the oldest events and counts them.
 */

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "counters.h"
#include "cpu-state.h"

enum hub_event_kind {
        HUB_STATE_CHANGE,
        HUB_SAMPLE,
        HUB_RING_OVERFLOW,
        HUB_REPORT_MISSED,
        HUB_DRAIN,
        _HUB_KIND_MAX,
};

struct hub_event {
        enum hub_event_kind kind;
        uint64_t timestamp_usec;        /* CLOCK_REALTIME */
        int cpu;                        /* -1: none */
        enum dp_cpu_state from, to;
        enum dp_cpu_step failed_step;
        int error;                      /* negative errno */
        uint32_t pid;
        uint64_t addr;
        enum dp_counter reason;         /* DP_C_MISS_* for report_missed */
        uint64_t count;
        uint64_t depth;
};

struct event_hub;

int event_hub_new(struct event_hub **ret);
void event_hub_free(struct event_hub *hub);

/* Readable when events are waiting (an eventfd). */
int event_hub_fd(struct event_hub *hub);

/* Thread-safe. */
void event_hub_push(struct event_hub *hub, const struct hub_event *e);

/* Main thread: takes up to @max events, oldest first; *dropped gets the
 * number lost to a full hub since the last call. */
size_t event_hub_take(struct event_hub *hub, struct hub_event *out, size_t max, uint64_t *dropped);

/* Sampled records are wanted by someone, at most this many per second (0: none). */
void event_hub_set_sample_rate(struct event_hub *hub, uint32_t per_second);
uint32_t event_hub_sample_rate(const struct event_hub *hub);

const char *hub_event_kind_name(enum hub_event_kind kind);

uint64_t hub_now_usec(void);
