/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl selftest: layers 1-7 and DAMON, judged from the daemon's replies
 * at the start and the end of the test window. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "cpu-state.h"
#include "macro.h"
#include "selftest.h"

/* CPUs that did not get somewhere, named in a check's reason. */
#define CPUS_NAMED_MAX 4

/* An error at a step means the one before it was reached. */
static const char *const failing_step[] = { "create", "bind", "enable", "run" };

static unsigned reached(const struct dp_selftest_cpu *c) {
        int s = dp_cpu_state_from_name(c->state);

        if (s == DP_CPU_ERROR) {
                for (unsigned i = 0; i < DP_ARRAY_SIZE(failing_step); i++)
                        if (c->failed_step && strcmp(c->failed_step, failing_step[i]) == 0)
                                return i;
                return 0;
        }
        /* The lifecycle states are in order, UNINIT (0) to RUNNING (4). */
        return s >= 0 && s <= DP_CPU_RUNNING ? (unsigned) s : 0;
}

/* A CPU the kernel took offline: nothing of the pipeline's doing, so the
 * lifecycle checks leave it out and say so. */
static bool cpu_offline(const struct dp_selftest_cpu *c) {
        return dp_cpu_state_from_name(c->state) == DP_CPU_ERROR && c->failed_step && strcmp(c->failed_step, "offline") == 0;
}

static void describe_cpu(const struct dp_selftest_cpu *c, char *buf, size_t size) {
        size_t used = strnlen(buf, size);
        int64_t e = c->error < 0 ? -c->error : c->error;

        if (used + 1 >= size)
                return;
        if (dp_cpu_state_from_name(c->state) == DP_CPU_ERROR)
                snprintf(buf + used, size - used, "%sCPU%" PRIi64 " ERROR at %s (%s)", used ? ", " : "", c->cpu,
                         c->failed_step ?: "?", e > 0 && e < 4096 ? strerror((int) e) : "unknown error");
        else
                snprintf(buf + used, size - used, "%sCPU%" PRIi64 " %s", used ? ", " : "", c->cpu,
                         c->state ? dp_cpu_state_label_of(c->state) : "?");
}

/* One check per lifecycle state: it passes when the best CPU got there, and
 * only partly when some CPU did not (each named). */
static void check_lifecycle(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        static const struct {
                unsigned layer;
                const char *name;
                unsigned level;
        } steps[] = {
                { 1, "created", 1 },
                { 2, "bound", 2 },
                { 3, "enabled", 3 },
                { 3, "running", 4 },
        };
        char offline_note[64] = "";
        size_t n_offline = 0, n_cpus;
        unsigned best = 0;

        for (size_t i = 0; i < o->n_cpus; i++) {
                n_offline += cpu_offline(&o->cpus[i]);
                best = DP_MAX(best, reached(&o->cpus[i]));
        }
        n_cpus = o->n_cpus - n_offline;
        if (n_offline)
                snprintf(offline_note, sizeof(offline_note), "; %zu offline CPU%s left out", n_offline,
                         n_offline > 1 ? "s" : "");
        for (size_t s = 0; s < DP_ARRAY_SIZE(steps); s++) {
                char missing[256] = "";
                size_t got = 0, named = 0;
                struct dp_selftest_check *c;

                for (size_t i = 0; i < o->n_cpus; i++) {
                        if (cpu_offline(&o->cpus[i]))
                                continue;
                        if (reached(&o->cpus[i]) >= steps[s].level) {
                                got++;
                                continue;
                        }
                        if (named++ < CPUS_NAMED_MAX)
                                describe_cpu(&o->cpus[i], missing, sizeof(missing));
                }
                if (o->n_cpus == 0) {
                        dp_selftest_add(r, steps[s].layer, steps[s].name, DP_SELFTEST_FAIL, "the daemon reports no CPU");
                        continue;
                }
                if (n_cpus == 0) {
                        dp_selftest_add(r, steps[s].layer, steps[s].name, DP_SELFTEST_FAIL,
                                        "every sampled CPU is offline");
                        continue;
                }
                if (got == n_cpus) {
                        dp_selftest_add(r, steps[s].layer, steps[s].name, DP_SELFTEST_PASS, "%zu/%zu CPUs reached %s%s",
                                        got, n_cpus, dp_cpu_state_label(steps[s].level), offline_note);
                        continue;
                }
                c = dp_selftest_add(r, steps[s].layer, steps[s].name, got > 0 ? DP_SELFTEST_PASS : DP_SELFTEST_FAIL,
                                    "%zu/%zu CPUs reached %s (the furthest: %s); not: %s%s%s", got, n_cpus,
                                    dp_cpu_state_label(steps[s].level), dp_cpu_state_label(best), missing,
                                    named > CPUS_NAMED_MAX ? " and more" : "", offline_note);
                if (c && got > 0)
                        c->partial = true;
        }
}

static int64_t delta(const struct dp_selftest_observation *o, unsigned i) {
        int64_t d = o->after->totals.v[i] - o->before->totals.v[i];

        /* A daemon that restarted in between starts from 0. */
        return d >= 0 ? d : o->after->totals.v[i];
}

static double window_seconds(const struct dp_selftest_observation *o) {
        int64_t us = o->after->uptime_usec - o->before->uptime_usec;

        return us > 0 ? (double) us / 1e6 : 0;
}

/* The invariant of @v that does not hold, or NULL. */
static const char *broken_invariant(const struct dp_stats_values *v) {
        struct dp_counter_values c;
        const char *which = NULL;

        dp_stats_values_to_counters(v, &c);
        if (dp_counters_check(&c, &which) < 0)
                return which;
        if (v->v[DP_C_DEQUEUE] + v->v[DP_STATS_IN_FLIGHT] != v->v[DP_C_ENQUEUE])
                return "dequeue + in_flight == enqueue";
        return NULL;
}

static void check_source(struct dp_selftest_report *r, const struct dp_stats_reply *s) {
        r->hardware_source = s->source_hardware;
        if (s->source_hardware)
                dp_selftest_add(r, 0, "source", DP_SELFTEST_PASS, "the daemon samples with %s on %s (hardware)",
                                s->source_name ?: "?", s->source_pmu ?: "?");
        else
                dp_selftest_add(r, 0, "source", DP_SELFTEST_SKIP,
                                "the daemon samples with %s on %s: the software positive control, not hardware "
                                "memory-access sampling%s%s",
                                s->source_name ?: "?", s->source_pmu ?: "?", s->source_reason ? "; " : "",
                                s->source_reason ?: "");
}

static void check_sampling(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        int64_t cb = delta(o, DP_C_CALLBACK), valid = delta(o, DP_C_VALID);
        double sec = window_seconds(o);
        char breakdown[256];

        snprintf(breakdown, sizeof(breakdown),
                 "valid +%" PRIi64 ", null +%" PRIi64 ", addr_zero +%" PRIi64 ", kernel +%" PRIi64 ", inv_phys +%" PRIi64,
                 valid, delta(o, DP_C_NULL), delta(o, DP_C_ADDR_ZERO), delta(o, DP_C_KERNEL), delta(o, DP_C_INV_PHYS));
        if (cb == 0)
                dp_selftest_add(r, 4, "sampling", DP_SELFTEST_FAIL, "no sample records in %.1f s with the workload running",
                                sec);
        else if (valid == 0)
                dp_selftest_add(r, 4, "sampling", DP_SELFTEST_FAIL, "+%" PRIi64 " callbacks in %.1f s, none valid: %s", cb,
                                sec, breakdown);
        else
                dp_selftest_add(r, 4, "sampling", DP_SELFTEST_PASS, "+%" PRIi64 " callbacks in %.1f s (%.0f/s): %s", cb,
                                sec, sec > 0 ? (double) cb / sec : 0.0, breakdown);
}

static void check_ring(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        const struct dp_stats_values *v = &o->after->totals;
        int64_t enq = delta(o, DP_C_ENQUEUE), deq = delta(o, DP_C_DEQUEUE);
        const char *broken = broken_invariant(v);
        char figures[256];

        snprintf(figures, sizeof(figures),
                 "enqueue +%" PRIi64 ", dequeue +%" PRIi64 ", overflow +%" PRIi64 ", ring peak %" PRIi64
                 ", kernel lost +%" PRIi64,
                 enq, deq, delta(o, DP_C_OVERFLOW), v->v[DP_C_RING_PEAK], delta(o, DP_C_LOST) + delta(o, DP_C_LOST_SAMPLES));
        if (broken)
                dp_selftest_add(r, 5, "ring", DP_SELFTEST_FAIL, "the counters do not reconcile (%s): %s", broken, figures);
        else if (enq == 0 || deq == 0)
                dp_selftest_add(r, 5, "ring", DP_SELFTEST_FAIL, "nothing went through the queues: %s", figures);
        else
                dp_selftest_add(r, 5, "ring", DP_SELFTEST_PASS, "%s; the counters reconcile", figures);
}

static void check_drain(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        int64_t drains = delta(o, DP_C_DRAIN), deq = delta(o, DP_C_DEQUEUE);

        if (drains == 0 || deq == 0)
                dp_selftest_add(r, 6, "drain", DP_SELFTEST_FAIL,
                                "the tracker drained nothing: drain +%" PRIi64 ", dequeue +%" PRIi64, drains, deq);
        else
                dp_selftest_add(r, 6, "drain", DP_SELFTEST_PASS,
                                "drain +%" PRIi64 ", dequeue +%" PRIi64 ", %" PRIi64 " in flight", drains, deq,
                                o->after->totals.v[DP_STATS_IN_FLIGHT]);
}

static void check_match(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        int64_t match = delta(o, DP_C_MATCH), update = delta(o, DP_C_UPDATE);
        char figures[256];

        snprintf(figures, sizeof(figures),
                 "match +%" PRIi64 ", update +%" PRIi64 ", miss_tgid +%" PRIi64 ", miss_region +%" PRIi64
                 ", miss_bound +%" PRIi64,
                 match, update, delta(o, DP_C_MISS_TGID), delta(o, DP_C_MISS_REGION), delta(o, DP_C_MISS_BOUND));
        if (match == 0 || update == 0)
                dp_selftest_add(r, 7, "match", DP_SELFTEST_FAIL, "no sample reached a region: %s", figures);
        else
                dp_selftest_add(r, 7, "match", DP_SELFTEST_PASS, "%s", figures);
}

static void check_target(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        if (o->workload_targeted)
                dp_selftest_add(r, 7, "target", DP_SELFTEST_PASS, "the workload (pid %" PRIi64 ") is a target",
                                o->workload_pid);
        else if (o->physical)
                dp_selftest_add(r, 7, "target", DP_SELFTEST_SKIP,
                                "the daemon tracks the physical address space, not the workload's pid %" PRIi64,
                                o->workload_pid);
        else if (o->workload_expected)
                dp_selftest_add(r, 7, "target", DP_SELFTEST_FAIL,
                                "the workload (pid %" PRIi64 ") is not among the daemon's targets", o->workload_pid);
        else
                dp_selftest_add(r, 7, "target", DP_SELFTEST_SKIP,
                                "the workload (pid %" PRIi64 ") is not among the daemon's targets "
                                "(its Targets= or MaxTargets= may leave it out)", o->workload_pid);
}

/* The first region at the top access rate @top outside [hot_start - slack, hot_end + slack), or NULL. */
static const struct dp_selftest_region *hot_outlier(const struct dp_selftest_region *regions, size_t n, int64_t top,
                                                    uint64_t hot_start, uint64_t hot_end, uint64_t slack) {
        uint64_t low = hot_start > slack ? hot_start - slack : 0;
        uint64_t high = hot_end + slack >= hot_end ? hot_end + slack : UINT64_MAX;

        for (size_t i = 0; i < n; i++)
                if (regions[i].nr_accesses == top && (regions[i].start < low || regions[i].end > high))
                        return &regions[i];
        return NULL;
}

static int64_t top_rate(const struct dp_selftest_region *regions, size_t n) {
        int64_t top = 0;

        for (size_t i = 0; i < n; i++)
                top = DP_MAX(top, regions[i].nr_accesses);
        return top;
}

bool dp_selftest_hot_area_found(const struct dp_selftest_region *regions, size_t n, uint64_t hot_start,
                                uint64_t hot_end, uint64_t slack) {
        int64_t top = top_rate(regions, n);

        return top > 0 && !hot_outlier(regions, n, top, hot_start, hot_end, slack);
}

static void check_hot_area(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        const struct dp_selftest_region *hottest = NULL, *outlier;
        int64_t top = top_rate(o->regions, o->n_regions);
        size_t at_top = 0;

        if (!o->workload_targeted) {
                dp_selftest_add(r, 7, "hot_area", DP_SELFTEST_SKIP, "the workload is not a target");
                return;
        }
        if (top <= 0) {
                dp_selftest_add(r, 7, "hot_area", DP_SELFTEST_FAIL,
                                "none of the workload's %zu regions has accesses (hot area %#" PRIx64 "-%#" PRIx64 ")",
                                o->n_regions, o->hot_start, o->hot_end);
                return;
        }
        for (size_t i = 0; i < o->n_regions; i++)
                if (o->regions[i].nr_accesses == top) {
                        hottest = hottest ?: &o->regions[i];
                        at_top++;
                }
        outlier = hot_outlier(o->regions, o->n_regions, top, o->hot_start, o->hot_end, o->slack);
        if (!outlier)
                dp_selftest_add(r, 7, "hot_area", DP_SELFTEST_PASS,
                                "the %zu hottest region%s (%" PRIi64 "/%" PRIi64 " accesses, e.g. %#" PRIx64 "-%#" PRIx64
                                ") lie%s within the hot area %#" PRIx64 "-%#" PRIx64 " (give or take %" PRIu64 " KiB)",
                                at_top, at_top == 1 ? "" : "s", top, o->max_nr_accesses, hottest->start, hottest->end,
                                at_top == 1 ? "s" : "", o->hot_start, o->hot_end, o->slack / 1024);
        else
                dp_selftest_add(r, 7, "hot_area", DP_SELFTEST_FAIL,
                                "a hottest region, %#" PRIx64 "-%#" PRIx64 " (%" PRIi64 "/%" PRIi64 " accesses, %zu at "
                                "the top of %zu), lies outside the hot area %#" PRIx64 "-%#" PRIx64 " give or take %"
                                PRIu64 " KiB",
                                outlier->start, outlier->end, top, o->max_nr_accesses, at_top, o->n_regions,
                                o->hot_start, o->hot_end, o->slack / 1024);
}

static void check_damon(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        const struct dp_selftest_damon *d = &o->damon;
        const struct dp_selftest_region *overlap = NULL;
        char missing[256] = "";

        if (!d->answered) {
                dp_selftest_add(r, DP_SELFTEST_LAYER_DAMON, "hints", DP_SELFTEST_SKIP,
                                "the daemon does not answer GetDamonView()");
                return;
        }
        if (!d->role || (strcmp(d->role, "owned") != 0 && strcmp(d->role, "attached") != 0)) {
                dp_selftest_add(r, DP_SELFTEST_LAYER_DAMON, "hints", DP_SELFTEST_SKIP, "%s: %s",
                                d->role && strcmp(d->role, "observe_only") == 0 ? "observe-only" : d->role ?: "unknown",
                                d->reason ?: "no reason given");
                return;
        }
        for (size_t i = 0; i < d->n_regions && !overlap; i++)
                if (d->regions[i].start < o->hot_end && d->regions[i].end > o->hot_start)
                        overlap = &d->regions[i];
        if (d->commits <= 0)
                snprintf(missing, sizeof(missing), "no hint committed");
        else if (d->read_backs <= 0)
                snprintf(missing, sizeof(missing), "DAMON's regions never read back");
        else if (!d->workload_is_target)
                snprintf(missing, sizeof(missing), "the workload is not among DAMON's targets");
        else if (!overlap)
                snprintf(missing, sizeof(missing), "no DAMON region overlaps the workload's hot area %#" PRIx64 "-%#" PRIx64,
                         o->hot_start, o->hot_end);
        if (missing[0]) {
                dp_selftest_add(r, DP_SELFTEST_LAYER_DAMON, "hints", DP_SELFTEST_FAIL,
                                "%s kdamond %" PRIi64 ": %s (commits %" PRIi64 ", read-backs %" PRIi64 ")", d->role,
                                d->kdamond, missing, d->commits, d->read_backs);
                return;
        }
        dp_selftest_add(r, DP_SELFTEST_LAYER_DAMON, "hints", DP_SELFTEST_PASS,
                        "%s kdamond %" PRIi64 ": %" PRIi64 " commits, %" PRIi64 " read-backs; DAMON's region %#" PRIx64
                        "-%#" PRIx64 " (nr_accesses %" PRIi64 ", age %" PRIi64 ") overlaps the hot area",
                        d->role, d->kdamond, d->commits, d->read_backs, overlap->start, overlap->end, overlap->nr_accesses,
                        overlap->age);
}

int dp_selftest_evaluate(struct dp_selftest_report *r, const struct dp_selftest_observation *o) {
        if (!o->before || !o->after)
                return -EINVAL;
        check_source(r, o->after);
        check_lifecycle(r, o);
        check_sampling(r, o);
        check_ring(r, o);
        check_drain(r, o);
        check_match(r, o);
        check_target(r, o);
        check_hot_area(r, o);
        check_damon(r, o);
        return 0;
}
