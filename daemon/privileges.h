/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Least privilege with libcap.  The daemon starts as root, opens its samplers
 * (and rings), then drops to what the configuration needs for the rest of its
 * life (lib/perf/capabilities.c decides which): bounding set, ambient and
 * inheritable sets cleared of everything else, effective = permitted = that
 * set, then no_new_privs.
 *
 * Capabilities belong to threads, and a new thread inherits its creator's:
 * the drop must come before the daemon's first thread.
 */

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "capabilities.h"
#include "config.h"
#include "sampler.h"

/* Drops to the plan for @c, @samplers (their rings count against perf's
 * locked-memory budget) and @socket_group (the [API] group of a socket the
 * daemon will bind itself; NULL: none, or no socket).  Logs the set kept at
 * info level, and each capability the configuration needs but the daemon
 * lacks as a warning (that work will fail).  The plan in *@ret when non-NULL.
 * 0, or a negative errno when a libcap or prctl call fails. */
int privileges_drop(const struct dp_config *c, const struct sampler *samplers, size_t n_samplers,
                    const char *socket_group, struct dp_caps_plan *ret);

struct privileges_sets {
        uint64_t effective, permitted, bounding;
};

/* The calling thread's sets as they are now. */
int privileges_get(struct privileges_sets *ret);

/* GetStats' capabilities: {effective, permitted, bounding}, each []string. */
json_t *privileges_to_json(const struct privileges_sets *s);
