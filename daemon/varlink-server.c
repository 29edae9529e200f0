/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The transport of the varlink server: sockets, sd-event sources, caps and
 * timeouts.  The protocol is lib/varlink/varlink-connection.c, the routing of
 * calls lib/varlink/varlink-service.c. */

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>

#include "macro.h"
#include "varlink-connection.h"
#include "varlink-socket.h"
#include "log.h"
#include "varlink-server.h"

#define READ_CHUNK ((size_t) 64 * 1024)
/* Reads per wakeup and connection, so one busy client cannot starve others. */
#define READS_PER_WAKEUP 4
#define ACCEPTS_PER_WAKEUP 64
/* Calls per wakeup and connection: a client's pipelined calls take turns
 * with everyone else's instead of holding the loop. */
#define CALLS_PER_WAKEUP 1
/* Pipelined calls are dispatched only while less than this much output is
 * queued: a client that reads slowly is paced instead of dropped. */
#define DISPATCH_OUTPUT_THRESHOLD ((size_t) 1024 * 1024)
/* After EMFILE and friends, stop accepting for this long. */
#define ACCEPT_PAUSE_USEC (100ULL * 1000ULL)

struct uid_count {
        uid_t uid;
        unsigned n;
};

struct listener {
        struct dp_varlink_server *server;
        int fd;
        sd_event_source *io;
        sd_event_source *pause;
};

struct connection {
        struct dp_varlink_peer peer;    /* first: the service's view */
        struct dp_varlink_server *server;
        struct connection *prev, *next;
        int fd;
        sd_event_source *io;
        sd_event_source *timer;
        sd_event_source *defer;
        bool timer_armed;
};

struct dp_varlink_server {
        sd_event *event;
        struct dp_varlink_server_settings settings;
        struct dp_varlink_service *service;

        struct listener **listeners;
        size_t n_listeners;
        char *bound_path;
        ino_t bound_inode;

        struct connection *connections;
        unsigned n_connections;
        struct uid_count *uids;
        size_t n_uids;
};

/* ---- connections ---- */

static struct uid_count *uid_count_find(struct dp_varlink_server *s, uid_t uid) {
        for (size_t i = 0; i < s->n_uids; i++)
                if (s->uids[i].uid == uid)
                        return &s->uids[i];
        return NULL;
}

static void connection_free(struct connection *c) {
        struct dp_varlink_server *s = c->server;
        struct uid_count *u;

        dp_varlink_service_disconnect(s->service, &c->peer);

        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(c->timer);
        sd_event_source_disable_unref(c->defer);
        if (c->fd >= 0)
                close(c->fd);
        dp_varlink_connection_free(c->peer.connection);

        if (c->prev)
                c->prev->next = c->next;
        else
                s->connections = c->next;
        if (c->next)
                c->next->prev = c->prev;
        s->n_connections--;

        u = uid_count_find(s, c->peer.uid);
        if (u && --u->n == 0)
                *u = s->uids[--s->n_uids];
        free(c);
}

/* Replies were queued (or the peer failed) outside of connection_process():
 * write them out, or close, from the event loop. */
static void connection_wake(struct dp_varlink_peer *peer, void *userdata) {
        struct connection *c = userdata;

        (void) peer;
        (void) sd_event_source_set_enabled(c->defer, SD_EVENT_ONESHOT);
}

static int connection_read(struct connection *c, uint32_t revents) {
        char buf[READ_CHUNK];

        for (unsigned i = 0; i < READS_PER_WAKEUP; i++) {
                ssize_t n;
                int r;

                if (!dp_varlink_connection_wants_input(c->peer.connection)) {
                        /* A complete call waits, so we do not read; but a
                         * hung-up peer can never read its replies either. */
                        if (revents & (EPOLLHUP | EPOLLERR))
                                return -ECONNRESET;
                        return 0;
                }

                n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return dp_negative_errno();
                }
                if (n == 0) {
                        dp_varlink_connection_feed_eof(c->peer.connection);
                        return 0;
                }
                r = dp_varlink_connection_feed(c->peer.connection, buf, (size_t) n);
                if (r < 0) {
                        log_debug("varlink: protocol error from pid %d: %s", (int) c->peer.pid,
                                  r == -EMSGSIZE ? "message too large" : strerror(-r));
                        return r;
                }
        }
        return 0;
}

static int connection_write(struct connection *c) {
        for (;;) {
                size_t size;
                const void *p = dp_varlink_connection_output(c->peer.connection, &size);
                ssize_t n;

                if (size == 0)
                        return 0;
                n = send(c->fd, p, size, MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN)
                                return 0;
                        return dp_negative_errno();
                }
                dp_varlink_connection_output_advance(c->peer.connection, (size_t) n);
        }
}

/* What to wait for next: EPOLLIN while a message is incomplete, EPOLLOUT
 * while output is queued; and the idle clock, which runs from the end of
 * the last call (not from the last byte, so a trickle cannot keep a partial
 * message alive) and stops while a call is in progress. */
static int connection_update(struct connection *c) {
        struct dp_varlink_server *s = c->server;
        struct dp_varlink_connection *proto = c->peer.connection;
        uint32_t events = 0;
        uint64_t now;
        int r;

        if (dp_varlink_connection_wants_input(proto))
                events |= EPOLLIN;
        if (dp_varlink_connection_output_size(proto) > 0)
                events |= EPOLLOUT;
        r = sd_event_source_set_io_events(c->io, events);
        if (r < 0)
                return r;

        if (dp_varlink_connection_call_in_progress(proto) || s->settings.idle_timeout_usec == UINT64_MAX) {
                c->timer_armed = false;
                return sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
        }
        if (c->timer_armed)
                return 0;

        r = sd_event_now(s->event, CLOCK_MONOTONIC, &now);
        if (r < 0)
                return r;
        r = sd_event_source_set_time(c->timer, now + s->settings.idle_timeout_usec);
        if (r < 0)
                return r;
        c->timer_armed = true;
        return sd_event_source_set_enabled(c->timer, SD_EVENT_ONESHOT);
}

/* Everything a connection can do now: read, dispatch, write, then decide
 * what to wait for.  Closes the connection when it is over. */
static void connection_process(struct connection *c, uint32_t revents) {
        struct dp_varlink_connection *proto = c->peer.connection;
        bool throttled = false;
        unsigned calls = 0;
        const char *reason;
        int r;

        if (c->peer.failed)
                goto close;

        r = connection_read(c, revents);
        if (r < 0)
                goto flush_and_close;

        while (!c->peer.failed) {
                struct dp_varlink_call_message m;

                if (dp_varlink_connection_output_size(proto) >= DISPATCH_OUTPUT_THRESHOLD ||
                    calls >= CALLS_PER_WAKEUP) {
                        throttled = true;
                        break;
                }
                r = dp_varlink_connection_take_call(proto, &m, &reason);
                if (r == 0)
                        break;
                if (r < 0) {
                        log_debug("varlink: protocol error from pid %d: %s", (int) c->peer.pid,
                                  reason ?: strerror(-r));
                        goto flush_and_close;
                }
                c->timer_armed = false;         /* a complete call: the idle clock restarts after it */
                calls++;
                dp_varlink_service_dispatch(c->server->service, &c->peer, &m);
                dp_varlink_call_message_done(&m);
        }
        if (c->peer.failed)
                goto close;

        r = connection_write(c);
        if (r < 0 || dp_varlink_connection_is_finished(proto))
                goto close;

        /* Output drained below the threshold at once: go on with pipelined
         * calls at the next turn (otherwise EPOLLOUT brings us back). */
        if (throttled && dp_varlink_connection_output_size(proto) < DISPATCH_OUTPUT_THRESHOLD)
                connection_wake(&c->peer, c);

        r = connection_update(c);
        if (r < 0)
                goto close;
        return;

flush_and_close:
        /* Replies to the calls before a protocol error still go out, as far
         * as the socket takes them now. */
        (void) connection_write(c);
close:
        connection_free(c);
}

static int on_connection_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        (void) source;
        (void) fd;
        connection_process(userdata, revents);
        return 0;
}

static int on_connection_defer(sd_event_source *source, void *userdata) {
        (void) source;
        connection_process(userdata, 0);
        return 0;
}

static int on_connection_timeout(sd_event_source *source, uint64_t usec, void *userdata) {
        struct connection *c = userdata;

        (void) source;
        (void) usec;
        log_debug("varlink: closing idle connection of pid %d%s", (int) c->peer.pid,
                  dp_varlink_connection_has_partial_input(c->peer.connection) ? " (incomplete message)" : "");
        connection_free(c);
        return 0;
}

/* The peer's credentials, if the caps let it have one more connection;
 * *ret_count is its uid's count, NULL for its first. */
static int connection_admit(struct dp_varlink_server *s, int fd, struct ucred *ret_cred,
                            struct uid_count **ret_count) {
        socklen_t len = sizeof(*ret_cred);
        struct uid_count *u;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ret_cred, &len) < 0)
                return dp_negative_errno();
        if (s->n_connections >= s->settings.max_connections) {
                log_debug("varlink: refusing pid %d: %u connections already", (int) ret_cred->pid,
                          s->n_connections);
                return -EUSERS;
        }
        u = uid_count_find(s, ret_cred->uid);
        if (u && u->n >= s->settings.max_connections_per_uid) {
                log_debug("varlink: refusing pid %d: uid %u has %u connections already",
                          (int) ret_cred->pid, (unsigned) ret_cred->uid, u->n);
                return -EDQUOT;
        }
        *ret_count = u;
        return 0;
}

/* A connection on @fd, linked and counted (also its uid, @u or a new
 * count), so that connection_free() undoes all; NULL when out of memory. */
static struct connection *connection_new(struct dp_varlink_server *s, int fd, const struct ucred *cred,
                                         struct uid_count *u) {
        struct connection *c = calloc(1, sizeof(*c));

        if (!u) {
                struct uid_count *uids = c ? realloc(s->uids, (s->n_uids + 1) * sizeof(*uids)) : NULL;

                if (uids) {
                        s->uids = uids;
                        u = &uids[s->n_uids++];
                        *u = (struct uid_count) { .uid = cred->uid };
                }
        }
        if (!c || !u) {
                free(c);
                return NULL;
        }
        c->server = s;
        c->fd = fd;
        c->peer = (struct dp_varlink_peer) {
                .uid = cred->uid, .gid = cred->gid, .pid = cred->pid,
                .wake = connection_wake, .wake_userdata = c,
        };
        c->next = s->connections;
        if (c->next)
                c->next->prev = c;
        s->connections = c;
        s->n_connections++;
        u->n++;
        return c;
}

/* Non-blocking, with its protocol state, its event sources and the idle clock running. */
static int connection_start(struct connection *c) {
        struct dp_varlink_server *s = c->server;
        struct dp_varlink_connection_limits limits = {
                .max_message = s->settings.max_message,
                .max_output = s->settings.max_output,
        };
        int r;

        r = fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK) < 0 ? dp_negative_errno() : 0;
        if (r >= 0)
                r = dp_varlink_connection_new(&limits, &c->peer.connection);
        if (r >= 0)
                r = sd_event_add_io(s->event, &c->io, c->fd, EPOLLIN, on_connection_io, c);
        if (r >= 0)
                r = sd_event_add_time(s->event, &c->timer, CLOCK_MONOTONIC, UINT64_MAX, 0,
                                      on_connection_timeout, c);
        if (r >= 0)
                r = sd_event_add_defer(s->event, &c->defer, on_connection_defer, c);
        /* Going on with a client's pipelined calls waits for everyone else's I/O. */
        if (r >= 0)
                r = sd_event_source_set_priority(c->defer, SD_EVENT_PRIORITY_IDLE);
        if (r >= 0)
                r = sd_event_source_set_enabled(c->defer, SD_EVENT_OFF);
        if (r >= 0)
                r = connection_update(c);
        return r;
}

int dp_varlink_server_add_connection(struct dp_varlink_server *s, int fd) {
        struct uid_count *u = NULL;
        struct ucred cred = {};
        struct connection *c;
        int r;

        if (fd < 0)
                return -EBADF;
        r = connection_admit(s, fd, &cred, &u);
        if (r < 0) {
                close(fd);
                return r;
        }
        c = connection_new(s, fd, &cred, u);
        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        r = connection_start(c);
        if (r < 0) {
                connection_free(c);
                return r;
        }
        return 0;
}

unsigned dp_varlink_server_n_connections(const struct dp_varlink_server *s) {
        return s->n_connections;
}

/* ---- listening ---- */

static int on_listener_resume(sd_event_source *source, uint64_t usec, void *userdata) {
        struct listener *l = userdata;

        (void) source;
        (void) usec;
        return sd_event_source_set_enabled(l->io, SD_EVENT_ON);
}

/* Out of fds or memory: the listening socket stays readable, so retrying
 * at once would spin. */
static void listener_pause(struct listener *l) {
        uint64_t now;

        if (sd_event_now(l->server->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        if (!l->pause) {
                if (sd_event_add_time(l->server->event, &l->pause, CLOCK_MONOTONIC, now + ACCEPT_PAUSE_USEC, 0,
                                      on_listener_resume, l) < 0)
                        return;
        } else if (sd_event_source_set_time(l->pause, now + ACCEPT_PAUSE_USEC) < 0 ||
                   sd_event_source_set_enabled(l->pause, SD_EVENT_ONESHOT) < 0)
                return;
        (void) sd_event_source_set_enabled(l->io, SD_EVENT_OFF);
}

static int on_listener_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        struct listener *l = userdata;

        (void) source;
        (void) revents;
        for (unsigned i = 0; i < ACCEPTS_PER_WAKEUP; i++) {
                int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

                if (cfd < 0) {
                        if (errno == EAGAIN)
                                break;
                        if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
                                continue;
                        log_warning("varlink: accept() failed: %m");
                        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                                listener_pause(l);
                        break;
                }
                (void) dp_varlink_server_add_connection(l->server, cfd);
        }
        return 0;
}

static void listener_free(struct listener *l) {
        sd_event_source_disable_unref(l->io);
        sd_event_source_disable_unref(l->pause);
        if (l->fd >= 0)
                close(l->fd);
        free(l);
}

int dp_varlink_server_listen_fd(struct dp_varlink_server *s, int fd) {
        struct listener *l, **listeners;
        int r;

        if (fd < 0)
                return -EBADF;
        r = sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0);
        if (r <= 0) {
                close(fd);
                return r < 0 ? r : -ENOTSOCK;
        }
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
                r = dp_negative_errno();
                close(fd);
                return r;
        }

        l = calloc(1, sizeof(*l));
        listeners = realloc(s->listeners, (s->n_listeners + 1) * sizeof(*listeners));
        if (listeners)
                s->listeners = listeners;
        if (!l || !listeners) {
                free(l);
                close(fd);
                return -ENOMEM;
        }
        *l = (struct listener) { .server = s, .fd = fd };
        r = sd_event_add_io(s->event, &l->io, fd, EPOLLIN, on_listener_io, l);
        if (r < 0) {
                listener_free(l);
                return r;
        }
        s->listeners[s->n_listeners++] = l;
        return 0;
}

int dp_varlink_server_listen_path(struct dp_varlink_server *s, const char *path, mode_t mode,
                                  const char *group) {
        char *copy;
        ino_t inode;
        int fd, r;

        if (s->bound_path)
                return -EBUSY;          /* one path per server: it is removed at exit */
        copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        r = dp_varlink_socket_bind(path, mode, group, &fd, &inode);
        if (r < 0) {
                free(copy);
                return log_error_errno(r, "varlink: cannot listen on %s: %m", path);
        }
        r = dp_varlink_server_listen_fd(s, fd);
        if (r < 0) {
                (void) dp_varlink_socket_unlink(path, inode);
                free(copy);
                return r;
        }
        s->bound_path = copy;
        s->bound_inode = inode;
        return 0;
}

int dp_varlink_server_listen_auto(struct dp_varlink_server *s, const char *path, const char *group) {
        char **names = NULL;
        int n, fd = -1, r;

        n = sd_listen_fds_with_names(false, &names);
        if (n < 0)
                log_warning_errno(n, "varlink: ignoring invalid $LISTEN_FDS: %m");
        for (int i = 0; i < n; i++) {
                if (fd < 0 && names && names[i] && strcmp(names[i], DP_VARLINK_SERVER_FD_NAME) == 0)
                        fd = SD_LISTEN_FDS_START + i;
                if (names)
                        free(names[i]);
        }
        free(names);

        if (fd >= 0) {
                r = dp_varlink_server_listen_fd(s, fd);
                return r < 0 ? r : 1;
        }
        return dp_varlink_server_listen_path(s, path ?: DP_VARLINK_SERVER_SOCKET_PATH, 0660, group);
}

/* ---- setup ---- */

int dp_varlink_server_add_interface(struct dp_varlink_server *s, const char *idl_text) {
        struct dp_varlink_idl_error error;
        int r;

        r = dp_varlink_service_add_interface(s->service, idl_text, &error);
        if (r == -EINVAL)
                log_error("varlink: interface description, line %u column %u: %s", error.line, error.column,
                          error.message);
        else if (r < 0)
                return log_error_errno(r, "varlink: cannot add interface: %m");
        return r;
}

int dp_varlink_server_bind(struct dp_varlink_server *s, const struct dp_varlink_method_binding *bindings,
                           size_t n) {
        size_t failed = 0;
        int r;

        r = dp_varlink_service_bind(s->service, bindings, n, &failed);
        if (r < 0)
                return log_error_errno(r, "varlink: cannot bind %s: %m", bindings[failed].method ?: "(null)");
        return 0;
}

void dp_varlink_server_set_userdata(struct dp_varlink_server *s, void *userdata) {
        dp_varlink_service_set_userdata(s->service, userdata);
}

int dp_varlink_server_set_info(struct dp_varlink_server *s, const char *vendor, const char *product,
                               const char *version, const char *url) {
        return dp_varlink_service_set_info(s->service, vendor, product, version, url);
}

int dp_varlink_server_new(sd_event *event, const struct dp_varlink_server_settings *settings,
                          struct dp_varlink_server **ret) {
        struct dp_varlink_server *s;
        int r;

        if (!event || !ret)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->event = sd_event_ref(event);
        if (settings)
                s->settings = *settings;
        if (s->settings.max_connections == 0)
                s->settings.max_connections = DP_VARLINK_SERVER_MAX_CONNECTIONS;
        if (s->settings.max_connections_per_uid == 0)
                s->settings.max_connections_per_uid = DP_VARLINK_SERVER_MAX_CONNECTIONS_PER_UID;
        if (s->settings.idle_timeout_usec == 0)
                s->settings.idle_timeout_usec = DP_VARLINK_SERVER_IDLE_TIMEOUT_USEC;

        r = dp_varlink_service_new(&s->service);
        if (r < 0) {
                dp_varlink_server_free(s);
                return r;
        }
        dp_varlink_service_set_validate_replies(s->service, s->settings.validate_replies);
        *ret = s;
        return 0;
}

struct dp_varlink_server *dp_varlink_server_free(struct dp_varlink_server *s) {
        if (!s)
                return NULL;
        while (s->connections)
                connection_free(s->connections);
        for (size_t i = 0; i < s->n_listeners; i++)
                listener_free(s->listeners[i]);
        free(s->listeners);
        if (s->bound_path)
                (void) dp_varlink_socket_unlink(s->bound_path, s->bound_inode);
        free(s->bound_path);
        dp_varlink_service_free(s->service);
        free(s->uids);
        sd_event_unref(s->event);
        free(s);
        return NULL;
}
