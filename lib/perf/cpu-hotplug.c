/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "cpu-hotplug.h"

bool dp_hotplug_is_offline(struct dp_cpu_status status) {
        return status.state == DP_CPU_ERROR && status.failed_step == DP_STEP_OFFLINE;
}

enum dp_hotplug_action dp_hotplug_decide(bool online, struct dp_cpu_status status) {
        if (!online)
                return dp_hotplug_is_offline(status) ? DP_HOTPLUG_KEEP : DP_HOTPLUG_CLOSE;
        return dp_hotplug_is_offline(status) ? DP_HOTPLUG_REOPEN : DP_HOTPLUG_KEEP;
}

bool dp_event_liveness_stalled(struct dp_event_liveness *l, uint64_t time_enabled) {
        bool stalled = l->seen && time_enabled == l->time_enabled;

        l->time_enabled = time_enabled;
        l->seen = true;
        return stalled;
}
