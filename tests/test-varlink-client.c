/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The blocking client against the real server (running its sd_event loop
 * in a thread), against a fake peer speaking raw bytes, and the server's
 * listening sockets: bound paths, stale files, socket activation. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "macro.h"
#include "varlink-client.h"
#include "varlink-server.h"

#include "check-main.h"

static const char test_idl[] =
        "interface org.example.client\n"
        "method Echo(text: string) -> (text: string)\n"
        "method Count(to: int) -> (i: int)\n"
        "method Silent() -> ()\n";

static int method_echo(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) userdata;
        return dp_varlink_call_reply(call, parameters);
}

static int method_count(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        int to = (int) json_integer_value(json_object_get(parameters, "to"));
        int r = 0;

        (void) userdata;
        for (int i = 1; i <= to && r >= 0; i++) {
                json_t *p = json_pack("{s:i}", "i", i);

                r = i < to && dp_varlink_call_wants_more(call) ? dp_varlink_call_reply_continues(call, p)
                                                               : dp_varlink_call_reply(call, p);
                json_decref(p);
                if (!dp_varlink_call_wants_more(call))
                        break;
        }
        return r;
}

static int method_silent(struct dp_varlink_call *call, json_t *parameters, void *userdata) {
        (void) call;
        (void) parameters;
        (void) userdata;
        return 0;       /* never answers; the call is dropped with the connection */
}

static const struct dp_varlink_method_binding methods[] = {
        { "org.example.client.Echo", method_echo, 0 },
        { "org.example.client.Count", method_count, 0 },
        { "org.example.client.Silent", method_silent, 0 },
};

static char dir[64];
static char path[128];
static char address[160];

static void make_dir(void) {
        snprintf(dir, sizeof(dir), "/tmp/dp-varlink-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/run/sub/io.example", dir);
        snprintf(address, sizeof(address), "unix:%s", path);
}

static void remove_dir(void) {
        char p[200];

        snprintf(p, sizeof(p), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(p), 0);
}

/* ---- a server in a thread ---- */

static struct {
        pthread_t thread;
        int stop_fd;
        int ready[2];
} bg;

static int on_stop(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) fd;
        (void) revents;
        (void) userdata;
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static void *server_thread(void *arg) {
        struct dp_varlink_server *server = NULL;
        sd_event *event = NULL;
        char ok = 1;

        (void) arg;
        if (sd_event_new(&event) < 0 || dp_varlink_server_new(event, NULL, &server) < 0 ||
            dp_varlink_server_add_interface(server, test_idl) < 0 ||
            dp_varlink_server_bind(server, methods, DP_ARRAY_SIZE(methods)) < 0 ||
            dp_varlink_server_listen_path(server, path, 0660, NULL) < 0 ||
            sd_event_add_io(event, NULL, bg.stop_fd, EPOLLIN, on_stop, NULL) < 0)
                ok = 0;
        (void) !write(bg.ready[1], &ok, 1);
        if (ok)
                (void) sd_event_loop(event);
        dp_varlink_server_free(server);
        sd_event_unref(event);
        return NULL;
}

static void server_start(void) {
        char ok = 0;

        make_dir();
        bg.stop_fd = eventfd(0, EFD_CLOEXEC);
        ck_assert_int_ge(bg.stop_fd, 0);
        ck_assert_int_eq(pipe(bg.ready), 0);
        ck_assert_int_eq(pthread_create(&bg.thread, NULL, server_thread, NULL), 0);
        ck_assert_int_eq(read(bg.ready[0], &ok, 1), 1);
        ck_assert_int_eq(ok, 1);
}

static void server_stop(void) {
        uint64_t one = 1;
        struct stat st;

        ck_assert_int_eq(write(bg.stop_fd, &one, sizeof(one)), sizeof(one));
        ck_assert_int_eq(pthread_join(bg.thread, NULL), 0);
        close(bg.stop_fd);
        close(bg.ready[0]);
        close(bg.ready[1]);
        ck_assert_int_eq(stat(path, &st), -1);          /* the server removed its socket */
        remove_dir();
}

static struct dp_varlink_client *connect_ok(void) {
        struct dp_varlink_client *c = NULL;

        ck_assert_int_eq(dp_varlink_client_connect(address, &c), 0);
        return c;
}

START_TEST(test_call_and_errors) {
        _cleanup_varlink_client_ struct dp_varlink_client *c = NULL;
        json_t *in = json_pack("{s:s}", "text", "hello"), *out = NULL;
        const char *error = (const char *) 1;

        server_start();
        c = connect_ok();
        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Echo", in, 0, &out, &error), 0);
        ck_assert_ptr_null(error);
        ck_assert(json_equal(in, out));
        json_decref(out);

        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Nope", NULL, 0, &out, &error), 0);
        ck_assert_str_eq(error, DP_VARLINK_ERROR_METHOD_NOT_FOUND);
        ck_assert_str_eq(json_string_value(json_object_get(out, "method")), "org.example.client.Nope");
        json_decref(out);

        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Echo", NULL, 0, &out, &error), 0);
        ck_assert_str_eq(error, DP_VARLINK_ERROR_INVALID_PARAMETER);
        json_decref(out);

        ck_assert_int_eq(dp_varlink_client_call(c, "org.varlink.service.GetInfo", NULL, 0, &out, NULL), 0);
        ck_assert_str_eq(json_string_value(json_object_get(out, "vendor")), "damon-perfd");
        json_decref(out);

        /* usage errors leave the connection usable */
        ck_assert_int_eq(dp_varlink_client_call(c, "Echo", NULL, 0, &out, &error), -EINVAL);
        ck_assert_int_eq(dp_varlink_client_call(c, "a.b.C", NULL, DP_VARLINK_CALL_ONEWAY | DP_VARLINK_CALL_MORE,
                                                &out, &error), -EINVAL);
        ck_assert_int_eq(dp_varlink_client_next(c, &out, &error), -ENOMSG);

        /* oneway: nothing comes back, and the next reply is not confused */
        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Echo", in, DP_VARLINK_CALL_ONEWAY, &out,
                                                &error), 0);
        ck_assert_ptr_null(out);
        json_decref(in);
        in = json_pack("{s:s}", "text", "second");
        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Echo", in, 0, &out, &error), 0);
        ck_assert(json_equal(in, out));
        json_decref(out);
        json_decref(in);

        c = dp_varlink_client_free(c);
        server_stop();
}
END_TEST

START_TEST(test_more) {
        _cleanup_varlink_client_ struct dp_varlink_client *c = NULL;
        json_t *in = json_pack("{s:i}", "to", 4), *out = NULL;
        const char *error;
        int r, i = 1;

        server_start();
        c = connect_ok();
        r = dp_varlink_client_call(c, "org.example.client.Count", in, DP_VARLINK_CALL_MORE, &out, &error);
        for (;;) {
                ck_assert_int_ge(r, 0);
                ck_assert_ptr_null(error);
                ck_assert_int_eq(json_integer_value(json_object_get(out, "i")), i);
                json_decref(out);
                if (r == 0)
                        break;
                if (i == 2)
                        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Echo", NULL, 0, NULL, NULL),
                                         -EBUSY);
                i++;
                r = dp_varlink_client_next(c, &out, &error);
        }
        ck_assert_int_eq(i, 4);
        ck_assert_int_eq(dp_varlink_client_next(c, &out, &error), -ENOMSG);

        /* without more, the same method answers once */
        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Count", in, 0, &out, &error), 0);
        ck_assert_int_eq(json_integer_value(json_object_get(out, "i")), 1);
        json_decref(out);
        json_decref(in);
        c = dp_varlink_client_free(c);
        server_stop();
}
END_TEST

START_TEST(test_timeout) {
        _cleanup_varlink_client_ struct dp_varlink_client *c = NULL;
        json_t *out = (json_t *) 1;

        server_start();
        c = connect_ok();
        ck_assert_int_eq(dp_varlink_client_set_timeout(c, 200 * 1000), 0);
        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Silent", NULL, 0, &out, NULL), -ETIMEDOUT);
        ck_assert_ptr_null(out);
        ck_assert_int_eq(dp_varlink_client_call(c, "org.example.client.Echo", NULL, 0, &out, NULL), -ENOTCONN);
        ck_assert_int_eq(dp_varlink_client_get_fd(c), -ENOTCONN);
        c = dp_varlink_client_free(c);
        server_stop();
}
END_TEST

START_TEST(test_connect_errors) {
        struct dp_varlink_client *c = NULL;

        ck_assert_int_eq(dp_varlink_client_connect("unix:/nonexistent/dp-varlink", &c), -ENOENT);
        ck_assert_int_eq(dp_varlink_client_connect("tcp:127.0.0.1:1", &c), -EINVAL);
        ck_assert_int_eq(dp_varlink_client_connect("unix:relative", &c), -EINVAL);
        ck_assert_int_eq(dp_varlink_client_connect("unix:", &c), -EINVAL);
        ck_assert_int_eq(dp_varlink_client_connect(
                "unix:/0123456789012345678901234567890123456789012345678901234567890123456789"
                "0123456789012345678901234567890123456789", &c), -ENAMETOOLONG);
        ck_assert_ptr_null(c);
        ck_assert_int_eq(dp_varlink_client_new_from_fd(-1, &c), -EINVAL);
}
END_TEST

START_TEST(test_address_forms) {
        struct dp_varlink_client *c = NULL;
        char with_mode[200];
        json_t *out;

        server_start();
        ck_assert_int_eq(dp_varlink_client_connect(path, &c), 0);
        c = dp_varlink_client_free(c);
        snprintf(with_mode, sizeof(with_mode), "%s;mode=0666", address);
        ck_assert_int_eq(dp_varlink_client_connect(with_mode, &c), 0);
        ck_assert_int_eq(dp_varlink_client_call(c, "org.varlink.service.GetInfo", NULL, 0, &out, NULL), 0);
        json_decref(out);
        c = dp_varlink_client_free(c);
        server_stop();
}
END_TEST

/* A fake peer on a socketpair, for replies no real server would send. */
static const struct {
        const char *reply;      /* NULL: the peer just closes */
        bool nul;               /* sent with its terminating NUL */
        int expect;
} fake_replies[] = {
        { "{\"parameters\":{},\"continues\":true}", true, -EBADMSG },  /* continues without more */
        { "not json", true, -EBADMSG },
        { "{\"parameters\":[]}", true, -EBADMSG },
        { "{\"error\":\"bad\"}", true, -EBADMSG },
        { "{\"bogus\":1}", true, -EBADMSG },
        { "{\"parameters\"", false, -ECONNRESET },                      /* no NUL, then EOF */
        { NULL, false, -ECONNRESET },
};

START_TEST(test_bad_replies) {
        struct dp_varlink_client *c = NULL;
        int pair[2];
        char buf[256];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
        ck_assert_int_eq(dp_varlink_client_new_from_fd(pair[0], &c), 0);
        ck_assert_int_eq(dp_varlink_client_set_timeout(c, 5 * 1000 * 1000), 0);
        if (fake_replies[_i].reply) {
                size_t size = strlen(fake_replies[_i].reply) + fake_replies[_i].nul;

                ck_assert_int_eq(write(pair[1], fake_replies[_i].reply, size), (ssize_t) size);
        }
        if (!fake_replies[_i].nul)
                ck_assert_int_eq(shutdown(pair[1], SHUT_WR), 0);
        ck_assert_int_eq(dp_varlink_client_call(c, "a.b.C", NULL, 0, NULL, NULL), fake_replies[_i].expect);
        ck_assert_int_eq(dp_varlink_client_call(c, "a.b.C", NULL, 0, NULL, NULL), -ENOTCONN);
        /* what the client sent */
        ck_assert_int_ge(read(pair[1], buf, sizeof(buf)), 18);
        ck_assert_str_eq(buf, "{\"method\":\"a.b.C\"}");
        dp_varlink_client_free(c);
        close(pair[1]);
}
END_TEST

/* ---- listening ---- */

static void run_loop(sd_event *e) {
        for (int i = 0; i < 1000; i++)
                if (sd_event_run(e, 0) <= 0)
                        return;
}

static int connect_raw(const char *p) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        ck_assert_int_ge(fd, 0);
        strncpy(sa.sun_path, p, sizeof(sa.sun_path) - 1);
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                close(fd);
                return -errno;
        }
        return fd;
}

START_TEST(test_listen_path) {
        _cleanup_varlink_server_ struct dp_varlink_server *s = NULL, *other = NULL;
        sd_event *e = NULL;
        struct stat st;
        char parent[160];
        int fd;

        make_dir();
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(dp_varlink_server_new(e, NULL, &s), 0);
        ck_assert_int_eq(dp_varlink_server_listen_path(s, path, 0660, getgrgid(0) ? getgrgid(0)->gr_name : NULL), 0);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert(S_ISSOCK(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0660);
        ck_assert_int_eq(st.st_gid, 0);
        snprintf(parent, sizeof(parent), "%s/run/sub", dir);
        ck_assert_int_eq(stat(parent, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, 0755);
        ck_assert_int_eq(dp_varlink_server_listen_path(s, path, 0660, NULL), -EBUSY);

        /* a second server must not take over a live socket */
        ck_assert_int_eq(dp_varlink_server_new(e, NULL, &other), 0);
        ck_assert_int_eq(dp_varlink_server_listen_path(other, path, 0660, NULL), -EADDRINUSE);
        ck_assert_int_eq(stat(path, &st), 0);
        other = dp_varlink_server_free(other);

        fd = connect_raw(path);
        ck_assert_int_ge(fd, 0);
        run_loop(e);
        ck_assert_uint_eq(dp_varlink_server_n_connections(s), 1);
        close(fd);
        run_loop(e);
        ck_assert_uint_eq(dp_varlink_server_n_connections(s), 0);

        s = dp_varlink_server_free(s);
        ck_assert_int_eq(stat(path, &st), -1);          /* removed on exit */
        ck_assert_int_eq(errno, ENOENT);
        sd_event_unref(e);
        remove_dir();
}
END_TEST

START_TEST(test_listen_stale_and_foreign) {
        _cleanup_varlink_server_ struct dp_varlink_server *s = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        sd_event *e = NULL;
        struct stat st;
        int fd;

        make_dir();
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(dp_varlink_server_new(e, NULL, &s), 0);

        /* a socket file left behind by a dead server: replaced */
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/stale", dir);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
        ck_assert_int_eq(stat(sa.sun_path, &st), 0);
        ck_assert_int_eq(dp_varlink_server_listen_path(s, sa.sun_path, 0600, NULL), 0);
        fd = connect_raw(sa.sun_path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        s = dp_varlink_server_free(s);

        /* not a socket: left alone */
        ck_assert_int_eq(dp_varlink_server_new(e, NULL, &s), 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/file", dir);
        fd = open(sa.sun_path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
        ck_assert_int_eq(dp_varlink_server_listen_path(s, sa.sun_path, 0660, NULL), -EEXIST);
        ck_assert_int_eq(stat(sa.sun_path, &st), 0);
        ck_assert(S_ISREG(st.st_mode));

        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/nogroup", dir);
        ck_assert_int_eq(dp_varlink_server_listen_path(s, sa.sun_path, 0660, "no-such-group-dp"), -ESRCH);
        ck_assert_int_eq(dp_varlink_server_listen_path(s, "relative", 0660, NULL), -EINVAL);
        s = dp_varlink_server_free(s);
        sd_event_unref(e);
        remove_dir();
}
END_TEST

/* Caps apply to accepted connections: the one over the cap is closed. */
START_TEST(test_listen_caps) {
        struct dp_varlink_server_settings settings = { .max_connections_per_uid = 2 };
        _cleanup_varlink_server_ struct dp_varlink_server *s = NULL;
        sd_event *e = NULL;
        int fds[3];
        char c;

        make_dir();
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(dp_varlink_server_new(e, &settings, &s), 0);
        ck_assert_int_eq(dp_varlink_server_listen_path(s, path, 0660, NULL), 0);
        for (int i = 0; i < 3; i++) {
                fds[i] = connect_raw(path);
                ck_assert_int_ge(fds[i], 0);
                run_loop(e);
        }
        ck_assert_uint_eq(dp_varlink_server_n_connections(s), 2);
        ck_assert_int_eq(recv(fds[2], &c, 1, MSG_DONTWAIT), 0);           /* closed */
        ck_assert_int_eq(recv(fds[0], &c, 1, MSG_DONTWAIT), -1);          /* open, nothing to read */
        ck_assert_int_eq(errno, EAGAIN);
        for (int i = 0; i < 3; i++)
                close(fds[i]);
        s = dp_varlink_server_free(s);
        sd_event_unref(e);
        remove_dir();
}
END_TEST

START_TEST(test_listen_auto) {
        _cleanup_varlink_server_ struct dp_varlink_server *s = NULL;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char pid[32];
        sd_event *e = NULL;
        int fd, saved = -1, client;

        make_dir();
        ck_assert_int_ge(sd_event_new(&e), 0);

        /* activated: fd 3, named "varlink" */
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/activated", dir);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        if (fcntl(3, F_GETFD) >= 0)
                saved = fcntl(3, F_DUPFD_CLOEXEC, 10);
        ck_assert_int_eq(dup2(fd, 3), 3);
        close(fd);
        snprintf(pid, sizeof(pid), "%d", (int) getpid());
        setenv("LISTEN_PID", pid, 1);
        setenv("LISTEN_FDS", "1", 1);
        setenv("LISTEN_FDNAMES", "varlink", 1);
        ck_assert_int_eq(dp_varlink_server_new(e, NULL, &s), 0);
        ck_assert_int_eq(dp_varlink_server_listen_auto(s, path, NULL), 1);
        client = connect_raw(sa.sun_path);
        ck_assert_int_ge(client, 0);
        run_loop(e);
        ck_assert_uint_eq(dp_varlink_server_n_connections(s), 1);
        close(client);
        s = dp_varlink_server_free(s);                  /* closes fd 3 */
        if (saved >= 0) {
                dup2(saved, 3);
                close(saved);
        }

        /* not activated (another name): binds the path */
        setenv("LISTEN_FDNAMES", "other", 1);
        unsetenv("LISTEN_FDS");
        ck_assert_int_eq(dp_varlink_server_new(e, NULL, &s), 0);
        ck_assert_int_eq(dp_varlink_server_listen_auto(s, path, NULL), 0);
        client = connect_raw(path);
        ck_assert_int_ge(client, 0);
        close(client);
        s = dp_varlink_server_free(s);
        sd_event_unref(e);
        remove_dir();
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("varlink-client");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_call_and_errors);
        tcase_add_test(tc, test_more);
        tcase_add_test(tc, test_timeout);
        tcase_add_test(tc, test_connect_errors);
        tcase_add_test(tc, test_address_forms);
        tcase_add_loop_test(tc, test_bad_replies, 0, (int) DP_ARRAY_SIZE(fake_replies));
        tcase_add_test(tc, test_listen_path);
        tcase_add_test(tc, test_listen_stale_and_foreign);
        tcase_add_test(tc, test_listen_caps);
        tcase_add_test(tc, test_listen_auto);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
