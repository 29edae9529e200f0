/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Least privilege: which capabilities a configuration needs once the
 * samplers and the socket are open, decided from the configuration and a
 * few facts about the host (gathered by the daemon, daemon/privileges.c).
 * Capability sets are bit masks: bit N is capability N of <linux/capability.h>.
 *
 * The daemon keeps, for as long as it runs:
 *   CAP_PERFMON      perf_event_open on every CPU, again when Reload() retries
 *                    a CPU in ERROR; CAP_SYS_ADMIN instead on kernels without
 *                    CAP_PERFMON (before 5.8) or when it is not in our set
 *   CAP_SYS_PTRACE   Targets=all or pids: /proc/PID/maps of other users'
 *                    processes, of non-dumpable ones, and of root's that hold
 *                    capabilities the daemon dropped; unless the kernel lets the
 *                    sampling capability read them (recent kernels let
 *                    CAP_PERFMON through that check; the daemon probes it)
 *   CAP_SYS_ADMIN    Targets=phys: /proc/iomem shows addresses only to it
 *   CAP_IPC_LOCK     rings beyond perf's locked-memory budget
 *   CAP_DAC_OVERRIDE [DAMON] Mode= other than off, when not running as uid 0
 *                    (DAMON sysfs files are root's, mode 0600; uid 0 owns them)
 *   CAP_CHOWN        [API] SocketGroup= on a socket the daemon binds itself
 * and nothing else: the bounding set is cleared of the rest.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

/* Capabilities this file knows by name: 0 (CAP_CHOWN) to 40 (CAP_CHECKPOINT_RESTORE). */
#define DP_CAP_LAST_KNOWN 40
#define DP_CAP_BIT(cap) (UINT64_C(1) << (cap))

/* What the decision needs to know about the host and the daemon's setup. */
struct dp_caps_host {
        unsigned cap_last_cap;          /* the kernel's highest capability (/proc/sys/kernel/cap_last_cap) */
        uint64_t available;             /* the permitted set the daemon starts with */
        bool root_uid;                  /* running as uid 0, the owner of DAMON sysfs files */
        int perf_paranoid;              /* /proc/sys/kernel/perf_event_paranoid */
        uint64_t perf_mlock_kb;         /* /proc/sys/kernel/perf_event_mlock_kb: per user, per online CPU */
        unsigned online_cpus;           /* perf multiplies perf_mlock_kb by these */
        uint64_t memlock_limit;         /* RLIMIT_MEMLOCK in bytes; UINT64_MAX: unlimited */
        uint64_t page_size;
        size_t n_samplers;              /* CPUs sampled: one ring each */
        uint32_t aux_pages;             /* AUX area pages per CPU (ARM SPE), 0: none */
        bool socket_chown;              /* the daemon binds its socket itself and gives it a group */
        bool sampling_reads_maps;       /* the sampling capability alone passes /proc/PID/maps' check */
};

struct dp_caps_plan {
        uint64_t needed;                /* what the configuration needs */
        uint64_t keep;                  /* needed and available: effective = permitted = bounding */
        uint64_t missing;               /* needed but not available: that part of the work will fail */
        uint64_t ring_bytes;            /* locked memory the rings take (ring + AUX, every CPU) */
        uint64_t mlock_budget;          /* perf's locked-memory budget for them, in bytes */
        const char *why[DP_CAP_LAST_KNOWN + 1]; /* per needed capability: a static reason */
};

/* The capability perf_event_open will use: CAP_PERFMON, or CAP_SYS_ADMIN on a
 * kernel without it or when it is not available while CAP_SYS_ADMIN is. */
unsigned dp_caps_sampling_cap(const struct dp_caps_host *host);

/* Decides the set.  -EINVAL when @host does not make sense (no page size,
 * no online CPU, a cap_last_cap beyond 63). */
int dp_caps_plan(const struct dp_config *c, const struct dp_caps_host *host, struct dp_caps_plan *ret);

/* "CAP_PERFMON" for 38; NULL for a capability this file does not know. */
const char *dp_cap_name(unsigned cap);
/* The capability called @name ("CAP_PERFMON" or "cap_perfmon"), or -EINVAL. */
int dp_cap_from_name(const char *name);

/* The names in @mask separated by @sep ("CAP_PERFMON CAP_SYS_PTRACE"); an
 * unknown bit as its number; "none" for the empty set.  -ENOBUFS when
 * @size is short (the text is then cut). */
int dp_caps_format(uint64_t mask, const char *sep, char *buf, size_t size);

/* The names in @mask as a JSON array of strings, in capability order. */
json_t *dp_caps_to_json(uint64_t mask);
