/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "damon-thread-internal.h"
#include "log.h"
#include "macro.h"
#include "test-seam.h"
#include "time-util.h"

#define BACKOFF_MAX_USEC (60 * 1000000ull)
/* DAMON's sysfs answers EBUSY while another writer holds its lock (someone
 * turning a kdamond on or off, another tool's command): that passes in
 * moments, so it is retried this soon, with no backoff, for this many passes
 * in a row.  An EBUSY that lasts longer has another cause (DAMON_RECLAIM or
 * DAMON_LRU_SORT holding DAMON, say) and backs off like any failure. */
#define BUSY_RETRY_USEC (200 * 1000ull)
#define BUSY_PASSES_MAX 10
/* A restore on stop meeting it tries again this often, BUSY_RETRY_USEC / 2 apart. */
#define RESTORE_BUSY_TRIES 20
/* Another reader's request holds DAMON's sysfs lock or command slot until
 * the kdamond answers, within an aggregation (EBUSY): a step that meets it
 * waits this long and tries again, this often, before the pass counts it
 * (damon_try_again()). */
#define BUSY_TRIES 3
#define BUSY_WAIT_NSEC (30 * 1000 * 1000L)
/* Fewer granules in a new area than this (256 KiB) are none (new_hot_area()). */
#define NEW_GRANULES_MIN 16
/* A pass for a new hot area is followed by this many full ones, this many
 * aggregations apart (next_wait_usec()). */
#define FOLLOW_UP_PASSES 3
#define FOLLOW_UP_AGGREGATIONS 3

/* Counts a failure of @step; the first of each (step, errno) is logged, with
 * the sysfs file whose read or write failed when one did. */
void damon_note_failure(struct damon_thread *d, const char *step, int error) {
        struct damon_view *v = &d->work;
        struct damon_cause *c = NULL;
        const char *rel = d->fs ? dp_damon_fs_error_path(d->fs) : "";
        char path[sizeof(v->causes[0].path)] = "";

        if (*rel)
                snprintf(path, sizeof(path), "%s/%s", d->config.damon_root, rel);
        if (d->fs)
                dp_damon_fs_clear_error(d->fs);

        error = error < 0 ? -error : error;
        v->errors++;
        /* Torn read-backs are DAMON's sysfs being busy too, not a fault of ours. */
        if ((error == EBUSY || (strcmp(step, "read-back") == 0 && (error == ENOENT || error == ENODEV))) &&
            d->busy_passes < BUSY_PASSES_MAX)
                d->busy = true;
        else
                d->failures++;
        for (size_t i = 0; i < v->nr_causes; i++)
                if (v->causes[i].error == error && strcmp(v->causes[i].step, step) == 0)
                        c = &v->causes[i];
        if (!c && v->nr_causes < DAMON_VIEW_MAX_CAUSES) {
                c = &v->causes[v->nr_causes++];
                snprintf(c->step, sizeof(c->step), "%s", step);
                snprintf(c->path, sizeof(c->path), "%s", path);
                c->error = error;
        }
        if (c && c->count++ == 0)
                log_damon_error(step, path, error, v->kdamond, c->count);
}

bool damon_try_again(struct damon_thread *d, int r, bool torn, int *tries) {
        if (r >= 0 || *tries >= BUSY_TRIES)
                return false;
        if (r != -EBUSY && !(torn && (r == -ENOENT || r == -ENODEV)))
                return false;
        (*tries)++;
        dp_damon_fs_clear_error(d->fs);
        if (r == -EBUSY)
                (void) nanosleep(&(struct timespec) { .tv_nsec = BUSY_WAIT_NSEC }, NULL);
        return true;
}

static int inject_busy(const char *path, bool write, void *userdata) {
        struct damon_thread *d = userdata;
        unsigned *left = d->stopping ? &d->inject_busy.stop : &d->inject_busy.passes;
        char state[32];

        snprintf(state, sizeof(state), "kdamonds/%u/state", d->decision.kdamond);
        if (write || *left == 0 || !d->was_running || strcmp(path, state) != 0)
                return 0;
        (*left)--;
        return -EBUSY;
}

/* The test seam read (and logged) the injection at start-up. */
static void inject_busy_load(struct damon_thread *d) {
        const struct test_seam *seam = test_seam_get();

        if (seam->damon_busy_passes + seam->damon_busy_stop == 0)
                return;
        d->inject_busy.passes = seam->damon_busy_passes;
        d->inject_busy.stop = seam->damon_busy_stop;
        dp_damon_fs_set_fault(d->fs, inject_busy, d);
}

void damon_committed_clear(struct damon_thread *d) {
        for (size_t i = 0; i < d->nr_committed; i++)
                free(d->committed[i].ranges);
        d->nr_committed = 0;
}

/* ---- publishing ---- */

static int view_copy(struct damon_view *dst, const struct damon_view *src) {
        struct dp_damon_view_row *rows = dst->rows;
        size_t cap = dst->rows_cap;

        if (src->nr_rows > cap) {
                rows = reallocarray(dst->rows, src->nr_rows, sizeof(*rows));
                if (!rows)
                        return -ENOMEM;
                cap = src->nr_rows;
        }
        *dst = *src;
        dst->rows = rows;
        dst->rows_cap = cap;
        if (src->nr_rows)
                memcpy(rows, src->rows, src->nr_rows * sizeof(*rows));
        return 0;
}

static void publish(struct damon_thread *d) {
        pthread_mutex_lock(&d->view_lock);
        (void) view_copy(&d->published, &d->work);      /* -ENOMEM: readers keep the last view */
        pthread_mutex_unlock(&d->view_lock);
}

/* ---- the pass ---- */

static int copy_snapshot(const struct dp_tracker_snapshot *snap, void *userdata) {
        return dp_tracker_snapshot_copy(snap, userdata);
}

/* The regions of @pid in the snapshot (0: the physical space). */
const struct dp_snapshot_target *damon_snapshot_target(const struct dp_tracker_snapshot *snap, uint32_t pid) {
        if (pid == 0)
                return snap->nr_targets == 1 ? &snap->targets[0] : NULL;
        return dp_snapshot_find_target(snap, pid);
}

/* Notices a kdamond that stopped without us: someone turned it off, or (vaddr)
 * every target exited.  Owned, the next commit turns it on again.  A state
 * DAMON is too busy to show tells nothing: what was known stays, so that a
 * stop behind it is still noticed, and the pass ends there. */
static int check_running(struct damon_thread *d) {
        bool running = false;
        int r, tries = 0;

        if (!d->have_state) {
                d->work.running = false;
                return 0;
        }
        do
                r = dp_damon_kdamond_running(d->fs, d->decision.kdamond, &running);
        while (damon_try_again(d, r, false, &tries));
        if (r == -EBUSY) {
                damon_note_failure(d, "state", r);
                return r;
        }
        if (r < 0)
                damon_note_failure(d, "state", r);    /* gone (ENOENT) or garbled: not running */
        else if (!running && d->was_running)
                damon_note_failure(d, DAMON_STEP_STOPPED, ESRCH);
        d->work.running = running;
        d->was_running = running;
        if (!running)
                damon_committed_clear(d);     /* so that the next pass writes everything again */
        return 0;
}

/* Whether a running kdamond of ours has hints for its targets (none once it
 * stopped: damon_committed_clear()). */
static bool hinting_targets(const struct damon_thread *d) {
        return d->have_state && d->work.running && d->nr_committed > 0;
}

/* How late the samples a hint is built from may reach the tracker.  While
 * a target is hinted, an aggregation: a pass then hints where the hot area
 * is now, not where it was a reader's poll and an aggregation's lag ago
 * (the value benchmark's moving window was followed in 0.8 s instead of
 * 1.3 s).  Before that, the hint interval: the readers of a machine with
 * nothing to hint wake no more often than the passes that would look. */
static uint32_t hint_fresh_ms(const struct damon_thread *d) {
        uint64_t us = d->config.damon_hint_interval_us;

        if (hinting_targets(d))
                us = DP_MIN(us, d->config.aggr_interval_us);
        return (uint32_t) DP_MAX(us / 1000, 1);
}

/* @new_hot_area: started early for one (wait_for_pass()). */
static void pass(struct damon_thread *d, bool new_hot_area) {
        bool hinting = d->decision.role == DP_DAMON_ROLE_OWNED || d->decision.role == DP_DAMON_ROLE_ATTACHED;
        uint64_t errors = d->work.errors;

        if (tracker_thread_with_snapshot(d->tracker, copy_snapshot, &d->snap) < 0)
                return;
        /* A failure names its own file, not one an earlier probe left behind. */
        dp_damon_fs_clear_error(d->fs);
        d->busy = false;
        d->work.max_nr_accesses = d->snap.max_nr_accesses;
        /* Only a kdamond we give hints to needs the granules (observing one,
         * the samples are not worth a probe into the sketch each). */
        tracker_thread_give_hints(d->tracker, hinting ? hint_fresh_ms(d) : 0);
        /* DAMON's regions first: the hints are merged into the layout DAMON
         * has now.  One read a pass earlier misses what DAMON merged since
         * (a hot area's edges: no commit) and would put back every boundary
         * it has dropped since.  A stop while the read-back waits for the
         * kdamond is caught by the commit (damon_commit_hints()). */
        if (check_running(d) >= 0) {
                /* A new hot area is hinted at once: the read-back waits for
                 * the kdamond's next aggregation and took 0.3-1 s in the
                 * value benchmark's guest, longer than the area had taken
                 * to show.  DAMON's layout as last read then stands in;
                 * the next pass reads it again. */
                if (new_hot_area)
                        damon_judge_again(d);
                else
                        damon_read_back(d);
                damon_update_hot_filters(d);
                if (d->decision.role == DP_DAMON_ROLE_OWNED ||
                    (d->decision.role == DP_DAMON_ROLE_ATTACHED && d->work.running))
                        damon_commit_hints(d);
                damon_commit_pending(d);
                damon_feed_goal(d);
                damon_read_schemes(d);
        }
        if (d->busy)
                d->busy_passes++;
        else if (d->work.errors == errors)
                d->busy_passes = 0;
        d->follow_ups = new_hot_area ? FOLLOW_UP_PASSES : d->follow_ups > 0 ? d->follow_ups - 1 : 0;
        publish(d);
}

/* ---- setup and teardown ---- */

/* The state file's directory (/run/damon-perfd under systemd's
 * RuntimeDirectory=, but a foreground run may have none yet). */
static int make_parent_directory(const char *file) {
        char dir[sizeof(((struct dp_config *) 0)->damon_state_file)];
        char *slash;

        snprintf(dir, sizeof(dir), "%s", file);
        slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = '\0';
        for (char *p = dir + 1; ; p++) {
                bool last = *p == '\0';

                if (*p != '/' && !last)
                        continue;
                *p = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return -errno;
                if (last)
                        return 0;
                *p = '/';
        }
}

static void decide(struct damon_thread *d) {
        const struct dp_config *c = &d->config;
        struct dp_damon_tree tree;
        struct dp_damon_state previous = {};
        bool have_previous = false, previous_alive = false;
        char path[128];
        uint64_t max;
        int r;

        d->work.kdamond = -1;
        if (c->damon_mode == DP_DAMON_OFF) {
                d->decision = (struct dp_damon_decision) { .role = DP_DAMON_ROLE_OFF };
                snprintf(d->decision.reason, sizeof(d->decision.reason), "[DAMON] Mode=off");
                goto done;
        }
        r = dp_damon_fs_open(c->damon_root, &d->fs);
        if (r >= 0)
                r = dp_damon_discover(d->fs, &tree);
        if (r < 0) {
                d->decision = (struct dp_damon_decision) { .role = DP_DAMON_ROLE_OFF };
                snprintf(d->decision.reason, sizeof(d->decision.reason), "DAMON sysfs is not usable at %.160s: %s",
                         c->damon_root, strerror(-r));
                goto done;
        }

        r = make_parent_directory(c->damon_state_file);
        if (r < 0) {
                d->decision = (struct dp_damon_decision) { .role = DP_DAMON_ROLE_OFF };
                snprintf(d->decision.reason, sizeof(d->decision.reason),
                         "cannot create the directory of the state file %.160s: %s", c->damon_state_file,
                         strerror(-r));
                goto done;
        }
        r = dp_damon_state_load(c->damon_state_file, &previous);
        if (r >= 0) {
                have_previous = true;
                previous_alive = previous.daemon_pid > 0 && previous.daemon_pid != getpid() &&
                                 (kill(previous.daemon_pid, 0) == 0 || errno == EPERM);
        } else if (r != -ENOENT)
                log_warning_errno(r, "DAMON: ignoring the state file %s: %m", c->damon_state_file);

        r = dp_damon_decide(c->damon_mode, c->damon_kdamond, c->damon_context, &tree,
                            have_previous ? &previous : NULL, previous_alive,
                            c->target_mode == DP_TARGETS_PHYS, &d->decision);
        dp_damon_state_done(&previous);
        if (r < 0) {
                d->decision = (struct dp_damon_decision) { .role = DP_DAMON_ROLE_OBSERVE };
                snprintf(d->decision.reason, sizeof(d->decision.reason), "cannot decide: %s", strerror(-r));
        }

        d->max_nr_regions = c->max_nr_regions;
        if (d->decision.role == DP_DAMON_ROLE_ATTACHED) {
                snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/monitoring_attrs/nr_regions/max",
                         d->decision.kdamond, d->decision.context);
                if (dp_damon_fs_read_u64(d->fs, path, &max) >= 0 && max >= 3)
                        d->max_nr_regions = (uint32_t) DP_MIN(max, (uint64_t) UINT32_MAX);
                r = dp_damon_attach_start(d->fs, &d->decision, c->damon_state_file, &d->state);
                if (r < 0) {
                        damon_note_failure(d, "attach", r);
                        d->decision.role = DP_DAMON_ROLE_OBSERVE;
                        snprintf(d->decision.reason, sizeof(d->decision.reason),
                                 "attaching to kdamond %u failed: %s", d->decision.kdamond, strerror(-r));
                } else {
                        d->have_state = true;
                        d->was_running = true;
                }
        }
        if (d->decision.role == DP_DAMON_ROLE_OWNED || d->decision.role == DP_DAMON_ROLE_ATTACHED) {
                d->work.kdamond = (int) d->decision.kdamond;
                inject_busy_load(d);
        }
done:
        d->work.role = d->decision.role;
        d->work.context = d->decision.context;
        snprintf(d->work.reason, sizeof(d->work.reason), "%s", d->decision.reason);
        log_damon_role(dp_damon_role_name(d->decision.role), d->work.kdamond, d->decision.reason);
        publish(d);
}

static void restore(struct damon_thread *d) {
        int r;

        if (!d->have_state)
                return;
        /* Not a kdamond left running for want of a moment's patience. */
        d->stopping = true;
        for (int tries = 0;; tries++) {
                r = dp_damon_restore(d->fs, &d->state, d->config.damon_state_file);
                if (r != -EBUSY || tries == RESTORE_BUSY_TRIES)
                        break;
                usleep(BUSY_RETRY_USEC / 2);
        }
        log_damon_restored(dp_damon_role_name(d->decision.role), d->work.kdamond, r < 0 ? -r : 0);
        if (r >= 0) {
                d->have_state = false;
                d->work.running = false;
                publish(d);
        }
}

/* The next pass: a hint interval away, or longer after failures in a row;
 * soon when DAMON was only busy. */
static uint64_t next_wait_usec(const struct damon_thread *d) {
        uint64_t wait = d->config.damon_hint_interval_us;

        if (d->busy)
                return DP_MIN(wait, BUSY_RETRY_USEC);
        /* A pass for a new hot area hinted as much of it as its first
         * aggregation's samples outlined, and the area's granules gain
         * weight against the old one's for a second or so after: a few full
         * passes, with a read-back, follow a few aggregations apart, not a
         * hint interval apart. */
        if (d->follow_ups > 0 && d->failures == 0)
                return DP_MIN(wait, FOLLOW_UP_AGGREGATIONS * d->config.aggr_interval_us);
        /* No kdamond of ours yet: start it as soon as the samples name a
         * target, an aggregation after, not a hint interval. */
        if (d->decision.role == DP_DAMON_ROLE_OWNED && !d->have_state && d->failures == 0)
                return DP_MIN(wait, d->config.aggr_interval_us);

        for (unsigned i = 0; i < d->failures && wait < BACKOFF_MAX_USEC; i++)
                wait *= 2;
        return DP_MIN(wait, DP_MAX(BACKOFF_MAX_USEC, d->config.damon_hint_interval_us));
}

struct new_area_count {
        const struct damon_thread *d;
        size_t far, held;
};

/* Under the tracker's snapshot lock: the hinted targets' granules far from
 * those of the last pass's snapshot, and how many that one held. */
static int count_new_area(const struct dp_tracker_snapshot *snap, void *userdata) {
        struct new_area_count *c = userdata;
        const struct damon_thread *d = c->d;

        for (size_t i = 0; i < d->nr_committed; i++) {
                const struct dp_snapshot_target *now = damon_snapshot_target(snap, d->committed[i].pid),
                                                *then = damon_snapshot_target(&d->snap, d->committed[i].pid);

                if (!now)
                        continue;
                c->held += then ? then->nr_granules : 0;
                c->far += dp_granules_far_from(&snap->granules[now->first_granule], now->nr_granules,
                                               then ? &d->snap.granules[then->first_granule] : NULL,
                                               then ? then->nr_granules : 0, HINT_GRANULE_GAP);
        }
        return 0;
}

/* Whether the samples show a new hot area since the last pass: granules
 * farther than HINT_GRANULE_GAP from every one the last pass knew, at least
 * NEW_GRANULES_MIN and an eighth as many as it knew.  Granules that come
 * and go within an area in use (a sparse sampler's, decayed and sampled
 * again) lie among known ones; a hot area that moved lies apart. */
static bool new_hot_area(const struct damon_thread *d) {
        struct new_area_count c = { .d = d };

        if (tracker_thread_with_snapshot(d->tracker, count_new_area, &c) < 0)
                return false;
        if (c.far < NEW_GRANULES_MIN || c.far * 8 < c.held)
                return false;
        log_debug("DAMON pass early at %.2f: %zu granules in a new area, %zu known",
                  (double) dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_SEC, c.far, c.held);
        return true;
}

enum wake {
        WAKE_STOP,
        WAKE_DUE,
        WAKE_SNAPSHOT,
        WAKE_NEW_HOT_AREA,
};

/* The tracker published a snapshot (tracker_thread_notify_snapshots(), on
 * its thread): wakes this one while it watches for a new hot area. */
static void snapshot_published(void *userdata) {
        struct damon_thread *d = userdata;

        if (!atomic_load_explicit(&d->watching, memory_order_relaxed))
                return;
        pthread_mutex_lock(&d->wake_lock);
        d->snapshot_new = true;
        pthread_cond_signal(&d->wake);
        pthread_mutex_unlock(&d->wake_lock);
}

/* Sleeps @usec, until stop is asked or, with @snapshots, the tracker
 * publishes a snapshot. */
static enum wake sleep_for(struct damon_thread *d, uint64_t usec, bool snapshots) {
        struct timespec deadline;
        enum wake w;

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += (time_t) (usec / 1000000);
        deadline.tv_nsec += (long) (usec % 1000000) * 1000;
        if (deadline.tv_nsec >= 1000000000) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&d->wake_lock);
        while (!d->stop && !(snapshots && d->snapshot_new) &&
               pthread_cond_timedwait(&d->wake, &d->wake_lock, &deadline) != ETIMEDOUT)
                ;
        w = d->stop ? WAKE_STOP : snapshots && d->snapshot_new ? WAKE_SNAPSHOT : WAKE_DUE;
        d->snapshot_new = false;
        pthread_mutex_unlock(&d->wake_lock);
        return w;
}

/* Sleeps until the next pass is due, @usec from now, or stop is asked.
 * While a target is hinted, it looks at each snapshot the tracker publishes
 * (an aggregation closed) whether the samples show a new hot area, which
 * starts the pass at once: a hot area that moved is hinted within a few
 * aggregations, not a hint interval. */
static enum wake wait_for_pass(struct damon_thread *d, uint64_t usec) {
        bool watch = hinting_targets(d) && d->failures == 0;
        uint64_t end = dp_now_ns(CLOCK_MONOTONIC) + usec * NSEC_PER_USEC;
        enum wake w = WAKE_DUE;

        atomic_store_explicit(&d->watching, watch, memory_order_relaxed);
        for (uint64_t now; (now = dp_now_ns(CLOCK_MONOTONIC)) < end;) {
                w = sleep_for(d, (end - now) / NSEC_PER_USEC, watch);
                if (w != WAKE_SNAPSHOT)
                        break;
                if (new_hot_area(d)) {
                        w = WAKE_NEW_HOT_AREA;
                        break;
                }
                w = WAKE_DUE;
        }
        atomic_store_explicit(&d->watching, false, memory_order_relaxed);
        return w;
}

static void *damon_main(void *userdata) {
        struct damon_thread *d = userdata;

        /* Its own name, so that per-thread CPU tells it from the main loop. */
        (void) pthread_setname_np(pthread_self(), "dp-damon");
        decide(d);
        if (d->decision.role == DP_DAMON_ROLE_OWNED || d->decision.role == DP_DAMON_ROLE_ATTACHED) {
                tracker_thread_notify_snapshots(d->tracker, snapshot_published, d);
                for (enum wake w; (w = wait_for_pass(d, next_wait_usec(d))) != WAKE_STOP;)
                        pass(d, w == WAKE_NEW_HOT_AREA);
                tracker_thread_notify_snapshots(d->tracker, NULL, NULL);
        } else
                (void) sleep_for(d, UINT64_MAX / 2, false);
        restore(d);
        return NULL;
}

int damon_thread_start(const struct dp_config *config, struct tracker_thread *tracker, struct damon_thread **ret) {
        struct damon_thread *d;
        pthread_condattr_t attr;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->config = *config;
        d->tracker = tracker;
        d->work.kdamond = -1;
        d->published.kdamond = -1;
        pthread_mutex_init(&d->wake_lock, NULL);
        pthread_mutex_init(&d->view_lock, NULL);
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&d->wake, &attr);
        pthread_condattr_destroy(&attr);

        r = -pthread_create(&d->thread, NULL, damon_main, d);
        if (r < 0) {
                damon_thread_free(d);
                return r;
        }
        d->started = true;
        *ret = d;
        return 0;
}

void damon_thread_stop(struct damon_thread *d) {
        if (!d || !d->started)
                return;
        pthread_mutex_lock(&d->wake_lock);
        d->stop = true;
        pthread_cond_signal(&d->wake);
        pthread_mutex_unlock(&d->wake_lock);
        pthread_join(d->thread, NULL);
        d->started = false;
}

void damon_thread_free(struct damon_thread *d) {
        if (!d)
                return;
        damon_thread_stop(d);
        damon_committed_clear(d);
        dp_damon_state_done(&d->state);
        dp_damon_fs_free(d->fs);
        dp_tracker_snapshot_free(&d->snap);
        free(d->work.rows);
        free(d->published.rows);
        pthread_cond_destroy(&d->wake);
        pthread_mutex_destroy(&d->wake_lock);
        pthread_mutex_destroy(&d->view_lock);
        free(d);
}

int damon_thread_with_view(struct damon_thread *d, int (*fn)(const struct damon_view *v, void *userdata),
                           void *userdata) {
        int r;

        pthread_mutex_lock(&d->view_lock);
        r = fn(&d->published, userdata);
        pthread_mutex_unlock(&d->view_lock);
        return r;
}
