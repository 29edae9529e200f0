/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "api.h"
#include "privileges.h"
#include "report.h"

json_t *api_get_stats(struct manager *m) {
        struct privileges_sets caps;
        json_t *reply;

        manager_collect(m);
        reply = dp_stats_to_json(&m->view);
        /* Read now rather than remembered: what the daemon really holds. */
        if (reply && (privileges_get(&caps) < 0 ||
                      json_object_set_new(reply, "capabilities", privileges_to_json(&caps)) < 0)) {
                json_decref(reply);
                return NULL;
        }
        return reply;
}

json_t *api_get_cpus(struct manager *m) {
        json_t *cpus = json_array();

        manager_collect(m);
        for (size_t i = 0; cpus && i < m->n; i++) {
                const struct sampler *s = &m->samplers[i];
                const struct dp_cpu_view *c = &m->view.cpus[i];
                bool failed = c->status.state == DP_CPU_ERROR;

                json_array_append_new(cpus, json_pack("{s:i,s:s,s:o,s:o,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
                        "cpu", c->cpu,
                        "state", dp_cpu_state_name(c->status.state),
                        "failed_step", failed ? json_string(dp_cpu_step_name(c->status.failed_step)) : json_null(),
                        "errno", failed ? json_integer(-c->status.error) : json_null(),
                        "pmu", m->source->pmu,
                        "pmu_type", (json_int_t) s->attr.type,
                        "config", (json_int_t) s->attr.config,
                        "sample_period", (json_int_t) s->attr.sample_period,
                        "ring_bytes", (json_int_t) m->o.config.ring_pages * (json_int_t) sysconf(_SC_PAGESIZE),
                        "queue_capacity", (json_int_t) m->o.config.queue_capacity,
                        "ring_peak", (json_int_t) c->counters.v[DP_C_RING_PEAK],
                        "lost", (json_int_t) (c->counters.v[DP_C_LOST] + c->counters.v[DP_C_LOST_SAMPLES])));
        }
        return json_pack("{s:o}", "cpus", cpus);
}

struct targets_query {
        const char *kind;
        json_t *result;
};

static int targets_to_json(const struct dp_tracker_snapshot *snap, void *userdata) {
        struct targets_query *q = userdata;
        json_t *targets = json_array();

        for (size_t i = 0; targets && i < snap->nr_targets; i++) {
                const struct dp_snapshot_target *t = &snap->targets[i];

                json_array_append_new(targets, json_pack("{s:I,s:s,s:I,s:I,s:I}",
                        "pid", (json_int_t) t->tgid,
                        "kind", q->kind,
                        "start", (json_int_t) t->start,
                        "end", (json_int_t) t->end,
                        "nr_regions", (json_int_t) t->nr_regions));
        }
        q->result = json_pack("{s:o,s:i,s:I}", "targets", targets, "max_nr_accesses", (int) snap->max_nr_accesses,
                              "aggregations", (json_int_t) snap->nr_aggregations);
        return q->result ? 0 : -ENOMEM;
}

json_t *api_get_targets(struct manager *m) {
        struct targets_query q = {
                /* The physical space is target 0 in paddr mode. */
                .kind = m->o.config.target_mode == DP_TARGETS_PHYS ? "physical" : "process",
        };

        (void) tracker_thread_with_snapshot(m->tracker, targets_to_json, &q);
        return q.result;
}

struct regions_query {
        int64_t target;
        size_t limit;
        json_t *result;
};

static int regions_to_json(const struct dp_tracker_snapshot *snap, void *userdata) {
        struct regions_query *q = userdata;
        _cleanup_free_ struct dp_hot_region *hot = NULL;
        json_t *regions;
        bool found = q->target < 0;
        size_t n;

        for (size_t i = 0; !found && i < snap->nr_targets; i++)
                found = snap->targets[i].tgid == (uint64_t) q->target;
        if (!found)
                return -ENOENT;

        hot = calloc(snap->nr_regions ?: 1, sizeof(*hot));
        regions = json_array();
        if (!hot || !regions) {
                json_decref(regions);
                return -ENOMEM;
        }
        n = dp_snapshot_hottest(snap, snap->nr_regions, hot);
        for (size_t i = 0; i < n && json_array_size(regions) < q->limit; i++) {
                const struct dp_snapshot_region *r = &hot[i].region;

                if (q->target >= 0 && hot[i].tgid != (uint64_t) q->target)
                        continue;
                json_array_append_new(regions, json_pack("{s:I,s:I,s:I,s:i,s:o,s:i}",
                        "target", (json_int_t) hot[i].tgid,
                        "start", (json_int_t) r->start,
                        "end", (json_int_t) r->end,
                        "nr_accesses", (int) r->last_nr_accesses,
                        "samples", report_region_samples(r),
                        "age", (int) r->age));
        }
        q->result = json_pack("{s:o,s:i,s:I,s:I}", "regions", regions,
                              "max_nr_accesses", (int) snap->max_nr_accesses,
                              "sample_interval_usec", (json_int_t) (snap->sample_interval_ns / 1000),
                              "aggr_interval_usec", (json_int_t) (snap->aggr_interval_ns / 1000));
        return q->result ? 0 : -ENOMEM;
}

int api_get_regions(struct manager *m, int64_t target, size_t limit, json_t **ret) {
        struct regions_query q = { .target = target, .limit = limit };
        int r = tracker_thread_with_snapshot(m->tracker, regions_to_json, &q);

        if (r < 0)
                return r;
        *ret = q.result;
        return 0;
}

static const char *damon_role_json(enum dp_damon_role role) {
        switch (role) {
        case DP_DAMON_ROLE_OWNED:
                return "owned";
        case DP_DAMON_ROLE_ATTACHED:
                return "attached";
        case DP_DAMON_ROLE_OBSERVE:
                return "observe_only";
        default:
                return "off";
        }
}

static json_t *damon_scheme_to_json(const struct dp_damon_scheme_info *s) {
        json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
                              "action", s->action, "sz_min", (json_int_t) DP_MIN(s->sz_min, (uint64_t) INT64_MAX),
                              "nr_accesses_min", (json_int_t) s->nr_accesses_min,
                              "nr_accesses_max", (json_int_t) s->nr_accesses_max,
                              "age_min", (json_int_t) s->age_min, "age_max", (json_int_t) s->age_max,
                              "quota_ms", (json_int_t) s->quota_ms,
                              "quota_bytes", (json_int_t) DP_MIN(s->quota_bytes, (uint64_t) INT64_MAX),
                              "quota_reset_ms", (json_int_t) s->quota_reset_ms, "watermarks", s->wmarks_metric,
                              "goals", (json_int_t) s->nr_goals, "filters", (json_int_t) s->nr_filters,
                              "nr_tried", (json_int_t) s->nr_tried,
                              "sz_tried", (json_int_t) DP_MIN(s->sz_tried, (uint64_t) INT64_MAX),
                              "nr_applied", (json_int_t) s->nr_applied,
                              "sz_applied", (json_int_t) DP_MIN(s->sz_applied, (uint64_t) INT64_MAX),
                              "qt_exceeds", (json_int_t) s->qt_exceeds);

        if (!o)
                return NULL;
        /* DAMON's "unbounded" is UINT64_MAX, beyond what a varlink int holds. */
        if (s->sz_max < (uint64_t) INT64_MAX)
                json_object_set_new(o, "sz_max", json_integer((json_int_t) s->sz_max));
        if (s->target_nid >= 0)
                json_object_set_new(o, "target_nid", json_integer(s->target_nid));
        return o;
}

static int damon_view_to_json(const struct damon_view *v, void *userdata) {
        json_t **ret = userdata, *o, *errors, *targets, *regions, *agreement, *schemes;

        o = json_pack("{s:s,s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:o,s:o}",
                      "role", damon_role_json(v->role), "reason", v->reason, "running", v->running,
                      "commits", (json_int_t) v->commits, "commits_skipped", (json_int_t) v->commits_skipped,
                      "goal_feeds", (json_int_t) v->goal_feeds, "read_backs", (json_int_t) v->read_backs,
                      "hot_fraction", (json_int_t) v->hot_fraction,
                      "last_commit_usec", (json_int_t) v->last_commit_usec,
                      "max_nr_accesses", (json_int_t) v->max_nr_accesses,
                      "errors", errors = json_array(), "targets", targets = json_array(),
                      "regions", regions = json_array(), "agreement", agreement = json_array());
        if (!o)
                return -ENOMEM;
        if (v->kdamond >= 0) {
                json_object_set_new(o, "kdamond", json_integer(v->kdamond));
                json_object_set_new(o, "context", json_integer(v->context));
        }
        json_object_set_new(o, "schemes", schemes = json_array());
        for (size_t i = 0; i < v->nr_schemes; i++)
                json_array_append_new(schemes, damon_scheme_to_json(&v->schemes[i]));
        for (size_t i = 0; i < v->nr_causes; i++) {
                json_t *e = json_pack("{s:s,s:i,s:I}", "step", v->causes[i].step, "errno", v->causes[i].error,
                                      "count", (json_int_t) v->causes[i].count);

                if (e && v->causes[i].path[0])
                        json_object_set_new(e, "path", json_string(v->causes[i].path));
                json_array_append_new(errors, e);
        }
        for (size_t i = 0; i < v->nr_targets; i++)
                json_array_append_new(targets, json_integer(v->targets[i]));
        for (size_t i = 0; i < v->nr_rows; i++) {
                const struct dp_damon_view_row *row = &v->rows[i];

                json_array_append_new(regions, json_pack(
                        "{s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:I}", "target", (json_int_t) row->pid,
                        "start", (json_int_t) row->start, "end", (json_int_t) row->end,
                        "damon_nr_accesses", (json_int_t) row->damon_nr_accesses,
                        "damon_age", (json_int_t) row->damon_age,
                        "pmu_nr_accesses", (json_int_t) row->pmu_nr_accesses,
                        "pmu_samples", row->pmu_samples_known ? json_integer((json_int_t) row->pmu_samples)
                                                              : json_null(),
                        "pmu_bytes", (json_int_t) row->pmu_bytes));
        }
        for (size_t i = 0; i < v->nr_agreement; i++) {
                const struct dp_damon_agreement *a = &v->agreement[i].a;

                json_array_append_new(agreement, json_pack(
                        "{s:I,s:f,s:f,s:I,s:I,s:I,s:I}", "target", (json_int_t) v->agreement[i].pid,
                        "precision", a->precision, "recall", a->recall,
                        "damon_hot_bytes", (json_int_t) a->hot_bytes, "pmu_hot_bytes", (json_int_t) a->ref_bytes,
                        "pmu_hot_ranges", (json_int_t) a->nr_chunks, "ranges_found", (json_int_t) a->chunks_found));
        }
        *ret = o;
        return 0;
}

json_t *api_get_damon_view(struct manager *m) {
        json_t *reply = NULL;

        if (!m->damon)
                return json_pack("{s:s,s:s,s:b,s:i,s:i,s:i,s:i,s:[],s:[],s:i,s:i,s:i,s:[],s:[],s:[]}", "role", "off",
                                 "reason", "not started", "running", 0, "commits", 0, "commits_skipped", 0,
                                 "goal_feeds", 0, "read_backs", 0, "errors", "targets", "hot_fraction", 0,
                                 "last_commit_usec", 0, "max_nr_accesses", 0, "regions", "agreement", "schemes");
        if (damon_thread_with_view(m->damon, damon_view_to_json, &reply) < 0)
                return NULL;
        return reply;
}

json_t *api_event_to_json(const struct hub_event *e) {
        json_t *o = json_pack("{s:s,s:I}", "kind", hub_event_kind_name(e->kind),
                              "timestamp_usec", (json_int_t) e->timestamp_usec);

        if (!o)
                return NULL;
        if (e->cpu >= 0)
                json_object_set_new(o, "cpu", json_integer(e->cpu));
        switch (e->kind) {
        case HUB_STATE_CHANGE:
                json_object_set_new(o, "from", json_string(dp_cpu_state_name(e->from)));
                json_object_set_new(o, "to", json_string(dp_cpu_state_name(e->to)));
                if (e->to == DP_CPU_ERROR) {
                        json_object_set_new(o, "errno", json_integer(-e->error));
                        json_object_set_new(o, "failed_step", json_string(dp_cpu_step_name(e->failed_step)));
                }
                break;
        case HUB_SAMPLE:
        case HUB_REPORT_MISSED:
                json_object_set_new(o, "pid", json_integer(e->pid));
                json_object_set_new(o, "addr", json_integer((json_int_t) e->addr));
                if (e->kind == HUB_REPORT_MISSED)
                        json_object_set_new(o, "reason", json_string(dp_counter_name(e->reason)));
                break;
        case HUB_RING_OVERFLOW:
                json_object_set_new(o, "depth", json_integer((json_int_t) e->depth));
                /* fall through */
        case HUB_DRAIN:
                json_object_set_new(o, "count", json_integer((json_int_t) e->count));
                break;
        default:
                break;
        }
        return o;
}
