/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A heatmap grid drawn with characters: half blocks in colour, or ASCII shades. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"
#include "macro.h"

#define LABEL_WIDTH (DP_HEATMAP_TERMINAL_MARGIN - 2)
/* Address labels at least this many lines apart, unless a gap needs one. */
#define LABEL_SPACING 4
#define TIME_LABEL_SPACING 10
#define LEGEND_STEPS 10

/* One line of the plot: its upper and lower row (-1: none). */
struct line {
        long top, bottom;
};

static size_t nr_lines(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors) {
        return colors == DP_HEATMAP_ASCII ? g->nr_rows : (g->nr_rows + 1) / 2;
}

static struct line line_rows(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors, size_t l) {
        long top = (long) g->nr_rows - 1 - (long) (colors == DP_HEATMAP_ASCII ? l : 2 * l);

        return (struct line) { top, colors == DP_HEATMAP_ASCII ? -1 : top - 1 };
}

void dp_heatmap_terminal_grid_size(unsigned width, unsigned plot_lines, enum dp_heatmap_colors colors,
                                   size_t *ret_columns, size_t *ret_rows) {
        /* One column spare: a line that fills the terminal's width exactly
         * leaves the cursor in the wrap state, which in-place redraws trip on. */
        *ret_columns = width > DP_HEATMAP_TERMINAL_MARGIN + 2 ? width - DP_HEATMAP_TERMINAL_MARGIN - 1 : 1;
        *ret_rows = (size_t) DP_MAX(plot_lines, 1u) * (colors == DP_HEATMAP_ASCII ? 1 : 2);
}

unsigned dp_heatmap_terminal_column_width(size_t available, size_t nr_columns) {
        return nr_columns == 0 ? 1 : (unsigned) DP_MIN(DP_MAX(available / nr_columns, (size_t) 1), (size_t) 4);
}

static int color_256(struct dp_rgb c) {
        static const int level[6] = { 0, 95, 135, 175, 215, 255 };
        int idx[3], v[3] = { c.r, c.g, c.b }, cube, grey, d_cube = 0, d_grey = 0, g;

        for (int i = 0; i < 3; i++) {
                idx[i] = v[i] < 48 ? 0 : v[i] < 115 ? 1 : (v[i] - 35) / 40;
                d_cube += (v[i] - level[idx[i]]) * (v[i] - level[idx[i]]);
        }
        cube = 16 + 36 * idx[0] + 6 * idx[1] + idx[2];
        /* The grey ramp 232..255 is 8, 18, ... 238: nearer for dark, unsaturated colours. */
        grey = DP_MIN(DP_MAX(((v[0] + v[1] + v[2]) / 3 - 3) / 10, 0), 23);
        g = 8 + 10 * grey;
        for (int i = 0; i < 3; i++)
                d_grey += (v[i] - g) * (v[i] - g);
        return d_grey < d_cube ? 232 + grey : cube;
}

/* Appends the SGR parameters of @c as foreground (38) or background (48). */
static void put_color(FILE *f, enum dp_heatmap_colors colors, int layer, struct dp_rgb c) {
        if (colors == DP_HEATMAP_TRUECOLOR)
                fprintf(f, "\033[%d;2;%u;%u;%um", layer, c.r, c.g, c.b);
        else
                fprintf(f, "\033[%d;5;%dm", layer, color_256(c));
}

/* What the cursor's colours are, so that runs of equal cells cost nothing. */
struct pen {
        int fg, bg;                     /* packed RGB, or -1 for the terminal's default */
};

static int pack(struct dp_rgb c) {
        return c.r << 16 | c.g << 8 | c.b;
}

static void set_pen(FILE *f, enum dp_heatmap_colors colors, struct pen *pen, const struct dp_rgb *fg,
                    const struct dp_rgb *bg) {
        if (fg && pen->fg != pack(*fg)) {
                put_color(f, colors, 38, *fg);
                pen->fg = pack(*fg);
        }
        if (!bg && pen->bg != -1) {
                fputs("\033[49m", f);
                pen->bg = -1;
        } else if (bg && pen->bg != pack(*bg)) {
                put_color(f, colors, 48, *bg);
                pen->bg = pack(*bg);
        }
}

static double cell_or_none(const struct dp_heatmap_grid *g, long row, size_t c) {
        return row < 0 ? DP_HEATMAP_NO_DATA : dp_heatmap_grid_cell(g, (size_t) row, c);
}

/* Each column @width characters wide. */
static void write_cells(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors, unsigned width,
                        struct line l, FILE *f) {
        struct pen pen = { -1, -1 };

        for (size_t c = 0; c < g->nr_columns; c++) {
                double up = cell_or_none(g, l.top, c), down = cell_or_none(g, l.bottom, c);
                struct dp_rgb cu = dp_heatmap_color(up), cd = dp_heatmap_color(down);
                char shade[2] = "";
                const char *glyph;

                if (colors == DP_HEATMAP_ASCII) {
                        shade[0] = DP_HEATMAP_SHADES[up < 0 ? 0 : 1 + (int) (DP_MIN(up, 1.0) * 8.999)];
                        glyph = shade;
                } else if (up >= 0) {
                        set_pen(f, colors, &pen, &cu, down >= 0 ? &cd : NULL);
                        glyph = "▀";
                } else if (down >= 0) {
                        set_pen(f, colors, &pen, &cd, NULL);
                        glyph = "▄";
                } else {
                        set_pen(f, colors, &pen, NULL, NULL);
                        glyph = " ";
                }
                for (unsigned i = 0; i < width; i++)
                        fputs(glyph, f);
        }
        if (colors != DP_HEATMAP_ASCII)
                fputs("\033[0m", f);
}

/* The first collapsed gap in the line's rows (a segment index), or 0. */
static size_t line_gap(const struct dp_heatmap_grid *g, struct line l) {
        size_t k = l.top >= 0 ? dp_heatmap_grid_gap_in_row(g, (size_t) l.top) : 0;

        if (!k && l.bottom >= 0)
                k = dp_heatmap_grid_gap_in_row(g, (size_t) l.bottom);
        return k;
}

/* Which lines get an address label: every gap, the first and the last,
 * then as many as fit LABEL_SPACING apart. */
static void choose_labels(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors, size_t lines,
                          bool *labelled) {
        for (size_t l = 0; l < lines; l++)
                labelled[l] = l == 0 || l + 1 == lines || line_gap(g, line_rows(g, colors, l)) > 0;
        for (size_t l = 0; l < lines; l++) {
                bool near = false;

                for (size_t m = l >= LABEL_SPACING - 1 ? l - (LABEL_SPACING - 1) : 0;
                     m < DP_MIN(lines, l + LABEL_SPACING) && !near; m++)
                        near = labelled[m];
                if (!near)
                        labelled[l] = true;
        }
}

static void write_label(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors, struct line l,
                        bool labelled, FILE *f) {
        bool ascii = colors == DP_HEATMAP_ASCII;
        size_t gap = line_gap(g, l);
        long lowest = l.bottom >= 0 ? l.bottom : l.top;
        char text[32] = "";

        /* Rows need not start on a page; their labels do, to stay readable. */
        if (labelled)
                snprintf(text, sizeof(text), "%#" PRIx64,
                         gap ? g->segments[gap].start : g->rows[lowest].start & DP_PAGE_MASK);
        fprintf(f, "%*s %s", LABEL_WIDTH, text,
                gap ? (ascii ? "~" : "≈") : ascii ? "|" : labelled ? "┤" : "│");
}

/* Enough decimals to tell neighbouring columns apart (live polls come a
 * little early or late: a 0.1 s interval is still 0.1 s). */
static int time_decimals(const struct dp_heatmap_grid *g) {
        double avg = (double) (g->columns[g->nr_columns - 1].end_ns - g->columns[0].start_ns) / 1e9 /
                     (double) g->nr_columns * 1.05;

        return avg >= 1.0 ? 0 : avg >= 0.1 ? 1 : avg >= 0.01 ? 2 : 3;
}

/* The axis line with a tick under each label, then the labels: the time at
 * which the column above ends.  @labels has room for @chars + 1. */
static void write_time_axis(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors, unsigned width,
                            size_t chars, char *labels, FILE *f) {
        bool ascii = colors == DP_HEATMAP_ASCII;
        int decimals = time_decimals(g);
        size_t free_from = 0;

        memset(labels, ' ', chars);
        labels[chars] = '\0';
        for (size_t c = 0; c < g->nr_columns; c++) {
                size_t at = c * width, len;
                char text[32];

                if (at < free_from)
                        continue;
                snprintf(text, sizeof(text), "%.*fs", decimals, (double) (g->columns[c].end_ns - g->origin_ns) / 1e9);
                len = strlen(text);
                if (at + len > chars)
                        break;
                memcpy(labels + at, text, len);
                free_from = at + DP_MAX((size_t) TIME_LABEL_SPACING, len + 2);
        }
        fprintf(f, "%*s %s", LABEL_WIDTH, "", ascii ? "+" : "└");
        for (size_t c = 0; c < chars; c++) {
                bool tick = labels[c] != ' ' && (c == 0 || labels[c - 1] == ' ');

                fputs(tick ? (ascii ? "+" : "┬") : (ascii ? "-" : "─"), f);
        }
        fprintf(f, "\n%*s  %s\n", LABEL_WIDTH, "", labels);
}

static void format_percent(double fraction, char *buf, size_t size) {
        snprintf(buf, size, fraction >= 0.1 ? "%.0f%%" : "%.1f%%", fraction * 100.0);
}

static void write_legend(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors, FILE *f) {
        char hottest[16];

        format_percent(g->max_value, hottest, sizeof(hottest));
        fprintf(f, "%*s  ", LABEL_WIDTH, "");
        if (colors == DP_HEATMAP_ASCII)
                fputs(DP_HEATMAP_SHADES + 1, f);
        else {
                struct pen pen = { -1, -1 };

                for (int i = 0; i < LEGEND_STEPS; i++) {
                        struct dp_rgb c = dp_heatmap_color((double) i / (LEGEND_STEPS - 1));

                        set_pen(f, colors, &pen, &c, NULL);
                        fputs("█", f);
                }
                fputs("\033[0m", f);
        }
        fprintf(f, " 0%% .. 100%% of sampling intervals with an access (hottest %s)%s\n", hottest,
                g->nr_segments > 1 ? (colors == DP_HEATMAP_ASCII ? "; ~ collapsed gap" : "; ≈ collapsed gap") : "");
}

int dp_heatmap_write_terminal(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors,
                              unsigned column_width, const char *title, FILE *f) {
        _cleanup_free_ bool *labelled = NULL;
        _cleanup_free_ char *time_labels = NULL;
        size_t lines;

        if (!g || !f || g->nr_rows == 0 || g->nr_columns == 0 || column_width == 0)
                return -EINVAL;
        lines = nr_lines(g, colors);
        labelled = calloc(lines, sizeof(*labelled));
        time_labels = malloc(g->nr_columns * column_width + 1);
        if (!labelled || !time_labels)
                return -ENOMEM;
        choose_labels(g, colors, lines, labelled);

        if (title)
                fprintf(f, "%s\n", title);
        for (size_t l = 0; l < lines; l++) {
                struct line rows = line_rows(g, colors, l);

                write_label(g, colors, rows, labelled[l], f);
                write_cells(g, colors, column_width, rows, f);
                fputc('\n', f);
        }
        write_time_axis(g, colors, column_width, g->nr_columns * column_width, time_labels, f);
        write_legend(g, colors, f);
        return ferror(f) ? -EIO : 0;
}
