/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "macro.h"
#include "log.h"

#define FIELDS_MAX 12
#define FIELD_SIZE 512

static int max_level = LOG_INFO;
static bool to_journal;
static log_journal_sink_t journal_sink;

/* One journal entry being put together: MESSAGE, MESSAGE_ID, PRIORITY,
 * SYSLOG_IDENTIFIER, then the event's own fields. */
struct entry {
        int priority;
        char field[FIELDS_MAX][FIELD_SIZE];
        size_t n;
};

/* JOURNAL_STREAM names the device:inode of the journal stream systemd gave us as stderr. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%lu:%lu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return false;
        return st.st_dev == dev && st.st_ino == ino;
}

void log_setup(void) {
        to_journal = stderr_is_journal();
}

void log_set_max_level(int level) {
        max_level = level;
}

bool log_debug_enabled(void) {
        return LOG_DEBUG <= max_level;
}

void log_set_journal_sink(log_journal_sink_t sink) {
        journal_sink = sink;
}

static const char *level_name(int priority) {
        switch (priority) {
        case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR:
                return "error";
        case LOG_WARNING:
                return "warning";
        case LOG_NOTICE:
                return "notice";
        case LOG_INFO:
                return "info";
        default:
                return "debug";
        }
}

static void entry_add(struct entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void entry_add(struct entry *e, const char *fmt, ...) {
        va_list ap;

        if (e->n >= FIELDS_MAX)
                return;
        va_start(ap, fmt);
        vsnprintf(e->field[e->n++], FIELD_SIZE, fmt, ap);
        va_end(ap);
}

/* Starts an entry: its message comes first, so the stderr line is field[0] past "MESSAGE=". */
static void entry_vbegin(struct entry *e, int priority, const char *message_id, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));
static void entry_vbegin(struct entry *e, int priority, const char *message_id, const char *fmt, va_list ap) {
        e->priority = priority;
        e->n = 1;
        strcpy(e->field[0], "MESSAGE=");
        vsnprintf(e->field[0] + strlen("MESSAGE="), FIELD_SIZE - strlen("MESSAGE="), fmt, ap);
        if (message_id)
                entry_add(e, "MESSAGE_ID=%s", message_id);
        entry_add(e, "PRIORITY=%d", priority);
        entry_add(e, "SYSLOG_IDENTIFIER=damon-perfd");
}

static void entry_begin(struct entry *e, int priority, const char *message_id, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
static void entry_begin(struct entry *e, int priority, const char *message_id, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        entry_vbegin(e, priority, message_id, fmt, ap);
        va_end(ap);
}

static void entry_send(const struct entry *e) {
        struct iovec iov[FIELDS_MAX];

        for (size_t i = 0; i < e->n; i++)
                iov[i] = (struct iovec) { .iov_base = (void *) e->field[i], .iov_len = strlen(e->field[i]) };
        if (journal_sink) {
                journal_sink(iov, e->n);
                return;
        }
        /* Should journald be gone, the line still reaches stderr. */
        if (to_journal && sd_journal_sendv(iov, (int) e->n) >= 0)
                return;
        fprintf(stderr, "damon-perfd: %s: %s\n", level_name(e->priority), e->field[0] + strlen("MESSAGE="));
}

void log_full(int priority, const char *fmt, ...) {
        struct entry e;
        va_list ap;

        if (priority > max_level)
                return;
        va_start(ap, fmt);
        entry_vbegin(&e, priority, NULL, fmt, ap);
        va_end(ap);
        entry_send(&e);
}

int log_full_errno(int priority, int error, const char *fmt, ...) {
        int saved_errno = errno;
        struct entry e;
        va_list ap;

        error = abs(error);
        if (priority > max_level)
                return -error;
        va_start(ap, fmt);
        errno = error;          /* for %m */
        entry_vbegin(&e, priority, NULL, fmt, ap);
        va_end(ap);
        entry_send(&e);
        errno = saved_errno;
        return -error;
}

void log_started(const char *version) {
        struct entry e;

        if (LOG_INFO > max_level)
                return;
        entry_begin(&e, LOG_INFO, LOG_MESSAGE_STARTED, "damon-perfd %s starting", version);
        entry_add(&e, "DAMON_PERFD_VERSION=%s", version);
        entry_send(&e);
}

void log_ready(const char *source, size_t running, size_t total) {
        struct entry e;

        if (LOG_INFO > max_level)
                return;
        entry_begin(&e, LOG_INFO, LOG_MESSAGE_READY, "ready: sampling %zu/%zu CPUs with %s", running, total,
                    source);
        entry_add(&e, "DAMON_PERFD_SOURCE=%s", source);
        entry_add(&e, "DAMON_PERFD_CPUS_RUNNING=%zu", running);
        entry_add(&e, "DAMON_PERFD_CPUS_TOTAL=%zu", total);
        entry_send(&e);
}

void log_reloading(void) {
        struct entry e;

        if (LOG_INFO > max_level)
                return;
        entry_begin(&e, LOG_INFO, LOG_MESSAGE_RELOADING,
                    "reload: re-reading the configuration and target ranges, retrying CPUs in ERROR");
        entry_send(&e);
}

void log_stopping(const char *reason) {
        struct entry e;

        if (LOG_INFO > max_level)
                return;
        entry_begin(&e, LOG_INFO, LOG_MESSAGE_STOPPING, "%s, stopping", reason);
        entry_add(&e, "DAMON_PERFD_REASON=%s", reason);
        entry_send(&e);
}

void log_stopped(int error) {
        int priority = error < 0 ? LOG_ERR : LOG_INFO;
        struct entry e;

        if (priority > max_level)
                return;
        if (error < 0)
                entry_begin(&e, priority, LOG_MESSAGE_STOPPED, "stopped: %s", strerror(-error));
        else
                entry_begin(&e, priority, LOG_MESSAGE_STOPPED, "stopped");
        entry_add(&e, "DAMON_PERFD_ERRNO=%d", -error);
        entry_send(&e);
}

void log_cpu_transition(int cpu, enum dp_cpu_state from, enum dp_cpu_state to, enum dp_cpu_step step, int error,
                        const char *pmu) {
        /* A CPU taken offline is the administrator's doing, not a failure. */
        int priority = to != DP_CPU_ERROR ? LOG_INFO : step == DP_STEP_OFFLINE ? LOG_WARNING : LOG_ERR;
        struct entry e;

        if (priority > max_level)
                return;
        /* The message in capitals for people, the fields in the wire's lowercase. */
        if (to == DP_CPU_ERROR && step == DP_STEP_OFFLINE)
                /* The cause, once: the reopening that follows its return logs the way back up. */
                entry_begin(&e, priority, LOG_MESSAGE_CPU_STATE,
                            "CPU%d: %s -> ERROR at offline: the CPU went offline, its perf event is dead; "
                            "the sampler is closed and reopens when the CPU is back online", cpu,
                            dp_cpu_state_label(from));
        else if (to == DP_CPU_ERROR)
                entry_begin(&e, priority, LOG_MESSAGE_CPU_STATE, "CPU%d: %s -> ERROR at %s: %s", cpu,
                            dp_cpu_state_label(from), dp_cpu_step_name(step), strerror(-error));
        else
                entry_begin(&e, priority, LOG_MESSAGE_CPU_STATE, "CPU%d: %s -> %s", cpu, dp_cpu_state_label(from),
                            dp_cpu_state_label(to));
        entry_add(&e, "DAMON_PERFD_CPU=%d", cpu);
        entry_add(&e, "DAMON_PERFD_STATE=%s", dp_cpu_state_name(to));
        entry_add(&e, "DAMON_PERFD_PREV_STATE=%s", dp_cpu_state_name(from));
        entry_add(&e, "DAMON_PERFD_ERRNO=%d", -error);
        entry_add(&e, "DAMON_PERFD_STEP=%s", dp_cpu_step_name(step));
        entry_add(&e, "DAMON_PERFD_PMU=%s", pmu ?: "?");
        entry_send(&e);
}

void log_source_selected(const char *source, bool hardware, const char *reason) {
        struct entry e;

        if (LOG_NOTICE > max_level)
                return;
        if (hardware)
                entry_begin(&e, LOG_NOTICE, LOG_MESSAGE_SOURCE_SELECTED, "sample source: %s", reason);
        else
                entry_begin(&e, LOG_NOTICE, LOG_MESSAGE_SOURCE_SELECTED,
                            "sample source (not hardware memory sampling): %s", reason);
        entry_add(&e, "DAMON_PERFD_SOURCE=%s", source);
        entry_add(&e, "DAMON_PERFD_HARDWARE=%d", hardware);
        entry_send(&e);
}

void log_samples_lost(int cpu, uint64_t overflow, uint64_t lost, uint64_t lost_samples, uint64_t interval_sec) {
        struct entry e;

        if (LOG_WARNING > max_level)
                return;
        entry_begin(&e, LOG_WARNING, LOG_MESSAGE_SAMPLES_LOST,
                    "CPU%d: in the last %" PRIu64 " s, %" PRIu64 " samples dropped on a full queue, "
                    "%" PRIu64 " kernel loss records, %" PRIu64 " samples lost by the kernel",
                    cpu, interval_sec, overflow, lost, lost_samples);
        entry_add(&e, "DAMON_PERFD_CPU=%d", cpu);
        entry_add(&e, "DAMON_PERFD_OVERFLOW=%" PRIu64, overflow);
        entry_add(&e, "DAMON_PERFD_LOST=%" PRIu64, lost);
        entry_add(&e, "DAMON_PERFD_LOST_SAMPLES=%" PRIu64, lost_samples);
        entry_add(&e, "DAMON_PERFD_INTERVAL_SEC=%" PRIu64, interval_sec);
        entry_send(&e);
}

void log_tracker_stalled(uint64_t age_ms, uint64_t watchdog_usec) {
        struct entry e;

        if (LOG_ERR > max_level)
                return;
        if (watchdog_usec)
                entry_begin(&e, LOG_ERR, LOG_MESSAGE_TRACKER_STALLED,
                            "the region tracker has not made progress for %" PRIu64 " ms; "
                            "stopping the watchdog pings", age_ms);
        else
                entry_begin(&e, LOG_ERR, LOG_MESSAGE_TRACKER_STALLED,
                            "the region tracker has not made progress for %" PRIu64 " ms", age_ms);
        entry_add(&e, "DAMON_PERFD_STALL_MSEC=%" PRIu64, age_ms);
        entry_add(&e, "DAMON_PERFD_WATCHDOG_USEC=%" PRIu64, watchdog_usec);
        entry_send(&e);
}

void log_tracker_recovered(uint64_t stalled_ms) {
        struct entry e;

        if (LOG_NOTICE > max_level)
                return;
        entry_begin(&e, LOG_NOTICE, LOG_MESSAGE_TRACKER_RECOVERED,
                    "the region tracker is making progress again after %" PRIu64 " ms", stalled_ms);
        entry_add(&e, "DAMON_PERFD_STALL_MSEC=%" PRIu64, stalled_ms);
        entry_send(&e);
}

void log_damon_role(const char *role, int kdamond, const char *reason) {
        struct entry e;

        if (LOG_NOTICE > max_level)
                return;
        entry_begin(&e, LOG_NOTICE, LOG_MESSAGE_DAMON_ROLE, "DAMON: %s: %s", role, reason);
        entry_add(&e, "DAMON_PERFD_DAMON_ROLE=%s", role);
        entry_add(&e, "DAMON_PERFD_KDAMOND=%d", kdamond);
        entry_send(&e);
}

void log_damon_error(const char *step, const char *path, int error, int kdamond, uint64_t count) {
        /* EBUSY is DAMON's sysfs lock held by another writer: it passes. */
        int priority = error == EBUSY ? LOG_NOTICE : LOG_WARNING;
        struct entry e;

        if (priority > max_level)
                return;
        if (strcmp(step, "kdamond-stopped") == 0)
                entry_begin(&e, priority, LOG_MESSAGE_DAMON_ERROR,
                            "DAMON: kdamond %d stopped without us (every target exited, or it was turned off); "
                            "if it is ours, the next commit turns it on again", kdamond);
        else if (error == EBUSY)
                entry_begin(&e, priority, LOG_MESSAGE_DAMON_ERROR,
                            "DAMON: %s busy: %s%s%s (kdamond %d; another writer holds DAMON's sysfs lock; retrying "
                            "shortly, further ones are only counted)", step, path && *path ? path : "",
                            path && *path ? ": " : "", strerror(error), kdamond);
        else
                entry_begin(&e, priority, LOG_MESSAGE_DAMON_ERROR,
                            "DAMON: %s failed: %s%s%s (kdamond %d; retrying with backoff, further failures of this "
                            "kind are only counted)", step, path && *path ? path : "", path && *path ? ": " : "",
                            strerror(error), kdamond);
        entry_add(&e, "DAMON_PERFD_DAMON_STEP=%s", step);
        if (path && *path)
                entry_add(&e, "DAMON_PERFD_SYSFS_PATH=%s", path);
        entry_add(&e, "DAMON_PERFD_ERRNO=%d", error);
        entry_add(&e, "DAMON_PERFD_KDAMOND=%d", kdamond);
        entry_add(&e, "DAMON_PERFD_COUNT=%" PRIu64, count);
        entry_send(&e);
}

void log_damon_restored(const char *role, int kdamond, int error) {
        struct entry e;
        /* EEXIST: not ours any more, nothing went wrong. */
        int priority = error && error != EEXIST ? LOG_ERR : LOG_NOTICE;

        if (priority > max_level)
                return;
        if (error == EEXIST)
                entry_begin(&e, priority, LOG_MESSAGE_DAMON_RESTORED,
                            "DAMON: left %s kdamond %d as it is: it runs with another pid than ours, someone restarted "
                            "it with their own settings", role, kdamond);
        else if (error)
                entry_begin(&e, priority, LOG_MESSAGE_DAMON_RESTORED,
                            "DAMON: restoring %s kdamond %d failed: %s", role, kdamond, strerror(error));
        else
                entry_begin(&e, priority, LOG_MESSAGE_DAMON_RESTORED,
                            "DAMON: restored %s kdamond %d", role, kdamond);
        entry_add(&e, "DAMON_PERFD_DAMON_ROLE=%s", role);
        entry_add(&e, "DAMON_PERFD_KDAMOND=%d", kdamond);
        entry_add(&e, "DAMON_PERFD_ERRNO=%d", error);
        entry_send(&e);
}
