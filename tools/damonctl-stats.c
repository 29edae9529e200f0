/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl stats: the counter table, rates over an interval, Prometheus. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "prometheus.h"
#include "stats-reply.h"
#include "damonctl.h"

#define TEXTFILE_NAME "damon_perfd.prom"

/* The textfile collector reads every *.prom in DIR whenever scraped: write a
 * hidden temporary beside the target, make it durable, then rename it over
 * the target, so a scrape sees the old file or the new one, never half. */
static int write_textfile(const char *dir, const struct dp_stats_reply *r) {
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        _cleanup_close_ int dir_fd = -1;
        _cleanup_fclose_ FILE *f = NULL;
        int fd, k;

        if (asprintf(&tmp, "%s/." TEXTFILE_NAME ".XXXXXX", dir) < 0 || asprintf(&path, "%s/" TEXTFILE_NAME, dir) < 0) {
                fprintf(stderr, "out of memory\n");
                return CTL_EXIT_FAILURE;
        }
        fd = mkostemp(tmp, O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "cannot create a file in %s: %s\n", dir, strerror(errno));
                return CTL_EXIT_FAILURE;
        }
        f = fdopen(fd, "w");
        if (!f) {
                k = -errno;
                close(fd);
                goto fail;
        }
        /* node_exporter usually runs as another user: make the file readable (mkstemp gives 0600). */
        if (fchmod(fd, 0644) < 0) {
                k = -errno;
                goto fail;
        }
        k = dp_prometheus_write_stats(f, r);
        if (k < 0)
                goto fail;
        if (fflush(f) != 0 || fsync(fd) < 0) {
                k = -errno;
                goto fail;
        }
        k = fclose(DP_TAKE_PTR(f));
        if (k != 0) {
                k = -errno;
                goto fail;
        }
        if (rename(tmp, path) < 0) {
                k = -errno;
                goto fail;
        }
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir_fd >= 0)
                (void) fsync(dir_fd);
        return CTL_EXIT_OK;

fail:
        (void) unlink(tmp);
        fprintf(stderr, "cannot write %s: %s\n", path, strerror(k < 0 ? -k : EIO));
        return CTL_EXIT_FAILURE;
}

static int print_stats(struct ctl *ctl, const struct dp_stats_reply *r, const struct dp_stats_reply *prev,
                       bool first) {
        struct dp_stats_rates rates = {};
        int k;

        if (ctl->textfile_dir)
                return write_textfile(ctl->textfile_dir, r);
        if (ctl->prometheus)
                k = dp_prometheus_write_stats(stdout, r);
        else if (ctl->interval_sec > 0) {
                k = dp_stats_rates_compute(prev, r, &rates);
                if (k >= 0) {
                        if (!first)
                                putchar('\n');
                        k = dp_stats_reply_print(stdout, r, &rates);
                }
                dp_stats_rates_done(&rates);
        } else
                k = dp_stats_reply_print(stdout, r, NULL);
        if (k >= 0 && fflush(stdout) != 0)
                k = -errno;
        if (k < 0) {
                fprintf(stderr, "writing the stats: %s\n", strerror(-k));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

static int stats_once(struct ctl *ctl, struct dp_stats_reply *prev, bool first) {
        struct dp_stats_reply r = {};
        json_t *reply = NULL;
        char error[256];
        int k;

        k = ctl_call(ctl, "GetStats", NULL, &reply);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        if (ctl->json) {
                k = ctl_print_json(reply);
                json_decref(reply);
                return k;
        }
        k = dp_stats_reply_parse(reply, &r, error, sizeof(error));
        json_decref(reply);
        if (k == -ENOMEM) {
                fprintf(stderr, "out of memory\n");
                return CTL_EXIT_FAILURE;
        }
        if (k < 0)
                return ctl_bad_reply("%s", error);

        k = print_stats(ctl, &r, first ? NULL : prev, first);
        dp_stats_reply_done(prev);
        *prev = r;
        return k;
}

static void timespec_add_sec(struct timespec *t, uint64_t sec) {
        t->tv_sec += (time_t) sec;
}

int ctl_stats(struct ctl *ctl) {
        struct dp_stats_reply prev = {};
        struct timespec deadline;
        int k;

        if (ctl->interval_sec == 0) {
                k = stats_once(ctl, &prev, true);
                dp_stats_reply_done(&prev);
                return k;
        }

        k = ctl_handle_signals();
        if (k != CTL_EXIT_OK)
                return k;
        clock_gettime(CLOCK_MONOTONIC, &deadline);
        for (uint64_t n = 0; !ctl_interrupted && (ctl->count == 0 || n < ctl->count); n++) {
                if (n > 0) {
                        /* Absolute deadlines: the period does not drift by the time each report takes. */
                        timespec_add_sec(&deadline, ctl->interval_sec);
                        while (!ctl_interrupted &&
                               clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR)
                                ;
                        if (ctl_interrupted)
                                break;
                }
                k = stats_once(ctl, &prev, n == 0);
                if (k != CTL_EXIT_OK)
                        break;
        }
        dp_stats_reply_done(&prev);
        return k;
}
