/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Parsers for the two procfs files the tracker gets its address space from.
 * They work on a caller-provided buffer and do no I/O (dp_read_file() in
 * fileio.h reads the files).
 */

#include <stddef.h>

#include "range.h"

/*
 * Parses /proc/PID/maps text (@len bytes, need not be NUL-terminated) into
 * the mapped ranges, in file order, skipping the [vsyscall] kernel page.
 * Empty text gives zero ranges (kernel threads, exited processes).
 * On success *ret_ranges is malloc()ed (NULL when none) and owned by the
 * caller.  A malformed line gives -EBADMSG and its 1-based number in
 * *ret_bad_line (if not NULL; set to 0 on success).  -ENOMEM on allocation
 * failure.
 */
int dp_parse_maps(const char *text, size_t len,
                  struct dp_range **ret_ranges, size_t *ret_n, size_t *ret_bad_line);

/*
 * Parses /proc/iomem text into the top-level "System RAM" ranges, converted
 * from the file's inclusive end to half-open.  Nested entries (kernel code,
 * or a "System RAM" inside another resource) are not returned.
 * Errors: -EBADMSG for a malformed line (number in *ret_bad_line), -ERANGE
 * for a System RAM entry ending at the last byte of the address space,
 * -EPERM when every address reads as zero (the file was read without
 * CAP_SYS_ADMIN, which hides addresses), -ENOENT when there is no top-level
 * System RAM entry, -ENOMEM.
 */
int dp_parse_iomem(const char *text, size_t len,
                   struct dp_range **ret_ranges, size_t *ret_n, size_t *ret_bad_line);
