/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One forward pass over a range of a file, read(2) ahead of the reader by a
 * thread of its own into a ring of buffers: the copy out of the page cache, half
 * the cost of a one-pass decoder, runs beside the decoding instead of before
 * it.  Reading rather than mapping, because on virtual machines the first
 * touch of each page of a fresh mapping costs more than all the copying.
 *
 * The reader asks for the bytes at an offset that never goes back: they come
 * contiguous, even across the buffers' boundary (up to DP_READ_AHEAD_SPAN
 * bytes at a time).
 */

#include <stddef.h>
#include <stdint.h>

/* The most bytes one call may ask for at once (a perf record is at most 64 KiB). */
#define DP_READ_AHEAD_SPAN (64u << 10)

struct dp_read_ahead;

/* Starts reading [@begin, @end) of @fd (which must stay open; not taken).
 * -EINVAL for an inverted range, -ENOMEM, or pthread_create's error. */
int dp_read_ahead_new(int fd, uint64_t begin, uint64_t end, struct dp_read_ahead **ret);

/* Stops the thread and frees everything; NULL is fine. */
void dp_read_ahead_free(struct dp_read_ahead *ra);

/* The @need bytes at file offset @offset, contiguous, valid until the next
 * call, and in *@ret_avail how many bytes from there on are (at least @need).
 * @offset must not be below that of the previous call, and the bytes must lie
 * inside the range: -EINVAL otherwise, or for @need 0 or above
 * DP_READ_AHEAD_SPAN.  A read error is returned (negative errno) to this and
 * every later call; a file shorter than the range gives -EBADMSG. */
int dp_read_ahead_at(struct dp_read_ahead *ra, uint64_t offset, size_t need, const uint8_t **ret,
                     size_t *ret_avail);
