/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which source decodes each event of a `perf record` capture, from the attr
 * and the PMU its type names in the capture's own HEADER_PMU_MAPPINGS (PMU
 * type numbers are assigned at boot, so only the capture can say what they
 * were), and the machine's identity from HEADER_CPUID:
 *
 *   software dummy                         not an access event (bookkeeping)
 *   software page faults                   pagefault (the positive control)
 *   ibs_op                                 ibs: RAW payloads, CPU errata
 *   arm_spe*                               spe: AUX data (AUXTRACE payloads)
 *   cpu / cpu_core / cpu_atom, or RAW      pebs, for the memory-access events
 *     (type 4) without mappings, on a        (MEM_TRANS_RETIRED 0xcd,
 *     machine not known to be AMD             MEM_*_RETIRED 0xd0, the
 *                                             mem-loads-aux leader 0x03/0x82)
 *   anything else                          generic: the kernel-filled fields
 *
 * Pure: reads the capture in memory only.
 */

#include <stdbool.h>
#include <stddef.h>

#include "perf-data-header.h"
#include "perf-data.h"
#include "source.h"

struct dp_capture_choice {
        /* NULL with @access: the generic decode of kernel-filled fields. */
        const struct dp_source *source;
        bool access;                    /* false: no memory accesses (the dummy event) */
        char pmu[DP_PERF_PMU_NAME_MAX]; /* the PMU the capture names for attr.type, or "" */
        char reason[224];
};

/* The choice for attr @index of @data (@cpuid from dp_perf_data_cpuid(), or
 * NULL when unknown).  -EINVAL for an index past the attrs; -EBADMSG when
 * the capture's PMU mappings are malformed (the choice is then made as if
 * they were absent, and the reason says so). */
int dp_capture_choose(const struct dp_perf_data *data, size_t index, const struct dp_perf_cpuid *cpuid,
                      struct dp_capture_choice *out);

/* The decoder context a capture's CPUID gives: IBS errata for AMD parts. */
void dp_capture_source_context(const struct dp_perf_cpuid *cpuid, struct dp_source_context *out);
