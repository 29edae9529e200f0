/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The varlink interface definition language
 * (https://varlink.org/Interface-Definition), parsed into a small model so
 * that a server can list an interface's methods and check call parameters
 * and replies against it.
 *
 *   interface io.example.thing
 *   type Name (field: T, ...)   or   type Name (value, value, ...)
 *   method Name (field: T, ...) -> (field: T, ...)
 *   error Name (field: T, ...)
 *
 * T is bool, int, float, string, object, a type Name, an inline (struct) or
 * (enum), []T, [string]T, or ?T (nullable: may be null or absent).  "#"
 * starts a comment to the end of the line; the comments right before a
 * declaration or field are its documentation.
 */

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum dp_varlink_type_kind {
        DP_VARLINK_TYPE_BOOL,
        DP_VARLINK_TYPE_INT,
        DP_VARLINK_TYPE_FLOAT,
        DP_VARLINK_TYPE_STRING,
        DP_VARLINK_TYPE_OBJECT,         /* any JSON object */
        DP_VARLINK_TYPE_NAMED,          /* a "type" member of the interface */
        DP_VARLINK_TYPE_STRUCT,
        DP_VARLINK_TYPE_ENUM,
        DP_VARLINK_TYPE_ARRAY,          /* []element */
        DP_VARLINK_TYPE_MAP,            /* [string]element */
};

struct dp_varlink_field;
struct dp_varlink_member;

struct dp_varlink_type {
        enum dp_varlink_type_kind kind;
        bool nullable;
        unsigned line;                                  /* where it was written */
        struct dp_varlink_type *element;                /* ARRAY, MAP */
        char *name;                                     /* NAMED */
        const struct dp_varlink_member *resolved;       /* NAMED: the "type" member */
        struct dp_varlink_field *fields;                /* STRUCT */
        size_t n_fields;
        char **values;                                  /* ENUM */
        size_t n_values;
};

struct dp_varlink_field {
        char *name;
        char *doc;                      /* NULL if undocumented */
        struct dp_varlink_type *type;
};

enum dp_varlink_member_kind {
        DP_VARLINK_MEMBER_TYPE,
        DP_VARLINK_MEMBER_METHOD,
        DP_VARLINK_MEMBER_ERROR,
};

struct dp_varlink_member {
        enum dp_varlink_member_kind kind;
        char *name;
        char *doc;
        unsigned line;
        struct dp_varlink_type *type;   /* TYPE: struct or enum; ERROR: struct */
        struct dp_varlink_type *input;  /* METHOD: structs */
        struct dp_varlink_type *output;
};

struct dp_varlink_interface {
        char *name;
        char *doc;
        struct dp_varlink_member *members;      /* in declaration order */
        size_t n_members;
};

/* Where and why parsing failed; line and column count from 1. */
struct dp_varlink_idl_error {
        unsigned line;
        unsigned column;
        char message[160];
};

/* Parses a whole .varlink text.  Returns 0, -EINVAL for a syntax or
 * consistency error (described in *ret_error if not NULL: unknown or
 * duplicate names, bad identifiers, references to undefined types), or
 * -ENOMEM. */
int dp_varlink_idl_parse(const char *text, struct dp_varlink_interface **ret,
                         struct dp_varlink_idl_error *ret_error);

struct dp_varlink_interface *dp_varlink_interface_free(struct dp_varlink_interface *interface);

static inline void dp_varlink_interface_freep(struct dp_varlink_interface **i) {
        dp_varlink_interface_free(*i);
}
#define _cleanup_varlink_interface_ __attribute__((cleanup(dp_varlink_interface_freep)))

/* The member with that (unqualified) name and kind, or NULL. */
const struct dp_varlink_member *dp_varlink_interface_find(const struct dp_varlink_interface *interface,
                                                          enum dp_varlink_member_kind kind, const char *name);

/* Checks a JSON object against a struct type (a method's input or output,
 * an error's parameters).  Returns 0 if it conforms, -EINVAL if not, with
 * *ret_bad_field (if not NULL) naming the offending top-level field: one
 * that is unknown, missing though not nullable, or of the wrong type
 * (deeper mismatches are reported at the top-level field that holds them).
 * The name points into the type or into object. */
int dp_varlink_idl_validate_struct(const struct dp_varlink_type *struct_type, json_t *object,
                                   const char **ret_bad_field);

/* Convenience forms of the above. */
int dp_varlink_idl_validate_call(const struct dp_varlink_member *method, json_t *parameters,
                                 const char **ret_bad_field);
int dp_varlink_idl_validate_reply(const struct dp_varlink_member *method, json_t *parameters,
                                  const char **ret_bad_field);
int dp_varlink_idl_validate_error(const struct dp_varlink_member *error, json_t *parameters,
                                  const char **ret_bad_field);

/* The interfaces built into the library, verbatim. */
extern const char dp_varlink_org_varlink_service_idl[];       /* org.varlink.service */
extern const char dp_varlink_io_damon_perfd_idl[];            /* varlink/io.damon.perfd.varlink */
