/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* CPU lists in the kernel's text form ("0-3,8,10-11"), as in
 * /sys/devices/system/cpu/online and a PMU's cpus file. */

#include <stdbool.h>
#include <stddef.h>

#define DP_CPU_MAX 4096

struct dp_cpu_list {
        size_t n;
        int cpu[DP_CPU_MAX];    /* ascending, no duplicates */
};

/* Parses @text (trailing whitespace allowed).  -EINVAL on a malformed list,
 * -ERANGE when a CPU number is >= DP_CPU_MAX. */
int dp_cpu_list_parse(const char *text, struct dp_cpu_list *list);
bool dp_cpu_list_contains(const struct dp_cpu_list *list, int cpu);
