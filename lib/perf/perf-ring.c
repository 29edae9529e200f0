/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Consumer side of a perf mmap data ring.  The kernel publishes data_head with
 * release semantics after writing records; we pair that with an acquire load,
 * and hand space back with a release store of data_tail so the kernel cannot
 * reuse bytes we are still reading.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "perf-ring.h"

#define HEADER_SIZE sizeof(struct perf_event_header)

int dp_perf_ring_init(struct dp_perf_ring *ring, struct perf_event_mmap_page *meta, size_t page_size,
                      size_t data_size, uint8_t *scratch) {
        uint64_t data_offset;

        if (!ring || !meta || !scratch)
                return -EINVAL;
        /* Wrapped records are parsed in place from scratch, as u64 arrays. */
        if ((uintptr_t) scratch % 8 != 0)
                return -EINVAL;
        /* Positions are masked, and 8-byte records must never straddle the end. */
        if (data_size < HEADER_SIZE || (data_size & (data_size - 1)) != 0)
                return -EINVAL;
        /* Kernels since 4.1 tell us where the data area is and how big it is. */
        if (meta->data_size != 0 && meta->data_size != data_size)
                return -EINVAL;
        data_offset = meta->data_offset ? meta->data_offset : page_size;
        if (data_offset == 0 || data_offset % HEADER_SIZE != 0)
                return -EINVAL;

        *ring = (struct dp_perf_ring) {
                .meta = meta,
                .data = (const uint8_t *) meta + data_offset,
                .size = data_size,
                .mask = data_size - 1,
                .tail = __atomic_load_n(&meta->data_tail, __ATOMIC_RELAXED),
                .scratch = scratch,
        };
        ring->head = ring->tail;
        return 0;
}

uint64_t dp_perf_ring_begin(struct dp_perf_ring *ring) {
        /* Pairs with the kernel's release of data_head: records below it are complete. */
        ring->head = __atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE);
        return ring->head - ring->tail;
}

/* Drop everything up to the snapshot: after a bad header we cannot find the
 * next record boundary. */
static const struct perf_event_header *ring_corrupt(struct dp_perf_ring *ring, int *err) {
        ring->tail = ring->head;
        *err = -EBADMSG;
        return NULL;
}

const struct perf_event_header *dp_perf_ring_next(struct dp_perf_ring *ring, int *err) {
        struct perf_event_header header;
        uint64_t left, offset;

        *err = 0;
        left = ring->head - ring->tail;
        if (left == 0)
                return NULL;
        /* More than the ring holds, or a tail off the 8-byte grid, cannot come
         * from a well-behaved producer. */
        if (left > ring->size || left < HEADER_SIZE || ring->tail % HEADER_SIZE != 0)
                return ring_corrupt(ring, err);

        offset = ring->tail & ring->mask;
        memcpy(&header, ring->data + offset, sizeof(header));
        if (header.size < HEADER_SIZE || header.size % HEADER_SIZE != 0 || header.size > left)
                return ring_corrupt(ring, err);

        ring->tail += header.size;
        if (dp_likely(offset + header.size <= ring->size))
                return (const struct perf_event_header *) (ring->data + offset);

        /* The record wraps: make it contiguous in the scratch buffer. */
        {
                size_t first = ring->size - offset;

                memcpy(ring->scratch, ring->data + offset, first);
                memcpy(ring->scratch + first, ring->data, header.size - first);
        }
        return (const struct perf_event_header *) ring->scratch;
}

const struct perf_event_header *dp_perf_ring_next_run(struct dp_perf_ring *ring, uint32_t type, uint16_t size,
                                                      size_t *n) {
        uint64_t left = ring->head - ring->tail, offset, contiguous;
        const uint8_t *first, *p;
        size_t k = 0;

        *n = 0;
        if (left > ring->size || ring->tail % HEADER_SIZE != 0 || size < HEADER_SIZE || size % HEADER_SIZE != 0)
                return NULL;
        offset = ring->tail & ring->mask;
        contiguous = DP_MIN(left, ring->size - offset);
        first = p = ring->data + offset;
        for (; contiguous >= size; contiguous -= size, p += size, k++) {
                struct perf_event_header header;

                memcpy(&header, p, sizeof(header));
                if (header.type != type || header.size != size)
                        break;
        }
        ring->tail += (uint64_t) k * size;
        *n = k;
        return k ? (const struct perf_event_header *) first : NULL;
}

void dp_perf_ring_end(struct dp_perf_ring *ring) {
        /* Our reads of the records must complete before the kernel may overwrite them. */
        __atomic_store_n(&ring->meta->data_tail, ring->tail, __ATOMIC_RELEASE);
}
