/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A small blocking varlink client: one connection, one call at a time.
 *
 *   struct dp_varlink_client *c;
 *   json_t *reply;
 *   const char *error;
 *
 *   r = dp_varlink_client_connect("unix:/run/damon-perfd/io.damon.perfd", &c);
 *   r = dp_varlink_client_call(c, "io.damon.perfd.GetStats", NULL, 0, &reply, &error);
 *   if (r >= 0 && error) ... the call failed: error is its name, reply its parameters
 *
 * Streaming (more): dp_varlink_client_call() with DP_VARLINK_CALL_MORE returns 1
 * while the reply said "continues"; then dp_varlink_client_next() gives the
 * following replies, returning 1 while more follow and 0 for the last one.
 *
 * Return values: 0 or 1 as above, or a negative errno for transport and
 * protocol failures (the connection is then unusable, close it):
 *   -EINVAL     bad arguments (method name not "interface.Method", parameters
 *               not an object, ONEWAY together with MORE)
 *   -EBUSY      dp_varlink_client_call() while a streaming call still continues
 *   -ENOMSG     dp_varlink_client_next() without a call that continues
 *   -ETIMEDOUT  no complete reply within the timeout
 *   -ECONNRESET the server closed the connection
 *   -EBADMSG    the reply is not a valid varlink reply
 *   -EMSGSIZE   the reply exceeds DP_VARLINK_MESSAGE_SIZE_MAX
 *   -ENOTCONN   the connection already failed earlier
 * An error *reply* from the server is not a failure of the call: it returns
 * 0 with *ret_error set to the error name ("org.varlink.service.MethodNotFound",
 * "io.damon.perfd.NoSuchTarget", ...) and *ret_parameters to its parameters.
 */

#include <jansson.h>
#include <stdint.h>

#include "varlink-message.h"

#define DP_VARLINK_CLIENT_TIMEOUT_DEFAULT_USEC (45ULL * 1000000ULL)
#define DP_VARLINK_TIMEOUT_INFINITY UINT64_MAX

/* Flags for dp_varlink_client_call(). */
enum {
        DP_VARLINK_CALL_ONEWAY = 1u << 0,    /* no reply: returns 0 once sent */
        DP_VARLINK_CALL_MORE = 1u << 1,      /* ask for several replies ("continues") */
};

struct dp_varlink_client;

/* address is "unix:/path", "unix:@abstract" or a plain absolute path.  The
 * varlink ";mode=..." suffix of an address is ignored. */
int dp_varlink_client_connect(const char *address, struct dp_varlink_client **ret);

/* Wraps an already connected stream socket; takes ownership of fd (closed
 * by dp_varlink_client_free(), also on failure). */
int dp_varlink_client_new_from_fd(int fd, struct dp_varlink_client **ret);

/* Closes the connection.  Returns NULL; NULL is fine. */
struct dp_varlink_client *dp_varlink_client_free(struct dp_varlink_client *c);

static inline void dp_varlink_client_freep(struct dp_varlink_client **c) {
        dp_varlink_client_free(*c);
}
#define _cleanup_varlink_client_ __attribute__((cleanup(dp_varlink_client_freep)))

/* How long one reply may take, per reply (also per dp_varlink_client_next()).
 * DP_VARLINK_TIMEOUT_INFINITY waits forever.  Default:
 * DP_VARLINK_CLIENT_TIMEOUT_DEFAULT_USEC. */
int dp_varlink_client_set_timeout(struct dp_varlink_client *c, uint64_t usec);

/* Sends {"method": method, "parameters": parameters} and waits for the
 * first reply.  parameters is borrowed (not stolen); NULL sends no
 * parameters.  On success *ret_parameters gets a new reference to the
 * reply's (or error's) parameters object, {} if it had none; *ret_error the
 * error name or NULL, valid until the next call on c.  Either may be NULL
 * if the caller does not care.  With DP_VARLINK_CALL_ONEWAY both are set to
 * NULL and 0 is returned once the call is written.
 * Returns 1 if the reply said continues (call dp_varlink_client_next()), 0
 * for a final reply, or a negative errno (see above). */
int dp_varlink_client_call(struct dp_varlink_client *c, const char *method, json_t *parameters,
                           unsigned flags, json_t **ret_parameters, const char **ret_error);

/* The next reply of a call that continues.  Same outputs and return values
 * as dp_varlink_client_call(). */
int dp_varlink_client_next(struct dp_varlink_client *c, json_t **ret_parameters, const char **ret_error);

/* The socket, e.g. to poll() it together with other fds.  -ENOTCONN once the
 * connection failed. */
int dp_varlink_client_get_fd(struct dp_varlink_client *c);
