/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl selftest's judgement (lib/selftest*.c) on synthetic replies: every
 * verdict, the checks of each layer, and the output. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "selftest.h"

#include "check-main.h"

#define HOT_START 0x7f0000400000ull
#define HOT_END 0x7f0000800000ull
#define SLACK (16 * 4096ull)

/* Counters that reconcile: @n samples, a quarter of them missing their target. */
static json_t *counters_json(int64_t n) {
        json_t *o = json_object();

        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++)
                json_object_set_new(o, dp_stats_value_name(i), json_integer(0));
        json_object_set_new(o, "create", json_integer(2));
        json_object_set_new(o, "bind", json_integer(2));
        json_object_set_new(o, "enable", json_integer(2));
        json_object_set_new(o, "callback", json_integer(n));
        json_object_set_new(o, "valid", json_integer(n));
        json_object_set_new(o, "enqueue", json_integer(n));
        json_object_set_new(o, "dequeue", json_integer(n));
        json_object_set_new(o, "match", json_integer(n / 4 * 3));
        json_object_set_new(o, "miss_tgid", json_integer(n / 4));
        json_object_set_new(o, "update", json_integer(n / 10));
        json_object_set_new(o, "drain", json_integer(n / 100));
        json_object_set_new(o, "ring_peak", json_integer(42));
        return o;
}

struct fixture {
        struct dp_stats_reply before, after;
        struct dp_selftest_cpu cpus[2];
        struct dp_selftest_region regions[3];
        struct dp_selftest_region damon_regions[1];
        struct dp_selftest_observation o;
        struct dp_selftest_report r;
};

static void parse_stats(json_t *doc, struct dp_stats_reply *ret) {
        char error[256] = "";

        ck_assert_msg(dp_stats_reply_parse(doc, ret, error, sizeof(error)) == 0, "%s", error);
        json_decref(doc);
}

static json_t *stats_json(int64_t uptime_usec, json_t *totals, bool hardware) {
        json_t *doc = json_pack("{s:{s:s,s:s,s:b,s:s,s:s},s:I,s:f,s:o,s:[]}", "source", "name",
                                hardware ? "ibs" : "pagefault", "pmu", hardware ? "ibs_op" : "software", "hardware",
                                hardware, "description", "d", "reason", "why", "uptime_usec", (json_int_t) uptime_usec,
                                "sample_rate", 1.0, "totals", totals, "cpus");

        ck_assert_ptr_nonnull(doc);
        return doc;
}

/* Everything a fully integrated machine shows: hardware source, both CPUs
 * RUNNING, samples through every layer, the workload's hot area found, DAMON
 * owned, committed to and read back. */
static void fixture_init(struct fixture *f, bool hardware) {
        *f = (struct fixture) {
                .cpus = { { 0, "running", NULL, 0 }, { 1, "running", NULL, 0 } },
                .regions = {
                        { HOT_START + 0x1000, HOT_START + 0x200000, 18, 3 },
                        { HOT_START + 0x200000, HOT_END, 18, 2 },
                        { HOT_START - 0x400000, HOT_START, 0, 9 },
                },
                .damon_regions = { { HOT_START, HOT_END, 17, 4 } },
        };
        parse_stats(stats_json(1000000, counters_json(1000), hardware), &f->before);
        parse_stats(stats_json(6000000, counters_json(51000), hardware), &f->after);
        f->o = (struct dp_selftest_observation) {
                .before = &f->before,
                .after = &f->after,
                .cpus = f->cpus,
                .n_cpus = 2,
                .workload_pid = 1234,
                .hot_start = HOT_START,
                .hot_end = HOT_END,
                .slack = SLACK,
                .workload_targeted = true,
                .workload_expected = true,
                .regions = f->regions,
                .n_regions = 3,
                .max_nr_accesses = 20,
                .damon = {
                        .answered = true,
                        .role = "owned",
                        .reason = "no kdamond existed",
                        .kdamond = 0,
                        .commits = 5,
                        .read_backs = 4,
                        .workload_is_target = true,
                        .regions = f->damon_regions,
                        .n_regions = 1,
                },
        };
        dp_selftest_report_init(&f->r);
}

static void fixture_done(struct fixture *f) {
        dp_stats_reply_done(&f->before);
        dp_stats_reply_done(&f->after);
}

static const struct dp_selftest_check *find(const struct dp_selftest_report *r, const char *name) {
        for (size_t i = 0; i < r->n; i++)
                if (strcmp(r->checks[i].name, name) == 0)
                        return &r->checks[i];
        ck_abort_msg("no check %s", name);
        return NULL;
}

static enum dp_selftest_verdict judge(struct fixture *f, char *why, size_t size) {
        ck_assert_int_eq(dp_selftest_evaluate(&f->r, &f->o), 0);
        return dp_selftest_verdict(&f->r, why, size);
}

START_TEST(test_fully_integrated) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_FULLY_INTEGRATED);
        ck_assert_int_eq(dp_selftest_verdict_exit_status(DP_SELFTEST_FULLY_INTEGRATED), 0);
        ck_assert_str_eq(dp_selftest_verdict_name(DP_SELFTEST_FULLY_INTEGRATED), "FULLY INTEGRATED");
        /* source, created, bound, enabled, running, sampling, ring, drain, match, target, hot_area, hints */
        ck_assert_uint_eq(f.r.n, 12);
        for (size_t i = 0; i < f.r.n; i++)
                ck_assert_msg(f.r.checks[i].result == DP_SELFTEST_PASS && !f.r.checks[i].partial, "%s: %s",
                              f.r.checks[i].name, f.r.checks[i].reason);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "sampling")->reason, "+50000 callbacks in 5.0 s (10000/s)"));
        ck_assert_ptr_nonnull(strstr(find(&f.r, "ring")->reason, "overflow +0, ring peak 42"));
        ck_assert_ptr_nonnull(strstr(find(&f.r, "match")->reason, "match +37500, update +5000, miss_tgid +12500"));
        ck_assert_str_eq(find(&f.r, "hot_area")->reason,
                         "the 2 hottest regions (18/20 accesses, e.g. 0x7f0000401000-0x7f0000600000) lie within the hot "
                         "area 0x7f0000400000-0x7f0000800000 (give or take 64 KiB)");
        ck_assert_ptr_nonnull(strstr(find(&f.r, "hints")->reason, "owned kdamond 0: 5 commits, 4 read-backs"));
        ck_assert_uint_eq(find(&f.r, "hints")->layer, DP_SELFTEST_LAYER_DAMON);
        ck_assert_ptr_nonnull(strstr(why, "hardware sampling"));
        fixture_done(&f);
}
END_TEST

/* This machine: the software control, DAMON observe-only beside a foreign kdamond. */
START_TEST(test_plumbing_only_software_control) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, false);
        f.o.damon.role = "observe_only";
        f.o.damon.reason = "kdamond 0 exists and is not ours";
        f.o.damon.kdamond = -1;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_int_eq(dp_selftest_verdict_exit_status(DP_SELFTEST_PLUMBING_ONLY), 10);
        ck_assert_int_eq(find(&f.r, "source")->result, DP_SELFTEST_SKIP);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "source")->reason, "software positive control"));
        ck_assert_int_eq(find(&f.r, "hints")->result, DP_SELFTEST_SKIP);
        ck_assert_str_eq(find(&f.r, "hints")->reason, "observe-only: kdamond 0 exists and is not ours");
        for (size_t i = 0; i < f.r.n; i++)
                if (f.r.checks[i].layer >= 1 && f.r.checks[i].layer <= 7)
                        ck_assert_int_eq(f.r.checks[i].result, DP_SELFTEST_PASS);
        ck_assert_ptr_nonnull(strstr(why, "only the software control samples"));
        ck_assert_ptr_nonnull(strstr(why, "DAMON skipped: observe-only"));
        fixture_done(&f);
}
END_TEST

/* One CPU refused: the others carry on, the lines name it, the verdict is capped. */
START_TEST(test_plumbing_only_cpu_in_error) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        f.cpus[1] = (struct dp_selftest_cpu) { 1, "error", "create", EACCES };
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_int_eq(find(&f.r, "created")->result, DP_SELFTEST_PASS);
        ck_assert(find(&f.r, "created")->partial);
        ck_assert(find(&f.r, "running")->partial);
        ck_assert_str_eq(find(&f.r, "running")->reason,
                         "1/2 CPUs reached RUNNING (the furthest: RUNNING); not: CPU1 ERROR at create (Permission denied)");
        ck_assert_ptr_nonnull(strstr(why, "not every CPU got through (L1 created)"));
        ck_assert_ptr_null(strstr(why, "L2 bound"));   /* named once */
        fixture_done(&f);

        /* Failing later: a CPU that was bound but not enabled reached BOUND. */
        fixture_init(&f, true);
        f.cpus[1] = (struct dp_selftest_cpu) { 1, "error", "enable", EBUSY };
        judge(&f, why, sizeof(why));
        ck_assert(!find(&f.r, "bound")->partial);
        ck_assert(find(&f.r, "enabled")->partial);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "enabled")->reason, "CPU1 ERROR at enable (Device or resource busy)"));
        fixture_done(&f);
}
END_TEST

/* A CPU the kernel took offline is no fault of the pipeline: left out of the
 * lifecycle counts and named; with every CPU offline nothing could sample. */
START_TEST(test_offline_cpu_left_out) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        f.cpus[1] = (struct dp_selftest_cpu) { 1, "error", "offline", ENODEV };
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_FULLY_INTEGRATED);
        ck_assert_int_eq(find(&f.r, "running")->result, DP_SELFTEST_PASS);
        ck_assert(!find(&f.r, "running")->partial);
        ck_assert_str_eq(find(&f.r, "running")->reason, "1/1 CPUs reached RUNNING; 1 offline CPU left out");
        fixture_done(&f);

        /* Beside a CPU that failed for real, only that one is named. */
        fixture_init(&f, true);
        f.cpus[1] = (struct dp_selftest_cpu) { 1, "error", "offline", ENODEV };
        f.cpus[0] = (struct dp_selftest_cpu) { 0, "error", "create", EACCES };
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_int_eq(find(&f.r, "created")->result, DP_SELFTEST_FAIL);
        ck_assert_str_eq(find(&f.r, "created")->reason, "0/1 CPUs reached CREATED (the furthest: UNINIT); not: "
                                                        "CPU0 ERROR at create (Permission denied); 1 offline CPU left out");
        fixture_done(&f);

        fixture_init(&f, true);
        f.cpus[0] = (struct dp_selftest_cpu) { 0, "error", "offline", ENODEV };
        f.cpus[1] = (struct dp_selftest_cpu) { 1, "error", "offline", ENODEV };
        judge(&f, why, sizeof(why));
        ck_assert_int_eq(find(&f.r, "running")->result, DP_SELFTEST_FAIL);
        ck_assert_str_eq(find(&f.r, "running")->reason, "every sampled CPU is offline");
        fixture_done(&f);
}
END_TEST

/* DAMON owned but nothing read back: a DAMON failure, not an unusable pipeline. */
START_TEST(test_plumbing_only_damon_not_read_back) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        f.o.damon.read_backs = 0;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_int_eq(find(&f.r, "hints")->result, DP_SELFTEST_FAIL);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "hints")->reason, "never read back"));
        fixture_done(&f);

        fixture_init(&f, true);
        f.damon_regions[0] = (struct dp_selftest_region) { HOT_END, HOT_END + 0x100000, 3, 1 };
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "hints")->reason, "no DAMON region overlaps"));
        fixture_done(&f);

        /* An older daemon without GetDamonView, and DAMON off. */
        fixture_init(&f, true);
        f.o.damon.answered = false;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_int_eq(find(&f.r, "hints")->result, DP_SELFTEST_SKIP);
        fixture_done(&f);
        fixture_init(&f, true);
        f.o.damon.role = "off";
        f.o.damon.reason = "[DAMON] Mode=off";
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_str_eq(find(&f.r, "hints")->reason, "off: [DAMON] Mode=off");
        fixture_done(&f);
}
END_TEST

/* A layer-0 failure caps the verdict but does not make the pipeline unusable. */
START_TEST(test_plumbing_only_layer0_failure) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        dp_selftest_add(&f.r, 0, "config", DP_SELFTEST_FAIL, "damon-perfd --check-config exited 1");
        dp_selftest_add(&f.r, 0, "damon_guard", DP_SELFTEST_SKIP, "foreign kdamond");
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_str_eq(why, "L0 config failed");
        fixture_done(&f);
}
END_TEST

START_TEST(test_unusable_no_samples) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        dp_stats_reply_done(&f.after);
        parse_stats(stats_json(6000000, counters_json(1000), true), &f.after);
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_int_eq(dp_selftest_verdict_exit_status(DP_SELFTEST_UNUSABLE), 11);
        ck_assert_int_eq(find(&f.r, "sampling")->result, DP_SELFTEST_FAIL);
        ck_assert_ptr_nonnull(strstr(why, "L4 sampling failed: no sample records in 5.0 s"));
        fixture_done(&f);
}
END_TEST

START_TEST(test_unusable_every_cpu_failed) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        f.cpus[0] = (struct dp_selftest_cpu) { 0, "error", "create", ENOENT };
        f.cpus[1] = (struct dp_selftest_cpu) { 1, "error", "create", ENOSPC };
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_str_eq(find(&f.r, "created")->reason,
                         "0/2 CPUs reached CREATED (the furthest: UNINIT); not: CPU0 ERROR at create (No such file or "
                         "directory), CPU1 ERROR at create (No space left on device)");
        ck_assert_ptr_nonnull(strstr(why, "L1 created failed"));
        fixture_done(&f);

        fixture_init(&f, true);
        f.o.n_cpus = 0;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_str_eq(find(&f.r, "created")->reason, "the daemon reports no CPU");
        fixture_done(&f);
}
END_TEST

/* Counters that do not reconcile fail layer 5, whatever else passes. */
START_TEST(test_unusable_counters_do_not_reconcile) {
        struct fixture f;
        json_t *totals = counters_json(51000);
        char why[1024];

        fixture_init(&f, true);
        json_object_set_new(totals, "enqueue", json_integer(50000));    /* and no overflow */
        dp_stats_reply_done(&f.after);
        parse_stats(stats_json(6000000, totals, true), &f.after);
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "ring")->reason, "do not reconcile (enqueue + overflow == valid)"));
        fixture_done(&f);
}
END_TEST

START_TEST(test_unusable_hot_area_missed) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        f.regions[2].nr_accesses = 18;  /* a region of the cold side as hot as the hot area */
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_str_eq(find(&f.r, "hot_area")->reason,
                         "a hottest region, 0x7f0000000000-0x7f0000400000 (18/20 accesses, 3 at the top of 3), lies "
                         "outside the hot area 0x7f0000400000-0x7f0000800000 give or take 64 KiB");
        fixture_done(&f);

        fixture_init(&f, true);
        for (size_t i = 0; i < 3; i++)
                f.regions[i].nr_accesses = 0;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "hot_area")->reason, "none of the workload's 3 regions has accesses"));
        fixture_done(&f);
}
END_TEST

/* Not a target: a failure when the daemon was told its pid, else a skip. */
START_TEST(test_workload_not_a_target) {
        struct fixture f;
        char why[1024];

        fixture_init(&f, true);
        f.o.workload_targeted = false;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_UNUSABLE);
        ck_assert_int_eq(find(&f.r, "target")->result, DP_SELFTEST_FAIL);
        fixture_done(&f);

        fixture_init(&f, true);
        f.o.workload_targeted = false;
        f.o.workload_expected = false;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_int_eq(find(&f.r, "target")->result, DP_SELFTEST_SKIP);
        ck_assert_int_eq(find(&f.r, "hot_area")->result, DP_SELFTEST_SKIP);
        ck_assert_ptr_nonnull(strstr(why, "L7 target skipped"));
        fixture_done(&f);

        fixture_init(&f, true);
        f.o.workload_targeted = false;
        f.o.physical = true;
        ck_assert_int_eq(judge(&f, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_ptr_nonnull(strstr(find(&f.r, "target")->reason, "physical address space"));
        fixture_done(&f);
}
END_TEST

START_TEST(test_hot_area_found) {
        struct dp_selftest_region r[] = {
                { HOT_START - SLACK, HOT_START + 0x1000, 9, 0 },
                { HOT_START + 0x1000, HOT_END + SLACK, 9, 0 },
                { 0x1000, 0x2000, 8, 0 },
        };

        ck_assert(dp_selftest_hot_area_found(r, 3, HOT_START, HOT_END, SLACK));
        ck_assert(!dp_selftest_hot_area_found(r, 3, HOT_START, HOT_END, SLACK - 4096));
        r[2].nr_accesses = 9;   /* a tie at the top, far away */
        ck_assert(!dp_selftest_hot_area_found(r, 3, HOT_START, HOT_END, SLACK));
        r[2].nr_accesses = 0;
        r[0].nr_accesses = r[1].nr_accesses = 0;
        ck_assert(!dp_selftest_hot_area_found(r, 3, HOT_START, HOT_END, SLACK));
        ck_assert(!dp_selftest_hot_area_found(NULL, 0, HOT_START, HOT_END, SLACK));
        /* No wrap at either end of the address space. */
        r[0] = (struct dp_selftest_region) { 0, 0x1000, 1, 0 };
        ck_assert(dp_selftest_hot_area_found(r, 1, 0x800, 0x1000, SLACK));
        r[0] = (struct dp_selftest_region) { UINT64_MAX - 0x1000, UINT64_MAX, 1, 0 };
        ck_assert(dp_selftest_hot_area_found(r, 1, UINT64_MAX - 0x1000, UINT64_MAX - 0x800, SLACK));
}
END_TEST

START_TEST(test_layer0_pmus) {
        struct dp_pmu_set *set = calloc(1, sizeof(*set));
        struct dp_selftest_report r;

        dp_selftest_report_init(&r);
        snprintf(set->others, sizeof(set->others), "breakpoint msr software tracepoint uprobe");
        dp_selftest_check_pmus(&r, set, 0);
        ck_assert_int_eq(r.checks[0].result, DP_SELFTEST_SKIP);
        ck_assert_str_eq(r.checks[0].reason, "no memory-access PMU (AMD IBS, Intel PEBS, ARM SPE): only the software "
                                             "page-fault control is available (PMUs: breakpoint msr software "
                                             "tracepoint uprobe)");

        set->n = 2;
        set->pmus[0] = (struct dp_pmu) { .name = "cpu", .kind = DP_PMU_CORE };
        set->pmus[1] = (struct dp_pmu) { .name = "ibs_op", .kind = DP_PMU_IBS_OP };
        dp_selftest_check_pmus(&r, set, 0);
        ck_assert_int_eq(r.checks[1].result, DP_SELFTEST_PASS);
        ck_assert_str_eq(r.checks[1].reason, "memory-access PMUs: ibs_op (AMD IBS); refused: cpu: no mem-loads event (no PEBS)");

        dp_selftest_check_pmus(&r, NULL, -EACCES);
        ck_assert_int_eq(r.checks[2].result, DP_SELFTEST_SKIP);
        ck_assert_ptr_nonnull(strstr(r.checks[2].reason, "Permission denied"));
        free(set);
}
END_TEST

START_TEST(test_layer0_damon) {
        struct dp_damon_tree *tree = calloc(1, sizeof(*tree));
        struct dp_selftest_report r;
        char why[1024];

        dp_selftest_report_init(&r);
        dp_selftest_check_damon_sysfs(&r, NULL, -ENOENT);
        ck_assert_int_eq(r.checks[0].result, DP_SELFTEST_SKIP);
        dp_selftest_check_damon_guard(&r, NULL, -ENOENT, -1);
        ck_assert_int_eq(r.checks[1].result, DP_SELFTEST_PASS);

        /* Before any kdamond: operations unknown, nothing foreign. */
        dp_selftest_check_damon_sysfs(&r, tree, 0);
        ck_assert_str_eq(r.checks[2].reason, "present, 0 kdamonds (0 on); operations unknown until a kdamond with a "
                                             "context exists");
        dp_selftest_check_damon_guard(&r, tree, 0, -1);
        ck_assert_str_eq(r.checks[3].reason, "no foreign kdamond");

        /* The machine's kdamond 0 and ours, 1. */
        tree->nr_kdamonds = tree->nr_listed = 2;
        tree->kdamonds[0] = (struct dp_damon_kdamond_info) { .index = 0, .running = true, .operations = "paddr" };
        tree->kdamonds[1] = (struct dp_damon_kdamond_info) { .index = 1, .running = true, .operations = "vaddr" };
        snprintf(tree->features.avail_operations, sizeof(tree->features.avail_operations), "vaddr fvaddr paddr");
        dp_selftest_check_damon_sysfs(&r, tree, 0);
        ck_assert_str_eq(r.checks[4].reason, "present, 2 kdamonds (2 on); operations vaddr fvaddr paddr "
                                             "(avail_operations of an existing context)");
        dp_selftest_check_damon_guard(&r, tree, 0, 1);
        ck_assert_int_eq(r.checks[5].result, DP_SELFTEST_SKIP);
        ck_assert_str_eq(r.checks[5].reason, "1 foreign kdamond, not the daemon's: kdamond 0 (on, paddr); DAMON "
                                             "write checks refused, the other checks run (selftest never writes to "
                                             "DAMON sysfs)");
        tree->nr_listed = 1;
        tree->nr_kdamonds = 1;
        dp_selftest_check_damon_guard(&r, tree, 0, 0);
        ck_assert_str_eq(r.checks[6].reason, "no foreign kdamond (only the daemon's own)");
        /* Layer-0 skips and passes alone leave the verdict to the other layers. */
        dp_selftest_check_capabilities(&r, NULL);
        ck_assert_int_eq(r.checks[7].result, DP_SELFTEST_SKIP);
        ck_assert_int_eq(dp_selftest_verdict(&r, why, sizeof(why)), DP_SELFTEST_PLUMBING_ONLY);
        ck_assert_ptr_nonnull(strstr(why, "DAMON not checked"));
        free(tree);
}
END_TEST

START_TEST(test_layer0_capabilities) {
        struct dp_stats_reply s;
        struct dp_selftest_report r;
        json_t *doc = stats_json(1, counters_json(4), true);

        json_object_set_new(doc, "capabilities", json_pack("{s:[s],s:[s,s],s:[s,s]}", "effective", "CAP_PERFMON",
                                                           "permitted", "CAP_PERFMON", "CAP_DAC_OVERRIDE", "bounding",
                                                           "CAP_PERFMON", "CAP_DAC_OVERRIDE"));
        parse_stats(doc, &s);
        dp_selftest_report_init(&r);
        dp_selftest_check_capabilities(&r, &s);
        ck_assert_int_eq(r.checks[0].result, DP_SELFTEST_PASS);
        ck_assert_str_eq(r.checks[0].reason,
                         "the daemon holds effective CAP_PERFMON, permitted CAP_PERFMON CAP_DAC_OVERRIDE");
        dp_stats_reply_done(&s);

        doc = stats_json(1, counters_json(4), true);
        json_object_set_new(doc, "capabilities", json_pack("{s:[],s:[],s:[]}", "effective", "permitted", "bounding"));
        parse_stats(doc, &s);
        dp_selftest_check_capabilities(&r, &s);
        ck_assert_str_eq(r.checks[1].reason,
                         "the daemon holds effective none, permitted none (no CAP_PERFMON: a CPU in ERROR cannot be "
                         "reopened)");
        dp_stats_reply_done(&s);
}
END_TEST

START_TEST(test_output) {
        _cleanup_free_ char *text = NULL, *dump = NULL;
        struct dp_selftest_report r;
        size_t size = 0;
        json_t *doc, *c;
        FILE *f;

        dp_selftest_report_init(&r);
        ck_assert_int_eq(dp_selftest_evaluate(&r, &(struct dp_selftest_observation) {}), -EINVAL);
        ck_assert_uint_eq(r.n, 0);
        dp_selftest_add(&r, 4, "sampling", DP_SELFTEST_PASS, "+%d callbacks", 5);
        dp_selftest_add(&r, DP_SELFTEST_LAYER_DAMON, "hints", DP_SELFTEST_SKIP, "off: [DAMON] Mode=off");
        f = open_memstream(&text, &size);
        ck_assert_int_eq(dp_selftest_check_print(f, &r.checks[0]), 0);
        ck_assert_int_eq(dp_selftest_check_print(f, &r.checks[1]), 0);
        ck_assert_int_eq(dp_selftest_verdict_print(f, &r), 0);
        fclose(f);
        ck_assert_str_eq(text, "[PASS] L4 sampling: +5 callbacks\n"
                               "[SKIP] DAMON hints: off: [DAMON] Mode=off\n"
                               "verdict: PLUMBING-ONLY (exit 10): only the software control samples (no hardware "
                               "memory-access source); DAMON skipped: off: [DAMON] Mode=off\n");

        doc = dp_selftest_report_to_json(&r);
        ck_assert_ptr_nonnull(doc);
        ck_assert_str_eq(json_string_value(json_object_get(doc, "verdict")), "PLUMBING-ONLY");
        ck_assert_int_eq(json_integer_value(json_object_get(doc, "exit_status")), 10);
        ck_assert_uint_eq(json_array_size(json_object_get(doc, "checks")), 2);
        c = json_array_get(json_object_get(doc, "checks"), 1);
        dump = json_dumps(c, JSON_SORT_KEYS | JSON_COMPACT);
        ck_assert_str_eq(dump, "{\"layer\":\"DAMON\",\"name\":\"hints\",\"partial\":false,"
                               "\"reason\":\"off: [DAMON] Mode=off\",\"result\":\"SKIP\"}");
        json_decref(doc);

        /* Full: refused, nothing overwritten. */
        while (r.n < DP_SELFTEST_CHECKS_MAX)
                ck_assert_ptr_nonnull(dp_selftest_add(&r, 1, "x", DP_SELFTEST_PASS, "x"));
        ck_assert_ptr_null(dp_selftest_add(&r, 1, "y", DP_SELFTEST_FAIL, "y"));
        ck_assert_uint_eq(r.n, DP_SELFTEST_CHECKS_MAX);
        ck_assert_str_eq(dp_selftest_result_name(DP_SELFTEST_FAIL), "FAIL");
        ck_assert_str_eq(dp_selftest_verdict_name(DP_SELFTEST_UNUSABLE), "UNUSABLE");
}
END_TEST

int main(void) {
        Suite *s = suite_create("selftest");
        TCase *tc = tcase_create("verdict");

        tcase_add_test(tc, test_fully_integrated);
        tcase_add_test(tc, test_plumbing_only_software_control);
        tcase_add_test(tc, test_plumbing_only_cpu_in_error);
        tcase_add_test(tc, test_offline_cpu_left_out);
        tcase_add_test(tc, test_plumbing_only_damon_not_read_back);
        tcase_add_test(tc, test_plumbing_only_layer0_failure);
        tcase_add_test(tc, test_unusable_no_samples);
        tcase_add_test(tc, test_unusable_every_cpu_failed);
        tcase_add_test(tc, test_unusable_counters_do_not_reconcile);
        tcase_add_test(tc, test_unusable_hot_area_missed);
        tcase_add_test(tc, test_workload_not_a_target);
        tcase_add_test(tc, test_hot_area_found);
        tcase_add_test(tc, test_layer0_pmus);
        tcase_add_test(tc, test_layer0_damon);
        tcase_add_test(tc, test_layer0_capabilities);
        tcase_add_test(tc, test_output);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
