/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "damon-perfd/source.h"

/* Resolves the configured source name ("auto" or a source) and logs the
 * choice with its reason: which memory-access PMUs exist on this machine. */
int pmu_select(const char *name, const struct dp_source **ret);
