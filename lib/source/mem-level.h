/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Where an access was served, whichever PMU saw it.  Three encodings map onto
 * enum dp_mem_level (sample.h): the kernel's union perf_mem_data_src (PEBS,
 * kernel-filled IBS, anything perf mem understands), the AMD IBS OP_DATA2 data
 * source codes, and the ARM SPE data-source packet of Neoverse cores.  The
 * rules are tabled at the top of lib/source/mem-level.c and in doc/mem-levels.rst.
 * Everything here is pure and allocation-free.
 */

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"

/* perf_mem_data_src mem_lvl_num values that older uapi headers lack. */
#define DP_PERF_MEM_LVLNUM_L2_MHB 0x05  /* L2 miss handling buffer */
#define DP_PERF_MEM_LVLNUM_MSC 0x06     /* memory-side cache */
#define DP_PERF_MEM_LVLNUM_UNC 0x08     /* uncached */

/* The fields of a union perf_mem_data_src, unpacked by shifts and masks so the
 * result does not depend on the compiler's bitfield order. */
struct dp_mem_data_src {
        uint8_t op;             /* PERF_MEM_OP_*, 5 bits */
        uint16_t lvl;           /* PERF_MEM_LVL_*, 14 bits (legacy) */
        uint8_t snoop;          /* PERF_MEM_SNOOP_*, 5 bits */
        uint8_t lock;           /* PERF_MEM_LOCK_*, 2 bits */
        uint8_t dtlb;           /* PERF_MEM_TLB_*, 7 bits */
        uint8_t lvl_num;        /* PERF_MEM_LVLNUM_*, 4 bits */
        uint8_t remote;         /* PERF_MEM_REMOTE_REMOTE, 1 bit */
        uint8_t snoopx;         /* PERF_MEM_SNOOPX_*, 2 bits */
        uint8_t blk;            /* PERF_MEM_BLK_*, 3 bits */
        uint8_t hops;           /* PERF_MEM_HOPS_*, 3 bits */
};

void dp_mem_data_src_unpack(uint64_t data_src, struct dp_mem_data_src *out);
/* The inverse; bits that do not fit a field are dropped. */
uint64_t dp_mem_data_src_pack(const struct dp_mem_data_src *s);

/* True when @data_src says nothing: zero, or every field zero or "not available"
 * (the value the kernel writes for events without a data source). */
bool dp_mem_data_src_is_na(uint64_t data_src);

/* mem_lvl_num (+ mem_remote, mem_hops), falling back to the legacy mem_lvl
 * bits when mem_lvl_num is 0 or NA.  DP_MEM_UNKNOWN when nothing is known. */
enum dp_mem_level dp_mem_level_from_data_src(uint64_t data_src);

/* AMD IBS OP_DATA2 data source.  Before Zen 4 the code is DataSrcLo (3 bits);
 * with the Zen 4 extensions (IBS caps bit 11) it is DataSrcHi << 3 | DataSrcLo. */
enum dp_ibs_data_src {
        DP_IBS_DS_LOC_CACHE = 2,        /* pre-Zen 4: local node cache */
        DP_IBS_DS_DRAM = 3,
        DP_IBS_DS_REM_CACHE = 4,        /* pre-Zen 4: remote node cache */
        DP_IBS_DS_IO = 7,               /* pre-Zen 4: "other" (MMIO/config/PCI/APIC) */

        DP_IBS_DS_EXT_LOC_CACHE = 1,    /* local L3, or another L1/L2 in the CCX */
        DP_IBS_DS_EXT_NEAR_CCX = 2,     /* another CCX's cache, same NUMA node */
        DP_IBS_DS_EXT_DRAM = 3,
        DP_IBS_DS_EXT_FAR_CCX = 5,      /* another CCX's cache, other NUMA node */
        DP_IBS_DS_EXT_PMEM = 6,         /* long-latency DIMM */
        DP_IBS_DS_EXT_IO = 7,           /* MMIO/config/PCI/APIC */
        DP_IBS_DS_EXT_EXT_MEM = 8,      /* CXL / extension memory */
        DP_IBS_DS_EXT_PEER_AGENT = 12,  /* coherent memory of another processor type */
};

/* Level of an IBS data source @code that missed the L2 (the caller decides L1
 * and L2 hits from OP_DATA3).  @remote_node is OP_DATA2 RmtNode, which only
 * matters for memory codes. */
enum dp_mem_level dp_mem_level_from_ibs(unsigned code, bool extended, bool remote_node);

/* ARM SPE data-source packet payload, Neoverse encoding. */
enum dp_spe_data_src {
        DP_SPE_DS_L1D = 0x0,
        DP_SPE_DS_L2 = 0x8,
        DP_SPE_DS_PEER_CORE = 0x9,
        DP_SPE_DS_LOCAL_CLUSTER = 0xa,
        DP_SPE_DS_SYS_CACHE = 0xb,
        DP_SPE_DS_PEER_CLUSTER = 0xc,
        DP_SPE_DS_REMOTE = 0xd,
        DP_SPE_DS_DRAM = 0xe,
};

enum dp_mem_level dp_mem_level_from_spe(uint16_t source);

/* Short stable names ("l1", "local-dram", ...) for logs, JSON and metrics
 * labels; NULL for values outside the enum. */
const char *dp_mem_level_name(enum dp_mem_level level);
/* The inverse of dp_mem_level_name(); -EINVAL for an unknown name. */
int dp_mem_level_from_name(const char *name, enum dp_mem_level *ret);
