/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "varlink-idl.h"
#include "varlink-service.h"
#include "dp-config.h"

struct interface_entry {
        char *text;
        struct dp_varlink_interface *idl;
};

struct binding {
        char *method;
        dp_varlink_method_t handler;
        unsigned flags;
};

struct dp_varlink_service {
        struct interface_entry *interfaces;
        size_t n_interfaces;
        struct binding *bindings;
        size_t n_bindings;
        char *info[4];                  /* vendor, product, version, url */
        void *userdata;
        bool validate_replies;
};

struct dp_varlink_call {
        struct dp_varlink_service *service;
        struct dp_varlink_peer *peer;   /* NULL once the call is gone for the handler */
        char *method;
        const struct dp_varlink_member *member;
        bool more;
        bool oneway;
        bool finished;                  /* final reply sent, or connection lost */
        bool in_handler;                /* then freed when the handler returns */
        bool closing;                   /* inside the disconnect handler */
        dp_varlink_disconnect_t disconnect;
        void *disconnect_userdata;
};

static const struct interface_entry *interface_find(const struct dp_varlink_service *s, const char *name, size_t n) {
        for (size_t i = 0; i < s->n_interfaces; i++)
                if (strlen(s->interfaces[i].idl->name) == n && strncmp(s->interfaces[i].idl->name, name, n) == 0)
                        return &s->interfaces[i];
        return NULL;
}

/* The IDL member a qualified name refers to, or NULL. */
static const struct dp_varlink_member *member_find(const struct dp_varlink_service *s, const char *qualified,
                                                   enum dp_varlink_member_kind kind) {
        size_t n = dp_varlink_qualified_name_interface_length(qualified);
        const struct interface_entry *iface = n ? interface_find(s, qualified, n) : NULL;

        return iface ? dp_varlink_interface_find(iface->idl, kind, qualified + n + 1) : NULL;
}

static const struct binding *binding_find(const struct dp_varlink_service *s, const char *method) {
        for (size_t i = 0; i < s->n_bindings; i++)
                if (strcmp(s->bindings[i].method, method) == 0)
                        return &s->bindings[i];
        return NULL;
}

/* ---- replies ---- */

static void call_free(struct dp_varlink_call *call) {
        free(call->method);
        free(call);
}

/* The call had its final reply: no disconnect handler will run. */
static void call_finish(struct dp_varlink_call *call) {
        if (call->peer && call->peer->call == call)
                call->peer->call = NULL;
        call->peer = NULL;
        call->finished = true;
        if (!call->in_handler)
                call_free(call);
}

/* With validate_replies: a reply must match the method's output, an error
 * of a known interface that error's parameters. */
static int check_reply(const struct dp_varlink_call *call, json_t *parameters, const char *error) {
        const struct dp_varlink_member *m = call->member;
        json_t *empty = NULL;
        const char *bad = NULL;
        int r = 0;

        if (error) {
                size_t n = dp_varlink_qualified_name_interface_length(error);

                m = member_find(call->service, error, DP_VARLINK_MEMBER_ERROR);
                if (!m && interface_find(call->service, error, n))
                        r = -EINVAL;            /* a known interface without that error */
        }
        if (r >= 0 && m) {
                if (!parameters)
                        parameters = empty = json_object();
                r = error ? dp_varlink_idl_validate_error(m, parameters, &bad)
                          : dp_varlink_idl_validate_reply(m, parameters, &bad);
                json_decref(empty);
        }
        return r < 0 ? -EBADMSG : 0;
}

static void peer_wake(struct dp_varlink_peer *peer) {
        if (peer->wake)
                peer->wake(peer, peer->wake_userdata);
}

static int call_send(struct dp_varlink_call *call, json_t *parameters, const char *error, bool continues) {
        struct dp_varlink_peer *peer;
        int r;

        if (!call || (parameters && !json_is_object(parameters)) ||
            (error && !dp_varlink_qualified_name_is_valid(error)) || (error && continues))
                return -EINVAL;
        if (call->finished)
                return -EALREADY;
        if (call->closing)
                return -ECONNRESET;
        if (continues && !call->more)
                return -EINVAL;
        if (call->oneway) {
                if (!continues)
                        call->finished = true;
                return 0;
        }
        if (call->service->validate_replies) {
                r = check_reply(call, parameters, error);
                if (r < 0)
                        return r;
        }

        /* A failing peer is closed from the event loop, and the disconnect
         * handler runs then: never from inside a reply, where the caller may
         * be walking its own list of calls. */
        peer = call->peer;
        if (peer->failed)
                return -ECONNRESET;

        r = dp_varlink_connection_reply(peer->connection, parameters, error, continues);
        if (r == -EINVAL || r == -EMSGSIZE)
                return r;
        if (r < 0) {
                peer->failed = true;
                peer_wake(peer);
                return r;
        }

        if (!continues)
                call_finish(call);
        peer_wake(peer);
        return 0;
}

int dp_varlink_call_reply(struct dp_varlink_call *call, json_t *parameters) {
        return call_send(call, parameters, NULL, false);
}

int dp_varlink_call_reply_continues(struct dp_varlink_call *call, json_t *parameters) {
        return call_send(call, parameters, NULL, true);
}

int dp_varlink_call_reply_error(struct dp_varlink_call *call, const char *error, json_t *parameters) {
        if (!error)
                return -EINVAL;
        return call_send(call, parameters, error, false);
}

static int reply_error_string(struct dp_varlink_call *call, const char *error, const char *key, const char *value) {
        json_t *p = json_pack("{s:s}", key, value);
        int r;

        if (!p)
                return -ENOMEM;
        r = call_send(call, p, error, false);
        json_decref(p);
        return r;
}

int dp_varlink_call_reply_invalid_parameter(struct dp_varlink_call *call, const char *parameter) {
        if (!parameter)
                return -EINVAL;
        return reply_error_string(call, DP_VARLINK_ERROR_INVALID_PARAMETER, "parameter", parameter);
}

int dp_varlink_call_reply_permission_denied(struct dp_varlink_call *call) {
        return call_send(call, NULL, DP_VARLINK_ERROR_PERMISSION_DENIED, false);
}

int dp_varlink_call_reply_errno(struct dp_varlink_call *call, int error) {
        json_t *p = json_pack("{s:i}", "errno", error < 0 ? -error : error);
        int r;

        if (!p)
                return -ENOMEM;
        r = call_send(call, p, DP_VARLINK_ERROR_SYSTEM, false);
        json_decref(p);
        return r;
}

const char *dp_varlink_call_get_method(const struct dp_varlink_call *call) {
        return call->method;
}

bool dp_varlink_call_wants_more(const struct dp_varlink_call *call) {
        return call->more;
}

bool dp_varlink_call_is_oneway(const struct dp_varlink_call *call) {
        return call->oneway;
}

int dp_varlink_call_get_peer(const struct dp_varlink_call *call, uid_t *ret_uid, gid_t *ret_gid, pid_t *ret_pid) {
        if (!call->peer)
                return -ENOTCONN;
        if (ret_uid)
                *ret_uid = call->peer->uid;
        if (ret_gid)
                *ret_gid = call->peer->gid;
        if (ret_pid)
                *ret_pid = call->peer->pid;
        return 0;
}

void dp_varlink_call_set_disconnect_handler(struct dp_varlink_call *call, dp_varlink_disconnect_t cb,
                                            void *userdata) {
        call->disconnect = cb;
        call->disconnect_userdata = userdata;
}

/* ---- org.varlink.service ---- */

static int builtin_get_info(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        struct dp_varlink_service *s = call->service;
        json_t *interfaces, *reply;
        int r;

        (void) parameters;
        (void) userdata;
        interfaces = json_array();
        if (!interfaces)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_interfaces; i++)
                if (json_array_append_new(interfaces, json_string(s->interfaces[i].idl->name)) < 0) {
                        json_decref(interfaces);
                        return -ENOMEM;
                }
        reply = json_pack("{s:s, s:s, s:s, s:s, s:o}", "vendor", s->info[0], "product", s->info[1],
                          "version", s->info[2], "url", s->info[3], "interfaces", interfaces);
        if (!reply)
                return -ENOMEM;
        r = dp_varlink_call_reply(call, reply);
        json_decref(reply);
        return r;
}

static int builtin_get_interface_description(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        const char *name = json_string_value(json_object_get(parameters, "interface"));
        const struct interface_entry *iface;
        json_t *reply;
        int r;

        (void) userdata;
        iface = interface_find(call->service, name, strlen(name));
        if (!iface)
                return reply_error_string(call, DP_VARLINK_ERROR_INTERFACE_NOT_FOUND, "interface", name);
        reply = json_pack("{s:s}", "description", iface->text);
        if (!reply)
                return -ENOMEM;
        r = dp_varlink_call_reply(call, reply);
        json_decref(reply);
        return r;
}

/* ---- dispatch ---- */

/* Standard errors in the order systemd checks: unknown interface, unknown
 * method, no handler, missing "more", invalid parameters. */
static int route(struct dp_varlink_service *s, struct dp_varlink_call *call, const struct dp_varlink_call_message *m) {
        size_t n = dp_varlink_qualified_name_interface_length(m->method);
        const struct binding *b;
        const char *bad = NULL;
        int r;

        if (!interface_find(s, m->method, n)) {
                _cleanup_free_ char *name = strndup(m->method, n);

                return name ? reply_error_string(call, DP_VARLINK_ERROR_INTERFACE_NOT_FOUND, "interface", name)
                            : -ENOMEM;
        }
        if (!call->member)
                return reply_error_string(call, DP_VARLINK_ERROR_METHOD_NOT_FOUND, "method", m->method);
        b = binding_find(s, m->method);
        if (!b)
                return reply_error_string(call, DP_VARLINK_ERROR_METHOD_NOT_IMPLEMENTED, "method", m->method);
        if (m->upgrade)
                /* No method here takes the connection over. */
                return dp_varlink_call_reply_invalid_parameter(call, "upgrade");
        if ((b->flags & DP_VARLINK_METHOD_REQUIRES_MORE) && !m->more)
                return call_send(call, NULL, DP_VARLINK_ERROR_EXPECTED_MORE, false);
        if (dp_varlink_idl_validate_call(call->member, m->parameters, &bad) < 0)
                return dp_varlink_call_reply_invalid_parameter(call, bad ?: "parameters");

        r = b->handler(call, m->parameters, s->userdata);
        if (r < 0 && !call->finished)
                r = dp_varlink_call_reply_errno(call, r);
        return r;
}

void dp_varlink_service_dispatch(struct dp_varlink_service *s, struct dp_varlink_peer *peer,
                                 const struct dp_varlink_call_message *m) {
        struct dp_varlink_call *call;
        int r;

        call = calloc(1, sizeof(*call));
        if (!call || !(call->method = strdup(m->method))) {
                free(call);
                peer->failed = true;    /* cannot answer in order any more */
                return;
        }
        call->service = s;
        call->peer = peer;
        call->more = m->more;
        call->oneway = m->oneway;
        call->in_handler = true;
        call->member = member_find(s, m->method, DP_VARLINK_MEMBER_METHOD);
        if (!call->oneway)
                peer->call = call;

        r = route(s, call, m);
        if (r < 0 && !call->finished)
                peer->failed = true;    /* could not even send an error */

        call->in_handler = false;
        if (call->finished || call->oneway) {
                if (peer->call == call)
                        peer->call = NULL;
                call_free(call);
        }
}

void dp_varlink_service_disconnect(struct dp_varlink_service *s, struct dp_varlink_peer *peer) {
        struct dp_varlink_call *call = DP_TAKE_PTR(peer->call);

        if (!call)
                return;
        /* The handler may still hold the open call: tell it, once. */
        call->closing = true;
        if (call->disconnect)
                call->disconnect(call, call->disconnect_userdata ?: s->userdata);
        call->peer = NULL;
        call->finished = true;
        if (!call->in_handler)
                call_free(call);
}

/* ---- setup ---- */

int dp_varlink_service_add_interface(struct dp_varlink_service *s, const char *idl_text,
                                     struct dp_varlink_idl_error *ret_error) {
        struct dp_varlink_interface *idl = NULL;
        struct interface_entry *entries;
        char *text;
        int r;

        r = dp_varlink_idl_parse(idl_text, &idl, ret_error);
        if (r < 0)
                return r;
        if (interface_find(s, idl->name, strlen(idl->name))) {
                dp_varlink_interface_free(idl);
                return -EEXIST;
        }

        text = strdup(idl_text);
        entries = realloc(s->interfaces, (s->n_interfaces + 1) * sizeof(*entries));
        if (entries)
                s->interfaces = entries;
        if (!text || !entries) {
                free(text);
                dp_varlink_interface_free(idl);
                return -ENOMEM;
        }
        s->interfaces[s->n_interfaces++] = (struct interface_entry) { .text = text, .idl = idl };
        return 0;
}

static int bind_one(struct dp_varlink_service *s, const struct dp_varlink_method_binding *b) {
        struct binding *bindings;
        char *method;

        if (!b->method || !b->handler || !dp_varlink_qualified_name_is_valid(b->method) ||
            (b->flags & ~(unsigned) DP_VARLINK_METHOD_REQUIRES_MORE))
                return -EINVAL;
        if (!member_find(s, b->method, DP_VARLINK_MEMBER_METHOD))
                return -ENOENT;
        if (binding_find(s, b->method))
                return -EEXIST;

        method = strdup(b->method);
        bindings = realloc(s->bindings, (s->n_bindings + 1) * sizeof(*bindings));
        if (bindings)
                s->bindings = bindings;
        if (!method || !bindings) {
                free(method);
                return -ENOMEM;
        }
        s->bindings[s->n_bindings++] = (struct binding) { .method = method, .handler = b->handler, .flags = b->flags };
        return 0;
}

int dp_varlink_service_bind(struct dp_varlink_service *s, const struct dp_varlink_method_binding *bindings,
                            size_t n, size_t *ret_failed) {
        for (size_t i = 0; i < n; i++) {
                int r = bind_one(s, &bindings[i]);

                if (r < 0) {
                        if (ret_failed)
                                *ret_failed = i;
                        return r;
                }
        }
        return 0;
}

void dp_varlink_service_set_userdata(struct dp_varlink_service *s, void *userdata) {
        s->userdata = userdata;
}

void dp_varlink_service_set_validate_replies(struct dp_varlink_service *s, bool validate) {
        s->validate_replies = validate;
}

int dp_varlink_service_set_info(struct dp_varlink_service *s, const char *vendor, const char *product,
                                const char *version, const char *url) {
        const char *values[DP_ARRAY_SIZE(s->info)] = { vendor, product, version, url };
        char *copies[DP_ARRAY_SIZE(s->info)] = {};

        for (size_t i = 0; i < DP_ARRAY_SIZE(values); i++)
                if (values[i] && !(copies[i] = strdup(values[i]))) {
                        for (size_t j = 0; j < i; j++)
                                free(copies[j]);
                        return -ENOMEM;
                }
        for (size_t i = 0; i < DP_ARRAY_SIZE(values); i++)
                if (copies[i]) {
                        free(s->info[i]);
                        s->info[i] = copies[i];
                }
        return 0;
}

int dp_varlink_service_new(struct dp_varlink_service **ret) {
        static const struct dp_varlink_method_binding builtins[] = {
                { "org.varlink.service.GetInfo", builtin_get_info, 0 },
                { "org.varlink.service.GetInterfaceDescription", builtin_get_interface_description, 0 },
        };
        struct dp_varlink_service *s;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        r = dp_varlink_service_set_info(s, "damon-perfd", "damon-perfd", DP_VERSION, "");
        if (r >= 0)
                r = dp_varlink_service_add_interface(s, dp_varlink_org_varlink_service_idl, NULL);
        if (r >= 0)
                r = dp_varlink_service_bind(s, builtins, DP_ARRAY_SIZE(builtins), NULL);
        if (r < 0) {
                dp_varlink_service_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

struct dp_varlink_service *dp_varlink_service_free(struct dp_varlink_service *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_interfaces; i++) {
                free(s->interfaces[i].text);
                dp_varlink_interface_free(s->interfaces[i].idl);
        }
        free(s->interfaces);
        for (size_t i = 0; i < s->n_bindings; i++)
                free(s->bindings[i].method);
        free(s->bindings);
        for (size_t i = 0; i < DP_ARRAY_SIZE(s->info); i++)
                free(s->info[i]);
        free(s);
        return NULL;
}
