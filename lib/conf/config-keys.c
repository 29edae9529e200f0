/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-keys.h"
#include "config-scheme.h"
#include "cpu-list.h"
#include "macro.h"
#include "parse-util.h"
#include "time-util.h"

/* The field @k is stored in, checked against the type its parser and printer
 * handle: a table row pairing a uint32_t parser with a uint64_t field aborts
 * the first test that parses or prints that key. */
#define FIELD(type, k, c) ((type *) field_of((k), (c), sizeof(type)))
#define CONST_FIELD(type, k, c) ((const type *) field_of((k), (struct dp_config *) (c), sizeof(type)))

static void *field_of(const struct dp_config_key *k, struct dp_config *c, size_t size) {
        assert(k->size == size);
        return (uint8_t *) c + k->offset;
}

/* String fields are char arrays of k->size bytes, NUL-terminated. */
static char *string_field(const struct dp_config_key *k, struct dp_config *c) {
        return (char *) c + k->offset;
}

static bool is_pow2(uint64_t v) {
        return v && !(v & (v - 1));
}

/* ---- parsers: 0 or -EINVAL, the key's .expected telling why ---- */

static int parse_u32(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        uint32_t n;

        if (dp_parse_u32_in(v, (uint32_t) k->min, (uint32_t) k->max, &n) < 0)
                return -EINVAL;
        *FIELD(uint32_t, k, c) = n;
        return 0;
}

static int parse_u64(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        uint64_t n;

        if (dp_parse_u64_in(v, k->min, k->max, &n) < 0)
                return -EINVAL;
        *FIELD(uint64_t, k, c) = n;
        return 0;
}

static int parse_pow2_u32(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        uint32_t n;

        if (dp_parse_u32_in(v, (uint32_t) k->min, (uint32_t) k->max, &n) < 0 || !is_pow2(n))
                return -EINVAL;
        *FIELD(uint32_t, k, c) = n;
        return 0;
}

/* An index that may be unset: empty is -1. */
static int parse_index(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        uint32_t n;

        if (*v == '\0') {
                *FIELD(int32_t, k, c) = -1;
                return 0;
        }
        if (dp_parse_u32_in(v, (uint32_t) k->min, (uint32_t) k->max, &n) < 0)
                return -EINVAL;
        *FIELD(int32_t, k, c) = (int32_t) n;
        return 0;
}

static int parse_span_in(const struct dp_config_key *k, const char *v, uint64_t *ret) {
        uint64_t us;

        if (dp_timespan_parse(v, &us) < 0 || us < k->min || us > k->max)
                return -EINVAL;
        *ret = us;
        return 0;
}

static int parse_span(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        return parse_span_in(k, v, FIELD(uint64_t, k, c));
}

/* A time span of whole milliseconds, stored in milliseconds. */
static int parse_span_ms(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        uint64_t us;

        if (parse_span_in(k, v, &us) < 0 || us % USEC_PER_MSEC)
                return -EINVAL;
        *FIELD(uint32_t, k, c) = (uint32_t) (us / USEC_PER_MSEC);
        return 0;
}

static int parse_enum(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        for (int i = 0; k->names[i]; i++)
                if (strcmp(v, k->names[i]) == 0) {
                        *FIELD(int, k, c) = i;
                        return 0;
                }
        return -EINVAL;
}

static int parse_source(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        static const char *const names[] = { "auto", "ibs", "pebs", "spe", "pagefault" };
        bool ok = false;

        if (strncmp(v, "event:", 6) == 0) {
                ok = v[6] != '\0';
                for (const char *p = v; *p; p++)
                        if (!isgraph((unsigned char) *p))
                                ok = false;
        } else
                for (size_t i = 0; i < DP_ARRAY_SIZE(names); i++)
                        ok = ok || strcmp(v, names[i]) == 0;
        if (!ok || strlen(v) >= k->size)
                return -EINVAL;
        strcpy(string_field(k, c), v);
        return 0;
}

static int parse_cpus(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        struct dp_cpu_list *list;
        int r;

        if (strlen(v) >= k->size)
                return -EINVAL;
        if (*v) {
                /* Too big for the stack (16 KiB), and this is no hot path. */
                list = malloc(sizeof(*list));
                if (!list)
                        return -ENOMEM;
                r = dp_cpu_list_parse(v, list);
                free(list);
                if (r < 0 || strchr(v, ' ') || strchr(v, '\t'))
                        return -EINVAL;
        }
        strcpy(string_field(k, c), v);
        return 0;
}

static int parse_targets(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        uint32_t pids[DP_CONFIG_MAX_PIDS];
        size_t n = 0;
        const char *p = v;

        assert(k->size == sizeof(c->target_mode));
        if (strcmp(v, "all") == 0 || strcmp(v, "physical") == 0) {
                c->target_mode = v[0] == 'a' ? DP_TARGETS_ALL : DP_TARGETS_PHYS;
                c->n_pids = 0;
                return 0;
        }
        while (*p) {
                char word[24];
                size_t len = strcspn(p, " \t");

                if (len >= sizeof(word) || n >= DP_CONFIG_MAX_PIDS)
                        return -EINVAL;
                memcpy(word, p, len);
                word[len] = '\0';
                if (dp_parse_u32_in(word, 1, INT_MAX, &pids[n]) < 0)
                        return -EINVAL;
                n++;
                p += len;
                p += strspn(p, " \t");
        }
        memcpy(c->pids, pids, n * sizeof(pids[0]));
        c->n_pids = n;
        c->target_mode = DP_TARGETS_PIDS;
        return 0;
}

static int parse_socket(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        if (v[0] != '/' || strlen(v) >= k->size)
                return -EINVAL;
        strcpy(string_field(k, c), v);
        return 0;
}

static int parse_group(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        if (strlen(v) >= k->size || v[0] == '-')
                return -EINVAL;
        for (const char *p = v; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("_-.$", *p))
                        return -EINVAL;
        strcpy(string_field(k, c), v);
        return 0;
}

static int parse_abs_path(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        if (v[0] != '/' || strlen(v) >= k->size || strstr(v, "/../") || strchr(v, '\n'))
                return -EINVAL;
        strcpy(string_field(k, c), v);
        return 0;
}

/* Scheme=: each line of @v adds a scheme (a printed value holds them all);
 * empty clears them. */
static int parse_schemes_why(const struct dp_config_key *k, struct dp_config *c, const char *v, char *why,
                             size_t size) {
        size_t n = c->damon_n_schemes;

        assert(k->size == sizeof(c->damon_schemes));
        if (*v == '\0') {
                c->damon_n_schemes = 0;
                return 0;
        }
        while (*v) {
                size_t len = strcspn(v, "\n");
                char line[DP_CONFIG_VALUE_MAX];

                if (n == DP_CONFIG_MAX_SCHEMES) {
                        snprintf(why, size, "at most %d schemes", DP_CONFIG_MAX_SCHEMES);
                        return -EINVAL;
                }
                if (len >= sizeof(line)) {
                        snprintf(why, size, "a scheme of at most %zu bytes", sizeof(line) - 1);
                        return -EINVAL;
                }
                memcpy(line, v, len);
                line[len] = '\0';
                if (dp_scheme_parse(line, &c->damon_schemes[n], why, size) < 0)
                        return -EINVAL;
                c->damon_schemes[n++].origin[0] = '\0';
                v += len + (v[len] == '\n');
        }
        c->damon_n_schemes = n;
        return 0;
}

static int parse_schemes(const struct dp_config_key *k, struct dp_config *c, const char *v) {
        char why[256];

        return parse_schemes_why(k, c, v, why, sizeof(why));
}

/* ---- printers ---- */

static int __attribute__((format(printf, 3, 4))) print_to(char *buf, size_t size, const char *fmt, ...) {
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vsnprintf(buf, size, fmt, ap);
        va_end(ap);
        return k < 0 || (size_t) k >= size ? -ENOBUFS : 0;
}

static int print_string(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        return print_to(buf, size, "%s", (const char *) c + k->offset);
}

/* [API] Socket= names the default it stands for when empty. */
static int print_socket(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        const char *s = (const char *) c + k->offset;

        return print_to(buf, size, "%s", s[0] ? s : k->empty);
}

static int print_u32(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        return print_to(buf, size, "%u", *CONST_FIELD(uint32_t, k, c));
}

static int print_u64(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        return print_to(buf, size, "%llu", (unsigned long long) *CONST_FIELD(uint64_t, k, c));
}

static int print_index(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        int32_t v = *CONST_FIELD(int32_t, k, c);

        return v >= 0 ? print_to(buf, size, "%d", v) : print_to(buf, size, "%s", "");
}

static int print_span(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        return dp_timespan_format(*CONST_FIELD(uint64_t, k, c), buf, size);
}

static int print_span_ms(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        return dp_timespan_format((uint64_t) *CONST_FIELD(uint32_t, k, c) * USEC_PER_MSEC, buf, size);
}

static int print_enum(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        int v = *CONST_FIELD(int, k, c);

        for (int i = 0; k->names[i]; i++)
                if (i == v)
                        return print_to(buf, size, "%s", k->names[i]);
        return print_to(buf, size, "%s", k->names[0]);     /* only named values are ever set */
}

static int print_targets(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        size_t used = 0;

        (void) k;
        if (c->target_mode == DP_TARGETS_ALL)
                return print_to(buf, size, "all");
        if (c->target_mode == DP_TARGETS_PHYS)
                return print_to(buf, size, "physical");
        buf[0] = '\0';
        for (size_t i = 0; i < c->n_pids && i < DP_CONFIG_MAX_PIDS; i++) {
                if (print_to(buf + used, size - used, "%s%u", i ? " " : "", c->pids[i]) < 0)
                        return -ENOBUFS;
                used += strlen(buf + used);
        }
        return 0;
}

static int print_schemes(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        size_t used = 0;

        (void) k;
        buf[0] = '\0';
        for (size_t i = 0; i < c->damon_n_schemes && i < DP_CONFIG_MAX_SCHEMES; i++) {
                if (i > 0) {
                        if (used + 2 > size)
                                return -ENOBUFS;
                        buf[used++] = '\n';
                }
                if (dp_scheme_format(&c->damon_schemes[i], buf + used, size - used) < 0)
                        return -ENOBUFS;
                used += strlen(buf + used);
        }
        return 0;
}

/* ---- options: each with its own rules and messages ---- */

static int __attribute__((format(printf, 3, 4)))
refuse(struct dp_config_options_pass *pass, int r, const char *fmt, ...) {
        char message[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);
        if (pass->report)
                pass->report(DP_CONFIG_ERROR, message, pass->userdata);
        return r;
}

static int option_number(const struct dp_config_option *o, struct dp_config_options_pass *pass, const char *arg,
                         uint64_t *ret) {
        if (dp_parse_u64_in(arg, o->min, o->max, ret) < 0)
                return refuse(pass, -EINVAL, "--%s: expected a whole number between %llu and %llu, got '%s'",
                              o->name, (unsigned long long) o->min, (unsigned long long) o->max, arg);
        return 0;
}

static int option_u32(const struct dp_config_key *k, const struct dp_config_option *o,
                      struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        uint64_t n;
        int r = option_number(o, pass, arg, &n);

        (void) first;
        if (r == 0)
                *FIELD(uint32_t, k, c) = (uint32_t) n;
        return r;
}

static int option_u64(const struct dp_config_key *k, const struct dp_config_option *o,
                      struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        (void) first;
        return option_number(o, pass, arg, FIELD(uint64_t, k, c));
}

/* Whole milliseconds into a field of microseconds. */
static int option_ms(const struct dp_config_key *k, const struct dp_config_option *o,
                     struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        uint64_t n;
        int r = option_number(o, pass, arg, &n);

        (void) first;
        if (r == 0)
                *FIELD(uint64_t, k, c) = n * USEC_PER_MSEC;
        return r;
}

/* The maps are refreshed no more often than an aggregation closes, so that
 * --aggr-interval-ms alone never makes a valid file's MapsRefreshSec= invalid. */
static int option_aggr_ms(const struct dp_config_key *k, const struct dp_config_option *o,
                          struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        int r = option_ms(k, o, pass, c, arg, first);

        if (r == 0)
                c->maps_refresh_us = DP_MAX(c->maps_refresh_us, c->aggr_interval_us);
        return r;
}

static bool copy_string(const struct dp_config_key *k, struct dp_config *c, const char *arg) {
        if (strlen(arg) >= k->size)
                return false;
        strcpy(string_field(k, c), arg);
        return true;
}

/* --source and --varlink-group: what the code they reach checks. */
static int option_name(const struct dp_config_key *k, const struct dp_config_option *o,
                       struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        (void) first;
        if (!copy_string(k, c, arg))
                return refuse(pass, -EINVAL, "--%s: name too long: '%s'", o->name, arg);
        return 0;
}

static int option_cpus(const struct dp_config_key *k, const struct dp_config_option *o,
                       struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        (void) first;
        if (!copy_string(k, c, arg))
                return refuse(pass, -EINVAL, "--%s: list too long", o->name);
        return 0;
}

static int option_socket(const struct dp_config_key *k, const struct dp_config_option *o,
                         struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        (void) first;
        if (arg[0] != '/')
                return refuse(pass, -EINVAL, "--%s: expected an absolute socket path, got '%s'", o->name, arg);
        if (!copy_string(k, c, arg))
                return refuse(pass, -EINVAL, "--%s: socket path too long: '%s'", o->name, arg);
        return 0;
}

/* The first --pid or --phys replaces the file's targets; later ones add to it. */
static void targets_from_options(struct dp_config *c, bool first) {
        if (!first)
                return;
        c->target_mode = DP_TARGETS_ALL;
        c->n_pids = 0;
}

static int option_pid(const struct dp_config_key *k, const struct dp_config_option *o,
                      struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        uint64_t pid;
        int r;

        (void) k;
        targets_from_options(c, first);
        r = option_number(o, pass, arg, &pid);
        if (r < 0)
                return r;
        if (c->n_pids >= DP_CONFIG_MAX_PIDS)
                return refuse(pass, -E2BIG, "--%s: at most %d pids", o->name, DP_CONFIG_MAX_PIDS);
        if (c->target_mode == DP_TARGETS_PHYS)
                return refuse(pass, -EINVAL, "--pid and --phys exclude each other");
        c->pids[c->n_pids++] = (uint32_t) pid;
        c->target_mode = DP_TARGETS_PIDS;
        return 0;
}

static int option_phys(const struct dp_config_key *k, const struct dp_config_option *o,
                       struct dp_config_options_pass *pass, struct dp_config *c, const char *arg, bool first) {
        (void) k;
        (void) o;
        (void) arg;
        targets_from_options(c, first);
        if (c->target_mode == DP_TARGETS_PIDS)
                return refuse(pass, -EINVAL, "--pid and --phys exclude each other");
        c->target_mode = DP_TARGETS_PHYS;
        return 0;
}

/* ---- the table ---- */

static const char *const damon_mode_names[] = {
        [DP_DAMON_OFF] = "off",
        [DP_DAMON_OWN] = "own",
        [DP_DAMON_ATTACH] = "attach",
        NULL
};

static const char *const damon_goal_names[] = {
        [DP_DAMON_GOAL_NONE] = "none",
        [DP_DAMON_GOAL_HOT_FRACTION] = "hot-fraction",
        NULL
};

_Static_assert(sizeof(enum dp_damon_mode) == sizeof(int) && sizeof(enum dp_damon_goal) == sizeof(int),
               "parse_enum() and print_enum() store enumerations as int");

#define F(field) \
        .offset = offsetof(struct dp_config, field), .size = sizeof(((struct dp_config *) 0)->field)
#define OPTION(name, fn, lo, hi) { name, true, fn, lo, hi }

/* In the order --check-config prints them, section by section. */
const struct dp_config_key dp_config_keys[] = {
        { "Sampling", "Source", F(source), parse_source, print_string, .empty = "auto",
          .expected = "expected auto, ibs, pebs, spe, pagefault or event:<libpfm event>",
          .options = { OPTION("source", option_name, 0, 0) } },
        { "Sampling", "CPUs", F(cpus), parse_cpus, print_string,
          .expected = "expected a CPU list such as 0-3,8 (empty: every online CPU)",
          .options = { OPTION("cpus", option_cpus, 0, 0) } },
        { "Sampling", "SamplePeriod", F(sample_period), parse_u64, print_u64, .min = 0, .max = UINT64_MAX >> 1,
          .empty = "0",
          .expected = "expected a whole number of events between 1 and 9223372036854775807 "
                      "(0 or empty: the source's default)",
          .options = { OPTION("sample-period", option_u64, 1, UINT64_MAX >> 1) } },
        { "Sampling", "RingPages", F(ring_pages), parse_pow2_u32, print_u32, .min = 1, .max = 65536,
          .expected = "expected a power of two between 1 and 65536",
          .options = { OPTION("ring-pages", option_u32, 1, 65536) } },
        { "Sampling", "QueueSize", F(queue_capacity), parse_pow2_u32, print_u32, .min = 64, .max = 1u << 24,
          .expected = "expected a power of two between 64 and 16777216",
          .options = { OPTION("queue-size", option_u32, 64, 1u << 24) } },
        { "Sampling", "PollIntervalSec", F(poll_ms), parse_span_ms, print_span_ms,
          .min = USEC_PER_MSEC, .max = 10 * USEC_PER_SEC,
          .expected = "expected a time span of whole milliseconds between 1ms and 10s" },

        { "Tracking", "Targets", F(target_mode), parse_targets, print_targets, .empty = "all",
          .expected = "expected all, physical, or up to 64 space-separated process IDs",
          .options = { OPTION("pid", option_pid, 1, INT_MAX), { "phys", false, option_phys, 0, 0 } } },
        { "Tracking", "MaxTargets", F(max_targets), parse_u32, print_u32, .min = 1, .max = 65536,
          .expected = "expected a whole number between 1 and 65536",
          .options = { OPTION("max-targets", option_u32, 1, 65536) } },
        { "Tracking", "MinRegions", F(min_nr_regions), parse_u32, print_u32, .min = 3, .max = 1u << 20,
          .expected = "expected a whole number between 3 and 1048576",
          .options = { OPTION("min-regions", option_u32, 3, 1u << 20) } },
        { "Tracking", "MaxRegions", F(max_nr_regions), parse_u32, print_u32, .min = 3, .max = 1u << 20,
          .expected = "expected a whole number between 3 and 1048576",
          .options = { OPTION("max-regions", option_u32, 3, 1u << 20) } },
        { "Tracking", "SampleIntervalSec", F(sample_interval_us), parse_span, print_span,
          .min = 1, .max = USEC_PER_MINUTE, .expected = "expected a time span between 1us and 1min",
          .options = { OPTION("sample-interval-ms", option_ms, 1, 60000) } },
        { "Tracking", "AggregationIntervalSec", F(aggr_interval_us), parse_span, print_span,
          .min = 1, .max = USEC_PER_HOUR, .expected = "expected a time span between 1us and 1h",
          .options = { OPTION("aggr-interval-ms", option_aggr_ms, 1, 600000) } },
        { "Tracking", "MapsRefreshSec", F(maps_refresh_us), parse_span, print_span,
          .min = 1, .max = 24 * USEC_PER_HOUR, .expected = "expected a time span between 1us and 24h" },

        { "DAMON", "Mode", F(damon_mode), parse_enum, print_enum, .names = damon_mode_names, .empty = "own",
          .expected = "expected own, attach or off" },
        { "DAMON", "SysfsRoot", F(damon_root), parse_abs_path, print_string,
          .empty = DP_CONFIG_DEFAULT_DAMON_ROOT,
          .expected = "expected an absolute directory path of at most 255 bytes (empty: the default)" },
        { "DAMON", "StateFile", F(damon_state_file), parse_abs_path, print_string,
          .empty = DP_CONFIG_DEFAULT_DAMON_STATE,
          .expected = "expected an absolute file path of at most 255 bytes (empty: the default)" },
        { "DAMON", "Kdamond", F(damon_kdamond), parse_index, print_index, .min = 0, .max = 65535,
          .expected = "expected a kdamond index between 0 and 65535 (empty: none)" },
        { "DAMON", "Context", F(damon_context), parse_u32, print_u32, .min = 0, .max = 65535,
          .expected = "expected a context index between 0 and 65535" },
        { "DAMON", "HintIntervalSec", F(damon_hint_interval_us), parse_span, print_span,
          .min = 100 * USEC_PER_MSEC, .max = USEC_PER_HOUR, .expected = "expected a time span between 100ms and 1h" },
        { "DAMON", "MaxTargets", F(damon_max_targets), parse_u32, print_u32, .min = 1, .max = 64,
          .expected = "expected a whole number between 1 and 64" },
        { "DAMON", "QuotaGoal", F(damon_goal), parse_enum, print_enum, .names = damon_goal_names,
          .empty = "none", .expected = "expected none or hot-fraction" },
        { "DAMON", "QuotaGoalTarget", F(damon_goal_target), parse_u32, print_u32, .min = 1, .max = 10000,
          .expected = "expected a whole number between 1 and 10000 (hot-fraction is in 1/10000)" },
        { "DAMON", "Scheme", F(damon_schemes), parse_schemes, print_schemes, .repeated = true,
          .parse_why = parse_schemes_why,
          .expected = "expected an action and KEY=VALUE words, see damon-perfd.conf(5) (empty: none)" },

        { "API", "Socket", F(api_socket), parse_socket, print_socket, .empty = DP_CONFIG_DEFAULT_SOCKET,
          .expected = "expected an absolute socket path of at most 107 bytes (empty: the default)",
          .options = { OPTION("varlink", option_socket, 0, 0) } },
        { "API", "SocketGroup", F(api_socket_group), parse_group, print_string,
          .expected = "expected a group name or number of at most 63 bytes (empty: root's group)",
          .options = { OPTION("varlink-group", option_name, 0, 0) } },
};

const size_t dp_config_n_keys = DP_ARRAY_SIZE(dp_config_keys);

_Static_assert(DP_ARRAY_SIZE(dp_config_keys) <= 64, "dp_config_options_pass.keys_set has a bit per key");

/* Keys of [Sampling] and [Tracking] are named bare, as they always were;
 * [DAMON] and [API] came later, with key names the others already use. */
static const struct {
        const char *name;
        bool qualify;
} sections[] = {
        { "Sampling", false },
        { "Tracking", false },
        { "DAMON", true },
        { "API", true },
};

/* ---- lookups ---- */

const char *dp_config_section_find(const char *section) {
        for (size_t i = 0; i < DP_ARRAY_SIZE(sections); i++)
                if (strcmp(section, sections[i].name) == 0)
                        return sections[i].name;
        return NULL;
}

const struct dp_config_key *dp_config_key_find(const char *section, const char *key) {
        for (size_t i = 0; i < dp_config_n_keys; i++)
                if (strcmp(dp_config_keys[i].section, section) == 0 && strcmp(dp_config_keys[i].key, key) == 0)
                        return &dp_config_keys[i];
        return NULL;
}

int dp_config_key_parse(const struct dp_config_key *k, struct dp_config *c, const char *value) {
        return k->parse(k, c, *value == '\0' && k->empty ? k->empty : value);
}

int dp_config_key_parse_why(const struct dp_config_key *k, struct dp_config *c, const char *value, char *why,
                            size_t size) {
        int r;

        if (*value == '\0' && k->empty)
                value = k->empty;
        if (k->parse_why)
                return k->parse_why(k, c, value, why, size);
        r = k->parse(k, c, value);
        if (r == -EINVAL)
                snprintf(why, size, "%s", k->expected);
        return r;
}

void dp_config_key_note_origin(const struct dp_config_key *k, struct dp_config *c, const char *origin) {
        struct dp_damon_scheme *s;

        if (k->offset != offsetof(struct dp_config, damon_schemes) || c->damon_n_schemes == 0)
                return;
        s = &c->damon_schemes[c->damon_n_schemes - 1];
        snprintf(s->origin, sizeof(s->origin), "%s", origin);
}

int dp_config_key_print(const struct dp_config_key *k, const struct dp_config *c, char *buf, size_t size) {
        return k->print(k, c, buf, size);
}

void dp_config_key_name(const struct dp_config_key *k, char *buf, size_t size) {
        bool qualify = false;

        for (size_t i = 0; i < DP_ARRAY_SIZE(sections); i++)
                if (strcmp(k->section, sections[i].name) == 0)
                        qualify = sections[i].qualify;
        if (qualify)
                snprintf(buf, size, "[%s] %s=", k->section, k->key);
        else
                snprintf(buf, size, "%s=", k->key);
}

bool dp_config_key_differs(const struct dp_config_key *k, const struct dp_config *a, const struct dp_config *b) {
        char va[DP_CONFIG_VALUE_MAX], vb[DP_CONFIG_VALUE_MAX];

        /* Every value fits; were one not to, it would count as changed. */
        if (k->print(k, a, va, sizeof(va)) < 0 || k->print(k, b, vb, sizeof(vb)) < 0)
                return true;
        return strcmp(va, vb) != 0;
}

/* ---- options ---- */

int dp_config_getopt_options(struct option *options, size_t room, int first_val) {
        size_t n = 0;

        for (size_t i = 0; i < dp_config_n_keys; i++)
                for (size_t j = 0; j < DP_ARRAY_SIZE(dp_config_keys[i].options); j++) {
                        const struct dp_config_option *o = &dp_config_keys[i].options[j];

                        if (!o->name)
                                continue;
                        if (n >= room)
                                return -ENOBUFS;
                        options[n] = (struct option) {
                                .name = o->name,
                                .has_arg = o->has_arg ? required_argument : no_argument,
                                .val = first_val + (int) n,
                        };
                        n++;
                }
        return (int) n;
}

int dp_config_option_apply(struct dp_config_options_pass *pass, size_t n, const char *arg, struct dp_config *c) {
        for (size_t i = 0; i < dp_config_n_keys; i++)
                for (size_t j = 0; j < DP_ARRAY_SIZE(dp_config_keys[i].options); j++) {
                        const struct dp_config_key *k = &dp_config_keys[i];
                        const struct dp_config_option *o = &k->options[j];
                        bool first = !(pass->keys_set & (UINT64_C(1) << i));

                        if (!o->name || n-- > 0)
                                continue;
                        pass->keys_set |= UINT64_C(1) << i;
                        return o->parse(k, o, pass, c, arg, first);
                }
        return -EINVAL;
}
