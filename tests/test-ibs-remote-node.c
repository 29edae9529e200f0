/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* IBS OP_DATA2 RmtNode against the kernel's own data_src tables
 * (arch/x86/events/amd/ibs.c since 6.2: g_zen4_data_src[], g_data_src[] and
 * their ZEN4_RMT_NODE_APPLICABLE() / RMT_NODE_APPLICABLE() masks): every
 * data source code, Zen 4 and earlier, with RmtNode 0 and 1, the level bits
 * of the synthesized data_src bit for bit and our level. */
#include <check.h>
#include <linux/perf_event.h>
#include <stdbool.h>

#include "decode-ibs.h"
#include "macro.h"
#include "mem-level.h"

#include "check-main.h"
#include "ibs-registers.h"

#define CAPS_BASE (DP_IBS_CAPS_AVAIL | DP_IBS_CAPS_FETCHSAM | DP_IBS_CAPS_OPSAM)
#define CAPS_ZEN4 (CAPS_BASE | DP_IBS_CAPS_ZEN4)

/* The kernel's macros, spelled as it spells them. */
#define L(x) ((uint64_t) (PERF_MEM_LVL_##x | PERF_MEM_LVL_HIT) << PERF_MEM_LVL_SHIFT)
#define LN(x) ((uint64_t) PERF_MEM_LVLNUM_##x << PERF_MEM_LVLNUM_SHIFT)
#define REM ((uint64_t) PERF_MEM_REMOTE_REMOTE << PERF_MEM_REMOTE_SHIFT)
#define HOPS(x) ((uint64_t) PERF_MEM_HOPS_##x << PERF_MEM_HOPS_SHIFT)
#define LVL_NA ((uint64_t) PERF_MEM_LVL_NA << PERF_MEM_LVL_SHIFT)

static const uint64_t g_zen4_data_src[32] = {
        [1] = L(L3) | LN(L3),
        [2] = L(REM_CCE1) | LN(ANY_CACHE) | REM | HOPS(0),
        [3] = L(LOC_RAM) | LN(RAM),
        [5] = L(REM_CCE2) | LN(ANY_CACHE) | REM | HOPS(1),
        [6] = LN(PMEM),
        [7] = L(IO) | LN(IO),
        [8] = LN(CXL),
};
#define ZEN4_RMT_NODE_BITS ((1u << 3) | (1u << 6) | (1u << 8))        /* DRAM, PMEM, EXT_MEM */

static const uint64_t g_data_src[8] = {
        [2] = L(L3) | L(REM_CCE1) | LN(ANY_CACHE) | HOPS(0),
        [3] = L(LOC_RAM) | LN(RAM),
        [4] = L(REM_CCE2) | LN(ANY_CACHE) | REM | HOPS(1),
        [7] = L(IO) | LN(IO),
};
#define RMT_NODE_BITS (1u << 3)                                         /* DRAM */

/* perf_ibs_get_mem_lvl() for a load that missed L1 and L2, without
 * DcMissNoMabAlloc. */
static uint64_t kernel_level_bits(bool zen4, unsigned code, bool rmt_node) {
        uint64_t v = zen4 ? g_zen4_data_src[code] : g_data_src[code];
        uint32_t applicable = zen4 ? ZEN4_RMT_NODE_BITS : RMT_NODE_BITS;

        if (!v)
                return LVL_NA | LN(NA);
        if (rmt_node && (applicable & (1u << code))) {
                if (code == 3)
                        return L(REM_RAM1) | LN(RAM) | REM | HOPS(1);
                return v | REM | HOPS(1);
        }
        return v;
}

/* Our level: the same reading, except peer-agent memory (doc/mem-levels.rst). */
static enum dp_mem_level our_level(bool zen4, unsigned code, bool rmt_node) {
        switch (zen4 ? code : code + 100) {
        case 1: case 102:
                return DP_MEM_L3;
        case 2: case 5: case 104:
                return DP_MEM_REMOTE_CACHE;
        case 3: case 103:
                return rmt_node ? DP_MEM_REMOTE_DRAM : DP_MEM_LOCAL_DRAM;
        case 6:
                return DP_MEM_PMEM;
        case 7: case 107:
                return DP_MEM_IO;
        case 8:
                return DP_MEM_CXL;
        case 12:
                return DP_MEM_REMOTE_DRAM;
        default:
                return DP_MEM_UNKNOWN;
        }
}

START_TEST(test_every_code_with_and_without_remote_node) {
        const uint64_t level_mask = (0x3fffull << PERF_MEM_LVL_SHIFT) | (0xfull << PERF_MEM_LVLNUM_SHIFT) | REM |
                                    (7ull << PERF_MEM_HOPS_SHIFT);
        size_t checked = 0;

        for (int zen4 = 0; zen4 <= 1; zen4++)
                for (unsigned code = 0; code < (zen4 ? 32u : 8u); code++)
                        for (int rmt = 0; rmt <= 1; rmt++) {
                                /* CacheHitSt set: no snoop bits to mask out. */
                                struct dp_ibs_op_regs r = {
                                        .caps = zen4 ? CAPS_ZEN4 : CAPS_BASE,
                                        .op_ctl = CTL_OK,
                                        .op_data2 = D2_CODE(code) | D2_CACHE_HIT_ST | (rmt ? D2_RMT_NODE : 0),
                                        .op_data3 = D3_LD | D3_LIN_VALID | D3_DC_MISS | D3_L2_MISS,
                                        .dc_lin_addr = 0x7f0000001000ull,
                                };
                                struct dp_ibs_op_fields f;
                                uint64_t got, want = kernel_level_bits(zen4, code, rmt);

                                dp_ibs_op_decode_regs(&r, NULL, &f);
                                ck_assert_int_eq(f.rmt_node, rmt);
                                got = dp_ibs_op_data_src(&f, NULL) & level_mask;
                                ck_assert_msg(got == want, "zen4 %d code %u RmtNode %d: 0x%llx, kernel 0x%llx", zen4,
                                              code, rmt, (unsigned long long) got, (unsigned long long) want);
                                ck_assert_msg(dp_ibs_op_level(&f) == our_level(zen4, code, rmt),
                                              "zen4 %d code %u RmtNode %d: %s", zen4, code, rmt,
                                              dp_mem_level_name(dp_ibs_op_level(&f)));
                                checked++;
                        }
        ck_assert_uint_eq(checked, 2 * (32 + 8));
}
END_TEST

/* RmtNode says nothing of caches or I/O: the same level with 0 and 1. */
START_TEST(test_remote_node_ignored_where_not_applicable) {
        static const struct {
                bool zen4;
                unsigned code;
        } rows[] = { { true, 1 }, { true, 2 }, { true, 5 }, { true, 7 }, { true, 12 },
                     { false, 2 }, { false, 4 }, { false, 7 } };

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++) {
                ck_assert_uint_eq(kernel_level_bits(rows[i].zen4, rows[i].code, false),
                                  kernel_level_bits(rows[i].zen4, rows[i].code, true));
                ck_assert_int_eq(dp_mem_level_from_ibs(rows[i].code, rows[i].zen4, false),
                                 dp_mem_level_from_ibs(rows[i].code, rows[i].zen4, true));
        }
}
END_TEST

static Suite *ibs_remote_node_suite(void) {
        Suite *s = suite_create("ibs-remote-node");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_every_code_with_and_without_remote_node);
        tcase_add_test(tc, test_remote_node_ignored_where_not_applicable);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(ibs_remote_node_suite());
}
