/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "capabilities.h"
#include "macro.h"

_Static_assert(CAP_CHECKPOINT_RESTORE == DP_CAP_LAST_KNOWN, "capability numbers as in <linux/capability.h>");

#define NAME(cap) [cap] = #cap
static const char *const cap_names[DP_CAP_LAST_KNOWN + 1] = {
        NAME(CAP_CHOWN), NAME(CAP_DAC_OVERRIDE), NAME(CAP_DAC_READ_SEARCH), NAME(CAP_FOWNER),
        NAME(CAP_FSETID), NAME(CAP_KILL), NAME(CAP_SETGID), NAME(CAP_SETUID), NAME(CAP_SETPCAP),
        NAME(CAP_LINUX_IMMUTABLE), NAME(CAP_NET_BIND_SERVICE), NAME(CAP_NET_BROADCAST), NAME(CAP_NET_ADMIN),
        NAME(CAP_NET_RAW), NAME(CAP_IPC_LOCK), NAME(CAP_IPC_OWNER), NAME(CAP_SYS_MODULE), NAME(CAP_SYS_RAWIO),
        NAME(CAP_SYS_CHROOT), NAME(CAP_SYS_PTRACE), NAME(CAP_SYS_PACCT), NAME(CAP_SYS_ADMIN), NAME(CAP_SYS_BOOT),
        NAME(CAP_SYS_NICE), NAME(CAP_SYS_RESOURCE), NAME(CAP_SYS_TIME), NAME(CAP_SYS_TTY_CONFIG), NAME(CAP_MKNOD),
        NAME(CAP_LEASE), NAME(CAP_AUDIT_WRITE), NAME(CAP_AUDIT_CONTROL), NAME(CAP_SETFCAP),
        NAME(CAP_MAC_OVERRIDE), NAME(CAP_MAC_ADMIN), NAME(CAP_SYSLOG), NAME(CAP_WAKE_ALARM),
        NAME(CAP_BLOCK_SUSPEND), NAME(CAP_AUDIT_READ), NAME(CAP_PERFMON), NAME(CAP_BPF),
        NAME(CAP_CHECKPOINT_RESTORE),
};
#undef NAME

const char *dp_cap_name(unsigned cap) {
        return cap < DP_ARRAY_SIZE(cap_names) ? cap_names[cap] : NULL;
}

int dp_cap_from_name(const char *name) {
        if (!name)
                return -EINVAL;
        for (unsigned cap = 0; cap < DP_ARRAY_SIZE(cap_names); cap++)
                if (strcasecmp(name, cap_names[cap]) == 0)
                        return (int) cap;
        return -EINVAL;
}

static uint64_t saturating_add(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t saturating_mul(uint64_t a, uint64_t b) {
        return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

static void need(struct dp_caps_plan *p, unsigned cap, const char *why) {
        if (p->needed & DP_CAP_BIT(cap))
                return;         /* the first reason stays */
        p->needed |= DP_CAP_BIT(cap);
        p->why[cap] = why;
}

/* perf's check on mmap (kernel/events/core.c, perf_mmap()): each user may lock
 * perf_event_mlock_kb per online CPU, then RLIMIT_MEMLOCK more; beyond both,
 * only CAP_IPC_LOCK maps, unless perf_event_paranoid is -1. */
static bool rings_beyond_budget(const struct dp_config *c, const struct dp_caps_host *h, struct dp_caps_plan *p) {
        uint64_t per_cpu = (uint64_t) c->ring_pages + 1 + h->aux_pages;

        p->ring_bytes = saturating_mul(saturating_mul(per_cpu, h->page_size), h->n_samplers);
        p->mlock_budget = saturating_add(saturating_mul(saturating_mul(h->perf_mlock_kb, 1024), h->online_cpus),
                                         h->memlock_limit);
        return h->perf_paranoid > -1 && p->ring_bytes > p->mlock_budget;
}

unsigned dp_caps_sampling_cap(const struct dp_caps_host *h) {
        if (h->cap_last_cap < CAP_PERFMON)
                return CAP_SYS_ADMIN;
        /* perf_event_paranoid 3 and up (Debian's default, from a patch of
         * theirs) lets only CAP_SYS_ADMIN open events: CAP_PERFMON gets EACCES
         * (Debian's 6.12, in the qemu guest), so reopening a CPU would fail. */
        if (h->perf_paranoid > 2)
                return CAP_SYS_ADMIN;
        if (!(h->available & DP_CAP_BIT(CAP_PERFMON)) && (h->available & DP_CAP_BIT(CAP_SYS_ADMIN)))
                return CAP_SYS_ADMIN;
        return CAP_PERFMON;
}

int dp_caps_plan(const struct dp_config *c, const struct dp_caps_host *h, struct dp_caps_plan *ret) {
        struct dp_caps_plan p = {};
        unsigned sampling;

        if (!c || !h || !ret || h->page_size == 0 || h->online_cpus == 0 || h->cap_last_cap > 63)
                return -EINVAL;

        /* Sampling, now and whenever Reload() reopens a CPU in ERROR.  Needed
         * even if perf_event_paranoid allows it today: the sysctl can change. */
        sampling = dp_caps_sampling_cap(h);
        if (sampling == CAP_PERFMON)
                need(&p, CAP_PERFMON, "perf_event_open on every CPU, and when Reload() retries a CPU");
        else
                need(&p, CAP_SYS_ADMIN, h->cap_last_cap < CAP_PERFMON
                                                ? "perf_event_open (a kernel without CAP_PERFMON)"
                                                : h->perf_paranoid > 2
                                                ? "perf_event_open with perf_event_paranoid above 2, which refuses "
                                                  "CAP_PERFMON, also when a CPU is reopened"
                                                : "perf_event_open (CAP_PERFMON is not in our set)");

        switch (c->target_mode) {
        case DP_TARGETS_PHYS:
                need(&p, CAP_SYS_ADMIN, "/proc/iomem shows physical addresses only to CAP_SYS_ADMIN (Targets=phys)");
                break;
        case DP_TARGETS_ALL:
        case DP_TARGETS_PIDS:
                if (!h->sampling_reads_maps)
                        need(&p, CAP_SYS_PTRACE,
                             "/proc/PID/maps of other users' processes, and of root's that keep more capabilities");
                break;
        }

        if (c->damon_mode != DP_DAMON_OFF && !h->root_uid)
                need(&p, CAP_DAC_OVERRIDE, "DAMON sysfs files are root's, mode 0600 ([DAMON] Mode=)");
        if (rings_beyond_budget(c, h, &p))
                need(&p, CAP_IPC_LOCK, "the rings exceed perf's locked-memory budget");
        if (h->socket_chown)
                need(&p, CAP_CHOWN, "[API] SocketGroup= on the socket the daemon binds");

        p.keep = p.needed & h->available;
        p.missing = p.needed & ~h->available;
        *ret = p;
        return 0;
}

int dp_caps_format(uint64_t mask, const char *sep, char *buf, size_t size) {
        size_t len = 0;
        bool first = true;
        int n;

        if (!buf || size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        if (!mask)
                return snprintf(buf, size, "none") < (int) size ? 0 : -ENOBUFS;
        for (unsigned cap = 0; cap < 64; cap++) {
                const char *name = dp_cap_name(cap);

                if (!(mask & DP_CAP_BIT(cap)))
                        continue;
                n = name ? snprintf(buf + len, size - len, "%s%s", first ? "" : sep, name)
                         : snprintf(buf + len, size - len, "%s%u", first ? "" : sep, cap);
                if (n < 0 || (size_t) n >= size - len)
                        return -ENOBUFS;
                len += (size_t) n;
                first = false;
        }
        return 0;
}

json_t *dp_caps_to_json(uint64_t mask) {
        json_t *a = json_array();

        for (unsigned cap = 0; a && cap < 64; cap++) {
                char number[8];
                const char *name = dp_cap_name(cap);

                if (!(mask & DP_CAP_BIT(cap)))
                        continue;
                if (!name) {
                        snprintf(number, sizeof(number), "%u", cap);
                        name = number;
                }
                if (json_array_append_new(a, json_string(name)) < 0) {
                        json_decref(a);
                        return NULL;
                }
        }
        return a;
}
