/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* damonctl: talking to the daemon, and saying clearly why that failed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"
#include "damonctl.h"

volatile sig_atomic_t ctl_interrupted;
static volatile sig_atomic_t socket_fd = -1;

static void on_signal(int sig) {
        (void) sig;
        ctl_interrupted = 1;
        /* Async-signal-safe, and wakes a blocking read wherever the client is in it. */
        if (socket_fd >= 0)
                shutdown(socket_fd, SHUT_RDWR);
}

int ctl_handle_signals(void) {
        struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) {
                fprintf(stderr, "sigaction: %s\n", strerror(errno));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

const char *ctl_address_path(const struct ctl *ctl) {
        static char path[4096];
        const char *a = ctl->address;

        if (strncmp(a, "unix:", 5) == 0)
                a += 5;
        /* varlink addresses may carry ";mode=..." */
        snprintf(path, sizeof(path), "%.*s", (int) strcspn(a, ";"), a);
        return path;
}

int ctl_connect(struct ctl *ctl) {
        int r, fd;

        if (ctl->client)
                return CTL_EXIT_OK;
        r = dp_varlink_client_connect(ctl->address, &ctl->client);
        switch (r) {
        case 0:
                break;
        case -ENOENT:
                fprintf(stderr, "damon-perfd is not running (no socket at %s)\n", ctl_address_path(ctl));
                return CTL_EXIT_UNREACHABLE;
        case -ECONNREFUSED:
                fprintf(stderr, "damon-perfd is not running (nothing listens on %s)\n", ctl_address_path(ctl));
                return CTL_EXIT_UNREACHABLE;
        case -EACCES:
        case -EPERM:
                fprintf(stderr, "permission denied on %s: talking to damon-perfd needs privileges "
                        "(root or the socket's group)\n", ctl_address_path(ctl));
                return CTL_EXIT_PERMISSION;
        case -EINVAL:
                fprintf(stderr, "invalid address '%s': expected unix:PATH\n", ctl->address);
                return CTL_EXIT_USAGE;
        default:
                fprintf(stderr, "cannot connect to damon-perfd at %s: %s\n", ctl_address_path(ctl), strerror(-r));
                return CTL_EXIT_UNREACHABLE;
        }
        fd = dp_varlink_client_get_fd(ctl->client);
        if (fd >= 0)
                socket_fd = fd;
        if (ctl_interrupted && fd >= 0)
                shutdown(fd, SHUT_RDWR);
        return CTL_EXIT_OK;
}

static const char *error_hint(const char *error, json_t *parameters, char *buf, size_t size) {
        if (strcmp(error, CTL_INTERFACE ".NoSuchTarget") == 0)
                return "that target is not monitored";
        if (strcmp(error, DP_VARLINK_ERROR_PERMISSION_DENIED) == 0)
                return "only root may call this";
        if (strcmp(error, DP_VARLINK_ERROR_METHOD_NOT_FOUND) == 0 ||
            strcmp(error, DP_VARLINK_ERROR_INTERFACE_NOT_FOUND) == 0)
                return "this damon-perfd does not know it; is it older than damonctl?";
        if (strcmp(error, DP_VARLINK_ERROR_SYSTEM) == 0) {
                json_t *e = json_object_get(parameters, "errno");

                if (json_is_integer(e) && json_integer_value(e) > 0 && json_integer_value(e) < 4096) {
                        snprintf(buf, size, "%s", strerror((int) json_integer_value(e)));
                        return buf;
                }
        }
        return NULL;
}

/* An exit code for the outcome @r / @error of a call or next. */
static int check_reply(const char *method, int r, const char *error, json_t *parameters) {
        if (r < 0) {
                if (ctl_interrupted)
                        return CTL_EXIT_OK;
                switch (r) {
                case -ECONNRESET:
                case -EPIPE:
                case -ENOTCONN:
                        fprintf(stderr, "%s failed: damon-perfd closed the connection (did it stop?)\n", method);
                        return CTL_EXIT_UNREACHABLE;
                case -ETIMEDOUT:
                        fprintf(stderr, "%s failed: no reply from damon-perfd within %llu s\n", method,
                                DP_VARLINK_CLIENT_TIMEOUT_DEFAULT_USEC / 1000000ULL);
                        return CTL_EXIT_FAILURE;
                case -EBADMSG:
                        fprintf(stderr, "%s failed: invalid varlink reply from damon-perfd\n", method);
                        return CTL_EXIT_FAILURE;
                default:
                        fprintf(stderr, "%s failed: %s\n", method, strerror(-r));
                        return CTL_EXIT_FAILURE;
                }
        }
        if (error) {
                _cleanup_free_ char *text = json_dumps(parameters, JSON_COMPACT);
                const char *hint;
                char buf[256];

                hint = error_hint(error, parameters, buf, sizeof(buf));
                fprintf(stderr, "%s failed: %s %s%s%s\n", method, error, text ? text : "{}", hint ? ": " : "",
                        hint ?: "");
                return strcmp(error, DP_VARLINK_ERROR_PERMISSION_DENIED) == 0 ? CTL_EXIT_PERMISSION
                                                                               : CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

static int call(struct ctl *ctl, const char *method, json_t *parameters, unsigned flags, json_t **ret,
                bool *continues) {
        char qualified[128];
        const char *error = NULL;
        json_t *reply = NULL;
        int r, k;

        k = ctl_connect(ctl);
        if (k != CTL_EXIT_OK)
                return k;
        snprintf(qualified, sizeof(qualified), CTL_INTERFACE ".%s", method);
        r = dp_varlink_client_call(ctl->client, qualified, parameters, flags, &reply, &error);
        k = check_reply(method, r, error, reply);
        if (k != CTL_EXIT_OK || (r < 0 && ctl_interrupted)) {
                json_decref(reply);
                *ret = NULL;
                return k;
        }
        if (continues)
                *continues = r > 0;
        *ret = reply;
        return CTL_EXIT_OK;
}

int ctl_call(struct ctl *ctl, const char *method, json_t *parameters, json_t **ret) {
        return call(ctl, method, parameters, 0, ret, NULL);
}

int ctl_call_more(struct ctl *ctl, const char *method, json_t *parameters, json_t **ret, bool *continues) {
        return call(ctl, method, parameters, DP_VARLINK_CALL_MORE, ret, continues);
}

int ctl_next(struct ctl *ctl, json_t **ret, bool *continues) {
        const char *error = NULL;
        json_t *reply = NULL;
        int r, k;

        r = dp_varlink_client_next(ctl->client, &reply, &error);
        k = check_reply("Monitor", r, error, reply);
        if (k != CTL_EXIT_OK || (r < 0 && ctl_interrupted)) {
                json_decref(reply);
                *ret = NULL;
                return k;
        }
        *continues = r > 0;
        *ret = reply;
        return CTL_EXIT_OK;
}

int ctl_print_json(json_t *reply) {
        if (json_dumpf(reply, stdout, JSON_INDENT(2)) < 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0) {
                fprintf(stderr, "writing to stdout: %s\n", strerror(errno ?: EIO));
                return CTL_EXIT_FAILURE;
        }
        return CTL_EXIT_OK;
}

int ctl_bad_reply(const char *format, ...) {
        va_list ap;

        fputs("invalid reply from damon-perfd: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputc('\n', stderr);
        return CTL_EXIT_FAILURE;
}

int ctl_get_int(json_t *o, const char *where, const char *key, int64_t *ret) {
        json_t *v = json_object_get(o, key);

        if (!json_is_integer(v))
                return ctl_bad_reply("%s.%s: expected an integer", where, key);
        *ret = json_integer_value(v);
        return CTL_EXIT_OK;
}

int ctl_get_optional_int(json_t *o, const char *where, const char *key, int64_t *ret, bool *present) {
        json_t *v = json_object_get(o, key);

        if (present)
                *present = false;
        if (!v || json_is_null(v))
                return CTL_EXIT_OK;
        if (present)
                *present = true;
        return ctl_get_int(o, where, key, ret);
}

int ctl_get_string(json_t *o, const char *where, const char *key, const char **ret) {
        json_t *v = json_object_get(o, key);

        if (!json_is_string(v))
                return ctl_bad_reply("%s.%s: expected a string", where, key);
        *ret = json_string_value(v);
        return CTL_EXIT_OK;
}

int ctl_get_optional_string(json_t *o, const char *where, const char *key, const char **ret) {
        json_t *v = json_object_get(o, key);

        if (!v || json_is_null(v))
                return CTL_EXIT_OK;
        return ctl_get_string(o, where, key, ret);
}

int ctl_get_array(json_t *o, const char *where, const char *key, json_t **ret) {
        json_t *v = json_object_get(o, key);

        if (!json_is_array(v))
                return ctl_bad_reply("%s.%s: expected an array", where, key);
        *ret = v;
        return CTL_EXIT_OK;
}
