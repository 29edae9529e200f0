/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A heatmap grid as a standalone SVG document. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"
#include "macro.h"

/* The plot area; the rest holds the title, axes and the colour scale. */
#define PLOT_X 130.0
#define PLOT_Y 50.0
#define PLOT_W 720.0
#define PLOT_H 480.0
#define SCALE_X (PLOT_X + PLOT_W + 30.0)
#define SCALE_W 16.0
/* Address labels closer than this (px) would overlap. */
#define LABEL_GAP 13.0
#define ADDRESS_STEPS 8
#define TIME_TICKS 8

static void write_escaped(FILE *f, const char *s) {
        for (; s && *s; s++)
                switch (*s) {
                case '&':
                        fputs("&amp;", f);
                        break;
                case '<':
                        fputs("&lt;", f);
                        break;
                case '>':
                        fputs("&gt;", f);
                        break;
                case '"':
                        fputs("&quot;", f);
                        break;
                case '\'':
                        fputs("&apos;", f);
                        break;
                default:
                        /* XML 1.0 allows no other control characters. */
                        fputc((unsigned char) *s < 0x20 && *s != '\t' && *s != '\n' ? '?' : *s, f);
                }
}

static double row_y(const struct dp_heatmap_grid *g, double position) {
        return PLOT_Y + PLOT_H - position * PLOT_H / (double) g->nr_rows;
}

struct time_axis {
        uint64_t t0_ns, t1_ns;          /* left and right edge */
};

static double time_x(const struct time_axis *a, uint64_t t_ns) {
        return PLOT_X + (double) (t_ns - a->t0_ns) * PLOT_W / (double) DP_MAX(a->t1_ns - a->t0_ns, 1);
}

static void color_hex(struct dp_rgb c, char buf[8]) {
        snprintf(buf, 8, "#%02x%02x%02x", c.r, c.g, c.b);
}

/* Each row a group (its addresses in data-* and a tooltip), each run of
 * equal neighbouring cells one rect; cells without data are left out. */
static void write_cells(const struct dp_heatmap_grid *g, const struct time_axis *axis, FILE *f) {
        double h = PLOT_H / (double) g->nr_rows;

        fputs("<g id=\"cells\" shape-rendering=\"crispEdges\">\n", f);
        for (size_t r = 0; r < g->nr_rows; r++) {
                bool open = false;

                for (size_t c = 0; c < g->nr_columns;) {
                        double v = dp_heatmap_grid_cell(g, r, c);
                        char color[8], next[8];
                        size_t end = c + 1;

                        if (v < 0) {
                                c++;
                                continue;
                        }
                        color_hex(dp_heatmap_color(v), color);
                        for (; end < g->nr_columns && dp_heatmap_grid_cell(g, r, end) >= 0 &&
                               g->columns[end].start_ns == g->columns[end - 1].end_ns;
                             end++) {
                                color_hex(dp_heatmap_color(dp_heatmap_grid_cell(g, r, end)), next);
                                if (strcmp(next, color) != 0)
                                        break;
                        }
                        if (!open) {
                                fprintf(f, "<g data-start=\"%#" PRIx64 "\" data-end=\"%#" PRIx64 "\">"
                                        "<title>%#" PRIx64 "–%#" PRIx64 "</title>\n",
                                        g->rows[r].start, g->rows[r].end, g->rows[r].start, g->rows[r].end);
                                open = true;
                        }
                        fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>\n",
                                time_x(axis, g->columns[c].start_ns), row_y(g, (double) r + 1),
                                time_x(axis, g->columns[end - 1].end_ns) - time_x(axis, g->columns[c].start_ns),
                                h, color);
                        c = end;
                }
                if (open)
                        fputs("</g>\n", f);
        }
        fputs("</g>\n", f);
}

/* The address at @offset bytes into the shown span. */
static uint64_t address_at(const struct dp_heatmap_grid *g, uint64_t offset) {
        for (size_t k = 0; k < g->nr_segments; k++) {
                uint64_t size = dp_range_size(&g->segments[k]);

                if (offset < size || k + 1 == g->nr_segments)
                        return g->segments[k].start + DP_MIN(offset, size);
                offset -= size;
        }
        return 0;
}

struct label {
        double y;
        uint64_t addr;
};

static bool label_fits(const struct label *placed, size_t n, double y) {
        for (size_t i = 0; i < n; i++)
                if (placed[i].y - y < LABEL_GAP && y - placed[i].y < LABEL_GAP)
                        return false;
        return true;
}

static int write_address_axis(const struct dp_heatmap_grid *g, FILE *f) {
        size_t max = g->nr_segments + 1 + ADDRESS_STEPS, n = 0;
        _cleanup_free_ struct label *placed = calloc(max, sizeof(*placed));

        if (!placed)
                return -ENOMEM;
        /* First the segment starts (they name the gaps), then the top, then
         * even steps through the span where room is left. */
        for (size_t k = 0; k < g->nr_segments; k++) {
                double y = row_y(g, dp_heatmap_grid_position(g, g->segments[k].start));

                if (label_fits(placed, n, y))
                        placed[n++] = (struct label) { y, g->segments[k].start };
        }
        if (label_fits(placed, n, PLOT_Y))
                placed[n++] = (struct label) { PLOT_Y, g->segments[g->nr_segments - 1].end };
        for (int i = 1; i < ADDRESS_STEPS; i++) {
                uint64_t addr = address_at(g, (uint64_t) ((unsigned __int128) g->span * i / ADDRESS_STEPS)) &
                                DP_PAGE_MASK;
                double pos = dp_heatmap_grid_position(g, addr), y = row_y(g, pos);

                if (pos >= 0 && label_fits(placed, n, y))
                        placed[n++] = (struct label) { y, addr };
        }

        fputs("<g id=\"address-axis\" font-family=\"monospace\" font-size=\"11\" text-anchor=\"end\">\n", f);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n", PLOT_X, PLOT_Y,
                PLOT_X, PLOT_Y + PLOT_H);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>"
                        "<text x=\"%.2f\" y=\"%.2f\">%#" PRIx64 "</text>\n",
                        PLOT_X - 5, placed[i].y, PLOT_X, placed[i].y, PLOT_X - 8, placed[i].y + 4, placed[i].addr);
        fputs("</g>\n", f);
        fprintf(f, "<text transform=\"translate(16 %.2f) rotate(-90)\" text-anchor=\"middle\">address</text>\n",
                PLOT_Y + PLOT_H / 2);

        /* Collapsed gaps: a dashed line where one range ends and the next begins. */
        fputs("<g id=\"gaps\" stroke=\"#ffffff\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\">\n", f);
        for (size_t k = 1; k < g->nr_segments; k++) {
                double y = row_y(g, dp_heatmap_grid_position(g, g->segments[k].start));

                fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", PLOT_X, y, PLOT_X + PLOT_W, y);
        }
        fputs("</g>\n", f);

        /* Where the newest column's regions begin and end. */
        fputs("<g id=\"region-boundaries\" stroke=\"#555555\">\n", f);
        for (size_t i = 0; i < g->nr_boundaries; i++) {
                double y = row_y(g, dp_heatmap_grid_position(g, g->boundaries[i]));

                fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", PLOT_X + PLOT_W, y,
                        PLOT_X + PLOT_W + 5, y);
        }
        fputs("</g>\n", f);
        return 0;
}

/* Ticks at a round step (1, 2 or 5 times a power of ten nanoseconds), about
 * TIME_TICKS of them, labelled in seconds since the origin. */
static void write_time_axis(const struct dp_heatmap_grid *g, const struct time_axis *axis, FILE *f) {
        uint64_t lo = axis->t0_ns - g->origin_ns, hi = axis->t1_ns - g->origin_ns;
        uint64_t raw = DP_MAX((hi - lo) / TIME_TICKS, UINT64_C(1)), step = 1, unit = 1000000000;
        int decimals = 0;

        for (uint64_t decade = 1; step < raw; decade *= 10)
                for (int m = 1; m <= 5 && step < raw; m += m == 2 ? 3 : 1)
                        step = decade * (uint64_t) m;
        while (unit > 1 && step % unit != 0) {
                unit /= 10;
                decimals++;
        }

        fputs("<g id=\"time-axis\" font-size=\"11\" text-anchor=\"middle\">\n", f);
        fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n", PLOT_X,
                PLOT_Y + PLOT_H, PLOT_X + PLOT_W, PLOT_Y + PLOT_H);
        for (uint64_t t = (lo + step - 1) / step * step; t <= hi; t += step) {
                double x = time_x(axis, g->origin_ns + t);

                fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>"
                        "<text x=\"%.2f\" y=\"%.2f\">%.*f</text>\n",
                        x, PLOT_Y + PLOT_H, x, PLOT_Y + PLOT_H + 5, x, PLOT_Y + PLOT_H + 18, decimals, (double) t / 1e9);
        }
        fputs("</g>\n", f);
        fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">time (s)</text>\n", PLOT_X + PLOT_W / 2,
                PLOT_Y + PLOT_H + 36);
}

static void format_percent(double fraction, char *buf, size_t size) {
        snprintf(buf, size, fraction >= 0.1 ? "%.0f%%" : "%.1f%%", fraction * 100.0);
}

static void write_scale(const struct dp_heatmap_grid *g, FILE *f) {
        char hottest[16];

        fputs("<defs><linearGradient id=\"scale-gradient\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n", f);
        for (int i = 0; i <= 4; i++) {
                char color[8];

                color_hex(dp_heatmap_color(i / 4.0), color);
                fprintf(f, "<stop offset=\"%.2f\" stop-color=\"%s\"/>\n", i / 4.0, color);
        }
        fputs("</linearGradient></defs>\n", f);
        fprintf(f, "<g id=\"scale\" font-size=\"11\">\n"
                "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">access rate</text>\n"
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"url(#scale-gradient)\" "
                "stroke=\"#000\"/>\n",
                SCALE_X + SCALE_W / 2, PLOT_Y - 8, SCALE_X, PLOT_Y, SCALE_W, PLOT_H);
        for (int i = 0; i <= 4; i++)
                fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%d%%</text>\n", SCALE_X + SCALE_W + 4,
                        PLOT_Y + PLOT_H - i * PLOT_H / 4 + 4, i * 25);
        fputs("</g>\n", f);
        format_percent(g->max_value, hottest, sizeof(hottest));
        fprintf(f, "<text x=\"%.2f\" y=\"%d\" font-size=\"11\" fill=\"#444444\">colour: share of sampling intervals "
                "with an access (the hottest cell: %s); grey: no region%s</text>\n",
                PLOT_X, DP_HEATMAP_SVG_HEIGHT - 8, hottest,
                g->nr_segments > 1 ? "; dashed: a collapsed gap between address ranges" : "");
}

int dp_heatmap_write_svg(const struct dp_heatmap_grid *g, const char *title, FILE *f) {
        struct time_axis axis;
        int r;

        if (!g || !f || g->nr_rows == 0 || g->nr_columns == 0)
                return -EINVAL;
        axis = (struct time_axis) { g->columns[0].start_ns, g->columns[g->nr_columns - 1].end_ns };

        fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                "font-family=\"sans-serif\" font-size=\"12\">\n<title>",
                DP_HEATMAP_SVG_WIDTH, DP_HEATMAP_SVG_HEIGHT, DP_HEATMAP_SVG_WIDTH, DP_HEATMAP_SVG_HEIGHT);
        write_escaped(f, title);
        fprintf(f, "</title>\n<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
                "<text x=\"%.2f\" y=\"30\" font-size=\"15\" font-weight=\"bold\">", PLOT_X);
        write_escaped(f, title);
        fprintf(f, "</text>\n<rect id=\"plot\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#d9d9d9\"/>\n",
                PLOT_X, PLOT_Y, PLOT_W, PLOT_H);
        write_cells(g, &axis, f);
        r = write_address_axis(g, f);
        if (r < 0)
                return r;
        write_time_axis(g, &axis, f);
        write_scale(g, f);
        fputs("</svg>\n", f);
        return ferror(f) ? -EIO : 0;
}
