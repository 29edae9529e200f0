/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The replies of io.damon.perfd (varlink/io.damon.perfd.varlink), built from
 * the manager's state.  Transport-free, so the varlink glue stays thin.
 */

#include <jansson.h>

#include "event-hub.h"
#include "manager.h"

#define API_REGIONS_DEFAULT_LIMIT 1000

json_t *api_get_stats(struct manager *m);
json_t *api_get_cpus(struct manager *m);
json_t *api_get_targets(struct manager *m);

/* -ENOENT when @target (>= 0) is not monitored; @target < 0 means all. */
int api_get_regions(struct manager *m, int64_t target, size_t limit, json_t **ret);

/* GetDamonView(); NULL on -ENOMEM. */
json_t *api_get_damon_view(struct manager *m);

json_t *api_event_to_json(const struct hub_event *e);
