/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl against the real daemon: damon-perfd serves io.damon.perfd on a
 * private socket (--varlink=PATH) while it samples the demo workload, and
 * every damonctl output is parsed and checked against the daemon's
 * invariants and against the other outputs:
 *   callback = valid + null + addr_zero + kernel + inv_phys
 *   match + miss_tgid + miss_region + miss_bound = dequeue
 *   totals = the sum of the CPUs (levels: the maximum), every CPU RUNNING,
 *   the same CPUs and source in stats, cpus and Prometheus, counts that
 *   never go back between them, regions inside the workload's target.
 *
 * The daemon is stopped with SIGTERM once every check is done (DAEMON_SECONDS
 * only bounds a test that hangs), after which damonctl must report it not
 * running.
 *
 * Needs root (system-wide perf sampling).  The binaries come from meson in
 * DP_DAEMON, DP_WORKLOAD and DP_DAMONCTL.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "stats-reply.h"

#include "check-main.h"
#include "test-ctl-run.h"
#include "test-workload.h"

/* A bound on the daemon's life should the test hang, far beyond what the
 * checks take on a loaded machine: the test ends it with SIGTERM.  (That
 * --duration ends the daemon cleanly is test-integration's job.) */
#define DAEMON_SECONDS 100

static char dir[64], address[128];


/* The daemon's own configuration file, for Reload() to re-read. */
static void write_config(const char *text) {
        char path[128];
        FILE *f;

        snprintf(path, sizeof(path), "%s/damon-perfd.conf", dir);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
}

static pid_t start_daemon(pid_t workload) {
        const char *path = getenv("DP_DAEMON");
        char pid_arg[32], varlink_arg[160], duration_arg[32], log[128], config_arg[160];
        pid_t pid;

        ck_assert_msg(path, "DP_DAEMON not set");
        snprintf(pid_arg, sizeof(pid_arg), "--pid=%d", workload);
        snprintf(varlink_arg, sizeof(varlink_arg), "--varlink=%s", address + strlen("unix:"));
        snprintf(duration_arg, sizeof(duration_arg), "--duration=%d", DAEMON_SECONDS);
        snprintf(log, sizeof(log), "%s/daemon.log", dir);
        snprintf(config_arg, sizeof(config_arg), "--config=%s/damon-perfd.conf", dir);
        write_config("[Tracking]\nMaxTargets=100\n");
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY), err = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

                dup2(devnull, STDOUT_FILENO);
                dup2(err, STDERR_FILENO);
                execl(path, path, config_arg, pid_arg, varlink_arg, duration_arg, NULL);
                _exit(127);
        }
        return pid;
}






static pid_t spawn_ctl(const char *const *args) {
        return ctl_spawn(dir, address, 0, args);
}

static struct run collect(pid_t pid) {
        return ctl_collect(dir, pid);
}

#define RUN(...) collect(spawn_ctl((const char *const[]) { __VA_ARGS__, NULL }))

/* Runs a --json command and returns its parsed output. */
static json_t *run_json(const char *const *args) {
        struct run r = collect(spawn_ctl(args));
        json_error_t err;
        json_t *j;

        ck_assert_msg(r.status == 0, "damonctl %s exited %d: %.300s", args[0], r.status, r.err);
        j = json_loads(r.out, 0, &err);
        ck_assert_msg(j, "damonctl %s --json: not JSON: %s", args[0], err.text);
        run_done(&r);
        return j;
}

#define RUN_JSON(...) run_json((const char *const[]) { __VA_ARGS__, NULL })

static void parse_stats(json_t *doc, struct dp_stats_reply *r) {
        char error[256] = "";

        ck_assert_msg(dp_stats_reply_parse(doc, r, error, sizeof(error)) == 0, "stats --json: %s", error);
}

static int64_t misses(const struct dp_stats_values *v) {
        return v->v[DP_C_MISS_TGID] + v->v[DP_C_MISS_REGION] + v->v[DP_C_MISS_BOUND];
}

static void check_invariants(const struct dp_stats_values *v, const char *what) {
        struct dp_counter_values c;
        const char *which;

        ck_assert_msg(v->v[DP_C_CALLBACK] == v->v[DP_C_VALID] + v->v[DP_C_NULL] + v->v[DP_C_ADDR_ZERO] +
                                                     v->v[DP_C_KERNEL] + v->v[DP_C_INV_PHYS],
                      "%s: callback != valid + null + addr_zero + kernel + inv_phys", what);
        ck_assert_msg(v->v[DP_C_MATCH] + misses(v) == v->v[DP_C_DEQUEUE], "%s: match + misses != dequeue", what);
        dp_stats_values_to_counters(v, &c);
        ck_assert_msg(dp_counters_check(&c, &which) == 0, "%s: %s", what, which);
}

/* Waits until the daemon answers with every CPU RUNNING and samples matched. */
static void wait_ready(struct dp_stats_reply *ret) {
        for (int i = 0; i < 150; i++) {
                struct run r = RUN("stats", "--json");
                bool ready = false;

                if (r.status == 0) {
                        json_t *doc = json_loads(r.out, 0, NULL);
                        struct dp_stats_reply s;

                        parse_stats(doc, &s);
                        ready = s.totals.v[DP_C_MATCH] > 1000;
                        for (size_t c = 0; c < s.n_cpus; c++)
                                ready = ready && strcmp(s.cpus[c].state, "running") == 0;
                        json_decref(doc);
                        if (ready) {
                                *ret = s;
                                run_done(&r);
                                return;
                        }
                        dp_stats_reply_done(&s);
                }
                run_done(&r);
                usleep(100000);
        }
        ck_abort_msg("damon-perfd never answered with every CPU RUNNING and samples matched");
}

static void check_stats(const struct dp_stats_reply *s) {
        struct dp_stats_values sum = {};

        ck_assert_uint_gt(s->n_cpus, 0);
        check_invariants(&s->totals, "totals");
        for (size_t c = 0; c < s->n_cpus; c++) {
                char what[32];

                snprintf(what, sizeof(what), "CPU%lld", (long long) s->cpus[c].cpu);
                ck_assert_str_eq(s->cpus[c].state, "running");
                check_invariants(&s->cpus[c].values, what);
                for (unsigned i = 0; i < _DP_C_MAX; i++)
                        sum.v[i] = dp_stats_value_is_level(i) ? DP_MAX(sum.v[i], s->cpus[c].values.v[i])
                                                              : sum.v[i] + s->cpus[c].values.v[i];
        }
        /* One snapshot: the totals are the CPUs'. */
        for (unsigned i = 0; i < _DP_C_MAX; i++)
                ck_assert_msg(sum.v[i] == s->totals.v[i], "totals.%s %lld != sum over CPUs %lld",
                              dp_stats_value_name(i), (long long) s->totals.v[i], (long long) sum.v[i]);
}

/* The sample rate is worked out at a query too, over the time since the
 * last: the main loop's own look comes only every 30 s while all is well. */
static void check_sample_rate(void) {
        struct dp_stats_reply s;
        json_t *doc;

        usleep(1100000);
        doc = RUN_JSON("stats", "--json");
        parse_stats(doc, &s);
        ck_assert_msg(s.sample_rate > 0, "sample_rate %.1f a second after a query, with the workload faulting",
                      s.sample_rate);
        dp_stats_reply_done(&s);
        json_decref(doc);
}

static void check_cpus(const struct dp_stats_reply *s) {
        json_t *doc = RUN_JSON("cpus", "--json"), *cpus = json_object_get(doc, "cpus"), *cpu;
        size_t i;

        ck_assert_uint_eq(json_array_size(cpus), s->n_cpus);
        json_array_foreach(cpus, i, cpu) {
                const struct dp_stats_values *v = &s->cpus[i].values;

                ck_assert_int_eq(json_integer_value(json_object_get(cpu, "cpu")), s->cpus[i].cpu);
                ck_assert_str_eq(json_string_value(json_object_get(cpu, "state")), "running");
                ck_assert(json_is_null(json_object_get(cpu, "failed_step")) || !json_object_get(cpu, "failed_step"));
                ck_assert_str_eq(json_string_value(json_object_get(cpu, "pmu")), s->source_pmu);
                ck_assert_int_gt(json_integer_value(json_object_get(cpu, "ring_bytes")), 0);
                /* Taken after stats: levels and counts only grow. */
                ck_assert_int_ge(json_integer_value(json_object_get(cpu, "ring_peak")), v->v[DP_C_RING_PEAK]);
                ck_assert_int_ge(json_integer_value(json_object_get(cpu, "lost")),
                                 v->v[DP_C_LOST] + v->v[DP_C_LOST_SAMPLES]);
        }
        json_decref(doc);
}

static json_int_t check_targets(pid_t workload, json_int_t *end) {
        json_t *doc = RUN_JSON("targets", "--json"), *t;
        json_int_t start;

        ck_assert_uint_eq(json_array_size(json_object_get(doc, "targets")), 1);
        t = json_array_get(json_object_get(doc, "targets"), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(t, "pid")), workload);
        ck_assert_str_eq(json_string_value(json_object_get(t, "kind")), "process");
        ck_assert_int_gt(json_integer_value(json_object_get(t, "nr_regions")), 0);
        start = json_integer_value(json_object_get(t, "start"));
        *end = json_integer_value(json_object_get(t, "end"));
        ck_assert_int_lt(start, *end);
        json_decref(doc);
        return start;
}

/* The hottest regions are the workload's, inside its bounds; the hottest
 * one reaches into the hot area (retried while the regions settle). */
static void check_regions(const struct test_workload *w, json_int_t start, json_int_t end) {
        char target[32];

        snprintf(target, sizeof(target), "%d", w->pid);
        for (int attempt = 0;; attempt++) {
                json_t *doc = RUN_JSON("regions", "--json", "--target", target, "--top", "5");
                json_t *regions = json_object_get(doc, "regions"), *r;
                json_int_t max = json_integer_value(json_object_get(doc, "max_nr_accesses"));
                bool hot;
                size_t i;

                ck_assert_uint_gt(json_array_size(regions), 0);
                ck_assert_uint_le(json_array_size(regions), 5);
                json_array_foreach(regions, i, r) {
                        json_int_t rs = json_integer_value(json_object_get(r, "start"));
                        json_int_t re = json_integer_value(json_object_get(r, "end"));
                        json_int_t n = json_integer_value(json_object_get(r, "nr_accesses"));

                        ck_assert_int_eq(json_integer_value(json_object_get(r, "target")), w->pid);
                        ck_assert_int_lt(rs, re);
                        ck_assert_int_ge(rs, start);
                        ck_assert_int_le(re, end);
                        ck_assert_int_ge(n, 0);
                        ck_assert_int_le(n, max);
                }
                r = json_array_get(regions, 0);
                hot = json_integer_value(json_object_get(r, "nr_accesses")) > 0 &&
                      json_integer_value(json_object_get(r, "start")) < w->hot_end &&
                      json_integer_value(json_object_get(r, "end")) > w->hot_start;
                json_decref(doc);
                if (hot)
                        break;
                ck_assert_msg(attempt < 50, "the hottest region never reached into the hot area");
                usleep(100000);
        }
}

/* The value of the sample line starting with @series ("name{labels}"). */
static long long prom_value(const char *text, const char *series) {
        size_t n = strlen(series);

        for (const char *p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, series, n) == 0 && p[n] == ' ')
                        return strtoll(p + n + 1, NULL, 10);
        ck_abort_msg("no series %s", series);
        return -1;
}

static long long prom_counter(const char *text, const char *counter, long long cpu) {
        char series[128];

        snprintf(series, sizeof(series), "damon_perfd_%s_total{cpu=\"%lld\"}", counter, cpu);
        return prom_value(text, series);
}

static void check_prometheus(const struct dp_stats_reply *s) {
        struct run r = RUN("stats", "--prometheus");
        char series[160];

        ck_assert_msg(r.status == 0, "%.300s", r.err);
        snprintf(series, sizeof(series), "damon_perfd_source_info{name=\"%s\",pmu=\"%s\",hardware=\"%s\"}",
                 s->source_name, s->source_pmu, s->source_hardware ? "true" : "false");
        ck_assert_int_eq(prom_value(r.out, series), 1);
        for (size_t c = 0; c < s->n_cpus; c++) {
                long long cpu = s->cpus[c].cpu;
                long long cb = prom_counter(r.out, "callback", cpu);

                ck_assert_int_eq(cb, prom_counter(r.out, "valid", cpu) + prom_counter(r.out, "null", cpu) +
                                             prom_counter(r.out, "addr_zero", cpu) +
                                             prom_counter(r.out, "kernel", cpu) + prom_counter(r.out, "inv_phys", cpu));
                ck_assert_int_eq(prom_counter(r.out, "dequeue", cpu),
                                 prom_counter(r.out, "match", cpu) + prom_counter(r.out, "miss_tgid", cpu) +
                                         prom_counter(r.out, "miss_region", cpu) +
                                         prom_counter(r.out, "miss_bound", cpu));
                /* Scraped after stats --json: counts never go back. */
                ck_assert_int_ge(cb, s->cpus[c].values.v[DP_C_CALLBACK]);
                ck_assert_int_ge(prom_counter(r.out, "match", cpu), s->cpus[c].values.v[DP_C_MATCH]);
                snprintf(series, sizeof(series), "damon_perfd_cpu_state{cpu=\"%lld\",state=\"running\"}", cpu);
                ck_assert_int_eq(prom_value(r.out, series), 1);
                snprintf(series, sizeof(series), "damon_perfd_cpu_state{cpu=\"%lld\",state=\"error\"}", cpu);
                ck_assert_int_eq(prom_value(r.out, series), 0);
        }
        ck_assert_ptr_nonnull(strstr(r.out, "# TYPE damon_perfd_ring_peak gauge\n"));
        run_done(&r);
}

static void check_text(const struct dp_stats_reply *s) {
        struct run r = RUN("stats");

        ck_assert_int_eq(r.status, 0);
        if (!s->source_hardware)
                ck_assert_ptr_nonnull(strstr(r.out, "SOFTWARE POSITIVE CONTROL (not hardware access sampling)"));
        for (size_t c = 0; c < s->n_cpus; c++) {
                char line[64];

                snprintf(line, sizeof(line), "\nCPU%02lld: st=RUNNING cb=", (long long) s->cpus[c].cpu);
                ck_assert_msg(strstr(r.out, line), "no '%s' in stats", line + 1);
        }
        run_done(&r);
}

/* monitor --samples shows the workload's samples and stops cleanly on Ctrl-C. */
static void check_monitor(pid_t workload) {
        char path[128], needle[64];
        pid_t pid = spawn_ctl((const char *const[]) { "monitor", "--samples", "--max-per-second", "50", NULL });
        struct run r;
        bool seen = false;

        snprintf(path, sizeof(path), "%s/stdout", dir);
        snprintf(needle, sizeof(needle), " sample pid=%d addr=0x", workload);
        for (int i = 0; i < 100 && !seen; i++) {
                _cleanup_free_ char *text = slurp(path);

                seen = strstr(text, needle);
                usleep(50000);
        }
        ck_assert_int_eq(kill(pid, SIGINT), 0);
        r = collect(pid);
        ck_assert_msg(r.status == 0, "monitor exited %d: %.300s", r.status, r.err);
        ck_assert_msg(seen, "monitor never showed a sample of the workload");
        run_done(&r);
}

START_TEST(test_damonctl_against_daemon) {
        struct dp_stats_reply stats;
        struct test_workload w = {};
        json_int_t start, end;
        struct run r;
        pid_t daemon;
        int status;

        ck_assert_msg(geteuid() == 0, "the end-to-end test samples every CPU and needs root");
        strcpy(dir, "/tmp/dp-damonctl-e2e-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(address, sizeof(address), "unix:%s/io.damon.perfd", dir);

        test_workload_start(&w, "80");
        daemon = start_daemon(w.pid);
        wait_ready(&stats);

        check_stats(&stats);
        check_sample_rate();
        check_cpus(&stats);
        start = check_targets(w.pid, &end);
        check_regions(&w, start, end);
        check_prometheus(&stats);
        check_text(&stats);
        check_monitor(w.pid);

        r = RUN("reload");
        ck_assert_msg(r.status == 0, "reload exited %d: %.300s", r.status, r.err);
        run_done(&r);

        /* An invalid file is refused with its errors, and nothing changes. */
        write_config("[Tracking]\nMaxTargets=lots\n");
        r = RUN("reload");
        ck_assert_int_ne(r.status, 0);
        ck_assert_msg(strstr(r.err, "io.damon.perfd.ConfigurationInvalid") && strstr(r.err, "damon-perfd.conf:2:"),
                      "reload of a broken file: %.300s", r.err);
        run_done(&r);
        write_config("[Tracking]\nMaxTargets=100\n");
        r = RUN("reload");
        ck_assert_msg(r.status == 0, "reload exited %d: %.300s", r.status, r.err);
        run_done(&r);

        r = RUN("regions", "--target", "1");
        ck_assert_int_eq(r.status, 1);
        ck_assert_ptr_nonnull(strstr(r.err, "io.damon.perfd.NoSuchTarget"));
        run_done(&r);

        /* It stops cleanly on SIGTERM; then damonctl says it is gone. */
        ck_assert_int_eq(kill(daemon, SIGTERM), 0);
        ck_assert_int_eq(waitpid(daemon, &status, 0), daemon);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "damon-perfd exited with %#x", status);
        r = RUN("stats");
        ck_assert_int_eq(r.status, 3);
        ck_assert_ptr_nonnull(strstr(r.err, "damon-perfd is not running"));
        run_done(&r);

        test_workload_stop(&w);
        dp_stats_reply_done(&stats);
        {
                char path[128];

                for (const char *const *f = (const char *const[]) { "stdout", "stderr", "daemon.log", "damon-perfd.conf",
                                                                   NULL }; *f; f++) {
                        snprintf(path, sizeof(path), "%s/%s", dir, *f);
                        unlink(path);
                }
                snprintf(path, sizeof(path), "%s/io.damon.perfd", dir);
                unlink(path);
                rmdir(dir);
        }
}
END_TEST

int main(void) {
        Suite *s = suite_create("damonctl-e2e");
        TCase *tc = tcase_create("e2e");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_damonctl_against_daemon);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
