/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "damon-perfd/cpu-list.h"
#include "damon-perfd/macro.h"
#include "damon-perfd/replay.h"
#include "damon-perfd/ring-reader.h"
#include "damon-perfd/spsc.h"

/* Enough to batch the tracker's work, small enough to stay in cache. */
#define REPLAY_QUEUE_CAPACITY 4096
#define REPLAY_DRAIN_AT 1024
/* How far samples of different CPUs may be apart in a capture. */
#define REPLAY_TICK_LAG_NS 100000000ull

struct replay_cpu {
        struct dp_ring_reader reader;   /* reader-owned counters live here */
        struct dp_spsc *queue;
        struct dp_counter_values tracker_counters;
};

struct dp_replay {
        const struct dp_source *source;
        struct dp_tracker *tracker;
        bool phys;
        struct replay_cpu *cpus[DP_CPU_MAX];
        size_t nr_cpus;
        uint64_t max_time;
        dp_replay_sample_fn hook;
        void *hook_data;
};

/* Decodes only what the kernel filled in: ADDR, PHYS_ADDR, DATA_SRC, WEIGHT. */
static const struct dp_source replay_generic_source = {
        .name = "capture",
        .pmu = "capture",
        .description = "kernel-filled fields of a perf.data capture",
        .hardware = false,
        .decode = dp_source_decode_generic,
};

int dp_replay_new(const struct dp_source *source, struct dp_tracker *tracker, bool phys,
                  struct dp_replay **ret) {
        struct dp_replay *rp;

        if (!tracker || !ret)
                return -EINVAL;
        rp = calloc(1, sizeof(*rp));
        if (!rp)
                return -ENOMEM;
        rp->source = source ?: &replay_generic_source;
        rp->tracker = tracker;
        rp->phys = phys;
        *ret = rp;
        return 0;
}

struct dp_replay *dp_replay_free(struct dp_replay *rp) {
        if (!rp)
                return NULL;
        for (size_t i = 0; i < DP_CPU_MAX; i++)
                if (rp->cpus[i]) {
                        dp_spsc_free(rp->cpus[i]->queue);
                        free(rp->cpus[i]);
                }
        free(rp);
        return NULL;
}

void dp_replay_set_sample_hook(struct dp_replay *rp, dp_replay_sample_fn fn, void *userdata) {
        rp->hook = fn;
        rp->hook_data = userdata;
}

/* The dummy and other bookkeeping events of a capture carry no accesses. */
static bool is_access_event(const struct perf_event_attr *attr) {
        return attr && !(attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_DUMMY);
}

struct chunk {
        uint32_t pid;
        uint64_t chunk;
};

static int chunk_cmp(const void *a, const void *b) {
        const struct chunk *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static int add_targets(struct dp_replay *rp, struct chunk *chunks, size_t n) {
        _cleanup_free_ struct dp_range *ranges = calloc(n ?: 1, sizeof(*ranges));
        int added = 0, r;

        if (!ranges)
                return -ENOMEM;
        qsort(chunks, n, sizeof(*chunks), chunk_cmp);
        for (size_t i = 0; i < n;) {
                uint32_t pid = chunks[i].pid;
                size_t nr = 0;

                for (; i < n && chunks[i].pid == pid; i++) {
                        uint64_t start = chunks[i].chunk << DP_REPLAY_CHUNK_SHIFT;

                        if (nr && ranges[nr - 1].end >= start)
                                ranges[nr - 1].end = DP_MAX(ranges[nr - 1].end, start + (1ull << DP_REPLAY_CHUNK_SHIFT));
                        else
                                ranges[nr++] = (struct dp_range) { start, start + (1ull << DP_REPLAY_CHUNK_SHIFT) };
                }
                r = dp_tracker_add_target(rp->tracker, pid, ranges, nr);
                if (r == -ENOSPC)
                        break;          /* max_targets reached: the rest stay miss_tgid */
                if (r < 0 && r != -EEXIST)
                        return r;
                added += r == 0;
        }
        return added;
}

int dp_replay_plan_targets(struct dp_replay *rp, struct dp_perf_data *data) {
        _cleanup_free_ struct chunk *chunks = NULL;
        struct dp_perf_data_record rec;
        size_t n = 0, cap = 0;
        int r;

        dp_perf_data_rewind(data);
        while ((r = dp_perf_data_next(data, &rec)) > 0) {
                struct dp_sample s = {0};
                struct chunk c;

                if (rec.header->type != PERF_RECORD_SAMPLE || !is_access_event(rec.attr))
                        continue;
                if (rp->source->decode(&rec.sample, &s) < 0 || dp_sample_classify(&s, rp->phys) != DP_C_VALID)
                        continue;
                c = rp->phys ? (struct chunk) { 0, s.paddr >> DP_REPLAY_CHUNK_SHIFT }
                             : (struct chunk) { s.pid, s.vaddr >> DP_REPLAY_CHUNK_SHIFT };
                /* Samples come in runs on the same chunk: skip the repeats early. */
                if (n && chunks[n - 1].pid == c.pid && chunks[n - 1].chunk == c.chunk)
                        continue;
                if (n == cap) {
                        struct chunk *grown = realloc(chunks, (cap = cap ? cap * 2 : 1024) * sizeof(*chunks));

                        if (!grown)
                                return -ENOMEM;
                        chunks = grown;
                }
                chunks[n++] = c;
        }
        dp_perf_data_rewind(data);
        if (r < 0)
                return r;
        return add_targets(rp, chunks, n);
}

static struct replay_cpu *replay_cpu(struct dp_replay *rp, size_t cpu, const struct perf_event_attr *attr) {
        struct replay_cpu *c = rp->cpus[cpu];

        if (c)
                return c;
        c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        if (dp_spsc_new(REPLAY_QUEUE_CAPACITY, &c->queue) < 0 ||
            dp_ring_reader_init(&c->reader, attr, rp->source, c->queue, (uint16_t) cpu, rp->phys) < 0) {
                dp_spsc_free(c->queue);
                free(c);
                return NULL;
        }
        rp->cpus[cpu] = c;
        rp->nr_cpus = DP_MAX(rp->nr_cpus, cpu + 1);
        return c;
}

static void drain(struct dp_replay *rp, struct replay_cpu *c) {
        uint64_t *peak = &c->reader.counters.v[DP_C_RING_PEAK];
        const struct dp_sample *first;
        size_t n;

        dp_spsc_publish(c->queue);
        *peak = DP_MAX(*peak, (uint64_t) dp_spsc_depth_producer(c->queue));
        while ((n = dp_spsc_peek(c->queue, &first)) > 0) {
                if (rp->hook)
                        for (size_t i = 0; i < n; i++)
                                rp->hook(&first[i], rp->hook_data);
                dp_tracker_account_batch(rp->tracker, first, n, &c->tracker_counters);
                dp_spsc_consume(c->queue, n);
                c->tracker_counters.v[DP_C_DEQUEUE] += n;
                c->tracker_counters.v[DP_C_DRAIN]++;
        }
        /* Close only aggregations whose samples are all in: captures are
         * ordered per CPU, not across CPUs (perf flushes them in rounds). */
        if (rp->max_time > REPLAY_TICK_LAG_NS)
                dp_tracker_tick(rp->tracker, rp->max_time - REPLAY_TICK_LAG_NS);
}

int dp_replay_run(struct dp_replay *rp, struct dp_perf_data *data) {
        struct dp_perf_data_record rec;
        int r;

        dp_perf_data_rewind(data);
        while ((r = dp_perf_data_next(data, &rec)) > 0) {
                struct replay_cpu *c;
                size_t cpu = 0;

                if (!is_access_event(rec.attr))
                        continue;
                if (rec.header->type == PERF_RECORD_SAMPLE) {
                        if (rec.sample.present & PERF_SAMPLE_CPU)
                                cpu = rec.sample.cpu;
                } else if (rec.sample_id.present & PERF_SAMPLE_CPU)
                        cpu = rec.sample_id.cpu;
                if (cpu >= DP_CPU_MAX)
                        cpu = 0;
                c = replay_cpu(rp, cpu, rec.attr);
                if (!c)
                        return -ENOMEM;

                if (rec.header->type != PERF_RECORD_SAMPLE) {
                        dp_ring_reader_take_other(&c->reader, rec.header);
                        continue;
                }
                c->reader.counters.v[DP_C_CALLBACK]++;
                rp->max_time = DP_MAX(rp->max_time, rec.sample.time);
                dp_ring_reader_take_sample(&c->reader, &rec.sample);
                if (dp_spsc_depth_producer(c->queue) >= REPLAY_DRAIN_AT)
                        drain(rp, c);
        }
        for (size_t i = 0; i < rp->nr_cpus; i++)
                if (rp->cpus[i])
                        drain(rp, rp->cpus[i]);
        /* The capture is over: close the last aggregation too. */
        dp_tracker_tick(rp->tracker, rp->max_time + REPLAY_TICK_LAG_NS);
        return r;
}

size_t dp_replay_nr_cpus(const struct dp_replay *rp) {
        return rp->nr_cpus;
}

void dp_replay_counters(const struct dp_replay *rp, size_t cpu, struct dp_counter_values *out) {
        memset(out, 0, sizeof(*out));
        if (cpu >= rp->nr_cpus || !rp->cpus[cpu])
                return;
        for (int i = 0; i < _DP_C_MAX; i++)
                out->v[i] = dp_counter_owner(i) == DP_OWNER_TRACKER ? rp->cpus[cpu]->tracker_counters.v[i]
                                                                    : rp->cpus[cpu]->reader.counters.v[i];
}
