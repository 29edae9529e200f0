/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The DAMON thread: the daemon's only writer of DAMON sysfs.  It decides the
 * daemon's role towards DAMON once at start (own, attach, observe-only, off;
 * see damon-perfd.conf(5)), then every hint interval turns the tracker's
 * latest snapshot into region hints, commits them when they changed
 * materially, feeds the quota goal, reads DAMON's own view back and
 * publishes it beside the PMU's.  On stop it restores what it changed.
 *
 * DAMON sysfs writes can block for up to an aggregation interval (commit,
 * update_schemes_tried_regions), which is why this is a thread of its own
 * rather than part of the event loop.  Failures are counted, logged once per
 * cause and retried with a growing backoff; sampling never waits on DAMON.
 */

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "damon-agree.h"
#include "damon-control.h"
#include "damon-view.h"
#include "tracker-thread.h"

#define DAMON_VIEW_MAX_CAUSES 16
#define DAMON_VIEW_MAX_TARGETS 64
/* Our stat scheme and every configured one fit; an administrator's beyond
 * this are left out of the view. */
#define DAMON_VIEW_MAX_SCHEMES 16

struct damon_cause {
        char step[32];          /* "start", "commit", "quota-goal", "read-back", "kdamond-off", ... */
        int error;              /* positive errno */
        uint64_t count;
        /* The sysfs file of its first failure, "" if none was named: the root and a path beneath. */
        char path[sizeof(((struct dp_config *) 0)->damon_root) + DP_DAMON_PATH_MAX + 1];
};

/* What the thread publishes: its role, its counters, and DAMON's regions
 * beside the PMU's. */
/* How DAMON's hot regions of one target agree with the ranges its samples
 * call hot (dp_damon_agree(): the value benchmark's figures). */
struct damon_agreement {
        uint32_t pid;
        struct dp_damon_agreement a;
};

struct damon_view {
        enum dp_damon_role role;
        char reason[256];
        int kdamond;                    /* -1: none */
        unsigned context;
        bool running;                   /* the kdamond is on (owned or attached) */
        uint64_t commits, commits_skipped, goal_feeds, read_backs, errors;
        struct damon_cause causes[DAMON_VIEW_MAX_CAUSES];
        size_t nr_causes;
        uint32_t targets[DAMON_VIEW_MAX_TARGETS];       /* DAMON's targets in order; 0: physical */
        size_t nr_targets;
        uint32_t hot_fraction;          /* per 10000, over those targets */
        uint64_t last_commit_usec;      /* CLOCK_REALTIME; 0: never */
        uint32_t max_nr_accesses;       /* the PMU side's scale */
        struct dp_damon_view_row *rows;
        size_t nr_rows, rows_cap;
        struct damon_agreement agreement[DAMON_VIEW_MAX_TARGETS];
        size_t nr_agreement;
        /* The context's schemes with their stats, as of the last read-back */
        struct dp_damon_scheme_info schemes[DAMON_VIEW_MAX_SCHEMES];
        size_t nr_schemes;
};

struct damon_thread;

/* Starts the thread (with [DAMON] Mode=off too: it then only reports so).
 * The thread reads snapshots from @tracker, which must outlive it. */
int damon_thread_start(const struct dp_config *config, struct tracker_thread *tracker, struct damon_thread **ret);

/* Restores DAMON and joins the thread; idempotent. */
void damon_thread_stop(struct damon_thread *d);
void damon_thread_free(struct damon_thread *d);

/* Runs @fn on the last published view under its lock: keep @fn short. */
int damon_thread_with_view(struct damon_thread *d, int (*fn)(const struct damon_view *v, void *userdata),
                           void *userdata);
