/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config-scheme.h"
#include "damon-hints.h"
#include "damon-sysfs.h"
#include "macro.h"
#include "probes.h"
#include "damon-thread.h"
#include "log.h"
#include "test-seam.h"
#include "time-util.h"

/* The "step" of a kdamond that stopped without us (log.c words it). */
#define DAMON_STEP_STOPPED "kdamond-stopped"

/* A boundary that moved less than this is not worth a commit. */
#define HINT_TOLERANCE (16 * DP_PAGE_SIZE)
/* Hot granules this close are one hot range: a few granules of a hot area
 * that went unsampled for a while do not split it. */
#define HINT_GRANULE_GAP (256 * 1024)
/* DAMON's edge this close to a sampled boundary is that boundary: a
 * granule's width, the samples' own precision. */
#define MERGE_TOLERANCE DP_SKETCH_GRANULE
#define BACKOFF_MAX_USEC (60 * 1000000ull)
/* DAMON's sysfs answers EBUSY while another writer holds its lock (someone
 * turning a kdamond on or off, another tool's command): that passes in
 * moments, so it is retried this soon, with no backoff, for this many passes
 * in a row.  An EBUSY that lasts longer has another cause (DAMON_RECLAIM or
 * DAMON_LRU_SORT holding DAMON, say) and backs off like any failure. */
#define BUSY_RETRY_USEC (200 * 1000ull)
#define BUSY_PASSES_MAX 10
/* A read-back torn by another reader is read again at once, this often;
 * one (or a commit) that met another reader's request waits this long
 * before each try. */
#define READ_BACK_TRIES 3
#define READ_BACK_BUSY_WAIT_NSEC (30 * 1000 * 1000L)
/* Passes in a row without a hot range before the hot filters are emptied:
 * one aggregation without samples says little about a hot area. */
#define HOT_FILTER_HOLD_PASSES 5
/* A restore on stop meeting it tries again this often, BUSY_RETRY_USEC / 2 apart. */
#define RESTORE_BUSY_TRIES 20

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

        pthread_mutex_t wake_lock;      /* guards stop, with wake */
        pthread_cond_t wake;
        bool stop;

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
        struct {
                unsigned passes, stop;  /* DAMON_PERFD_TEST_DAMON_BUSY reads left (test-seam.h) */
        } inject_busy;
        struct dp_range hot[DP_DAMON_HOT_FILTER_MAX];   /* in the schemes' hot filters now */
        size_t nr_hot;
        unsigned passes_without_hot;
        bool stopping;                  /* restoring on stop */
        bool was_running;
        struct damon_view work;

        pthread_mutex_t view_lock;      /* guards published */
        struct damon_view published;
};

/* Counts a failure of @step; the first of each (step, errno) is logged, with
 * the sysfs file whose read or write failed when one did. */
static void note_failure(struct damon_thread *d, const char *step, int error) {
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

static void committed_clear(struct damon_thread *d) {
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
static const struct dp_snapshot_target *snapshot_target(const struct dp_tracker_snapshot *snap, uint32_t pid) {
        if (pid == 0)
                return snap->nr_targets == 1 ? &snap->targets[0] : NULL;
        return dp_snapshot_find_target(snap, pid);
}

/* Which processes DAMON should watch: in attach mode the ones the kdamond
 * already has, otherwise the hottest the PMU sees. */
static size_t choose_targets(struct damon_thread *d, uint32_t *pids) {
        char path[128];
        uint64_t n = 0, pid;

        if (d->config.target_mode == DP_TARGETS_PHYS) {
                pids[0] = 0;
                return snapshot_target(&d->snap, 0) ? 1 : 0;
        }
        if (d->decision.role == DP_DAMON_ROLE_OWNED) {
                size_t picked = dp_damon_pick_targets(&d->snap, d->config.damon_max_targets, pids), alive = 0;

                /* A process that exited since the last maps refresh would make
                 * DAMON refuse the whole commit (EINVAL): leave it out. */
                for (size_t i = 0; i < picked; i++)
                        if (kill((pid_t) pids[i], 0) == 0 || errno == EPERM)
                                pids[alive++] = pids[i];
                return alive;
        }

        snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/targets/nr_targets", d->decision.kdamond,
                 d->decision.context);
        if (dp_damon_fs_read_u64(d->fs, path, &n) < 0)
                return 0;
        n = DP_MIN(n, (uint64_t) DAMON_VIEW_MAX_TARGETS);
        for (uint64_t i = 0; i < n; i++) {
                snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/targets/%" PRIu64 "/pid_target",
                         d->decision.kdamond, d->decision.context, i);
                pids[i] = dp_damon_fs_read_u64(d->fs, path, &pid) < 0 ? 0 : (uint32_t) pid;
        }
        return (size_t) n;
}

struct hint_set {
        struct dp_damon_target_hint targets[DAMON_VIEW_MAX_TARGETS];
        struct dp_range *ranges[DAMON_VIEW_MAX_TARGETS];                /* the layouts */
        struct dp_damon_range *damon_ranges[DAMON_VIEW_MAX_TARGETS];    /* the same, as the commit takes them */
        struct dp_range *pure[DAMON_VIEW_MAX_TARGETS];  /* the hint itself, when merged into DAMON's layout */
        size_t nr_pure[DAMON_VIEW_MAX_TARGETS];
        size_t n;
};

static void hint_set_done(struct hint_set *h) {
        for (size_t i = 0; i < h->n; i++) {
                free(h->ranges[i]);
                free(h->damon_ranges[i]);
                free(h->pure[i]);
        }
        h->n = 0;
}

/* One hint per chosen target the tracker knows, each within its share of
 * DAMON's region budget. */
static int build_hints(struct damon_thread *d, const uint32_t *pids, size_t n, struct hint_set *h) {
        size_t budget = DP_MAX(d->max_nr_regions / DP_MAX(n, (size_t) 1), (size_t) 3);

        for (size_t i = 0; i < n; i++) {
                const struct dp_snapshot_target *t = snapshot_target(&d->snap, pids[i]);
                size_t k = h->n, nr, room;
                int r;

                if (!t || t->nr_regions == 0)
                        continue;
                room = DP_MAX(t->nr_regions, budget);
                h->ranges[k] = calloc(room, sizeof(*h->ranges[k]));
                h->damon_ranges[k] = calloc(room, sizeof(*h->damon_ranges[k]));
                h->n++;         /* hint_set_done() frees what was allocated */
                if (!h->ranges[k] || !h->damon_ranges[k])
                        return -ENOMEM;
                /* Where the samples fall, exactly; the adaptive regions'
                 * layout only while no granule is hot. */
                r = dp_damon_hints_from_granules(&d->snap.granules[t->first_granule], t->nr_granules, t->start,
                                                 t->end, HINT_GRANULE_GAP, budget, h->ranges[k], &nr);
                if (r == -ENODATA)
                        r = dp_damon_hints_build(&d->snap.regions[t->first_region], t->nr_regions,
                                                 d->snap.max_nr_accesses, budget, h->ranges[k], &nr);
                if (r < 0)
                        return r;
                for (size_t j = 0; j < nr; j++)
                        h->damon_ranges[k][j] = (struct dp_damon_range) {
                                .start = h->ranges[k][j].start, .end = h->ranges[k][j].end,
                        };
                h->targets[k] = (struct dp_damon_target_hint) {
                        .pid = pids[i], .regions = h->damon_ranges[k], .nr_regions = nr,
                };
        }
        return 0;
}

/* DAMON's regions of @pid in the last read-back, into @out (room for
 * d->work.nr_rows); their count. */
static size_t view_ranges(const struct damon_thread *d, uint32_t pid, struct dp_range *out) {
        size_t n = 0;

        for (size_t i = 0; i < d->work.nr_rows; i++)
                if (d->work.rows[i].pid == pid)
                        out[n++] = (struct dp_range) { d->work.rows[i].start, d->work.rows[i].end };
        return n;
}

/*
 * Turns hint @k into DAMON's own layout with the hint's missing boundaries
 * added (dp_damon_hints_merge()), so that a commit keeps DAMON's finer
 * split and the counts of every region it leaves whole.  Returns how many
 * boundaries were missing (0: DAMON has them all), or -E2BIG/-ENODATA when
 * the hint should be committed as it is (no read-back of this target yet,
 * or the merge exceeds the budget).
 */
static int merge_with_view(const struct damon_thread *d, struct hint_set *h, size_t k, size_t budget) {
        const struct dp_damon_target_hint *t = &h->targets[k];
        _cleanup_free_ struct dp_range *view = calloc(d->work.nr_rows ?: 1, sizeof(*view));
        struct dp_range *merged;
        struct dp_damon_range *as_damon;
        size_t nv, n, added;
        int r;

        if (!view)
                return -ENOMEM;
        nv = view_ranges(d, t->pid, view);
        if (nv == 0)
                return -ENODATA;
        merged = calloc(nv + 2 * t->nr_regions, sizeof(*merged));
        as_damon = calloc(nv + 2 * t->nr_regions, sizeof(*as_damon));
        if (!merged || !as_damon) {
                free(merged);
                free(as_damon);
                return -ENOMEM;
        }
        r = dp_damon_hints_merge(view, nv, h->ranges[k], t->nr_regions, MERGE_TOLERANCE, budget, merged, &n,
                                 &added);
        if (r < 0) {
                free(merged);
                free(as_damon);
                return r;
        }
        for (size_t j = 0; j < n; j++)
                as_damon[j] = (struct dp_damon_range) { merged[j].start, merged[j].end };
        h->pure[k] = h->ranges[k];
        h->nr_pure[k] = t->nr_regions;
        free(h->damon_ranges[k]);
        h->ranges[k] = merged;
        h->damon_ranges[k] = as_damon;
        h->targets[k].regions = as_damon;
        h->targets[k].nr_regions = n;
        return (int) DP_MIN(added, (size_t) INT_MAX);
}

/* With DAMON running the same targets: each hint merged into DAMON's own
 * layout; true if some boundary was missing, false if nothing needs a
 * commit.  A target that cannot be merged counts as changed when its hint
 * differs from the last one committed. */
static bool merged_needs_commit(struct damon_thread *d, struct hint_set *h) {
        size_t budget = DP_MAX(d->max_nr_regions / DP_MAX(h->n, (size_t) 1), (size_t) 3);
        bool needed = false;

        for (size_t i = 0; i < h->n; i++) {
                bool differs = dp_damon_hints_differ(d->committed[i].ranges, d->committed[i].nr, h->ranges[i],
                                                     h->targets[i].nr_regions, HINT_TOLERANCE);
                int r = merge_with_view(d, h, i, budget);

                needed |= r > 0 || (r < 0 && differs);
        }
        return needed;
}

static bool same_targets(const struct damon_thread *d, const struct hint_set *h) {
        if (h->n != d->nr_committed)
                return false;
        for (size_t i = 0; i < h->n; i++)
                if (h->targets[i].pid != d->committed[i].pid)
                        return false;
        return true;
}

/* Takes the hint set's layouts as the committed ones. */
static void remember_committed(struct damon_thread *d, struct hint_set *h) {
        committed_clear(d);
        /* The hint, not the merged layout: the next hint is compared with it. */
        for (size_t i = 0; i < h->n; i++) {
                bool merged = h->pure[i] != NULL;

                d->committed[i] = (struct committed_target) {
                        .pid = h->targets[i].pid,
                        .ranges = merged ? h->pure[i] : h->ranges[i],
                        .nr = merged ? h->nr_pure[i] : h->targets[i].nr_regions,
                };
                if (merged)
                        h->pure[i] = NULL;
                else
                        h->ranges[i] = NULL;
        }
        d->nr_committed = h->n;
        d->work.nr_targets = h->n;
        for (size_t i = 0; i < h->n; i++)
                d->work.targets[i] = h->targets[i].pid;
}

/* A scheme this kernel cannot run stays so: the daemon keeps away from
 * DAMON rather than retrying it, and says which line and which file. */
static void refuse_schemes(struct damon_thread *d, const char *refusal) {
        d->decision.role = d->work.role = DP_DAMON_ROLE_OBSERVE;
        snprintf(d->decision.reason, sizeof(d->decision.reason), "%s", refusal);
        snprintf(d->work.reason, sizeof(d->work.reason), "%s", refusal);
        log_damon_role(dp_damon_role_name(DP_DAMON_ROLE_OBSERVE), -1, refusal);
}

static int start_owned(struct damon_thread *d, const struct hint_set *h) {
        const struct dp_config *c = &d->config;
        char refusal[sizeof(d->decision.reason)] = "";
        struct dp_damon_own_params p = {
                .operations = c->target_mode == DP_TARGETS_PHYS ? "paddr" : "vaddr",
                .sample_us = c->sample_interval_us,
                .aggr_us = c->aggr_interval_us,
                .update_us = c->maps_refresh_us,
                .min_nr_regions = c->min_nr_regions,
                .max_nr_regions = c->max_nr_regions,
                .quota_goal = c->damon_goal != DP_DAMON_GOAL_NONE,
                .goal_target_value = c->damon_goal_target,
                .targets = h->targets,
                .nr_targets = h->n,
                .schemes = c->damon_schemes,
                .nr_schemes = c->damon_n_schemes,
                .refusal = refusal,
                .refusal_size = sizeof(refusal),
        };
        int r;

        r = dp_damon_own_start(d->fs, &d->decision, &p, c->damon_state_file, &d->state);
        if (r == -EOPNOTSUPP && refusal[0])
                refuse_schemes(d, refusal);
        if (r < 0)
                return r;
        d->have_state = true;
        log_damon_role(dp_damon_role_name(DP_DAMON_ROLE_OWNED), (int) d->decision.kdamond,
                       "created and turned on our own kdamond");
        return 0;
}

static void commit_hints(struct damon_thread *d) {
        uint32_t pids[DAMON_VIEW_MAX_TARGETS];
        struct hint_set h = {};
        size_t n;
        int r;

        n = choose_targets(d, pids);
        r = build_hints(d, pids, n, &h);
        if (r < 0) {
                note_failure(d, "hints", r);
                goto out;
        }
        if (h.n == 0)
                goto out;       /* nothing sampled yet: DAMON would have no target */
        if (d->have_state && d->work.running && same_targets(d, &h) && !merged_needs_commit(d, &h)) {
                d->work.commits_skipped++;
                goto out;
        }

        if (d->decision.role == DP_DAMON_ROLE_OWNED && !d->have_state)
                r = start_owned(d, &h);
        else
                /* Another reader's request holds DAMON's command slot for up
                 * to an aggregation (EBUSY): wait a moment and commit again. */
                for (int tries = 0;; tries++) {
                        r = dp_damon_commit_hints(d->fs, &d->state, d->config.damon_state_file, h.targets, h.n);
                        if (r != -EBUSY || tries >= READ_BACK_TRIES)
                                break;
                        dp_damon_fs_clear_error(d->fs);
                        (void) nanosleep(&(struct timespec) { .tv_nsec = READ_BACK_BUSY_WAIT_NSEC }, NULL);
                }
        for (size_t i = 0; i < h.n; i++)
                DP_PROBE4(damon_commit, d->decision.kdamond, h.targets[i].pid, h.targets[i].nr_regions, r);
        if (r < 0) {
                note_failure(d, d->have_state ? "commit" : "start", r);
                goto out;
        }
        d->work.commits++;
        d->work.last_commit_usec = dp_now_ns(CLOCK_REALTIME) / NSEC_PER_USEC;
        d->failures = 0;
        /* A commit to an owned kdamond that was off turns it on again. */
        d->work.running = d->was_running = true;
        remember_committed(d, &h);
out:
        hint_set_done(&h);
}

static void feed_goal(struct damon_thread *d) {
        int r;

        d->work.hot_fraction = dp_damon_hot_fraction(&d->snap, d->work.targets, d->work.nr_targets);
        if (!dp_config_feeds_hot_fraction(&d->config) || !d->work.running || d->decision.role == DP_DAMON_ROLE_OBSERVE)
                return;
        r = dp_damon_feed_goal(d->fs, &d->state, d->config.damon_state_file, d->work.hot_fraction);
        if (r < 0)
                note_failure(d, "quota-goal", r);
        else
                d->work.goal_feeds++;
}

/* For each DAMON target, how its hot regions agree with the sampled ones:
 * what an operator looks at to see whether the hints help. */
static void judge_agreement(struct damon_thread *d) {
        d->work.nr_agreement = 0;
        for (size_t i = 0; i < d->work.nr_targets; i++) {
                struct damon_agreement *ag = &d->work.agreement[d->work.nr_agreement];
                const struct dp_snapshot_target *t = snapshot_target(&d->snap, d->work.targets[i]);

                ag->pid = d->work.targets[i];
                if (t && dp_damon_target_agreement(d->work.rows, d->work.nr_rows, ag->pid, &d->snap, t,
                                                   HINT_GRANULE_GAP, &ag->a) == 0)
                        d->work.nr_agreement++;
        }
}

static void read_back(struct damon_thread *d) {
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        _cleanup_free_ struct dp_damon_view_input *in = NULL;
        size_t n = 0, k = 0;
        int r;

        if (!d->work.running)
                return;
        /* Another reader's update_schemes_tried_regions rebuilds the
         * directory under us (ENOENT, ENODEV): read again at once.  Its
         * request holds DAMON's command slot until the kdamond answers,
         * within an aggregation (EBUSY): wait a moment and ask again. */
        for (int tries = 0;; tries++) {
                r = dp_damon_read_tried(d->fs, d->decision.kdamond, d->decision.context, &tried, &n);
                if (r >= 0 || (r != -ENOENT && r != -ENODEV && r != -EBUSY) || tries >= READ_BACK_TRIES)
                        break;
                dp_damon_fs_clear_error(d->fs);
                if (r == -EBUSY)
                        (void) nanosleep(&(struct timespec) { .tv_nsec = READ_BACK_BUSY_WAIT_NSEC }, NULL);
        }
        if (r < 0) {
                note_failure(d, "read-back", r);
                return;
        }
        d->work.read_backs++;
        in = calloc(n ?: 1, sizeof(*in));
        if (!in) {
                note_failure(d, "read-back", -ENOMEM);
                return;
        }
        /* The first scheme's regions: one scheme covers every region DAMON has
         * (ours matches all); more would only repeat them. */
        for (size_t i = 0; i < n; i++)
                if (tried[i].scheme == tried[0].scheme)
                        in[k++] = (struct dp_damon_view_input) {
                                .start = tried[i].start, .end = tried[i].end,
                                .nr_accesses = tried[i].nr_accesses, .age = tried[i].age,
                        };
        if (k > d->work.rows_cap) {
                struct dp_damon_view_row *rows = reallocarray(d->work.rows, k, sizeof(*rows));

                if (!rows) {
                        note_failure(d, "read-back", -ENOMEM);
                        return;
                }
                d->work.rows = rows;
                d->work.rows_cap = k;
        }
        d->work.nr_rows = dp_damon_view_build(in, k, d->work.targets, d->work.nr_targets, &d->snap, d->work.rows);
        judge_agreement(d);
}

/* The context's schemes and their stats: ours, or an administrator's, read
 * and never changed (update_schemes_stats is a command, not a setting). */
static void read_schemes(struct damon_thread *d) {
        _cleanup_free_ struct dp_damon_scheme_info *info = NULL;
        size_t n = 0;
        int r;

        if (!d->work.running)
                return;
        r = dp_damon_read_schemes(d->fs, d->decision.kdamond, d->decision.context, &info, &n);
        if (r < 0) {
                note_failure(d, "schemes", r);
                return;
        }
        d->work.nr_schemes = DP_MIN(n, (size_t) DAMON_VIEW_MAX_SCHEMES);
        if (d->work.nr_schemes)
                memcpy(d->work.schemes, info, d->work.nr_schemes * sizeof(*info));
}

/* The schemes' hot filters follow the PMU's hot ranges of our one target
 * (the configuration allows no more), rewritten only when a range edge
 * moved materially (each rewrite costs DAMON a commit) and emptied only
 * after HOT_FILTER_HOLD_PASSES passes without any. */
static void update_hot_filters(struct damon_thread *d) {
        struct dp_damon_range hot[DP_DAMON_HOT_FILTER_MAX];
        struct dp_range now[DP_DAMON_HOT_FILTER_MAX];
        const struct dp_snapshot_target *t;
        int n, r;

        if (!dp_config_has_hot_filters(&d->config) || d->decision.role != DP_DAMON_ROLE_OWNED || !d->work.running ||
            d->work.nr_targets != 1)
                return;
        t = snapshot_target(&d->snap, d->work.targets[0]);
        if (!t)
                return;
        n = dp_damon_hot_filter_ranges(&d->snap.regions[t->first_region], t->nr_regions, DP_DAMON_HOT_FILTER_MAX,
                                       hot);
        if (n < 0) {
                note_failure(d, "hot-filters", n);
                return;
        }
        d->passes_without_hot = n > 0 ? 0 : d->passes_without_hot + 1;
        if (n == 0 && d->passes_without_hot < HOT_FILTER_HOLD_PASSES)
                return;
        for (int i = 0; i < n; i++)
                now[i] = (struct dp_range) { hot[i].start, hot[i].end };
        if ((size_t) n == d->nr_hot && !dp_damon_hints_differ(d->hot, d->nr_hot, now, (size_t) n, HINT_TOLERANCE))
                return;
        r = dp_damon_update_hot_filters(d->fs, &d->state, d->config.damon_state_file, d->config.damon_schemes,
                                        d->config.damon_n_schemes, hot, (size_t) n);
        if (r < 0) {
                note_failure(d, "hot-filters", r);
                return;
        }
        memcpy(d->hot, now, (size_t) n * sizeof(now[0]));
        d->nr_hot = (size_t) n;
}

/* Notices a kdamond that stopped without us: someone turned it off, or (vaddr)
 * every target exited.  Owned, the next commit turns it on again.  A state
 * DAMON is too busy to show tells nothing: what was known stays, so that a
 * stop behind it is still noticed, and the pass ends there. */
static int check_running(struct damon_thread *d) {
        bool running = false;
        int r;

        if (!d->have_state) {
                d->work.running = false;
                return 0;
        }
        r = dp_damon_kdamond_running(d->fs, d->decision.kdamond, &running);
        if (r == -EBUSY) {
                note_failure(d, "state", r);
                return r;
        }
        if (r < 0)
                note_failure(d, "state", r);    /* gone (ENOENT) or garbled: not running */
        else if (!running && d->was_running)
                note_failure(d, DAMON_STEP_STOPPED, ESRCH);
        d->work.running = running;
        d->was_running = running;
        if (!running)
                committed_clear(d);     /* so that the next pass writes everything again */
        return 0;
}

static void pass(struct damon_thread *d) {
        uint64_t errors = d->work.errors;

        if (tracker_thread_with_snapshot(d->tracker, copy_snapshot, &d->snap) < 0)
                return;
        /* A failure names its own file, not one an earlier probe left behind. */
        dp_damon_fs_clear_error(d->fs);
        d->busy = false;
        d->work.max_nr_accesses = d->snap.max_nr_accesses;
        if (check_running(d) >= 0) {
                if (d->decision.role == DP_DAMON_ROLE_OWNED ||
                    (d->decision.role == DP_DAMON_ROLE_ATTACHED && d->work.running))
                        commit_hints(d);
                update_hot_filters(d);
                feed_goal(d);
                read_back(d);
                read_schemes(d);
        }
        if (d->busy)
                d->busy_passes++;
        else if (d->work.errors == errors)
                d->busy_passes = 0;
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
                        note_failure(d, "attach", r);
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
        /* No kdamond of ours yet: start it as soon as the samples name a
         * target, an aggregation after, not a hint interval. */
        if (d->decision.role == DP_DAMON_ROLE_OWNED && !d->have_state && d->failures == 0)
                return DP_MIN(wait, d->config.aggr_interval_us);

        for (unsigned i = 0; i < d->failures && wait < BACKOFF_MAX_USEC; i++)
                wait *= 2;
        return DP_MIN(wait, DP_MAX(BACKOFF_MAX_USEC, d->config.damon_hint_interval_us));
}

/* Sleeps until @usec pass or stop is asked; returns true on stop. */
static bool wait_or_stop(struct damon_thread *d, uint64_t usec) {
        struct timespec deadline;
        bool stop;

        clock_gettime(CLOCK_MONOTONIC, &deadline);
        deadline.tv_sec += (time_t) (usec / 1000000);
        deadline.tv_nsec += (long) (usec % 1000000) * 1000;
        if (deadline.tv_nsec >= 1000000000) {
                deadline.tv_sec++;
                deadline.tv_nsec -= 1000000000;
        }
        pthread_mutex_lock(&d->wake_lock);
        while (!d->stop && pthread_cond_timedwait(&d->wake, &d->wake_lock, &deadline) != ETIMEDOUT)
                ;
        stop = d->stop;
        pthread_mutex_unlock(&d->wake_lock);
        return stop;
}

static void *damon_main(void *userdata) {
        struct damon_thread *d = userdata;

        decide(d);
        if (d->decision.role == DP_DAMON_ROLE_OWNED || d->decision.role == DP_DAMON_ROLE_ATTACHED)
                while (!wait_or_stop(d, next_wait_usec(d)))
                        pass(d);
        else
                (void) wait_or_stop(d, UINT64_MAX / 2);
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
        committed_clear(d);
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
