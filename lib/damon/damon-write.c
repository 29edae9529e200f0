/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damon-write.h"
#include "macro.h"

void damon_writer_init(struct damon_writer *w, struct dp_damon_fs *fs, struct dp_damon_state *st,
                       const char *state_file) {
        *w = (struct damon_writer) {
                .fs = fs,
                .st = st,
                .state_file = state_file,
                .record = st->role == DP_DAMON_ROLE_ATTACHED,
                .kdamond = st->kdamond,
                .context = st->context,
        };
}

static int full_path(const struct damon_writer *w, const char *rel, char *buf, size_t size) {
        int n = snprintf(buf, size, "kdamonds/%u/contexts/%u/%s", w->kdamond, w->context, rel);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int damon_ctx_read(const struct damon_writer *w, const char *rel, char *buf, size_t size) {
        char path[DP_DAMON_PATH_MAX];
        int r = full_path(w, rel, path, sizeof(path));

        return r < 0 ? r : dp_damon_fs_read(w->fs, path, buf, size);
}

int damon_ctx_read_u64(const struct damon_writer *w, const char *rel, uint64_t *ret) {
        char path[DP_DAMON_PATH_MAX];
        int r = full_path(w, rel, path, sizeof(path));

        return r < 0 ? r : dp_damon_fs_read_u64(w->fs, path, ret);
}

bool damon_ctx_exists(const struct damon_writer *w, const char *rel) {
        char path[DP_DAMON_PATH_MAX];

        return full_path(w, rel, path, sizeof(path)) == 0 && dp_damon_fs_exists(w->fs, path);
}

int damon_ctx_addr_unit(const struct damon_writer *w, uint64_t *ret) {
        uint64_t unit;
        int r;

        if (!damon_ctx_exists(w, "addr_unit")) {
                *ret = 1;
                return 0;
        }
        r = damon_ctx_read_u64(w, "addr_unit", &unit);
        if (r < 0)
                return r;
        if (unit == 0)
                return -EBADMSG;
        *ret = unit;
        return 0;
}

/* ---- originals (attached sessions) ---- */

/* Whether @path lies in a collection whose nr_* file we already overwrote:
 * then it is a directory we created, with nothing of the owner's in it. */
static bool created_by_us(const struct dp_damon_state *st, const char *path) {
        for (size_t i = 0; i < st->nr_originals; i++) {
                const char *o = st->originals[i].path, *slash = strrchr(o, '/');
                size_t dir_len;

                if (!slash || strncmp(slash + 1, "nr_", 3) != 0)
                        continue;
                dir_len = (size_t) (slash - o) + 1;
                if (strncmp(path, o, dir_len) == 0 && strcmp(path, o) != 0)
                        return true;
        }
        return false;
}

static int record(struct damon_writer *w, const char *path) {
        char value[DP_DAMON_ORIGINAL_VALUE_MAX];
        int r;

        if (dp_damon_state_find_original(w->st, path) || created_by_us(w->st, path))
                return 0;
        r = dp_damon_fs_read(w->fs, path, value, sizeof(value));
        if (r < 0)
                return r;
        return dp_damon_state_add_original(w->st, path, value);
}

static int remember(struct damon_writer *w, const char *path) {
        size_t before = w->st->nr_originals;
        const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
        int r;

        if (dp_damon_state_find_original(w->st, path) || created_by_us(w->st, path))
                return 0;
        if (strncmp(base, "nr_", 3) == 0) {
                char child[DP_DAMON_PATH_MAX];
                int dir_len = (int) (base - path);
                uint64_t nr;

                /* Only region collections are ever resized in an attached context. */
                if (strcmp(base, "nr_regions") != 0)
                        return -EOPNOTSUPP;
                r = dp_damon_fs_read_u64(w->fs, path, &nr);
                for (uint64_t i = 0; r == 0 && i < nr; i++) {
                        snprintf(child, sizeof(child), "%.*s%" PRIu64 "/start", dir_len, path, i);
                        r = record(w, child);
                        if (r == 0) {
                                snprintf(child, sizeof(child), "%.*s%" PRIu64 "/end", dir_len, path, i);
                                r = record(w, child);
                        }
                }
        } else
                r = 0;
        if (r == 0)
                r = record(w, path);
        if (r == 0 && w->st->nr_originals > before)
                r = dp_damon_state_save(w->st, w->state_file);
        if (r < 0)
                w->st->nr_originals = before;   /* not saved, so not written either */
        return r;
}

int damon_ctx_write(struct damon_writer *w, const char *rel, const char *value) {
        char path[DP_DAMON_PATH_MAX];
        int r = full_path(w, rel, path, sizeof(path));

        if (r < 0)
                return r;
        if (w->record) {
                r = remember(w, path);
                if (r < 0)
                        return r;
        }
        return dp_damon_fs_write(w->fs, path, value);
}

int damon_ctx_write_u64(struct damon_writer *w, const char *rel, uint64_t value) {
        char buf[24];

        snprintf(buf, sizeof(buf), "%" PRIu64, value);
        return damon_ctx_write(w, rel, buf);
}

int damon_state_command(struct dp_damon_fs *fs, unsigned kdamond, const char *keyword) {
        char path[DP_DAMON_PATH_MAX];

        snprintf(path, sizeof(path), "kdamonds/%u/state", kdamond);
        return dp_damon_fs_write(fs, path, keyword);
}

/* ---- layouts ---- */

void damon_plan_done(struct damon_plan *p) {
        free(p->ranges);
        free(p->first);
        free(p->count);
        *p = (struct damon_plan) {};
}

static int check_targets(const struct dp_damon_target_hint *hints, size_t n, bool paddr) {
        if (paddr)
                return n == 1 && hints[0].pid == 0 && hints[0].nr_regions > 0 ? 0 : -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (hints[i].pid == 0)
                        return -EINVAL;
                for (size_t j = 0; j < i; j++)
                        if (hints[j].pid == hints[i].pid)
                                return -EINVAL;
        }
        return 0;
}

static int check_layout(const struct dp_damon_target_hint *h) {
        if (h->nr_regions > 0 && !h->regions)
                return -EINVAL;
        for (size_t i = 0; i < h->nr_regions; i++) {
                if (h->regions[i].start >= h->regions[i].end)
                        return -EINVAL;         /* empty or inverted */
                if (i > 0 && h->regions[i].start < h->regions[i - 1].end)
                        return -EINVAL;         /* unsorted or overlapping */
        }
        return 0;
}

/* Starts round down and ends up so that every byte stays covered; a region
 * that rounding pushed entirely into its predecessor's last unit is dropped. */
static size_t convert(const struct dp_damon_range *in, size_t n, uint64_t unit, struct dp_damon_range *out) {
        size_t k = 0;

        for (size_t i = 0; i < n; i++) {
                uint64_t s = in[i].start / unit, e = in[i].end / unit + (in[i].end % unit != 0);

                if (k > 0 && s < out[k - 1].end)
                        s = out[k - 1].end;
                if (s >= e)
                        continue;
                out[k++] = (struct dp_damon_range) { .start = s, .end = e };
        }
        return k;
}

int damon_plan_make(const struct dp_damon_target_hint *hints, size_t n, bool paddr, uint64_t max_nr_regions,
                    uint64_t addr_unit, struct damon_plan *ret) {
        struct damon_plan p = { .n = n };
        size_t total = 0, used = 0;
        int r;

        if ((n > 0 && !hints) || addr_unit == 0)
                return -EINVAL;
        r = check_targets(hints, n, paddr);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                r = check_layout(&hints[i]);
                if (r < 0)
                        return r;
                total += hints[i].nr_regions;
        }
        if (total > max_nr_regions)
                return -EINVAL;         /* rounding only ever drops regions; check early too */
        p.ranges = calloc(total ? total : 1, sizeof(*p.ranges));
        p.first = calloc(n ? n : 1, sizeof(*p.first));
        p.count = calloc(n ? n : 1, sizeof(*p.count));
        if (!p.ranges || !p.first || !p.count) {
                damon_plan_done(&p);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                p.first[i] = used;
                p.count[i] = convert(hints[i].regions, hints[i].nr_regions, addr_unit, p.ranges + used);
                used += p.count[i];
        }
        *ret = p;
        return 0;
}

int damon_write_regions(struct damon_writer *w, unsigned target, const struct dp_damon_range *ranges, size_t n) {
        char rel[DP_DAMON_PATH_MAX];
        uint64_t current;
        int r;

        snprintf(rel, sizeof(rel), "targets/%u/regions/nr_regions", target);
        r = damon_ctx_read_u64(w, rel, &current);
        if (r < 0)
                return r;
        if (current != n) {
                r = damon_ctx_write_u64(w, rel, n);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < n; i++) {
                snprintf(rel, sizeof(rel), "targets/%u/regions/%zu/start", target, i);
                r = damon_ctx_write_u64(w, rel, ranges[i].start);
                if (r < 0)
                        return r;
                snprintf(rel, sizeof(rel), "targets/%u/regions/%zu/end", target, i);
                r = damon_ctx_write_u64(w, rel, ranges[i].end);
                if (r < 0)
                        return r;
        }
        return 0;
}
