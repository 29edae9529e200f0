/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* procfs and sysfs files of interest are far below this; anything larger is refused. */
#define DP_READ_FILE_MAX (64u * 1024u * 1024u)

/*
 * Reads the whole of @path (procfs files report size 0, so this reads to
 * EOF) into a malloc()ed, NUL-terminated buffer; *ret_len excludes the NUL.
 * -EFBIG if it holds more than DP_READ_FILE_MAX bytes; -ELOOP if @path
 * itself is a symlink (nobody should slip one into /run or /proc paths);
 * otherwise the open()/read() errno.
 */
int dp_read_file(const char *path, char **ret_buf, size_t *ret_len);
