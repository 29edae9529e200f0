/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The server side of one varlink connection, without any I/O: the caller
 * feeds the bytes it read, takes complete calls out, queues replies, and
 * writes out the bytes this gives it.
 *
 * Ordering, as systemd's sd-varlink does it: one call at a time.  Once a
 * call (not oneway) is taken, no further call is handed out until its final
 * reply is queued (a reply without "continues", or an error), so replies to
 * pipelined calls always come in call order, and a streaming "more" call
 * holds back every later call on the connection until it ends.  A oneway
 * call has no reply and does not hold anything back.
 *
 * Limits: a message longer than max_message (without NUL) is a protocol
 * error (-EMSGSIZE); queued output beyond max_output fails the connection
 * (-ENOBUFS): a client that does not read is dropped instead of growing
 * memory without bound.  Input is bounded as long as the caller feeds only
 * while dp_varlink_connection_wants_input() (a complete message buffered
 * stops it); feeding more than DP_VARLINK_INPUT_SLACK past a full message
 * is refused with -ENOBUFS.
 *
 * After any error but -EMSGSIZE/-EINVAL from a reply, the connection is
 * failed: every later call returns that error, and the caller closes it.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "varlink-message.h"

/* Default bound on queued output: any single message always fits. */
#define DP_VARLINK_OUTPUT_MAX_DEFAULT ((size_t) DP_VARLINK_MESSAGE_SIZE_MAX + 1)
#define DP_VARLINK_INPUT_SLACK ((size_t) 64 * 1024)

struct dp_varlink_connection_limits {
        size_t max_message;     /* 0: DP_VARLINK_MESSAGE_SIZE_MAX */
        size_t max_output;      /* 0: DP_VARLINK_OUTPUT_MAX_DEFAULT */
};

struct dp_varlink_connection;

/* limits may be NULL for the defaults. */
int dp_varlink_connection_new(const struct dp_varlink_connection_limits *limits,
                              struct dp_varlink_connection **ret);
struct dp_varlink_connection *dp_varlink_connection_free(struct dp_varlink_connection *c);

/* Input.  feed: 0, -EMSGSIZE (a message outgrew max_message), -ENOBUFS (fed
 * far past wants_input()), -EPIPE (after feed_eof), -ENOMEM, or the error
 * that failed the connection earlier. */
int dp_varlink_connection_feed(struct dp_varlink_connection *c, const void *data, size_t size);
/* The peer will send nothing more (read() returned 0). */
void dp_varlink_connection_feed_eof(struct dp_varlink_connection *c);
/* True while reading more could complete a message: no complete message is
 * buffered, no EOF seen, not failed. */
bool dp_varlink_connection_wants_input(const struct dp_varlink_connection *c);
/* Bytes of an incomplete message are buffered. */
bool dp_varlink_connection_has_partial_input(const struct dp_varlink_connection *c);

/* Takes the next call.  Returns 1 with *ret filled (caller owns it, see
 * dp_varlink_call_message_done()), 0 if there is none to take now (nothing
 * complete yet, or a call is still in progress), or a protocol error:
 * -EBADMSG (bad message, or EOF inside a message; *ret_reason says which),
 * -EMSGSIZE; the connection is then failed and should be closed without
 * a reply. */
int dp_varlink_connection_take_call(struct dp_varlink_connection *c, struct dp_varlink_call_message *ret,
                                    const char **ret_reason);
/* A call that wants a reply was taken and has not had its final reply. */
bool dp_varlink_connection_call_in_progress(const struct dp_varlink_connection *c);
/* The call in progress asked for more. */
bool dp_varlink_connection_call_wants_more(const struct dp_varlink_connection *c);

/* Queues a reply to the call in progress: parameters (borrowed; NULL for
 * none), or an error name with its parameters; continues=true keeps the
 * call in progress (only for a call with more, never with an error).
 * Returns 0, -EBADE (no call in progress), -EINVAL (bad arguments, or
 * continues on a call without more), -EMSGSIZE (reply too large: nothing
 * queued, the call stays in progress), -ENOBUFS (output bound exceeded: the
 * connection is failed), -ENOMEM. */
int dp_varlink_connection_reply(struct dp_varlink_connection *c, json_t *parameters, const char *error,
                                bool continues);

/* Output: the bytes to write next (NULL, 0 if none), and how many were
 * written. */
const void *dp_varlink_connection_output(const struct dp_varlink_connection *c, size_t *ret_size);
void dp_varlink_connection_output_advance(struct dp_varlink_connection *c, size_t n);
size_t dp_varlink_connection_output_size(const struct dp_varlink_connection *c);

/* The connection failed (the error), or 0. */
int dp_varlink_connection_get_error(const struct dp_varlink_connection *c);

/* Nothing more will happen: EOF seen, nothing left to take, no call in
 * progress, no output left.  Time to close. */
bool dp_varlink_connection_is_finished(const struct dp_varlink_connection *c);
