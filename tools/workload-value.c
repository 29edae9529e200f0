/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "workload-core.h"
#include "workload-value.h"

static uint64_t next_random(uint64_t *s) {
        /* xorshift64: the layout only has to be the same for every run with a seed. */
        *s ^= *s << 13;
        *s ^= *s >> 7;
        *s ^= *s << 17;
        return *s;
}

static int cmp_range(const void *a, const void *b) {
        const struct dp_range *x = a, *y = b;

        return x->start < y->start ? -1 : x->start > y->start;
}

/* Picks distinct chunk slots, none touching another, so that every chunk is
 * its own island: the first nr_chunks hot, the rest cold. */
static int lay_out_chunks(struct value_workload *w) {
        uint64_t slots = w->span_bytes / w->chunk_bytes, seed = 0x9e3779b97f4a7c15ull ^ w->seed;
        size_t total = w->nr_chunks + w->nr_cold_chunks;
        _cleanup_free_ uint64_t *taken = NULL;
        struct value_phase *p = &w->phases[0];

        if (total == 0 || w->nr_chunks > VALUE_MAX_CHUNKS || w->nr_cold_chunks > VALUE_MAX_CHUNKS ||
            slots < 4 * total) {
                fprintf(stderr, "workload: %zu chunks of %" PRIu64 " KiB do not fit sparsely in %" PRIu64 " MiB\n",
                        total, w->chunk_bytes >> 10, w->span_bytes >> 20);
                return -EINVAL;
        }
        taken = calloc(total, sizeof(*taken));
        if (!taken)
                return -ENOMEM;
        for (size_t i = 0; i < total;) {
                uint64_t s = next_random(&seed) % slots;
                bool clash = false;

                for (size_t k = 0; k < i; k++)
                        clash |= taken[k] + 1 >= s && taken[k] <= s + 1;
                if (clash)
                        continue;
                taken[i] = s;
                struct dp_range r = { (uint64_t) (uintptr_t) w->base + s * w->chunk_bytes, 0 };
                r.end = r.start + w->chunk_bytes;
                if (i < w->nr_chunks)
                        p->hot[p->nr_hot++] = r;
                else
                        w->cold[w->nr_cold++] = r;
                i++;
        }
        qsort(p->hot, p->nr_hot, sizeof(p->hot[0]), cmp_range);
        qsort(w->cold, w->nr_cold, sizeof(w->cold[0]), cmp_range);
        w->nr_phases = 1;
        return 0;
}

static int lay_out_window(struct value_workload *w) {
        uint64_t base = (uint64_t) (uintptr_t) w->base;

        if (w->window_bytes == 0 || w->window_at + w->window_bytes > w->span_bytes ||
            (w->move_after_s > 0 && w->move_to + w->window_bytes > w->span_bytes)) {
                fprintf(stderr, "workload: the window does not fit in the span\n");
                return -EINVAL;
        }
        w->phases[0] = (struct value_phase) { .at_s = 0, .nr_hot = 1 };
        w->phases[0].hot[0] = (struct dp_range) { base + w->window_at, base + w->window_at + w->window_bytes };
        w->nr_phases = 1;
        if (w->move_after_s > 0) {
                w->phases[1] = (struct value_phase) { .at_s = w->move_after_s, .nr_hot = 1 };
                w->phases[1].hot[0] = (struct dp_range) { base + w->move_to, base + w->move_to + w->window_bytes };
                w->nr_phases = 2;
        }
        /* The whole span is touched once: cold but resident, as a real heap. */
        w->cold[0] = (struct dp_range) { base, base + w->span_bytes };
        w->nr_cold = 1;
        return 0;
}

int value_map(struct value_workload *w) {
        bool window = strcmp(w->shape, "window") == 0;
        long page = sysconf(_SC_PAGESIZE);
        void *base;
        int r;

        if (!window && strcmp(w->shape, "chunks") != 0) {
                fprintf(stderr, "workload: --shape wants window or chunks, got '%s'\n", w->shape);
                return -EINVAL;
        }
        base = mmap(NULL, w->span_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED)
                return -errno;
        w->base = base;
        /* Base pages, so that one re-fault costs one page, as the control samples it. */
        madvise(base, w->span_bytes, MADV_NOHUGEPAGE);
        r = window ? lay_out_window(w) : lay_out_chunks(w);
        if (r < 0)
                return r;
        for (size_t i = 0; i < w->nr_cold; i++)
                workload_touch((char *) (uintptr_t) w->cold[i].start, dp_range_size(&w->cold[i]), (size_t) page);
        for (size_t i = 0; i < w->phases[0].nr_hot; i++)
                workload_touch((char *) (uintptr_t) w->phases[0].hot[i].start, dp_range_size(&w->phases[0].hot[i]),
                               (size_t) page);
        return 0;
}

void value_describe(const struct value_workload *w) {
        uint64_t base = (uint64_t) (uintptr_t) w->base;

        printf("{\"pid\": %ld, \"map\": [%" PRIu64 ", %" PRIu64 "], \"phases\": [", (long) getpid(), base,
               base + w->span_bytes);
        for (size_t p = 0; p < w->nr_phases; p++) {
                printf("%s{\"at_s\": %g, \"hot\": [", p ? ", " : "", w->phases[p].at_s);
                for (size_t i = 0; i < w->phases[p].nr_hot; i++)
                        printf("%s[%" PRIu64 ", %" PRIu64 "]", i ? ", " : "", w->phases[p].hot[i].start,
                               w->phases[p].hot[i].end);
                printf("]}");
        }
        printf("]}\n");
        fflush(stdout);
}

static const struct value_phase *phase_at(const struct value_workload *w, double t) {
        size_t p = 0;

        while (p + 1 < w->nr_phases && t >= w->phases[p + 1].at_s)
                p++;
        return &w->phases[p];
}

/* One re-fault at a random page of the phase's hot set: what the control samples. */
static void refault(const struct value_phase *p, uint64_t *seed, size_t page) {
        uint64_t total = dp_ranges_total_size(p->hot, p->nr_hot), off = next_random(seed) % total;

        for (size_t i = 0; i < p->nr_hot; i++) {
                uint64_t size = dp_range_size(&p->hot[i]);

                if (off < size) {
                        char *at = (char *) (uintptr_t) ((p->hot[i].start + off) & ~(uint64_t) (page - 1));

                        madvise(at, page, MADV_DONTNEED);
                        ((volatile char *) at)[0]++;
                        return;
                }
                off -= size;
        }
}

void value_run(struct value_workload *w, volatile sig_atomic_t *stop) {
        size_t page = (size_t) sysconf(_SC_PAGESIZE);
        uint64_t seed = 0x2545f4914f6cdd1dull ^ w->seed;
        double last = w->t0, owed = 0;

        while (!*stop) {
                double tick = workload_now(), t = tick - w->t0, left;
                const struct value_phase *p = phase_at(w, t);

                if (w->seconds > 0 && t >= w->seconds)
                        break;
                for (size_t i = 0; i < p->nr_hot; i++)
                        workload_touch((char *) (uintptr_t) p->hot[i].start, dp_range_size(&p->hot[i]), page);
                owed += w->faults_per_s * (tick - last);
                last = tick;
                for (; owed >= 1; owed--)
                        refault(p, &seed, page);
                left = w->touch_ms / 1e3 - (workload_now() - tick);
                if (left > 0) {
                        struct timespec ts = { (time_t) left, (long) ((left - (time_t) left) * 1e9) };

                        nanosleep(&ts, NULL);
                }
        }
}
