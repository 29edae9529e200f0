/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Numbers from text, strictly: at least one digit, no sign on an unsigned
 * number, no leading space, nothing left over unless the caller asks where
 * the number ended.  strto*() accept all of those and report overflow in
 * errno, which is why nothing else calls them.
 */

#include <stdint.h>

/* An unsigned number in @base (0: C prefixes, 0x... or 0...; 16: "ff" or
 * "0xff") at the start of @text.  With @ret_end NULL it must be the whole of @text; else *@ret_end
 * points past it.  -EINVAL malformed, -ERANGE above UINT64_MAX. */
int dp_parse_uint(const char *text, int base, uint64_t *ret, const char **ret_end);

/* The whole of @text as a decimal number in [@min, @max]; -EINVAL malformed,
 * -ERANGE outside. */
int dp_parse_u64_in(const char *text, uint64_t min, uint64_t max, uint64_t *ret);
int dp_parse_u32_in(const char *text, uint32_t min, uint32_t max, uint32_t *ret);

/* The same for a signed decimal number, '-' allowed. */
int dp_parse_int_in(const char *text, long long min, long long max, long long *ret);

/* The whole of @text as a decimal fraction: "0.2", ".5", "-1.5", "1e3".  No
 * '+', leading space, hex, inf or nan, which strtod() would all take.
 * -EINVAL malformed, -ERANGE beyond what a double holds. */
int dp_parse_double(const char *text, double *ret);
