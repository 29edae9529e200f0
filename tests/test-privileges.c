/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/privileges.c on the real kernel: what the daemon holds after the
 * drop (/proc/self/status, libcap, no_new_privs), that sampling still works
 * with it, and why each capability it keeps or leaves is kept or left:
 *   CAP_PERFMON     system-wide perf_event_open with perf_event_paranoid > 0
 *   CAP_SYS_PTRACE  /proc/PID/maps of another user's process (or root's with more
 *                   capabilities than the daemon), unless the kernel lets
 *                   CAP_PERFMON read them (recent ones do, 6.18 here: the daemon probes)
 *   CAP_SYS_ADMIN   /proc/iomem addresses (Targets=phys)
 *   no CAP_DAC_OVERRIDE: uid 0 owns DAMON sysfs's root-only (0600) files
 *
 * Each drop happens in a child of its own (it cannot be undone); the child
 * reports the first failed check on stderr and in its exit status.  Needs root.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capabilities.h"
#include "config.h"
#include "macro.h"
#include "fileio.h"
#include "proc-parse.h"
#include "range.h"
#include "privileges.h"

#include "check-main.h"
#include "test-tree.h"

#define NOBODY 65534

/* A path in the throw-away tree; a few may be in use at once. */
static const char *tree_path(const char *rel) {
        static char buf[4][PATH_MAX + 64];
        static unsigned next;
        char *b = buf[next++ % DP_ARRAY_SIZE(buf)];

        snprintf(b, sizeof(buf[0]), "%s/%s", tmp_root, rel);
        return b;
}

/* In a child: report the failed check and exit with its line. */
#define CHILD_CHECK(cond)                                                                       \
        do {                                                                                    \
                if (!(cond)) {                                                                  \
                        fprintf(stderr, "%s:%d: child check failed: %s (errno %d: %s)\n", __FILE__,   \
                                __LINE__, #cond, errno, strerror(errno));                       \
                        _exit(__LINE__ % 250 + 2);                                              \
                }                                                                               \
        } while (0)

static void run_child(void (*body)(void *), void *userdata) {
        pid_t pid;
        int status;

        fflush(NULL);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                body(userdata);
                _exit(0);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "the child's checks failed (status 0x%x), see stderr", status);
}

static uint64_t status_mask(const char *key) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        const char *line;

        if (dp_read_file("/proc/self/status", &text, &len) < 0 || !(line = strstr(text, key)))
                return UINT64_MAX;
        return strtoull(line + strlen(key), NULL, 16);
}

static int open_pagefault_event(void) {
        struct perf_event_attr attr = {
                .type = PERF_TYPE_SOFTWARE,
                .size = sizeof(attr),
                .config = PERF_COUNT_SW_PAGE_FAULTS,
                .sample_period = 1,
                .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ADDR,
                .disabled = 1,
                .exclude_kernel = 1,
        };

        /* Every process on CPU 0, as the daemon's samplers. */
        return (int) syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
}

static int read_paranoid(void) {
        _cleanup_free_ char *text = NULL;
        size_t len;

        return dp_read_file("/proc/sys/kernel/perf_event_paranoid", &text, &len) < 0 ? 2 : atoi(text);
}

static void drop(enum dp_target_mode mode, const char *socket_group, struct dp_caps_plan *plan) {
        struct dp_config c;

        dp_config_init(&c);
        c.target_mode = mode;
        if (mode == DP_TARGETS_PIDS)
                c.pids[c.n_pids++] = 1;
        CHILD_CHECK(privileges_drop(&c, NULL, 0, socket_group, plan) == 0);
}

static void default_drop_body(void *userdata) {
        struct dp_caps_plan plan;
        struct privileges_sets sets;
        int fd;

        (void) userdata;
        drop(DP_TARGETS_ALL, NULL, &plan);
        /* CAP_SYS_PTRACE only where CAP_PERFMON does not read other processes' maps. */
        CHILD_CHECK((plan.keep & ~DP_CAP_BIT(CAP_SYS_PTRACE)) == DP_CAP_BIT(CAP_PERFMON));
        CHILD_CHECK(status_mask("CapEff:") == plan.keep);
        CHILD_CHECK(status_mask("CapPrm:") == plan.keep);
        CHILD_CHECK(status_mask("CapBnd:") == plan.keep);
        CHILD_CHECK(status_mask("CapInh:") == 0);
        CHILD_CHECK(status_mask("CapAmb:") == 0);
        CHILD_CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
        CHILD_CHECK(privileges_get(&sets) == 0);
        CHILD_CHECK(sets.effective == plan.keep && sets.permitted == plan.keep && sets.bounding == plan.keep);

        /* Sampling still works (a Reload() retry opens events again). */
        fd = open_pagefault_event();
        CHILD_CHECK(fd >= 0);
        close(fd);

        /* Without CAP_PERFMON it would not, as long as perf_event_paranoid > 0. */
        if (read_paranoid() > 0) {
                cap_t none = cap_init();

                CHILD_CHECK(none && cap_set_proc(none) == 0);
                cap_free(none);
                errno = 0;
                CHILD_CHECK(open_pagefault_event() < 0 && (errno == EACCES || errno == EPERM));
        }
}

START_TEST(test_default_drop) {
        ck_assert_msg(geteuid() == 0, "dropping capabilities needs root");
        run_child(default_drop_body, NULL);
}
END_TEST

static void group_socket_body(void *userdata) {
        struct dp_caps_plan plan;

        (void) userdata;
        unsetenv("LISTEN_FDS");
        drop(DP_TARGETS_PIDS, "nogroup", &plan);
        CHILD_CHECK((plan.keep & ~DP_CAP_BIT(CAP_SYS_PTRACE)) == (DP_CAP_BIT(CAP_PERFMON) | DP_CAP_BIT(CAP_CHOWN)));
        CHILD_CHECK(status_mask("CapEff:") == plan.keep);
}

START_TEST(test_socket_group_keeps_chown) {
        ck_assert_msg(geteuid() == 0, "dropping capabilities needs root");
        run_child(group_socket_body, NULL);
}
END_TEST

static void read_maps_body(void *userdata) {
        const pid_t *victim = userdata;
        struct dp_caps_plan plan;
        char path[64];
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/maps", (int) *victim);
        /* Whatever the daemon kept for Targets=all reads another user's maps. */
        drop(DP_TARGETS_ALL, NULL, &plan);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        CHILD_CHECK(fd >= 0);
        close(fd);
        fprintf(stderr, "Targets=all keeps %s CAP_SYS_PTRACE on this kernel\n",
                plan.keep & DP_CAP_BIT(CAP_SYS_PTRACE) ? "with" : "without");
}

/* Only @cap (-1: nothing). */
static void only(int cap) {
        cap_t caps = cap_init();
        cap_value_t v = cap;

        CHILD_CHECK(caps);
        if (cap >= 0)
                CHILD_CHECK(cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) == 0 &&
                            cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) == 0);
        CHILD_CHECK(cap_set_proc(caps) == 0);
        cap_free(caps);
}

static void no_caps_maps_body(void *userdata) {
        const pid_t *victim = userdata;
        char path[64];
        int fd;

        only(-1);
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) *victim);
        errno = 0;
        CHILD_CHECK(open(path, O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES);
        /* Nor root's own processes that hold more capabilities than the reader
         * (the test): the check wants the reader's set to cover the target's. */
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) getppid());
        errno = 0;
        CHILD_CHECK(open(path, O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES);
        /* Its own are fine. */
        CHILD_CHECK((fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) >= 0);
        close(fd);
}

static void ptrace_maps_body(void *userdata) {
        const pid_t *victim = userdata;
        char path[64];
        int fd;

        /* CAP_SYS_PTRACE alone does it on every kernel. */
        only(CAP_SYS_PTRACE);
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) *victim);
        CHILD_CHECK((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0);
        close(fd);
}

static bool is_nobody(pid_t pid) {
        _cleanup_free_ char *text = NULL;
        char path[64];
        size_t len;
        const char *uid;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        return dp_read_file(path, &text, &len) == 0 && (uid = strstr(text, "\nUid:")) &&
               strtoul(uid + 5, NULL, 10) == NOBODY;
}

START_TEST(test_maps_need_a_capability) {
        pid_t victim;
        int status;

        ck_assert_msg(geteuid() == 0, "dropping capabilities needs root");
        victim = fork();
        ck_assert_int_ge(victim, 0);
        if (victim == 0) {
                if (setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
                        _exit(1);
                pause();
                _exit(0);
        }
        /* Let it become nobody before anyone looks. */
        for (int i = 0; i < 2000 && !is_nobody(victim); i++)
                usleep(1000);
        ck_assert(is_nobody(victim));
        run_child(read_maps_body, &victim);
        run_child(no_caps_maps_body, &victim);
        run_child(ptrace_maps_body, &victim);
        kill(victim, SIGKILL);
        ck_assert_int_eq(waitpid(victim, &status, 0), victim);
}
END_TEST

static void iomem_body(void *userdata) {
        const bool *phys = userdata;
        _cleanup_free_ char *text = NULL;
        _cleanup_free_ struct dp_range *ranges = NULL;
        size_t len, n = 0, bad_line = 0;
        int r;

        drop(*phys ? DP_TARGETS_PHYS : DP_TARGETS_ALL, NULL, NULL);
        CHILD_CHECK(dp_read_file("/proc/iomem", &text, &len) == 0);
        r = dp_parse_iomem(text, len, &ranges, &n, &bad_line);
        if (*phys)
                CHILD_CHECK(r == 0 && n > 0);
        else
                CHILD_CHECK(r == -EPERM);       /* every address shown as 0 */
}

START_TEST(test_iomem_needs_sys_admin) {
        bool phys;

        ck_assert_msg(geteuid() == 0, "dropping capabilities needs root");
        phys = true;
        run_child(iomem_body, &phys);
        phys = false;
        run_child(iomem_body, &phys);
}
END_TEST

/* DAMON sysfs files are root's with mode 0600, e.g. kdamonds/0/state; the same
 * permission check on a file in a throw-away tree (never the real DAMON). */
static void owner_files_body(void *userdata) {
        int fd;

        (void) userdata;
        drop(DP_TARGETS_ALL, NULL, NULL);
        CHILD_CHECK(!(status_mask("CapEff:") & DP_CAP_BIT(CAP_DAC_OVERRIDE)));
        fd = open(tree_path("kdamonds/0/state"), O_RDWR | O_CLOEXEC);
        CHILD_CHECK(fd >= 0);
        CHILD_CHECK(write(fd, "on\n", 3) == 3);
        close(fd);
        /* Someone else's 0600 file is what CAP_DAC_OVERRIDE would be for. */
        errno = 0;
        CHILD_CHECK(open(tree_path("nobody-state"), O_RDWR | O_CLOEXEC) < 0 && errno == EACCES);
}

START_TEST(test_uid0_owns_damon_files) {
        ck_assert_msg(geteuid() == 0, "dropping capabilities needs root");
        test_tree_make("/tmp/test-privileges-XXXXXX");
        put("kdamonds/0/state", "off\n");
        put("nobody-state", "off\n");
        ck_assert_int_eq(chmod(tree_path("kdamonds/0/state"), 0600), 0);
        ck_assert_int_eq(chmod(tree_path("nobody-state"), 0600), 0);
        ck_assert_int_eq(chown(tree_path("nobody-state"), NOBODY, NOBODY), 0);
        run_child(owner_files_body, NULL);
        tree_teardown();
}
END_TEST

int main(void) {
        Suite *s = suite_create("privileges");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_default_drop);
        tcase_add_test(tc, test_socket_group_keeps_chown);
        tcase_add_test(tc, test_maps_need_a_capability);
        tcase_add_test(tc, test_iomem_needs_sys_admin);
        tcase_add_test(tc, test_uid0_owns_damon_files);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
