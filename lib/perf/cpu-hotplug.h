/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * CPU hotplug, the pure part: what to do with a CPU's sampler when its CPU
 * goes offline or comes back, and how a reader tells that its event died.
 *
 * What Linux does to a CPU-bound perf event when the CPU goes offline (6.12,
 * perf_event_exit_cpu() -> __perf_event_exit_context(), seen in the qemu
 * guest): it detaches the event from the CPU's context and turns it off.  The
 * fd and its ring stay valid and readable, poll() reports no POLLHUP,
 * PERF_EVENT_IOC_ENABLE still returns 0, yet no sample ever comes again, not
 * even once the CPU is back: the event must be closed and opened anew, and
 * opening one while the CPU is offline fails with ENODEV.  From the moment it
 * is detached its time_enabled stands still, while an enabled live event's
 * grows with every read.
 *
 * So the daemon looks twice: each reader at its event's time_enabled at
 * every wake-up, at most once a second (dp_event_liveness_stalled()), which
 * also catches a CPU that went offline and came back between two looks at
 * the list; and the main loop at /sys/devices/system/cpu/online
 * (dp_hotplug_decide() per configured CPU) when a reader finds its event
 * stalled, and then once a second until every CPU runs again.
 */

#include <stdbool.h>
#include <stdint.h>

#include "cpu-state.h"

enum dp_hotplug_action {
        DP_HOTPLUG_KEEP,        /* nothing to do */
        DP_HOTPLUG_CLOSE,       /* the CPU is offline: close its sampler, ERROR at "offline" */
        DP_HOTPLUG_REOPEN,      /* the CPU is back after "offline": open its sampler again */
};

/* What a configured CPU's sampler in @status needs now that the CPU is
 * @online or not.  A CPU offline is closed whatever its state (one in ERROR
 * for another reason too: it is set up afresh when it returns); only a CPU
 * closed as offline is reopened by hotplug, other errors wait for a reload. */
enum dp_hotplug_action dp_hotplug_decide(bool online, struct dp_cpu_status status);

/* Whether a CPU's status is "closed because the CPU is offline". */
bool dp_hotplug_is_offline(struct dp_cpu_status status);

/* The time_enabled an event had at its last reading. */
struct dp_event_liveness {
        uint64_t time_enabled;
        bool seen;
};

/* Takes one reading of an enabled event's time_enabled; true when it has not
 * moved since the one before, i.e. the kernel detached the event.  Readings
 * must be far enough apart for time to pass (the reader's are a second). */
bool dp_event_liveness_stalled(struct dp_event_liveness *l, uint64_t time_enabled);
