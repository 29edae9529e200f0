/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a decoder may need to know of the machine its samples come from:
 * live, the daemon's own CPU (/proc/cpuinfo, read once at start); in replay,
 * the capture's HEADER_CPUID.  Apart from source.h so that the generic source
 * interface does not pull in one PMU's decoder (decode-ibs.h) to name it.
 */

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
};
