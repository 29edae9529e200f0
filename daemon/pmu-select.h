/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "config.h"
#include "pmu.h"
#include "source.h"
#include "source-choose.h"

/*
 * The daemon's side of the source choice: detect the memory-access PMUs
 * (pmu.h), resolve the configured Source= against them and log
 * the outcome with its reason.
 */
struct pmu_selection {
        struct dp_pmu_set *pmus;                /* NULL when detection failed; owned */
        struct dp_source_choice choice;         /* choice.source, choice.event, choice.reason */
};

/* Detects under @sysfs_root (NULL: /sys/bus/event_source/devices) and
 * chooses for @name ("auto", "ibs", "pebs", "spe", "pagefault",
 * "event:<libpfm event>"), logging the reason either way.  The sampler's
 * dp_source_options must then carry .pmus = sel->pmus and
 * .event = sel->choice.event, and stay within the selection's lifetime. */
int pmu_selection_run(const char *name, const char *sysfs_root, struct pmu_selection *ret);

/* What the samplers ask the source for under @config: the one place the
 * settings become dp_source_options, for sampling and --print-events alike.
 * @ret points into @sel. */
void pmu_selection_source_options(const struct pmu_selection *sel, const struct dp_config *config,
                                  struct dp_source_options *ret);
void pmu_selection_done(struct pmu_selection *sel);
