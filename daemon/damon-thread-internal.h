/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The DAMON thread's state and the steps of its pass, shared by
 * damon-thread.c (lifecycle, pass loop, view), damon-pass-hints.c (hints:
 * build, merge with DAMON's layout, commit, read-back, agreement) and
 * damon-pass-schemes.c (quota goal, schemes read-back, hot filters). */

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "damon-hints.h"
#include "damon-sysfs.h"
#include "damon-thread.h"

/* The "step" of a kdamond that stopped without us (log.c words it). */
#define DAMON_STEP_STOPPED "kdamond-stopped"
/* A boundary that moved less than this is not worth a commit. */
#define HINT_TOLERANCE (16 * DP_PAGE_SIZE)
/* Hot ranges the filters hold at most (damon-pass-schemes.c): a few passes'
 * worth of DP_DAMON_HOT_FILTER_MAX each. */
#define HOT_HELD_MAX 64

/* The layout last committed for one DAMON target. */
struct committed_target {
        uint32_t pid;
        struct dp_range *ranges;
        size_t nr;
};

struct damon_thread {
        struct dp_config config;
        struct tracker_thread *tracker;
        pthread_t thread;
        bool started;

        pthread_mutex_t wake_lock;      /* guards stop and snapshot_new, with wake */
        pthread_cond_t wake;
        bool stop;
        bool snapshot_new;              /* the tracker published one while watching */
        atomic_bool watching;           /* for a new hot area (wait_for_pass()) */

        /* The thread's own state. */
        struct dp_damon_fs *fs;
        struct dp_damon_state state;
        bool have_state;                /* owned (after start) or attached: there is something to restore */
        struct dp_damon_decision decision;
        uint32_t max_nr_regions;        /* DAMON's, for the hint budget */
        struct dp_tracker_snapshot snap;
        struct committed_target committed[DAMON_VIEW_MAX_TARGETS];
        size_t nr_committed;
        unsigned failures;              /* in a row, for the backoff */
        bool busy;                      /* this pass met DAMON's lock held: retry soon */
        unsigned busy_passes;           /* passes in a row that did, none clean between */
        unsigned follow_ups;            /* passes left after a new hot area's (next_wait_usec()) */
        struct {
                unsigned passes, stop;  /* DAMON_PERFD_TEST_DAMON_BUSY reads left (test-seam.h) */
        } inject_busy;
        /* The configured schemes as written to our kdamond: node filters
         * made address filters when it was created (start_owned()). */
        struct dp_damon_scheme schemes[DP_CONFIG_MAX_SCHEMES];
        struct dp_range hot[DP_DAMON_HOT_FILTER_MAX];   /* in the schemes' hot filters now */
        size_t nr_hot;
        bool filters_pending;           /* hot filters written, not yet committed */
        struct dp_damon_held_range held[HOT_HELD_MAX];  /* the hot ranges the filters hold */
        size_t nr_held;
        uint32_t held_target;           /* whose address space they are in */
        bool stopping;                  /* restoring on stop */
        bool was_running;
        struct damon_view work;

        pthread_mutex_t view_lock;      /* guards published */
        struct damon_view published;
};

/* Hot granules this close are one hot range: a few granules of a hot area
 * that went unsampled for a while do not split it.  Farther from every
 * granule known, a sampled one is in a new area (damon-thread.c). */
#define HINT_GRANULE_GAP (256 * 1024)

/* damon-thread.c */
void damon_note_failure(struct damon_thread *d, const char *step, int error);
/* Whether a sysfs step that answered @r should try again (*@tries counts the
 * tries): after a moment for DAMON's lock or command slot held by another
 * reader (EBUSY), at once for a tried_regions directory that reader rebuilds
 * under us (@torn: ENOENT, ENODEV).  A step that still fails is the pass's. */
bool damon_try_again(struct damon_thread *d, int r, bool torn, int *tries);
void damon_committed_clear(struct damon_thread *d);
const struct dp_snapshot_target *damon_snapshot_target(const struct dp_tracker_snapshot *snap, uint32_t pid);

/* damon-pass-hints.c */
void damon_commit_hints(struct damon_thread *d);
void damon_read_back(struct damon_thread *d);
/* DAMON's regions as last read back, judged against the samples now. */
void damon_judge_again(struct damon_thread *d);

/* damon-pass-schemes.c */
void damon_feed_goal(struct damon_thread *d);
void damon_read_schemes(struct damon_thread *d);
void damon_update_hot_filters(struct damon_thread *d);
void damon_commit_pending(struct damon_thread *d);
