/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Which capabilities each configuration keeps (lib/perf/capabilities.c), and the
 * names they are reported by. */
#include <check.h>
#include <errno.h>
#include <linux/capability.h>
#include <string.h>

#include "capabilities.h"
#include "config.h"
#include "macro.h"

#include "check-main.h"

#define ALL_CAPS (DP_CAP_BIT(DP_CAP_LAST_KNOWN + 1) - 1)
#define PERFMON DP_CAP_BIT(CAP_PERFMON)
#define SYS_ADMIN DP_CAP_BIT(CAP_SYS_ADMIN)
#define SYS_PTRACE DP_CAP_BIT(CAP_SYS_PTRACE)
#define IPC_LOCK DP_CAP_BIT(CAP_IPC_LOCK)
#define DAC_OVERRIDE DP_CAP_BIT(CAP_DAC_OVERRIDE)
#define CHOWN DP_CAP_BIT(CAP_CHOWN)

/* Root on a 6.x kernel with every capability, this machine's sysctls, 2 CPUs. */
static struct dp_caps_host root_host(void) {
        return (struct dp_caps_host) {
                .cap_last_cap = 40,
                .available = ALL_CAPS,
                .root_uid = true,
                .perf_paranoid = 2,
                .perf_mlock_kb = 516,
                .online_cpus = 2,
                .memlock_limit = 8 << 20,
                .page_size = 4096,
                .n_samplers = 2,
        };
}

static uint64_t keep_for(const struct dp_config *c, const struct dp_caps_host *h) {
        struct dp_caps_plan p;

        ck_assert_int_eq(dp_caps_plan(c, h, &p), 0);
        ck_assert_uint_eq(p.keep | p.missing, p.needed);
        ck_assert_uint_eq(p.keep & p.missing, 0);
        for (unsigned cap = 0; cap <= DP_CAP_LAST_KNOWN; cap++)
                ck_assert_msg(!(p.needed & DP_CAP_BIT(cap)) == !p.why[cap], "reason for %s", dp_cap_name(cap));
        return p.keep;
}

START_TEST(test_default_config) {
        struct dp_caps_host h = root_host();
        struct dp_config c;
        struct dp_caps_plan p;

        /* Targets=all, [DAMON] Mode=own, 128-page rings: sampling and other users' maps. */
        dp_config_init(&c);
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_uint_eq(p.keep, PERFMON | SYS_PTRACE);
        ck_assert_uint_eq(p.missing, 0);
        ck_assert_ptr_nonnull(strstr(p.why[CAP_PERFMON], "perf_event_open"));
        ck_assert_ptr_nonnull(strstr(p.why[CAP_SYS_PTRACE], "/proc/PID/maps"));
        ck_assert_uint_eq(p.ring_bytes, 2 * 129 * 4096);
        ck_assert_uint_eq(p.mlock_budget, 516 * 1024 * 2 + (8 << 20));
        /* The default rings fit perf_event_mlock_kb's own budget, whatever RLIMIT_MEMLOCK. */
        ck_assert_uint_le(p.ring_bytes, 516 * 1024 * 2);

        c.target_mode = DP_TARGETS_PIDS;
        c.pids[c.n_pids++] = 1;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE);
}
END_TEST

START_TEST(test_maps_with_sampling_cap) {
        struct dp_caps_host h = root_host();
        struct dp_config c;

        /* A kernel whose /proc/PID/maps check lets CAP_PERFMON through: no CAP_SYS_PTRACE. */
        h.sampling_reads_maps = true;
        dp_config_init(&c);
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON);
        c.target_mode = DP_TARGETS_PIDS;
        c.pids[c.n_pids++] = 1;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON);
        h.cap_last_cap = 37;
        ck_assert_uint_eq(keep_for(&c, &h), SYS_ADMIN);
}
END_TEST

START_TEST(test_sampling_cap) {
        struct dp_caps_host h = root_host();

        ck_assert_uint_eq(dp_caps_sampling_cap(&h), CAP_PERFMON);
        h.available &= ~PERFMON;
        ck_assert_uint_eq(dp_caps_sampling_cap(&h), CAP_SYS_ADMIN);
        h.available &= ~SYS_ADMIN;
        ck_assert_uint_eq(dp_caps_sampling_cap(&h), CAP_PERFMON);
        h = root_host();
        h.cap_last_cap = 37;
        ck_assert_uint_eq(dp_caps_sampling_cap(&h), CAP_SYS_ADMIN);
        /* Debian's perf_event_paranoid 3 refuses CAP_PERFMON. */
        h = root_host();
        h.perf_paranoid = 3;
        ck_assert_uint_eq(dp_caps_sampling_cap(&h), CAP_SYS_ADMIN);
}
END_TEST

/* perf_event_paranoid 3 (Debian's default): CAP_SYS_ADMIN to open events,
 * at start and whenever a CPU is reopened; without it, it is what is missing. */
START_TEST(test_paranoid_3) {
        struct dp_caps_host h = root_host();
        struct dp_config c;
        struct dp_caps_plan p;

        dp_config_init(&c);
        h.perf_paranoid = 3;
        ck_assert_uint_eq(keep_for(&c, &h), SYS_ADMIN | SYS_PTRACE);
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_ptr_nonnull(strstr(p.why[CAP_SYS_ADMIN], "perf_event_paranoid above 2"));
        h.available &= ~SYS_ADMIN;
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_uint_eq(p.keep, SYS_PTRACE);
        ck_assert_uint_eq(p.missing, SYS_ADMIN);
}
END_TEST

START_TEST(test_perfmon_or_sys_admin) {
        struct dp_caps_host h = root_host();
        struct dp_config c;
        struct dp_caps_plan p;

        dp_config_init(&c);
        /* Before 5.8 (cap_last_cap 37) there is no CAP_PERFMON. */
        h.cap_last_cap = 37;
        ck_assert_uint_eq(keep_for(&c, &h), SYS_ADMIN | SYS_PTRACE);
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_ptr_nonnull(strstr(p.why[CAP_SYS_ADMIN], "without CAP_PERFMON"));

        /* A kernel that knows CAP_PERFMON, but a bounding set without it
         * (systemd-nspawn's default): CAP_SYS_ADMIN serves. */
        h = root_host();
        h.available &= ~PERFMON;
        ck_assert_uint_eq(keep_for(&c, &h), SYS_ADMIN | SYS_PTRACE);

        /* Neither: the modern one is what is missing. */
        h.available &= ~SYS_ADMIN;
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_uint_eq(p.keep, SYS_PTRACE);
        ck_assert_uint_eq(p.missing, PERFMON);

        /* Not root at all (perf_event_paranoid may allow it): nothing kept, all missing. */
        h.available = 0;
        h.root_uid = false;
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_uint_eq(p.keep, 0);
        ck_assert_uint_eq(p.missing, PERFMON | SYS_PTRACE | DAC_OVERRIDE);
}
END_TEST

START_TEST(test_targets_phys) {
        struct dp_caps_host h = root_host();
        struct dp_config c;

        dp_config_init(&c);
        c.target_mode = DP_TARGETS_PHYS;
        /* /proc/iomem, no process maps. */
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_ADMIN);
        h.cap_last_cap = 37;
        ck_assert_uint_eq(keep_for(&c, &h), SYS_ADMIN);
}
END_TEST

START_TEST(test_damon_write_back) {
        struct dp_caps_host h = root_host();
        struct dp_config c;

        dp_config_init(&c);
        /* uid 0 owns DAMON sysfs (root, 0600): no override needed, whatever the mode. */
        for (int mode = DP_DAMON_OFF; mode <= DP_DAMON_ATTACH; mode++) {
                c.damon_mode = mode;
                ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE);
        }
        /* Another user needs CAP_DAC_OVERRIDE, only when DAMON is used. */
        h.root_uid = false;
        c.damon_mode = DP_DAMON_OWN;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE | DAC_OVERRIDE);
        c.damon_mode = DP_DAMON_ATTACH;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE | DAC_OVERRIDE);
        c.damon_mode = DP_DAMON_OFF;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE);
}
END_TEST

START_TEST(test_mlock_budget) {
        struct dp_caps_host h = root_host();
        struct dp_config c;
        struct dp_caps_plan p;

        dp_config_init(&c);
        h.n_samplers = h.online_cpus = 4;
        c.ring_pages = 1024;    /* 4 x 1025 pages = 16.0 MiB > 4 x 516 KiB + 8 MiB */
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_uint_eq(p.ring_bytes, 4ull * 1025 * 4096);
        ck_assert_uint_eq(p.mlock_budget, 4ull * 516 * 1024 + (8 << 20));
        ck_assert_uint_eq(p.keep, PERFMON | SYS_PTRACE | IPC_LOCK);
        ck_assert_ptr_nonnull(strstr(p.why[CAP_IPC_LOCK], "locked-memory"));

        /* Exactly the budget still maps; a page more does not. */
        h.memlock_limit = 0;
        h.perf_mlock_kb = 1025 * 4;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE);
        h.perf_mlock_kb = 1025 * 4 - 1;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE | IPC_LOCK);
        /* The AUX areas count too. */
        h.perf_mlock_kb = 1025 * 4;
        h.aux_pages = 16;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE | IPC_LOCK);
        /* perf_event_paranoid -1 skips the check; an unlimited RLIMIT_MEMLOCK never overflows. */
        h.perf_paranoid = -1;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE);
        h.perf_paranoid = 2;
        h.memlock_limit = UINT64_MAX;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE);
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), 0);
        ck_assert_uint_eq(p.mlock_budget, UINT64_MAX);

        /* The default rings of a big machine stay inside perf's per-CPU allowance. */
        h = root_host();
        h.n_samplers = h.online_cpus = 256;
        h.memlock_limit = 64 << 10;
        dp_config_init(&c);
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE);
}
END_TEST

START_TEST(test_socket_group) {
        struct dp_caps_host h = root_host();
        struct dp_config c;

        dp_config_init(&c);
        h.socket_chown = true;
        ck_assert_uint_eq(keep_for(&c, &h), PERFMON | SYS_PTRACE | CHOWN);
}
END_TEST

START_TEST(test_bad_input) {
        struct dp_caps_host h = root_host();
        struct dp_config c;
        struct dp_caps_plan p;

        dp_config_init(&c);
        ck_assert_int_eq(dp_caps_plan(NULL, &h, &p), -EINVAL);
        ck_assert_int_eq(dp_caps_plan(&c, NULL, &p), -EINVAL);
        ck_assert_int_eq(dp_caps_plan(&c, &h, NULL), -EINVAL);
        h.page_size = 0;
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), -EINVAL);
        h = root_host();
        h.online_cpus = 0;
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), -EINVAL);
        h = root_host();
        h.cap_last_cap = 64;
        ck_assert_int_eq(dp_caps_plan(&c, &h, &p), -EINVAL);
}
END_TEST

START_TEST(test_names) {
        ck_assert_str_eq(dp_cap_name(CAP_CHOWN), "CAP_CHOWN");
        ck_assert_str_eq(dp_cap_name(CAP_SYS_PTRACE), "CAP_SYS_PTRACE");
        ck_assert_str_eq(dp_cap_name(CAP_PERFMON), "CAP_PERFMON");
        ck_assert_str_eq(dp_cap_name(CAP_CHECKPOINT_RESTORE), "CAP_CHECKPOINT_RESTORE");
        ck_assert_ptr_null(dp_cap_name(DP_CAP_LAST_KNOWN + 1));
        for (unsigned cap = 0; cap <= DP_CAP_LAST_KNOWN; cap++) {
                ck_assert_ptr_nonnull(dp_cap_name(cap));
                ck_assert_int_eq(dp_cap_from_name(dp_cap_name(cap)), (int) cap);
        }
        ck_assert_int_eq(dp_cap_from_name("cap_ipc_lock"), CAP_IPC_LOCK);
        ck_assert_int_eq(dp_cap_from_name("CAP_NONSENSE"), -EINVAL);
        ck_assert_int_eq(dp_cap_from_name("PERFMON"), -EINVAL);
        ck_assert_int_eq(dp_cap_from_name(""), -EINVAL);
        ck_assert_int_eq(dp_cap_from_name(NULL), -EINVAL);
}
END_TEST

START_TEST(test_format) {
        char buf[128], tiny[12];
        json_t *j;

        ck_assert_int_eq(dp_caps_format(0, " ", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "none");
        /* In capability order, whatever order they were asked in. */
        ck_assert_int_eq(dp_caps_format(PERFMON | SYS_PTRACE, " ", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "CAP_SYS_PTRACE CAP_PERFMON");
        ck_assert_int_eq(dp_caps_format(CHOWN | DP_CAP_BIT(45), ",", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "CAP_CHOWN,45");
        ck_assert_int_eq(dp_caps_format(PERFMON | SYS_PTRACE, " ", tiny, sizeof(tiny)), -ENOBUFS);
        ck_assert_int_eq(dp_caps_format(0, " ", tiny, 3), -ENOBUFS);
        ck_assert_int_eq(dp_caps_format(0, " ", NULL, 0), -ENOBUFS);

        j = dp_caps_to_json(IPC_LOCK | PERFMON);
        ck_assert_uint_eq(json_array_size(j), 2);
        ck_assert_str_eq(json_string_value(json_array_get(j, 0)), "CAP_IPC_LOCK");
        ck_assert_str_eq(json_string_value(json_array_get(j, 1)), "CAP_PERFMON");
        json_decref(j);
        j = dp_caps_to_json(0);
        ck_assert(json_is_array(j));
        ck_assert_uint_eq(json_array_size(j), 0);
        json_decref(j);
        j = dp_caps_to_json(DP_CAP_BIT(63));
        ck_assert_str_eq(json_string_value(json_array_get(j, 0)), "63");
        json_decref(j);
}
END_TEST

int main(void) {
        Suite *s = suite_create("capabilities");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_default_config);
        tcase_add_test(tc, test_maps_with_sampling_cap);
        tcase_add_test(tc, test_sampling_cap);
        tcase_add_test(tc, test_perfmon_or_sys_admin);
        tcase_add_test(tc, test_paranoid_3);
        tcase_add_test(tc, test_targets_phys);
        tcase_add_test(tc, test_damon_write_back);
        tcase_add_test(tc, test_mlock_budget);
        tcase_add_test(tc, test_socket_group);
        tcase_add_test(tc, test_bad_input);
        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_format);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
