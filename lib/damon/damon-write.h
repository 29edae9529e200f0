/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Private to lib/damon-*.c: writes into one DAMON context, and the region
 * layouts they write.
 *
 * A writer addresses files relative to kdamonds/K/contexts/C/.  In an
 * attached session it records, before the first overwrite of each file, the
 * file's original value in the state and saves the state file, so that a
 * crash right after the write still leaves a record to restore from.
 * Rewriting regions/nr_regions recreates every region directory, so before
 * it is recorded, the start and end of each existing region are recorded
 * first; files inside a collection whose nr_* file is already recorded were
 * created by us and need no record.  Restoring in reverse order then writes
 * nr_regions back before the region values it recreated.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "damon-control.h"

struct damon_writer {
        struct dp_damon_fs *fs;
        struct dp_damon_state *st;
        const char *state_file;
        bool record;                    /* attached: record originals */
        unsigned kdamond, context;
};

void damon_writer_init(struct damon_writer *w, struct dp_damon_fs *fs, struct dp_damon_state *st,
                       const char *state_file);

/* @rel is relative to kdamonds/K/contexts/C/. */
int damon_ctx_read(const struct damon_writer *w, const char *rel, char *buf, size_t size);
int damon_ctx_read_u64(const struct damon_writer *w, const char *rel, uint64_t *ret);
bool damon_ctx_exists(const struct damon_writer *w, const char *rel);
int damon_ctx_write(struct damon_writer *w, const char *rel, const char *value);
int damon_ctx_write_u64(struct damon_writer *w, const char *rel, uint64_t value);

/* Names @path as the one dp_damon_fs_error_path() reports (for a failure
 * found in what was read, not in the reading). */
void damon_fs_note_error(struct dp_damon_fs *fs, const char *path);

/* kdamonds/K/state: a keyword, never recorded (it is a command, not a setting). */
int damon_state_command(struct dp_damon_fs *fs, unsigned kdamond, const char *keyword);

/* contexts/C/addr_unit, 1 when the file does not exist; -EBADMSG for 0. */
int damon_ctx_addr_unit(const struct damon_writer *w, uint64_t *ret);

/* The hints, validated and converted to DAMON's address units. */
struct damon_plan {
        struct dp_damon_range *ranges;  /* every hint's regions, hint after hint */
        size_t *first, *count;          /* per hint */
        size_t n;
};

/*
 * Validates @hints (see dp_damon_commit_hints()) for a context with the
 * given operations (@paddr: the physical space, else processes) and fills
 * @ret with their regions divided by @addr_unit.  Pure; -EINVAL or -ENOMEM.
 */
int damon_plan_make(const struct dp_damon_target_hint *hints, size_t n, bool paddr, uint64_t max_nr_regions,
                    uint64_t addr_unit, struct damon_plan *ret);
void damon_plan_done(struct damon_plan *p);

/* Writes target @target's regions (nr_regions only if it differs). */
int damon_write_regions(struct damon_writer *w, unsigned target, const struct dp_damon_range *ranges, size_t n);

/*
 * The configured schemes @p->schemes as DAMON's schemes 1, 2, ... of the
 * context (nr_schemes already counts them): first every scheme's files are
 * checked against what the kernel made (target_nid for migrate_*, dests for
 * migrating processes, quotas/goals, filters, goals/G/nid for node goals,
 * filters/F/allow for allow=): -EOPNOTSUPP with @p->refusal saying which
 * file is missing for which configured scheme; then each is written: action,
 * target_nid, access pattern in DAMON's units, quotas, goals, watermarks,
 * filters (a hot filter with no ranges yet).  Records the actions in
 * w->st->schemes.
 */
int damon_write_schemes(struct damon_writer *w, const struct dp_damon_own_params *p, bool paddr);
