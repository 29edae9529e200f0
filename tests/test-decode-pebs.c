/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Intel PEBS memory samples: both weight forms, data_src field combinations
 * as arch/x86/events/intel/ds.c writes them, and the address fields. */

#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "decode-pebs.h"
#include "macro.h"
#include "ring-reader.h"

#include "check-main.h"

#define P(a, b) ((uint64_t) PERF_MEM_##a##_##b << PERF_MEM_##a##_SHIFT)
#define LN(n) ((uint64_t) (n) << PERF_MEM_LVLNUM_SHIFT)
#define HOPS(n) ((uint64_t) (n) << PERF_MEM_HOPS_SHIFT)
#define REM P(REMOTE, REMOTE)
#define OP_LH (P(OP, LOAD) | P(LVL, HIT))
#define TLB_HIT (P(TLB, HIT) | P(TLB, L1) | P(TLB, L2))

#define ADDR 0x00007ffd12345678ull
#define PHYS 0x0000000234567000ull
#define SOFTWARE_NA 0x1e05080021ull

static struct dp_perf_sample mem_sample(uint64_t data_src, uint64_t weight) {
        return (struct dp_perf_sample) {
                .present = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                           PERF_SAMPLE_CPU | PERF_SAMPLE_WEIGHT | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_PHYS_ADDR,
                .pid = 100, .tid = 101, .time = 5000, .addr = ADDR, .cpu = 2,
                .weight = weight, .data_src = data_src, .phys_addr = PHYS,
        };
}

START_TEST(test_weight_forms) {
        struct dp_perf_sample ps = mem_sample(0, 123);
        struct dp_pebs_weight w;

        ck_assert_int_eq(dp_pebs_weight(&ps, &w), 0);
        ck_assert(!w.is_struct);
        ck_assert_uint_eq(w.full, 123);
        ck_assert_uint_eq(w.latency, 123);
        ck_assert_uint_eq(w.ins_latency, 0);
        ck_assert_uint_eq(w.var3, 0);

        /* A plain WEIGHT wider than 32 bits saturates; it is not split. */
        ps.weight = 0x0007000600000005ull;
        ck_assert_int_eq(dp_pebs_weight(&ps, &w), 0);
        ck_assert_uint_eq(w.latency, UINT32_MAX);
        ck_assert_uint_eq(w.ins_latency, 0);
        ck_assert_uint_eq(w.full, 0x0007000600000005ull);

        /* WEIGHT_STRUCT: var1_dw cache latency, var2_w instruction latency,
         * var3_w the third (retire latency where reported). */
        ps.present = (ps.present & ~PERF_SAMPLE_WEIGHT) | PERF_SAMPLE_WEIGHT_STRUCT;
        ck_assert_int_eq(dp_pebs_weight(&ps, &w), 0);
        ck_assert(w.is_struct);
        ck_assert_uint_eq(w.latency, 5);
        ck_assert_uint_eq(w.ins_latency, 6);
        ck_assert_uint_eq(w.var3, 7);
        ck_assert_uint_eq(w.full, 0x0007000600000005ull);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        {
                union perf_sample_weight u = { .full = ps.weight };

                ck_assert_uint_eq(w.latency, u.var1_dw);
                ck_assert_uint_eq(w.ins_latency, u.var2_w);
                ck_assert_uint_eq(w.var3, u.var3_w);
        }
#endif

        ps.present &= ~PERF_SAMPLE_WEIGHT_STRUCT;
        ck_assert_int_eq(dp_pebs_weight(&ps, &w), -ENODATA);
        ck_assert_uint_eq(w.latency, 0);
}
END_TEST

START_TEST(test_load_sample) {
        struct dp_perf_sample ps = mem_sample(OP_LH | P(LVL, L3) | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, HITM) | TLB_HIT,
                                              87);
        struct dp_sample s;

        memset(&s, 0xa5, sizeof(s));
        s.cpu = 2;
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert_uint_eq(s.vaddr, ADDR);
        ck_assert_uint_eq(s.paddr, PHYS);
        ck_assert_uint_eq(s.pid, 100);
        ck_assert_uint_eq(s.tid, 101);
        ck_assert_uint_eq(s.time, 5000);
        ck_assert_uint_eq(s.cpu, 2);
        ck_assert_uint_eq(s.latency, 87);
        ck_assert_uint_eq(s.data_src, ps.data_src);
        ck_assert_uint_eq(s.flags & ~DP_SAMPLE_LEVEL_MASK, DP_SAMPLE_LOAD | DP_SAMPLE_PHYS_VALID |
                                                                   DP_SAMPLE_DATA_SRC_VALID | DP_SAMPLE_LATENCY_VALID);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L3);
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_VALID);
}
END_TEST

START_TEST(test_store_samples) {
        /* precise_store_data(): L1 hit, or "missed L1" (level unknown). */
        struct dp_perf_sample ps = mem_sample(P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(LVL, HIT) | P(TLB, L2) |
                                                      P(TLB, HIT), 0);
        struct dp_sample s = {};

        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert(s.flags & DP_SAMPLE_STORE);
        ck_assert(!(s.flags & DP_SAMPLE_LOAD));
        /* Stores carry no latency here: weight 0 is not a measurement. */
        ck_assert(!(s.flags & DP_SAMPLE_LATENCY_VALID));
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L1);

        ps.data_src = P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(LVL, MISS) | P(TLB, L2) | P(TLB, MISS) |
                      P(LOCK, LOCKED);
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert(s.flags & DP_SAMPLE_STORE);
        ck_assert(s.flags & DP_SAMPLE_DATA_SRC_VALID);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);

        /* Haswell's precise_datala_hsw(): PERF_MEM_NA with only mem_op changed. */
        ps.data_src = (SOFTWARE_NA & ~P(OP, NA)) | P(OP, STORE);
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert(s.flags & DP_SAMPLE_STORE);
        ck_assert(s.flags & DP_SAMPLE_DATA_SRC_VALID);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);
}
END_TEST

/* The Sandy Bridge table and its Skylake patch-ups, each as a load. */
START_TEST(test_data_src_combinations) {
        static const struct {
                uint64_t v;
                enum dp_mem_level level;
        } rows[] = {
                { P(OP, LOAD) | P(LVL, MISS) | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, NA), DP_MEM_UNKNOWN },
                { OP_LH | P(LVL, L1) | LN(PERF_MEM_LVLNUM_L1) | P(SNOOP, NONE), DP_MEM_L1 },
                { OP_LH | P(LVL, LFB) | LN(PERF_MEM_LVLNUM_LFB) | P(SNOOP, NONE), DP_MEM_L1 },
                { OP_LH | P(LVL, L2) | LN(PERF_MEM_LVLNUM_L2) | P(SNOOP, NONE), DP_MEM_L2 },
                { OP_LH | P(LVL, L3) | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, NONE), DP_MEM_L3 },
                { OP_LH | P(LVL, L3) | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, MISS), DP_MEM_L3 },
                { OP_LH | P(LVL, L3) | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, HIT), DP_MEM_L3 },
                { OP_LH | P(LVL, REM_CCE1) | REM | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, HITM), DP_MEM_REMOTE_CACHE },
                { OP_LH | P(LVL, LOC_RAM) | LN(PERF_MEM_LVLNUM_RAM) | P(SNOOP, HIT), DP_MEM_LOCAL_DRAM },
                { OP_LH | P(LVL, REM_RAM1) | REM | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, HIT), DP_MEM_REMOTE_DRAM },
                { OP_LH | P(LVL, LOC_RAM) | LN(PERF_MEM_LVLNUM_RAM) | P(SNOOP, NONE) | P(SNOOP, MISS),
                  DP_MEM_LOCAL_DRAM },
                { OP_LH | P(LVL, REM_RAM1) | LN(PERF_MEM_LVLNUM_RAM) | REM | P(SNOOP, NONE) | P(SNOOP, MISS),
                  DP_MEM_REMOTE_DRAM },
                { OP_LH | P(LVL, IO) | LN(PERF_MEM_LVLNUM_NA) | P(SNOOP, NONE), DP_MEM_IO },
                { OP_LH | P(LVL, UNC) | LN(PERF_MEM_LVLNUM_NA) | P(SNOOP, NONE), DP_MEM_UNKNOWN },
                { OP_LH | LN(PERF_MEM_LVLNUM_PMEM) | P(SNOOP, HIT), DP_MEM_PMEM },
                { OP_LH | LN(PERF_MEM_LVLNUM_L4) | REM | P(SNOOP, HIT), DP_MEM_REMOTE_CACHE },
                { OP_LH | LN(PERF_MEM_LVLNUM_RAM) | REM | P(SNOOP, NONE), DP_MEM_REMOTE_DRAM },
                { OP_LH | LN(PERF_MEM_LVLNUM_ANY_CACHE) | REM | P(SNOOPX, FWD), DP_MEM_REMOTE_CACHE },
                { OP_LH | LN(PERF_MEM_LVLNUM_ANY_CACHE) | REM | P(SNOOP, HITM), DP_MEM_REMOTE_CACHE },
                /* Sapphire Rapids style remote-socket hops, CXL. */
                { OP_LH | LN(PERF_MEM_LVLNUM_RAM) | REM | HOPS(PERF_MEM_HOPS_2), DP_MEM_REMOTE_DRAM },
                { OP_LH | LN(PERF_MEM_LVLNUM_ANY_CACHE) | REM | HOPS(PERF_MEM_HOPS_2) | P(SNOOP, HITM),
                  DP_MEM_REMOTE_CACHE },
                { OP_LH | LN(PERF_MEM_LVLNUM_CXL), DP_MEM_CXL },
                { OP_LH | LN(DP_PERF_MEM_LVLNUM_L2_MHB) | P(SNOOP, NONE), DP_MEM_L2 },
                { OP_LH | LN(DP_PERF_MEM_LVLNUM_MSC), DP_MEM_L3 },
        };
        const uint64_t tlb_lock[] = { 0, TLB_HIT, P(TLB, MISS) | P(TLB, L2), TLB_HIT | P(LOCK, LOCKED),
                                      P(BLK, DATA), P(BLK, ADDR) };

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++)
                for (size_t j = 0; j < DP_ARRAY_SIZE(tlb_lock); j++) {
                        struct dp_perf_sample ps = mem_sample(rows[i].v | tlb_lock[j], 40 + i);
                        struct dp_sample s = {};

                        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
                        ck_assert_msg(dp_sample_level(&s) == rows[i].level, "row %zu: %s, want %s", i,
                                      dp_mem_level_name(dp_sample_level(&s)), dp_mem_level_name(rows[i].level));
                        ck_assert(s.flags & DP_SAMPLE_LOAD);
                        ck_assert(!(s.flags & DP_SAMPLE_STORE));
                        ck_assert(s.flags & DP_SAMPLE_DATA_SRC_VALID);
                        ck_assert_uint_eq(s.latency, 40 + i);
                        ck_assert_uint_eq(s.data_src, rows[i].v | tlb_lock[j]);
                }
}
END_TEST

START_TEST(test_no_data_src) {
        struct dp_perf_sample ps = mem_sample(SOFTWARE_NA, 0);
        struct dp_sample s = {};

        /* All "not available": nothing claimed. */
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert_uint_eq(s.data_src, SOFTWARE_NA);
        ck_assert_uint_eq(s.flags & (DP_SAMPLE_LOAD | DP_SAMPLE_STORE | DP_SAMPLE_DATA_SRC_VALID), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);

        /* DATA_SRC not asked for: a stale value in the parsed struct is ignored. */
        ps.present &= ~PERF_SAMPLE_DATA_SRC;
        ps.data_src = OP_LH | LN(PERF_MEM_LVLNUM_RAM);
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert_uint_eq(s.data_src, 0);
        ck_assert_uint_eq(s.flags & (DP_SAMPLE_LOAD | DP_SAMPLE_DATA_SRC_VALID), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);

        /* Same for the weight. */
        ps.present &= ~PERF_SAMPLE_WEIGHT;
        ps.weight = 500;
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert_uint_eq(s.latency, 0);
        ck_assert(!(s.flags & DP_SAMPLE_LATENCY_VALID));
}
END_TEST

START_TEST(test_addresses) {
        struct dp_perf_sample ps = mem_sample(OP_LH | LN(PERF_MEM_LVLNUM_L1), 10);
        struct dp_sample s = {};

        /* No physical address (PHYS_ADDR 0 or not asked for). */
        ps.phys_addr = 0;
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert(!(s.flags & DP_SAMPLE_PHYS_VALID));
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_INV_PHYS);
        ps.present &= ~PERF_SAMPLE_PHYS_ADDR;
        ps.phys_addr = PHYS;
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert_uint_eq(s.paddr, 0);
        ck_assert(!(s.flags & DP_SAMPLE_PHYS_VALID));

        /* Address 0 is decoded; the reader counts it as addr_zero. */
        ps.addr = 0;
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert_uint_eq(s.vaddr, 0);
        ck_assert_int_eq(dp_sample_classify(&s, false), DP_C_ADDR_ZERO);

        /* Kernel addresses pass through for the reader to classify. */
        ps.addr = 0xffff888012345678ull;
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
        ck_assert_int_eq(dp_sample_classify(&s, false), DP_C_KERNEL);

        /* Without ADDR there is nothing to attribute. */
        ps.present &= ~PERF_SAMPLE_ADDR;
        ck_assert_int_eq(dp_pebs_decode(&ps, &s), -ENODATA);
}
END_TEST

/* Any data_src and weight decodes to a consistent sample. */
START_TEST(test_random_consistency) {
        uint64_t x = 0x9e3779b97f4a7c15ull;

        for (int i = 0; i < 50000; i++) {
                struct dp_perf_sample ps;
                struct dp_mem_data_src m;
                struct dp_sample s = {};

                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                ps = mem_sample(x, x >> 17);
                if (i & 1)
                        ps.present = (ps.present & ~PERF_SAMPLE_WEIGHT) | PERF_SAMPLE_WEIGHT_STRUCT;
                ck_assert_int_eq(dp_pebs_decode(&ps, &s), 0);
                dp_mem_data_src_unpack(x, &m);
                ck_assert_int_lt(dp_sample_level(&s), _DP_MEM_LEVEL_MAX);
                ck_assert_int_eq(!!(s.flags & DP_SAMPLE_DATA_SRC_VALID), !dp_mem_data_src_is_na(x));
                if (s.flags & DP_SAMPLE_DATA_SRC_VALID) {
                        ck_assert_int_eq(!!(s.flags & DP_SAMPLE_LOAD), !!(m.op & PERF_MEM_OP_LOAD));
                        ck_assert_int_eq(!!(s.flags & DP_SAMPLE_STORE), !!(m.op & PERF_MEM_OP_STORE));
                        ck_assert_int_eq(dp_sample_level(&s), dp_mem_level_from_data_src(x));
                } else
                        ck_assert_uint_eq(s.flags & (DP_SAMPLE_LOAD | DP_SAMPLE_STORE | DP_SAMPLE_LEVEL_MASK), 0);
                ck_assert_int_eq(!!(s.flags & DP_SAMPLE_LATENCY_VALID), s.latency != 0);
                ck_assert_uint_eq(s.flags & ~(DP_SAMPLE_LOAD | DP_SAMPLE_STORE | DP_SAMPLE_PHYS_VALID |
                                              DP_SAMPLE_DATA_SRC_VALID | DP_SAMPLE_LATENCY_VALID |
                                              DP_SAMPLE_LEVEL_MASK), 0);
        }
}
END_TEST

static Suite *decode_pebs_suite(void) {
        Suite *s = suite_create("decode-pebs");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_weight_forms);
        tcase_add_test(tc, test_load_sample);
        tcase_add_test(tc, test_store_samples);
        tcase_add_test(tc, test_data_src_combinations);
        tcase_add_test(tc, test_no_data_src);
        tcase_add_test(tc, test_addresses);
        tcase_add_test(tc, test_random_consistency);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(decode_pebs_suite());
}
