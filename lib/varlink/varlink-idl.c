/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* A recursive-descent parser for the varlink IDL.  Identifiers are checked
 * with the rules in varlink-message.c; every error says where it is. */

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "macro.h"
#include "varlink-idl.h"
#include "varlink-message.h"

/* Types nest only this deep ("[][][]...", "((((..."): the parser recurses. */
#define TYPE_DEPTH_MAX 64

struct parser {
        const char *text;
        const char *p;
        /* line_at lies on line line_no: lines are counted on from there, so
         * that finding every type's line stays linear in the text. */
        const char *line_at;
        unsigned line_no;
        char *doc;              /* comment lines since the last token */
        size_t doc_len;
        struct dp_varlink_idl_error *error;
};

static bool streq(const char *a, const char *b) {
        return strcmp(a, b) == 0;
}

/* The names of one scope (a struct's fields, an enum's values, the
 * interface's members), so that checking for duplicates and looking names
 * up stay linear in the text however many there are.  Open addressing, at
 * most half full; the names are borrowed. */
struct name_slot {
        const char *name;       /* NULL: free */
        size_t index;
};

struct name_set {
        struct name_slot *slot;
        size_t cap, n;
};

static size_t name_hash(const char *s) {
        size_t h = 14695981039346656037u;       /* FNV-1a */

        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 1099511628211u;
        return h;
}

static struct name_slot *name_set_find(const struct name_set *set, const char *name) {
        if (set->cap == 0)
                return NULL;
        for (size_t i = name_hash(name) & (set->cap - 1);; i = (i + 1) & (set->cap - 1))
                if (!set->slot[i].name || streq(set->slot[i].name, name))
                        return &set->slot[i];
}

/* 0, -EEXIST when @name is there already (its first index stays), -ENOMEM. */
static int name_set_add(struct name_set *set, const char *name, size_t index) {
        struct name_slot *s;

        if (2 * (set->n + 1) > set->cap) {
                struct name_set bigger = { .cap = set->cap ? 2 * set->cap : 16 };

                bigger.slot = calloc(bigger.cap, sizeof(*bigger.slot));
                if (!bigger.slot)
                        return -ENOMEM;
                for (size_t i = 0; i < set->cap; i++)
                        if (set->slot[i].name)
                                *name_set_find(&bigger, set->slot[i].name) = set->slot[i];
                bigger.n = set->n;
                free(set->slot);
                *set = bigger;
        }
        s = name_set_find(set, name);
        if (s->name)
                return -EEXIST;
        *s = (struct name_slot) { name, index };
        set->n++;
        return 0;
}

static void name_set_done(struct name_set *set) {
        free(set->slot);
        *set = (struct name_set) {};
}

static unsigned line_of(struct parser *ps, const char *at) {
        /* Positions asked for are close together: walk from the last one. */
        for (; ps->line_at > at; ps->line_at--)
                if (ps->line_at[-1] == '\n')
                        ps->line_no--;
        for (; ps->line_at < at; ps->line_at++)
                if (*ps->line_at == '\n')
                        ps->line_no++;
        return ps->line_no;
}

static int fail_at(struct parser *ps, const char *at, const char *format, ...)
        __attribute__((format(printf, 3, 4)));

static int fail_at(struct parser *ps, const char *at, const char *format, ...) {
        const char *line_start = at;
        va_list ap;

        if (!ps->error)
                return -EINVAL;

        while (line_start > ps->text && line_start[-1] != '\n')
                line_start--;
        ps->error->line = line_of(ps, at);
        ps->error->column = (unsigned) (at - line_start) + 1;
        va_start(ap, format);
        vsnprintf(ps->error->message, sizeof(ps->error->message), format, ap);
        va_end(ap);
        return -EINVAL;
}

static int append_doc_line(struct parser *ps, const char *start, size_t n) {
        size_t old = ps->doc_len;
        char *doc;

        /* "# text" documents "text". */
        if (n > 0 && *start == ' ') {
                start++;
                n--;
        }
        doc = realloc(ps->doc, old + (old ? 1 : 0) + n + 1);
        if (!doc)
                return -ENOMEM;
        if (old)
                doc[old++] = '\n';
        memcpy(doc + old, start, n);
        doc[old + n] = '\0';
        ps->doc = doc;
        ps->doc_len = old + n;
        return 0;
}

/* Skips whitespace and comments, keeping the comments as documentation for
 * whatever comes next. */
static int skip_space(struct parser *ps) {
        for (;;) {
                if (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
                        ps->p++;
                else if (*ps->p == '#') {
                        const char *start = ++ps->p;
                        int r;

                        while (*ps->p && *ps->p != '\n')
                                ps->p++;
                        r = append_doc_line(ps, start, (size_t) (ps->p - start)
                                            - (ps->p > start && ps->p[-1] == '\r'));
                        if (r < 0)
                                return r;
                } else
                        return 0;
        }
}

static char *take_doc(struct parser *ps) {
        ps->doc_len = 0;
        return DP_TAKE_PTR(ps->doc);
}

static void drop_doc(struct parser *ps) {
        free(take_doc(ps));
}

static bool is_word_start(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_word_char(char c) {
        return is_word_start(c) || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/* A run of identifier characters; what it must look like is up to the caller. */
static int read_word(struct parser *ps, const char *what, char **ret) {
        const char *start = ps->p;
        char *w;

        if (!is_word_start(*start)) {
                if (*start == '\0')
                        return fail_at(ps, start, "expected %s, got end of file", what);
                return fail_at(ps, start, "expected %s, got '%c'", what, *start);
        }
        while (is_word_char(*ps->p))
                ps->p++;
        w = strndup(start, (size_t) (ps->p - start));
        if (!w)
                return -ENOMEM;
        *ret = w;
        return 0;
}

static int expect(struct parser *ps, const char *token) {
        int r = skip_space(ps);

        if (r < 0)
                return r;
        if (strncmp(ps->p, token, strlen(token)) != 0) {
                if (*ps->p == '\0')
                        return fail_at(ps, ps->p, "expected '%s', got end of file", token);
                return fail_at(ps, ps->p, "expected '%s', got '%c'", token, *ps->p);
        }
        ps->p += strlen(token);
        return 0;
}

static void type_free(struct dp_varlink_type *t) {
        if (!t)
                return;
        type_free(t->element);
        free(t->name);
        for (size_t i = 0; i < t->n_fields; i++) {
                free(t->fields[i].name);
                free(t->fields[i].doc);
                type_free(t->fields[i].type);
        }
        free(t->fields);
        for (size_t i = 0; i < t->n_values; i++)
                free(t->values[i]);
        free(t->values);
        free(t);
}

static struct dp_varlink_type *type_new(struct parser *ps, enum dp_varlink_type_kind kind) {
        struct dp_varlink_type *t = calloc(1, sizeof(*t));

        if (t) {
                t->kind = kind;
                t->line = line_of(ps, ps->p);
        }
        return t;
}

static int parse_type(struct parser *ps, unsigned depth, struct dp_varlink_type **ret);

/* Fields, values and members grow in powers of two (from 4), so that n of
 * them cost O(n) copying, not O(n^2): an array of @n items is full when @n
 * is 0, 4 or a larger power of two, and then grows to array_grown(@n). */
static bool array_full(size_t n) {
        return n == 0 || (n >= 4 && (n & (n - 1)) == 0);
}

static size_t array_grown(size_t n) {
        return n == 0 ? 4 : 2 * n;
}

static int add_field(struct parser *ps, struct dp_varlink_type *t, struct name_set *seen, const char *at,
                     char *name, char *doc, struct dp_varlink_type *type) {
        struct dp_varlink_field *fields;
        int r;

        r = name_set_add(seen, name, t->n_fields);
        if (r < 0) {
                if (r == -EEXIST)
                        r = fail_at(ps, at, "field '%s' defined twice", name);
                free(name);
                free(doc);
                type_free(type);
                return r;
        }

        fields = t->fields;
        if (array_full(t->n_fields)) {
                fields = realloc(t->fields, array_grown(t->n_fields) * sizeof(*fields));
                if (!fields) {
                        free(name);
                        free(doc);
                        type_free(type);
                        return -ENOMEM;
                }
        }
        fields[t->n_fields++] = (struct dp_varlink_field) { .name = name, .doc = doc, .type = type };
        t->fields = fields;
        return 0;
}

static int add_value(struct parser *ps, struct dp_varlink_type *t, struct name_set *seen, const char *at,
                     char *name) {
        char **values;
        int r;

        r = name_set_add(seen, name, t->n_values);
        if (r < 0) {
                if (r == -EEXIST)
                        r = fail_at(ps, at, "enum value '%s' defined twice", name);
                free(name);
                return r;
        }

        values = t->values;
        if (array_full(t->n_values)) {
                values = realloc(t->values, array_grown(t->n_values) * sizeof(*values));
                if (!values) {
                        free(name);
                        return -ENOMEM;
                }
        }
        values[t->n_values++] = name;
        t->values = values;
        return 0;
}

/* One "name: T" field of a struct or "name" value of an enum; the first item
 * decides which of the two @t is. */
static int parse_struct_or_enum_item(struct parser *ps, unsigned depth, struct dp_varlink_type *t,
                                     struct name_set *seen, bool first) {
        _cleanup_free_ char *name = NULL, *doc = NULL;
        const char *at;
        int r;

        r = skip_space(ps);
        if (r < 0)
                return r;
        at = ps->p;
        doc = take_doc(ps);
        r = read_word(ps, "a field name", &name);
        if (r < 0)
                return r;
        if (!dp_varlink_field_name_is_valid(name))
                return fail_at(ps, at, "invalid field name '%s'", name);
        r = skip_space(ps);
        if (r < 0)
                return r;
        if (first)
                t->kind = *ps->p == ':' ? DP_VARLINK_TYPE_STRUCT : DP_VARLINK_TYPE_ENUM;

        if (t->kind == DP_VARLINK_TYPE_STRUCT) {
                struct dp_varlink_type *field_type = NULL;

                r = expect(ps, ":");
                if (r >= 0)
                        r = parse_type(ps, depth + 1, &field_type);
                if (r < 0)
                        return r;
                return add_field(ps, t, seen, at, DP_TAKE_PTR(name), DP_TAKE_PTR(doc), field_type);
        }
        if (*ps->p == ':')
                return fail_at(ps, ps->p, "a typed field in an enum");
        return add_value(ps, t, seen, at, DP_TAKE_PTR(name));
}

/* What follows an item: 1 when ")" closed the list, 0 when "," leads to
 * another item. */
static int parse_item_separator(struct parser *ps) {
        int r;

        r = skip_space(ps);
        if (r < 0)
                return r;
        drop_doc(ps);           /* a comment after the last field documents nothing */
        if (*ps->p == ')') {
                ps->p++;
                return 1;
        }
        if (*ps->p != ',')
                return *ps->p ? fail_at(ps, ps->p, "expected ',' or ')', got '%c'", *ps->p)
                              : fail_at(ps, ps->p, "expected ',' or ')', got end of file");
        ps->p++;
        r = skip_space(ps);
        if (r < 0)
                return r;
        if (*ps->p == ')')
                return fail_at(ps, ps->p, "trailing ',' before ')'");
        return 0;
}

/* "(" already consumed: "name: T, ..." is a struct, "name, ..." an enum,
 * and "()" an empty struct. */
static int parse_struct_or_enum(struct parser *ps, unsigned depth, struct dp_varlink_type **ret) {
        struct name_set seen = {};
        struct dp_varlink_type *t;
        int r;

        t = type_new(ps, DP_VARLINK_TYPE_STRUCT);
        if (!t)
                return -ENOMEM;

        r = skip_space(ps);
        if (r < 0)
                goto fail;
        if (*ps->p == ')') {
                ps->p++;
                drop_doc(ps);
                *ret = t;
                return 0;
        }

        for (bool first = true;; first = false) {
                r = parse_struct_or_enum_item(ps, depth, t, &seen, first);
                if (r < 0)
                        goto fail;
                r = parse_item_separator(ps);
                if (r < 0)
                        goto fail;
                if (r > 0)
                        break;
        }

        name_set_done(&seen);
        *ret = t;
        return 0;

fail:
        name_set_done(&seen);
        type_free(t);
        return r;
}

static const struct {
        const char *keyword;
        enum dp_varlink_type_kind kind;
} builtin_types[] = {
        { "bool", DP_VARLINK_TYPE_BOOL },
        { "int", DP_VARLINK_TYPE_INT },
        { "float", DP_VARLINK_TYPE_FLOAT },
        { "string", DP_VARLINK_TYPE_STRING },
        { "object", DP_VARLINK_TYPE_OBJECT },
};

/* The "string]" of a map type "[string]T", whose "[" at @at is consumed. */
static int parse_map_key(struct parser *ps, const char *at) {
        _cleanup_free_ char *word = NULL;
        int r;

        r = read_word(ps, "'string' in a map type", &word);
        if (r < 0)
                return r;
        if (!streq(word, "string"))
                return fail_at(ps, at + 1, "map keys must be 'string'");
        return expect(ps, "]");
}

/* A builtin type's keyword, or the name of a type the interface defines. */
static int parse_type_name(struct parser *ps, struct dp_varlink_type **ret) {
        _cleanup_free_ char *word = NULL;
        const char *at = ps->p;
        struct dp_varlink_type *t;
        size_t i = 0;
        int r;

        r = read_word(ps, "a type", &word);
        if (r < 0)
                return r;
        while (i < DP_ARRAY_SIZE(builtin_types) && !streq(word, builtin_types[i].keyword))
                i++;
        if (i < DP_ARRAY_SIZE(builtin_types))
                t = type_new(ps, builtin_types[i].kind);
        else if (!dp_varlink_member_name_is_valid(word))
                return fail_at(ps, at, "unknown type '%s'", word);
        else {
                t = type_new(ps, DP_VARLINK_TYPE_NAMED);
                if (t) {
                        t->line = line_of(ps, at);
                        t->name = DP_TAKE_PTR(word);
                }
        }
        if (!t)
                return -ENOMEM;
        *ret = t;
        return 0;
}

static int parse_type(struct parser *ps, unsigned depth, struct dp_varlink_type **ret) {
        struct dp_varlink_type *t = NULL;
        bool nullable = false;
        const char *at;
        int r;

        if (depth > TYPE_DEPTH_MAX)
                return fail_at(ps, ps->p, "types nested deeper than %d", TYPE_DEPTH_MAX);

        r = skip_space(ps);
        if (r < 0)
                return r;
        if (*ps->p == '?') {
                nullable = true;
                ps->p++;
                r = skip_space(ps);
                if (r < 0)
                        return r;
                if (*ps->p == '?')
                        return fail_at(ps, ps->p, "'?' applied twice");
        }

        at = ps->p;
        if (strncmp(ps->p, "[]", 2) == 0) {
                ps->p += 2;
                t = type_new(ps, DP_VARLINK_TYPE_ARRAY);
                if (!t)
                        return -ENOMEM;
                r = parse_type(ps, depth + 1, &t->element);
        } else if (*ps->p == '[') {
                ps->p++;
                r = parse_map_key(ps, at);
                if (r < 0)
                        return r;
                t = type_new(ps, DP_VARLINK_TYPE_MAP);
                if (!t)
                        return -ENOMEM;
                r = parse_type(ps, depth + 1, &t->element);
        } else if (*ps->p == '(') {
                ps->p++;
                r = parse_struct_or_enum(ps, depth, &t);
        } else
                r = parse_type_name(ps, &t);
        if (r < 0) {
                type_free(t);
                return r;
        }

        t->nullable = nullable;
        *ret = t;
        return 0;
}

/* "(" ... ")" that must be a struct (method input/output, error). */
static int parse_struct(struct parser *ps, const char *what, struct dp_varlink_type **ret) {
        struct dp_varlink_type *t;
        const char *at;
        int r;

        r = expect(ps, "(");
        if (r < 0)
                return r;
        at = ps->p - 1;
        r = parse_struct_or_enum(ps, 0, &t);
        if (r < 0)
                return r;
        if (t->kind != DP_VARLINK_TYPE_STRUCT) {
                type_free(t);
                return fail_at(ps, at, "%s must be a struct, not an enum", what);
        }
        *ret = t;
        return 0;
}

static int parse_member(struct parser *ps, struct dp_varlink_member *m) {
        _cleanup_free_ char *keyword = NULL;
        const char *at = ps->p;
        int r;

        m->line = line_of(ps, at);
        m->doc = take_doc(ps);

        r = read_word(ps, "'type', 'method' or 'error'", &keyword);
        if (r < 0)
                return r;
        if (streq(keyword, "type"))
                m->kind = DP_VARLINK_MEMBER_TYPE;
        else if (streq(keyword, "method"))
                m->kind = DP_VARLINK_MEMBER_METHOD;
        else if (streq(keyword, "error"))
                m->kind = DP_VARLINK_MEMBER_ERROR;
        else
                return fail_at(ps, at, "expected 'type', 'method' or 'error', got '%s'", keyword);

        r = skip_space(ps);
        if (r < 0)
                return r;
        at = ps->p;
        r = read_word(ps, "a name", &m->name);
        if (r < 0)
                return r;
        if (!dp_varlink_member_name_is_valid(m->name))
                return fail_at(ps, at, "invalid %s name '%s' (must be [A-Z][A-Za-z0-9]*)", keyword, m->name);
        drop_doc(ps);

        switch (m->kind) {
        case DP_VARLINK_MEMBER_TYPE:
                r = expect(ps, "(");
                if (r < 0)
                        return r;
                return parse_struct_or_enum(ps, 0, &m->type);
        case DP_VARLINK_MEMBER_METHOD:
                r = parse_struct(ps, "method input", &m->input);
                if (r < 0)
                        return r;
                r = expect(ps, "->");
                if (r < 0)
                        return r;
                return parse_struct(ps, "method output", &m->output);
        case DP_VARLINK_MEMBER_ERROR:
                return parse_struct(ps, "error parameters", &m->type);
        }
        return -EINVAL;
}

static void member_done(struct dp_varlink_member *m) {
        free(m->name);
        free(m->doc);
        type_free(m->type);
        type_free(m->input);
        type_free(m->output);
}

struct dp_varlink_interface *dp_varlink_interface_free(struct dp_varlink_interface *interface) {
        if (!interface)
                return NULL;
        for (size_t i = 0; i < interface->n_members; i++)
                member_done(&interface->members[i]);
        free(interface->members);
        free(interface->name);
        free(interface->doc);
        free(interface);
        return NULL;
}

const struct dp_varlink_member *dp_varlink_interface_find(const struct dp_varlink_interface *interface,
                                                          enum dp_varlink_member_kind kind, const char *name) {
        for (size_t i = 0; i < interface->n_members; i++)
                if (interface->members[i].kind == kind && streq(interface->members[i].name, name))
                        return &interface->members[i];
        return NULL;
}

static int fail_line(struct parser *ps, unsigned line, const char *format, ...)
        __attribute__((format(printf, 3, 4)));

static int fail_line(struct parser *ps, unsigned line, const char *format, ...) {
        va_list ap;

        if (ps->error) {
                ps->error->line = line;
                ps->error->column = 1;
                va_start(ap, format);
                vsnprintf(ps->error->message, sizeof(ps->error->message), format, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* Points every named type at its definition; after parsing, so that types
 * may be used before they are defined.  @members holds every member's name. */
static int resolve_type(struct parser *ps, const struct dp_varlink_interface *iface, const struct name_set *members,
                        struct dp_varlink_type *t) {
        int r;

        if (!t)
                return 0;
        if (t->kind == DP_VARLINK_TYPE_NAMED) {
                const struct name_slot *s = name_set_find(members, t->name);

                t->resolved = s && s->name ? &iface->members[s->index] : NULL;
                /* A name defined twice is an error of its own, found later:
                 * until then, the first member of kind type counts. */
                if (t->resolved && t->resolved->kind != DP_VARLINK_MEMBER_TYPE)
                        t->resolved = dp_varlink_interface_find(iface, DP_VARLINK_MEMBER_TYPE, t->name);
                if (!t->resolved)
                        return fail_line(ps, t->line, "reference to undefined type '%s'", t->name);
        }
        r = resolve_type(ps, iface, members, t->element);
        if (r < 0)
                return r;
        for (size_t i = 0; i < t->n_fields; i++) {
                r = resolve_type(ps, iface, members, t->fields[i].type);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int check_interface(struct parser *ps, const struct dp_varlink_interface *iface) {
        struct name_set members = {};
        size_t twice = SIZE_MAX;
        int r = 0;

        /* Types, methods and errors share one namespace. */
        for (size_t i = 0; i < iface->n_members; i++) {
                r = name_set_add(&members, iface->members[i].name, i);
                if (r == -EEXIST && twice == SIZE_MAX)
                        twice = i;
                else if (r < 0 && r != -EEXIST)
                        goto done;
        }
        /* Member by member, as the errors come in the text. */
        for (size_t i = 0; i < iface->n_members; i++) {
                const struct dp_varlink_member *m = &iface->members[i];

                if (i == twice) {
                        r = fail_line(ps, m->line, "'%s' defined twice", m->name);
                        goto done;
                }
                r = resolve_type(ps, iface, &members, m->type);
                if (r >= 0)
                        r = resolve_type(ps, iface, &members, m->input);
                if (r >= 0)
                        r = resolve_type(ps, iface, &members, m->output);
                if (r < 0)
                        goto done;
        }
        r = 0;
done:
        name_set_done(&members);
        return r;
}

/* The interface's doc comment, "interface" and its name. */
static int parse_interface_line(struct parser *ps, struct dp_varlink_interface *iface) {
        _cleanup_free_ char *keyword = NULL;
        const char *at;
        int r;

        r = skip_space(ps);
        if (r < 0)
                return r;
        iface->doc = take_doc(ps);
        at = ps->p;
        r = read_word(ps, "'interface'", &keyword);
        if (r < 0)
                return r;
        if (!streq(keyword, "interface"))
                return fail_at(ps, at, "expected 'interface' first, got '%s'", keyword);
        if (*ps->p != ' ' && *ps->p != '\t')
                return fail_at(ps, ps->p, "expected a space after 'interface'");
        r = skip_space(ps);
        if (r < 0)
                return r;
        at = ps->p;
        r = read_word(ps, "an interface name", &iface->name);
        if (r < 0)
                return r;
        if (!dp_varlink_interface_name_is_valid(iface->name))
                return fail_at(ps, at, "invalid interface name '%s'", iface->name);
        return 0;
}

/* Every type, method and error up to the end of the text; at least one. */
static int parse_members(struct parser *ps, struct dp_varlink_interface *iface) {
        for (;;) {
                struct dp_varlink_member *members;
                int r;

                r = skip_space(ps);
                if (r < 0)
                        return r;
                if (*ps->p == '\0')
                        break;

                if (array_full(iface->n_members)) {
                        members = realloc(iface->members, array_grown(iface->n_members) * sizeof(*members));
                        if (!members)
                                return -ENOMEM;
                        iface->members = members;
                }
                members = iface->members;
                members[iface->n_members] = (struct dp_varlink_member) {};
                r = parse_member(ps, &members[iface->n_members]);
                iface->n_members++;     /* freed with the interface even if half parsed */
                if (r < 0)
                        return r;
        }

        if (iface->n_members == 0)
                return fail_at(ps, ps->p, "interface '%s' declares no types, methods or errors", iface->name);
        return 0;
}

int dp_varlink_idl_parse(const char *text, struct dp_varlink_interface **ret,
                         struct dp_varlink_idl_error *ret_error) {
        struct parser ps = { .text = text, .p = text, .line_at = text, .line_no = 1, .error = ret_error };
        struct dp_varlink_interface *iface;
        int r;

        if (!text || !ret)
                return -EINVAL;
        if (ret_error)
                *ret_error = (struct dp_varlink_idl_error) {};

        iface = calloc(1, sizeof(*iface));
        if (!iface)
                return -ENOMEM;

        r = parse_interface_line(&ps, iface);
        if (r >= 0)
                r = parse_members(&ps, iface);
        if (r >= 0)
                r = check_interface(&ps, iface);

        free(ps.doc);
        if (r < 0) {
                dp_varlink_interface_free(iface);
                return r;
        }
        *ret = iface;
        return 0;
}
