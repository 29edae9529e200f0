/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What the tracker thread tracks: its targets read from /proc (a process's
 * maps, or the physical space's iomem), refreshed as their samples ask,
 * adopted when tracking all, and dropped when gone or no longer wanted. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fileio.h"
#include "log.h"
#include "proc-parse.h"
#include "tracker-thread-internal.h"

/* A target's maps are re-read at once when its samples fall outside its
 * regions (its address space grew where it is used), otherwise only every
 * this many refreshes, in turns (for what it unmapped), and only if it was
 * sampled since: one that was not is only looked up, for its exit.  Reading
 * every process's maps each second cost more than all the sampling at a few
 * thousand samples a second. */
#define IDLE_REFRESH_ROUNDS 10

static int read_ranges(uint32_t tgid, bool phys, struct dp_range **ranges, size_t *n) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        size_t len, bad_line = 0;
        int r;

        if (phys)
                snprintf(path, sizeof(path), "/proc/iomem");
        else
                snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
        r = dp_read_file(path, &text, &len);
        if (r < 0)
                return r;
        r = phys ? dp_parse_iomem(text, len, ranges, n, &bad_line) : dp_parse_maps(text, len, ranges, n, &bad_line);
        if (r == -EBADMSG)
                log_warning("%s: line %zu is not in the expected format", path, bad_line);
        else if (r == -EPERM)
                log_error("%s: addresses are hidden (not root?)", path);
        return r;
}

/* Adds or refreshes one target from /proc; a process that has exited is dropped. */
static int sync_target(struct tracker_thread *t, uint32_t tgid, bool phys) {
        _cleanup_free_ struct dp_range *ranges = NULL;
        size_t n = 0;
        int r;

        r = read_ranges(tgid, phys, &ranges, &n);
        if (r == -ENOENT || r == -ESRCH || (r == 0 && n == 0)) {
                /* Gone, or a kernel thread without an address space. */
                if (dp_tracker_has_target(t->tracker, tgid)) {
                        log_debug("target %u exited, dropping it", tgid);
                        dp_tracker_remove_target(t->tracker, tgid);
                }
                return r < 0 ? r : -ENOENT;
        }
        if (r < 0)
                return r;
        if (dp_tracker_has_target(t->tracker, tgid))
                return dp_tracker_set_ranges(t->tracker, tgid, ranges, n);
        r = dp_tracker_add_target(t->tracker, tgid, ranges, n);
        if (r == 0)
                log_debug("tracking %s %u with %zu ranges", phys ? "physical space" : "process", tgid, n);
        return r;
}

/* A target not sampled lately: only whether its process still exists (one
 * path lookup, where reading its maps walks every mapping). */
static void drop_if_gone(struct tracker_thread *t, uint32_t tgid) {
        char path[32];

        snprintf(path, sizeof(path), "/proc/%u", tgid);
        if (access(path, F_OK) < 0 && errno == ENOENT) {
                log_debug("target %u exited, dropping it", tgid);
                dp_tracker_remove_target(t->tracker, tgid);
        }
}

void tracker_refresh_targets(struct tracker_thread *t, bool all) {
        const struct dp_config *c = &t->config;
        const struct dp_tracker_snapshot *snap;

        switch (c->target_mode) {
        case DP_TARGETS_PHYS:
                (void) sync_target(t, 0, true);
                return;
        case DP_TARGETS_PIDS:
                for (size_t i = 0; i < c->n_pids; i++)
                        if (sync_target(t, c->pids[i], false) == -ENOENT && !dp_tracker_has_target(t->tracker, c->pids[i]))
                                log_debug("pid %u is not running (yet)", c->pids[i]);
                return;
        case DP_TARGETS_ALL:
                /* Walk the published snapshot, a copy (sync_target() may drop
                 * targets as it goes) made at the last aggregation anyway;
                 * only this thread replaces it, so it reads it unlocked.  A
                 * target adopted since was read when it was. */
                snap = &t->published;
                t->refresh_round++;
                for (size_t i = 0; i < snap->nr_targets; i++) {
                        uint32_t tgid = snap->targets[i].tgid;

                        if (all || snap->targets[i].misses > 0)
                                (void) sync_target(t, tgid, false);
                        else if ((t->refresh_round + tgid) % IDLE_REFRESH_ROUNDS != 0)
                                continue;
                        else if (snap->targets[i].sampled_since_ranges)
                                (void) sync_target(t, tgid, false);
                        else
                                drop_if_gone(t, tgid);
                }
                return;
        }
}

/* Taken in every mode, so that strangers seen while tracking only some pids
 * do not pile up as "dropped"; adopted only when tracking all. */
void tracker_adopt_unknown(struct tracker_thread *t) {
        uint32_t tgids[DP_TRACKER_UNKNOWN_MAX];
        size_t n = dp_tracker_take_unknown(t->tracker, tgids, DP_ARRAY_SIZE(tgids));

        if (t->config.target_mode != DP_TARGETS_ALL)
                return;

        for (size_t i = 0; i < n; i++) {
                if (tgids[i] == 0 || tgids[i] == (uint32_t) t->self)
                        continue;
                if (dp_tracker_nr_targets(t->tracker) >= t->config.max_targets)
                        break;
                (void) sync_target(t, tgids[i], false);
        }
}

static bool pid_listed(const struct dp_config *c, uint32_t tgid) {
        for (size_t i = 0; i < c->n_pids; i++)
                if (c->pids[i] == tgid)
                        return true;
        return false;
}

/* Adopts the target settings of a reload: targets no longer wanted, or beyond
 * a lowered MaxTargets=, are dropped now; new ones come with the refresh. */
void tracker_apply_pending_targets(struct tracker_thread *t) {
        struct dp_config *c = &t->config;
        size_t kept = 0;

        pthread_mutex_lock(&t->pending_lock);
        c->target_mode = t->pending.mode;
        memcpy(c->pids, t->pending.pids, sizeof(c->pids));
        c->n_pids = t->pending.n_pids;
        c->max_targets = t->pending.max_targets;
        pthread_mutex_unlock(&t->pending_lock);

        if (dp_tracker_snapshot(t->tracker, &t->work) < 0)
                return;
        for (size_t i = 0; i < t->work.nr_targets; i++) {
                uint32_t tgid = t->work.targets[i].tgid;
                bool keep = c->target_mode == DP_TARGETS_PIDS ? pid_listed(c, tgid) : kept < c->max_targets;

                if (keep)
                        kept++;
                else {
                        log_debug("target %u no longer wanted after reload, dropping it", tgid);
                        dp_tracker_remove_target(t->tracker, tgid);
                }
        }
        /* The refresh that follows walks the published snapshot: without the
         * dropped ones, or it would read them back. */
        tracker_publish_snapshot(t);
}
