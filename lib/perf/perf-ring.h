/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reader side of a perf mmap data ring, following the kernel protocol:
 * load-acquire data_head, read records, store-release data_tail.  Records may
 * wrap past the end of the data area; such a record is copied into a scratch
 * buffer of 64 KiB (a record's size is a u16) so the caller always sees it
 * contiguous.  Pure memory logic: tests build ring images in ordinary memory.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#define DP_PERF_RECORD_MAX 65536

struct dp_perf_ring {
        struct perf_event_mmap_page *meta;
        const uint8_t *data;
        uint64_t size;          /* data area bytes, a power of two */
        uint64_t mask;
        uint64_t tail;          /* our read position, published on release */
        uint64_t head;          /* snapshot taken by dp_perf_ring_begin() */
        uint8_t *scratch;       /* DP_PERF_RECORD_MAX bytes, owned by the caller */
};

/* @meta is the first (control) page of the mapping; the data area starts at
 * meta->data_offset (or one page in, for kernels that leave it 0).  @data_size
 * must be a power of two (and match meta->data_size when the kernel set it);
 * @scratch must be 8-byte aligned.  -EINVAL otherwise. */
int dp_perf_ring_init(struct dp_perf_ring *ring, struct perf_event_mmap_page *meta, size_t page_size,
                      size_t data_size, uint8_t *scratch);

/* Snapshot the producer position; returns the number of unread bytes. */
uint64_t dp_perf_ring_begin(struct dp_perf_ring *ring);

/* Next record up to the snapshot, or NULL when none is left.  A corrupt header
 * (size < 8, not a multiple of 8, or longer than what is left; or a snapshot
 * larger than the ring) sets *err = -EBADMSG, drops the rest of the snapshot
 * and returns NULL; otherwise *err = 0.  The record stays valid until
 * dp_perf_ring_end() (in the ring) or the next call (when copied to scratch). */
const struct perf_event_header *dp_perf_ring_next(struct dp_perf_ring *ring, int *err);

/* A run of consecutive records, each of @type and @size bytes (a multiple of
 * 8), that lie whole and in order in the ring from the read position without
 * wrapping: returns the first and sets *@n to their number, having read past
 * them.  NULL with *@n = 0 when the next record is not one of them, none is
 * left or the snapshot is corrupt: dp_perf_ring_next() then takes it (and
 * judges it).  Fixed-size samples come in long runs, which the caller can
 * decode in place without a call per record. */
const struct perf_event_header *dp_perf_ring_next_run(struct dp_perf_ring *ring, uint32_t type, uint16_t size,
                                                      size_t *n);

/* Give the consumed bytes back to the kernel (store-release data_tail). */
void dp_perf_ring_end(struct dp_perf_ring *ring);
