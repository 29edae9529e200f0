/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "event-plan.h"
#include "perf-attr-print.h"

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

bool dp_event_plan_equal(const struct dp_event_plan *a, const struct dp_event_plan *b) {
        if (a->n != b->n || a->ring != b->ring || a->aux_pages != b->aux_pages || strcmp(a->pmu, b->pmu) != 0 ||
            strcmp(a->note, b->note) != 0)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (a->event[i].leader != b->event[i].leader || a->event[i].sampling != b->event[i].sampling ||
                    strcmp(a->event[i].role ?: "", b->event[i].role ?: "") != 0 ||
                    memcmp(&a->event[i].attr, &b->event[i].attr, sizeof(a->event[i].attr)) != 0)
                        return false;
        return true;
}

int dp_event_plan_fprint(FILE *f, const struct dp_event_plan *plan, const char *source, const char *cpus) {
        fprintf(f, "# cpus %s: %s on %s, %zu event%s", cpus, source, plan->pmu, plan->n, plan->n == 1 ? "" : "s");
        if (plan->aux_pages)
                fprintf(f, ", AUX area of %" PRIu32 " pages", plan->aux_pages);
        fprintf(f, "\n");
        if (plan->note[0])
                fprintf(f, "# note: %s\n", plan->note);
        for (size_t i = 0; i < plan->n; i++) {
                const struct dp_event_spec *e = &plan->event[i];

                fprintf(f, "# event %zu: %s, ", i, e->role ?: "?");
                if (e->leader == i)
                        fprintf(f, "group leader");
                else
                        fprintf(f, "in the group of event %zu", e->leader);
                fprintf(f, "%s\n", i == plan->ring ? ", carries the ring" : e->sampling ? ", samples into the ring" : "");
                if (dp_perf_attr_fprint(f, &e->attr) < 0)
                        return -EIO;
        }
        return ferror(f) ? -EIO : 0;
}
