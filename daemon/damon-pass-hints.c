/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The DAMON pass's hints: the targets, a hint per target from the samples,
 * merged into DAMON's own layout, committed; then DAMON's regions read back
 * and judged against the samples. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config-scheme.h"
#include "damon-node.h"
#include "damon-thread-internal.h"
#include "log.h"
#include "macro.h"
#include "probes.h"
#include "test-seam.h"
#include "time-util.h"

/* DAMON's edge this close to a sampled boundary is that boundary: a
 * granule's width, the samples' own precision. */
#define MERGE_TOLERANCE DP_SKETCH_GRANULE
/* DAMON's hot regions agree with the sampled ones when each covers this
 * much of the other (bytes). */
#define AGREED 0.9

/* Which processes DAMON should watch: in attach mode the ones the kdamond
 * already has, otherwise the hottest the PMU sees. */
static size_t choose_targets(struct damon_thread *d, uint32_t *pids) {
        char path[128];
        uint64_t n = 0, pid;

        if (d->config.target_mode == DP_TARGETS_PHYS) {
                pids[0] = 0;
                return damon_snapshot_target(&d->snap, 0) ? 1 : 0;
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

/* What DAMON monitors of target @t, as DAMON itself would choose it: a
 * process's mappings without the two widest gaps between them; the
 * physical address space whole. */
static int target_cover(const struct damon_thread *d, const struct dp_snapshot_target *t,
                        struct dp_range cover[static 3], size_t *ret_n) {
        if (d->config.target_mode == DP_TARGETS_PHYS) {
                cover[0] = (struct dp_range) { t->start, t->end };
                *ret_n = 1;
                return 0;
        }
        return dp_damon_vaddr_cover(&d->snap.regions[t->first_region], t->nr_regions, cover, ret_n);
}

/* While the hot filters change (this pass wrote them) and some scheme acts
 * only inside them, the hint cuts their ranges into cells of at least this
 * much: that scheme acts only there, and DAMON, whose regions over a node's
 * idle memory are tens of MiB wide, counts each cell apart within an
 * aggregation instead of splitting at random for seconds until a region
 * fits the hot pages.  Traced in the tiering guest: the hot runs of 4-12
 * MiB lay in regions of 40-100 MiB, and migrate_hot waited up to 2 s for
 * DAMON to part them.  A cell a hot run's edge cuts moves its cold part
 * with it: half a MiB at most. */
#define HINT_GRID_CELL (512 * 1024)

/* The hint @ranges of @pid (@nr of them, room for @budget) cut into cells
 * over the hot filters' ranges, within half the budget (DAMON's own
 * boundaries are merged in after); as they were when that cannot fit. */
static int grid_over_hot_filters(const struct damon_thread *d, uint32_t pid, struct dp_range *ranges, size_t *nr,
                                 size_t budget) {
        _cleanup_free_ struct dp_range *cells = NULL;
        size_t n;
        int r;

        /* A scheme that only spares the hot ranges (pageout's reject=hot)
         * gains nothing from a finer count inside them; and the ranges are
         * in their own target's address space. */
        if (!d->filters_pending || d->nr_hot == 0 || !dp_config_acts_inside_hot(&d->config) ||
            pid != d->held_target)
                return 0;
        cells = calloc(budget / 2 ?: 1, sizeof(*cells));
        if (!cells)
                return -ENOMEM;
        r = dp_damon_hints_grid(ranges, *nr, d->hot, d->nr_hot, HINT_GRID_CELL, budget / 2, cells, &n);
        if (r == -E2BIG)
                return 0;
        if (r < 0)
                return r;
        memcpy(ranges, cells, n * sizeof(*cells));
        *nr = n;
        return 0;
}

/* One hint per chosen target the tracker knows, each within its share of
 * DAMON's region budget. */
static int build_hints(struct damon_thread *d, const uint32_t *pids, size_t n, struct hint_set *h) {
        size_t budget = DP_MAX(d->max_nr_regions / DP_MAX(n, (size_t) 1), (size_t) 3);

        for (size_t i = 0; i < n; i++) {
                const struct dp_snapshot_target *t = damon_snapshot_target(&d->snap, pids[i]);
                struct dp_range cover[3];
                size_t k = h->n, nr, room, nc;
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
                r = target_cover(d, t, cover, &nc);
                if (r == 0)
                        r = dp_damon_hints_from_granules(&d->snap.granules[t->first_granule], t->nr_granules,
                                                         cover, nc, HINT_GRANULE_GAP, budget, h->ranges[k], &nr);
                if (r == -ENODATA)
                        r = dp_damon_hints_build(&d->snap.regions[t->first_region], t->nr_regions,
                                                 d->snap.max_nr_accesses, budget, h->ranges[k], &nr);
                if (r == 0)
                        r = grid_over_hot_filters(d, pids[i], h->ranges[k], &nr, budget);
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

/* With -v: DAMON's regions of @pid as read back, with their counts, to see
 * in a run what each hint is merged into. */
static void log_view(const struct damon_thread *d, uint32_t pid, size_t n) {
        char text[512] = "";
        size_t len = 0;

        if (!log_debug_enabled())
                return;
        for (size_t i = 0; i < d->work.nr_rows && len < sizeof(text) - 60; i++)
                if (d->work.rows[i].pid == pid)
                        len += (size_t) snprintf(text + len, sizeof(text) - len, " %" PRIx64 "-%" PRIx64 ":%u",
                                                 d->work.rows[i].start, d->work.rows[i].end,
                                                 d->work.rows[i].damon_nr_accesses);
        log_debug("DAMON view at %.2f for pid %u: %zu regions:%s%s",
                  (double) dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_SEC, pid, n, text,
                  len < sizeof(text) - 60 ? "" : " ...");
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
        log_view(d, t->pid, nv);
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

/* With -v: each target's hint and what became of it, to see in a run
 * where the hints' boundaries lie and when they are committed. */
static void log_hint(const struct hint_set *h, size_t k, const char *what, int added) {
        const struct dp_range *r = h->pure[k] ? h->pure[k] : h->ranges[k];
        size_t n = h->pure[k] ? h->nr_pure[k] : h->targets[k].nr_regions, len = 0;
        char text[1024] = "";

        if (!log_debug_enabled())
                return;
        for (size_t i = 0; i < n && len < sizeof(text) - 40; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, " %" PRIx64 "-%" PRIx64, r[i].start,
                                         r[i].end);
        log_debug("DAMON hint at %.2f for pid %u: %zu ranges (%s), %zu regions to commit, %d boundaries added:%s%s",
                  (double) dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_SEC, h->targets[k].pid, n, what,
                  h->targets[k].nr_regions, added, text, len < sizeof(text) - 40 ? "" : " ...");
}

/* Whether DAMON's hot regions of @pid in the last read-back agree with the
 * sampled hot ranges, as the value benchmark counts convergence.  A commit
 * then has nothing to teach DAMON and costs it: on Linux 6.12 each one
 * restarts DAMON's aggregation and address-space update, and every region
 * a new boundary cuts off starts again from no accesses, which DAMON may
 * merge with its cold neighbour before it has counted any. */
static bool damon_agrees(const struct damon_thread *d, uint32_t pid) {
        for (size_t i = 0; i < d->work.nr_agreement; i++)
                if (d->work.agreement[i].pid == pid)
                        return d->work.agreement[i].a.precision >= AGREED && d->work.agreement[i].a.recall >= AGREED;
        return false;
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
                bool agrees = damon_agrees(d, h->targets[i].pid);

                needed |= !agrees && (r > 0 || (r < 0 && differs));
                log_hint(h, i,
                         agrees ? "DAMON agrees"
                         : r >= 0 ? "merged"
                         : differs ? "whole, changed"
                                   : "whole, unchanged",
                         r);
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
        damon_committed_clear(d);
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
                .schemes = d->schemes,
                .nr_schemes = c->damon_n_schemes,
                .refusal = refusal,
                .refusal_size = sizeof(refusal),
        };
        int r;

        /* Read afresh for each kdamond: memory comes and goes with hotplug. */
        r = dp_damon_resolve_node_filters(test_seam_get()->sys_root, c->damon_schemes, c->damon_n_schemes,
                                          d->schemes, refusal, sizeof(refusal));
        if (r < 0) {
                refuse_schemes(d, refusal);
                return r;
        }
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

void damon_commit_hints(struct damon_thread *d) {
        uint32_t pids[DAMON_VIEW_MAX_TARGETS];
        struct hint_set h = {};
        int kdamond_pid = d->state.kdamond_pid;
        bool believed_running = d->have_state && d->work.running;
        size_t n;
        int r, tries = 0;

        n = choose_targets(d, pids);
        r = build_hints(d, pids, n, &h);
        if (r < 0) {
                damon_note_failure(d, "hints", r);
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
                do
                        r = dp_damon_commit_hints(d->fs, &d->state, d->config.damon_state_file, h.targets, h.n);
                while (damon_try_again(d, r, false, &tries));
        log_debug_errno(r, "DAMON commit at %.2f: %zu targets, %zu regions for the first: %s",
                        (double) dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_SEC, h.n, h.targets[0].nr_regions,
                        r < 0 ? "%m" : "done");
        for (size_t i = 0; i < h.n; i++)
                DP_PROBE4(damon_commit, d->decision.kdamond, h.targets[i].pid, h.targets[i].nr_regions, r);
        if (r < 0) {
                damon_note_failure(d, d->have_state ? "commit" : "start", r);
                goto out;
        }
        /* A kdamond that stopped after the pass looked at it is turned on
         * again by the commit, with a new pid: a stop all the same. */
        if (believed_running && d->state.kdamond_pid != kdamond_pid)
                damon_note_failure(d, DAMON_STEP_STOPPED, ESRCH);
        d->work.commits++;
        d->work.last_commit_usec = dp_now_ns(CLOCK_REALTIME) / NSEC_PER_USEC;
        d->failures = 0;
        d->filters_pending = false;     /* the commit carried them */
        /* A commit to an owned kdamond that was off turns it on again. */
        d->work.running = d->was_running = true;
        remember_committed(d, &h);
out:
        hint_set_done(&h);
}

/* For each DAMON target, how its hot regions agree with the sampled ones:
 * what an operator looks at to see whether the hints help. */
static void judge_agreement(struct damon_thread *d) {
        d->work.nr_agreement = 0;
        for (size_t i = 0; i < d->work.nr_targets; i++) {
                struct damon_agreement *ag = &d->work.agreement[d->work.nr_agreement];
                const struct dp_snapshot_target *t = damon_snapshot_target(&d->snap, d->work.targets[i]);

                ag->pid = d->work.targets[i];
                if (t && dp_damon_target_agreement(d->work.rows, d->work.nr_rows, ag->pid, &d->snap, t,
                                                   HINT_GRANULE_GAP, &ag->a) == 0)
                        d->work.nr_agreement++;
        }
}

void damon_judge_again(struct damon_thread *d) {
        if (d->work.running)
                judge_agreement(d);
}

void damon_read_back(struct damon_thread *d) {
        _cleanup_free_ struct dp_damon_tried_region *tried = NULL;
        _cleanup_free_ struct dp_damon_view_input *in = NULL;
        size_t n = 0;
        int r, tries = 0;

        if (!d->work.running)
                return;
        do
                r = dp_damon_read_tried(d->fs, d->decision.kdamond, d->decision.context, &tried, &n);
        while (damon_try_again(d, r, true, &tries));
        if (r < 0) {
                damon_note_failure(d, "read-back", r);
                return;
        }
        d->work.read_backs++;
        in = calloc(n ?: 1, sizeof(*in));
        if (!in) {
                damon_note_failure(d, "read-back", -ENOMEM);
                return;
        }
        for (size_t i = 0; i < n; i++)
                in[i] = (struct dp_damon_view_input) {
                        .start = tried[i].start, .end = tried[i].end,
                        .nr_accesses = tried[i].nr_accesses, .age = tried[i].age,
                };
        if (n > d->work.rows_cap) {
                struct dp_damon_view_row *rows = reallocarray(d->work.rows, n, sizeof(*rows));

                if (!rows) {
                        damon_note_failure(d, "read-back", -ENOMEM);
                        return;
                }
                d->work.rows = rows;
                d->work.rows_cap = n;
        }
        d->work.nr_rows = dp_damon_view_build(in, n, d->work.targets, d->work.nr_targets, &d->snap, d->work.rows);
        judge_agreement(d);
}
