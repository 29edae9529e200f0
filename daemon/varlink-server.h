/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The varlink server on sd-event: listens on a unix stream socket, runs the
 * protocol (lib/varlink/varlink-connection.c) per connection, answers
 * org.varlink.service itself, checks every call's parameters against the
 * interface description, and hands the rest to the daemon's handlers.
 *
 * Calls, replies and handler rules: varlink-service.h.
 * Single-threaded: call everything from the sd_event loop's thread.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "varlink-service.h"

#define DP_VARLINK_SERVER_MAX_CONNECTIONS 4096u
#define DP_VARLINK_SERVER_MAX_CONNECTIONS_PER_UID 1024u
#define DP_VARLINK_SERVER_IDLE_TIMEOUT_USEC (45ULL * 1000000ULL)
#define DP_VARLINK_SERVER_SOCKET_PATH "/run/damon-perfd/io.damon.perfd"
#define DP_VARLINK_SERVER_FD_NAME "varlink"     /* FileDescriptorName= of the .socket unit */

struct dp_varlink_server;

/* Zero fields mean the defaults. */
struct dp_varlink_server_settings {
        unsigned max_connections;               /* DP_VARLINK_SERVER_MAX_CONNECTIONS */
        unsigned max_connections_per_uid;       /* DP_VARLINK_SERVER_MAX_CONNECTIONS_PER_UID */
        /* A connection with no call in progress is closed after this long
         * without a complete call (partial input does not extend it); a
         * client that never reads its replies is also closed then.
         * DP_VARLINK_SERVER_IDLE_TIMEOUT_USEC; UINT64_MAX: never. */
        uint64_t idle_timeout_usec;
        size_t max_message;                     /* DP_VARLINK_MESSAGE_SIZE_MAX */
        size_t max_output;                      /* per connection; DP_VARLINK_OUTPUT_MAX_DEFAULT */
        /* Check handlers' replies and errors against the IDL; a reply that
         * does not conform fails with -EBADMSG and is not sent.  For tests. */
        bool validate_replies;
};

/* settings may be NULL.  The server uses event (takes a reference). */
int dp_varlink_server_new(sd_event *event, const struct dp_varlink_server_settings *settings,
                          struct dp_varlink_server **ret);
/* Closes every connection (calling disconnect handlers of open calls), the
 * listening sockets, and removes a socket file it bound itself. */
struct dp_varlink_server *dp_varlink_server_free(struct dp_varlink_server *s);

static inline void dp_varlink_server_freep(struct dp_varlink_server **s) {
        dp_varlink_server_free(*s);
}
#define _cleanup_varlink_server_ __attribute__((cleanup(dp_varlink_server_freep)))

/* The service's setup functions (varlink-service.h), with errors logged. */
int dp_varlink_server_add_interface(struct dp_varlink_server *s, const char *idl_text);

int dp_varlink_server_bind(struct dp_varlink_server *s, const struct dp_varlink_method_binding *bindings,
                           size_t n);

void dp_varlink_server_set_userdata(struct dp_varlink_server *s, void *userdata);

int dp_varlink_server_set_info(struct dp_varlink_server *s, const char *vendor, const char *product,
                               const char *version, const char *url);

/* Listens on fd, a bound and listening unix stream socket (taken over,
 * also on failure). */
int dp_varlink_server_listen_fd(struct dp_varlink_server *s, int fd);

/* Binds path itself: creates the parent directories (0755), removes a stale
 * socket file only if nothing listens on it (-EADDRINUSE if something does,
 * -EEXIST if the path is not a socket), binds with mode (e.g. 0660) and,
 * if group is not NULL, that group (-ESRCH if there is no such group). */
int dp_varlink_server_listen_path(struct dp_varlink_server *s, const char *path, mode_t mode,
                                  const char *group);

/* Socket activation first: the fd named DP_VARLINK_SERVER_FD_NAME in
 * $LISTEN_FDNAMES (the environment is left as it is); else binds path
 * (NULL: DP_VARLINK_SERVER_SOCKET_PATH) with mode 0660 and group.
 * Returns 1 if it used an activated socket, 0 if it bound one. */
int dp_varlink_server_listen_auto(struct dp_varlink_server *s, const char *path, const char *group);

/* Serves an already connected socket, e.g. one end of a socketpair() in a
 * test (taken over, also on failure).  Its peer credentials count as
 * SO_PEERCRED says.  -EUSERS/-EDQUOT beyond the total/per-uid caps. */
int dp_varlink_server_add_connection(struct dp_varlink_server *s, int fd);

unsigned dp_varlink_server_n_connections(const struct dp_varlink_server *s);
