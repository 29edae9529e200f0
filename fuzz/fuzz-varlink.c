/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for varlink message handling: the NUL framing and limits of a
 * connection (lib/varlink/varlink-connection.c), call and reply messages
 * (lib/varlink/varlink-message.c), the service's routing and reply checks against
 * the real io.damon.perfd interface (lib/varlink/varlink-service.c), and the IDL
 * parser and validator (lib/varlink-idl*.c).  Byte 0, bits 0-1, picks:
 *
 *   0  a connection: byte 1 sets the limits and options, then the rest is
 *      fed in pieces; each call taken is dispatched to stub handlers whose
 *      behaviour (reply, error, errno, stream, hold the call open, reply
 *      twice) comes from the bytes of a second stream, byte 2 onwards
 *   1  messages: the rest split on NUL, each parsed as a call and a reply
 *   2  an interface description: the rest as IDL text
 *   3  parameters: the rest split on NUL, the first piece naming a method of
 *      io.damon.perfd, each further piece JSON checked against its input,
 *      output and errors
 *
 * Invariants: what comes out of a connection is a sequence of NUL-ended
 * replies that parse, one final reply per call answered, in order, with the
 * standard error the call earned (unknown interface or method, missing
 * "more", parameters that do not match the IDL) or the handler's answer; a
 * protocol error fails the connection for good.  A message that parses
 * formats and parses back to the same.  A name validator agrees with the
 * grammar.  An interface that parses finds each of its members, and a
 * service takes it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "varlink-connection.h"
#include "varlink-idl.h"
#include "varlink-message.h"
#include "varlink-service.h"

#include "fuzz.h"


#define IFACE "io.damon.perfd"
#define OUTPUT_MAX (1u << 20)

static const char *const methods[] = {
        IFACE ".GetStats", IFACE ".GetCPUs",     IFACE ".GetTargets", IFACE ".GetRegions",
        IFACE ".Monitor",  IFACE ".GetDamonView", IFACE ".Reload",
};

/* ---- names ---- */

static bool upper(char c) {
        return c >= 'A' && c <= 'Z';
}

static bool alpha(char c) {
        return upper(c) || (c >= 'a' && c <= 'z');
}

static bool alnum(char c) {
        return alpha(c) || (c >= '0' && c <= '9');
}

/* The grammar of https://varlink.org/Interface-Definition, written out anew. */
static bool grammar_interface(const char *s, size_t n) {
        size_t labels = 0, i = 0;

        if (n == 0 || !alpha(s[0]))
                return false;
        while (i < n) {
                size_t start = i;

                while (i < n && (alnum(s[i]) || s[i] == '-'))
                        i++;
                if (i == start || s[start] == '-' || s[i - 1] == '-')
                        return false;
                labels++;
                if (i < n && (s[i] != '.' || ++i == n))
                        return false;
        }
        return labels >= 2;
}

static bool grammar_member(const char *s) {
        if (!upper(s[0]))
                return false;
        for (s++; *s; s++)
                if (!alnum(*s))
                        return false;
        return true;
}

static bool grammar_field(const char *s) {
        if (!alpha(s[0]))
                return false;
        for (s++; *s; s++)
                if (!(alnum(*s) || (*s == '_' && alnum(s[1]))))
                        return false;
        return true;
}

static void check_names(const char *s) {
        const char *dot = strrchr(s, '.');
        bool qualified = dot && grammar_interface(s, (size_t) (dot - s)) && grammar_member(dot + 1);

        CHECK(dp_varlink_interface_name_is_valid(s) == grammar_interface(s, strlen(s)));
        CHECK(dp_varlink_member_name_is_valid(s) == grammar_member(s));
        CHECK(dp_varlink_field_name_is_valid(s) == grammar_field(s));
        CHECK(dp_varlink_qualified_name_is_valid(s) == qualified);
        if (qualified)
                CHECK(dp_varlink_qualified_name_interface_length(s) == (size_t) (dot - s));
}

/* ---- messages ---- */

static void check_message(const char *text, size_t size) {
        _cleanup_free_ char *copy = strndup(text, size), *again = NULL;
        struct dp_varlink_call_message call = {}, call2 = {};
        struct dp_varlink_reply_message reply = {}, reply2 = {};
        const char *reason = NULL;
        size_t n;
        int r;

        if (!copy)
                return;
        check_names(copy);

        r = dp_varlink_call_message_parse(text, size, &call, &reason);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
        CHECK((r == -EBADMSG) == (reason != NULL));
        if (r == 0) {
                CHECK(dp_varlink_qualified_name_is_valid(call.method));
                CHECK(json_is_object(call.parameters));
                CHECK(call.oneway + call.more + call.upgrade <= 1);
                if (!call.upgrade) {
                        CHECK(dp_varlink_call_message_format(call.method, call.parameters, call.oneway, call.more,
                                                             &again, &n) == 0);
                        CHECK(n >= 1 && again[n - 1] == '\0' && strlen(again) == n - 1);
                        CHECK(dp_varlink_call_message_parse(again, n - 1, &call2, NULL) == 0);
                        CHECK(strcmp(call.method, call2.method) == 0);
                        CHECK(json_equal(call.parameters, call2.parameters));
                        CHECK(call.oneway == call2.oneway && call.more == call2.more && !call2.upgrade);
                        free(again);
                        again = NULL;
                }
        }

        reason = NULL;
        r = dp_varlink_reply_message_parse(text, size, &reply, &reason);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
        CHECK((r == -EBADMSG) == (reason != NULL));
        if (r == 0) {
                CHECK(json_is_object(reply.parameters));
                CHECK(!reply.error || dp_varlink_qualified_name_is_valid(reply.error));
                CHECK(!(reply.error && reply.continues));
                CHECK(dp_varlink_reply_message_format(reply.parameters, reply.error, reply.continues, &again, &n) ==
                      0);
                CHECK(dp_varlink_reply_message_parse(again, n - 1, &reply2, NULL) == 0);
                CHECK(json_equal(reply.parameters, reply2.parameters));
                CHECK(!!reply.error == !!reply2.error && (!reply.error || strcmp(reply.error, reply2.error) == 0));
                CHECK(reply.continues == reply2.continues);
        }
        /* A call is never also a reply: "method" is no key of a reply. */
        CHECK(!(call.method && reply.parameters));
        dp_varlink_call_message_done(&call);
        dp_varlink_call_message_done(&call2);
        dp_varlink_reply_message_done(&reply);
        dp_varlink_reply_message_done(&reply2);
}

/* ---- a connection and the service ---- */

enum action {
        ACT_REPLY_EMPTY,        /* {} (not what most outputs declare) */
        ACT_REPLY_ECHO,         /* the call's own parameters */
        ACT_ERROR_KNOWN,        /* io.damon.perfd.NoSuchTarget {target} */
        ACT_ERROR_FOREIGN,      /* an error of an interface the service does not have */
        ACT_ERRNO,              /* return -EIO without a reply */
        ACT_STREAM,             /* continues (if "more"), then a final reply */
        ACT_HOLD,               /* keep the call open; answered or dropped later */
        ACT_TWICE,              /* a second final reply: -EALREADY */
        ACT_INVALID_PARAMETER,
        ACT_PERMISSION_DENIED,
        _ACT_MAX,
};

struct world {
        struct fuzz_input script;       /* the handlers' choices */
        struct dp_varlink_call *held;   /* an open call, answered later */
        bool held_more;
        unsigned handled;               /* handler calls */
        unsigned disconnects;
};

static void on_disconnect(struct dp_varlink_call *call, void *userdata) {
        struct world *w = userdata;

        CHECK(call == w->held);
        w->held = NULL;
        w->disconnects++;
}

static int handler(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        struct world *w = userdata;
        enum action a = (enum action) (fuzz_u8(&w->script) % _ACT_MAX);
        json_t *p;
        int r = 0;

        w->handled++;
        CHECK(json_is_object(parameters));
        CHECK(w->held == NULL);
        switch (a) {
        case ACT_REPLY_EMPTY:
                r = dp_varlink_call_reply(call, NULL);
                break;
        case ACT_REPLY_ECHO:
                r = dp_varlink_call_reply(call, parameters);
                break;
        case ACT_ERROR_KNOWN:
                p = json_pack("{s:i}", "target", 7);
                r = dp_varlink_call_reply_error(call, IFACE ".NoSuchTarget", p);
                json_decref(p);
                break;
        case ACT_ERROR_FOREIGN:
                r = dp_varlink_call_reply_error(call, "org.example.other.Broken", NULL);
                break;
        case ACT_ERRNO:
                return -EIO;
        case ACT_STREAM:
                for (unsigned i = fuzz_u8(&w->script) % 4; i > 0 && dp_varlink_call_wants_more(call); i--) {
                        r = dp_varlink_call_reply_continues(call, parameters);
                        if (r < 0)
                                return r;
                }
                if (!dp_varlink_call_wants_more(call))
                        CHECK(dp_varlink_call_reply_continues(call, NULL) == -EINVAL);
                r = dp_varlink_call_reply(call, parameters);
                break;
        case ACT_HOLD:
                if (dp_varlink_call_is_oneway(call))
                        return 0;
                w->held = call;
                w->held_more = dp_varlink_call_wants_more(call);
                dp_varlink_call_set_disconnect_handler(call, on_disconnect, NULL);
                return 0;
        case ACT_TWICE:
                r = dp_varlink_call_reply(call, NULL);
                if (r == 0 && !dp_varlink_call_is_oneway(call))
                        CHECK(dp_varlink_call_reply(call, NULL) == -EALREADY);
                break;
        case ACT_INVALID_PARAMETER:
                r = dp_varlink_call_reply_invalid_parameter(call, "target");
                break;
        case ACT_PERMISSION_DENIED:
                r = dp_varlink_call_reply_permission_denied(call);
                break;
        case _ACT_MAX:
                break;
        }
        CHECK(r == 0 || r == -EBADMSG || r == -EMSGSIZE || r == -ENOBUFS || r == -ECONNRESET ||
              r == -ENOMEM);
        return r;
}


/* What a call must be answered with by the service itself, before any
 * handler (or builtin) sees it; NULL when that gets it. */
static const char *expected_error(struct dp_varlink_interface *const *ifaces, size_t n_ifaces,
                                  const struct dp_varlink_call_message *m, bool reload_bound) {
        size_t n = dp_varlink_qualified_name_interface_length(m->method);
        const char *member = m->method + n + 1;
        const struct dp_varlink_interface *iface = NULL;
        const struct dp_varlink_member *method;

        for (size_t i = 0; i < n_ifaces; i++)
                if (strlen(ifaces[i]->name) == n && strncmp(m->method, ifaces[i]->name, n) == 0)
                        iface = ifaces[i];
        if (!iface)
                return DP_VARLINK_ERROR_INTERFACE_NOT_FOUND;
        method = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_METHOD, member);
        if (!method)
                return DP_VARLINK_ERROR_METHOD_NOT_FOUND;
        if (strcmp(m->method, IFACE ".Reload") == 0 && !reload_bound)
                return DP_VARLINK_ERROR_METHOD_NOT_IMPLEMENTED;
        if (m->upgrade)
                return DP_VARLINK_ERROR_INVALID_PARAMETER;
        if (strcmp(m->method, IFACE ".Monitor") == 0 && !m->more)
                return DP_VARLINK_ERROR_EXPECTED_MORE;
        if (dp_varlink_idl_validate_call(method, m->parameters, NULL) < 0)
                return DP_VARLINK_ERROR_INVALID_PARAMETER;
        return NULL;
}

struct transcript {
        char *out;                      /* everything written so far */
        size_t size;
        size_t parsed;                  /* bytes of it already checked */
        const char *expect[512];        /* per call that awaits a reply: the service's error, or NULL */
        size_t n_expect, next;          /* such calls taken, and the next to get its final reply */
};

/* The client reads what the connection wrote, in pieces of @chunk bytes. */
static void collect(struct dp_varlink_connection *c, struct transcript *t, size_t chunk) {
        const void *p;
        size_t n;

        while ((p = dp_varlink_connection_output(c, &n))) {
                n = DP_MIN(n, chunk);
                CHECK(n > 0);
                if (t->size + n > OUTPUT_MAX)
                        return;
                memcpy(t->out + t->size, p, n);
                t->size += n;
                dp_varlink_connection_output_advance(c, n);
        }
        CHECK(dp_varlink_connection_output_size(c) == 0);

        /* Every complete reply, checked against the call it answers. */
        for (;;) {
                struct dp_varlink_reply_message reply;
                char *nul = memchr(t->out + t->parsed, '\0', t->size - t->parsed);
                size_t len;

                if (!nul)
                        break;
                len = (size_t) (nul - (t->out + t->parsed));
                CHECK(dp_varlink_reply_message_parse(t->out + t->parsed, len, &reply, NULL) == 0);
                CHECK(t->next < t->n_expect);
                if (t->expect[t->next]) {
                        CHECK(reply.error && strcmp(reply.error, t->expect[t->next]) == 0);
                        CHECK(!reply.continues);
                }
                if (!reply.continues)
                        t->next++;
                dp_varlink_reply_message_done(&reply);
                t->parsed += len + 1;
        }
}

/* The held call gets its final reply now; false if it could not be sent. */
static void answer_held(struct world *w, struct dp_varlink_peer *peer) {
        struct dp_varlink_call *held = w->held;
        int r = 0;

        if (w->held_more)
                r = dp_varlink_call_reply_continues(held, NULL);
        if (r == 0)
                r = dp_varlink_call_reply(held, NULL);
        if (r == -EBADMSG || r == -EMSGSIZE)
                /* Not sent (a reply the IDL refuses): the call is still open. */
                r = dp_varlink_call_reply_errno(held, EIO);
        CHECK(r == 0 || peer->failed);
        if (r == 0)
                w->held = NULL;
        /* Else the disconnect handler takes it, at the end. */
}

/* A service with every method of io.damon.perfd bound to the stub handler,
 * Reload too or not.  Made once: a service keeps nothing of a connection. */
static struct dp_varlink_service *service(bool reload_bound) {
        static struct dp_varlink_service *made[2];
        struct dp_varlink_method_binding bindings[DP_ARRAY_SIZE(methods)];
        struct dp_varlink_service *s;
        size_t n = 0;

        if (made[reload_bound])
                return made[reload_bound];
        CHECK(dp_varlink_service_new(&s) == 0);
        CHECK(dp_varlink_service_add_interface(s, dp_varlink_io_damon_perfd_idl, NULL) == 0);
        CHECK(dp_varlink_service_add_interface(s, dp_varlink_io_damon_perfd_idl, NULL) == -EEXIST);
        for (size_t i = 0; i < DP_ARRAY_SIZE(methods); i++) {
                if (!reload_bound && strcmp(methods[i], IFACE ".Reload") == 0)
                        continue;
                bindings[n++] = (struct dp_varlink_method_binding) {
                        .method = methods[i],
                        .handler = handler,
                        .flags = strcmp(methods[i], IFACE ".Monitor") == 0 ? DP_VARLINK_METHOD_REQUIRES_MORE : 0,
                };
        }
        CHECK(dp_varlink_service_bind(s, bindings, n, NULL) == 0);
        CHECK(dp_varlink_service_bind(s, bindings, 1, NULL) == -EEXIST);
        made[reload_bound] = s;
        return s;
}

static void fuzz_connection(struct fuzz_input *in) {
        static struct transcript t;
        static char out_buf[OUTPUT_MAX];
        static struct dp_varlink_interface *ifaces[2];
        struct dp_varlink_service *s;
        struct dp_varlink_connection *c = NULL;
        uint8_t opts = fuzz_u8(in), script_at = fuzz_u8(in);
        struct dp_varlink_connection_limits limits = {
                .max_message = opts & 1 ? 64 + 64 * (size_t) (opts >> 4) : 0,
                .max_output = opts & 2 ? 256 + 256 * (size_t) (opts >> 4) : 0,
        };
        bool reload_bound = !(opts & 4), failed = false;
        size_t feed_chunk = 1 + (opts >> 3) * 13, read_chunk = 1 + (opts >> 5) * 97;
        struct dp_varlink_peer peer;
        struct world w;
        int r;

        /* The handlers' script is the input's tail, from where byte 1 says. */
        {
                size_t split = DP_MIN((size_t) script_at * 4, in->left);

                w = (struct world) { .script = { in->p + split, in->left - split } };
                in->left = split;
        }
        t = (struct transcript) { .out = out_buf };

        if (!ifaces[0]) {
                CHECK(dp_varlink_idl_parse(dp_varlink_org_varlink_service_idl, &ifaces[0], NULL) == 0);
                CHECK(dp_varlink_idl_parse(dp_varlink_io_damon_perfd_idl, &ifaces[1], NULL) == 0);
        }
        s = service(reload_bound);
        dp_varlink_service_set_userdata(s, &w);
        dp_varlink_service_set_validate_replies(s, opts & 8);
        CHECK(dp_varlink_connection_new(&limits, &c) == 0);
        peer = (struct dp_varlink_peer) { .connection = c, .uid = 1000, .gid = 1000, .pid = 42 };

        for (;;) {
                struct dp_varlink_call_message m;
                const char *reason = NULL, *expect;
                unsigned before;

                r = dp_varlink_connection_take_call(c, &m, &reason);
                if (r < 0) {
                        /* A protocol error: the connection is failed for good. */
                        CHECK(r == -EBADMSG || r == -EMSGSIZE || r == -ENOMEM || r == -ENOBUFS);
                        CHECK(reason != NULL);
                        CHECK(dp_varlink_connection_get_error(c) == r);
                        CHECK(!dp_varlink_connection_wants_input(c));
                        CHECK(dp_varlink_connection_take_call(c, &m, NULL) == r);
                        CHECK(dp_varlink_connection_feed(c, "x", 1) == r);
                        failed = true;
                        break;
                }
                if (r > 0) {
                        CHECK(dp_varlink_qualified_name_is_valid(m.method));
                        CHECK(m.oneway + m.more + m.upgrade <= 1);
                        expect = expected_error(ifaces, DP_ARRAY_SIZE(ifaces), &m, reload_bound);
                        if (!m.oneway) {
                                CHECK(dp_varlink_connection_call_in_progress(c));
                                CHECK(t.n_expect < DP_ARRAY_SIZE(t.expect));
                                t.expect[t.n_expect++] = expect;
                        }
                        before = w.handled;
                        dp_varlink_service_dispatch(s, &peer, &m);
                        /* Only a call the service lets through reaches a handler. */
                        if (strncmp(m.method, IFACE ".", strlen(IFACE) + 1) == 0)
                                CHECK(w.handled == before + !expect);
                        else
                                CHECK(w.handled == before);
                        dp_varlink_call_message_done(&m);
                        if (peer.failed) {
                                failed = true;
                                break;
                        }
                        /* A call still in progress is the one held open. */
                        CHECK(!dp_varlink_connection_call_in_progress(c) || w.held);
                        collect(c, &t, read_chunk);
                        continue;
                }

                /* Nothing to take now. */
                collect(c, &t, read_chunk);
                if (w.held && fuzz_u8(&w.script) % 2) {
                        answer_held(&w, &peer);
                        if (peer.failed) {
                                failed = true;
                                break;
                        }
                        continue;
                }
                if (!dp_varlink_connection_wants_input(c))
                        break;  /* finished, or waiting on the held call */
                if (in->left == 0) {
                        dp_varlink_connection_feed_eof(c);
                        CHECK(dp_varlink_connection_feed(c, "x", 1) == -EPIPE);
                        continue;
                }
                {
                        size_t k = DP_MIN(feed_chunk, in->left);

                        r = dp_varlink_connection_feed(c, in->p, k);
                        in->p += k;
                        in->left -= k;
                        CHECK(r == 0 || r == -EMSGSIZE || r == -ENOMEM);
                        if (r < 0)
                                CHECK(dp_varlink_connection_get_error(c) == r);
                }
        }

        collect(c, &t, SIZE_MAX);
        if (!failed && t.size < OUTPUT_MAX) {
                /* Every call that wanted a reply got it, but the one held open. */
                CHECK(t.parsed == t.size);
                CHECK(t.next + (w.held ? 1 : 0) == t.n_expect);
                if (!w.held)
                        CHECK(dp_varlink_connection_is_finished(c));
        }
        dp_varlink_service_disconnect(s, &peer);
        CHECK(w.held == NULL);
        dp_varlink_connection_free(c);
}

/* ---- interfaces ---- */

static void fuzz_idl(const char *text) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface = NULL;
        struct dp_varlink_idl_error error = {};
        struct dp_varlink_service *s = NULL;
        int r;

        r = dp_varlink_idl_parse(text, &iface, &error);
        CHECK(r == 0 || r == -EINVAL || r == -ENOMEM);
        if (r == -EINVAL) {
                CHECK(error.message[0] != '\0' && memchr(error.message, '\0', sizeof(error.message)));
                CHECK(error.line >= 1 && error.column >= 1);
                return;
        }
        if (r < 0)
                return;
        CHECK(dp_varlink_interface_name_is_valid(iface->name));
        for (size_t i = 0; i < iface->n_members; i++) {
                const struct dp_varlink_member *m = &iface->members[i];
                json_t *empty = json_object();

                CHECK(dp_varlink_member_name_is_valid(m->name));
                CHECK(dp_varlink_interface_find(iface, m->kind, m->name) == m);
                if (m->kind == DP_VARLINK_MEMBER_METHOD) {
                        CHECK(m->input && m->input->kind == DP_VARLINK_TYPE_STRUCT);
                        CHECK(m->output && m->output->kind == DP_VARLINK_TYPE_STRUCT);
                        r = dp_varlink_idl_validate_call(m, empty, NULL);
                        CHECK(r == 0 || r == -EINVAL);
                        r = dp_varlink_idl_validate_reply(m, empty, NULL);
                        CHECK(r == 0 || r == -EINVAL);
                } else if (m->kind == DP_VARLINK_MEMBER_ERROR) {
                        r = dp_varlink_idl_validate_error(m, empty, NULL);
                        CHECK(r == 0 || r == -EINVAL);
                }
                json_decref(empty);
        }
        CHECK(dp_varlink_service_new(&s) == 0);
        r = dp_varlink_service_add_interface(s, text, NULL);
        CHECK(r == (strcmp(iface->name, DP_VARLINK_SERVICE_INTERFACE) == 0 ? -EEXIST : 0));
        dp_varlink_service_free(s);
}

/* ---- parameters against the real interface ---- */

static void check_validation(const struct dp_varlink_member *m, const char *text, size_t size) {
        json_t *v = json_loadb(text, size, JSON_REJECT_DUPLICATES, NULL);
        const char *bad;
        int r;

        if (!v)
                return;
        for (int which = 0; which < 2; which++) {
                bad = NULL;
                r = which == 0 ? dp_varlink_idl_validate_call(m, v, &bad) : dp_varlink_idl_validate_reply(m, v, &bad);
                CHECK(r == 0 || r == -EINVAL);
                if (r == 0)
                        CHECK(json_is_object(v));
                /* The offender is a field of the type, or a key of the object. */
                if (r < 0 && json_is_object(v) && bad && !json_object_get(v, bad)) {
                        const struct dp_varlink_type *t = which == 0 ? m->input : m->output;
                        bool declared = false;

                        for (size_t i = 0; i < t->n_fields; i++)
                                declared |= strcmp(t->fields[i].name, bad) == 0;
                        CHECK(declared);
                }
        }
        json_decref(v);
}

static void fuzz_parameters(const char *text, size_t size) {
        _cleanup_varlink_interface_ struct dp_varlink_interface *iface = NULL;
        const struct dp_varlink_member *m = NULL;
        const char *p = text, *end = text + size;
        unsigned pick = size > 0 ? (uint8_t) text[0] : 0;

        CHECK(dp_varlink_idl_parse(dp_varlink_io_damon_perfd_idl, &iface, NULL) == 0);
        /* Every method and error of the interface in turn, by the first byte. */
        pick %= iface->n_members;
        m = &iface->members[pick];
        if (size > 0)
                p++;
        while (p < end) {
                const char *nul = memchr(p, '\0', (size_t) (end - p));
                size_t n = nul ? (size_t) (nul - p) : (size_t) (end - p);

                if (m->kind == DP_VARLINK_MEMBER_ERROR) {
                        json_t *v = json_loadb(p, n, JSON_REJECT_DUPLICATES, NULL);

                        if (v) {
                                int r = dp_varlink_idl_validate_error(m, v, NULL);

                                CHECK(r == 0 || r == -EINVAL);
                                json_decref(v);
                        }
                } else if (m->kind == DP_VARLINK_MEMBER_METHOD)
                        check_validation(m, p, n);
                p += n + 1;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = { data, size };
        uint8_t mode = fuzz_u8(&in);
        const char *p, *end;
        char *text;

        switch (mode & 3) {
        case 0:
                fuzz_connection(&in);
                break;
        case 1:
                p = (const char *) in.p;
                end = p + in.left;
                while (p < end) {
                        const char *nul = memchr(p, '\0', (size_t) (end - p));
                        size_t n = nul ? (size_t) (nul - p) : (size_t) (end - p);

                        check_message(p, n);
                        p += n + 1;
                }
                break;
        case 2:
                text = strndup((const char *) in.p, in.left);
                if (text)
                        fuzz_idl(text);
                free(text);
                break;
        default:
                fuzz_parameters((const char *) in.p, in.left);
                break;
        }
        return 0;
}
