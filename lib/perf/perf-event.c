/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "perf-event.h"
#include "perf-record.h"

#ifndef PERF_FORMAT_LOST
#define PERF_FORMAT_LOST (1U << 4)
#endif

int dp_perf_event_open_cpu(struct perf_event_attr *attr, int cpu, int group_fd) {
        long fd;

        if (cpu < 0)
                return -EINVAL;
        fd = syscall(SYS_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
        if (fd < 0 && errno == EINVAL && (attr->read_format & PERF_FORMAT_LOST)) {
                /* Kernels before 6.0 reject PERF_FORMAT_LOST; the LOST records still count. */
                attr->read_format &= ~(uint64_t) PERF_FORMAT_LOST;
                fd = syscall(SYS_perf_event_open, attr, -1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
        }
        if (fd < 0)
                return dp_negative_errno();
        return (int) fd;
}

int dp_perf_event_map(int fd, size_t data_pages, struct dp_perf_mapping *m) {
        long page_size = sysconf(_SC_PAGESIZE);
        size_t length;
        void *base;

        if (fd < 0 || data_pages == 0 || (data_pages & (data_pages - 1)) || page_size <= 0)
                return -EINVAL;
        length = (1 + data_pages) * (size_t) page_size;
        base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (base == MAP_FAILED)
                return dp_negative_errno();

        *m = (struct dp_perf_mapping) {
                .base = base,
                .length = length,
                .data_size = data_pages * (size_t) page_size,
                .page_size = (size_t) page_size,
        };
        return 0;
}

void dp_perf_event_unmap(struct dp_perf_mapping *m) {
        if (m->base)
                munmap(m->base, m->length);
        *m = (struct dp_perf_mapping) {0};
}

int dp_perf_event_enable(int fd) {
        return ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0 ? dp_negative_errno() : 0;
}

int dp_perf_event_disable(int fd) {
        return ioctl(fd, PERF_EVENT_IOC_DISABLE, 0) < 0 ? dp_negative_errno() : 0;
}

int dp_perf_event_read_single(int fd, uint64_t read_format, struct dp_perf_event_reading *ret) {
        uint64_t values[8];
        size_t n_words;
        ssize_t n;
        int r;

        *ret = (struct dp_perf_event_reading) {};
        if (read_format & PERF_FORMAT_GROUP)
                return -EOPNOTSUPP;
        n = read(fd, values, sizeof(values));
        if (n < 0)
                return dp_negative_errno();
        if (n % sizeof(uint64_t))
                return -EBADMSG;
        n_words = (size_t) n / sizeof(uint64_t);
        r = dp_perf_read_value_lost(read_format, values, n_words, &ret->lost);
        if (r < 0 && r != -ENODATA)
                return r;
        ret->has_lost = r == 0;
        r = dp_perf_read_time_enabled(read_format, values, n_words, &ret->time_enabled);
        if (r < 0 && r != -ENODATA)
                return r;
        ret->has_time_enabled = r == 0;
        return 0;
}
