/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-list.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "test-seam.h"

#define FAIL_OPEN_ENV "DAMON_PERFD_TEST_FAIL_OPEN"
#define CPU_ONLINE_ENV "DAMON_PERFD_TEST_CPU_ONLINE"
#define CPU_ONLINE_PATH "/sys/devices/system/cpu/online"
#define SYS_ROOT_ENV "DAMON_PERFD_TEST_SYS_ROOT"
#define DAMON_BUSY_ENV "DAMON_PERFD_TEST_DAMON_BUSY"
#define DAMON_BUSY_MAX 1000

static struct test_seam seam;
static pthread_once_t seam_once = PTHREAD_ONCE_INIT;

/* A positive errno from its name or number, or -1. */
static int errno_from_name(const char *name) {
        static const struct {
                const char *name;
                int error;
        } names[] = {
                { "EACCES", EACCES }, { "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EBUSY", EBUSY },
                { "ENOSPC", ENOSPC }, { "EINVAL", EINVAL }, { "ENODEV", ENODEV }, { "EOPNOTSUPP", EOPNOTSUPP },
                { "EMFILE", EMFILE }, { "ENOMEM", ENOMEM }, { "E2BIG", E2BIG }, { "EOVERFLOW", EOVERFLOW },
        };
        uint32_t v;

        for (size_t i = 0; i < DP_ARRAY_SIZE(names); i++)
                if (strcmp(name, names[i].name) == 0)
                        return names[i].error;
        return dp_parse_u32_in(name, 1, 4095, &v) < 0 ? -1 : (int) v;
}

/* One CPU:ERRNO item into @t; false when malformed or one too many. */
static bool fail_open_item(struct test_seam *t, const char *item) {
        const char *colon = strchr(item, ':'), *end;
        uint64_t cpu;
        int error;

        if (!colon || dp_parse_uint(item, 10, &cpu, &end) < 0 || end != colon || cpu >= DP_CPU_MAX)
                return false;
        error = errno_from_name(colon + 1);
        if (error < 0 || t->n_fail_open >= TEST_SEAM_FAIL_OPEN_MAX)
                return false;
        t->fail_open[t->n_fail_open].cpu = (int) cpu;
        t->fail_open[t->n_fail_open++].error = error;
        return true;
}

static void load_fail_open(struct test_seam *t) {
        const char *value = secure_getenv(FAIL_OPEN_ENV);
        _cleanup_free_ char *copy = NULL;
        char *save = NULL;

        if (!value || !*value)
                return;
        copy = strdup(value);
        for (char *item = copy ? strtok_r(copy, ",", &save) : NULL; item; item = strtok_r(NULL, ",", &save))
                if (!fail_open_item(t, item)) {
                        log_error("TEST INJECTION %s=%s ignored: expected CPU:ERRNO[,CPU:ERRNO...], e.g. 1:EACCES",
                                  FAIL_OPEN_ENV, value);
                        t->n_fail_open = 0;
                        return;
                }
        for (size_t i = 0; i < t->n_fail_open; i++)
                log_warning("TEST INJECTION (%s): perf_event_open on CPU %d fails with %s", FAIL_OPEN_ENV,
                            t->fail_open[i].cpu, strerror(t->fail_open[i].error));
}

static void load_cpu_online(struct test_seam *t) {
        const char *value = secure_getenv(CPU_ONLINE_ENV);

        if (!value || !*value)
                return;
        t->cpu_online = value;
        log_warning("TEST INJECTION (%s): the online CPUs are read from %s, not %s", CPU_ONLINE_ENV, value,
                    CPU_ONLINE_PATH);
}

static void load_sys_root(struct test_seam *t) {
        const char *value = secure_getenv(SYS_ROOT_ENV);

        t->sys_root = "/sys";
        if (!value || !*value)
                return;
        t->sys_root = value;
        log_warning("TEST INJECTION (%s): the NUMA nodes' memory is read below %s, not /sys", SYS_ROOT_ENV, value);
}

static void load_damon_busy(struct test_seam *t) {
        const char *value = secure_getenv(DAMON_BUSY_ENV), *end;
        uint64_t passes, stop = 0;
        int r;

        if (!value || !*value)
                return;
        r = dp_parse_uint(value, 10, &passes, &end);
        if (r >= 0 && *end == ',')
                r = dp_parse_uint(end + 1, 10, &stop, &end);
        if (r < 0 || *end || passes > DAMON_BUSY_MAX || stop > DAMON_BUSY_MAX || passes + stop == 0) {
                log_error("TEST INJECTION %s=%s ignored: expected N[,M], counts up to 1000", DAMON_BUSY_ENV, value);
                return;
        }
        t->damon_busy_passes = (unsigned) passes;
        t->damon_busy_stop = (unsigned) stop;
        log_warning("TEST INJECTION (%s): the next %u reads of our kdamond's state once it runs, and the first %u "
                    "on stop, fail with %s", DAMON_BUSY_ENV, t->damon_busy_passes, t->damon_busy_stop,
                    strerror(EBUSY));
}

static void load(void) {
        load_fail_open(&seam);
        load_cpu_online(&seam);
        load_sys_root(&seam);
        load_damon_busy(&seam);
}

const struct test_seam *test_seam_get(void) {
        (void) pthread_once(&seam_once, load);
        return &seam;
}

int test_seam_fail_open(const struct test_seam *t, int cpu) {
        for (size_t i = 0; i < t->n_fail_open; i++)
                if (t->fail_open[i].cpu == cpu)
                        return -t->fail_open[i].error;
        return 0;
}
