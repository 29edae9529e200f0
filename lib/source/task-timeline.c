/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "task-timeline.h"

/* The i-th newest note (0 = the latest); i < n. */
static const struct dp_task_switch *newest(const struct dp_task_timeline *tl, uint32_t i) {
        return &tl->at[(tl->next + DP_TASK_TIMELINE_SIZE - 1 - i) % DP_TASK_TIMELINE_SIZE];
}

void dp_task_timeline_init(struct dp_task_timeline *tl) {
        memset(tl, 0, sizeof(*tl));
}

void dp_task_timeline_note(struct dp_task_timeline *tl, uint64_t time, uint32_t pid, uint32_t tid) {
        if (tl->n > 0) {
                struct dp_task_switch *last =
                        &tl->at[(tl->next + DP_TASK_TIMELINE_SIZE - 1) % DP_TASK_TIMELINE_SIZE];

                if (time < last->time)
                        time = last->time;
                /* Nothing changed: no note, so the history reaches further back. */
                if (last->pid == pid && last->tid == tid)
                        return;
        }
        tl->at[tl->next] = (struct dp_task_switch) { time, pid, tid };
        tl->next = (tl->next + 1) % DP_TASK_TIMELINE_SIZE;
        if (tl->n < DP_TASK_TIMELINE_SIZE)
                tl->n++;
}

int dp_task_timeline_at(const struct dp_task_timeline *tl, uint64_t time, uint32_t *pid, uint32_t *tid) {
        /* Newest first: samples are mostly recent. */
        for (uint32_t i = 0; i < tl->n; i++) {
                const struct dp_task_switch *s = newest(tl, i);

                if (s->time <= time) {
                        *pid = s->pid;
                        *tid = s->tid;
                        return 0;
                }
        }
        return -ENOENT;
}

int dp_task_timeline_pid_of(const struct dp_task_timeline *tl, uint32_t tid, uint32_t *pid) {
        for (uint32_t i = 0; i < tl->n; i++) {
                const struct dp_task_switch *s = newest(tl, i);

                if (s->tid == tid && s->pid) {
                        *pid = s->pid;
                        return 0;
                }
        }
        return -ENOENT;
}

int dp_task_timeline_last(const struct dp_task_timeline *tl, struct dp_task_switch *out) {
        if (tl->n == 0)
                return -ENOENT;
        *out = *newest(tl, 0);
        return 0;
}

#define THREAD_PROBES 16

static uint32_t thread_home(uint32_t tid) {
        return (tid * 2654435761u) & (DP_THREAD_MAP_SIZE - 1);
}

void dp_thread_map_note(struct dp_thread_map *map, uint32_t pid, uint32_t tid) {
        uint32_t at = thread_home(tid);

        if (tid == 0 || pid == 0)
                return;
        for (uint32_t i = 0; i < THREAD_PROBES; i++, at = (at + 1) & (DP_THREAD_MAP_SIZE - 1)) {
                if (map->slot[at].tid == tid || map->slot[at].tid == 0) {
                        map->n += map->slot[at].tid == 0;
                        map->slot[at].tid = tid;
                        map->slot[at].pid = pid;
                        return;
                }
        }
        /* Crowded here: the newest thread wins its home slot. */
        at = thread_home(tid);
        map->slot[at].tid = tid;
        map->slot[at].pid = pid;
}

int dp_thread_map_pid_of(const struct dp_thread_map *map, uint32_t tid, uint32_t *pid) {
        uint32_t at = thread_home(tid);

        if (tid == 0)
                return -ENOENT;
        for (uint32_t i = 0; i < THREAD_PROBES; i++, at = (at + 1) & (DP_THREAD_MAP_SIZE - 1)) {
                if (map->slot[at].tid == tid) {
                        *pid = map->slot[at].pid;
                        return 0;
                }
                if (map->slot[at].tid == 0)
                        break;
        }
        return -ENOENT;
}
