/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Aligned text tables for damonctl: cells are collected row by row, column
 * widths are measured in display columns (UTF-8 aware, so box-drawing and
 * block characters count as one), and the table is written boxed or plain.
 * Also the small cell formatters the tables share: human sizes and bars.
 */

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum dp_table_align {
        DP_TABLE_LEFT,
        DP_TABLE_RIGHT,
};

enum dp_table_style {
        DP_TABLE_BOX,           /* ┌─┬─┐ frame, header rule, separators as rules */
        DP_TABLE_PLAIN,         /* header and rows separated by two spaces */
};

struct dp_table;

/* A table with @n_columns columns named by @headers (copied). */
int dp_table_new(const char *const *headers, size_t n_columns, struct dp_table **ret);
void dp_table_free(struct dp_table *t);
static inline void dp_table_freep(struct dp_table **t) {
        dp_table_free(*t);
}
#define _cleanup_table_ __attribute__((cleanup(dp_table_freep)))

/* Columns are left-aligned until told otherwise.  -EINVAL for a bad column. */
int dp_table_set_align(struct dp_table *t, size_t column, enum dp_table_align align);

/* Appends one cell to the current row; a row is complete after n_columns
 * cells.  Control characters are shown as '?' so they cannot break the
 * layout.  NULL is shown as "-". */
int dp_table_add_cell(struct dp_table *t, const char *text);
int dp_table_add_cellf(struct dp_table *t, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* A rule before the next row (boxed style only).  -EBUSY inside a row. */
int dp_table_add_separator(struct dp_table *t);

size_t dp_table_rows(const struct dp_table *t);

/* Writes the table.  -EBUSY when the last row is incomplete, -EIO on a write error. */
int dp_table_write(const struct dp_table *t, enum dp_table_style style, FILE *f);

/* Display columns of a UTF-8 string: every code point counts as one column,
 * which holds for the characters damonctl prints. */
size_t dp_utf8_width(const char *s);

/* "512 B", "4.0 KiB", "1.5 MiB" ... "16.0 EiB" (IEC units).  Returns @buf. */
#define DP_FORMAT_BYTES_MAX 16
char *dp_format_bytes(uint64_t bytes, char *buf, size_t size);

/* A bar of @width columns for @value out of @max, in eighths of a block
 * (U+2588 and U+2589..U+258F), padded with spaces to exactly @width columns.
 * @value above @max is shown full; @max 0 gives an empty bar.  Returns @buf,
 * or NULL when @size cannot hold it (3 bytes per column plus the NUL). */
#define DP_FORMAT_BAR_SIZE(width) ((size_t) (width) * 3 + 1)
char *dp_format_bar(uint64_t value, uint64_t max, unsigned width, char *buf, size_t size);
