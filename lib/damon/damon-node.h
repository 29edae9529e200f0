/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The schemes' node filters (reject=node:N): DAMON has no filter by node,
 * but in the physical address space a node's memory is a few address
 * ranges, its memory blocks in sysfs
 * (SYSROOT/devices/system/node/nodeN/memoryM, each
 * SYSROOT/devices/system/memory/block_size_bytes long).  So each node
 * filter is written as address filters over them, read afresh each time the
 * daemon creates its kdamond (memory comes and goes with hotplug).
 */

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "range.h"

/* A node in more pieces than this is refused: each piece is a filter. */
#define DP_DAMON_NODE_RANGES_MAX DP_SCHEME_MAX_FILTERS

/* Node @nid's memory, its memory blocks joined into runs, ascending, into
 * @ret (room for DP_DAMON_NODE_RANGES_MAX).  Reads sysfs under @sys_root
 * ("/sys").  The count, or -ENOENT (no such node), -ENODATA (no memory
 * blocks: a node without memory, or a kernel without memory block sysfs),
 * -E2BIG (in more pieces than DP_DAMON_NODE_RANGES_MAX), -EBADMSG (a
 * block_size_bytes that is not a size) or a read's error. */
int dp_damon_node_memory(const char *sys_root, uint32_t nid, struct dp_range *ret);

/* @in's @n schemes into @out, each node filter replaced by address filters
 * over its node's memory, read by dp_damon_node_memory(): node:N by one per
 * piece, !node:N by one unmatched over a node in one piece, else by one per
 * gap around the pieces (as for reject=!hot: on kernels without allow
 * filters, several "not in this range" entries would reject everything).
 * 0, or a negative errno with the scheme's origin and the reason in @why. */
int dp_damon_resolve_node_filters(const char *sys_root, const struct dp_damon_scheme *in, size_t n,
                                  struct dp_damon_scheme *out, char *why, size_t size);
