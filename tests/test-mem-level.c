/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The memory-level table: every row of the mapping documented in
 * lib/source/mem-level.c, for perf_mem_data_src, IBS and SPE codes, plus the
 * perf_mem_data_src field (un)packing and the level names. */

#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "macro.h"
#include "mem-level.h"

#include "check-main.h"

#define P(a, b) ((uint64_t) PERF_MEM_##a##_##b << PERF_MEM_##a##_SHIFT)
#define LN(n) ((uint64_t) (n) << PERF_MEM_LVLNUM_SHIFT)
#define HOPS(n) ((uint64_t) (n) << PERF_MEM_HOPS_SHIFT)
#define REM P(REMOTE, REMOTE)
#define OP_LH (P(OP, LOAD) | P(LVL, HIT))

/* What software events report: every field "not available" (FIELD-NOTES §1). */
#define SOFTWARE_NA 0x1e05080021ull

START_TEST(test_names) {
        const char *seen[_DP_MEM_LEVEL_MAX] = {};

        for (unsigned i = 0; i < _DP_MEM_LEVEL_MAX; i++) {
                const char *name = dp_mem_level_name((enum dp_mem_level) i);
                enum dp_mem_level back;

                ck_assert_ptr_nonnull(name);
                for (unsigned j = 0; j < i; j++)
                        ck_assert_str_ne(seen[j], name);
                seen[i] = name;
                ck_assert_int_eq(dp_mem_level_from_name(name, &back), 0);
                ck_assert_int_eq(back, i);
        }
        ck_assert_str_eq(dp_mem_level_name(DP_MEM_UNKNOWN), "unknown");
        ck_assert_str_eq(dp_mem_level_name(DP_MEM_L1), "l1");
        ck_assert_str_eq(dp_mem_level_name(DP_MEM_LOCAL_DRAM), "local-dram");
        ck_assert_str_eq(dp_mem_level_name(DP_MEM_REMOTE_CACHE), "remote-cache");
        ck_assert_str_eq(dp_mem_level_name(DP_MEM_PMEM), "pmem");
        ck_assert_ptr_null(dp_mem_level_name(_DP_MEM_LEVEL_MAX));
        ck_assert_ptr_null(dp_mem_level_name((enum dp_mem_level) 15));

        enum dp_mem_level l = DP_MEM_L2;
        ck_assert_int_eq(dp_mem_level_from_name("L1", &l), -EINVAL);
        ck_assert_int_eq(dp_mem_level_from_name("", &l), -EINVAL);
        ck_assert_int_eq(dp_mem_level_from_name(NULL, &l), -EINVAL);
        ck_assert_int_eq(l, DP_MEM_L2);
}
END_TEST

START_TEST(test_unpack_known) {
        struct dp_mem_data_src s;

        dp_mem_data_src_unpack(SOFTWARE_NA, &s);
        ck_assert_uint_eq(s.op, PERF_MEM_OP_NA);
        ck_assert_uint_eq(s.lvl, PERF_MEM_LVL_NA);
        ck_assert_uint_eq(s.snoop, PERF_MEM_SNOOP_NA);
        ck_assert_uint_eq(s.lock, PERF_MEM_LOCK_NA);
        ck_assert_uint_eq(s.dtlb, PERF_MEM_TLB_NA);
        ck_assert_uint_eq(s.lvl_num, PERF_MEM_LVLNUM_NA);
        ck_assert_uint_eq(s.remote | s.snoopx | s.blk | s.hops, 0);

        dp_mem_data_src_unpack(P(OP, STORE) | P(LVL, L3) | P(LVL, HIT) | P(SNOOP, HITM) | P(LOCK, LOCKED) |
                               P(TLB, L2) | P(TLB, MISS) | LN(PERF_MEM_LVLNUM_L3) | REM |
                               P(SNOOPX, PEER) | P(BLK, ADDR) | HOPS(PERF_MEM_HOPS_3), &s);
        ck_assert_uint_eq(s.op, PERF_MEM_OP_STORE);
        ck_assert_uint_eq(s.lvl, PERF_MEM_LVL_L3 | PERF_MEM_LVL_HIT);
        ck_assert_uint_eq(s.snoop, PERF_MEM_SNOOP_HITM);
        ck_assert_uint_eq(s.lock, PERF_MEM_LOCK_LOCKED);
        ck_assert_uint_eq(s.dtlb, PERF_MEM_TLB_L2 | PERF_MEM_TLB_MISS);
        ck_assert_uint_eq(s.lvl_num, PERF_MEM_LVLNUM_L3);
        ck_assert_uint_eq(s.remote, 1);
        ck_assert_uint_eq(s.snoopx, PERF_MEM_SNOOPX_PEER);
        ck_assert_uint_eq(s.blk, PERF_MEM_BLK_ADDR);
        ck_assert_uint_eq(s.hops, PERF_MEM_HOPS_3);
}
END_TEST

START_TEST(test_pack_roundtrip_and_union) {
        const uint64_t used = (1ull << 46) - 1;     /* the 46 defined bits */
        uint64_t x = 0x9e3779b97f4a7c15ull;

        for (int i = 0; i < 20000; i++) {
                struct dp_mem_data_src s;
                union perf_mem_data_src u;

                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                dp_mem_data_src_unpack(x, &s);
                ck_assert_uint_eq(dp_mem_data_src_pack(&s), x & used);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                /* Our shifts agree with the uapi bitfields. */
                u.val = x;
                ck_assert_uint_eq(s.op, u.mem_op);
                ck_assert_uint_eq(s.lvl, u.mem_lvl);
                ck_assert_uint_eq(s.snoop, u.mem_snoop);
                ck_assert_uint_eq(s.lock, u.mem_lock);
                ck_assert_uint_eq(s.dtlb, u.mem_dtlb);
                ck_assert_uint_eq(s.lvl_num, u.mem_lvl_num);
                ck_assert_uint_eq(s.remote, u.mem_remote);
                ck_assert_uint_eq(s.snoopx, u.mem_snoopx);
                ck_assert_uint_eq(s.blk, u.mem_blk);
                ck_assert_uint_eq(s.hops, u.mem_hops);
#else
                (void) u;
#endif
        }
}
END_TEST

START_TEST(test_is_na) {
        /* The kernel's PERF_MEM_NA, without and with LVLNUM_NA. */
        ck_assert(dp_mem_data_src_is_na(0));
        ck_assert(dp_mem_data_src_is_na(0x5080021));
        ck_assert(dp_mem_data_src_is_na(SOFTWARE_NA));
        ck_assert(dp_mem_data_src_is_na(P(BLK, NA)));
        ck_assert(dp_mem_data_src_is_na(SOFTWARE_NA & ~P(OP, NA)));

        /* Any real information makes it valid. */
        ck_assert(!dp_mem_data_src_is_na(P(OP, LOAD)));
        ck_assert(!dp_mem_data_src_is_na(SOFTWARE_NA | P(OP, STORE)));
        ck_assert(!dp_mem_data_src_is_na(P(LVL, NA) | P(LVL, HIT)));
        ck_assert(!dp_mem_data_src_is_na(P(TLB, L1)));
        ck_assert(!dp_mem_data_src_is_na(LN(PERF_MEM_LVLNUM_RAM)));
        ck_assert(!dp_mem_data_src_is_na(REM));
        ck_assert(!dp_mem_data_src_is_na(HOPS(PERF_MEM_HOPS_0)));
        ck_assert(!dp_mem_data_src_is_na(P(SNOOPX, FWD)));
        ck_assert(!dp_mem_data_src_is_na(P(BLK, DATA)));
        ck_assert(!dp_mem_data_src_is_na(P(LOCK, LOCKED)));
        ck_assert(!dp_mem_data_src_is_na(P(SNOOP, HIT)));
}
END_TEST

/* Every mem_lvl_num value, with and without remote/hops markers. */
START_TEST(test_lvl_num_table) {
        static const struct {
                uint8_t lvl_num;
                enum dp_mem_level local, remote;
        } rows[] = {
                { PERF_MEM_LVLNUM_L1, DP_MEM_L1, DP_MEM_L1 },
                { PERF_MEM_LVLNUM_L2, DP_MEM_L2, DP_MEM_L2 },
                { PERF_MEM_LVLNUM_L3, DP_MEM_L3, DP_MEM_REMOTE_CACHE },
                { PERF_MEM_LVLNUM_L4, DP_MEM_L3, DP_MEM_REMOTE_CACHE },
                { DP_PERF_MEM_LVLNUM_L2_MHB, DP_MEM_L2, DP_MEM_L2 },
                { DP_PERF_MEM_LVLNUM_MSC, DP_MEM_L3, DP_MEM_REMOTE_CACHE },
                { 0x07, DP_MEM_UNKNOWN, DP_MEM_UNKNOWN },        /* reserved */
                { DP_PERF_MEM_LVLNUM_UNC, DP_MEM_UNKNOWN, DP_MEM_UNKNOWN },
                { PERF_MEM_LVLNUM_CXL, DP_MEM_CXL, DP_MEM_CXL },
                { PERF_MEM_LVLNUM_IO, DP_MEM_IO, DP_MEM_IO },
                { PERF_MEM_LVLNUM_ANY_CACHE, DP_MEM_L3, DP_MEM_REMOTE_CACHE },
                { PERF_MEM_LVLNUM_LFB, DP_MEM_L1, DP_MEM_L1 },
                { PERF_MEM_LVLNUM_RAM, DP_MEM_LOCAL_DRAM, DP_MEM_REMOTE_DRAM },
                { PERF_MEM_LVLNUM_PMEM, DP_MEM_PMEM, DP_MEM_PMEM },
                { PERF_MEM_LVLNUM_NA, DP_MEM_UNKNOWN, DP_MEM_UNKNOWN },
                { 0, DP_MEM_UNKNOWN, DP_MEM_UNKNOWN },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++) {
                uint64_t base = P(OP, LOAD) | P(LVL, HIT) | LN(rows[i].lvl_num);

                ck_assert_msg(dp_mem_level_from_data_src(base) == rows[i].local, "lvl_num %u", rows[i].lvl_num);
                /* HOPS_0 (another core, same node) alone is not remote. */
                ck_assert_int_eq(dp_mem_level_from_data_src(base | HOPS(PERF_MEM_HOPS_0)), rows[i].local);
                ck_assert_int_eq(dp_mem_level_from_data_src(base | REM), rows[i].remote);
                ck_assert_int_eq(dp_mem_level_from_data_src(base | REM | HOPS(PERF_MEM_HOPS_0)), rows[i].remote);
                for (unsigned h = PERF_MEM_HOPS_1; h <= PERF_MEM_HOPS_3; h++)
                        ck_assert_int_eq(dp_mem_level_from_data_src(base | HOPS(h)), rows[i].remote);
                /* A miss never names the serving level. */
                ck_assert_int_eq(dp_mem_level_from_data_src(P(OP, LOAD) | P(LVL, MISS) | LN(rows[i].lvl_num)),
                                 DP_MEM_UNKNOWN);
        }
}
END_TEST

/* The legacy mem_lvl bits, used when mem_lvl_num is 0 or NA. */
START_TEST(test_legacy_table) {
        static const struct {
                uint16_t lvl;
                enum dp_mem_level level;
        } rows[] = {
                { PERF_MEM_LVL_L1, DP_MEM_L1 },
                { PERF_MEM_LVL_LFB, DP_MEM_L1 },
                { PERF_MEM_LVL_L2, DP_MEM_L2 },
                { PERF_MEM_LVL_L3, DP_MEM_L3 },
                { PERF_MEM_LVL_LOC_RAM, DP_MEM_LOCAL_DRAM },
                { PERF_MEM_LVL_REM_RAM1, DP_MEM_REMOTE_DRAM },
                { PERF_MEM_LVL_REM_RAM2, DP_MEM_REMOTE_DRAM },
                { PERF_MEM_LVL_REM_CCE1, DP_MEM_REMOTE_CACHE },
                { PERF_MEM_LVL_REM_CCE2, DP_MEM_REMOTE_CACHE },
                { PERF_MEM_LVL_IO, DP_MEM_IO },
                { PERF_MEM_LVL_UNC, DP_MEM_UNKNOWN },
                { 0, DP_MEM_UNKNOWN },
                /* First match wins: the old IBS "local cache" is L3 | REM_CCE1. */
                { PERF_MEM_LVL_L3 | PERF_MEM_LVL_REM_CCE1, DP_MEM_L3 },
                { PERF_MEM_LVL_L2 | PERF_MEM_LVL_LOC_RAM, DP_MEM_L2 },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++) {
                uint64_t lvl = (uint64_t) rows[i].lvl << PERF_MEM_LVL_SHIFT;

                ck_assert_msg(dp_mem_level_from_data_src(P(OP, LOAD) | P(LVL, HIT) | lvl) == rows[i].level,
                              "lvl 0x%x", rows[i].lvl);
                ck_assert_int_eq(dp_mem_level_from_data_src(P(LVL, HIT) | lvl | LN(PERF_MEM_LVLNUM_NA)),
                                 rows[i].level);
                /* A level with MISS and no HIT is where the access missed. */
                ck_assert_int_eq(dp_mem_level_from_data_src(P(LVL, MISS) | lvl), DP_MEM_UNKNOWN);
                ck_assert_int_eq(dp_mem_level_from_data_src(P(LVL, NA) | lvl), DP_MEM_UNKNOWN);
        }
        /* Without HIT or MISS, a level bit still names the level (HSW stores
         * before the HIT bit, SPE-synthesized values). */
        ck_assert_int_eq(dp_mem_level_from_data_src(P(LVL, L2)), DP_MEM_L2);
        ck_assert_int_eq(dp_mem_level_from_data_src(SOFTWARE_NA), DP_MEM_UNKNOWN);
        ck_assert_int_eq(dp_mem_level_from_data_src(0), DP_MEM_UNKNOWN);
}
END_TEST

/* The values arch/x86/events/intel/ds.c reports (Sandy Bridge table, its
 * Skylake patch, stores) land where they should. */
START_TEST(test_pebs_kernel_encodings) {
        static const struct {
                uint64_t v;
                enum dp_mem_level level;
        } rows[] = {
                { P(OP, LOAD) | P(LVL, MISS) | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, NA), DP_MEM_UNKNOWN },
                { OP_LH | P(LVL, L1) | LN(PERF_MEM_LVLNUM_L1) | P(SNOOP, NONE), DP_MEM_L1 },
                { OP_LH | P(LVL, LFB) | LN(PERF_MEM_LVLNUM_LFB) | P(SNOOP, NONE), DP_MEM_L1 },
                { OP_LH | P(LVL, L2) | LN(PERF_MEM_LVLNUM_L2) | P(SNOOP, NONE), DP_MEM_L2 },
                { OP_LH | P(LVL, L3) | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, HITM), DP_MEM_L3 },
                { OP_LH | P(LVL, REM_CCE1) | REM | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, HIT), DP_MEM_REMOTE_CACHE },
                { OP_LH | P(LVL, LOC_RAM) | LN(PERF_MEM_LVLNUM_RAM) | P(SNOOP, HIT), DP_MEM_LOCAL_DRAM },
                /* 0x0b on Sandy Bridge: lvl_num names the L3 that missed. */
                { OP_LH | P(LVL, REM_RAM1) | REM | LN(PERF_MEM_LVLNUM_L3) | P(SNOOP, HIT), DP_MEM_REMOTE_DRAM },
                { OP_LH | P(LVL, REM_RAM1) | LN(PERF_MEM_LVLNUM_RAM) | REM | P(SNOOP, NONE), DP_MEM_REMOTE_DRAM },
                { OP_LH | P(LVL, IO) | LN(PERF_MEM_LVLNUM_NA) | P(SNOOP, NONE), DP_MEM_IO },
                { OP_LH | P(LVL, UNC) | LN(PERF_MEM_LVLNUM_NA) | P(SNOOP, NONE), DP_MEM_UNKNOWN },
                /* Skylake patch-ups. */
                { OP_LH | LN(PERF_MEM_LVLNUM_PMEM) | P(SNOOP, HIT), DP_MEM_PMEM },
                { OP_LH | LN(PERF_MEM_LVLNUM_PMEM) | REM | P(SNOOP, HIT), DP_MEM_PMEM },
                { OP_LH | LN(PERF_MEM_LVLNUM_L4) | P(SNOOP, HIT), DP_MEM_L3 },
                { OP_LH | LN(PERF_MEM_LVLNUM_RAM) | REM | P(SNOOP, NONE), DP_MEM_REMOTE_DRAM },
                { OP_LH | LN(PERF_MEM_LVLNUM_ANY_CACHE) | REM | P(SNOOPX, FWD), DP_MEM_REMOTE_CACHE },
                /* Lion Cove's L2 miss handling buffer. */
                { OP_LH | LN(DP_PERF_MEM_LVLNUM_L2_MHB) | P(SNOOP, NONE), DP_MEM_L2 },
                /* Precise stores: L1 hit or "missed L1". */
                { P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(LVL, HIT) | P(TLB, L2) | P(TLB, HIT), DP_MEM_L1 },
                { P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(LVL, MISS) | P(TLB, L2) | P(TLB, HIT), DP_MEM_UNKNOWN },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++)
                ck_assert_msg(dp_mem_level_from_data_src(rows[i].v) == rows[i].level, "row %zu: %s, want %s", i,
                              dp_mem_level_name(dp_mem_level_from_data_src(rows[i].v)),
                              dp_mem_level_name(rows[i].level));
}
END_TEST

START_TEST(test_ibs_extended_table) {
        for (unsigned code = 0; code < 32; code++) {
                enum dp_mem_level local, remote;

                switch (code) {
                case 1:
                        local = remote = DP_MEM_L3;
                        break;
                case 2:
                case 5:
                        local = remote = DP_MEM_REMOTE_CACHE;
                        break;
                case 3:
                        local = DP_MEM_LOCAL_DRAM;
                        remote = DP_MEM_REMOTE_DRAM;
                        break;
                case 6:
                        local = remote = DP_MEM_PMEM;
                        break;
                case 7:
                        local = remote = DP_MEM_IO;
                        break;
                case 8:
                        local = remote = DP_MEM_CXL;
                        break;
                case 12:
                        local = remote = DP_MEM_REMOTE_DRAM;
                        break;
                default:
                        local = remote = DP_MEM_UNKNOWN;
                }
                ck_assert_msg(dp_mem_level_from_ibs(code, true, false) == local, "code %u", code);
                ck_assert_msg(dp_mem_level_from_ibs(code, true, true) == remote, "code %u remote", code);
        }
        ck_assert_int_eq(dp_mem_level_from_ibs(1000, true, false), DP_MEM_UNKNOWN);
}
END_TEST

START_TEST(test_ibs_legacy_table) {
        for (unsigned code = 0; code < 32; code++) {
                enum dp_mem_level local, remote;

                switch (code) {
                case 2:
                        local = remote = DP_MEM_L3;
                        break;
                case 3:
                        local = DP_MEM_LOCAL_DRAM;
                        remote = DP_MEM_REMOTE_DRAM;
                        break;
                case 4:
                        local = remote = DP_MEM_REMOTE_CACHE;
                        break;
                case 7:
                        local = remote = DP_MEM_IO;
                        break;
                default:
                        local = remote = DP_MEM_UNKNOWN;
                }
                ck_assert_msg(dp_mem_level_from_ibs(code, false, false) == local, "code %u", code);
                ck_assert_msg(dp_mem_level_from_ibs(code, false, true) == remote, "code %u remote", code);
        }
}
END_TEST

START_TEST(test_spe_table) {
        for (unsigned code = 0; code <= 0xffff; code++) {
                enum dp_mem_level want;

                switch (code) {
                case 0x0:
                        want = DP_MEM_L1;
                        break;
                case 0x8:
                case 0x9:
                        want = DP_MEM_L2;
                        break;
                case 0xa:
                case 0xb:
                        want = DP_MEM_L3;
                        break;
                case 0xc:
                case 0xd:
                        want = DP_MEM_REMOTE_CACHE;
                        break;
                case 0xe:
                        want = DP_MEM_LOCAL_DRAM;
                        break;
                default:
                        want = DP_MEM_UNKNOWN;
                }
                ck_assert_msg(dp_mem_level_from_spe((uint16_t) code) == want, "code 0x%x", code);
        }
}
END_TEST

/* Every level the mappings produce is inside the enum, for any input. */
START_TEST(test_levels_in_range) {
        uint64_t x = 88172645463325252ull;

        for (int i = 0; i < 100000; i++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                ck_assert_int_lt(dp_mem_level_from_data_src(x), _DP_MEM_LEVEL_MAX);
                ck_assert_int_lt(dp_mem_level_from_ibs((unsigned) x, x >> 40 & 1, x >> 41 & 1), _DP_MEM_LEVEL_MAX);
        }
}
END_TEST

static Suite *mem_level_suite(void) {
        Suite *s = suite_create("mem-level");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_names);
        tcase_add_test(tc, test_unpack_known);
        tcase_add_test(tc, test_pack_roundtrip_and_union);
        tcase_add_test(tc, test_is_na);
        tcase_add_test(tc, test_lvl_num_table);
        tcase_add_test(tc, test_legacy_table);
        tcase_add_test(tc, test_pebs_kernel_encodings);
        tcase_add_test(tc, test_ibs_extended_table);
        tcase_add_test(tc, test_ibs_legacy_table);
        tcase_add_test(tc, test_spe_table);
        tcase_add_test(tc, test_levels_in_range);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(mem_level_suite());
}
