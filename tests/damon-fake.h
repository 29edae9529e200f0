/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A fake DAMON sysfs "admin" tree shaped like Linux 6.12's, in a throw-away
 * directory, and an after-write hook (dp_damon_fs_set_after_write()) that
 * plays the kernel: nr_* writes recreate their children with the kernel's
 * initial contents, state=on/off flips state and pid, the other state
 * keywords leave it as it was (update_schemes_tried_regions fills
 * tried_regions from fake.tried), and every other file reads back as
 * "value\n" as the kernel prints it.  Files are 0600, read-only ones 0400,
 * directories 0755, as in sysfs.
 *
 * The hook cannot return errors; to make a write fail, turn its file into a
 * directory (EISDIR) or remove it (ENOENT): fake.sabotage does that to a
 * file right after the hook (re)creates it.  (Tests may run as root, who
 * writes to 0400 files, so permissions make no errors here.)
 *
 * fake.log records every write that reached a file, in order, as
 * "path=value".
 */

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test-tree.h"
#include "damon-sysfs.h"
#include "macro.h"

#define FAKE_LOG_MAX 512
#define FAKE_LOG_LINE (DP_DAMON_PATH_MAX + 80)
#define FAKE_FIRST_PID 4242

/* snprintf() that must fit. */
#define FAKE_FMT(buf, ...) ck_assert((size_t) snprintf(buf, sizeof(buf), __VA_ARGS__) < sizeof(buf))

struct fake_region {
        uint64_t start, end;
        unsigned nr_accesses, age;
};

struct fake_damon {
        char admin[PATH_MAX];           /* tmp_root/admin */
        const char *avail;              /* avail_operations of new contexts */
        bool v618;                      /* 6.18's addr_unit and refresh_ms too, and scheme files
                                         * of 6.14-6.17: filters' allow, goals' nid, dests */
        bool pre611;                    /* schemes without target_nid (before 6.11) */
        int next_pid;
        struct fake_region tried[16];   /* what update_schemes_tried_regions reports */
        size_t n_tried;
        bool tried_one_counter;         /* 6.12: one region counter across the schemes (0, 2, 4 / 1, 3, 5) */
        bool tried_skip_scheme0;        /* scheme 0 tries none (a pattern that matches nothing) */
        char tried_garbage_rel[64];     /* e.g. "1/nr_accesses": overwritten after each update ... */
        char tried_garbage[32];         /* ... with this */
        char log[FAKE_LOG_MAX][FAKE_LOG_LINE];
        size_t n_log;
        char sabotage[DP_DAMON_PATH_MAX];       /* turned into a directory (or removed) once it exists */
        bool sabotage_remove;
};

static struct fake_damon fake;

static inline const char *fake_abs(const char *rel) {
        static char path[PATH_MAX];

        FAKE_FMT(path, "%s/%s", fake.admin, rel);
        return path;
}

static inline void fake_mkdirs(const char *abs_dir) {
        char path[PATH_MAX];

        FAKE_FMT(path, "%s", abs_dir);
        for (char *p = path + strlen(tmp_root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                mkdir(path, 0755);
                *p = '/';
        }
        mkdir(path, 0755);
}

/* Writes @rel with "@content\n" and @mode, creating directories on the way. */
static inline void fake_file(const char *rel, const char *content, mode_t mode) {
        char path[PATH_MAX], dir[PATH_MAX];
        FILE *f;

        FAKE_FMT(path, "%s", fake_abs(rel));
        FAKE_FMT(dir, "%s", path);
        *strrchr(dir, '/') = '\0';
        fake_mkdirs(dir);
        unlink(path);           /* a 0400 file is not writable for a non-root test */
        f = fopen(path, "w");
        ck_assert_msg(f, "creating %s: %s", path, strerror(errno));
        fprintf(f, "%s\n", content);
        fclose(f);
        ck_assert_int_eq(chmod(path, mode), 0);
}

/* A file's contents without the trailing newline; "<missing>" if absent. */
static inline const char *fake_get(const char *rel) {
        static char buf[4096];
        size_t n;
        FILE *f = fopen(fake_abs(rel), "r");

        if (!f)
                return "<missing>";
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = '\0';
        if (n > 0 && buf[n - 1] == '\n')
                buf[n - 1] = '\0';
        return buf;
}

static inline bool fake_exists(const char *rel) {
        struct stat st;

        return lstat(fake_abs(rel), &st) == 0;
}

static inline int fake_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static inline void fake_rmrf(const char *rel) {
        nftw(fake_abs(rel), fake_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- the kernel's initial contents (mm/damon/sysfs.c, sysfs-schemes.c, 6.12) ---- */

typedef void (*fake_maker_t)(const char *dir);

static inline void fake_put(const char *dir, const char *name, const char *content, mode_t mode) {
        char rel[PATH_MAX];

        FAKE_FMT(rel, "%s/%s", dir, name);
        fake_file(rel, content, mode);
}

static inline void fake_mk_region(const char *dir) {
        fake_put(dir, "start", "0", 0600);
        fake_put(dir, "end", "0", 0600);
}

static inline void fake_mk_target(const char *dir) {
        fake_put(dir, "pid_target", "0", 0600);
        fake_put(dir, "regions/nr_regions", "0", 0600);
}

static inline void fake_mk_goal(const char *dir) {
        fake_put(dir, "target_metric", "user_input", 0600);
        fake_put(dir, "target_value", "0", 0600);
        fake_put(dir, "current_value", "0", 0600);
        if (fake.v618)
                fake_put(dir, "nid", "0", 0600);
}

static inline void fake_mk_filter(const char *dir) {
        fake_put(dir, "type", "anon", 0600);
        fake_put(dir, "matching", "N", 0600);
        fake_put(dir, "memcg_path", "", 0600);
        fake_put(dir, "addr_start", "0", 0600);
        fake_put(dir, "addr_end", "0", 0600);
        fake_put(dir, "damon_target_idx", "0", 0600);
        if (fake.v618)
                fake_put(dir, "allow", "N", 0600);
}

static inline void fake_mk_scheme(const char *dir) {
        static const char *const ranges[] = { "sz", "nr_accesses", "age" };
        static const char *const rw_zero[] = { "quotas/ms", "quotas/bytes", "quotas/reset_interval_ms",
                "quotas/weights/sz_permil", "quotas/weights/nr_accesses_permil", "quotas/weights/age_permil",
                "quotas/goals/nr_goals", "watermarks/interval_us", "watermarks/high", "watermarks/mid",
                "watermarks/low", "filters/nr_filters", "apply_interval_us" };
        static const char *const ro_zero[] = { "quotas/effective_bytes", "stats/nr_tried", "stats/sz_tried",
                "stats/nr_applied", "stats/sz_applied", "stats/qt_exceeds", "tried_regions/total_bytes" };
        char name[64];

        fake_put(dir, "action", "stat", 0600);
        if (!fake.pre611)
                fake_put(dir, "target_nid", "-1", 0600);
        if (fake.v618)
                fake_put(dir, "dests/nr_dests", "0", 0600);
        for (size_t i = 0; i < 3; i++) {
                FAKE_FMT(name, "access_pattern/%s/min", ranges[i]);
                fake_put(dir, name, "0", 0600);
                FAKE_FMT(name, "access_pattern/%s/max", ranges[i]);
                fake_put(dir, name, "0", 0600);
        }
        for (size_t i = 0; i < sizeof(rw_zero) / sizeof(rw_zero[0]); i++)
                fake_put(dir, rw_zero[i], "0", 0600);
        for (size_t i = 0; i < sizeof(ro_zero) / sizeof(ro_zero[0]); i++)
                fake_put(dir, ro_zero[i], "0", 0400);
        fake_put(dir, "watermarks/metric", "none", 0600);
}

static inline void fake_mk_context(const char *dir) {
        fake_put(dir, "avail_operations", fake.avail, 0400);
        fake_put(dir, "operations", "vaddr", 0600);
        if (fake.v618)
                fake_put(dir, "addr_unit", "1", 0600);
        fake_put(dir, "monitoring_attrs/intervals/sample_us", "5000", 0600);
        fake_put(dir, "monitoring_attrs/intervals/aggr_us", "100000", 0600);
        fake_put(dir, "monitoring_attrs/intervals/update_us", "1000000", 0600);
        fake_put(dir, "monitoring_attrs/nr_regions/min", "10", 0600);
        fake_put(dir, "monitoring_attrs/nr_regions/max", "1000", 0600);
        fake_put(dir, "targets/nr_targets", "0", 0600);
        fake_put(dir, "schemes/nr_schemes", "0", 0600);
}

static inline void fake_mk_kdamond(const char *dir) {
        fake_put(dir, "state", "off", 0600);
        fake_put(dir, "pid", "-1", 0400);
        if (fake.v618)
                fake_put(dir, "refresh_ms", "0", 0600);
        fake_put(dir, "contexts/nr_contexts", "0", 0600);
}

static inline bool fake_is_index(const char *name) {
        if (!*name)
                return false;
        for (const char *p = name; *p; p++)
                if (*p < '0' || *p > '9')
                        return false;
        return true;
}

/* Removes the numbered children of @dir and makes @n fresh ones. */
static inline void fake_resize(const char *dir, unsigned long n, fake_maker_t maker) {
        char child[PATH_MAX];
        struct dirent *de;
        DIR *d = opendir(fake_abs(dir));

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (fake_is_index(de->d_name)) {
                        FAKE_FMT(child, "%s/%s", dir, de->d_name);
                        fake_rmrf(child);
                }
        closedir(d);
        for (unsigned long i = 0; i < n; i++) {
                FAKE_FMT(child, "%s/%lu", dir, i);
                fake_mkdirs(fake_abs(child));
                maker(child);
        }
}

/* Scheme @s of @nr_schemes: every region of fake.tried, named as the kernel
 * numbers them (with tried_one_counter, as 6.12 does when every scheme tries
 * every region). */
static inline void fake_fill_tried(const char *scheme_dir, unsigned long s, unsigned long nr_schemes) {
        char dir[PATH_MAX], v[32];
        uint64_t total = 0;

        FAKE_FMT(dir, "%s/tried_regions", scheme_dir);
        fake_resize(dir, 0, NULL);
        for (size_t i = 0; i < fake.n_tried && !(s == 0 && fake.tried_skip_scheme0); i++) {
                char region[PATH_MAX];

                FAKE_FMT(region, "%s/%lu", dir, fake.tried_one_counter ? i * nr_schemes + s : i);
                FAKE_FMT(v, "%" PRIu64, fake.tried[i].start);
                fake_put(region, "start", v, 0400);
                FAKE_FMT(v, "%" PRIu64, fake.tried[i].end);
                fake_put(region, "end", v, 0400);
                FAKE_FMT(v, "%u", fake.tried[i].nr_accesses);
                fake_put(region, "nr_accesses", v, 0400);
                FAKE_FMT(v, "%u", fake.tried[i].age);
                fake_put(region, "age", v, 0400);
                total += fake.tried[i].end - fake.tried[i].start;
        }
        FAKE_FMT(v, "%" PRIu64, total);
        fake_put(dir, "total_bytes", v, 0400);
        if (fake.tried_garbage_rel[0])
                fake_put(dir, fake.tried_garbage_rel, fake.tried_garbage, 0400);
}

/* update_schemes_tried_regions: every scheme of every context of @kdamond_dir. */
static inline void fake_update_tried(const char *kdamond_dir) {
        char rel[PATH_MAX];
        unsigned long nr_contexts, nr_schemes;

        FAKE_FMT(rel, "%s/contexts/nr_contexts", kdamond_dir);
        nr_contexts = strtoul(fake_get(rel), NULL, 10);
        for (unsigned long c = 0; c < nr_contexts; c++) {
                FAKE_FMT(rel, "%s/contexts/%lu/schemes/nr_schemes", kdamond_dir, c);
                nr_schemes = strtoul(fake_get(rel), NULL, 10);
                for (unsigned long s = 0; s < nr_schemes; s++) {
                        FAKE_FMT(rel, "%s/contexts/%lu/schemes/%lu", kdamond_dir, c, s);
                        if (!fake_exists(rel))
                                break;  /* a test's garbled nr_schemes */
                        fake_fill_tried(rel, s, nr_schemes);
                }
        }
}

static inline void fake_state(const char *path, const char *value) {
        char dir[PATH_MAX], pid_rel[PATH_MAX], pid[16];
        bool on;

        FAKE_FMT(dir, "%s", path);
        *strrchr(dir, '/') = '\0';
        FAKE_FMT(pid_rel, "%s/pid", dir);
        on = strcmp(fake_get(pid_rel), "-1") != 0;
        if (strcmp(value, "on") == 0) {
                FAKE_FMT(pid, "%d", fake.next_pid++);
                fake_file(pid_rel, pid, 0400);
                on = true;
        } else if (strcmp(value, "off") == 0) {
                fake_file(pid_rel, "-1", 0400);
                on = false;
        } else if (strcmp(value, "update_schemes_tried_regions") == 0)
                fake_update_tried(dir);
        fake_file(path, on ? "on" : "off", 0600);
}

static inline void fake_apply_sabotage(void) {
        char path[PATH_MAX];

        if (!fake.sabotage[0] || !fake_exists(fake.sabotage))
                return;
        FAKE_FMT(path, "%s", fake_abs(fake.sabotage));
        ck_assert_int_eq(unlink(path), 0);
        if (!fake.sabotage_remove)
                ck_assert_int_eq(mkdir(path, 0755), 0);
        fake.sabotage[0] = '\0';
}

static inline void fake_after_write(const char *path, const char *value, void *userdata) {
        static const struct {
                const char *name;
                fake_maker_t maker;
        } collections[] = {
                { "nr_kdamonds", fake_mk_kdamond }, { "nr_contexts", fake_mk_context },
                { "nr_targets", fake_mk_target },   { "nr_regions", fake_mk_region },
                { "nr_schemes", fake_mk_scheme },   { "nr_goals", fake_mk_goal },
                { "nr_filters", fake_mk_filter },
        };
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        char dir[PATH_MAX];
        bool done = false;

        (void) userdata;
        ck_assert(fake.n_log < FAKE_LOG_MAX);
        snprintf(fake.log[fake.n_log++], FAKE_LOG_LINE, "%s=%s", path, value);
        FAKE_FMT(dir, "%s", path);
        if (strrchr(dir, '/'))
                *strrchr(dir, '/') = '\0';
        for (size_t i = 0; i < sizeof(collections) / sizeof(collections[0]); i++)
                if (strcmp(base, collections[i].name) == 0) {
                        unsigned long n = strtoul(value, NULL, 10);
                        char text[24];

                        FAKE_FMT(text, "%lu", n);
                        fake_file(path, text, 0600);
                        fake_resize(dir, n, collections[i].maker);
                        done = true;
                }
        if (!done && strcmp(base, "state") == 0)
                fake_state(path, value);
        else if (!done)
                fake_file(path, value, 0600);
        fake_apply_sabotage();
}

/* An administrator's (or another tool's) write: straight to the file, with
 * the kernel's reaction, past any guard. */
static inline void fake_admin_write(const char *rel, const char *value) {
        fake_file(rel, value, 0600);
        fake_after_write(rel, value, NULL);
        fake.n_log--;           /* not ours: keep the log for the code under test */
}

/* A fresh admin tree with no kdamond (nr_kdamonds 0). */
static inline void fake_make(bool v618) {
        test_tree_make("/tmp/dp-damon-fake-XXXXXX");
        memset(&fake, 0, sizeof(fake));
        FAKE_FMT(fake.admin, "%s/admin", tmp_root);
        fake.avail = "vaddr fvaddr paddr";
        fake.v618 = v618;
        fake.next_pid = FAKE_FIRST_PID;
        fake_file("kdamonds/nr_kdamonds", "0", 0600);
}

static inline void fake_log_clear(void) {
        fake.n_log = 0;
}

/* ---- snapshots: every file's path, mode and contents ---- */

static char **fake_snap_lines;
static size_t fake_snap_n;

static inline int fake_snap_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        char *line = NULL, content[512] = "";

        (void) flag;
        (void) ftw;
        if (S_ISREG(st->st_mode)) {
                FILE *f = fopen(path, "r");
                size_t n;

                ck_assert_ptr_nonnull(f);
                n = fread(content, 1, sizeof(content) - 1, f);
                content[n] = '\0';
                fclose(f);
        }
        ck_assert_int_ge(asprintf(&line, "%s %o %s", path + strlen(fake.admin), (unsigned) st->st_mode, content), 0);
        fake_snap_lines = realloc(fake_snap_lines, (fake_snap_n + 1) * sizeof(*fake_snap_lines));
        ck_assert_ptr_nonnull(fake_snap_lines);
        fake_snap_lines[fake_snap_n++] = line;
        return 0;
}

static inline int fake_snap_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The whole tree as one sorted, malloc'd text. */
static inline char *fake_snapshot(void) {
        size_t size = 1;
        char *text;

        fake_snap_lines = NULL;
        fake_snap_n = 0;
        ck_assert_int_eq(nftw(fake.admin, fake_snap_one, 16, FTW_PHYS), 0);
        qsort(fake_snap_lines, fake_snap_n, sizeof(*fake_snap_lines), fake_snap_cmp);
        for (size_t i = 0; i < fake_snap_n; i++)
                size += strlen(fake_snap_lines[i]) + 1;
        text = calloc(1, size);
        ck_assert_ptr_nonnull(text);
        for (size_t i = 0; i < fake_snap_n; i++) {
                strcat(text, fake_snap_lines[i]);
                strcat(text, "\n");
                free(fake_snap_lines[i]);
        }
        free(fake_snap_lines);
        return text;
}

/* Fails naming the first line where two snapshots differ (a whole snapshot
 * is too long for a Check message). */
static inline void fake_assert_same(const char *before, const char *after) {
        const char *a = before, *b = after;

        while (*a && *b) {
                size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");

                ck_assert_msg(la == lb && strncmp(a, b, la) == 0, "tree changed: \"%.*s\" became \"%.*s\"",
                              (int) DP_MIN(la, (size_t) 200), a, (int) DP_MIN(lb, (size_t) 200), b);
                a += la + (a[la] == '\n');
                b += lb + (b[lb] == '\n');
        }
        ck_assert_msg(!*a && !*b, "tree changed: \"%.200s\" / \"%.200s\"", *a ? a : "(gone)", *b ? b : "(new)");
}
