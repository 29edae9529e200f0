/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl cpus, targets, regions: one table per reply. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cpu-state.h"
#include "macro.h"
#include "table.h"
#include "damonctl.h"

#define BAR_WIDTH 10

/* Calls @method, prints --json or hands the reply to the caller.  An exit
 * code; *ret stays NULL when there is nothing more to do. */
static int fetch(struct ctl *ctl, const char *method, json_t *parameters, json_t **ret) {
        json_t *reply = NULL;
        int k;

        *ret = NULL;
        k = ctl_call(ctl, method, parameters, &reply);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        if (ctl->json) {
                k = ctl_print_json(reply);
                json_decref(reply);
                return k;
        }
        *ret = reply;
        return CTL_EXIT_OK;
}

static int write_table(struct dp_table *t) {
        int k = dp_table_write(t, DP_TABLE_BOX, stdout);

        if (k >= 0 && fflush(stdout) != 0)
                k = -errno;
        if (k < 0) {
                fprintf(stderr, "writing the table: %s\n", strerror(-k));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

static int table_failed(int r) {
        fprintf(stderr, "building the table: %s\n", strerror(-r));
        return CTL_EXIT_FAILURE;
}

/* A table whose @right columns are right-aligned; an exit code. */
static int new_table(const char *const *headers, size_t n, const size_t *right, size_t n_right,
                     struct dp_table **ret) {
        int r = dp_table_new(headers, n, ret);

        if (r < 0)
                return table_failed(r);
        for (size_t c = 0; c < n_right; c++)
                dp_table_set_align(*ret, right[c], DP_TABLE_RIGHT);
        return CTL_EXIT_OK;
}

static int add_cpu_row(struct dp_table *t, json_t *cpu, size_t i) {
        int64_t id, type, config, period, ring_bytes, queue, peak, lost, error = 0;
        const char *state, *pmu, *step = NULL;
        char where[32], size[DP_FORMAT_BYTES_MAX];
        bool has_errno;
        int k, r;

        snprintf(where, sizeof(where), "cpus[%zu]", i);
        if (!json_is_object(cpu))
                return ctl_bad_reply("%s: expected an object", where);
        if ((k = ctl_get_int(cpu, where, "cpu", &id)) != CTL_EXIT_OK ||
            (k = ctl_get_string(cpu, where, "state", &state)) != CTL_EXIT_OK ||
            (k = ctl_get_optional_string(cpu, where, "failed_step", &step)) != CTL_EXIT_OK ||
            (k = ctl_get_optional_int(cpu, where, "errno", &error, &has_errno)) != CTL_EXIT_OK ||
            (k = ctl_get_string(cpu, where, "pmu", &pmu)) != CTL_EXIT_OK ||
            (k = ctl_get_int(cpu, where, "pmu_type", &type)) != CTL_EXIT_OK ||
            (k = ctl_get_int(cpu, where, "config", &config)) != CTL_EXIT_OK ||
            (k = ctl_get_int(cpu, where, "sample_period", &period)) != CTL_EXIT_OK ||
            (k = ctl_get_int(cpu, where, "ring_bytes", &ring_bytes)) != CTL_EXIT_OK ||
            (k = ctl_get_int(cpu, where, "queue_capacity", &queue)) != CTL_EXIT_OK ||
            (k = ctl_get_int(cpu, where, "ring_peak", &peak)) != CTL_EXIT_OK ||
            (k = ctl_get_int(cpu, where, "lost", &lost)) != CTL_EXIT_OK)
                return k;

        if ((r = dp_table_add_cellf(t, "%" PRIi64, id)) < 0 || (r = dp_table_add_cell(t, dp_cpu_state_label_of(state))) < 0)
                return table_failed(r);
        if (dp_cpu_state_from_name(state) == DP_CPU_ERROR || step || has_errno) {
                error = error < 0 ? -error : error;
                r = dp_table_add_cellf(t, "%s: %s", step ?: "?",
                                       !has_errno ? "no errno" : error > 0 && error < 4096 ? strerror((int) error)
                                                                                           : "unknown error");
        } else
                r = dp_table_add_cell(t, "-");
        if (r < 0 ||
            (r = dp_table_add_cell(t, pmu)) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64 "/%#" PRIx64, type, (uint64_t) config)) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, period)) < 0 ||
            (r = dp_table_add_cell(t, dp_format_bytes((uint64_t) DP_MAX(ring_bytes, 0), size, sizeof(size)))) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, queue)) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, peak)) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, lost)) < 0)
                return table_failed(r);
        return CTL_EXIT_OK;
}

int ctl_cpus(struct ctl *ctl) {
        static const char *const headers[] = { "CPU", "STATE", "FAILED", "PMU", "TYPE/CONFIG", "PERIOD",
                                               "RING", "QUEUE", "PEAK", "LOST" };
        static const size_t right[] = { 0, 5, 6, 7, 8, 9 };
        _cleanup_table_ struct dp_table *t = NULL;
        json_t *reply, *cpus, *cpu;
        size_t i;
        int k;

        k = fetch(ctl, "GetCPUs", NULL, &reply);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        k = ctl_get_array(reply, "GetCPUs", "cpus", &cpus);
        if (k != CTL_EXIT_OK)
                goto out;
        k = new_table(headers, DP_ARRAY_SIZE(headers), right, DP_ARRAY_SIZE(right), &t);
        if (k != CTL_EXIT_OK)
                goto out;
        json_array_foreach(cpus, i, cpu) {
                k = add_cpu_row(t, cpu, i);
                if (k != CTL_EXIT_OK)
                        goto out;
        }
        k = write_table(t);
out:
        json_decref(reply);
        return k;
}

int ctl_targets(struct ctl *ctl) {
        static const char *const headers[] = { "PID", "KIND", "START", "END", "SIZE", "REGIONS" };
        static const size_t right[] = { 0, 4, 5 };
        _cleanup_table_ struct dp_table *t = NULL;
        json_t *reply, *targets, *target;
        int64_t max_nr_accesses, aggregations;
        size_t i;
        int k, r;

        k = fetch(ctl, "GetTargets", NULL, &reply);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        if ((k = ctl_get_array(reply, "GetTargets", "targets", &targets)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetTargets", "max_nr_accesses", &max_nr_accesses)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetTargets", "aggregations", &aggregations)) != CTL_EXIT_OK)
                goto out;
        k = new_table(headers, DP_ARRAY_SIZE(headers), right, DP_ARRAY_SIZE(right), &t);
        if (k != CTL_EXIT_OK)
                goto out;
        json_array_foreach(targets, i, target) {
                int64_t pid, start, end, nr_regions;
                const char *kind;
                char where[32], size[DP_FORMAT_BYTES_MAX];

                snprintf(where, sizeof(where), "targets[%zu]", i);
                if (!json_is_object(target)) {
                        k = ctl_bad_reply("%s: expected an object", where);
                        goto out;
                }
                if ((k = ctl_get_int(target, where, "pid", &pid)) != CTL_EXIT_OK ||
                    (k = ctl_get_string(target, where, "kind", &kind)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(target, where, "start", &start)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(target, where, "end", &end)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(target, where, "nr_regions", &nr_regions)) != CTL_EXIT_OK)
                        goto out;
                if ((r = dp_table_add_cellf(t, "%" PRIi64, pid)) < 0 || (r = dp_table_add_cell(t, kind)) < 0 ||
                    (r = dp_table_add_cellf(t, "%#" PRIx64, (uint64_t) start)) < 0 ||
                    (r = dp_table_add_cellf(t, "%#" PRIx64, (uint64_t) end)) < 0 ||
                    (r = dp_table_add_cell(t, dp_format_bytes((uint64_t) end - (uint64_t) start, size,
                                                              sizeof(size)))) < 0 ||
                    (r = dp_table_add_cellf(t, "%" PRIi64, nr_regions)) < 0) {
                        k = table_failed(r);
                        goto out;
                }
        }
        k = write_table(t);
        if (k == CTL_EXIT_OK)
                printf("%zu target%s, %" PRIi64 " aggregations, max_nr_accesses %" PRIi64 "\n",
                       json_array_size(targets), json_array_size(targets) == 1 ? "" : "s", aggregations,
                       max_nr_accesses);
out:
        json_decref(reply);
        return k;
}

/* The first cells of a region row, read from @region: target, start, end,
 * size.  An exit code. */
static int add_region_cells(struct dp_table *t, json_t *region, const char *where) {
        int64_t target, start, end;
        char size[DP_FORMAT_BYTES_MAX];
        int k, r;

        if (!json_is_object(region))
                return ctl_bad_reply("%s: expected an object", where);
        if ((k = ctl_get_int(region, where, "target", &target)) != CTL_EXIT_OK ||
            (k = ctl_get_int(region, where, "start", &start)) != CTL_EXIT_OK ||
            (k = ctl_get_int(region, where, "end", &end)) != CTL_EXIT_OK)
                return k;
        if ((r = dp_table_add_cellf(t, "%" PRIi64, target)) < 0 ||
            (r = dp_table_add_cellf(t, "%#" PRIx64, (uint64_t) start)) < 0 ||
            (r = dp_table_add_cellf(t, "%#" PRIx64, (uint64_t) end)) < 0 ||
            (r = dp_table_add_cell(t, dp_format_bytes((uint64_t) end - (uint64_t) start, size, sizeof(size)))) < 0)
                return table_failed(r);
        return CTL_EXIT_OK;
}

/* A sample count cell: the number, or "-" where the daemon says null (not
 * known: it never shows a share of another region's count). */
static int add_count_cell(struct dp_table *t, json_t *o, const char *where, const char *key) {
        int64_t v;
        int k, r;

        if (json_is_null(json_object_get(o, key)))
                r = dp_table_add_cell(t, "-");
        else if ((k = ctl_get_int(o, where, key, &v)) != CTL_EXIT_OK)
                return k;
        else
                r = dp_table_add_cellf(t, "%" PRIi64, v);
        return r < 0 ? table_failed(r) : CTL_EXIT_OK;
}

static int add_region_row(struct dp_table *t, json_t *region, size_t i, int64_t max_nr_accesses) {
        int64_t nr_accesses, age;
        char where[32], bar[DP_FORMAT_BAR_SIZE(BAR_WIDTH)];
        int k, r;

        snprintf(where, sizeof(where), "regions[%zu]", i);
        if ((k = add_region_cells(t, region, where)) != CTL_EXIT_OK ||
            (k = ctl_get_int(region, where, "nr_accesses", &nr_accesses)) != CTL_EXIT_OK ||
            (k = ctl_get_int(region, where, "age", &age)) != CTL_EXIT_OK)
                return k;
        if ((r = dp_table_add_cellf(t, "%" PRIi64 "/%" PRIi64, nr_accesses, max_nr_accesses)) < 0 ||
            (r = dp_table_add_cell(t, dp_format_bar((uint64_t) DP_MAX(nr_accesses, 0),
                                                    (uint64_t) DP_MAX(max_nr_accesses, 0), BAR_WIDTH, bar,
                                                    sizeof(bar)))) < 0)
                return table_failed(r);
        if ((k = add_count_cell(t, region, where, "samples")) != CTL_EXIT_OK)
                return k;
        if ((r = dp_table_add_cellf(t, "%" PRIi64, age)) < 0)
                return table_failed(r);
        return CTL_EXIT_OK;
}

int ctl_regions(struct ctl *ctl) {
        static const char *const headers[] = { "TARGET", "START", "END", "SIZE", "ACCESSES", "RATE", "SAMPLES",
                                               "AGE" };
        static const size_t right[] = { 0, 3, 4, 6, 7 };
        _cleanup_table_ struct dp_table *t = NULL;
        json_t *parameters, *reply = NULL, *regions, *region;
        int64_t max_nr_accesses, sample_usec, aggr_usec;
        size_t i;
        int k;

        parameters = json_object();
        if (!parameters ||
            (ctl->target_set && json_object_set_new(parameters, "target", json_integer(ctl->target)) < 0) ||
            (ctl->top > 0 && json_object_set_new(parameters, "limit", json_integer((json_int_t) ctl->top)) < 0)) {
                json_decref(parameters);
                fprintf(stderr, "out of memory\n");
                return CTL_EXIT_FAILURE;
        }
        k = fetch(ctl, "GetRegions", parameters, &reply);
        json_decref(parameters);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        if ((k = ctl_get_array(reply, "GetRegions", "regions", &regions)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetRegions", "max_nr_accesses", &max_nr_accesses)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetRegions", "sample_interval_usec", &sample_usec)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetRegions", "aggr_interval_usec", &aggr_usec)) != CTL_EXIT_OK)
                goto out;
        k = new_table(headers, DP_ARRAY_SIZE(headers), right, DP_ARRAY_SIZE(right), &t);
        if (k != CTL_EXIT_OK)
                goto out;
        json_array_foreach(regions, i, region) {
                /* The daemon honours the limit; keep to it even if one did not. */
                if (ctl->top > 0 && i >= ctl->top)
                        break;
                k = add_region_row(t, region, i, max_nr_accesses);
                if (k != CTL_EXIT_OK)
                        goto out;
        }
        k = write_table(t);
        if (k == CTL_EXIT_OK)
                printf("%zu region%s; accesses = sampling intervals with an access per aggregation "
                       "(sampling %.1f ms, aggregation %.1f ms)\n",
                       dp_table_rows(t), dp_table_rows(t) == 1 ? "" : "s", (double) sample_usec / 1000.0,
                       (double) aggr_usec / 1000.0);
out:
        json_decref(reply);
        return k;
}

static int add_damon_row(struct dp_table *t, json_t *region, size_t i, int64_t max_nr_accesses) {
        int64_t damon_nr, damon_age, pmu_nr;
        char where[32], damon_bar[DP_FORMAT_BAR_SIZE(BAR_WIDTH)], pmu_bar[DP_FORMAT_BAR_SIZE(BAR_WIDTH)];
        uint64_t scale = (uint64_t) DP_MAX(max_nr_accesses, 1);
        int k, r;

        snprintf(where, sizeof(where), "regions[%zu]", i);
        if ((k = add_region_cells(t, region, where)) != CTL_EXIT_OK ||
            (k = ctl_get_int(region, where, "damon_nr_accesses", &damon_nr)) != CTL_EXIT_OK ||
            (k = ctl_get_int(region, where, "damon_age", &damon_age)) != CTL_EXIT_OK ||
            (k = ctl_get_int(region, where, "pmu_nr_accesses", &pmu_nr)) != CTL_EXIT_OK)
                return k;
        if ((r = dp_table_add_cellf(t, "%" PRIi64, damon_nr)) < 0 ||
            (r = dp_table_add_cell(t, dp_format_bar((uint64_t) DP_MAX(damon_nr, 0), scale, BAR_WIDTH, damon_bar,
                                                    sizeof(damon_bar)))) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, pmu_nr)) < 0 ||
            (r = dp_table_add_cell(t, dp_format_bar((uint64_t) DP_MAX(pmu_nr, 0), scale, BAR_WIDTH, pmu_bar,
                                                    sizeof(pmu_bar)))) < 0)
                return table_failed(r);
        if ((k = add_count_cell(t, region, where, "pmu_samples")) != CTL_EXIT_OK)
                return k;
        if ((r = dp_table_add_cellf(t, "%" PRIi64, damon_age)) < 0)
                return table_failed(r);
        return CTL_EXIT_OK;
}

/* The role line, the counters, and each failing step with its count. */
static int print_damon_summary(json_t *reply) {
        const char *role, *reason;
        int64_t kdamond = -1, commits, skipped, feeds, read_backs, hot, last_commit;
        bool has_kdamond = false;
        json_t *errors, *targets, *e;
        size_t i;
        int k;

        if ((k = ctl_get_string(reply, "GetDamonView", "role", &role)) != CTL_EXIT_OK ||
            (k = ctl_get_string(reply, "GetDamonView", "reason", &reason)) != CTL_EXIT_OK ||
            (k = ctl_get_optional_int(reply, "GetDamonView", "kdamond", &kdamond, &has_kdamond)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetDamonView", "commits", &commits)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetDamonView", "commits_skipped", &skipped)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetDamonView", "goal_feeds", &feeds)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetDamonView", "read_backs", &read_backs)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetDamonView", "hot_fraction", &hot)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetDamonView", "last_commit_usec", &last_commit)) != CTL_EXIT_OK ||
            (k = ctl_get_array(reply, "GetDamonView", "errors", &errors)) != CTL_EXIT_OK ||
            (k = ctl_get_array(reply, "GetDamonView", "targets", &targets)) != CTL_EXIT_OK)
                return k;

        if (has_kdamond)
                printf("DAMON: %s, kdamond %" PRIi64 " (%s): %s\n", role, kdamond,
                       json_is_true(json_object_get(reply, "running")) ? "on" : "off", reason);
        else
                printf("DAMON: %s: %s\n", role, reason);
        printf("Targets:");
        json_array_foreach(targets, i, e)
                printf(" %" PRIi64, (int64_t) json_integer_value(e));
        printf("%s; hot fraction %.2f%% (PMU)\n", json_array_size(targets) ? "" : " none", (double) hot / 100.0);
        printf("Commits: %" PRIi64 " (%" PRIi64 " skipped: no material change); quota goal feeds: %" PRIi64
               "; read-backs: %" PRIi64 "\n", commits, skipped, feeds, read_backs);
        json_array_foreach(errors, i, e) {
                const char *step, *path = NULL;
                int64_t error, count;
                char where[32];

                snprintf(where, sizeof(where), "errors[%zu]", i);
                if ((k = ctl_get_string(e, where, "step", &step)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(e, where, "errno", &error)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(e, where, "count", &count)) != CTL_EXIT_OK ||
                    (k = ctl_get_optional_string(e, where, "path", &path)) != CTL_EXIT_OK)
                        return k;
                printf("Failed: %s%s%s%s: %s, %" PRIi64 " time%s\n", step, path ? " (" : "", path ?: "",
                       path ? ")" : "", strerror((int) error), count, count == 1 ? "" : "s");
        }
        return CTL_EXIT_OK;
}

/* Per target, how DAMON's hot regions agree with the sampled hot ranges:
 * whether the hints help, on this machine.  (A daemon from before the field
 * sends none: nothing is printed.) */
static int print_damon_agreement(json_t *reply) {
        json_t *agreement = json_object_get(reply, "agreement"), *e;
        size_t i;
        int k;

        if (!json_is_array(agreement))
                return CTL_EXIT_OK;
        json_array_foreach(agreement, i, e) {
                int64_t target, damon_hot, pmu_hot, ranges, found;
                char where[32], damon_buf[32], pmu_buf[32];
                json_t *precision = json_object_get(e, "precision"), *recall = json_object_get(e, "recall");

                snprintf(where, sizeof(where), "agreement[%zu]", i);
                if ((k = ctl_get_int(e, where, "target", &target)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(e, where, "damon_hot_bytes", &damon_hot)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(e, where, "pmu_hot_bytes", &pmu_hot)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(e, where, "pmu_hot_ranges", &ranges)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(e, where, "ranges_found", &found)) != CTL_EXIT_OK)
                        return k;
                if (!json_is_number(precision) || !json_is_number(recall))
                        return ctl_bad_reply("GetDamonView.%s: precision and recall must be numbers", where);
                printf("Agreement, target %" PRIi64 ": DAMON calls %s hot, the samples %s in %" PRIi64
                       " range%s; precision %.2f, recall %.2f, %" PRIi64 " of %" PRIi64 " ranges found\n",
                       target, dp_format_bytes((uint64_t) DP_MAX(damon_hot, 0), damon_buf, sizeof(damon_buf)),
                       dp_format_bytes((uint64_t) DP_MAX(pmu_hot, 0), pmu_buf, sizeof(pmu_buf)), ranges,
                       ranges == 1 ? "" : "s", json_number_value(precision), json_number_value(recall), found,
                       ranges);
        }
        return CTL_EXIT_OK;
}


/* One scheme: its action (with the node it migrates to), access pattern,
 * quota and the kernel's stats. */
static int add_scheme_row(struct dp_table *t, json_t *scheme, size_t i) {
        static const char *const counts[] = { "nr_tried", "sz_tried", "nr_applied", "sz_applied", "qt_exceeds" };
        int64_t nid, sz_min, sz_max, nr_min, nr_max, age_min, age_max, quota_ms, quota_bytes, v[5];
        bool has_nid, has_sz_max;
        char where[32], lo[DP_FORMAT_BYTES_MAX], hi[DP_FORMAT_BYTES_MAX], bytes[2][DP_FORMAT_BYTES_MAX];
        const char *action;
        int k, r;

        snprintf(where, sizeof(where), "schemes[%zu]", i);
        if ((k = ctl_get_string(scheme, where, "action", &action)) != CTL_EXIT_OK ||
            (k = ctl_get_optional_int(scheme, where, "target_nid", &nid, &has_nid)) != CTL_EXIT_OK ||
            (k = ctl_get_int(scheme, where, "sz_min", &sz_min)) != CTL_EXIT_OK ||
            (k = ctl_get_optional_int(scheme, where, "sz_max", &sz_max, &has_sz_max)) != CTL_EXIT_OK ||
            (k = ctl_get_int(scheme, where, "nr_accesses_min", &nr_min)) != CTL_EXIT_OK ||
            (k = ctl_get_int(scheme, where, "nr_accesses_max", &nr_max)) != CTL_EXIT_OK ||
            (k = ctl_get_int(scheme, where, "age_min", &age_min)) != CTL_EXIT_OK ||
            (k = ctl_get_int(scheme, where, "age_max", &age_max)) != CTL_EXIT_OK ||
            (k = ctl_get_int(scheme, where, "quota_ms", &quota_ms)) != CTL_EXIT_OK ||
            (k = ctl_get_int(scheme, where, "quota_bytes", &quota_bytes)) != CTL_EXIT_OK)
                return k;
        for (size_t c = 0; c < DP_ARRAY_SIZE(counts); c++)
                if ((k = ctl_get_int(scheme, where, counts[c], &v[c])) != CTL_EXIT_OK)
                        return k;
        dp_format_bytes((uint64_t) DP_MAX(sz_min, 0), lo, sizeof(lo));
        if (has_sz_max)
                dp_format_bytes((uint64_t) DP_MAX(sz_max, 0), hi, sizeof(hi));
        dp_format_bytes((uint64_t) DP_MAX(v[1], 0), bytes[0], sizeof(bytes[0]));
        dp_format_bytes((uint64_t) DP_MAX(v[3], 0), bytes[1], sizeof(bytes[1]));
        if ((r = dp_table_add_cellf(t, "%zu", i)) < 0 ||
            (r = has_nid ? dp_table_add_cellf(t, "%s -> node %" PRIi64, action, nid) : dp_table_add_cell(t, action)) < 0 ||
            (r = dp_table_add_cellf(t, "%s-%s", lo, has_sz_max ? hi : "max")) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64 "-%" PRIi64, nr_min, nr_max)) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64 "-%" PRIi64, age_min, age_max)) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64 " ms, %" PRIi64 " B", quota_ms, quota_bytes)) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, v[0])) < 0 || (r = dp_table_add_cell(t, bytes[0])) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, v[2])) < 0 || (r = dp_table_add_cell(t, bytes[1])) < 0 ||
            (r = dp_table_add_cellf(t, "%" PRIi64, v[4])) < 0)
                return table_failed(r);
        return CTL_EXIT_OK;
}

/* The context's schemes with their stats, beside the hints. */
static int print_damon_schemes(json_t *reply) {
        static const char *const headers[] = { "#", "ACTION", "SIZE", "ACCESSES", "AGE", "QUOTA", "TRIED", "",
                                               "APPLIED", "", "QUOTA EXCEEDED" };
        static const size_t right[] = { 0, 6, 7, 8, 9, 10 };
        _cleanup_table_ struct dp_table *t = NULL;
        json_t *schemes, *scheme;
        size_t i;
        int k;

        /* A daemon from before schemes were shown sends none. */
        if (!json_object_get(reply, "schemes"))
                return CTL_EXIT_OK;
        if ((k = ctl_get_array(reply, "GetDamonView", "schemes", &schemes)) != CTL_EXIT_OK)
                return k;
        if (json_array_size(schemes) == 0)
                return CTL_EXIT_OK;
        k = new_table(headers, DP_ARRAY_SIZE(headers), right, DP_ARRAY_SIZE(right), &t);
        if (k != CTL_EXIT_OK)
                return k;
        json_array_foreach(schemes, i, scheme) {
                k = add_scheme_row(t, scheme, i);
                if (k != CTL_EXIT_OK)
                        return k;
        }
        k = write_table(t);
        if (k == CTL_EXIT_OK)
                printf("%zu DAMOS scheme%s; accesses in sampling intervals per aggregation, age in aggregations, "
                       "quota 0 = none\n", dp_table_rows(t), dp_table_rows(t) == 1 ? "" : "s");
        return k;
}

int ctl_damon(struct ctl *ctl) {
        static const char *const headers[] = { "TARGET", "START", "END", "SIZE", "DAMON", "", "PMU", "",
                                               "SAMPLES", "AGE" };
        static const size_t right[] = { 0, 3, 4, 6, 8, 9 };
        _cleanup_table_ struct dp_table *t = NULL;
        json_t *reply = NULL, *regions, *region;
        int64_t max_nr_accesses;
        size_t i;
        int k;

        k = fetch(ctl, "GetDamonView", NULL, &reply);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        if ((k = print_damon_summary(reply)) != CTL_EXIT_OK || (k = print_damon_agreement(reply)) != CTL_EXIT_OK ||
            (k = print_damon_schemes(reply)) != CTL_EXIT_OK ||
            (k = ctl_get_array(reply, "GetDamonView", "regions", &regions)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetDamonView", "max_nr_accesses", &max_nr_accesses)) != CTL_EXIT_OK)
                goto out;
        if (json_array_size(regions) == 0) {
                printf("No DAMON regions to show%s.\n",
                       json_is_true(json_object_get(reply, "running")) ? " yet" : ": no kdamond of ours runs");
                goto out;
        }
        k = new_table(headers, DP_ARRAY_SIZE(headers), right, DP_ARRAY_SIZE(right), &t);
        if (k != CTL_EXIT_OK)
                goto out;
        json_array_foreach(regions, i, region) {
                if (ctl->top > 0 && i >= ctl->top)
                        break;
                k = add_damon_row(t, region, i, max_nr_accesses);
                if (k != CTL_EXIT_OK)
                        goto out;
        }
        k = write_table(t);
        if (k == CTL_EXIT_OK)
                printf("%zu region%s as DAMON reports them; DAMON and PMU columns: sampling intervals with an "
                       "access per aggregation (of %" PRIi64 ")\n", dp_table_rows(t), dp_table_rows(t) == 1 ? "" : "s",
                       max_nr_accesses);
out:
        json_decref(reply);
        return k;
}
