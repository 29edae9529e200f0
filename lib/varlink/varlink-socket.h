/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The unix socket file a varlink server binds itself (when it is not
 * socket-activated). */

#include <sys/types.h>

/* Connections waiting to be accepted.  Small on purpose: a client opening
 * connections faster than the server takes them (one client always can) is
 * made to wait in connect() once this many wait, instead of queueing
 * thousands ahead of everyone else: at tens of microseconds each, SOMAXCONN's
 * 4096 kept a well-behaved client waiting a quarter of a second, 128 keep it
 * to a few milliseconds.  Blocking connects wait; sd-varlink's non-blocking
 * ones wait for POLLOUT. */
#define DP_VARLINK_SOCKET_BACKLOG 128

/* Creates path's parent directories (0755), removes a stale socket file at
 * path only if nothing listens on it, then binds a non-blocking, listening
 * unix stream socket there with mode and (if not NULL) group.
 * Returns 0 with *ret_fd and the socket file's *ret_inode (for
 * dp_varlink_socket_unlink()), or -EINVAL/-ENAMETOOLONG (bad path),
 * -EADDRINUSE (something listens), -EEXIST (path is not a socket),
 * -ESRCH (no such group), or another negative errno. */
int dp_varlink_socket_bind(const char *path, mode_t mode, const char *group, int *ret_fd, ino_t *ret_inode);

/* Removes path if it is still the socket file with that inode (not one a
 * successor bound since).  0, -ESTALE if it is another file, or -errno. */
int dp_varlink_socket_unlink(const char *path, ino_t inode);
