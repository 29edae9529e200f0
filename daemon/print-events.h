/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "manager.h"

/*
 * damon-perfd --print-events: the PMUs detected, the source chosen and every
 * event each configured CPU would open, each perf_event_attr printed the way
 * `perf record -vv` prints the ones it opens, without opening anything.
 * CPUs with the same events share one block.
 */
int print_events_run(const struct manager_options *o);
