/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "capture-source.h"

/* x86 raw event codes (config bits 0-7, umask 8-15) of Intel's memory-access
 * PEBS events: MEM_TRANS_RETIRED (mem-loads 0xcd/0x1; mem-stores 0xcd/0x2 on
 * Sapphire Rapids), MEM_INST_RETIRED / MEM_UOPS_RETIRED (mem-stores 0xd0/0x82
 * and kin) and the mem-loads-aux group leader (0x03/0x82). */
static bool is_pebs_memory_event(uint64_t config) {
        uint8_t event = (uint8_t) config, umask = (uint8_t) (config >> 8);

        return event == 0xcd || event == 0xd0 || (event == 0x03 && umask == 0x82);
}

static bool is_core_pmu(const char *pmu) {
        return strcmp(pmu, "cpu") == 0 || strcmp(pmu, "cpu_core") == 0 || strcmp(pmu, "cpu_atom") == 0;
}

static bool is_amd(const struct dp_perf_cpuid *cpuid) {
        return cpuid && cpuid->kind == DP_CPUID_X86 &&
               (strcmp(cpuid->vendor, "AuthenticAMD") == 0 || strcmp(cpuid->vendor, "HygonGenuine") == 0);
}

#define CHOOSE(src, ...)                                                        \
        do {                                                                    \
                out->source = (src);                                            \
                snprintf(out->reason, sizeof(out->reason), __VA_ARGS__);        \
        } while (0)

static void choose_software(const struct perf_event_attr *a, struct dp_capture_choice *out) {
        switch (a->config) {
        case PERF_COUNT_SW_DUMMY:
                out->access = false;
                CHOOSE(NULL, "the software dummy event carries no accesses (task and mmap bookkeeping)");
                return;
        case PERF_COUNT_SW_PAGE_FAULTS:
        case PERF_COUNT_SW_PAGE_FAULTS_MIN:
        case PERF_COUNT_SW_PAGE_FAULTS_MAJ:
                CHOOSE(&dp_source_pagefault, "software page-fault event (config %" PRIu64 "): the positive control",
                       (uint64_t) a->config);
                return;
        default:
                CHOOSE(NULL, "software event %" PRIu64 " is no memory-access sampler: kernel-filled fields only",
                       (uint64_t) a->config);
        }
}

int dp_capture_choose(const struct dp_perf_data *data, size_t index, const struct dp_perf_cpuid *cpuid,
                      struct dp_capture_choice *out) {
        const struct perf_event_attr *a = dp_perf_data_attr(data, index);
        const char *mapping_note = "";
        int r, ret = 0;

        if (!out)
                return -EINVAL;
        memset(out, 0, sizeof(*out));
        if (!a)
                return -EINVAL;
        out->access = true;

        if (a->type == PERF_TYPE_SOFTWARE) {
                snprintf(out->pmu, sizeof(out->pmu), "software");
                choose_software(a, out);
                return 0;
        }

        if (a->type == PERF_TYPE_HARDWARE || a->type == PERF_TYPE_HW_CACHE || a->type == PERF_TYPE_TRACEPOINT ||
            a->type == PERF_TYPE_BREAKPOINT) {
                CHOOSE(NULL, "generic perf event (type %" PRIu32 ", config 0x%" PRIx64 ") is no memory-access "
                       "sampler: kernel-filled fields only", a->type, (uint64_t) a->config);
                return 0;
        }

        r = dp_perf_data_pmu_name(data, a->type, out->pmu, sizeof(out->pmu));
        if (r == -EBADMSG) {
                ret = r;
                mapping_note = " (the capture's PMU mappings are malformed)";
        } else if (r == -ENOENT)
                mapping_note = " (not in the capture's PMU mappings)";
        if (r < 0)
                out->pmu[0] = '\0';

        if (strcmp(out->pmu, "ibs_op") == 0) {
                CHOOSE(&dp_source_ibs, "PMU type %" PRIu32 " is ibs_op: AMD IBS op, RAW register payloads decoded "
                       "(kernel-filled fields win when present)", a->type);
                return ret;
        }
        if (strncmp(out->pmu, "arm_spe", 7) == 0) {
                CHOOSE(&dp_source_spe, "PMU type %" PRIu32 " is %s: ARM SPE, samples decoded from the capture's AUX "
                       "data", a->type, out->pmu);
                return ret;
        }
        /* The core PMU: named so, or PERF_TYPE_RAW when the capture names nothing. */
        if (is_core_pmu(out->pmu) || (!out->pmu[0] && a->type == PERF_TYPE_RAW)) {
                const char *pmu = out->pmu[0] ? out->pmu : "PERF_TYPE_RAW";

                if (is_amd(cpuid))
                        CHOOSE(NULL, "%s event 0x%" PRIx64 " on an %s machine is not PEBS: kernel-filled fields only",
                               pmu, (uint64_t) a->config, cpuid->vendor);
                else if (is_pebs_memory_event(a->config))
                        CHOOSE(&dp_source_pebs, "%s event 0x%" PRIx64 " is a PEBS memory-access event (mem-loads/"
                               "mem-stores)%s", pmu, (uint64_t) a->config, mapping_note);
                else
                        CHOOSE(NULL, "%s event 0x%" PRIx64 " is no PEBS memory-access event: kernel-filled fields "
                               "only", pmu, (uint64_t) a->config);
                return ret;
        }
        if (out->pmu[0])
                CHOOSE(NULL, "PMU type %" PRIu32 " is %s, no memory-access sampler we decode: kernel-filled fields "
                       "only", a->type, out->pmu);
        else
                CHOOSE(NULL, "PMU type %" PRIu32 " is unknown%s: kernel-filled fields only", a->type, mapping_note);
        return ret;
}

void dp_capture_source_context(const struct dp_perf_cpuid *cpuid, struct dp_source_context *out) {
        memset(out, 0, sizeof(*out));
        /* Family and model mean IBS errata only on AMD's own parts. */
        if (cpuid && cpuid->kind == DP_CPUID_X86 && strcmp(cpuid->vendor, "AuthenticAMD") == 0) {
                out->ibs_cpu.family = cpuid->family;
                out->ibs_cpu.model = cpuid->model;
        }
        /* perf 6.1 reads the one MIDR of HEADER_CPUID (strtol() of it, compared
         * as 32 bits) for every CPU of the capture. */
        if (cpuid && cpuid->kind == DP_CPUID_ARM64)
                out->midr_all = (uint32_t) cpuid->midr;
}
