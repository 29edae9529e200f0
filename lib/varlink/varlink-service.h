/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The varlink service: the interfaces a server offers, the handlers bound to
 * their methods, and the routing of each call, without any I/O.  It answers
 * org.varlink.service itself, sends the standard errors, checks every
 * call's parameters against the interface description before a handler
 * sees them, and queues replies on the peer's dp_varlink_connection.  The
 * transport (daemon/varlink-server.c) owns sockets and peers.
 *
 * Handlers and calls:
 *   - A handler gets the call and its parameters (validated, borrowed:
 *     incref to keep them).  It answers with exactly one final reply:
 *     dp_varlink_call_reply(), or one of the _error forms.  On a call with
 *     "more" it may first send any number of dp_varlink_call_reply_continues().
 *   - It may answer later, outside the handler: return 0 without replying
 *     and keep the call pointer.  Register a disconnect handler with
 *     dp_varlink_call_set_disconnect_handler(): it runs once if the client
 *     goes away (or the server is freed) while the call is open, and the
 *     call is gone when it returns.  This is how Monitor streams.
 *   - The call is gone after a successful final reply: do not touch it
 *     afterwards.  Otherwise it stays valid until its disconnect handler
 *     has run, also when a reply fails because the connection is failing
 *     (-ENOBUFS, -ECONNRESET, -ENOMEM): the handler runs later, from the
 *     event loop, never from inside a reply function.  So keep the call in
 *     your list until the disconnect handler removes it; ignoring reply
 *     errors on a stream is fine.
 *   - A handler returning a negative errno without having replied makes the
 *     service answer io.systemd.System {"errno": N}.
 *   - A oneway call has no reply: reply functions on it succeed and send
 *     nothing; it ends when the handler returns.
 *   - One call at a time per connection (see varlink-connection.h): later
 *     pipelined calls wait until the open call's final reply.
 * Not thread-safe: use it from one thread (the event loop's).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "varlink-connection.h"
#include "varlink-idl.h"
#include "varlink-message.h"

struct dp_varlink_service;
struct dp_varlink_call;

typedef int (*dp_varlink_method_t)(struct dp_varlink_call *call, json_t *parameters, void *userdata);
typedef void (*dp_varlink_disconnect_t)(struct dp_varlink_call *call, void *userdata);

enum {
        /* Called without "more", the method gets ExpectedMore and the
         * handler is not called. */
        DP_VARLINK_METHOD_REQUIRES_MORE = 1u << 0,
};

struct dp_varlink_method_binding {
        const char *method;             /* qualified, e.g. "io.damon.perfd.GetStats" */
        dp_varlink_method_t handler;
        unsigned flags;                 /* DP_VARLINK_METHOD_* */
};

/* One client connection, as the transport sets it up. */
struct dp_varlink_peer {
        struct dp_varlink_connection *connection;
        uid_t uid;
        gid_t gid;
        pid_t pid;
        /* Called when replies were queued or the peer failed, so that the
         * transport writes them out (or closes) soon; never re-entered. */
        void (*wake)(struct dp_varlink_peer *peer, void *userdata);
        void *wake_userdata;
        /* Set by the service: a reply could not be queued (client not
         * reading, out of memory); the transport must close the peer. */
        bool failed;
        struct dp_varlink_call *call;   /* the open call; the service's */
};

int dp_varlink_service_new(struct dp_varlink_service **ret);
struct dp_varlink_service *dp_varlink_service_free(struct dp_varlink_service *s);

/* Adds an interface from its IDL text (copied; GetInterfaceDescription
 * returns it byte for byte).  -EINVAL if it does not parse (described in
 * *ret_error if not NULL), -EEXIST if that interface is already there.
 * org.varlink.service is always there. */
int dp_varlink_service_add_interface(struct dp_varlink_service *s, const char *idl_text,
                                     struct dp_varlink_idl_error *ret_error);

/* Each method must be declared by an added interface (-ENOENT) and bound
 * once (-EEXIST); -EINVAL for bad flags or names.  Stops at the first
 * failure; *ret_failed (if not NULL) is its index. */
int dp_varlink_service_bind(struct dp_varlink_service *s, const struct dp_varlink_method_binding *bindings,
                            size_t n, size_t *ret_failed);

/* Passed to handlers, and to disconnect handlers registered without one. */
void dp_varlink_service_set_userdata(struct dp_varlink_service *s, void *userdata);

/* GetInfo's answer; NULL keeps a field.  Defaults: vendor and product
 * "damon-perfd", version DP_VERSION, url "". */
int dp_varlink_service_set_info(struct dp_varlink_service *s, const char *vendor, const char *product,
                                const char *version, const char *url);

/* Check handlers' replies against the IDL: a non-conforming reply fails
 * with -EBADMSG and is not sent.  Off by default; for tests. */
void dp_varlink_service_set_validate_replies(struct dp_varlink_service *s, bool validate);

/* Routes one call just taken from peer->connection. */
void dp_varlink_service_dispatch(struct dp_varlink_service *s, struct dp_varlink_peer *peer,
                                 const struct dp_varlink_call_message *m);

/* The peer is going away: runs the disconnect handler of its open call. */
void dp_varlink_service_disconnect(struct dp_varlink_service *s, struct dp_varlink_peer *peer);

/* Replies.  parameters are borrowed (NULL: none).
 *   0          queued; after a final reply the call is gone
 *   -EINVAL    bad arguments, continues on a call without more
 *   -EMSGSIZE  reply larger than the message limit (nothing sent)
 *   -EBADMSG   reply does not match the IDL (with validate_replies)
 *   -EALREADY  the call had its final reply (seen only inside the handler)
 *   -ENOBUFS   the client does not read: output bound exceeded; closing
 *   -ECONNRESET the connection is closing
 * On the last two the disconnect handler follows (from the event loop). */
int dp_varlink_call_reply(struct dp_varlink_call *call, json_t *parameters);
int dp_varlink_call_reply_continues(struct dp_varlink_call *call, json_t *parameters);
int dp_varlink_call_reply_error(struct dp_varlink_call *call, const char *error, json_t *parameters);
int dp_varlink_call_reply_invalid_parameter(struct dp_varlink_call *call, const char *parameter);
int dp_varlink_call_reply_permission_denied(struct dp_varlink_call *call);
/* io.systemd.System {"errno": error} (error positive or negative). */
int dp_varlink_call_reply_errno(struct dp_varlink_call *call, int error);

const char *dp_varlink_call_get_method(const struct dp_varlink_call *call);
bool dp_varlink_call_wants_more(const struct dp_varlink_call *call);
bool dp_varlink_call_is_oneway(const struct dp_varlink_call *call);
/* The peer's credentials (SO_PEERCRED at accept); any may be NULL. */
int dp_varlink_call_get_peer(const struct dp_varlink_call *call, uid_t *ret_uid, gid_t *ret_gid, pid_t *ret_pid);

/* cb(call, userdata) runs once if the connection goes away while the call
 * is open; userdata NULL means the service's userdata. */
void dp_varlink_call_set_disconnect_handler(struct dp_varlink_call *call, dp_varlink_disconnect_t cb,
                                            void *userdata);
