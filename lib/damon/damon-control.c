/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "damon-write.h"
#include "macro.h"

/* Sessions: creating our kdamond or attaching to one, and undoing either. */

static int write_nr_kdamonds(struct dp_damon_fs *fs, unsigned n) {
        int r;

        dp_damon_fs_grant_create(fs, true);
        r = dp_damon_fs_write_u64(fs, "kdamonds/nr_kdamonds", n);
        dp_damon_fs_grant_create(fs, false);
        return r;
}

/* Turns kdamond @k off if it is on (the kernel refuses "off" for a kdamond
 * that is not running).  A kdamond directory that is gone counts as off. */
static int ensure_off(struct dp_damon_fs *fs, unsigned k) {
        bool on;
        int r = dp_damon_kdamond_running(fs, k, &on);

        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return on ? damon_state_command(fs, k, "off") : 0;
}

/* Removes kdamond 0 that we created (or a leftover of ours): off, then
 * nr_kdamonds=0, both under their grants only. */
static int remove_kdamond0(struct dp_damon_fs *fs) {
        int granted = dp_damon_fs_granted_kdamond(fs), r;

        dp_damon_fs_grant_kdamond(fs, 0);
        r = ensure_off(fs, 0);
        dp_damon_fs_grant_kdamond(fs, granted);
        return r < 0 ? r : write_nr_kdamonds(fs, 0);
}

static int check_own_params(const struct dp_damon_own_params *p) {
        if (!p || !p->operations || (strcmp(p->operations, "vaddr") != 0 && strcmp(p->operations, "paddr") != 0))
                return -EINVAL;
        if (p->nr_targets == 0 || !p->targets)
                return -EINVAL;         /* DAMON does not run without targets */
        if (p->sample_us == 0 || p->aggr_us < p->sample_us || p->update_us == 0 || p->min_nr_regions < 3 ||
            p->max_nr_regions < p->min_nr_regions)
                return -EINVAL;
        if (p->nr_schemes > DP_CONFIG_MAX_SCHEMES || (p->nr_schemes > 0 && !p->schemes))
                return -EINVAL;
        return 0;
}

struct setting {
        const char *rel;
        uint64_t value;
};

static int write_settings(struct damon_writer *w, const struct setting *s, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int r = damon_ctx_write_u64(w, s[i].rel, s[i].value);

                if (r < 0)
                        return r;
        }
        return 0;
}

/* One stat scheme matching every region: its tried_regions are DAMON's
 * view, read back without acting on memory.  The configured schemes follow. */
static int write_stat_scheme(struct damon_writer *w, const struct dp_damon_own_params *p, bool paddr) {
        const struct setting pattern[] = {
                { "schemes/0/access_pattern/sz/min", 0 },
                { "schemes/0/access_pattern/sz/max", UINT64_MAX },
                { "schemes/0/access_pattern/nr_accesses/min", 0 },
                { "schemes/0/access_pattern/nr_accesses/max", UINT32_MAX },
                { "schemes/0/access_pattern/age/min", 0 },
                { "schemes/0/access_pattern/age/max", UINT32_MAX },
        };
        const struct setting goal[] = {
                { "schemes/0/quotas/goals/nr_goals", 1 },
                { "schemes/0/quotas/goals/0/target_value", p->goal_target_value },
                { "schemes/0/quotas/goals/0/current_value", 0 },
        };
        int r;

        r = damon_ctx_write_u64(w, "schemes/nr_schemes", 1 + p->nr_schemes);
        if (r == 0)
                r = damon_ctx_write(w, "schemes/0/action", "stat");
        if (r == 0)
                r = write_settings(w, pattern, DP_ARRAY_SIZE(pattern));
        if (r == 0 && p->quota_goal) {
                if (!damon_ctx_exists(w, "schemes/0/quotas/goals/nr_goals"))
                        return -EOPNOTSUPP;
                r = write_settings(w, goal, 1);
                if (r == 0)
                        r = damon_ctx_write(w, "schemes/0/quotas/goals/0/target_metric", "user_input");
                if (r == 0)
                        r = write_settings(w, goal + 1, DP_ARRAY_SIZE(goal) - 1);
        }
        if (r == 0)
                r = damon_ctx_write(w, "schemes/0/watermarks/metric", "none");
        return r < 0 ? r : damon_write_schemes(w, p, paddr);
}

static int configure(struct damon_writer *w, const struct dp_damon_own_params *p) {
        const struct setting attrs[] = {
                { "monitoring_attrs/intervals/sample_us", p->sample_us },
                { "monitoring_attrs/intervals/aggr_us", p->aggr_us },
                { "monitoring_attrs/intervals/update_us", p->update_us },
                { "monitoring_attrs/nr_regions/min", p->min_nr_regions },
                { "monitoring_attrs/nr_regions/max", p->max_nr_regions },
        };
        bool paddr = strcmp(p->operations, "paddr") == 0;
        struct damon_plan plan = {};
        char avail[128], rel[DP_DAMON_PATH_MAX];
        uint64_t unit;
        int r;

        r = dp_damon_fs_write(w->fs, "kdamonds/0/contexts/nr_contexts", "1");
        if (r < 0)
                return r;
        r = damon_ctx_read(w, "avail_operations", avail, sizeof(avail));
        if (r < 0)
                return r;
        if (!dp_damon_operations_available(avail, p->operations))
                return -EOPNOTSUPP;
        r = damon_ctx_write(w, "operations", p->operations);
        if (r == 0)
                r = write_settings(w, attrs, DP_ARRAY_SIZE(attrs));
        if (r == 0)
                r = damon_ctx_addr_unit(w, &unit);
        if (r == 0)
                r = damon_plan_make(p->targets, p->nr_targets, paddr, p->max_nr_regions, unit, &plan);
        if (r == 0)
                r = damon_ctx_write_u64(w, "targets/nr_targets", p->nr_targets);
        for (size_t i = 0; r == 0 && i < p->nr_targets; i++) {
                if (!paddr) {
                        snprintf(rel, sizeof(rel), "targets/%zu/pid_target", i);
                        r = damon_ctx_write_u64(w, rel, p->targets[i].pid);
                        if (r < 0)
                                break;
                }
                r = damon_write_regions(w, (unsigned) i, plan.ranges + plan.first[i], plan.count[i]);
        }
        damon_plan_done(&plan);
        return r < 0 ? r : write_stat_scheme(w, p, paddr);
}

static int turn_on_owned(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file) {
        int r, pid;

        r = damon_state_command(fs, 0, "on");
        if (r < 0)
                return r;
        r = dp_damon_fs_read_int(fs, "kdamonds/0/pid", &pid);
        if (r < 0)
                return r;
        st->kdamond_pid = pid;
        return dp_damon_state_save(st, state_file);
}

int dp_damon_own_start(struct dp_damon_fs *fs, const struct dp_damon_decision *d, const struct dp_damon_own_params *p,
                       const char *state_file, struct dp_damon_state *ret_state) {
        struct dp_damon_state st = {
                .role = DP_DAMON_ROLE_OWNED,
                .daemon_pid = (int) getpid(),
                .kdamond_pid = -1,
        };
        struct damon_plan check = {};
        struct damon_writer w;
        uint64_t nr;
        int r;

        if (!d || d->role != DP_DAMON_ROLE_OWNED || d->kdamond != 0 || d->context != 0)
                return -EPERM;
        r = check_own_params(p);
        if (r < 0)
                return r;
        /* Refuse a bad layout before touching anything (addr_unit is not known
         * yet; rounding to it can only drop regions). */
        r = damon_plan_make(p->targets, p->nr_targets, strcmp(p->operations, "paddr") == 0, p->max_nr_regions, 1,
                            &check);
        if (r < 0)
                return r;
        damon_plan_done(&check);

        /* The tree may have changed since the decision: never destroy a
         * kdamond the decision did not see.  (None at all is always fine: a
         * retry after a failed start that already removed the leftover.) */
        r = dp_damon_fs_read_u64(fs, "kdamonds/nr_kdamonds", &nr);
        if (r < 0)
                return r;
        if (nr > (d->recover ? 1 : 0))
                return -EEXIST;
        if (nr == 1) {
                r = remove_kdamond0(fs);
                if (r < 0)
                        return r;
        }

        /* Saved before anything exists, so a crash at any later point leaves
         * a record that names kdamond 0 as ours. */
        r = dp_damon_state_save(&st, state_file);
        if (r < 0)
                return r;
        r = write_nr_kdamonds(fs, 1);
        if (r < 0) {
                dp_damon_state_remove(state_file);
                return r;
        }
        dp_damon_fs_grant_kdamond(fs, 0);
        damon_writer_init(&w, fs, &st, state_file);
        r = configure(&w, p);
        if (r == 0)
                r = turn_on_owned(fs, &st, state_file);
        if (r < 0) {
                if (remove_kdamond0(fs) == 0)
                        dp_damon_state_remove(state_file);
                dp_damon_fs_grant_kdamond(fs, -1);
                return r;
        }
        *ret_state = st;
        return 0;
}

/* A dead previous attach: adopt its originals if it was the same context
 * (they are the owner's true values), else put them back first. */
static int recover_attach(struct dp_damon_fs *fs, const struct dp_damon_decision *d, const char *state_file,
                          struct dp_damon_state *st) {
        struct dp_damon_state prev = {};
        int r = dp_damon_state_load(state_file, &prev);

        if (r == -ENOENT || r == -EBADMSG)
                return 0;       /* nothing trustworthy to recover */
        if (r < 0)
                return r;
        if (prev.role != DP_DAMON_ROLE_ATTACHED) {
                dp_damon_state_done(&prev);
                return 0;
        }
        if (prev.kdamond == d->kdamond && prev.context == d->context) {
                st->originals = DP_TAKE_PTR(prev.originals);
                st->nr_originals = prev.nr_originals;
                st->originals_cap = prev.originals_cap;
                return 0;
        }
        r = dp_damon_restore(fs, &prev, state_file);
        dp_damon_state_done(&prev);
        return r;
}

int dp_damon_attach_start(struct dp_damon_fs *fs, const struct dp_damon_decision *d, const char *state_file,
                          struct dp_damon_state *ret_state) {
        struct dp_damon_state st = {
                .role = DP_DAMON_ROLE_ATTACHED,
                .daemon_pid = (int) getpid(),
                .kdamond_pid = -1,
        };
        char path[DP_DAMON_PATH_MAX];
        int r;

        if (!d || d->role != DP_DAMON_ROLE_ATTACHED)
                return -EPERM;
        st.kdamond = d->kdamond;
        st.context = d->context;
        snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u", d->kdamond, d->context);
        if (!dp_damon_fs_exists(fs, path))
                return -ENOENT;
        snprintf(path, sizeof(path), "kdamonds/%u/pid", d->kdamond);
        (void) dp_damon_fs_read_int(fs, path, &st.kdamond_pid);         /* informative only */
        if (d->recover) {
                r = recover_attach(fs, d, state_file, &st);
                if (r < 0)
                        return r;
        }
        r = dp_damon_state_save(&st, state_file);
        if (r < 0) {
                dp_damon_state_done(&st);
                return r;
        }
        dp_damon_fs_grant_kdamond(fs, (int) d->kdamond);
        *ret_state = st;
        return 0;
}

static int restore_owned(struct dp_damon_fs *fs, const struct dp_damon_state *st) {
        char path[DP_DAMON_PATH_MAX];
        uint64_t nr;
        bool on;
        int r, pid;

        r = dp_damon_kdamond_running(fs, st->kdamond, &on);
        if (r == -ENOENT)
                on = false;             /* already gone */
        else if (r < 0)
                return r;
        if (on) {
                /* Running with another pid than ours: someone restarted it
                 * with their own settings; it is theirs now. */
                snprintf(path, sizeof(path), "kdamonds/%u/pid", st->kdamond);
                r = dp_damon_fs_read_int(fs, path, &pid);
                if (r < 0)
                        return r;
                if (st->kdamond_pid > 0 && pid != st->kdamond_pid)
                        return -EEXIST;
                r = damon_state_command(fs, st->kdamond, "off");
                if (r < 0)
                        return r;
        }
        r = dp_damon_fs_read_u64(fs, "kdamonds/nr_kdamonds", &nr);
        if (r < 0)
                return r;
        /* Only while ours is the only one: the write removes every kdamond. */
        return nr == 1 && st->kdamond == 0 ? write_nr_kdamonds(fs, 0) : 0;
}

static int restore_attached(struct dp_damon_fs *fs, const struct dp_damon_state *st) {
        bool on;
        int r;

        for (size_t i = st->nr_originals; i-- > 0;) {
                r = dp_damon_fs_write(fs, st->originals[i].path, st->originals[i].value);
                if (r == -ENOENT)
                        continue;       /* in a directory we created, gone with its nr_* restore */
                if (r < 0)
                        return r;
        }
        r = dp_damon_kdamond_running(fs, st->kdamond, &on);
        if (r == -ENOENT)
                return 0;       /* the owner removed the kdamond: nothing left to commit to */
        if (r < 0)
                return r;
        return on && st->nr_originals > 0 ? damon_state_command(fs, st->kdamond, "commit") : 0;
}

int dp_damon_restore(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file) {
        int r;

        if (st->role != DP_DAMON_ROLE_OWNED && st->role != DP_DAMON_ROLE_ATTACHED) {
                dp_damon_fs_grant_kdamond(fs, -1);
                return 0;
        }
        dp_damon_fs_grant_kdamond(fs, (int) st->kdamond);
        if (st->role == DP_DAMON_ROLE_OWNED)
                r = restore_owned(fs, st);
        else
                r = restore_attached(fs, st);
        dp_damon_fs_grant_kdamond(fs, -1);
        dp_damon_fs_grant_create(fs, false);
        if (r < 0)
                return r;
        r = dp_damon_state_remove(state_file);
        if (r < 0)
                return r;
        dp_damon_state_done(st);
        st->role = DP_DAMON_ROLE_OFF;
        return 0;
}
