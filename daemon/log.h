/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <syslog.h>

#include "damon-perfd/counters.h"

/* Under systemd (stderr connected to the journal) entries go to journald with
 * structured fields; in a foreground run they are readable lines on stderr. */
void log_setup(void);
void log_set_max_level(int level);

void log_full(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)

/* One entry per per-CPU lifecycle transition. */
void log_cpu_transition(int cpu, enum dp_cpu_state from, enum dp_cpu_state to, enum dp_cpu_step step, int error,
                        const char *pmu);
