/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The AUX area of a perf event (ARM SPE writes its profiling buffer there).
 * Protocol, as for the data ring but through aux_head/aux_tail in the control
 * page: the caller writes aux_offset and aux_size, maps that range read-write
 * (so the kernel honours aux_tail), and the kernel announces every stretch it
 * filled with a PERF_RECORD_AUX {aux_offset, aux_size, flags} in the data
 * ring.  aux_offset is a free-running position; the stretch may cross the end
 * of the area, so it comes back as up to two contiguous segments.  SPE never
 * lets a record straddle the end (the driver pads), so each segment decodes
 * on its own.  Pure memory logic apart from dp_aux_map(); tests use images in
 * ordinary memory.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* PERF_RECORD_AUX flags (the uapi names are missing from older headers). */
#define DP_AUX_FLAG_TRUNCATED 0x01u     /* the area was full: data lost, the event stops */
#define DP_AUX_FLAG_OVERWRITE 0x02u     /* snapshot mode */
#define DP_AUX_FLAG_PARTIAL 0x04u       /* the stretch has gaps / a cut record */
#define DP_AUX_FLAG_COLLISION 0x08u     /* samples collided (SPE: raise the period) */

struct dp_aux_record {
        uint64_t offset;        /* free-running AUX position of the first byte */
        uint64_t size;
        uint64_t flags;         /* DP_AUX_FLAG_* */
};

/* Body of a PERF_RECORD_AUX (@record at its header, @size = header.size, the
 * sample_id trailer may follow); -EBADMSG when too short or not an AUX record. */
int dp_perf_parse_aux(const void *record, size_t size, struct dp_aux_record *out);

struct dp_aux_ring {
        struct perf_event_mmap_page *meta;
        const uint8_t *data;
        uint64_t size;          /* a power of two */
        uint64_t mask;
        uint64_t tail;          /* consumed position, published by dp_aux_ring_release() */
};

/* @data is the mapped AUX area of @size bytes (a power of two, and equal to
 * meta->aux_size when that is set).  -EINVAL otherwise. */
int dp_aux_ring_init(struct dp_aux_ring *ring, struct perf_event_mmap_page *meta, const void *data, uint64_t size);

/* The producer position (load-acquire aux_head). */
uint64_t dp_aux_ring_head(const struct dp_aux_ring *ring);

struct dp_aux_segment {
        const uint8_t *data;
        size_t size;
        uint64_t offset;        /* free-running position of data[0] */
};

struct dp_aux_span {
        struct dp_aux_segment seg[2];
        unsigned n;             /* 0, 1, or 2 when the stretch wraps */
};

/* The bytes of [@offset, @offset + @size) as contiguous segments.  -ESTALE
 * when the stretch starts before the consumed tail (already given back to
 * the kernel), -ERANGE when it ends more than the area's size past the tail
 * (the kernel could not have kept it). */
int dp_aux_ring_span(const struct dp_aux_ring *ring, uint64_t offset, uint64_t size, struct dp_aux_span *out);

/* Gives everything before @upto back to the kernel (store-release aux_tail);
 * positions at or before the current tail are ignored. */
void dp_aux_ring_release(struct dp_aux_ring *ring, uint64_t upto);

struct dp_aux_mapping {
        void *base;
        size_t length;
        uint64_t offset;        /* file offset of the AUX area in the event's mapping */
};

/* I/O: writes aux_offset (@data_length, the length of the existing mapping
 * of control page + data ring, page aligned) and aux_size (@aux_pages pages, a
 * power of two) into @meta, then maps that range of @fd read-write.  Map before
 * enabling the event.  0 or a negative errno (-EOPNOTSUPP for PMUs without AUX
 * support). */
int dp_aux_map(int fd, struct perf_event_mmap_page *meta, size_t data_length, size_t aux_pages,
               struct dp_aux_mapping *out);
void dp_aux_unmap(struct dp_aux_mapping *m);
