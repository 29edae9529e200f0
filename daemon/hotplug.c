/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-hotplug.h"
#include "cpu-list.h"
#include "macro.h"
#include "fileio.h"
#include "hotplug.h"
#include "log.h"

#define ONLINE_PATH "/sys/devices/system/cpu/online"

struct hotplug {
        const char *path;
        bool unreadable;                /* logged once until it can be read again */
        struct dp_cpu_list list;
        bool online[DP_CPU_MAX];
};

int hotplug_new(const char *online_path, struct hotplug **ret) {
        struct hotplug *h;

        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->path = online_path ?: ONLINE_PATH;
        *ret = h;
        return 0;
}

void hotplug_free(struct hotplug *h) {
        free(h);
}

static int read_online(struct hotplug *h) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = dp_read_file(h->path, &text, &len);
        if (r < 0)
                return r;
        r = dp_cpu_list_parse(text, &h->list);
        if (r < 0)
                return r;
        memset(h->online, 0, sizeof(h->online));
        for (size_t i = 0; i < h->list.n; i++)
                h->online[h->list.cpu[i]] = true;
        return 0;
}

void hotplug_check(struct hotplug *h, struct sampler *samplers, size_t n, const struct sampler_options *options) {
        int r;

        r = read_online(h);
        if (r < 0) {
                if (!h->unreadable)
                        log_warning_errno(r, "cannot read the online CPUs from %s: %m; CPU hotplug goes unnoticed "
                                          "meanwhile", h->path);
                h->unreadable = true;
                return;
        }
        if (h->unreadable)
                log_info("the online CPUs can be read from %s again", h->path);
        h->unreadable = false;

        for (size_t i = 0; i < n; i++) {
                struct sampler *s = &samplers[i];
                int cpu = s->channel->cpu;
                bool online = cpu >= 0 && cpu < DP_CPU_MAX && h->online[cpu];

                /* A reader that ended by itself (its event detached) leaves dead fds behind. */
                sampler_reap(s);
                switch (dp_hotplug_decide(online, dp_cpu_get_status(&s->channel->stats))) {
                case DP_HOTPLUG_CLOSE:
                        sampler_offline(s);
                        break;
                case DP_HOTPLUG_REOPEN:
                        log_info("CPU%d is online again: reopening its sampler", cpu);
                        (void) sampler_retry(s, options);
                        break;
                case DP_HOTPLUG_KEEP:
                        break;
                }
        }
}
