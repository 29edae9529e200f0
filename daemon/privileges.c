/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include "macro.h"
#include "fileio.h"
#include "log.h"
#include "parse-util.h"
#include "privileges.h"
#include "varlink-server.h"

static void cap_freep(cap_t *caps) {
        if (*caps)
                cap_free(*caps);
}
#define _cleanup_cap_ __attribute__((cleanup(cap_freep)))

/* A number from a /proc/sys file; @fallback when it cannot be read. */
static long long read_sysctl(const char *path, long long fallback) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        long long v;

        if (dp_read_file(path, &text, &len) < 0)
                return fallback;
        text[strcspn(text, "\n")] = '\0';       /* the value, without its newline */
        if (dp_parse_int_in(text, LLONG_MIN, LLONG_MAX, &v) < 0)
                return fallback;
        return v;
}

static uint64_t read_set(cap_t caps, cap_flag_t flag, unsigned last) {
        uint64_t mask = 0;

        for (unsigned cap = 0; cap <= last; cap++) {
                cap_flag_value_t v = CAP_CLEAR;

                if (cap_get_flag(caps, (cap_value_t) cap, flag, &v) == 0 && v == CAP_SET)
                        mask |= DP_CAP_BIT(cap);
        }
        return mask;
}

static unsigned last_cap(void) {
        int bits = (int) cap_max_bits();

        return (unsigned) DP_MIN(DP_MAX(bits, 1), 64) - 1;
}

int privileges_get(struct privileges_sets *ret) {
        _cleanup_cap_ cap_t caps = cap_get_proc();
        unsigned last = last_cap();

        if (!caps)
                return dp_negative_errno();
        *ret = (struct privileges_sets) {
                .effective = read_set(caps, CAP_EFFECTIVE, last),
                .permitted = read_set(caps, CAP_PERMITTED, last),
        };
        for (unsigned cap = 0; cap <= last; cap++)
                if (cap_get_bound((cap_value_t) cap) > 0)
                        ret->bounding |= DP_CAP_BIT(cap);
        return 0;
}

json_t *privileges_to_json(const struct privileges_sets *s) {
        return json_pack("{s:o,s:o,s:o}", "effective", dp_caps_to_json(s->effective),
                         "permitted", dp_caps_to_json(s->permitted), "bounding", dp_caps_to_json(s->bounding));
}

/* A socket from systemd needs no chown: its group is the socket unit's. */
static bool socket_activated(void) {
        char **names = NULL;
        bool found = false;
        int n = sd_listen_fds_with_names(false, &names);

        for (int i = 0; i < n; i++) {
                found = found || (names && names[i] && strcmp(names[i], DP_VARLINK_SERVER_FD_NAME) == 0);
                if (names)
                        free(names[i]);
        }
        free(names);
        return found;
}

/* Does @cap alone pass the check on /proc/PID/maps that CAP_SYS_PTRACE passes
 * (recent kernels let CAP_PERFMON through)?  A child holding @cap alone reads
 * our maps while we are not dumpable: the same check as for another user's
 * process.  Before any thread exists. */
static bool maps_readable_with(unsigned cap) {
        int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), status = 0;
        char path[64];
        pid_t pid;

        if (dumpable < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                return false;
        snprintf(path, sizeof(path), "/proc/%d/maps", (int) getpid());
        pid = fork();
        if (pid == 0) {
                cap_value_t v = (cap_value_t) cap;
                cap_t caps = cap_init();

                if (!caps || cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0 ||
                    cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) < 0 || cap_set_proc(caps) < 0)
                        _exit(2);
                _exit(open(path, O_RDONLY | O_CLOEXEC) >= 0 ? 0 : 1);
        }
        while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        (void) prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
        return pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int host_facts(const struct dp_config *c, const struct sampler *samplers, size_t n_samplers,
                      const char *socket_group, struct dp_caps_host *ret) {
        _cleanup_cap_ cap_t caps = cap_get_proc();
        struct rlimit memlock;
        long page_size = sysconf(_SC_PAGESIZE), online = sysconf(_SC_NPROCESSORS_ONLN);
        uint32_t aux_pages = 0;
        unsigned sampling;

        if (!caps)
                return dp_negative_errno();
        if (getrlimit(RLIMIT_MEMLOCK, &memlock) < 0)
                return dp_negative_errno();
        for (size_t i = 0; i < n_samplers; i++)
                aux_pages = DP_MAX(aux_pages, samplers[i].plan.aux_pages);

        *ret = (struct dp_caps_host) {
                .cap_last_cap = last_cap(),
                .root_uid = geteuid() == 0,
                /* The kernel's defaults, should /proc/sys not be readable. */
                .perf_paranoid = (int) read_sysctl("/proc/sys/kernel/perf_event_paranoid", 2),
                .perf_mlock_kb = (uint64_t) DP_MAX(read_sysctl("/proc/sys/kernel/perf_event_mlock_kb", 516), 0),
                .online_cpus = (unsigned) DP_MAX(online, 1L),
                .memlock_limit = memlock.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t) memlock.rlim_cur,
                .page_size = (uint64_t) DP_MAX(page_size, 1L),
                .n_samplers = n_samplers,
                .aux_pages = aux_pages,
                .socket_chown = socket_group && !socket_activated(),
        };
        ret->available = read_set(caps, CAP_PERMITTED, ret->cap_last_cap);
        sampling = dp_caps_sampling_cap(ret);
        if (c->target_mode != DP_TARGETS_PHYS && (ret->available & DP_CAP_BIT(sampling))) {
                ret->sampling_reads_maps = maps_readable_with(sampling);
                log_debug("privileges: %s %s other processes' /proc/PID/maps", dp_cap_name(sampling),
                          ret->sampling_reads_maps ? "reads" : "does not read");
        }
        return 0;
}

static int set_caps(uint64_t keep, unsigned last) {
        _cleanup_cap_ cap_t caps = cap_init();  /* all three sets clear */

        if (!caps)
                return dp_negative_errno();
        for (unsigned cap = 0; cap <= last; cap++) {
                cap_value_t v = (cap_value_t) cap;

                if ((keep & DP_CAP_BIT(cap)) && (cap_set_flag(caps, CAP_EFFECTIVE, 1, &v, CAP_SET) < 0 ||
                                                 cap_set_flag(caps, CAP_PERMITTED, 1, &v, CAP_SET) < 0))
                        return dp_negative_errno();
        }
        return cap_set_proc(caps) < 0 ? dp_negative_errno() : 0;
}

/* Needs CAP_SETPCAP, so it comes first.  Without it (a service manager that
 * left it out) the bounding set stays the one it was given. */
static int drop_bounding(uint64_t keep, uint64_t available, unsigned last) {
        if (!(available & DP_CAP_BIT(CAP_SETPCAP))) {
                log_debug("privileges: no CAP_SETPCAP, the bounding set stays as the service manager set it");
                return 0;
        }
        for (unsigned cap = 0; cap <= last; cap++)
                if (!(keep & DP_CAP_BIT(cap)) && cap_get_bound((cap_value_t) cap) > 0 &&
                    cap_drop_bound((cap_value_t) cap) < 0)
                        return dp_negative_errno();
        return 0;
}

static void log_plan(const struct dp_caps_plan *p) {
        char keep[512];

        (void) dp_caps_format(p->keep, " ", keep, sizeof(keep));
        log_info("privileges: keeping %s (effective, permitted and bounding); no_new_privs set", keep);
        for (unsigned cap = 0; cap <= DP_CAP_LAST_KNOWN; cap++) {
                if (p->keep & DP_CAP_BIT(cap))
                        log_debug("privileges: %s: %s", dp_cap_name(cap), p->why[cap]);
                else if (p->missing & DP_CAP_BIT(cap))
                        log_warning("privileges: %s is needed but not available (%s); that will fail",
                                    dp_cap_name(cap), p->why[cap]);
        }
        if (p->needed & DP_CAP_BIT(CAP_IPC_LOCK))
                log_debug("privileges: rings take %llu KiB, perf's locked-memory budget is %llu KiB",
                          (unsigned long long) p->ring_bytes / 1024, (unsigned long long) p->mlock_budget / 1024);
}

int privileges_drop(const struct dp_config *c, const struct sampler *samplers, size_t n_samplers,
                    const char *socket_group, struct dp_caps_plan *ret) {
        struct dp_caps_host host;
        struct dp_caps_plan plan;
        int r;

        r = host_facts(c, samplers, n_samplers, socket_group, &host);
        if (r >= 0)
                r = dp_caps_plan(c, &host, &plan);
        if (r < 0)
                return log_error_errno(r, "privileges: cannot work out the capabilities needed: %m");
        r = drop_bounding(plan.keep, host.available, host.cap_last_cap);
        if (r >= 0 && CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() < 0)
                r = dp_negative_errno();
        if (r >= 0)
                r = set_caps(plan.keep, host.cap_last_cap);
        if (r >= 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                r = dp_negative_errno();
        if (r < 0)
                return log_error_errno(r, "privileges: cannot drop capabilities: %m");
        log_plan(&plan);
        if (ret)
                *ret = plan;
        return 0;
}
