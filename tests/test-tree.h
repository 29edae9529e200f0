/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A throw-away directory tree for one test (fake sysfs, config dirs), built
 * at run time: make it in a Check fixture's setup, put files, remove it in
 * the teardown.  One tree per test file, hence the file-level root. */

#define _XOPEN_SOURCE_EXTENDED 1
#include <check.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char tmp_root[PATH_MAX];

static inline int test_tree_remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static inline void tree_teardown(void) {
        if (tmp_root[0] != '\0')
                nftw(tmp_root, test_tree_remove_one, 16, FTW_DEPTH | FTW_PHYS);
        tmp_root[0] = '\0';
}

/* A test that wants a tree of another kind replaces the one it has. */
static inline void test_tree_make(const char *template) {
        tree_teardown();
        ck_assert(strlen(template) < sizeof(tmp_root));
        strcpy(tmp_root, template);
        ck_assert_ptr_nonnull(mkdtemp(tmp_root));
}

/* Writes @text to @rel under the tree, creating directories on the way. */
static inline void put(const char *rel, const char *text) {
        char path[PATH_MAX];
        FILE *f;

        ck_assert((size_t) snprintf(path, sizeof(path), "%s/%s", tmp_root, rel) < sizeof(path));
        for (char *p = path + strlen(tmp_root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                mkdir(path, 0755);
                *p = '/';
        }
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(text, f);
        fclose(f);
}

