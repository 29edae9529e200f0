/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * AMD IBS op samples: the PERF_SAMPLE_RAW register payload and the fields the
 * kernel fills itself (ADDR, PHYS_ADDR, DATA_SRC, WEIGHT, since about 6.1).
 * Register layouts follow arch/x86/include/asm/amd-ibs.h; the data source
 * synthesized from the registers follows arch/x86/events/amd/ibs.c.  Pure and
 * allocation-free.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf-record.h"
#include "sample.h"
#include "source-context.h"    /* struct dp_ibs_cpu */

/* IBS capability bits: CPUID Fn8000_001B_EAX with bit 0 meaning "IBS present";
 * the kernel puts them first in every RAW payload. */
#define DP_IBS_CAPS_AVAIL (1u << 0)
#define DP_IBS_CAPS_FETCHSAM (1u << 1)
#define DP_IBS_CAPS_OPSAM (1u << 2)
#define DP_IBS_CAPS_RDWROPCNT (1u << 3)
#define DP_IBS_CAPS_OPCNT (1u << 4)
#define DP_IBS_CAPS_BRNTRGT (1u << 5)   /* payload carries BR_TARGET */
#define DP_IBS_CAPS_OPCNTEXT (1u << 6)
#define DP_IBS_CAPS_RIPINVALIDCHK (1u << 7)
#define DP_IBS_CAPS_OPBRNFUSE (1u << 8)
#define DP_IBS_CAPS_FETCHCTLEXTD (1u << 9)
#define DP_IBS_CAPS_OPDATA4 (1u << 10)  /* payload carries OP_DATA4 */
#define DP_IBS_CAPS_ZEN4 (1u << 11)     /* extended (5-bit) data source codes */
#define DP_IBS_CAPS_OPLDLAT (1u << 12)

/* RAW payload: u32 caps, then this many u64 registers at least. */
#define DP_IBS_OP_FIXED_REGS 7
#define DP_IBS_OP_RAW_MIN_SIZE (4 + 8 * DP_IBS_OP_FIXED_REGS)

/* Erratum 1293 (family 0x19 models 0x00-0x0f): OP_DATA2 and L2Miss are wrong
 * when SwPf or DcMissNoMabAlloc is set. */
bool dp_ibs_cpu_has_erratum_1293(const struct dp_ibs_cpu *cpu);

/* Fills @cpu from /proc/cpuinfo text (the first "cpu family" and "model"
 * lines); -ENOENT when they are missing, -EINVAL when malformed. */
int dp_ibs_cpu_from_cpuinfo(const char *text, struct dp_ibs_cpu *cpu);

/* The registers of one RAW payload, as the kernel saved them. */
struct dp_ibs_op_regs {
        uint32_t caps;
        bool has_br_target;
        bool has_op_data4;
        uint64_t op_ctl;        /* MSRC001_1033 */
        uint64_t op_rip;
        uint64_t op_data;
        uint64_t op_data2;
        uint64_t op_data3;
        uint64_t dc_lin_addr;
        uint64_t dc_phys_addr;
        uint64_t br_target;     /* 0 unless has_br_target */
        uint64_t op_data4;      /* 0 unless has_op_data4 */
};

/* Splits a RAW payload.  -EBADMSG when @raw is NULL, or @size is too short for
 * the registers its caps announce, or not caps + whole u64s.  Extra trailing
 * registers (a newer kernel's) are ignored. */
int dp_ibs_op_parse_raw(const void *raw, size_t size, struct dp_ibs_op_regs *out);

/* Every architectural field of the op registers, for dumps and tests. */
struct dp_ibs_op_fields {
        uint32_t caps;
        /* IBS_OP_CTL */
        uint32_t max_cnt;               /* period: (MaxCntExt << 16 | MaxCnt) << 4 */
        bool l3_miss_only, op_en, op_val, cnt_ctl, ldlat_en;
        uint32_t cur_cnt;               /* 27 bits */
        uint8_t ldlat_thrsh;
        /* IBS_OP_DATA */
        uint16_t comp_to_ret_ctr, tag_to_ret_ctr;
        bool op_return, op_brn_taken, op_brn_misp, op_brn_ret, op_rip_invalid, op_brn_fuse, op_microcode;
        /* IBS_OP_DATA2 */
        bool op_data2_valid;            /* false under erratum 1293: the fields below are zeroed */
        uint8_t data_src_lo, data_src_hi;
        uint8_t data_src;               /* the code: extended with DP_IBS_CAPS_ZEN4, else data_src_lo */
        bool rmt_node, cache_hit_st, strm_st, rmt_socket;
        /* IBS_OP_DATA3 */
        bool ld_op, st_op, dc_l1tlb_miss, dc_l2tlb_miss, dc_l1tlb_hit_2m, dc_l1tlb_hit_1g,
                dc_l2tlb_hit_2m, dc_miss, dc_mis_acc, dc_wc_mem_acc, dc_uc_mem_acc, dc_locked_op,
                dc_miss_no_mab_alloc, dc_lin_addr_valid, dc_phy_addr_valid, dc_l2_tlb_hit_1g,
                l2_miss, sw_pf;
        bool l2_miss_valid;             /* false under erratum 1293 */
        uint8_t op_mem_width;           /* encoded: bytes = 1 << (op_mem_width - 1), 0 = unknown */
        uint16_t op_mem_width_bytes;
        uint8_t op_dc_miss_open_mem_reqs;
        uint16_t dc_miss_lat, tlb_refill_lat;
        /* Addresses, only meaningful with their valid bits. */
        uint64_t op_rip, dc_lin_addr, dc_phys_addr, br_target, op_data4;
};

/* Splits the registers into fields, applying errata for @cpu (may be NULL). */
void dp_ibs_op_decode_regs(const struct dp_ibs_op_regs *regs, const struct dp_ibs_cpu *cpu,
                           struct dp_ibs_op_fields *out);

/* The union perf_mem_data_src value the kernel's ibs.c reports for these
 * registers with PERF_SAMPLE_DATA_SRC (mem_op, mem_lvl, mem_lvl_num,
 * mem_remote, mem_hops, mem_snoop, mem_dtlb, mem_lock). */
uint64_t dp_ibs_op_data_src(const struct dp_ibs_op_fields *f, const struct dp_ibs_cpu *cpu);

/* Where the op's data came from: L1/L2 hits from OP_DATA3, beyond that the
 * OP_DATA2 data source via dp_mem_level_from_ibs(). */
enum dp_mem_level dp_ibs_op_level(const struct dp_ibs_op_fields *f);

/*
 * Decodes one IBS op sample into @out (whose cpu field the caller has set;
 * pid, tid and time are copied when present).  Kernel-filled ADDR, PHYS_ADDR,
 * DATA_SRC and WEIGHT are used when the sample carries them; otherwise the
 * values come from the RAW registers.  When RAW is present it also decides
 * validity, load/store and the level.
 * Returns 0; -ENODATA when the sample has no data address (not a load/store,
 * linear address invalid, or op_en/op_val clear); -EBADMSG for a RAW payload
 * that is short or malformed.
 */
int dp_ibs_op_decode(const struct dp_perf_sample *ps, const struct dp_ibs_cpu *cpu, struct dp_sample *out);

