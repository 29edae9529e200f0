/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Intel PEBS memory samples.  The kernel (arch/x86/events/intel/ds.c) has
 * already turned the PEBS record into perf's generic fields, so this is the
 * interpretation of ADDR, PHYS_ADDR, DATA_SRC and the two weight forms.
 */
#include <errno.h>
#include <linux/perf_event.h>

#include "decode-pebs.h"

int dp_pebs_weight(const struct dp_perf_sample *ps, struct dp_pebs_weight *out) {
        *out = (struct dp_pebs_weight) {};
        if (ps->present & PERF_SAMPLE_WEIGHT_STRUCT) {
                /* { u32 var1_dw; u16 var2_w; u16 var3_w } in little-endian order. */
                out->is_struct = true;
                out->full = ps->weight;
                out->latency = (uint32_t) ps->weight;
                out->ins_latency = (uint16_t) (ps->weight >> 32);
                out->var3 = (uint16_t) (ps->weight >> 48);
                return 0;
        }
        if (ps->present & PERF_SAMPLE_WEIGHT) {
                out->full = ps->weight;
                out->latency = ps->weight > UINT32_MAX ? UINT32_MAX : (uint32_t) ps->weight;
                return 0;
        }
        return -ENODATA;
}

int dp_pebs_decode(const struct dp_perf_sample *ps, struct dp_sample *out) {
        struct dp_pebs_weight w;

        if (!(ps->present & PERF_SAMPLE_ADDR))
                return -ENODATA;

        out->time = ps->time;
        out->pid = ps->pid;
        out->tid = ps->tid;
        out->vaddr = ps->addr;
        out->paddr = 0;
        out->data_src = 0;
        out->latency = 0;
        out->flags = 0;

        if (ps->present & PERF_SAMPLE_PHYS_ADDR) {
                out->paddr = ps->phys_addr;
                if (ps->phys_addr)
                        out->flags |= DP_SAMPLE_PHYS_VALID;
        }

        if (dp_pebs_weight(ps, &w) >= 0 && w.latency) {
                out->latency = w.latency;
                out->flags |= DP_SAMPLE_LATENCY_VALID;
        }

        if (ps->present & PERF_SAMPLE_DATA_SRC) {
                struct dp_mem_data_src s;

                out->data_src = ps->data_src;
                if (!dp_mem_data_src_is_na(ps->data_src)) {
                        dp_mem_data_src_unpack(ps->data_src, &s);
                        out->flags |= DP_SAMPLE_DATA_SRC_VALID;
                        if (s.op & PERF_MEM_OP_LOAD)
                                out->flags |= DP_SAMPLE_LOAD;
                        if (s.op & PERF_MEM_OP_STORE)
                                out->flags |= DP_SAMPLE_STORE;
                        dp_sample_set_level(out, dp_mem_level_from_data_src(ps->data_src));
                }
        }
        return 0;
}
