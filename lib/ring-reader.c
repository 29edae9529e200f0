/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "damon-perfd/ring-reader.h"

enum dp_counter dp_sample_classify(const struct dp_sample *s, bool want_phys) {
        if (s->vaddr == 0)
                return DP_C_ADDR_ZERO;
        /* The upper half of the address space is the kernel's on x86-64 and arm64. */
        if (s->vaddr >> 63)
                return DP_C_KERNEL;
        if (want_phys && !(s->flags & DP_SAMPLE_PHYS_VALID))
                return DP_C_INV_PHYS;
        return DP_C_VALID;
}

int dp_ring_reader_init(struct dp_ring_reader *r, const struct perf_event_attr *attr,
                        const struct dp_source *source, struct dp_spsc *queue, uint16_t cpu, bool want_phys) {
        int ret;

        if (!source || !queue)
                return -EINVAL;
        ret = dp_perf_layout_init(&r->layout, attr);
        if (ret < 0)
                return ret;
        r->source = source;
        r->queue = queue;
        r->cpu = cpu;
        r->want_phys = want_phys;
        memset(&r->counters, 0, sizeof(r->counters));
        return 0;
}

void dp_ring_reader_take_sample(struct dp_ring_reader *r, const struct dp_perf_sample *ps) {
        struct dp_sample overflow_slot, *slot;
        enum dp_counter outcome;
        uint64_t *c = r->counters.v;

        /* Decode straight into the queue slot; when the queue is full, into a
         * local one so the sample is still classified before it is dropped. */
        slot = dp_spsc_reserve(r->queue) ?: &overflow_slot;
        slot->cpu = (ps->present & PERF_SAMPLE_CPU) ? (uint16_t) ps->cpu : r->cpu;
        if (r->source->decode(ps, slot) < 0) {
                c[DP_C_NULL]++;
                return;
        }
        outcome = dp_sample_classify(slot, r->want_phys);
        c[outcome]++;
        if (outcome != DP_C_VALID)
                return;
        if (slot == &overflow_slot) {
                c[DP_C_OVERFLOW]++;
                return;
        }
        dp_spsc_commit(r->queue);
        c[DP_C_ENQUEUE]++;
}

static void handle_sample(struct dp_ring_reader *r, const struct perf_event_header *h) {
        struct dp_perf_sample ps;

        r->counters.v[DP_C_CALLBACK]++;
        if (dp_perf_parse_sample(&r->layout, h, h->size, &ps) < 0) {
                r->counters.v[DP_C_NULL]++;
                return;
        }
        dp_ring_reader_take_sample(r, &ps);
}

void dp_ring_reader_take_other(struct dp_ring_reader *r, const struct perf_event_header *h) {
        uint64_t *c = r->counters.v;
        uint64_t id, lost, time;

        switch (h->type) {
        case PERF_RECORD_LOST:
                if (dp_perf_parse_lost(h, h->size, &id, &lost) < 0)
                        c[DP_C_BAD_RECORD]++;
                else
                        c[DP_C_LOST] += lost;
                break;
        case PERF_RECORD_LOST_SAMPLES:
                if (dp_perf_parse_lost_samples(h, h->size, &lost) < 0)
                        c[DP_C_BAD_RECORD]++;
                else
                        c[DP_C_LOST_SAMPLES] += lost;
                break;
        case PERF_RECORD_THROTTLE:
        case PERF_RECORD_UNTHROTTLE:
                if (dp_perf_parse_throttle(h, h->size, &time, &id) < 0)
                        c[DP_C_BAD_RECORD]++;
                else
                        c[h->type == PERF_RECORD_THROTTLE ? DP_C_THROTTLE : DP_C_UNTHROTTLE]++;
                break;
        default:
                /* Other record types (AUX, ITRACE_START, ...) belong to sources that consume them. */
                break;
        }
}

size_t dp_ring_reader_drain(struct dp_ring_reader *r) {
        const struct perf_event_header *h;
        size_t n = 0;
        int err;

        r->counters.v[DP_C_WAKEUP]++;
        if (dp_perf_ring_begin(&r->ring) == 0)
                return 0;

        while ((h = dp_perf_ring_next(&r->ring, &err))) {
                if (h->type == PERF_RECORD_SAMPLE)
                        handle_sample(r, h);
                else
                        dp_ring_reader_take_other(r, h);
                n++;
        }
        if (err < 0)
                r->counters.v[DP_C_BAD_RECORD]++;

        dp_perf_ring_end(&r->ring);
        dp_spsc_publish(r->queue);
        r->counters.v[DP_C_RING_PEAK] = DP_MAX(r->counters.v[DP_C_RING_PEAK],
                                              (uint64_t) dp_spsc_depth_producer(r->queue));
        return n;
}
