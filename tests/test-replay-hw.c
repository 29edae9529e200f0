/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Hardware captures through the replay: perf.data files built as `perf
 * record` lays them out (tests/perf-data-writer.h) for ARM SPE (AUX data,
 * attribution by CONTEXT packets, context switches in record order or by
 * converted timestamps), AMD IBS (RAW payloads, erratum 1293 by the capture's
 * CPUID), an unknown PMU, damaged captures, and damon-perfd --replay on
 * them.  The header sections and the choice of source: test-capture-header.c. */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aux-ring.h"
#include "decode-ibs.h"
#include "mem-level.h"
#include "replay.h"

#include "check-main.h"
#include "ibs-registers.h"
#include "perf-data-writer.h"

#define RECORD_AUXTRACE_INFO 70
#define RECORD_TIME_CONV 79
#define RECORD_FINISHED_ROUND 68

#define ID_TYPES (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* ---- running a capture ---- */

struct got {
        struct dp_sample s[512];
        size_t n;
};

static void on_sample(const struct dp_sample *s, void *userdata) {
        struct got *g = userdata;

        ck_assert_uint_lt(g->n, DP_ARRAY_SIZE(g->s));
        g->s[g->n++] = *s;
}

struct outcome {
        int open;               /* dp_perf_data_open_memory() */
        int choose;             /* dp_replay_use_capture_sources() */
        int run;                /* dp_replay_run() */
        const struct dp_source *primary;
        struct dp_counter_values total;
        struct got got;
};

/* The capture in @img through the replay as `damon-perfd --replay` runs it. */
static void replay_image(const uint8_t *img, size_t size, struct outcome *o) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        struct dp_tracker_config tc;
        struct dp_tracker *tracker;
        struct dp_replay *rp;
        const char *which;

        memset(o, 0, sizeof(*o));
        o->open = dp_perf_data_open_memory(img, size, &data);
        if (o->open < 0)
                return;
        dp_tracker_config_init(&tc);
        ck_assert_int_eq(dp_tracker_new(&tc, &tracker), 0);
        ck_assert_int_eq(dp_replay_new(NULL, tracker, false, &rp), 0);
        o->choose = dp_replay_use_capture_sources(rp, data, NULL, NULL, &o->primary);
        dp_replay_set_sample_hook(rp, on_sample, &o->got);
        o->run = dp_replay_run(rp, data);
        for (size_t cpu = 0; cpu < dp_replay_nr_cpus(rp); cpu++) {
                struct dp_counter_values c;

                dp_replay_counters(rp, cpu, &c);
                ck_assert_msg(dp_counters_check(&c, &which) == 0, "CPU%zu: %s", cpu, which);
                dp_counters_sum(&o->total, &c);
        }
        dp_replay_free(rp);
        dp_tracker_free(tracker);
}

static void replay_writer(struct pdw *w, struct outcome *o) {
        size_t size;
        uint8_t *img = pdw_finish(w, &size);

        replay_image(img, size, o);
        free(img);
}

/* ---- ARM SPE records (FIELD-NOTES §5) ---- */

enum { LOAD, STORE };

struct spe_rec {
        int op;                 /* LOAD or STORE */
        uint64_t va;            /* data VA payload */
        uint64_t pa;            /* 0: no PA packet */
        int source;             /* Neoverse data source, -1: none */
        int64_t context;        /* CONTEXT packet, -1: none */
        uint64_t ts;            /* TS ticks closing the record, 0: END */
};

static void spe_addr(struct pdw_bytes *b, unsigned index, uint64_t payload) {
        pdw_u8(b, (uint8_t) (0xb0 | index));
        pdw_le(b, payload, 8);
}

static void spe_close(struct pdw_bytes *b, uint64_t ts) {
        if (ts) {
                pdw_u8(b, 0x71);
                pdw_le(b, ts, 8);
        } else
                pdw_u8(b, 0x01);
}

static void spe_mem(struct pdw_bytes *b, const struct spe_rec *r) {
        spe_addr(b, 0, 0x8000000000401000ull);          /* PC, EL0, NS */
        pdw_u8(b, 0x49);                                /* OP-TYPE LD/ST */
        pdw_u8(b, r->op == STORE ? 0x01 : 0x00);
        pdw_u8(b, 0x52);                                /* EVENTS: retired, L1D access */
        pdw_le(b, 0x0006, 2);
        if (r->source >= 0) {
                pdw_u8(b, 0x43);                        /* DATA-SOURCE, 1 byte */
                pdw_u8(b, (uint8_t) r->source);
        }
        pdw_u8(b, 0x98);                                /* COUNTER total latency */
        pdw_le(b, 42, 2);
        spe_addr(b, 2, r->va);
        if (r->pa)
                spe_addr(b, 3, r->pa | (1ull << 63));
        if (r->context >= 0) {
                pdw_u8(b, 0x65);                        /* CONTEXT (EL2), 4 bytes */
                pdw_le(b, (uint64_t) r->context, 4);
        }
        spe_close(b, r->ts);
}

static void spe_branch(struct pdw_bytes *b) {
        spe_addr(b, 0, 0x8000000000402000ull);
        pdw_u8(b, 0x4a);                                /* OP-TYPE branch, conditional */
        pdw_u8(b, 0x01);
        spe_addr(b, 1, 0x8000000000403000ull);
        pdw_u8(b, 0x01);
}

/* ---- the records of a capture ---- */

static void rec_switch(struct pdw *w, uint64_t type, bool out, uint32_t other_pid, uint32_t other_tid,
                       const struct pdw_id *id) {
        struct pdw_bytes b = {};

        pdw_u32(&b, other_pid);
        pdw_u32(&b, other_tid);
        pdw_sample_id(&b, type, id);
        pdw_record(w, PERF_RECORD_SWITCH_CPU_WIDE, out ? PERF_RECORD_MISC_SWITCH_OUT : 0, &b);
        pdw_bytes_free(&b);
}

/* PERF_RECORD_FORK {pid, ppid, tid, ptid, time}: a new thread @tid of @pid. */
static void rec_fork(struct pdw *w, uint64_t type, uint32_t pid, uint32_t tid, const struct pdw_id *id) {
        struct pdw_bytes b = {};

        pdw_u32(&b, pid);
        pdw_u32(&b, pid);
        pdw_u32(&b, tid);
        pdw_u32(&b, pid);
        pdw_u64(&b, id->time);
        pdw_sample_id(&b, type, id);
        pdw_record(w, PERF_RECORD_FORK, 0, &b);
        pdw_bytes_free(&b);
}

static void rec_aux(struct pdw *w, uint64_t type, uint64_t offset, uint64_t size, uint64_t flags,
                    const struct pdw_id *id) {
        struct pdw_bytes b = {};

        pdw_u64(&b, offset);
        pdw_u64(&b, size);
        pdw_u64(&b, flags);
        pdw_sample_id(&b, type, id);
        pdw_record(w, PERF_RECORD_AUX, 0, &b);
        pdw_bytes_free(&b);
}

static void rec_auxtrace_info(struct pdw *w) {
        struct pdw_bytes b = {};

        pdw_u32(&b, 4);         /* PERF_AUXTRACE_ARM_SPE */
        pdw_u32(&b, 0);
        pdw_u64(&b, PDW_SPE_TYPE);  /* priv[ARM_SPE_PMU_TYPE] */
        pdw_u64(&b, 1);         /* priv[ARM_SPE_PER_CPU_MMAPS] */
        pdw_record(w, RECORD_AUXTRACE_INFO, 0, &b);
        pdw_bytes_free(&b);
}

static void rec_time_conv(struct pdw *w, uint64_t shift, uint64_t mult, uint64_t zero) {
        struct pdw_bytes b = {};

        pdw_u64(&b, shift);
        pdw_u64(&b, mult);
        pdw_u64(&b, zero);
        pdw_u64(&b, 0);         /* time_cycles */
        pdw_u64(&b, 0);         /* time_mask */
        pdw_u8(&b, 1);          /* cap_user_time_zero */
        pdw_u8(&b, 0);          /* cap_user_time_short */
        pdw_zeros(&b, 6);
        pdw_record(w, RECORD_TIME_CONV, 0, &b);
        pdw_bytes_free(&b);
}

static void rec_finished_round(struct pdw *w) {
        struct pdw_bytes b = {};

        pdw_record(w, RECORD_FINISHED_ROUND, 0, &b);
}

/* arm_spe_0 (IDs 0x100 + cpu) and the dummy that carries the switches
 * (IDs 0x200 + cpu), as perf record -e arm_spe_0// -a sets them up. */
static void spe_capture_start(struct pdw *w, bool use_clockid) {
        static const uint64_t spe_ids[] = { 0x100, 0x101 }, dummy_ids[] = { 0x200, 0x201 };
        struct perf_event_attr spe = {
                .type = PDW_SPE_TYPE,
                .config = 0x3,          /* ts_enable, pa_enable */
                .sample_period = 4096,
                .sample_type = ID_TYPES,
                .sample_id_all = 1,
                .disabled = 1,
                .use_clockid = use_clockid,
                .clockid = 1,
        };
        struct perf_event_attr dummy = {
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_DUMMY,
                .sample_period = 1,
                .sample_type = ID_TYPES,
                .sample_id_all = 1,
                .context_switch = 1,
                .comm = 1,
                .use_clockid = use_clockid,
                .clockid = 1,
        };

        memset(w, 0, sizeof(*w));
        pdw_attr(w, &spe, spe_ids, 2);
        pdw_attr(w, &dummy, dummy_ids, 2);
        pdw_pmu_mappings(w, pdw_pmus_arm, DP_ARRAY_SIZE(pdw_pmus_arm));
        pdw_cpuid(w, "0x00000000410fd0c0");
        rec_auxtrace_info(w);
}

#define VA(n) (0x0000aaaa00000000ull + (uint64_t) (n) * 0x10000)
#define PA(n) (0x0000000080000000ull + (uint64_t) (n) * 0x1000)

static const struct dp_sample *find(const struct got *g, uint64_t vaddr) {
        for (size_t i = 0; i < g->n; i++)
                if (g->s[i].vaddr == vaddr)
                        return &g->s[i];
        ck_abort_msg("no sample at %#" PRIx64, vaddr);
        return NULL;
}

static void check_sample(const struct got *g, uint64_t vaddr, uint32_t pid, uint32_t tid, uint16_t cpu, uint64_t paddr,
                         int op, enum dp_mem_level level, uint64_t time) {
        const struct dp_sample *s = find(g, vaddr);

        ck_assert_msg(s->pid == pid && s->tid == tid, "%#" PRIx64 ": pid/tid %u/%u, expected %u/%u", vaddr, s->pid,
                      s->tid, pid, tid);
        ck_assert_uint_eq(s->cpu, cpu);
        ck_assert_uint_eq(s->paddr, paddr);
        ck_assert_uint_eq(!!(s->flags & DP_SAMPLE_PHYS_VALID), paddr != 0);
        ck_assert_uint_eq(!!(s->flags & DP_SAMPLE_LOAD), op == LOAD);
        ck_assert_uint_eq(!!(s->flags & DP_SAMPLE_STORE), op == STORE);
        ck_assert_int_eq(dp_sample_level(s), level);
        ck_assert_uint_eq(s->latency, 42);
        ck_assert_uint_eq(s->time, time);
}

/* Two CPUs' AUX data in record order (no PERF_RECORD_TIME_CONV); the
 * file image, to free(). */
static uint8_t *spe_record_order_capture(size_t *size) {
        struct pdw_bytes s1 = {}, s2 = {}, s3 = {}, cpu0 = {};
        struct pdw w;
        uint8_t *img;

        spe_capture_start(&w, false);

        /* Stretch 1 on CPU 0 (task 100/101): a load, a branch, a store naming 101, pads. */
        spe_mem(&s1, &(struct spe_rec) { LOAD, VA(1), PA(1), 0x0, -1, 0 });
        spe_branch(&s1);
        spe_mem(&s1, &(struct spe_rec) { STORE, VA(2), 0, 0x8, 101, 0 });
        pdw_zeros(&s1, 3);
        /* Stretch 2 (task 200): a load to DRAM, one naming an unknown thread, a kernel address. */
        spe_mem(&s2, &(struct spe_rec) { LOAD, VA(3), PA(3), 0xe, -1, 0 });
        spe_mem(&s2, &(struct spe_rec) { LOAD, VA(4), 0, 0xb, 300, 0 });
        spe_mem(&s2, &(struct spe_rec) { LOAD, 0xffff800000001000ull, 0, 0x0, -1, 0 });
        /* Stretch 3 on CPU 1, where no switch ever told who runs. */
        spe_mem(&s3, &(struct spe_rec) { LOAD, VA(5), 0, 0x0, -1, 0 });
        spe_mem(&s3, &(struct spe_rec) { STORE, VA(6), PA(6), 0x9, 401, 0 });

        /* Thread 401 of process 400 is born on CPU 0; it runs on CPU 1 later. */
        rec_fork(&w, ID_TYPES, 400, 401, &(struct pdw_id) { 400, 400, 500, 0x200, 0 });
        rec_switch(&w, ID_TYPES, true, 100, 101, &(struct pdw_id) { 50, 50, 1000, 0x200, 0 });
        rec_aux(&w, ID_TYPES, 0, s1.n, 0, &(struct pdw_id) { 100, 101, 2000, 0x100, 0 });
        rec_switch(&w, ID_TYPES, false, 100, 101, &(struct pdw_id) { 200, 200, 3000, 0x200, 0 });
        rec_aux(&w, ID_TYPES, s1.n, s2.n, DP_AUX_FLAG_TRUNCATED, &(struct pdw_id) { 200, 200, 4000, 0x100, 0 });
        rec_aux(&w, ID_TYPES, 0, s3.n, DP_AUX_FLAG_COLLISION, &(struct pdw_id) { 0, 0, 4500, 0x101, 1 });
        rec_finished_round(&w);
        /* perf copies each CPU's AUX area after the data ring: both stretches in one payload. */
        pdw_put(&cpu0, s1.b, s1.n);
        pdw_put(&cpu0, s2.b, s2.n);
        pdw_auxtrace(&w, 0, 0, &cpu0);
        pdw_auxtrace(&w, 0, 1, &s3);
        rec_finished_round(&w);
        img = pdw_finish(&w, size);
        pdw_bytes_free(&s1);
        pdw_bytes_free(&s2);
        pdw_bytes_free(&s3);
        pdw_bytes_free(&cpu0);
        return img;
}

/*
 * Record order: each stretch is filed under the task current on its CPU
 * when its PERF_RECORD_AUX came, CONTEXT packets name their thread, a CPU
 * without switches has nobody for the rest.
 */
START_TEST(test_spe_record_order) {
        struct outcome o;
        uint8_t *img;
        size_t size;

        img = spe_record_order_capture(&size);
        replay_image(img, size, &o);
        free(img);
        ck_assert_int_eq(o.open, 0);
        ck_assert_int_eq(o.choose, 0);
        ck_assert_int_eq(o.run, 0);
        ck_assert_str_eq(o.primary->name, "spe");

        /* Seven memory accesses; the branch is no sample. */
        ck_assert_uint_eq(o.total.v[DP_C_CALLBACK], 7);
        ck_assert_uint_eq(o.total.v[DP_C_SPE_NO_DATA], 1);
        ck_assert_uint_eq(o.total.v[DP_C_VALID], 5);
        ck_assert_uint_eq(o.total.v[DP_C_KERNEL], 1);
        ck_assert_uint_eq(o.total.v[DP_C_NULL], 1);     /* CPU 1's load: nobody known */
        ck_assert_uint_eq(o.total.v[DP_C_AUX_TRUNCATED], 1);
        ck_assert_uint_eq(o.total.v[DP_C_AUX_COLLISION], 1);
        ck_assert_uint_eq(o.total.v[DP_C_AUX_PARTIAL], 0);
        ck_assert_uint_eq(o.total.v[DP_C_SPE_BAD_BYTES], 0);
        ck_assert_uint_eq(o.total.v[DP_C_BAD_RECORD], 0);
        ck_assert_uint_eq(o.total.v[DP_C_DEQUEUE], 5);
        ck_assert_uint_eq(o.total.v[DP_C_MATCH], 5);
        ck_assert_uint_eq(o.got.n, 5);

        check_sample(&o.got, VA(1), 100, 101, 0, PA(1), LOAD, DP_MEM_L1, 2000);
        /* Stores: perf reads no DATA-SOURCE for them on Neoverse; the events
         * (L1D access, no refill) say L1 (doc/mem-levels.rst). */
        check_sample(&o.got, VA(2), 100, 101, 0, 0, STORE, DP_MEM_L1, 2000);
        check_sample(&o.got, VA(3), 200, 200, 0, PA(3), LOAD, DP_MEM_LOCAL_DRAM, 4000);
        check_sample(&o.got, VA(4), 300, 300, 0, 0, LOAD, DP_MEM_L3, 4000);
        /* CONTEXT names thread 401; the FORK record on CPU 0 said whose it is. */
        check_sample(&o.got, VA(6), 400, 401, 1, PA(6), STORE, DP_MEM_L1, 4500);
}
END_TEST

/* A plan of an AUX capture sees the samples its AUX data holds. */
START_TEST(test_spe_plan) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        struct dp_counter_values c, total = {};
        struct dp_tracker_config tc;
        struct dp_tracker *tracker;
        struct dp_replay *rp;
        uint64_t samples;
        uint32_t tgid;
        uint8_t *img;
        size_t size;

        img = spe_record_order_capture(&size);
        ck_assert_int_eq(dp_perf_data_open_memory(img, size, &data), 0);
        free(img);
        dp_tracker_config_init(&tc);
        ck_assert_int_eq(dp_tracker_new(&tc, &tracker), 0);
        ck_assert_int_eq(dp_replay_new(NULL, tracker, false, &rp), 0);
        ck_assert_int_eq(dp_replay_use_capture_sources(rp, data, NULL, NULL, NULL), 0);
        ck_assert_int_eq(dp_replay_plan_targets(rp, data), 4);          /* pids 100, 200, 300, 400 */
        ck_assert_int_eq(dp_replay_busiest_target(rp, &tgid, &samples), 0);
        ck_assert_uint_eq(tgid, 100);
        ck_assert_uint_eq(samples, 2);
        ck_assert_int_eq(dp_replay_run(rp, data), 0);
        ck_assert_uint_eq(dp_tracker_nr_targets(tracker), 4);
        for (size_t cpu = 0; cpu < dp_replay_nr_cpus(rp); cpu++) {
                dp_replay_counters(rp, cpu, &c);
                dp_counters_sum(&total, &c);
        }
        ck_assert_uint_eq(total.v[DP_C_VALID], 5);
        ck_assert_uint_eq(total.v[DP_C_MATCH], 5);
        dp_replay_free(rp);
        dp_tracker_free(tracker);
}
END_TEST

/* The stretch of @use_clockid's capture with TS-closed records, announced
 * after both switches; TIME_CONV: ns = 100 + 2 * ticks. */
static void spe_timed_capture(bool use_clockid, struct outcome *o) {
        struct pdw_bytes s = {};
        struct pdw w;

        spe_capture_start(&w, use_clockid);
        rec_time_conv(&w, 1, 4, 100);
        spe_mem(&s, &(struct spe_rec) { LOAD, VA(1), 0, 0x0, -1, 200 });        /* 500: before the switches */
        spe_mem(&s, &(struct spe_rec) { LOAD, VA(2), 0, 0x8, -1, 1000 });       /* 2100 */
        spe_mem(&s, &(struct spe_rec) { STORE, VA(3), 0, 0xe, -1, 1500 });      /* 3100 */
        spe_mem(&s, &(struct spe_rec) { LOAD, VA(4), 0, 0x0, 101, 1600 });      /* 3300, thread 101 */
        /* A fork before the first switch changes nobody's CPU. */
        rec_fork(&w, ID_TYPES, 100, 101, &(struct pdw_id) { 100, 100, 900, 0x200, 0 });
        rec_switch(&w, ID_TYPES, true, 100, 101, &(struct pdw_id) { 50, 50, 1000, 0x200, 0 });
        rec_switch(&w, ID_TYPES, false, 100, 101, &(struct pdw_id) { 200, 200, 3000, 0x200, 0 });
        rec_aux(&w, ID_TYPES, 0, s.n, 0, &(struct pdw_id) { 200, 200, 5000, 0x100, 0 });
        pdw_auxtrace(&w, 0, 0, &s);
        replay_writer(&w, o);
        pdw_bytes_free(&s);
}

/* With TIME_CONV every record goes to the task that ran at its converted
 * timestamp, even the one before the first switch. */
START_TEST(test_spe_timestamps) {
        struct outcome o;

        spe_timed_capture(false, &o);
        ck_assert_int_eq(o.run, 0);
        ck_assert_uint_eq(o.total.v[DP_C_CALLBACK], 4);
        ck_assert_uint_eq(o.total.v[DP_C_VALID], 4);
        check_sample(&o.got, VA(1), 50, 50, 0, 0, LOAD, DP_MEM_L1, 500);
        check_sample(&o.got, VA(2), 100, 101, 0, 0, LOAD, DP_MEM_L2, 2100);
        check_sample(&o.got, VA(3), 200, 200, 0, 0, STORE, DP_MEM_L1, 3100);    /* the events' */
        /* CONTEXT names thread 101; its process comes from the switches. */
        check_sample(&o.got, VA(4), 100, 101, 0, 0, LOAD, DP_MEM_L1, 3300);

        /* Samples timed by another clock (-k): the conversion cannot apply,
         * so record order decides (the task at the PERF_RECORD_AUX). */
        spe_timed_capture(true, &o);
        ck_assert_int_eq(o.run, 0);
        ck_assert_uint_eq(o.total.v[DP_C_VALID], 4);
        check_sample(&o.got, VA(1), 200, 200, 0, 0, LOAD, DP_MEM_L1, 5000);
        check_sample(&o.got, VA(2), 200, 200, 0, 0, LOAD, DP_MEM_L2, 5000);
        check_sample(&o.got, VA(4), 100, 101, 0, 0, LOAD, DP_MEM_L1, 5000);
}
END_TEST

/* ---- damaged SPE captures ---- */

START_TEST(test_spe_garbage) {
        struct pdw_bytes good = {}, cut = {};
        struct outcome o;
        struct pdw w;
        uint8_t *img;
        size_t size;

        spe_mem(&good, &(struct spe_rec) { LOAD, VA(1), 0, 0x0, 7, 0 });
        /* A payload whose last record is cut off: a sample that could not be decoded. */
        spe_capture_start(&w, false);
        pdw_put(&cut, good.b, good.n);
        pdw_put(&cut, good.b, good.n - 5);
        pdw_auxtrace(&w, 0, 0, &cut);
        replay_writer(&w, &o);
        ck_assert_int_eq(o.run, 0);
        ck_assert_uint_eq(o.total.v[DP_C_CALLBACK], 2);
        ck_assert_uint_eq(o.total.v[DP_C_VALID], 1);
        ck_assert_uint_eq(o.total.v[DP_C_NULL], 1);

        /* An AUXTRACE record too short to hold its fields: a bad record, nothing read. */
        spe_capture_start(&w, false);
        {
                struct pdw_bytes b = {};

                pdw_u64(&b, 0);         /* size 0: no payload */
                pdw_u64(&b, 0);
                pdw_record(&w, PDW_RECORD_AUXTRACE, 0, &b);
                pdw_bytes_free(&b);
        }
        pdw_auxtrace(&w, 0, 0, &good);
        replay_writer(&w, &o);
        ck_assert_int_eq(o.run, 0);
        ck_assert_uint_eq(o.total.v[DP_C_BAD_RECORD], 1);
        ck_assert_uint_eq(o.total.v[DP_C_VALID], 1);

        /* An AUXTRACE whose size runs past the end of the file: the run stops
         * with the reader's error, having counted what came before. */
        spe_capture_start(&w, false);
        pdw_auxtrace(&w, 0, 0, &good);
        {
                struct pdw_bytes b = {};

                pdw_u64(&b, 1u << 20);
                pdw_u64(&b, 64);
                pdw_u64(&b, 0);
                pdw_u32(&b, 0);
                pdw_u32(&b, UINT32_MAX);
                pdw_u32(&b, 0);
                pdw_u32(&b, 0);
                pdw_record(&w, PDW_RECORD_AUXTRACE, 0, &b);
                pdw_bytes_free(&b);
                pdw_raw(&w, good.b, good.n / 8 * 8);
        }
        replay_writer(&w, &o);
        ck_assert_int_eq(o.open, 0);
        ck_assert_int_eq(o.run, -EBADMSG);
        ck_assert_uint_eq(o.total.v[DP_C_VALID], 1);

        /* Garbage bytes between records are skipped and counted. */
        spe_capture_start(&w, false);
        pdw_bytes_free(&cut);
        pdw_le(&cut, 0xffffffffffffull, 6);
        pdw_put(&cut, good.b, good.n);
        spe_mem(&cut, &(struct spe_rec) { STORE, VA(2), PA(2), 0xe, -1, 1234 });
        pdw_auxtrace(&w, 0, 0, &cut);
        replay_writer(&w, &o);
        ck_assert_int_eq(o.run, 0);
        ck_assert_uint_eq(o.total.v[DP_C_VALID], 1);
        ck_assert_uint_eq(o.total.v[DP_C_NULL], 1);    /* the store: nobody known on the CPU */
        ck_assert_uint_gt(o.total.v[DP_C_SPE_BAD_BYTES], 0);

        /* Random damage anywhere in a full capture: errors, never a crash,
         * and the counters always add up (replay_image checks them). */
        spe_capture_start(&w, false);
        rec_time_conv(&w, 1, 4, 100);
        rec_fork(&w, ID_TYPES, 100, 102, &(struct pdw_id) { 100, 101, 900, 0x200, 0 });
        rec_switch(&w, ID_TYPES, true, 100, 101, &(struct pdw_id) { 50, 50, 1000, 0x200, 0 });
        rec_aux(&w, ID_TYPES, 0, cut.n, DP_AUX_FLAG_PARTIAL, &(struct pdw_id) { 100, 101, 2000, 0x100, 0 });
        pdw_auxtrace(&w, 0, 0, &cut);
        img = pdw_finish(&w, &size);
        {
                uint64_t x = 0x9e3779b97f4a7c15ull;
                uint8_t *copy = malloc(size);

                ck_assert_ptr_nonnull(copy);
                for (int round = 0; round < 3000; round++) {
                        memcpy(copy, img, size);
                        for (int k = 0; k < 1 + round % 4; k++) {
                                x ^= x << 13;
                                x ^= x >> 7;
                                x ^= x << 17;
                                copy[x % size] = (uint8_t) (x >> 32);
                        }
                        replay_image(copy, size, &o);
                }
                free(copy);
        }
        free(img);
        pdw_bytes_free(&good);
        pdw_bytes_free(&cut);
}
END_TEST

/* ---- AMD IBS (FIELD-NOTES §3) ---- */

#define IBS_CAPS (DP_IBS_CAPS_AVAIL | DP_IBS_CAPS_FETCHSAM | DP_IBS_CAPS_OPSAM)

struct ibs_op {
        uint64_t data3, data2, lin, phys;
};

/* A sample of attr @sample_type: the ID fields, the kernel-filled ADDR and
 * PHYS_ADDR when asked for, and the RAW register payload. */
static void rec_ibs_sample(struct pdw *w, uint64_t sample_type, const struct pdw_id *id, const struct ibs_op *op) {
        struct pdw_bytes b = {};

        if (sample_type & PERF_SAMPLE_IDENTIFIER)
                pdw_u64(&b, id->id);
        pdw_u32(&b, id->pid);
        pdw_u32(&b, id->tid);
        pdw_u64(&b, id->time);
        if (sample_type & PERF_SAMPLE_ADDR)
                pdw_u64(&b, (op->data3 & D3_LIN_VALID) ? op->lin : 0);
        pdw_u32(&b, id->cpu);
        pdw_u32(&b, 0);
        /* RAW: u32 size, then caps and OP_CTL .. DC_PHYSADDR: 4 + 60 bytes. */
        pdw_u32(&b, 60);
        pdw_u32(&b, IBS_CAPS);
        pdw_u64(&b, CTL_OK);
        pdw_u64(&b, 0x401000);          /* OP_RIP */
        pdw_u64(&b, 0);                 /* OP_DATA */
        pdw_u64(&b, op->data2);
        pdw_u64(&b, op->data3);
        pdw_u64(&b, op->lin);
        pdw_u64(&b, op->phys);
        if (sample_type & PERF_SAMPLE_PHYS_ADDR)
                pdw_u64(&b, (op->data3 & D3_PHY_VALID) ? op->phys : 0);
        pdw_record(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, &b);
        pdw_bytes_free(&b);
}

static const struct ibs_op ibs_ops[] = {
        /* A load that missed to DRAM, merged into an outstanding miss (DcMissNoMabAlloc). */
        { D3_LD | D3_DC_MISS | D3_L2_MISS | D3_NO_MAB | D3_LIN_VALID | D3_PHY_VALID | D3_LAT(300), D2_DRAM,
          0x00007f0000001000ull, 0x0000000123401000ull },
        /* The same load without it: the erratum does not apply. */
        { D3_LD | D3_DC_MISS | D3_L2_MISS | D3_LIN_VALID | D3_PHY_VALID | D3_LAT(250), D2_DRAM,
          0x00007f0000002000ull, 0x0000000123402000ull },
        /* A store that hit L1, no physical address. */
        { D3_ST | D3_LIN_VALID, 0, 0x00007f0000003000ull, 0 },
        /* An op that is no load or store: no sample. */
        { 0, 0, 0, 0 },
};

static uint8_t *ibs_capture_image(const char *cpuid, uint64_t sample_type, size_t *size) {
        static const uint64_t ibs_ids[] = { 0x300, 0x301 }, dummy_ids[] = { 0x400, 0x401 };
        struct perf_event_attr ibs = {
                .type = PDW_IBS_TYPE,
                .sample_period = 100000,
                .sample_type = sample_type,
                .sample_id_all = 1,
        };
        struct perf_event_attr dummy = {
                .type = PERF_TYPE_SOFTWARE,
                .config = PERF_COUNT_SW_DUMMY,
                .sample_type = ID_TYPES,
                .sample_id_all = 1,
        };
        struct pdw w = {};

        pdw_attr(&w, &ibs, ibs_ids, 2);
        pdw_attr(&w, &dummy, dummy_ids, 2);
        pdw_pmu_mappings(&w, pdw_pmus_amd, DP_ARRAY_SIZE(pdw_pmus_amd));
        pdw_cpuid(&w, cpuid);
        for (size_t i = 0; i < DP_ARRAY_SIZE(ibs_ops); i++)
                rec_ibs_sample(&w, sample_type, &(struct pdw_id) { 77, 78, 1000 + i, 0x300 + i % 2, (uint32_t) i % 2 },
                               &ibs_ops[i]);
        return pdw_finish(&w, size);
}

static void ibs_capture(const char *cpuid, uint64_t sample_type, struct outcome *o) {
        size_t size;
        uint8_t *img = ibs_capture_image(cpuid, sample_type, &size);

        replay_image(img, size, o);
        free(img);
}

static uint64_t mem_lvl(uint64_t data_src) {
        return data_src >> PERF_MEM_LVL_SHIFT & ((1u << 14) - 1);
}

START_TEST(test_ibs_erratum_by_cpuid) {
        /* RAW only, and RAW with the kernel-filled ADDR and PHYS_ADDR. */
        static const uint64_t layouts[] = {
                PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_RAW,
                PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU |
                        PERF_SAMPLE_RAW | PERF_SAMPLE_PHYS_ADDR,
        };

        for (size_t l = 0; l < DP_ARRAY_SIZE(layouts); l++) {
                struct outcome affected, fine;
                const struct dp_sample *a, *f;

                /* Family 0x19 model 0x01 (Zen 3 B1) has erratum 1293; model 0x21 does not. */
                ibs_capture("AuthenticAMD,25,1,1", layouts[l], &affected);
                ibs_capture("AuthenticAMD,25,33,0", layouts[l], &fine);
                ck_assert_int_eq(affected.run, 0);
                ck_assert_int_eq(fine.run, 0);
                ck_assert_str_eq(affected.primary->name, "ibs");
                ck_assert_uint_eq(affected.total.v[DP_C_CALLBACK], 4);
                ck_assert_uint_eq(affected.total.v[DP_C_VALID], 3);
                ck_assert_uint_eq(affected.total.v[DP_C_NULL], 1);
                ck_assert_uint_eq(fine.total.v[DP_C_VALID], 3);

                /* Erratum 1293: with DcMissNoMabAlloc, L2Miss and OP_DATA2 mean
                 * nothing; the fill buffer is all that is known. */
                a = find(&affected.got, ibs_ops[0].lin);
                f = find(&fine.got, ibs_ops[0].lin);
                ck_assert_int_eq(dp_sample_level(a), DP_MEM_L1);
                ck_assert_uint_eq(mem_lvl(a->data_src), PERF_MEM_LVL_LFB | PERF_MEM_LVL_HIT);
                ck_assert_int_eq(dp_sample_level(f), DP_MEM_LOCAL_DRAM);
                ck_assert_uint_eq(mem_lvl(f->data_src), PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT);
                /* Everything else about that op agrees. */
                ck_assert_uint_eq(a->paddr, ibs_ops[0].phys);
                ck_assert_uint_eq(f->paddr, ibs_ops[0].phys);
                ck_assert_uint_eq(a->latency, 300);
                ck_assert_uint_eq(f->latency, 300);
                ck_assert(a->flags & DP_SAMPLE_LOAD);
                ck_assert_uint_eq(a->pid, 77);
                ck_assert_uint_eq(a->tid, 78);
                ck_assert_uint_eq(a->cpu, 0);

                /* Ops the erratum does not touch decode the same on both parts. */
                for (size_t i = 1; i < 3; i++) {
                        a = find(&affected.got, ibs_ops[i].lin);
                        f = find(&fine.got, ibs_ops[i].lin);
                        ck_assert_int_eq(dp_sample_level(a), dp_sample_level(f));
                        ck_assert_uint_eq(a->data_src, f->data_src);
                        ck_assert_uint_eq(a->flags, f->flags);
                        ck_assert_uint_eq(a->cpu, i % 2);
                }
                ck_assert_int_eq(dp_sample_level(find(&fine.got, ibs_ops[1].lin)), DP_MEM_LOCAL_DRAM);
                ck_assert_int_eq(dp_sample_level(find(&fine.got, ibs_ops[2].lin)), DP_MEM_L1);
                ck_assert(find(&fine.got, ibs_ops[2].lin)->flags & DP_SAMPLE_STORE);
                ck_assert(!(find(&fine.got, ibs_ops[2].lin)->flags & DP_SAMPLE_PHYS_VALID));
        }
}
END_TEST

/* A sample of a PMU the capture does not name decodes its kernel-filled
 * fields; the replay says "capture", not any hardware source. */
/* The capture as @mappings_ok says: with the PMU mappings of an Intel
 * machine, or with a PMU_MAPPINGS section that is malformed. */
static void unknown_pmu_capture(bool mappings_ok, struct outcome *o) {
        static const uint64_t ids[] = { 9 };
        static const uint8_t damaged[] = { 200, 0, 0, 0, 4, 0, 0, 0, 64, 0, 0, 0, 'c', 'p', 'u', 0 };
        struct perf_event_attr a = { .type = 42, .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                                                 PERF_SAMPLE_ADDR | PERF_SAMPLE_CPU };
        struct pdw_bytes b = {};
        struct pdw w = {};

        pdw_attr(&w, &a, ids, 1);
        if (mappings_ok)
                pdw_pmu_mappings(&w, pdw_pmus_intel, DP_ARRAY_SIZE(pdw_pmus_intel));
        else
                pdw_feature(&w, 16, damaged, sizeof(damaged));
        for (int i = 0; i < 3; i++) {
                b.n = 0;
                pdw_u32(&b, 10);
                pdw_u32(&b, 11);
                pdw_u64(&b, 1000 + (uint64_t) i);
                pdw_u64(&b, i == 2 ? 0 : 0x7f0000001000ull + (uint64_t) i * 0x1000);
                pdw_u32(&b, 1);
                pdw_u32(&b, 0);
                pdw_record(&w, PERF_RECORD_SAMPLE, 0, &b);
        }
        pdw_bytes_free(&b);
        replay_writer(&w, o);
}

START_TEST(test_unknown_pmu_generic) {
        struct outcome o;

        for (int ok = 1; ok >= 0; ok--) {
                unknown_pmu_capture(ok, &o);
                ck_assert_int_eq(o.open, 0);
                ck_assert_int_eq(o.choose, 0);
                ck_assert_int_eq(o.run, 0);
                ck_assert_ptr_eq(o.primary, &dp_replay_generic_source);
                ck_assert_uint_eq(o.total.v[DP_C_CALLBACK], 3);
                ck_assert_uint_eq(o.total.v[DP_C_VALID], 2);
                ck_assert_uint_eq(o.total.v[DP_C_ADDR_ZERO], 1);
                ck_assert_uint_eq(find(&o.got, 0x7f0000002000ull)->pid, 10);
        }
}
END_TEST

/* ---- damon-perfd --replay ---- */

/* Writes @img to a new temporary file, named in @path. */
static const char *write_capture(const uint8_t *img, size_t size, char *path, size_t path_size) {
        int fd;

        snprintf(path, path_size, "/tmp/dp-replay-hw-XXXXXX");
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, img, size), (ssize_t) size);
        close(fd);
        return path;
}

/* Reads a whole small file into a NUL-terminated buffer. */
static char *slurp(const char *path) {
        FILE *f = fopen(path, "re");
        char *buf = calloc(1, 1 << 20);
        size_t n;

        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(buf);
        n = fread(buf, 1, (1 << 20) - 1, f);
        buf[n] = '\0';
        fclose(f);
        return buf;
}

/* damon-perfd --replay @capture [@extra]: its exit status, stdout and stderr. */
static int run_daemon_replay(const char *capture, const char *extra, char **out, char **err) {
        const char *daemon = getenv("DP_DAEMON");
        char out_path[] = "/tmp/dp-replay-hw-out-XXXXXX", err_path[] = "/tmp/dp-replay-hw-err-XXXXXX";
        int out_fd, err_fd, status;
        pid_t pid;

        ck_assert_msg(daemon, "DP_DAEMON is not set");
        out_fd = mkstemp(out_path);
        err_fd = mkstemp(err_path);
        ck_assert(out_fd >= 0 && err_fd >= 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                dup2(out_fd, STDOUT_FILENO);
                dup2(err_fd, STDERR_FILENO);
                if (extra)
                        execl(daemon, daemon, "--replay", capture, extra, "--top=3", NULL);
                else
                        execl(daemon, daemon, "--replay", capture, "--top=3", NULL);
                _exit(127);
        }
        close(out_fd);
        close(err_fd);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        *out = slurp(out_path);
        *err = slurp(err_path);
        unlink(out_path);
        unlink(err_path);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

START_TEST(test_daemon_replays_spe) {
        char path[64], *out, *err;
        json_t *doc, *totals, *source;
        json_error_t jerr;
        uint8_t *img;
        size_t size;

        img = spe_record_order_capture(&size);
        write_capture(img, size, path, sizeof(path));
        free(img);

        ck_assert_int_eq(run_daemon_replay(path, "--dump-stats=json", &out, &err), 0);
        doc = json_loads(out, 0, &jerr);
        ck_assert_msg(doc, "not JSON (%s): %s", jerr.text, out);
        source = json_object_get(doc, "source");
        ck_assert_str_eq(json_string_value(json_object_get(source, "name")), "spe");
        ck_assert(json_is_true(json_object_get(source, "hardware")));
        ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(source, "reason")), "arm_spe_0"));
        totals = json_object_get(doc, "totals");
        ck_assert_int_eq(json_integer_value(json_object_get(totals, "callback")), 7);
        ck_assert_int_eq(json_integer_value(json_object_get(totals, "valid")), 5);
        ck_assert_int_eq(json_integer_value(json_object_get(totals, "match")), 5);
        ck_assert_int_eq(json_integer_value(json_object_get(totals, "aux_truncated")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(totals, "aux_collision")), 1);
        ck_assert_int_eq(json_integer_value(json_object_get(totals, "spe_no_data")), 1);
        ck_assert_uint_ge(json_array_size(json_object_get(doc, "hottest")), 1);
        /* The log says which PMU and why, event by event, and the machine. */
        ck_assert_msg(strstr(err, "event 0 (PMU arm_spe_0): source spe"), "%s", err);
        ck_assert_msg(strstr(err, "event 1 (PMU software): source none"), "%s", err);
        ck_assert_msg(strstr(err, "MIDR 0x00000000410fd0c0"), "%s", err);
        json_decref(doc);
        free(out);
        free(err);

        /* The text report names the source and the reason for it. */
        ck_assert_int_eq(run_daemon_replay(path, NULL, &out, &err), 0);
        ck_assert_msg(strstr(out, "source: spe on PMU arm_spe"), "%s", out);
        ck_assert_msg(strstr(out, "source choice: event 0: PMU type 11 is arm_spe_0"), "%s", out);
        free(out);
        free(err);
        unlink(path);
}
END_TEST

START_TEST(test_daemon_replays_ibs) {
        char path[64], *out, *err;
        uint8_t *img;
        size_t size;

        img = ibs_capture_image("AuthenticAMD,25,1,1", PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                                            PERF_SAMPLE_RAW | PERF_SAMPLE_IDENTIFIER, &size);
        write_capture(img, size, path, sizeof(path));
        free(img);
        ck_assert_int_eq(run_daemon_replay(path, NULL, &out, &err), 0);
        ck_assert_msg(strstr(out, "source: ibs on PMU ibs_op"), "%s", out);
        ck_assert_msg(strstr(err, "AuthenticAMD family 0x19 model 0x1 stepping 1 (IBS erratum 1293 applies)"), "%s",
                      err);
        ck_assert_msg(strstr(err, "event 0 (PMU ibs_op): source ibs"), "%s", err);
        free(out);
        free(err);
        unlink(path);
}
END_TEST

static Suite *replay_hw_suite(void) {
        Suite *s = suite_create("replay-hw");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_spe_record_order);
        tcase_add_test(tc, test_spe_plan);
        tcase_add_test(tc, test_spe_timestamps);
        tcase_add_test(tc, test_spe_garbage);
        tcase_add_test(tc, test_ibs_erratum_by_cpuid);
        tcase_add_test(tc, test_unknown_pmu_generic);
        tcase_add_test(tc, test_daemon_replays_spe);
        tcase_add_test(tc, test_daemon_replays_ibs);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(replay_hw_suite());
}
