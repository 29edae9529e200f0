/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "macro.h"
#include "varlink-socket.h"

static int make_address(const char *path, struct sockaddr_un *sa, socklen_t *ret_len) {
        size_t n;

        if (!path || path[0] != '/')
                return -EINVAL;
        n = strlen(path);
        if (n >= sizeof(sa->sun_path))
                return -ENAMETOOLONG;
        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(sa->sun_path, path, n + 1);
        *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
        return 0;
}

/* mkdir -p of path's directory, new directories 0755. */
static int make_parents(const char *path) {
        _cleanup_free_ char *dir = strdup(path);

        if (!dir)
                return -ENOMEM;
        for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
                *p = '\0';
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        return dp_negative_errno();
                *p = '/';
        }
        return 0;
}

/* A socket file nobody listens on is left over from a crash: remove it.
 * Anything else stays. */
static int remove_stale(const char *path, const struct sockaddr_un *sa, socklen_t len) {
        _cleanup_close_ int fd = -1;
        struct stat st;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : dp_negative_errno();
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return dp_negative_errno();
        if (connect(fd, (const struct sockaddr *) sa, len) == 0 || errno == EAGAIN)
                return -EADDRINUSE;     /* EAGAIN: a listener with a full backlog */
        if (errno != ECONNREFUSED)
                return dp_negative_errno();
        if (unlink(path) < 0 && errno != ENOENT)
                return dp_negative_errno();
        return 0;
}

static int lookup_group(const char *name, gid_t *ret) {
        _cleanup_free_ char *buf = NULL;
        size_t size = 1024;

        for (;;) {
                struct group grp, *result = NULL;
                int r;

                free(buf);
                buf = malloc(size);
                if (!buf)
                        return -ENOMEM;
                r = getgrnam_r(name, &grp, buf, size, &result);
                if (r == ERANGE && size < 1024 * 1024) {
                        size *= 2;
                        continue;
                }
                if (r != 0)
                        return -r;
                if (!result)
                        return -ESRCH;
                *ret = result->gr_gid;
                return 0;
        }
}

int dp_varlink_socket_bind(const char *path, mode_t mode, const char *group, int *ret_fd, ino_t *ret_inode) {
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa;
        socklen_t len;
        gid_t gid = (gid_t) -1;
        struct stat st;
        int r;

        r = make_address(path, &sa, &len);
        if (r < 0)
                return r;
        if (group) {
                r = lookup_group(group, &gid);
                if (r < 0)
                        return r;
        }
        r = make_parents(path);
        if (r < 0)
                return r;
        r = remove_stale(path, &sa, len);
        if (r < 0)
                return r;

        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return dp_negative_errno();
        if (bind(fd, (struct sockaddr *) &sa, len) < 0)
                return errno == EADDRINUSE ? -EADDRINUSE : dp_negative_errno();

        /* bind() created the file by the umask; set what was asked for. */
        if (chmod(path, mode) < 0 || (group && chown(path, (uid_t) -1, gid) < 0) ||
            stat(path, &st) < 0 || listen(fd, DP_VARLINK_SOCKET_BACKLOG) < 0) {
                r = dp_negative_errno();
                (void) unlink(path);
                return r;
        }

        *ret_fd = DP_TAKE_FD(fd);
        *ret_inode = st.st_ino;
        return 0;
}

int dp_varlink_socket_unlink(const char *path, ino_t inode) {
        struct stat st;

        if (lstat(path, &st) < 0)
                return dp_negative_errno();
        if (!S_ISSOCK(st.st_mode) || st.st_ino != inode)
                return -ESTALE;
        if (unlink(path) < 0)
                return dp_negative_errno();
        return 0;
}
