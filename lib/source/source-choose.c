/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "source-choose.h"
#include "source.h"

struct text {
        char *buf;
        size_t size, used;
};

static void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void text_add(struct text *t, const char *fmt, ...) {
        va_list ap;
        int n;

        if (t->used >= t->size)
                return;
        va_start(ap, fmt);
        n = vsnprintf(t->buf + t->used, t->size - t->used, fmt, ap);
        va_end(ap);
        if (n > 0)
                t->used = DP_MIN(t->size, t->used + (size_t) n);
}

static void describe_pmu(struct text *t, const struct dp_pmu *pmu) {
        text_add(t, "%s: ", pmu->name);
        if (pmu->error) {
                text_add(t, "unusable, %s", pmu->error_text);
                return;
        }
        if (pmu->kind == DP_PMU_CORE && !pmu->mem_loads[0]) {
                text_add(t, "no mem-loads event");
                return;
        }
        text_add(t, "type %" PRIu32, pmu->type);
        if (pmu->kind == DP_PMU_CORE) {
                text_add(t, ", mem-loads %s", pmu->mem_loads);
                if (pmu->mem_loads_aux[0])
                        text_add(t, " (mem-loads-aux leader)");
                if (pmu->mem_stores[0])
                        text_add(t, ", mem-stores");
        }
        if (pmu->n_caps) {
                text_add(t, ", caps");
                for (size_t i = 0; i < pmu->n_caps; i++)
                        text_add(t, "%s%s=%s", i ? "," : " ", pmu->caps[i].name, pmu->caps[i].value);
        }
        if (pmu->has_cpus)
                text_add(t, ", cpus %s", pmu->cpus_text);
}

/* One "kind: what was found" segment per kind, in the order auto tries them. */
static bool describe_kind(struct text *t, const struct dp_pmu_set *set, enum dp_pmu_kind kind) {
        static const char *const absent[_DP_PMU_KIND_MAX] = {
                [DP_PMU_IBS_OP] = "ibs_op",
                [DP_PMU_CORE] = "cpu",
                [DP_PMU_SPE] = "arm_spe",
        };
        bool any = false, usable = false;

        for (size_t i = 0; set && i < set->n; i++) {
                if (set->pmus[i].kind != kind)
                        continue;
                text_add(t, "%s", t->used ? "; " : "");
                describe_pmu(t, &set->pmus[i]);
                any = true;
                usable = usable || dp_pmu_usable(&set->pmus[i]);
        }
        if (!any)
                text_add(t, "%s%s: absent", t->used ? "; " : "", absent[kind]);
        return usable;
}

int dp_source_choose(const struct dp_pmu_set *pmus, const char *setting, struct dp_source_choice *ret) {
        static const struct {
                const char *name;
                enum dp_pmu_kind kind;
                const struct dp_source *source;
        } hardware[] = {
                { "ibs", DP_PMU_IBS_OP, &dp_source_ibs },
                { "pebs", DP_PMU_CORE, &dp_source_pebs },
                { "spe", DP_PMU_SPE, &dp_source_spe },
        };
        struct text t;
        bool usable[DP_ARRAY_SIZE(hardware)];

        if (!setting || !ret)
                return -EINVAL;
        *ret = (struct dp_source_choice) {};
        t = (struct text) { .buf = ret->reason, .size = sizeof(ret->reason) };

        if (!pmus)
                text_add(&t, "PMU detection unavailable");
        else
                for (size_t i = 0; i < DP_ARRAY_SIZE(hardware); i++)
                        usable[i] = describe_kind(&t, pmus, hardware[i].kind);

        if (strcmp(setting, "auto") == 0) {
                for (size_t i = 0; pmus && i < DP_ARRAY_SIZE(hardware); i++)
                        if (usable[i]) {
                                ret->source = hardware[i].source;
                                text_add(&t, " → %s", hardware[i].name);
                                return 0;
                        }
                ret->source = &dp_source_pagefault;
                text_add(&t, " → pagefault (software positive control)");
                return 0;
        }

        for (size_t i = 0; i < DP_ARRAY_SIZE(hardware); i++)
                if (strcmp(setting, hardware[i].name) == 0) {
                        if (!pmus || !usable[i]) {
                                text_add(&t, " → Source=%s refused: no usable PMU for it", setting);
                                return -ENODEV;
                        }
                        ret->source = hardware[i].source;
                        text_add(&t, " → %s (as configured)", setting);
                        return 0;
                }

        if (strcmp(setting, "pagefault") == 0) {
                ret->source = &dp_source_pagefault;
                text_add(&t, " → pagefault (as configured; software positive control)");
                return 0;
        }

        if (strncmp(setting, DP_SOURCE_EVENT_PREFIX, strlen(DP_SOURCE_EVENT_PREFIX)) == 0) {
                const char *event = setting + strlen(DP_SOURCE_EVENT_PREFIX);

                if (!event[0] || strlen(event) >= sizeof(ret->event)) {
                        text_add(&t, " → Source=%s refused: the libpfm event string is %s", setting,
                                 event[0] ? "too long" : "empty");
                        return -EINVAL;
                }
                strcpy(ret->event, event);
                ret->source = &dp_source_event;
                text_add(&t, " → event:%s (as configured; libpfm event, not verified as memory sampling)",
                         event);
                return 0;
        }

        text_add(&t, " → Source=%s refused: expected auto, ibs, pebs, spe, pagefault or event:<libpfm event>",
                 setting);
        return -EINVAL;
}
