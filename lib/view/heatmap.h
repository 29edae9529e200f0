/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Access heatmaps of one target: access intensity over address (rows) and
 * time (columns).
 *
 * A heatmap collects columns, each the target's regions at one time with an
 * intensity per region (nr_accesses / max_nr_accesses, in [0, 1]).  A grid
 * resamples chosen columns onto address rows: a cell is the average
 * intensity of the regions covering its row, weighted by their overlap with
 * it.  By default the rows cover only the union of the regions' ranges, the
 * gaps between them (a process's big unmapped holes) collapsed; a range
 * given instead is shown linearly, holes and all.
 *
 * Renderers write a grid to a FILE*: for a terminal (Unicode half blocks in
 * 256 or true colour, each character cell two rows; or ASCII shades, one row
 * a line) and as a standalone SVG document.  Rows are drawn with the highest
 * addresses on top.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "range.h"

struct dp_heatmap_region {
        uint64_t start;
        uint64_t end;                   /* exclusive */
        double value;                   /* intensity, [0, 1] */
};

struct dp_heatmap;

/* Keeps at most @max_columns columns (>= 1), dropping the oldest. */
int dp_heatmap_new(size_t max_columns, struct dp_heatmap **ret);
struct dp_heatmap *dp_heatmap_free(struct dp_heatmap *h);

static inline void dp_heatmap_freep(struct dp_heatmap **h) {
        dp_heatmap_free(*h);
}
#define _cleanup_heatmap_ __attribute__((cleanup(dp_heatmap_freep)))

/*
 * Appends the column covering [@start_ns, @end_ns] with @regions (copied, in
 * any order).  -EINVAL for start_ns > end_ns, an end before the previous
 * column's end, an empty or inverted region, overlapping regions, or a value
 * outside [0, 1]; -ENOMEM.  The first column's start is the time origin of
 * the axis labels.
 */
int dp_heatmap_add_column(struct dp_heatmap *h, uint64_t start_ns, uint64_t end_ns,
                          const struct dp_heatmap_region *regions, size_t n);
size_t dp_heatmap_nr_columns(const struct dp_heatmap *h);

struct dp_heatmap_layout {
        size_t nr_rows;                 /* >= 1; fewer when fewer bytes are shown */
        size_t last_columns;            /* only the newest N columns; 0: all */
        struct dp_range range;          /* empty: the union of the regions, gaps collapsed */
};

/* A cell no region covers. */
#define DP_HEATMAP_NO_DATA (-1.0)

struct dp_heatmap_row {
        uint64_t start;                 /* its lowest address */
        uint64_t end;                   /* one past its highest */
};

struct dp_heatmap_column {
        uint64_t start_ns;
        uint64_t end_ns;
};

struct dp_heatmap_grid {
        size_t nr_rows;
        size_t nr_columns;
        struct dp_heatmap_row *rows;            /* rows[0]: the lowest addresses */
        struct dp_heatmap_column *columns;      /* oldest first */
        double *cells;                          /* [row * nr_columns + column]: intensity or NO_DATA */
        double max_value;                       /* the largest cell, 0 if none has data */
        uint64_t origin_ns;                     /* time 0 of the axis labels */
        /* The address ranges shown, lowest first; a collapsed gap lies
         * between consecutive ones.  @span is the sum of their sizes. */
        struct dp_range *segments;
        size_t nr_segments;
        uint64_t span;
        /* Region boundaries of the newest column, ascending, for ticks. */
        uint64_t *boundaries;
        size_t nr_boundaries;
};

/* Zero-initialise @ret before; dp_heatmap_grid_done() it after.  -ENODATA
 * when there are no columns, or no regions to take the rows from; -EINVAL
 * for nr_rows 0 or an inverted range; -ENOMEM. */
int dp_heatmap_grid_build(const struct dp_heatmap *h, const struct dp_heatmap_layout *layout,
                          struct dp_heatmap_grid *ret);
void dp_heatmap_grid_done(struct dp_heatmap_grid *g);

static inline double dp_heatmap_grid_cell(const struct dp_heatmap_grid *g, size_t row, size_t column) {
        return g->cells[row * g->nr_columns + column];
}

/* Where @addr lies along the rows: 0.0 at the bottom of row 0, nr_rows at the
 * top of the last row; -1 when it is not shown. */
double dp_heatmap_grid_position(const struct dp_heatmap_grid *g, uint64_t addr);

/* The collapsed gap, if any, inside row @row or on its lower edge: the index
 * of the segment that starts above it (>= 1), or 0 for none. */
size_t dp_heatmap_grid_gap_in_row(const struct dp_heatmap_grid *g, size_t row);

/* The colour of an intensity in [0, 1] (clamped), dark to bright.  The
 * scale is absolute, so that a colour means the same access rate in every
 * picture and every frame. */
struct dp_rgb {
        uint8_t r, g, b;
};
struct dp_rgb dp_heatmap_color(double value);

/* ---- Terminal ---- */

enum dp_heatmap_colors {
        DP_HEATMAP_ASCII,               /* shades " .:-=+*#%@", one row a line */
        DP_HEATMAP_256,                 /* xterm 256 colours, half blocks */
        DP_HEATMAP_TRUECOLOR,           /* 24-bit colour, half blocks */
};

/* The shades: ' ' no data, '.' zero, ... '@' 1.0. */
#define DP_HEATMAP_SHADES " .:-=+*#%@"
/* Characters left of the plot (address labels and the axis). */
#define DP_HEATMAP_TERMINAL_MARGIN 16
/* Lines besides the plot: title, time axis, time labels, legend. */
#define DP_HEATMAP_TERMINAL_EXTRA_LINES 4

/* The grid size (columns, rows) whose picture is @width characters wide and
 * @plot_lines lines high, plus the extra lines. */
void dp_heatmap_terminal_grid_size(unsigned width, unsigned plot_lines, enum dp_heatmap_colors colors,
                                   size_t *ret_columns, size_t *ret_rows);

/* The title line, the plot with address labels ('≈', or '~' in ASCII, marks
 * a collapsed gap), each column @column_width characters wide, the time axis
 * in seconds, and the legend.  -EINVAL for an empty grid or a zero width,
 * -ENOMEM, -EIO on a write error. */
int dp_heatmap_write_terminal(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors,
                              unsigned column_width, const char *title, FILE *f);

/* How wide columns can be drawn when @nr_columns take up @available characters (1 to 4). */
unsigned dp_heatmap_terminal_column_width(size_t available, size_t nr_columns);

/* ---- SVG ---- */

#define DP_HEATMAP_SVG_WIDTH 960
#define DP_HEATMAP_SVG_HEIGHT 600
/* Rows that fit the SVG's plot area (3 px each). */
#define DP_HEATMAP_SVG_ROWS 160

/*
 * A standalone SVG document: @title (escaped), the cells (each row a <g>
 * with data-start/data-end in hex and a tooltip), collapsed gaps as dashed
 * lines, the address axis in hex labelled at the segment boundaries, ticks
 * at the newest column's region boundaries, the time axis in seconds and
 * the colour scale.  -EINVAL for an empty grid, -ENOMEM, -EIO on a write
 * error.
 */
int dp_heatmap_write_svg(const struct dp_heatmap_grid *g, const char *title, FILE *f);
