/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check-main.h"
#include "test-tree.h"
#include "pmu.h"
#include "source.h"
#include "source-choose.h"

/* The fake trees of tests/sysfs/ (see its README). */
static const char *fixture(const char *name) {
        static char path[PATH_MAX];
        const char *dir = getenv("DP_SYSFS_FIXTURES");

        int n;

        if (dir)
                n = snprintf(path, sizeof(path), "%s/%s", dir, name);
        else {
                /* __FILE__ is tests/test-pmu-detect.c relative to the build tree */
                char here[PATH_MAX];

                snprintf(here, sizeof(here), "%s", __FILE__);
                *strrchr(here, '/') = '\0';
                n = snprintf(path, sizeof(path), "%s/sysfs/%s", here, name);
        }
        ck_assert(n > 0 && (size_t) n < sizeof(path));
        return path;
}

static struct dp_pmu_set *detect(const char *name) {
        struct dp_pmu_set *set = NULL;
        int r = dp_pmu_detect(fixture(name), &set);

        ck_assert_msg(r == 0, "detecting %s: %s", fixture(name), strerror(-r));
        ck_assert_ptr_nonnull(set);
        return set;
}

static void assert_field(const struct dp_pmu *pmu, const char *name, enum dp_pmu_config_word word, uint64_t mask) {
        const struct dp_pmu_field *f = dp_pmu_field(pmu, name);

        ck_assert_msg(f, "%s has no field %s", pmu->name, name);
        ck_assert_int_eq(f->word, word);
        ck_assert_uint_eq(f->mask, mask);
}

START_TEST(test_detect_zen4) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = detect("amd-zen4");
        const struct dp_pmu *ibs, *cpu;

        ck_assert_uint_eq(set->n, 2);
        ck_assert_str_eq(set->pmus[0].name, "cpu");     /* sorted */
        ck_assert_str_eq(set->pmus[1].name, "ibs_op");
        ck_assert_str_eq(set->others, "amd_df amd_l3 breakpoint ibs_fetch kprobe msr power software tracepoint uprobe");

        ibs = dp_pmu_set_find(set, "ibs_op");
        ck_assert_ptr_nonnull(ibs);
        ck_assert_int_eq(ibs->kind, DP_PMU_IBS_OP);
        ck_assert_int_eq(ibs->error, 0);
        ck_assert_uint_eq(ibs->type, 11);
        ck_assert_uint_eq(ibs->n_fields, 2);
        assert_field(ibs, "cnt_ctl", DP_PMU_CONFIG, UINT64_C(1) << 19);
        assert_field(ibs, "l3missonly", DP_PMU_CONFIG, UINT64_C(1) << 16);
        ck_assert_ptr_null(dp_pmu_field(ibs, "ldlat"));
        ck_assert_uint_eq(ibs->n_caps, 1);
        ck_assert_str_eq(dp_pmu_cap(ibs, "zen4_ibs_extensions"), "1");
        ck_assert_ptr_null(dp_pmu_cap(ibs, "ldlat"));
        ck_assert(!ibs->has_cpus);
        ck_assert(dp_pmu_covers_cpu(ibs, 0));
        ck_assert(dp_pmu_covers_cpu(ibs, 255));

        cpu = dp_pmu_set_find(set, "cpu");
        ck_assert_int_eq(cpu->kind, DP_PMU_CORE);
        ck_assert_str_eq(cpu->mem_loads, "");
        assert_field(cpu, "event", DP_PMU_CONFIG, UINT64_C(0xf000000ff));
        /* AMD's core PMU has no mem-loads: not a PEBS candidate. */
        ck_assert_ptr_null(dp_pmu_set_for_cpu(set, DP_PMU_CORE, 0));
        ck_assert_ptr_eq(dp_pmu_set_for_cpu(set, DP_PMU_IBS_OP, 3), ibs);
}
END_TEST

START_TEST(test_detect_zen5) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = detect("amd-zen5");
        const struct dp_pmu *ibs = dp_pmu_set_find(set, "ibs_op");

        ck_assert_ptr_nonnull(ibs);
        ck_assert_uint_eq(ibs->n_fields, 4);
        assert_field(ibs, "ldlat", DP_PMU_CONFIG1, 0xfff);
        assert_field(ibs, "swfilt", DP_PMU_CONFIG2, 1);
        ck_assert_uint_eq(ibs->n_caps, 3);
        ck_assert_str_eq(dp_pmu_cap(ibs, "ldlat"), "1");
        ck_assert_str_eq(dp_pmu_cap(ibs, "dtlb_pgsize"), "1");
}
END_TEST

START_TEST(test_detect_spr) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = detect("intel-spr");
        const struct dp_pmu *cpu;

        ck_assert_uint_eq(set->n, 1);
        cpu = &set->pmus[0];
        ck_assert_str_eq(cpu->name, "cpu");
        ck_assert_int_eq(cpu->kind, DP_PMU_CORE);
        ck_assert_uint_eq(cpu->type, 4);
        ck_assert_int_eq(cpu->error, 0);
        ck_assert_str_eq(cpu->mem_loads, "event=0xcd,umask=0x1,ldlat=3");
        ck_assert_str_eq(cpu->mem_loads_aux, "event=0x03,umask=0x82");
        ck_assert_str_eq(cpu->mem_stores, "event=0xcd,umask=0x2");
        ck_assert_uint_eq(cpu->n_fields, 10);
        assert_field(cpu, "ldlat", DP_PMU_CONFIG1, 0xffff);
        assert_field(cpu, "offcore_rsp", DP_PMU_CONFIG1, UINT64_MAX);
        ck_assert_str_eq(dp_pmu_cap(cpu, "max_precise"), "3");
        ck_assert_str_eq(dp_pmu_cap(cpu, "pmu_name"), "sapphire_rapids");
        ck_assert(!cpu->has_cpus);
        ck_assert_ptr_eq(dp_pmu_set_for_cpu(set, DP_PMU_CORE, 100), cpu);
        ck_assert_ptr_null(dp_pmu_set_for_cpu(set, DP_PMU_IBS_OP, 0));
}
END_TEST

START_TEST(test_detect_adl_hybrid) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = detect("intel-adl");
        const struct dp_pmu *core, *atom;

        ck_assert_uint_eq(set->n, 2);
        atom = dp_pmu_set_find(set, "cpu_atom");
        core = dp_pmu_set_find(set, "cpu_core");
        ck_assert_ptr_nonnull(atom);
        ck_assert_ptr_nonnull(core);
        ck_assert_uint_eq(core->type, 4);
        ck_assert_uint_eq(atom->type, 10);
        ck_assert(core->has_cpus);
        ck_assert(atom->has_cpus);
        ck_assert_str_eq(core->cpus_text, "0-15");
        ck_assert_str_eq(atom->cpus_text, "16-23");
        ck_assert(dp_pmu_covers_cpu(core, 0) && dp_pmu_covers_cpu(core, 15) && !dp_pmu_covers_cpu(core, 16));
        ck_assert(dp_pmu_covers_cpu(atom, 16) && dp_pmu_covers_cpu(atom, 23) && !dp_pmu_covers_cpu(atom, 24));
        ck_assert(!dp_pmu_covers_cpu(atom, -1));
        ck_assert_str_eq(core->mem_loads_aux, "event=0x03,umask=0x82");
        ck_assert_str_eq(atom->mem_loads_aux, "");
        ck_assert_str_eq(atom->mem_loads, "event=0xd0,umask=0x5,ldlat=3");
        ck_assert_str_eq(atom->mem_stores, "event=0xd0,umask=0x6");
        assert_field(atom, "snoop_rsp", DP_PMU_CONFIG1, UINT64_MAX);

        ck_assert_ptr_eq(dp_pmu_set_for_cpu(set, DP_PMU_CORE, 3), core);
        ck_assert_ptr_eq(dp_pmu_set_for_cpu(set, DP_PMU_CORE, 20), atom);
        ck_assert_ptr_null(dp_pmu_set_for_cpu(set, DP_PMU_CORE, 24));
}
END_TEST

START_TEST(test_detect_spe) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = detect("arm-spe");
        const struct dp_pmu *spe;

        ck_assert_uint_eq(set->n, 1);
        spe = &set->pmus[0];
        ck_assert_str_eq(spe->name, "arm_spe_0");
        ck_assert_int_eq(spe->kind, DP_PMU_SPE);
        ck_assert_int_eq(spe->error, 0);
        ck_assert_uint_eq(spe->type, 9);
        ck_assert_uint_eq(spe->n_fields, 9);
        assert_field(spe, "ts_enable", DP_PMU_CONFIG, 1);     /* written with two newlines */
        assert_field(spe, "jitter", DP_PMU_CONFIG, UINT64_C(1) << 16);
        assert_field(spe, "load_filter", DP_PMU_CONFIG, UINT64_C(1) << 33);
        assert_field(spe, "store_filter", DP_PMU_CONFIG, UINT64_C(1) << 34);
        assert_field(spe, "event_filter", DP_PMU_CONFIG1, UINT64_MAX);
        assert_field(spe, "min_latency", DP_PMU_CONFIG2, 0xfff);
        ck_assert_str_eq(dp_pmu_cap(spe, "min_interval"), "1024");
        ck_assert_str_eq(dp_pmu_cap(spe, "count_size"), "12");
        ck_assert(spe->has_cpus);
        ck_assert_str_eq(spe->cpus_text, "0-7");
        ck_assert(!dp_pmu_covers_cpu(spe, 8));
        ck_assert(strstr(set->others, "armv8_pmuv3_0"));
}
END_TEST

START_TEST(test_detect_this_machine_fixture) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = detect("this-machine");

        ck_assert_uint_eq(set->n, 0);
        ck_assert_str_eq(set->others, "breakpoint msr software tracepoint uprobe");
}
END_TEST

START_TEST(test_detect_missing_root) {
        struct dp_pmu_set *set = NULL;

        ck_assert_int_eq(dp_pmu_detect(fixture("no-such-tree"), &set), -ENOENT);
        ck_assert_ptr_null(set);
        ck_assert_int_eq(dp_pmu_detect(fixture("amd-zen4"), NULL), -EINVAL);
}
END_TEST

/* ---- Choice ---- */

static struct dp_source_choice choose_ok(const char *tree, const char *setting) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = detect(tree);
        struct dp_source_choice c;
        int r = dp_source_choose(set, setting, &c);

        ck_assert_msg(r == 0, "%s/%s: %s (%s)", tree, setting, strerror(-r), c.reason);
        ck_assert_ptr_nonnull(c.source);
        return c;
}

static void assert_contains(const char *text, const char *part) {
        ck_assert_msg(strstr(text, part), "\"%s\" lacks \"%s\"", text, part);
}

START_TEST(test_choose_auto_order) {
        struct dp_source_choice c;

        c = choose_ok("amd-zen4", "auto");
        ck_assert_ptr_eq(c.source, &dp_source_ibs);
        ck_assert_str_eq(c.reason, "ibs_op: type 11, caps zen4_ibs_extensions=1; cpu: no mem-loads event; "
                                   "arm_spe: absent → ibs");

        c = choose_ok("intel-spr", "auto");
        ck_assert_ptr_eq(c.source, &dp_source_pebs);
        ck_assert_str_eq(c.reason, "ibs_op: absent; cpu: type 4, mem-loads event=0xcd,umask=0x1,ldlat=3 "
                                   "(mem-loads-aux leader), mem-stores, caps branches=32,max_precise=3,"
                                   "pmu_name=sapphire_rapids; arm_spe: absent → pebs");

        c = choose_ok("intel-adl", "auto");
        ck_assert_ptr_eq(c.source, &dp_source_pebs);
        assert_contains(c.reason, "cpu_atom: type 10, mem-loads event=0xd0,umask=0x5,ldlat=3");
        assert_contains(c.reason, "cpus 16-23");
        assert_contains(c.reason, "cpu_core: type 4");
        assert_contains(c.reason, "cpus 0-15");

        c = choose_ok("arm-spe", "auto");
        ck_assert_ptr_eq(c.source, &dp_source_spe);
        ck_assert_str_eq(c.reason, "ibs_op: absent; cpu: absent; arm_spe_0: type 9, caps arch_inst=0,count_size=12,"
                                   "ernd=0,min_interval=1024, cpus 0-7 → spe");

        c = choose_ok("this-machine", "auto");
        ck_assert_ptr_eq(c.source, &dp_source_pagefault);
        ck_assert_str_eq(c.reason, "ibs_op: absent; cpu: absent; arm_spe: absent → pagefault "
                                   "(software positive control)");
}
END_TEST

START_TEST(test_choose_configured) {
        _cleanup_pmu_set_ struct dp_pmu_set *spr = detect("intel-spr");
        struct dp_source_choice c;

        c = choose_ok("intel-spr", "pebs");
        ck_assert_ptr_eq(c.source, &dp_source_pebs);
        assert_contains(c.reason, "→ pebs (as configured)");

        ck_assert_int_eq(dp_source_choose(spr, "ibs", &c), -ENODEV);
        ck_assert_ptr_null(c.source);
        assert_contains(c.reason, "ibs_op: absent");
        assert_contains(c.reason, "Source=ibs refused");
        ck_assert_int_eq(dp_source_choose(spr, "spe", &c), -ENODEV);
}
END_TEST

START_TEST(test_choose_insists) {
        _cleanup_pmu_set_ struct dp_pmu_set *zen4 = detect("amd-zen4");
        struct dp_source_choice c;

        /* An explicit hardware source is never silently replaced. */
        ck_assert_int_eq(dp_source_choose(zen4, "pebs", &c), -ENODEV);
        assert_contains(c.reason, "cpu: no mem-loads event");
        ck_assert_int_eq(dp_source_choose(zen4, "spe", &c), -ENODEV);
        ck_assert_int_eq(dp_source_choose(zen4, "ibs", &c), 0);
        ck_assert_ptr_eq(c.source, &dp_source_ibs);
}
END_TEST

START_TEST(test_choose_pagefault_and_event) {
        _cleanup_pmu_set_ struct dp_pmu_set *zen4 = detect("amd-zen4");
        struct dp_source_choice c;

        ck_assert_int_eq(dp_source_choose(zen4, "pagefault", &c), 0);
        ck_assert_ptr_eq(c.source, &dp_source_pagefault);
        assert_contains(c.reason, "→ pagefault (as configured; software positive control)");

        ck_assert_int_eq(dp_source_choose(zen4, "event:perf::PAGE-FAULTS", &c), 0);
        ck_assert_ptr_eq(c.source, &dp_source_event);
        ck_assert_str_eq(c.event, "perf::PAGE-FAULTS");
        assert_contains(c.reason, "→ event:perf::PAGE-FAULTS");

        ck_assert_int_eq(dp_source_choose(zen4, "event:", &c), -EINVAL);
        assert_contains(c.reason, "empty");
        ck_assert_int_eq(dp_source_choose(zen4, "bogus", &c), -EINVAL);
        assert_contains(c.reason, "expected auto, ibs, pebs, spe, pagefault or event:<libpfm event>");
        ck_assert_int_eq(dp_source_choose(zen4, "", &c), -EINVAL);
        ck_assert_int_eq(dp_source_choose(zen4, NULL, &c), -EINVAL);
}
END_TEST

START_TEST(test_choose_without_detection) {
        struct dp_source_choice c;

        ck_assert_int_eq(dp_source_choose(NULL, "auto", &c), 0);
        ck_assert_ptr_eq(c.source, &dp_source_pagefault);
        ck_assert_str_eq(c.reason, "PMU detection unavailable → pagefault (software positive control)");
        ck_assert_int_eq(dp_source_choose(NULL, "ibs", &c), -ENODEV);
}
END_TEST

/* This machine's real sysfs, read only: no memory-access PMU, so pagefault with its reason. */
START_TEST(test_choose_real_machine) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        struct dp_source_choice c;

        ck_assert_int_eq(dp_pmu_detect(NULL, &set), 0);
        ck_assert_str_eq(set->root, DP_PMU_SYSFS_ROOT);
        ck_assert_int_eq(dp_source_choose(set, "auto", &c), 0);
        if (set->n == 0) {
                ck_assert_ptr_eq(c.source, &dp_source_pagefault);
                ck_assert_str_eq(c.reason,
                                 "ibs_op: absent; cpu: absent; arm_spe: absent → pagefault "
                                 "(software positive control)");
                ck_assert(strstr(set->others, "software"));
        } else
                /* A machine with a core PMU: whatever was chosen, the reason names it. */
                ck_assert(strstr(c.reason, "→ "));
}
END_TEST

/* ---- Broken trees, built at run time ---- */

static void tree_setup(void) {
        test_tree_make("/tmp/dp-pmu-detect-XXXXXX");
}

START_TEST(test_broken_format) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        struct dp_source_choice c;
        const struct dp_pmu *ibs;

        put("ibs_op/type", "11\n");
        put("ibs_op/format/cnt_ctl", "config:19-\n");
        put("ibs_op/format/l3missonly", "config:16\n");
        put("software/type", "1\n");
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        ibs = dp_pmu_set_find(set, "ibs_op");
        ck_assert_ptr_nonnull(ibs);
        ck_assert_int_eq(ibs->error, -EBADMSG);
        ck_assert_str_eq(ibs->error_text, "format/cnt_ctl: malformed");
        ck_assert_uint_eq(ibs->n_fields, 1);    /* the good one is kept */
        ck_assert_ptr_null(dp_pmu_set_for_cpu(set, DP_PMU_IBS_OP, 0));

        ck_assert_int_eq(dp_source_choose(set, "auto", &c), 0);
        ck_assert_ptr_eq(c.source, &dp_source_pagefault);
        ck_assert_str_eq(c.reason, "ibs_op: unusable, format/cnt_ctl: malformed; cpu: absent; arm_spe: absent → "
                                   "pagefault (software positive control)");
        ck_assert_int_eq(dp_source_choose(set, "ibs", &c), -ENODEV);
}
END_TEST

START_TEST(test_broken_type_and_cpus) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        const struct dp_pmu *p;

        put("ibs_op/type", "eleven\n");
        put("arm_spe_0/format/ts_enable", "config:0\n");     /* no type file */
        put("cpu_core/type", "4\n");
        put("cpu_core/cpus", "0-x\n");
        put("cpu_core/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
        put("cpu_atom/type", "-10\n");
        put("cpu_atom/events/mem-loads", "event=0xd0,umask=0x5,ldlat=3\n");
        put("cpu_atom/format/event", "config:0-7\n");
        put("cpu_atom/caps/this_cap_has_a_name_much_too_long_to_keep", "1\n");
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        ck_assert_uint_eq(set->n, 4);

        p = dp_pmu_set_find(set, "ibs_op");
        ck_assert_int_eq(p->error, -EBADMSG);
        ck_assert_str_eq(p->error_text, "type: malformed \"eleven\"");
        p = dp_pmu_set_find(set, "arm_spe_0");
        ck_assert_int_eq(p->error, -ENOENT);
        ck_assert_str_eq(p->error_text, "type: No such file or directory");
        p = dp_pmu_set_find(set, "cpu_core");
        ck_assert_int_eq(p->error, -EINVAL);
        ck_assert_str_eq(p->error_text, "cpus: malformed CPU list \"0-x\"");
        p = dp_pmu_set_find(set, "cpu_atom");
        ck_assert_int_eq(p->error, -EBADMSG);
        ck_assert(dp_pmu_set_for_cpu(set, DP_PMU_CORE, -1) == NULL);
}
END_TEST

START_TEST(test_oversized_event_file) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        char big[300];

        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        put("cpu/type", "4\n");
        put("cpu/events/mem-loads", big);
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        ck_assert_int_eq(set->pmus[0].error, -EFBIG);     /* never silently truncated */
        ck_assert_str_eq(set->pmus[0].error_text, "events/mem-loads: File too large");
}
END_TEST

START_TEST(test_many_other_pmus) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        char rel[64];
        const char *more;

        /* A server's uncore PMUs do not fit the list: it says how many were left out. */
        for (int i = 0; i < 60; i++) {
                snprintf(rel, sizeof(rel), "uncore_cha_%02d/type", i);
                put(rel, "20\n");
        }
        put("cpu/type", "4\n");
        ck_assert_int_eq(dp_pmu_detect(tmp_root, &set), 0);
        ck_assert_uint_eq(set->n, 1);
        ck_assert(strncmp(set->others, "uncore_cha_00 uncore_cha_01 ", 28) == 0);
        more = strstr(set->others, " (+");
        ck_assert_ptr_nonnull(more);
        ck_assert_uint_lt(strlen(set->others), sizeof(set->others));
        /* every name is either listed or counted */
        {
                size_t listed = 1, dropped = 0;

                for (const char *p = set->others; p < more; p++)
                        listed += *p == ' ';
                ck_assert_int_eq(sscanf(more, " (+%zu more)", &dropped), 1);
                ck_assert_uint_eq(listed + dropped, 60);
        }
}
END_TEST

/* ---- Registry ---- */

START_TEST(test_registry) {
        ck_assert_ptr_eq(dp_source_find("pagefault"), &dp_source_pagefault);
        ck_assert_ptr_eq(dp_source_find("ibs"), &dp_source_ibs);
        ck_assert_ptr_eq(dp_source_find("pebs"), &dp_source_pebs);
        ck_assert_ptr_eq(dp_source_find("spe"), &dp_source_spe);
        ck_assert_ptr_eq(dp_source_find("event:perf::PAGE-FAULTS"), &dp_source_event);
        ck_assert_ptr_null(dp_source_find("auto"));
        ck_assert_ptr_null(dp_source_find("IBS"));
        ck_assert_ptr_null(dp_source_find(NULL));

        ck_assert(dp_source_ibs.hardware && dp_source_pebs.hardware && dp_source_spe.hardware);
        ck_assert(!dp_source_pagefault.hardware && !dp_source_event.hardware);
        ck_assert_str_eq(dp_source_ibs.pmu, "ibs_op");
        ck_assert_ptr_nonnull(dp_source_ibs.build_events);
        ck_assert_ptr_nonnull(dp_source_pebs.build_events);
        ck_assert_ptr_nonnull(dp_source_spe.build_events);
        ck_assert_ptr_nonnull(dp_source_pagefault.build_events);
        ck_assert_int_eq(dp_source_spe.aux_format, DP_AUX_ARM_SPE);
        ck_assert_int_eq(dp_source_ibs.aux_format, DP_AUX_NONE);
        ck_assert_int_eq(dp_source_pebs.aux_format, DP_AUX_NONE);
}
END_TEST

static Suite *pmu_detect_suite(void) {
        Suite *s = suite_create("pmu-detect");
        TCase *tc = tcase_create("fixtures"), *broken = tcase_create("broken");

        tcase_add_test(tc, test_detect_zen4);
        tcase_add_test(tc, test_detect_zen5);
        tcase_add_test(tc, test_detect_spr);
        tcase_add_test(tc, test_detect_adl_hybrid);
        tcase_add_test(tc, test_detect_spe);
        tcase_add_test(tc, test_detect_this_machine_fixture);
        tcase_add_test(tc, test_detect_missing_root);
        tcase_add_test(tc, test_choose_auto_order);
        tcase_add_test(tc, test_choose_configured);
        tcase_add_test(tc, test_choose_insists);
        tcase_add_test(tc, test_choose_pagefault_and_event);
        tcase_add_test(tc, test_choose_without_detection);
        tcase_add_test(tc, test_choose_real_machine);
        tcase_add_test(tc, test_registry);
        suite_add_tcase(s, tc);

        tcase_add_checked_fixture(broken, tree_setup, tree_teardown);
        tcase_add_test(broken, test_broken_format);
        tcase_add_test(broken, test_broken_type_and_cpus);
        tcase_add_test(broken, test_oversized_event_file);
        tcase_add_test(broken, test_many_other_pmus);
        suite_add_tcase(s, broken);
        return s;
}

int main(void) {
        return dp_check_run(pmu_detect_suite());
}
