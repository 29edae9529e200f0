/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "table.h"

struct dp_table {
        size_t n_columns;
        char **headers;
        enum dp_table_align *align;
        char **cells;                   /* row-major, n_cells of cap_cells */
        size_t n_cells, cap_cells;
        size_t *separators;             /* row indices a rule goes before, ascending */
        size_t n_separators, cap_separators;
};

/* Copies @text, replacing control characters so that one cell stays one line
 * of known width. */
static char *cell_dup(const char *text) {
        char *s = strdup(text ? text : "-");

        if (!s)
                return NULL;
        for (char *p = s; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        return s;
}

int dp_table_new(const char *const *headers, size_t n_columns, struct dp_table **ret) {
        struct dp_table *t;

        if (!headers || n_columns == 0 || !ret)
                return -EINVAL;
        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->n_columns = n_columns;
        t->headers = calloc(n_columns, sizeof(char *));
        t->align = calloc(n_columns, sizeof(enum dp_table_align));
        if (!t->headers || !t->align) {
                dp_table_free(t);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_columns; i++) {
                t->headers[i] = cell_dup(headers[i]);
                if (!t->headers[i]) {
                        dp_table_free(t);
                        return -ENOMEM;
                }
        }
        *ret = t;
        return 0;
}

void dp_table_free(struct dp_table *t) {
        if (!t)
                return;
        if (t->headers)
                for (size_t i = 0; i < t->n_columns; i++)
                        free(t->headers[i]);
        for (size_t i = 0; i < t->n_cells; i++)
                free(t->cells[i]);
        free(t->headers);
        free(t->align);
        free(t->cells);
        free(t->separators);
        free(t);
}

int dp_table_set_align(struct dp_table *t, size_t column, enum dp_table_align align) {
        if (!t || column >= t->n_columns || (align != DP_TABLE_LEFT && align != DP_TABLE_RIGHT))
                return -EINVAL;
        t->align[column] = align;
        return 0;
}

static int add_cell_owned(struct dp_table *t, char *s) {
        if (t->n_cells == t->cap_cells) {
                size_t cap = t->cap_cells ? t->cap_cells * 2 : t->n_columns * 16;
                char **cells = reallocarray(t->cells, cap, sizeof(char *));

                if (!cells) {
                        free(s);
                        return -ENOMEM;
                }
                t->cells = cells;
                t->cap_cells = cap;
        }
        t->cells[t->n_cells++] = s;
        return 0;
}

int dp_table_add_cell(struct dp_table *t, const char *text) {
        char *s;

        if (!t)
                return -EINVAL;
        s = cell_dup(text);
        if (!s)
                return -ENOMEM;
        return add_cell_owned(t, s);
}

int dp_table_add_cellf(struct dp_table *t, const char *format, ...) {
        _cleanup_free_ char *s = NULL;
        va_list ap;
        int r;

        if (!t || !format)
                return -EINVAL;
        va_start(ap, format);
        r = vasprintf(&s, format, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        return dp_table_add_cell(t, s);
}

int dp_table_add_separator(struct dp_table *t) {
        if (!t)
                return -EINVAL;
        if (t->n_cells % t->n_columns != 0)
                return -EBUSY;
        if (t->n_separators == t->cap_separators) {
                size_t cap = t->cap_separators ? t->cap_separators * 2 : 8;
                size_t *s = reallocarray(t->separators, cap, sizeof(size_t));

                if (!s)
                        return -ENOMEM;
                t->separators = s;
                t->cap_separators = cap;
        }
        t->separators[t->n_separators++] = t->n_cells / t->n_columns;
        return 0;
}

size_t dp_table_rows(const struct dp_table *t) {
        return t ? t->n_cells / t->n_columns : 0;
}

size_t dp_utf8_width(const char *s) {
        size_t n = 0;

        for (; s && *s; s++)
                n += ((unsigned char) *s & 0xc0) != 0x80;
        return n;
}

static void put_repeated(FILE *f, const char *s, size_t n) {
        for (size_t i = 0; i < n; i++)
                fputs(s, f);
}

/* One horizontal rule of the box: @left, then each column's width plus its
 * two padding spaces of '─', joined by @mid, closed by @right. */
static void put_rule(FILE *f, const size_t *widths, size_t n, const char *left, const char *mid,
                     const char *right) {
        fputs(left, f);
        for (size_t c = 0; c < n; c++) {
                put_repeated(f, "─", widths[c] + 2);
                fputs(c + 1 < n ? mid : right, f);
        }
        fputc('\n', f);
}

static void put_line(FILE *f, const struct dp_table *t, char *const *cells, const size_t *widths,
                     enum dp_table_style style) {
        for (size_t c = 0; c < t->n_columns; c++) {
                size_t pad = widths[c] - dp_utf8_width(cells[c]);
                bool last = c + 1 == t->n_columns;

                if (style == DP_TABLE_BOX)
                        fputs(c == 0 ? "│ " : " │ ", f);
                else if (c > 0)
                        fputs("  ", f);
                if (t->align[c] == DP_TABLE_RIGHT)
                        put_repeated(f, " ", pad);
                fputs(cells[c], f);
                /* Plain lines carry no trailing blanks. */
                if (t->align[c] == DP_TABLE_LEFT && (style == DP_TABLE_BOX || !last))
                        put_repeated(f, " ", pad);
        }
        if (style == DP_TABLE_BOX)
                fputs(" │", f);
        fputc('\n', f);
}

int dp_table_write(const struct dp_table *t, enum dp_table_style style, FILE *f) {
        _cleanup_free_ size_t *widths = NULL;
        size_t rows, next_separator = 0;

        if (!t || !f || (style != DP_TABLE_BOX && style != DP_TABLE_PLAIN))
                return -EINVAL;
        if (t->n_cells % t->n_columns != 0)
                return -EBUSY;
        widths = calloc(t->n_columns, sizeof(size_t));
        if (!widths)
                return -ENOMEM;
        rows = t->n_cells / t->n_columns;
        for (size_t c = 0; c < t->n_columns; c++)
                widths[c] = dp_utf8_width(t->headers[c]);
        for (size_t i = 0; i < t->n_cells; i++)
                widths[i % t->n_columns] = DP_MAX(widths[i % t->n_columns], dp_utf8_width(t->cells[i]));

        if (style == DP_TABLE_BOX)
                put_rule(f, widths, t->n_columns, "┌", "┬", "┐");
        put_line(f, t, t->headers, widths, style);
        if (style == DP_TABLE_BOX)
                put_rule(f, widths, t->n_columns, "├", "┼", "┤");
        for (size_t r = 0; r < rows; r++) {
                bool rule = false;

                while (next_separator < t->n_separators && t->separators[next_separator] <= r) {
                        /* No rule before the first row (the header rule is there) or doubled. */
                        rule = rule || t->separators[next_separator] == r;
                        next_separator++;
                }
                if (rule && r > 0 && style == DP_TABLE_BOX)
                        put_rule(f, widths, t->n_columns, "├", "┼", "┤");
                put_line(f, t, t->cells + r * t->n_columns, widths, style);
        }
        if (style == DP_TABLE_BOX)
                put_rule(f, widths, t->n_columns, "└", "┴", "┘");
        return ferror(f) ? -EIO : 0;
}

char *dp_format_bytes(uint64_t bytes, char *buf, size_t size) {
        static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
        size_t u = 0;
        double v;

        if (bytes < 1024) {
                snprintf(buf, size, "%llu B", (unsigned long long) bytes);
                return buf;
        }
        v = (double) bytes / 1024.0;
        /* Rounding to one decimal may reach 1024.0: move up a unit before that. */
        while (v >= 1023.95 && u + 1 < DP_ARRAY_SIZE(units)) {
                v /= 1024.0;
                u++;
        }
        snprintf(buf, size, "%.1f %s", v, units[u]);
        return buf;
}

char *dp_format_bar(uint64_t value, uint64_t max, unsigned width, char *buf, size_t size) {
        /* U+2588 full block, then U+2589..U+258F: seven eighths down to one eighth. */
        static const char *const partial[8] = { "", "▏", "▎", "▍", "▌", "▋", "▊", "▉" };
        uint64_t eighths = 0, full;
        char *p = buf;

        if (!buf || size < DP_FORMAT_BAR_SIZE(width))
                return NULL;
        if (max > 0) {
                long double fraction = value >= max ? 1.0L : (long double) value / (long double) max;

                eighths = (uint64_t) (fraction * width * 8 + 0.5L);
        }
        full = eighths / 8;
        for (uint64_t i = 0; i < full; i++)
                p = stpcpy(p, "█");
        if (eighths % 8) {
                p = stpcpy(p, partial[eighths % 8]);
                full++;
        }
        for (uint64_t i = full; i < width; i++)
                *p++ = ' ';
        *p = '\0';
        return buf;
}
