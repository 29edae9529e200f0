/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "damon-sysfs.h"
#include "macro.h"
#include "parse-util.h"
#include "damon-write.h"

#define CREATE_FILE "kdamonds/nr_kdamonds"

struct dp_damon_fs {
        int root_fd;
        bool walk_components;           /* no openat2(2) here: open_beneath() walks the path itself */
        int granted_kdamond;            /* -1: none */
        bool create_granted;
        uint64_t refused;
        dp_damon_after_write_t after_write;
        void *after_write_userdata;
        dp_damon_fault_t fault;
        void *fault_userdata;
        char error_path[DP_DAMON_PATH_MAX];
};

int dp_damon_fs_open(const char *root, struct dp_damon_fs **ret) {
        struct dp_damon_fs *fs;
        int fd;

        if (!root || !*root || !ret)
                return -EINVAL;
        fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return dp_negative_errno();
        fs = calloc(1, sizeof(*fs));
        if (!fs) {
                close(fd);
                return -ENOMEM;
        }
        fs->root_fd = fd;
        fs->granted_kdamond = -1;
        *ret = fs;
        return 0;
}

void dp_damon_fs_free(struct dp_damon_fs *fs) {
        if (!fs)
                return;
        close(fs->root_fd);
        free(fs);
}

void dp_damon_fs_set_after_write(struct dp_damon_fs *fs, dp_damon_after_write_t fn, void *userdata) {
        fs->after_write = fn;
        fs->after_write_userdata = userdata;
}

void dp_damon_fs_set_fault(struct dp_damon_fs *fs, dp_damon_fault_t fn, void *userdata) {
        fs->fault = fn;
        fs->fault_userdata = userdata;
}

/* The injected failure of this access, or 0. */
static int injected(struct dp_damon_fs *fs, const char *path, bool write) {
        return fs->fault ? fs->fault(path, write, fs->fault_userdata) : 0;
}

const char *dp_damon_fs_error_path(const struct dp_damon_fs *fs) {
        return fs->error_path;
}

void dp_damon_fs_clear_error(struct dp_damon_fs *fs) {
        fs->error_path[0] = '\0';
}

uint64_t dp_damon_fs_refused(const struct dp_damon_fs *fs) {
        return fs->refused;
}

void dp_damon_fs_grant_kdamond(struct dp_damon_fs *fs, int kdamond) {
        fs->granted_kdamond = kdamond < 0 ? -1 : kdamond;
}

void dp_damon_fs_grant_create(struct dp_damon_fs *fs, bool allow) {
        fs->create_granted = allow;
}

int dp_damon_fs_granted_kdamond(const struct dp_damon_fs *fs) {
        return fs->granted_kdamond;
}

static int fail(struct dp_damon_fs *fs, const char *path, int r) {
        snprintf(fs->error_path, sizeof(fs->error_path), "%s", path ? path : "");
        return r;
}

void damon_fs_note_error(struct dp_damon_fs *fs, const char *path) {
        fail(fs, path, 0);
}

/* Relative, not empty, no empty, "." or ".." component: the only shapes a
 * string check can vouch for. */
static int check_path(const char *path) {
        const char *p;

        if (!path || !*path || *path == '/' || strlen(path) >= DP_DAMON_PATH_MAX)
                return -EINVAL;
        for (p = path; *p;) {
                size_t len = strcspn(p, "/");

                if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
                        return -EINVAL;
                p += len;
                if (*p == '/' && *++p == '\0')
                        return -EINVAL;         /* trailing slash */
        }
        return 0;
}

/* open_beneath() without openat2(2) (before Linux 5.6, or filtered): one
 * component at a time, two system calls each. */
static int walk_beneath(struct dp_damon_fs *fs, const char *path, int flags) {
        char comp[DP_DAMON_PATH_MAX];
        _cleanup_close_ int dir = -1;
        const char *p = path;
        int r;

        for (;;) {
                size_t len = strcspn(p, "/");
                int at = dir >= 0 ? dir : fs->root_fd, fd;

                memcpy(comp, p, len);
                comp[len] = '\0';
                if (p[len] == '\0') {
                        fd = openat(at, comp, flags | O_NOFOLLOW | O_CLOEXEC);
                        return fd < 0 ? dp_negative_errno() : fd;
                }
                fd = openat(at, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                        struct stat st;

                        r = dp_negative_errno();
                        /* A symlink opened O_PATH|O_NOFOLLOW is "not a directory";
                         * say what it really is. */
                        if (r == -ENOTDIR && fstatat(at, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                            S_ISLNK(st.st_mode))
                                r = -ELOOP;
                        return r;
                }
                if (dir >= 0)
                        close(dir);
                dir = fd;
                p += len + 1;
        }
}

/* Opens @path beneath the root, following no symlink anywhere (O_NOFOLLOW
 * alone guards only the last component): in one openat2(2), where a walk of
 * the components took 20 system calls for a tried region's file, 80,000 for
 * a read-back of 1000 regions. */
static int open_beneath(struct dp_damon_fs *fs, const char *path, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_NOFOLLOW | O_CLOEXEC),
                .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
        };
        int r, fd;

        r = check_path(path);
        if (r < 0)
                return r;
        if (fs->walk_components)
                return walk_beneath(fs, path, flags);
        fd = (int) syscall(SYS_openat2, fs->root_fd, path, &how, sizeof(how));
        if (fd >= 0)
                return fd;
        r = dp_negative_errno();
        if (r != -ENOSYS && r != -EPERM)
                return r;
        /* EPERM from a system call filter, or from the file: the walk tells. */
        fd = walk_beneath(fs, path, flags);
        if (r == -ENOSYS || fd >= 0)
                fs->walk_components = true;
        return fd;
}

void dp_damon_fs_walk_components(struct dp_damon_fs *fs) {
        fs->walk_components = true;
}

int dp_damon_fs_read(struct dp_damon_fs *fs, const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = -1;
        size_t used = 0;
        int r;

        if (!buf || size == 0)
                return fail(fs, path, -EINVAL);
        buf[0] = '\0';
        r = injected(fs, path, false);
        if (r < 0)
                return fail(fs, path, r);
        fd = open_beneath(fs, path, O_RDONLY);
        if (fd < 0)
                return fail(fs, path, fd);
        for (;;) {
                ssize_t n = read(fd, buf + used, size - used);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return fail(fs, path, dp_negative_errno());
                }
                if (n == 0)
                        break;
                used += (size_t) n;
                if (used == size) {
                        buf[0] = '\0';
                        return fail(fs, path, -ENOBUFS);        /* no room for the NUL */
                }
        }
        /* No sysfs file holds a NUL: read as a string, "3\0junk" would pass for "3". */
        if (memchr(buf, '\0', used)) {
                buf[0] = '\0';
                return fail(fs, path, -EBADMSG);
        }
        buf[used] = '\0';
        if (used > 0 && buf[used - 1] == '\n')
                buf[used - 1] = '\0';
        return 0;
}

int dp_damon_fs_read_u64(struct dp_damon_fs *fs, const char *path, uint64_t *ret) {
        char buf[32];
        int r;

        r = dp_damon_fs_read(fs, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (dp_parse_uint(buf, 10, ret, NULL) < 0)
                return fail(fs, path, -EBADMSG);
        return 0;
}

int dp_damon_fs_read_int(struct dp_damon_fs *fs, const char *path, int *ret) {
        char buf[32];
        long long v;
        int r;

        r = dp_damon_fs_read(fs, path, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (dp_parse_int_in(buf, INT_MIN, INT_MAX, &v) < 0)
                return fail(fs, path, -EBADMSG);
        *ret = (int) v;
        return 0;
}

bool dp_damon_fs_exists(struct dp_damon_fs *fs, const char *path) {
        _cleanup_close_ int fd = open_beneath(fs, path, O_PATH);
        struct stat st;

        /* O_PATH|O_NOFOLLOW opens a final symlink itself: that is no file of ours. */
        return fd >= 0 && fstat(fd, &st) == 0 && !S_ISLNK(st.st_mode);
}

int dp_damon_fs_list_indices(struct dp_damon_fs *fs, const char *path, uint64_t **ret, size_t *ret_n) {
        _cleanup_free_ uint64_t *v = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        DIR *d;
        int fd;

        *ret = NULL;
        *ret_n = 0;
        fd = open_beneath(fs, path, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fail(fs, path, fd);
        d = fdopendir(fd);
        if (!d) {
                int r = dp_negative_errno();

                close(fd);
                return fail(fs, path, r);
        }
        while ((e = readdir(d))) {
                uint64_t i;

                if (dp_parse_u64_in(e->d_name, 0, UINT64_MAX, &i) < 0)
                        continue;       /* total_bytes, ".", ".." */
                if (n == cap) {
                        uint64_t *grown = reallocarray(v, cap ? cap * 2 : 64, sizeof(*v));

                        if (!grown) {
                                closedir(d);
                                return -ENOMEM;
                        }
                        v = grown;
                        cap = cap ? cap * 2 : 64;
                }
                v[n++] = i;
        }
        closedir(d);
        if (n > 1)
                qsort(v, n, sizeof(*v), dp_cmp_u64);
        *ret = n ? DP_TAKE_PTR(v) : NULL;
        *ret_n = n;
        return 0;
}

static bool granted(const struct dp_damon_fs *fs, const char *path) {
        char prefix[32];
        int n;

        if (fs->create_granted && strcmp(path, CREATE_FILE) == 0)
                return true;
        if (fs->granted_kdamond < 0)
                return false;
        n = snprintf(prefix, sizeof(prefix), "kdamonds/%d/", fs->granted_kdamond);
        /* Something beneath the directory, never the directory itself. */
        return strncmp(path, prefix, (size_t) n) == 0 && path[n] != '\0';
}

int dp_damon_fs_write(struct dp_damon_fs *fs, const char *path, const char *value) {
        _cleanup_close_ int fd = -1;
        size_t len;
        ssize_t n;
        int r;

        r = check_path(path);
        if (r < 0 || !value) {
                fs->refused++;
                return fail(fs, path, -EINVAL);
        }
        if (!granted(fs, path)) {
                fs->refused++;
                return fail(fs, path, -EPERM);
        }
        r = injected(fs, path, true);
        if (r < 0)
                return fail(fs, path, r);
        fd = open_beneath(fs, path, O_WRONLY | O_TRUNC);
        if (fd < 0)
                return fail(fs, path, fd);
        len = strlen(value);
        do
                n = write(fd, value, len);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return fail(fs, path, dp_negative_errno());
        if ((size_t) n != len)
                return fail(fs, path, -EIO);
        if (fs->after_write)
                fs->after_write(path, value, fs->after_write_userdata);
        return 0;
}

int dp_damon_fs_write_u64(struct dp_damon_fs *fs, const char *path, uint64_t value) {
        char buf[24];

        snprintf(buf, sizeof(buf), "%" PRIu64, value);
        return dp_damon_fs_write(fs, path, buf);
}
