/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <string.h>

#include "macro.h"
#include "varlink-connection.h"

/* Bytes [start, end) of data are live; space before start is reclaimed by
 * moving the live part down when the buffer would otherwise grow. */
struct byte_buffer {
        char *data;
        size_t start;
        size_t end;
        size_t allocated;
};

struct dp_varlink_connection {
        size_t max_message;
        size_t max_output;

        struct byte_buffer input;
        size_t scanned;         /* input bytes from start known to hold no NUL */
        bool message_complete;  /* a NUL lies at input.start + scanned */
        bool oversize;          /* the first buffered message exceeds max_message */
        bool eof;

        bool in_progress;       /* a call awaits its final reply */
        bool in_progress_more;

        struct byte_buffer output;

        int error;              /* the connection failed with this */
};

static size_t buffer_size(const struct byte_buffer *b) {
        return b->end - b->start;
}

static int buffer_append(struct byte_buffer *b, const void *data, size_t size) {
        if (size == 0)
                return 0;

        if (b->end + size > b->allocated && b->start > 0) {
                memmove(b->data, b->data + b->start, buffer_size(b));
                b->end -= b->start;
                b->start = 0;
        }
        if (b->end + size > b->allocated) {
                size_t want = DP_MAX(b->end + size, DP_MAX(b->allocated * 2, (size_t) 4096));
                char *p = realloc(b->data, want);

                if (!p)
                        return -ENOMEM;
                b->data = p;
                b->allocated = want;
        }
        memcpy(b->data + b->end, data, size);
        b->end += size;
        return 0;
}

static void buffer_consume(struct byte_buffer *b, size_t n) {
        b->start += DP_MIN(n, buffer_size(b));
        if (b->start == b->end)
                b->start = b->end = 0;
}

int dp_varlink_connection_new(const struct dp_varlink_connection_limits *limits,
                              struct dp_varlink_connection **ret) {
        struct dp_varlink_connection *c;

        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->max_message = limits && limits->max_message ? limits->max_message : DP_VARLINK_MESSAGE_SIZE_MAX;
        c->max_output = limits && limits->max_output ? limits->max_output : DP_VARLINK_OUTPUT_MAX_DEFAULT;
        *ret = c;
        return 0;
}

struct dp_varlink_connection *dp_varlink_connection_free(struct dp_varlink_connection *c) {
        if (!c)
                return NULL;
        free(c->input.data);
        free(c->output.data);
        free(c);
        return NULL;
}

static int fail(struct dp_varlink_connection *c, int error) {
        if (c->error == 0)
                c->error = error;
        return error;
}

/* Looks for the end of the first buffered message, from where the last
 * look stopped, so that byte-at-a-time input costs O(n), not O(n^2). */
static int scan_input(struct dp_varlink_connection *c) {
        size_t size = buffer_size(&c->input);
        const char *base = c->input.data + c->input.start;
        const char *nul;

        if (c->message_complete)
                return 0;

        nul = memchr(base + c->scanned, '\0', size - c->scanned);
        c->scanned = nul ? (size_t) (nul - base) : size;
        c->message_complete = nul;

        if (c->scanned > c->max_message) {
                c->oversize = true;
                return -EMSGSIZE;
        }
        return 0;
}

int dp_varlink_connection_feed(struct dp_varlink_connection *c, const void *data, size_t size) {
        int r;

        if (c->error)
                return c->error;
        if (c->eof)
                return -EPIPE;
        if (buffer_size(&c->input) + size > c->max_message + 1 + DP_VARLINK_INPUT_SLACK)
                return fail(c, -ENOBUFS);

        r = buffer_append(&c->input, data, size);
        if (r < 0)
                return fail(c, r);
        r = scan_input(c);
        if (r < 0)
                return fail(c, r);
        return 0;
}

void dp_varlink_connection_feed_eof(struct dp_varlink_connection *c) {
        c->eof = true;
}

bool dp_varlink_connection_wants_input(const struct dp_varlink_connection *c) {
        return !c->error && !c->eof && !c->message_complete && !c->oversize;
}

bool dp_varlink_connection_has_partial_input(const struct dp_varlink_connection *c) {
        return !c->message_complete && buffer_size(&c->input) > 0;
}

int dp_varlink_connection_take_call(struct dp_varlink_connection *c, struct dp_varlink_call_message *ret,
                                    const char **ret_reason) {
        const char *reason_buf, **reason = ret_reason ?: &reason_buf;
        size_t length;
        int r;

        *reason = NULL;
        if (c->error) {
                *reason = "connection failed earlier";
                return c->error;
        }
        if (c->in_progress)
                return 0;
        if (c->oversize) {
                *reason = "message too large";
                return fail(c, -EMSGSIZE);
        }

        if (!c->message_complete) {
                if (c->eof && buffer_size(&c->input) > 0) {
                        *reason = "connection closed inside a message (no terminating NUL)";
                        return fail(c, -EBADMSG);
                }
                return 0;
        }

        length = c->scanned;
        r = dp_varlink_call_message_parse(c->input.data + c->input.start, length, ret, reason);

        buffer_consume(&c->input, length + 1);
        c->scanned = 0;
        c->message_complete = false;

        if (r < 0)
                return fail(c, r);

        /* The next message may already be buffered (pipelining).  If it is
         * too large, this call is still answered; the next take fails. */
        (void) scan_input(c);

        if (!ret->oneway) {
                c->in_progress = true;
                c->in_progress_more = ret->more;
        }
        return 1;
}

bool dp_varlink_connection_call_in_progress(const struct dp_varlink_connection *c) {
        return c->in_progress;
}

bool dp_varlink_connection_call_wants_more(const struct dp_varlink_connection *c) {
        return c->in_progress && c->in_progress_more;
}

int dp_varlink_connection_reply(struct dp_varlink_connection *c, json_t *parameters, const char *error,
                                bool continues) {
        _cleanup_free_ char *text = NULL;
        size_t size;
        int r;

        if (c->error)
                return c->error;
        if (!c->in_progress)
                return -EBADE;
        if (continues && (!c->in_progress_more || error))
                return -EINVAL;

        r = dp_varlink_reply_message_format(parameters, error, continues, &text, &size);
        if (r < 0)
                return r;
        if (size - 1 > c->max_message)
                return -EMSGSIZE;
        if (buffer_size(&c->output) + size > c->max_output)
                return fail(c, -ENOBUFS);

        r = buffer_append(&c->output, text, size);
        if (r < 0)
                return fail(c, r);

        if (!continues)
                c->in_progress = c->in_progress_more = false;
        return 0;
}

const void *dp_varlink_connection_output(const struct dp_varlink_connection *c, size_t *ret_size) {
        *ret_size = buffer_size(&c->output);
        return *ret_size > 0 ? c->output.data + c->output.start : NULL;
}

void dp_varlink_connection_output_advance(struct dp_varlink_connection *c, size_t n) {
        buffer_consume(&c->output, n);
}

size_t dp_varlink_connection_output_size(const struct dp_varlink_connection *c) {
        return buffer_size(&c->output);
}

int dp_varlink_connection_get_error(const struct dp_varlink_connection *c) {
        return c->error;
}

bool dp_varlink_connection_is_finished(const struct dp_varlink_connection *c) {
        return c->eof && !c->in_progress && buffer_size(&c->input) == 0 && buffer_size(&c->output) == 0;
}
