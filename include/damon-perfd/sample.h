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
};

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
