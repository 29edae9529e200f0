/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Consumer side of a perf AUX area.  The kernel (perf_aux_output_end) posts
 * PERF_RECORD_AUX with the aux_head it started from and the bytes it added,
 * then publishes aux_head; the hardware's stores are complete before that.
 * We read the announced stretch and hand it back with a release store of
 * aux_tail, so the kernel cannot reuse bytes we are still reading.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include "aux-ring.h"
#include "macro.h"

int dp_perf_parse_aux(const void *record, size_t size, struct dp_aux_record *out) {
        const struct perf_event_header *h = record;
        const uint8_t *body;

        if (!record || size < sizeof(*h) + 3 * sizeof(uint64_t))
                return -EBADMSG;
        if (h->type != PERF_RECORD_AUX || h->size != size)
                return -EBADMSG;
        body = (const uint8_t *) record + sizeof(*h);
        *out = (struct dp_aux_record) {
                .offset = dp_load_u64(body),
                .size = dp_load_u64(body + 8),
                .flags = dp_load_u64(body + 16),
        };
        return 0;
}

int dp_aux_ring_init(struct dp_aux_ring *ring, struct perf_event_mmap_page *meta, const void *data, uint64_t size) {
        if (!ring || !meta || !data)
                return -EINVAL;
        if (size == 0 || (size & (size - 1)) != 0)
                return -EINVAL;
        if (meta->aux_size != 0 && meta->aux_size != size)
                return -EINVAL;

        *ring = (struct dp_aux_ring) {
                .meta = meta,
                .data = data,
                .size = size,
                .mask = size - 1,
                .tail = __atomic_load_n(&meta->aux_tail, __ATOMIC_RELAXED),
        };
        return 0;
}

uint64_t dp_aux_ring_head(const struct dp_aux_ring *ring) {
        /* Pairs with the kernel's publication of aux_head after the data. */
        return __atomic_load_n(&ring->meta->aux_head, __ATOMIC_ACQUIRE);
}

int dp_aux_ring_span(const struct dp_aux_ring *ring, uint64_t offset, uint64_t size, struct dp_aux_span *out) {
        uint64_t start, first;

        *out = (struct dp_aux_span) {};
        /* Free-running positions: compare by distance, which survives wrap-around of the counter. */
        if ((int64_t) (offset - ring->tail) < 0)
                return -ESTALE;
        if (size > ring->size || offset + size - ring->tail > ring->size)
                return -ERANGE;
        if (size == 0)
                return 0;

        start = offset & ring->mask;
        first = DP_MIN(size, ring->size - start);
        out->seg[out->n++] = (struct dp_aux_segment) {
                .data = ring->data + start,
                .size = (size_t) first,
                .offset = offset,
        };
        if (first < size)
                out->seg[out->n++] = (struct dp_aux_segment) {
                        .data = ring->data,
                        .size = (size_t) (size - first),
                        .offset = offset + first,
                };
        return 0;
}

void dp_aux_ring_release(struct dp_aux_ring *ring, uint64_t upto) {
        if ((int64_t) (upto - ring->tail) <= 0)
                return;
        ring->tail = upto;
        /* Our reads of the stretch must complete before the kernel may overwrite it. */
        __atomic_store_n(&ring->meta->aux_tail, ring->tail, __ATOMIC_RELEASE);
}

int dp_aux_map(int fd, struct perf_event_mmap_page *meta, size_t data_length, size_t aux_pages,
               struct dp_aux_mapping *out) {
        long page_size = sysconf(_SC_PAGESIZE);
        size_t length;
        void *base;

        if (!out)
                return -EINVAL;
        *out = (struct dp_aux_mapping) {};
        if (fd < 0 || !meta || page_size <= 0)
                return -EINVAL;
        if (aux_pages == 0 || (aux_pages & (aux_pages - 1)) != 0)
                return -EINVAL;
        if (data_length == 0 || data_length % (size_t) page_size != 0)
                return -EINVAL;
        if (aux_pages > SIZE_MAX / (size_t) page_size)
                return -EINVAL;
        length = aux_pages * (size_t) page_size;

        /* The kernel reads these two when the AUX range is mapped. */
        meta->aux_offset = data_length;
        meta->aux_size = length;
        base = mmap(NULL, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t) data_length);
        if (base == MAP_FAILED) {
                int r = dp_negative_errno();

                /* Kernels say ENOTSUPP (524), which is not a user errno, for PMUs without AUX. */
                return r == -524 ? -EOPNOTSUPP : r;
        }
        *out = (struct dp_aux_mapping) {
                .base = base,
                .length = length,
                .offset = data_length,
        };
        return 0;
}

void dp_aux_unmap(struct dp_aux_mapping *m) {
        if (m->base)
                munmap(m->base, m->length);
        *m = (struct dp_aux_mapping) {};
}
