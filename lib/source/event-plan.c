/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "event-plan.h"

int dp_event_plan_note(struct dp_event_plan *plan, int error, const char *fmt, ...) {
        size_t used = strlen(plan->note);
        va_list ap;

        if (used && used + 2 < sizeof(plan->note)) {
                strcpy(plan->note + used, "; ");
                used += 2;
        }
        if (used < sizeof(plan->note)) {
                va_start(ap, fmt);
                vsnprintf(plan->note + used, sizeof(plan->note) - used, fmt, ap);
                va_end(ap);
        }
        return error;
}

void dp_event_plan_single(struct dp_event_plan *plan, const char *role) {
        plan->n = 1;
        plan->ring = 0;
        plan->event[0].leader = 0;
        plan->event[0].sampling = true;
        plan->event[0].role = role;
}
