/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The region-tracking thread: the single consumer of every CPU's channel
 * (channel.h).  It drains the queues into the tracker, runs the DAMON-like intervals, keeps
 * the targets' address ranges current from /proc, and publishes a snapshot of
 * the regions after every aggregation for the other threads to read.
 */

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "channel.h"
#include "config.h"
#include "event-hub.h"
#include "tracker.h"

struct tracker_thread;

/* Consumes @channels (@n of them, which must outlive the thread) and becomes
 * their wake fd's reader.  Sampled records for Monitor() go to @hub (may be
 * NULL) when it asks for them. */
int tracker_thread_start(const struct dp_config *config, struct channel *channels, size_t n,
                         struct event_hub *hub, struct tracker_thread **ret);

/* Hands the target settings of @c (Targets=, MaxTargets=) to the thread,
 * which adopts them at its next pass, dropping targets no longer wanted.
 * -EINVAL when switching to or from the physical space (the tracker's mode is
 * fixed), -ENOSPC when MaxTargets= exceeds tracker_thread_target_capacity(). */
int tracker_thread_set_targets(struct tracker_thread *t, const struct dp_config *c);
uint32_t tracker_thread_target_capacity(struct tracker_thread *t);

/* Whether hints go to DAMON, built from samples at most @fresh_ms late (0:
 * no hints); the DAMON thread says so each pass.  While they do, the tracker
 * keeps the granule sketch they are built from (dp_tracker_keep_granules()),
 * and the readers drain their rings at least that often (at most every
 * FRESH_POLL_MS in any case). */
void tracker_thread_give_hints(struct tracker_thread *t, uint32_t fresh_ms);

/* Asks the thread to re-read every target's ranges at its next pass. */
void tracker_thread_request_refresh(struct tracker_thread *t);

/* Somebody looks at the view (a varlink query): for the next several
 * seconds the readers drain at least once a second, starting now, so that
 * what the next queries show is at most about a second old. */
void tracker_thread_want_fresh(struct tracker_thread *t);

/* The longest the thread may go between two passes, resting or not: the
 * main loop's stall limit allows that much (1 s until told). */
void tracker_thread_set_heartbeat(struct tracker_thread *t, uint64_t every_ns);

/* CLOCK_MONOTONIC ns when the thread last began a pass of its loop: a
 * watchdog's sign of life.  A pass takes at most a few tens of ms when healthy,
 * and the thread sleeps at most as long as tracker_thread_set_heartbeat() said. */
uint64_t tracker_thread_heartbeat_ns(struct tracker_thread *t);

/* Says that sampling ends at @ns (CLOCK_MONOTONIC), before the readers
 * stop: the aggregations after it saw nothing, and the last pass does not
 * close them as aggregations without an access. */
void tracker_thread_sampling_ends(struct tracker_thread *t, uint64_t ns);

/* Stops the thread after a last drain of every queue; idempotent. */
void tracker_thread_stop(struct tracker_thread *t);
void tracker_thread_free(struct tracker_thread *t);

/* Calls @fn(@userdata) on the thread each time it publishes a snapshot (an
 * aggregation closed, mostly), under the snapshot lock: @fn only signals,
 * and must not call back into the tracker.  NULL stops the calls; none
 * runs once this returns. */
void tracker_thread_notify_snapshots(struct tracker_thread *t, void (*fn)(void *userdata), void *userdata);

/* Runs @fn on the last published snapshot, under the lock that keeps the
 * tracker from swapping it meanwhile: keep @fn short. */
int tracker_thread_with_snapshot(struct tracker_thread *t,
                                 int (*fn)(const struct dp_tracker_snapshot *snap, void *userdata), void *userdata);
