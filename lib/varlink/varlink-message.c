/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "varlink-message.h"

static bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

static bool is_upper(char c) {
        return c >= 'A' && c <= 'Z';
}

static bool is_letter(char c) {
        return is_upper(c) || (c >= 'a' && c <= 'z');
}

static bool is_alnum(char c) {
        return is_letter(c) || (c >= '0' && c <= '9');
}

/* One label of an interface name: alphanumerics with dashes only between
 * them.  Returns the label's length, 0 if invalid. */
static size_t interface_label_length(const char *s) {
        size_t n = 0;

        if (!is_alnum(s[0]))
                return 0;
        while (is_alnum(s[n]) || s[n] == '-')
                n++;
        if (s[n - 1] == '-')
                return 0;
        return n;
}

bool dp_varlink_interface_name_is_valid(const char *name) {
        size_t labels = 0;

        if (!name || !is_letter(name[0]))
                return false;

        for (const char *p = name;; p++) {
                size_t n = interface_label_length(p);

                if (n == 0)
                        return false;
                labels++;
                p += n;
                if (*p == '\0')
                        break;
                if (*p != '.')
                        return false;
        }
        return labels >= 2;
}

bool dp_varlink_member_name_is_valid(const char *name) {
        if (!name || !is_upper(name[0]))
                return false;
        for (const char *p = name + 1; *p; p++)
                if (!is_alnum(*p))
                        return false;
        return true;
}

bool dp_varlink_field_name_is_valid(const char *name) {
        if (!name || !is_letter(name[0]))
                return false;
        for (const char *p = name + 1; *p; p++) {
                if (*p == '_') {
                        if (!is_alnum(p[1]))    /* not doubled, not last */
                                return false;
                        continue;
                }
                if (!is_alnum(*p))
                        return false;
        }
        return true;
}

size_t dp_varlink_qualified_name_interface_length(const char *name) {
        const char *dot = strrchr(name, '.');

        return dot ? (size_t) (dot - name) : 0;
}

bool dp_varlink_qualified_name_is_valid(const char *name) {
        _cleanup_free_ char *interface = NULL;
        size_t n;

        if (!name)
                return false;
        n = dp_varlink_qualified_name_interface_length(name);
        if (n == 0 || !dp_varlink_member_name_is_valid(name + n + 1))
                return false;
        interface = strndup(name, n);
        return interface && dp_varlink_interface_name_is_valid(interface);
}

void dp_varlink_call_message_done(struct dp_varlink_call_message *m) {
        free(m->method);
        json_decref(m->parameters);
        *m = (struct dp_varlink_call_message) {};
}

void dp_varlink_reply_message_done(struct dp_varlink_reply_message *m) {
        json_decref(m->parameters);
        free(m->error);
        *m = (struct dp_varlink_reply_message) {};
}

/* Parses text as exactly one JSON object.  Duplicate keys are a protocol
 * error: which of two values counts would be a guess. */
static int load_object(const char *text, size_t size, json_t **ret, const char **reason) {
        json_error_t error;
        json_t *v;

        if (size > DP_VARLINK_MESSAGE_SIZE_MAX) {
                *reason = "message too large";
                return -EMSGSIZE;
        }

        v = json_loadb(text, size, JSON_REJECT_DUPLICATES, &error);
        if (!v) {
                switch (json_error_code(&error)) {
                case json_error_out_of_memory:
                        *reason = "out of memory";
                        return -ENOMEM;
                case json_error_duplicate_key:
                        *reason = "duplicate key";
                        break;
                case json_error_wrong_type:
                        *reason = "message is not a JSON object";
                        break;
                default:
                        *reason = "message is not valid JSON";
                        break;
                }
                return -EBADMSG;
        }
        if (!json_is_object(v)) {
                json_decref(v);
                *reason = "message is not a JSON object";
                return -EBADMSG;
        }
        *ret = v;
        return 0;
}

/* "parameters": an object, or null for none.  Returns a new reference. */
static int take_parameters(json_t *value, json_t **ret, const char **reason) {
        if (json_is_null(value)) {
                *ret = json_object();
                return *ret ? 0 : -ENOMEM;
        }
        if (!json_is_object(value)) {
                *reason = "\"parameters\" is not an object";
                return -EBADMSG;
        }
        *ret = json_incref(value);
        return 0;
}

static int take_flag(json_t *value, const char *name, bool *flag, const char **reason) {
        if (!json_is_boolean(value)) {
                *reason = name;
                return -EBADMSG;
        }
        *flag = json_is_true(value);
        return 0;
}

/* A message without "parameters" has an empty object of them. */
static int default_parameters(json_t **parameters) {
        if (!*parameters)
                *parameters = json_object();
        return *parameters ? 0 : -ENOMEM;
}

int dp_varlink_call_message_parse(const char *text, size_t size, struct dp_varlink_call_message *ret,
                                  const char **ret_reason) {
        struct dp_varlink_call_message m = {};
        const char *reason_buf, **reason = ret_reason ?: &reason_buf;
        json_t *root = NULL, *value;
        const char *key;
        int r;

        r = load_object(text, size, &root, reason);
        if (r < 0)
                return r;

        json_object_foreach(root, key, value) {
                if (streq(key, "method")) {
                        if (!json_is_string(value) || !dp_varlink_qualified_name_is_valid(json_string_value(value))) {
                                *reason = "\"method\" is not a qualified method name";
                                r = -EBADMSG;
                                goto fail;
                        }
                        m.method = strdup(json_string_value(value));
                        if (!m.method) {
                                r = -ENOMEM;
                                goto fail;
                        }
                } else if (streq(key, "parameters"))
                        r = take_parameters(value, &m.parameters, reason);
                else if (streq(key, "oneway"))
                        r = take_flag(value, "\"oneway\" is not a boolean", &m.oneway, reason);
                else if (streq(key, "more"))
                        r = take_flag(value, "\"more\" is not a boolean", &m.more, reason);
                else if (streq(key, "upgrade"))
                        r = take_flag(value, "\"upgrade\" is not a boolean", &m.upgrade, reason);
                else {
                        *reason = "unknown key in call";
                        r = -EBADMSG;
                }
                if (r < 0)
                        goto fail;
        }

        if (!m.method) {
                *reason = "call without \"method\"";
                r = -EBADMSG;
                goto fail;
        }
        if (m.oneway + m.more + m.upgrade > 1) {
                *reason = "\"oneway\", \"more\" and \"upgrade\" exclude each other";
                r = -EBADMSG;
                goto fail;
        }
        r = default_parameters(&m.parameters);
        if (r < 0)
                goto fail;

        json_decref(root);
        *ret = m;
        return 0;

fail:
        json_decref(root);
        dp_varlink_call_message_done(&m);
        return r;
}

int dp_varlink_reply_message_parse(const char *text, size_t size, struct dp_varlink_reply_message *ret,
                                   const char **ret_reason) {
        struct dp_varlink_reply_message m = {};
        const char *reason_buf, **reason = ret_reason ?: &reason_buf;
        json_t *root = NULL, *value;
        const char *key;
        int r;

        r = load_object(text, size, &root, reason);
        if (r < 0)
                return r;

        json_object_foreach(root, key, value) {
                if (streq(key, "parameters"))
                        r = take_parameters(value, &m.parameters, reason);
                else if (streq(key, "continues"))
                        r = take_flag(value, "\"continues\" is not a boolean", &m.continues, reason);
                else if (streq(key, "error")) {
                        if (!json_is_string(value) || !dp_varlink_qualified_name_is_valid(json_string_value(value))) {
                                *reason = "\"error\" is not a qualified error name";
                                r = -EBADMSG;
                        } else {
                                m.error = strdup(json_string_value(value));
                                r = m.error ? 0 : -ENOMEM;
                        }
                } else {
                        *reason = "unknown key in reply";
                        r = -EBADMSG;
                }
                if (r < 0)
                        goto fail;
        }

        if (m.error && m.continues) {
                *reason = "error reply with \"continues\"";
                r = -EBADMSG;
                goto fail;
        }
        r = default_parameters(&m.parameters);
        if (r < 0)
                goto fail;

        json_decref(root);
        *ret = m;
        return 0;

fail:
        json_decref(root);
        dp_varlink_reply_message_done(&m);
        return r;
}

/* Serialises root and appends the NUL terminator. */
static int dump_message(json_t *root, char **ret, size_t *ret_size) {
        size_t n;
        char *buf;

        n = json_dumpb(root, NULL, 0, JSON_COMPACT);
        if (n == 0)
                return -ENOMEM;         /* jansson's only failure here */
        if (n > DP_VARLINK_MESSAGE_SIZE_MAX)
                return -EMSGSIZE;

        buf = malloc(n + 1);
        if (!buf)
                return -ENOMEM;
        if (json_dumpb(root, buf, n, JSON_COMPACT) != n) {
                free(buf);
                return -ENOMEM;
        }
        buf[n] = '\0';

        *ret = buf;
        *ret_size = n + 1;
        return 0;
}

static int set_new(json_t *root, const char *key, json_t *value) {
        return json_object_set_new(root, key, value) < 0 ? -ENOMEM : 0;
}

int dp_varlink_call_message_format(const char *method, json_t *parameters, bool oneway, bool more,
                                   char **ret, size_t *ret_size) {
        json_t *root;
        int r;

        if (!dp_varlink_qualified_name_is_valid(method) || (parameters && !json_is_object(parameters)) ||
            (oneway && more))
                return -EINVAL;

        root = json_object();
        if (!root)
                return -ENOMEM;

        r = set_new(root, "method", json_string(method));
        if (r >= 0 && parameters)
                r = set_new(root, "parameters", json_incref(parameters));
        if (r >= 0 && oneway)
                r = set_new(root, "oneway", json_true());
        if (r >= 0 && more)
                r = set_new(root, "more", json_true());
        if (r >= 0)
                r = dump_message(root, ret, ret_size);

        json_decref(root);
        return r;
}

int dp_varlink_reply_message_format(json_t *parameters, const char *error, bool continues,
                                    char **ret, size_t *ret_size) {
        json_t *root;
        int r = 0;

        if ((error && !dp_varlink_qualified_name_is_valid(error)) ||
            (parameters && !json_is_object(parameters)) || (error && continues))
                return -EINVAL;

        root = json_object();
        if (!root)
                return -ENOMEM;

        if (parameters)
                r = set_new(root, "parameters", json_incref(parameters));
        if (r >= 0 && continues)
                r = set_new(root, "continues", json_true());
        if (r >= 0 && error)
                r = set_new(root, "error", json_string(error));
        if (r >= 0)
                r = dump_message(root, ret, ret_size);

        json_decref(root);
        return r;
}
