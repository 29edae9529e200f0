/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a decoder may need to know of the machine its samples come from:
 * live, the daemon's own CPUs (/proc/cpuinfo and each CPU's midr_el1 in
 * sysfs, read once at start); in replay, the capture's HEADER_CPUID.  Apart from source.h so that the generic source
 * interface does not pull in one PMU's decoder (decode-ibs.h) to name it.
 */

#include <stddef.h>
#include <stdint.h>

/* The CPU a sample came from, for IBS errata (dp_ibs_cpu_has_erratum_1293()
 * in decode-ibs.h).  Zero means "not affected by any". */
struct dp_ibs_cpu {
        uint32_t family;        /* x86 family as /proc/cpuinfo "cpu family", e.g. 0x19 */
        uint32_t model;
};

/* Zero-initialised means "nothing known". */
struct dp_source_context {
        struct dp_ibs_cpu ibs_cpu;      /* IBS errata (family/model); zero: none apply */
        /* arm64 MIDR_EL1 (low 32 bits) for the SPE data-source encoding
         * (dp_spe_midr_common_ds()); 0 = unknown.  Per CPU when @midr is set
         * (live: CPUs differ on big.LITTLE), else @midr_all for every CPU
         * (replay: HEADER_CPUID names one, and perf applies it to all). */
        uint32_t midr_all;
        const uint32_t *midr;           /* n_midr entries, indexed by CPU; owned by the caller */
        size_t n_midr;
};

static inline uint32_t dp_source_context_midr(const struct dp_source_context *c, unsigned cpu) {
        if (!c)
                return 0;
        if (c->midr)
                return cpu < c->n_midr ? c->midr[cpu] : 0;
        return c->midr_all;
}
