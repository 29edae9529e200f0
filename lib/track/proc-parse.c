/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "proc-parse.h"

/* A cursor over one line: [p, end). */
struct cursor {
        const char *p;
        const char *end;
};

static bool cursor_eat(struct cursor *c, char ch) {
        if (c->p < c->end && *c->p == ch) {
                c->p++;
                return true;
        }
        return false;
}

static size_t cursor_skip_spaces(struct cursor *c) {
        size_t n = 0;

        while (c->p < c->end && (*c->p == ' ' || *c->p == '\t')) {
                c->p++;
                n++;
        }
        return n;
}

static int hex_digit(char ch) {
        if (ch >= '0' && ch <= '9')
                return ch - '0';
        if (ch >= 'a' && ch <= 'f')
                return ch - 'a' + 10;
        if (ch >= 'A' && ch <= 'F')
                return ch - 'A' + 10;
        return -1;
}

/* At least one hex digit, at most 16 (so no overflow). */
static bool cursor_hex(struct cursor *c, uint64_t *ret) {
        uint64_t v = 0;
        size_t digits = 0;
        int d;

        while (c->p < c->end && (d = hex_digit(*c->p)) >= 0) {
                if (++digits > 16)
                        return false;
                v = (v << 4) | (uint64_t) d;
                c->p++;
        }
        if (digits == 0)
                return false;
        *ret = v;
        return true;
}

static bool cursor_decimal(struct cursor *c) {
        size_t digits = 0;

        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
                c->p++;
                digits++;
        }
        return digits > 0 && digits <= 20;
}

static bool cursor_one_of(struct cursor *c, const char *set) {
        if (c->p < c->end && *c->p != '\0' && strchr(set, *c->p)) {
                c->p++;
                return true;
        }
        return false;
}

/* Hands out lines one by one; the last line needs no trailing newline. */
struct line_iter {
        const char *p;
        const char *end;
        size_t number;
};

static bool next_line(struct line_iter *it, struct cursor *ret) {
        const char *nl;

        if (it->p >= it->end)
                return false;
        nl = memchr(it->p, '\n', (size_t) (it->end - it->p));
        ret->p = it->p;
        ret->end = nl ? nl : it->end;
        it->p = nl ? nl + 1 : it->end;
        it->number++;
        return true;
}

struct range_vec {
        struct dp_range *v;
        size_t n;
        size_t cap;
};

static int range_vec_push(struct range_vec *vec, uint64_t start, uint64_t end) {
        if (vec->n == vec->cap) {
                size_t cap = vec->cap ? vec->cap * 2 : 64;
                struct dp_range *v = reallocarray(vec->v, cap, sizeof(*v));

                if (!v)
                        return -ENOMEM;
                vec->v = v;
                vec->cap = cap;
        }
        vec->v[vec->n++] = (struct dp_range) { .start = start, .end = end };
        return 0;
}

static bool span_equals(const char *p, const char *end, const char *s) {
        size_t len = strlen(s);

        return (size_t) (end - p) == len && memcmp(p, s, len) == 0;
}

/* "start-end perms offset major:minor inode [path]" */
static int parse_maps_line(struct cursor *c, uint64_t *ret_start, uint64_t *ret_end, bool *ret_skip) {
        uint64_t start, end, unused;
        const char *path_end, *perms;
        bool inaccessible;

        if (!cursor_hex(c, &start) || !cursor_eat(c, '-') || !cursor_hex(c, &end) || start >= end)
                return -EBADMSG;
        perms = c->p + 1;
        if (!cursor_eat(c, ' ') ||
            !cursor_one_of(c, "r-") || !cursor_one_of(c, "w-") ||
            !cursor_one_of(c, "x-") || !cursor_one_of(c, "ps"))
                return -EBADMSG;
        if (!cursor_eat(c, ' ') || !cursor_hex(c, &unused))
                return -EBADMSG;
        if (!cursor_eat(c, ' ') || !cursor_hex(c, &unused) || !cursor_eat(c, ':') || !cursor_hex(c, &unused))
                return -EBADMSG;
        if (!cursor_eat(c, ' ') || !cursor_decimal(c))
                return -EBADMSG;
        /* The rest is an optional path, separated by padding. */
        if (c->p < c->end && cursor_skip_spaces(c) == 0)
                return -EBADMSG;

        path_end = c->end;
        while (path_end > c->p && (path_end[-1] == ' ' || path_end[-1] == '\r'))
                path_end--;

        *ret_start = start;
        *ret_end = end;
        /* Nothing can access a PROT_NONE mapping (guard pages, reservations), so it is
         * a hole, not a region; and the legacy vsyscall page sits in kernel space. */
        inaccessible = memcmp(perms, "---", 3) == 0;
        *ret_skip = inaccessible || span_equals(c->p, path_end, "[vsyscall]");
        return 0;
}

int dp_parse_maps(const char *text, size_t len,
                  struct dp_range **ret_ranges, size_t *ret_n, size_t *ret_bad_line) {
        struct line_iter it = { .p = text, .end = text + len };
        struct range_vec vec = {};
        struct cursor line;
        int r;

        if (ret_bad_line)
                *ret_bad_line = 0;
        if (!ret_ranges || !ret_n || (len > 0 && !text))
                return -EINVAL;

        while (next_line(&it, &line)) {
                uint64_t start, end;
                bool skip;

                if (line.p == line.end && it.p >= it.end)
                        break;  /* tolerate one blank line at the very end */

                r = parse_maps_line(&line, &start, &end, &skip);
                if (r < 0) {
                        if (ret_bad_line)
                                *ret_bad_line = it.number;
                        free(vec.v);
                        return r;
                }
                if (skip)
                        continue;
                r = range_vec_push(&vec, start, end);
                if (r < 0) {
                        free(vec.v);
                        return r;
                }
        }

        *ret_ranges = vec.v;
        *ret_n = vec.n;
        return 0;
}

/* "<indent>start-end : name", end inclusive, two spaces of indent per level. */
static int parse_iomem_line(struct cursor *c, size_t *ret_indent, uint64_t *ret_start,
                            uint64_t *ret_end, const char **ret_name, const char **ret_name_end) {
        uint64_t start, end;
        const char *name_end;

        *ret_indent = cursor_skip_spaces(c);
        if (!cursor_hex(c, &start) || !cursor_eat(c, '-') || !cursor_hex(c, &end) || start > end)
                return -EBADMSG;
        if (!cursor_eat(c, ' ') || !cursor_eat(c, ':') || !cursor_eat(c, ' '))
                return -EBADMSG;

        name_end = c->end;
        while (name_end > c->p && (name_end[-1] == ' ' || name_end[-1] == '\r'))
                name_end--;
        if (name_end == c->p)
                return -EBADMSG;

        *ret_start = start;
        *ret_end = end;
        *ret_name = c->p;
        *ret_name_end = name_end;
        return 0;
}

int dp_parse_iomem(const char *text, size_t len,
                   struct dp_range **ret_ranges, size_t *ret_n, size_t *ret_bad_line) {
        struct line_iter it = { .p = text, .end = text + len };
        struct range_vec vec = {};
        bool any_nonzero = false, any_line = false;
        struct cursor line;
        int r;

        if (ret_bad_line)
                *ret_bad_line = 0;
        if (!ret_ranges || !ret_n || (len > 0 && !text))
                return -EINVAL;

        while (next_line(&it, &line)) {
                const char *name, *name_end;
                uint64_t start, end;
                size_t indent;

                if (line.p == line.end && it.p >= it.end)
                        break;  /* tolerate one blank line at the very end */

                r = parse_iomem_line(&line, &indent, &start, &end, &name, &name_end);
                if (r < 0) {
                        if (ret_bad_line)
                                *ret_bad_line = it.number;
                        goto fail;
                }
                any_line = true;
                if (start != 0 || end != 0)
                        any_nonzero = true;

                if (indent != 0 || !span_equals(name, name_end, "System RAM"))
                        continue;
                if (end == UINT64_MAX) {
                        if (ret_bad_line)
                                *ret_bad_line = it.number;
                        r = -ERANGE;
                        goto fail;
                }
                r = range_vec_push(&vec, start, end + 1);
                if (r < 0)
                        goto fail;
        }

        /* Without CAP_SYS_ADMIN the kernel prints every address as zero. */
        if (any_line && !any_nonzero) {
                r = -EPERM;
                goto fail;
        }
        if (vec.n == 0) {
                r = -ENOENT;
                goto fail;
        }

        *ret_ranges = vec.v;
        *ret_n = vec.n;
        return 0;

fail:
        free(vec.v);
        return r;
}
