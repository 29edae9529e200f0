/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "perf-attr-print.h"
#include "pmu-select.h"
#include "print-events.h"

static bool same_plan(const struct dp_event_plan *a, const struct dp_event_plan *b) {
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

/* "0-3,6": @cpus[0..n), ascending. */
static void format_cpus(const int *cpus, size_t n, char *buf, size_t size) {
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n && used < size; i++) {
                size_t j = i;

                while (j + 1 < n && cpus[j + 1] == cpus[j] + 1)
                        j++;
                used += (size_t) (j > i ? snprintf(buf + used, size - used, "%s%d-%d", used ? "," : "", cpus[i], cpus[j])
                                        : snprintf(buf + used, size - used, "%s%d", used ? "," : "", cpus[i]));
                i = j;
        }
}

static void print_plan(const struct dp_event_plan *plan, const char *source, const int *cpus, size_t n) {
        char list[512];

        format_cpus(cpus, n, list, sizeof(list));
        printf("# cpus %s: %s on %s, %zu event%s", list, source, plan->pmu, plan->n, plan->n == 1 ? "" : "s");
        if (plan->aux_pages)
                printf(", AUX area of %u pages", plan->aux_pages);
        printf("\n");
        if (plan->note[0])
                printf("# note: %s\n", plan->note);
        for (size_t i = 0; i < plan->n; i++) {
                const struct dp_event_spec *e = &plan->event[i];

                printf("# event %zu: %s, ", i, e->role ?: "?");
                if (e->leader == i)
                        printf("group leader");
                else
                        printf("in the group of event %zu", e->leader);
                printf("%s\n", i == plan->ring ? ", carries the ring" : e->sampling ? ", samples into the ring" : "");
                (void) dp_perf_attr_fprint(stdout, &e->attr);
        }
}

/* One block per run of CPUs whose plans are the same. */
static int print_cpus(const struct pmu_selection *sel, const struct dp_source_options *options,
                      const struct dp_cpu_list *cpus) {
        _cleanup_free_ struct dp_event_plan *plans = calloc(2, sizeof(*plans));
        struct dp_event_plan *run = plans, *plan = plans + 1;
        size_t first = 0, n_run = 0;    /* run: cpus->cpu[first, first + n_run) */
        int failed = 0;

        if (!plans)
                return log_error_errno(-ENOMEM, "out of memory");
        for (size_t i = 0; i < cpus->n; i++) {
                int r = dp_source_build_events(sel->choice.source, options, cpus->cpu[i], plan);

                if (r >= 0 && n_run > 0 && same_plan(plan, run)) {
                        n_run++;
                        continue;
                }
                if (n_run > 0)
                        print_plan(run, sel->choice.source->name, cpus->cpu + first, n_run);
                n_run = 0;
                if (r < 0) {
                        log_error("cpu%d: %s", cpus->cpu[i], plan->note[0] ? plan->note : strerror(-r));
                        failed = r;
                        continue;
                }
                {       /* this plan starts the next run */
                        struct dp_event_plan *t = run;

                        run = plan;
                        plan = t;
                }
                first = i;
                n_run = 1;
        }
        if (n_run > 0)
                print_plan(run, sel->choice.source->name, cpus->cpu + first, n_run);
        return failed;
}

int print_events_run(const struct manager_options *o) {
        _cleanup_free_ struct dp_cpu_list *cpus = malloc(sizeof(*cpus));
        struct pmu_selection sel;
        struct dp_source_options options;
        int r;

        if (!cpus)
                return log_error_errno(-ENOMEM, "out of memory");
        r = manager_cpu_list(&o->config, cpus);
        if (r < 0)
                return r;
        r = pmu_selection_run(o->config.source, NULL, &sel);
        if (r < 0)
                return r;
        pmu_selection_source_options(&sel, &o->config, &options);
        printf("# source %s: %s\n", sel.choice.source->name, sel.choice.reason);
        r = print_cpus(&sel, &options, cpus);
        pmu_selection_done(&sel);
        if (fflush(stdout) != 0)
                return -EIO;
        return r;
}
