/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damon-write.h"
#include "macro.h"

int dp_damon_kdamond_running(struct dp_damon_fs *fs, unsigned kdamond, bool *ret) {
        char path[DP_DAMON_PATH_MAX], state[16];
        int r;

        snprintf(path, sizeof(path), "kdamonds/%u/state", kdamond);
        r = dp_damon_fs_read(fs, path, state, sizeof(state));
        if (r < 0)
                return r;
        if (strcmp(state, "on") == 0)
                *ret = true;
        else if (strcmp(state, "off") == 0)
                *ret = false;
        else
                return -EBADMSG;
        return 0;
}

static bool in_session(const struct dp_damon_state *st) {
        return st && (st->role == DP_DAMON_ROLE_OWNED || st->role == DP_DAMON_ROLE_ATTACHED);
}

/* What every commit needs to know before it writes anything. */
struct commit_ctx {
        bool on, paddr;
        struct damon_plan plan;
};

static int prepare(struct damon_writer *w, const struct dp_damon_target_hint *hints, size_t n,
                   struct commit_ctx *ret) {
        char ops[16];
        uint64_t max, unit;
        int r;

        r = dp_damon_kdamond_running(w->fs, w->kdamond, &ret->on);
        if (r < 0)
                return r;
        r = damon_ctx_read(w, "operations", ops, sizeof(ops));
        if (r < 0)
                return r;
        ret->paddr = strcmp(ops, "paddr") == 0;
        r = damon_ctx_read_u64(w, "monitoring_attrs/nr_regions/max", &max);
        if (r < 0)
                return r;
        r = damon_ctx_addr_unit(w, &unit);
        if (r < 0)
                return r;
        return damon_plan_make(hints, n, ret->paddr, max, unit, &ret->plan);
}

/* Turns our kdamond on again and records its new pid. */
static int turn_on(struct damon_writer *w) {
        char path[DP_DAMON_PATH_MAX];
        int r, pid;

        r = damon_state_command(w->fs, w->kdamond, "on");
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "kdamonds/%u/pid", w->kdamond);
        r = dp_damon_fs_read_int(w->fs, path, &pid);
        if (r < 0)
                return r;
        w->st->kdamond_pid = pid;
        return dp_damon_state_save(w->st, w->state_file);
}

static int commit_owned(struct damon_writer *w, const struct dp_damon_target_hint *hints, size_t n,
                        const struct commit_ctx *c) {
        char rel[DP_DAMON_PATH_MAX];
        uint64_t current;
        int r;

        r = damon_ctx_read_u64(w, "targets/nr_targets", &current);
        if (r < 0)
                return r;
        if (current != n) {
                r = damon_ctx_write_u64(w, "targets/nr_targets", n);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n; i++) {
                if (!c->paddr) {
                        snprintf(rel, sizeof(rel), "targets/%zu/pid_target", i);
                        r = damon_ctx_write_u64(w, rel, hints[i].pid);
                        if (r < 0)
                                return r;
                }
                r = damon_write_regions(w, (unsigned) i, c->plan.ranges + c->plan.first[i], c->plan.count[i]);
                if (r < 0)
                        return r;
        }
        return c->on ? damon_state_command(w->fs, w->kdamond, "commit") : turn_on(w);
}

static int commit_attached(struct damon_writer *w, const struct dp_damon_target_hint *hints, size_t n,
                           const struct commit_ctx *c) {
        char rel[DP_DAMON_PATH_MAX];
        uint64_t nr_targets;
        bool wrote = false;
        int r;

        r = damon_ctx_read_u64(w, "targets/nr_targets", &nr_targets);
        if (r < 0)
                return r;
        for (uint64_t t = 0; t < nr_targets && t < UINT32_MAX; t++) {
                uint64_t pid = 0;
                size_t i;

                if (c->paddr && t > 0)
                        break;
                if (!c->paddr) {
                        snprintf(rel, sizeof(rel), "targets/%" PRIu64 "/pid_target", t);
                        r = damon_ctx_read_u64(w, rel, &pid);
                        if (r < 0)
                                return r;
                }
                for (i = 0; i < n; i++)
                        if (hints[i].pid == pid)
                                break;
                if (i == n || (pid == 0 && !c->paddr))
                        continue;
                r = damon_write_regions(w, (unsigned) t, c->plan.ranges + c->plan.first[i], c->plan.count[i]);
                if (r < 0)
                        return r;
                wrote = true;
        }
        return wrote && c->on ? damon_state_command(w->fs, w->kdamond, "commit") : 0;
}

int dp_damon_commit_hints(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file,
                          const struct dp_damon_target_hint *targets, size_t n) {
        struct commit_ctx c = {};
        struct damon_writer w;
        int r;

        if (!in_session(st))
                return -EPERM;
        if (st->role == DP_DAMON_ROLE_OWNED && n == 0)
                return -EINVAL;         /* DAMON does not run without targets */
        damon_writer_init(&w, fs, st, state_file);
        r = prepare(&w, targets, n, &c);
        if (r < 0)
                return r;
        if (st->role == DP_DAMON_ROLE_OWNED)
                r = commit_owned(&w, targets, n, &c);
        else
                r = commit_attached(&w, targets, n, &c);
        damon_plan_done(&c.plan);
        return r;
}

int dp_damon_commit_written(struct dp_damon_fs *fs, struct dp_damon_state *st) {
        bool on;
        int r;

        if (!st || st->role != DP_DAMON_ROLE_OWNED)
                return -EPERM;
        r = dp_damon_kdamond_running(fs, st->kdamond, &on);
        if (r < 0)
                return r;
        return on ? damon_state_command(fs, st->kdamond, "commit") : 0;
}

int dp_damon_feed_goal(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file, uint64_t value) {
        char rel[DP_DAMON_PATH_MAX], metric[32];
        uint64_t nr_schemes, nr_goals;
        struct damon_writer w;
        unsigned fed = 0;
        bool on;
        int r;

        if (!in_session(st))
                return -EPERM;
        damon_writer_init(&w, fs, st, state_file);
        r = dp_damon_kdamond_running(fs, st->kdamond, &on);
        if (r < 0)
                return r;
        r = damon_ctx_read_u64(&w, "schemes/nr_schemes", &nr_schemes);
        if (r < 0)
                return r;
        for (uint64_t s = 0; s < nr_schemes; s++) {
                snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/quotas/goals/nr_goals", s);
                if (!damon_ctx_exists(&w, rel))
                        continue;       /* a kernel before quota goals */
                r = damon_ctx_read_u64(&w, rel, &nr_goals);
                if (r < 0)
                        return r;
                for (uint64_t g = 0; g < nr_goals; g++) {
                        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/quotas/goals/%" PRIu64 "/target_metric", s, g);
                        r = damon_ctx_read(&w, rel, metric, sizeof(metric));
                        if (r < 0)
                                return r;
                        if (strcmp(metric, "user_input") != 0)
                                continue;
                        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/quotas/goals/%" PRIu64 "/current_value", s, g);
                        r = damon_ctx_write_u64(&w, rel, value);
                        if (r < 0)
                                return r;
                        fed++;
                }
        }
        if (fed == 0)
                return -ENOENT;
        return on ? damon_state_command(fs, st->kdamond, "commit_schemes_quota_goals") : 0;
}

/* ---- read-back ---- */

struct tried_vec {
        struct dp_damon_tried_region *v;
        size_t n, cap;
};

static int tried_push(struct tried_vec *vec, const struct dp_damon_tried_region *r) {
        if (vec->n == vec->cap) {
                size_t cap = vec->cap ? vec->cap * 2 : 64;
                struct dp_damon_tried_region *v = reallocarray(vec->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                vec->v = v;
                vec->cap = cap;
        }
        vec->v[vec->n++] = *r;
        return 0;
}

static int read_region(struct damon_writer *w, uint64_t s, uint64_t i, uint64_t unit,
                       struct dp_damon_tried_region *ret) {
        static const char *const names[] = { "start", "end", "nr_accesses", "age" };
        char rel[DP_DAMON_PATH_MAX], path[DP_DAMON_PATH_MAX];
        uint64_t v[4];
        int r;

        for (size_t k = 0; k < DP_ARRAY_SIZE(names); k++) {
                snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/tried_regions/%" PRIu64 "/%s", s, i, names[k]);
                r = damon_ctx_read_u64(w, rel, &v[k]);
                if (r < 0)
                        return r;
        }
        snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/schemes/%" PRIu64 "/tried_regions/%" PRIu64,
                 w->kdamond, w->context, s, i);
        /* Refused, naming the region, rather than passed on half-believed. */
        if (v[0] >= v[1] || v[2] > UINT32_MAX || v[3] > UINT32_MAX || v[1] > UINT64_MAX / unit) {
                damon_fs_note_error(w->fs, path);
                return -EBADMSG;
        }
        *ret = (struct dp_damon_tried_region) {
                .start = v[0] * unit,
                .end = v[1] * unit,
                .nr_accesses = (uint32_t) v[2],
                .age = (uint32_t) v[3],
                .scheme = (unsigned) s,
        };
        return 0;
}

/* Scheme @s's tried regions, in the kernel's order.  Listed, not counted
 * from 0: 6.12 numbers them with one counter across every scheme, so with
 * two schemes one has regions 0, 2, 4, ... and the other 1, 3, 5, ... */
static int read_scheme_tried(struct damon_writer *w, uint64_t s, uint64_t unit, struct tried_vec *vec) {
        _cleanup_free_ uint64_t *idx = NULL;
        char rel[DP_DAMON_PATH_MAX], path[DP_DAMON_PATH_MAX];
        size_t n = 0;
        int r;

        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/tried_regions", s);
        snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/schemes/%" PRIu64 "/tried_regions", w->kdamond,
                 w->context, s);
        if (!damon_ctx_exists(w, rel))
                return 0;       /* a kernel before tried regions */
        r = dp_damon_fs_list_indices(w->fs, path, &idx, &n);
        for (size_t k = 0; r == 0 && k < n; k++) {
                struct dp_damon_tried_region region;

                r = read_region(w, s, idx[k], unit, &region);
                if (r == 0)
                        r = tried_push(vec, &region);
        }
        return r;
}

int dp_damon_read_tried(struct dp_damon_fs *fs, unsigned kdamond, unsigned context,
                        struct dp_damon_tried_region **ret, size_t *ret_n) {
        struct dp_damon_state scope = { .kdamond = kdamond, .context = context };
        struct tried_vec vec = {};
        char rel[DP_DAMON_PATH_MAX];
        uint64_t nr_schemes, unit;
        struct damon_writer w;
        int r;

        *ret = NULL;
        *ret_n = 0;
        damon_writer_init(&w, fs, &scope, NULL);
        r = damon_state_command(fs, kdamond, "update_schemes_tried_regions");
        if (r < 0)
                return r;
        r = damon_ctx_addr_unit(&w, &unit);
        if (r < 0)
                return r;
        r = damon_ctx_read_u64(&w, "schemes/nr_schemes", &nr_schemes);
        if (r < 0)
                return r;
        for (uint64_t s = 0; r == 0 && s < nr_schemes && vec.n == 0; s++) {
                /* The kernel makes every scheme directory nr_schemes names: a
                 * count beyond them is garbled, not billions of empty schemes. */
                snprintf(rel, sizeof(rel), "schemes/%" PRIu64, s);
                if (!damon_ctx_exists(&w, rel)) {
                        char path[DP_DAMON_PATH_MAX];

                        snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/schemes/nr_schemes", kdamond,
                                 context);
                        damon_fs_note_error(fs, path);
                        r = -EBADMSG;
                        break;
                }
                r = read_scheme_tried(&w, s, unit, &vec);
        }
        if (r < 0) {
                free(vec.v);
                return r;
        }
        *ret = vec.v;
        *ret_n = vec.n;
        return 0;
}
