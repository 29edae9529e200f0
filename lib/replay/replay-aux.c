/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "replay-aux.h"

#define AUXTRACE_SIZE 48        /* header + size, offset, reference, idx, tid, cpu, reserved */
#define TIME_CONV_SIZE_V1 32    /* header + time_shift, time_mult, time_zero */
#define TIME_CONV_SIZE_V2 56    /* + time_cycles, time_mask, cap_user_time_zero, cap_user_time_short */

int replay_parse_auxtrace(const struct perf_event_header *h, struct replay_auxtrace *out) {
        const uint8_t *p = (const uint8_t *) h + sizeof(*h);

        if (h->type != REPLAY_RECORD_AUXTRACE || h->size < AUXTRACE_SIZE)
                return -EBADMSG;
        *out = (struct replay_auxtrace) {
                .size = dp_load_u64(p),
                .offset = dp_load_u64(p + 8),
                .reference = dp_load_u64(p + 16),
                .idx = dp_load_u32(p + 24),
                .tid = dp_load_u32(p + 28),
                .cpu = dp_load_u32(p + 32),
        };
        return 0;
}

int replay_parse_time_conv(const struct perf_event_header *h, struct dp_spe_clock *out) {
        const uint8_t *p = (const uint8_t *) h + sizeof(*h);
        uint64_t shift, mult;

        if (h->type != REPLAY_RECORD_TIME_CONV || h->size < TIME_CONV_SIZE_V1)
                return -EBADMSG;
        shift = dp_load_u64(p);
        mult = dp_load_u64(p + 8);
        /* The kernel's time_shift is below 32 and time_mult a u32. */
        if (shift >= 64 || mult > UINT32_MAX)
                return -EBADMSG;
        *out = (struct dp_spe_clock) {
                .time_shift = (uint16_t) shift,
                .time_mult = (uint32_t) mult,
                .time_zero = dp_load_u64(p + 16),
        };
        if (h->size >= TIME_CONV_SIZE_V2) {
                if (!p[40])
                        return -EOPNOTSUPP;     /* cap_user_time_zero clear: no conversion */
                out->time_cycles = dp_load_u64(p + 24);
                out->time_mask = dp_load_u64(p + 32);
                out->cap_user_time_short = p[41];
        }
        return 0;
}

void replay_aux_note_task(struct replay_aux_cpu *a, const struct dp_ring_reader *r,
                          const struct dp_perf_data_record *rec, uint32_t prev_pid, uint32_t prev_tid) {
        const struct perf_event_header *h = rec->header;
        const struct dp_perf_sample_id *sid = &rec->sample_id;
        uint64_t time = (sid->present & PERF_SAMPLE_TIME) ? sid->time : a->last_time;

        if (a->tasks.n == 0) {
                uint32_t pid = prev_pid, tid = prev_tid;

                /* The first switch also tells who ran before it: the task going
                 * out (the sample_id of an out-switch), or the one named in the
                 * record's body (an in-switch's previous task). */
                if ((h->type == PERF_RECORD_SWITCH_CPU_WIDE || h->type == PERF_RECORD_SWITCH) &&
                    (h->misc & PERF_RECORD_MISC_SWITCH_OUT) && (sid->present & PERF_SAMPLE_TID)) {
                        pid = sid->pid;
                        tid = sid->tid;
                } else if (h->type == PERF_RECORD_SWITCH_CPU_WIDE && h->size >= sizeof(*h) + 8) {
                        pid = dp_load_u32((const uint8_t *) h + sizeof(*h));
                        tid = dp_load_u32((const uint8_t *) h + sizeof(*h) + 4);
                }
                if (pid || tid)
                        dp_task_timeline_note(&a->tasks, 0, pid, tid);
        }
        dp_task_timeline_note(&a->tasks, time, r->aux.pid, r->aux.tid);
}

void replay_aux_note_stretch(struct replay_aux_cpu *a, const struct dp_ring_reader *r, const struct dp_aux_record *aux,
                             uint64_t time) {
        if (aux->size == 0)
                return;
        /* Full: the oldest stretch's bytes, if they ever come, decode in the
         * context of their AUXTRACE record instead. */
        if (a->n == REPLAY_STRETCHES_MAX) {
                a->first = (a->first + 1) % REPLAY_STRETCHES_MAX;
                a->n--;
        }
        a->pending[(a->first + a->n) % REPLAY_STRETCHES_MAX] = (struct replay_stretch) {
                .offset = aux->offset,
                .size = aux->size,
                .time = time,
                .pid = r->aux.pid,
                .tid = r->aux.tid,
        };
        a->n++;
}

/* A pair of u32 (pid, tid) in a record's body at @at, when it has them. */
static void note_body_pair(struct dp_thread_map *threads, const struct perf_event_header *h, size_t at) {
        const uint8_t *body = (const uint8_t *) h + sizeof(*h);
        uint32_t pid, tid;

        if (h->size < sizeof(*h) + at + 8)
                return;
        pid = dp_load_u32(body + at);
        tid = dp_load_u32(body + at + 4);
        if (pid != UINT32_MAX && tid != UINT32_MAX)
                dp_thread_map_note(threads, pid, tid);
}

void replay_note_threads(struct dp_thread_map *threads, const struct dp_perf_data_record *rec) {
        const struct perf_event_header *h = rec->header;
        const struct dp_perf_sample_id *sid = &rec->sample_id;

        if ((sid->present & PERF_SAMPLE_TID) && sid->pid != UINT32_MAX && sid->tid != UINT32_MAX)
                dp_thread_map_note(threads, sid->pid, sid->tid);
        switch (h->type) {
        case PERF_RECORD_COMM:
        case PERF_RECORD_SWITCH_CPU_WIDE:
                note_body_pair(threads, h, 0);          /* {pid, tid}; {next_prev_pid, next_prev_tid} */
                break;
        case PERF_RECORD_FORK:
                /* {pid, ppid, tid, ptid}: the new thread and its process. */
                if (h->size >= sizeof(*h) + 16)
                        dp_thread_map_note(threads, dp_load_u32((const uint8_t *) h + sizeof(*h)),
                                           dp_load_u32((const uint8_t *) h + sizeof(*h) + 8));
                break;
        default:
                break;
        }
}

void replay_payload_init(struct replay_payload *p, const struct replay_auxtrace *at, const void *payload) {
        *p = (struct replay_payload) {
                .data = payload,
                .begin = at->offset,
                .end = at->offset + at->size,
                .pos = at->offset,
                /* -1 outside per-thread mode; 0 is the idle task. */
                .fallback_tid = at->tid == UINT32_MAX ? 0 : at->tid,
        };
}

static void pop(struct replay_aux_cpu *a) {
        a->first = (a->first + 1) % REPLAY_STRETCHES_MAX;
        a->n--;
}

bool replay_payload_next(struct replay_aux_cpu *a, const struct dp_ring_reader *r, struct replay_payload *p,
                         const struct dp_spe_clock *clock, const struct dp_thread_map *threads,
                         struct dp_aux_segment *seg, struct dp_spe_context *ctx) {
        const struct replay_stretch *front = NULL;
        uint64_t end;

        if (p->pos >= p->end || !p->data)
                return false;
        /* Stretches that ended before this byte: their bytes are behind us. */
        while (a->n > 0 && a->pending[a->first].offset + a->pending[a->first].size <= p->pos)
                pop(a);
        if (a->n > 0)
                front = &a->pending[a->first];

        *ctx = (struct dp_spe_context) {
                .cpu = r->cpu,
                .clock = clock,
                .tasks = &a->tasks,
                .threads = threads,
                .midr = dp_source_context_midr(r->context, r->cpu),
        };
        if (front && front->offset <= p->pos) {
                end = DP_MIN(front->offset + front->size, p->end);
                ctx->pid = front->pid;
                ctx->tid = front->tid;
                ctx->time = front->time;
                if (front->offset + front->size <= end)
                        pop(a);
        } else {
                /* Bytes no stretch announced (yet): the context right now. */
                end = front && front->offset < p->end ? front->offset : p->end;
                ctx->pid = r->aux.pid;
                ctx->tid = r->aux.tid;
                if (!ctx->pid && p->fallback_tid) {
                        ctx->tid = p->fallback_tid;
                        if (dp_task_timeline_pid_of(&a->tasks, ctx->tid, &ctx->pid) < 0 &&
                            (!threads || dp_thread_map_pid_of(threads, ctx->tid, &ctx->pid) < 0))
                                ctx->pid = ctx->tid;
                }
                ctx->time = a->last_time;
        }
        *seg = (struct dp_aux_segment) {
                .data = p->data + (p->pos - p->begin),
                .size = (size_t) (end - p->pos),
                .offset = p->pos,
        };
        p->pos = end;
        return true;
}
