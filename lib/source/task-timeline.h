/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which task ran on one CPU when: the recent history of its context
 * switches (PERF_RECORD_SWITCH_CPU_WIDE and the like), for sources whose
 * samples carry a time but no task (ARM SPE without CONTEXT packets).  A
 * fixed ring of the latest switches, noted in record order (which is time
 * order for one CPU); no allocation, so a decoder may consult it per record.
 */

#include <stdint.h>

#define DP_TASK_TIMELINE_SIZE 256

struct dp_task_switch {
        uint64_t time;          /* from this time on ... */
        uint32_t pid, tid;      /* ... this task ran */
};

struct dp_task_timeline {
        struct dp_task_switch at[DP_TASK_TIMELINE_SIZE];
        uint32_t next;          /* slot of the next note */
        uint32_t n;             /* notes kept, at most DP_TASK_TIMELINE_SIZE */
};

/* Zero-initialised is empty too. */
void dp_task_timeline_init(struct dp_task_timeline *tl);

/* From @time on, @pid/@tid runs.  A note older than the latest is taken as
 * coming at the latest's time (records of one CPU are in time order; this
 * keeps the history sorted whatever comes).  The oldest note goes when full. */
void dp_task_timeline_note(struct dp_task_timeline *tl, uint64_t time, uint32_t pid, uint32_t tid);

/* The task that ran at @time: the latest note at or before it.  -ENOENT when
 * @time precedes every note kept (or there is none). */
int dp_task_timeline_at(const struct dp_task_timeline *tl, uint64_t time, uint32_t *pid, uint32_t *tid);

/* The process of thread @tid, from the latest note naming it.  -ENOENT when
 * no note does. */
int dp_task_timeline_pid_of(const struct dp_task_timeline *tl, uint32_t tid, uint32_t *pid);

/* The latest note, -ENOENT when empty. */
int dp_task_timeline_last(const struct dp_task_timeline *tl, struct dp_task_switch *out);

/*
 * Which process each thread belongs to, as a capture's COMM and FORK
 * records (perf synthesizes them for every thread at the start) and its
 * switches tell it: for samples that name only a thread (SPE CONTEXT
 * packets).  Fixed size, open addressing; when full, a new thread takes the
 * place of an old one.  Zero-initialised is empty.
 */
#define DP_THREAD_MAP_SIZE 8192         /* a power of two */

struct dp_thread_map {
        struct {
                uint32_t tid, pid;      /* tid 0: empty (the idle task needs no entry) */
        } slot[DP_THREAD_MAP_SIZE];
        uint32_t n;
};

void dp_thread_map_note(struct dp_thread_map *map, uint32_t pid, uint32_t tid);
int dp_thread_map_pid_of(const struct dp_thread_map *map, uint32_t tid, uint32_t *pid);
