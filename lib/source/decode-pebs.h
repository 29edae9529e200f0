/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Intel PEBS memory samples (mem-loads, mem-stores, and anything else that
 * reports ADDR + DATA_SRC + WEIGHT): every field is filled by the kernel, so
 * decoding is interpretation of perf's own encodings.  Pure, allocation-free.
 */

#include <stdbool.h>
#include <stdint.h>

#include "mem-level.h"
#include "perf-record.h"
#include "sample.h"

/* The sample's weight, whichever form it came in.  PERF_SAMPLE_WEIGHT_STRUCT
 * is { u32 var1_dw; u16 var2_w; u16 var3_w } read as one little-endian u64. */
struct dp_pebs_weight {
        uint64_t full;          /* PERF_SAMPLE_WEIGHT, or the struct as one u64 */
        uint32_t latency;       /* var1_dw: load latency (cycles); WEIGHT saturated to 32 bits */
        uint16_t ins_latency;   /* var2_w: instruction latency (WEIGHT_STRUCT only) */
        uint16_t var3;          /* var3_w: retire latency on PMUs that report it */
        bool is_struct;
};

/* 0, or -ENODATA when the sample carries neither weight form. */
int dp_pebs_weight(const struct dp_perf_sample *ps, struct dp_pebs_weight *out);

/*
 * Decodes a PEBS memory sample into @out (whose cpu field the caller has set):
 * vaddr from ADDR, paddr from PHYS_ADDR (valid when nonzero), data_src with
 * LOAD/STORE from its mem_op and the level from dp_mem_level_from_data_src(),
 * latency from the weight.  -ENODATA when the sample has no ADDR.  An address
 * of 0 is passed on for the reader to count as addr_zero.
 */
int dp_pebs_decode(const struct dp_perf_sample *ps, struct dp_sample *out);
