/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-list.h"
#include "macro.h"
#include "replay.h"
#include "ring-reader.h"
#include "spsc.h"
#include "replay-aux.h"
#include "replay-targets.h"

/* Enough to batch the tracker's work, small enough to stay in cache. */
#define REPLAY_QUEUE_CAPACITY 4096
#define REPLAY_DRAIN_AT 1024
/* How far samples of different CPUs may be apart in a capture. */
#define REPLAY_TICK_LAG_NS 100000000ull

struct replay_cpu {
        struct dp_ring_reader reader;   /* reader-owned counters live here */
        int layout_attr;                /* the attr whose layout reader.layout is */
        struct replay_aux_cpu *aux;     /* captures with AUX data only */
        struct dp_spsc *queue;
        struct dp_counter_values tracker_counters;
        bool grown_valid;               /* the chunk the last sample grew targets by */
        uint32_t grown_pid;
        uint64_t grown_chunk;
};

struct dp_replay {
        const struct dp_source *source;         /* for attrs without one of their own */
        const struct dp_source **attr_sources;  /* by attr index; NULL: source */
        size_t n_attr_sources;
        struct dp_source_context context;
        bool has_context;
        int aux_attr;                           /* the attr whose AUX data the capture holds, or -1 */
        struct dp_spe_clock clock;              /* the capture's PERF_RECORD_TIME_CONV */
        bool has_clock;
        struct dp_thread_map *threads;          /* AUX captures: threads' processes */
        struct dp_tracker *tracker;
        bool phys;
        bool planned;           /* dp_replay_plan_targets() added every target */
        struct replay_growth growth; /* else targets grow as the run meets them */
        struct replay_cpu *cpus[DP_CPU_MAX];
        size_t nr_cpus;
        uint64_t max_time;
        dp_replay_sample_fn hook;
        void *hook_data;
        dp_sample_observer_fn observe;
        void *observe_data;
        dp_replay_aggregation_fn aggregation_hook;
        void *aggregation_data;
        bool has_busiest;
        uint32_t busiest_tgid;
        uint64_t busiest_samples;
};

/* Decodes only what the kernel filled in: ADDR, PHYS_ADDR, DATA_SRC, WEIGHT. */
const struct dp_source dp_replay_generic_source = {
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
        rp->source = source ?: &dp_replay_generic_source;
        rp->aux_attr = -1;
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
                        free(rp->cpus[i]->aux);
                        free(rp->cpus[i]);
                }
        replay_growth_done(&rp->growth);
        free(rp->attr_sources);
        free(rp->threads);
        free(rp);
        return NULL;
}

int dp_replay_set_attr_source(struct dp_replay *rp, size_t index, const struct dp_source *source) {
        if (!rp || index > INT32_MAX)
                return -EINVAL;
        if (index >= rp->n_attr_sources) {
                const struct dp_source **v = realloc(rp->attr_sources, (index + 1) * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                memset(v + rp->n_attr_sources, 0, (index + 1 - rp->n_attr_sources) * sizeof(*v));
                rp->attr_sources = v;
                rp->n_attr_sources = index + 1;
        }
        rp->attr_sources[index] = source;
        return 0;
}

void dp_replay_set_source_context(struct dp_replay *rp, const struct dp_source_context *context) {
        rp->has_context = context != NULL;
        if (context)
                rp->context = *context;
        /* Readers made before point at it already, or at nothing. */
        for (size_t i = 0; i < rp->nr_cpus; i++)
                if (rp->cpus[i])
                        dp_ring_reader_set_context(&rp->cpus[i]->reader, rp->has_context ? &rp->context : NULL);
}

int dp_replay_use_capture_sources(struct dp_replay *rp, const struct dp_perf_data *data, dp_replay_choice_fn fn,
                                  void *userdata, const struct dp_source **ret_primary) {
        const struct dp_source *primary = NULL;
        struct dp_source_context context;
        struct dp_capture_choice choice;
        struct dp_perf_cpuid cpuid;
        bool known;
        int r;

        if (!rp || !data)
                return -EINVAL;
        known = dp_perf_data_cpuid(data, &cpuid) == 0;
        for (size_t i = 0; i < dp_perf_data_attr_count(data); i++) {
                r = dp_capture_choose(data, i, known ? &cpuid : NULL, &choice);
                if (r < 0 && r != -EBADMSG)
                        return r;
                if (fn)
                        fn(i, &choice, userdata);
                r = dp_replay_set_attr_source(rp, i, choice.source ?: &dp_replay_generic_source);
                if (r < 0)
                        return r;
                if (choice.access && !primary)
                        primary = choice.source ?: &dp_replay_generic_source;
        }
        dp_capture_source_context(known ? &cpuid : NULL, &context);
        dp_replay_set_source_context(rp, &context);
        if (ret_primary)
                *ret_primary = primary ?: &dp_replay_generic_source;
        return primary ? 0 : -ENOENT;
}

static const struct dp_source *source_for(const struct dp_replay *rp, int attr_index) {
        if (attr_index >= 0 && (size_t) attr_index < rp->n_attr_sources && rp->attr_sources[attr_index])
                return rp->attr_sources[attr_index];
        return rp->source;
}

static const struct dp_source_context *context_of(const struct dp_replay *rp) {
        return rp->has_context ? &rp->context : NULL;
}

void dp_replay_set_sample_hook(struct dp_replay *rp, dp_replay_sample_fn fn, void *userdata) {
        rp->hook = fn;
        rp->hook_data = userdata;
}

void dp_replay_set_observer(struct dp_replay *rp, dp_sample_observer_fn fn, void *userdata) {
        rp->observe = fn;
        rp->observe_data = userdata;
}

void dp_replay_set_aggregation_hook(struct dp_replay *rp, dp_replay_aggregation_fn fn, void *userdata) {
        rp->aggregation_hook = fn;
        rp->aggregation_data = userdata;
}

/* The dummy and other bookkeeping events of a capture carry no accesses. */
static bool is_access_event(const struct perf_event_attr *attr) {
        return attr && !(attr->type == PERF_TYPE_SOFTWARE && attr->config == PERF_COUNT_SW_DUMMY);
}

/* The first access event decoded from AUX data: its PERF_RECORD_AUXTRACE
 * payloads are the samples (perf records one AUX area per CPU). */
static int find_aux_attr(struct dp_replay *rp, const struct dp_perf_data *data) {
        rp->aux_attr = -1;
        for (size_t i = 0; i < dp_perf_data_attr_count(data) && i <= INT32_MAX; i++)
                if (is_access_event(dp_perf_data_attr(data, i)) &&
                    source_for(rp, (int) i)->aux_format == DP_AUX_ARM_SPE) {
                        rp->aux_attr = (int) i;
                        break;
                }
        if (rp->aux_attr >= 0 && !rp->threads) {
                rp->threads = calloc(1, sizeof(*rp->threads));
                if (!rp->threads)
                        return -ENOMEM;
        }
        return 0;
}

/* Records that tell which task runs on a CPU or which process a thread is
 * in, whichever event they belong to (perf puts them on its dummy event). */
static bool is_task_record(uint32_t type) {
        return type == PERF_RECORD_SWITCH || type == PERF_RECORD_SWITCH_CPU_WIDE || type == PERF_RECORD_COMM ||
               type == PERF_RECORD_ITRACE_START || type == PERF_RECORD_FORK;
}

static int chunk_cmp(const void *a, const void *b) {
        const struct replay_chunk *x = a, *y = b;

        if (x->pid != y->pid)
                return x->pid < y->pid ? -1 : 1;
        return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

static int add_targets(struct dp_replay *rp, struct replay_chunk *chunks, size_t n) {
        _cleanup_free_ struct dp_range *ranges = calloc(n ?: 1, sizeof(*ranges));
        int added = 0, r;

        if (!ranges)
                return -ENOMEM;
        if (n == 0)
                return 0;       /* chunks is NULL: a capture without a usable sample */
        qsort(chunks, n, sizeof(*chunks), chunk_cmp);
        for (size_t i = 0; i < n;) {
                uint32_t pid = chunks[i].pid;
                uint64_t samples = 0;
                size_t nr = 0;

                for (; i < n && chunks[i].pid == pid; i++) {
                        uint64_t start = chunks[i].chunk << DP_REPLAY_CHUNK_SHIFT;

                        samples += chunks[i].samples;

                        if (nr && ranges[nr - 1].end >= start)
                                ranges[nr - 1].end = DP_MAX(ranges[nr - 1].end, replay_chunk_end(chunks[i].chunk));
                        else
                                ranges[nr++] = (struct dp_range) { start, replay_chunk_end(chunks[i].chunk) };
                }
                r = dp_tracker_add_target(rp->tracker, pid, ranges, nr);
                if (r == -ENOSPC)
                        break;          /* max_targets reached: the rest stay miss_tgid */
                if (r < 0 && r != -EEXIST)
                        return r;
                added += r == 0;
                if (!rp->has_busiest || samples > rp->busiest_samples) {
                        rp->has_busiest = true;
                        rp->busiest_tgid = pid;
                        rp->busiest_samples = samples;
                }
        }
        return added;
}

/* Whether the reader will find a sample record valid, and where it points.
 * Where the source reads it in place only the few fields that decide are
 * loaded, to the same outcome as dp_sample_classify() of the full decode. */
static bool sample_where(const struct dp_replay *rp, const struct dp_perf_data_record *rec, uint32_t *pid,
                         uint64_t *addr) {
        const struct dp_perf_layout *l = rec->layout;
        const struct dp_source *source = source_for(rp, rec->attr_index);
        struct dp_sample s = {0};
        int r;

        if (dp_source_reads_in_place(source, l, rec->header)) {
                const uint8_t *body = (const uint8_t *) rec->header + sizeof(*rec->header);
                uint64_t vaddr, paddr;

                if (l->off_addr < 0)
                        return false;   /* -ENODATA */
                vaddr = dp_load_u64(body + l->off_addr);
                paddr = l->off_phys_addr >= 0 ? dp_load_u64(body + l->off_phys_addr) : 0;
                if (vaddr == 0 || vaddr >> 63 || (rp->phys && paddr == 0))
                        return false;
                *pid = rp->phys || l->off_tid < 0 ? 0 : dp_load_u32(body + l->off_tid);
                *addr = rp->phys ? paddr : vaddr;
                return true;
        }

        r = l->sample_size ? dp_source_decode_record(source, context_of(rp), l, rec->header, &s)
                           : source->decode(&rec->sample, context_of(rp), &s);
        if (r < 0 || dp_sample_classify(&s, rp->phys) != DP_C_VALID)
                return false;
        *pid = rp->phys ? 0 : s.pid;
        *addr = rp->phys ? s.paddr : s.vaddr;
        return true;
}

struct plan_collect {
        struct replay_chunk_set *set;
        bool phys;
        int error;
};

static void plan_collect(const struct dp_sample *s, void *userdata) {
        struct plan_collect *pc = userdata;
        int r;

        r = replay_chunk_set_add(pc->set, pc->phys ? 0 : s->pid,
                                 (pc->phys ? s->paddr : s->vaddr) >> DP_REPLAY_CHUNK_SHIFT);
        if (r < 0 && pc->error == 0)
                pc->error = r;
}

/* AUX samples exist only once their bytes are decoded: the plan of an AUX
 * capture is a dry run through a scratch tracker, with the same sources,
 * that notes every sample the tracker would take. */
static int plan_by_dry_run(struct dp_replay *rp, struct dp_perf_data *data, struct replay_chunk_set *set) {
        struct plan_collect pc = { .set = set, .phys = rp->phys };
        struct dp_tracker_config tc;
        struct dp_tracker *scratch;
        struct dp_replay *dry = NULL;
        int r;

        dp_tracker_config_init(&tc);
        tc.mode = rp->phys ? DP_TRACKER_PADDR : DP_TRACKER_VADDR;
        tc.max_targets = 1;     /* it accounts nothing we keep */
        r = dp_tracker_new(&tc, &scratch);
        if (r < 0)
                return r;
        r = dp_replay_new(rp->source, scratch, rp->phys, &dry);
        for (size_t i = 0; r >= 0 && i < rp->n_attr_sources; i++)
                r = dp_replay_set_attr_source(dry, i, rp->attr_sources[i]);
        if (r >= 0) {
                dp_replay_set_source_context(dry, context_of(rp));
                dp_replay_set_sample_hook(dry, plan_collect, &pc);
                r = dp_replay_run(dry, data);
        }
        dp_replay_free(dry);
        dp_tracker_free(scratch);
        return r < 0 ? r : pc.error;
}

int dp_replay_plan_targets(struct dp_replay *rp, struct dp_perf_data *data) {
        struct replay_chunk_set set = {};
        struct dp_perf_data_record rec;
        int r;

        r = find_aux_attr(rp, data);
        if (r < 0)
                return r;
        if (rp->aux_attr >= 0) {
                r = plan_by_dry_run(rp, data, &set);
                goto done;
        }
        dp_perf_data_rewind(data);
        while ((r = dp_perf_data_next_sequential(data, &rec)) > 0) {
                uint64_t addr;
                uint32_t pid;

                if (rec.header->type != PERF_RECORD_SAMPLE || !is_access_event(rec.attr))
                        continue;
                if (!sample_where(rp, &rec, &pid, &addr))
                        continue;
                r = replay_chunk_set_add(&set, pid, addr >> DP_REPLAY_CHUNK_SHIFT);
                if (r < 0)
                        break;
        }
done:
        dp_perf_data_rewind(data);
        if (r >= 0) {
                r = add_targets(rp, set.slots, replay_chunk_set_pack(&set));
                rp->planned = r >= 0;
        }
        replay_chunk_set_done(&set);
        return r;
}

int dp_replay_busiest_target(const struct dp_replay *rp, uint32_t *ret_tgid, uint64_t *ret_samples) {
        if (!rp->has_busiest)
                return -ENOENT;
        *ret_tgid = rp->busiest_tgid;
        *ret_samples = rp->busiest_samples;
        return 0;
}

/* Time passes for the tracker; the hook sees every aggregation. */
static void tick(struct dp_replay *rp, uint64_t now_ns) {
        if (dp_tracker_tick(rp->tracker, now_ns) && rp->aggregation_hook)
                rp->aggregation_hook(rp->tracker, rp->aggregation_data);
}

static struct replay_cpu *replay_cpu(struct dp_replay *rp, size_t cpu, const struct dp_perf_data_record *rec) {
        struct replay_cpu *c = rp->cpus[cpu];

        if (c)
                return c;
        c = calloc(1, sizeof(*c));
        if (!c)
                return NULL;
        if ((rp->aux_attr >= 0 && !(c->aux = calloc(1, sizeof(*c->aux)))) ||
            dp_spsc_new(REPLAY_QUEUE_CAPACITY, &c->queue) < 0 ||
            dp_ring_reader_init(&c->reader, rec->attr, source_for(rp, rec->attr_index), c->queue, (uint16_t) cpu,
                                rp->phys) < 0) {
                dp_spsc_free(c->queue);
                free(c->aux);
                free(c);
                return NULL;
        }
        dp_ring_reader_set_context(&c->reader, context_of(rp));
        dp_ring_reader_set_observer(&c->reader, rp->observe, rp->observe_data);
        c->layout_attr = rec->attr_index;
        rp->cpus[cpu] = c;
        rp->nr_cpus = DP_MAX(rp->nr_cpus, cpu + 1);
        return c;
}

/* The first of @s[@i..@n) not in the chunk (and, by virtual address, of
 * the pid) given: a tight scan, as runs of one chunk are the rule. */
static size_t same_chunk_until(const struct dp_sample *s, size_t i, size_t n, bool phys, uint32_t pid,
                               uint64_t chunk) {
        if (phys)
                while (i < n && s[i].paddr >> DP_REPLAY_CHUNK_SHIFT == chunk)
                        i++;
        else
                while (i < n && s[i].pid == pid && s[i].vaddr >> DP_REPLAY_CHUNK_SHIFT == chunk)
                        i++;
        return i;
}

/* Without a plan, targets grow by the chunks samples are the first in, before
 * those are accounted.  Runs of one chunk cost a compare. */
static int grow_targets(struct dp_replay *rp, struct replay_cpu *c, const struct dp_sample *s, size_t n) {
        size_t i = c->grown_valid ? same_chunk_until(s, 0, n, rp->phys, c->grown_pid, c->grown_chunk) : 0;

        while (i < n) {
                uint32_t pid = rp->phys ? 0 : s[i].pid;
                uint64_t addr = rp->phys ? s[i].paddr : s[i].vaddr;
                int r = replay_growth_note(&rp->growth, rp->tracker, pid, addr);

                if (r < 0)
                        return r;
                c->grown_valid = true;
                c->grown_pid = pid;
                c->grown_chunk = addr >> DP_REPLAY_CHUNK_SHIFT;
                i = same_chunk_until(s, i + 1, n, rp->phys, pid, c->grown_chunk);
        }
        return 0;
}

static int drain(struct dp_replay *rp, struct replay_cpu *c) {
        uint64_t *peak = &c->reader.counters.v[DP_C_RING_PEAK];
        const struct dp_sample *first;
        size_t n;
        int r;

        dp_spsc_publish(c->queue);
        *peak = DP_MAX(*peak, (uint64_t) dp_spsc_depth_producer(c->queue));
        while ((n = dp_spsc_peek(c->queue, &first)) > 0) {
                if (rp->hook)
                        for (size_t i = 0; i < n; i++)
                                rp->hook(&first[i], rp->hook_data);
                if (!rp->planned) {
                        r = grow_targets(rp, c, first, n);
                        if (r < 0)
                                return r;
                }
                dp_tracker_account_batch(rp->tracker, first, n, &c->tracker_counters);
                dp_spsc_consume(c->queue, n);
                c->tracker_counters.v[DP_C_DEQUEUE] += n;
                c->tracker_counters.v[DP_C_DRAIN]++;
        }
        /* Close only aggregations whose samples are all in: captures are
         * ordered per CPU, not across CPUs (perf flushes them in rounds). */
        if (rp->max_time > REPLAY_TICK_LAG_NS)
                tick(rp, rp->max_time - REPLAY_TICK_LAG_NS);
        return 0;
}

/* @n samples of one fixed-size layout from @first, all of one CPU: taken in
 * pieces that end where one at a time would drain, so that the run does the
 * very same work as sample by sample. */
static int take_run(struct dp_replay *rp, struct replay_cpu *c, const struct dp_perf_layout *l,
                    const struct perf_event_header *first, size_t n) {
        const uint8_t *p = (const uint8_t *) first;

        while (n > 0) {
                size_t depth = dp_spsc_depth_producer(c->queue);
                size_t k = DP_MIN(n, depth < REPLAY_DRAIN_AT ? REPLAY_DRAIN_AT - depth : 1);

                /* One CPU's run is in its ring's time order, so its ends
                 * bound it: no pass over every sample.  Were one in between
                 * later, aggregations would only close later, never early. */
                if (l->off_time >= 0) {
                        const uint8_t *time = p + sizeof(*first) + l->off_time;

                        rp->max_time = DP_MAX(rp->max_time, dp_load_u64(time));
                        rp->max_time = DP_MAX(rp->max_time, dp_load_u64(time + (k - 1) * l->sample_size));
                }
                dp_ring_reader_take_records(&c->reader, l, (const struct perf_event_header *) p, k);
                if (dp_spsc_depth_producer(c->queue) >= REPLAY_DRAIN_AT) {
                        int r = drain(rp, c);

                        if (r < 0)
                                return r;
                }
                p += k * l->sample_size;
                n -= k;
        }
        return 0;
}

/* A non-sample record through the CPU's reader, which parses its trailer
 * with the layout of the attr it belongs to; AUX captures also keep the
 * CPU's task history and the stretches awaiting their bytes. */
static void take_other(struct dp_replay *rp, struct replay_cpu *c, const struct dp_perf_data_record *rec) {
        const struct perf_event_header *h = rec->header;
        uint32_t prev_pid = c->reader.aux.pid, prev_tid = c->reader.aux.tid;
        struct dp_aux_record aux;

        if (rec->layout && c->layout_attr != rec->attr_index) {
                c->reader.layout = *rec->layout;
                c->layout_attr = rec->attr_index;
        }
        dp_ring_reader_take_other(&c->reader, h);
        if (!c->aux)
                return;
        replay_note_threads(rp->threads, rec);
        if (rec->sample_id.present & PERF_SAMPLE_TIME)
                c->aux->last_time = DP_MAX(c->aux->last_time, rec->sample_id.time);
        if (h->type == PERF_RECORD_AUX && dp_perf_parse_aux(h, h->size, &aux) == 0)
                replay_aux_note_stretch(c->aux, &c->reader, &aux, c->aux->last_time);
        else if (is_task_record(h->type) && h->type != PERF_RECORD_FORK)
                replay_aux_note_task(c->aux, &c->reader, rec, prev_pid, prev_tid);
}

/* One AUXTRACE payload: decoded piece by piece, each in its stretch's
 * context, in runs no longer than the queue has room for before a drain. */
static int take_aux_payload(struct dp_replay *rp, struct replay_cpu *c, const struct replay_auxtrace *at,
                            const void *payload) {
        struct replay_payload p;
        struct dp_aux_segment seg;
        struct dp_spe_context ctx;

        c->reader.source = source_for(rp, rp->aux_attr);
        replay_payload_init(&p, at, payload);
        while (replay_payload_next(c->aux, &c->reader, &p, rp->has_clock ? &rp->clock : NULL, rp->threads, &seg,
                                   &ctx)) {
                rp->max_time = DP_MAX(rp->max_time, ctx.time);
                while (seg.size > 0) {
                        size_t depth = dp_spsc_depth_producer(c->queue);
                        size_t used = dp_ring_reader_take_spe_bytes(&c->reader, &seg, &ctx,
                                                                     depth < REPLAY_DRAIN_AT ? REPLAY_DRAIN_AT - depth
                                                                                             : 1);

                        seg.data += used;
                        seg.size -= used;
                        seg.offset += used;
                        if (dp_spsc_depth_producer(c->queue) >= REPLAY_DRAIN_AT) {
                                int r = drain(rp, c);

                                if (r < 0)
                                        return r;
                        }
                }
        }
        return 0;
}

/* perf's own records: AUX data and the clock that converts its timestamps;
 * the rest (AUXTRACE_INFO, FINISHED_ROUND, ...) carry nothing for us. */
static int take_user_record(struct dp_replay *rp, struct dp_perf_data *data, const struct dp_perf_data_record *rec) {
        const struct perf_event_attr *aux_attr;
        struct dp_perf_data_record owner;
        struct replay_auxtrace at;
        struct replay_cpu *c;
        size_t cpu;

        if (rp->aux_attr < 0)
                return 0;       /* AUX data of no source we decode (or none at all) */
        aux_attr = dp_perf_data_attr(data, (size_t) rp->aux_attr);
        switch (rec->header->type) {
        case REPLAY_RECORD_TIME_CONV:
                /* SPE timestamps convert to perf's own clock; samples timed by
                 * another clock (-k) cannot be matched against them. */
                rp->has_clock = !aux_attr->use_clockid && replay_parse_time_conv(rec->header, &rp->clock) == 0;
                return 0;
        case REPLAY_RECORD_AUXTRACE:
                break;
        default:
                return 0;
        }

        owner = (struct dp_perf_data_record) { .attr = aux_attr, .attr_index = rp->aux_attr };
        if (replay_parse_auxtrace(rec->header, &at) < 0) {
                c = replay_cpu(rp, 0, &owner);
                if (!c)
                        return -ENOMEM;
                c->reader.counters.v[DP_C_BAD_RECORD]++;
                return 0;
        }
        /* Per-thread captures have no CPU: their data is filed under CPU 0. */
        cpu = at.cpu < DP_CPU_MAX ? at.cpu : 0;
        c = replay_cpu(rp, cpu, &owner);
        if (!c)
                return -ENOMEM;
        return take_aux_payload(rp, c, &at, rec->payload);
}

int dp_replay_run(struct dp_replay *rp, struct dp_perf_data *data) {
        struct dp_perf_data_record rec;
        size_t n;
        int r;

        r = find_aux_attr(rp, data);
        if (r < 0)
                return r;
        dp_perf_data_rewind(data);
        while ((r = dp_perf_data_next_run(data, &rec, REPLAY_DRAIN_AT, &n)) > 0) {
                const uint8_t *body = (const uint8_t *) rec.header + sizeof(*rec.header);
                const struct dp_perf_layout *l = rec.layout;
                struct replay_cpu *c;
                size_t cpu = 0;
                int k;

                if (rec.header->type >= DP_PERF_RECORD_USER_TYPE_START) {
                        k = take_user_record(rp, data, &rec);
                        if (k < 0)
                                return k;
                        continue;
                }
                /* Bookkeeping events matter only for whose AUX data runs where. */
                if (!rec.attr || (!is_access_event(rec.attr) && !(rp->aux_attr >= 0 &&
                                                                   is_task_record(rec.header->type))))
                        continue;
                /* CPU and time lead every sample: fixed offsets, parsed or not. */
                if (rec.header->type == PERF_RECORD_SAMPLE) {
                        if (l->off_cpu >= 0)
                                cpu = dp_load_u32(body + l->off_cpu);
                } else if (rec.sample_id.present & PERF_SAMPLE_CPU)
                        cpu = rec.sample_id.cpu;
                if (cpu >= DP_CPU_MAX)
                        cpu = 0;
                c = replay_cpu(rp, cpu, &rec);
                if (!c)
                        return -ENOMEM;

                if (rec.header->type != PERF_RECORD_SAMPLE) {
                        take_other(rp, c, &rec);
                        continue;
                }
                /* A capture's events may come from different PMUs. */
                c->reader.source = source_for(rp, rec.attr_index);
                if (l->sample_size) {
                        k = take_run(rp, c, l, rec.header, n);
                        if (k < 0)
                                return k;
                        continue;
                }
                if (l->off_time >= 0)
                        rp->max_time = DP_MAX(rp->max_time, dp_load_u64(body + l->off_time));
                c->reader.counters.v[DP_C_CALLBACK]++;
                dp_ring_reader_take_sample(&c->reader, &rec.sample);
                if (dp_spsc_depth_producer(c->queue) >= REPLAY_DRAIN_AT) {
                        k = drain(rp, c);
                        if (k < 0)
                                return k;
                }
        }
        for (size_t i = 0; i < rp->nr_cpus; i++)
                if (rp->cpus[i]) {
                        int k = drain(rp, rp->cpus[i]);

                        if (k < 0)
                                return k;
                }
        /* The capture is over: close the last aggregation too. */
        tick(rp, rp->max_time + REPLAY_TICK_LAG_NS);
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
