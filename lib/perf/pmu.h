/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Memory-access PMUs as the kernel describes them under
 * /sys/bus/event_source/devices: the sysfs "format" language that places a
 * named field into perf_event_attr's config words, detection of the PMUs a
 * memory sampler can use (AMD ibs_op, Intel core PMUs with PEBS mem-loads,
 * ARM arm_spe_N).  Choosing a source among them is source-choose.h's job.
 *
 * Detection reads files only from the root it is given, so tests point it at
 * the fake trees under tests/sysfs/.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpu-list.h"

#define DP_PMU_SYSFS_ROOT "/sys/bus/event_source/devices"

/* ---- Format fields: "config:0-7", "config1:0-11", "config:0-7,32-35" ---- */

enum dp_pmu_config_word {
        DP_PMU_CONFIG,
        DP_PMU_CONFIG1,
        DP_PMU_CONFIG2,
        DP_PMU_CONFIG3,         /* parsed, but this build's perf_event_attr has no config3 */
        _DP_PMU_CONFIG_WORD_MAX,
};

#define DP_PMU_FIELD_NAME_MAX 32

struct dp_pmu_field {
        char name[DP_PMU_FIELD_NAME_MAX];
        enum dp_pmu_config_word word;
        uint64_t mask;          /* bits the field occupies; a value fills them from the lowest up */
};

/* Parses a format file's text (trailing whitespace allowed, ranges in any
 * order).  -EBADMSG when malformed: unknown word, bit > 63, hi < lo,
 * overlapping ranges, stray characters; -ENAMETOOLONG for a long name. */
int dp_pmu_field_parse(const char *name, const char *text, struct dp_pmu_field *ret);

/* Number of value bits the field holds (1..64). */
unsigned dp_pmu_field_width(const struct dp_pmu_field *field);

/* Deposits @value into the field's bits of @attr, clearing what was there.
 * -ERANGE when @value does not fit; -EOPNOTSUPP for config3. */
int dp_pmu_field_set(const struct dp_pmu_field *field, uint64_t value, struct perf_event_attr *attr);

/* The inverse: gathers the field's bits of @attr into @ret. */
int dp_pmu_field_get(const struct dp_pmu_field *field, const struct perf_event_attr *attr, uint64_t *ret);

/* ---- Detected PMUs ---- */

enum dp_pmu_kind {
        DP_PMU_IBS_OP,          /* AMD ibs_op */
        DP_PMU_CORE,            /* cpu, cpu_core, cpu_atom: PEBS when it lists events/mem-loads */
        DP_PMU_SPE,             /* ARM arm_spe_N */
        _DP_PMU_KIND_MAX,
};

#define DP_PMU_NAME_MAX 32
#define DP_PMU_FIELDS_MAX 24
#define DP_PMU_CAPS_MAX 16
#define DP_PMU_CAP_VALUE_MAX 32
#define DP_PMU_EVENT_MAX 96
#define DP_PMU_MAX 8

struct dp_pmu_cap {
        char name[DP_PMU_FIELD_NAME_MAX];
        char value[DP_PMU_CAP_VALUE_MAX];       /* file contents, whitespace trimmed */
};

struct dp_pmu {
        char name[DP_PMU_NAME_MAX];
        enum dp_pmu_kind kind;
        uint32_t type;                          /* attr.type, from the type file */
        size_t n_fields;
        struct dp_pmu_field fields[DP_PMU_FIELDS_MAX];  /* format/ */
        size_t n_caps;
        struct dp_pmu_cap caps[DP_PMU_CAPS_MAX];        /* caps/ */
        bool has_cpus;                          /* false: the PMU covers every CPU */
        char cpus_text[64];                     /* cpus (hybrid) or cpumask (SPE), as read */
        uint64_t cpus[DP_CPU_MAX / 64];
        /* events/ strings, e.g. "event=0xcd,umask=0x1,ldlat=3"; "" when absent */
        char mem_loads[DP_PMU_EVENT_MAX];
        char mem_loads_aux[DP_PMU_EVENT_MAX];
        char mem_stores[DP_PMU_EVENT_MAX];
        /* 0, or why the PMU cannot be used (malformed type/format/cpus file) */
        int error;
        char error_text[128];
};

struct dp_pmu_set {
        char root[256];
        size_t n;
        struct dp_pmu pmus[DP_PMU_MAX];         /* memory-access candidates, sorted by name */
        char others[256];                       /* every other PMU's name, sorted, space-separated */
};

/* Reads @root (NULL: DP_PMU_SYSFS_ROOT).  A PMU with a broken file is kept
 * with its error set, so the choice can say why it was refused; only a
 * missing or unreadable @root fails (-ENOENT, -EACCES, ...). */
int dp_pmu_detect(const char *root, struct dp_pmu_set **ret);
void dp_pmu_set_free(struct dp_pmu_set *set);

static inline void dp_pmu_set_freep(struct dp_pmu_set **set) {
        dp_pmu_set_free(*set);
}
#define _cleanup_pmu_set_ __attribute__((cleanup(dp_pmu_set_freep)))

const struct dp_pmu *dp_pmu_set_find(const struct dp_pmu_set *set, const char *name);
/* The first usable PMU of @kind that covers @cpu (cpu < 0: any CPU); NULL if none. */
const struct dp_pmu *dp_pmu_set_for_cpu(const struct dp_pmu_set *set, enum dp_pmu_kind kind, int cpu);

const struct dp_pmu_field *dp_pmu_field(const struct dp_pmu *pmu, const char *name);
/* A caps/ file's value, or NULL when the PMU does not have it. */
const char *dp_pmu_cap(const struct dp_pmu *pmu, const char *name);
bool dp_pmu_covers_cpu(const struct dp_pmu *pmu, int cpu);

/* Usable for sampling: readable, and for core PMUs a mem-loads event to sample. */
bool dp_pmu_usable(const struct dp_pmu *pmu);

/* Sets a named format field; -ENOENT when the PMU has no such field, else
 * as dp_pmu_field_set(). */
int dp_pmu_set_field(const struct dp_pmu *pmu, const char *name, uint64_t value, struct perf_event_attr *attr);

/* Applies an events/ string ("event=0xcd,umask=0x1,ldlat=3"; a bare term
 * means 1) through the PMU's format fields and sets attr.type.  -EBADMSG for
 * a malformed string, -ENOENT for an unknown term, -ERANGE for a value that
 * does not fit its field. */
int dp_pmu_apply_event(const struct dp_pmu *pmu, const char *event, struct perf_event_attr *attr);
