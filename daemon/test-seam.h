/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Test-only fault injection, in the manner of systemd's $SYSTEMD_* test
 * variables, all behind this one seam: every DAMON_PERFD_TEST_* variable is
 * read here, once, at start-up, and each injection that is active is logged
 * loudly so that nobody takes it for a real failure.  The modules that act
 * on one get the plain struct below; none reads the environment itself.
 *
 *   DAMON_PERFD_TEST_FAIL_OPEN=CPU:ERRNO[,CPU:ERRNO...]  (ERRNO a name such
 *     as EACCES, or a number) makes perf_event_open on CPU fail with that
 *     errno, as if the kernel had refused it, so that tests can drive a CPU
 *     into ERROR at will (tests/test-faults.c).
 *   DAMON_PERFD_TEST_CPU_ONLINE=PATH reads the online CPUs from PATH instead
 *     of /sys/devices/system/cpu/online, so that tests on a real machine can
 *     take a CPU "offline" without touching the machine's CPUs (hotplug.h).
 *   DAMON_PERFD_TEST_SYS_ROOT=PATH reads the NUMA nodes' memory blocks (for
 *     the schemes' node filters) below PATH instead of /sys, so that tests
 *     can give a machine any nodes (damon-node.h).
 *   DAMON_PERFD_TEST_DAMON_BUSY=N[,M] makes the next N reads of our
 *     kdamond's state file, from the first pass that finds it running, fail
 *     with EBUSY, as the kernel's do while another writer holds DAMON's lock,
 *     and the first M of the restore on stop (tests/test-damon-daemon.c).
 *
 * A malformed value is logged as an error and ignored.
 */

#include <stddef.h>

#define TEST_SEAM_FAIL_OPEN_MAX 16

struct test_seam {
        struct {
                int cpu, error;         /* positive errno */
        } fail_open[TEST_SEAM_FAIL_OPEN_MAX];
        size_t n_fail_open;
        const char *cpu_online;         /* NULL: the real list */
        const char *sys_root;           /* "/sys", or the tests' */
        unsigned damon_busy_passes, damon_busy_stop;
};

/* This process's injections: read and logged by the first call (the
 * manager's, at start-up), the same struct after.  Thread-safe. */
const struct test_seam *test_seam_get(void);

/* The injected failure of perf_event_open on @cpu (a negative errno), or 0. */
int test_seam_fail_open(const struct test_seam *t, int cpu);
