/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-journal.h>

#include "log.h"

static int max_level = LOG_INFO;
static bool to_journal;

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

void log_full(int priority, const char *fmt, ...) {
        char message[1024];
        va_list ap;

        if (priority > max_level)
                return;
        va_start(ap, fmt);
        vsnprintf(message, sizeof(message), fmt, ap);
        va_end(ap);

        if (to_journal)
                sd_journal_send("MESSAGE=%s", message, "PRIORITY=%d", priority, NULL);
        else
                fprintf(stderr, "damon-perfd: %s: %s\n", level_name(priority), message);
}

void log_cpu_transition(int cpu, enum dp_cpu_state from, enum dp_cpu_state to, enum dp_cpu_step step, int error,
                        const char *pmu) {
        int priority = to == DP_CPU_ERROR ? LOG_ERR : LOG_INFO;
        char message[256];

        if (priority > max_level)
                return;
        if (to == DP_CPU_ERROR)
                snprintf(message, sizeof(message), "CPU%d: %s -> ERROR at %s: %s", cpu, dp_cpu_state_name(from),
                         dp_cpu_step_name(step), strerror(-error));
        else
                snprintf(message, sizeof(message), "CPU%d: %s -> %s", cpu, dp_cpu_state_name(from),
                         dp_cpu_state_name(to));

        if (to_journal)
                sd_journal_send("MESSAGE=%s", message, "PRIORITY=%d", priority, "DAMON_PERFD_CPU=%d", cpu,
                                "DAMON_PERFD_STATE=%s", dp_cpu_state_name(to), "DAMON_PERFD_PREV_STATE=%s",
                                dp_cpu_state_name(from), "DAMON_PERFD_ERRNO=%d", -error, "DAMON_PERFD_PMU=%s", pmu,
                                NULL);
        else
                fprintf(stderr, "damon-perfd: %s: %s\n", level_name(priority), message);
}
