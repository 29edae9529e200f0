/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpu-hotplug.h"
#include "cpu-list.h"
#include "macro.h"
#include "fileio.h"
#include "hotplug.h"
#include "log.h"
#include "time-util.h"

#define ONLINE_PATH "/sys/devices/system/cpu/online"
#define TEST_LIST_LOOK_EVERY_NS (5 * NSEC_PER_SEC)

struct hotplug {
        const char *path;
        bool test_list;                 /* a test's file (DAMON_PERFD_TEST_CPU_ONLINE), not the kernel's */
        int fd;                         /* the kernel's list, kept open; -1: opened each time */
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
        h->test_list = online_path;
        /* A sysfs file is never replaced, and each read from offset 0 shows
         * it anew: one fd serves for good, an open and a close a second
         * fewer (half of the idle main loop's CPU).  A test's file may be
         * replaced (rename), so it is opened each time. */
        h->fd = online_path ? -1 : open(h->path, O_RDONLY | O_CLOEXEC);
        *ret = h;
        return 0;
}

uint64_t hotplug_look_every_ns(const struct hotplug *h) {
        return h->test_list ? TEST_LIST_LOOK_EVERY_NS : UINT64_MAX;
}

void hotplug_free(struct hotplug *h) {
        if (!h)
                return;
        if (h->fd >= 0)
                close(h->fd);
        free(h);
}

/* The list's text: from the kept fd into @buf, else read whole into *@alloc. */
static int read_list_text(struct hotplug *h, char *buf, size_t size, char **alloc, const char **ret) {
        size_t len;
        ssize_t n;
        int r;

        if (h->fd >= 0) {
                n = pread(h->fd, buf, size - 1, 0);
                if (n < 0)
                        return dp_negative_errno();
                if ((size_t) n < size - 1) {
                        buf[n] = '\0';
                        *ret = buf;
                        return 0;
                }
                /* A list longer than the buffer: read it whole. */
        }
        r = dp_read_file(h->path, alloc, &len);
        if (r < 0)
                return r;
        *ret = *alloc;
        return 0;
}

static int read_online(struct hotplug *h) {
        _cleanup_free_ char *alloc = NULL;
        char buf[1024];
        const char *text;
        int r;

        r = read_list_text(h, buf, sizeof(buf), &alloc, &text);
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
