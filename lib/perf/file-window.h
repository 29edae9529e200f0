/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One forward pass over a range of a file, read(2) a chunk at a time into a
 * window that slides on: each chunk is decoded from the cache it was just
 * copied into.  Reading rather than mapping, because on virtual machines the
 * first touch of each page of a fresh mapping costs more than all the
 * copying; on the caller's thread rather than ahead of it on one of its own,
 * because handing each chunk's cache lines over to another CPU cost more
 * CPU than the overlap saved time.
 *
 * The reader asks for the bytes at an offset that never goes back: they come
 * contiguous, even across chunks (up to DP_FILE_WINDOW_SPAN bytes at a time).
 */

#include <stddef.h>
#include <stdint.h>

/* The most bytes one call may ask for at once (a perf record is at most 64 KiB). */
#define DP_FILE_WINDOW_SPAN (64u << 10)

struct dp_file_window;

/* A window on [@begin, @end) of @fd (which must stay open; not taken).
 * -EINVAL for an inverted range, or -ENOMEM. */
int dp_file_window_new(int fd, uint64_t begin, uint64_t end, struct dp_file_window **ret);

/* Frees everything; NULL is fine. */
void dp_file_window_free(struct dp_file_window *w);

/* The @need bytes at file offset @offset, contiguous, valid until the next
 * call, and in *@ret_avail how many bytes from there on are (at least @need).
 * @offset must not be below that of the previous call, and the bytes must lie
 * inside the range: -EINVAL otherwise, or for @need 0 or above
 * DP_FILE_WINDOW_SPAN.  A read error is returned (negative errno) to this and
 * every later call; a file shorter than the range gives -EBADMSG. */
int dp_file_window_at(struct dp_file_window *w, uint64_t offset, size_t need, const uint8_t **ret,
                      size_t *ret_avail);
