/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The real daemon (DP_DAEMON) for the fault-tolerance tests: started with a
 * configuration of the test's in a private directory, serving io.damon.perfd
 * on a private socket, asked over varlink, stopped by the pid it was started
 * with.  And what every fault test asserts: the counters still reconcile. */

#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "stats-reply.h"
#include "varlink-client.h"

#include "test-ctl-run.h"

/* The daemon's own limit, should a test hang: it is stopped long before. */
#define TEST_DAEMON_DURATION "--duration=120"

struct test_daemon {
        pid_t pid;
        char dir[64];
        char address[128];              /* unix:DIR/io.damon.perfd */
        char log_path[128];
        struct dp_varlink_client *client;
};

static inline double test_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static inline void test_sleep(double sec) {
        struct timespec ts = { (time_t) sec, (long) ((sec - (double) (time_t) sec) * 1e9) };

        while (nanosleep(&ts, &ts) < 0)
                ;
}

/* @config: the file's text; @env: "NAME=VALUE" or NULL; @args: more options, NULL-terminated (or NULL). */
static inline void test_daemon_start(struct test_daemon *d, const char *config, const char *env,
                                     const char *const *args) {
        const char *daemon = getenv("DP_DAEMON");
        char config_path[128], config_arg[160], varlink_arg[160];
        const char *argv[24];
        size_t n = 0;
        pid_t parent = getpid();
        FILE *f;

        ck_assert_msg(daemon, "DP_DAEMON not set");
        *d = (struct test_daemon) {};
        snprintf(d->dir, sizeof(d->dir), "/tmp/dp-faults-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(d->dir));
        snprintf(d->address, sizeof(d->address), "unix:%s/io.damon.perfd", d->dir);
        snprintf(d->log_path, sizeof(d->log_path), "%s/daemon.log", d->dir);
        snprintf(config_path, sizeof(config_path), "%s/damon-perfd.conf", d->dir);
        f = fopen(config_path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(config, f), 0);
        ck_assert_int_eq(fclose(f), 0);

        snprintf(config_arg, sizeof(config_arg), "--config=%s", config_path);
        snprintf(varlink_arg, sizeof(varlink_arg), "--varlink=%s", d->address + strlen("unix:"));
        argv[n++] = daemon;
        argv[n++] = config_arg;
        argv[n++] = varlink_arg;
        argv[n++] = TEST_DAEMON_DURATION;
        for (; args && *args && n < DP_ARRAY_SIZE(argv) - 1; args++)
                argv[n++] = *args;
        argv[n] = NULL;

        d->pid = fork();
        ck_assert_int_ge(d->pid, 0);
        if (d->pid == 0) {
                int devnull = open("/dev/null", O_RDWR), err = open(d->log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

                /* Never outlives the test, even one that failed half way. */
                (void) prctl(PR_SET_PDEATHSIG, SIGTERM);
                if (getppid() != parent)
                        _exit(126);
                dup2(devnull, STDIN_FILENO);
                dup2(devnull, STDOUT_FILENO);
                dup2(err, STDERR_FILENO);
                if (env)
                        putenv((char *) env);
                execv(daemon, (char *const *) argv);
                _exit(127);
        }
}

/* The daemon's log so far, NUL-terminated (read whole, not via slurp()'s
 * memstream, whose buffer gcc's -Wdangling-pointer loses track of). */
static inline char *test_daemon_log(const struct test_daemon *d) {
        FILE *f = fopen(d->log_path, "re");
        size_t used = 0, size = 4096;
        char *text = malloc(size);

        ck_assert_ptr_nonnull(text);
        while (f) {
                size_t n = fread(text + used, 1, size - 1 - used, f);

                used += n;
                if (n == 0)
                        break;
                if (used + 1 == size) {
                        size *= 2;
                        text = realloc(text, size);
                        ck_assert_ptr_nonnull(text);
                }
        }
        if (f)
                fclose(f);
        text[used] = '\0';
        return text;
}

/* A GetCPUs reply whose CPUs all are RUNNING or in ERROR. */
static inline bool test_cpus_settled(json_t *reply) {
        json_t *cpus = json_object_get(reply, "cpus"), *cpu;
        size_t i;

        if (json_array_size(cpus) == 0)
                return false;
        json_array_foreach(cpus, i, cpu) {
                const char *state = json_string_value(json_object_get(cpu, "state"));

                if (!state || (strcmp(state, "running") != 0 && strcmp(state, "error") != 0))
                        return false;
        }
        return true;
}

/* Until it answers with every CPU RUNNING or in ERROR. */
static inline void test_daemon_wait_ready(struct test_daemon *d) {
        for (double deadline = test_now() + 20;;) {
                json_t *reply = NULL;
                const char *error = NULL;
                int status;

                ck_assert_msg(waitpid(d->pid, &status, WNOHANG) == 0, "damon-perfd exited with %#x:\n%s", status,
                              test_daemon_log(d));
                if (!d->client && dp_varlink_client_connect(d->address, &d->client) < 0)
                        d->client = NULL;
                if (d->client && dp_varlink_client_call(d->client, "io.damon.perfd.GetCPUs", NULL, 0, &reply, &error) < 0)
                        d->client = dp_varlink_client_free(d->client);
                if (reply && !error && test_cpus_settled(reply)) {
                        json_decref(reply);
                        return;
                }
                json_decref(reply);
                ck_assert_msg(test_now() < deadline, "damon-perfd never got every CPU RUNNING or in ERROR:\n%s",
                              test_daemon_log(d));
                test_sleep(0.05);
        }
}

/* Calls io.damon.perfd.@method on the test's connection; the reply, or NULL
 * with *error set for an error reply (when @error is given). */
static inline json_t *test_daemon_call(struct test_daemon *d, const char *method, json_t *parameters,
                                       const char **error) {
        char qualified[128];
        const char *e = NULL;
        json_t *reply = NULL;
        int r;

        if (!d->client)
                ck_assert_int_eq(dp_varlink_client_connect(d->address, &d->client), 0);
        snprintf(qualified, sizeof(qualified), "io.damon.perfd.%s", method);
        r = dp_varlink_client_call(d->client, qualified, parameters, 0, &reply, &e);
        ck_assert_msg(r >= 0, "%s: %s", method, strerror(-r));
        if (e) {
                ck_assert_msg(error, "%s failed: %s", method, e);
                *error = e;
                json_decref(reply);
                return NULL;
        }
        if (error)
                *error = NULL;
        return reply;
}

static inline void test_daemon_stats(struct test_daemon *d, struct dp_stats_reply *ret) {
        json_t *reply = test_daemon_call(d, "GetStats", NULL, NULL);
        char error[256] = "";

        ck_assert_msg(dp_stats_reply_parse(reply, ret, error, sizeof(error)) == 0, "GetStats: %s", error);
        json_decref(reply);
}

static inline void test_check_reconciles(const struct dp_stats_values *v, const char *what) {
        struct dp_counter_values c;
        const char *which = NULL;

        ck_assert_msg(v->v[DP_C_MATCH] + v->v[DP_C_MISS_TGID] + v->v[DP_C_MISS_REGION] + v->v[DP_C_MISS_BOUND] ==
                              v->v[DP_C_DEQUEUE],
                      "%s: match + miss_* != dequeue", what);
        ck_assert_msg(v->v[DP_C_DEQUEUE] + v->v[DP_STATS_IN_FLIGHT] == v->v[DP_C_ENQUEUE],
                      "%s: dequeue + in_flight != enqueue", what);
        dp_stats_values_to_counters(v, &c);
        ck_assert_msg(dp_counters_check(&c, &which) == 0, "%s: %s", what, which);
}

/* The counters reconcile in total and on every CPU. */
static inline void test_stats_reconcile(const struct dp_stats_reply *s) {
        test_check_reconciles(&s->totals, "totals");
        for (size_t i = 0; i < s->n_cpus; i++) {
                char what[32];

                snprintf(what, sizeof(what), "CPU%lld", (long long) s->cpus[i].cpu);
                test_check_reconciles(&s->cpus[i].values, what);
        }
}

/* Lines of @text that contain @needle. */
static inline size_t test_count_lines(const char *text, const char *needle) {
        size_t n = 0;

        for (const char *line = text; line && *line;) {
                const char *end = strchrnul(line, '\n');
                const char *hit = strstr(line, needle);

                n += hit && hit < end;
                line = *end ? end + 1 : NULL;
        }
        return n;
}

/* VmRSS of @pid in KiB. */
static inline uint64_t test_rss_kib(pid_t pid) {
        char path[64], line[256];
        uint64_t kib = 0;
        bool found = false;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        ck_assert_ptr_nonnull(f);
        while (!found && fgets(line, sizeof(line), f))
                if (strncmp(line, "VmRSS:", 6) == 0) {
                        kib = strtoull(line + 6, NULL, 10);
                        found = true;
                }
        fclose(f);
        ck_assert_msg(found, "no VmRSS in %s", path);
        return kib;
}

/* SIGTERM, and its exit status (128 + signal if it was killed by one). */
static inline int test_daemon_stop(struct test_daemon *d) {
        int status = 0;

        d->client = dp_varlink_client_free(d->client);
        if (d->pid > 0) {
                ck_assert_int_eq(kill(d->pid, SIGTERM), 0);
                ck_assert_int_eq(waitpid(d->pid, &status, 0), d->pid);
                d->pid = 0;
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Removes the private directory (the daemon has removed its socket). */
static inline void test_daemon_cleanup(struct test_daemon *d) {
        char path[160];

        for (const char *const *f = (const char *const[]) { "daemon.log", "damon-perfd.conf", "io.damon.perfd",
                                                           "stdout", "stderr", NULL }; *f; f++) {
                snprintf(path, sizeof(path), "%s/%s", d->dir, *f);
                unlink(path);
        }
        rmdir(d->dir);
}
