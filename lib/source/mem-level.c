/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The source-independent memory level: where an access was served.
 *
 * perf_mem_data_src (PEBS, kernel-filled IBS, SPE as synthesized by perf):
 * mem_lvl_num decides, with two exceptions taken from the legacy mem_lvl
 * bits.  "remote" below means mem_remote set or mem_hops at least HOPS_1
 * (another node); HOPS_0 alone (another core, same node) is not remote.
 *
 *   1. mem_lvl has MISS without HIT      unknown: the level named (in either
 *                                        field) is where the access missed,
 *                                        e.g. PEBS 0x00 "L3 miss, unknown"
 *   2. mem_lvl names LOC_RAM/REM_RAM*    local-dram / remote-dram, even when
 *      but mem_lvl_num names a cache     mem_lvl_num says L3: Sandy Bridge's
 *                                        PEBS 0x0b puts the missed level there
 *
 *   mem_lvl_num            level
 *   L1, LFB                l1     (a fill-buffer hit merged into an L1 miss in flight)
 *   L2, L2_MHB             l2
 *   L3, L4, MSC, ANY_CACHE l3, or remote-cache when remote
 *   RAM                    local-dram, or remote-dram when remote
 *   PMEM                   pmem
 *   CXL                    cxl
 *   IO                     io
 *   UNC                    unknown (uncached: the level is not reported)
 *   0, NA, reserved        the legacy mem_lvl bits below
 *
 *   mem_lvl (legacy)       level, first match in this order
 *   NA                     unknown
 *   L1, LFB                l1
 *   L2                     l2
 *   L3                     l3
 *   LOC_RAM                local-dram
 *   REM_RAM1, REM_RAM2     remote-dram
 *   REM_CCE1, REM_CCE2     remote-cache
 *   IO                     io
 *   anything else (UNC)    unknown
 *
 * AMD IBS OP_DATA2 data source, for loads that missed L1 and L2.  The
 * decoder (lib/source/decode-ibs.c) first maps uncached accesses to unknown,
 * DcMiss=0 to l1 and L2Miss=0 to l2, and afterwards an op left without a
 * source but with DcMissNoMabAlloc to l1 (the miss buffer):
 *
 *   extended code (Zen 4+, hi<<3|lo)       level
 *   1   local L3, or L1/L2 in the CCX      l3
 *   2   another CCX, same node             remote-cache
 *   3   DRAM                               local-dram; remote-dram with RmtNode
 *   5   another CCX, other node            remote-cache
 *   6   long-latency DIMM                  pmem
 *   7   MMIO/config/PCI/APIC               io
 *   8   CXL / extension memory             cxl
 *   12  peer agent (another processor      remote-dram (the kernel's data_src
 *       type's coherent memory)            says NA for this code)
 *   other (reserved)                       unknown
 *
 *   legacy code (before Zen 4, lo only)    level
 *   2   local node cache                   l3
 *   3   DRAM                               local-dram; remote-dram with RmtNode
 *   4   remote node cache                  remote-cache
 *   7   other (I/O)                        io
 *   other (reserved)                       unknown
 *
 * ARM SPE data source, Neoverse encoding, for a load on a core perf lists
 * (decode-spe-source.c decides when, and reads the events elsewhere):
 *
 *   0x0 L1D -> l1; 0x8 L2 -> l2; 0x9 peer core -> l2 (a sibling core's
 *   private cache at the same level); 0xa local cluster -> l3; 0xb system
 *   cache -> l3; 0xc peer cluster -> remote-cache; 0xd remote (other
 *   socket; perf 6.1 says NA and remote) -> remote-cache; 0xe DRAM ->
 *   local-dram; anything else -> unknown.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "macro.h"
#include "mem-level.h"

/* Field positions in union perf_mem_data_src. */
#define DS_OP 0, 5
#define DS_LVL 5, 14
#define DS_SNOOP 19, 5
#define DS_LOCK 24, 2
#define DS_DTLB 26, 7
#define DS_LVL_NUM 33, 4
#define DS_REMOTE 37, 1
#define DS_SNOOPX 38, 2
#define DS_BLK 40, 3
#define DS_HOPS 43, 3

static inline uint64_t field_get(uint64_t v, unsigned shift, unsigned width) {
        return (v >> shift) & ((1ull << width) - 1);
}

static inline uint64_t field_put(uint64_t x, unsigned shift, unsigned width) {
        return (x & ((1ull << width) - 1)) << shift;
}

#define GET(v, f) field_get(v, f)
#define PUT(x, f) field_put(x, f)

void dp_mem_data_src_unpack(uint64_t v, struct dp_mem_data_src *out) {
        out->op = (uint8_t) GET(v, DS_OP);
        out->lvl = (uint16_t) GET(v, DS_LVL);
        out->snoop = (uint8_t) GET(v, DS_SNOOP);
        out->lock = (uint8_t) GET(v, DS_LOCK);
        out->dtlb = (uint8_t) GET(v, DS_DTLB);
        out->lvl_num = (uint8_t) GET(v, DS_LVL_NUM);
        out->remote = (uint8_t) GET(v, DS_REMOTE);
        out->snoopx = (uint8_t) GET(v, DS_SNOOPX);
        out->blk = (uint8_t) GET(v, DS_BLK);
        out->hops = (uint8_t) GET(v, DS_HOPS);
}

uint64_t dp_mem_data_src_pack(const struct dp_mem_data_src *s) {
        return PUT(s->op, DS_OP) | PUT(s->lvl, DS_LVL) | PUT(s->snoop, DS_SNOOP) | PUT(s->lock, DS_LOCK) |
               PUT(s->dtlb, DS_DTLB) | PUT(s->lvl_num, DS_LVL_NUM) | PUT(s->remote, DS_REMOTE) |
               PUT(s->snoopx, DS_SNOOPX) | PUT(s->blk, DS_BLK) | PUT(s->hops, DS_HOPS);
}

bool dp_mem_data_src_is_na(uint64_t v) {
        struct dp_mem_data_src s;

        dp_mem_data_src_unpack(v, &s);
        /* Each field is either empty or exactly its NA code; snoopx, remote and
         * hops have no NA code, so any bit there is information. */
        return (s.op == 0 || s.op == PERF_MEM_OP_NA) &&
               (s.lvl == 0 || s.lvl == PERF_MEM_LVL_NA) &&
               (s.snoop == 0 || s.snoop == PERF_MEM_SNOOP_NA) &&
               (s.lock == 0 || s.lock == PERF_MEM_LOCK_NA) &&
               (s.dtlb == 0 || s.dtlb == PERF_MEM_TLB_NA) &&
               (s.lvl_num == 0 || s.lvl_num == PERF_MEM_LVLNUM_NA) &&
               (s.blk == 0 || s.blk == PERF_MEM_BLK_NA) &&
               s.remote == 0 && s.snoopx == 0 && s.hops == 0;
}

static enum dp_mem_level level_from_legacy(uint16_t lvl) {
        if (lvl & PERF_MEM_LVL_NA)
                return DP_MEM_UNKNOWN;
        if (lvl & (PERF_MEM_LVL_L1 | PERF_MEM_LVL_LFB))
                return DP_MEM_L1;
        if (lvl & PERF_MEM_LVL_L2)
                return DP_MEM_L2;
        if (lvl & PERF_MEM_LVL_L3)
                return DP_MEM_L3;
        if (lvl & PERF_MEM_LVL_LOC_RAM)
                return DP_MEM_LOCAL_DRAM;
        if (lvl & (PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2))
                return DP_MEM_REMOTE_DRAM;
        if (lvl & (PERF_MEM_LVL_REM_CCE1 | PERF_MEM_LVL_REM_CCE2))
                return DP_MEM_REMOTE_CACHE;
        if (lvl & PERF_MEM_LVL_IO)
                return DP_MEM_IO;
        return DP_MEM_UNKNOWN;
}

enum dp_mem_level dp_mem_level_from_data_src(uint64_t data_src) {
        const uint16_t legacy_dram = PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_REM_RAM1 | PERF_MEM_LVL_REM_RAM2;
        struct dp_mem_data_src s;
        bool remote;

        dp_mem_data_src_unpack(data_src, &s);
        remote = s.remote || s.hops >= PERF_MEM_HOPS_1;

        if ((s.lvl & PERF_MEM_LVL_MISS) && !(s.lvl & PERF_MEM_LVL_HIT))
                return DP_MEM_UNKNOWN;

        switch (s.lvl_num) {
        case PERF_MEM_LVLNUM_L1:
        case PERF_MEM_LVLNUM_LFB:
        case PERF_MEM_LVLNUM_L2:
        case DP_PERF_MEM_LVLNUM_L2_MHB:
        case PERF_MEM_LVLNUM_L3:
        case PERF_MEM_LVLNUM_L4:
        case DP_PERF_MEM_LVLNUM_MSC:
        case PERF_MEM_LVLNUM_ANY_CACHE:
                if (s.lvl & legacy_dram)
                        return level_from_legacy(s.lvl & legacy_dram);
                break;
        }

        switch (s.lvl_num) {
        case PERF_MEM_LVLNUM_L1:
        case PERF_MEM_LVLNUM_LFB:
                return DP_MEM_L1;
        case PERF_MEM_LVLNUM_L2:
        case DP_PERF_MEM_LVLNUM_L2_MHB:
                return DP_MEM_L2;
        case PERF_MEM_LVLNUM_L3:
        case PERF_MEM_LVLNUM_L4:
        case DP_PERF_MEM_LVLNUM_MSC:
        case PERF_MEM_LVLNUM_ANY_CACHE:
                return remote ? DP_MEM_REMOTE_CACHE : DP_MEM_L3;
        case PERF_MEM_LVLNUM_RAM:
                return remote ? DP_MEM_REMOTE_DRAM : DP_MEM_LOCAL_DRAM;
        case PERF_MEM_LVLNUM_PMEM:
                return DP_MEM_PMEM;
        case PERF_MEM_LVLNUM_CXL:
                return DP_MEM_CXL;
        case PERF_MEM_LVLNUM_IO:
                return DP_MEM_IO;
        case DP_PERF_MEM_LVLNUM_UNC:
                return DP_MEM_UNKNOWN;
        default:
                /* 0 (an encoder that predates mem_lvl_num), NA, or reserved. */
                return level_from_legacy(s.lvl);
        }
}

enum dp_mem_level dp_mem_level_from_ibs(unsigned code, bool extended, bool remote_node) {
        if (extended)
                switch (code) {
                case DP_IBS_DS_EXT_LOC_CACHE:
                        return DP_MEM_L3;
                case DP_IBS_DS_EXT_NEAR_CCX:
                case DP_IBS_DS_EXT_FAR_CCX:
                        return DP_MEM_REMOTE_CACHE;
                case DP_IBS_DS_EXT_DRAM:
                        return remote_node ? DP_MEM_REMOTE_DRAM : DP_MEM_LOCAL_DRAM;
                case DP_IBS_DS_EXT_PMEM:
                        return DP_MEM_PMEM;
                case DP_IBS_DS_EXT_IO:
                        return DP_MEM_IO;
                case DP_IBS_DS_EXT_EXT_MEM:
                        return DP_MEM_CXL;
                case DP_IBS_DS_EXT_PEER_AGENT:
                        return DP_MEM_REMOTE_DRAM;
                default:
                        return DP_MEM_UNKNOWN;
                }

        switch (code) {
        case DP_IBS_DS_LOC_CACHE:
                return DP_MEM_L3;
        case DP_IBS_DS_DRAM:
                return remote_node ? DP_MEM_REMOTE_DRAM : DP_MEM_LOCAL_DRAM;
        case DP_IBS_DS_REM_CACHE:
                return DP_MEM_REMOTE_CACHE;
        case DP_IBS_DS_IO:
                return DP_MEM_IO;
        default:
                return DP_MEM_UNKNOWN;
        }
}

enum dp_mem_level dp_mem_level_from_spe(uint16_t source) {
        switch (source) {
        case DP_SPE_DS_L1D:
                return DP_MEM_L1;
        case DP_SPE_DS_L2:
        case DP_SPE_DS_PEER_CORE:
                return DP_MEM_L2;
        case DP_SPE_DS_LOCAL_CLUSTER:
        case DP_SPE_DS_SYS_CACHE:
                return DP_MEM_L3;
        case DP_SPE_DS_PEER_CLUSTER:
        case DP_SPE_DS_REMOTE:
                return DP_MEM_REMOTE_CACHE;
        case DP_SPE_DS_DRAM:
                return DP_MEM_LOCAL_DRAM;
        default:
                return DP_MEM_UNKNOWN;
        }
}

static const char *const level_names[_DP_MEM_LEVEL_MAX] = {
        [DP_MEM_UNKNOWN] = "unknown",
        [DP_MEM_L1] = "l1",
        [DP_MEM_L2] = "l2",
        [DP_MEM_L3] = "l3",
        [DP_MEM_LOCAL_DRAM] = "local-dram",
        [DP_MEM_REMOTE_CACHE] = "remote-cache",
        [DP_MEM_REMOTE_DRAM] = "remote-dram",
        [DP_MEM_CXL] = "cxl",
        [DP_MEM_IO] = "io",
        [DP_MEM_PMEM] = "pmem",
};

const char *dp_mem_level_name(enum dp_mem_level level) {
        if ((unsigned) level >= _DP_MEM_LEVEL_MAX)
                return NULL;
        return level_names[level];
}

int dp_mem_level_from_name(const char *name, enum dp_mem_level *ret) {
        if (!name)
                return -EINVAL;
        for (unsigned i = 0; i < _DP_MEM_LEVEL_MAX; i++)
                if (level_names[i] && strcmp(level_names[i], name) == 0) {
                        *ret = (enum dp_mem_level) i;
                        return 0;
                }
        return -EINVAL;
}
