/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real daemon on this machine: every CPU sampled with the best source
 * there is, against a workload whose hot area is known.  Asserts that every
 * CPU reached RUNNING, that the counters reconcile, and that the hottest
 * region the daemon found lies inside the workload's hot area.
 *
 * Needs root (system-wide perf sampling); the paths of the binaries come
 * from meson in DP_DAEMON and DP_WORKLOAD.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "counters.h"

#include "check-main.h"
#include "macro.h"
#include "time-util.h"
#include "test-workload.h"



/* Runs the daemon to completion; returns its exit status, stderr in @log. */
static int run_daemon(char *const argv[], char *log, size_t log_size) {
        int pipefd[2], status;
        size_t used = 0;
        ssize_t n;
        pid_t pid;

        ck_assert_int_eq(pipe(pipefd), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY);

                dup2(devnull, STDOUT_FILENO);
                dup2(pipefd[1], STDERR_FILENO);
                close(pipefd[0]);
                execv(argv[0], argv);
                _exit(127);
        }
        close(pipefd[1]);
        while ((n = read(pipefd[0], log + used, log_size - 1 - used)) > 0)
                used += (size_t) n;
        log[used] = '\0';
        close(pipefd[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void counters_from_json(json_t *o, struct dp_counter_values *v) {
        for (int c = 0; c < _DP_C_MAX; c++) {
                json_t *x = json_object_get(o, dp_counter_name(c));

                ck_assert_msg(json_is_integer(x), "counter %s missing", dp_counter_name(c));
                v->v[c] = (uint64_t) json_integer_value(x);
        }
}

START_TEST(test_daemon_finds_hot_area) {
        const char *daemon = getenv("DP_DAEMON");
        char stats_path[] = "/tmp/dp-integration-XXXXXX";
        const char *fixtures = getenv("DP_CONFIG_FIXTURES");
        char pid_arg[32], config_arg[PATH_MAX], *log = malloc(1 << 20);
        struct dp_counter_values total, cpu;
        struct test_workload w = {0};
        json_t *doc, *cpus, *hottest, *entry;
        json_error_t err;
        const char *which;
        size_t i;
        int fd, status;

        ck_assert_msg(daemon, "DP_DAEMON not set");
        ck_assert_msg(geteuid() == 0, "the integration test samples every CPU and needs root");
        fd = mkstemp(stats_path);
        ck_assert_int_ge(fd, 0);
        close(fd);

        ck_assert_msg(fixtures, "DP_CONFIG_FIXTURES not set");
        snprintf(config_arg, sizeof(config_arg), "--config=%s/integration.conf", fixtures);
        test_workload_start(&w, "30");
        snprintf(pid_arg, sizeof(pid_arg), "--pid=%d", w.pid);
        char *argv[] = { (char *) daemon, pid_arg, config_arg, "--duration=5", "--no-varlink", "--stats-file",
                         stats_path, "--top=3", NULL };
        status = run_daemon(argv, log, 1 << 20);
        test_workload_stop(&w);
        ck_assert_msg(status == 0, "daemon exited with %d:\n%s", status, log);

        doc = json_load_file(stats_path, 0, &err);
        unlink(stats_path);
        ck_assert_msg(doc, "stats file is not JSON: %s", err.text);

        /* The source is named, and labelled as what it is. */
        ck_assert_ptr_nonnull(json_object_get(doc, "source"));
        ck_assert(json_is_boolean(json_object_get(json_object_get(doc, "source"), "hardware")));
        /* The choice says why: no memory PMU here, so the software control, named as such. */
        {
                const char *reason = json_string_value(json_object_get(json_object_get(doc, "source"), "reason"));

                ck_assert_ptr_nonnull(reason);
                ck_assert_msg(strstr(reason, "pagefault"), "source.reason does not name pagefault: %s", reason);
        }

        /* Every CPU got through the whole lifecycle. */
        cpus = json_object_get(doc, "cpus");
        ck_assert_uint_gt(json_array_size(cpus), 0);
        json_array_foreach(cpus, i, entry) {
                int id = (int) json_integer_value(json_object_get(entry, "cpu"));
                char needle[64];

                snprintf(needle, sizeof(needle), "CPU%d: ENABLED -> RUNNING", id);
                ck_assert_msg(strstr(log, needle), "CPU%d never reached RUNNING:\n%s", id, log);
                ck_assert_str_eq(json_string_value(json_object_get(entry, "state")), "uninit");
                counters_from_json(json_object_get(entry, "counters"), &cpu);
                ck_assert_uint_eq(cpu.v[DP_C_CREATE], 1);
                ck_assert_uint_eq(cpu.v[DP_C_BIND], 1);
                ck_assert_uint_eq(cpu.v[DP_C_ENABLE], 1);
                ck_assert_msg(dp_counters_check(&cpu, &which) == 0, "CPU%d: %s", id, which);
                ck_assert_uint_eq(dp_counters_in_flight(&cpu), 0);
        }

        /* The pipeline carried samples end to end and they reconcile. */
        counters_from_json(json_object_get(doc, "totals"), &total);
        ck_assert_msg(dp_counters_check(&total, &which) == 0, "totals: %s", which);
        ck_assert_uint_gt(total.v[DP_C_CALLBACK], 1000);
        ck_assert_uint_gt(total.v[DP_C_MATCH], 1000);
        ck_assert_uint_gt(total.v[DP_C_UPDATE], 0);
        ck_assert_uint_eq(total.v[DP_C_DEQUEUE], total.v[DP_C_ENQUEUE]);
        /* Page faults have no AUX area: its counters are served, and stay zero. */
        for (int c = DP_C_AUX_TRUNCATED; c <= DP_C_SPE_NO_DATA; c++)
                ck_assert_msg(total.v[c] == 0, "%s: %llu", dp_counter_name(c), (unsigned long long) total.v[c]);

        /* The hottest region is the workload's, inside its hot area. */
        hottest = json_object_get(doc, "hottest");
        ck_assert_uint_gt(json_array_size(hottest), 0);
        entry = json_array_get(hottest, 0);
        {
                uint64_t start = (uint64_t) json_integer_value(json_object_get(entry, "start"));
                uint64_t end = (uint64_t) json_integer_value(json_object_get(entry, "end"));

                ck_assert_int_eq(json_integer_value(json_object_get(entry, "target")), w.pid);
                ck_assert_uint_gt(json_integer_value(json_object_get(entry, "nr_accesses")), 0);
                ck_assert_msg(start >= (uint64_t) w.hot_start && end <= (uint64_t) w.hot_end,
                              "hottest region %#llx-%#llx is not inside the hot area %#llx-%#llx",
                              (unsigned long long) start, (unsigned long long) end,
                              (unsigned long long) w.hot_start, (unsigned long long) w.hot_end);
        }
        json_decref(doc);
        free(log);
}
END_TEST

START_TEST(test_daemon_rejects_bad_options) {
        const char *daemon = getenv("DP_DAEMON");
        char *log = malloc(1 << 16);
        char *bad[][3] = {
                { (char *) daemon, "--ring-pages=3", NULL },
                { (char *) daemon, "--source=nonesuch", NULL },
                { (char *) daemon, "--cpus=1-0", NULL },
                { (char *) daemon, "--pid=abc", NULL },
                /* This machine has no AMD IBS: insisting on it must fail, saying so. */
                { (char *) daemon, "--source=ibs", NULL },
                { (char *) daemon, "--duration=1.5.5", NULL },
                { (char *) daemon, "--duration=-1s", NULL },
                { (char *) daemon, "--duration=366d", NULL },
                { (char *) daemon, "--duration=8761h", NULL },
        };
        const char *expect[] = { "power of two", "Source=nonesuch refused", "invalid CPU list", "--pid",
                                 "ibs_op", "--duration: expected a time span between 0 and 8760h",
                                 "got '-1s'", "got '366d'", "got '8761h'" };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_int_ne(run_daemon(bad[i], log, 1 << 16), 0);
                ck_assert_msg(strstr(log, expect[i]), "%s: no clear error, got: %s", bad[i][1], log);
                if (strcmp(bad[i][1], "--source=ibs") == 0) {
                        const char *error = strstr(log, "error:");

                        /* One line gives the whole reason. */
                        ck_assert_msg(error && strstr(error, "ibs_op") && strstr(error, "refused") &&
                                      strstr(error, "ibs_op") < strchrnul(error, '\n'),
                                      "--source=ibs: no one-line reason naming ibs_op, got: %s", log);
                }
        }
        free(log);
}
END_TEST

/* --check-config holds the schemes' node filters against this machine's
 * nodes: one it lacks is a warning (the file may be meant for another), and
 * the configuration still prints. */
START_TEST(test_check_config_warns_of_missing_node) {
        const char *daemon = getenv("DP_DAEMON");
        char path[] = "/tmp/dp-check-node-XXXXXX", arg[64], *log = malloc(1 << 16);
        char *argv[] = { (char *) daemon, arg, "--check-config", NULL };
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        dprintf(fd, "[Tracking]\nTargets=physical\n[DAMON]\nMode=own\n"
                    "Scheme=migrate_hot target_nid=0 reject=node:65535 reject=!hot\n");
        close(fd);
        snprintf(arg, sizeof(arg), "--config=%s", path);
        ck_assert_int_eq(run_daemon(argv, log, 1 << 16), 0);
        ck_assert_msg(strstr(log, "warning: on this machine: ") &&
                      strstr(log, ":5: Scheme=migrate_hot: reject=node:65535: no such node in /sys/devices/system/node"),
                      "%s", log);
        unlink(path);
        free(log);
}
END_TEST

/* --duration takes a time span as the configuration file does: a fraction
 * of a second runs that long, and exits 0. */
START_TEST(test_duration_takes_timespans) {
        static const struct {
                const char *arg;
                uint64_t usec;
        } runs[] = { { "--duration=1.5", 1500000 }, { "--duration=300ms", 300000 }, { "--duration=0.01min", 600000 } };
        const char *daemon = getenv("DP_DAEMON");
        char *log = malloc(1 << 20);

        for (size_t i = 0; i < DP_ARRAY_SIZE(runs); i++) {
                char *argv[] = { (char *) daemon, "--cpus=0", (char *) runs[i].arg, "--no-varlink", NULL };
                uint64_t start = dp_now_ns(CLOCK_MONOTONIC), took_usec;

                ck_assert_msg(run_daemon(argv, log, 1 << 20) == 0, "%s: %s", runs[i].arg, log);
                took_usec = (dp_now_ns(CLOCK_MONOTONIC) - start) / NSEC_PER_USEC;
                ck_assert_msg(took_usec >= runs[i].usec, "%s: exited after %llu us", runs[i].arg,
                              (unsigned long long) took_usec);
                /* Start and stop take well under a second; a loaded machine may add some. */
                ck_assert_msg(took_usec < runs[i].usec + 10 * USEC_PER_SEC, "%s: ran %llu us", runs[i].arg,
                              (unsigned long long) took_usec);
                ck_assert_msg(strstr(log, "duration reached, stopping"), "%s: %s", runs[i].arg, log);
        }
        free(log);
}
END_TEST

/* A CPU whose sampler cannot be opened ends in ERROR alone; the others run. */
START_TEST(test_failed_cpu_is_isolated) {
        const char *daemon = getenv("DP_DAEMON");
        char stats_path[] = "/tmp/dp-integration-XXXXXX", cpus_arg[64], *log = malloc(1 << 20);
        long missing = sysconf(_SC_NPROCESSORS_CONF) + 7;
        json_t *doc, *cpus, *entry;
        json_error_t err;
        size_t i;
        int fd;

        fd = mkstemp(stats_path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        snprintf(cpus_arg, sizeof(cpus_arg), "--cpus=0,%ld", missing);
        char *argv[] = { (char *) daemon, cpus_arg, "--duration=2", "--no-varlink", "--stats-file", stats_path, NULL };
        ck_assert_int_eq(run_daemon(argv, log, 1 << 20), 0);

        doc = json_load_file(stats_path, 0, &err);
        unlink(stats_path);
        ck_assert_msg(doc, "stats: %s", err.text);
        cpus = json_object_get(doc, "cpus");
        ck_assert_uint_eq(json_array_size(cpus), 2);
        json_array_foreach(cpus, i, entry) {
                long cpu = (long) json_integer_value(json_object_get(entry, "cpu"));
                json_t *c = json_object_get(entry, "counters");

                if (cpu == missing) {
                        ck_assert_str_eq(json_string_value(json_object_get(entry, "state")), "error");
                        ck_assert_int_eq(json_integer_value(json_object_get(c, "create")), 0);
                        ck_assert_int_eq(json_integer_value(json_object_get(c, "callback")), 0);
                } else {
                        ck_assert_str_eq(json_string_value(json_object_get(entry, "state")), "uninit");
                        ck_assert_int_eq(json_integer_value(json_object_get(c, "enable")), 1);
                }
        }
        /* The failure is named once, with its step and errno. */
        ck_assert_msg(strstr(log, "-> ERROR at create"), "no ERROR line in:\n%s", log);
        ck_assert_ptr_nonnull(strstr(log, "CPU0: ENABLED -> RUNNING"));
        json_decref(doc);
        free(log);
}
END_TEST

/* --replay reads a capture through the same pipeline and prints the same JSON. */
START_TEST(test_daemon_replays_a_capture) {
        const char *daemon = getenv("DP_DAEMON"), *dir = getenv("DP_TESTDATA");
        char capture[4096], out_path[] = "/tmp/dp-replay-XXXXXX", *log = malloc(1 << 16);
        struct dp_counter_values total;
        json_t *doc;
        json_error_t err;
        int fd, status;
        pid_t pid;

        ck_assert_msg(dir, "DP_TESTDATA not set");
        snprintf(capture, sizeof(capture), "%s/pagefault-system.perf.data", dir);
        fd = mkstemp(out_path);
        ck_assert_int_ge(fd, 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(fd, STDOUT_FILENO);
                execl(daemon, daemon, "--replay", capture, "--dump-stats=json", "--top=3", NULL);
                _exit(127);
        }
        close(fd);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "replay failed");
        doc = json_load_file(out_path, 0, &err);
        unlink(out_path);
        ck_assert_msg(doc, "replay output is not JSON: %s", err.text);
        counters_from_json(json_object_get(doc, "totals"), &total);
        ck_assert_uint_eq(total.v[DP_C_CALLBACK], 24719);       /* lines of its perf script text */
        ck_assert_int_eq(dp_counters_check(&total, NULL), 0);
        ck_assert_uint_eq(total.v[DP_C_MATCH], total.v[DP_C_VALID]);
        ck_assert_uint_eq(json_array_size(json_object_get(doc, "hottest")), 3);
        json_decref(doc);

        /* A file that is no capture gets one clear line and a failure. */
        char *bad[] = { (char *) daemon, "--replay=/etc/hostname", NULL };
        ck_assert_int_ne(run_daemon(bad, log, 1 << 16), 0);
        ck_assert_ptr_nonnull(strstr(log, "not a readable perf.data capture"));
        free(log);
}
END_TEST

static void write_text_file(const char *path, const char *text) {
        FILE *f = fopen(path, "we");

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(fputs(text, f) >= 0, 1);
        ck_assert_int_eq(fclose(f), 0);
}

/* Waits up to @seconds for @needle in the file @path; its text stays in @buf. */
static bool wait_for_log(const char *path, const char *needle, char *buf, size_t size, int seconds) {
        for (int i = 0; i < seconds * 20; i++) {
                FILE *f = fopen(path, "re");
                size_t n = 0;

                if (f) {
                        n = fread(buf, 1, size - 1, f);
                        fclose(f);
                }
                buf[n] = '\0';
                if (strstr(buf, needle))
                        return true;
                usleep(50000);
        }
        return false;
}

/* SIGHUP reloads systemd style: an invalid file is refused as a whole with
 * file:line, a valid one applies the target settings and names the rest. */
START_TEST(test_sighup_reloads_config) {
        const char *daemon = getenv("DP_DAEMON");
        char conf[] = "/tmp/dp-reload-conf-XXXXXX", log_path[] = "/tmp/dp-reload-log-XXXXXX";
        char config_arg[64], needle[128], *log = malloc(1 << 20);
        int fd, log_fd, status;
        pid_t pid;

        ck_assert_msg(geteuid() == 0, "the daemon samples every CPU and needs root");
        fd = mkstemp(conf);
        ck_assert_int_ge(fd, 0);
        close(fd);
        log_fd = mkstemp(log_path);
        ck_assert_int_ge(log_fd, 0);
        write_text_file(conf, "[Tracking]\nMaxTargets=100\n");
        snprintf(config_arg, sizeof(config_arg), "--config=%s", conf);

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY);

                dup2(devnull, STDOUT_FILENO);
                dup2(log_fd, STDERR_FILENO);
                /* Bounds a hang only: the test ends it with SIGTERM once its checks are done. */
                execl(daemon, daemon, config_arg, "--no-varlink", "--duration=60", NULL);
                _exit(127);
        }
        close(log_fd);
        ck_assert_msg(wait_for_log(log_path, "ready:", log, 1 << 20, 6), "daemon never ready:\n%s", log);

        /* Broken: nothing changes, the error names file and line, it keeps running. */
        write_text_file(conf, "[Tracking]\nMaxTargets=lots\nRingPages=64\n");
        ck_assert_int_eq(kill(pid, SIGHUP), 0);
        ck_assert_msg(wait_for_log(log_path, "keeping the running one", log, 1 << 20, 5),
                      "no refusal in:\n%s", log);
        snprintf(needle, sizeof(needle), "%s:2:", conf);
        ck_assert_msg(strstr(log, needle), "no %s in:\n%s", needle, log);
        ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);

        /* Valid: MaxTargets= applies live, RingPages= waits for a restart. */
        write_text_file(conf, "[Sampling]\nRingPages=256\n[Tracking]\nMaxTargets=50\n");
        ck_assert_int_eq(kill(pid, SIGHUP), 0);
        ck_assert_msg(wait_for_log(log_path, "RingPages= changed; takes effect after a restart", log, 1 << 20, 5),
                      "no restart note in:\n%s", log);
        /* Its own wait: the restart note is logged before the targets are applied. */
        ck_assert_msg(wait_for_log(log_path, "MaxTargets=50 applied", log, 1 << 20, 5), "MaxTargets not applied:\n%s",
                      log);
        ck_assert_ptr_null(strstr(log, "MaxTargets= changed"));
        ck_assert_ptr_null(strstr(strstr(log, "keeping the running one") + 1, "keeping the running one"));

        /* Still the running daemon, ending cleanly. */
        ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
        ck_assert_int_eq(kill(pid, SIGTERM), 0);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        wait_for_log(log_path, "", log, 1 << 20, 1);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "daemon exited with %d:\n%s", status, log);
        unlink(conf);
        unlink(log_path);
        free(log);
}
END_TEST

int main(void) {
        Suite *s = suite_create("integration");
        TCase *tc = tcase_create("daemon");

        tcase_set_timeout(tc, 90);
        tcase_add_test(tc, test_daemon_finds_hot_area);
        tcase_add_test(tc, test_daemon_rejects_bad_options);
        tcase_add_test(tc, test_check_config_warns_of_missing_node);
        tcase_add_test(tc, test_duration_takes_timespans);
        tcase_add_test(tc, test_daemon_replays_a_capture);
        tcase_add_test(tc, test_failed_cpu_is_isolated);
        tcase_add_test(tc, test_sighup_reloads_config);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
