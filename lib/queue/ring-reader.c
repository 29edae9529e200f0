/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "probes.h"
#include "ring-reader.h"

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
        r->context = NULL;
        r->observe = NULL;
        r->observe_data = NULL;
        memset(&r->counters, 0, sizeof(r->counters));
        memset(&r->aux, 0, sizeof(r->aux));
        return 0;
}

void dp_ring_reader_set_context(struct dp_ring_reader *r, const struct dp_source_context *context) {
        r->context = context;
}

void dp_ring_reader_set_observer(struct dp_ring_reader *r, dp_sample_observer_fn fn, void *userdata) {
        r->observe = fn;
        r->observe_data = userdata;
}

static void observe(const struct dp_ring_reader *r, struct dp_sample_outcome o) {
        o.source = r->source;
        r->observe(&o, r->observe_data);
}

/* Every decoded sample ends here: its outcome is counted, and a valid one
 * is queued, or counted as overflow when it had no slot (queue full). */
static void file_outcome(struct dp_ring_reader *r, bool in_queue_slot, enum dp_counter outcome) {
        r->counters.v[outcome]++;
        if (outcome != DP_C_VALID)
                return;
        if (!in_queue_slot) {
                r->counters.v[DP_C_OVERFLOW]++;
                DP_PROBE2(ring_overflow, r->cpu, dp_spsc_depth_producer(r->queue));
                return;
        }
        dp_spsc_commit(r->queue);
        r->counters.v[DP_C_ENQUEUE]++;
}

void dp_ring_reader_take_sample(struct dp_ring_reader *r, const struct dp_perf_sample *ps) {
        struct dp_sample overflow_slot, *slot;
        enum dp_counter outcome;

        /* Decode straight into the queue slot; when the queue is full, into a
         * local one so the sample is still classified before it is dropped. */
        slot = dp_spsc_reserve(r->queue) ?: &overflow_slot;
        slot->cpu = (ps->present & PERF_SAMPLE_CPU) ? (uint16_t) ps->cpu : r->cpu;
        if (r->source->decode(ps, r->context, slot) < 0) {
                r->counters.v[DP_C_NULL]++;
                if (dp_unlikely(r->observe))
                        observe(r, (struct dp_sample_outcome) { .parsed = ps, .outcome = DP_C_NULL });
                return;
        }
        outcome = dp_sample_classify(slot, r->want_phys);
        if (dp_unlikely(r->observe))
                observe(r, (struct dp_sample_outcome) { .parsed = ps, .sample = slot, .outcome = outcome });
        file_outcome(r, slot != &overflow_slot, outcome);
}

static inline __attribute__((always_inline)) void take_record(struct dp_ring_reader *r,
                                                              const struct dp_perf_layout *layout,
                                                              const struct perf_event_header *h, bool in_place) {
        struct dp_sample overflow_slot, *slot;
        enum dp_counter outcome;

        r->counters.v[DP_C_CALLBACK]++;
        slot = dp_spsc_reserve(r->queue) ?: &overflow_slot;
        slot->cpu = r->cpu;
        if ((in_place ? dp_source_decode_in_place(layout, h, slot)
                      : dp_source_decode_record(r->source, r->context, layout, h, slot)) < 0) {
                r->counters.v[DP_C_NULL]++;
                if (dp_unlikely(r->observe))
                        observe(r, (struct dp_sample_outcome) { .record = h, .layout = layout, .outcome = DP_C_NULL });
                return;
        }
        outcome = dp_sample_classify(slot, r->want_phys);
        if (dp_unlikely(r->observe))
                observe(r, (struct dp_sample_outcome) { .record = h, .layout = layout, .sample = slot,
                                                        .outcome = outcome });
        file_outcome(r, slot != &overflow_slot, outcome);
}

void dp_ring_reader_take_record(struct dp_ring_reader *r, const struct dp_perf_layout *layout,
                                const struct perf_event_header *h) {
        take_record(r, layout, h, dp_source_reads_in_place(r->source, layout, h));
}

/* take_record() for a run read in place, with the counters in registers
 * until the end of the run.  The layout, CPU and queue are copied to locals
 * first: a slot's 16-bit stores may alias the layout's offsets and the
 * reader's fields, which would otherwise be loaded again for every sample. */
static void take_in_place(struct dp_ring_reader *r, const struct dp_perf_layout *layout, const uint8_t *p,
                          size_t n) {
        const struct dp_perf_layout l = *layout;
        struct dp_spsc *queue = r->queue;
        const uint16_t cpu = r->cpu;
        const bool want_phys = r->want_phys;
        uint64_t outcomes[_DP_C_MAX] = {}, null = 0, enqueued = 0;

        for (size_t i = 0; i < n; i++, p += l.sample_size) {
                struct dp_sample overflow_slot, *slot = dp_spsc_reserve(queue) ?: &overflow_slot;
                enum dp_counter outcome;

                slot->cpu = cpu;
                if (dp_source_decode_in_place(&l, (const struct perf_event_header *) p, slot) < 0) {
                        null++;
                        continue;
                }
                outcome = dp_sample_classify(slot, want_phys);
                outcomes[outcome]++;
                if (outcome != DP_C_VALID)
                        continue;
                if (dp_unlikely(slot == &overflow_slot)) {
                        r->counters.v[DP_C_OVERFLOW]++;
                        DP_PROBE2(ring_overflow, cpu, dp_spsc_depth_producer(queue));
                        continue;
                }
                dp_spsc_commit(queue);
                enqueued++;
        }
        r->counters.v[DP_C_CALLBACK] += n;
        r->counters.v[DP_C_NULL] += null;
        r->counters.v[DP_C_ENQUEUE] += enqueued;
        for (enum dp_counter c = DP_C_VALID; c <= DP_C_INV_PHYS; c++)
                r->counters.v[c] += outcomes[c];
}

void dp_ring_reader_take_records(struct dp_ring_reader *r, const struct dp_perf_layout *layout,
                                 const struct perf_event_header *first, size_t n) {
        const uint8_t *p = (const uint8_t *) first;

        /* One decision for the whole run: its records share layout and size. */
        if (n > 0 && !r->observe && dp_source_reads_in_place(r->source, layout, first)) {
                take_in_place(r, layout, p, n);
                return;
        }
        for (size_t i = 0; i < n; i++, p += layout->sample_size)
                take_record(r, layout, (const struct perf_event_header *) p, false);
}

int dp_ring_reader_attach_aux(struct dp_ring_reader *r, struct perf_event_mmap_page *meta, const void *aux,
                              uint64_t aux_size) {
        int ret;

        if (!r->source || r->source->aux_format == DP_AUX_NONE)
                return -EINVAL;
        ret = dp_aux_ring_init(&r->aux.ring, meta, aux, aux_size);
        if (ret < 0)
                return ret;
        r->aux.format = r->source->aux_format;
        return 0;
}

/* One SPE record: a memory access is a callback with exactly one outcome;
 * branches and other operations are no sample at all. */
static void take_spe_record(struct dp_ring_reader *r, const struct dp_spe_record *rec,
                            const struct dp_spe_context *ctx) {
        struct dp_sample overflow_slot, *slot;
        enum dp_counter outcome;
        uint64_t *c = r->counters.v;
        int ret;

        slot = dp_spsc_reserve(r->queue) ?: &overflow_slot;
        ret = dp_spe_record_to_sample(rec, ctx, slot);
        if (ret == -ENODATA) {
                r->counters.v[DP_C_SPE_NO_DATA]++;
                return;
        }
        c[DP_C_CALLBACK]++;
        if (ret < 0) {
                c[DP_C_NULL]++;
                if (dp_unlikely(r->observe))
                        observe(r, (struct dp_sample_outcome) { .spe = rec, .spe_context = ctx, .outcome = DP_C_NULL });
                return;
        }
        outcome = dp_sample_classify(slot, r->want_phys);
        /* A user access of nobody we know cannot be filed under a target. */
        if (outcome == DP_C_VALID && slot->pid == 0)
                outcome = DP_C_NULL;
        if (dp_unlikely(r->observe))
                observe(r, (struct dp_sample_outcome) { .spe = rec, .spe_context = ctx, .sample = slot,
                                                        .outcome = outcome });
        file_outcome(r, slot != &overflow_slot, outcome);
}

size_t dp_ring_reader_take_spe_bytes(struct dp_ring_reader *r, const struct dp_aux_segment *seg,
                                     const struct dp_spe_context *ctx, size_t max_records) {
        struct dp_spe_record rec;
        struct dp_spe_iter it;
        size_t n = 0;

        dp_spe_iter_init(&it, seg->data, seg->size, seg->offset);
        while (n < max_records && dp_spe_next_record(&it, &rec)) {
                take_spe_record(r, &rec, ctx);
                n++;
        }
        r->aux.counts.bytes += it.pos;
        r->counters.v[DP_C_SPE_BAD_BYTES] += it.bad_bytes;
        /* The driver pads instead of splitting records, so a record cut off here
         * is damaged (a PARTIAL stretch): a sample that could not be decoded. */
        r->aux.counts.incomplete += it.incomplete_records;
        if (dp_unlikely(r->observe) && it.incomplete_records)
                observe(r, (struct dp_sample_outcome) { .spe_context = ctx, .outcome = DP_C_NULL });
        r->counters.v[DP_C_CALLBACK] += it.incomplete_records;
        r->counters.v[DP_C_NULL] += it.incomplete_records;
        return it.pos;
}

static void take_spe_segment(struct dp_ring_reader *r, const struct dp_aux_segment *seg,
                             const struct dp_spe_context *ctx) {
        dp_ring_reader_take_spe_bytes(r, seg, ctx, SIZE_MAX);
}

void dp_ring_reader_take_aux(struct dp_ring_reader *r, const struct dp_aux_record *aux, uint64_t time) {
        struct dp_aux_counts *n = &r->aux.counts;
        uint64_t *c = r->counters.v;
        struct dp_spe_context ctx = {
                .pid = r->aux.pid,
                .tid = r->aux.tid,
                .cpu = r->cpu,
                .time = time,
                .clock = r->aux.clock,
                .midr = dp_source_context_midr(r->context, r->cpu),
        };
        struct dp_aux_span span;

        n->records++;
        c[DP_C_AUX_TRUNCATED] += !!(aux->flags & DP_AUX_FLAG_TRUNCATED);
        c[DP_C_AUX_PARTIAL] += !!(aux->flags & DP_AUX_FLAG_PARTIAL);
        c[DP_C_AUX_COLLISION] += !!(aux->flags & DP_AUX_FLAG_COLLISION);
        n->overwrite += !!(aux->flags & DP_AUX_FLAG_OVERWRITE);
        if (aux->flags & DP_AUX_FLAG_TRUNCATED)
                r->aux.rearm = true;
        if (r->aux.format != DP_AUX_ARM_SPE)
                return;

        if (dp_aux_ring_span(&r->aux.ring, aux->offset, aux->size, &span) < 0) {
                /* Not a stretch the kernel can have given us: leave aux_tail alone. */
                n->bad_range++;
                c[DP_C_BAD_RECORD]++;
                return;
        }
        for (unsigned i = 0; i < span.n; i++)
                take_spe_segment(r, &span.seg[i], &ctx);
        dp_aux_ring_release(&r->aux.ring, aux->offset + aux->size);
}

static void handle_aux(struct dp_ring_reader *r, const struct perf_event_header *h) {
        struct dp_perf_sample_id sid;
        struct dp_aux_record aux;

        if (dp_perf_parse_aux(h, h->size, &aux) < 0 || dp_perf_parse_sample_id(&r->layout, h, h->size, &sid) < 0) {
                r->counters.v[DP_C_BAD_RECORD]++;
                return;
        }
        dp_ring_reader_take_aux(r, &aux, (sid.present & PERF_SAMPLE_TIME) ? sid.time : 0);
}

/* Records that name the task now running on this CPU. */
static void track_task(struct dp_ring_reader *r, const struct perf_event_header *h) {
        const uint8_t *body = (const uint8_t *) h + sizeof(*h);
        struct dp_perf_sample_id sid;

        if (h->size < sizeof(*h) + (h->type == PERF_RECORD_SWITCH ? 0 : 8) ||
            dp_perf_parse_sample_id(&r->layout, h, h->size, &sid) < 0) {
                r->counters.v[DP_C_BAD_RECORD]++;
                return;
        }
        switch (h->type) {
        case PERF_RECORD_SWITCH_CPU_WIDE:
                /* Switching out names the next task; switching in, the previous one,
                 * while the sample_id names the task coming in. */
                if (h->misc & PERF_RECORD_MISC_SWITCH_OUT) {
                        r->aux.pid = dp_load_u32(body);
                        r->aux.tid = dp_load_u32(body + 4);
                        return;
                }
                break;
        case PERF_RECORD_COMM:
                /* Only exec is certain to be the running task renaming itself. */
                if (!(h->misc & PERF_RECORD_MISC_COMM_EXEC))
                        return;
                __attribute__((fallthrough));
        case PERF_RECORD_ITRACE_START:
                r->aux.pid = dp_load_u32(body);
                r->aux.tid = dp_load_u32(body + 4);
                return;
        default:
                break;
        }
        /* A switch in: the sample_id's task is the one now running. */
        if (!(h->misc & PERF_RECORD_MISC_SWITCH_OUT) && (sid.present & PERF_SAMPLE_TID)) {
                r->aux.pid = sid.pid;
                r->aux.tid = sid.tid;
        }
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
        case PERF_RECORD_AUX:
                handle_aux(r, h);
                break;
        case PERF_RECORD_SWITCH_CPU_WIDE:
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_COMM:
        case PERF_RECORD_ITRACE_START:
                track_task(r, h);
                break;
        default:
                /* Other record types belong to sources that consume them. */
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

        for (;;) {
                size_t run = 0;

                /* Fixed-size samples in runs, decoded without a call per
                 * record; anything else one by one. */
                if (r->layout.sample_size)
                        h = dp_perf_ring_next_run(&r->ring, PERF_RECORD_SAMPLE, r->layout.sample_size, &run);
                if (run) {
                        dp_ring_reader_take_records(r, &r->layout, h, run);
                        n += run;
                        continue;
                }
                h = dp_perf_ring_next(&r->ring, &err);
                if (!h)
                        break;
                if (h->type == PERF_RECORD_SAMPLE)
                        dp_ring_reader_take_record(r, &r->layout, h);
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
