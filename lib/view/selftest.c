/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl selftest: the report, the verdict, its output, and the layer-0 checks. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "macro.h"
#include "selftest.h"

void dp_selftest_report_init(struct dp_selftest_report *r) {
        *r = (struct dp_selftest_report) {};
}

struct dp_selftest_check *dp_selftest_add(struct dp_selftest_report *r, unsigned layer, const char *name,
                                          enum dp_selftest_result result, const char *format, ...) {
        struct dp_selftest_check *c;
        va_list ap;

        if (r->n >= DP_SELFTEST_CHECKS_MAX)
                return NULL;
        c = &r->checks[r->n++];
        *c = (struct dp_selftest_check) { .layer = layer, .result = result };
        snprintf(c->name, sizeof(c->name), "%s", name);
        va_start(ap, format);
        vsnprintf(c->reason, sizeof(c->reason), format, ap);
        va_end(ap);
        return c;
}

const char *dp_selftest_result_name(enum dp_selftest_result result) {
        switch (result) {
        case DP_SELFTEST_PASS:
                return "PASS";
        case DP_SELFTEST_FAIL:
                return "FAIL";
        default:
                return "SKIP";
        }
}

const char *dp_selftest_verdict_name(enum dp_selftest_verdict verdict) {
        switch (verdict) {
        case DP_SELFTEST_FULLY_INTEGRATED:
                return "FULLY INTEGRATED";
        case DP_SELFTEST_PLUMBING_ONLY:
                return "PLUMBING-ONLY";
        default:
                return "UNUSABLE";
        }
}

int dp_selftest_verdict_exit_status(enum dp_selftest_verdict verdict) {
        switch (verdict) {
        case DP_SELFTEST_FULLY_INTEGRATED:
                return DP_SELFTEST_EXIT_FULLY_INTEGRATED;
        case DP_SELFTEST_PLUMBING_ONLY:
                return DP_SELFTEST_EXIT_PLUMBING_ONLY;
        default:
                return DP_SELFTEST_EXIT_UNUSABLE;
        }
}

static const char *layer_label(unsigned layer, char *buf, size_t size) {
        if (layer == DP_SELFTEST_LAYER_DAMON)
                return "DAMON";
        snprintf(buf, size, "L%u", layer);
        return buf;
}

/* Appends "; " and the formatted text to @buf, as far as it fits. */
static void append(char *buf, size_t size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t size, const char *format, ...) {
        size_t used = strnlen(buf, size);
        va_list ap;

        if (used + 1 >= size)
                return;
        if (used > 0) {
                snprintf(buf + used, size - used, "; ");
                used = strnlen(buf, size);
        }
        va_start(ap, format);
        vsnprintf(buf + used, size - used, format, ap);
        va_end(ap);
}

enum dp_selftest_verdict dp_selftest_verdict(const struct dp_selftest_report *r, char *why, size_t size) {
        const struct dp_selftest_check *damon = NULL;
        bool partial = false;
        char label[16];

        why[0] = '\0';
        for (size_t i = 0; i < r->n; i++) {
                const struct dp_selftest_check *c = &r->checks[i];

                if (c->layer >= 1 && c->layer <= 7 && c->result == DP_SELFTEST_FAIL) {
                        snprintf(why, size, "%s %s failed: %s", layer_label(c->layer, label, sizeof(label)), c->name,
                                 c->reason);
                        return DP_SELFTEST_UNUSABLE;
                }
        }

        if (!r->hardware_source)
                append(why, size, "only the software control samples (no hardware memory-access source)");
        for (size_t i = 0; i < r->n; i++) {
                const struct dp_selftest_check *c = &r->checks[i];

                if (c->layer == DP_SELFTEST_LAYER_DAMON) {
                        damon = damon ?: c;
                        if (c->result != DP_SELFTEST_PASS)
                                append(why, size, "DAMON %s: %s", c->result == DP_SELFTEST_SKIP ? "skipped" : "failed",
                                       c->reason);
                } else if (c->layer == 0 && c->result == DP_SELFTEST_FAIL)
                        append(why, size, "L0 %s failed", c->name);
                else if (c->layer >= 1 && c->result == DP_SELFTEST_SKIP)
                        append(why, size, "%s %s skipped", layer_label(c->layer, label, sizeof(label)), c->name);
                else if (c->layer >= 1 && c->partial && !partial) {
                        /* The first is enough: the later layers follow from it. */
                        append(why, size, "not every CPU got through (%s %s)",
                               layer_label(c->layer, label, sizeof(label)), c->name);
                        partial = true;
                }
        }
        if (!damon)
                append(why, size, "DAMON not checked");
        if (why[0])
                return DP_SELFTEST_PLUMBING_ONLY;
        snprintf(why, size, "hardware sampling, every layer on every CPU, DAMON committed to and read back");
        return DP_SELFTEST_FULLY_INTEGRATED;
}

int dp_selftest_check_print(FILE *f, const struct dp_selftest_check *c) {
        char label[16];

        if (fprintf(f, "[%s] %s %s: %s\n", dp_selftest_result_name(c->result), layer_label(c->layer, label, sizeof(label)),
                    c->name, c->reason) < 0)
                return -EIO;
        return 0;
}

int dp_selftest_verdict_print(FILE *f, const struct dp_selftest_report *r) {
        char why[1024];
        enum dp_selftest_verdict v = dp_selftest_verdict(r, why, sizeof(why));

        if (fprintf(f, "verdict: %s (exit %d): %s\n", dp_selftest_verdict_name(v), dp_selftest_verdict_exit_status(v),
                    why) < 0)
                return -EIO;
        return 0;
}

json_t *dp_selftest_report_to_json(const struct dp_selftest_report *r) {
        json_t *checks = json_array(), *o;
        enum dp_selftest_verdict v;
        char why[1024], label[16];

        if (!checks)
                return NULL;
        for (size_t i = 0; i < r->n; i++) {
                const struct dp_selftest_check *c = &r->checks[i];

                if (json_array_append_new(checks, json_pack("{s:s,s:s,s:s,s:b,s:s}",
                                                            "layer", layer_label(c->layer, label, sizeof(label)),
                                                            "name", c->name,
                                                            "result", dp_selftest_result_name(c->result),
                                                            "partial", c->partial, "reason", c->reason)) < 0) {
                        json_decref(checks);
                        return NULL;
                }
        }
        v = dp_selftest_verdict(r, why, sizeof(why));
        o = json_pack("{s:o,s:s,s:i,s:s,s:b}", "checks", checks, "verdict", dp_selftest_verdict_name(v),
                      "exit_status", dp_selftest_verdict_exit_status(v), "reason", why,
                      "hardware_source", r->hardware_source);
        return o;
}

/* ---- Layer 0 ---- */

static const char *pmu_kind_name(enum dp_pmu_kind kind) {
        switch (kind) {
        case DP_PMU_IBS_OP:
                return "AMD IBS";
        case DP_PMU_CORE:
                return "Intel PEBS";
        default:
                return "ARM SPE";
        }
}

void dp_selftest_check_pmus(struct dp_selftest_report *r, const struct dp_pmu_set *set, int error) {
        char usable[256] = "", refused[256] = "";

        if (error < 0 || !set) {
                dp_selftest_add(r, 0, "pmus", DP_SELFTEST_SKIP, "cannot read %s: %s", DP_PMU_SYSFS_ROOT,
                                strerror(error < 0 ? -error : EINVAL));
                return;
        }
        for (size_t i = 0; i < set->n; i++) {
                const struct dp_pmu *p = &set->pmus[i];

                if (p->error)
                        append(refused, sizeof(refused), "%s: %s", p->name, p->error_text);
                else if (p->kind == DP_PMU_CORE && !p->mem_loads[0])
                        append(refused, sizeof(refused), "%s: no mem-loads event (no PEBS)", p->name);
                else
                        append(usable, sizeof(usable), "%s (%s)", p->name, pmu_kind_name(p->kind));
        }
        if (usable[0])
                dp_selftest_add(r, 0, "pmus", DP_SELFTEST_PASS, "memory-access PMUs: %s%s%s", usable,
                                refused[0] ? "; refused: " : "", refused);
        else
                dp_selftest_add(r, 0, "pmus", DP_SELFTEST_SKIP,
                                "no memory-access PMU (AMD IBS, Intel PEBS, ARM SPE)%s%s: only the software "
                                "page-fault control is available (PMUs: %s)",
                                refused[0] ? "; refused: " : "", refused, set->others[0] ? set->others : "none");
}

static void list_operations(const struct dp_damon_tree *tree, char *buf, size_t size) {
        if (tree->features.avail_operations[0])
                snprintf(buf, size, "operations %s (avail_operations of an existing context)",
                         tree->features.avail_operations);
        else
                snprintf(buf, size, "operations unknown until a kdamond with a context exists");
}

void dp_selftest_check_damon_sysfs(struct dp_selftest_report *r, const struct dp_damon_tree *tree, int error) {
        unsigned running = 0;
        char ops[192];

        if (error == -ENOENT) {
                dp_selftest_add(r, 0, "damon_sysfs", DP_SELFTEST_SKIP,
                                "no DAMON sysfs interface (a kernel without CONFIG_DAMON_SYSFS)");
                return;
        }
        if (error < 0 || !tree) {
                dp_selftest_add(r, 0, "damon_sysfs", DP_SELFTEST_SKIP, "cannot read DAMON's sysfs interface: %s",
                                strerror(error < 0 ? -error : EINVAL));
                return;
        }
        for (unsigned i = 0; i < tree->nr_listed; i++)
                running += tree->kdamonds[i].running;
        list_operations(tree, ops, sizeof(ops));
        dp_selftest_add(r, 0, "damon_sysfs", DP_SELFTEST_PASS, "present, %u kdamond%s (%u on); %s", tree->nr_kdamonds,
                        tree->nr_kdamonds == 1 ? "" : "s", running, ops);
}

void dp_selftest_check_damon_guard(struct dp_selftest_report *r, const struct dp_damon_tree *tree, int error,
                                   int64_t own_kdamond) {
        char foreign[256] = "";
        unsigned n = 0;

        if (error == -ENOENT) {
                dp_selftest_add(r, 0, "damon_guard", DP_SELFTEST_PASS, "no DAMON sysfs: no kdamond to guard");
                return;
        }
        if (error < 0 || !tree) {
                dp_selftest_add(r, 0, "damon_guard", DP_SELFTEST_SKIP,
                                "cannot list the kdamonds (%s): DAMON write checks refused",
                                strerror(error < 0 ? -error : EINVAL));
                return;
        }
        for (unsigned i = 0; i < tree->nr_listed; i++) {
                const struct dp_damon_kdamond_info *k = &tree->kdamonds[i];

                if ((int64_t) k->index == own_kdamond)
                        continue;
                n++;
                append(foreign, sizeof(foreign), "kdamond %u (%s%s%s)", k->index, k->running ? "on" : "off",
                       k->operations[0] ? ", " : "", k->operations);
        }
        if (n == 0)
                dp_selftest_add(r, 0, "damon_guard", DP_SELFTEST_PASS, "no foreign kdamond%s",
                                own_kdamond >= 0 ? " (only the daemon's own)" : "");
        else
                dp_selftest_add(r, 0, "damon_guard", DP_SELFTEST_SKIP,
                                "%u foreign kdamond%s, not the daemon's: %s; DAMON write checks refused, the "
                                "other checks run (selftest never writes to DAMON sysfs)",
                                n, n == 1 ? "" : "s", foreign);
}

static void join_names(json_t *names, char *buf, size_t size) {
        size_t i, used = 0;
        json_t *v;

        buf[0] = '\0';
        json_array_foreach(names, i, v) {
                if (!json_is_string(v) || used + 1 >= size)
                        continue;
                snprintf(buf + used, size - used, "%s%s", used ? " " : "", json_string_value(v));
                used = strnlen(buf, size);
        }
        if (!buf[0])
                snprintf(buf, size, "none");
}

static bool has_name(json_t *names, const char *name) {
        size_t i;
        json_t *v;

        json_array_foreach(names, i, v)
                if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
                        return true;
        return false;
}

void dp_selftest_check_capabilities(struct dp_selftest_report *r, const struct dp_stats_reply *stats) {
        char effective[160], permitted[160];

        if (!stats || !stats->cap_effective || !stats->cap_permitted) {
                dp_selftest_add(r, 0, "capabilities", DP_SELFTEST_SKIP, "the daemon does not report its capabilities");
                return;
        }
        join_names(stats->cap_effective, effective, sizeof(effective));
        join_names(stats->cap_permitted, permitted, sizeof(permitted));
        dp_selftest_add(r, 0, "capabilities", DP_SELFTEST_PASS, "the daemon holds effective %s, permitted %s%s",
                        effective, permitted,
                        has_name(stats->cap_permitted, "CAP_PERFMON") || has_name(stats->cap_permitted, "CAP_SYS_ADMIN")
                                ? ""
                                : " (no CAP_PERFMON: a CPU in ERROR cannot be reopened)");
}
