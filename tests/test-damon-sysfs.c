/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* DAMON sysfs access: reads, the write guard, symlinks, discovery and
 * feature detection, against fake trees (tests/damon-fake.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-main.h"
#include "damon-session.h"
#include "damon-sysfs.h"
#include "macro.h"

START_TEST(test_open) {
        struct dp_damon_fs *fs = NULL;
        char file[PATH_MAX];

        ck_assert_int_eq(dp_damon_fs_open("/nonexistent/damon/admin", &fs), -ENOENT);
        ck_assert_ptr_null(fs);
        FAKE_FMT(file, "%s", fake_abs("kdamonds/nr_kdamonds"));
        ck_assert_int_eq(dp_damon_fs_open(file, &fs), -ENOTDIR);
        ck_assert_int_eq(dp_damon_fs_open("", &fs), -EINVAL);
        ck_assert_int_eq(dp_damon_fs_open(fake.admin, &fs), 0);
        dp_damon_fs_free(fs);
        dp_damon_fs_free(NULL);
}
END_TEST

START_TEST(test_read) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        static const char *const bad[] = {
                "/kdamonds/nr_kdamonds", "", "kdamonds//nr_kdamonds", "kdamonds/", "./kdamonds/nr_kdamonds",
                "kdamonds/../kdamonds/nr_kdamonds", "..", "kdamonds/.",
        };
        char buf[64], small[3];
        uint64_t v = 99;
        int i = 0;

        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/nr_kdamonds", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0");             /* newline stripped */
        ck_assert_int_eq(dp_damon_fs_read_u64(fs, "kdamonds/nr_kdamonds", &v), 0);
        ck_assert_uint_eq(v, 0);

        fake_file("kdamonds/long", "12345", 0600);
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/long", small, sizeof(small)), -ENOBUFS);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/long");
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/long", buf, 6), -ENOBUFS);     /* 5 + newline */
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/long", buf, 7), 0);
        ck_assert_str_eq(buf, "12345");

        fake_file("kdamonds/garbage", "12abc", 0600);
        ck_assert_int_eq(dp_damon_fs_read_u64(fs, "kdamonds/garbage", &v), -EBADMSG);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/garbage");
        fake_file("kdamonds/minus", "-1", 0600);
        ck_assert_int_eq(dp_damon_fs_read_u64(fs, "kdamonds/minus", &v), -EBADMSG);
        ck_assert_int_eq(dp_damon_fs_read_int(fs, "kdamonds/minus", &i), 0);
        ck_assert_int_eq(i, -1);
        fake_file("kdamonds/empty", "", 0600);
        ck_assert_int_eq(dp_damon_fs_read_u64(fs, "kdamonds/empty", &v), -EBADMSG);
        ck_assert_int_eq(dp_damon_fs_read_int(fs, "kdamonds/empty", &i), -EBADMSG);
        fake_file("kdamonds/huge", "99999999999999999999999", 0600);
        ck_assert_int_eq(dp_damon_fs_read_u64(fs, "kdamonds/huge", &v), -EBADMSG);
        /* Found by fuzz-sysfs: a NUL cut the number short, and "3\0..." read as 3. */
        {
                int fd = open(fake_abs("kdamonds/nul"), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

                ck_assert_int_ge(fd, 0);
                ck_assert_int_eq(write(fd, "3\0\0\x1f\n", 5), 5);
                close(fd);
        }
        v = 99;
        i = 99;
        ck_assert_int_eq(dp_damon_fs_read_u64(fs, "kdamonds/nul", &v), -EBADMSG);
        ck_assert_int_eq(dp_damon_fs_read_int(fs, "kdamonds/nul", &i), -EBADMSG);
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/nul", buf, sizeof(buf)), -EBADMSG);
        ck_assert_str_eq(buf, "");
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/nul");
        ck_assert_uint_eq(v, 99);
        ck_assert_int_eq(i, 99);

        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/missing", buf, sizeof(buf)), -ENOENT);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/missing");
        for (size_t k = 0; k < DP_ARRAY_SIZE(bad); k++) {
                ck_assert_msg(dp_damon_fs_read(fs, bad[k], buf, sizeof(buf)) == -EINVAL, "read \"%s\"", bad[k]);
                ck_assert_msg(!dp_damon_fs_exists(fs, bad[k]), "exists \"%s\"", bad[k]);
        }
        ck_assert(dp_damon_fs_exists(fs, "kdamonds"));
        ck_assert(dp_damon_fs_exists(fs, "kdamonds/nr_kdamonds"));
        ck_assert(!dp_damon_fs_exists(fs, "kdamonds/0"));
}
END_TEST

/* Every write the guard must refuse, and what it lets through. */
/* The numbered names of a directory, in numeric order, whatever else it
 * holds and whatever gaps the numbering has. */
START_TEST(test_list_indices) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ uint64_t *idx = NULL;
        size_t n = 99;

        fake_file("kdamonds/tried/total_bytes", "0", 0600);
        ck_assert_int_eq(dp_damon_fs_list_indices(fs, "kdamonds/tried", &idx, &n), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(idx);
        fake_mkdirs(fake_abs("kdamonds/tried/10"));
        fake_mkdirs(fake_abs("kdamonds/tried/3"));
        fake_mkdirs(fake_abs("kdamonds/tried/0"));
        fake_mkdirs(fake_abs("kdamonds/tried/x1"));
        ck_assert_int_eq(dp_damon_fs_list_indices(fs, "kdamonds/tried", &idx, &n), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(idx[0], 0);
        ck_assert_uint_eq(idx[1], 3);
        ck_assert_uint_eq(idx[2], 10);
        free(DP_TAKE_PTR(idx));
        ck_assert_int_eq(dp_damon_fs_list_indices(fs, "kdamonds/none", &idx, &n), -ENOENT);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/none");
        ck_assert_int_eq(dp_damon_fs_list_indices(fs, "kdamonds/tried/total_bytes", &idx, &n), -ENOTDIR);
        ck_assert_int_eq(dp_damon_fs_list_indices(fs, "../x", &idx, &n), -EINVAL);
}
END_TEST

START_TEST(test_guard) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        static const char *const invalid[] = {
                "kdamonds/0/../1/state", "/kdamonds/0/state", "kdamonds/0//state", "kdamonds/0/state/",
                "kdamonds/0/./state", "", "../admin/kdamonds/0/state",
        };
        uint64_t refused = 0;

        fake_admin_write("kdamonds/nr_kdamonds", "2");

        /* Nothing is granted after open. */
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), -EPERM);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/nr_kdamonds", "0"), -EPERM);
        ck_assert_uint_eq(dp_damon_fs_refused(fs), refused += 2);
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "off");
        ck_assert_str_eq(fake_get("kdamonds/nr_kdamonds"), "2");

        dp_damon_fs_grant_kdamond(fs, 0);
        ck_assert_int_eq(dp_damon_fs_granted_kdamond(fs), 0);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/contexts/nr_contexts", "1"), 0);
        ck_assert_str_eq(fake_get("kdamonds/0/contexts/nr_contexts"), "1");
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/1/state", "on"), -EPERM);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/00/state", "on"), -EPERM);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0", "x"), -EPERM);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/nr_kdamonds", "0"), -EPERM);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", NULL), -EINVAL);
        refused += 5;
        for (size_t i = 0; i < DP_ARRAY_SIZE(invalid); i++)
                ck_assert_msg(dp_damon_fs_write(fs, invalid[i], "on") == -EINVAL, "\"%s\"", invalid[i]);
        refused += DP_ARRAY_SIZE(invalid);
        ck_assert_uint_eq(dp_damon_fs_refused(fs), refused);
        ck_assert_str_eq(fake_get("kdamonds/1/state"), "off");

        /* kdamond 1's number does not open kdamond 10's door, nor the reverse. */
        dp_damon_fs_grant_kdamond(fs, 1);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/10/state", "on"), -EPERM);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), -EPERM);
        refused += 2;

        /* nr_kdamonds, only while create is granted. */
        dp_damon_fs_grant_create(fs, true);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/nr_kdamonds", "1"), 0);
        ck_assert(!fake_exists("kdamonds/1"));
        dp_damon_fs_grant_create(fs, false);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/nr_kdamonds", "0"), -EPERM);
        refused++;

        dp_damon_fs_grant_kdamond(fs, -1);
        ck_assert_int_eq(dp_damon_fs_granted_kdamond(fs), -1);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), -EPERM);
        refused++;
        ck_assert_uint_eq(dp_damon_fs_refused(fs), refused);
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "off");
        ck_assert_str_eq(fake_get("kdamonds/nr_kdamonds"), "1");
}
END_TEST

/* No component of a path may be a symlink: not the file (O_NOFOLLOW), and
 * not a directory on the way; through openat2(2) (_i 0) and without it. */
START_TEST(test_symlinks) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        char outside[PATH_MAX], outside_dir[PATH_MAX], link[PATH_MAX], buf[64];

        if (_i == 1)
                dp_damon_fs_walk_components(fs);
        fake_admin_write("kdamonds/nr_kdamonds", "1");
        dp_damon_fs_grant_kdamond(fs, 0);

        FAKE_FMT(outside, "%s/outside", tmp_root);
        put("outside", "precious\n");
        FAKE_FMT(link, "%s", fake_abs("kdamonds/0/state"));
        ck_assert_int_eq(unlink(link), 0);
        ck_assert_int_eq(symlink(outside, link), 0);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), -ELOOP);
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/0/state", buf, sizeof(buf)), -ELOOP);
        ck_assert(!dp_damon_fs_exists(fs, "kdamonds/0/state"));

        FAKE_FMT(outside_dir, "%s/elsewhere", tmp_root);
        put("elsewhere/nr_contexts", "0\n");
        fake_rmrf("kdamonds/0/contexts");
        FAKE_FMT(link, "%s", fake_abs("kdamonds/0/contexts"));
        ck_assert_int_eq(symlink(outside_dir, link), 0);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/contexts/nr_contexts", "1"), -ELOOP);
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/0/contexts/nr_contexts", buf, sizeof(buf)), -ELOOP);
        ck_assert(!dp_damon_fs_exists(fs, "kdamonds/0/contexts/nr_contexts"));

        ck_assert_uint_eq(fake.n_log, 0);
        snprintf(fake.admin, sizeof(fake.admin), "%s", tmp_root);       /* read the outside files */
        ck_assert_str_eq(fake_get("outside"), "precious");
        ck_assert_str_eq(fake_get("elsewhere/nr_contexts"), "0");
}
END_TEST

START_TEST(test_write_semantics) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        char raw[PATH_MAX];
        FILE *f;
        char buf[32] = "";

        fake_admin_write("kdamonds/nr_kdamonds", "1");
        ck_assert_int_eq(dp_damon_fs_open(fake.admin, &fs), 0);        /* no hook: raw file contents */
        dp_damon_fs_grant_kdamond(fs, 0);

        /* Never O_CREAT: a file that does not exist is a wrong write. */
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/no_such_file", "1"), -ENOENT);
        ck_assert(!fake_exists("kdamonds/0/no_such_file"));
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/0/no_such_file");
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/contexts", "1"), -EISDIR);
        ck_assert_uint_eq(dp_damon_fs_refused(fs), 0);  /* the kernel's refusals are not the guard's */

        /* One write of exactly the value, over what was there. */
        fake_file("kdamonds/0/contexts/nr_contexts", "10", 0600);
        ck_assert_int_eq(dp_damon_fs_write_u64(fs, "kdamonds/0/contexts/nr_contexts", 1), 0);
        FAKE_FMT(raw, "%s", fake_abs("kdamonds/0/contexts/nr_contexts"));
        f = fopen(raw, "r");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fread(buf, 1, sizeof(buf) - 1, f), 1);
        fclose(f);
        ck_assert_str_eq(buf, "1");
        ck_assert_uint_eq(fake.n_log, 0);
}
END_TEST

START_TEST(test_after_write_hook) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();

        dp_damon_fs_grant_create(fs, true);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/nr_kdamonds", "1"), 0);
        ck_assert_uint_eq(fake.n_log, 1);
        ck_assert_str_eq(fake.log[0], "kdamonds/nr_kdamonds=1");
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "off");
        /* Not called for a refused or failed write. */
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), -EPERM);
        dp_damon_fs_grant_kdamond(fs, 0);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/missing", "on"), -ENOENT);
        ck_assert_uint_eq(fake.n_log, 1);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), 0);
        ck_assert_str_eq(fake.log[1], "kdamonds/0/state=on");
        ck_assert_str_eq(fake_get("kdamonds/0/pid"), "4242");
}
END_TEST

/* Fails every access to kdamonds/0/state with EBUSY, and counts the calls. */
static unsigned fault_calls;

static int state_busy(const char *path, bool write, void *userdata) {
        (void) write;
        fault_calls++;
        return strcmp(path, userdata) == 0 ? -EBUSY : 0;
}

START_TEST(test_fault_hook) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        char buf[16];

        dp_damon_fs_grant_create(fs, true);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/nr_kdamonds", "1"), 0);
        dp_damon_fs_grant_kdamond(fs, 0);
        dp_damon_fs_set_fault(fs, state_busy, (void *) "kdamonds/0/state");
        fault_calls = 0;

        /* The injected errno, as the kernel's, with the file named. */
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/0/state", buf, sizeof(buf)), -EBUSY);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/0/state");
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), -EBUSY);
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "off");
        ck_assert_uint_eq(fake.n_log, 1);              /* no after-write for a failed write */
        /* Other files go through; a write the guard refuses never reaches the seam. */
        ck_assert_int_eq(dp_damon_fs_read(fs, "kdamonds/0/pid", buf, sizeof(buf)), 0);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/1/state", "on"), -EPERM);
        ck_assert_uint_eq(fault_calls, 3);

        dp_damon_fs_set_fault(fs, NULL, NULL);
        ck_assert_int_eq(dp_damon_fs_write(fs, "kdamonds/0/state", "on"), 0);
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "on");
}
END_TEST

START_TEST(test_operations_available) {
        ck_assert(dp_damon_operations_available("vaddr fvaddr paddr", "paddr"));
        ck_assert(dp_damon_operations_available("vaddr fvaddr paddr", "vaddr"));
        ck_assert(dp_damon_operations_available("paddr\n", "paddr"));
        ck_assert(!dp_damon_operations_available("fvaddr paddr", "vaddr"));
        ck_assert(!dp_damon_operations_available("paddr", "vaddr"));
        ck_assert(!dp_damon_operations_available("", "vaddr"));
        ck_assert(!dp_damon_operations_available("vaddr", ""));
}
END_TEST

START_TEST(test_discover_empty) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_tree t;

        ck_assert_int_eq(dp_damon_discover(fs, &t), 0);
        ck_assert_uint_eq(t.nr_kdamonds, 0);
        ck_assert_uint_eq(t.nr_listed, 0);
        ck_assert(!t.any_running);
        ck_assert_str_eq(t.features.avail_operations, "");
        ck_assert(!t.features.schemes_probed && !t.features.tried_regions && !t.features.addr_unit);
        ck_assert_uint_eq(fake.n_log, 0);
}
END_TEST

START_TEST(test_discover_missing) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_tree t;

        fake_rmrf("kdamonds");
        ck_assert_int_eq(dp_damon_discover(fs, &t), -ENOENT);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/nr_kdamonds");
}
END_TEST

/* A foreign paddr kdamond running as kdamond 1, an empty kdamond 0. */
START_TEST(test_discover_running) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        _cleanup_free_ char *before = NULL, *after = NULL;
        struct dp_damon_tree t;

        fake_admin_write("kdamonds/nr_kdamonds", "2");
        fake_admin_write("kdamonds/1/contexts/nr_contexts", "1");
        fake_admin_write("kdamonds/1/contexts/0/operations", "paddr");
        fake_admin_write("kdamonds/1/contexts/0/targets/nr_targets", "1");
        fake_admin_write("kdamonds/1/contexts/0/schemes/nr_schemes", "2");
        fake_admin_write("kdamonds/1/state", "on");
        before = fake_snapshot();

        ck_assert_int_eq(dp_damon_discover(fs, &t), 0);
        ck_assert_uint_eq(t.nr_kdamonds, 2);
        ck_assert_uint_eq(t.nr_listed, 2);
        ck_assert(t.any_running);
        ck_assert_uint_eq(t.kdamonds[0].index, 0);
        ck_assert(!t.kdamonds[0].running);
        ck_assert_int_eq(t.kdamonds[0].pid, -1);
        ck_assert_uint_eq(t.kdamonds[0].nr_contexts, 0);
        ck_assert_str_eq(t.kdamonds[0].operations, "");
        ck_assert_uint_eq(t.kdamonds[1].index, 1);
        ck_assert(t.kdamonds[1].running);
        ck_assert_int_eq(t.kdamonds[1].pid, FAKE_FIRST_PID);
        ck_assert_uint_eq(t.kdamonds[1].nr_contexts, 1);
        ck_assert_str_eq(t.kdamonds[1].operations, "paddr");
        ck_assert_uint_eq(t.kdamonds[1].nr_targets, 1);
        ck_assert_uint_eq(t.kdamonds[1].nr_schemes, 2);
        /* 6.12's shape */
        ck_assert_str_eq(t.features.avail_operations, "vaddr fvaddr paddr");
        ck_assert(t.features.schemes_probed);
        ck_assert(t.features.tried_regions && t.features.quota_goals && t.features.effective_quotas);
        ck_assert(t.features.filters);
        ck_assert(!t.features.core_filters && !t.features.addr_unit && !t.features.refresh_ms &&
                  !t.features.intervals_goal);

        after = fake_snapshot();
        fake_assert_same(before, after);        /* discovery only reads */
        ck_assert_uint_eq(fake.n_log, 0);
}
END_TEST

START_TEST(test_features_618) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = NULL;
        struct dp_damon_features f;

        tree_teardown();
        fake_make(true);
        fs = open_fake();
        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake_admin_write("kdamonds/0/contexts/nr_contexts", "1");
        fake_file("kdamonds/0/contexts/0/monitoring_attrs/intervals/intervals_goal/aggrs", "0", 0600);
        ck_assert_int_eq(dp_damon_detect_features(fs, 0, 0, &f), 0);
        ck_assert(f.addr_unit && f.refresh_ms && f.intervals_goal);
        ck_assert(!f.schemes_probed && !f.tried_regions && !f.quota_goals);    /* no scheme to look in */
        fake_admin_write("kdamonds/0/contexts/0/schemes/nr_schemes", "1");
        fake_file("kdamonds/0/contexts/0/schemes/0/core_filters/nr_filters", "0", 0600);
        ck_assert_int_eq(dp_damon_detect_features(fs, 0, 0, &f), 0);
        ck_assert(f.schemes_probed && f.tried_regions && f.quota_goals && f.core_filters);
        ck_assert_int_eq(dp_damon_detect_features(fs, 0, 1, &f), -ENOENT);
}
END_TEST

START_TEST(test_discover_garbled) {
        _cleanup_damon_fs_ struct dp_damon_fs *fs = open_fake();
        struct dp_damon_tree t;

        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake_file("kdamonds/0/state", "maybe", 0600);
        ck_assert_int_eq(dp_damon_discover(fs, &t), -EBADMSG);
        fake_file("kdamonds/0/state", "off", 0600);
        fake_file("kdamonds/0/pid", "12x", 0400);
        ck_assert_int_eq(dp_damon_discover(fs, &t), -EBADMSG);
        ck_assert_str_eq(dp_damon_fs_error_path(fs), "kdamonds/0/pid");
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("damon-sysfs");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_open);
        tcase_add_test(tc, test_read);
        tcase_add_test(tc, test_list_indices);
        tcase_add_test(tc, test_guard);
        tcase_add_loop_test(tc, test_symlinks, 0, 2);
        tcase_add_test(tc, test_write_semantics);
        tcase_add_test(tc, test_after_write_hook);
        tcase_add_test(tc, test_fault_hook);
        tcase_add_test(tc, test_operations_available);
        tcase_add_test(tc, test_discover_empty);
        tcase_add_test(tc, test_discover_missing);
        tcase_add_test(tc, test_discover_running);
        tcase_add_test(tc, test_features_618);
        tcase_add_test(tc, test_discover_garbled);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
