/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The DAMON pass's schemes side: the quota goal fed with the PMU's hot
 * fraction, the schemes and their stats read back, and the hot filters that
 * follow the PMU's hot ranges. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config-scheme.h"
#include "damon-thread-internal.h"
#include "log.h"
#include "macro.h"
#include "time-util.h"

/* How long the hot filters hold a hot range after a pass last found it
 * (dp_damon_hold_hot()): at the tiering guest's 200 samples a second, the
 * last fifth of a hot set still on the slow node fell out of one pass's
 * ranges for seconds at a time, though DAMON saw it used.  A range held
 * past its use costs little: the schemes still act only where DAMON's own
 * access pattern matches. */
#define HOT_FILTER_HOLD_USEC (10 * USEC_PER_SEC)

void damon_feed_goal(struct damon_thread *d) {
        int r, tries = 0;

        d->work.hot_fraction = dp_damon_hot_fraction(&d->snap, d->work.targets, d->work.nr_targets);
        if (!dp_config_feeds_hot_fraction(&d->config) || !d->work.running || d->decision.role == DP_DAMON_ROLE_OBSERVE)
                return;
        do
                r = dp_damon_feed_goal(d->fs, &d->state, d->config.damon_state_file, d->work.hot_fraction);
        while (damon_try_again(d, r, false, &tries));
        if (r < 0)
                damon_note_failure(d, "quota-goal", r);
        else
                d->work.goal_feeds++;
}

/* The context's schemes and their stats: ours, or an administrator's, read
 * and never changed (update_schemes_stats is a command, not a setting). */
void damon_read_schemes(struct damon_thread *d) {
        _cleanup_free_ struct dp_damon_scheme_info *info = NULL;
        size_t n = 0;
        int r, tries = 0;

        if (!d->work.running)
                return;
        do
                r = dp_damon_read_schemes(d->fs, d->decision.kdamond, d->decision.context, &info, &n);
        while (damon_try_again(d, r, false, &tries));
        if (r < 0) {
                damon_note_failure(d, "schemes", r);
                return;
        }
        d->work.nr_schemes = DP_MIN(n, (size_t) DAMON_VIEW_MAX_SCHEMES);
        if (d->work.nr_schemes)
                memcpy(d->work.schemes, info, d->work.nr_schemes * sizeof(*info));
}

/* The PMU's hot ranges of @t for the filters, into @hot: its hot regions
 * and where its granules are hot (as the hints outline them), with those
 * of the last HOT_FILTER_HOLD_USEC.  The count, or a negative errno. */
static int hot_filter_ranges(struct damon_thread *d, const struct dp_snapshot_target *t,
                             struct dp_damon_range hot[static DP_DAMON_HOT_FILTER_MAX]) {
        _cleanup_free_ struct dp_range *sampled = calloc(t->nr_granules ?: 1, sizeof(*sampled));
        struct dp_damon_range fresh[DP_DAMON_HOT_FILTER_MAX];
        struct dp_range held[HOT_HELD_MAX];
        int ns, nf;

        if (!sampled)
                return -ENOMEM;
        ns = dp_damon_sampled_hot(&d->snap.granules[t->first_granule], t->nr_granules, t->start, t->end,
                                  HINT_GRANULE_GAP, sampled);
        if (ns < 0)
                return ns;
        nf = dp_damon_hot_filter_ranges(&d->snap.regions[t->first_region], t->nr_regions, sampled, (size_t) ns,
                                        DP_DAMON_HOT_FILTER_MAX, fresh);
        if (nf < 0)
                return nf;
        /* Another target's ranges are in another address space. */
        if (d->held_target != t->tgid)
                d->nr_held = 0;
        d->held_target = t->tgid;
        d->nr_held = dp_damon_hold_hot(d->held, d->nr_held, HOT_HELD_MAX, fresh, (size_t) nf,
                                       dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_USEC, HOT_FILTER_HOLD_USEC);
        for (size_t i = 0; i < d->nr_held; i++)
                held[i] = (struct dp_range) { d->held[i].start, d->held[i].end };
        return dp_damon_hot_filter_ranges(NULL, 0, held, d->nr_held, DP_DAMON_HOT_FILTER_MAX, hot);
}

/* Each range, in MiB: a tiering trace sets them beside the hot set's frames. */
static void log_hot_filters(const struct dp_damon_range *hot, int n) {
        char text[DP_DAMON_HOT_FILTER_MAX * 32] = "";
        size_t len = 0;

        for (int i = 0; i < n && len < sizeof(text); i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, " %.1f-%.1f",
                                         (double) hot[i].start / (1 << 20), (double) hot[i].end / (1 << 20));
        log_debug("DAMON hot filters at %.2f: %d ranges (MiB):%s",
                  (double) dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_SEC, n, text);
}

/* The schemes' hot filters follow the PMU's hot ranges of our one target
 * (the configuration allows no more), rewritten only when a range edge
 * moved materially (each rewrite costs DAMON a commit) and emptied only
 * once no range was seen for HOT_FILTER_HOLD_USEC.  Written before the
 * hints, so that the hints' commit carries them (damon_commit_pending()). */
void damon_update_hot_filters(struct damon_thread *d) {
        struct dp_damon_range hot[DP_DAMON_HOT_FILTER_MAX];
        struct dp_range now[DP_DAMON_HOT_FILTER_MAX];
        const struct dp_snapshot_target *t;
        int n, r, tries = 0;

        if (!dp_config_has_hot_filters(&d->config) || d->decision.role != DP_DAMON_ROLE_OWNED || !d->work.running ||
            d->work.nr_targets != 1)
                return;
        t = damon_snapshot_target(&d->snap, d->work.targets[0]);
        if (!t)
                return;
        n = hot_filter_ranges(d, t, hot);
        if (n < 0) {
                damon_note_failure(d, "hot-filters", n);
                return;
        }
        for (int i = 0; i < n; i++)
                now[i] = (struct dp_range) { hot[i].start, hot[i].end };
        if ((size_t) n == d->nr_hot && !dp_damon_hints_differ(d->hot, d->nr_hot, now, (size_t) n, HINT_TOLERANCE))
                return;
        do
                r = dp_damon_write_hot_filters(d->fs, &d->state, d->config.damon_state_file,
                                               d->schemes, d->config.damon_n_schemes, hot, (size_t) n);
        while (damon_try_again(d, r, false, &tries));
        if (r < 0) {
                damon_note_failure(d, "hot-filters", r);
                return;
        }
        memcpy(d->hot, now, (size_t) n * sizeof(now[0]));
        d->nr_hot = (size_t) n;
        d->filters_pending = true;
        log_hot_filters(hot, n);
}

/* Filters written this pass (or an earlier one whose commit failed) that no
 * commit of the hints carried: committed on their own. */
void damon_commit_pending(struct damon_thread *d) {
        int r, tries = 0;

        if (!d->filters_pending)
                return;
        do
                r = dp_damon_commit_written(d->fs, &d->state);
        while (damon_try_again(d, r, false, &tries));
        log_debug_errno(r, "DAMON hot filters committed alone at %.2f: %s",
                        (double) dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_SEC, r < 0 ? "%m" : "done");
        if (r < 0) {
                damon_note_failure(d, "hot-filters", r);
                return;
        }
        d->filters_pending = false;
}
