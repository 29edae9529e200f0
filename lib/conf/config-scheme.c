/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "config-scheme.h"
#include "explain.h"
#include "macro.h"
#include "parse-util.h"
#include "time-util.h"

static const char *const action_names[] = {
        [DP_SCHEME_STAT] = "stat",
        [DP_SCHEME_PAGEOUT] = "pageout",
        [DP_SCHEME_LRU_PRIO] = "lru_prio",
        [DP_SCHEME_LRU_DEPRIO] = "lru_deprio",
        [DP_SCHEME_MIGRATE_HOT] = "migrate_hot",
        [DP_SCHEME_MIGRATE_COLD] = "migrate_cold",
        [DP_SCHEME_HUGEPAGE] = "hugepage",
        [DP_SCHEME_NOHUGEPAGE] = "nohugepage",
};

static const char *const metric_names[] = {
        [DP_GOAL_HOT_FRACTION] = "hot_fraction",
        [DP_GOAL_SOME_MEM_PSI_US] = "some_mem_psi_us",
        [DP_GOAL_NODE_MEM_USED_BP] = "node_mem_used_bp",
        [DP_GOAL_NODE_MEM_FREE_BP] = "node_mem_free_bp",
};

static const char *const filter_names[] = {
        [DP_FILTER_ANON] = "anon",
        [DP_FILTER_MEMCG] = "memcg",
        [DP_FILTER_YOUNG] = "young",
        [DP_FILTER_ADDR] = "addr",
        [DP_FILTER_TARGET] = "target",
        [DP_FILTER_HOT] = "hot",
        [DP_FILTER_NODE] = "node",
};

_Static_assert(DP_ARRAY_SIZE(action_names) == _DP_SCHEME_ACTION_MAX, "every action named");
_Static_assert(DP_ARRAY_SIZE(metric_names) == _DP_GOAL_METRIC_MAX, "every metric named");
_Static_assert(DP_ARRAY_SIZE(filter_names) == _DP_FILTER_TYPE_MAX, "every filter named");

const char *dp_scheme_action_name(enum dp_scheme_action a) {
        return (unsigned) a < DP_ARRAY_SIZE(action_names) ? action_names[a] : NULL;
}

const char *dp_scheme_goal_metric_name(enum dp_scheme_goal_metric m) {
        return (unsigned) m < DP_ARRAY_SIZE(metric_names) ? metric_names[m] : NULL;
}

const char *dp_scheme_goal_kernel_metric(enum dp_scheme_goal_metric m) {
        return m == DP_GOAL_HOT_FRACTION ? "user_input" : dp_scheme_goal_metric_name(m);
}

const char *dp_scheme_filter_type_name(enum dp_scheme_filter_type t) {
        return (unsigned) t < DP_ARRAY_SIZE(filter_names) ? filter_names[t] : NULL;
}

static int find_name(const char *const *names, size_t n, const char *word, size_t len) {
        for (size_t i = 0; i < n; i++)
                if (strlen(names[i]) == len && strncmp(names[i], word, len) == 0)
                        return (int) i;
        return -1;
}

void dp_scheme_init(struct dp_damon_scheme *s) {
        *s = (struct dp_damon_scheme) {
                .action = DP_SCHEME_STAT,
                .target_nid = -1,
                .sz = { 0, UINT64_MAX, DP_UNIT_RAW },
                .nr_accesses = { 0, UINT64_MAX, DP_UNIT_RAW },
                .age = { 0, UINT64_MAX, DP_UNIT_RAW },
        };
}

static const struct dp_scheme_filter *filter_of_type(const struct dp_damon_scheme *s,
                                                    enum dp_scheme_filter_type type) {
        for (size_t i = 0; i < s->n_filters; i++)
                if (s->filters[i].type == type)
                        return &s->filters[i];
        return NULL;
}

const struct dp_scheme_filter *dp_scheme_hot_filter(const struct dp_damon_scheme *s) {
        return filter_of_type(s, DP_FILTER_HOT);
}

const struct dp_scheme_filter *dp_scheme_node_filter(const struct dp_damon_scheme *s) {
        return filter_of_type(s, DP_FILTER_NODE);
}

/* ---- values ---- */

/* A size: a whole number of bytes with an optional binary suffix K, M, G or T. */
static int parse_size(const char *v, uint64_t *ret) {
        static const char suffixes[] = "KMGT";
        const char *end, *s;
        uint64_t n;

        if (dp_parse_uint(v, 10, &n, &end) < 0)
                return -EINVAL;
        if (*end) {
                s = strchr(suffixes, *end);
                if (!s || end[1] != '\0')
                        return -EINVAL;
                for (const char *p = suffixes; p <= s; p++) {
                        if (n > UINT64_MAX / 1024)
                                return -EINVAL;
                        n *= 1024;
                }
        }
        *ret = n;
        return 0;
}

/* One end of a range in @unit; "max" for the upper end only. */
static int parse_end(const char *v, enum dp_scheme_unit unit, bool upper, uint64_t *ret) {
        size_t len = strlen(v);

        if (upper && strcmp(v, "max") == 0) {
                *ret = UINT64_MAX;
                return 0;
        }
        switch (unit) {
        case DP_UNIT_PERCENT:
                if (len < 2 || v[len - 1] != '%')
                        return -EINVAL;
                {
                        char num[24];

                        if (len - 1 >= sizeof(num))
                                return -EINVAL;
                        memcpy(num, v, len - 1);
                        num[len - 1] = '\0';
                        return dp_parse_u64_in(num, 0, 100, ret) < 0 ? -EINVAL : 0;
                }
        case DP_UNIT_USEC:
                return dp_timespan_parse(v, ret) < 0 ? -EINVAL : 0;
        default:
                return dp_parse_u64_in(v, 0, UINT32_MAX, ret) < 0 ? -EINVAL : 0;
        }
}

enum range_kind { RANGE_SIZE, RANGE_ACCESSES, RANGE_AGE };

/* The unit @v is written in: a percentage (nr_accesses), a time span (age,
 * any letter but "max"), else DAMON's own. */
static enum dp_scheme_unit unit_of(const char *lo, const char *hi, enum range_kind kind) {
        const char *ends[] = { lo, hi };

        for (size_t i = 0; i < 2; i++) {
                if (strcmp(ends[i], "max") == 0)
                        continue;
                if (kind == RANGE_ACCESSES && strchr(ends[i], '%'))
                        return DP_UNIT_PERCENT;
                if (kind == RANGE_AGE && strpbrk(ends[i], "abcdefghijklmnopqrstuvwxyz"))
                        return DP_UNIT_USEC;
        }
        return DP_UNIT_RAW;
}

/* MIN-MAX. */
static int parse_range(const char *v, enum range_kind kind, struct dp_scheme_range *ret) {
        const char *dash = strchr(v, '-');
        char lo[32];
        struct dp_scheme_range r;

        if (!dash || (size_t) (dash - v) >= sizeof(lo))
                return -EINVAL;
        memcpy(lo, v, (size_t) (dash - v));
        lo[dash - v] = '\0';
        if (kind == RANGE_SIZE) {
                r.unit = DP_UNIT_RAW;
                if (parse_size(lo, &r.min) < 0)
                        return -EINVAL;
                if (strcmp(dash + 1, "max") == 0)
                        r.max = UINT64_MAX;
                else if (parse_size(dash + 1, &r.max) < 0)
                        return -EINVAL;
        } else {
                r.unit = unit_of(lo, dash + 1, kind);
                if (parse_end(lo, r.unit, false, &r.min) < 0 || parse_end(dash + 1, r.unit, true, &r.max) < 0)
                        return -EINVAL;
        }
        if (r.min > r.max)
                return -ERANGE;
        if (r.min == 0 && r.max == UINT64_MAX)
                r.unit = DP_UNIT_RAW;   /* every value: one spelling */
        *ret = r;
        return 0;
}

/* Splits @v at ':' into at most @max fields of @size bytes each; the count. */
static int split_fields(const char *v, char fields[][DP_SCHEME_MEMCG_MAX], size_t max) {
        size_t n = 0;

        for (;;) {
                size_t len = strcspn(v, ":");

                if (n == max || len >= DP_SCHEME_MEMCG_MAX)
                        return -EINVAL;
                memcpy(fields[n], v, len);
                fields[n++][len] = '\0';
                if (!v[len])
                        return (int) n;
                v += len + 1;
        }
}

static int parse_goal(const char *v, struct dp_scheme_goal *ret) {
        char f[3][DP_SCHEME_MEMCG_MAX];
        int n = split_fields(v, f, 3), m;
        uint64_t nid = 0;
        bool node;

        if (n < 2)
                return -EINVAL;
        m = find_name(metric_names, DP_ARRAY_SIZE(metric_names), f[0], strlen(f[0]));
        if (m < 0)
                return -EINVAL;
        node = m == DP_GOAL_NODE_MEM_USED_BP || m == DP_GOAL_NODE_MEM_FREE_BP;
        if ((n == 3) != node)
                return -EINVAL;
        if (node && dp_parse_u64_in(f[2], 0, DP_SCHEME_MAX_NID, &nid) < 0)
                return -EINVAL;
        if (dp_parse_u64_in(f[1], 1, m == DP_GOAL_HOT_FRACTION ? 10000 : UINT32_MAX, &ret->target) < 0)
                return -EINVAL;
        if (node && ret->target > 10000)
                return -EINVAL;         /* basis points */
        ret->metric = (enum dp_scheme_goal_metric) m;
        ret->nid = (uint32_t) nid;
        return 0;
}

static int parse_wmarks(const char *v, struct dp_damon_scheme *s) {
        char f[5][DP_SCHEME_MEMCG_MAX];
        uint32_t w[3];
        uint64_t us;

        if (strcmp(v, "none") == 0) {
                s->wmarks = false;
                s->wmarks_interval_us = s->wmarks_high = s->wmarks_mid = s->wmarks_low = 0;
                return 0;
        }
        if (split_fields(v, f, 5) != 5 || strcmp(f[0], "free_mem_rate") != 0)
                return -EINVAL;
        if (dp_timespan_parse(f[1], &us) < 0 || us == 0)
                return -EINVAL;
        for (size_t i = 0; i < 3; i++)
                if (dp_parse_u32_in(f[2 + i], 0, 1000, &w[i]) < 0)
                        return -EINVAL;
        if (w[0] < w[1] || w[1] < w[2])
                return -ERANGE;
        s->wmarks = true;
        s->wmarks_interval_us = us;
        s->wmarks_high = w[0];
        s->wmarks_mid = w[1];
        s->wmarks_low = w[2];
        return 0;
}

/* [!]TYPE[:ARG]. */
static int parse_filter(const char *v, bool allow, struct dp_scheme_filter *ret) {
        struct dp_scheme_filter f = { .allow = allow, .matching = *v != '!' };
        const char *colon, *arg;
        int t;

        if (!f.matching)
                v++;
        colon = strchr(v, ':');
        arg = colon ? colon + 1 : NULL;
        t = find_name(filter_names, DP_ARRAY_SIZE(filter_names), v, colon ? (size_t) (colon - v) : strlen(v));
        if (t < 0)
                return -EINVAL;
        f.type = (enum dp_scheme_filter_type) t;
        switch (f.type) {
        case DP_FILTER_MEMCG:
                if (!arg || arg[0] != '/' || strlen(arg) >= sizeof(f.memcg_path))
                        return -EINVAL;
                strcpy(f.memcg_path, arg);
                break;
        case DP_FILTER_ADDR: {
                const char *dash = arg ? strchr(arg, '-') : NULL, *end;

                if (!dash || dp_parse_uint(arg, 0, &f.start, &end) < 0 || end != dash ||
                    dp_parse_uint(dash + 1, 0, &f.end, NULL) < 0 || f.start >= f.end)
                        return -EINVAL;
                break;
        }
        case DP_FILTER_TARGET:
                if (!arg || dp_parse_u32_in(arg, 0, 65535, &f.target_idx) < 0)
                        return -EINVAL;
                break;
        case DP_FILTER_NODE:
                /* Written as address filters, several for a node in pieces:
                 * as for hot, allow=! would take them all at once. */
                if (!arg || dp_parse_u32_in(arg, 0, DP_SCHEME_MAX_NID, &f.nid) < 0 || (!f.matching && f.allow))
                        return -EINVAL;
                break;
        default:
                /* reject=!hot rejects everything but the hot ranges (what
                 * allow=hot does from Linux 6.14 on); allow=!hot would allow
                 * everything but them, which no scheme needs. */
                if (arg || (f.type == DP_FILTER_HOT && !f.matching && f.allow))
                        return -EINVAL;
                break;
        }
        *ret = f;
        return 0;
}

/* ---- words ---- */

static int parse_u64_word(const char *v, uint64_t max, uint64_t *ret) {
        return dp_parse_u64_in(v, 0, max, ret) < 0 ? -EINVAL : 0;
}

static int parse_weights(const char *v, struct dp_damon_scheme *s) {
        uint32_t w[3];
        char buf[64];
        char *p = buf, *comma;

        if (strlen(v) >= sizeof(buf))
                return -EINVAL;
        strcpy(buf, v);
        for (size_t i = 0; i < 3; i++) {
                comma = strchr(p, ',');
                if ((i < 2) != (comma != NULL))
                        return -EINVAL;
                if (comma)
                        *comma = '\0';
                if (dp_parse_u32_in(p, 0, 1000000, &w[i]) < 0)
                        return -EINVAL;
                if (comma)
                        p = comma + 1;
        }
        s->weight_sz = w[0];
        s->weight_nr_accesses = w[1];
        s->weight_age = w[2];
        return 0;
}

static int add_filter(const char *v, bool allow, struct dp_damon_scheme *s) {
        struct dp_scheme_filter f;

        if (s->n_filters == DP_SCHEME_MAX_FILTERS || parse_filter(v, allow, &f) < 0)
                return -EINVAL;
        if (f.type == DP_FILTER_HOT && dp_scheme_hot_filter(s))
                return -EINVAL;         /* one set of hot ranges per scheme */
        s->filters[s->n_filters++] = f;
        return 0;
}

static int parse_word(const char *key, const char *v, struct dp_damon_scheme *s, const char **expected) {
        uint64_t ms;
        uint32_t nid;

        if (strcmp(key, "target_nid") == 0) {
                *expected = "a NUMA node between 0 and 65535";
                if (dp_parse_u32_in(v, 0, DP_SCHEME_MAX_NID, &nid) < 0)
                        return -EINVAL;
                s->target_nid = (int32_t) nid;
                return 0;
        }
        if (strcmp(key, "sz") == 0) {
                *expected = "MIN-MAX in bytes with an optional K, M, G or T, MAX may be max, MIN <= MAX";
                return parse_range(v, RANGE_SIZE, &s->sz);
        }
        if (strcmp(key, "nr_accesses") == 0) {
                *expected = "MIN-MAX, sampling intervals per aggregation or both in percent (0%-100%), "
                            "MAX may be max, MIN <= MAX";
                return parse_range(v, RANGE_ACCESSES, &s->nr_accesses);
        }
        if (strcmp(key, "age") == 0) {
                *expected = "MIN-MAX, aggregation intervals or time spans (5s), MAX may be max, MIN <= MAX";
                return parse_range(v, RANGE_AGE, &s->age);
        }
        if (strcmp(key, "quota_ms") == 0) {
                *expected = "milliseconds of work per reset interval, 0 to 4294967295 (0: no limit)";
                return parse_u64_word(v, UINT32_MAX, &s->quota_ms);
        }
        if (strcmp(key, "quota_bytes") == 0) {
                *expected = "bytes per reset interval with an optional K, M, G or T (0: no limit)";
                return parse_size(v, &s->quota_bytes);
        }
        if (strcmp(key, "quota_reset") == 0) {
                *expected = "a time span of whole milliseconds up to 1h";
                if (dp_timespan_parse(v, &ms) < 0 || ms % USEC_PER_MSEC || ms > USEC_PER_HOUR)
                        return -EINVAL;
                s->quota_reset_ms = ms / USEC_PER_MSEC;
                return 0;
        }
        if (strcmp(key, "weights") == 0) {
                *expected = "SIZE,NR_ACCESSES,AGE, three whole numbers up to 1000000";
                return parse_weights(v, s);
        }
        if (strcmp(key, "goal") == 0) {
                *expected = "hot_fraction:TARGET (1-10000), some_mem_psi_us:TARGET, node_mem_used_bp:TARGET:NODE "
                            "or node_mem_free_bp:TARGET:NODE (TARGET 1-10000), at most 4 goals";
                if (s->n_goals == DP_SCHEME_MAX_GOALS || parse_goal(v, &s->goals[s->n_goals]) < 0)
                        return -EINVAL;
                s->n_goals++;
                return 0;
        }
        if (strcmp(key, "wmarks") == 0) {
                *expected = "none or free_mem_rate:INTERVAL:HIGH:MID:LOW, per thousand, HIGH >= MID >= LOW";
                return parse_wmarks(v, s);
        }
        if (strcmp(key, "allow") == 0 || strcmp(key, "reject") == 0) {
                *expected = "[!]anon, [!]young, [!]memcg:/PATH, [!]addr:START-END, [!]target:INDEX, hot, node:NID "
                            "or (reject only) !hot, !node:NID (at most 8 filters, one hot)";
                return add_filter(v, key[0] == 'a', s);
        }
        *expected = NULL;
        return -ENOENT;
}

static int check_scheme(const struct dp_damon_scheme *s, char *why, size_t size) {
        bool migrate = s->action == DP_SCHEME_MIGRATE_HOT || s->action == DP_SCHEME_MIGRATE_COLD;

        if (migrate && s->target_nid < 0)
                return dp_explain(-EINVAL, why, size, "%s needs target_nid=NODE", action_names[s->action]);
        if (!migrate && s->target_nid >= 0)
                return dp_explain(-EINVAL, why, size, "target_nid= applies to migrate_hot and migrate_cold only");
        if (s->nr_accesses.unit == DP_UNIT_PERCENT && s->nr_accesses.max != UINT64_MAX && s->nr_accesses.max > 100)
                return dp_explain(-EINVAL, why, size, "nr_accesses percentages go up to 100%%");
        return 0;
}

int dp_scheme_parse(const char *value, struct dp_damon_scheme *ret, char *why, size_t why_size) {
        struct dp_damon_scheme s;
        const char *p = value + strspn(value, " \t");
        size_t len = strcspn(p, " \t");
        int a = find_name(action_names, DP_ARRAY_SIZE(action_names), p, len);

        dp_scheme_init(&s);
        if (a < 0)
                return dp_explain(-EINVAL, why, why_size, "word '%.*s': expected an action first: stat, pageout, "
                                  "lru_prio, lru_deprio, migrate_hot, migrate_cold, hugepage or nohugepage",
                                  (int) len, p);
        s.action = (enum dp_scheme_action) a;
        for (p += len, p += strspn(p, " \t"); *p; p += strspn(p, " \t")) {
                char word[DP_SCHEME_MEMCG_MAX + 32];
                const char *expected;
                char *eq;
                int r;

                len = strcspn(p, " \t");
                if (len >= sizeof(word))
                        return dp_explain(-EINVAL, why, why_size, "word '%.32s...': too long", p);
                memcpy(word, p, len);
                word[len] = '\0';
                p += len;
                eq = strchr(word, '=');
                if (!eq)
                        return dp_explain(-EINVAL, why, why_size, "word '%s': expected KEY=VALUE", word);
                *eq = '\0';
                r = parse_word(word, eq + 1, &s, &expected);
                if (r == -ENOENT)
                        return dp_explain(-EINVAL, why, why_size, "word '%s=%s': unknown key '%s'", word, eq + 1,
                                          word);
                if (r < 0)
                        return dp_explain(-EINVAL, why, why_size, "word '%s=%s': expected %s", word, eq + 1, expected);
        }
        if (check_scheme(&s, why, why_size) < 0)
                return -EINVAL;
        *ret = s;
        return 0;
}

/* ---- printing ---- */

struct out {
        char *buf;
        size_t size, used;
        bool full;
};

static void __attribute__((format(printf, 2, 3))) put(struct out *o, const char *fmt, ...) {
        va_list ap;
        int k;

        if (o->full)
                return;
        va_start(ap, fmt);
        k = vsnprintf(o->buf + o->used, o->size - o->used, fmt, ap);
        va_end(ap);
        if (k < 0 || (size_t) k >= o->size - o->used)
                o->full = true;
        else
                o->used += (size_t) k;
}

static void put_size(struct out *o, uint64_t v) {
        static const char suffixes[] = "KMGT";
        int i = -1;

        while (v && v % 1024 == 0 && i < 3) {
                v /= 1024;
                i++;
        }
        if (i < 0)
                put(o, "%" PRIu64, v);
        else
                put(o, "%" PRIu64 "%c", v, suffixes[i]);
}

/* A time span as one word: "1s500ms" reads back as "1s 500ms" does. */
static void put_span(struct out *o, uint64_t usec) {
        char span[64];

        if (dp_timespan_format(usec, span, sizeof(span)) < 0) {
                o->full = true;
                return;
        }
        for (const char *p = span; *p; p++)
                if (*p != ' ')
                        put(o, "%c", *p);
}

static void put_end(struct out *o, uint64_t v, enum dp_scheme_unit unit, bool size) {
        if (v == UINT64_MAX)
                put(o, "max");
        else if (size)
                put_size(o, v);
        else if (unit == DP_UNIT_PERCENT)
                put(o, "%" PRIu64 "%%", v);
        else if (unit == DP_UNIT_USEC) {
                /* "0" alone would read back as aggregation intervals. */
                if (v == 0)
                        put(o, "0s");
                else
                        put_span(o, v);
        } else
                put(o, "%" PRIu64, v);
}

static void put_range(struct out *o, const char *name, const struct dp_scheme_range *r, bool size) {
        if (r->min == 0 && r->max == UINT64_MAX)
                return;
        put(o, " %s=", name);
        put_end(o, r->min, r->unit, size);
        put(o, "-");
        put_end(o, r->max, r->unit, size);
}

static void put_filter(struct out *o, const struct dp_scheme_filter *f) {
        put(o, " %s=%s%s", f->allow ? "allow" : "reject", f->matching ? "" : "!", filter_names[f->type]);
        if (f->type == DP_FILTER_MEMCG)
                put(o, ":%s", f->memcg_path);
        else if (f->type == DP_FILTER_ADDR)
                put(o, ":0x%" PRIx64 "-0x%" PRIx64, f->start, f->end);
        else if (f->type == DP_FILTER_TARGET)
                put(o, ":%u", f->target_idx);
        else if (f->type == DP_FILTER_NODE)
                put(o, ":%u", f->nid);
}

static void put_quotas(struct out *o, const struct dp_damon_scheme *s) {
        if (s->quota_ms)
                put(o, " quota_ms=%" PRIu64, s->quota_ms);
        if (s->quota_bytes) {
                put(o, " quota_bytes=");
                put_size(o, s->quota_bytes);
        }
        if (s->quota_reset_ms) {
                put(o, " quota_reset=");
                put_span(o, s->quota_reset_ms * USEC_PER_MSEC);
        }
        if (s->weight_sz || s->weight_nr_accesses || s->weight_age)
                put(o, " weights=%u,%u,%u", s->weight_sz, s->weight_nr_accesses, s->weight_age);
        for (size_t i = 0; i < s->n_goals; i++) {
                put(o, " goal=%s:%" PRIu64, metric_names[s->goals[i].metric], s->goals[i].target);
                if (s->goals[i].metric == DP_GOAL_NODE_MEM_USED_BP || s->goals[i].metric == DP_GOAL_NODE_MEM_FREE_BP)
                        put(o, ":%u", s->goals[i].nid);
        }
}

int dp_scheme_format(const struct dp_damon_scheme *s, char *buf, size_t size) {
        struct out o = { .buf = buf, .size = size };

        if (size == 0 || !dp_scheme_action_name(s->action))
                return -ENOBUFS;
        buf[0] = '\0';
        put(&o, "%s", action_names[s->action]);
        if (s->target_nid >= 0)
                put(&o, " target_nid=%d", s->target_nid);
        put_range(&o, "sz", &s->sz, true);
        put_range(&o, "nr_accesses", &s->nr_accesses, false);
        put_range(&o, "age", &s->age, false);
        put_quotas(&o, s);
        if (s->wmarks) {
                put(&o, " wmarks=free_mem_rate:");
                put_span(&o, s->wmarks_interval_us);
                put(&o, ":%u:%u:%u", s->wmarks_high, s->wmarks_mid, s->wmarks_low);
        }
        for (size_t i = 0; i < s->n_filters; i++)
                put_filter(&o, &s->filters[i]);
        return o.full ? -ENOBUFS : 0;
}

/* ---- the schemes among the other settings ---- */

int dp_config_check_schemes(const struct dp_config *c, char *why, size_t size) {
        bool paddr = c->target_mode == DP_TARGETS_PHYS;

        for (size_t i = 0; i < c->damon_n_schemes; i++) {
                const struct dp_damon_scheme *s = &c->damon_schemes[i];
                const char *origin = s->origin[0] ? s->origin : "configuration", *name = action_names[s->action];

                if (c->damon_mode != DP_DAMON_OWN)
                        return dp_explain(-EINVAL, why, size, "%s: Scheme=%s needs [DAMON] Mode=own: the schemes "
                                          "of a kdamond the daemon attaches to stay its administrator's", origin, name);
                if (!paddr && (s->action == DP_SCHEME_LRU_PRIO || s->action == DP_SCHEME_LRU_DEPRIO))
                        return dp_explain(-EINVAL, why, size, "%s: Scheme=%s needs Targets=physical (DAMON's paddr "
                                          "operations)", origin, name);
                if (paddr && (s->action == DP_SCHEME_HUGEPAGE || s->action == DP_SCHEME_NOHUGEPAGE))
                        return dp_explain(-EINVAL, why, size, "%s: Scheme=%s needs process targets (DAMON's vaddr "
                                          "operations), not Targets=physical", origin, name);
                if (dp_scheme_node_filter(s) && !paddr)
                        return dp_explain(-EINVAL, why, size, "%s: Scheme=%s with a node filter needs "
                                          "Targets=physical: a node's memory is a range of physical addresses",
                                          origin, name);
                if (dp_scheme_hot_filter(s) && !paddr && c->damon_max_targets != 1)
                        return dp_explain(-EINVAL, why, size, "%s: Scheme=%s with a hot filter needs "
                                          "Targets=physical or [DAMON] MaxTargets=1: an address filter applies to "
                                          "every target's address space alike", origin, name);
        }
        return 0;
}

bool dp_config_has_hot_filters(const struct dp_config *c) {
        for (size_t i = 0; i < c->damon_n_schemes; i++)
                if (dp_scheme_hot_filter(&c->damon_schemes[i]))
                        return true;
        return false;
}

bool dp_config_acts_inside_hot(const struct dp_config *c) {
        for (size_t i = 0; i < c->damon_n_schemes; i++) {
                const struct dp_scheme_filter *f = dp_scheme_hot_filter(&c->damon_schemes[i]);

                if (f && f->allow == f->matching)
                        return true;
        }
        return false;
}

bool dp_config_feeds_hot_fraction(const struct dp_config *c) {
        if (c->damon_goal != DP_DAMON_GOAL_NONE)
                return true;
        for (size_t i = 0; i < c->damon_n_schemes; i++)
                for (size_t g = 0; g < c->damon_schemes[i].n_goals; g++)
                        if (c->damon_schemes[i].goals[g].metric == DP_GOAL_HOT_FRACTION)
                                return true;
        return false;
}
