/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * damonctl selftest's side effects, each undone by selftest_env_cleanup():
 * the workload it starts, the private damon-perfd of --standalone with its
 * temporary directory, and the probes of the environment.  Processes are
 * stopped by the pids started here, and die with damonctl (PR_SET_PDEATHSIG).
 * Nothing here writes to DAMON's sysfs.
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct selftest_env {
        /* The workload: its pid and hot area. */
        pid_t workload_pid;
        bool workload_inline;           /* a child of damonctl, not damon-perfd-workload */
        uint64_t hot_start, hot_end;

        /* --standalone: the private instance. */
        char dir[64];                   /* its temporary directory; "" when none */
        char config[PATH_MAX];          /* the configuration it runs with */
        char log[96];                   /* its stderr */
        char address[128];              /* unix:DIR/io.damon.perfd */
        pid_t daemon_pid;
};

/* @name next to damonctl, in @build_subdir beside damonctl's directory (the
 * build tree), or in $PATH and the sbin directories.  0 or -ENOENT. */
int selftest_find_program(const char *name, const char *build_subdir, char *ret, size_t size);

/* Starts the workload for @seconds: @path (damon-perfd-workload), or with
 * @path NULL a child of damonctl doing the same.  Reads its pid and hot area.
 * 0 or a negative errno, with the reason printed. */
int selftest_workload_start(struct selftest_env *e, const char *path, double seconds);

/* Keeps the workload on @cpus (those the daemon samples), so that a CPU in
 * ERROR cannot hide it.  0 or a negative errno. */
int selftest_workload_pin(struct selftest_env *e, const int *cpus, size_t n);

/* A temporary directory with the private configuration (@config NULL:
 * [DAMON] Mode=off) for the private instance.  0 or a negative errno. */
int selftest_standalone_prepare(struct selftest_env *e, const char *config);

/* Starts @daemon on the private socket, sampling only the workload, stopping
 * by itself after @seconds at the latest.  0 or a negative errno. */
int selftest_daemon_start(struct selftest_env *e, const char *daemon, double seconds);

/* Waits until the private instance answers with no CPU still on its way to
 * RUNNING.  0; -ECHILD when it exited (its status and last log line in
 * @why); -ETIMEDOUT; -EINTR when interrupted. */
int selftest_daemon_wait_ready(struct selftest_env *e, double timeout_sec, char *why, size_t size);

/* `@daemon --check-config [--config=@config]`: its exit status (0: valid),
 * the first error line in @first_error; or a negative errno. */
int selftest_check_config(const char *daemon, const char *config, char *first_error, size_t size);

/* Opens (and closes) a software page-fault counter on this process.  0 or a negative errno. */
int selftest_probe_perf_event_open(void);

/* Stops what was started (SIGTERM by pid, SIGKILL after a grace period) and
 * removes the temporary directory.  The private instance's exit status goes
 * to *daemon_status when it was running (-1 if it had to be killed). */
void selftest_env_cleanup(struct selftest_env *e, int *daemon_status);
