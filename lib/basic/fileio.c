/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"

int dp_read_file(const char *path, char **ret_buf, size_t *ret_len) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;

        if (!path || !ret_buf || !ret_len)
                return -EINVAL;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
        if (fd < 0)
                return dp_negative_errno();

        for (;;) {
                ssize_t n;

                if (len + 1 >= cap) {
                        /* Room for one byte past the limit, so an oversized file is noticed. */
                        size_t new_cap = DP_MIN(cap ? cap * 2 : 16384, (size_t) DP_READ_FILE_MAX + 2);
                        char *p;

                        if (cap == new_cap)
                                return -EFBIG;
                        p = realloc(buf, new_cap);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                        cap = new_cap;
                }

                n = read(fd, buf + len, cap - len - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return dp_negative_errno();
                }
                if (n == 0)
                        break;
                len += (size_t) n;
                if (len > DP_READ_FILE_MAX)
                        return -EFBIG;
        }

        buf[len] = '\0';
        *ret_buf = DP_TAKE_PTR(buf);
        *ret_len = len;
        return 0;
}
