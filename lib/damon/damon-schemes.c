/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-scheme.h"
#include "damon-write.h"
#include "macro.h"
#include "parse-util.h"

/* DAMOS schemes in the kdamond we own, the PMU-fed hot filter, and the
 * read-back of any context's schemes with their stats. */

/* ---- DAMON's units ---- */

static uint64_t cap32(uint64_t v) {
        return v > UINT32_MAX ? UINT32_MAX : v;
}

/* Sampling intervals with an access per aggregation. */
static void accesses_range(const struct dp_scheme_range *r, const struct dp_damon_own_params *p, uint64_t *min,
                           uint64_t *max) {
        uint64_t scale = p->aggr_us / p->sample_us;

        if (r->unit == DP_UNIT_PERCENT) {
                *min = (r->min * scale + 99) / 100;
                *max = r->max == UINT64_MAX ? UINT32_MAX : r->max * scale / 100;
        } else {
                *min = cap32(r->min);
                *max = cap32(r->max);
        }
}

/* Aggregation intervals: an age of at least MIN, at most MAX. */
static void age_range(const struct dp_scheme_range *r, const struct dp_damon_own_params *p, uint64_t *min,
                      uint64_t *max) {
        if (r->unit == DP_UNIT_USEC) {
                *min = cap32(r->min / p->aggr_us + (r->min % p->aggr_us != 0));
                *max = r->max == UINT64_MAX ? UINT32_MAX : cap32(r->max / p->aggr_us);
        } else {
                *min = cap32(r->min);
                *max = cap32(r->max);
        }
}

/* ---- what this kernel offers ---- */

_Pragma("GCC diagnostic push")
_Pragma("GCC diagnostic ignored \"-Wformat-nonliteral\"")
static int __attribute__((format(printf, 4, 5)))
refuse(struct damon_writer *w, const struct dp_damon_own_params *p, const char *rel, const char *fmt, ...) {
        char path[DP_DAMON_PATH_MAX];
        va_list ap;

        snprintf(path, sizeof(path), "kdamonds/%u/contexts/%u/%s", w->kdamond, w->context, rel);
        damon_fs_note_error(w->fs, path);
        if (p && p->refusal && p->refusal_size) {
                va_start(ap, fmt);
                vsnprintf(p->refusal, p->refusal_size, fmt, ap);
                va_end(ap);
        }
        return -EOPNOTSUPP;
}
_Pragma("GCC diagnostic pop")

static const char *origin_of(const struct dp_damon_scheme *s) {
        return s->origin[0] ? s->origin : "configuration";
}

static bool has_allow_filter(const struct dp_damon_scheme *s) {
        for (size_t i = 0; i < s->n_filters; i++)
                if (s->filters[i].allow)
                        return true;
        return false;
}

/* allow= needs filters/F/allow (6.14), which exists only once a filter does:
 * one is made in our own new scheme to look, and removed again. */
static int check_allow(struct damon_writer *w, const struct dp_damon_own_params *p, unsigned idx,
                       const struct dp_damon_scheme *s) {
        char nr[DP_DAMON_PATH_MAX], allow[DP_DAMON_PATH_MAX];
        bool exists;
        int r;

        if (!has_allow_filter(s))
                return 0;
        snprintf(nr, sizeof(nr), "schemes/%u/filters/nr_filters", idx);
        snprintf(allow, sizeof(allow), "schemes/%u/filters/0/allow", idx);
        r = damon_ctx_write(w, nr, "1");
        if (r < 0)
                return r;
        exists = damon_ctx_exists(w, allow);
        r = damon_ctx_write(w, nr, "0");
        if (r < 0)
                return r;
        if (!exists)
                return refuse(w, p, allow, "%s: Scheme=%s: allow= needs %s, which this kernel's DAMON lacks (Linux "
                              "6.14); reject= works on every kernel with filters", origin_of(s),
                              dp_scheme_action_name(s->action), allow);
        return 0;
}

/* The files a scheme's settings need, checked in DAMON's freshly made
 * schemes/@idx/ before anything of it is written. */
static int check_scheme_files(struct damon_writer *w, const struct dp_damon_own_params *p, unsigned idx,
                              const struct dp_damon_scheme *s, bool paddr) {
        const char *action = dp_scheme_action_name(s->action);
        bool migrate = s->action == DP_SCHEME_MIGRATE_HOT || s->action == DP_SCHEME_MIGRATE_COLD;
        char rel[DP_DAMON_PATH_MAX];

        snprintf(rel, sizeof(rel), "schemes/%u/target_nid", idx);
        if (migrate && !damon_ctx_exists(w, rel))
                return refuse(w, p, rel, "%s: Scheme=%s: this kernel's DAMON has no %s (migrate_hot and migrate_cold "
                              "came with Linux 6.11)", origin_of(s), action, rel);
        snprintf(rel, sizeof(rel), "schemes/%u/dests", idx);
        if (migrate && !paddr && !damon_ctx_exists(w, rel))
                return refuse(w, p, rel, "%s: Scheme=%s: this kernel's DAMON migrates only physical memory (no %s, "
                              "Linux 6.17); use Targets=physical", origin_of(s), action, rel);
        snprintf(rel, sizeof(rel), "schemes/%u/quotas/goals/nr_goals", idx);
        if (s->n_goals > 0 && !damon_ctx_exists(w, rel))
                return refuse(w, p, rel, "%s: Scheme=%s: this kernel's DAMON has no quota goals (no %s, Linux 6.8)",
                              origin_of(s), action, rel);
        snprintf(rel, sizeof(rel), "schemes/%u/filters/nr_filters", idx);
        if (s->n_filters > 0 && !damon_ctx_exists(w, rel))
                return refuse(w, p, rel, "%s: Scheme=%s: this kernel's DAMON has no filters (no %s, Linux 6.3)",
                              origin_of(s), action, rel);
        return check_allow(w, p, idx, s);
}

/* ---- writing ---- */

struct setting {
        const char *name;
        uint64_t value;
};

static int join(char *rel, size_t size, const char *dir, const char *name) {
        int n = snprintf(rel, size, "%s/%s", dir, name);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

static int write_under(struct damon_writer *w, const char *dir, const struct setting *s, size_t n) {
        char rel[DP_DAMON_PATH_MAX];

        for (size_t i = 0; i < n; i++) {
                int r = join(rel, sizeof(rel), dir, s[i].name);

                if (r == 0)
                        r = damon_ctx_write_u64(w, rel, s[i].value);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int write_text(struct damon_writer *w, const char *dir, const char *name, const char *value) {
        char rel[DP_DAMON_PATH_MAX];
        int r = join(rel, sizeof(rel), dir, name);

        return r < 0 ? r : damon_ctx_write(w, rel, value);
}

static int write_goals(struct damon_writer *w, const struct dp_damon_own_params *p, unsigned idx,
                       const struct dp_damon_scheme *s) {
        char dir[DP_DAMON_PATH_MAX], nid[DP_DAMON_PATH_MAX + 8];
        int r;

        if (s->n_goals == 0)
                return 0;
        snprintf(dir, sizeof(dir), "schemes/%u/quotas/goals", idx);
        r = write_under(w, dir, &(struct setting) { "nr_goals", s->n_goals }, 1);
        for (size_t g = 0; r == 0 && g < s->n_goals; g++) {
                const struct dp_scheme_goal *goal = &s->goals[g];
                bool node = goal->metric == DP_GOAL_NODE_MEM_USED_BP || goal->metric == DP_GOAL_NODE_MEM_FREE_BP;
                const struct setting values[] = {
                        { "target_value", goal->target }, { "current_value", 0 }, { "nid", goal->nid },
                };

                snprintf(dir, sizeof(dir), "schemes/%u/quotas/goals/%zu", idx, g);
                snprintf(nid, sizeof(nid), "%s/nid", dir);
                if (node && !damon_ctx_exists(w, nid))
                        return refuse(w, p, nid, "%s: Scheme=%s: goal=%s needs a node, and this kernel's DAMON "
                                      "has no %s (Linux 6.16)", origin_of(s), dp_scheme_action_name(s->action),
                                      dp_scheme_goal_metric_name(goal->metric), nid);
                r = write_text(w, dir, "target_metric", dp_scheme_goal_kernel_metric(goal->metric));
                if (r == 0)
                        r = write_under(w, dir, values, node ? 3 : 2);
        }
        return r;
}

/* One filter entry; @f's addresses replaced by @range for the hot filter. */
static int write_filter(struct damon_writer *w, const struct dp_damon_own_params *p, const char *dir,
                        const struct dp_damon_scheme *s, const struct dp_scheme_filter *f,
                        const struct dp_damon_range *range, uint64_t unit) {
        bool addr = f->type == DP_FILTER_ADDR || f->type == DP_FILTER_HOT;
        uint64_t start = range ? range->start : f->start, end = range ? range->end : f->end;
        char allow[DP_DAMON_PATH_MAX + 8];
        int r;

        snprintf(allow, sizeof(allow), "%s/allow", dir);
        if (f->allow && !damon_ctx_exists(w, allow))
                return refuse(w, p, allow, "%s: Scheme=%s: allow= needs %s, which this kernel's DAMON lacks (Linux "
                              "6.14); reject= works on every kernel with filters", origin_of(s),
                              dp_scheme_action_name(s->action), allow);
        r = write_text(w, dir, "type", addr ? "addr" : dp_scheme_filter_type_name(f->type));
        if (r == 0)
                r = write_text(w, dir, "matching", f->matching ? "Y" : "N");
        if (r == 0 && damon_ctx_exists(w, allow))
                r = write_text(w, dir, "allow", f->allow ? "Y" : "N");
        if (r < 0)
                return r;
        switch (f->type) {
        case DP_FILTER_MEMCG:
                return write_text(w, dir, "memcg_path", f->memcg_path);
        case DP_FILTER_TARGET:
                return write_under(w, dir, &(struct setting) { "damon_target_idx", f->target_idx }, 1);
        case DP_FILTER_ADDR:
        case DP_FILTER_HOT: {
                const struct setting bounds[] = {
                        { "addr_start", start / unit }, { "addr_end", end / unit + (end % unit != 0) },
                };

                return write_under(w, dir, bounds, DP_ARRAY_SIZE(bounds));
        }
        default:
                return 0;
        }
}

/* The entries a filter takes: one, or for hot one per @hot range, or for
 * reject=!hot one per gap around them: a kernel without allow filters
 * (before 6.14) filters out what one "not in this range" entry does not
 * match, so several of them would reject everything. */
static size_t filter_entries(const struct dp_scheme_filter *f, size_t nr_hot) {
        if (f->type != DP_FILTER_HOT)
                return 1;
        return f->matching ? nr_hot : nr_hot + 1;
}

/* Entry @j of a hot filter: the hot range, or for !hot the gap before it
 * (the last gap reaching the end of the address space), rejected. */
static void hot_filter_entry(const struct dp_scheme_filter *f, const struct dp_damon_range *hot, size_t nr_hot,
                             size_t j, struct dp_scheme_filter *entry, struct dp_damon_range *range) {
        *entry = *f;
        if (f->matching) {
                *range = hot[j];
                return;
        }
        entry->matching = true;
        *range = (struct dp_damon_range) { j == 0 ? 0 : hot[j - 1].end, j == nr_hot ? UINT64_MAX : hot[j].start };
}

/* Every filter of @s in order, the hot one as one addr filter per @hot range
 * (per gap around them for !hot). */
static int write_filters(struct damon_writer *w, const struct dp_damon_own_params *p, unsigned idx,
                         const struct dp_damon_scheme *s, const struct dp_damon_range *hot, size_t nr_hot) {
        char dir[DP_DAMON_PATH_MAX];
        size_t total = 0, k = 0;
        uint64_t unit;
        int r;

        for (size_t i = 0; i < s->n_filters; i++) {
                /* DAMON has no node filter: dp_damon_resolve_node_filters()
                 * turns them into address filters first. */
                if (s->filters[i].type == DP_FILTER_NODE)
                        return -EINVAL;
                total += filter_entries(&s->filters[i], nr_hot);
        }
        if (s->n_filters == 0)
                return 0;
        r = damon_ctx_addr_unit(w, &unit);
        if (r < 0)
                return r;
        snprintf(dir, sizeof(dir), "schemes/%u/filters", idx);
        r = write_under(w, dir, &(struct setting) { "nr_filters", total }, 1);
        for (size_t i = 0; r == 0 && i < s->n_filters; i++) {
                const struct dp_scheme_filter *f = &s->filters[i];
                size_t n = filter_entries(f, nr_hot);

                for (size_t j = 0; r == 0 && j < n; j++, k++) {
                        struct dp_scheme_filter entry = *f;
                        struct dp_damon_range range;

                        snprintf(dir, sizeof(dir), "schemes/%u/filters/%zu", idx, k);
                        if (f->type == DP_FILTER_HOT)
                                hot_filter_entry(f, hot, nr_hot, j, &entry, &range);
                        r = write_filter(w, p, dir, s, &entry, f->type == DP_FILTER_HOT ? &range : NULL, unit);
                }
        }
        return r;
}

static int write_scheme(struct damon_writer *w, const struct dp_damon_own_params *p, unsigned idx,
                        const struct dp_damon_scheme *s) {
        char dir[DP_DAMON_PATH_MAX];
        struct setting pattern[6] = {
                { "sz/min", s->sz.min }, { "sz/max", s->sz.max },
                { "nr_accesses/min", 0 }, { "nr_accesses/max", 0 }, { "age/min", 0 }, { "age/max", 0 },
        };
        const struct setting quotas[] = {
                { "ms", s->quota_ms }, { "bytes", s->quota_bytes }, { "reset_interval_ms", s->quota_reset_ms },
                { "weights/sz_permil", s->weight_sz }, { "weights/nr_accesses_permil", s->weight_nr_accesses },
                { "weights/age_permil", s->weight_age },
        };
        const struct setting wmarks[] = {
                { "interval_us", s->wmarks_interval_us }, { "high", s->wmarks_high },
                { "mid", s->wmarks_mid }, { "low", s->wmarks_low },
        };
        int r;

        accesses_range(&s->nr_accesses, p, &pattern[2].value, &pattern[3].value);
        age_range(&s->age, p, &pattern[4].value, &pattern[5].value);
        snprintf(dir, sizeof(dir), "schemes/%u", idx);
        r = write_text(w, dir, "action", dp_scheme_action_name(s->action));
        if (r == 0 && s->target_nid >= 0)
                r = write_under(w, dir, &(struct setting) { "target_nid", (uint64_t) s->target_nid }, 1);
        snprintf(dir, sizeof(dir), "schemes/%u/access_pattern", idx);
        if (r == 0)
                r = write_under(w, dir, pattern, DP_ARRAY_SIZE(pattern));
        snprintf(dir, sizeof(dir), "schemes/%u/quotas", idx);
        if (r == 0)
                r = write_under(w, dir, quotas, DP_ARRAY_SIZE(quotas));
        if (r == 0)
                r = write_goals(w, p, idx, s);
        snprintf(dir, sizeof(dir), "schemes/%u/watermarks", idx);
        if (r == 0)
                r = write_text(w, dir, "metric", s->wmarks ? "free_mem_rate" : "none");
        if (r == 0 && s->wmarks)
                r = write_under(w, dir, wmarks, DP_ARRAY_SIZE(wmarks));
        /* The hot ranges come with the first hints: none yet. */
        return r < 0 ? r : write_filters(w, p, idx, s, NULL, 0);
}

int damon_write_schemes(struct damon_writer *w, const struct dp_damon_own_params *p, bool paddr) {
        size_t used = 0;
        int r;

        /* Our stat scheme 0 is written already: its nr_schemes write made the
         * others' directories too. */
        snprintf(w->st->schemes, sizeof(w->st->schemes), "stat");
        for (size_t i = 0; i < p->nr_schemes; i++) {
                r = check_scheme_files(w, p, (unsigned) i + 1, &p->schemes[i], paddr);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < p->nr_schemes; i++) {
                r = write_scheme(w, p, (unsigned) i + 1, &p->schemes[i]);
                if (r < 0)
                        return r;
                used = strlen(w->st->schemes);
                snprintf(w->st->schemes + used, sizeof(w->st->schemes) - used, ",%s",
                         dp_scheme_action_name(p->schemes[i].action));
        }
        return 0;
}

/* ---- the PMU-fed hot filter ---- */

/* A region's samples: the last aggregation's and the current one's so far
 * (twice as many to judge by as one aggregation's, at a sparse sampler's
 * few a region). */
static uint64_t region_samples(const struct dp_snapshot_region *r) {
        return r->last_nr_samples + r->nr_samples;
}

struct density {
        uint64_t samples, bytes;
};

/* @a at least @num/@den times as dense in samples as @b. */
static bool denser(struct density a, struct density b, unsigned num, unsigned den) {
        return (unsigned __int128) a.samples * b.bytes * den >= (unsigned __int128) b.samples * a.bytes * num;
}

/* What a hot region's density is judged against: the region with the most
 * samples (ties: the first), and the whole target's mean. */
static void hot_references(const struct dp_snapshot_region *regions, size_t n, struct density *ret_top,
                           struct density *ret_mean) {
        struct density top = {}, mean = {};

        for (size_t i = 0; i < n; i++) {
                uint64_t samples = region_samples(&regions[i]);

                if (samples > top.samples)
                        top = (struct density) { samples, regions[i].end - regions[i].start };
                mean.samples += samples;
                mean.bytes += regions[i].end - regions[i].start;
        }
        *ret_top = top;
        *ret_mean = mean;
}

/* Sampled, and at least half as dense as the busiest region or four times
 * as dense as the target's mean.  Density, not a rate: a region's rate
 * grows with the hot bytes it holds, so once most of a hot set sat in one
 * region (moved up into one stretch of the fast node), the regions with the
 * rest fell under half its rate, and out of the filter, though their pages
 * were as hot.  The mean: a sampler that sees something else far more
 * densely (the page-fault control, every exec's faults on the same
 * library pages) still leaves a hot set far denser than the idle rest. */
static bool filter_hot(const struct dp_snapshot_region *r, struct density top, struct density mean) {
        struct density d = { region_samples(r), r->end - r->start };

        return d.samples > 0 && (denser(d, top, 1, 2) || denser(d, mean, 4, 1));
}

int dp_damon_hot_filter_ranges(const struct dp_snapshot_region *regions, size_t n, const struct dp_range *sampled,
                               size_t ns, size_t max_out, struct dp_damon_range *out) {
        _cleanup_free_ struct dp_range *hot = NULL;
        struct density top, mean;
        size_t k = 0;
        int r;

        if (max_out == 0 || (n > 0 && !regions) || (ns > 0 && !sampled))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                if (regions[i].start >= regions[i].end || (i > 0 && regions[i].start < regions[i - 1].end))
                        return -EINVAL;
        hot_references(regions, n, &top, &mean);
        hot = calloc(n + ns ?: 1, sizeof(*hot));
        if (!hot)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (filter_hot(&regions[i], top, mean))
                        hot[k++] = (struct dp_range) { regions[i].start, regions[i].end };
        if (ns > 0)
                memcpy(hot + k, sampled, ns * sizeof(*sampled));
        r = dp_ranges_coalesce(hot, k + ns, &k);
        if (r >= 0)
                r = dp_ranges_fit(hot, k, max_out, &k);
        if (r < 0)
                return r;
        for (size_t i = 0; i < k; i++)
                out[i] = (struct dp_damon_range) { hot[i].start, hot[i].end };
        return (int) k;
}

/* Holds @f, seen at @now, among the @k of @held (room for @cap); the new count. */
static size_t hold_one(struct dp_damon_held_range *held, size_t k, size_t cap, struct dp_damon_range f, uint64_t now) {
        size_t m = 0, oldest = 0;
        bool contained = false;

        for (size_t i = 0; i < k; i++)
                if (held[i].start <= f.start && f.end <= held[i].end) {
                        held[i].seen = now;
                        contained = true;
                }
        if (contained)
                return k;
        for (size_t i = 0; i < k; i++)
                if (!(f.start <= held[i].start && held[i].end <= f.end))
                        held[m++] = held[i];
        if (m == cap) {
                for (size_t i = 1; i < m; i++)
                        if (held[i].seen < held[oldest].seen)
                                oldest = i;
                held[oldest] = held[--m];
        }
        held[m++] = (struct dp_damon_held_range) { f.start, f.end, now };
        return m;
}

size_t dp_damon_hold_hot(struct dp_damon_held_range *held, size_t n, size_t cap, const struct dp_damon_range *fresh,
                         size_t nf, uint64_t now, uint64_t hold) {
        size_t k = 0;

        if (cap == 0)
                return 0;
        for (size_t i = 0; i < n && k < cap; i++)
                if (now - held[i].seen <= hold)
                        held[k++] = held[i];
        for (size_t i = 0; i < nf; i++)
                if (fresh[i].start < fresh[i].end)
                        k = hold_one(held, k, cap, fresh[i], now);
        return k;
}

int dp_damon_write_hot_filters(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file,
                               const struct dp_damon_scheme *schemes, size_t nr_schemes,
                               const struct dp_damon_range *hot, size_t nr_hot) {
        struct damon_writer w;
        bool wrote = false;
        int r;

        if (!st || st->role != DP_DAMON_ROLE_OWNED)
                return -EPERM;
        if (nr_hot > 0 && !hot)
                return -EINVAL;
        for (size_t i = 1; i < nr_hot; i++)
                if (hot[i].start < hot[i - 1].end)
                        return -EINVAL;
        damon_writer_init(&w, fs, st, state_file);
        for (size_t i = 0; i < nr_schemes; i++) {
                if (!dp_scheme_hot_filter(&schemes[i]))
                        continue;
                r = write_filters(&w, NULL, (unsigned) i + 1, &schemes[i], hot, nr_hot);
                if (r < 0)
                        return r;
                wrote = true;
        }
        return wrote;
}

/* ---- read-back ---- */

/* A number that may be absent on older kernels: @fallback then. */
static int read_optional(struct damon_writer *w, const char *rel, uint64_t fallback, uint64_t *ret) {
        if (!damon_ctx_exists(w, rel)) {
                *ret = fallback;
                return 0;
        }
        return damon_ctx_read_u64(w, rel, ret);
}

static int read_scheme(struct damon_writer *w, uint64_t s, struct dp_damon_scheme_info *ret) {
        static const char *const numbers[] = {
                "access_pattern/sz/min", "access_pattern/sz/max", "access_pattern/nr_accesses/min",
                "access_pattern/nr_accesses/max", "access_pattern/age/min", "access_pattern/age/max",
                "quotas/ms", "quotas/bytes", "quotas/reset_interval_ms",
                "stats/nr_tried", "stats/sz_tried", "stats/nr_applied", "stats/sz_applied", "stats/qt_exceeds",
        };
        struct dp_damon_scheme_info info = { .target_nid = -1 };
        uint64_t *fields[] = {
                &info.sz_min, &info.sz_max, &info.nr_accesses_min, &info.nr_accesses_max, &info.age_min,
                &info.age_max, &info.quota_ms, &info.quota_bytes, &info.quota_reset_ms, &info.nr_tried,
                &info.sz_tried, &info.nr_applied, &info.sz_applied, &info.qt_exceeds,
        };
        char rel[DP_DAMON_PATH_MAX], nid[24];
        uint64_t goals, filters;
        long long n;
        int r;

        _Static_assert(DP_ARRAY_SIZE(numbers) == DP_ARRAY_SIZE(fields), "a field per file");
        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/action", s);
        r = damon_ctx_read(w, rel, info.action, sizeof(info.action));
        for (size_t i = 0; r == 0 && i < DP_ARRAY_SIZE(numbers); i++) {
                snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/%s", s, numbers[i]);
                r = damon_ctx_read_u64(w, rel, fields[i]);
        }
        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/watermarks/metric", s);
        if (r == 0)
                r = damon_ctx_read(w, rel, info.wmarks_metric, sizeof(info.wmarks_metric));
        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/quotas/goals/nr_goals", s);
        if (r == 0)
                r = read_optional(w, rel, 0, &goals);
        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/filters/nr_filters", s);
        if (r == 0)
                r = read_optional(w, rel, 0, &filters);
        snprintf(rel, sizeof(rel), "schemes/%" PRIu64 "/target_nid", s);
        if (r == 0 && damon_ctx_exists(w, rel)) {
                r = damon_ctx_read(w, rel, nid, sizeof(nid));
                if (r == 0 && dp_parse_int_in(nid, -1, INT32_MAX, &n) < 0)
                        r = -EBADMSG;
                info.target_nid = (int) n;
        }
        if (r < 0)
                return r;
        info.nr_goals = (unsigned) DP_MIN(goals, (uint64_t) UINT32_MAX);
        info.nr_filters = (unsigned) DP_MIN(filters, (uint64_t) UINT32_MAX);
        *ret = info;
        return 0;
}

int dp_damon_read_schemes(struct dp_damon_fs *fs, unsigned kdamond, unsigned context,
                          struct dp_damon_scheme_info **ret, size_t *ret_n) {
        struct dp_damon_state scope = { .kdamond = kdamond, .context = context };
        _cleanup_free_ struct dp_damon_scheme_info *v = NULL;
        char rel[DP_DAMON_PATH_MAX];
        struct damon_writer w;
        uint64_t nr;
        int r;

        *ret = NULL;
        *ret_n = 0;
        damon_writer_init(&w, fs, &scope, NULL);
        r = damon_state_command(fs, kdamond, "update_schemes_stats");
        if (r == 0)
                r = damon_ctx_read_u64(&w, "schemes/nr_schemes", &nr);
        if (r < 0)
                return r;
        if (nr == 0)
                return 0;
        snprintf(rel, sizeof(rel), "schemes/%" PRIu64, nr - 1);
        if (nr > 65536 || !damon_ctx_exists(&w, rel)) {
                /* The kernel makes every directory nr_schemes names. */
                snprintf(rel, sizeof(rel), "kdamonds/%u/contexts/%u/schemes/nr_schemes", kdamond, context);
                damon_fs_note_error(fs, rel);
                return -EBADMSG;
        }
        v = calloc(nr, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (uint64_t s = 0; s < nr; s++) {
                r = read_scheme(&w, s, &v[s]);
                if (r < 0)
                        return r;
        }
        *ret = DP_TAKE_PTR(v);
        *ret_n = nr;
        return 0;
}
