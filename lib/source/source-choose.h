/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Which source samples this machine: Source= resolved against the PMUs found. */

#include "pmu.h"

struct dp_source;

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
