/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A refusal and its reason: the parsers and resolvers that check what a
 * user wrote return a negative errno and, in the caller's buffer, a
 * sentence naming what was wrong (the caller adds file:line).
 */

#include <stddef.h>

/* Formats the reason into @why (@size bytes, truncated to fit; nothing when
 * @why is NULL or @size 0) and returns @error, so that a check reads
 * "return dp_explain(-EINVAL, why, size, ...)". */
int dp_explain(int error, char *why, size_t size, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
