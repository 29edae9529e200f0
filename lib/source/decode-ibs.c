/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * AMD IBS op decoding.  Bit positions are those of the PPR for family 19h
 * (arch/x86/include/asm/amd-ibs.h); the synthesized perf_mem_data_src follows
 * the rules of arch/x86/events/amd/ibs.c so that a RAW-only capture and a
 * kernel-filled one describe an op the same way.
 */
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <string.h>

#include "decode-ibs.h"
#include "macro.h"
#include "mem-level.h"
#include "parse-util.h"

#define CAPS_OPDTLBPGSIZE (1u << 19)

static inline uint64_t bits(uint64_t v, unsigned shift, unsigned width) {
        return (v >> shift) & ((1ull << width) - 1);
}

static inline bool bit(uint64_t v, unsigned shift) {
        return (v >> shift) & 1;
}

bool dp_ibs_cpu_has_erratum_1293(const struct dp_ibs_cpu *cpu) {
        return cpu && cpu->family == 0x19 && cpu->model < 0x10;
}

/* CacheHitSt is unreliable on family 0x19 models 0x00-0x0f and 0x20-0x5f. */
static bool cache_hit_st_valid(const struct dp_ibs_cpu *cpu) {
        if (!cpu || cpu->family != 0x19)
                return true;
        return !(cpu->model <= 0x0f || (cpu->model >= 0x20 && cpu->model <= 0x5f));
}

static int parse_cpuinfo_number(const char *value, uint32_t *ret) {
        const char *end;
        uint64_t v;

        while (*value == ' ' || *value == '\t')
                value++;
        if (dp_parse_uint(value, 10, &v, &end) < 0 || v > UINT32_MAX)
                return -EINVAL;
        while (*end == ' ' || *end == '\t')
                end++;
        if (*end != '\n' && *end != '\0')
                return -EINVAL;
        *ret = (uint32_t) v;
        return 0;
}

int dp_ibs_cpu_from_cpuinfo(const char *text, struct dp_ibs_cpu *cpu) {
        bool have_family = false, have_model = false;
        struct dp_ibs_cpu c = {};

        if (!text)
                return -EINVAL;
        for (const char *line = text; *line && !(have_family && have_model);) {
                const char *eol = strchrnul(line, '\n'), *colon = memchr(line, ':', (size_t) (eol - line));
                size_t key_len;
                int r;

                if (colon) {
                        key_len = (size_t) (colon - line);
                        while (key_len > 0 && (line[key_len - 1] == ' ' || line[key_len - 1] == '\t'))
                                key_len--;
                        if (!have_family && key_len == 10 && memcmp(line, "cpu family", 10) == 0) {
                                r = parse_cpuinfo_number(colon + 1, &c.family);
                                if (r < 0)
                                        return r;
                                have_family = true;
                        } else if (!have_model && key_len == 5 && memcmp(line, "model", 5) == 0) {
                                r = parse_cpuinfo_number(colon + 1, &c.model);
                                if (r < 0)
                                        return r;
                                have_model = true;
                        }
                }
                line = *eol ? eol + 1 : eol;
        }
        if (!have_family || !have_model)
                return -ENOENT;
        *cpu = c;
        return 0;
}

int dp_ibs_op_parse_raw(const void *raw, size_t size, struct dp_ibs_op_regs *out) {
        const uint8_t *p = raw;
        size_t n_regs, need;

        if (!raw || size < DP_IBS_OP_RAW_MIN_SIZE || (size - 4) % 8 != 0)
                return -EBADMSG;

        memset(out, 0, sizeof(*out));
        out->caps = dp_load_u32(p);
        /* The kernel always reports bit 0 ("IBS present"), even when it falls
         * back to default caps; without it this is not an IBS payload. */
        if (!(out->caps & DP_IBS_CAPS_AVAIL))
                return -EBADMSG;
        out->has_br_target = out->caps & DP_IBS_CAPS_BRNTRGT;
        out->has_op_data4 = out->caps & DP_IBS_CAPS_OPDATA4;

        n_regs = (size - 4) / 8;
        need = DP_IBS_OP_FIXED_REGS + out->has_br_target + out->has_op_data4;
        if (n_regs < need)
                return -EBADMSG;

        p += 4;
        out->op_ctl = dp_load_u64(p + 0 * 8);
        out->op_rip = dp_load_u64(p + 1 * 8);
        out->op_data = dp_load_u64(p + 2 * 8);
        out->op_data2 = dp_load_u64(p + 3 * 8);
        out->op_data3 = dp_load_u64(p + 4 * 8);
        out->dc_lin_addr = dp_load_u64(p + 5 * 8);
        out->dc_phys_addr = dp_load_u64(p + 6 * 8);
        p += DP_IBS_OP_FIXED_REGS * 8;
        if (out->has_br_target) {
                out->br_target = dp_load_u64(p);
                p += 8;
        }
        if (out->has_op_data4)
                out->op_data4 = dp_load_u64(p);
        return 0;
}

void dp_ibs_op_decode_regs(const struct dp_ibs_op_regs *regs, const struct dp_ibs_cpu *cpu,
                           struct dp_ibs_op_fields *f) {
        uint64_t ctl = regs->op_ctl, d1 = regs->op_data, d2 = regs->op_data2, d3 = regs->op_data3;

        memset(f, 0, sizeof(*f));
        f->caps = regs->caps;

        f->max_cnt = (uint32_t) ((bits(ctl, 20, 7) << 16 | bits(ctl, 0, 16)) << 4);
        f->l3_miss_only = bit(ctl, 16);
        f->op_en = bit(ctl, 17);
        f->op_val = bit(ctl, 18);
        f->cnt_ctl = bit(ctl, 19);
        f->cur_cnt = (uint32_t) bits(ctl, 32, 27);
        f->ldlat_thrsh = (uint8_t) bits(ctl, 59, 4);
        f->ldlat_en = bit(ctl, 63);

        f->comp_to_ret_ctr = (uint16_t) bits(d1, 0, 16);
        f->tag_to_ret_ctr = (uint16_t) bits(d1, 16, 16);
        f->op_return = bit(d1, 34);
        f->op_brn_taken = bit(d1, 35);
        f->op_brn_misp = bit(d1, 36);
        f->op_brn_ret = bit(d1, 37);
        f->op_rip_invalid = bit(d1, 38);
        f->op_brn_fuse = bit(d1, 39);
        f->op_microcode = bit(d1, 40);

        f->ld_op = bit(d3, 0);
        f->st_op = bit(d3, 1);
        f->dc_l1tlb_miss = bit(d3, 2);
        f->dc_l2tlb_miss = bit(d3, 3);
        f->dc_l1tlb_hit_2m = bit(d3, 4);
        f->dc_l1tlb_hit_1g = bit(d3, 5);
        f->dc_l2tlb_hit_2m = bit(d3, 6);
        f->dc_miss = bit(d3, 7);
        f->dc_mis_acc = bit(d3, 8);
        f->dc_wc_mem_acc = bit(d3, 13);
        f->dc_uc_mem_acc = bit(d3, 14);
        f->dc_locked_op = bit(d3, 15);
        f->dc_miss_no_mab_alloc = bit(d3, 16);
        f->dc_lin_addr_valid = bit(d3, 17);
        f->dc_phy_addr_valid = bit(d3, 18);
        f->dc_l2_tlb_hit_1g = bit(d3, 19);
        f->l2_miss = bit(d3, 20);
        f->sw_pf = bit(d3, 21);
        f->op_mem_width = (uint8_t) bits(d3, 22, 4);
        f->op_mem_width_bytes = f->op_mem_width ? (uint16_t) (1u << (f->op_mem_width - 1)) : 0;
        f->op_dc_miss_open_mem_reqs = (uint8_t) bits(d3, 26, 6);
        f->dc_miss_lat = (uint16_t) bits(d3, 32, 16);
        f->tlb_refill_lat = (uint16_t) bits(d3, 48, 16);

        /* Erratum 1293: with SwPf or DcMissNoMabAlloc, OP_DATA2 and L2Miss are
         * garbage on early Zen 3; the kernel zeroes OP_DATA2 ("no valid
         * status") and stops trusting L2Miss. */
        f->op_data2_valid = f->l2_miss_valid =
                !(dp_ibs_cpu_has_erratum_1293(cpu) && (f->sw_pf || f->dc_miss_no_mab_alloc));
        if (f->op_data2_valid) {
                f->data_src_lo = (uint8_t) bits(d2, 0, 3);
                f->rmt_node = bit(d2, 4);
                f->cache_hit_st = bit(d2, 5);
                f->data_src_hi = (uint8_t) bits(d2, 6, 2);
                f->strm_st = bit(d2, 8);
                f->rmt_socket = bit(d2, 9);
                f->data_src = (f->caps & DP_IBS_CAPS_ZEN4) ? (uint8_t) (f->data_src_hi << 3 | f->data_src_lo)
                                                           : f->data_src_lo;
        }

        f->op_rip = regs->op_rip;
        f->dc_lin_addr = regs->dc_lin_addr;
        f->dc_phys_addr = regs->dc_phys_addr;
        f->br_target = regs->br_target;
        f->op_data4 = regs->op_data4;
}

#define S(field, value) ((uint64_t) PERF_MEM_##field##_##value << PERF_MEM_##field##_SHIFT)
#define HIT(lvl) (S(LVL, lvl) | S(LVL, HIT))
#define LVLNUM(n) ((uint64_t) (n) << PERF_MEM_LVLNUM_SHIFT)
#define REMOTE S(REMOTE, REMOTE)
#define HOPS(n) ((uint64_t) (n) << PERF_MEM_HOPS_SHIFT)
#define HOPS_0 HOPS(PERF_MEM_HOPS_0)
#define HOPS_1 HOPS(PERF_MEM_HOPS_1)
#define MEM_NA (S(OP, NA) | S(LVL, NA) | S(SNOOP, NA) | S(LOCK, NA) | S(TLB, NA) | LVLNUM(PERF_MEM_LVLNUM_NA))

/* mem_lvl, mem_lvl_num, mem_remote and mem_hops of a load or store. */
static uint64_t data_src_level_bits(const struct dp_ibs_op_fields *f, bool load) {
        bool zen4 = f->caps & DP_IBS_CAPS_ZEN4;
        uint64_t v = 0;

        /* DcMiss, L2Miss and the data source mean nothing for uncached accesses. */
        if (f->dc_uc_mem_acc && f->data_src != DP_IBS_DS_EXT_IO)
                return HIT(UNC) | LVLNUM(DP_PERF_MEM_LVLNUM_UNC);
        if (!f->dc_miss)
                return HIT(L1) | LVLNUM(PERF_MEM_LVLNUM_L1);
        if (f->l2_miss_valid && !f->l2_miss)
                return HIT(L2) | LVLNUM(PERF_MEM_LVLNUM_L2);

        /* OP_DATA2 describes loads only. */
        if (load) {
                if (zen4)
                        switch (f->data_src) {
                        case DP_IBS_DS_EXT_LOC_CACHE:
                                v = HIT(L3) | LVLNUM(PERF_MEM_LVLNUM_L3);
                                break;
                        case DP_IBS_DS_EXT_NEAR_CCX:
                                v = HIT(REM_CCE1) | LVLNUM(PERF_MEM_LVLNUM_ANY_CACHE) | REMOTE | HOPS_0;
                                break;
                        case DP_IBS_DS_EXT_DRAM:
                                v = HIT(LOC_RAM) | LVLNUM(PERF_MEM_LVLNUM_RAM);
                                break;
                        case DP_IBS_DS_EXT_FAR_CCX:
                                v = HIT(REM_CCE2) | LVLNUM(PERF_MEM_LVLNUM_ANY_CACHE) | REMOTE | HOPS_1;
                                break;
                        case DP_IBS_DS_EXT_PMEM:
                                v = LVLNUM(PERF_MEM_LVLNUM_PMEM);
                                break;
                        case DP_IBS_DS_EXT_IO:
                                v = HIT(IO) | LVLNUM(PERF_MEM_LVLNUM_IO);
                                break;
                        case DP_IBS_DS_EXT_EXT_MEM:
                                v = LVLNUM(PERF_MEM_LVLNUM_CXL);
                                break;
                        }
                else
                        switch (f->data_src) {
                        case DP_IBS_DS_LOC_CACHE:
                                v = HIT(L3) | HIT(REM_CCE1) | LVLNUM(PERF_MEM_LVLNUM_ANY_CACHE) | HOPS_0;
                                break;
                        case DP_IBS_DS_DRAM:
                                v = HIT(LOC_RAM) | LVLNUM(PERF_MEM_LVLNUM_RAM);
                                break;
                        case DP_IBS_DS_REM_CACHE:
                                v = HIT(REM_CCE2) | LVLNUM(PERF_MEM_LVLNUM_ANY_CACHE) | REMOTE | HOPS_1;
                                break;
                        case DP_IBS_DS_IO:
                                v = HIT(IO) | LVLNUM(PERF_MEM_LVLNUM_IO);
                                break;
                        }

                if (v) {
                        /* RmtNode applies to memory; IBS gives no socket
                         * detail, hence one hop. */
                        bool memory = f->data_src == DP_IBS_DS_DRAM ||
                                      (zen4 && (f->data_src == DP_IBS_DS_EXT_PMEM ||
                                                f->data_src == DP_IBS_DS_EXT_EXT_MEM));

                        if (f->rmt_node && memory) {
                                if (f->data_src == DP_IBS_DS_DRAM)
                                        v = HIT(REM_RAM1) | LVLNUM(PERF_MEM_LVLNUM_RAM) | REMOTE | HOPS_1;
                                else
                                        v |= REMOTE | HOPS_1;
                        }
                        return v;
                }
        }

        /* No data source: a hit in the miss address buffer is the best left. */
        if (f->dc_miss_no_mab_alloc)
                return HIT(LFB) | LVLNUM(PERF_MEM_LVLNUM_LFB);
        return S(LVL, NA) | LVLNUM(PERF_MEM_LVLNUM_NA);
}

uint64_t dp_ibs_op_data_src(const struct dp_ibs_op_fields *f, const struct dp_ibs_cpu *cpu) {
        bool zen4 = f->caps & DP_IBS_CAPS_ZEN4, load = f->ld_op;
        uint64_t op, lvl, snoop = S(SNOOP, NA), tlb = S(TLB, NA), lock = S(LOCK, NA);

        if (f->ld_op)
                op = S(OP, LOAD);
        else if (f->st_op)
                op = S(OP, STORE);
        else
                return MEM_NA;

        lvl = data_src_level_bits(f, load);

        /* CacheHitSt=0 on a load served by a cache means the line was Modified. */
        if (cache_hit_st_valid(cpu) && load &&
            !(lvl & (S(LVL, L1) | S(LVL, L2))) && !f->cache_hit_st) {
                if (zen4 ? (f->data_src == DP_IBS_DS_EXT_LOC_CACHE || f->data_src == DP_IBS_DS_EXT_NEAR_CCX ||
                            f->data_src == DP_IBS_DS_EXT_FAR_CCX)
                         : f->data_src == DP_IBS_DS_LOC_CACHE)
                        snoop = S(SNOOP, HITM);
        }

        if (f->dc_lin_addr_valid && !((f->caps & CAPS_OPDTLBPGSIZE) && !f->dc_phy_addr_valid)) {
                if (!f->dc_l1tlb_miss)
                        tlb = S(TLB, L1) | S(TLB, HIT);
                else if (!f->dc_l2tlb_miss)
                        tlb = S(TLB, L2) | S(TLB, HIT);
                else
                        tlb = S(TLB, L2) | S(TLB, MISS);
        }

        if (f->dc_locked_op)
                lock = S(LOCK, LOCKED);

        return op | lvl | snoop | tlb | lock;
}

enum dp_mem_level dp_ibs_op_level(const struct dp_ibs_op_fields *f) {
        enum dp_mem_level level;

        if (!f->ld_op && !f->st_op)
                return DP_MEM_UNKNOWN;
        if (f->dc_uc_mem_acc && f->data_src != DP_IBS_DS_EXT_IO)
                return DP_MEM_UNKNOWN;
        if (!f->dc_miss)
                return DP_MEM_L1;
        if (f->l2_miss_valid && !f->l2_miss)
                return DP_MEM_L2;
        if (f->ld_op) {
                level = dp_mem_level_from_ibs(f->data_src, f->caps & DP_IBS_CAPS_ZEN4, f->rmt_node);
                if (level != DP_MEM_UNKNOWN)
                        return level;
        }
        /* Merged into an outstanding miss: served through the fill buffer. */
        if (f->dc_miss_no_mab_alloc)
                return DP_MEM_L1;
        return DP_MEM_UNKNOWN;
}

/* The latency part of a kernel-filled weight: var1_dw of WEIGHT_STRUCT, or
 * WEIGHT saturated to 32 bits. */
static uint32_t weight_latency(const struct dp_perf_sample *ps) {
        if (ps->present & PERF_SAMPLE_WEIGHT_STRUCT)
                return (uint32_t) ps->weight;
        return ps->weight > UINT32_MAX ? UINT32_MAX : (uint32_t) ps->weight;
}

static void set_from_data_src(struct dp_sample *out, uint64_t data_src, bool with_op, bool with_level) {
        struct dp_mem_data_src s;

        out->data_src = data_src;
        if (dp_mem_data_src_is_na(data_src))
                return;
        out->flags |= DP_SAMPLE_DATA_SRC_VALID;
        dp_mem_data_src_unpack(data_src, &s);
        if (with_op) {
                if (s.op & PERF_MEM_OP_LOAD)
                        out->flags |= DP_SAMPLE_LOAD;
                if (s.op & PERF_MEM_OP_STORE)
                        out->flags |= DP_SAMPLE_STORE;
        }
        if (with_level)
                dp_sample_set_level(out, dp_mem_level_from_data_src(data_src));
}

int dp_ibs_op_decode(const struct dp_perf_sample *ps, const struct dp_ibs_cpu *cpu, struct dp_sample *out) {
        const uint64_t weight_bits = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT;
        struct dp_ibs_op_fields f = {};
        struct dp_ibs_op_regs regs;
        bool have_raw = ps->present & PERF_SAMPLE_RAW;
        int r;

        if (have_raw) {
                r = dp_ibs_op_parse_raw(ps->raw, ps->raw_size, &regs);
                if (r < 0)
                        return r;
                dp_ibs_op_decode_regs(&regs, cpu, &f);
                if (!f.op_en || !f.op_val)
                        return -ENODATA;
                /* The kernel reports a data address only for loads and stores
                 * whose linear address is valid; so do we. */
                if ((!f.ld_op && !f.st_op) || !f.dc_lin_addr_valid)
                        return -ENODATA;
        } else if (!(ps->present & PERF_SAMPLE_ADDR) || ps->addr == 0)
                /* Without RAW, 0 is how the kernel says "no valid address". */
                return -ENODATA;

        out->time = ps->time;
        out->pid = ps->pid;
        out->tid = ps->tid;
        out->vaddr = (ps->present & PERF_SAMPLE_ADDR) ? ps->addr : f.dc_lin_addr;
        out->paddr = 0;
        out->data_src = 0;
        out->latency = 0;
        out->flags = 0;

        /* A kernel-filled PHYS_ADDR is real when nonzero even with PhyAddrValid
         * clear: the kernel then translates the linear address itself. */
        if (ps->present & PERF_SAMPLE_PHYS_ADDR) {
                out->paddr = ps->phys_addr;
                if (ps->phys_addr)
                        out->flags |= DP_SAMPLE_PHYS_VALID;
        } else if (have_raw && f.dc_phy_addr_valid) {
                out->paddr = f.dc_phys_addr;
                out->flags |= DP_SAMPLE_PHYS_VALID;
        }

        if (ps->present & weight_bits)
                out->latency = weight_latency(ps);
        else if (have_raw && f.ld_op && f.dc_miss)
                out->latency = f.dc_miss_lat;
        if (out->latency)
                out->flags |= DP_SAMPLE_LATENCY_VALID;

        if (have_raw) {
                if (f.ld_op)
                        out->flags |= DP_SAMPLE_LOAD;
                if (f.st_op)
                        out->flags |= DP_SAMPLE_STORE;
                set_from_data_src(out, (ps->present & PERF_SAMPLE_DATA_SRC) ? ps->data_src
                                                                            : dp_ibs_op_data_src(&f, cpu),
                                  false, false);
                dp_sample_set_level(out, dp_ibs_op_level(&f));
        } else if (ps->present & PERF_SAMPLE_DATA_SRC)
                set_from_data_src(out, ps->data_src, true, true);

        return 0;
}

