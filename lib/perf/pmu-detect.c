/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "pmu.h"

/*
 * Detection of memory-access PMUs from a sysfs-like tree.  Every read goes
 * below the root the caller names; nothing here writes.
 */

/* Reads a small sysfs file into @buf, trailing whitespace trimmed.  -EFBIG
 * when it does not fit, so nothing is silently truncated: the whole file, as
 * read, must fit in @size - 1 bytes.  dp_read_file() refuses a symlink as the
 * last component (-ELOOP); sysfs attributes never are one. */
static int read_text(const char *path, char *buf, size_t size) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = dp_read_file(path, &text, &len);
        if (r < 0)
                return r;
        if (len >= size)
                return -EFBIG;
        while (len > 0 && isspace((unsigned char) text[len - 1]))
                len--;
        memcpy(buf, text, len);
        buf[len] = '\0';
        return 0;
}

/* @dir/@sub[/@name] into @buf; -ENAMETOOLONG rather than a truncated path. */
static int path_join(char *buf, size_t size, const char *dir, const char *sub, const char *name) {
        int n = name ? snprintf(buf, size, "%s/%s/%s", dir, sub, name) : snprintf(buf, size, "%s/%s", dir, sub);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

static bool is_dir(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int classify(const char *name, enum dp_pmu_kind *kind) {
        if (strcmp(name, "ibs_op") == 0)
                *kind = DP_PMU_IBS_OP;
        else if (strcmp(name, "cpu") == 0 || strcmp(name, "cpu_core") == 0 || strcmp(name, "cpu_atom") == 0)
                *kind = DP_PMU_CORE;
        else if (strncmp(name, "arm_spe_", 8) == 0 && name[8])
                *kind = DP_PMU_SPE;
        else
                return -ENOENT;
        return 0;
}

static void pmu_fail(struct dp_pmu *pmu, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pmu_fail(struct dp_pmu *pmu, int error, const char *fmt, ...) {
        va_list ap;

        if (pmu->error)
                return;         /* keep the first reason */
        pmu->error = error;
        va_start(ap, fmt);
        vsnprintf(pmu->error_text, sizeof(pmu->error_text), fmt, ap);
        va_end(ap);
}

static int compare_names(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The sorted regular files of @dir; -ENOENT when it does not exist. */
static int list_files(const char *dir, char ***ret, size_t *n_ret) {
        _cleanup_closedir_ DIR *d = NULL;
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;

        d = opendir(dir);
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char **grown;

                if (de->d_name[0] == '.')
                        continue;
                grown = realloc(names, (n + 1) * sizeof(*names));
                if (!grown)
                        goto oom;
                names = grown;
                names[n] = strdup(de->d_name);
                if (!names[n])
                        goto oom;
                n++;
        }
        if (n)
                qsort(names, n, sizeof(*names), compare_names);
        *ret = names;
        *n_ret = n;
        return 0;
oom:
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        return -ENOMEM;
}

static void free_names(char **names, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
}

static void read_format(struct dp_pmu *pmu, const char *dir) {
        char path[PATH_MAX], text[128], **names = NULL;
        size_t n = 0;
        int r;

        r = path_join(path, sizeof(path), dir, "format", NULL);
        if (r >= 0)
                r = list_files(path, &names, &n);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                pmu_fail(pmu, r, "format/ unreadable (%s)", strerror(-r));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                if (pmu->n_fields >= DP_PMU_FIELDS_MAX) {
                        pmu_fail(pmu, -E2BIG, "more than %d format fields", DP_PMU_FIELDS_MAX);
                        break;
                }
                r = path_join(path, sizeof(path), dir, "format", names[i]);
                if (r >= 0)
                        r = read_text(path, text, sizeof(text));
                if (r >= 0)
                        r = dp_pmu_field_parse(names[i], text, &pmu->fields[pmu->n_fields]);
                if (r < 0) {
                        pmu_fail(pmu, r, "format/%s: %s", names[i],
                                 r == -EBADMSG ? "malformed" : strerror(-r));
                        continue;
                }
                pmu->n_fields++;
        }
        free_names(names, n);
}

static void read_caps(struct dp_pmu *pmu, const char *dir) {
        char path[PATH_MAX], **names = NULL;
        size_t n = 0;
        int r;

        r = path_join(path, sizeof(path), dir, "caps", NULL);
        if (r >= 0)
                r = list_files(path, &names, &n);
        if (r == -ENOENT)
                return;
        if (r < 0) {
                pmu_fail(pmu, r, "caps/ unreadable (%s)", strerror(-r));
                return;
        }
        for (size_t i = 0; i < n; i++) {
                struct dp_pmu_cap *cap;

                if (pmu->n_caps >= DP_PMU_CAPS_MAX) {
                        pmu_fail(pmu, -E2BIG, "more than %d caps", DP_PMU_CAPS_MAX);
                        break;
                }
                cap = &pmu->caps[pmu->n_caps];
                if (strlen(names[i]) >= sizeof(cap->name)) {
                        pmu_fail(pmu, -ENAMETOOLONG, "caps/%s: name too long", names[i]);
                        continue;
                }
                r = path_join(path, sizeof(path), dir, "caps", names[i]);
                if (r >= 0)
                        r = read_text(path, cap->value, sizeof(cap->value));
                if (r < 0) {
                        pmu_fail(pmu, r, "caps/%s: %s", names[i], strerror(-r));
                        continue;
                }
                strcpy(cap->name, names[i]);
                pmu->n_caps++;
        }
        free_names(names, n);
}

/* Hybrid core PMUs list their CPUs in cpus, SPE in cpumask; a plain cpu PMU covers all. */
static void read_cpus(struct dp_pmu *pmu, const char *dir) {
        _cleanup_free_ struct dp_cpu_list *list = NULL;
        char path[PATH_MAX];
        int r;

        r = path_join(path, sizeof(path), dir, pmu->kind == DP_PMU_SPE ? "cpumask" : "cpus", NULL);
        if (r >= 0)
                r = read_text(path, pmu->cpus_text, sizeof(pmu->cpus_text));
        if (r == -ENOENT) {
                pmu->cpus_text[0] = '\0';
                return;
        }
        if (r < 0) {
                pmu->cpus_text[0] = '\0';
                pmu_fail(pmu, r, "%s: %s", pmu->kind == DP_PMU_SPE ? "cpumask" : "cpus", strerror(-r));
                return;
        }
        list = malloc(sizeof(*list));
        if (!list) {
                pmu_fail(pmu, -ENOMEM, "out of memory");
                return;
        }
        r = dp_cpu_list_parse(pmu->cpus_text, list);
        if (r < 0) {
                pmu_fail(pmu, r, "%s: malformed CPU list \"%s\"", pmu->kind == DP_PMU_SPE ? "cpumask" : "cpus",
                         pmu->cpus_text);
                return;
        }
        pmu->has_cpus = true;
        for (size_t i = 0; i < list->n; i++)
                pmu->cpus[list->cpu[i] / 64] |= UINT64_C(1) << (list->cpu[i] % 64);
}

static void read_event(struct dp_pmu *pmu, const char *dir, const char *name, char *buf, size_t size) {
        char path[PATH_MAX];
        int r;

        r = path_join(path, sizeof(path), dir, "events", name);
        if (r >= 0)
                r = read_text(path, buf, size);
        if (r < 0) {
                buf[0] = '\0';
                if (r != -ENOENT)
                        pmu_fail(pmu, r, "events/%s: %s", name, strerror(-r));
        }
}

static void read_pmu(struct dp_pmu *pmu, const char *dir) {
        char path[PATH_MAX], text[32];
        int r;

        r = path_join(path, sizeof(path), dir, "type", NULL);
        if (r >= 0)
                r = read_text(path, text, sizeof(text));
        if (r < 0)
                pmu_fail(pmu, r, "type: %s", strerror(-r));
        else if (dp_parse_u32_in(text, 0, UINT32_MAX, &pmu->type) < 0)
                pmu_fail(pmu, -EBADMSG, "type: malformed \"%s\"", text);
        read_format(pmu, dir);
        read_caps(pmu, dir);
        read_cpus(pmu, dir);
        if (pmu->kind == DP_PMU_CORE) {
                read_event(pmu, dir, "mem-loads", pmu->mem_loads, sizeof(pmu->mem_loads));
                read_event(pmu, dir, "mem-loads-aux", pmu->mem_loads_aux, sizeof(pmu->mem_loads_aux));
                read_event(pmu, dir, "mem-stores", pmu->mem_stores, sizeof(pmu->mem_stores));
        }
}

#define OTHERS_RESERVE 24         /* " (+NNNN more)" */

static int compare_pmus(const void *a, const void *b) {
        return strcmp(((const struct dp_pmu *) a)->name, ((const struct dp_pmu *) b)->name);
}

int dp_pmu_detect(const char *root, struct dp_pmu_set **ret) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        char **names = NULL, path[PATH_MAX];
        size_t n = 0, used = 0, dropped = 0;
        int r;

        if (!ret)
                return -EINVAL;
        if (!root)
                root = DP_PMU_SYSFS_ROOT;
        if (strlen(root) >= sizeof(set->root))
                return -ENAMETOOLONG;

        r = list_files(root, &names, &n);
        if (r < 0)
                return r;
        set = calloc(1, sizeof(*set));
        if (!set) {
                free_names(names, n);
                return -ENOMEM;
        }
        strcpy(set->root, root);

        for (size_t i = 0; i < n; i++) {
                enum dp_pmu_kind kind;
                struct dp_pmu *pmu;

                if (path_join(path, sizeof(path), root, names[i], NULL) < 0 || !is_dir(path))
                        continue;
                if (classify(names[i], &kind) < 0 || strlen(names[i]) >= DP_PMU_NAME_MAX ||
                    set->n >= DP_PMU_MAX) {
                        /* Servers have hundreds of uncore PMUs: keep room to say how many were left out. */
                        size_t len = strlen(names[i]) + (used ? 1 : 0);

                        if (used + len < sizeof(set->others) - OTHERS_RESERVE) {
                                snprintf(set->others + used, sizeof(set->others) - used, "%s%s", used ? " " : "",
                                         names[i]);
                                used += len;
                        } else
                                dropped++;
                        continue;
                }
                pmu = &set->pmus[set->n++];
                strcpy(pmu->name, names[i]);
                pmu->kind = kind;
                read_pmu(pmu, path);
        }
        free_names(names, n);
        if (dropped)
                snprintf(set->others + used, sizeof(set->others) - used, "%s(+%zu more)", used ? " " : "", dropped);
        qsort(set->pmus, set->n, sizeof(set->pmus[0]), compare_pmus);

        *ret = DP_TAKE_PTR(set);
        return 0;
}

void dp_pmu_set_free(struct dp_pmu_set *set) {
        free(set);
}

const struct dp_pmu *dp_pmu_set_find(const struct dp_pmu_set *set, const char *name) {
        if (!set)
                return NULL;
        for (size_t i = 0; i < set->n; i++)
                if (strcmp(set->pmus[i].name, name) == 0)
                        return &set->pmus[i];
        return NULL;
}

bool dp_pmu_covers_cpu(const struct dp_pmu *pmu, int cpu) {
        if (!pmu->has_cpus)
                return true;
        if (cpu < 0 || cpu >= DP_CPU_MAX)
                return false;
        return pmu->cpus[cpu / 64] & (UINT64_C(1) << (cpu % 64));
}

bool dp_pmu_usable(const struct dp_pmu *pmu) {
        return !pmu->error && (pmu->kind != DP_PMU_CORE || pmu->mem_loads[0]);
}

const struct dp_pmu *dp_pmu_set_for_cpu(const struct dp_pmu_set *set, enum dp_pmu_kind kind, int cpu) {
        if (!set)
                return NULL;
        for (size_t i = 0; i < set->n; i++) {
                const struct dp_pmu *pmu = &set->pmus[i];

                if (pmu->kind == kind && dp_pmu_usable(pmu) && (cpu < 0 || dp_pmu_covers_cpu(pmu, cpu)))
                        return pmu;
        }
        return NULL;
}

const char *dp_pmu_cap(const struct dp_pmu *pmu, const char *name) {
        for (size_t i = 0; i < pmu->n_caps; i++)
                if (strcmp(pmu->caps[i].name, name) == 0)
                        return pmu->caps[i].value;
        return NULL;
}
