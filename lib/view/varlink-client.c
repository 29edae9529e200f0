/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include "macro.h"
#include "varlink-client.h"
#include "time-util.h"

#define READ_CHUNK ((size_t) 64 * 1024)

struct dp_varlink_client {
        int fd;
        uint64_t timeout_usec;

        char *input;            /* received bytes [input_start, input_end) */
        size_t input_start;
        size_t input_end;
        size_t input_allocated;
        size_t scanned;         /* bytes from input_start known to hold no NUL */

        bool call_more;         /* the current call asked for more */
        bool continues;         /* ... and its last reply said continues */
        int error;              /* the connection failed with this */

        struct dp_varlink_reply_message last;   /* owns the error name handed out */
};

static uint64_t deadline_after(uint64_t timeout_usec) {
        uint64_t now = dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_USEC;

        if (timeout_usec == DP_VARLINK_TIMEOUT_INFINITY || timeout_usec > UINT64_MAX - now)
                return DP_VARLINK_TIMEOUT_INFINITY;
        return now + timeout_usec;
}

/* Waits for events on the socket until deadline: 0, -ETIMEDOUT, or -errno. */
static int wait_for(struct dp_varlink_client *c, short events, uint64_t deadline) {
        for (;;) {
                struct pollfd p = { .fd = c->fd, .events = events };
                int timeout_ms = -1, n;

                if (deadline != DP_VARLINK_TIMEOUT_INFINITY) {
                        uint64_t now = dp_now_ns(CLOCK_MONOTONIC) / NSEC_PER_USEC;

                        if (now >= deadline)
                                return -ETIMEDOUT;
                        timeout_ms = (int) DP_MIN((deadline - now + 999) / 1000, (uint64_t) INT_MAX);
                }
                n = poll(&p, 1, timeout_ms);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return dp_negative_errno();
                }
                if (n > 0)
                        return 0;
        }
}

static int fail(struct dp_varlink_client *c, int error) {
        if (c->error == 0)
                c->error = error;
        return error;
}

int dp_varlink_client_new_from_fd(int fd, struct dp_varlink_client **ret) {
        struct dp_varlink_client *c;
        int flags;

        if (fd < 0 || !ret) {
                if (fd >= 0)
                        close(fd);
                return -EINVAL;
        }

        flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
                int r = dp_negative_errno();

                close(fd);
                return r;
        }

        c = calloc(1, sizeof(*c));
        if (!c) {
                close(fd);
                return -ENOMEM;
        }
        c->fd = fd;
        c->timeout_usec = DP_VARLINK_CLIENT_TIMEOUT_DEFAULT_USEC;
        *ret = c;
        return 0;
}

/* "unix:/path", "unix:@name", "/path"; anything from ';' on is ignored. */
static int parse_address(const char *address, struct sockaddr_un *sa, socklen_t *ret_len) {
        const char *path = address;
        size_t n;

        if (strncmp(path, "unix:", 5) == 0)
                path += 5;
        n = strcspn(path, ";");
        if (n == 0 || (path[0] != '/' && path[0] != '@'))
                return -EINVAL;
        if (n >= sizeof(sa->sun_path))
                return -ENAMETOOLONG;

        *sa = (struct sockaddr_un) { .sun_family = AF_UNIX };
        memcpy(sa->sun_path, path, n);
        if (path[0] == '@')
                sa->sun_path[0] = '\0';         /* abstract namespace: no NUL terminator */
        else
                n++;
        *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n);
        return 0;
}

int dp_varlink_client_connect(const char *address, struct dp_varlink_client **ret) {
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa;
        struct timeval tv = {
                .tv_sec = DP_VARLINK_CLIENT_TIMEOUT_DEFAULT_USEC / 1000000,
        };
        socklen_t len;
        int r;

        if (!address || !ret)
                return -EINVAL;
        r = parse_address(address, &sa, &len);
        if (r < 0)
                return r;

        /* A blocking connect, bounded by SO_SNDTIMEO: a non-blocking
         * connect() on a unix socket with a full backlog just fails. */
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return dp_negative_errno();
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
                return dp_negative_errno();
        if (connect(fd, (struct sockaddr *) &sa, len) < 0)
                return errno == EAGAIN || errno == EINPROGRESS ? -ETIMEDOUT : dp_negative_errno();

        return dp_varlink_client_new_from_fd(DP_TAKE_FD(fd), ret);
}

struct dp_varlink_client *dp_varlink_client_free(struct dp_varlink_client *c) {
        if (!c)
                return NULL;
        if (c->fd >= 0)
                close(c->fd);
        free(c->input);
        dp_varlink_reply_message_done(&c->last);
        free(c);
        return NULL;
}

int dp_varlink_client_set_timeout(struct dp_varlink_client *c, uint64_t usec) {
        if (!c)
                return -EINVAL;
        c->timeout_usec = usec;
        return 0;
}

int dp_varlink_client_get_fd(struct dp_varlink_client *c) {
        if (!c)
                return -EINVAL;
        return c->error ? -ENOTCONN : c->fd;
}

static int write_all(struct dp_varlink_client *c, const char *data, size_t size, uint64_t deadline) {
        while (size > 0) {
                ssize_t n = send(c->fd, data, size, MSG_NOSIGNAL | MSG_DONTWAIT);
                int r;

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EPIPE || errno == ECONNRESET)
                                return -ECONNRESET;
                        if (errno != EAGAIN)
                                return dp_negative_errno();
                        r = wait_for(c, POLLOUT, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                data += n;
                size -= (size_t) n;
        }
        return 0;
}

static int input_reserve(struct dp_varlink_client *c, size_t room) {
        if (c->input_end + room <= c->input_allocated)
                return 0;
        if (c->input_start > 0) {
                memmove(c->input, c->input + c->input_start, c->input_end - c->input_start);
                c->input_end -= c->input_start;
                c->input_start = 0;
        }
        if (c->input_end + room > c->input_allocated) {
                size_t want = DP_MAX(c->input_end + room, c->input_allocated * 2);
                char *p = realloc(c->input, want);

                if (!p)
                        return -ENOMEM;
                c->input = p;
                c->input_allocated = want;
        }
        return 0;
}

/* Reads until a whole message is buffered; *ret_size is its length without
 * the NUL.  The message stays in the buffer until consumed. */
static int read_message(struct dp_varlink_client *c, uint64_t deadline, const char **ret, size_t *ret_size) {
        for (;;) {
                size_t buffered = c->input_end - c->input_start;
                const char *base = c->input + c->input_start;
                const char *nul = buffered > c->scanned ? memchr(base + c->scanned, '\0', buffered - c->scanned)
                                                        : NULL;
                ssize_t n;
                int r;

                if (nul) {
                        *ret = base;
                        *ret_size = (size_t) (nul - base);
                        c->scanned = 0;
                        return *ret_size > DP_VARLINK_MESSAGE_SIZE_MAX ? -EMSGSIZE : 0;
                }
                c->scanned = buffered;
                if (buffered > DP_VARLINK_MESSAGE_SIZE_MAX)
                        return -EMSGSIZE;

                r = input_reserve(c, READ_CHUNK);
                if (r < 0)
                        return r;
                n = recv(c->fd, c->input + c->input_end, READ_CHUNK, MSG_DONTWAIT);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == ECONNRESET)
                                return -ECONNRESET;
                        if (errno != EAGAIN)
                                return dp_negative_errno();
                        r = wait_for(c, POLLIN, deadline);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (n == 0)
                        return -ECONNRESET;
                c->input_end += (size_t) n;
        }
}

static int receive_reply(struct dp_varlink_client *c, json_t **ret_parameters, const char **ret_error) {
        struct dp_varlink_reply_message reply;
        const char *text;
        size_t size;
        int r;

        r = read_message(c, deadline_after(c->timeout_usec), &text, &size);
        if (r < 0)
                return fail(c, r);
        r = dp_varlink_reply_message_parse(text, size, &reply, NULL);
        c->input_start += size + 1;
        if (r < 0)
                return fail(c, r == -ENOMEM ? r : -EBADMSG);
        if (reply.continues && !c->call_more) {
                dp_varlink_reply_message_done(&reply);
                return fail(c, -EBADMSG);
        }

        dp_varlink_reply_message_done(&c->last);
        c->last = reply;
        c->continues = reply.continues;

        if (ret_parameters)
                *ret_parameters = json_incref(c->last.parameters);
        if (ret_error)
                *ret_error = c->last.error;
        return c->continues ? 1 : 0;
}

int dp_varlink_client_call(struct dp_varlink_client *c, const char *method, json_t *parameters,
                           unsigned flags, json_t **ret_parameters, const char **ret_error) {
        bool oneway = flags & DP_VARLINK_CALL_ONEWAY, more = flags & DP_VARLINK_CALL_MORE;
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        if (ret_parameters)
                *ret_parameters = NULL;
        if (ret_error)
                *ret_error = NULL;
        if (!c || (flags & ~(unsigned) (DP_VARLINK_CALL_ONEWAY | DP_VARLINK_CALL_MORE)))
                return -EINVAL;
        if (c->error)
                return -ENOTCONN;
        if (c->continues)
                return -EBUSY;

        r = dp_varlink_call_message_format(method, parameters, oneway, more, &text, &size);
        if (r < 0)
                return r;

        r = write_all(c, text, size, deadline_after(c->timeout_usec));
        if (r < 0)
                return fail(c, r);
        if (oneway)
                return 0;

        c->call_more = more;
        return receive_reply(c, ret_parameters, ret_error);
}

int dp_varlink_client_next(struct dp_varlink_client *c, json_t **ret_parameters, const char **ret_error) {
        if (ret_parameters)
                *ret_parameters = NULL;
        if (ret_error)
                *ret_error = NULL;
        if (!c)
                return -EINVAL;
        if (c->error)
                return -ENOTCONN;
        if (!c->continues)
                return -ENOMSG;
        return receive_reply(c, ret_parameters, ret_error);
}
