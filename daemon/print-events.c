/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "pmu-select.h"
#include "print-events.h"

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
        (void) dp_event_plan_fprint(stdout, plan, source, list);
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

                if (r >= 0 && n_run > 0 && dp_event_plan_equal(plan, run)) {
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
