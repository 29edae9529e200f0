/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Memory-access PMUs as the kernel describes them under
 * /sys/bus/event_source/devices: the sysfs "format" language that places a
 * named field into perf_event_attr's config words, detection of the PMUs a
 * memory sampler can use (AMD ibs_op, Intel core PMUs with PEBS mem-loads,
 * ARM arm_spe_N), the choice of a sample source with a human reason, and the
 * set of events a source needs opened on one CPU (struct dp_event_plan).
 *
 * Detection reads files only from the root it is given, so tests point it at
 * the fake trees under tests/sysfs/.  The libpfm helpers at the end keep
 * libpfm's process-global state (pfm_initialize) inside lib/source-pebs.c,
 * the one exception to "no global state" in lib/.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "damon-perfd/cpu-list.h"

struct dp_source;

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

/* Sets a named format field; -ENOENT when the PMU has no such field, else
 * as dp_pmu_field_set(). */
int dp_pmu_set_field(const struct dp_pmu *pmu, const char *name, uint64_t value, struct perf_event_attr *attr);

/* Applies an events/ string ("event=0xcd,umask=0x1,ldlat=3"; a bare term
 * means 1) through the PMU's format fields and sets attr.type.  -EBADMSG for
 * a malformed string, -ENOENT for an unknown term, -ERANGE for a value that
 * does not fit its field. */
int dp_pmu_apply_event(const struct dp_pmu *pmu, const char *event, struct perf_event_attr *attr);

/* ---- Choosing a source ---- */

#define DP_SOURCE_EVENT_PREFIX "event:"
#define DP_SOURCE_EVENT_MAX 256

struct dp_source_choice {
        const struct dp_source *source;
        char event[DP_SOURCE_EVENT_MAX];        /* the libpfm string of Source=event:... */
        char reason[512];                       /* what was found, what was refused, what was chosen */
};

/* Resolves a Source= setting against @pmus: "auto" tries IBS, PEBS, SPE and
 * falls back to the software page-fault event; "ibs", "pebs", "spe" insist
 * (-ENODEV when absent or unusable); "pagefault" and "event:<libpfm event>"
 * are taken as given.  -EINVAL for anything else.  @ret->reason explains the
 * outcome in every case, e.g. "ibs_op: absent; cpu: no mem-loads event;
 * arm_spe: absent → pagefault (software positive control)". */
int dp_source_choose(const struct dp_pmu_set *pmus, const char *setting, struct dp_source_choice *ret);

/* ---- What a source opens on one CPU ---- */

#define DP_EVENT_PLAN_MAX 3

struct dp_event_spec {
        struct perf_event_attr attr;
        size_t leader;          /* index of the group leader; itself when it leads or stands alone */
        bool sampling;          /* its samples must reach the ring (mmap, or SET_OUTPUT to plan->ring) */
        const char *role;       /* "mem-loads-aux", "mem-loads", "mem-stores", "ibs_op", "arm_spe", ... */
};

/*
 * The events one CPU needs, in the order they must be opened (a leader
 * before its members).  The sampler:
 *  - opens event[i] with group_fd = fd[event[i].leader] when leader != i,
 *    else -1;
 *  - maps the ring on event[ring] and redirects every other sampling event
 *    into it with PERF_EVENT_IOC_SET_OUTPUT (all share one sample_type);
 *  - when aux_pages > 0, maps an AUX area of that many pages on event[ring]
 *    (SPE) before enabling;
 *  - enables each leader (leader == i); members follow their leader.
 * Leaders and standalone events are opened disabled, members not.
 */
struct dp_event_plan {
        size_t n;
        struct dp_event_spec event[DP_EVENT_PLAN_MAX];
        size_t ring;
        uint32_t aux_pages;
        char pmu[DP_PMU_NAME_MAX];      /* the PMU serving this CPU (hybrid: cpu_core or cpu_atom) */
        char note[256];                 /* adjustments made (clamps, roundings), or why building failed */
};

/* Appends a formatted sentence to @plan->note ("; " between sentences) and
 * returns @error, so builders can write `return dp_event_plan_note(plan, -ERANGE, ...)`. */
int dp_event_plan_note(struct dp_event_plan *plan, int error, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

/* ---- libpfm (lib/source-pebs.c; libpfm's state is process-global) ---- */

/* pfm_initialize() once per process, thread-safe; 0 or a negative errno. */
int dp_pfm_initialize(void);

/* Encodes a libpfm event string for perf_event_open (PFM_OS_PERF_EVENT_EXT,
 * user and kernel levels unless the string says otherwise) into @attr's
 * type, config, config1, config2, precise_ip and exclude bits; @attr's other
 * fields are left alone.  @why (may be NULL) gets libpfm's message.
 * -ENOENT unknown event or PMU, -EINVAL bad attribute, -EOPNOTSUPP, ... */
int dp_pfm_encode(const char *event, struct perf_event_attr *attr, char *why, size_t why_size);
