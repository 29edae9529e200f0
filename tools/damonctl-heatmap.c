/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl heatmap: one target's access intensity over address and time,
 * live from the daemon (a column per poll of GetRegions) or from a perf.data
 * capture replayed through the tracker in-process (a column per
 * aggregation); drawn in the terminal, and with --svg written as an SVG.
 */
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "heatmap.h"
#include "macro.h"
#include "parse-util.h"
#include "replay.h"
#include "damonctl.h"
#include "time-util.h"

/* A day of 20 s polls, or an hour and more of 1 s ones; the oldest go first. */
#define MAX_COLUMNS 4096
/* GetRegions returns the hottest first, at most this many: all of a target's. */
#define REGIONS_LIMIT 1000000
#define DEFAULT_WIDTH 80
#define DEFAULT_HEIGHT 24
#define MIN_PLOT_LINES 4
#define MAX_PLOT_LINES 24
#define REPLAY_AGGR_DEFAULT_NS (NSEC_PER_SEC / 10)
/* The replay's sampling interval is this share of its aggregation interval. */
#define REPLAY_SAMPLES_PER_AGGR 20

/* How the picture goes to stdout. */
struct view {
        bool tty;                       /* redraw in place, colours unless --no-color */
        enum dp_heatmap_colors colors;
        size_t frame_lines;             /* of the frame on screen */
};

static void view_init(const struct ctl *ctl, struct view *v) {
        const char *colorterm = getenv("COLORTERM");

        v->tty = isatty(STDOUT_FILENO);
        v->frame_lines = 0;
        if (ctl->no_color || !v->tty)
                v->colors = DP_HEATMAP_ASCII;
        else if (colorterm && (strcmp(colorterm, "truecolor") == 0 || strcmp(colorterm, "24bit") == 0))
                v->colors = DP_HEATMAP_TRUECOLOR;
        else
                v->colors = DP_HEATMAP_256;
}

static unsigned env_size(const char *name, unsigned fallback) {
        const char *s = getenv(name);
        uint32_t v;

        if (!s || dp_parse_u32_in(s, 1, 10000, &v) < 0)
                return fallback;
        return v;
}

/* The terminal's size now (it may change between frames). */
static void terminal_size(const struct view *v, unsigned *width, unsigned *height) {
        struct winsize ws = {0};

        if (v->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
                *width = ws.ws_col;
                *height = ws.ws_row;
                return;
        }
        *width = env_size("COLUMNS", DEFAULT_WIDTH);
        *height = env_size("LINES", DEFAULT_HEIGHT);
}

static void print_error(const char *what, int r) {
        fprintf(stderr, "heatmap: %s: %s\n", what, strerror(-r));
}

/* The newest columns that fit the terminal, as text; an exit code. */
static int render_frame(const struct dp_heatmap *h, const struct ctl *ctl, const struct view *v, const char *title,
                        char **ret, size_t *ret_size) {
        struct dp_heatmap_grid g = {0};
        struct dp_heatmap_layout layout = { .range = { ctl->range_start, ctl->range_end } };
        unsigned width, height, lines;
        FILE *f;
        int r;

        terminal_size(v, &width, &height);
        /* Room for the frame and the shell prompt after it. */
        lines = height > DP_HEATMAP_TERMINAL_EXTRA_LINES + 2 ? height - DP_HEATMAP_TERMINAL_EXTRA_LINES - 2 : 0;
        lines = DP_MIN(DP_MAX(lines, (unsigned) MIN_PLOT_LINES), (unsigned) MAX_PLOT_LINES);
        dp_heatmap_terminal_grid_size(width, lines, v->colors, &layout.last_columns, &layout.nr_rows);

        f = open_memstream(ret, ret_size);
        if (!f) {
                print_error("rendering", -errno);
                return CTL_EXIT_FAILURE;
        }
        r = dp_heatmap_grid_build(h, &layout, &g);
        if (r == -ENODATA)
                r = fprintf(f, "%s\n(no regions yet)\n", title) < 0 ? -EIO : 0;
        else if (r >= 0)
                /* Few columns yet: wider ones, for a picture one can see. */
                r = dp_heatmap_write_terminal(&g, v->colors,
                                              dp_heatmap_terminal_column_width(layout.last_columns, g.nr_columns),
                                              title, f);
        dp_heatmap_grid_done(&g);
        if (fclose(f) != 0 && r >= 0)
                r = -EIO;
        if (r < 0) {
                free(*ret);
                *ret = NULL;
                print_error("rendering", r);
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

/* Writes @frame; on a terminal over the previous one, line by line, so
 * that nothing flickers.  An exit code. */
static int show_frame(struct view *v, const char *frame) {
        size_t lines = 0;

        if (v->tty && v->frame_lines > 0)
                printf("\r\033[%zuA", v->frame_lines);
        for (const char *p = frame; *p;) {
                size_t len = strcspn(p, "\n");

                fwrite(p, 1, len, stdout);
                /* Clear what a longer line of the previous frame left. */
                fputs(v->tty ? "\033[K\n" : "\n", stdout);
                lines++;
                p += len + (p[len] == '\n');
        }
        if (v->tty)
                fputs("\033[J", stdout);
        v->frame_lines = lines;
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "writing to stdout: %s\n", strerror(errno ?: EIO));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

static int draw(const struct dp_heatmap *h, const struct ctl *ctl, struct view *v, const char *title) {
        _cleanup_free_ char *frame = NULL;
        size_t size;
        int k;

        k = render_frame(h, ctl, v, title, &frame, &size);
        if (k == CTL_EXIT_OK)
                k = show_frame(v, frame);
        return k;
}

static int write_svg(const struct dp_heatmap *h, const struct ctl *ctl, const char *title) {
        struct dp_heatmap_grid g = {0};
        struct dp_heatmap_layout layout = {
                .nr_rows = DP_HEATMAP_SVG_ROWS,
                .range = { ctl->range_start, ctl->range_end },
        };
        FILE *f;
        int r;

        r = dp_heatmap_grid_build(h, &layout, &g);
        if (r == -ENODATA) {
                fprintf(stderr, "heatmap: no regions to draw, %s not written\n", ctl->svg_path);
                return CTL_EXIT_FAILURE;
        }
        if (r < 0) {
                print_error("building the grid", r);
                return CTL_EXIT_FAILURE;
        }
        f = fopen(ctl->svg_path, "we");
        if (!f) {
                fprintf(stderr, "heatmap: cannot write %s: %s\n", ctl->svg_path, strerror(errno));
                dp_heatmap_grid_done(&g);
                return CTL_EXIT_FAILURE;
        }
        r = dp_heatmap_write_svg(&g, title, f);
        dp_heatmap_grid_done(&g);
        if (fclose(f) != 0 && r >= 0)
                r = -errno;
        if (r < 0) {
                fprintf(stderr, "heatmap: writing %s: %s\n", ctl->svg_path, strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

static int out_of_memory(void) {
        fprintf(stderr, "out of memory\n");
        return CTL_EXIT_FAILURE;
}

/* ---- Live ---- */

/* One target's regions as heatmap regions, and the daemon's aggregation
 * interval.  An exit code; *ret NULL (and *ret_n 0) when interrupted. */
static int poll_regions(struct ctl *ctl, int64_t target, struct dp_heatmap_region **ret, size_t *ret_n,
                        int64_t *ret_aggr_usec) {
        _cleanup_free_ struct dp_heatmap_region *out = NULL;
        json_t *parameters, *reply = NULL, *regions, *region;
        int64_t max_nr_accesses;
        size_t i;
        int k;

        *ret = NULL;
        *ret_n = 0;
        parameters = json_pack("{s:I,s:I}", "target", (json_int_t) target, "limit", (json_int_t) REGIONS_LIMIT);
        if (!parameters)
                return out_of_memory();
        k = ctl_call(ctl, "GetRegions", parameters, &reply);
        json_decref(parameters);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        if ((k = ctl_get_array(reply, "GetRegions", "regions", &regions)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetRegions", "max_nr_accesses", &max_nr_accesses)) != CTL_EXIT_OK ||
            (k = ctl_get_int(reply, "GetRegions", "aggr_interval_usec", ret_aggr_usec)) != CTL_EXIT_OK)
                goto out;
        out = calloc(json_array_size(regions) ?: 1, sizeof(*out));
        if (!out) {
                k = out_of_memory();
                goto out;
        }
        json_array_foreach(regions, i, region) {
                int64_t start, end, nr_accesses;
                char where[32];

                snprintf(where, sizeof(where), "regions[%zu]", i);
                if (!json_is_object(region)) {
                        k = ctl_bad_reply("%s: expected an object", where);
                        goto out;
                }
                if ((k = ctl_get_int(region, where, "start", &start)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(region, where, "end", &end)) != CTL_EXIT_OK ||
                    (k = ctl_get_int(region, where, "nr_accesses", &nr_accesses)) != CTL_EXIT_OK)
                        goto out;
                if ((uint64_t) start >= (uint64_t) end) {
                        k = ctl_bad_reply("%s: start is not below end", where);
                        goto out;
                }
                out[i] = (struct dp_heatmap_region) {
                        (uint64_t) start, (uint64_t) end,
                        max_nr_accesses > 0 ? (double) DP_MIN(DP_MAX(nr_accesses, 0), max_nr_accesses) /
                                              (double) max_nr_accesses : 0.0,
                };
        }
        *ret_n = json_array_size(regions);
        *ret = DP_TAKE_PTR(out);
out:
        json_decref(reply);
        return k;
}

/* Without --target: the target of the hottest region. */
static int pick_live_target(struct ctl *ctl, int64_t *ret) {
        json_t *parameters, *reply = NULL, *regions;
        int k;

        parameters = json_pack("{s:i}", "limit", 1);
        if (!parameters)
                return out_of_memory();
        k = ctl_call(ctl, "GetRegions", parameters, &reply);
        json_decref(parameters);
        if (k != CTL_EXIT_OK || !reply)
                return k;
        k = ctl_get_array(reply, "GetRegions", "regions", &regions);
        if (k == CTL_EXIT_OK && json_array_size(regions) == 0) {
                fprintf(stderr, "heatmap: damon-perfd has no regions yet; name one with --target=PID\n");
                k = CTL_EXIT_FAILURE;
        } else if (k == CTL_EXIT_OK)
                k = ctl_get_int(json_array_get(regions, 0), "regions[0]", "target", ret);
        if (k == CTL_EXIT_OK)
                fprintf(stderr, "heatmap: target %" PRIi64 ", which has the hottest region\n", *ret);
        json_decref(reply);
        return k;
}

static void target_name(int64_t target, char *buf, size_t size) {
        if (target == 0)
                snprintf(buf, size, "the physical address space");
        else
                snprintf(buf, size, "pid %" PRIi64, target);
}

/* A live heatmap between polls. */
struct live {
        struct dp_heatmap *heatmap;
        struct view view;
        int64_t target;
        char name[64];
        char title[160];                /* once the first poll tells the interval */
        int64_t aggr_usec;              /* the daemon's aggregation interval */
        uint64_t interval_ns;           /* 0 until the first poll: the daemon's aggregation */
        uint64_t previous;              /* when the last column ended; 0 before the first */
        uint64_t started;
        uint64_t deadline;              /* of the next poll */
};

/* One poll of GetRegions as the next column, redrawn on a terminal; an exit code. */
static int live_add_column(struct ctl *ctl, struct live *l) {
        _cleanup_free_ struct dp_heatmap_region *regions = NULL;
        uint64_t now;
        size_t n;
        int k, r;

        k = poll_regions(ctl, l->target, &regions, &n, &l->aggr_usec);
        if (k != CTL_EXIT_OK || ctl_interrupted)
                return k;
        now = dp_now_ns(CLOCK_MONOTONIC);
        if (l->previous == 0) {
                if (l->interval_ns == 0)
                        l->interval_ns = l->aggr_usec > 0 ? (uint64_t) l->aggr_usec * 1000 : NSEC_PER_SEC;
                snprintf(l->title, sizeof(l->title), "Access heatmap: %s, a column every %.2f s", l->name,
                         (double) l->interval_ns / 1e9);
        }
        /* The first poll shows the aggregation before it. */
        r = dp_heatmap_add_column(l->heatmap, l->previous ?: now - DP_MIN(l->interval_ns, now), now, regions, n);
        if (r < 0)
                return r == -EINVAL ? ctl_bad_reply("GetRegions: overlapping regions") : out_of_memory();
        l->previous = now;
        if (l->view.tty)
                return draw(l->heatmap, ctl, &l->view, l->title);
        return CTL_EXIT_OK;
}

/* Sleeps until the next poll is due; false once --duration is over, or on Ctrl-C. */
static bool live_wait(const struct ctl *ctl, struct live *l) {
        l->deadline += l->interval_ns;
        if (ctl->duration_ns > 0 && l->deadline - l->started > ctl->duration_ns)
                return false;
        /* Fallen behind (a slow daemon, a suspended terminal): skip, do not rush. */
        if (l->deadline < l->previous)
                l->deadline = l->previous;
        while (!ctl_interrupted &&
               clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
                               &(struct timespec) { (time_t) (l->deadline / NSEC_PER_SEC),
                                                    (long) (l->deadline % NSEC_PER_SEC) },
                               NULL) == EINTR)
                ;
        return !ctl_interrupted;
}

/* After the last poll: the picture, if it was not drawn as it grew, and the
 * SVG; @k is the polls' exit code, which comes first. */
static int live_finish(const struct ctl *ctl, struct live *l, int k) {
        if (dp_heatmap_nr_columns(l->heatmap) > 0) {
                int k2 = CTL_EXIT_OK;

                if (!l->view.tty)
                        k2 = draw(l->heatmap, ctl, &l->view, l->title);
                if (k2 == CTL_EXIT_OK && ctl->svg_path)
                        k2 = write_svg(l->heatmap, ctl, l->title);
                if (k == CTL_EXIT_OK)
                        k = k2;
        }
        fflush(stdout);
        return k;
}

static int heatmap_live(struct ctl *ctl) {
        _cleanup_heatmap_ struct dp_heatmap *h = NULL;
        struct live l = { .target = ctl->target, .interval_ns = ctl->interval_ns };
        int k;

        k = ctl_handle_signals();
        if (k != CTL_EXIT_OK)
                return k;
        if (dp_heatmap_new(MAX_COLUMNS, &h) < 0)
                return out_of_memory();
        l.heatmap = h;
        if (!ctl->target_set) {
                k = pick_live_target(ctl, &l.target);
                if (k != CTL_EXIT_OK || ctl_interrupted)
                        return k;
        }
        view_init(ctl, &l.view);
        target_name(l.target, l.name, sizeof(l.name));
        if (l.view.tty)
                fputs("\033[?25l", stdout);     /* no cursor flashing about the picture */

        l.started = l.deadline = dp_now_ns(CLOCK_MONOTONIC);
        do
                k = live_add_column(ctl, &l);
        while (k == CTL_EXIT_OK && !ctl_interrupted && live_wait(ctl, &l));
        if (l.view.tty)
                fputs("\033[0m\033[?25h", stdout);
        return live_finish(ctl, &l, k);
}

/* ---- Replay ---- */

struct replay_columns {
        struct dp_heatmap *heatmap;
        uint32_t tgid;
        uint64_t aggr_ns;
        uint64_t previous_ns;           /* end of the previous column, 0: none yet */
        struct dp_heatmap_region *buf;
        size_t cap;
        int error;
};

static void on_aggregation(const struct dp_tracker *tracker, void *userdata) {
        struct replay_columns *rc = userdata;
        uint32_t max = dp_tracker_max_nr_accesses(tracker);
        uint64_t end = dp_tracker_window_start_ns(tracker);
        const struct dp_region *regions;
        size_t n;
        int r;

        if (rc->error < 0)
                return;
        r = dp_tracker_target_regions(tracker, rc->tgid, &regions, &n);
        if (r >= 0 && n > rc->cap) {
                struct dp_heatmap_region *grown = realloc(rc->buf, n * sizeof(*grown));

                if (!grown)
                        r = -ENOMEM;
                else {
                        rc->buf = grown;
                        rc->cap = n;
                }
        }
        if (r < 0) {
                rc->error = r;
                return;
        }
        for (size_t i = 0; i < n; i++)
                rc->buf[i] = (struct dp_heatmap_region) {
                        regions[i].start, regions[i].end,
                        max > 0 ? (double) DP_MIN(regions[i].last_nr_accesses, max) / max : 0.0,
                };
        r = dp_heatmap_add_column(rc->heatmap, rc->previous_ns ?: end - DP_MIN(rc->aggr_ns, end), end, rc->buf, n);
        if (r < 0)
                rc->error = r;
        rc->previous_ns = end;
}

/* Plans the capture's targets and settles which one to show.  An exit code. */
static int replay_choose_target(struct ctl *ctl, struct dp_replay *rp, struct dp_tracker *tracker,
                                struct dp_perf_data *data, uint32_t *ret) {
        bool phys = ctl->target_set && ctl->target == 0;
        uint64_t samples;
        int targets, r;

        targets = dp_replay_plan_targets(rp, data);
        if (targets < 0) {
                fprintf(stderr, "heatmap: %s: %s\n", ctl->replay_path, strerror(-targets));
                return CTL_EXIT_FAILURE;
        }
        r = dp_replay_busiest_target(rp, ret, &samples);
        if (r < 0) {
                fprintf(stderr, "heatmap: %s has no samples with a%s address\n", ctl->replay_path,
                        phys ? " physical" : " user-space data");
                return CTL_EXIT_FAILURE;
        }
        if (ctl->target_set) {
                if (!dp_tracker_has_target(tracker, (uint32_t) ctl->target)) {
                        fprintf(stderr, "heatmap: pid %" PRIi64 " has no samples in %s (the busiest process is %" PRIu32
                                ")\n", ctl->target, ctl->replay_path, *ret);
                        return CTL_EXIT_FAILURE;
                }
                *ret = (uint32_t) ctl->target;
        } else
                fprintf(stderr, "heatmap: pid %" PRIu32 ", the busiest of %d in the capture (%" PRIu64 " samples)\n",
                        *ret, targets, samples);
        return CTL_EXIT_OK;
}

static int heatmap_replay(struct ctl *ctl) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        _cleanup_tracker_ struct dp_tracker *tracker = NULL;
        _cleanup_heatmap_ struct dp_heatmap *h = NULL;
        struct replay_columns rc = {0};
        struct dp_tracker_config tc;
        struct dp_replay *rp = NULL;
        _cleanup_free_ char *path = strdup(ctl->replay_path);
        char title[256], name[64];
        struct view v;
        int k, r;

        if (!path)
                return out_of_memory();
        r = dp_perf_data_open(ctl->replay_path, &data);
        if (r < 0) {
                fprintf(stderr, "heatmap: %s: not a readable perf.data capture: %s\n", ctl->replay_path,
                        strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        dp_tracker_config_init(&tc);
        tc.mode = ctl->target_set && ctl->target == 0 ? DP_TRACKER_PADDR : DP_TRACKER_VADDR;
        tc.aggr_interval_ns = ctl->interval_ns ?: REPLAY_AGGR_DEFAULT_NS;
        tc.sample_interval_ns = tc.aggr_interval_ns / REPLAY_SAMPLES_PER_AGGR;
        r = dp_tracker_new(&tc, &tracker);
        if (r >= 0)
                r = dp_heatmap_new(MAX_COLUMNS, &h);
        if (r >= 0)
                r = dp_replay_new(NULL, tracker, tc.mode == DP_TRACKER_PADDR, &rp);
        /* Each event decoded by its PMU's source, as damon-perfd --replay does. */
        if (r >= 0 && (r = dp_replay_use_capture_sources(rp, data, NULL, NULL, NULL)) == -ENOENT)
                r = 0;
        if (r < 0) {
                print_error("setting up the replay", r);
                return CTL_EXIT_FAILURE;
        }

        k = replay_choose_target(ctl, rp, tracker, data, &rc.tgid);
        if (k == CTL_EXIT_OK) {
                rc.heatmap = h;
                rc.aggr_ns = tc.aggr_interval_ns;
                dp_replay_set_aggregation_hook(rp, on_aggregation, &rc);
                r = dp_replay_run(rp, data);
                if (r < 0)
                        fprintf(stderr, "heatmap: %s: %s; showing what was read before it\n", ctl->replay_path,
                                strerror(-r));
        }
        dp_replay_free(rp);
        free(rc.buf);
        if (k != CTL_EXIT_OK)
                return k;
        if (rc.error < 0) {
                print_error("collecting the columns", rc.error);
                return CTL_EXIT_FAILURE;
        }
        if (dp_heatmap_nr_columns(h) == 0) {
                fprintf(stderr, "heatmap: %s is shorter than one aggregation (%.3f s, see --interval)\n",
                        ctl->replay_path, (double) tc.aggr_interval_ns / 1e9);
                return CTL_EXIT_FAILURE;
        }

        target_name(tc.mode == DP_TRACKER_PADDR ? 0 : rc.tgid, name, sizeof(name));
        snprintf(title, sizeof(title), "Access heatmap: %s in %s, a column every %.2f s", name, basename(path),
                 (double) tc.aggr_interval_ns / 1e9);
        view_init(ctl, &v);
        k = draw(h, ctl, &v, title);
        if (k == CTL_EXIT_OK && ctl->svg_path)
                k = write_svg(h, ctl, title);
        return k;
}

int ctl_heatmap(struct ctl *ctl) {
        return ctl->replay_path ? heatmap_replay(ctl) : heatmap_live(ctl);
}
