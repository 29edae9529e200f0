/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Private to lib/replay/replay.c: the AUX data of a capture (ARM SPE).  `perf
 * record` copies each CPU's AUX area into the data section as
 * PERF_RECORD_AUXTRACE records, each followed by its bytes; the kernel's own
 * PERF_RECORD_AUX records, which announce the stretches and carry their
 * flags, come through the data ring as in live sampling.  Bytes are decoded
 * when their AUXTRACE record comes, stretch by stretch, each in the context
 * the CPU's reader had when the stretch was announced (the task then
 * current, the record's time), exactly as the live reader decodes a stretch
 * when its PERF_RECORD_AUX arrives; bytes no stretch announced, in the
 * context at the AUXTRACE record.  With a PERF_RECORD_TIME_CONV, SPE
 * timestamps convert to the capture's clock and each record is filed under
 * the task that ran at its time (the CPU's switch history).
 */

#include <stdbool.h>
#include <stdint.h>

#include "aux-ring.h"
#include "decode-spe.h"
#include "perf-data.h"
#include "ring-reader.h"
#include "task-timeline.h"

/* perf's own record types (tools/lib/perf/include/perf/event.h). */
#define REPLAY_RECORD_AUXTRACE_INFO 70
#define REPLAY_RECORD_AUXTRACE 71
#define REPLAY_RECORD_TIME_CONV 79

/* The body of a PERF_RECORD_AUXTRACE (its payload follows the record). */
struct replay_auxtrace {
        uint64_t size;          /* payload bytes, padding to 8 included */
        uint64_t offset;        /* AUX position of the first byte, as PERF_RECORD_AUX counts */
        uint64_t reference;
        uint32_t idx;           /* the mmap it was read from */
        uint32_t tid;           /* per-thread mode, else -1 */
        uint32_t cpu;           /* per-CPU mode, else -1 */
};

/* -EBADMSG when the record is too short. */
int replay_parse_auxtrace(const struct perf_event_header *h, struct replay_auxtrace *out);

/* The TSC conversion of a PERF_RECORD_TIME_CONV (32 bytes from perf 3.x,
 * 56 with the cap_user_time_short fields).  -EBADMSG when too short,
 * -EOPNOTSUPP when it says the clock has no time_zero. */
int replay_parse_time_conv(const struct perf_event_header *h, struct dp_spe_clock *out);

/* A stretch a PERF_RECORD_AUX announced whose bytes have not come yet. */
struct replay_stretch {
        uint64_t offset, size;
        uint64_t time;
        uint32_t pid, tid;
};

#define REPLAY_STRETCHES_MAX 64

/* One CPU's AUX state.  Zero-initialise. */
struct replay_aux_cpu {
        struct dp_task_timeline tasks;
        struct replay_stretch pending[REPLAY_STRETCHES_MAX];    /* a FIFO in AUX order */
        uint32_t first, n;
        uint64_t last_time;     /* the latest record time seen on this CPU */
};

/* A task record (SWITCH, SWITCH_CPU_WIDE, COMM, ITRACE_START) the CPU's
 * reader has just taken, @prev_pid/@prev_tid being its task before: the
 * change goes into the switch history, at the record's time. */
void replay_aux_note_task(struct replay_aux_cpu *a, const struct dp_ring_reader *r,
                          const struct dp_perf_data_record *rec, uint32_t prev_pid, uint32_t prev_tid);

/* A PERF_RECORD_AUX the CPU's reader has just counted: its stretch waits
 * for its bytes with the reader's current task and @time. */
void replay_aux_note_stretch(struct replay_aux_cpu *a, const struct dp_ring_reader *r, const struct dp_aux_record *aux,
                             uint64_t time);

/* Walks one AUXTRACE payload in pieces of one decoding context each. */
struct replay_payload {
        const uint8_t *data;
        uint64_t begin, end;    /* AUX positions of the payload */
        uint64_t pos;           /* the next byte to hand out */
        uint32_t fallback_tid;  /* the AUXTRACE record's tid (per-thread mode), or 0 */
};

void replay_payload_init(struct replay_payload *p, const struct replay_auxtrace *at, const void *payload);

/* The next piece of @p with the context to decode it in (@clock and
 * @threads may be NULL); false when the payload is done. */
bool replay_payload_next(struct replay_aux_cpu *a, const struct dp_ring_reader *r, struct replay_payload *p,
                         const struct dp_spe_clock *clock, const struct dp_thread_map *threads,
                         struct dp_aux_segment *seg, struct dp_spe_context *ctx);

/* What a record tells of threads' processes: its sample_id's task, and the
 * tasks COMM, FORK and context switches name in their bodies. */
void replay_note_threads(struct dp_thread_map *threads, const struct dp_perf_data_record *rec);
