/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One [DAMON] Scheme= value: an action and key=value words, as
 *
 *   Scheme=migrate_hot target_nid=0 nr_accesses=10%-max quota_bytes=256M quota_reset=1s allow=hot
 *
 * (damon-perfd.conf(5) lists every word).  Parsed into struct
 * dp_damon_scheme and printed back in one canonical form that parses to the
 * same scheme.  Pure: no I/O.
 */

#include <stdbool.h>
#include <stddef.h>

#include "config.h"

/* DAMON's names: "stat", "pageout", "lru_prio", ... ; NULL out of range. */
const char *dp_scheme_action_name(enum dp_scheme_action a);
/* "hot_fraction" "some_mem_psi_us" "node_mem_used_bp" "node_mem_free_bp" */
const char *dp_scheme_goal_metric_name(enum dp_scheme_goal_metric m);
/* What DAMON's target_metric file takes: user_input for hot_fraction. */
const char *dp_scheme_goal_kernel_metric(enum dp_scheme_goal_metric m);
/* "anon" "memcg" "young" "addr" "target" "hot" "node" */
const char *dp_scheme_filter_type_name(enum dp_scheme_filter_type t);

/* The scheme a value starts from: action stat, every access pattern, no
 * quota, goal, watermark or filter. */
void dp_scheme_init(struct dp_damon_scheme *s);

/* Parses @value into *@ret.  0, or -EINVAL with the word and the reason in
 * @why ("word 'age=5x-max': expected ..."). */
int dp_scheme_parse(const char *value, struct dp_damon_scheme *ret, char *why, size_t why_size);

/* The canonical form; 0 or -ENOBUFS. */
int dp_scheme_format(const struct dp_damon_scheme *s, char *buf, size_t size);

/* The scheme's first filter over the daemon-fed hot ranges, or NULL. */
const struct dp_scheme_filter *dp_scheme_hot_filter(const struct dp_damon_scheme *s);
/* The scheme's first filter over a NUMA node's memory, or NULL. */
const struct dp_scheme_filter *dp_scheme_node_filter(const struct dp_damon_scheme *s);

/* What the schemes need of the other settings: Mode=own (an attached
 * kdamond's schemes are its administrator's), the operations Targets= picks
 * (lru_prio and lru_deprio only for the physical space, hugepage and
 * nohugepage only for processes), and a hot filter one address space to
 * take its ranges from (physical, or [DAMON] MaxTargets=1).  0, or -EINVAL
 * with a message naming the scheme's file:line in @why. */
int dp_config_check_schemes(const struct dp_config *c, char *why, size_t size);

/* Whether some scheme has a hot filter, for the daemon to keep up to date. */
bool dp_config_has_hot_filters(const struct dp_config *c);
/* Whether some scheme acts only inside the hot ranges (allow=hot,
 * reject=!hot), not only outside them (reject=hot). */
bool dp_config_acts_inside_hot(const struct dp_config *c);
/* Whether a user_input goal wants the hot fraction: QuotaGoal=, or a
 * scheme's goal=hot_fraction. */
bool dp_config_feeds_hot_fraction(const struct dp_config *c);
