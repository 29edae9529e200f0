/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * DAMON's sysfs interface (the "admin" directory): reading files, writing
 * them through one guard, and discovering what the tree holds.
 *
 * Every path is relative to the admin root ("kdamonds/0/state") and resolved
 * beneath it one component at a time without following any symlink, so a
 * path can never leave the tree.  Every write goes through
 * dp_damon_fs_write(), which refuses with -EPERM anything outside what was
 * granted: the subtree kdamonds/K/ of the one kdamond granted with
 * dp_damon_fs_grant_kdamond(), and the single file kdamonds/nr_kdamonds while
 * dp_damon_fs_grant_create() allows it.  Nothing is granted after open, so
 * code that never asks for a grant (observe-only mode) cannot write at all.
 * A dp_damon_fs is not thread-safe: one thread drives it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DP_DAMON_PATH_MAX 160           /* longest relative path we build or accept */
#define DP_DAMON_MAX_KDAMONDS 64

struct dp_damon_fs;

/* Opens @root (O_PATH|O_DIRECTORY).  -ENOENT if it is missing, -ENOTDIR if
 * it is not a directory. */
int dp_damon_fs_open(const char *root, struct dp_damon_fs **ret);
void dp_damon_fs_free(struct dp_damon_fs *fs);

static inline void dp_damon_fs_freep(struct dp_damon_fs **fs) {
        dp_damon_fs_free(*fs);
}
#define _cleanup_damon_fs_ __attribute__((cleanup(dp_damon_fs_freep)))

/*
 * Reads @path into @buf (NUL-terminated, one trailing newline stripped).
 * -EINVAL for a path that is absolute, empty, has an empty, "." or ".."
 * component or is too long; -ELOOP if any component is a symlink; -ENOBUFS
 * if the contents do not fit; -EBADMSG if they hold a NUL byte; otherwise
 * the errno of open/read.
 */
int dp_damon_fs_read(struct dp_damon_fs *fs, const char *path, char *buf, size_t size);
/* A decimal number as the kernel prints it; -EBADMSG for anything else. */
int dp_damon_fs_read_u64(struct dp_damon_fs *fs, const char *path, uint64_t *ret);
/* A signed decimal (kdamond pid: -1 when off); -EBADMSG for anything else. */
int dp_damon_fs_read_int(struct dp_damon_fs *fs, const char *path, int *ret);
/* Whether @path names an existing file or directory (false for a bad path). */
bool dp_damon_fs_exists(struct dp_damon_fs *fs, const char *path);
/* The names in directory @path that are decimal numbers (a region's, a
 * scheme's, ...), ascending, into malloc'd *@ret (NULL when none).  DAMON
 * does not always number them 0..n-1: 6.12 numbers tried regions with one
 * counter across every scheme.  Path errors as for reads, or -ENOMEM. */
int dp_damon_fs_list_indices(struct dp_damon_fs *fs, const char *path, uint64_t **ret, size_t *ret_n);

/* THE GUARD.  @kdamond < 0 revokes the kdamond grant. */
void dp_damon_fs_grant_kdamond(struct dp_damon_fs *fs, int kdamond);
void dp_damon_fs_grant_create(struct dp_damon_fs *fs, bool allow);
/* The kdamond granted, -1 if none. */
int dp_damon_fs_granted_kdamond(const struct dp_damon_fs *fs);

/*
 * Writes @value to @path in one write(2), opening it O_WRONLY|O_TRUNC|
 * O_CLOEXEC|O_NOFOLLOW and never O_CREAT (a sysfs file exists, or the write
 * is wrong).  -EINVAL for a bad path (as for reads) and -EPERM outside the
 * grant, both counted by dp_damon_fs_refused() and reaching no file;
 * otherwise 0 or the kernel's errno (EBUSY, EINVAL, ENOENT, ...), -EIO on a
 * short write.
 */
int dp_damon_fs_write(struct dp_damon_fs *fs, const char *path, const char *value);
int dp_damon_fs_write_u64(struct dp_damon_fs *fs, const char *path, uint64_t value);
/* Writes refused by the guard since open. */
uint64_t dp_damon_fs_refused(const struct dp_damon_fs *fs);

/* The relative path of the last read or write that failed ("" if none), for
 * messages such as "kdamonds/0/state: Device or resource busy". */
const char *dp_damon_fs_error_path(const struct dp_damon_fs *fs);
/* Forgets it, so that the next failure's path is not taken for an older one's. */
void dp_damon_fs_clear_error(struct dp_damon_fs *fs);

/* Test seam: called after every successful write, so tests can emulate the
 * kernel (create children on nr_* writes, flip state on on/off, fill
 * tried_regions...).  NULL in production. */
typedef void (*dp_damon_after_write_t)(const char *path, const char *value, void *userdata);
void dp_damon_fs_set_after_write(struct dp_damon_fs *fs, dp_damon_after_write_t fn, void *userdata);

/* Test seam: called before every read, and every write the guard lets through; a
 * negative errno fails the access as if the kernel had answered it (EBUSY
 * while another writer holds DAMON's sysfs lock, say), 0 lets it through.
 * NULL in production. */
typedef int (*dp_damon_fault_t)(const char *path, bool write, void *userdata);
void dp_damon_fs_set_fault(struct dp_damon_fs *fs, dp_damon_fault_t fn, void *userdata);

/* Test seam: paths resolved one component at a time, as where openat2(2) is
 * missing (before Linux 5.6) or filtered. */
void dp_damon_fs_walk_components(struct dp_damon_fs *fs);

/* What this kernel's DAMON offers, detected from the files that exist, never
 * from the kernel version. */
struct dp_damon_features {
        char avail_operations[128];     /* e.g. "vaddr fvaddr paddr"; "" if unknown (no context) */
        bool addr_unit;                 /* contexts/C/addr_unit (6.18) */
        bool intervals_goal;            /* monitoring_attrs/intervals/intervals_goal/ (6.15) */
        bool refresh_ms;                /* kdamonds/K/refresh_ms (6.17) */
        /* Scheme-level features are probed in schemes/0 and are all false when
         * the context has no scheme (schemes_probed false). */
        bool schemes_probed;
        bool tried_regions;             /* schemes/S/tried_regions/ (6.2) */
        bool quota_goals;               /* schemes/S/quotas/goals/ (6.8) */
        bool effective_quotas;          /* schemes/S/quotas/effective_bytes (6.9) */
        bool filters;                   /* schemes/S/filters/ (6.3) */
        bool core_filters;              /* schemes/S/core_filters/ (6.15) */
};

struct dp_damon_kdamond_info {
        unsigned index;
        bool running;                   /* state "on" */
        int pid;                        /* -1 when off */
        unsigned nr_contexts;
        char operations[16];            /* of context 0; "" without a context */
        unsigned nr_targets, nr_schemes;        /* of context 0 */
};

struct dp_damon_tree {
        unsigned nr_kdamonds;           /* as read from kdamonds/nr_kdamonds */
        unsigned nr_listed;             /* entries of kdamonds[]: nr_kdamonds, at most DP_DAMON_MAX_KDAMONDS */
        struct dp_damon_kdamond_info kdamonds[DP_DAMON_MAX_KDAMONDS];
        bool any_running;               /* of the listed ones */
        struct dp_damon_features features;      /* of the first context found, else all unknown */
};

/* Reads the tree; writes nothing.  -ENOENT if kdamonds/nr_kdamonds is
 * missing (no DAMON sysfs), -EBADMSG for a file the kernel would never
 * print (a state other than on/off, a malformed number). */
int dp_damon_discover(struct dp_damon_fs *fs, struct dp_damon_tree *ret);
/* Features of one context, kdamonds/@kdamond/contexts/@context. */
int dp_damon_detect_features(struct dp_damon_fs *fs, unsigned kdamond, unsigned context,
                             struct dp_damon_features *ret);
/* Whether the space-separated @avail lists @operations as a whole word. */
bool dp_damon_operations_available(const char *avail, const char *operations);
