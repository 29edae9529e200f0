/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <string.h>

#include "stats.h"

void dp_stats_collect(struct dp_stats_view *view, const struct dp_cpu_stats *const *stats, const int *cpu_ids,
                      size_t n) {
        memset(&view->total, 0, sizeof(view->total));
        view->n_cpus = n;
        for (size_t i = 0; i < n; i++) {
                view->cpus[i].cpu = cpu_ids[i];
                view->cpus[i].status = dp_cpu_get_status(stats[i]);
                dp_counters_snapshot(stats[i], &view->cpus[i].counters);
                dp_counters_sum(&view->total, &view->cpus[i].counters);
        }
}

size_t dp_stats_count_state(const struct dp_stats_view *view, enum dp_cpu_state state) {
        size_t n = 0;

        for (size_t i = 0; i < view->n_cpus; i++)
                n += view->cpus[i].status.state == state;
        return n;
}

json_t *dp_source_to_json(const struct dp_source *source, const char *reason) {
        return json_pack("{s:s,s:s,s:b,s:s,s:s}",
                         "name", source->name,
                         "pmu", source->pmu,
                         "hardware", source->hardware,
                         "description", source->description,
                         "reason", reason ?: "");
}

json_t *dp_counters_to_json(const struct dp_counter_values *v) {
        json_t *o = json_object();

        if (!o)
                return NULL;
        for (int c = 0; c < _DP_C_MAX; c++)
                json_object_set_new(o, dp_counter_name(c), json_integer((json_int_t) v->v[c]));
        json_object_set_new(o, "in_flight", json_integer((json_int_t) dp_counters_in_flight(v)));
        return o;
}

json_t *dp_stats_to_json(const struct dp_stats_view *view) {
        json_t *cpus = json_array();

        if (!cpus)
                return NULL;
        for (size_t i = 0; i < view->n_cpus; i++) {
                const struct dp_cpu_view *c = &view->cpus[i];

                json_array_append_new(cpus, json_pack("{s:i,s:s,s:o}",
                                                      "cpu", c->cpu,
                                                      "state", dp_cpu_state_name(c->status.state),
                                                      "counters", dp_counters_to_json(&c->counters)));
        }

        return json_pack("{s:o,s:I,s:f,s:o,s:o}",
                         "source", dp_source_to_json(view->source, view->source_reason),
                         "uptime_usec", (json_int_t) (view->uptime_ns / 1000),
                         "sample_rate", view->sample_rate,
                         "totals", dp_counters_to_json(&view->total),
                         "cpus", cpus);
}

static const struct {
        const char *layer;
        enum dp_counter first, last;
} layers[] = {
        { "1 create",   DP_C_CREATE,   DP_C_CREATE },
        { "2 bind",     DP_C_BIND,     DP_C_BIND },
        { "3 enable",   DP_C_ENABLE,   DP_C_ENABLE },
        { "4 sampling", DP_C_CALLBACK, DP_C_INV_PHYS },
        { "5 ring",     DP_C_ENQUEUE,  DP_C_WAKEUP },
        { "6 drain",    DP_C_DEQUEUE,  DP_C_DRAIN },
        { "7 match",    DP_C_MATCH,    DP_C_UPDATE },
        { "aux",        DP_C_AUX_TRUNCATED, DP_C_SPE_NO_DATA },
};

void dp_stats_print(FILE *f, const struct dp_stats_view *view) {
        const uint64_t *t = view->total.v;

        fprintf(f, "source: %s on PMU %s%s\n", view->source->name, view->source->pmu,
                view->source->hardware ? "" : "  [SOFTWARE POSITIVE CONTROL - not hardware access sampling]");
        if (view->source_reason && view->source_reason[0])
                fprintf(f, "source choice: %s\n", view->source_reason);
        fprintf(f, "uptime: %.1f s   CPUs running: %zu/%zu   in flight: %llu\n", (double) view->uptime_ns / 1e9,
                dp_stats_count_state(view, DP_CPU_RUNNING), view->n_cpus,
                (unsigned long long) dp_counters_in_flight(&view->total));
        fprintf(f, "┌────────────┬───────────────┬──────────────────┐\n");
        fprintf(f, "│ layer      │ counter       │            total │\n");
        fprintf(f, "├────────────┼───────────────┼──────────────────┤\n");
        for (size_t l = 0; l < DP_ARRAY_SIZE(layers); l++)
                for (enum dp_counter c = layers[l].first; c <= layers[l].last; c++)
                        fprintf(f, "│ %-10s │ %-13s │ %16llu │\n", c == layers[l].first ? layers[l].layer : "",
                                dp_counter_name(c), (unsigned long long) t[c]);
        fprintf(f, "└────────────┴───────────────┴──────────────────┘\n");

        for (size_t i = 0; i < view->n_cpus; i++) {
                const struct dp_cpu_view *c = &view->cpus[i];
                const uint64_t *v = c->counters.v;

                fprintf(f, "CPU%02d: st=%-7s cb=%llu enq=%llu deq=%llu ovf=%llu lost=%llu match=%llu miss=%llu upd=%llu",
                        c->cpu, dp_cpu_state_label(c->status.state), (unsigned long long) v[DP_C_CALLBACK],
                        (unsigned long long) v[DP_C_ENQUEUE], (unsigned long long) v[DP_C_DEQUEUE],
                        (unsigned long long) v[DP_C_OVERFLOW], (unsigned long long) v[DP_C_LOST],
                        (unsigned long long) v[DP_C_MATCH],
                        (unsigned long long) (v[DP_C_MISS_TGID] + v[DP_C_MISS_REGION] + v[DP_C_MISS_BOUND]),
                        (unsigned long long) v[DP_C_UPDATE]);
                if (c->status.state == DP_CPU_ERROR)
                        fprintf(f, " err=%s@%s", strerror(-c->status.error), dp_cpu_step_name(c->status.failed_step));
                fputc('\n', f);
        }
}
