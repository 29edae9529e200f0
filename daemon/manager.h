/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include "damon-perfd/config.h"

enum dump_format {
        DUMP_NONE,
        DUMP_TEXT,
        DUMP_JSON,
};

struct manager_options {
        struct dp_config config;
        uint64_t duration_sec;          /* 0: until signalled */
        uint64_t print_interval_sec;    /* 0: no periodic report */
        uint32_t top;
        enum dump_format dump_stats;
        const char *stats_file;
};

struct manager;

/* Picks the source, sets up every CPU's sampler and starts the threads.  A CPU
 * that fails is left in ERROR; only a failure that leaves nothing to run is an error. */
int manager_new(const struct manager_options *options, struct manager **ret);

/* Runs the event loop until SIGTERM/SIGINT or the duration ends, then stops
 * the pipeline in order (readers drain their rings, the tracker drains the queues). */
int manager_run(struct manager *m);

void manager_free(struct manager *m);
