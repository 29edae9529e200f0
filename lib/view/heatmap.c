/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Heatmap columns, and their resampling onto address rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"
#include "macro.h"

struct column {
        uint64_t start_ns;
        uint64_t end_ns;
        struct dp_heatmap_region *regions;      /* sorted by start, disjoint */
        size_t nr_regions;
};

struct dp_heatmap {
        struct column *columns;         /* oldest first */
        size_t nr_columns;
        size_t max_columns;
        uint64_t origin_ns;
};

int dp_heatmap_new(size_t max_columns, struct dp_heatmap **ret) {
        struct dp_heatmap *h;

        if (max_columns == 0 || !ret)
                return -EINVAL;
        h = calloc(1, sizeof(*h));
        if (!h)
                return -ENOMEM;
        h->columns = calloc(max_columns, sizeof(*h->columns));
        if (!h->columns) {
                free(h);
                return -ENOMEM;
        }
        h->max_columns = max_columns;
        *ret = h;
        return 0;
}

struct dp_heatmap *dp_heatmap_free(struct dp_heatmap *h) {
        if (!h)
                return NULL;
        for (size_t i = 0; i < h->nr_columns; i++)
                free(h->columns[i].regions);
        free(h->columns);
        free(h);
        return NULL;
}

static int region_cmp(const void *a, const void *b) {
        const struct dp_heatmap_region *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

int dp_heatmap_add_column(struct dp_heatmap *h, uint64_t start_ns, uint64_t end_ns,
                          const struct dp_heatmap_region *regions, size_t n) {
        _cleanup_free_ struct dp_heatmap_region *copy = NULL;

        if (!h || (n > 0 && !regions) || start_ns > end_ns ||
            (h->nr_columns > 0 && end_ns < h->columns[h->nr_columns - 1].end_ns))
                return -EINVAL;
        for (size_t i = 0; i < n; i++)
                /* The negated test also refuses NaN. */
                if (regions[i].start >= regions[i].end || !(regions[i].value >= 0.0 && regions[i].value <= 1.0))
                        return -EINVAL;
        if (n > 0) {
                copy = malloc(n * sizeof(*copy));
                if (!copy)
                        return -ENOMEM;
                memcpy(copy, regions, n * sizeof(*copy));
                qsort(copy, n, sizeof(*copy), region_cmp);
                for (size_t i = 1; i < n; i++)
                        if (copy[i - 1].end > copy[i].start)
                                return -EINVAL;
        }

        if (h->nr_columns == 0)
                h->origin_ns = start_ns;
        if (h->nr_columns == h->max_columns) {
                free(h->columns[0].regions);
                memmove(h->columns, h->columns + 1, (h->nr_columns - 1) * sizeof(*h->columns));
                h->nr_columns--;
        }
        h->columns[h->nr_columns++] = (struct column) {
                .start_ns = start_ns,
                .end_ns = end_ns,
                .regions = DP_TAKE_PTR(copy),
                .nr_regions = n,
        };
        return 0;
}

size_t dp_heatmap_nr_columns(const struct dp_heatmap *h) {
        return h ? h->nr_columns : 0;
}

void dp_heatmap_grid_done(struct dp_heatmap_grid *g) {
        if (!g)
                return;
        free(g->rows);
        free(g->columns);
        free(g->cells);
        free(g->segments);
        free(g->boundaries);
        *g = (struct dp_heatmap_grid) {0};
}

/* The union of the columns' regions, or the one range asked for. */
static int find_segments(const struct column *columns, size_t nr_columns, const struct dp_range *range,
                         struct dp_heatmap_grid *g) {
        size_t n = 0;

        if (range->start != range->end) {
                g->segments = malloc(sizeof(*g->segments));
                if (!g->segments)
                        return -ENOMEM;
                g->segments[0] = *range;
                g->nr_segments = 1;
                return 0;
        }
        for (size_t c = 0; c < nr_columns; c++)
                n += columns[c].nr_regions;
        if (n == 0)
                return -ENODATA;
        g->segments = malloc(n * sizeof(*g->segments));
        if (!g->segments)
                return -ENOMEM;
        n = 0;
        for (size_t c = 0; c < nr_columns; c++)
                for (size_t i = 0; i < columns[c].nr_regions; i++)
                        g->segments[n++] = (struct dp_range) { columns[c].regions[i].start, columns[c].regions[i].end };
        return dp_ranges_coalesce(g->segments, n, &g->nr_segments);
}

/* A stretch of one row inside one segment: rows straddling a collapsed gap
 * have one per segment they touch.  In address order. */
struct piece {
        size_t row;
        uint64_t start, end;
};

/* Cuts the segments into rows of equal share of the span. */
static int cut_rows(struct dp_heatmap_grid *g, struct piece **ret_pieces, size_t *ret_n) {
        _cleanup_free_ struct piece *pieces = NULL;
        size_t n = 0, seg = 0;
        uint64_t seg_offset = 0;        /* span below segment seg */

        /* Each row boundary inside a segment adds one piece at most. */
        pieces = malloc((g->nr_rows + g->nr_segments) * sizeof(*pieces));
        if (!pieces)
                return -ENOMEM;
        for (size_t r = 0; r < g->nr_rows; r++) {
                uint64_t lo = (uint64_t) ((unsigned __int128) g->span * r / g->nr_rows);
                uint64_t hi = (uint64_t) ((unsigned __int128) g->span * (r + 1) / g->nr_rows);

                g->rows[r].start = UINT64_MAX;
                while (lo < hi) {
                        uint64_t size = dp_range_size(&g->segments[seg]);
                        uint64_t take = DP_MIN(hi, seg_offset + size) - lo;
                        uint64_t start = g->segments[seg].start + (lo - seg_offset);

                        pieces[n++] = (struct piece) { r, start, start + take };
                        if (g->rows[r].start == UINT64_MAX)
                                g->rows[r].start = start;
                        g->rows[r].end = start + take;
                        lo += take;
                        if (lo == seg_offset + size && seg + 1 < g->nr_segments) {
                                seg_offset += size;
                                seg++;
                        }
                }
        }
        *ret_pieces = DP_TAKE_PTR(pieces);
        *ret_n = n;
        return 0;
}

/* One column's cells: a sweep over the pieces and the regions, both in
 * address order, summing overlap-weighted intensities per row. */
static void fill_column(struct dp_heatmap_grid *g, size_t c, const struct column *col, const struct piece *pieces,
                        size_t nr_pieces, double *weight, double *sum) {
        size_t i = 0, j = 0;

        memset(weight, 0, g->nr_rows * sizeof(*weight));
        memset(sum, 0, g->nr_rows * sizeof(*sum));
        while (i < nr_pieces && j < col->nr_regions) {
                const struct dp_heatmap_region *reg = &col->regions[j];
                uint64_t lo = DP_MAX(pieces[i].start, reg->start), hi = DP_MIN(pieces[i].end, reg->end);

                if (lo < hi) {
                        weight[pieces[i].row] += (double) (hi - lo);
                        sum[pieces[i].row] += (double) (hi - lo) * reg->value;
                }
                if (pieces[i].end <= reg->end)
                        i++;
                else
                        j++;
        }
        for (size_t r = 0; r < g->nr_rows; r++) {
                double v = weight[r] > 0 ? sum[r] / weight[r] : DP_HEATMAP_NO_DATA;

                g->cells[r * g->nr_columns + c] = v;
                g->max_value = DP_MAX(g->max_value, v);
        }
}

static int find_boundaries(const struct column *col, struct dp_heatmap_grid *g) {
        size_t n = 0;

        g->boundaries = malloc((2 * col->nr_regions + 1) * sizeof(*g->boundaries));
        if (!g->boundaries)
                return -ENOMEM;
        for (size_t i = 0; i < col->nr_regions; i++) {
                uint64_t b[2] = { col->regions[i].start, col->regions[i].end };

                for (size_t k = 0; k < 2; k++)
                        if ((n == 0 || g->boundaries[n - 1] != b[k]) && dp_heatmap_grid_position(g, b[k]) >= 0)
                                g->boundaries[n++] = b[k];
        }
        g->nr_boundaries = n;
        return 0;
}

int dp_heatmap_grid_build(const struct dp_heatmap *h, const struct dp_heatmap_layout *layout,
                          struct dp_heatmap_grid *ret) {
        _cleanup_free_ struct piece *pieces = NULL;
        _cleanup_free_ double *weight = NULL, *sum = NULL;
        struct dp_heatmap_grid g = {0};
        const struct column *columns;
        size_t nr_pieces;
        int r;

        if (!h || !layout || !ret || layout->nr_rows == 0 || layout->range.start > layout->range.end)
                return -EINVAL;
        if (h->nr_columns == 0)
                return -ENODATA;
        g.nr_columns = layout->last_columns ? DP_MIN(layout->last_columns, h->nr_columns) : h->nr_columns;
        columns = h->columns + (h->nr_columns - g.nr_columns);
        g.origin_ns = h->origin_ns;

        r = find_segments(columns, g.nr_columns, &layout->range, &g);
        if (r < 0)
                goto fail;
        g.span = dp_ranges_total_size(g.segments, g.nr_segments);
        g.nr_rows = (size_t) DP_MIN((uint64_t) layout->nr_rows, g.span);

        g.rows = calloc(g.nr_rows, sizeof(*g.rows));
        g.columns = calloc(g.nr_columns, sizeof(*g.columns));
        g.cells = calloc(g.nr_rows * g.nr_columns, sizeof(*g.cells));
        weight = calloc(g.nr_rows, sizeof(*weight));
        sum = calloc(g.nr_rows, sizeof(*sum));
        r = -ENOMEM;
        if (!g.rows || !g.columns || !g.cells || !weight || !sum)
                goto fail;
        r = cut_rows(&g, &pieces, &nr_pieces);
        if (r < 0)
                goto fail;
        for (size_t c = 0; c < g.nr_columns; c++) {
                g.columns[c] = (struct dp_heatmap_column) { columns[c].start_ns, columns[c].end_ns };
                fill_column(&g, c, &columns[c], pieces, nr_pieces, weight, sum);
        }
        r = find_boundaries(&columns[g.nr_columns - 1], &g);
        if (r < 0)
                goto fail;
        *ret = g;
        return 0;
fail:
        dp_heatmap_grid_done(&g);
        return r;
}

double dp_heatmap_grid_position(const struct dp_heatmap_grid *g, uint64_t addr) {
        uint64_t below = 0;

        for (size_t k = 0; k < g->nr_segments; k++) {
                const struct dp_range *s = &g->segments[k];

                /* The top of the last segment is shown too: it closes the axis. */
                if (dp_range_contains(s, addr) || (k + 1 == g->nr_segments && addr == s->end))
                        return (double) (below + (addr - s->start)) * (double) g->nr_rows / (double) g->span;
                below += dp_range_size(s);
        }
        return -1.0;
}

size_t dp_heatmap_grid_gap_in_row(const struct dp_heatmap_grid *g, size_t row) {
        uint64_t below = 0;

        for (size_t k = 1; k < g->nr_segments; k++) {
                size_t at;

                below += dp_range_size(&g->segments[k - 1]);
                /* The row whose share of the span holds the gap's offset. */
                at = (size_t) ((unsigned __int128) below * g->nr_rows / g->span);
                if (at == row)
                        return k;
                if (at > row)
                        break;
        }
        return 0;
}

struct dp_rgb dp_heatmap_color(double t) {
        /* Black through purple, red and orange to pale yellow: brightness
         * rises all the way, so the scale also reads in grey. */
        static const struct dp_rgb stops[] = {
                { 0, 0, 4 }, { 87, 16, 110 }, { 188, 55, 84 }, { 249, 142, 9 }, { 252, 255, 164 },
        };
        const size_t last = DP_ARRAY_SIZE(stops) - 1;
        double x, f;
        size_t i;

        if (!(t > 0.0))
                t = 0.0;
        if (t > 1.0)
                t = 1.0;
        x = t * (double) last;
        i = DP_MIN((size_t) x, last - 1);
        f = x - (double) i;
        /* Both ends are in 0..255, so is every value between: round half up. */
        return (struct dp_rgb) {
                (uint8_t) (stops[i].r + f * (stops[i + 1].r - stops[i].r) + 0.5),
                (uint8_t) (stops[i].g + f * (stops[i + 1].g - stops[i].g) + 0.5),
                (uint8_t) (stops[i].b + f * (stops[i + 1].b - stops[i].b) + 0.5),
        };
}
