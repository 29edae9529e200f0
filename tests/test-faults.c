/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Faults the daemon must survive, each with the real daemon on a private
 * socket: it keeps serving, its counters still reconcile
 * (match + miss_* == dequeue, dequeue + in_flight == enqueue, ...), and its
 * log names the cause once.
 *  - perf_event_open refused on one CPU (EACCES, ENOENT, EBUSY, ENOSPC,
 *    injected with DAMON_PERFD_TEST_FAIL_OPEN): that CPU in ERROR, the others
 *    RUNNING, and damonctl selftest says PLUMBING-ONLY;
 *  - the kernel's ring overflowing (RingPages=1, a workload as fast as it
 *    goes): lost counted;
 *  - the queue overflowing behind a stalled tracker (QueueSize=64, the
 *    tracker thread held with ptrace): overflow counted, the readers never
 *    blocked, the API answering;
 *  - a CPU going offline and coming back (DAMON_PERFD_TEST_CPU_ONLINE; the
 *    real hotplug is the qemu test's): ERROR at offline, then RUNNING again
 *    with its counters carrying on;
 *  - the target process exiting: dropped, without a word of error;
 *  - SIGTERM under full load: a clean exit, status 0 (no leak in the ASan
 *    build, whose LeakSanitizer would fail the exit).
 * A bad configuration on SIGHUP is test-integration's; DAMON's faults are
 * test-damon-*'s and the qemu test's.
 *
 * Needs root (system-wide perf sampling).
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

#include "check-main.h"
#include "test-daemon-run.h"
#include "test-workload.h"

#define QUIET_DAMON "[DAMON]\nMode=off\n"
/* What "served" means here: a GetStats round trip within a second.  A call
 * stuck behind a stalled thread would take the whole 2 s stall, while how
 * fast an unblocked one is depends on the machine's load and the
 * sanitizers, not on the daemon: the bound tells the two apart, not speeds. */
#define SERVED_WITHIN_SEC 1.0

/* How many loss reports one CPU may make in @seconds: the first at once,
 * then at most one every ten seconds (LOSS_REPORT_INTERVAL_NS). */
static size_t loss_reports_allowed(double seconds) {
        return 1 + (size_t) (seconds / 10);
}

static int online_cpus(void) {
        return (int) sysconf(_SC_NPROCESSORS_ONLN);
}

static double get_stats_round_trip(struct test_daemon *d) {
        double start = test_now();
        json_t *reply = test_daemon_call(d, "GetStats", NULL, NULL);

        json_decref(reply);
        return test_now() - start;
}

static const struct {
        const char *name;
        int error;
} refusals[] = {
        { "EACCES", EACCES },
        { "ENOENT", ENOENT },
        { "EBUSY", EBUSY },
        { "ENOSPC", ENOSPC },
};

/* The last CPU's perf_event_open fails with refusals[_i]; the rest go on. */
START_TEST(test_open_refused_on_one_cpu) {
        int cpu = online_cpus() - 1, error = refusals[_i].error;
        char env[64], needle[192];
        _cleanup_free_ char *log = NULL;
        struct dp_stats_reply s;
        struct test_workload w;
        struct test_daemon d;
        json_t *cpus, *c;
        cpu_set_t cpu0;
        size_t i;

        if (cpu < 1) {
                printf("test_open_refused_on_one_cpu: needs two CPUs; skipped\n");
                return;
        }
        /* Traffic where it can be seen: a workload on CPU 0, which stays open. */
        test_workload_start(&w, "30");
        CPU_ZERO(&cpu0);
        CPU_SET(0, &cpu0);
        ck_assert_int_eq(sched_setaffinity(w.pid, sizeof(cpu0), &cpu0), 0);
        snprintf(env, sizeof(env), "DAMON_PERFD_TEST_FAIL_OPEN=%d:%s", cpu, refusals[_i].name);
        test_daemon_start(&d, QUIET_DAMON, env, NULL);
        test_daemon_wait_ready(&d);

        cpus = test_daemon_call(&d, "GetCPUs", NULL, NULL);
        json_array_foreach(json_object_get(cpus, "cpus"), i, c) {
                const char *state = json_string_value(json_object_get(c, "state"));

                if (json_integer_value(json_object_get(c, "cpu")) == cpu) {
                        ck_assert_str_eq(state, "error");
                        ck_assert_str_eq(json_string_value(json_object_get(c, "failed_step")), "create");
                        ck_assert_int_eq(json_integer_value(json_object_get(c, "errno")), error);
                } else
                        ck_assert_str_eq(state, "running");
        }
        ck_assert_uint_eq(i, (size_t) cpu + 1);
        json_decref(cpus);

        /* Samples matched (the workload becomes a target within an aggregation or two). */
        for (double deadline = test_now() + 10;; test_sleep(0.1)) {
                test_daemon_stats(&d, &s);
                if (s.totals.v[DP_C_MATCH] > 0)
                        break;
                dp_stats_reply_done(&s);
                ck_assert_msg(test_now() < deadline, "nothing matched on the CPUs left");
        }
        test_stats_reconcile(&s);
        for (i = 0; i < s.n_cpus; i++)
                if (s.cpus[i].cpu == cpu)
                        ck_assert_int_eq(s.cpus[i].values.v[DP_C_CALLBACK], 0);
        dp_stats_reply_done(&s);

        /* Against this daemon, selftest sees the pipeline work on the other CPUs, short of every CPU. */
        if (error == EACCES) {
                const char *args[] = { "selftest", "--duration", "2", NULL };
                struct run r = ctl_collect(d.dir, ctl_spawn(d.dir, d.address, 0, args));

                snprintf(needle, sizeof(needle), "\n[PASS] L3 running: %d/%d CPUs reached RUNNING (the furthest: "
                         "RUNNING); not: CPU%d ERROR at create (Permission denied)\n", cpu, cpu + 1, cpu);
                ck_assert_msg(r.status == 10 && strstr(r.out, needle), "selftest exited %d:\n%s\n%s", r.status, r.out,
                              r.err);
                ck_assert_ptr_nonnull(strstr(r.out, "\nverdict: PLUMBING-ONLY (exit 10): "));
                ck_assert_ptr_nonnull(strstr(r.out, "not every CPU got through (L1 created)"));
                run_done(&r);
        }

        ck_assert_int_eq(test_daemon_stop(&d), 0);
        test_workload_stop(&w);
        log = test_daemon_log(&d);
        /* The cause, once: loudly injected, and the CPU's one transition to ERROR. */
        ck_assert_uint_eq(test_count_lines(log, "TEST INJECTION (DAMON_PERFD_TEST_FAIL_OPEN)"), 1);
        snprintf(needle, sizeof(needle), "CPU%d: UNINIT -> ERROR at create: %s", cpu, strerror(error));
        ck_assert_msg(test_count_lines(log, needle) == 1, "'%s' not once in:\n%s", needle, log);
        ck_assert_msg(test_count_lines(log, "error:") == 1, "more errors than the injected one:\n%s", log);
        test_daemon_cleanup(&d);
}
END_TEST

/* Replaces @path's contents at once (rename), so that the daemon never reads it half written. */
static void write_online_list(const char *path, const char *list) {
        char tmp[256];
        FILE *f;

        snprintf(tmp, sizeof(tmp), "%s.new", path);
        f = fopen(tmp, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fprintf(f, "%s\n", list), 0);
        ck_assert_int_eq(fclose(f), 0);
        ck_assert_int_eq(rename(tmp, path), 0);
}

/* CPU @cpu in a GetCPUs reply: state, failed step ("" if none) and errno (0 if none). */
static void get_cpu(struct test_daemon *d, int cpu, char *state, char *step, size_t size, int *error) {
        json_t *reply = test_daemon_call(d, "GetCPUs", NULL, NULL), *c;
        bool found = false;
        size_t i;

        json_array_foreach(json_object_get(reply, "cpus"), i, c) {
                if (json_integer_value(json_object_get(c, "cpu")) != cpu)
                        continue;
                snprintf(state, size, "%s", json_string_value(json_object_get(c, "state")) ?: "?");
                snprintf(step, size, "%s", json_string_value(json_object_get(c, "failed_step")) ?: "");
                *error = (int) json_integer_value(json_object_get(c, "errno"));
                found = true;
        }
        json_decref(reply);
        ck_assert_msg(found, "GetCPUs has no CPU%d", cpu);
}

static uint64_t cpu_counter(const struct dp_stats_reply *s, int cpu, enum dp_counter c) {
        for (size_t i = 0; i < s->n_cpus; i++)
                if (s->cpus[i].cpu == cpu)
                        return s->cpus[i].values.v[c];
        ck_abort_msg("GetStats has no CPU%d", cpu);
        return 0;
}

/* Until CPU @cpu is in @state (and, when @step is given, failed at it). */
static void wait_cpu_state(struct test_daemon *d, int cpu, const char *state, const char *step) {
        char got[32], got_step[32];
        int error;

        for (double deadline = test_now() + 5;; test_sleep(0.05)) {
                get_cpu(d, cpu, got, got_step, sizeof(got), &error);
                if (strcmp(got, state) == 0 && (!step || strcmp(got_step, step) == 0))
                        return;
                ck_assert_msg(test_now() < deadline, "CPU%d is %s (%s), not %s:\n%s", cpu, got, got_step, state,
                              test_daemon_log(d));
        }
}

/* The last CPU goes offline and comes back, as the daemon sees it through
 * DAMON_PERFD_TEST_CPU_ONLINE (the machine's CPUs stay as they are; the
 * kernel's side of it is the qemu test's): its sampler closes, ERROR at
 * offline, the other CPUs run on; back, it runs again with its counters
 * carrying on, everything reconciles, and the log says each once. */
START_TEST(test_cpu_offline_and_back) {
        int cpu = online_cpus() - 1, error;
        char online[] = "/tmp/dp-faults-online-XXXXXX", env[96], all[32], fewer[32], needle[96];
        char state[32], step[32];
        _cleanup_free_ char *log = NULL;
        struct dp_stats_reply before, off, still, back;
        struct test_workload w;
        struct test_daemon d;
        cpu_set_t last;
        int fd;

        if (cpu < 1) {
                printf("test_cpu_offline_and_back: needs two CPUs; skipped\n");
                return;
        }
        fd = mkstemp(online);
        ck_assert_int_ge(fd, 0);
        close(fd);
        snprintf(all, sizeof(all), "0-%d", cpu);
        snprintf(fewer, sizeof(fewer), cpu == 1 ? "0" : "0-%d", cpu - 1);
        write_online_list(online, all);

        /* Traffic on the CPU that goes away. */
        test_workload_start(&w, "30");
        CPU_ZERO(&last);
        CPU_SET(cpu, &last);
        ck_assert_int_eq(sched_setaffinity(w.pid, sizeof(last), &last), 0);
        snprintf(env, sizeof(env), "DAMON_PERFD_TEST_CPU_ONLINE=%s", online);
        test_daemon_start(&d, QUIET_DAMON, env, NULL);
        test_daemon_wait_ready(&d);
        for (double deadline = test_now() + 10;; test_sleep(0.1)) {
                test_daemon_stats(&d, &before);
                if (cpu_counter(&before, cpu, DP_C_DEQUEUE) > 0)
                        break;
                dp_stats_reply_done(&before);
                ck_assert_msg(test_now() < deadline, "nothing sampled on CPU%d", cpu);
        }

        /* Offline: closed within the second's look, the rest untouched. */
        write_online_list(online, fewer);
        wait_cpu_state(&d, cpu, "error", "offline");
        get_cpu(&d, cpu, state, step, sizeof(state), &error);
        ck_assert_int_eq(error, ENODEV);
        for (int other = 0; other < cpu; other++) {
                get_cpu(&d, other, state, step, sizeof(state), &error);
                ck_assert_msg(strcmp(state, "running") == 0, "CPU%d is %s with CPU%d offline", other, state, cpu);
        }
        test_daemon_stats(&d, &off);
        /* Its last samples wait in its queue for the aggregation they belong
         * to, which closes a poll interval (a second while queried) after it
         * ends, and the tracker's wake-up may round up to the second grid. */
        for (double deadline = test_now() + 5;; test_sleep(0.1)) {
                test_daemon_stats(&d, &still);
                if (cpu_counter(&still, cpu, DP_C_DEQUEUE) == cpu_counter(&still, cpu, DP_C_ENQUEUE))
                        break;
                ck_assert_msg(test_now() < deadline, "CPU%d's queue not drained: %" PRIu64 " of %" PRIu64, cpu,
                              cpu_counter(&still, cpu, DP_C_DEQUEUE), cpu_counter(&still, cpu, DP_C_ENQUEUE));
                dp_stats_reply_done(&still);
        }
        /* Nothing sampled there any more (its events are closed), nothing lost either. */
        ck_assert_uint_eq(cpu_counter(&still, cpu, DP_C_CALLBACK), cpu_counter(&off, cpu, DP_C_CALLBACK));
        ck_assert_uint_ge(cpu_counter(&off, cpu, DP_C_CALLBACK), cpu_counter(&before, cpu, DP_C_CALLBACK));
        test_stats_reconcile(&still);
        ck_assert_double_lt(get_stats_round_trip(&d), SERVED_WITHIN_SEC);

        /* Back: opened again, counting on from where it was. */
        write_online_list(online, all);
        wait_cpu_state(&d, cpu, "running", NULL);
        for (double deadline = test_now() + 10;; test_sleep(0.1)) {
                test_daemon_stats(&d, &back);
                if (cpu_counter(&back, cpu, DP_C_DEQUEUE) > cpu_counter(&still, cpu, DP_C_DEQUEUE))
                        break;
                dp_stats_reply_done(&back);
                ck_assert_msg(test_now() < deadline, "nothing sampled on CPU%d after it came back", cpu);
        }
        ck_assert_uint_eq(cpu_counter(&back, cpu, DP_C_CREATE), 2);
        ck_assert_uint_eq(cpu_counter(&back, 0, DP_C_CREATE), 1);
        ck_assert_uint_gt(cpu_counter(&back, cpu, DP_C_CALLBACK), cpu_counter(&still, cpu, DP_C_CALLBACK));
        test_stats_reconcile(&back);

        test_workload_stop(&w);
        ck_assert_int_eq(test_daemon_stop(&d), 0);
        unlink(online);
        log = test_daemon_log(&d);
        ck_assert_uint_eq(test_count_lines(log, "TEST INJECTION (DAMON_PERFD_TEST_CPU_ONLINE)"), 1);
        snprintf(needle, sizeof(needle), "CPU%d: RUNNING -> ERROR at offline: the CPU went offline", cpu);
        ck_assert_msg(test_count_lines(log, needle) == 1, "'%s' not once in:\n%s", needle, log);
        ck_assert_msg(test_count_lines(log, "offline") == 1, "offline named more than once:\n%s", log);
        snprintf(needle, sizeof(needle), "CPU%d is online again: reopening its sampler", cpu);
        ck_assert_msg(test_count_lines(log, needle) == 1, "'%s' not once in:\n%s", needle, log);
        snprintf(needle, sizeof(needle), "CPU%d: ENABLED -> RUNNING", cpu);
        ck_assert_msg(test_count_lines(log, needle) == 2, "CPU%d did not run twice:\n%s", cpu, log);
        ck_assert_msg(test_count_lines(log, "error:") == 0, "an error logged:\n%s", log);
        dp_stats_reply_done(&before);
        dp_stats_reply_done(&off);
        dp_stats_reply_done(&still);
        dp_stats_reply_done(&back);
        test_daemon_cleanup(&d);
}
END_TEST

/* A one-page ring and a workload as fast as it goes: the kernel loses records. */
START_TEST(test_kernel_ring_overflow) {
        static const char *const config = "[Sampling]\nRingPages=1\n" QUIET_DAMON;
        _cleanup_free_ char *log = NULL;
        struct test_workload w;
        struct dp_stats_reply s;
        struct test_daemon d;
        char pid_arg[32];
        size_t reports = 0, allowed;
        double started;

        test_workload_start_rate(&w, "20", NULL);
        snprintf(pid_arg, sizeof(pid_arg), "--pid=%d", (int) w.pid);
        started = test_now();
        test_daemon_start(&d, config, NULL, (const char *const[]) { pid_arg, NULL });
        test_daemon_wait_ready(&d);
        test_sleep(2.5);

        test_daemon_stats(&d, &s);
        ck_assert_msg(s.totals.v[DP_C_LOST] + s.totals.v[DP_C_LOST_SAMPLES] > 0, "nothing lost with a one-page ring");
        ck_assert_int_gt(s.totals.v[DP_C_MATCH], 0);
        test_stats_reconcile(&s);
        ck_assert_double_lt(get_stats_round_trip(&d), SERVED_WITHIN_SEC);
        test_workload_stop(&w);
        ck_assert_int_eq(test_daemon_stop(&d), 0);
        allowed = loss_reports_allowed(test_now() - started);

        /* Each CPU that lost says so once, and again only ten seconds later. */
        log = test_daemon_log(&d);
        for (size_t i = 0; i < s.n_cpus; i++) {
                char needle[64];
                size_t n;

                snprintf(needle, sizeof(needle), "CPU%lld: in the last ", (long long) s.cpus[i].cpu);
                n = test_count_lines(log, needle);
                ck_assert_msg(n <= allowed, "CPU%lld reported its losses %zu times:\n%s", (long long) s.cpus[i].cpu, n,
                              log);
                reports += n;
        }
        ck_assert_msg(reports >= 1, "no loss reported:\n%s", log);
        ck_assert_ptr_nonnull(strstr(log, "kernel loss records"));
        dp_stats_reply_done(&s);
        test_daemon_cleanup(&d);
}
END_TEST

/* A thread of @pid by its name. */
static pid_t find_thread(pid_t pid, const char *name) {
        char path[320], comm[32], want[32];
        struct dirent *de;
        pid_t found = 0;
        DIR *dir;

        snprintf(want, sizeof(want), "%s\n", name);
        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        dir = opendir(path);
        ck_assert_ptr_nonnull(dir);
        while (!found && (de = readdir(dir))) {
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int) pid, de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (fgets(comm, sizeof(comm), f) && strcmp(comm, want) == 0)
                        found = (pid_t) atoi(de->d_name);
                fclose(f);
        }
        closedir(dir);
        ck_assert_msg(found > 0, "no thread %s in %d", name, (int) pid);
        return found;
}

/* The tracker held still (ptrace, that thread only) behind 64-sample queues:
 * the readers drop and count, never wait; the API answers throughout. */
START_TEST(test_queue_overflow_with_stalled_tracker) {
        static const char *const config = "[Sampling]\nQueueSize=64\n" QUIET_DAMON;
        _cleanup_free_ char *log = NULL;
        struct dp_stats_reply before, during, after;
        struct test_workload w;
        struct test_daemon d;
        double slowest = 0, until;
        unsigned served = 0;
        char pid_arg[32];
        pid_t tracker;
        int status;
        double started;
        size_t allowed;

        test_workload_start(&w, "20");
        snprintf(pid_arg, sizeof(pid_arg), "--pid=%d", (int) w.pid);
        started = test_now();
        test_daemon_start(&d, config, NULL, (const char *const[]) { pid_arg, NULL });
        test_daemon_wait_ready(&d);
        test_sleep(0.5);

        test_daemon_stats(&d, &before);
        tracker = find_thread(d.pid, "dp-tracker");
        ck_assert_int_eq(ptrace(PTRACE_SEIZE, tracker, NULL, NULL), 0);
        ck_assert_int_eq(ptrace(PTRACE_INTERRUPT, tracker, NULL, NULL), 0);
        ck_assert_int_eq(waitpid(tracker, &status, __WALL), tracker);
        for (until = test_now() + 2; test_now() < until; test_sleep(0.2), served++)
                slowest = DP_MAX(slowest, get_stats_round_trip(&d));
        test_daemon_stats(&d, &during);
        ck_assert_int_eq(ptrace(PTRACE_DETACH, tracker, NULL, NULL), 0);

        /* Held: the readers went on reading, and dropped what the queues could not take. */
        ck_assert_msg(slowest < SERVED_WITHIN_SEC, "a GetStats round trip took %.3f s while the tracker stalled", slowest);
        ck_assert_msg(served >= 3, "only %u GetStats calls answered in the 2 s the tracker stalled", served);
        ck_assert_int_gt(during.totals.v[DP_C_CALLBACK], before.totals.v[DP_C_CALLBACK]);
        ck_assert_int_gt(during.totals.v[DP_C_WAKEUP], before.totals.v[DP_C_WAKEUP]);
        ck_assert_int_gt(during.totals.v[DP_C_OVERFLOW], before.totals.v[DP_C_OVERFLOW]);
        ck_assert_int_le(during.totals.v[DP_STATS_IN_FLIGHT], 64 * (int64_t) during.n_cpus);
        test_stats_reconcile(&during);

        /* Released: it drains again. */
        test_sleep(1.5);
        test_daemon_stats(&d, &after);
        ck_assert_int_gt(after.totals.v[DP_C_DEQUEUE], during.totals.v[DP_C_DEQUEUE]);
        test_stats_reconcile(&after);
        test_workload_stop(&w);
        ck_assert_int_eq(test_daemon_stop(&d), 0);
        allowed = loss_reports_allowed(test_now() - started);

        log = test_daemon_log(&d);
        for (size_t i = 0; i < after.n_cpus; i++) {
                char needle[64];

                snprintf(needle, sizeof(needle), "CPU%lld: in the last ", (long long) after.cpus[i].cpu);
                ck_assert_msg(test_count_lines(log, needle) <= allowed,
                              "CPU%lld: losses reported more than once in ten seconds:\n%s",
                              (long long) after.cpus[i].cpu, log);
        }
        ck_assert_msg(test_count_lines(log, "samples dropped on a full queue") >= 1, "no overflow logged:\n%s", log);
        ck_assert_ptr_null(strstr(log, "has not made progress"));      /* 2 s is no stall for the watchdog */
        dp_stats_reply_done(&before);
        dp_stats_reply_done(&during);
        dp_stats_reply_done(&after);
        test_daemon_cleanup(&d);
}
END_TEST

/* Whether a line of @log names @pid as a number of its own. */
static bool mentions_pid(const char *log, pid_t pid) {
        char needle[16];
        size_t n = (size_t) snprintf(needle, sizeof(needle), "%d", (int) pid);

        for (const char *p = strstr(log, needle); p; p = strstr(p + 1, needle))
                if ((p == log || p[-1] < '0' || p[-1] > '9') && (p[n] < '0' || p[n] > '9'))
                        return true;
        return false;
}

static bool is_target(struct test_daemon *d, pid_t pid) {
        json_t *reply = test_daemon_call(d, "GetTargets", NULL, NULL), *t;
        bool found = false;
        size_t i;

        json_array_foreach(json_object_get(reply, "targets"), i, t)
                found = found || json_integer_value(json_object_get(t, "pid")) == pid;
        json_decref(reply);
        return found;
}

/* The one process it tracks exits: dropped at the next refresh, quietly. */
START_TEST(test_target_exits) {
        static const char *const config = "[Tracking]\nMapsRefreshSec=500ms\n" QUIET_DAMON;
        _cleanup_free_ char *log = NULL;
        struct test_workload w;
        struct dp_stats_reply s;
        struct test_daemon d;
        const char *error;
        char pid_arg[32];
        json_t *parameters, *reply;
        size_t logged;

        test_workload_start(&w, "20");
        snprintf(pid_arg, sizeof(pid_arg), "--pid=%d", (int) w.pid);
        test_daemon_start(&d, config, NULL, (const char *const[]) { pid_arg, NULL });
        test_daemon_wait_ready(&d);
        for (double deadline = test_now() + 5; !is_target(&d, w.pid); test_sleep(0.1))
                ck_assert_msg(test_now() < deadline, "the workload never became a target");

        log = test_daemon_log(&d);
        logged = strlen(log);
        test_workload_stop(&w);
        for (double deadline = test_now() + 5; is_target(&d, w.pid); test_sleep(0.1))
                ck_assert_msg(test_now() < deadline, "the exited workload is still a target");
        parameters = json_pack("{s:i}", "target", (int) w.pid);
        reply = test_daemon_call(&d, "GetRegions", parameters, &error);
        ck_assert_ptr_null(reply);
        ck_assert_str_eq(error, "io.damon.perfd.NoSuchTarget");
        json_decref(parameters);

        /* A few more refreshes: still serving, still reconciling, and nothing said about it. */
        test_sleep(1.5);
        test_daemon_stats(&d, &s);
        test_stats_reconcile(&s);
        dp_stats_reply_done(&s);
        ck_assert_int_eq(test_daemon_stop(&d), 0);
        free(log);
        log = test_daemon_log(&d);
        ck_assert_msg(test_count_lines(log + logged, "error:") == 0 && !mentions_pid(log + logged, w.pid),
                      "the target's exit was noisy:\n%s", log + logged);
        test_daemon_cleanup(&d);
}
END_TEST

struct load {
        struct test_daemon *d;
        atomic_bool stop;
        atomic_uint_fast64_t events, calls;
};

/* A subscriber taking every sampled record it may. */
static void *monitor_samples(void *userdata) {
        struct load *l = userdata;
        _cleanup_varlink_client_ struct dp_varlink_client *c = NULL;
        json_t *parameters = json_pack("{s:b,s:i}", "samples", 1, "max_per_second", 10000), *reply = NULL;
        const char *error = NULL;
        int r;

        if (dp_varlink_client_connect(l->d->address, &c) < 0)
                return NULL;
        r = dp_varlink_client_call(c, "io.damon.perfd.Monitor", parameters, DP_VARLINK_CALL_MORE, &reply, &error);
        json_decref(parameters);
        while (r > 0 && !atomic_load(&l->stop)) {
                json_decref(reply);
                reply = NULL;
                atomic_fetch_add(&l->events, 1);
                r = dp_varlink_client_next(c, &reply, &error);
        }
        json_decref(reply);
        return NULL;
}

/* A client asking for everything, back to back, until the daemon goes. */
static void *hammer(void *userdata) {
        static const char *const methods[] = { "io.damon.perfd.GetStats", "io.damon.perfd.GetRegions",
                                               "io.damon.perfd.GetTargets", "io.damon.perfd.GetCPUs" };
        struct load *l = userdata;
        _cleanup_varlink_client_ struct dp_varlink_client *c = NULL;

        if (dp_varlink_client_connect(l->d->address, &c) < 0)
                return NULL;
        for (size_t i = 0; !atomic_load(&l->stop); i++) {
                json_t *reply = NULL;
                const char *error = NULL;

                if (dp_varlink_client_call(c, methods[i % DP_ARRAY_SIZE(methods)], NULL, 0, &reply, &error) < 0)
                        break;
                json_decref(reply);
                atomic_fetch_add(&l->calls, 1);
        }
        return NULL;
}

/* SIGTERM while it samples a fast workload for every process, feeds a
 * subscriber and answers a client: it stops cleanly, status 0. */
START_TEST(test_sigterm_under_full_load) {
        _cleanup_free_ char *log = NULL;
        struct test_workload w;
        struct test_daemon d;
        struct load l = { .d = &d };
        pthread_t monitor, client;
        char socket_path[300], final[] = "/tmp/dp-faults-final-XXXXXX";
        struct dp_counter_values totals;
        const char *which = NULL;
        json_t *doc;
        int status, fd;

        fd = mkstemp(final);
        ck_assert_int_ge(fd, 0);
        close(fd);

        test_workload_start_rate(&w, "20", NULL);
        test_daemon_start(&d, QUIET_DAMON, NULL, (const char *const[]) { "--stats-file", final, NULL });
        test_daemon_wait_ready(&d);
        ck_assert_int_eq(pthread_create(&monitor, NULL, monitor_samples, &l), 0);
        ck_assert_int_eq(pthread_create(&client, NULL, hammer, &l), 0);
        test_sleep(2);
        ck_assert_msg(atomic_load(&l.events) > 0 && atomic_load(&l.calls) > 0, "no load: %llu events, %llu calls",
                      (unsigned long long) atomic_load(&l.events), (unsigned long long) atomic_load(&l.calls));

        snprintf(socket_path, sizeof(socket_path), "%s", d.address + strlen("unix:"));
        status = test_daemon_stop(&d);
        atomic_store(&l.stop, true);
        pthread_join(monitor, NULL);
        pthread_join(client, NULL);
        test_workload_stop(&w);

        log = test_daemon_log(&d);
        ck_assert_msg(status == 0, "damon-perfd exited %d under load:\n%s", status, log);
        ck_assert_uint_eq(test_count_lines(log, "received Terminated"), 1);
        ck_assert_ptr_nonnull(strstr(log, "info: stopped\n"));
        ck_assert_msg(!strstr(log, "Sanitizer"), "%s", log);
        ck_assert_int_eq(access(socket_path, F_OK), -1);

        /* Its last word: every sample queued was drained, and everything reconciles. */
        doc = json_load_file(final, 0, NULL);
        unlink(final);
        ck_assert_msg(doc, "no final stats written");
        for (int c = 0; c < _DP_C_MAX; c++) {
                json_t *v = json_object_get(json_object_get(doc, "totals"), dp_counter_name(c));

                ck_assert_msg(json_is_integer(v), "final totals.%s missing", dp_counter_name(c));
                totals.v[c] = (uint64_t) json_integer_value(v);
        }
        json_decref(doc);
        ck_assert_msg(dp_counters_check(&totals, &which) == 0, "final totals: %s", which);
        ck_assert_uint_eq(dp_counters_in_flight(&totals), 0);
        ck_assert_uint_gt(totals.v[DP_C_MATCH], 0);
        test_daemon_cleanup(&d);
}
END_TEST

int main(void) {
        Suite *s = suite_create("faults");
        TCase *tc = tcase_create("daemon");

        if (geteuid() != 0) {
                printf("test-faults: needs root for system-wide sampling; skipping\n");
                return 77;
        }
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_open_refused_on_one_cpu, 0, DP_ARRAY_SIZE(refusals));
        tcase_add_test(tc, test_cpu_offline_and_back);
        tcase_add_test(tc, test_kernel_ring_overflow);
        tcase_add_test(tc, test_queue_overflow_with_stalled_tracker);
        tcase_add_test(tc, test_target_exits);
        tcase_add_test(tc, test_sigterm_under_full_load);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
