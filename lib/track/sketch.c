/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sketch.h"

static void clear(struct dp_sketch_entry *slots) {
        for (size_t i = 0; i < DP_SKETCH_SLOTS; i++)
                slots[i] = (struct dp_sketch_entry) { DP_SKETCH_EMPTY, 0 };
}

int dp_sketch_init(struct dp_sketch *s) {
        *s = (struct dp_sketch) {
                .slots = calloc(DP_SKETCH_SLOTS, sizeof(*s->slots)),
                .spare = calloc(DP_SKETCH_SLOTS, sizeof(*s->spare)),
        };
        if (!s->slots || !s->spare) {
                dp_sketch_done(s);
                return -ENOMEM;
        }
        clear(s->slots);
        return 0;
}

void dp_sketch_done(struct dp_sketch *s) {
        free(s->slots);
        free(s->spare);
        *s = (struct dp_sketch) {};
}

/* Rebuilds the table from the entries @keep accepts, with their new weight
 * (0: dropped), so that no probe chain has holes. */
static void rebuild(struct dp_sketch *s, uint32_t (*keep)(const struct dp_sketch_entry *e, uint32_t tgid),
                    uint32_t tgid) {
        struct dp_sketch_entry *old = s->slots;

        s->slots = s->spare;
        s->spare = old;
        clear(s->slots);
        s->used = 0;
        for (size_t i = 0; i < DP_SKETCH_SLOTS; i++) {
                uint32_t w;

                if (old[i].key == DP_SKETCH_EMPTY || (w = keep(&old[i], tgid)) == 0)
                        continue;
                /* Fewer entries than before: each finds its slot again. */
                uint32_t h = (uint32_t) ((old[i].key * UINT64_C(0x9e3779b97f4a7c15)) >> (64 - DP_SKETCH_BITS));
                for (uint32_t k = 0; k < DP_SKETCH_PROBE; k++) {
                        struct dp_sketch_entry *e = &s->slots[(h + k) & (DP_SKETCH_SLOTS - 1)];

                        if (e->key == DP_SKETCH_EMPTY) {
                                *e = (struct dp_sketch_entry) { old[i].key, w, old[i].interval };
                                s->used++;
                                break;
                        }
                }
        }
}

static uint32_t decayed(const struct dp_sketch_entry *e, uint32_t tgid) {
        uint32_t loss = (e->weight >> 1) + 1;

        (void) tgid;
        return e->weight > loss ? e->weight - loss : 0;
}

static uint32_t not_of(const struct dp_sketch_entry *e, uint32_t tgid) {
        return dp_sketch_key_tgid(e->key) == tgid ? 0 : e->weight;
}

void dp_sketch_decay(struct dp_sketch *s) {
        if (s->used)
                rebuild(s, decayed, 0);
}

void dp_sketch_forget(struct dp_sketch *s, uint32_t tgid) {
        if (s->used)
                rebuild(s, not_of, tgid);
}

static int entry_compare(const void *a, const void *b) {
        const struct dp_sketch_entry *x = a, *y = b;

        return x->key < y->key ? -1 : x->key > y->key;
}

size_t dp_sketch_export(const struct dp_sketch *s, struct dp_sketch_entry *out) {
        size_t n = 0;

        if (s->used == 0)
                return 0;       /* perhaps never allocated (dp_tracker_keep_granules()) */
        /* Up to the last used slot only. */
        for (size_t i = 0; i < DP_SKETCH_SLOTS && n < s->used; i++)
                if (s->slots[i].key != DP_SKETCH_EMPTY)
                        out[n++] = s->slots[i];
        qsort(out, n, sizeof(*out), entry_compare);
        return n;
}
