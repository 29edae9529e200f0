/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "replay.h"
#include "replay-targets.h"

struct replay_grown_target {
        uint32_t pid;
        bool used;              /* the slot is taken */
        bool added;             /* the tracker has it */
        bool refused;           /* max_targets was reached before it came */
        uint64_t *chunks;       /* sorted */
        size_t n, cap;
};

static size_t slot_of(uint32_t pid, uint64_t chunk, size_t mask) {
        uint64_t h = (chunk ^ ((uint64_t) pid << 40)) * UINT64_C(0x9e3779b97f4a7c15);

        return (size_t) (h >> 32) & mask;
}

static int chunk_set_grow(struct replay_chunk_set *set) {
        size_t mask = set->slots ? 2 * set->mask + 1 : 1023;
        struct replay_chunk *slots = calloc(mask + 1, sizeof(*slots));

        if (!slots)
                return -ENOMEM;
        for (size_t i = 0; set->slots && i <= set->mask; i++) {
                const struct replay_chunk *c = &set->slots[i];
                size_t k;

                if (!c->samples)
                        continue;
                for (k = slot_of(c->pid, c->chunk, mask); slots[k].samples; k = (k + 1) & mask)
                        ;
                slots[k] = *c;
        }
        free(set->slots);
        set->slots = slots;
        set->mask = mask;
        set->last = 0;
        return 0;
}

int replay_chunk_set_add(struct replay_chunk_set *set, uint32_t pid, uint64_t chunk) {
        struct replay_chunk *c = set->slots ? &set->slots[set->last] : NULL;
        size_t k;
        int r;

        if (c && c->samples && c->pid == pid && c->chunk == chunk) {
                c->samples++;
                return 0;
        }
        if (2 * (set->n + 1) > (set->slots ? set->mask + 1 : 0)) {
                r = chunk_set_grow(set);
                if (r < 0)
                        return r;
        }
        for (k = slot_of(pid, chunk, set->mask); set->slots[k].samples; k = (k + 1) & set->mask)
                if (set->slots[k].pid == pid && set->slots[k].chunk == chunk)
                        break;
        set->last = k;
        if (set->slots[k].samples) {
                set->slots[k].samples++;
                return 0;
        }
        set->slots[k] = (struct replay_chunk) { .pid = pid, .chunk = chunk, .samples = 1 };
        set->n++;
        return 1;
}

size_t replay_chunk_set_pack(struct replay_chunk_set *set) {
        size_t n = 0;

        for (size_t i = 0; set->slots && i <= set->mask; i++)
                if (set->slots[i].samples)
                        set->slots[n++] = set->slots[i];
        /* No longer a hash table. */
        set->mask = n ? n - 1 : 0;
        set->last = 0;
        return n;
}

void replay_chunk_set_done(struct replay_chunk_set *set) {
        free(set->slots);
        *set = (struct replay_chunk_set) {};
}

static struct replay_grown_target *grown_find(struct replay_growth *g, uint32_t pid) {
        size_t k;

        if (2 * (g->n + 1) > (g->slots ? g->mask + 1 : 0)) {
                size_t mask = g->slots ? 2 * g->mask + 1 : 63;
                struct replay_grown_target *slots = calloc(mask + 1, sizeof(*slots));

                if (!slots)
                        return NULL;
                for (size_t i = 0; g->slots && i <= g->mask; i++) {
                        if (!g->slots[i].used)
                                continue;
                        for (k = slot_of(g->slots[i].pid, 0, mask); slots[k].used; k = (k + 1) & mask)
                                ;
                        slots[k] = g->slots[i];
                }
                free(g->slots);
                g->slots = slots;
                g->mask = mask;
        }
        for (k = slot_of(pid, 0, g->mask); g->slots[k].used; k = (k + 1) & g->mask)
                if (g->slots[k].pid == pid)
                        return &g->slots[k];
        g->slots[k] = (struct replay_grown_target) { .pid = pid, .used = true };
        g->n++;
        return &g->slots[k];
}

/* Inserts @chunk in order and rebuilds the target's ranges in g->ranges. */
static int add_chunk(struct replay_growth *g, struct replay_grown_target *t, uint64_t chunk, size_t *nr) {
        size_t at;

        if (t->n == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 16;
                uint64_t *chunks = reallocarray(t->chunks, cap, sizeof(*chunks));

                if (!chunks)
                        return -ENOMEM;
                t->chunks = chunks;
                t->cap = cap;
        }
        if (g->ranges_cap < t->n + 1) {
                size_t cap = 2 * (t->n + 1);
                struct dp_range *ranges = reallocarray(g->ranges, cap, sizeof(*ranges));

                if (!ranges)
                        return -ENOMEM;
                g->ranges = ranges;
                g->ranges_cap = cap;
        }
        for (at = t->n; at > 0 && t->chunks[at - 1] > chunk; at--)
                ;
        memmove(t->chunks + at + 1, t->chunks + at, (t->n - at) * sizeof(*t->chunks));
        t->chunks[at] = chunk;
        t->n++;

        *nr = 0;
        for (size_t i = 0; i < t->n; i++) {
                uint64_t start = t->chunks[i] << DP_REPLAY_CHUNK_SHIFT;

                if (*nr && g->ranges[*nr - 1].end == start)
                        g->ranges[*nr - 1].end = replay_chunk_end(t->chunks[i]);
                else
                        g->ranges[(*nr)++] = (struct dp_range) { start, replay_chunk_end(t->chunks[i]) };
        }
        return 0;
}

int replay_growth_note(struct replay_growth *g, struct dp_tracker *tracker, uint32_t pid, uint64_t addr) {
        struct replay_grown_target *t;
        size_t nr;
        int r;

        r = replay_chunk_set_add(&g->seen, pid, addr >> DP_REPLAY_CHUNK_SHIFT);
        if (r <= 0)
                return r;

        t = grown_find(g, pid);
        if (!t)
                return -ENOMEM;
        if (t->refused)
                return 0;
        r = add_chunk(g, t, addr >> DP_REPLAY_CHUNK_SHIFT, &nr);
        if (r < 0)
                return r;
        if (t->added)
                return dp_tracker_set_ranges(tracker, pid, g->ranges, nr);
        r = dp_tracker_add_target(tracker, pid, g->ranges, nr);
        /* Full, or planned by someone else: leave it be. */
        if (r == -ENOSPC || r == -EEXIST) {
                t->refused = true;
                return 0;
        }
        if (r < 0)
                return r;
        t->added = true;
        return 0;
}

void replay_growth_done(struct replay_growth *g) {
        replay_chunk_set_done(&g->seen);
        for (size_t i = 0; g->slots && i <= g->mask; i++)
                free(g->slots[i].chunks);
        free(g->slots);
        free(g->ranges);
        *g = (struct replay_growth) {};
}
