/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * varlink messages (https://varlink.org/Method-Call): one JSON object per
 * message, terminated by a NUL byte on the wire.
 *
 *   call:  {"method": "iface.Method", "parameters"?: {}, "oneway"?: bool,
 *           "more"?: bool, "upgrade"?: bool}
 *   reply: {"parameters"?: {}, "continues"?: bool, "error"?: "iface.Error"}
 *
 * Parsing is strict, as systemd's sd-varlink is: any other key, a key twice,
 * a value of the wrong type, a method that is not a qualified name, or two of
 * oneway/more/upgrade set at once is a protocol error (-EBADMSG), after which
 * the connection is closed without a reply.  "parameters": null counts as
 * absent (the spec types it ?object).
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Largest message, in JSON bytes without the terminating NUL (systemd's). */
#define DP_VARLINK_MESSAGE_SIZE_MAX (16u * 1024u * 1024u)

#define DP_VARLINK_SERVICE_INTERFACE "org.varlink.service"

/* The standard errors of org.varlink.service, with their one parameter. */
#define DP_VARLINK_ERROR_INTERFACE_NOT_FOUND "org.varlink.service.InterfaceNotFound"      /* interface */
#define DP_VARLINK_ERROR_METHOD_NOT_FOUND "org.varlink.service.MethodNotFound"            /* method */
#define DP_VARLINK_ERROR_METHOD_NOT_IMPLEMENTED "org.varlink.service.MethodNotImplemented" /* method */
#define DP_VARLINK_ERROR_INVALID_PARAMETER "org.varlink.service.InvalidParameter"         /* parameter */
#define DP_VARLINK_ERROR_PERMISSION_DENIED "org.varlink.service.PermissionDenied"
#define DP_VARLINK_ERROR_EXPECTED_MORE "org.varlink.service.ExpectedMore"
/* What a handler's errno becomes when it fails without replying: systemd's
 * generic error, {"errno": N}, which varlinkctl and sd-varlink understand. */
#define DP_VARLINK_ERROR_SYSTEM "io.systemd.System"

struct dp_varlink_call_message {
        char *method;           /* "iface.Method" */
        json_t *parameters;     /* always an object after a successful parse */
        bool oneway;
        bool more;
        bool upgrade;
};

struct dp_varlink_reply_message {
        json_t *parameters;     /* always an object after a successful parse */
        char *error;            /* NULL, or the qualified error name */
        bool continues;
};

void dp_varlink_call_message_done(struct dp_varlink_call_message *m);
void dp_varlink_reply_message_done(struct dp_varlink_reply_message *m);

/* Parses one message of size bytes (without its NUL; text need not be
 * NUL-terminated).  Returns 0, -EBADMSG for a protocol error (*ret_reason
 * then says why, a static string; ret_reason may be NULL), -EMSGSIZE if
 * size exceeds DP_VARLINK_MESSAGE_SIZE_MAX, or -ENOMEM.  *ret is untouched
 * on failure. */
int dp_varlink_call_message_parse(const char *text, size_t size, struct dp_varlink_call_message *ret,
                                  const char **ret_reason);
int dp_varlink_reply_message_parse(const char *text, size_t size, struct dp_varlink_reply_message *ret,
                                   const char **ret_reason);

/* Serialise a message, compact, with its terminating NUL: *ret (malloc'd)
 * holds *ret_size bytes, the last being the NUL.  parameters is borrowed;
 * NULL omits the key.  -EINVAL for a bad method/error name, parameters that
 * are not an object, or flags that exclude each other; -EMSGSIZE if the
 * result would exceed DP_VARLINK_MESSAGE_SIZE_MAX; -ENOMEM. */
int dp_varlink_call_message_format(const char *method, json_t *parameters, bool oneway, bool more,
                                   char **ret, size_t *ret_size);
int dp_varlink_reply_message_format(json_t *parameters, const char *error, bool continues,
                                    char **ret, size_t *ret_size);

/* Names (https://varlink.org/Interface-Definition). */
/* Reverse-domain: letters, digits and inner dashes in two or more dot-separated
 * labels, starting with a letter, e.g. "io.damon.perfd". */
bool dp_varlink_interface_name_is_valid(const char *name);
/* A type, method or error name: [A-Z][A-Za-z0-9]*. */
bool dp_varlink_member_name_is_valid(const char *name);
/* A field or enum value: a letter, then letters/digits, single inner '_'. */
bool dp_varlink_field_name_is_valid(const char *name);
/* "interface.Member" with both parts valid. */
bool dp_varlink_qualified_name_is_valid(const char *name);
/* Length of the interface part of a valid qualified name (up to the last dot). */
size_t dp_varlink_qualified_name_interface_length(const char *name);
