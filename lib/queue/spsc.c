/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "spsc.h"

#define HUGE_PAGE ((size_t) 2 << 20)

_Static_assert(sizeof(struct dp_spsc) == 5 * DP_CACHELINE, "one cache line per role");

int dp_spsc_init(struct dp_spsc *q, size_t capacity) {
        struct dp_sample *slots = NULL;
        size_t size;

        if (!q)
                return -EINVAL;
        if ((uintptr_t) q % _Alignof(struct dp_spsc) != 0)
                return -EINVAL;
        if (capacity < 2 || capacity > DP_SPSC_CAPACITY_MAX || (capacity & (capacity - 1)) != 0)
                return -EINVAL;

        /* The queue is cycled through whole, each slot written once a lap,
         * and at a few thousand samples a second a lap takes seconds: on
         * small pages each write may then miss the TLB, and on a virtual
         * machine that write-protects guest pages now and then (measured
         * here: 153 write faults in 8 s on one 3 MiB queue) fault.  So the
         * slots take whole huge pages where the kernel gives them (THP
         * "madvise" or "always"; none is no error): 1 such fault in 8 s. */
        size = capacity * sizeof(*slots);
        if (size >= HUGE_PAGE)
                size = (size + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        if (posix_memalign((void **) &slots, size >= HUGE_PAGE ? HUGE_PAGE : DP_CACHELINE, size) != 0)
                return -ENOMEM;
        if (size >= HUGE_PAGE)
                (void) madvise(slots, size, MADV_HUGEPAGE);
        /* Touch every page now: the daemon samples page faults, and its own
         * queue must not fault (and so feed itself) on the hot path. */
        memset(slots, 0, capacity * sizeof(*slots));

        memset(q, 0, sizeof(*q));
        atomic_init(&q->head, 0);
        atomic_init(&q->tail, 0);
        q->mask = capacity - 1;
        q->slots = slots;
        return 0;
}

void dp_spsc_destroy(struct dp_spsc *q) {
        if (!q)
                return;
        free(q->slots);
        memset(q, 0, sizeof(*q));
        atomic_init(&q->head, 0);
        atomic_init(&q->tail, 0);
}

int dp_spsc_new(size_t capacity, struct dp_spsc **ret) {
        _cleanup_free_ struct dp_spsc *q = NULL;
        int r;

        if (!ret)
                return -EINVAL;
        q = aligned_alloc(_Alignof(struct dp_spsc), sizeof(*q));
        if (!q)
                return -ENOMEM;
        memset(q, 0, sizeof(*q));
        r = dp_spsc_init(q, capacity);
        if (r < 0)
                return r;
        *ret = DP_TAKE_PTR(q);
        return 0;
}

void dp_spsc_free(struct dp_spsc *q) {
        dp_spsc_destroy(q);
        free(q);
}
