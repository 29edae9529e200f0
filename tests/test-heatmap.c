/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Heatmap grids from known columns: rows, cells, gaps, and both renderers'
 * exact output. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"
#include "macro.h"

#include "check-main.h"

#define SEC 1000000000ull

/*
 * Two address ranges with a gap between them, 64 KiB each, and two columns:
 *   [0x10000, 0x20000)   0.5 | [0x10000, 0x18000) 1.0
 *   [0x100000, 0x102000) 1.0 | -
 *   [0x102000, 0x110000) 0.0 | -
 */
static struct dp_heatmap *two_ranges(void) {
        static const struct dp_heatmap_region first[] = {
                { 0x102000, 0x110000, 0.0 }, { 0x10000, 0x20000, 0.5 }, { 0x100000, 0x102000, 1.0 },
        };
        static const struct dp_heatmap_region second[] = { { 0x10000, 0x18000, 1.0 } };
        struct dp_heatmap *h;

        ck_assert_int_eq(dp_heatmap_new(16, &h), 0);
        ck_assert_int_eq(dp_heatmap_add_column(h, 1 * SEC, 1 * SEC + SEC / 5, first, DP_ARRAY_SIZE(first)), 0);
        ck_assert_int_eq(dp_heatmap_add_column(h, 1 * SEC + SEC / 5, 1 * SEC + 2 * SEC / 5, second,
                                               DP_ARRAY_SIZE(second)), 0);
        return h;
}

static void build(const struct dp_heatmap *h, size_t rows, struct dp_heatmap_grid *g) {
        struct dp_heatmap_layout layout = { .nr_rows = rows };

        *g = (struct dp_heatmap_grid) {0};
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, g), 0);
}

START_TEST(test_grid_collapses_gaps) {
        _cleanup_heatmap_ struct dp_heatmap *h = two_ranges();
        struct dp_heatmap_grid g;

        build(h, 4, &g);
        ck_assert_uint_eq(g.nr_rows, 4);
        ck_assert_uint_eq(g.nr_columns, 2);
        ck_assert_uint_eq(g.nr_segments, 2);
        ck_assert_uint_eq(g.span, 0x20000);
        /* 32 KiB a row; the gap between 0x20000 and 0x100000 takes none. */
        ck_assert_uint_eq(g.rows[0].start, 0x10000);
        ck_assert_uint_eq(g.rows[0].end, 0x18000);
        ck_assert_uint_eq(g.rows[1].start, 0x18000);
        ck_assert_uint_eq(g.rows[2].start, 0x100000);
        ck_assert_uint_eq(g.rows[3].end, 0x110000);

        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 0, 0), 0.5);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 1, 0), 0.5);
        /* 8 KiB at 1.0 and 24 KiB at 0.0. */
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 2, 0), 0.25);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 3, 0), 0.0);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 0, 1), 1.0);
        for (size_t r = 1; r < 4; r++)
                ck_assert_double_eq(dp_heatmap_grid_cell(&g, r, 1), DP_HEATMAP_NO_DATA);
        ck_assert_double_eq(g.max_value, 1.0);

        ck_assert_uint_eq(dp_heatmap_grid_gap_in_row(&g, 0), 0);
        ck_assert_uint_eq(dp_heatmap_grid_gap_in_row(&g, 1), 0);
        ck_assert_uint_eq(dp_heatmap_grid_gap_in_row(&g, 2), 1);
        ck_assert_uint_eq(dp_heatmap_grid_gap_in_row(&g, 3), 0);
        ck_assert_double_eq(dp_heatmap_grid_position(&g, 0x10000), 0.0);
        ck_assert_double_eq(dp_heatmap_grid_position(&g, 0x1c000), 1.5);
        ck_assert_double_eq(dp_heatmap_grid_position(&g, 0x100000), 2.0);
        ck_assert_double_eq(dp_heatmap_grid_position(&g, 0x110000), 4.0);
        ck_assert_double_eq(dp_heatmap_grid_position(&g, 0x50000), -1.0);

        /* The newest column's region boundaries. */
        ck_assert_uint_eq(g.nr_boundaries, 2);
        ck_assert_uint_eq(g.boundaries[0], 0x10000);
        ck_assert_uint_eq(g.boundaries[1], 0x18000);
        ck_assert_uint_eq(g.origin_ns, 1 * SEC);
        ck_assert_uint_eq(g.columns[1].end_ns, 1 * SEC + 2 * SEC / 5);
        dp_heatmap_grid_done(&g);
}
END_TEST

START_TEST(test_grid_row_straddles_gap) {
        _cleanup_heatmap_ struct dp_heatmap *h = two_ranges();
        struct dp_heatmap_grid g;
        double expect;

        /* 3 rows: the middle one is the last third of the low range and the
         * first sixth of the high one, 0x5556 + 0x5555 bytes. */
        build(h, 3, &g);
        ck_assert_uint_eq(g.rows[1].start, 0x1aaaa);
        ck_assert_uint_eq(g.rows[1].end, 0x105555);
        ck_assert_uint_eq(dp_heatmap_grid_gap_in_row(&g, 1), 1);
        /* 0x5556 at 0.5, 0x2000 at 1.0, 0x3555 at 0.0. */
        expect = (0x5556 * 0.5 + 0x2000 * 1.0) / (0x5556 + 0x5555);
        ck_assert_double_eq_tol(dp_heatmap_grid_cell(&g, 1, 0), expect, 1e-12);
        /* The newer column covers only part of the lowest row: the average
         * is over that part; the row above it has no data. */
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 0, 1), 1.0);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 1, 1), DP_HEATMAP_NO_DATA);
        dp_heatmap_grid_done(&g);
}
END_TEST

START_TEST(test_grid_range_shows_holes) {
        static const struct dp_heatmap_region regions[] = { { 0x10000, 0x20000, 0.75 } };
        _cleanup_heatmap_ struct dp_heatmap *h = NULL;
        struct dp_heatmap_layout layout = { .nr_rows = 4, .range = { 0x0, 0x40000 } };
        struct dp_heatmap_grid g = {0};

        ck_assert_int_eq(dp_heatmap_new(4, &h), 0);
        ck_assert_int_eq(dp_heatmap_add_column(h, 0, SEC, regions, 1), 0);
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), 0);
        ck_assert_uint_eq(g.nr_segments, 1);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 0, 0), DP_HEATMAP_NO_DATA);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 1, 0), 0.75);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 2, 0), DP_HEATMAP_NO_DATA);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 3, 0), DP_HEATMAP_NO_DATA);
        for (size_t r = 0; r < 4; r++)
                ck_assert_uint_eq(dp_heatmap_grid_gap_in_row(&g, r), 0);
        dp_heatmap_grid_done(&g);

        /* More rows than bytes: one byte a row. */
        layout = (struct dp_heatmap_layout) { .nr_rows = 100, .range = { 0x1000, 0x1010 } };
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), 0);
        ck_assert_uint_eq(g.nr_rows, 16);
        dp_heatmap_grid_done(&g);
}
END_TEST

START_TEST(test_bad_input) {
        const struct dp_heatmap_region overlap[] = { { 0x1000, 0x3000, 0.1 }, { 0x2000, 0x4000, 0.1 } };
        const struct dp_heatmap_region too_hot[] = { { 0x1000, 0x2000, 1.5 } };
        const struct dp_heatmap_region not_a_number[] = { { 0x1000, 0x2000, NAN } };
        const struct dp_heatmap_region empty[] = { { 0x1000, 0x1000, 0.1 } };
        const struct dp_heatmap_region good[] = { { 0x1000, 0x2000, 0.1 } };
        _cleanup_heatmap_ struct dp_heatmap *h = NULL;
        struct dp_heatmap_layout layout = { .nr_rows = 4 };
        struct dp_heatmap_grid g = {0};

        ck_assert_int_eq(dp_heatmap_new(0, &h), -EINVAL);
        ck_assert_int_eq(dp_heatmap_new(4, &h), 0);
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), -ENODATA);
        ck_assert_int_eq(dp_heatmap_add_column(h, 0, SEC, overlap, 2), -EINVAL);
        ck_assert_int_eq(dp_heatmap_add_column(h, 0, SEC, too_hot, 1), -EINVAL);
        ck_assert_int_eq(dp_heatmap_add_column(h, 0, SEC, not_a_number, 1), -EINVAL);
        ck_assert_int_eq(dp_heatmap_add_column(h, 0, SEC, empty, 1), -EINVAL);
        ck_assert_int_eq(dp_heatmap_add_column(h, SEC, 0, good, 1), -EINVAL);
        ck_assert_uint_eq(dp_heatmap_nr_columns(h), 0);

        /* A column without regions is fine, but gives no rows. */
        ck_assert_int_eq(dp_heatmap_add_column(h, 0, SEC, NULL, 0), 0);
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), -ENODATA);
        ck_assert_int_eq(dp_heatmap_add_column(h, SEC, 2 * SEC, good, 1), 0);
        /* Time does not go back. */
        ck_assert_int_eq(dp_heatmap_add_column(h, 0, SEC, good, 1), -EINVAL);
        layout.nr_rows = 0;
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), -EINVAL);
        layout = (struct dp_heatmap_layout) { .nr_rows = 4, .range = { 0x2000, 0x1000 } };
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), -EINVAL);
}
END_TEST

START_TEST(test_columns_kept_and_shown) {
        _cleanup_heatmap_ struct dp_heatmap *h = NULL;
        struct dp_heatmap_layout layout = { .nr_rows = 1 };
        struct dp_heatmap_grid g = {0};

        ck_assert_int_eq(dp_heatmap_new(2, &h), 0);
        for (int i = 0; i < 3; i++) {
                struct dp_heatmap_region r = { 0x1000, 0x2000, i / 4.0 };

                ck_assert_int_eq(dp_heatmap_add_column(h, (uint64_t) i * SEC, (uint64_t) (i + 1) * SEC, &r, 1), 0);
        }
        /* The oldest went; the time origin stays the first column's start. */
        ck_assert_uint_eq(dp_heatmap_nr_columns(h), 2);
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), 0);
        ck_assert_uint_eq(g.nr_columns, 2);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 0, 0), 0.25);
        ck_assert_double_eq(dp_heatmap_grid_cell(&g, 0, 1), 0.5);
        ck_assert_uint_eq(g.origin_ns, 0);
        dp_heatmap_grid_done(&g);

        layout.last_columns = 1;
        ck_assert_int_eq(dp_heatmap_grid_build(h, &layout, &g), 0);
        ck_assert_uint_eq(g.nr_columns, 1);
        ck_assert_uint_eq(g.columns[0].start_ns, 2 * SEC);
        ck_assert_double_eq(g.max_value, 0.5);
        dp_heatmap_grid_done(&g);
}
END_TEST

START_TEST(test_color_scale) {
        struct dp_rgb c;
        int previous = -1;

        c = dp_heatmap_color(0.0);
        ck_assert(c.r == 0 && c.g == 0 && c.b == 4);
        c = dp_heatmap_color(0.5);
        ck_assert(c.r == 188 && c.g == 55 && c.b == 84);
        c = dp_heatmap_color(1.0);
        ck_assert(c.r == 252 && c.g == 255 && c.b == 164);
        c = dp_heatmap_color(7.0);
        ck_assert(c.r == 252 && c.g == 255 && c.b == 164);
        c = dp_heatmap_color(-1.0);
        ck_assert(c.r == 0 && c.g == 0 && c.b == 4);
        /* Brighter all the way up, so hot reads as bright even in grey. */
        for (int i = 0; i <= 100; i++) {
                struct dp_rgb x = dp_heatmap_color(i / 100.0);
                int luma = 299 * x.r + 587 * x.g + 114 * x.b;

                ck_assert_int_gt(luma, previous);
                previous = luma;
        }
}
END_TEST

static char *render_terminal(const struct dp_heatmap_grid *g, enum dp_heatmap_colors colors, unsigned width) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(dp_heatmap_write_terminal(g, colors, width, "title", f), 0);
        fclose(f);
        return text;
}

static void assert_contains(const char *text, const char *needle) {
        if (!strstr(text, needle))
                fprintf(stderr, "--- text without '%s':\n%s---\n", needle, text);
        ck_assert_msg(strstr(text, needle), "'%s' missing", needle);
}

START_TEST(test_terminal_ascii) {
        _cleanup_heatmap_ struct dp_heatmap *h = two_ranges();
        _cleanup_free_ char *text = NULL;
        struct dp_heatmap_grid g;

        build(h, 4, &g);
        text = render_terminal(&g, DP_HEATMAP_ASCII, 1);
        /* One row a line, highest addresses on top; '~' where the gap lies,
         * 0.25 of the largest value is '-', 0.5 '+', all of it '@'. */
        ck_assert_str_eq(text,
                         "title\n"
                         "      0x108000 |. \n"
                         "      0x100000 ~- \n"
                         "               |+ \n"
                         "       0x10000 |+@\n"
                         "               +--\n"
                         "                  \n"
                         "                .:-=+*#%@ 0% .. 100% of sampling intervals with an access "
                         "(hottest 100%); ~ collapsed gap\n");
        free(text);

        /* Columns three characters wide, time axis and all. */
        text = render_terminal(&g, DP_HEATMAP_ASCII, 3);
        assert_contains(text, "\n      0x108000 |...   \n");
        assert_contains(text, "\n       0x10000 |+++@@@\n"
                              "               ++-----\n"
                              "                0.2s  \n");
        ck_assert_int_eq(dp_heatmap_write_terminal(&g, DP_HEATMAP_ASCII, 0, NULL, stdout), -EINVAL);
        ck_assert_uint_eq(dp_heatmap_terminal_column_width(63, 21), 3);
        ck_assert_uint_eq(dp_heatmap_terminal_column_width(63, 5), 4);
        ck_assert_uint_eq(dp_heatmap_terminal_column_width(63, 100), 1);
        dp_heatmap_grid_done(&g);
}
END_TEST

START_TEST(test_terminal_colors) {
        _cleanup_heatmap_ struct dp_heatmap *h = two_ranges();
        _cleanup_free_ char *truecolor = NULL, *xterm = NULL;
        struct dp_heatmap_grid g;

        build(h, 4, &g);
        /* Half blocks: the upper row in the foreground, the lower in the
         * background; a cell without data keeps the terminal's background. */
        truecolor = render_terminal(&g, DP_HEATMAP_TRUECOLOR, 1);
        assert_contains(truecolor, "\n      0x100000 ≈\033[38;2;0;0;4m\033[48;2;87;16;110m▀\033[49m \033[0m\n");
        assert_contains(truecolor, "\n       0x10000 ┤\033[38;2;188;55;84m\033[48;2;188;55;84m▀"
                                   "\033[38;2;252;255;164m\033[49m▄\033[0m\n");
        assert_contains(truecolor, "\n               └──\n");
        assert_contains(truecolor, "\033[38;2;252;255;164m█\033[0m 0% .. 100% of sampling intervals with an "
                                   "access (hottest 100%); ≈ collapsed gap\n");

        xterm = render_terminal(&g, DP_HEATMAP_256, 1);
        assert_contains(xterm, "\n      0x100000 ≈\033[38;5;16m\033[48;5;53m▀\033[49m \033[0m\n");
        assert_contains(xterm, "\033[38;5;131m\033[48;5;131m▀\033[38;5;229m\033[49m▄\033[0m\n");
        dp_heatmap_grid_done(&g);
}
END_TEST

START_TEST(test_terminal_time_labels) {
        _cleanup_heatmap_ struct dp_heatmap *h = NULL;
        _cleanup_free_ char *text = NULL;
        struct dp_heatmap_grid g;
        size_t columns, rows;

        ck_assert_int_eq(dp_heatmap_new(100, &h), 0);
        for (int i = 0; i < 25; i++) {
                struct dp_heatmap_region r = { 0x7f0000000000, 0x7f0000400000, 0.5 };

                ck_assert_int_eq(dp_heatmap_add_column(h, (uint64_t) i * SEC / 5, (uint64_t) (i + 1) * SEC / 5,
                                                       &r, 1), 0);
        }
        build(h, 1, &g);
        text = render_terminal(&g, DP_HEATMAP_ASCII, 1);
        /* A label every 10 columns: the time each column ends. */
        assert_contains(text, "\n               ++---------+---------+----\n"
                              "                0.2s      2.2s      4.2s \n");
        assert_contains(text, "0x7f0000000000 |+++++++++++++++++++++++++\n");
        free(text);
        /* Twice as wide: a label every 10 characters, 5 columns. */
        text = render_terminal(&g, DP_HEATMAP_ASCII, 2);
        assert_contains(text, "\n                0.2s      1.2s      2.2s      3.2s      4.2s      \n");
        dp_heatmap_grid_done(&g);

        dp_heatmap_terminal_grid_size(80, 10, DP_HEATMAP_256, &columns, &rows);
        ck_assert_uint_eq(columns, 80 - DP_HEATMAP_TERMINAL_MARGIN - 1);
        ck_assert_uint_eq(rows, 20);
        dp_heatmap_terminal_grid_size(80, 10, DP_HEATMAP_ASCII, &columns, &rows);
        ck_assert_uint_eq(rows, 10);
}
END_TEST

static size_t count(const char *text, const char *needle) {
        size_t n = 0;

        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* The rects of the cells, not of the plot or the scale. */
static size_t count_cells(const char *svg) {
        const char *cells = strstr(svg, "<g id=\"cells\""), *end = strstr(svg, "<g id=\"address-axis\"");
        size_t n = 0;

        ck_assert(cells && end && cells < end);
        for (const char *p = cells; (p = strstr(p, "<rect ")) && p < end; p++)
                n++;
        return n;
}

static bool starts_with(const char *text, const char *prefix) {
        return strncmp(text, prefix, strlen(prefix)) == 0;
}

static char *render_svg(const struct dp_heatmap_grid *g, const char *title) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(dp_heatmap_write_svg(g, title, f), 0);
        fclose(f);
        return text;
}

START_TEST(test_svg) {
        _cleanup_heatmap_ struct dp_heatmap *h = two_ranges();
        _cleanup_free_ char *svg = NULL;
        struct dp_heatmap_grid g;
        const char *gaps;

        build(h, 4, &g);
        svg = render_svg(&g, "pid <1> & \"q\"");
        ck_assert(starts_with(svg, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" height=\"600\""));
        assert_contains(svg, "<title>pid &lt;1&gt; &amp; &quot;q&quot;</title>");
        ck_assert_uint_eq(count(svg, "<g"), count(svg, "</g>"));
        ck_assert_ptr_nonnull(strstr(svg, "</svg>\n"));

        /* The lowest row at the bottom of the 720x480 plot at (130, 50), one
         * column 0.2 s of the 0.4 s shown: half its width. */
        assert_contains(svg, "<g data-start=\"0x10000\" data-end=\"0x18000\"><title>0x10000–0x18000</title>\n"
                             "<rect x=\"130.00\" y=\"410.00\" width=\"360.00\" height=\"120.00\" fill=\"#bc3754\"/>\n"
                             "<rect x=\"490.00\" y=\"410.00\" width=\"360.00\" height=\"120.00\" fill=\"#fcffa4\"/>\n"
                             "</g>\n");
        assert_contains(svg, "<g data-start=\"0x100000\" data-end=\"0x108000\"><title>0x100000–0x108000</title>\n"
                             "<rect x=\"130.00\" y=\"170.00\" width=\"360.00\" height=\"120.00\" fill=\"#57106e\"/>\n"
                             "</g>\n");
        /* Cells without data are not drawn: the plot's grey shows. */
        ck_assert_uint_eq(count_cells(svg), 5);
        assert_contains(svg, "<rect id=\"plot\" x=\"130.00\" y=\"50.00\" width=\"720.00\" height=\"480.00\" "
                             "fill=\"#d9d9d9\"/>");

        /* One collapsed gap, halfway up. */
        gaps = strstr(svg, "<g id=\"gaps\"");
        ck_assert_ptr_nonnull(gaps);
        ck_assert(starts_with(strchr(gaps, '\n') + 1,
                              "<line x1=\"130.00\" y1=\"290.00\" x2=\"850.00\" y2=\"290.00\"/>\n</g>"));
        /* Address labels at the ranges' starts and the top; ticks at the newest regions' boundaries. */
        assert_contains(svg, "<text x=\"122.00\" y=\"534.00\">0x10000</text>");
        assert_contains(svg, "<text x=\"122.00\" y=\"294.00\">0x100000</text>");
        assert_contains(svg, "<text x=\"122.00\" y=\"54.00\">0x110000</text>");
        assert_contains(svg, "<g id=\"region-boundaries\" stroke=\"#555555\">\n"
                             "<line x1=\"850.00\" y1=\"530.00\" x2=\"855.00\" y2=\"530.00\"/>\n"
                             "<line x1=\"850.00\" y1=\"410.00\" x2=\"855.00\" y2=\"410.00\"/>\n</g>");
        /* Time in seconds from the first column, at a round step. */
        assert_contains(svg, "<text x=\"130.00\" y=\"548.00\">0.00</text>");
        assert_contains(svg, "<text x=\"220.00\" y=\"548.00\">0.05</text>");
        assert_contains(svg, "<text x=\"850.00\" y=\"548.00\">0.40</text>");
        ck_assert_uint_eq(count(svg, "y=\"548.00\">"), 9);
        /* The colour scale: the gradient's stops are the scale's, 0 to 100%. */
        assert_contains(svg, "<stop offset=\"0.00\" stop-color=\"#000004\"/>");
        assert_contains(svg, "<stop offset=\"1.00\" stop-color=\"#fcffa4\"/>");
        assert_contains(svg, "<text x=\"900.00\" y=\"54.00\">100%</text>");
        assert_contains(svg, "<text x=\"900.00\" y=\"294.00\">50%</text>");
        assert_contains(svg, "<text x=\"900.00\" y=\"534.00\">0%</text>");
        assert_contains(svg, "(the hottest cell: 100%)");
        dp_heatmap_grid_done(&g);
}
END_TEST

START_TEST(test_svg_merges_runs) {
        _cleanup_heatmap_ struct dp_heatmap *h = NULL;
        _cleanup_free_ char *svg = NULL;
        struct dp_heatmap_grid g;

        ck_assert_int_eq(dp_heatmap_new(8, &h), 0);
        for (int i = 0; i < 3; i++) {
                struct dp_heatmap_region r = { 0x1000, 0x3000, 0.3 };

                ck_assert_int_eq(dp_heatmap_add_column(h, (uint64_t) i * SEC, (uint64_t) (i + 1) * SEC, &r, 1), 0);
        }
        build(h, 2, &g);
        svg = render_svg(&g, NULL);
        /* Three equal cells a row: one rect the plot's width; no gaps.  The
         * scale is absolute: 0.3 lies a fifth of the way from the stop at
         * 0.25 (#57106e) to the one at 0.5 (#bc3754). */
        ck_assert_uint_eq(count_cells(svg), 2);
        assert_contains(svg, "<rect x=\"130.00\" y=\"290.00\" width=\"720.00\" height=\"240.00\" fill=\"#6b1869\"/>");
        assert_contains(svg, "<g id=\"gaps\" stroke=\"#ffffff\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\">\n</g>");
        ck_assert_ptr_null(strstr(svg, "dashed"));
        dp_heatmap_grid_done(&g);
}
END_TEST

int main(void) {
        Suite *s = suite_create("heatmap");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_grid_collapses_gaps);
        tcase_add_test(tc, test_grid_row_straddles_gap);
        tcase_add_test(tc, test_grid_range_shows_holes);
        tcase_add_test(tc, test_bad_input);
        tcase_add_test(tc, test_columns_kept_and_shown);
        tcase_add_test(tc, test_color_scale);
        tcase_add_test(tc, test_terminal_ascii);
        tcase_add_test(tc, test_terminal_colors);
        tcase_add_test(tc, test_terminal_time_labels);
        tcase_add_test(tc, test_svg);
        tcase_add_test(tc, test_svg_merges_runs);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
