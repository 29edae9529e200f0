/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The perf.data header feature sections a replay needs to know which machine
 * and which PMU took a capture (tools/perf/util/header.c):
 *
 *   HEADER_PMU_MAPPINGS  u32 nr, then nr x { u32 type; string name }
 *   HEADER_CPUID         string: "AuthenticAMD,25,1,1" (x86 vendor,family,
 *                        model,stepping in decimal) or "0x00000000410fd0c0"
 *                        (arm64 MIDR_EL1)
 *
 * where a string is { u32 len; char s[len] }, len counting the NUL and the
 * zero padding to a multiple of 64.  Pure functions on the section bytes
 * (dp_perf_data_feature()), bounds-checked: -EBADMSG for a section whose
 * sizes do not add up, never a read past it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perf-data.h"

/* Feature bits (enum in tools/perf/util/header.h). */
#define DP_PERF_HEADER_CPUID 9
#define DP_PERF_HEADER_PMU_MAPPINGS 16

/* Longest PMU name kept (sysfs names are far shorter). */
#define DP_PERF_PMU_NAME_MAX 64

/* The name of PMU @type in a HEADER_PMU_MAPPINGS section into @name.  The
 * whole section is checked first, so a malformed one is -EBADMSG whatever
 * @type is; -ENOENT when it is well formed but has no @type; -ENAMETOOLONG
 * when the name does not fit @size. */
int dp_perf_pmu_mappings_find(const uint8_t *section, size_t size, uint32_t type, char *name, size_t name_size);

/* The string of a HEADER_CPUID section into @buf.  -EBADMSG when malformed,
 * -ENAMETOOLONG when it does not fit. */
int dp_perf_cpuid_string(const uint8_t *section, size_t size, char *buf, size_t buf_size);

enum dp_cpuid_kind {
        DP_CPUID_UNKNOWN,       /* another architecture's format */
        DP_CPUID_X86,
        DP_CPUID_ARM64,
};

/* A HEADER_CPUID string taken apart. */
struct dp_perf_cpuid {
        enum dp_cpuid_kind kind;
        /* x86 */
        char vendor[16];                /* "AuthenticAMD", "GenuineIntel", "HygonGenuine", ... */
        uint32_t family, model, stepping;
        /* arm64: MIDR_EL1 and its fields */
        uint64_t midr;
        uint32_t implementer, variant, architecture, part, revision;
};

/* Parses a HEADER_CPUID string.  -EINVAL when it is neither the x86 nor the
 * arm64 format (out->kind is then DP_CPUID_UNKNOWN). */
int dp_perf_cpuid_parse(const char *text, struct dp_perf_cpuid *out);

/* The same straight from a capture: -ENOENT without HEADER_CPUID, -EBADMSG
 * for a malformed section, -EINVAL for a string of another format. */
int dp_perf_data_cpuid(const struct dp_perf_data *data, struct dp_perf_cpuid *out);

/* The name of PMU @type from the capture's HEADER_PMU_MAPPINGS: -ENOENT
 * when the capture has no mappings or none for @type, -EBADMSG when they
 * are malformed. */
int dp_perf_data_pmu_name(const struct dp_perf_data *data, uint32_t type, char *name, size_t name_size);
