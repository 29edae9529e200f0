/* SPDX-License-Identifier: LGPL-2.1-or-later */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>

/*
 * LD_PRELOAD for `perf record -vv` in tests/perf-attr-diff.py.  perf prints
 * each perf_event_attr before it opens it and gives up at the first event
 * this machine's kernel refuses (a fake PMU's type is no PMU here), so a
 * group's members would never be printed.  This shim opens a software dummy
 * event in place of every event that is not a software one, with the sample
 * layout perf asked for, so that perf goes on to the next event and its ring;
 * nothing it prints is changed.  perf calls perf_event_open through
 * syscall(2), which is what is wrapped.
 */

typedef long (*syscall_fn)(long, ...);

long syscall(long nr, ...) {
        static syscall_fn real;
        long a[6];
        va_list ap;

        /* syscall(2) takes at most six arguments; reading all six is what libc's own wrapper does. */
        va_start(ap, nr);
        for (int i = 0; i < 6; i++)
                a[i] = va_arg(ap, long);
        va_end(ap);
        if (!real)
                real = (syscall_fn) dlsym(RTLD_NEXT, "syscall");

        if (nr == SYS_perf_event_open) {
                const struct perf_event_attr *attr = (const struct perf_event_attr *) a[0];

                if (attr && attr->type != PERF_TYPE_SOFTWARE) {
                        struct perf_event_attr dummy = {
                                .size = sizeof(dummy),
                                .type = PERF_TYPE_SOFTWARE,
                                .config = PERF_COUNT_SW_DUMMY,
                                .sample_period = 1,
                                .sample_type = attr->sample_type,
                                .read_format = attr->read_format,
                                .disabled = attr->disabled,
                                .sample_id_all = attr->sample_id_all,
                        };

                        return real(nr, &dummy, a[1], a[2], a[3], a[4]);
                }
        }
        return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
