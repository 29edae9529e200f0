/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where an SPE record's access was served: the union perf_mem_data_src perf
 * synthesizes for it, and our normalized level.  The data-source packet is
 * IMPLEMENTATION DEFINED, so perf reads it only on the CPUs whose encoding it
 * knows (by MIDR_EL1) and otherwise derives the level from the events packet.
 * The rules are those of the perf we are checked against (linux-perf 6.1,
 * tools/perf/util/arm-spe.c: arm_spe__synth_data_source() and its _common()
 * and _generic() helpers); doc/mem-levels.rst says where newer perf differs
 * and where our level departs from perf's data_src on purpose.
 */
#include <errno.h>
#include <linux/perf_event.h>

#include "decode-spe.h"
#include "mem-level.h"
#include "parse-util.h"

/* MIDR_EL1 (arch/arm64/include/asm/cputype.h): implementer 31:24, variant
 * 23:20, architecture 19:16, part number 15:4, revision 3:0.  A model is all
 * but variant and revision. */
#define MIDR_MODEL_MASK 0xff0ffff0u
#define MIDR_MODEL(imp, part) ((uint32_t) (imp) << 24 | 0xfu << 16 | (uint32_t) (part) << 4)

#define ARM_CPU_IMP_ARM 0x41

/* perf 6.1's common_ds_encoding_cpus[], every variant and revision of each. */
static const uint32_t common_ds_models[] = {
        MIDR_MODEL(ARM_CPU_IMP_ARM, 0xd0c),     /* Neoverse N1 */
        MIDR_MODEL(ARM_CPU_IMP_ARM, 0xd49),     /* Neoverse N2 */
        MIDR_MODEL(ARM_CPU_IMP_ARM, 0xd40),     /* Neoverse V1 */
};

bool dp_spe_midr_common_ds(uint32_t midr) {
        for (size_t i = 0; i < sizeof(common_ds_models) / sizeof(common_ds_models[0]); i++)
                if ((midr & MIDR_MODEL_MASK) == common_ds_models[i])
                        return true;
        return false;
}

int dp_midr_parse(const char *text, uint32_t *ret) {
        const char *end;
        uint64_t v;
        int r;

        if (!text || !ret || text[0] != '0' || (text[1] != 'x' && text[1] != 'X'))
                return -EINVAL;
        r = dp_parse_uint(text, 16, &v, &end);
        if (r < 0)
                return r == -ERANGE ? -EINVAL : r;
        if (end[0] == '\n')
                end++;
        if (*end)
                return -EINVAL;
        if (v >> 32)
                return -ERANGE;
        *ret = (uint32_t) v;
        return 0;
}

#define S(field, value) ((uint64_t) PERF_MEM_##field##_##value << PERF_MEM_##field##_SHIFT)
#define LVL(x) S(LVL, x)
#define HIT(x) (S(LVL, x) | S(LVL, HIT))
#define LVLNUM(x) ((uint64_t) PERF_MEM_LVLNUM_##x << PERF_MEM_LVLNUM_SHIFT)
#define SNOOPX_PEER ((uint64_t) PERF_MEM_SNOOPX_PEER << PERF_MEM_SNOOPX_SHIFT)

/* The Neoverse encoding: perf's arm_spe__synth_data_source_common().  It has
 * nothing on stores, and a record without the packet reads as code 0 (L1D):
 * perf zeroes the record and never checks whether the packet came. */
static uint64_t common_level_bits(const struct dp_spe_record *rec, bool store) {
        uint16_t code = (rec->have & DP_SPE_HAVE_DATA_SOURCE) ? rec->data_source : DP_SPE_DS_L1D;

        if (store)
                return LVL(NA) | LVLNUM(NA) | S(SNOOP, NA);
        switch (code) {
        case DP_SPE_DS_L1D:
                return HIT(L1) | LVLNUM(L1) | S(SNOOP, NONE);
        case DP_SPE_DS_L2:
                return HIT(L2) | LVLNUM(L2) | S(SNOOP, NONE);
        case DP_SPE_DS_PEER_CORE:
                return HIT(L2) | LVLNUM(L2) | SNOOPX_PEER;
        case DP_SPE_DS_LOCAL_CLUSTER:
        case DP_SPE_DS_PEER_CLUSTER:
                return HIT(L3) | LVLNUM(L3) | SNOOPX_PEER;
        case DP_SPE_DS_SYS_CACHE:
                return HIT(L3) | LVLNUM(L3) | S(SNOOP, HIT);
        case DP_SPE_DS_REMOTE:
                return LVL(NA) | LVLNUM(NA) | S(REMOTE, REMOTE) | SNOOPX_PEER;
        case DP_SPE_DS_DRAM:
                return HIT(LOC_RAM) | LVLNUM(RAM) | S(SNOOP, NONE);
        default:
                return 0;
        }
}

/* Elsewhere, the events: perf's arm_spe__synth_data_source_generic().  The
 * last-level cache events win over the L1D ones; only mem_lvl is set (no
 * mem_lvl_num, no snoop), for stores as for loads. */
static uint64_t event_level_bits(uint32_t events) {
        uint64_t v = 0;

        if (events & (DP_SPE_EV_LLC_ACCESS | DP_SPE_EV_LLC_MISS))
                v = LVL(L3) | ((events & DP_SPE_EV_LLC_MISS) ? LVL(MISS) : LVL(HIT));
        else if (events & (DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_L1D_REFILL))
                v = LVL(L1) | ((events & DP_SPE_EV_L1D_REFILL) ? LVL(MISS) : LVL(HIT));
        if (events & DP_SPE_EV_REMOTE_ACCESS)
                v |= S(REMOTE, REMOTE);
        return v;
}

/* OP-TYPE of class LD/ST: 1 load, 2 store, 0 another operation (or none). */
static int record_op(const struct dp_spe_record *rec) {
        if (!(rec->have & DP_SPE_HAVE_OP_TYPE) || (rec->op_header & 3) != DP_SPE_OP_LDST)
                return 0;
        return (rec->op_payload & 0x01) ? 2 : 1;
}

uint64_t dp_spe_record_data_src(const struct dp_spe_record *rec, uint32_t midr) {
        uint32_t events = (rec->have & DP_SPE_HAVE_EVENTS) ? rec->events : 0;
        int op = record_op(rec);
        uint64_t v;

        if (op == 0)
                return 0;       /* perf: not a memory operation, no memory sample */
        v = op == 1 ? S(OP, LOAD) : S(OP, STORE);
        v |= dp_spe_midr_common_ds(midr) ? common_level_bits(rec, op == 2) : event_level_bits(events);
        if (events & (DP_SPE_EV_TLB_ACCESS | DP_SPE_EV_TLB_WALK))
                v |= S(TLB, WK) | ((events & DP_SPE_EV_TLB_WALK) ? S(TLB, MISS) : S(TLB, HIT));
        return v;
}

enum dp_mem_level dp_spe_record_level(const struct dp_spe_record *rec, uint32_t midr) {
        int op = record_op(rec);

        /* The packet where perf reads it, with our cross-PMU table (which names
         * a remote-socket or peer-cluster line a remote cache); a load without
         * the packet, a store, or an unlisted CPU: the events, as perf reads
         * them, never perf's assumption that a missing packet means L1D. */
        if (op == 1 && (rec->have & DP_SPE_HAVE_DATA_SOURCE) && dp_spe_midr_common_ds(midr))
                return dp_mem_level_from_spe(rec->data_source);
        if (op == 0)
                return DP_MEM_UNKNOWN;
        return dp_mem_level_from_data_src(event_level_bits((rec->have & DP_SPE_HAVE_EVENTS) ? rec->events : 0));
}
