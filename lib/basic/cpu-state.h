/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The per-CPU sampler state machine.  A CPU's state lives in its struct
 * dp_cpu_stats (counters.h) as one atomic word: state | step << 8 |
 * (uint32_t) -error << 16, so that a reader on another thread sees a
 * consistent triple without a lock.  A zeroed word is DP_CPU_UNINIT.
 */

struct dp_cpu_stats;

enum dp_cpu_state {
        DP_CPU_UNINIT,
        DP_CPU_CREATED,
        DP_CPU_BOUND,
        DP_CPU_ENABLED,
        DP_CPU_RUNNING,
        DP_CPU_ERROR,
        _DP_CPU_STATE_MAX,
};

/* The step that failed, carried by DP_CPU_ERROR. */
enum dp_cpu_step {
        DP_STEP_NONE,
        DP_STEP_CREATE,
        DP_STEP_BIND,
        DP_STEP_ENABLE,
        DP_STEP_RUN,
        DP_STEP_OFFLINE,        /* the CPU went offline: its sampler is closed until it is back (-ENODEV) */
        _DP_STEP_MAX,
};

struct dp_cpu_status {
        enum dp_cpu_state state;
        enum dp_cpu_step failed_step;
        int error;              /* negative errno with DP_CPU_ERROR, else 0 */
};

/* The state's wire name, lowercase ("running"): varlink, JSON, journal
 * fields, Prometheus labels. */
const char *dp_cpu_state_name(enum dp_cpu_state s);
/* The same in capitals ("RUNNING"), for tables and log messages people read. */
const char *dp_cpu_state_label(enum dp_cpu_state s);
/* The state of a wire name, or -EINVAL for one this build does not know. */
int dp_cpu_state_from_name(const char *name);
/* The label of a wire name; a name this build does not know is returned as it is. */
const char *dp_cpu_state_label_of(const char *name);
const char *dp_cpu_step_name(enum dp_cpu_step s);

/* State machine.  Legal moves: UNINIT→CREATED→BOUND→ENABLED→RUNNING, any→ERROR
 * (with the failing step and a negative errno), any→UNINIT (teardown).  A CPU
 * that goes offline is ERROR at DP_STEP_OFFLINE with -ENODEV; when it comes
 * back it goes ERROR→UNINIT and up the lifecycle again, its counters carrying on.
 * Returns the previous state, or -EINVAL for an illegal move (state kept). */
int dp_cpu_transition(struct dp_cpu_stats *s, enum dp_cpu_state to, enum dp_cpu_step step, int error);
struct dp_cpu_status dp_cpu_get_status(const struct dp_cpu_stats *s);
