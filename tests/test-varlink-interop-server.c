/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A varlink server for tests/varlink-interop.py: the real server code with
 * io.damon.perfd, and dummy handlers whose replies are built from the IDL
 * itself (zero values), so they always conform.  Usage:
 *   test-varlink-interop-server SOCKET-PATH
 * Prints READY once it listens; SIGTERM/SIGINT stop it. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "varlink-idl.h"
#include "log.h"
#include "varlink-server.h"

#define MONITOR_EVENTS 3
#define MONITOR_INTERVAL_USEC (10 * 1000)

static struct dp_varlink_interface *idl;
static sd_event *event;

/* A value of type t that conforms: zero, empty, or the first enum value. */
static json_t *zero_value(const struct dp_varlink_type *t) {
        json_t *o;

        switch (t->kind) {
        case DP_VARLINK_TYPE_BOOL:
                return json_false();
        case DP_VARLINK_TYPE_INT:
                return json_integer(0);
        case DP_VARLINK_TYPE_FLOAT:
                return json_real(0.5);
        case DP_VARLINK_TYPE_STRING:
                return json_string("");
        case DP_VARLINK_TYPE_OBJECT:
        case DP_VARLINK_TYPE_MAP:
                return json_object();
        case DP_VARLINK_TYPE_ARRAY:
                return json_array();
        case DP_VARLINK_TYPE_ENUM:
                return json_string(t->values[0]);
        case DP_VARLINK_TYPE_NAMED:
                return zero_value(t->resolved->type);
        case DP_VARLINK_TYPE_STRUCT:
                o = json_object();
                for (size_t i = 0; o && i < t->n_fields; i++)
                        if (!t->fields[i].type->nullable)
                                json_object_set_new(o, t->fields[i].name, zero_value(t->fields[i].type));
                return o;
        }
        return NULL;
}

static const struct dp_varlink_member *method_of(struct dp_varlink_call *call) {
        const char *name = strrchr(dp_varlink_call_get_method(call), '.') + 1;

        return dp_varlink_interface_find(idl, DP_VARLINK_MEMBER_METHOD, name);
}

static int reply_zero(struct dp_varlink_call *call, bool continues) {
        json_t *p = zero_value(method_of(call)->output);
        int r;

        if (!p)
                return -ENOMEM;
        r = continues ? dp_varlink_call_reply_continues(call, p) : dp_varlink_call_reply(call, p);
        json_decref(p);
        return r;
}

static int method_zero(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) parameters;
        (void) userdata;
        return reply_zero(call, false);
}

static int method_get_regions(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        json_t *target = json_object_get(parameters, "target");

        (void) userdata;
        if (json_integer_value(target) == 999) {
                json_t *p = json_pack("{s:i}", "target", 999);
                int r = dp_varlink_call_reply_error(call, "io.damon.perfd.NoSuchTarget", p);

                json_decref(p);
                return r;
        }
        return reply_zero(call, false);
}

static int method_reload(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        uid_t uid;

        (void) parameters;
        (void) userdata;
        if (dp_varlink_call_get_peer(call, &uid, NULL, NULL) < 0 || uid != 0)
                return dp_varlink_call_reply_permission_denied(call);
        return dp_varlink_call_reply(call, NULL);
}

/* Monitor: a few state_change events from a timer, the last one final. */
struct monitor {
        struct dp_varlink_call *call;
        sd_event_source *timer;
        int sent;
};

static void monitor_free(struct monitor *m) {
        sd_event_source_disable_unref(m->timer);
        free(m);
}

static int monitor_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        struct monitor *m = userdata;
        bool last = ++m->sent == MONITOR_EVENTS;
        json_t *p = json_pack("{s:{s:s, s:I, s:i, s:s, s:s}}", "event", "kind", "state_change",
                              "timestamp_usec", (json_int_t) usec, "cpu", m->sent, "from", "enabled", "to", "running");
        int r;

        r = last ? dp_varlink_call_reply(m->call, p) : dp_varlink_call_reply_continues(m->call, p);
        json_decref(p);
        if (last && r >= 0) {
                monitor_free(m);        /* the call is gone with its final reply */
                return 0;
        }
        if (r >= 0)
                r = sd_event_source_set_time(s, usec + MONITOR_INTERVAL_USEC);
        if (r >= 0)
                r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
        return 0;       /* on errors the disconnect handler cleans up */
}

static void monitor_gone(struct dp_varlink_call *call, void *userdata) {
        (void) call;
        monitor_free(userdata);
}

static int method_monitor(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        struct monitor *m = calloc(1, sizeof(*m));
        uint64_t now;
        int r;

        (void) parameters;
        (void) userdata;
        if (!m)
                return -ENOMEM;
        m->call = call;
        r = sd_event_now(event, CLOCK_MONOTONIC, &now);
        if (r >= 0)
                r = sd_event_add_time(event, &m->timer, CLOCK_MONOTONIC, now + MONITOR_INTERVAL_USEC, 0,
                                      monitor_tick, m);
        if (r < 0) {
                free(m);
                return r;
        }
        dp_varlink_call_set_disconnect_handler(call, monitor_gone, m);
        return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) si;
        (void) userdata;
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

int main(int argc, char *argv[]) {
        static const struct dp_varlink_method_binding methods[] = {
                { "io.damon.perfd.GetStats", method_zero, 0 },
                { "io.damon.perfd.GetCPUs", method_zero, 0 },
                { "io.damon.perfd.GetTargets", method_zero, 0 },
                { "io.damon.perfd.GetRegions", method_get_regions, 0 },
                { "io.damon.perfd.GetDamonView", method_zero, 0 },
                { "io.damon.perfd.Monitor", method_monitor, DP_VARLINK_METHOD_REQUIRES_MORE },
                { "io.damon.perfd.Reload", method_reload, 0 },
        };
        struct dp_varlink_server_settings settings = { .validate_replies = true };
        struct dp_varlink_server *server = NULL;
        sigset_t mask;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: %s SOCKET-PATH\n", argv[0]);
                return EXIT_FAILURE;
        }
        log_setup();
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        r = dp_varlink_idl_parse(dp_varlink_io_damon_perfd_idl, &idl, NULL);
        if (r >= 0)
                r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL);
        if (r >= 0)
                r = dp_varlink_server_new(event, &settings, &server);
        if (r >= 0)
                r = dp_varlink_server_add_interface(server, dp_varlink_io_damon_perfd_idl);
        if (r >= 0)
                r = dp_varlink_server_bind(server, methods, DP_ARRAY_SIZE(methods));
        if (r >= 0)
                r = dp_varlink_server_listen_path(server, argv[1], 0660, NULL);
        if (r < 0) {
                fprintf(stderr, "setup failed: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        printf("READY\n");
        fflush(stdout);

        r = sd_event_loop(event);
        dp_varlink_server_free(server);
        sd_event_unref(event);
        dp_varlink_interface_free(idl);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
