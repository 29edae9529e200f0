/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/*
 * One decoded memory-access sample, as it travels from a ring reader through
 * the per-CPU SPSC queue to the region tracker.  Kept at 48 bytes so that
 * four samples share three cache lines; every source decodes into this.
 */
enum dp_sample_flags {
        DP_SAMPLE_LOAD = 1u << 0,
        DP_SAMPLE_STORE = 1u << 1,
        DP_SAMPLE_PHYS_VALID = 1u << 2,     /* paddr is a real physical address */
        DP_SAMPLE_DATA_SRC_VALID = 1u << 3, /* data_src carries information */
        DP_SAMPLE_LATENCY_VALID = 1u << 4,  /* latency is a measured value */
        /* Bits 8-11: enum dp_mem_level, where the access was served. */
};

/*
 * Where an access was served, independent of the PMU that saw it.  Each
 * source maps its own encoding (perf_mem_data_src, IBS data source, SPE
 * data-source packet) onto these; see the table in lib/source/mem-level.c.
 */
enum dp_mem_level {
        DP_MEM_UNKNOWN,
        DP_MEM_L1,
        DP_MEM_L2,
        DP_MEM_L3,              /* last-level cache, local */
        DP_MEM_LOCAL_DRAM,
        DP_MEM_REMOTE_CACHE,    /* another CCX/cluster/socket's cache */
        DP_MEM_REMOTE_DRAM,
        DP_MEM_CXL,             /* CXL or other extension memory */
        DP_MEM_IO,
        DP_MEM_PMEM,            /* persistent / long-latency DIMM */
        _DP_MEM_LEVEL_MAX,
};

#define DP_SAMPLE_LEVEL_SHIFT 8
#define DP_SAMPLE_LEVEL_MASK (0xfu << DP_SAMPLE_LEVEL_SHIFT)


struct dp_sample {
        uint64_t time;     /* perf clock (CLOCK_MONOTONIC for live sources), ns */
        uint64_t vaddr;    /* data virtual address */
        uint64_t paddr;    /* data physical address, valid with DP_SAMPLE_PHYS_VALID */
        uint64_t data_src; /* union perf_mem_data_src */
        uint32_t pid;      /* tgid */
        uint32_t tid;
        uint32_t latency;  /* cycles, source-defined (PEBS weight, IBS DcMissLat, SPE total) */
        uint16_t cpu;
        uint16_t flags;    /* enum dp_sample_flags */
};

_Static_assert(sizeof(struct dp_sample) == 48, "dp_sample must stay 48 bytes");
_Static_assert(_DP_MEM_LEVEL_MAX <= 16, "the level must fit its four flag bits");

static inline enum dp_mem_level dp_sample_level(const struct dp_sample *s) {
        return (enum dp_mem_level) ((s->flags & DP_SAMPLE_LEVEL_MASK) >> DP_SAMPLE_LEVEL_SHIFT);
}

static inline void dp_sample_set_level(struct dp_sample *s, enum dp_mem_level level) {
        s->flags = (uint16_t) ((s->flags & ~DP_SAMPLE_LEVEL_MASK) | ((unsigned) level << DP_SAMPLE_LEVEL_SHIFT));
}
