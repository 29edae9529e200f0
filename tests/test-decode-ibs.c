/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* AMD IBS op decoding from payloads built from the register layouts: the
 * known answer of the kernel's IBS documentation, optional trailing
 * registers, validity bits, every data source code, erratum 1293, truncation
 * at every length, and the kernel-filled path agreeing with RAW decoding. */

#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "decode-ibs.h"
#include "macro.h"
#include "mem-level.h"
#include "ring-reader.h"

#include "check-main.h"
#include "ibs-registers.h"

#define CAPS_BASE (DP_IBS_CAPS_AVAIL | DP_IBS_CAPS_FETCHSAM | DP_IBS_CAPS_OPSAM)
#define CAPS_ZEN4 (CAPS_BASE | DP_IBS_CAPS_ZEN4)

#define P(a, b) ((uint64_t) PERF_MEM_##a##_##b << PERF_MEM_##a##_SHIFT)
#define LN(n) ((uint64_t) (n) << PERF_MEM_LVLNUM_SHIFT)
#define HOPS(n) ((uint64_t) (n) << PERF_MEM_HOPS_SHIFT)
#define REM P(REMOTE, REMOTE)
#define MEM_NA (P(OP, NA) | P(LVL, NA) | P(SNOOP, NA) | P(LOCK, NA) | P(TLB, NA) | LN(PERF_MEM_LVLNUM_NA))

#define LIN 0x00007f0012345678ull
#define PHYS 0x0000000123456000ull

static const struct dp_ibs_cpu zen3_b1 = { .family = 0x19, .model = 0x01 };   /* erratum 1293 */
static const struct dp_ibs_cpu zen4 = { .family = 0x19, .model = 0x11 };

struct payload {
        uint8_t bytes[4 + 8 * 12] __attribute__((aligned(8)));
        size_t size;
};

/* Lays the registers out as the kernel does: caps, the seven fixed MSRs,
 * then BR_TARGET and OP_DATA4 when caps announce them. */
static void build(struct payload *p, const struct dp_ibs_op_regs *r) {
        uint64_t regs[9] = { r->op_ctl, r->op_rip, r->op_data, r->op_data2, r->op_data3,
                             r->dc_lin_addr, r->dc_phys_addr };
        size_t n = 7;

        if (r->caps & DP_IBS_CAPS_BRNTRGT)
                regs[n++] = r->br_target;
        if (r->caps & DP_IBS_CAPS_OPDATA4)
                regs[n++] = r->op_data4;
        memset(p->bytes, 0, sizeof(p->bytes));
        memcpy(p->bytes, &r->caps, 4);
        memcpy(p->bytes + 4, regs, 8 * n);
        p->size = 4 + 8 * n;
}

static struct dp_ibs_op_regs regs_of(uint32_t caps, uint64_t d2, uint64_t d3) {
        return (struct dp_ibs_op_regs) {
                .caps = caps, .op_ctl = CTL_OK, .op_rip = 0x401000, .op_data2 = d2, .op_data3 = d3,
                .dc_lin_addr = LIN, .dc_phys_addr = PHYS,
        };
}

static struct dp_perf_sample raw_sample(const struct payload *p) {
        return (struct dp_perf_sample) {
                .present = PERF_SAMPLE_RAW | PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
                .pid = 42, .tid = 43, .time = 1000,
                .raw = p->bytes, .raw_size = (uint32_t) p->size,
        };
}

/* Decodes registers given as a RAW payload. */
static int decode_regs(const struct dp_ibs_op_regs *r, const struct dp_ibs_cpu *cpu, struct dp_sample *s) {
        struct payload p;
        struct dp_perf_sample ps;

        build(&p, r);
        ps = raw_sample(&p);
        memset(s, 0xa5, sizeof(*s));
        s->cpu = 7;
        return dp_ibs_op_decode(&ps, cpu, s);
}

START_TEST(test_known_answer) {
        struct dp_ibs_op_regs r = {
                .caps = 0xfff, .op_ctl = 0x000002c30006186aull, .op_rip = 0xffffffff81000000ull,
                .op_data3 = 0x0000000031960092ull,
                .dc_lin_addr = 0xff110008a5398920ull, .dc_phys_addr = 0x00000008a5398920ull,
        };
        struct dp_ibs_op_fields f;
        struct dp_sample s;

        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(f.max_cnt, 100000);
        ck_assert(f.op_en && f.op_val && !f.cnt_ctl && !f.l3_miss_only && !f.ldlat_en);
        ck_assert_uint_eq(f.cur_cnt, 707);

        ck_assert(f.st_op && !f.ld_op);
        ck_assert(f.dc_miss && f.l2_miss && f.l2_miss_valid);
        ck_assert(f.dc_lin_addr_valid && f.dc_phy_addr_valid);
        ck_assert(f.dc_l1tlb_hit_2m);
        ck_assert(!f.dc_l1tlb_miss && !f.dc_l2tlb_miss && !f.dc_uc_mem_acc && !f.dc_locked_op);
        ck_assert(!f.dc_miss_no_mab_alloc && !f.sw_pf && !f.dc_l2_tlb_hit_1g);
        ck_assert_uint_eq(f.op_mem_width, 6);
        ck_assert_uint_eq(f.op_mem_width_bytes, 32);
        ck_assert_uint_eq(f.op_dc_miss_open_mem_reqs, 12);
        ck_assert_uint_eq(f.dc_miss_lat, 0);
        ck_assert_uint_eq(f.dc_lin_addr, 0xff110008a5398920ull);
        ck_assert_uint_eq(f.dc_phys_addr, 0x8a5398920ull);

        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_uint_eq(s.vaddr, 0xff110008a5398920ull);
        ck_assert_uint_eq(s.paddr, 0x8a5398920ull);
        ck_assert(s.pid == 42 && s.tid == 43 && s.time == 1000 && s.cpu == 7);
        ck_assert_uint_eq(s.flags & ~DP_SAMPLE_LEVEL_MASK,
                          DP_SAMPLE_STORE | DP_SAMPLE_PHYS_VALID | DP_SAMPLE_DATA_SRC_VALID);
        /* A store that missed L2: OP_DATA2 describes loads only. */
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);
        ck_assert_uint_eq(s.data_src, P(OP, STORE) | P(LVL, NA) | LN(PERF_MEM_LVLNUM_NA) | P(SNOOP, NA) |
                                              P(TLB, L1) | P(TLB, HIT) | P(LOCK, NA));
        /* It is a kernel address, and the reader says so. */
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_KERNEL);
}
END_TEST

START_TEST(test_optional_registers) {
        static const uint32_t extra[] = { 0, DP_IBS_CAPS_BRNTRGT, DP_IBS_CAPS_OPDATA4,
                                          DP_IBS_CAPS_BRNTRGT | DP_IBS_CAPS_OPDATA4 };

        for (size_t i = 0; i < DP_ARRAY_SIZE(extra); i++) {
                struct dp_ibs_op_regs r = {
                        .caps = CAPS_BASE | extra[i], .op_ctl = 1, .op_rip = 2, .op_data = 3, .op_data2 = 4,
                        .op_data3 = 5, .dc_lin_addr = 6, .dc_phys_addr = 7, .br_target = 8, .op_data4 = 9,
                }, got;
                size_t want = 4 + 8 * (7 + !!(extra[i] & DP_IBS_CAPS_BRNTRGT) + !!(extra[i] & DP_IBS_CAPS_OPDATA4));
                struct payload p;

                build(&p, &r);
                ck_assert_uint_eq(p.size, want);
                ck_assert_int_eq(dp_ibs_op_parse_raw(p.bytes, p.size, &got), 0);
                ck_assert_uint_eq(got.caps, r.caps);
                ck_assert(got.op_ctl == 1 && got.op_rip == 2 && got.op_data == 3 && got.op_data2 == 4);
                ck_assert(got.op_data3 == 5 && got.dc_lin_addr == 6 && got.dc_phys_addr == 7);
                ck_assert_int_eq(got.has_br_target, !!(extra[i] & DP_IBS_CAPS_BRNTRGT));
                ck_assert_int_eq(got.has_op_data4, !!(extra[i] & DP_IBS_CAPS_OPDATA4));
                /* OP_DATA4 never comes from BR_TARGET's slot, nor the reverse. */
                ck_assert_uint_eq(got.br_target, got.has_br_target ? 8 : 0);
                ck_assert_uint_eq(got.op_data4, got.has_op_data4 ? 9 : 0);

                /* A newer kernel's extra trailing register is ignored. */
                ck_assert_int_eq(dp_ibs_op_parse_raw(p.bytes, p.size + 8, &got), 0);
                ck_assert_uint_eq(got.dc_phys_addr, 7);
                ck_assert_uint_eq(got.op_data4, got.has_op_data4 ? 9 : 0);
        }
}
END_TEST

/* Every length short of what the caps announce is rejected, as is any
 * length that is not caps + whole registers, through both entry points. */
START_TEST(test_truncated_every_length) {
        static const uint32_t caps[] = { CAPS_BASE, CAPS_BASE | DP_IBS_CAPS_BRNTRGT,
                                         CAPS_BASE | DP_IBS_CAPS_OPDATA4,
                                         CAPS_ZEN4 | DP_IBS_CAPS_BRNTRGT | DP_IBS_CAPS_OPDATA4 };
        unsigned rejected = 0;

        for (size_t i = 0; i < DP_ARRAY_SIZE(caps); i++) {
                struct dp_ibs_op_regs r = regs_of(caps[i], D2_CODE(3), D3_LD | D3_LIN_VALID), got;
                struct payload p;

                build(&p, &r);
                for (size_t len = 0; len < p.size + 8; len++) {
                        struct dp_perf_sample ps = raw_sample(&p);
                        struct dp_sample s = { .cpu = 1 };
                        bool whole = len >= 4 && (len - 4) % 8 == 0;
                        int want = (len >= p.size && whole) ? 0 : -EBADMSG;

                        ck_assert_msg(dp_ibs_op_parse_raw(p.bytes, len, &got) == want, "caps 0x%x len %zu",
                                      caps[i], len);
                        ps.raw_size = (uint32_t) len;
                        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), want);
                        if (want < 0) {
                                rejected++;
                                /* A rejected sample is not half-written. */
                                ck_assert_uint_eq(s.vaddr, 0);
                                ck_assert_uint_eq(s.flags, 0);
                        }
                }
        }
        ck_assert_uint_gt(rejected, 4 * 60);
}
END_TEST

START_TEST(test_malformed) {
        struct dp_ibs_op_regs r = regs_of(CAPS_BASE, 0, D3_LD | D3_LIN_VALID), got;
        struct dp_perf_sample ps;
        struct payload p;
        struct dp_sample s;

        ck_assert_int_eq(dp_ibs_op_parse_raw(NULL, 60, &got), -EBADMSG);
        /* Caps without "IBS present" is not a payload the kernel writes. */
        r.caps = DP_IBS_CAPS_OPSAM;
        build(&p, &r);
        ck_assert_int_eq(dp_ibs_op_parse_raw(p.bytes, p.size, &got), -EBADMSG);
        /* RAW claimed but absent. */
        ps = (struct dp_perf_sample) { .present = PERF_SAMPLE_RAW, .raw = NULL, .raw_size = 0 };
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), -EBADMSG);
        /* An IBS fetch payload (caps + 3 or 4 registers) is too short. */
        r.caps = CAPS_BASE;
        build(&p, &r);
        ps = raw_sample(&p);
        ps.raw_size = 4 + 8 * 4;
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), -EBADMSG);
}
END_TEST

START_TEST(test_validity_bits) {
        struct dp_ibs_op_regs r;
        struct dp_sample s;

        /* op_val or op_en clear: nothing valid in the registers. */
        r = regs_of(CAPS_ZEN4, 0, D3_LD | D3_LIN_VALID | D3_PHY_VALID);
        r.op_ctl &= ~CTL_VAL;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), -ENODATA);
        r.op_ctl = (r.op_ctl | CTL_VAL) & ~CTL_EN;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), -ENODATA);

        /* Linear address invalid: no data address, however valid the rest. */
        r = regs_of(CAPS_ZEN4, 0, D3_LD | D3_PHY_VALID);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), -ENODATA);

        /* Neither load nor store (a branch, an ALU op). */
        r = regs_of(CAPS_ZEN4, 0, D3_LIN_VALID | D3_PHY_VALID);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), -ENODATA);

        /* Physical address invalid: vaddr only. */
        r = regs_of(CAPS_ZEN4, 0, D3_LD | D3_LIN_VALID);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_uint_eq(s.vaddr, LIN);
        ck_assert_uint_eq(s.paddr, 0);
        ck_assert_uint_eq(s.flags & (DP_SAMPLE_PHYS_VALID | DP_SAMPLE_LOAD | DP_SAMPLE_STORE), DP_SAMPLE_LOAD);
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_INV_PHYS);
        ck_assert_int_eq(dp_sample_classify(&s, false), DP_C_VALID);

        /* Both valid. */
        r.op_data3 |= D3_PHY_VALID;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_uint_eq(s.paddr, PHYS);
        ck_assert(s.flags & DP_SAMPLE_PHYS_VALID);
        ck_assert_int_eq(dp_sample_classify(&s, true), DP_C_VALID);

        /* A locked read-modify-write reports both. */
        r.op_data3 |= D3_ST | D3_LOCKED;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert((s.flags & (DP_SAMPLE_LOAD | DP_SAMPLE_STORE)) == (DP_SAMPLE_LOAD | DP_SAMPLE_STORE));
        ck_assert_uint_eq((s.data_src >> PERF_MEM_LOCK_SHIFT) & 3, PERF_MEM_LOCK_LOCKED);
        ck_assert_uint_eq(s.data_src & 0x1f, PERF_MEM_OP_LOAD);
}
END_TEST

START_TEST(test_l1_l2_hits) {
        struct dp_ibs_op_regs r;
        struct dp_sample s;

        /* DcMiss clear: L1, whatever OP_DATA2 says. */
        r = regs_of(CAPS_ZEN4, D2_CODE(3), D3_LD | D3_LIN_VALID);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L1);
        ck_assert_uint_eq(s.data_src & ~(P(SNOOP, NA) | P(LOCK, NA) | (0x7full << PERF_MEM_TLB_SHIFT)),
                          P(OP, LOAD) | P(LVL, L1) | P(LVL, HIT) | LN(PERF_MEM_LVLNUM_L1));
        /* DcMiss, L2Miss clear: L2. */
        r.op_data3 |= D3_DC_MISS;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L2);
        ck_assert_int_eq(dp_mem_level_from_data_src(s.data_src), DP_MEM_L2);
        /* Stores too. */
        r = regs_of(CAPS_ZEN4, 0, D3_ST | D3_LIN_VALID | D3_DC_MISS);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L2);
        /* A store beyond L2 that merged into a pending miss: the fill buffer. */
        r.op_data3 |= D3_L2_MISS | D3_NO_MAB;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L1);
        ck_assert_uint_eq(s.data_src & (0x3fffull << PERF_MEM_LVL_SHIFT), P(LVL, LFB) | P(LVL, HIT));
}
END_TEST

/* Each data source code, Zen 4 and legacy, local and remote node. */
START_TEST(test_each_data_source) {
        for (int ext = 0; ext <= 1; ext++)
                for (unsigned code = 0; code < (ext ? 32u : 8u); code++)
                        for (int rmt = 0; rmt <= 1; rmt++) {
                                /* Legacy decoding must ignore DataSrcHi: set it anyway. */
                                uint64_t d2 = D2_CODE(code) | (ext ? 0 : 3ull << 6) | (rmt ? D2_RMT_NODE : 0);
                                struct dp_ibs_op_regs r = regs_of(ext ? CAPS_ZEN4 : CAPS_BASE, d2,
                                                                  D3_LD | D3_LIN_VALID | D3_DC_MISS | D3_L2_MISS);
                                enum dp_mem_level want = dp_mem_level_from_ibs(code, ext, rmt);
                                struct dp_ibs_op_fields f;
                                struct dp_sample s;

                                dp_ibs_op_decode_regs(&r, NULL, &f);
                                ck_assert_uint_eq(f.data_src, code);
                                ck_assert_int_eq(f.rmt_node, rmt);
                                ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
                                ck_assert_msg(dp_sample_level(&s) == want, "ext %d code %u rmt %d", ext, code, rmt);
                                /* The synthesized data_src names the same level, except
                                 * for peer-agent memory, which the kernel leaves NA. */
                                if (ext && code == DP_IBS_DS_EXT_PEER_AGENT)
                                        ck_assert_int_eq(dp_mem_level_from_data_src(s.data_src), DP_MEM_UNKNOWN);
                                else
                                        ck_assert_msg(dp_mem_level_from_data_src(s.data_src) == want,
                                                      "ext %d code %u rmt %d: data_src says %s", ext, code, rmt,
                                                      dp_mem_level_name(dp_mem_level_from_data_src(s.data_src)));
                                /* The same op as a store ignores OP_DATA2. */
                                r.op_data3 = D3_ST | D3_LIN_VALID | D3_DC_MISS | D3_L2_MISS;
                                ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
                                ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);
                        }
}
END_TEST

/* Exact values of the kernel's ibs.c for representative codes. */
#define HITL(x) (P(LVL, x) | P(LVL, HIT))
#define ANYC LN(PERF_MEM_LVLNUM_ANY_CACHE)
#define RAM LN(PERF_MEM_LVLNUM_RAM)
START_TEST(test_kernel_data_src_values) {
        static const struct {
                uint32_t caps;
                uint64_t d2;
                uint64_t lvl_bits;
        } rows[] = {
                { CAPS_ZEN4, D2_CODE(1), HITL(L3) | LN(PERF_MEM_LVLNUM_L3) },
                { CAPS_ZEN4, D2_CODE(2), HITL(REM_CCE1) | ANYC | REM | HOPS(PERF_MEM_HOPS_0) },
                { CAPS_ZEN4, D2_CODE(3), HITL(LOC_RAM) | RAM },
                { CAPS_ZEN4, D2_CODE(3) | D2_RMT_NODE, HITL(REM_RAM1) | RAM | REM | HOPS(PERF_MEM_HOPS_1) },
                { CAPS_ZEN4, D2_CODE(5), HITL(REM_CCE2) | ANYC | REM | HOPS(PERF_MEM_HOPS_1) },
                { CAPS_ZEN4, D2_CODE(6), LN(PERF_MEM_LVLNUM_PMEM) },
                { CAPS_ZEN4, D2_CODE(6) | D2_RMT_NODE, LN(PERF_MEM_LVLNUM_PMEM) | REM | HOPS(PERF_MEM_HOPS_1) },
                { CAPS_ZEN4, D2_CODE(7), HITL(IO) | LN(PERF_MEM_LVLNUM_IO) },
                /* RmtNode does not apply to I/O. */
                { CAPS_ZEN4, D2_CODE(7) | D2_RMT_NODE, HITL(IO) | LN(PERF_MEM_LVLNUM_IO) },
                { CAPS_ZEN4, D2_CODE(8), LN(PERF_MEM_LVLNUM_CXL) },
                { CAPS_ZEN4, D2_CODE(12), P(LVL, NA) | LN(PERF_MEM_LVLNUM_NA) },
                { CAPS_ZEN4, D2_CODE(0), P(LVL, NA) | LN(PERF_MEM_LVLNUM_NA) },
                { CAPS_BASE, D2_CODE(2), HITL(L3) | P(LVL, REM_CCE1) | ANYC | HOPS(PERF_MEM_HOPS_0) },
                { CAPS_BASE, D2_CODE(3) | D2_RMT_NODE, HITL(REM_RAM1) | RAM | REM | HOPS(PERF_MEM_HOPS_1) },
                { CAPS_BASE, D2_CODE(4), HITL(REM_CCE2) | ANYC | REM | HOPS(PERF_MEM_HOPS_1) },
                /* Before Zen 4, RmtNode applies to DRAM only. */
                { CAPS_BASE, D2_CODE(4) | D2_RMT_NODE, HITL(REM_CCE2) | ANYC | REM | HOPS(PERF_MEM_HOPS_1) },
        };
        const uint64_t lvl_mask = (0x3fffull << PERF_MEM_LVL_SHIFT) | (0xfull << PERF_MEM_LVLNUM_SHIFT) | REM |
                                  (7ull << PERF_MEM_HOPS_SHIFT);

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++) {
                /* CacheHitSt set: no snoop information, to compare levels only. */
                struct dp_ibs_op_regs r = regs_of(rows[i].caps, rows[i].d2 | D2_CACHE_HIT_ST,
                                                  D3_LD | D3_LIN_VALID | D3_DC_MISS | D3_L2_MISS);
                struct dp_ibs_op_fields f;
                uint64_t v;

                dp_ibs_op_decode_regs(&r, NULL, &f);
                v = dp_ibs_op_data_src(&f, NULL);
                ck_assert_msg((v & lvl_mask) == rows[i].lvl_bits, "row %zu: 0x%llx", i,
                              (unsigned long long) (v & lvl_mask));
                ck_assert_uint_eq(v & 0x1f, PERF_MEM_OP_LOAD);
                ck_assert_uint_eq((v >> PERF_MEM_SNOOP_SHIFT) & 0x1f, PERF_MEM_SNOOP_NA);
        }
}
END_TEST

START_TEST(test_uncached) {
        struct dp_ibs_op_regs r = regs_of(CAPS_ZEN4, D2_CODE(3), D3_LD | D3_LIN_VALID | D3_UC);
        struct dp_sample s;

        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);
        ck_assert_uint_eq((s.data_src >> PERF_MEM_LVLNUM_SHIFT) & 0xf, DP_PERF_MEM_LVLNUM_UNC);
        ck_assert_uint_eq((s.data_src >> PERF_MEM_LVL_SHIFT) & 0x3fff, PERF_MEM_LVL_UNC | PERF_MEM_LVL_HIT);
        /* Uncached MMIO still reports its source. */
        r = regs_of(CAPS_ZEN4, D2_CODE(7), D3_LD | D3_LIN_VALID | D3_UC | D3_DC_MISS | D3_L2_MISS);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_IO);
        ck_assert_int_eq(dp_mem_level_from_data_src(s.data_src), DP_MEM_IO);
}
END_TEST

START_TEST(test_erratum_1293) {
        static const struct dp_ibs_cpu unaffected[] = {
                { .family = 0x19, .model = 0x10 }, { .family = 0x19, .model = 0x61 },
                { .family = 0x1a, .model = 0x01 }, { .family = 0x17, .model = 0x01 }, {},
        };
        const uint64_t d3 = D3_LD | D3_LIN_VALID | D3_DC_MISS;      /* L2Miss clear: an "L2 hit" */
        struct dp_ibs_op_regs r;
        struct dp_ibs_op_fields f;
        struct dp_sample s;

        ck_assert(dp_ibs_cpu_has_erratum_1293(&zen3_b1));
        ck_assert(dp_ibs_cpu_has_erratum_1293(&(struct dp_ibs_cpu) { .family = 0x19, .model = 0x0f }));
        ck_assert(!dp_ibs_cpu_has_erratum_1293(NULL));
        for (size_t i = 0; i < DP_ARRAY_SIZE(unaffected); i++)
                ck_assert(!dp_ibs_cpu_has_erratum_1293(&unaffected[i]));

        /* Affected CPU, SwPf set: L2Miss and OP_DATA2 are not to be believed. */
        r = regs_of(CAPS_BASE, D2_CODE(3) | D2_RMT_NODE, d3 | D3_SW_PF);
        dp_ibs_op_decode_regs(&r, &zen3_b1, &f);
        ck_assert(!f.op_data2_valid && !f.l2_miss_valid && f.data_src == 0 && !f.rmt_node);
        ck_assert_int_eq(decode_regs(&r, &zen3_b1, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);
        ck_assert_int_eq(dp_mem_level_from_data_src(s.data_src), DP_MEM_UNKNOWN);
        /* ... with DcMissNoMabAlloc instead: the fill buffer is all that is left. */
        r.op_data3 = d3 | D3_NO_MAB;
        ck_assert_int_eq(decode_regs(&r, &zen3_b1, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L1);
        ck_assert_int_eq(dp_mem_level_from_data_src(s.data_src), DP_MEM_L1);
        /* ... with neither, the erratum does not apply. */
        r.op_data3 = d3;
        dp_ibs_op_decode_regs(&r, &zen3_b1, &f);
        ck_assert(f.op_data2_valid && f.l2_miss_valid);
        ck_assert_uint_eq(f.data_src, 3);
        ck_assert_int_eq(decode_regs(&r, &zen3_b1, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L2);

        /* Unaffected CPUs (and no CPU given) believe the registers. */
        r.op_data3 = d3 | D3_SW_PF;
        for (size_t i = 0; i < DP_ARRAY_SIZE(unaffected); i++) {
                dp_ibs_op_decode_regs(&r, &unaffected[i], &f);
                ck_assert(f.op_data2_valid && f.l2_miss_valid);
                ck_assert_int_eq(decode_regs(&r, &unaffected[i], &s), 0);
                ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L2);
        }
        /* And an L2 miss to remote DRAM on them. */
        r.op_data3 |= D3_L2_MISS;
        ck_assert_int_eq(decode_regs(&r, &zen4, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_REMOTE_DRAM);
        ck_assert_int_eq(decode_regs(&r, &zen3_b1, &s), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);
}
END_TEST

START_TEST(test_latency) {
        struct dp_ibs_op_regs r = regs_of(CAPS_ZEN4, D2_CODE(3), D3_LD | D3_LIN_VALID | D3_DC_MISS | D3_L2_MISS |
                                                                         D3_LAT(300));
        struct dp_sample s;

        r.op_data = 77ull << 16;        /* TagToRetCtr: not the latency */
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert(s.flags & DP_SAMPLE_LATENCY_VALID);
        ck_assert_uint_eq(s.latency, 300);
        /* A hit has no miss latency, whatever the field holds. */
        r.op_data3 &= ~D3_DC_MISS;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert(!(s.flags & DP_SAMPLE_LATENCY_VALID));
        ck_assert_uint_eq(s.latency, 0);
        /* Nor does a store (the kernel reports DcMissLat for loads only). */
        r.op_data3 = D3_ST | D3_LIN_VALID | D3_DC_MISS | D3_LAT(300);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert(!(s.flags & DP_SAMPLE_LATENCY_VALID));
        /* A zero latency is no measurement. */
        r.op_data3 = D3_LD | D3_LIN_VALID | D3_DC_MISS;
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert(!(s.flags & DP_SAMPLE_LATENCY_VALID));
        /* The largest value survives. */
        r.op_data3 |= D3_LAT(0xffff);
        ck_assert_int_eq(decode_regs(&r, NULL, &s), 0);
        ck_assert_uint_eq(s.latency, 0xffff);
}
END_TEST

START_TEST(test_snoop_tlb_lock) {
        const uint64_t miss = D3_LD | D3_LIN_VALID | D3_PHY_VALID | D3_DC_MISS | D3_L2_MISS;
        static const struct dp_ibs_cpu cache_hit_st_broken = { .family = 0x19, .model = 0x21 };
        struct dp_ibs_op_regs r;
        struct dp_ibs_op_fields f;

#define SNOOP(v) (((v) >> PERF_MEM_SNOOP_SHIFT) & 0x1f)
#define TLB(v) (((v) >> PERF_MEM_TLB_SHIFT) & 0x7f)
#define LOCK(v) (((v) >> PERF_MEM_LOCK_SHIFT) & 0x3)
        /* CacheHitSt clear on a cache-sourced load: modified line. */
        for (unsigned code = 1; code <= 5; code++) {
                r = regs_of(CAPS_ZEN4, D2_CODE(code), miss);
                dp_ibs_op_decode_regs(&r, NULL, &f);
                ck_assert_uint_eq(SNOOP(dp_ibs_op_data_src(&f, NULL)),
                                  (code == 1 || code == 2 || code == 5) ? PERF_MEM_SNOOP_HITM : PERF_MEM_SNOOP_NA);
                ck_assert_uint_eq(SNOOP(dp_ibs_op_data_src(&f, &cache_hit_st_broken)), PERF_MEM_SNOOP_NA);
                ck_assert_uint_eq(SNOOP(dp_ibs_op_data_src(&f, &zen3_b1)), PERF_MEM_SNOOP_NA);
                r.op_data2 |= D2_CACHE_HIT_ST;
                dp_ibs_op_decode_regs(&r, NULL, &f);
                ck_assert_uint_eq(SNOOP(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_SNOOP_NA);
        }
        r = regs_of(CAPS_BASE, D2_CODE(2), miss);
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(SNOOP(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_SNOOP_HITM);
        /* Not for L1/L2 hits. */
        r.op_data3 &= ~D3_L2_MISS;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(SNOOP(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_SNOOP_NA);

        /* dTLB: L1 hit, L2 hit, L2 miss; NA without a linear address. */
        r = regs_of(CAPS_ZEN4, 0, miss);
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(TLB(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_TLB_L1 | PERF_MEM_TLB_HIT);
        r.op_data3 |= D3_L1TLB_MISS;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(TLB(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_TLB_L2 | PERF_MEM_TLB_HIT);
        r.op_data3 |= D3_L2TLB_MISS;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(TLB(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_TLB_L2 | PERF_MEM_TLB_MISS);
        r.op_data3 &= ~D3_LIN_VALID;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(TLB(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_TLB_NA);

        /* Lock. */
        ck_assert_uint_eq(LOCK(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_LOCK_NA);
        r.op_data3 |= D3_LOCKED;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(LOCK(dp_ibs_op_data_src(&f, NULL)), PERF_MEM_LOCK_LOCKED);

        /* Neither load nor store: the kernel's PERF_MEM_NA. */
        r.op_data3 &= ~D3_LD;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(dp_ibs_op_data_src(&f, NULL), MEM_NA);
}
END_TEST

START_TEST(test_all_fields) {
        struct dp_ibs_op_regs r = {
                .caps = ~0u, .op_ctl = ~0ull, .op_data = ~0ull, .op_data2 = ~0ull, .op_data3 = ~0ull,
        };
        struct dp_ibs_op_fields f;

        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(f.max_cnt, 0x7fffffu << 4);
        ck_assert(f.l3_miss_only && f.op_en && f.op_val && f.cnt_ctl && f.ldlat_en);
        ck_assert_uint_eq(f.cur_cnt, (1u << 27) - 1);
        ck_assert_uint_eq(f.ldlat_thrsh, 15);
        ck_assert_uint_eq(f.comp_to_ret_ctr, 0xffff);
        ck_assert_uint_eq(f.tag_to_ret_ctr, 0xffff);
        ck_assert(f.op_return && f.op_brn_taken && f.op_brn_misp && f.op_brn_ret && f.op_rip_invalid &&
                  f.op_brn_fuse && f.op_microcode);
        ck_assert_uint_eq(f.data_src_lo, 7);
        ck_assert_uint_eq(f.data_src_hi, 3);
        ck_assert_uint_eq(f.data_src, 31);
        ck_assert(f.rmt_node && f.cache_hit_st && f.strm_st && f.rmt_socket);
        ck_assert(f.ld_op && f.st_op && f.dc_l1tlb_miss && f.dc_l2tlb_miss && f.dc_l1tlb_hit_2m &&
                  f.dc_l1tlb_hit_1g && f.dc_l2tlb_hit_2m && f.dc_miss && f.dc_mis_acc && f.dc_wc_mem_acc &&
                  f.dc_uc_mem_acc && f.dc_locked_op && f.dc_miss_no_mab_alloc && f.dc_lin_addr_valid &&
                  f.dc_phy_addr_valid && f.dc_l2_tlb_hit_1g && f.l2_miss && f.sw_pf);
        ck_assert_uint_eq(f.op_mem_width, 15);
        ck_assert_uint_eq(f.op_mem_width_bytes, 1u << 14);
        ck_assert_uint_eq(f.op_dc_miss_open_mem_reqs, 63);
        ck_assert_uint_eq(f.dc_miss_lat, 0xffff);
        ck_assert_uint_eq(f.tlb_refill_lat, 0xffff);

        /* Walking one bit through OP_DATA3 changes exactly the named field. */
        r = (struct dp_ibs_op_regs) { .caps = CAPS_BASE, .op_data3 = 1ull << 20 };
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert(f.l2_miss && !f.sw_pf && !f.dc_l2_tlb_hit_1g);
        r.op_data3 = 1ull << 19;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert(f.dc_l2_tlb_hit_1g && !f.l2_miss && !f.dc_phy_addr_valid);
        r.op_data3 = 1ull << 8;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert(f.dc_mis_acc && !f.dc_miss);
        r.op_data3 = 1ull << 13;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert(f.dc_wc_mem_acc && !f.dc_uc_mem_acc);
        /* Without the Zen 4 cap, DataSrcHi is not part of the code. */
        r = (struct dp_ibs_op_regs) { .caps = CAPS_BASE, .op_data2 = ~0ull };
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(f.data_src, 7);
        ck_assert_uint_eq(f.data_src_hi, 3);
        /* The extended MaxCnt bits count in 2^20 steps. */
        r.op_ctl = 1ull << 20;
        dp_ibs_op_decode_regs(&r, NULL, &f);
        ck_assert_uint_eq(f.max_cnt, 1u << 20);
}
END_TEST

static uint64_t xorshift(uint64_t *x) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

/* What a kernel that fills ADDR/PHYS_ADDR/DATA_SRC/WEIGHT writes for @f. */
static void kernel_fill(const struct dp_ibs_op_fields *f, bool weight_struct, struct dp_perf_sample *ps) {
        bool mem = f->ld_op || f->st_op;

        ps->present |= PERF_SAMPLE_ADDR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_SRC |
                       (weight_struct ? PERF_SAMPLE_WEIGHT_STRUCT : PERF_SAMPLE_WEIGHT);
        ps->addr = mem && f->dc_lin_addr_valid ? f->dc_lin_addr : 0;
        ps->phys_addr = mem && f->dc_phy_addr_valid ? f->dc_phys_addr : 0;
        ps->data_src = dp_ibs_op_data_src(f, NULL);
        ps->weight = 0;
        if (f->ld_op && f->dc_miss)
                ps->weight = weight_struct ? (uint64_t) f->tag_to_ret_ctr << 32 | f->dc_miss_lat : f->dc_miss_lat;
}

START_TEST(test_kernel_filled_agrees_with_raw) {
        uint64_t x = 0x2545f4914f6cdd1dull;
        unsigned decoded = 0, levels_compared = 0;

        for (int i = 0; i < 20000; i++) {
                uint32_t caps = CAPS_BASE | (xorshift(&x) & 1 ? DP_IBS_CAPS_ZEN4 : 0);
                struct dp_ibs_op_regs r = {
                        .caps = caps, .op_ctl = CTL_OK, .op_data = xorshift(&x),
                        .op_data2 = xorshift(&x) & 0x3ff, .op_data3 = xorshift(&x),
                        .dc_lin_addr = (xorshift(&x) & 0x7fffffffffffull) | 0x1000,
                        .dc_phys_addr = (xorshift(&x) & 0xfffffffffull) | 0x1000,
                };
                struct dp_ibs_op_fields f;
                struct dp_perf_sample by_raw, by_kernel, both;
                struct dp_sample a = { .cpu = 3 }, b = { .cpu = 3 }, c = { .cpu = 3 };
                struct payload p;
                int ra, rb, rc;

                build(&p, &r);
                dp_ibs_op_decode_regs(&r, NULL, &f);
                by_raw = raw_sample(&p);
                by_kernel = (struct dp_perf_sample) { .present = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
                                                      .pid = 42, .tid = 43, .time = 1000 };
                kernel_fill(&f, i & 1, &by_kernel);
                both = by_raw;
                kernel_fill(&f, i & 1, &both);

                ra = dp_ibs_op_decode(&by_raw, NULL, &a);
                rb = dp_ibs_op_decode(&by_kernel, NULL, &b);
                rc = dp_ibs_op_decode(&both, NULL, &c);
                ck_assert_int_eq(ra, rb);
                ck_assert_int_eq(ra, rc);
                ck_assert(ra == 0 || ra == -ENODATA);
                if (ra < 0)
                        continue;
                decoded++;

                ck_assert(memcmp(&a, &c, sizeof(a)) == 0);
                ck_assert(a.vaddr == b.vaddr && a.paddr == b.paddr && a.data_src == b.data_src);
                ck_assert(a.latency == b.latency && a.time == b.time && a.pid == b.pid && a.cpu == b.cpu);
                const uint16_t same = DP_SAMPLE_PHYS_VALID | DP_SAMPLE_DATA_SRC_VALID | DP_SAMPLE_LATENCY_VALID |
                                      DP_SAMPLE_LOAD;
                ck_assert_uint_eq(a.flags & same, b.flags & same);
                /* The kernel's mem_op holds one of load/store, load first. */
                if (!f.ld_op)
                        ck_assert_uint_eq(a.flags & DP_SAMPLE_STORE, b.flags & DP_SAMPLE_STORE);
                if (!((caps & DP_IBS_CAPS_ZEN4) && f.data_src == DP_IBS_DS_EXT_PEER_AGENT)) {
                        ck_assert_msg(dp_sample_level(&a) == dp_sample_level(&b), "iteration %d: %s vs %s", i,
                                      dp_mem_level_name(dp_sample_level(&a)), dp_mem_level_name(dp_sample_level(&b)));
                        levels_compared++;
                }
        }
        /* A quarter of random ops are loads/stores with a valid address. */
        ck_assert_uint_gt(decoded, 3000);
        ck_assert_uint_gt(levels_compared, 3000);
}
END_TEST

START_TEST(test_kernel_filled_only) {
        struct dp_perf_sample ps = {
                .present = PERF_SAMPLE_ADDR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_WEIGHT_STRUCT,
                .addr = LIN, .phys_addr = PHYS, .weight = 0x0005000000000123ull,
                .data_src = P(OP, LOAD) | P(LVL, HIT) | P(LVL, LOC_RAM) | LN(PERF_MEM_LVLNUM_RAM),
        };
        struct dp_sample s = {};

        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), 0);
        ck_assert_uint_eq(s.vaddr, LIN);
        ck_assert_uint_eq(s.paddr, PHYS);
        ck_assert_uint_eq(s.latency, 0x123);
        ck_assert_uint_eq(s.flags & ~DP_SAMPLE_LEVEL_MASK, DP_SAMPLE_LOAD | DP_SAMPLE_PHYS_VALID |
                                                                   DP_SAMPLE_DATA_SRC_VALID | DP_SAMPLE_LATENCY_VALID);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_LOCAL_DRAM);

        /* The kernel translated the address itself (PhyAddrValid was clear):
         * a nonzero PHYS_ADDR is still a physical address, even beside RAW. */
        struct dp_ibs_op_regs r = regs_of(CAPS_ZEN4, 0, D3_LD | D3_LIN_VALID);
        struct payload p;

        build(&p, &r);
        ps.present |= PERF_SAMPLE_RAW;
        ps.raw = p.bytes;
        ps.raw_size = (uint32_t) p.size;
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), 0);
        ck_assert_uint_eq(s.paddr, PHYS);
        ck_assert(s.flags & DP_SAMPLE_PHYS_VALID);
        ps.present &= ~PERF_SAMPLE_RAW;

        /* WEIGHT, a plain u64. */
        ps.present = (ps.present & ~PERF_SAMPLE_WEIGHT_STRUCT) | PERF_SAMPLE_WEIGHT;
        ps.weight = 0x1ffffffffull;
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), 0);
        ck_assert_uint_eq(s.latency, UINT32_MAX);

        /* No DATA_SRC: no load/store flags, no level. */
        ps.present &= ~PERF_SAMPLE_DATA_SRC;
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), 0);
        ck_assert_uint_eq(s.flags & (DP_SAMPLE_LOAD | DP_SAMPLE_STORE | DP_SAMPLE_DATA_SRC_VALID), 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);

        /* Address 0 is the kernel's "no valid address": null, not addr_zero. */
        ps.addr = 0;
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), -ENODATA);
        ps.present &= ~PERF_SAMPLE_ADDR;
        ps.addr = LIN;
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), -ENODATA);
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &s), -ENODATA);
}
END_TEST

START_TEST(test_decode_default) {
        struct dp_ibs_op_regs r = regs_of(CAPS_BASE, D2_CODE(3), D3_LD | D3_LIN_VALID | D3_DC_MISS | D3_SW_PF);
        struct dp_sample a = { .cpu = 1 }, b = { .cpu = 1 };
        struct dp_perf_sample ps;
        struct payload p;

        build(&p, &r);
        ps = raw_sample(&p);
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &a), 0);
        ck_assert_int_eq(dp_ibs_op_decode(&ps, NULL, &b), 0);
        ck_assert(memcmp(&a, &b, sizeof(a)) == 0);
        /* No errata applied: the L2 hit stands. */
        ck_assert_int_eq(dp_sample_level(&a), DP_MEM_L2);
}
END_TEST

START_TEST(test_cpuinfo) {
        static const char zen3[] =
                "processor\t: 0\n"
                "vendor_id\t: AuthenticAMD\n"
                "cpu family\t: 25\n"
                "model\t\t: 1\n"
                "model name\t: AMD EPYC 7763 64-Core Processor\n"
                "stepping\t: 1\n"
                "\n"
                "processor\t: 1\n"
                "cpu family\t: 26\n"
                "model\t\t: 2\n";
        static const char name_first[] = "model name\t: X\nmodel\t\t: 17\ncpu family\t: 25\n";
        struct dp_ibs_cpu cpu = { .family = 99, .model = 99 };

        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo(zen3, &cpu), 0);
        ck_assert(cpu.family == 0x19 && cpu.model == 0x01);
        ck_assert(dp_ibs_cpu_has_erratum_1293(&cpu));
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo(name_first, &cpu), 0);
        ck_assert_uint_eq(cpu.model, 0x11);
        ck_assert(!dp_ibs_cpu_has_erratum_1293(&cpu));

        cpu = (struct dp_ibs_cpu) { .family = 99, .model = 99 };
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo("processor : 0\nBogoMIPS : 50.00\n", &cpu), -ENOENT);
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo("cpu family : 25\n", &cpu), -ENOENT);
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo("", &cpu), -ENOENT);
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo("cpu family : 2x5\nmodel : 1\n", &cpu), -EINVAL);
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo("cpu family : \nmodel : 1\n", &cpu), -EINVAL);
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo("cpu family : 99999999999\nmodel : 1\n", &cpu), -EINVAL);
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo(NULL, &cpu), -EINVAL);
        /* Failures leave the output alone. */
        ck_assert_uint_eq(cpu.family, 99);
        /* No trailing newline is fine. */
        ck_assert_int_eq(dp_ibs_cpu_from_cpuinfo("cpu family : 23\nmodel : 49", &cpu), 0);
        ck_assert(cpu.family == 23 && cpu.model == 49);
}
END_TEST

static Suite *decode_ibs_suite(void) {
        Suite *s = suite_create("decode-ibs");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_known_answer);
        tcase_add_test(tc, test_optional_registers);
        tcase_add_test(tc, test_truncated_every_length);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_validity_bits);
        tcase_add_test(tc, test_l1_l2_hits);
        tcase_add_test(tc, test_each_data_source);
        tcase_add_test(tc, test_kernel_data_src_values);
        tcase_add_test(tc, test_uncached);
        tcase_add_test(tc, test_erratum_1293);
        tcase_add_test(tc, test_latency);
        tcase_add_test(tc, test_snoop_tlb_lock);
        tcase_add_test(tc, test_all_fields);
        tcase_add_test(tc, test_kernel_filled_agrees_with_raw);
        tcase_add_test(tc, test_kernel_filled_only);
        tcase_add_test(tc, test_decode_default);
        tcase_add_test(tc, test_cpuinfo);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(decode_ibs_suite());
}
