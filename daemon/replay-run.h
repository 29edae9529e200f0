/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"

/* --replay: a perf.data capture through the pipeline, then the report
 * (--dump-stats format, text by default) on stdout. */
int replay_run(const struct manager_options *o, const char *path);
