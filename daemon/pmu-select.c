/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "pmu-select.h"

#define PMU_ROOT "/sys/bus/event_source/devices"

/* Names the memory-access PMUs present, for the log line that explains the choice. */
static void describe_hardware(char *buf, size_t size) {
        DIR *d = opendir(PMU_ROOT);
        struct dirent *de;
        size_t used = 0;

        buf[0] = '\0';
        if (!d)
                return;
        while ((de = readdir(d))) {
                bool mem_pmu = strcmp(de->d_name, "ibs_op") == 0 || strncmp(de->d_name, "arm_spe_", 8) == 0;

                if (!mem_pmu && (strcmp(de->d_name, "cpu") == 0 || strcmp(de->d_name, "cpu_core") == 0)) {
                        char path[512];

                        snprintf(path, sizeof(path), PMU_ROOT "/%s/events/mem-loads", de->d_name);
                        mem_pmu = access(path, F_OK) == 0;
                }
                if (mem_pmu && used < size)
                        used += (size_t) snprintf(buf + used, size - used, "%s%s", used ? ", " : "", de->d_name);
        }
        closedir(d);
}

int pmu_select(const char *name, const struct dp_source **ret) {
        char found[256];

        describe_hardware(found, sizeof(found));
        if (strcmp(name, "auto") == 0) {
                if (found[0])
                        log_warning("memory-access PMU(s) present (%s), but their samplers are not built in yet; "
                                    "falling back to the software positive control", found);
                else
                        log_notice("no memory-access PMU (ibs_op, PEBS mem-loads, arm_spe) on this machine; "
                                   "using the software page-fault event as a positive control");
                *ret = &dp_source_pagefault;
                return 0;
        }

        *ret = dp_source_find(name);
        if (!*ret) {
                log_error("unknown source '%s': expected auto or pagefault", name);
                return -EINVAL;
        }
        return 0;
}
