/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The value benchmark's observer: every interval it asks the kdamond for its
 * tried_regions (state=update_schemes_tried_regions, as any DAMON user
 * would), reads DAMON's own regions of scheme 0, and judges them against the
 * workload's true hot set (dp_damon_agree()).  At the end it prints one
 * line per phase of the workload:
 *   VALUE phase=P snapshots=N up=N torn=N converge_s=S for_good_s=S
 *         precision=X recall=X found=N found_10s=N chunks=N regions=N
 * converge_s: from the phase's start to the first snapshot with precision
 * and recall both >= 0.9; for_good_s: to the start of the run of such
 * snapshots that lasts to the phase's end (at least 3 of them); -1: never.
 * precision, recall, found: medians over the phase's second half (steady
 * state); found_10s: chunks found in the last snapshot within 10 s;
 * regions: the median of DAMON's regions overlapping the mapping.  With
 * --observe-spared N, scheme N rejects the PMU's hot ranges (reject=hot):
 * what it leaves out of its tried regions in the mapping is what it spares,
 * judged like DAMON's hot regions (spared_precision, spared_recall: medians
 * over the second half).  A
 * read-back torn by another reader's (the daemon's) is retried; one torn
 * every time is left out, counted in torn.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "damon-agree.h"
#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "workload-core.h"
#include "workload-value.h"

#define CONVERGED 0.9
#define MAX_SNAPSHOTS 8192
#define MAX_TRIED 65536

struct snap {
        double t;               /* from the hot phase's start */
        size_t phase;
        bool up;                /* the kdamond answered */
        struct dp_damon_agreement a;
        bool spared_read;       /* the spared scheme's regions were read */
        double spared_precision, spared_recall;
};

struct value_observer {
        const struct value_workload *w;
        pthread_t thread;
        atomic_bool stop;
        struct snap *snaps;
        size_t nr_snaps;
        unsigned torn;          /* read-backs torn by another reader's update, retried */
        struct dp_damon_view_input *tried, *spared;
};

static void sleep_s(double s) {
        struct timespec ts = { (time_t) s, (long) ((s - (time_t) s) * 1e9) };

        nanosleep(&ts, NULL);
}

/* state=update_schemes_tried_regions; EBUSY (another writer) is waited out. */
static int request_update(const char *dir) {
        char path[512];

        snprintf(path, sizeof(path), "%s/state", dir);
        for (int tries = 0;; tries++) {
                _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
                static const char cmd[] = "update_schemes_tried_regions";

                if (fd < 0)
                        return -errno;
                if (write(fd, cmd, sizeof(cmd) - 1) == (ssize_t) sizeof(cmd) - 1)
                        return 0;
                if (errno != EBUSY || tries >= 20)
                        return -errno;
                sleep_s(0.01);
        }
}

static int read_u64(const char *path, uint64_t *v) {
        _cleanup_free_ char *buf = NULL;
        size_t len;
        int r = dp_read_file(path, &buf, &len);

        if (r < 0)
                return r;
        while (len > 0 && buf[len - 1] == '\n')
                buf[--len] = '\0';
        return dp_parse_u64_in(buf, 0, UINT64_MAX, v);
}

static int cmp_index(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

/* Scheme @scheme's tried regions, or -ENOENT/-ENODEV when another reader's
 * update rebuilt the directory under us.  The region directories are
 * listed, not counted from 0: 6.12 numbers them with one counter across
 * the schemes. */
static int read_tried(const char *dir, int scheme, struct dp_damon_view_input *out, size_t *ret_n) {
        _cleanup_free_ uint64_t *idx = calloc(MAX_TRIED, sizeof(*idx));
        char path[512];
        size_t n = 0;
        struct dirent *e;
        DIR *d;

        if (!idx)
                return -ENOMEM;
        snprintf(path, sizeof(path), "%s/contexts/0/schemes/%d/tried_regions", dir, scheme);
        d = opendir(path);
        if (!d)
                return -errno;
        while ((e = readdir(d)) && n < MAX_TRIED)
                if (dp_parse_u64_in(e->d_name, 0, UINT64_MAX, &idx[n]) == 0)
                        n++;
        closedir(d);
        qsort(idx, n, sizeof(*idx), cmp_index);
        for (size_t k = 0; k < n; k++) {
                static const char *const names[] = { "start", "end", "nr_accesses" };
                uint64_t v[3];

                for (size_t f = 0; f < DP_ARRAY_SIZE(names); f++) {
                        int r;

                        snprintf(path, sizeof(path), "%s/contexts/0/schemes/%d/tried_regions/%" PRIu64 "/%s", dir,
                                 scheme, idx[k], names[f]);
                        if ((r = read_u64(path, &v[f])) < 0)
                                return r;
                }
                out[k] = (struct dp_damon_view_input) { .start = v[0], .end = v[1], .nr_accesses = (uint32_t) v[2] };
        }
        *ret_n = n;
        return 0;
}

static uint64_t overlap(struct dp_range a, struct dp_range b) {
        uint64_t from = DP_MAX(a.start, b.start), to = DP_MIN(a.end, b.end);

        return to > from ? to - from : 0;
}

/* What the spared scheme's @n tried regions leave out of the mapping @map,
 * against the phase's hot set: the bytes it spares that are hot, of all it
 * spares (precision) and of all that is hot (recall). */
static void judge_spared(const struct value_phase *p, const struct dp_damon_view_input *tried, size_t n,
                         struct dp_range map, struct snap *s) {
        uint64_t tried_map = 0, tried_hot = 0, hot = dp_ranges_total_size(p->hot, p->nr_hot), spared, spared_hot;

        for (size_t i = 0; i < n; i++) {
                struct dp_range r = { tried[i].start, tried[i].end };

                tried_map += overlap(r, map);
                for (size_t j = 0; j < p->nr_hot; j++)
                        tried_hot += overlap(r, p->hot[j]);
        }
        spared = dp_range_size(&map) - DP_MIN(tried_map, dp_range_size(&map));
        spared_hot = hot - DP_MIN(tried_hot, hot);
        s->spared_read = true;
        s->spared_precision = spared ? (double) spared_hot / (double) spared : 0;
        s->spared_recall = hot ? (double) spared_hot / (double) hot : 0;
}

static size_t phase_of(const struct value_workload *w, double t) {
        size_t p = 0;

        while (p + 1 < w->nr_phases && t >= w->phases[p + 1].at_s)
                p++;
        return p;
}

/* DP_VALUE_TRACE: the snapshot's figures, then DAMON's regions inside the
 * mapping as "start+size:nr_accesses" in KiB from the mapping's start, to
 * see where DAMON's boundaries lie against the true hot set. */
static void trace_snapshot(const struct snap *s, double t0, const struct dp_damon_view_input *tried, size_t n,
                           struct dp_range map) {
        fprintf(stderr, "TRACE mono=%.2f t=%.2f up=%d precision=%.3f recall=%.3f found=%zu regions=%zu max=%u |", t0 + s->t, s->t, s->up,
                s->a.precision, s->a.recall, s->a.chunks_found, s->a.nr_regions, s->a.max_nr_accesses);
        for (size_t i = 0; i < n; i++) {
                uint64_t from = DP_MAX(tried[i].start, map.start), to = DP_MIN(tried[i].end, map.end);

                if (from < to)
                        fprintf(stderr, " %" PRIu64 "+%" PRIu64 ":%u", (from - map.start) >> 10, (to - from) >> 10,
                                tried[i].nr_accesses);
        }
        fputc('\n', stderr);
}

static void observe_once(struct value_observer *o) {
        const struct value_workload *w = o->w;
        struct dp_range map = { (uint64_t) (uintptr_t) w->base, (uint64_t) (uintptr_t) w->base + w->span_bytes };
        struct snap s = { .t = workload_now() - w->t0 };
        size_t n = 0;
        int r = request_update(w->observe_dir);

        s.phase = phase_of(w, s.t);
        if (r == 0) {
                /* DAMON always has a region for a live target: none means
                 * another reader's update emptied the directory just now. */
                for (int tries = 0; ((r = read_tried(w->observe_dir, 0, o->tried, &n)) < 0 || n == 0) && tries < 5;
                     tries++) {
                        o->torn++;
                        sleep_s(0.02);  /* the other reader's update is filling it */
                }
                if (r < 0 || n == 0)
                        return;         /* torn every time: no snapshot, rather than a false "blind" one */
                s.up = true;
        }
        if (!s.up)
                n = 0;
        const struct value_phase *p = &w->phases[s.phase];
        size_t ns = 0;
        if (s.up && w->spared_scheme >= 0 && read_tried(w->observe_dir, w->spared_scheme, o->spared, &ns) == 0)
                judge_spared(p, o->spared, ns, map, &s);
        if (dp_damon_agree(o->tried, n, p->hot, p->nr_hot, map, &s.a) < 0)
                return;
        if (getenv("DP_VALUE_TRACE"))
                trace_snapshot(&s, w->t0, o->tried, n, map);
        if (o->nr_snaps < MAX_SNAPSHOTS)
                o->snaps[o->nr_snaps++] = s;
}

static void *observer_main(void *userdata) {
        struct value_observer *o = userdata;

        while (!atomic_load(&o->stop)) {
                double start = workload_now(), left;

                observe_once(o);
                left = o->w->observe_ms / 1e3 - (workload_now() - start);
                if (left > 0)
                        sleep_s(left);
        }
        return NULL;
}

int value_observe_start(const struct value_workload *w, struct value_observer **ret) {
        struct value_observer *o = calloc(1, sizeof(*o));
        int r;

        if (!o)
                return -ENOMEM;
        o->w = w;
        o->snaps = calloc(MAX_SNAPSHOTS, sizeof(*o->snaps));
        o->tried = calloc(MAX_TRIED, sizeof(*o->tried));
        o->spared = w->spared_scheme >= 0 ? calloc(MAX_TRIED, sizeof(*o->spared)) : NULL;
        if (!o->snaps || !o->tried || (w->spared_scheme >= 0 && !o->spared)) {
                free(o->snaps);
                free(o->tried);
                free(o->spared);
                free(o);
                return -ENOMEM;
        }
        r = -pthread_create(&o->thread, NULL, observer_main, o);
        if (r < 0) {
                free(o->snaps);
                free(o->tried);
                free(o->spared);
                free(o);
                return r;
        }
        *ret = o;
        return 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* The median of @n values gathered by @get over snapshots [from, to). */
static double median_of(const struct snap *s, size_t from, size_t to, double (*get)(const struct snap *)) {
        _cleanup_free_ double *v = NULL;
        size_t n = to > from ? to - from : 0;

        if (n == 0 || !(v = calloc(n, sizeof(*v))))
                return -1;
        for (size_t i = 0; i < n; i++)
                v[i] = get(&s[from + i]);
        qsort(v, n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double get_precision(const struct snap *s) { return s->a.precision; }
static double get_recall(const struct snap *s) { return s->a.recall; }
static double get_found(const struct snap *s) { return (double) s->a.chunks_found; }
static double get_regions(const struct snap *s) { return (double) s->a.nr_regions; }

/* The median of the spared scheme's figure @get over the snapshots [from,
 * to) in which its regions were read; -1 if none. */
static double median_spared(const struct snap *s, size_t from, size_t to, bool precision) {
        _cleanup_free_ double *v = calloc(to > from ? to - from : 1, sizeof(*v));
        size_t n = 0;

        if (!v)
                return -1;
        for (size_t i = from; i < to; i++)
                if (s[i].spared_read)
                        v[n++] = precision ? s[i].spared_precision : s[i].spared_recall;
        if (n == 0)
                return -1;
        qsort(v, n, sizeof(*v), cmp_double);
        return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool converged(const struct snap *s) {
        return s->up && s->a.precision >= CONVERGED && s->a.recall >= CONVERGED;
}

static void summarise_phase(const struct value_observer *o, size_t phase) {
        const struct snap *s = o->snaps;
        double at = o->w->phases[phase].at_s, converge = -1, for_good = -1;
        size_t from = 0, to, up = 0, found_10s = 0, run = 0;

        while (from < o->nr_snaps && s[from].phase < phase)
                from++;
        for (to = from; to < o->nr_snaps && s[to].phase == phase; to++) {
                up += s[to].up;
                if (converged(&s[to]) && converge < 0)
                        converge = s[to].t - at;
                run = converged(&s[to]) ? run + 1 : 0;
                if (s[to].t - at <= 10)
                        found_10s = s[to].a.chunks_found;
        }
        if (run >= 3)
                for_good = s[to - run].t - at;
        printf("VALUE phase=%zu snapshots=%zu up=%zu torn=%u converge_s=%.2f for_good_s=%.2f precision=%.3f "
               "recall=%.3f found=%.0f found_10s=%zu chunks=%zu regions=%.0f",
               phase, to - from, up, o->torn, converge, for_good,
               median_of(s, from + (to - from) / 2, to, get_precision),
               median_of(s, from + (to - from) / 2, to, get_recall), median_of(s, from + (to - from) / 2, to, get_found),
               found_10s, o->w->phases[phase].nr_hot, median_of(s, from, to, get_regions));
        if (o->w->spared_scheme >= 0)
                printf(" spared_precision=%.3f spared_recall=%.3f", median_spared(s, from + (to - from) / 2, to, true),
                       median_spared(s, from + (to - from) / 2, to, false));
        putchar('\n');
}

void value_observe_finish(struct value_observer *o) {
        if (!o)
                return;
        atomic_store(&o->stop, true);
        pthread_join(o->thread, NULL);
        for (size_t p = 0; p < o->w->nr_phases; p++)
                summarise_phase(o, p);
        fflush(stdout);
        free(o->snaps);
        free(o->tried);
        free(o->spared);
        free(o);
}
