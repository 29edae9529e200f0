/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Every sample count the tracker lets a user see is a count of samples that
 * fell in that region: real captures replayed (the PEBS one of issue 16,
 * whose user samples used to show under regions not holding them, and the
 * page-fault one, dense enough to split and merge for many aggregations),
 * each aggregation's regions checked against the samples the tracker was
 * given in it.  A count the tracker marks unknown is never shown; how many
 * there are is bounded too, so that "unknown" cannot hide the bug. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "macro.h"
#include "replay.h"

#include "check-main.h"

struct seen {
        uint32_t pid;
        uint64_t vaddr;
};

struct counts {
        struct seen *v;                 /* samples handed to the tracker since the last aggregation */
        size_t n, cap;
        struct dp_tracker_snapshot snap;
        size_t aggregations;
        uint64_t samples_checked;       /* samples inside regions whose count was shown */
        uint64_t regions_known, regions_unknown;
        uint64_t misfiled;              /* counts that were not the samples inside */
};

static void on_sample(const struct dp_sample *s, void *userdata) {
        struct counts *c = userdata;

        if (c->n == c->cap) {
                c->cap = c->cap ? 2 * c->cap : 1024;
                c->v = realloc(c->v, c->cap * sizeof(*c->v));
                ck_assert_ptr_nonnull(c->v);
        }
        c->v[c->n++] = (struct seen) { s->pid, s->vaddr };
}

static uint64_t inside(const struct counts *c, uint32_t tgid, const struct dp_snapshot_region *r) {
        uint64_t n = 0;

        for (size_t i = 0; i < c->n; i++)
                n += c->v[i].pid == tgid && c->v[i].vaddr >= r->start && c->v[i].vaddr < r->end;
        return n;
}

/* @last: the aggregation just closed (last_nr_samples), else the open one. */
static void check_snapshot(struct counts *c, const struct dp_tracker *t, bool last) {
        const uint32_t flag = last ? DP_REGION_LAST_SAMPLES_UNKNOWN : DP_REGION_SAMPLES_UNKNOWN;

        ck_assert_int_eq(dp_tracker_snapshot(t, &c->snap), 0);
        for (size_t i = 0; i < c->snap.nr_targets; i++) {
                const struct dp_snapshot_target *target = &c->snap.targets[i];

                for (size_t k = 0; k < target->nr_regions; k++) {
                        const struct dp_snapshot_region *r = &c->snap.regions[target->first_region + k];
                        uint64_t want = inside(c, target->tgid, r);

                        if (r->unknown & flag) {
                                c->regions_unknown++;
                                continue;
                        }
                        c->regions_known++;
                        c->samples_checked += want;
                        c->misfiled += (last ? r->last_nr_samples : r->nr_samples) != want;
                }
        }
}

static void on_aggregation(const struct dp_tracker *t, void *userdata) {
        struct counts *c = userdata;

        c->aggregations++;
        check_snapshot(c, t, true);
        c->n = 0;
}

static void replay_checked(const char *name, uint64_t sample_ns, uint64_t aggr_ns, struct counts *c) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        const char *dir = getenv("DP_TESTDATA");
        _cleanup_free_ char *path = NULL;
        struct dp_tracker_config tc;
        struct dp_tracker *tracker;
        struct dp_replay *rp;

        ck_assert_msg(dir, "DP_TESTDATA is not set");
        ck_assert_int_gt(asprintf(&path, "%s/%s", dir, name), 0);
        ck_assert_int_eq(dp_perf_data_open(path, &data), 0);
        dp_tracker_config_init(&tc);
        tc.sample_interval_ns = sample_ns;
        tc.aggr_interval_ns = aggr_ns;
        ck_assert_int_eq(dp_tracker_new(&tc, &tracker), 0);
        ck_assert_int_eq(dp_replay_new(NULL, tracker, false, &rp), 0);
        ck_assert_int_eq(dp_replay_use_capture_sources(rp, data, NULL, NULL, NULL), 0);
        dp_replay_set_sample_hook(rp, on_sample, c);
        dp_replay_set_aggregation_hook(rp, on_aggregation, c);
        ck_assert_int_eq(dp_replay_run(rp, data), 0);
        /* And the aggregation still open at the end. */
        check_snapshot(c, tracker, false);

        dp_replay_free(rp);
        dp_tracker_free(tracker);
        dp_tracker_snapshot_free(&c->snap);
        free(c->v);
}

/* The PEBS capture of issue 16: two user samples among twelve kernel ones
 * in 1.5 ms, shorter than the replay's lag, so the aggregations close at the
 * end of the run and their split regions are what a user sees. */
START_TEST(test_pebs_capture) {
        struct counts c = {};

        replay_checked("pebs-ivybridge-numatop.perf.data", 10 * 1000, 100 * 1000, &c);
        ck_assert_uint_ge(c.aggregations, 1);
        ck_assert_uint_eq(c.misfiled, 0);
        ck_assert_uint_eq(c.samples_checked, 2);
        ck_assert_uint_eq(c.regions_unknown, 0);
}
END_TEST

/* The page-fault capture: many processes, mappings growing as they fault,
 * so regions are re-bounded, merged and split throughout. */
START_TEST(test_pagefault_capture) {
        static const uint64_t aggr_us[] = { 1000, 10 * 1000, 100 * 1000 };

        for (size_t i = 0; i < DP_ARRAY_SIZE(aggr_us); i++) {
                struct counts c = {};

                replay_checked("pagefault-system.perf.data", aggr_us[i] * 100, aggr_us[i] * 1000, &c);
                ck_assert_uint_ge(c.aggregations, 5);
                ck_assert_msg(c.misfiled == 0, "aggr %" PRIu64 " us: %" PRIu64 " misfiled counts", aggr_us[i],
                              c.misfiled);
                ck_assert_uint_gt(c.samples_checked, 1000);
                /* Unknown only where re-bounding cut through sampled memory. */
                ck_assert_msg(c.regions_unknown * 20 < c.regions_known, "aggr %" PRIu64 " us: %" PRIu64
                              " unknown, %" PRIu64 " known", aggr_us[i], c.regions_unknown, c.regions_known);
        }
}
END_TEST

static Suite *replay_counts_suite(void) {
        Suite *s = suite_create("replay-counts");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_pebs_capture);
        tcase_add_test(tc, test_pagefault_capture);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(replay_counts_suite());
}
