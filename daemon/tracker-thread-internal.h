/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The tracker thread's state, shared by tracker-thread.c (lifecycle, the
 * drain and sleep loop, snapshots) and tracker-targets.c (what it tracks:
 * targets read from /proc, refreshed, adopted and dropped). */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "tracker-thread.h"

/* Target settings a reload hands over; taken at the start of a pass. */
struct pending_targets {
        enum dp_target_mode mode;
        uint32_t pids[DP_CONFIG_MAX_PIDS];
        size_t n_pids;
        uint32_t max_targets;
};

struct tracker_thread {
        struct dp_config config;                /* the thread's own copy: reloads change its targets */
        uint32_t capacity;                      /* targets the dp_tracker has room for */
        bool phys;                              /* the dp_tracker's mode, fixed */
        struct channel *channels;
        size_t n;
        struct dp_counter_values *counters;     /* tracker-owned, one per channel */
        uint64_t *published_seen;               /* each queue's intake count at the last pass */
        struct dp_tracker *tracker;
        pid_t self;

        pthread_t thread;
        bool started;
        int wake_fd;                            /* eventfd: wakes the thread from its sleep */
        atomic_bool stop;
        atomic_bool refresh_requested;
        atomic_bool pending_set;                /* checked once per pass, never per sample */
        _Atomic uint32_t hint_fresh_ms;         /* likewise: tracker_thread_give_hints(), 0: none */
        _Atomic uint64_t sampling_ends_ns;      /* tracker_thread_sampling_ends(), 0: not yet */
        pthread_mutex_t pending_lock;           /* guards pending */
        struct pending_targets pending;
        _Atomic uint64_t heartbeat_ns;          /* CLOCK_MONOTONIC at the start of the last loop pass */
        _Atomic uint64_t beat_every_ns;         /* no sleep longer: tracker_thread_set_heartbeat() */
        _Atomic uint64_t fresh_until_ns;        /* tracker_thread_want_fresh() */

        struct event_hub *hub;
        double sample_tokens;                   /* Monitor() sample budget */
        uint64_t tokens_ns;
        uint64_t next_refresh_ns;
        uint64_t refresh_round;
        uint64_t last_pass_ns;                  /* for the fill rate of the queues */
        uint64_t aggr_samples;                  /* drained since the last aggregation closed */
        bool quiet;                             /* the last aggregation closed had no sample */
        double fill_per_ns;                     /* the fullest queue's intake rate since the last pass */
        uint64_t capped_until_ns;               /* poll_cap_ms held at least until then */
        uint32_t poll_cap_ms;                   /* the readers' cap for the queues' sake; 0: none */
        uint32_t uncapped_poll_ms;              /* the slowest reader's poll before the cap */
        struct dp_tracker_snapshot work;        /* filled by the thread */
        pthread_mutex_t lock;                   /* guards published and on_snapshot */
        struct dp_tracker_snapshot published;
        void (*on_snapshot)(void *userdata);    /* tracker_thread_notify_snapshots() */
        void *on_snapshot_userdata;
};

/* A new snapshot published for the DAMON thread and the API (the thread's
 * only writer of it). */
void tracker_publish_snapshot(struct tracker_thread *t);

/* @all: every target now (start, reload); else those whose samples missed
 * their regions, and the others in turns. */
void tracker_refresh_targets(struct tracker_thread *t, bool all);
/* Processes seen in samples but not tracked: adopted when tracking all. */
void tracker_adopt_unknown(struct tracker_thread *t);
/* A reload's target settings, taken at the start of a pass. */
void tracker_apply_pending_targets(struct tracker_thread *t);
