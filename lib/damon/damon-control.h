/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Driving DAMON through its sysfs interface: deciding whether we may touch
 * it, creating our own kdamond or attaching to an existing one, committing
 * region hints, feeding a quota goal, reading DAMON's view back, and
 * restoring everything on stop or after a crash.
 *
 * Grants: dp_damon_own_start() and dp_damon_attach_start() grant the one
 * kdamond of the session (dp_damon_fs_grant_kdamond()) and leave it granted;
 * dp_damon_restore() revokes it.  Every other call relies on that grant, so
 * in observe-only mode, where no start ran, each of them is refused by the
 * guard with -EPERM before anything reaches a file.  kdamonds/nr_kdamonds is
 * granted only for the instant of its own write.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "damon-sysfs.h"
#include "range.h"
#include "tracker.h"

struct dp_damon_range {
        uint64_t start, end;            /* [start, end) in bytes */
};

struct dp_damon_target_hint {
        uint32_t pid;                   /* 0 for paddr */
        const struct dp_damon_range *regions;
        size_t nr_regions;
};

enum dp_damon_role {
        DP_DAMON_ROLE_OFF,
        DP_DAMON_ROLE_OBSERVE,
        DP_DAMON_ROLE_OWNED,
        DP_DAMON_ROLE_ATTACHED,
};

/* "off" "observe-only" "owned" "attached" */
const char *dp_damon_role_name(enum dp_damon_role r);

#define DP_DAMON_ORIGINAL_PATH_MAX DP_DAMON_PATH_MAX
#define DP_DAMON_ORIGINAL_VALUE_MAX 64

struct dp_damon_original {
        char path[DP_DAMON_ORIGINAL_PATH_MAX];
        char value[DP_DAMON_ORIGINAL_VALUE_MAX];
};

/*
 * What we changed, persisted as a small text file so that a stop restores it
 * and a start after a crash recovers.  The file (see dp_damon_state_save())
 * is written to FILE.tmp, fsync'ed and renamed over FILE; its directory
 * must exist (-ENOENT otherwise, before anything is written to DAMON).
 */
struct dp_damon_state {
        enum dp_damon_role role;        /* OWNED or ATTACHED; OFF once restored */
        int daemon_pid;                 /* who wrote it */
        unsigned kdamond, context;
        int kdamond_pid;                /* owned: the kdamond's pid when we turned it on (-1 unknown) */
        char schemes[128];              /* owned: the actions of its schemes, "stat,pageout"; "" unknown */
        /* attached: the original value of every file we overwrite, in write
         * order, restored in reverse */
        struct dp_damon_original *originals;
        size_t nr_originals, originals_cap;
};

/*
 * The file format, one "key=value" per line, '#' comments and empty lines
 * ignored, every key once except original:
 *
 *   version=1
 *   role=owned|attached
 *   daemon_pid=1234
 *   kdamond=0
 *   context=0
 *   kdamond_pid=5678                (-1: unknown)
 *   schemes=stat,pageout            (owned only, optional: the actions of its schemes, in order)
 *   original=PATH VALUE             (attached only, in write order; PATH under kdamonds/K/)
 *   end                             (the last line: a truncated file is refused)
 */
int dp_damon_state_save(const struct dp_damon_state *s, const char *file);
/* -ENOENT if there is none; -EBADMSG if garbled in any way (never half-trusted:
 * *ret is then untouched). */
int dp_damon_state_load(const char *file, struct dp_damon_state *ret);
void dp_damon_state_done(struct dp_damon_state *s);
/* 0 also when there is no file. */
int dp_damon_state_remove(const char *file);
/* Appends an original (-EINVAL if @path has whitespace or @value a newline,
 * -ENAMETOOLONG/-E2BIG if too long); the lookup returns NULL if none. */
int dp_damon_state_add_original(struct dp_damon_state *s, const char *path, const char *value);
const struct dp_damon_original *dp_damon_state_find_original(const struct dp_damon_state *s, const char *path);

/*
 * The decision, pure given its inputs: @mode (enum dp_damon_mode of
 * config.h), the discovered @tree, the @previous state file (NULL if none or
 * garbled) and whether its daemon_pid is a live process other than us
 * (@previous_alive).  Rules:
 *  - Mode=off: OFF.
 *  - a live previous daemon holds the state file: OBSERVE.
 *  - Mode=own: OWNED if nr_kdamonds == 0, or if the only kdamond is the
 *    leftover of a dead previous owner (previous role owned, kdamond 0,
 *    nr_kdamonds == 1, and kdamond 0 off or running with the recorded
 *    kdamond_pid): then recover is set.  Any other kdamond, running or not
 *    (writing nr_kdamonds would destroy its configuration): OBSERVE.  When
 *    the tree shows avail_operations (some context exists), it must list
 *    the operations needed (paddr if @need_paddr, else vaddr), else OBSERVE;
 *    with no context to read it from, dp_damon_own_start() checks it.
 *  - Mode=attach: ATTACHED if kdamond @attach_kdamond and its context
 *    @attach_context exist (running or not), else OBSERVE.  recover is set
 *    when a dead previous daemon left an attached state file.
 * *ret gets a one-line human reason ("kdamond 0 is running (pid 123) and is
 * not ours: observe only").  -EINVAL for an unknown @mode.
 */
struct dp_damon_decision {
        enum dp_damon_role role;
        unsigned kdamond, context;
        bool recover;
        char reason[256];
};
int dp_damon_decide(int mode, int attach_kdamond, unsigned attach_context, const struct dp_damon_tree *tree,
                    const struct dp_damon_state *previous, bool previous_alive, bool need_paddr,
                    struct dp_damon_decision *ret);

struct dp_damon_own_params {
        const char *operations;                 /* "vaddr" or "paddr" */
        uint64_t sample_us, aggr_us, update_us;
        uint32_t min_nr_regions, max_nr_regions;
        bool quota_goal;                        /* add a user_input goal to our stat scheme */
        uint64_t goal_target_value;
        const struct dp_damon_target_hint *targets;     /* >= 1: DAMON will not run without targets */
        size_t nr_targets;
        /* [DAMON] Scheme=: written as schemes 1.., after our stat scheme 0 */
        const struct dp_damon_scheme *schemes;
        size_t nr_schemes;
        /* Optional: why the kernel cannot run a scheme (-EOPNOTSUPP), naming
         * its file:line and the missing sysfs file. */
        char *refusal;
        size_t refusal_size;
};

/*
 * For an OWNED decision (else -EPERM): checks that kdamonds/nr_kdamonds is
 * still what the decision saw (-EEXIST if not); recovers if the decision says
 * so (turns the leftover off, nr_kdamonds=0); saves the state file; creates
 * and configures kdamond 0 (nr_kdamonds=1, nr_contexts=1, operations after
 * checking avail_operations (-EOPNOTSUPP), intervals, nr_regions min/max,
 * the targets with their regions, one scheme: action stat, match-all access
 * pattern, the quota goal if asked (-EOPNOTSUPP without quotas/goals),
 * watermarks off), then the configured schemes as 1, 2, ... (see
 * damon_write_schemes() in damon-write.h: each is checked against the files
 * this kernel has before its settings are written, -EOPNOTSUPP with
 * p->refusal saying what is missing); turns it on and saves the state again
 * with the kdamond's pid and the schemes' actions.  The hints are validated first (-EINVAL, nothing written).
 * On failure it undoes what it did (off, nr_kdamonds=0, state file removed;
 * the file stays if the undo failed, for the next start to recover) and
 * returns the first errno.  On success kdamond 0 stays granted.
 */
int dp_damon_own_start(struct dp_damon_fs *fs, const struct dp_damon_decision *d, const struct dp_damon_own_params *p,
                       const char *state_file, struct dp_damon_state *ret_state);

/*
 * For an ATTACHED decision (else -EPERM): grants kdamond K, writes nothing
 * to DAMON, saves the state file.  With recover set, the previous state file
 * is loaded: its originals are adopted when it names the same kdamond and
 * context (they are the true originals), else they are restored first.
 * Originals are recorded lazily by the writers below: the first time each
 * file is overwritten, the state file is saved before the write.
 */
int dp_damon_attach_start(struct dp_damon_fs *fs, const struct dp_damon_decision *d, const char *state_file,
                          struct dp_damon_state *ret_state);

/*
 * Commits hints.  Every layout is validated first and refused (-EINVAL,
 * nothing written) unless each target's regions are sorted, non-overlapping
 * and non-empty and their total does not exceed monitoring_attrs/nr_regions/
 * max; vaddr targets need distinct non-zero pids, a paddr context exactly one
 * target with pid 0 and at least one region.  When contexts/C/addr_unit
 * exists, addresses are divided by it (starts rounded down, ends up, a
 * region swallowed by its predecessor's rounding dropped).
 * Owned: writes nr_targets (only if changed), pid_target (vaddr) and the
 * regions of each target (nr_regions only if changed), then state=commit if
 * the kdamond is on; if it is off (e.g. every target exited) it turns it on
 * again and saves the new kdamond_pid.
 * Attached: only the regions of existing targets whose pid_target matches a
 * hint's pid (paddr: target 0 and the hint with pid 0), then commit if on.
 * Returns the kernel errno of the first failing write, after which nothing
 * more is written.
 */
int dp_damon_commit_hints(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file,
                          const struct dp_damon_target_hint *targets, size_t n);

/* Writes @value to current_value of every quota goal whose target_metric is
 * user_input in the context's schemes, then state=commit_schemes_quota_goals
 * if the kdamond is on.  -ENOENT if there is no such goal. */
int dp_damon_feed_goal(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file, uint64_t value);

/*
 * Read-back: state=update_schemes_tried_regions (needs the grant; the kernel
 * answers EINVAL while the kdamond is off), then the tried_regions of the
 * context's first scheme that has any, in the kernel's order (target by
 * target: the kernel names no target).  One scheme that matches every
 * region, as the daemon's own stat scheme does, has all of DAMON's regions;
 * the schemes after it would only repeat some of them, at four file reads a
 * region (with a tiering scheme pair, twice the reads).  Addresses are bytes
 * (multiplied by addr_unit when that file exists).  A file that is not a
 * number, a region with end <= start, or an nr_schemes beyond the scheme
 * directories there are: -EBADMSG, and dp_damon_fs_error_path() names the
 * file.  *ret is malloc'd (NULL when there are none).
 */
struct dp_damon_tried_region {
        uint64_t start, end;
        uint32_t nr_accesses, age;
        unsigned scheme;
};
int dp_damon_read_tried(struct dp_damon_fs *fs, unsigned kdamond, unsigned context,
                        struct dp_damon_tried_region **ret, size_t *ret_n);

/*
 * The PMU-fed hot filter: the hot regions of one target's @regions (sorted,
 * disjoint), touching ones joined, as at most @max_out address ranges: when
 * there are more, the smallest gaps between them are bridged first, so that
 * a filter never drops a hot byte.  A region is hot when dense in samples
 * (the last aggregation's and the current one's so far, per byte): sampled,
 * and at least half as dense as the region with the most samples or four
 * times as dense as the target's mean.  The @ns @sampled ranges (in any
 * order, overlapping or not: where the sampled granules are hot,
 * dp_damon_sampled_hot(), or the ranges held, dp_damon_hold_hot()) are hot
 * too: the tracker's regions, split by a sparse sampler's few samples, can
 * be tens of MiB around the last hot pages of an area most of which moved
 * away, too thin to count, where the granules still find them.  @out needs
 * room for @max_out.  Pure.  The count, or -EINVAL (@max_out 0, unsorted
 * regions, a range whose start is past its end), -ENOMEM.
 */
#define DP_DAMON_HOT_FILTER_MAX 16
int dp_damon_hot_filter_ranges(const struct dp_snapshot_region *regions, size_t n, const struct dp_range *sampled,
                               size_t ns, size_t max_out, struct dp_damon_range *out);

/*
 * The hot ranges the filters hold for a while.  A sparse sampler outlines a
 * hot area a few granules at a time, and once most of its pages have moved
 * away what stays behind is sampled ever more thinly: one pass's hot ranges
 * miss parts of it that the last seconds' together cover.  Each of @fresh
 * (this pass's) is held, seen at @now: a held range that contains it is
 * seen again instead, and held ones inside it give way to it (so a held
 * range never grows).  One not seen within @hold (the same clock) is let
 * go; beyond @cap the one seen longest ago goes.  @held (room for @cap) is in
 * no order, and its ranges may overlap.  The new count.  Pure.
 */
struct dp_damon_held_range {
        uint64_t start, end;            /* [start, end) in bytes */
        uint64_t seen;                  /* when last among a pass's hot ranges */
};
size_t dp_damon_hold_hot(struct dp_damon_held_range *held, size_t n, size_t cap, const struct dp_damon_range *fresh,
                         size_t nf, uint64_t now, uint64_t hold);

/*
 * Rewrites the filters of every scheme of our owned kdamond that has a hot
 * filter (@schemes as configured, scheme i being DAMON's i + 1): its own
 * filters in order, the hot one expanded to one addr filter per range of
 * @hot (none: left out).  They take effect at the next commit (the hints',
 * or dp_damon_commit_written()): one commit a pass, not one for each.  1 if
 * it wrote, 0 when no scheme has a hot filter, -EPERM unless owned.
 */
int dp_damon_write_hot_filters(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file,
                               const struct dp_damon_scheme *schemes, size_t nr_schemes,
                               const struct dp_damon_range *hot, size_t nr_hot);

/* state=commit if our owned kdamond is on, so that what was written since
 * the last commit takes effect (off, the next "on" applies it).  -EPERM
 * unless owned. */
int dp_damon_commit_written(struct dp_damon_fs *fs, struct dp_damon_state *st);

/*
 * Read-back of every scheme of a context, ours or an administrator's, for
 * showing: state=update_schemes_stats (a command, never a setting; needs the
 * grant), then each scheme's action, target_nid, access pattern, quotas,
 * watermark metric, numbers of goals and filters, and stats.  Writes no
 * setting.  *ret is malloc'd (NULL when there are none); -EBADMSG for a file
 * the kernel would never print.
 */
struct dp_damon_scheme_info {
        char action[16];
        int target_nid;                 /* -1: none or no such file */
        uint64_t sz_min, sz_max, nr_accesses_min, nr_accesses_max, age_min, age_max;
        uint64_t quota_ms, quota_bytes, quota_reset_ms;
        char wmarks_metric[16];
        unsigned nr_goals, nr_filters;
        uint64_t nr_tried, sz_tried, nr_applied, sz_applied, qt_exceeds;
};
int dp_damon_read_schemes(struct dp_damon_fs *fs, unsigned kdamond, unsigned context,
                          struct dp_damon_scheme_info **ret, size_t *ret_n);

/* Is the kdamond on?  (For "turned off under us".)  -EBADMSG for a state
 * other than on/off. */
int dp_damon_kdamond_running(struct dp_damon_fs *fs, unsigned kdamond, bool *ret);

/*
 * Stop.  Owned: state=off if on, then nr_kdamonds=0 if ours is the only
 * kdamond; if it runs with another pid than the recorded one, someone
 * restarted it with their settings: -EEXIST, nothing written.  (EBUSY is
 * left to mean what the kernel means by it: DAMON's lock held by another
 * writer.)  Attached: writes back every original in reverse order (a file
 * that is gone is skipped: it lived in a directory that restoring an nr_*
 * file removes anyway), then commit if on.  Grants kdamond K for this and
 * revokes every grant at the end.  On success removes the state file and
 * sets st->role to OFF, so a second call does nothing.  On failure the state
 * file stays, for a retry or the next start.
 */
int dp_damon_restore(struct dp_damon_fs *fs, struct dp_damon_state *st, const char *state_file);
