/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The server over socketpair(): a private sd_event loop in the test drives
 * it, and the test speaks raw bytes on the other end. */

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "macro.h"
#include "varlink-idl.h"
#include "dp-config.h"
#include "varlink-server.h"

#include "check-main.h"

static const char test_idl[] =
        "# A test interface.\n"
        "interface org.example.test\n"
        "method Echo(text: string, n: ?int) -> (text: string, n: ?int)\n"
        "method Whoami() -> (uid: int, pid: int)\n"
        "method Fail(errno: int) -> ()\n"
        "method Deny() -> ()\n"
        "method Stream(count: int) -> (i: int)\n"
        "method Watch() -> (i: int)\n"
        "method Big(size: int) -> (data: string)\n"
        "method Bad() -> (x: int)\n"
        "method NotBound() -> ()\n"
        "error Custom (why: string)\n";

/* What the handlers saw and kept. */
static struct {
        unsigned echo_calls;
        struct dp_varlink_call *watch;
        unsigned disconnects;
        int bad_reply_result;
} state;

static int method_echo(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        int r;

        (void) userdata;
        state.echo_calls++;
        if (!dp_varlink_call_wants_more(call))
                ck_assert_int_eq(dp_varlink_call_reply_continues(call, parameters), -EINVAL);
        ck_assert_int_eq(dp_varlink_call_reply_error(call, "not-qualified", NULL), -EINVAL);
        r = dp_varlink_call_reply(call, parameters);
        /* still inside the handler: a second answer is refused, not sent */
        ck_assert_int_eq(dp_varlink_call_reply(call, NULL), -EALREADY);
        return r;
}

static int method_whoami(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        uid_t uid;
        pid_t pid;
        json_t *p;
        int r;

        (void) parameters;
        (void) userdata;
        ck_assert_int_eq(dp_varlink_call_get_peer(call, &uid, NULL, &pid), 0);
        p = json_pack("{s:i, s:i}", "uid", (int) uid, "pid", (int) pid);
        r = dp_varlink_call_reply(call, p);
        json_decref(p);
        return r;
}

static int method_fail(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) call;
        (void) userdata;
        return -(int) json_integer_value(json_object_get(parameters, "errno"));
}

static int method_deny(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) parameters;
        (void) userdata;
        return dp_varlink_call_reply_permission_denied(call);
}

static int reply_i(struct dp_varlink_call *call, int i, bool continues) {
        json_t *p = json_pack("{s:i}", "i", i);
        int r = continues ? dp_varlink_call_reply_continues(call, p) : dp_varlink_call_reply(call, p);

        json_decref(p);
        return r;
}

static int method_stream(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        int count = (int) json_integer_value(json_object_get(parameters, "count"));

        (void) userdata;
        ck_assert(dp_varlink_call_wants_more(call));
        for (int i = 1; i < count; i++)
                ck_assert_int_eq(reply_i(call, i, true), 0);
        return reply_i(call, count, false);
}

static void watch_gone(struct dp_varlink_call *call, void *userdata) {
        ck_assert_ptr_eq(call, state.watch);
        ck_assert_ptr_eq(userdata, &state);
        state.watch = NULL;
        state.disconnects++;
}

static int method_watch(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) parameters;
        (void) userdata;
        state.watch = call;
        dp_varlink_call_set_disconnect_handler(call, watch_gone, &state);
        return 0;
}

static int method_big(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        size_t size = (size_t) json_integer_value(json_object_get(parameters, "size"));
        _cleanup_free_ char *data = malloc(size + 1);
        json_t *p;
        int r;

        (void) userdata;
        if (!data)
                return -ENOMEM;
        for (size_t i = 0; i < size; i++)
                data[i] = (char) ('a' + i % 26);
        data[size] = '\0';
        p = json_pack("{s:s}", "data", data);
        r = dp_varlink_call_reply(call, p);
        json_decref(p);
        return r;
}

static int method_bad(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        json_t *p = json_pack("{s:s}", "x", "not an int");

        (void) parameters;
        (void) userdata;
        state.bad_reply_result = dp_varlink_call_reply(call, p);
        json_decref(p);
        if (state.bad_reply_result == -EBADMSG)
                return dp_varlink_call_reply_error(call, "org.example.test.Custom", NULL);  /* also wrong */
        return state.bad_reply_result;
}

static const struct dp_varlink_method_binding test_methods[] = {
        { "org.example.test.Echo", method_echo, 0 },
        { "org.example.test.Whoami", method_whoami, 0 },
        { "org.example.test.Fail", method_fail, 0 },
        { "org.example.test.Deny", method_deny, 0 },
        { "org.example.test.Stream", method_stream, DP_VARLINK_METHOD_REQUIRES_MORE },
        { "org.example.test.Watch", method_watch, DP_VARLINK_METHOD_REQUIRES_MORE },
        { "org.example.test.Big", method_big, 0 },
        { "org.example.test.Bad", method_bad, 0 },
};

struct fixture {
        sd_event *event;
        struct dp_varlink_server *server;
        int client;             /* our end */
        char buf[8 * 1024 * 1024];
        size_t buffered;
};

static struct fixture *f;

static void fixture_start(const struct dp_varlink_server_settings *settings) {
        int pair[2];

        memset(&state, 0, sizeof(state));
        f = calloc(1, sizeof(*f));
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(sd_event_new(&f->event), 0);
        ck_assert_int_eq(dp_varlink_server_new(f->event, settings, &f->server), 0);
        ck_assert_int_eq(dp_varlink_server_add_interface(f->server, test_idl), 0);
        ck_assert_int_eq(dp_varlink_server_bind(f->server, test_methods, DP_ARRAY_SIZE(test_methods)), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        ck_assert_int_eq(dp_varlink_server_add_connection(f->server, pair[1]), 0);
        f->client = pair[0];
}

static void fixture_stop(void) {
        if (f->client >= 0)
                close(f->client);
        dp_varlink_server_free(f->server);
        sd_event_unref(f->event);
        free(f);
        f = NULL;
}

/* Runs the loop until it has nothing left to do right now. */
static void pump(void) {
        for (int i = 0; i < 10000; i++)
                if (sd_event_run(f->event, 0) <= 0)
                        return;
}

/* Runs the loop for about ms milliseconds. */
static void run_for(unsigned ms) {
        struct timespec start, now;

        clock_gettime(CLOCK_MONOTONIC, &start);
        do {
                ck_assert_int_ge(sd_event_run(f->event, 10 * 1000), 0);
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < ms);
}

static void send_bytes(const void *data, size_t size) {
        ck_assert_int_eq(send(f->client, data, size, MSG_NOSIGNAL), (ssize_t) size);
}

/* Sends a C string with its NUL: one message. */
static void send_message(const char *text) {
        send_bytes(text, strlen(text) + 1);
}

/* Reads what is there; returns false on EOF. */
static bool receive(void) {
        for (;;) {
                ssize_t n = recv(f->client, f->buf + f->buffered, sizeof(f->buf) - f->buffered, MSG_DONTWAIT);

                if (n == 0)
                        return false;
                if (n < 0) {
                        ck_assert_int_eq(errno, EAGAIN);
                        return true;
                }
                f->buffered += (size_t) n;
        }
}

/* Takes the next whole reply, or NULL if none arrived. */
static json_t *next_reply(void) {
        const char *nul;
        json_t *v;
        size_t n;

        pump();
        (void) receive();
        nul = memchr(f->buf, '\0', f->buffered);
        if (!nul)
                return NULL;
        n = (size_t) (nul - f->buf);
        v = json_loadb(f->buf, n, 0, NULL);
        ck_assert_ptr_nonnull(v);
        memmove(f->buf, f->buf + n + 1, f->buffered - n - 1);
        f->buffered -= n + 1;
        return v;
}

static void expect_reply(const char *expected) {
        json_t *want = json_loads(expected, 0, NULL), *got = next_reply();
        char *dump;

        ck_assert_ptr_nonnull(want);
        ck_assert_msg(got, "no reply, expected %s", expected);
        dump = json_dumps(got, JSON_COMPACT);
        ck_assert_msg(json_equal(want, got), "got %s, expected %s", dump, expected);
        free(dump);
        json_decref(want);
        json_decref(got);
}

static void expect_no_reply(void) {
        json_t *got = next_reply();

        ck_assert_msg(!got, "unexpected reply");
}

/* The server closed the connection, without sending anything (more). */
static void expect_closed(void) {
        pump();
        ck_assert_msg(!receive(), "connection still open");
        ck_assert_uint_eq(f->buffered, 0);
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 0);
}

START_TEST(test_get_info) {
        char expected[512];

        fixture_start(NULL);
        send_message("{\"method\":\"org.varlink.service.GetInfo\"}");
        snprintf(expected, sizeof(expected),
                 "{\"parameters\":{\"vendor\":\"damon-perfd\",\"product\":\"damon-perfd\",\"version\":\"%s\","
                 "\"url\":\"\",\"interfaces\":[\"org.varlink.service\",\"org.example.test\"]}}", DP_VERSION);
        expect_reply(expected);

        ck_assert_int_eq(dp_varlink_server_set_info(f->server, NULL, "p", NULL, "https://example.org"), 0);
        send_message("{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{}}");
        snprintf(expected, sizeof(expected),
                 "{\"parameters\":{\"vendor\":\"damon-perfd\",\"product\":\"p\",\"version\":\"%s\","
                 "\"url\":\"https://example.org\",\"interfaces\":[\"org.varlink.service\",\"org.example.test\"]}}",
                 DP_VERSION);
        expect_reply(expected);

        /* GetInfo takes no parameters */
        send_message("{\"method\":\"org.varlink.service.GetInfo\",\"parameters\":{\"x\":1}}");
        expect_reply("{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"x\"}}");
        fixture_stop();
}
END_TEST

START_TEST(test_get_interface_description) {
        json_t *reply;

        fixture_start(NULL);
        send_message("{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                     "\"parameters\":{\"interface\":\"org.example.test\"}}");
        reply = next_reply();
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(reply, "parameters"), "description")),
                         test_idl);
        json_decref(reply);

        send_message("{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                     "\"parameters\":{\"interface\":\"org.varlink.service\"}}");
        reply = next_reply();
        ck_assert_str_eq(json_string_value(json_object_get(json_object_get(reply, "parameters"), "description")),
                         dp_varlink_org_varlink_service_idl);
        json_decref(reply);

        send_message("{\"method\":\"org.varlink.service.GetInterfaceDescription\","
                     "\"parameters\":{\"interface\":\"org.nowhere\"}}");
        expect_reply("{\"error\":\"org.varlink.service.InterfaceNotFound\",\"parameters\":{\"interface\":\"org.nowhere\"}}");
        send_message("{\"method\":\"org.varlink.service.GetInterfaceDescription\"}");
        expect_reply("{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"interface\"}}");
        fixture_stop();
}
END_TEST

static const struct {
        const char *call;
        const char *reply;
} standard_errors[] = {
        { "{\"method\":\"org.nowhere.Foo\"}",
          "{\"error\":\"org.varlink.service.InterfaceNotFound\",\"parameters\":{\"interface\":\"org.nowhere\"}}" },
        { "{\"method\":\"org.example.test.Nope\"}",
          "{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":{\"method\":\"org.example.test.Nope\"}}" },
        { "{\"method\":\"org.example.test.NotBound\"}",
          "{\"error\":\"org.varlink.service.MethodNotImplemented\",\"parameters\":{\"method\":\"org.example.test.NotBound\"}}" },
        { "{\"method\":\"org.example.test.Echo\"}",
          "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"text\"}}" },
        { "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":5}}",
          "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"text\"}}" },
        { "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"a\",\"n\":\"1\"}}",
          "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"n\"}}" },
        { "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"a\",\"extra\":1}}",
          "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"extra\"}}" },
        { "{\"method\":\"org.example.test.Deny\"}",
          "{\"error\":\"org.varlink.service.PermissionDenied\"}" },
        { "{\"method\":\"org.example.test.Stream\",\"parameters\":{\"count\":2}}",
          "{\"error\":\"org.varlink.service.ExpectedMore\"}" },
        { "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"a\"},\"upgrade\":true}",
          "{\"error\":\"org.varlink.service.InvalidParameter\",\"parameters\":{\"parameter\":\"upgrade\"}}" },
        { "{\"method\":\"org.example.test.Fail\",\"parameters\":{\"errno\":5}}",
          "{\"error\":\"io.systemd.System\",\"parameters\":{\"errno\":5}}" },
        /* a call with more that the handler answers once */
        { "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"a\"},\"more\":true}",
          "{\"parameters\":{\"text\":\"a\"}}" },
};

START_TEST(test_standard_errors) {
        fixture_start(NULL);
        send_message(standard_errors[_i].call);
        expect_reply(standard_errors[_i].reply);
        /* the connection stays usable */
        send_message("{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"still here\"}}");
        expect_reply("{\"parameters\":{\"text\":\"still here\"}}");
        fixture_stop();
}
END_TEST

START_TEST(test_pipelining) {
        static const char calls[] =
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"1\"}}\0"
                "{\"method\":\"org.example.test.Stream\",\"parameters\":{\"count\":3},\"more\":true}\0"
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"oneway\"},\"oneway\":true}\0"
                "{\"method\":\"org.example.test.Nope\"}\0"
                "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"5\",\"n\":5}}";

        fixture_start(NULL);
        send_bytes(calls, sizeof(calls));       /* one write */
        expect_reply("{\"parameters\":{\"text\":\"1\"}}");
        expect_reply("{\"parameters\":{\"i\":1},\"continues\":true}");
        expect_reply("{\"parameters\":{\"i\":2},\"continues\":true}");
        expect_reply("{\"parameters\":{\"i\":3}}");
        expect_reply("{\"error\":\"org.varlink.service.MethodNotFound\",\"parameters\":{\"method\":\"org.example.test.Nope\"}}");
        expect_reply("{\"parameters\":{\"text\":\"5\",\"n\":5}}");
        expect_no_reply();
        ck_assert_uint_eq(state.echo_calls, 3);         /* the oneway call ran, silently */
        fixture_stop();
}
END_TEST

START_TEST(test_oneway) {
        fixture_start(NULL);
        send_message("{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"x\"},\"oneway\":true}");
        send_message("{\"method\":\"org.example.test.Nope\",\"oneway\":true}");       /* no error either */
        send_message("{\"method\":\"org.example.test.Echo\",\"oneway\":true}");       /* invalid: silently */
        expect_no_reply();
        ck_assert_uint_eq(state.echo_calls, 1);
        send_message("{\"method\":\"org.example.test.Whoami\"}");
        {
                json_t *r = next_reply(), *p = json_object_get(r, "parameters");

                ck_assert_int_eq(json_integer_value(json_object_get(p, "uid")), (int) getuid());
                ck_assert_int_eq(json_integer_value(json_object_get(p, "pid")), (int) getpid());
                json_decref(r);
        }
        expect_no_reply();
        fixture_stop();
}
END_TEST

/* A streaming call answered from outside the handler holds back later
 * calls; its disconnect handler runs when the client goes. */
START_TEST(test_more_async_and_disconnect) {
        fixture_start(NULL);
        send_message("{\"method\":\"org.example.test.Watch\",\"more\":true}");
        send_message("{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"after\"}}");
        expect_no_reply();
        ck_assert_ptr_nonnull(state.watch);
        ck_assert_uint_eq(state.echo_calls, 0);         /* held back behind Watch */

        ck_assert_int_eq(reply_i(state.watch, 1, true), 0);
        ck_assert_int_eq(reply_i(state.watch, 2, true), 0);
        expect_reply("{\"parameters\":{\"i\":1},\"continues\":true}");
        expect_reply("{\"parameters\":{\"i\":2},\"continues\":true}");
        ck_assert_int_eq(dp_varlink_call_reply_error(state.watch, "org.example.test.Custom", NULL), 0);
        state.watch = NULL;                             /* gone after the final reply */
        expect_reply("{\"error\":\"org.example.test.Custom\"}");
        expect_reply("{\"parameters\":{\"text\":\"after\"}}");
        ck_assert_uint_eq(state.disconnects, 0);

        send_message("{\"method\":\"org.example.test.Watch\",\"more\":true}");
        pump();
        ck_assert_ptr_nonnull(state.watch);
        ck_assert_int_eq(reply_i(state.watch, 7, false), 0);    /* a final reply without continues first */
        expect_reply("{\"parameters\":{\"i\":7}}");
        state.watch = NULL;

        send_message("{\"method\":\"org.example.test.Watch\",\"more\":true}");
        pump();
        ck_assert_ptr_nonnull(state.watch);
        close(f->client);
        f->client = -1;
        pump();
        ck_assert_uint_eq(state.disconnects, 1);
        ck_assert_ptr_null(state.watch);
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 0);
        fixture_stop();
}
END_TEST

START_TEST(test_disconnect_on_close_and_free) {
        fixture_start(NULL);
        send_message("{\"method\":\"org.example.test.Watch\",\"more\":true}");
        pump();
        ck_assert_ptr_nonnull(state.watch);
        close(f->client);               /* the server frees the open call: handler told */
        f->client = -1;
        pump();
        ck_assert_uint_eq(state.disconnects, 1);
        fixture_stop();

        /* freeing the server tells open calls too */
        fixture_start(NULL);
        send_message("{\"method\":\"org.example.test.Watch\",\"more\":true}");
        pump();
        ck_assert_ptr_nonnull(state.watch);
        dp_varlink_server_free(f->server);
        f->server = NULL;
        ck_assert_uint_eq(state.disconnects, 1);
        close(f->client);
        sd_event_unref(f->event);
        free(f);
}
END_TEST

/* Each of these closes the connection at once, with no reply. */
static const char *const malformed[] = {
        "not json",
        "[1, 2]",
        "\"org.example.test.Echo\"",
        "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"a\"},\"bogus\":1}",
        "{\"method\":\"org.example.test.Echo\",\"method\":\"org.example.test.Echo\"}",
        "{\"method\":\"org.example.test.Echo\",\"oneway\":\"yes\"}",
        "{\"method\":\"org.example.test.Echo\",\"more\":1}",
        "{\"method\":\"org.example.test.Echo\",\"oneway\":true,\"more\":true}",
        "{\"method\":\"Echo\"}",
        "{\"method\":7}",
        "{\"parameters\":{}}",
        "{\"method\":\"org.example.test.Echo\",\"parameters\":[]}",
        "",
};

START_TEST(test_malformed_closes) {
        fixture_start(NULL);
        /* a good call first: it is answered, then the bad one ends it all */
        send_message("{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"ok\"}}");
        send_message(malformed[_i]);
        send_message("{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"never\"}}");
        pump();
        (void) receive();
        ck_assert_str_eq(f->buf, "{\"parameters\":{\"text\":\"ok\"}}");
        f->buffered -= strlen(f->buf) + 1;
        expect_closed();
        ck_assert_uint_eq(state.echo_calls, 1);
        fixture_stop();
}
END_TEST

START_TEST(test_missing_nul_before_close) {
        static const char partial[] = "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"a\"}}";

        fixture_start(NULL);
        send_bytes(partial, sizeof(partial) - 1);
        ck_assert_int_eq(shutdown(f->client, SHUT_WR), 0);
        expect_closed();
        ck_assert_uint_eq(state.echo_calls, 0);
        fixture_stop();

        /* a half-close after a complete call still gets the reply */
        fixture_start(NULL);
        send_bytes(partial, sizeof(partial));
        ck_assert_int_eq(shutdown(f->client, SHUT_WR), 0);
        expect_reply("{\"parameters\":{\"text\":\"a\"}}");
        expect_closed();
        fixture_stop();
}
END_TEST

START_TEST(test_oversized_message) {
        struct dp_varlink_server_settings settings = { .max_message = 1024 };
        char big[2048];

        fixture_start(&settings);
        snprintf(big, sizeof(big), "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"%01000d\"}}", 0);
        send_message(big);
        expect_closed();
        fixture_stop();

        /* the real limit: 16 MiB of JSON without a NUL */
        fixture_start(NULL);
        {
                size_t n = DP_VARLINK_MESSAGE_SIZE_MAX + 1, sent = 0;
                _cleanup_free_ char *junk = malloc(n);

                memset(junk, ' ', n);
                while (sent < n) {
                        ssize_t k = send(f->client, junk + sent, n - sent, MSG_DONTWAIT | MSG_NOSIGNAL);

                        if (k < 0) {
                                if (errno == EPIPE || errno == ECONNRESET)
                                        break;          /* already closed on us */
                                ck_assert_int_eq(errno, EAGAIN);
                                pump();
                                continue;
                        }
                        sent += (size_t) k;
                }
                expect_closed();
        }
        fixture_stop();
}
END_TEST

START_TEST(test_byte_at_a_time) {
        static const char call[] = "{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"slow\"}}";

        fixture_start(NULL);
        for (size_t i = 0; i < sizeof(call); i++) {
                send_bytes(call + i, 1);
                pump();
                if (i + 1 < sizeof(call))
                        ck_assert_uint_eq(state.echo_calls, 0);
        }
        expect_reply("{\"parameters\":{\"text\":\"slow\"}}");
        fixture_stop();
}
END_TEST

/* A reply much larger than the socket buffers leaves in pieces, without
 * blocking the loop, and arrives intact. */
START_TEST(test_partial_writes) {
        int small = 4096, pair[2], rounds = 0;
        json_t *reply;
        const char *data;

        fixture_start(NULL);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        ck_assert_int_eq(setsockopt(pair[1], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
        ck_assert_int_eq(setsockopt(pair[0], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        ck_assert_int_eq(dp_varlink_server_add_connection(f->server, pair[1]), 0);
        close(f->client);
        f->client = pair[0];
        pump();

        send_message("{\"method\":\"org.example.test.Big\",\"parameters\":{\"size\":3000000}}");
        while (!memchr(f->buf, '\0', f->buffered)) {
                pump();                                 /* returns: never blocks on the full socket */
                ck_assert(receive());
                ck_assert_int_lt(++rounds, 100000);
        }
        ck_assert_int_gt(rounds, 10);                   /* it really came in pieces */
        reply = next_reply();
        data = json_string_value(json_object_get(json_object_get(reply, "parameters"), "data"));
        ck_assert_uint_eq(strlen(data), 3000000);
        ck_assert_int_eq(data[2999999], 'a' + 2999999 % 26);
        json_decref(reply);
        fixture_stop();
}
END_TEST

/* A client that never reads: bounded output, then disconnected. */
START_TEST(test_client_never_reads) {
        struct dp_varlink_server_settings settings = { .max_output = 64 * 1024 };
        int small = 4096, r = 0;
        unsigned sent = 0;

        fixture_start(&settings);
        ck_assert_int_eq(setsockopt(f->client, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        send_message("{\"method\":\"org.example.test.Watch\",\"more\":true}");
        pump();
        ck_assert_ptr_nonnull(state.watch);
        while (sent < 1000000 && (r = reply_i(state.watch, (int) sent, true)) == 0) {
                sent++;
                if (sent % 100 == 0)
                        pump();         /* lets the server write what the socket takes */
        }
        ck_assert_int_eq(r, -ENOBUFS);
        ck_assert_uint_lt(sent, 20000);
        ck_assert_ptr_nonnull(state.watch);             /* still valid until the disconnect handler */
        ck_assert_int_eq(reply_i(state.watch, 0, true), -ECONNRESET);
        pump();
        ck_assert_uint_eq(state.disconnects, 1);
        ck_assert_ptr_null(state.watch);
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 0);
        fixture_stop();
}
END_TEST

START_TEST(test_connection_caps) {
        struct dp_varlink_server_settings settings = { .max_connections = 3, .max_connections_per_uid = 2 };
        int pair[2], more[2];

        fixture_start(&settings);                       /* one connection */
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        ck_assert_int_eq(dp_varlink_server_add_connection(f->server, pair[1]), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, more), 0);
        ck_assert_int_eq(dp_varlink_server_add_connection(f->server, more[1]), -EDQUOT);
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 2);
        /* the refused one is closed */
        ck_assert_int_eq(recv(more[0], f->buf, 1, MSG_DONTWAIT), 0);
        close(more[0]);
        /* one gone, room again */
        close(pair[0]);
        pump();
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 1);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        ck_assert_int_eq(dp_varlink_server_add_connection(f->server, pair[1]), 0);
        close(pair[0]);
        fixture_stop();

        settings = (struct dp_varlink_server_settings) { .max_connections = 2 };
        fixture_start(&settings);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        ck_assert_int_eq(dp_varlink_server_add_connection(f->server, pair[1]), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, more), 0);
        ck_assert_int_eq(dp_varlink_server_add_connection(f->server, more[1]), -EUSERS);
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 2);
        close(pair[0]);
        close(more[0]);
        fixture_stop();
}
END_TEST

/* A timeout long beside the scheduling delays of a loaded machine: the
 * loop runs in this process, so a test descheduled for longer than the
 * margin between a check and the timeout would see it expire early. */
#define IDLE_MS 1000

START_TEST(test_idle_timeout) {
        struct dp_varlink_server_settings settings = { .idle_timeout_usec = IDLE_MS * 1000 };

        /* an idle connection */
        fixture_start(&settings);
        run_for(IDLE_MS / 4);
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 1);
        run_for(IDLE_MS);
        expect_closed();
        fixture_stop();

        /* slowloris: a partial message trickling in does not keep it alive */
        fixture_start(&settings);
        for (int i = 0; i < 3 * IDLE_MS / 50 && dp_varlink_server_n_connections(f->server) > 0; i++) {
                send(f->client, "{", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
                run_for(50);
        }
        expect_closed();
        fixture_stop();

        /* regular calls restart the clock; an open call stops it */
        fixture_start(&settings);
        for (int i = 0; i < 8; i++) {
                send_message("{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"t\"}}");
                run_for(IDLE_MS / 4);
                expect_reply("{\"parameters\":{\"text\":\"t\"}}");
        }
        send_message("{\"method\":\"org.example.test.Watch\",\"more\":true}");
        run_for(2 * IDLE_MS);
        ck_assert_uint_eq(dp_varlink_server_n_connections(f->server), 1);
        ck_assert_int_eq(reply_i(state.watch, 1, false), 0);
        state.watch = NULL;
        expect_reply("{\"parameters\":{\"i\":1}}");
        run_for(IDLE_MS * 3 / 2);
        expect_closed();
        fixture_stop();
}
END_TEST

START_TEST(test_validate_replies) {
        struct dp_varlink_server_settings settings = { .validate_replies = true };

        fixture_start(&settings);
        send_message("{\"method\":\"org.example.test.Bad\"}");
        /* the bad reply and the error lacking "why" are refused: io.systemd.System */
        expect_reply("{\"error\":\"io.systemd.System\",\"parameters\":{\"errno\":74}}");
        ck_assert_int_eq(state.bad_reply_result, -EBADMSG);
        send_message("{\"method\":\"org.example.test.Echo\",\"parameters\":{\"text\":\"fine\"}}");
        expect_reply("{\"parameters\":{\"text\":\"fine\"}}");
        fixture_stop();

        /* without validation the bad reply goes out */
        fixture_start(NULL);
        send_message("{\"method\":\"org.example.test.Bad\"}");
        expect_reply("{\"parameters\":{\"x\":\"not an int\"}}");
        fixture_stop();
}
END_TEST

START_TEST(test_setup_errors) {
        static const struct dp_varlink_method_binding unknown = { "org.example.test.Nope", method_echo, 0 };
        static const struct dp_varlink_method_binding twice = { "org.example.test.Echo", method_echo, 0 };
        static const struct dp_varlink_method_binding flags = { "org.example.test.NotBound", method_echo, 0x100 };

        fixture_start(NULL);
        ck_assert_int_eq(dp_varlink_server_bind(f->server, &unknown, 1), -ENOENT);
        ck_assert_int_eq(dp_varlink_server_bind(f->server, &twice, 1), -EEXIST);
        ck_assert_int_eq(dp_varlink_server_bind(f->server, &flags, 1), -EINVAL);
        ck_assert_int_eq(dp_varlink_server_add_interface(f->server, test_idl), -EEXIST);
        ck_assert_int_eq(dp_varlink_server_add_interface(f->server, "interface x.y\nmethod M( -> ()\n"), -EINVAL);
        ck_assert_int_eq(dp_varlink_server_add_interface(f->server, dp_varlink_io_damon_perfd_idl), 0);
        fixture_stop();
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("varlink-server");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_get_info);
        tcase_add_test(tc, test_get_interface_description);
        tcase_add_loop_test(tc, test_standard_errors, 0, (int) DP_ARRAY_SIZE(standard_errors));
        tcase_add_test(tc, test_pipelining);
        tcase_add_test(tc, test_oneway);
        tcase_add_test(tc, test_more_async_and_disconnect);
        tcase_add_test(tc, test_disconnect_on_close_and_free);
        tcase_add_loop_test(tc, test_malformed_closes, 0, (int) DP_ARRAY_SIZE(malformed));
        tcase_add_test(tc, test_missing_nul_before_close);
        tcase_add_test(tc, test_oversized_message);
        tcase_add_test(tc, test_byte_at_a_time);
        tcase_add_test(tc, test_partial_writes);
        tcase_add_test(tc, test_client_never_reads);
        tcase_add_test(tc, test_connection_caps);
        tcase_add_test(tc, test_idle_timeout);
        tcase_add_test(tc, test_validate_replies);
        tcase_add_test(tc, test_setup_errors);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
