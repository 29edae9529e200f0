/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Thin system-call wrappers around one perf event: open it on a CPU, map its
 * ring, enable it, read its lost count.  The ring protocol itself lives in
 * perf-ring.h.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dp_perf_mapping {
        void *base;             /* control page followed by the data area */
        size_t length;
        size_t data_size;
        size_t page_size;
};

/* perf_event_open(attr, pid=-1, cpu, group_fd, PERF_FLAG_FD_CLOEXEC): the fd or a negative errno.
 * A kernel that does not know PERF_FORMAT_LOST (EINVAL) is retried without it;
 * attr->read_format then tells the caller which one is in force. */
int dp_perf_event_open_cpu(struct perf_event_attr *attr, int cpu, int group_fd);

/* Maps 1 + @data_pages pages (a power of two) read-write, so the kernel honours data_tail. */
int dp_perf_event_map(int fd, size_t data_pages, struct dp_perf_mapping *m);
void dp_perf_event_unmap(struct dp_perf_mapping *m);

int dp_perf_event_enable(int fd);
int dp_perf_event_disable(int fd);

/* One read(2) of a single (non-group) event: what its @read_format carries
 * of the lost count and time_enabled; a field it lacks stays false/0. */
struct dp_perf_event_reading {
        bool has_lost, has_time_enabled;
        uint64_t lost;
        uint64_t time_enabled;          /* ns the event was enabled, frozen once the kernel detaches it */
};
int dp_perf_event_read_single(int fd, uint64_t read_format, struct dp_perf_event_reading *ret);
