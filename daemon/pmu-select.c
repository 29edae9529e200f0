/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <unistd.h>

#include "log.h"
#include "pmu-select.h"
#include "source-choose.h"

int pmu_selection_run(const char *name, const char *sysfs_root, struct pmu_selection *ret) {
        int r;

        *ret = (struct pmu_selection) {};
        r = dp_pmu_detect(sysfs_root, &ret->pmus);
        if (r < 0)
                log_warning_errno(r, "cannot read PMUs under %s: %m", sysfs_root ?: DP_PMU_SYSFS_ROOT);
        else if (ret->pmus->others[0])
                log_debug("other PMUs: %s", ret->pmus->others);

        r = dp_source_choose(ret->pmus, name, &ret->choice);
        if (r < 0) {
                log_error("sample source: %s", ret->choice.reason);
                pmu_selection_done(ret);
                return r;
        }
        log_source_selected(ret->choice.source->name, ret->choice.source->hardware, ret->choice.reason);
        return 0;
}

void pmu_selection_done(struct pmu_selection *sel) {
        dp_pmu_set_free(sel->pmus);
        sel->pmus = NULL;
}

void pmu_selection_source_options(const struct pmu_selection *sel, const struct dp_config *config,
                                  struct dp_source_options *ret) {
        *ret = (struct dp_source_options) {
                .sample_period = config->sample_period,
                .want_phys = config->target_mode == DP_TARGETS_PHYS,
                /* Wake the reader at half full: half the wakeups of a quarter, at
                 * 30-40 us each on a VM the reader's largest cost, and still half
                 * the ring to spare while it runs (bench/README: performance). */
                .wakeup_bytes = config->ring_pages * (uint32_t) sysconf(_SC_PAGESIZE) / 2,
                .pmus = sel->pmus,
                .event = sel->choice.event[0] ? sel->choice.event : NULL,
        };
}
