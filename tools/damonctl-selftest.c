/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl selftest: the pipeline layer by layer, against the running daemon
 * (deltas of its counters over a test window) or a private instance of its
 * own (--standalone), with a workload whose hot area is known; then a
 * verdict (lib/view/selftest.c).  It writes nothing to DAMON's sysfs, and stops
 * and removes only what it started.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "damon-sysfs.h"
#include "macro.h"
#include "pmu.h"
#include "selftest.h"
#include "damonctl-selftest.h"
#include "damonctl.h"
#include "time-util.h"

#define WINDOW_DEFAULT_SEC 5.0
/* After the window: how long the workload's target and hot area may take to show. */
#define SETTLE_MAX_SEC 5.0
#define SETTLE_STEP_MS 250
/* How long the private instance may take to start. */
#define READY_TIMEOUT_SEC 15.0
/* "± a few pages" around the hot area. */
#define HOT_SLACK_PAGES 16
#define DAMON_SYSFS_ADMIN "/sys/kernel/mm/damon/admin"

/* What the daemon answered at one end of the window. */
struct snapshot {
        json_t *stats_doc;
        struct dp_stats_reply stats;
        bool stats_parsed;
        json_t *damon;                  /* GetDamonView; NULL from a daemon without it */
};

static void snapshot_done(struct snapshot *s) {
        if (s->stats_parsed)
                dp_stats_reply_done(&s->stats);
        json_decref(s->stats_doc);
        json_decref(s->damon);
        *s = (struct snapshot) {};
}

static bool error_is(const char *error, const char *const *accept) {
        for (; accept && *accept; accept++)
                if (strcmp(error, *accept) == 0)
                        return true;
        return false;
}

/* Like ctl_call(), but the errors in @accept (NULL-terminated) are answers:
 * CTL_EXIT_OK with *ret NULL. */
static int call_accepting(struct ctl *ctl, const char *method, json_t *parameters, const char *const *accept,
                          json_t **ret) {
        char qualified[128];
        const char *error = NULL;
        json_t *reply = NULL;
        int r, k;

        *ret = NULL;
        k = ctl_connect(ctl);
        if (k != CTL_EXIT_OK)
                return k;
        snprintf(qualified, sizeof(qualified), CTL_INTERFACE ".%s", method);
        r = dp_varlink_client_call(ctl->client, qualified, parameters, 0, &reply, &error);
        if (r >= 0 && error && error_is(error, accept)) {
                json_decref(reply);
                return CTL_EXIT_OK;
        }
        if (r < 0) {
                json_decref(reply);
                if (ctl_interrupted)
                        return CTL_EXIT_OK;
                fprintf(stderr, "%s failed: %s\n", method, strerror(-r));
                return r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN ? CTL_EXIT_UNREACHABLE : CTL_EXIT_FAILURE;
        }
        if (error) {
                _cleanup_free_ char *text = json_dumps(reply, JSON_COMPACT);

                fprintf(stderr, "%s failed: %s %s\n", method, error, text ?: "{}");
                json_decref(reply);
                return CTL_EXIT_FAILURE;
        }
        *ret = reply;
        return CTL_EXIT_OK;
}

static const char *const unknown_method[] = { DP_VARLINK_ERROR_METHOD_NOT_FOUND, DP_VARLINK_ERROR_INTERFACE_NOT_FOUND,
                                              NULL };

static int snapshot_take(struct ctl *ctl, struct snapshot *s) {
        char error[256];
        int k, r;

        k = ctl_call(ctl, "GetStats", NULL, &s->stats_doc);
        if (k != CTL_EXIT_OK || !s->stats_doc)
                return k;
        r = dp_stats_reply_parse(s->stats_doc, &s->stats, error, sizeof(error));
        if (r < 0)
                return r == -ENOMEM ? (fprintf(stderr, "out of memory\n"), CTL_EXIT_FAILURE) : ctl_bad_reply("%s", error);
        s->stats_parsed = true;
        return call_accepting(ctl, "GetDamonView", NULL, unknown_method, &s->damon);
}

static int64_t get_int(json_t *o, const char *key, int64_t fallback) {
        json_t *v = json_object_get(o, key);

        return json_is_integer(v) ? json_integer_value(v) : fallback;
}

/* The kdamond the daemon writes to (owned or attached), -1 for none. */
static int64_t own_kdamond(json_t *damon) {
        const char *role = json_string_value(json_object_get(damon, "role"));

        if (!role || (strcmp(role, "owned") != 0 && strcmp(role, "attached") != 0))
                return -1;
        return get_int(damon, "kdamond", -1);
}

static void print_new_checks(const struct ctl *ctl, const struct dp_selftest_report *r, size_t *printed) {
        if (ctl->json)
                return;
        for (; *printed < r->n; (*printed)++)
                (void) dp_selftest_check_print(stdout, &r->checks[*printed]);
        fflush(stdout);
}

/* Layer 0, except the source (which the layer evaluation adds). */
static void check_environment(struct dp_selftest_report *r, const struct snapshot *before, const char *daemon,
                              const char *config) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        _cleanup_pmu_set_ struct dp_pmu_set *pmus = NULL;
        struct dp_damon_tree *tree;
        char paranoid[16] = "?", first_error[256];
        FILE *f;
        int e;

        f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
        if (f) {
                if (fgets(paranoid, sizeof(paranoid), f))
                        paranoid[strcspn(paranoid, "\n")] = '\0';
                fclose(f);
        }
        e = selftest_probe_perf_event_open();
        if (e < 0)
                dp_selftest_add(r, 0, "perf_event_open", DP_SELFTEST_FAIL,
                                "a software event on this process is refused: %s (perf_event_paranoid=%s)", strerror(-e),
                                paranoid);
        else
                dp_selftest_add(r, 0, "perf_event_open", DP_SELFTEST_PASS,
                                "a software event opens on this process (perf_event_paranoid=%s)", paranoid);

        e = dp_pmu_detect(NULL, &pmus);
        dp_selftest_check_pmus(r, pmus, e);

        tree = calloc(1, sizeof(*tree));
        if (!tree)
                e = -ENOMEM;
        else {
                /* Opened without a grant: this handle cannot write (lib/damon/damon-sysfs.c's guard). */
                e = dp_damon_fs_open(DAMON_SYSFS_ADMIN, &fs);
                if (e >= 0)
                        e = dp_damon_discover(fs, tree);
        }
        dp_selftest_check_damon_sysfs(r, tree, e);
        dp_selftest_check_capabilities(r, &before->stats);

        if (!daemon)
                dp_selftest_add(r, 0, "config", DP_SELFTEST_SKIP,
                                "damon-perfd not found next to damonctl or in $PATH (--daemon=PATH): cannot run "
                                "--check-config");
        else {
                int status = selftest_check_config(daemon, config, first_error, sizeof(first_error));

                if (status == 0)
                        dp_selftest_add(r, 0, "config", DP_SELFTEST_PASS, "%s is valid (damon-perfd --check-config)",
                                        config ?: "the default configuration");
                else if (status < 0)
                        dp_selftest_add(r, 0, "config", DP_SELFTEST_SKIP, "cannot run %s --check-config: %s", daemon,
                                        strerror(-status));
                else
                        dp_selftest_add(r, 0, "config", DP_SELFTEST_FAIL, "damon-perfd --check-config exited %d: %s",
                                        status, first_error[0] ? first_error : "(no error line)");
        }
        dp_selftest_check_damon_guard(r, tree, e, before->damon ? own_kdamond(before->damon) : -1);
        free(tree);
}

static double now_sec(void) {
        return (double) dp_now_ns(CLOCK_MONOTONIC) / 1e9;
}

static void sleep_sec(double sec) {
        double until = now_sec() + sec;

        while (!ctl_interrupted && now_sec() < until) {
                double left = DP_MIN(until - now_sec(), 0.1);
                struct timespec ts = { 0, (long) (DP_MAX(left, 0.0) * 1e9) };

                nanosleep(&ts, NULL);
        }
}

/* The workload's regions as the daemon sees them, hottest first. */
struct target_view {
        json_t *targets, *regions;      /* GetTargets, GetRegions(workload) (NULL: not a target) */
        bool targeted, physical;
        struct dp_selftest_region *r;
        size_t n;
};

static void target_view_done(struct target_view *v) {
        json_decref(v->targets);
        json_decref(v->regions);
        free(v->r);
        *v = (struct target_view) {};
}

static int regions_from_json(json_t *array, int64_t pid, const char *accesses_key, const char *age_key,
                             struct dp_selftest_region **ret, size_t *n) {
        json_t *region;
        size_t i;

        *ret = calloc(json_array_size(array) ?: 1, sizeof(**ret));
        *n = 0;
        if (!*ret)
                return -ENOMEM;
        json_array_foreach(array, i, region) {
                if (get_int(region, "target", -1) != pid)
                        continue;
                (*ret)[(*n)++] = (struct dp_selftest_region) {
                        .start = (uint64_t) get_int(region, "start", 0),
                        .end = (uint64_t) get_int(region, "end", 0),
                        .nr_accesses = get_int(region, accesses_key, 0),
                        .age = get_int(region, age_key, 0),
                };
        }
        return 0;
}

static int target_view_take(struct ctl *ctl, const struct selftest_env *e, struct target_view *v) {
        static const char *const no_target[] = { CTL_INTERFACE ".NoSuchTarget", NULL };
        json_t *target, *parameters;
        size_t i;
        int k;

        target_view_done(v);
        k = ctl_call(ctl, "GetTargets", NULL, &v->targets);
        if (k != CTL_EXIT_OK || !v->targets)
                return k;
        json_array_foreach(json_object_get(v->targets, "targets"), i, target) {
                const char *kind = json_string_value(json_object_get(target, "kind"));

                v->physical = v->physical || (kind && strcmp(kind, "physical") == 0);
                v->targeted = v->targeted || get_int(target, "pid", -1) == e->workload_pid;
        }
        if (!v->targeted)
                return CTL_EXIT_OK;
        parameters = json_pack("{s:I,s:i}", "target", (json_int_t) e->workload_pid, "limit", 100000);
        if (!parameters)
                return fprintf(stderr, "out of memory\n"), CTL_EXIT_FAILURE;
        k = call_accepting(ctl, "GetRegions", parameters, no_target, &v->regions);
        json_decref(parameters);
        if (k != CTL_EXIT_OK)
                return k;
        v->targeted = v->regions != NULL;       /* it may have gone in between */
        if (v->regions && regions_from_json(json_object_get(v->regions, "regions"), e->workload_pid, "nr_accesses", "age",
                                            &v->r, &v->n) < 0)
                return fprintf(stderr, "out of memory\n"), CTL_EXIT_FAILURE;
        return CTL_EXIT_OK;
}

/* Until the workload is a target with its hot area found, or SETTLE_MAX_SEC. */
static int settle(struct ctl *ctl, const struct selftest_env *e, uint64_t slack, struct target_view *v) {
        double deadline = now_sec() + SETTLE_MAX_SEC;

        for (;;) {
                int k = target_view_take(ctl, e, v);

                if (k != CTL_EXIT_OK || ctl_interrupted)
                        return k;
                if ((v->targeted && dp_selftest_hot_area_found(v->r, v->n, e->hot_start, e->hot_end, slack)) ||
                    v->physical || now_sec() > deadline)
                        return CTL_EXIT_OK;
                sleep_sec(SETTLE_STEP_MS / 1000.0);
        }
}

static int cpus_from_json(json_t *reply, struct dp_selftest_cpu **ret, size_t *n) {
        json_t *cpus = json_object_get(reply, "cpus"), *cpu;
        size_t i;

        if (!json_is_array(cpus))
                return ctl_bad_reply("GetCPUs.cpus: expected an array");
        *ret = calloc(json_array_size(cpus) ?: 1, sizeof(**ret));
        if (!*ret)
                return fprintf(stderr, "out of memory\n"), CTL_EXIT_FAILURE;
        json_array_foreach(cpus, i, cpu)
                (*ret)[i] = (struct dp_selftest_cpu) {
                        .cpu = get_int(cpu, "cpu", -1),
                        .state = json_string_value(json_object_get(cpu, "state")),
                        .failed_step = json_string_value(json_object_get(cpu, "failed_step")),
                        .error = get_int(cpu, "errno", 0),
                };
        *n = json_array_size(cpus);
        return CTL_EXIT_OK;
}

static bool array_has(json_t *array, int64_t value) {
        json_t *v;
        size_t i;

        json_array_foreach(array, i, v)
                if (json_is_integer(v) && json_integer_value(v) == value)
                        return true;
        return false;
}

/* The window is over: everything the layers are judged by, then the judgement. */
static int evaluate(struct ctl *ctl, const struct selftest_env *e, struct snapshot *before,
                    struct dp_selftest_report *report) {
        uint64_t slack = HOT_SLACK_PAGES * (uint64_t) sysconf(_SC_PAGESIZE);
        struct dp_selftest_observation o = {};
        struct snapshot after = {};
        struct target_view v = {};
        _cleanup_free_ struct dp_selftest_cpu *cpus = NULL;
        _cleanup_free_ struct dp_selftest_region *damon_regions = NULL;
        json_t *cpus_reply = NULL;
        int k;

        /* The counters at the window's end; then the target and its regions, given time to settle. */
        if ((k = snapshot_take(ctl, &after)) != CTL_EXIT_OK || ctl_interrupted ||
            (k = ctl_call(ctl, "GetCPUs", NULL, &cpus_reply)) != CTL_EXIT_OK || !cpus_reply ||
            (k = cpus_from_json(cpus_reply, &cpus, &o.n_cpus)) != CTL_EXIT_OK ||
            (k = settle(ctl, e, slack, &v)) != CTL_EXIT_OK || ctl_interrupted)
                goto out;

        o.before = &before->stats;
        o.after = &after.stats;
        o.cpus = cpus;
        o.workload_pid = e->workload_pid;
        o.hot_start = e->hot_start;
        o.hot_end = e->hot_end;
        o.slack = slack;
        o.workload_targeted = v.targeted;
        o.workload_expected = e->dir[0] != '\0';        /* the private instance was given its pid */
        o.physical = v.physical;
        o.regions = v.r;
        o.n_regions = v.n;
        o.max_nr_accesses = get_int(v.regions, "max_nr_accesses", 0);
        if (after.damon) {
                o.damon = (struct dp_selftest_damon) {
                        .answered = true,
                        .role = json_string_value(json_object_get(after.damon, "role")),
                        .reason = json_string_value(json_object_get(after.damon, "reason")),
                        .kdamond = own_kdamond(after.damon),
                        .commits = get_int(after.damon, "commits", 0),
                        .read_backs = get_int(after.damon, "read_backs", 0),
                        .workload_is_target = array_has(json_object_get(after.damon, "targets"), e->workload_pid),
                };
                if (regions_from_json(json_object_get(after.damon, "regions"), e->workload_pid, "damon_nr_accesses",
                                      "damon_age", &damon_regions, &o.damon.n_regions) < 0) {
                        k = (fprintf(stderr, "out of memory\n"), CTL_EXIT_FAILURE);
                        goto out;
                }
                o.damon.regions = damon_regions;
        }
        if (dp_selftest_evaluate(report, &o) < 0)
                k = ctl_bad_reply("GetStats missing at one end of the window");
out:
        json_decref(cpus_reply);
        target_view_done(&v);
        snapshot_done(&after);
        return k;
}

/* Onto the CPUs the daemon samples, when some CPU is not RUNNING: the
 * workload's samples are to show the pipeline, not that CPU's failure
 * (which the lifecycle checks report).  " (pinned to CPUs ...)" in @note. */
static int pin_workload(struct ctl *ctl, struct selftest_env *e, char *note, size_t size) {
        _cleanup_free_ struct dp_selftest_cpu *cpus = NULL;
        _cleanup_free_ int *running = NULL;
        json_t *reply = NULL;
        size_t n = 0, n_running = 0;
        int k, r;

        k = ctl_call(ctl, "GetCPUs", NULL, &reply);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        k = cpus_from_json(reply, &cpus, &n);
        running = calloc(n ?: 1, sizeof(*running));
        if (k == CTL_EXIT_OK && !running)
                k = (fprintf(stderr, "out of memory\n"), CTL_EXIT_FAILURE);
        for (size_t i = 0; k == CTL_EXIT_OK && i < n; i++)
                if (cpus[i].state && strcmp(cpus[i].state, "running") == 0)
                        running[n_running++] = (int) cpus[i].cpu;
        json_decref(reply);
        if (k != CTL_EXIT_OK || n_running == n || n_running == 0)
                return k;
        r = selftest_workload_pin(e, running, n_running);
        if (r < 0) {
                snprintf(note, size, " (not pinned to the running CPUs: %s)", strerror(-r));
                return CTL_EXIT_OK;
        }
        snprintf(note, size, " (pinned to the %zu running CPU%s)", n_running, n_running == 1 ? "" : "s");
        return CTL_EXIT_OK;
}

static int print_json(const struct ctl *ctl, const struct selftest_env *e, const struct dp_selftest_report *r,
                      double window) {
        json_t *doc = dp_selftest_report_to_json(r);
        int k;

        if (!doc || json_object_set_new(doc, "standalone", json_boolean(ctl->standalone)) < 0 ||
            json_object_set_new(doc, "window_sec", json_real(window)) < 0 ||
            (e->workload_pid > 0 &&
             json_object_set_new(doc, "workload", json_pack("{s:i,s:[I,I],s:b}", "pid", (int) e->workload_pid, "hot",
                                                            (json_int_t) e->hot_start, (json_int_t) e->hot_end,
                                                            "in_damonctl", e->workload_inline)) < 0)) {
                json_decref(doc);
                fprintf(stderr, "out of memory\n");
                return CTL_EXIT_FAILURE;
        }
        k = ctl_print_json(doc);
        json_decref(doc);
        return k;
}

/* One selftest, from finding the programs to the verdict. */
struct selftest_run {
        struct ctl *ctl;
        double window;                  /* seconds */
        const char *daemon_path;        /* NULL: none found (only --standalone needs one) */
        const char *workload_path;      /* NULL: a child of damonctl does the workload */
        char daemon[PATH_MAX], workload[PATH_MAX];
        char why[512];
        char pinned[160];               /* pin_workload()'s note */
        struct selftest_env env;
        struct snapshot before;
        struct dp_selftest_report report;
        size_t printed;                 /* checks printed so far */
};

/* Besides CTL_EXIT_OK (go on) and the exit codes to end with, a step of the selftest may return: */
#define SELFTEST_INTERRUPTED (-1)       /* Ctrl-C: stop what was started, and say so */
#define SELFTEST_START_FAILED (-2)      /* the private instance never came up: straight to the verdict */

/* damon-perfd and damon-perfd-workload: as given, else found; CTL_EXIT_OK or an exit code. */
static int find_programs(struct selftest_run *run) {
        const struct ctl *ctl = run->ctl;

        if (ctl->daemon_path)
                run->daemon_path = ctl->daemon_path;
        else if (selftest_find_program("damon-perfd", "daemon", run->daemon, sizeof(run->daemon)) == 0)
                run->daemon_path = run->daemon;
        if (ctl->workload_path)
                run->workload_path = ctl->workload_path;
        else if (selftest_find_program("damon-perfd-workload", "tools", run->workload, sizeof(run->workload)) == 0)
                run->workload_path = run->workload;
        if (ctl->standalone && !run->daemon_path) {
                fprintf(stderr, "--standalone: damon-perfd is not next to damonctl nor in $PATH; give --daemon=PATH\n");
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

/* The daemon to ask (the running one, or with --standalone a private one
 * started here) and the workload. */
static int start_daemon_and_workload(struct selftest_run *run) {
        struct ctl *ctl = run->ctl;
        /* Seconds enough for the window, the settling and a slow start; stopped earlier by pid. */
        double lifetime = run->window + SETTLE_MAX_SEC + READY_TIMEOUT_SEC + 60;
        int k, r;

        if (ctl->standalone) {
                r = selftest_standalone_prepare(&run->env, ctl->config_path);
                if (r < 0) {
                        fprintf(stderr, "cannot set up the private instance in /tmp: %s\n", strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
                ctl->address = run->env.address;
        } else if ((k = ctl_connect(ctl)) != CTL_EXIT_OK)
                return k;

        if (selftest_workload_start(&run->env, run->workload_path, lifetime) < 0)
                return CTL_EXIT_FAILURE;
        if (!ctl->standalone)
                return CTL_EXIT_OK;
        r = selftest_daemon_start(&run->env, run->daemon_path, lifetime);
        if (r >= 0)
                r = selftest_daemon_wait_ready(&run->env, READY_TIMEOUT_SEC, run->why, sizeof(run->why));
        if (r == -EINTR)
                return SELFTEST_INTERRUPTED;
        if (r < 0) {
                /* Nothing to ask: the pipeline never came up. */
                dp_selftest_add(&run->report, 1, "start", DP_SELFTEST_FAIL, "%s",
                                r == -ECHILD || r == -ETIMEDOUT ? run->why : strerror(-r));
                return SELFTEST_START_FAILED;
        }
        return CTL_EXIT_OK;
}

static void print_start(const struct selftest_run *run) {
        const struct ctl *ctl = run->ctl;

        printf("selftest of %s; workload pid %d (%s), hot area %#" PRIx64 "-%#" PRIx64 "%s; window %.1f s\n",
               ctl->standalone ? "a private damon-perfd" : ctl_address_path(ctl), (int) run->env.workload_pid,
               run->env.workload_inline ? "a child of damonctl" : run->workload_path, run->env.hot_start,
               run->env.hot_end, run->pinned, run->window);
        fflush(stdout);
}

/* The environment's checks, then the window and what every layer did in it. */
static int run_checks(struct selftest_run *run) {
        struct ctl *ctl = run->ctl;
        int k;

        k = pin_workload(ctl, &run->env, run->pinned, sizeof(run->pinned));
        if (k != CTL_EXIT_OK)
                return k;
        k = snapshot_take(ctl, &run->before);
        if (k != CTL_EXIT_OK)
                return k;
        if (ctl_interrupted)
                return SELFTEST_INTERRUPTED;
        if (!ctl->json)
                print_start(run);
        check_environment(&run->report, &run->before, run->daemon_path, ctl->standalone ? run->env.config : NULL);
        print_new_checks(ctl, &run->report, &run->printed);

        /* Afresh: the window is what the deltas cover, not the checks above. */
        snapshot_done(&run->before);
        k = snapshot_take(ctl, &run->before);
        if (k != CTL_EXIT_OK)
                return k;
        sleep_sec(run->window);
        if (ctl_interrupted)
                return SELFTEST_INTERRUPTED;
        k = evaluate(ctl, &run->env, &run->before, &run->report);
        if (ctl_interrupted)
                return SELFTEST_INTERRUPTED;
        return k;
}

/* Stops what was started, then the checks not shown yet and the verdict; the exit status. */
static int verdict(struct selftest_run *run) {
        struct selftest_env shown = run->env;   /* for --json: the workload as it was */
        int k, status;

        selftest_env_cleanup(&run->env, &status);
        if (run->ctl->json)
                k = print_json(run->ctl, &shown, &run->report, run->window);
        else {
                print_new_checks(run->ctl, &run->report, &run->printed);
                k = dp_selftest_verdict_print(stdout, &run->report) < 0 || fflush(stdout) != 0 ? CTL_EXIT_FAILURE
                                                                                              : CTL_EXIT_OK;
        }
        if (k == CTL_EXIT_OK)
                k = dp_selftest_verdict_exit_status(dp_selftest_verdict(&run->report, run->why, sizeof(run->why)));
        snapshot_done(&run->before);
        return k;
}

int ctl_selftest(struct ctl *ctl) {
        struct selftest_run run = {
                .ctl = ctl,
                .window = ctl->duration_ns ? (double) ctl->duration_ns / 1e9 : WINDOW_DEFAULT_SEC,
        };
        int k;

        dp_selftest_report_init(&run.report);
        k = ctl_handle_signals();
        if (k == CTL_EXIT_OK)
                k = find_programs(&run);
        if (k != CTL_EXIT_OK)
                return k;
        k = start_daemon_and_workload(&run);
        if (k == CTL_EXIT_OK)
                k = run_checks(&run);
        if (k == CTL_EXIT_OK || k == SELFTEST_START_FAILED)
                return verdict(&run);

        if (k == SELFTEST_INTERRUPTED) {
                fprintf(stderr, "selftest interrupted; what it started is stopped\n");
                k = CTL_EXIT_FAILURE;
        }
        selftest_env_cleanup(&run.env, NULL);
        snapshot_done(&run.before);
        return k;
}
