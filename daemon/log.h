/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <syslog.h>

#include "cpu-state.h"

/*
 * The fixed MESSAGE_ID of every kind of event the daemon reports; each one is
 * explained in systemd/damon-perfd.catalog (journalctl -x).  Never change an
 * ID once released: users filter on them.
 */
#define LOG_MESSAGE_STARTED             "5d66f1ec37094c6b96c316036ddcb891"
#define LOG_MESSAGE_READY               "0d96b8e94ac34ae6b1cfaed925b01dcf"
#define LOG_MESSAGE_RELOADING           "845aa9c2a024472ba58279f61831285f"
#define LOG_MESSAGE_STOPPING            "78b171593e23411db3547d8f987f8736"
#define LOG_MESSAGE_STOPPED             "aec5af5377df4494a5947d6546b12097"
#define LOG_MESSAGE_CPU_STATE           "f03f3697bb0c4e2c84ca0fdbf42557fd"
#define LOG_MESSAGE_SOURCE_SELECTED     "a3dcdd69306047ffa9d792442412d159"
#define LOG_MESSAGE_SAMPLES_LOST        "1f327ee72adc4f88bd02ecb151394f20"
#define LOG_MESSAGE_TRACKER_STALLED     "2b3f2e6516714e48a3e5c1f89a98deed"
#define LOG_MESSAGE_TRACKER_RECOVERED   "f2632e5cfb3d4dc0aea209a924715113"
#define LOG_MESSAGE_DAMON_ROLE          "adafc94ff55a4021af177fa61d96c7b9"
#define LOG_MESSAGE_DAMON_ERROR         "57e77db36b5e4402959045569df30014"
#define LOG_MESSAGE_DAMON_RESTORED      "57e08611a71a4f20a7596b5a67df26e5"

/* Under systemd (stderr connected to the journal) entries go to journald with
 * structured fields; in a foreground run they are readable lines on stderr. */
void log_setup(void);
void log_set_max_level(int level);
/* Whether log_debug() writes anything: so that a debug line's text is not
 * built for nothing. */
bool log_debug_enabled(void);

/* For tests: journal entries go to @sink instead of journald, whatever stderr
 * is; NULL restores log_setup()'s choice. */
typedef void (*log_journal_sink_t)(const struct iovec *iov, size_t n);
void log_set_journal_sink(log_journal_sink_t sink);

void log_full(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)

/*
 * Logs like log_full() with errno set to @error's value while @fmt is
 * formatted, so that %m names it, and returns -abs(@error): a failure is
 * logged and passed up in one line,
 *         return log_error_errno(r, "cannot listen on %s: %m", path);
 * @error may be a negative errno (as functions return it) or errno itself;
 * the caller's errno is left as it was.
 */
int log_full_errno(int priority, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_notice_errno(error, ...) log_full_errno(LOG_NOTICE, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)

/* The daemon's lifecycle. */
void log_started(const char *version);
void log_ready(const char *source, size_t running, size_t total);
void log_reloading(void);
void log_stopping(const char *reason);
void log_stopped(int error);

/* One entry per per-CPU lifecycle transition. */
void log_cpu_transition(int cpu, enum dp_cpu_state from, enum dp_cpu_state to, enum dp_cpu_step step, int error,
                        const char *pmu);

/* The sample source chosen, and why (@reason is the message). */
void log_source_selected(const char *source, bool hardware, const char *reason);

/* Samples lost on one CPU over @interval_sec: dropped on a full queue
 * (@overflow), and kernel-reported losses (@lost records, @lost_samples). */
void log_samples_lost(int cpu, uint64_t overflow, uint64_t lost, uint64_t lost_samples, uint64_t interval_sec);

/* The tracker thread has not passed its loop for @age_ms; @watchdog_usec is
 * the service watchdog (0: none), whose pings stop meanwhile. */
void log_tracker_stalled(uint64_t age_ms, uint64_t watchdog_usec);
void log_tracker_recovered(uint64_t stalled_ms);

/* DAMON: what the daemon does with it (owned, attached, observe-only, off)
 * and why; a failing step, once per cause; and the restore on stop.
 * @kdamond is -1 when none is involved. */
void log_damon_role(const char *role, int kdamond, const char *reason);
/* @path: the file whose read or write failed, NULL or "" when none did. */
void log_damon_error(const char *step, const char *path, int error, int kdamond, uint64_t count);
void log_damon_restored(const char *role, int kdamond, int error);
