/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "damon-control.h"

/* Pure: the tree, the previous state and the settings in, a role out. */

__attribute__((format(printf, 3, 4)))
static void set(struct dp_damon_decision *d, enum dp_damon_role role, const char *fmt, ...) {
        va_list ap;

        d->role = role;
        va_start(ap, fmt);
        vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
        va_end(ap);
}

/* Why the existing kdamonds are not ours, naming a running one first. */
static void observe_foreign(const struct dp_damon_tree *t, struct dp_damon_decision *d) {
        for (unsigned k = 0; k < t->nr_listed; k++)
                if (t->kdamonds[k].running) {
                        set(d, DP_DAMON_ROLE_OBSERVE, "kdamond %u is running (pid %d) and is not ours: observe only",
                            k, t->kdamonds[k].pid);
                        return;
                }
        set(d, DP_DAMON_ROLE_OBSERVE,
            "%u kdamond(s) exist, off and not ours; recreating kdamonds would destroy their configuration: "
            "observe only", t->nr_kdamonds);
}

static bool is_our_leftover(const struct dp_damon_tree *t, const struct dp_damon_state *prev) {
        const struct dp_damon_kdamond_info *k0 = &t->kdamonds[0];

        if (!prev || prev->role != DP_DAMON_ROLE_OWNED || prev->kdamond != 0 || t->nr_kdamonds != 1)
                return false;
        /* Running: only with the very thread we started (a pid is proof enough
         * while it lives); an unknown pid proves nothing. */
        return !k0->running || (prev->kdamond_pid > 0 && k0->pid == prev->kdamond_pid);
}

static void decide_own(const struct dp_damon_tree *t, const struct dp_damon_state *prev, bool need_paddr,
                       struct dp_damon_decision *d) {
        const char *ops = need_paddr ? "paddr" : "vaddr";
        const char *avail = t->features.avail_operations;

        if (t->nr_kdamonds > 0 && !is_our_leftover(t, prev)) {
                observe_foreign(t, d);
                return;
        }
        if (*avail && !dp_damon_operations_available(avail, ops)) {
                set(d, DP_DAMON_ROLE_OBSERVE, "DAMON offers operations \"%s\", not %s: observe only", avail, ops);
                return;
        }
        d->kdamond = 0;
        d->context = 0;
        if (t->nr_kdamonds == 0) {
                set(d, DP_DAMON_ROLE_OWNED, "no kdamond exists: creating kdamond 0 (%s)", ops);
                return;
        }
        d->recover = true;
        set(d, DP_DAMON_ROLE_OWNED, "kdamond 0 (%s) is the leftover of damon-perfd pid %d, which is gone: recovering it",
            t->kdamonds[0].running ? "running" : "off", prev->daemon_pid);
}

static void decide_attach(int kdamond, unsigned context, const struct dp_damon_tree *t,
                          const struct dp_damon_state *prev, struct dp_damon_decision *d) {
        const struct dp_damon_kdamond_info *k;

        if (kdamond < 0) {
                set(d, DP_DAMON_ROLE_OBSERVE, "Mode=attach without Kdamond=: observe only");
                return;
        }
        if ((unsigned) kdamond >= t->nr_kdamonds) {
                set(d, DP_DAMON_ROLE_OBSERVE, "kdamond %d does not exist (nr_kdamonds is %u): observe only",
                    kdamond, t->nr_kdamonds);
                return;
        }
        if ((unsigned) kdamond >= t->nr_listed) {
                set(d, DP_DAMON_ROLE_OBSERVE, "kdamond %d is beyond the %d this daemon can inspect: observe only",
                    kdamond, DP_DAMON_MAX_KDAMONDS);
                return;
        }
        k = &t->kdamonds[kdamond];
        if (context >= k->nr_contexts) {
                set(d, DP_DAMON_ROLE_OBSERVE, "kdamond %d has no context %u (nr_contexts is %u): observe only",
                    kdamond, context, k->nr_contexts);
                return;
        }
        d->kdamond = (unsigned) kdamond;
        d->context = context;
        d->recover = prev && prev->role == DP_DAMON_ROLE_ATTACHED;
        if (k->running)
                set(d, DP_DAMON_ROLE_ATTACHED, "attaching to kdamond %d context %u (running, pid %d)%s", kdamond,
                    context, k->pid, d->recover ? ", recovering a previous attach" : "");
        else
                set(d, DP_DAMON_ROLE_ATTACHED, "attaching to kdamond %d context %u (off)%s", kdamond, context,
                    d->recover ? ", recovering a previous attach" : "");
}

int dp_damon_decide(int mode, int attach_kdamond, unsigned attach_context, const struct dp_damon_tree *tree,
                    const struct dp_damon_state *previous, bool previous_alive, bool need_paddr,
                    struct dp_damon_decision *ret) {
        struct dp_damon_decision d = {};

        if (mode != DP_DAMON_OFF && mode != DP_DAMON_OWN && mode != DP_DAMON_ATTACH)
                return -EINVAL;
        if (previous && previous->role != DP_DAMON_ROLE_OWNED && previous->role != DP_DAMON_ROLE_ATTACHED)
                previous = NULL;        /* a restored state is no state */
        if (mode == DP_DAMON_OFF)
                set(&d, DP_DAMON_ROLE_OFF, "Mode=off: DAMON is not touched");
        else if (previous && previous_alive)
                set(&d, DP_DAMON_ROLE_OBSERVE, "damon-perfd pid %d still holds the DAMON state file: observe only",
                    previous->daemon_pid);
        else if (mode == DP_DAMON_OWN)
                decide_own(tree, previous, need_paddr, &d);
        else
                decide_attach(attach_kdamond, attach_context, tree, previous, &d);
        *ret = d;
        return 0;
}
