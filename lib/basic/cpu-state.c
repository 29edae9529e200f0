/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "counters.h"
#include "cpu-state.h"

/* The wire names (varlink, JSON, journal fields, Prometheus labels) are
 * lowercase, as in systemd's interfaces: strict varlink clients (the Go
 * library) accept enum values that start with a lowercase letter only. */
static const char *const state_names[_DP_CPU_STATE_MAX] = {
        [DP_CPU_UNINIT] = "uninit",
        [DP_CPU_CREATED] = "created",
        [DP_CPU_BOUND] = "bound",
        [DP_CPU_ENABLED] = "enabled",
        [DP_CPU_RUNNING] = "running",
        [DP_CPU_ERROR] = "error",
};

/* What people read in tables and log messages. */
static const char *const state_labels[_DP_CPU_STATE_MAX] = {
        [DP_CPU_UNINIT] = "UNINIT",
        [DP_CPU_CREATED] = "CREATED",
        [DP_CPU_BOUND] = "BOUND",
        [DP_CPU_ENABLED] = "ENABLED",
        [DP_CPU_RUNNING] = "RUNNING",
        [DP_CPU_ERROR] = "ERROR",
};

static const char *const step_names[_DP_STEP_MAX] = {
        [DP_STEP_NONE] = "none",
        [DP_STEP_CREATE] = "create",
        [DP_STEP_BIND] = "bind",
        [DP_STEP_ENABLE] = "enable",
        [DP_STEP_RUN] = "run",
        [DP_STEP_OFFLINE] = "offline",
};

const char *dp_cpu_state_name(enum dp_cpu_state s) {
        return (unsigned) s < _DP_CPU_STATE_MAX ? state_names[s] : "invalid";
}

const char *dp_cpu_state_label(enum dp_cpu_state s) {
        return (unsigned) s < _DP_CPU_STATE_MAX ? state_labels[s] : "INVALID";
}

int dp_cpu_state_from_name(const char *name) {
        if (!name)
                return -EINVAL;
        for (int s = 0; s < _DP_CPU_STATE_MAX; s++)
                if (strcmp(state_names[s], name) == 0)
                        return s;
        return -EINVAL;
}

const char *dp_cpu_state_label_of(const char *name) {
        int s = dp_cpu_state_from_name(name);

        return s >= 0 ? state_labels[s] : name;
}

const char *dp_cpu_step_name(enum dp_cpu_step s) {
        return (unsigned) s < _DP_STEP_MAX ? step_names[s] : "invalid";
}

static uint64_t status_pack(enum dp_cpu_state state, enum dp_cpu_step step, int error) {
        return (uint64_t) state | (uint64_t) step << 8 | (uint64_t) (uint32_t) -error << 16;
}

struct dp_cpu_status dp_cpu_get_status(const struct dp_cpu_stats *s) {
        uint64_t w = atomic_load_explicit(&((struct dp_cpu_stats *) s)->status, memory_order_acquire);

        return (struct dp_cpu_status) {
                .state = w & 0xff,
                .failed_step = (w >> 8) & 0xff,
                .error = -(int) (uint32_t) (w >> 16),
        };
}

static bool transition_legal(enum dp_cpu_state from, enum dp_cpu_state to) {
        switch (to) {
        case DP_CPU_UNINIT:
        case DP_CPU_ERROR:
                return true;
        case DP_CPU_CREATED:
                return from == DP_CPU_UNINIT;
        case DP_CPU_BOUND:
                return from == DP_CPU_CREATED;
        case DP_CPU_ENABLED:
                return from == DP_CPU_BOUND;
        case DP_CPU_RUNNING:
                return from == DP_CPU_ENABLED;
        default:
                return false;
        }
}

int dp_cpu_transition(struct dp_cpu_stats *s, enum dp_cpu_state to, enum dp_cpu_step step, int error) {
        uint64_t old = atomic_load_explicit(&s->status, memory_order_acquire);

        for (;;) {
                enum dp_cpu_state from = old & 0xff;
                uint64_t new;

                if (!transition_legal(from, to))
                        return -EINVAL;
                if (to == DP_CPU_ERROR) {
                        if (error >= 0 || step == DP_STEP_NONE || (unsigned) step >= _DP_STEP_MAX)
                                return -EINVAL;
                        new = status_pack(to, step, error);
                } else
                        new = status_pack(to, DP_STEP_NONE, 0);

                if (atomic_compare_exchange_weak_explicit(&s->status, &old, new, memory_order_acq_rel,
                                                          memory_order_acquire))
                        return (int) from;
        }
}
