/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "test-tree.h"
#include "decode-ibs.h"
#include "decode-pebs.h"
#include "perf-attr-print.h"
#include "pmu.h"
#include "source.h"
#include "pfm.h"

/*
 * What each source asks perf_event_open for, field by field, on the fake
 * trees of tests/sysfs/.  libpfm runs with LIBPFM_ENCODE_INACTIVE=1 (set in
 * main before its one initialisation) so fully qualified names of PMUs this
 * machine lacks still encode.
 */

#define SAMPLE_IBS                                                                                       \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW |      \
         PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC)
#define SAMPLE_PEBS                                                                                      \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU | PERF_SAMPLE_WEIGHT |   \
         PERF_SAMPLE_DATA_SRC)
#define SAMPLE_SPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

static const char *fixture(const char *name) {
        static char path[PATH_MAX];
        const char *dir = getenv("DP_SYSFS_FIXTURES");

        int n;

        if (dir)
                n = snprintf(path, sizeof(path), "%s/%s", dir, name);
        else {
                char here[PATH_MAX];

                snprintf(here, sizeof(here), "%s", __FILE__);
                *strrchr(here, '/') = '\0';
                n = snprintf(path, sizeof(path), "%s/sysfs/%s", here, name);
        }
        ck_assert(n > 0 && (size_t) n < sizeof(path));
        return path;
}

static struct dp_pmu_set *trees[8];
static const char *const tree_names[] = { "amd-zen4", "amd-zen5", "intel-spr", "intel-adl", "arm-spe", "this-machine" };
enum { ZEN4, ZEN5, SPR, ADL, SPE, THIS };

static void load_trees(void) {
        for (size_t i = 0; i < sizeof(tree_names) / sizeof(tree_names[0]); i++)
                ck_assert_int_eq(dp_pmu_detect(fixture(tree_names[i]), &trees[i]), 0);
}

static void free_trees(void) {
        for (size_t i = 0; i < sizeof(trees) / sizeof(trees[0]); i++) {
                dp_pmu_set_free(trees[i]);
                trees[i] = NULL;
        }
}

static struct dp_source_options opts(int tree) {
        return (struct dp_source_options) { .pmus = trees[tree] };
}

static struct dp_event_plan plan_ok(const struct dp_source *source, const struct dp_source_options *o, int cpu) {
        struct dp_event_plan plan;
        int r = dp_source_build_events(source, o, cpu, &plan);

        ck_assert_msg(r == 0, "%s on cpu %d: %s (%s)", source->name, cpu, strerror(-r), plan.note);
        return plan;
}

static void plan_fails(const struct dp_source *source, const struct dp_source_options *o, int cpu, int error,
                       const char *note_part) {
        struct dp_event_plan plan;
        int r = dp_source_build_events(source, o, cpu, &plan);

        ck_assert_msg(r == error, "%s on cpu %d: expected %s, got %s (%s)", source->name, cpu, strerror(-error),
                      r ? strerror(-r) : "success", plan.note);
        ck_assert_msg(strstr(plan.note, note_part), "note \"%s\" lacks \"%s\"", plan.note, note_part);
}

static void assert_note(const struct dp_event_plan *plan, const char *part) {
        ck_assert_msg(strstr(plan->note, part), "note \"%s\" lacks \"%s\"", plan->note, part);
}

/* The bits dp_source_attr_common() sets on every event. */
static void assert_common(const struct perf_event_attr *a) {
        ck_assert_uint_eq(a->size, sizeof(*a));
        ck_assert_uint_eq(a->sample_id_all, 1);
        ck_assert_uint_eq(a->use_clockid, 1);
        ck_assert_uint_eq(a->read_format, PERF_FORMAT_LOST | PERF_FORMAT_TOTAL_TIME_ENABLED);
}

/* ---- IBS ---- */

START_TEST(test_ibs_default) {
        struct dp_source_options o = opts(ZEN4);
        struct dp_event_plan p = plan_ok(&dp_source_ibs, &o, 1);
        const struct perf_event_attr *a = &p.event[0].attr;

        ck_assert_uint_eq(p.n, 1);
        ck_assert_str_eq(p.pmu, "ibs_op");
        ck_assert_uint_eq(p.ring, 0);
        ck_assert_uint_eq(p.aux_pages, 0);
        ck_assert_uint_eq(p.event[0].leader, 0);
        ck_assert(p.event[0].sampling);
        ck_assert_str_eq(p.event[0].role, "ibs_op");
        ck_assert_str_eq(p.note, "");

        ck_assert_uint_eq(a->type, 11);
        ck_assert_uint_eq(a->config, 0);
        ck_assert_uint_eq(a->config1, 0);
        ck_assert_uint_eq(a->config2, 0);
        ck_assert_uint_eq(a->freq, 0);
        ck_assert_uint_eq(a->sample_period, 131072);
        ck_assert_uint_eq(a->sample_type, SAMPLE_IBS);
        ck_assert_uint_eq(a->disabled, 1);
        ck_assert_uint_eq(a->precise_ip, 0);
        /* IBS refuses exclude_* without swfilt, exclude_guest included (PERF_PMU_CAP_NO_EXCLUDE) */
        ck_assert_uint_eq(a->exclude_user | a->exclude_kernel | a->exclude_hv | a->exclude_guest, 0);
        assert_common(a);

        /* PHYS_ADDR only when asked for, as perf mem -p */
        o.want_phys = true;
        p = plan_ok(&dp_source_ibs, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.sample_type, SAMPLE_IBS | PERF_SAMPLE_PHYS_ADDR);

}
END_TEST

START_TEST(test_ibs_config_bits) {
        struct dp_source_options o = opts(ZEN4);
        struct dp_event_plan p;

        o.count_ops = true;
        p = plan_ok(&dp_source_ibs, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.config, UINT64_C(1) << 19);

        o.l3_miss_only = true;
        p = plan_ok(&dp_source_ibs, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.config, (UINT64_C(1) << 19) | (UINT64_C(1) << 16));

        o.count_ops = false;
        p = plan_ok(&dp_source_ibs, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.config, UINT64_C(1) << 16);
}
END_TEST

START_TEST(test_ibs_ldlat) {
        struct dp_source_options o = opts(ZEN5);
        struct dp_event_plan p;

        o.min_latency = 256;
        p = plan_ok(&dp_source_ibs, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.config1, 256);
        ck_assert_uint_eq(p.event[0].attr.config, UINT64_C(1) << 16);  /* l3missonly comes with it */
        assert_note(&p, "ldlat implies l3missonly");

        o.min_latency = 300;
        p = plan_ok(&dp_source_ibs, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.config1, 300);
        assert_note(&p, "acts as 256");

        o.min_latency = 128;
        ck_assert_uint_eq(plan_ok(&dp_source_ibs, &o, 0).event[0].attr.config1, 128);
        o.min_latency = 2048;
        ck_assert_uint_eq(plan_ok(&dp_source_ibs, &o, 0).event[0].attr.config1, 2048);
        o.min_latency = 127;
        plan_fails(&dp_source_ibs, &o, 0, -ERANGE, "outside 128-2048");
        o.min_latency = 2049;
        plan_fails(&dp_source_ibs, &o, 0, -ERANGE, "outside 128-2048");

        /* Zen4 has no ldlat. */
        o = opts(ZEN4);
        o.min_latency = 256;
        plan_fails(&dp_source_ibs, &o, 0, -EOPNOTSUPP, "ibs_op has no format/ldlat");
}
END_TEST

START_TEST(test_ibs_period_rules) {
        struct dp_source_options o = opts(ZEN4);

        o.sample_period = 16;
        ck_assert_uint_eq(plan_ok(&dp_source_ibs, &o, 0).event[0].attr.sample_period, 16);
        o.sample_period = 1048560;
        plan_ok(&dp_source_ibs, &o, 0);
        o.sample_period = 1048576;      /* needs OpCntExt, which Zen4 has */
        plan_ok(&dp_source_ibs, &o, 0);
        o.sample_period = 134217712;
        plan_ok(&dp_source_ibs, &o, 0);

        o.sample_period = 8;
        plan_fails(&dp_source_ibs, &o, 0, -ERANGE, "period 8 is below the minimum of 16");
        o.sample_period = 100;
        plan_fails(&dp_source_ibs, &o, 0, -ERANGE, "period 100 is not a multiple of 16");
        o.sample_period = 134217728;
        plan_fails(&dp_source_ibs, &o, 0, -ERANGE, "exceeds the maximum 134217712 (27-bit MaxCnt with OpCntExt)");

        o.sample_period = 0;
        o.sample_freq = 4000;
        {
                struct dp_event_plan p = plan_ok(&dp_source_ibs, &o, 0);

                ck_assert_uint_eq(p.event[0].attr.freq, 1);
                ck_assert_uint_eq(p.event[0].attr.sample_freq, 4000);
        }
        o.sample_period = 4096;
        plan_fails(&dp_source_ibs, &o, 0, -EINVAL, "not both");
}
END_TEST

START_TEST(test_ibs_refusals) {
        struct dp_source_options o = {};

        plan_fails(&dp_source_ibs, &o, 0, -ENODEV, "no detected PMUs");
        o = opts(SPR);
        plan_fails(&dp_source_ibs, &o, 0, -ENODEV, "no usable ibs_op PMU for cpu 0");
        o = opts(ZEN4);
        plan_fails(&dp_source_ibs, &o, -1, -EINVAL, "invalid cpu");
}
END_TEST

/* ---- PEBS ---- */

START_TEST(test_pebs_spr_libpfm) {
        struct dp_source_options o = opts(SPR);
        struct dp_event_plan p;
        const struct perf_event_attr *aux, *loads;

        o.pfm_pmu = "spr";
        p = plan_ok(&dp_source_pebs, &o, 5);
        ck_assert_str_eq(p.pmu, "cpu");
        ck_assert_uint_eq(p.n, 2);
        ck_assert_uint_eq(p.ring, 1);
        ck_assert_uint_eq(p.aux_pages, 0);
        assert_note(&p, "loads encoded by libpfm (spr::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30:precise=2)");

        /* mem-loads-aux leads the group and only counts. */
        aux = &p.event[0].attr;
        ck_assert_str_eq(p.event[0].role, "mem-loads-aux");
        ck_assert_uint_eq(p.event[0].leader, 0);
        ck_assert(!p.event[0].sampling);
        ck_assert_uint_eq(aux->type, 4);
        ck_assert_uint_eq(aux->config, 0x8203);
        ck_assert_uint_eq(aux->sample_period, 0);
        ck_assert_uint_eq(aux->precise_ip, 0);
        ck_assert_uint_eq(aux->disabled, 1);
        ck_assert_uint_eq(aux->exclude_guest, 1);
        assert_common(aux);

        loads = &p.event[1].attr;
        ck_assert_str_eq(p.event[1].role, "mem-loads");
        ck_assert_uint_eq(p.event[1].leader, 0);
        ck_assert(p.event[1].sampling);
        ck_assert_uint_eq(loads->type, 4);
        ck_assert_uint_eq(loads->config, 0x1cd);
        ck_assert_uint_eq(loads->config1, 30);
        ck_assert_uint_eq(loads->precise_ip, 2);
        ck_assert_uint_eq(loads->disabled, 0);  /* follows the leader */
        ck_assert_uint_eq(loads->freq, 0);
        ck_assert_uint_eq(loads->sample_period, 1000);
        ck_assert_uint_eq(loads->sample_type, SAMPLE_PEBS);
        ck_assert_uint_eq(loads->exclude_kernel | loads->exclude_user, 0);
        ck_assert_uint_eq(loads->exclude_guest, 1);     /* as perf: not a guest's accesses */
        assert_common(loads);
}
END_TEST

START_TEST(test_pebs_spr_sysfs_matches_libpfm) {
        struct dp_source_options o = opts(SPR);
        struct dp_event_plan from_pfm, from_sysfs;

        o.min_latency = 100;
        o.pfm_pmu = "spr";
        from_pfm = plan_ok(&dp_source_pebs, &o, 0);
        /* The kernel's own mem-loads string, through the format fields. */
        o.pfm_pmu = "";
        from_sysfs = plan_ok(&dp_source_pebs, &o, 0);
        assert_note(&from_sysfs, "libpfm not asked; loads encoded from events/mem-loads");

        ck_assert_uint_eq(from_sysfs.n, 2);
        ck_assert_uint_eq(from_sysfs.event[1].attr.type, from_pfm.event[1].attr.type);
        ck_assert_uint_eq(from_sysfs.event[1].attr.config, from_pfm.event[1].attr.config);
        ck_assert_uint_eq(from_sysfs.event[1].attr.config1, 100);
        ck_assert_uint_eq(from_pfm.event[1].attr.config1, 100);
        ck_assert_uint_eq(from_sysfs.event[1].attr.precise_ip, 2);
        ck_assert_mem_eq(&from_sysfs.event[0].attr, &from_pfm.event[0].attr, sizeof(struct perf_event_attr));
}
END_TEST

START_TEST(test_pebs_spr_stores_and_phys) {
        struct dp_source_options o = opts(SPR);
        struct dp_event_plan p;
        const struct perf_event_attr *st;

        o.pfm_pmu = "spr";
        o.want_stores = true;
        o.want_phys = true;
        o.sample_period = 2003;
        p = plan_ok(&dp_source_pebs, &o, 0);
        ck_assert_uint_eq(p.n, 3);
        ck_assert_uint_eq(p.ring, 1);
        st = &p.event[2].attr;
        ck_assert_str_eq(p.event[2].role, "mem-stores");
        ck_assert_uint_eq(p.event[2].leader, 2);       /* its own event, redirected into the ring */
        ck_assert(p.event[2].sampling);
        ck_assert_uint_eq(st->type, 4);
        ck_assert_uint_eq(st->config, 0x2cd);
        ck_assert_uint_eq(st->precise_ip, 2);
        ck_assert_uint_eq(st->disabled, 1);
        ck_assert_uint_eq(st->sample_period, 2003);
        ck_assert_uint_eq(st->sample_type, SAMPLE_PEBS | PERF_SAMPLE_PHYS_ADDR);
        ck_assert_uint_eq(p.event[1].attr.sample_type, st->sample_type);       /* one parser for the ring */
        ck_assert_uint_eq(p.event[1].attr.sample_period, 2003);
}
END_TEST

START_TEST(test_pebs_ldlat_range) {
        struct dp_source_options o = opts(SPR);

        o.pfm_pmu = "";
        o.min_latency = 65535;
        ck_assert_uint_eq(plan_ok(&dp_source_pebs, &o, 0).event[1].attr.config1, 65535);
        o.min_latency = 65536;
        plan_fails(&dp_source_pebs, &o, 0, -ERANGE, "cannot set ldlat=65536");
        o.pfm_pmu = "spr";      /* libpfm refuses too, then the sysfs path reports the range */
        plan_fails(&dp_source_pebs, &o, 0, -ERANGE, "cannot set ldlat=65536");

        o = opts(SPR);
        o.pfm_pmu = "";
        o.sample_period = 1000;
        o.sample_freq = 100;
        plan_fails(&dp_source_pebs, &o, 0, -EINVAL, "not both");
        o.sample_period = 0;
        ck_assert_uint_eq(plan_ok(&dp_source_pebs, &o, 0).event[1].attr.freq, 1);
}
END_TEST

START_TEST(test_pebs_hybrid) {
        struct dp_source_options o = opts(ADL);
        struct dp_event_plan p;

        o.pfm_pmu = "spr";      /* ignored for hybrid PMUs */
        p = plan_ok(&dp_source_pebs, &o, 2);
        ck_assert_str_eq(p.pmu, "cpu_core");
        ck_assert_uint_eq(p.n, 2);
        ck_assert_uint_eq(p.event[0].attr.config, 0x8203);
        ck_assert_uint_eq(p.event[1].attr.type, 4);
        ck_assert_uint_eq(p.event[1].attr.config, 0x1cd);
        ck_assert_uint_eq(p.event[1].attr.config1, 30);
        assert_note(&p, "cpu_core: hybrid PMU");

        p = plan_ok(&dp_source_pebs, &o, 20);
        ck_assert_str_eq(p.pmu, "cpu_atom");
        ck_assert_uint_eq(p.n, 1);      /* no aux leader on the small core */
        ck_assert_uint_eq(p.ring, 0);
        ck_assert_uint_eq(p.event[0].leader, 0);
        ck_assert_uint_eq(p.event[0].attr.type, 10);
        ck_assert_uint_eq(p.event[0].attr.config, 0x5d0);
        ck_assert_uint_eq(p.event[0].attr.config1, 30);
        ck_assert_uint_eq(p.event[0].attr.precise_ip, 2);
        ck_assert_uint_eq(p.event[0].attr.disabled, 1);

        o.want_stores = true;
        p = plan_ok(&dp_source_pebs, &o, 23);
        ck_assert_uint_eq(p.n, 2);
        ck_assert_uint_eq(p.event[1].attr.type, 10);
        ck_assert_uint_eq(p.event[1].attr.config, 0x6d0);

        plan_fails(&dp_source_pebs, &o, 24, -ENODEV, "no core PMU with mem-loads covers cpu 24");
}
END_TEST

START_TEST(test_pebs_refusals) {
        struct dp_source_options o = opts(ZEN4);

        plan_fails(&dp_source_pebs, &o, 0, -ENODEV, "no core PMU with mem-loads");
        o = opts(THIS);
        plan_fails(&dp_source_pebs, &o, 0, -ENODEV, "no core PMU with mem-loads");
        o = (struct dp_source_options) {};
        plan_fails(&dp_source_pebs, &o, 0, -ENODEV, "no detected PMUs");
}
END_TEST

/* The known answers FIELD-NOTES §1 records for libpfm 4.13. */
START_TEST(test_pfm_encode_known_answers) {
        struct perf_event_attr a = {};
        char why[128];
        int r;

        ck_assert_int_eq(dp_pfm_encode("icl::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3", &a, why, sizeof(why)), 0);
        ck_assert_uint_eq(a.type, 4);
        ck_assert_uint_eq(a.config, 0x1cd);
        ck_assert_uint_eq(a.config1, 3);
        ck_assert_uint_eq(a.precise_ip, 0);

        memset(&a, 0, sizeof(a));
        ck_assert_int_eq(dp_pfm_encode("spr::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=30:precise=2", &a, why,
                                       sizeof(why)), 0);
        ck_assert_uint_eq(a.type, 4);
        ck_assert_uint_eq(a.config, 0x1cd);
        ck_assert_uint_eq(a.config1, 30);
        ck_assert_uint_eq(a.precise_ip, 2);
        ck_assert_uint_eq(a.exclude_kernel, 0);         /* user and kernel levels */

        /* libpfm 4.13 has no Alder Lake tables; a later one must agree with the kernel's string. */
        memset(&a, 0, sizeof(a));
        r = dp_pfm_encode("adl_glc::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=3", &a, why, sizeof(why));
        if (r == 0)
                ck_assert_uint_eq(a.config, 0x1cd);
        else
                ck_assert_int_eq(r, -ENOENT);

        ck_assert_int_eq(dp_pfm_encode("nosuch::NOTHING", &a, why, sizeof(why)), -ENOENT);
        ck_assert_str_eq(why, "libpfm: event not found");
        ck_assert_int_eq(dp_pfm_encode("icl::MEM_TRANS_RETIRED:LOAD_LATENCY:ldlat=65536", &a, why, sizeof(why)),
                         -EINVAL);
        ck_assert_int_eq(dp_pfm_encode(NULL, &a, NULL, 0), -EINVAL);

        /* perf:: events still work with LIBPFM_ENCODE_INACTIVE set. */
        memset(&a, 0, sizeof(a));
        ck_assert_int_eq(dp_pfm_encode("perf::PAGE-FAULTS", &a, NULL, 0), 0);
        ck_assert_uint_eq(a.type, PERF_TYPE_SOFTWARE);
        ck_assert_uint_eq(a.config, PERF_COUNT_SW_PAGE_FAULTS);
}
END_TEST

/* ---- SPE ---- */

START_TEST(test_spe_default) {
        struct dp_source_options o = opts(SPE);
        struct dp_event_plan p = plan_ok(&dp_source_spe, &o, 3);
        const struct perf_event_attr *a = &p.event[0].attr;

        ck_assert_str_eq(p.pmu, "arm_spe_0");
        ck_assert_uint_eq(p.n, 1);
        ck_assert_uint_eq(p.ring, 0);
        ck_assert_uint_eq(p.aux_pages, 128);
        ck_assert_str_eq(p.event[0].role, "arm_spe");
        ck_assert_uint_eq(a->type, 9);
        /* ts_enable | jitter | load_filter */
        ck_assert_uint_eq(a->config, UINT64_C(1) | UINT64_C(1) << 16 | UINT64_C(1) << 33);
        ck_assert_uint_eq(a->config1, 0);
        ck_assert_uint_eq(a->config2, 0);
        ck_assert_uint_eq(a->freq, 0);
        ck_assert_uint_eq(a->sample_period, 4096);
        ck_assert_uint_eq(a->sample_type, SAMPLE_SPE);
        ck_assert_uint_eq(a->aux_watermark, 128 * (uint32_t) sysconf(_SC_PAGESIZE) / 2);
        ck_assert_uint_eq(a->disabled, 1);     /* enabled after the AUX area is mapped */
        ck_assert_uint_eq(a->exclude_guest, 1);
        assert_common(a);
        ck_assert_str_eq(p.note, "");
}
END_TEST

START_TEST(test_spe_options) {
        struct dp_source_options o = opts(SPE);
        struct dp_event_plan p;

        o.want_stores = true;
        o.want_phys = true;
        o.min_latency = 100;
        o.aux_pages = 2;
        p = plan_ok(&dp_source_spe, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.config, UINT64_C(1) | UINT64_C(1) << 1 | UINT64_C(1) << 16 |
                                                          UINT64_C(1) << 33 | UINT64_C(1) << 34);
        ck_assert_uint_eq(p.event[0].attr.config2, 100);
        ck_assert_uint_eq(p.aux_pages, 2);

        o.min_latency = 4096;   /* min_latency is config2:0-11 */
        plan_fails(&dp_source_spe, &o, 0, -ERANGE, "min_latency=4096 does not fit");
        o.min_latency = 0;

        o.aux_pages = 3;
        plan_fails(&dp_source_spe, &o, 0, -EINVAL, "power of two");
        o.aux_pages = 1;
        plan_fails(&dp_source_spe, &o, 0, -EINVAL, "power of two");
        o.aux_pages = 0;

        o.sample_freq = 1000;
        plan_fails(&dp_source_spe, &o, 0, -EINVAL, "frequency mode is refused");
        o.sample_freq = 0;

        plan_fails(&dp_source_spe, &o, 8, -ENODEV, "no usable arm_spe PMU covers cpu 8");
        o = opts(ZEN4);
        plan_fails(&dp_source_spe, &o, 0, -ENODEV, "no usable arm_spe");
}
END_TEST

START_TEST(test_spe_period) {
        struct dp_source_options o = opts(SPE);
        struct dp_event_plan p;

        o.sample_period = 100;
        p = plan_ok(&dp_source_spe, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.sample_period, 1024);
        assert_note(&p, "period 100 raised to caps/min_interval 1024");

        o.sample_period = 1500;
        p = plan_ok(&dp_source_spe, &o, 0);
        ck_assert_uint_eq(p.event[0].attr.sample_period, 1280);
        assert_note(&p, "period 1500 set to 1280");

        o.sample_period = 0xffffff00;
        ck_assert_uint_eq(plan_ok(&dp_source_spe, &o, 0).event[0].attr.sample_period, 0xffffff00);
        o.sample_period = UINT64_C(0x100000000);
        plan_fails(&dp_source_spe, &o, 0, -ERANGE, "exceeds the maximum");
}
END_TEST

/* ---- Runtime trees for the corner cases ---- */

static void tree_setup(void) {
        test_tree_make("/tmp/dp-pmu-encode-XXXXXX");
}

START_TEST(test_ibs_without_opcntext) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        struct dp_source_options o = {};

        /* A pre-Zen4 ibs_op: cnt_ctl only, no extensions, so MaxCnt keeps 16 bits. */
        put("ibs_op/type", "9\n");
        put("ibs_op/format/cnt_ctl", "config:19\n");
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        o.pmus = set;
        o.sample_period = 1048560;
        plan_ok(&dp_source_ibs, &o, 0);
        o.sample_period = 1048576;
        plan_fails(&dp_source_ibs, &o, 0, -ERANGE, "exceeds the maximum 1048560 (16-bit MaxCnt; no OpCntExt)");
        o.sample_period = 4096;
        o.l3_miss_only = true;
        plan_fails(&dp_source_ibs, &o, 0, -EOPNOTSUPP, "ibs_op has no format/l3missonly");
}
END_TEST

START_TEST(test_pebs_max_precise) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        struct dp_source_options o = {};

        put("cpu/type", "4\n");
        put("cpu/format/event", "config:0-7\n");
        put("cpu/format/umask", "config:8-15\n");
        put("cpu/format/ldlat", "config1:0-15\n");
        put("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
        put("cpu/caps/max_precise", "1\n");
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        o.pmus = set;
        o.pfm_pmu = "";
        ck_assert_uint_eq(plan_ok(&dp_source_pebs, &o, 0).event[0].attr.precise_ip, 1);
        o.want_stores = true;
        plan_fails(&dp_source_pebs, &o, 0, -EOPNOTSUPP, "cpu lists no mem-stores event");
}
END_TEST

START_TEST(test_pebs_bad_event_strings) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        struct dp_source_options o = {};

        put("cpu/type", "4\n");
        put("cpu/format/event", "config:0-7\n");
        put("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");  /* no umask/ldlat formats */
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        o.pmus = set;
        o.pfm_pmu = "";
        plan_fails(&dp_source_pebs, &o, 0, -ENOENT, "events/mem-loads \"event=0xcd,umask=0x1,ldlat=3\" does not fit");
}
END_TEST

START_TEST(test_spe_without_min_interval) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        struct dp_source_options o = {};
        struct dp_event_plan p;

        put("arm_spe_1/type", "12\n");
        put("arm_spe_1/format/ts_enable", "config:0\n");
        put("arm_spe_1/format/jitter", "config:16\n");
        put("arm_spe_1/format/load_filter", "config:33\n");
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        o.pmus = set;
        o.sample_period = 512;
        p = plan_ok(&dp_source_spe, &o, 40);
        ck_assert_uint_eq(p.event[0].attr.sample_period, 512);
        assert_note(&p, "no caps/min_interval");
        o.want_stores = true;
        plan_fails(&dp_source_spe, &o, 0, -EOPNOTSUPP, "arm_spe_1 has no format/store_filter");
}
END_TEST

/* ---- event: and the generic path ---- */

START_TEST(test_event_source) {
        struct dp_source_options o = {};
        struct dp_event_plan p;

        o.event = "perf::PAGE-FAULTS";
        p = plan_ok(&dp_source_event, &o, 0);
        ck_assert_str_eq(p.pmu, "libpfm");
        ck_assert_uint_eq(p.n, 1);
        ck_assert_uint_eq(p.event[0].attr.type, PERF_TYPE_SOFTWARE);
        ck_assert_uint_eq(p.event[0].attr.config, PERF_COUNT_SW_PAGE_FAULTS);
        ck_assert_uint_eq(p.event[0].attr.sample_period, 1000);
        ck_assert_uint_eq(p.event[0].attr.sample_type, SAMPLE_PEBS);

        o.event = "perf::PAGE-FAULTS:period=1";
        ck_assert_uint_eq(plan_ok(&dp_source_event, &o, 0).event[0].attr.sample_period, 1);
        o.sample_period = 7;
        ck_assert_uint_eq(plan_ok(&dp_source_event, &o, 0).event[0].attr.sample_period, 7);

        o.event = "nosuch::NOTHING";
        plan_fails(&dp_source_event, &o, 0, -ENOENT, "event:nosuch::NOTHING: libpfm: event not found");
        o.event = NULL;
        plan_fails(&dp_source_event, &o, 0, -EINVAL, "no libpfm event string");
        ck_assert_ptr_eq(dp_source_event.decode, dp_source_decode_generic);
}
END_TEST

START_TEST(test_generic_plan_for_pagefault) {
        struct dp_source_options o = { .want_phys = true };
        struct dp_event_plan p = plan_ok(&dp_source_pagefault, &o, 1);

        ck_assert_uint_eq(p.n, 1);
        ck_assert_uint_eq(p.ring, 0);
        ck_assert(p.event[0].sampling);
        ck_assert_str_eq(p.event[0].role, "pagefault");
        ck_assert_str_eq(p.pmu, "software");
        ck_assert_uint_eq(p.event[0].attr.type, PERF_TYPE_SOFTWARE);
        ck_assert_uint_eq(p.event[0].attr.config, PERF_COUNT_SW_PAGE_FAULTS);
        plan_fails(&dp_source_pagefault, &o, -1, -EINVAL, "pagefault: cannot build the event for cpu -1");
}
END_TEST

/* ---- The plan as --print-events and perf record -vv print it ---- */

START_TEST(test_plan_print) {
        struct dp_source_options o = opts(SPR);
        struct dp_event_plan p, q;
        char *text = NULL, names[256];
        size_t size = 0;
        FILE *f;

        o.pfm_pmu = "";
        o.wakeup_bytes = 4096;
        p = plan_ok(&dp_source_pebs, &o, 0);
        f = open_memstream(&text, &size);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(dp_event_plan_fprint(f, &p, "pebs", "0-3"), 0);
        ck_assert_int_eq(fclose(f), 0);

        ck_assert_ptr_nonnull(strstr(text, "# cpus 0-3: pebs on cpu, 2 events\n"));
        ck_assert_ptr_nonnull(strstr(text, "# event 0: mem-loads-aux, group leader\n"
                                           "------------------------------------------------------------\n"
                                           "perf_event_attr:\n"
                                           "  type                             4\n"
                                           "  size                             128\n"
                                           "  config                           0x8203\n"
                                           "  read_format                      TOTAL_TIME_ENABLED|LOST\n"
                                           "  disabled                         1\n"));
        ck_assert_ptr_nonnull(strstr(text, "# event 1: mem-loads, in the group of event 0, carries the ring\n"));
        ck_assert_ptr_nonnull(strstr(text, "  sample_type                      TID|TIME|ADDR|CPU|WEIGHT|DATA_SRC\n"));
        ck_assert_ptr_nonnull(strstr(text, "  precise_ip                       2\n"));
        ck_assert_ptr_nonnull(strstr(text, "  { wakeup_events, wakeup_watermark } 4096\n"));
        ck_assert_ptr_nonnull(strstr(text, "  { bp_addr, config1 }             0x1e\n"));
        ck_assert_ptr_nonnull(strstr(text, "  clockid                          1\n"));
        /* Fields that are 0 are left out, as perf leaves them out. */
        ck_assert_ptr_null(strstr(text, "inherit"));
        ck_assert_ptr_null(strstr(text, "config2"));
        free(text);

        /* Bits perf has no name for trail as a number. */
        ck_assert_str_eq(dp_perf_sample_type_names(PERF_SAMPLE_IP | (UINT64_C(1) << 50), names, sizeof(names)),
                         "IP|0x4000000000000");
        ck_assert_str_eq(dp_perf_read_format_names(0, names, sizeof(names)), "");

        /* What --print-events folds CPUs by. */
        q = plan_ok(&dp_source_pebs, &o, 1);
        ck_assert(dp_event_plan_equal(&p, &q));
        q.event[1].attr.config1++;
        ck_assert(!dp_event_plan_equal(&p, &q));
}
END_TEST

static Suite *pmu_encode_suite(void) {
        Suite *s = suite_create("pmu-encode");
        TCase *tc = tcase_create("fixtures"), *rt = tcase_create("runtime-trees");

        tcase_add_checked_fixture(tc, load_trees, free_trees);
        tcase_add_test(tc, test_ibs_default);
        tcase_add_test(tc, test_ibs_config_bits);
        tcase_add_test(tc, test_ibs_ldlat);
        tcase_add_test(tc, test_ibs_period_rules);
        tcase_add_test(tc, test_ibs_refusals);
        tcase_add_test(tc, test_pebs_spr_libpfm);
        tcase_add_test(tc, test_pebs_spr_sysfs_matches_libpfm);
        tcase_add_test(tc, test_pebs_spr_stores_and_phys);
        tcase_add_test(tc, test_pebs_ldlat_range);
        tcase_add_test(tc, test_pebs_hybrid);
        tcase_add_test(tc, test_pebs_refusals);
        tcase_add_test(tc, test_pfm_encode_known_answers);
        tcase_add_test(tc, test_spe_default);
        tcase_add_test(tc, test_spe_options);
        tcase_add_test(tc, test_spe_period);
        tcase_add_test(tc, test_event_source);
        tcase_add_test(tc, test_generic_plan_for_pagefault);
        tcase_add_test(tc, test_plan_print);
        suite_add_tcase(s, tc);

        tcase_add_checked_fixture(rt, tree_setup, tree_teardown);
        tcase_add_test(rt, test_ibs_without_opcntext);
        tcase_add_test(rt, test_pebs_max_precise);
        tcase_add_test(rt, test_pebs_bad_event_strings);
        tcase_add_test(rt, test_spe_without_min_interval);
        suite_add_tcase(s, rt);
        return s;
}

int main(void) {
        /* Before libpfm's one initialisation, so absent PMUs' tables encode. */
        setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
        return dp_check_run(pmu_encode_suite());
}
