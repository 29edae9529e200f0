/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "damon-sysfs.h"
#include "macro.h"

/* Discovery only reads: nothing here may call dp_damon_fs_write(). */

bool dp_damon_operations_available(const char *avail, const char *operations) {
        size_t len = strlen(operations);

        if (len == 0)
                return false;
        for (const char *p = avail; *p;) {
                size_t word;

                p += strspn(p, " \t\n");
                word = strcspn(p, " \t\n");
                if (word == len && strncmp(p, operations, len) == 0)
                        return true;
                p += word;
        }
        return false;
}

/* Whether kdamonds/@k/contexts/@c/@rel exists. */
static bool ctx_exists(struct dp_damon_fs *fs, unsigned k, unsigned c, const char *rel) {
        char path[DP_DAMON_PATH_MAX];
        int n = snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/%s", k, c, rel);

        return n > 0 && (size_t) n < sizeof(path) && dp_damon_fs_exists(fs, path);
}

int dp_damon_detect_features(struct dp_damon_fs *fs, unsigned kdamond, unsigned context,
                             struct dp_damon_features *ret) {
        struct dp_damon_features f = {};
        char path[DP_DAMON_PATH_MAX];
        int r;

        snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/avail_operations", kdamond, context);
        r = dp_damon_fs_read(fs, path, f.avail_operations, sizeof(f.avail_operations));
        if (r < 0)
                return r;
        f.addr_unit = ctx_exists(fs, kdamond, context, "addr_unit");
        f.intervals_goal = ctx_exists(fs, kdamond, context, "monitoring_attrs/intervals/intervals_goal");
        snprintf(path, sizeof(path), "kdamonds/%u/refresh_ms", kdamond);
        f.refresh_ms = dp_damon_fs_exists(fs, path);
        f.schemes_probed = ctx_exists(fs, kdamond, context, "schemes/0");
        if (f.schemes_probed) {
                f.tried_regions = ctx_exists(fs, kdamond, context, "schemes/0/tried_regions");
                f.quota_goals = ctx_exists(fs, kdamond, context, "schemes/0/quotas/goals");
                f.effective_quotas = ctx_exists(fs, kdamond, context, "schemes/0/quotas/effective_bytes");
                f.filters = ctx_exists(fs, kdamond, context, "schemes/0/filters");
                f.core_filters = ctx_exists(fs, kdamond, context, "schemes/0/core_filters");
        }
        *ret = f;
        return 0;
}

static int read_count(struct dp_damon_fs *fs, const char *path, unsigned *ret) {
        uint64_t v;
        int r = dp_damon_fs_read_u64(fs, path, &v);

        if (r < 0)
                return r;
        if (v > UINT32_MAX)
                return -EBADMSG;
        *ret = (unsigned) v;
        return 0;
}

static int discover_kdamond(struct dp_damon_fs *fs, unsigned k, struct dp_damon_kdamond_info *ret) {
        struct dp_damon_kdamond_info info = { .index = k, .pid = -1 };
        char path[DP_DAMON_PATH_MAX], state[16];
        int r;

        snprintf(path, sizeof(path), "kdamonds/%u/state", k);
        r = dp_damon_fs_read(fs, path, state, sizeof(state));
        if (r < 0)
                return r;
        if (strcmp(state, "on") == 0)
                info.running = true;
        else if (strcmp(state, "off") != 0)
                return -EBADMSG;
        snprintf(path, sizeof(path), "kdamonds/%u/pid", k);
        r = dp_damon_fs_read_int(fs, path, &info.pid);
        if (r < 0)
                return r;
        snprintf(path, sizeof(path), "kdamonds/%u/contexts/nr_contexts", k);
        r = read_count(fs, path, &info.nr_contexts);
        if (r < 0)
                return r;
        if (info.nr_contexts > 0) {
                snprintf(path, sizeof(path), "kdamonds/%u/contexts/0/operations", k);
                r = dp_damon_fs_read(fs, path, info.operations, sizeof(info.operations));
                if (r < 0)
                        return r;
                snprintf(path, sizeof(path), "kdamonds/%u/contexts/0/targets/nr_targets", k);
                r = read_count(fs, path, &info.nr_targets);
                if (r < 0)
                        return r;
                snprintf(path, sizeof(path), "kdamonds/%u/contexts/0/schemes/nr_schemes", k);
                r = read_count(fs, path, &info.nr_schemes);
                if (r < 0)
                        return r;
        }
        *ret = info;
        return 0;
}

int dp_damon_discover(struct dp_damon_fs *fs, struct dp_damon_tree *ret) {
        struct dp_damon_tree *t = ret;
        bool have_features = false;
        int r;

        memset(t, 0, sizeof(*t));
        r = read_count(fs, "kdamonds/nr_kdamonds", &t->nr_kdamonds);
        if (r < 0)
                return r;
        t->nr_listed = DP_MIN(t->nr_kdamonds, (unsigned) DP_DAMON_MAX_KDAMONDS);
        for (unsigned k = 0; k < t->nr_listed; k++) {
                struct dp_damon_kdamond_info *info = &t->kdamonds[k];

                r = discover_kdamond(fs, k, info);
                if (r < 0)
                        return r;
                t->any_running = t->any_running || info->running;
                if (!have_features && info->nr_contexts > 0) {
                        r = dp_damon_detect_features(fs, k, 0, &t->features);
                        if (r < 0)
                                return r;
                        have_features = true;
                }
        }
        return 0;
}
