/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Checks JSON values against varlink IDL types.  A nullable type accepts
 * null, and a nullable struct field may also be absent.  int means a JSON
 * integer; float any JSON number. */

#include <errno.h>
#include <string.h>

#include "varlink-idl.h"

static bool value_conforms(const struct dp_varlink_type *t, json_t *v);

static bool struct_conforms(const struct dp_varlink_type *t, json_t *object, const char **ret_bad_field) {
        const char *key;
        json_t *value;

        if (!json_is_object(object))
                return false;

        json_object_foreach(object, key, value) {
                bool known = false;

                for (size_t i = 0; i < t->n_fields; i++)
                        if (strcmp(t->fields[i].name, key) == 0) {
                                known = true;
                                break;
                        }
                if (!known) {
                        if (ret_bad_field)
                                *ret_bad_field = key;
                        return false;
                }
        }

        for (size_t i = 0; i < t->n_fields; i++) {
                const struct dp_varlink_field *f = &t->fields[i];

                value = json_object_get(object, f->name);
                if (!value_conforms(f->type, value ?: json_null())) {
                        if (ret_bad_field)
                                *ret_bad_field = f->name;
                        return false;
                }
        }
        return true;
}

static bool enum_conforms(const struct dp_varlink_type *t, json_t *v) {
        if (!json_is_string(v))
                return false;
        for (size_t i = 0; i < t->n_values; i++)
                if (strcmp(t->values[i], json_string_value(v)) == 0)
                        return true;
        return false;
}

/* Recursion follows the JSON value, whose depth jansson bounds (2048). */
static bool value_conforms(const struct dp_varlink_type *t, json_t *v) {
        size_t index;
        const char *key;
        json_t *element;

        if (json_is_null(v))
                return t->nullable;

        switch (t->kind) {
        case DP_VARLINK_TYPE_BOOL:
                return json_is_boolean(v);
        case DP_VARLINK_TYPE_INT:
                return json_is_integer(v);
        case DP_VARLINK_TYPE_FLOAT:
                return json_is_number(v);
        case DP_VARLINK_TYPE_STRING:
                return json_is_string(v);
        case DP_VARLINK_TYPE_OBJECT:
                return json_is_object(v);
        case DP_VARLINK_TYPE_NAMED:
                /* The definition is a struct or enum, never nullable itself;
                 * the reference's nullability was handled above. */
                return t->resolved && value_conforms(t->resolved->type, v);
        case DP_VARLINK_TYPE_STRUCT:
                return struct_conforms(t, v, NULL);
        case DP_VARLINK_TYPE_ENUM:
                return enum_conforms(t, v);
        case DP_VARLINK_TYPE_ARRAY:
                if (!json_is_array(v))
                        return false;
                json_array_foreach(v, index, element)
                        if (!value_conforms(t->element, element))
                                return false;
                return true;
        case DP_VARLINK_TYPE_MAP:
                if (!json_is_object(v))
                        return false;
                json_object_foreach(v, key, element)
                        if (!value_conforms(t->element, element))
                                return false;
                return true;
        }
        return false;
}

int dp_varlink_idl_validate_struct(const struct dp_varlink_type *struct_type, json_t *object,
                                   const char **ret_bad_field) {
        if (ret_bad_field)
                *ret_bad_field = NULL;
        if (!struct_type || struct_type->kind != DP_VARLINK_TYPE_STRUCT)
                return -EINVAL;
        return struct_conforms(struct_type, object, ret_bad_field) ? 0 : -EINVAL;
}

int dp_varlink_idl_validate_call(const struct dp_varlink_member *method, json_t *parameters,
                                 const char **ret_bad_field) {
        if (!method || method->kind != DP_VARLINK_MEMBER_METHOD)
                return -EINVAL;
        return dp_varlink_idl_validate_struct(method->input, parameters, ret_bad_field);
}

int dp_varlink_idl_validate_reply(const struct dp_varlink_member *method, json_t *parameters,
                                  const char **ret_bad_field) {
        if (!method || method->kind != DP_VARLINK_MEMBER_METHOD)
                return -EINVAL;
        return dp_varlink_idl_validate_struct(method->output, parameters, ret_bad_field);
}

int dp_varlink_idl_validate_error(const struct dp_varlink_member *error, json_t *parameters,
                                  const char **ret_bad_field) {
        if (!error || error->kind != DP_VARLINK_MEMBER_ERROR)
                return -EINVAL;
        return dp_varlink_idl_validate_struct(error->type, parameters, ret_bad_field);
}
