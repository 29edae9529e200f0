/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* GetStats replies as damonctl sees them: parsing, rates, the table, Prometheus. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "prometheus.h"
#include "stats-reply.h"

#include "check-main.h"

/* Every value i of a CPU with @base is base * 1000 + i: easy to predict. */
static json_t *counters_json(int64_t base) {
        json_t *o = json_object();

        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++)
                json_object_set_new(o, dp_stats_value_name(i), json_integer(base * 1000 + i));
        return o;
}

static json_t *cpu_json(int64_t cpu, const char *state, int64_t base) {
        return json_pack("{s:I,s:s,s:o}", "cpu", (json_int_t) cpu, "state", state, "counters", counters_json(base));
}

/* CPU 0 RUNNING with base @base, CPU 1 ERROR with base @base + 1, totals with base 10 * @base. */
static json_t *stats_json(int64_t uptime_usec, int64_t base, const char *name, bool hardware) {
        json_t *doc = json_pack("{s:{s:s,s:s,s:b,s:s},s:I,s:f,s:o,s:[o,o]}",
                                "source", "name", name, "pmu", "software", "hardware", hardware,
                                "description", "page faults",
                                "uptime_usec", (json_int_t) uptime_usec,
                                "sample_rate", 1234.5,
                                "totals", counters_json(10 * base),
                                "cpus", cpu_json(0, "running", base), cpu_json(1, "error", base + 1));

        ck_assert_ptr_nonnull(doc);
        return doc;
}

static void parse_ok(json_t *doc, struct dp_stats_reply *r) {
        char error[256] = "";

        ck_assert_msg(dp_stats_reply_parse(doc, r, error, sizeof(error)) == 0, "parse: %s", error);
        json_decref(doc);
}

START_TEST(test_parse) {
        struct dp_stats_reply r;
        struct dp_counter_values c;

        parse_ok(stats_json(12345678, 1, "pagefault", false), &r);
        ck_assert_str_eq(r.source_name, "pagefault");
        ck_assert_str_eq(r.source_pmu, "software");
        ck_assert(!r.source_hardware);
        ck_assert_int_eq(r.uptime_usec, 12345678);
        ck_assert(fabs(r.sample_rate - 1234.5) < 1e-9);
        ck_assert_uint_eq(r.n_cpus, 2);
        ck_assert_int_eq(r.cpus[1].cpu, 1);
        ck_assert_str_eq(r.cpus[1].state, "error");
        ck_assert_int_eq(r.cpus[1].values.v[DP_C_MATCH], 2021);
        ck_assert_int_eq(r.totals.v[DP_STATS_IN_FLIGHT], 10000 + DP_STATS_IN_FLIGHT);
        ck_assert_int_eq(r.cpus[0].values.v[DP_C_SPE_NO_DATA], 1000 + DP_C_SPE_NO_DATA);
        dp_stats_values_to_counters(&r.cpus[0].values, &c);
        ck_assert_uint_eq(c.v[DP_C_UPDATE], 1025);
        dp_stats_reply_done(&r);
        ck_assert_ptr_null(r.doc);
}
END_TEST

static void parse_fails(json_t *doc, const char *expect) {
        struct dp_stats_reply r = {};
        char error[256] = "";

        ck_assert_int_eq(dp_stats_reply_parse(doc, &r, error, sizeof(error)), -EBADMSG);
        ck_assert_msg(strstr(error, expect), "error '%s' does not name '%s'", error, expect);
        ck_assert_ptr_null(r.cpus);
        json_decref(doc);
}

START_TEST(test_parse_rejects_bad_shapes) {
        json_t *doc;

        doc = stats_json(1, 1, "pf", false);
        json_object_del(json_object_get(doc, "totals"), "match");
        parse_fails(doc, "totals.match");

        doc = stats_json(1, 1, "pf", false);
        json_object_set_new(json_object_get(json_array_get(json_object_get(doc, "cpus"), 1), "counters"), "valid",
                            json_string("7"));
        parse_fails(doc, "cpus[1].counters.valid");

        doc = stats_json(1, 1, "pf", false);
        json_object_set_new(json_object_get(doc, "totals"), "lost", json_integer(-1));
        parse_fails(doc, "totals.lost");

        doc = stats_json(1, 1, "pf", false);
        json_object_del(json_object_get(doc, "source"), "hardware");
        parse_fails(doc, "source.hardware");

        doc = stats_json(1, 1, "pf", false);
        json_object_set_new(doc, "cpus", json_object());
        parse_fails(doc, "cpus");

        doc = stats_json(1, 1, "pf", false);
        json_object_set_new(json_array_get(json_object_get(doc, "cpus"), 0), "state", json_integer(4));
        parse_fails(doc, "cpus[0].state");

        parse_fails(json_array(), "expected an object");
}
END_TEST

START_TEST(test_parse_accepts_negative_in_flight) {
        struct dp_stats_reply r;
        json_t *doc = stats_json(1, 1, "pf", false);

        json_object_set_new(json_object_get(doc, "totals"), "in_flight", json_integer(-3));
        json_object_set_new(doc, "sample_rate", json_integer(0));
        parse_ok(doc, &r);
        ck_assert_int_eq(r.totals.v[DP_STATS_IN_FLIGHT], -3);
        ck_assert(r.sample_rate == 0);
        dp_stats_reply_done(&r);
}
END_TEST

START_TEST(test_rates) {
        struct dp_stats_reply prev, cur;
        struct dp_stats_rates rates;

        parse_ok(stats_json(1000000, 1, "pf", false), &prev);
        parse_ok(stats_json(3000000, 3, "pf", false), &cur);
        ck_assert_int_eq(dp_stats_rates_compute(&prev, &cur, &rates), 0);
        ck_assert(!rates.restarted);
        ck_assert(!rates.since_start);
        ck_assert(fabs(rates.seconds - 2.0) < 1e-9);
        /* Counts: 2000 more over 2 s (totals: 20000 more). */
        ck_assert(fabs(rates.cpus[0].v[DP_C_MATCH] - 1000.0) < 1e-9);
        ck_assert(fabs(rates.total[DP_C_CALLBACK] - 10000.0) < 1e-9);
        /* Levels: the current value, not a rate. */
        ck_assert(fabs(rates.cpus[0].v[DP_C_RING_PEAK] - 3011.0) < 1e-9);
        ck_assert(fabs(rates.cpus[1].v[DP_C_KERNEL_LOST] - 4014.0) < 1e-9);
        ck_assert(fabs(rates.total[DP_STATS_IN_FLIGHT] - (30000.0 + DP_STATS_IN_FLIGHT)) < 1e-9);
        ck_assert(fabs(rates.total[DP_C_AUX_COLLISION] - 10000.0) < 1e-9);
        ck_assert_str_eq(rates.cpus[1].state, "error");
        dp_stats_rates_done(&rates);

        /* The first report: averages since the daemon started. */
        ck_assert_int_eq(dp_stats_rates_compute(NULL, &cur, &rates), 0);
        ck_assert(rates.since_start);
        ck_assert(!rates.restarted);
        ck_assert(fabs(rates.seconds - 3.0) < 1e-9);
        ck_assert(fabs(rates.cpus[0].v[DP_C_MATCH] - 3021.0 / 3.0) < 1e-9);
        dp_stats_rates_done(&rates);

        /* The daemon restarted: uptime went back. */
        ck_assert_int_eq(dp_stats_rates_compute(&cur, &prev, &rates), 0);
        ck_assert(rates.restarted);
        ck_assert(rates.since_start);
        ck_assert(fabs(rates.seconds - 1.0) < 1e-9);
        ck_assert(fabs(rates.cpus[0].v[DP_C_MATCH] - 1021.0) < 1e-9);
        dp_stats_rates_done(&rates);

        /* No time passed: zero rates, levels still shown. */
        ck_assert_int_eq(dp_stats_rates_compute(&cur, &cur, &rates), 0);
        ck_assert(rates.cpus[0].v[DP_C_MATCH] == 0);
        ck_assert(fabs(rates.cpus[0].v[DP_C_RING_PEAK] - 3011.0) < 1e-9);
        dp_stats_rates_done(&rates);

        dp_stats_reply_done(&prev);
        dp_stats_reply_done(&cur);
}
END_TEST

START_TEST(test_rates_counts_back_and_new_cpu) {
        struct dp_stats_reply prev, cur;
        struct dp_stats_rates rates;
        json_t *doc;

        /* Same uptime order, but the counts went back: a restart too. */
        parse_ok(stats_json(1000000, 5, "pf", false), &prev);
        parse_ok(stats_json(2000000, 1, "pf", false), &cur);
        ck_assert_int_eq(dp_stats_rates_compute(&prev, &cur, &rates), 0);
        ck_assert(rates.restarted);
        ck_assert(fabs(rates.cpus[0].v[DP_C_MATCH] - 1021.0 / 2.0) < 1e-9);
        dp_stats_rates_done(&rates);
        dp_stats_reply_done(&cur);

        /* A CPU the previous reply did not have is averaged since the start. */
        doc = stats_json(3000000, 6, "pf", false);
        json_array_append_new(json_object_get(doc, "cpus"), cpu_json(7, "running", 6));
        parse_ok(doc, &cur);
        ck_assert_int_eq(dp_stats_rates_compute(&prev, &cur, &rates), 0);
        ck_assert(!rates.restarted);
        ck_assert_uint_eq(rates.n_cpus, 3);
        ck_assert_int_eq(rates.cpus[2].cpu, 7);
        ck_assert(fabs(rates.cpus[0].v[DP_C_MATCH] - 500.0) < 1e-9);
        ck_assert(fabs(rates.cpus[2].v[DP_C_MATCH] - 6021.0 / 3.0) < 1e-9);
        dp_stats_rates_done(&rates);
        dp_stats_reply_done(&prev);
        dp_stats_reply_done(&cur);
}
END_TEST

START_TEST(test_format_rate) {
        char buf[32];

        ck_assert_str_eq(dp_format_rate(0, buf, sizeof(buf)), "0");
        ck_assert_str_eq(dp_format_rate(0.04, buf, sizeof(buf)), "0.0");
        ck_assert_str_eq(dp_format_rate(12.34, buf, sizeof(buf)), "12.3");
        ck_assert_str_eq(dp_format_rate(1000, buf, sizeof(buf)), "1000");
        ck_assert_str_eq(dp_format_rate(123456.7, buf, sizeof(buf)), "123457");
}
END_TEST

static char *print_stats(const struct dp_stats_reply *r, const struct dp_stats_rates *rates) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        ck_assert_int_eq(dp_stats_reply_print(f, r, rates), 0);
        fclose(f);
        return buf;
}

/* The line of @text that starts with @prefix, copied; NULL if none. */
static char *line_starting(const char *text, const char *prefix) {
        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, prefix, strlen(prefix)) == 0)
                        return strndup(p, strcspn(p, "\n"));
        return NULL;
}

static size_t utf8_len(const char *s, size_t n) {
        size_t w = 0;

        for (size_t i = 0; i < n; i++)
                w += ((unsigned char) s[i] & 0xc0) != 0x80;
        return w;
}

START_TEST(test_print_totals) {
        _cleanup_free_ char *out = NULL, *cpu0 = NULL, *cpu1 = NULL, *drain = NULL, *source = NULL;
        struct dp_stats_reply r;
        size_t width = 0;

        parse_ok(stats_json(3723000000, 1, "pagefault", false), &r);
        out = print_stats(&r, NULL);

        source = line_starting(out, "source:");
        ck_assert_str_eq(source, "source: pagefault on PMU software  "
                                 "SOFTWARE POSITIVE CONTROL (not hardware access sampling)");
        ck_assert_ptr_nonnull(strstr(out, "uptime: 1h 02m 03s   sample rate: 1234/s   CPUs running: 1/2\n"));

        cpu0 = line_starting(out, "CPU00:");
        ck_assert_str_eq(cpu0, "CPU00: st=RUNNING cb=1003 enq=1009 deq=1019 ovf=1010 match=1021 miss=3069 upd=1025");
        cpu1 = line_starting(out, "CPU01:");
        ck_assert_str_eq(cpu1, "CPU01: st=ERROR   cb=2003 enq=2009 deq=2019 ovf=2010 match=2021 miss=6069 upd=2025");

        /* Every value is in the table, in its layer; layer 6 ends with in_flight. */
        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++) {
                char cell[64];

                snprintf(cell, sizeof(cell), " %s ", dp_stats_value_name(i));
                ck_assert_msg(strstr(out, cell), "%s missing", dp_stats_value_name(i));
        }
        drain = line_starting(out, "│ 6 drain");
        ck_assert_str_eq(drain, "│ 6 drain    │ dequeue       │ 10019 │");
        ck_assert_ptr_nonnull(strstr(out, "│            │ in_flight     │ 10031 │\n├"));
        /* The AUX counters are a row of their own, after layer 7. */
        ck_assert_ptr_nonnull(strstr(out, "├────────────┼───────────────┼───────┤\n"
                                          "│ aux        │ aux_truncated │ 10026 │\n"));
        ck_assert_ptr_nonnull(strstr(out, "│            │ spe_no_data   │ 10030 │\n└"));

        /* The box is aligned: every table line has the same display width. */
        for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
                size_t n = strcspn(p, "\n");

                if (strncmp(p, "│", strlen("│")) == 0 || strncmp(p, "├", strlen("├")) == 0 ||
                    strncmp(p, "┌", strlen("┌")) == 0 || strncmp(p, "└", strlen("└")) == 0) {
                        if (width == 0)
                                width = utf8_len(p, n);
                        ck_assert_uint_eq(utf8_len(p, n), width);
                }
                if (!strchr(p, '\n'))
                        break;
        }
        ck_assert_uint_gt(width, 0);
        dp_stats_reply_done(&r);
}
END_TEST

START_TEST(test_capabilities) {
        _cleanup_free_ char *out = NULL, *line = NULL;
        struct dp_stats_reply r;
        json_t *doc;

        /* Older daemons do not say: no line. */
        parse_ok(stats_json(1000000, 1, "pagefault", false), &r);
        ck_assert_ptr_null(r.cap_effective);
        out = print_stats(&r, NULL);
        ck_assert_ptr_null(strstr(out, "capabilities:"));
        dp_stats_reply_done(&r);
        free(out);
        out = NULL;

        /* After the drop the three sets are the same: one list. */
        doc = stats_json(1000000, 1, "pagefault", false);
        json_object_set_new(doc, "capabilities", json_pack("{s:[s,s],s:[s,s],s:[s,s]}",
                "effective", "CAP_SYS_PTRACE", "CAP_PERFMON", "permitted", "CAP_SYS_PTRACE", "CAP_PERFMON",
                "bounding", "CAP_SYS_PTRACE", "CAP_PERFMON"));
        parse_ok(doc, &r);
        ck_assert_uint_eq(json_array_size(r.cap_effective), 2);
        out = print_stats(&r, NULL);
        line = line_starting(out, "capabilities:");
        ck_assert_str_eq(line, "capabilities: CAP_SYS_PTRACE CAP_PERFMON (effective = permitted = bounding)");
        dp_stats_reply_done(&r);
        free(out);
        free(line);
        out = line = NULL;

        /* Otherwise each set, "none" for an empty one. */
        doc = stats_json(1000000, 1, "pagefault", false);
        json_object_set_new(doc, "capabilities", json_pack("{s:[],s:[s],s:[s,s]}",
                "effective", "permitted", "CAP_PERFMON", "bounding", "CAP_CHOWN", "CAP_PERFMON"));
        parse_ok(doc, &r);
        out = print_stats(&r, NULL);
        line = line_starting(out, "capabilities:");
        ck_assert_str_eq(line, "capabilities: effective none; permitted CAP_PERFMON; bounding CAP_CHOWN CAP_PERFMON");
        dp_stats_reply_done(&r);

        /* Present means the interface's shape. */
        doc = stats_json(1000000, 1, "pagefault", false);
        json_object_set_new(doc, "capabilities", json_string("all"));
        parse_fails(doc, "capabilities: expected an object");
        doc = stats_json(1000000, 1, "pagefault", false);
        json_object_set_new(doc, "capabilities", json_pack("{s:[],s:[]}", "effective", "permitted"));
        parse_fails(doc, "capabilities.bounding: expected an array of strings");
        doc = stats_json(1000000, 1, "pagefault", false);
        json_object_set_new(doc, "capabilities", json_pack("{s:[i],s:[],s:[]}", "effective", 38, "permitted",
                                                          "bounding"));
        parse_fails(doc, "capabilities.effective[0]: expected a string");
}
END_TEST

START_TEST(test_print_rates_and_hardware) {
        _cleanup_free_ char *out = NULL, *cpu0 = NULL, *source = NULL;
        struct dp_stats_reply prev, cur;
        struct dp_stats_rates rates;

        parse_ok(stats_json(1000000, 1, "ibs", true), &prev);
        parse_ok(stats_json(3000000, 3, "ibs", true), &cur);
        ck_assert_int_eq(dp_stats_rates_compute(&prev, &cur, &rates), 0);
        out = print_stats(&cur, &rates);

        source = line_starting(out, "source:");
        ck_assert_str_eq(source, "source: ibs on PMU software");
        ck_assert_ptr_null(strstr(out, "SOFTWARE POSITIVE CONTROL"));
        ck_assert_ptr_nonnull(strstr(out, "per second over 2.00s"));
        ck_assert_ptr_nonnull(strstr(out, "│ per second │"));
        ck_assert_ptr_nonnull(strstr(out, "│ ring_peak (level)   │      30011 │"));
        ck_assert_ptr_nonnull(strstr(out, "│ match               │      10000 │"));
        cpu0 = line_starting(out, "CPU00:");
        ck_assert_str_eq(cpu0, "CPU00: st=RUNNING cb=1000 enq=1000 deq=1000 ovf=1000 match=1000 miss=3000 upd=1000");

        dp_stats_rates_done(&rates);
        dp_stats_reply_done(&prev);
        dp_stats_reply_done(&cur);
}
END_TEST

START_TEST(test_prometheus_escape) {
        _cleanup_free_ char *a = NULL, *b = NULL;

        ck_assert_int_eq(dp_prometheus_escape_label("plain", &a), 0);
        ck_assert_str_eq(a, "plain");
        ck_assert_int_eq(dp_prometheus_escape_label("a\"b\\c\nd", &b), 0);
        ck_assert_str_eq(b, "a\\\"b\\\\c\\nd");
        ck_assert_int_eq(dp_prometheus_escape_label(NULL, &b), -EINVAL);
}
END_TEST

static char *prometheus(json_t *doc) {
        struct dp_stats_reply r;
        char *buf = NULL;
        size_t size = 0;
        FILE *f;

        parse_ok(doc, &r);
        f = open_memstream(&buf, &size);
        ck_assert_int_eq(dp_prometheus_write_stats(f, &r), 0);
        fclose(f);
        dp_stats_reply_done(&r);
        return buf;
}

static bool has_line(const char *text, const char *line) {
        size_t n = strlen(line);

        for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, line, n) == 0 && (p[n] == '\n' || p[n] == '\0'))
                        return true;
        return false;
}

START_TEST(test_prometheus_values) {
        _cleanup_free_ char *out = prometheus(stats_json(12345678, 1, "page\"fault\\x\n", false));
        char name[64];

        ck_assert(has_line(out, "damon_perfd_source_info{name=\"page\\\"fault\\\\x\\n\",pmu=\"software\","
                                "hardware=\"false\"} 1"));
        ck_assert(has_line(out, "# TYPE damon_perfd_source_info gauge"));
        ck_assert(has_line(out, "damon_perfd_uptime_seconds 12.345678"));
        ck_assert(has_line(out, "# TYPE damon_perfd_uptime_seconds gauge"));
        ck_assert(has_line(out, "damon_perfd_sample_rate 1234.5"));

        /* Counts are counters named _total; levels are gauges without it. */
        ck_assert(has_line(out, "# TYPE damon_perfd_match_total counter"));
        ck_assert(has_line(out, "damon_perfd_match_total{cpu=\"0\"} 1021"));
        ck_assert(has_line(out, "damon_perfd_match_total{cpu=\"1\"} 2021"));
        ck_assert(has_line(out, "# TYPE damon_perfd_ring_peak gauge"));
        ck_assert(has_line(out, "damon_perfd_ring_peak{cpu=\"0\"} 1011"));
        ck_assert(has_line(out, "# TYPE damon_perfd_kernel_lost gauge"));
        ck_assert(has_line(out, "# TYPE damon_perfd_in_flight gauge"));
        ck_assert(has_line(out, "damon_perfd_in_flight{cpu=\"1\"} 2031"));
        ck_assert(has_line(out, "# TYPE damon_perfd_spe_bad_bytes_total counter"));
        ck_assert(has_line(out, "damon_perfd_aux_truncated_total{cpu=\"0\"} 1026"));
        ck_assert_ptr_null(strstr(out, "ring_peak_total"));
        ck_assert_ptr_null(strstr(out, "in_flight_total"));
        ck_assert_str_eq(dp_prometheus_metric_name(DP_C_NULL, name, sizeof(name)), "damon_perfd_null_total");
        ck_assert_ptr_null(dp_prometheus_metric_name(_DP_STATS_VALUES_MAX, name, sizeof(name)));
        /* No totals beside the per-CPU series: sum() would count them twice. */
        ck_assert_ptr_null(strstr(out, "10021"));

        /* One state series per state and CPU, 1 for the current one. */
        ck_assert(has_line(out, "damon_perfd_cpu_state{cpu=\"0\",state=\"running\"} 1"));
        ck_assert(has_line(out, "damon_perfd_cpu_state{cpu=\"0\",state=\"error\"} 0"));
        ck_assert(has_line(out, "damon_perfd_cpu_state{cpu=\"1\",state=\"error\"} 1"));
        ck_assert(has_line(out, "damon_perfd_cpu_state{cpu=\"1\",state=\"uninit\"} 0"));
}
END_TEST

/* Checks the exposition's structure: HELP then TYPE exactly once per family,
 * every sample after its family's TYPE and before the next family, no blank
 * or stray lines. Returns the number of families. */
static size_t check_exposition(char *text, size_t *n_state_ones) {
        char families[64][96];
        size_t n_families = 0;
        char *save = NULL;

        *n_state_ones = 0;
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char name[96];

                if (strncmp(line, "# HELP ", 7) == 0) {
                        ck_assert_int_eq(sscanf(line, "# HELP %95s", name), 1);
                        for (size_t i = 0; i < n_families; i++)
                                ck_assert_msg(strcmp(families[i], name) != 0, "HELP twice for %s", name);
                        ck_assert_uint_lt(n_families, 64);
                        strcpy(families[n_families++], name);
                        line = strtok_r(NULL, "\n", &save);
                        ck_assert_ptr_nonnull(line);
                        ck_assert_int_eq(sscanf(line, "# TYPE %95s", name), 1);
                        ck_assert_str_eq(name, families[n_families - 1]);
                        ck_assert(strstr(line, " counter") || strstr(line, " gauge"));
                        continue;
                }
                ck_assert_msg(line[0] != '#' && line[0] != ' ', "stray line: %s", line);
                ck_assert_uint_gt(n_families, 0);
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(line, "{ "), line);
                ck_assert_msg(strcmp(name, families[n_families - 1]) == 0, "%s outside its family", line);
                if (strncmp(line, "damon_perfd_cpu_state{", 22) == 0 && strcmp(line + strlen(line) - 2, " 1") == 0)
                        (*n_state_ones)++;
        }
        return n_families;
}

START_TEST(test_prometheus_families_once) {
        json_t *doc = stats_json(1, 1, "pagefault", false);
        _cleanup_free_ char *out = NULL;
        size_t ones;

        /* A state this client does not know still shows as its own series. */
        json_array_append_new(json_object_get(doc, "cpus"), cpu_json(2, "PAUSED", 4));
        out = prometheus(doc);
        ck_assert(has_line(out, "damon_perfd_cpu_state{cpu=\"2\",state=\"PAUSED\"} 1"));
        ck_assert(has_line(out, "damon_perfd_cpu_state{cpu=\"2\",state=\"running\"} 0"));
        /* source_info, uptime, sample_rate, cpu_state, and one per Counters value. */
        ck_assert_uint_eq(check_exposition(out, &ones), 4 + _DP_STATS_VALUES_MAX);
        ck_assert_uint_eq(ones, 3);
}
END_TEST

int main(void) {
        Suite *s = suite_create("damonctl-stats");
        TCase *tc = tcase_create("stats");

        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_parse_rejects_bad_shapes);
        tcase_add_test(tc, test_parse_accepts_negative_in_flight);
        tcase_add_test(tc, test_rates);
        tcase_add_test(tc, test_rates_counts_back_and_new_cpu);
        tcase_add_test(tc, test_format_rate);
        tcase_add_test(tc, test_print_totals);
        tcase_add_test(tc, test_print_rates_and_hardware);
        tcase_add_test(tc, test_capabilities);
        tcase_add_test(tc, test_prometheus_escape);
        tcase_add_test(tc, test_prometheus_values);
        tcase_add_test(tc, test_prometheus_families_once);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
