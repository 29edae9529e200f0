/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl decode run as a user would (DP_DAMONCTL from meson): every vector
 * of testdata/spe-vectors.txt shows its documented meaning, which itself is
 * checked against the packet table of FIELD-NOTES §5 (an independent
 * classification here); hex, binary and stdin agree; a multi-record SPE
 * stream with pads, garbage, a damaged and a cut-off record resyncs; IBS
 * payloads with and without the optional trailing registers, the known
 * answer of FIELD-NOTES §3; damaged IBS input; --cpu switches erratum 1293
 * on exactly its fields; --json parses; bad input fails with a message.
 */
#include <check.h>
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "mem-level.h"

#include "check-main.h"
#include "ibs-registers.h"
#include "test-ctl-run.h"

#define EXIT_DAMAGED 5
#define ADDR_MASK ((UINT64_C(1) << 56) - 1)

static char dir[] = "/tmp/test-damonctl-decode-XXXXXX";

static void setup(void) {
        strcpy(dir, "/tmp/test-damonctl-decode-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

/* damonctl decode ARGS... (NULL-terminated), stdin from @stdin_path or /dev/null. */
static struct run decode(const char *stdin_path, ...) {
        const char *ctl = getenv("DP_DAMONCTL"), *argv[16] = { ctl, "decode" };
        char out[256], err[256];
        size_t n = 2;
        va_list ap;
        pid_t pid;

        ck_assert_msg(ctl, "DP_DAMONCTL not set");
        va_start(ap, stdin_path);
        while ((argv[n] = va_arg(ap, const char *)))
                ck_assert_uint_lt(++n, DP_ARRAY_SIZE(argv) - 1);
        va_end(ap);
        snprintf(out, sizeof(out), "%s/stdout", dir);
        snprintf(err, sizeof(err), "%s/stderr", dir);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int i = open(stdin_path ?: "/dev/null", O_RDONLY | O_CLOEXEC);
                int o = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
                int e = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);

                if (i < 0 || o < 0 || e < 0 || dup2(i, STDIN_FILENO) < 0 || dup2(o, STDOUT_FILENO) < 0 ||
                    dup2(e, STDERR_FILENO) < 0)
                        _exit(126);
                execv(ctl, (char *const *) argv);
                _exit(127);
        }
        return ctl_collect(dir, pid);
}

static char *path_in_dir(const char *name) {
        char *p;

        ck_assert_int_gt(asprintf(&p, "%s/%s", dir, name), 0);
        return p;
}

static char *write_file(const char *name, const void *data, size_t n) {
        char *p = path_in_dir(name);
        FILE *f = fopen(p, "w");

        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(data, 1, n, f), n);
        ck_assert_int_eq(fclose(f), 0);
        return p;
}

/* As hex text: a comment, 16 bytes a line, '|' comments after some lines. */
static char *write_hex(const char *name, const uint8_t *b, size_t n) {
        char *p = path_in_dir(name);
        FILE *f = fopen(p, "w");

        ck_assert_ptr_nonnull(f);
        fprintf(f, "# %zu bytes\n", n);
        for (size_t i = 0; i < n; i++)
                fprintf(f, "%02x%s", b[i], i + 1 == n || i % 16 == 15 ? (i % 32 == 15 ? " | more\n" : "\n") : " ");
        ck_assert_int_eq(fclose(f), 0);
        return p;
}

/* Whitespace runs as one space, none at the ends. */
static void squeeze(const char *s, size_t n, char *out, size_t size) {
        size_t o = 0;

        for (size_t i = 0; i < n && o + 1 < size; i++) {
                if (isspace((unsigned char) s[i])) {
                        if (o > 0 && out[o - 1] != ' ')
                                out[o++] = ' ';
                } else
                        out[o++] = s[i];
        }
        while (o > 0 && out[o - 1] == ' ')
                o--;
        out[o] = '\0';
}

/* How many lines of @text are @want, whitespace runs counting as one space. */
static unsigned count_lines(const char *text, const char *want) {
        char line[1024], w[1024];
        unsigned n = 0;

        squeeze(want, strlen(want), w, sizeof(w));
        for (const char *p = text; *p;) {
                const char *eol = strchrnul(p, '\n');

                squeeze(p, (size_t) (eol - p), line, sizeof(line));
                n += strcmp(line, w) == 0;
                p = *eol ? eol + 1 : eol;
        }
        return n;
}

static unsigned count_substr(const char *text, const char *needle) {
        unsigned n = 0;

        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

/* Every line a JSON object with a "type"; the last one the summary. */
static json_t *json_lines(const char *text) {
        json_t *lines = json_array();

        for (const char *p = text; *p;) {
                const char *eol = strchrnul(p, '\n');
                json_error_t error;
                json_t *o = json_loadb(p, (size_t) (eol - p), 0, &error);

                ck_assert_msg(o && json_is_object(o), "not a JSON object: %.*s (%s)", (int) (eol - p), p,
                              error.text);
                ck_assert(json_is_string(json_object_get(o, "type")));
                json_array_append_new(lines, o);
                p = *eol ? eol + 1 : eol;
        }
        ck_assert_uint_ge(json_array_size(lines), 1);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(lines, json_array_size(lines) - 1),
                                                           "type")), "summary");
        return lines;
}

/* The objects of @type, borrowed from @lines. */
static size_t of_type(json_t *lines, const char *type, json_t **out, size_t max) {
        size_t i, n = 0;
        json_t *o;

        json_array_foreach(lines, i, o)
                if (strcmp(json_string_value(json_object_get(o, "type")), type) == 0) {
                        ck_assert_uint_lt(n, max);
                        out[n++] = o;
                }
        return n;
}

static int64_t jint(json_t *o, const char *key) {
        json_t *v = json_object_get(o, key);

        ck_assert_msg(json_is_integer(v), "%s is not an integer", key);
        return json_integer_value(v);
}

static uint64_t jhex(json_t *o, const char *key) {
        const char *s = json_string_value(json_object_get(o, key));

        ck_assert_msg(s && strncmp(s, "0x", 2) == 0, "%s is not a hex string", key);
        return strtoull(s, NULL, 16);
}

static const char *jstr(json_t *o, const char *key) {
        const char *s = json_string_value(json_object_get(o, key));

        ck_assert_msg(s, "%s is not a string", key);
        return s;
}

static json_t *summary_of(json_t *lines) {
        return json_array_get(lines, json_array_size(lines) - 1);
}

/* ---- ARM SPE ---- */

/* FIELD-NOTES §5, the packet table, written out independently of lib/source/decode-spe.c. */
struct table_packet {
        const char *type;
        unsigned index;
        size_t size;            /* header(s) + payload */
        uint64_t payload;
};

static bool table_decode(const uint8_t *b, size_t n, struct table_packet *t) {
        uint8_t h = b[0];
        size_t hdr = 1;
        unsigned index = 0;
        const char *type;

        if (h == 0x00 || h == 0x01) {
                *t = (struct table_packet) { h == 0x00 ? "PAD" : "END", 0, 1, 0 };
                return true;
        }
        if (h == 0x71)
                type = "TIMESTAMP";
        else if ((h & 0xcf) == 0x42)
                type = "EVENTS";
        else if ((h & 0xcf) == 0x43)
                type = "DATA-SOURCE";
        else if ((h & 0xfc) == 0x64)
                type = "CONTEXT", index = h & 3;
        else if ((h & 0xfc) == 0x48)
                type = "OP-TYPE", index = h & 3;
        else if ((h & 0xf8) == 0xb0)
                type = "ADDRESS", index = h & 7;
        else if ((h & 0xf8) == 0x98)
                type = "COUNTER", index = h & 7;
        else if ((h & 0xfc) == 0x20 && n >= 2 && ((b[1] & 0xf8) == 0xb0 || (b[1] & 0xf8) == 0x98)) {
                type = (b[1] & 0xf8) == 0xb0 ? "ADDRESS" : "COUNTER";
                index = (unsigned) ((h & 3) << 3 | (b[1] & 7));
                hdr = 2;
                h = b[1];
        } else
                return false;
        if (strcmp(type, "TIMESTAMP") == 0)
                t->size = hdr + 8;
        else
                t->size = hdr + (1u << ((h >> 4) & 3));
        t->type = type;
        t->index = index;
        t->payload = 0;
        for (size_t i = hdr; i < t->size && i < n; i++)
                t->payload |= (uint64_t) b[i] << (8 * (i - hdr));
        return t->size <= n;
}

/* What the table says a vector's meaning must start with, and contain. */
static void check_meaning_against_table(const struct table_packet *t, const char *meaning) {
        static const char *const addr_names[] = { "PC", "TGT", "VA", "PA", "PBT" };
        static const char *const counter_names[] = { "TOTAL", "ISSUE", "XLAT" };
        static const struct { unsigned bit; const char *name; } events[] = {
                { 1, "retired" }, { 2, "L1D-access" }, { 3, "L1D-refill" }, { 4, "TLB-access" },
                { 5, "TLB-walk" }, { 8, "LLC-access" }, { 9, "LLC-miss" }, { 10, "remote-access" },
        };
        char want[64];

        ck_assert_msg(strncmp(meaning, t->type, strlen(t->type)) == 0, "'%s' is not a %s", meaning, t->type);
        if (strcmp(t->type, "ADDRESS") == 0 && t->index < DP_ARRAY_SIZE(addr_names)) {
                snprintf(want, sizeof(want), "ADDRESS %s 0x%" PRIx64, addr_names[t->index],
                         t->payload & ADDR_MASK);
                ck_assert_msg(strncmp(meaning, want, strlen(want)) == 0, "'%s' is not '%s...'", meaning, want);
        } else if (strcmp(t->type, "COUNTER") == 0 && t->index < DP_ARRAY_SIZE(counter_names)) {
                snprintf(want, sizeof(want), "COUNTER %s latency %" PRIu64, counter_names[t->index], t->payload);
                ck_assert_str_eq(meaning, want);
        } else if (strcmp(t->type, "TIMESTAMP") == 0) {
                snprintf(want, sizeof(want), "TIMESTAMP %" PRIu64, t->payload);
                ck_assert_str_eq(meaning, want);
        } else if (strcmp(t->type, "OP-TYPE") == 0) {
                /* Class 1 load/store (payload bit 0: store), class 2 branch. */
                if (t->index == 1)
                        snprintf(want, sizeof(want), "OP-TYPE LD/ST: %s", (t->payload & 1) ? "store" : "load");
                else
                        snprintf(want, sizeof(want), "OP-TYPE %s", t->index == 2 ? "BRANCH" : "OTHER");
                ck_assert_msg(strncmp(meaning, want, strlen(want)) == 0, "'%s' is not '%s...'", meaning, want);
        } else if (strcmp(t->type, "EVENTS") == 0) {
                unsigned named = 0;

                for (size_t i = 0; i < DP_ARRAY_SIZE(events); i++) {
                        bool set = t->payload & (UINT64_C(1) << events[i].bit);

                        ck_assert_msg(set == (strstr(meaning, events[i].name) != NULL), "%s in '%s'",
                                      events[i].name, meaning);
                        named += set;
                }
                ck_assert_uint_eq(named, (unsigned) __builtin_popcountll(t->payload));
                ck_assert_uint_eq(count_substr(meaning, ","), named - 1);
        }
}

struct vector {
        uint8_t bytes[16];
        size_t n;
        char meaning[128];
};

/* testdata/spe-vectors.txt: "bytes | meaning" lines; '#' lines are comments. */
static size_t read_vectors(const char *path, struct vector *v, size_t max) {
        FILE *f = fopen(path, "r");
        char line[512];
        size_t n = 0;

        ck_assert_msg(f, "%s", path);
        while (fgets(line, sizeof(line), f)) {
                char *bar = strchr(line, '|'), *p = line;
                unsigned byte;
                int used;

                if (line[0] == '#' || !bar)
                        continue;
                ck_assert_uint_lt(n, max);
                *bar = '\0';
                v[n].n = 0;
                while (sscanf(p, "%2x%n", &byte, &used) == 1) {
                        ck_assert_uint_lt(v[n].n, sizeof(v[n].bytes));
                        v[n].bytes[v[n].n++] = (uint8_t) byte;
                        p += used;
                }
                squeeze(bar + 1, strlen(bar + 1), v[n].meaning, sizeof(v[n].meaning));
                n++;
        }
        fclose(f);
        return n;
}

static char *vectors_path(void) {
        const char *testdata = getenv("DP_TESTDATA");
        char *p;

        ck_assert_msg(testdata, "DP_TESTDATA not set");
        ck_assert_int_gt(asprintf(&p, "%s/spe-vectors.txt", testdata), 0);
        return p;
}

static uint64_t va_canonical(uint64_t payload) {
        uint64_t a = payload & ADDR_MASK;

        return ((a >> 52) & 0xf) == 0xf ? a | (UINT64_C(0xff) << 56) : a;
}

START_TEST(test_spe_vectors) {
        _cleanup_free_ char *path = vectors_path();
        struct vector v[64];
        size_t n = read_vectors(path, v, DP_ARRAY_SIZE(v)), offset = 0, i, k;
        struct run r = decode(NULL, "--format=spe", path, NULL);
        json_t *lines, *records[8], *o, *pk, *s;
        char want[512];

        ck_assert_uint_ge(n, 10);
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        for (i = 0; i < n; i++) {
                struct table_packet t;
                int len;

                ck_assert_msg(table_decode(v[i].bytes, v[i].n, &t), "vector %zu: no packet in the table", i);
                ck_assert_uint_eq(t.size, v[i].n);
                check_meaning_against_table(&t, v[i].meaning);

                len = snprintf(want, sizeof(want), ". 0x%08zx:", offset);
                for (k = 0; k < v[i].n; k++)
                        len += snprintf(want + len, sizeof(want) - (size_t) len, " %02x", v[i].bytes[k]);
                snprintf(want + len, sizeof(want) - (size_t) len, " %s", v[i].meaning);
                ck_assert_msg(count_lines(r.out, want) == 1, "missing: %s\n%s", want, r.out);
                offset += v[i].n;
        }
        snprintf(want, sizeof(want), "# spe: %zu bytes, %zu packets,", offset, n);
        ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
        run_done(&r);

        /* The records' packets as JSON: each one what the table makes of its bytes. */
        r = decode(NULL, "--format=spe", "--json", path, NULL);
        ck_assert_int_eq(r.status, 0);
        lines = json_lines(r.out);
        ck_assert_uint_eq(of_type(lines, "record", records, DP_ARRAY_SIZE(records)), 2);
        for (k = 0; k < 2; k++)
                json_array_foreach(json_object_get(records[k], "packets"), i, pk) {
                        uint8_t bytes[16];
                        const char *hex = jstr(pk, "bytes");
                        size_t nb = strlen(hex) / 2;
                        struct table_packet t;

                        for (size_t b = 0; b < nb; b++)
                                sscanf(hex + 2 * b, "%2hhx", &bytes[b]);
                        ck_assert(table_decode(bytes, nb, &t));
                        ck_assert_str_eq(jstr(pk, "type"), t.type);
                        ck_assert_int_eq(jint(pk, "index"), t.index);
                        ck_assert_int_eq(jint(pk, "size"), t.size);
                        ck_assert_uint_eq(jhex(pk, "payload"), t.payload);
                }

        /* The first record (PC, PA, VA, counters, TS) is a sample made of its own packets. */
        o = records[0];
        ck_assert_str_eq(jstr(o, "result"), "sample");
        s = json_object_get(o, "sample");
        json_array_foreach(json_object_get(o, "packets"), i, pk) {
                const char *type = jstr(pk, "type");
                int64_t index = jint(pk, "index");

                if (strcmp(type, "ADDRESS") == 0 && index == 2)
                        ck_assert_uint_eq(jhex(s, "vaddr"), va_canonical(jhex(pk, "payload")));
                if (strcmp(type, "ADDRESS") == 0 && index == 3)
                        ck_assert_uint_eq(jhex(s, "paddr"), jhex(pk, "payload") & ADDR_MASK);
                if (strcmp(type, "COUNTER") == 0 && index == 0)
                        ck_assert_int_eq(jint(s, "latency"), (int64_t) jhex(pk, "payload"));
                if (strcmp(type, "TIMESTAMP") == 0)
                        ck_assert_uint_eq(jhex(s, "timestamp"), jhex(pk, "payload"));
        }
        ck_assert(json_is_null(json_object_get(s, "op")));      /* no OP-TYPE in it */
        snprintf(want, sizeof(want), "=> SAMPLE vaddr=0x%" PRIx64 " paddr=0x%" PRIx64 " latency=%" PRId64
                 " level=unknown pid=- ts=%" PRIu64, jhex(s, "vaddr"), jhex(s, "paddr"), jint(s, "latency"),
                 jhex(s, "timestamp"));
        run_done(&r);
        r = decode(NULL, "--format=spe", path, NULL);
        ck_assert_msg(count_lines(r.out, want) == 1, "missing: %s\n%s", want, r.out);

        /* The second (OP-TYPEs ending in a branch, EVENTS, TS) has no data address. */
        ck_assert_str_eq(jstr(records[1], "result"), "no-data");
        ck_assert(json_is_null(json_object_get(records[1], "sample")));
        ck_assert_int_eq(jint(summary_of(lines), "packets"), (int64_t) n);
        ck_assert_int_eq(jint(summary_of(lines), "bytes"), (int64_t) offset);
        ck_assert_int_eq(jint(summary_of(lines), "samples"), 1);
        ck_assert_int_eq(jint(summary_of(lines), "no_data"), 1);
        ck_assert_int_eq(jint(summary_of(lines), "damaged"), 0);
        json_decref(lines);
        run_done(&r);
}
END_TEST

/* The dump after its header line, which names the input. */
static const char *body(const char *out) {
        const char *nl = strchr(out, '\n');

        ck_assert_ptr_nonnull(nl);
        return nl + 1;
}

START_TEST(test_spe_inputs_agree) {
        _cleanup_free_ char *path = vectors_path(), *hex = NULL, *bin = NULL;
        struct vector v[64];
        size_t n = read_vectors(path, v, DP_ARRAY_SIZE(v)), size = 0;
        uint8_t bytes[1024];
        struct run as_is, from_hex, from_bin, from_stdin;

        for (size_t i = 0; i < n; i++) {
                memcpy(bytes + size, v[i].bytes, v[i].n);
                size += v[i].n;
        }
        hex = write_hex("spe.hex", bytes, size);
        bin = write_file("spe.bin", bytes, size);
        as_is = decode(NULL, "--format=spe", path, NULL);
        from_hex = decode(NULL, "--format=spe", hex, NULL);
        from_bin = decode(NULL, "--format=spe", bin, NULL);
        from_stdin = decode(bin, "--format=spe", "-", NULL);
        ck_assert_int_eq(as_is.status, 0);
        ck_assert_int_eq(from_hex.status, 0);
        ck_assert_int_eq(from_bin.status, 0);
        ck_assert_int_eq(from_stdin.status, 0);
        ck_assert_str_eq(body(as_is.out), body(from_hex.out));
        ck_assert_str_eq(body(as_is.out), body(from_bin.out));
        ck_assert_str_eq(body(as_is.out), body(from_stdin.out));
        ck_assert_ptr_nonnull(strstr(from_hex.out, "(from hex text)"));
        ck_assert_ptr_nonnull(strstr(from_bin.out, "(binary)"));
        ck_assert_ptr_nonnull(strstr(from_stdin.out, "standard input"));
        run_done(&as_is);
        run_done(&from_hex);
        run_done(&from_bin);
        run_done(&from_stdin);
}
END_TEST

struct stream {
        uint8_t b[512];
        size_t n;
};

static void put(struct stream *s, int n, ...) {
        va_list ap;

        va_start(ap, n);
        for (int i = 0; i < n; i++) {
                ck_assert_uint_lt(s->n, sizeof(s->b));
                s->b[s->n++] = (uint8_t) va_arg(ap, int);
        }
        va_end(ap);
}

static void put_le(struct stream *s, uint64_t v, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                put(s, 1, (int) ((v >> (8 * i)) & 0xff));
}

#define VA_A UINT64_C(0x00007f0000001040)
#define PA_A UINT64_C(0x0000000123456040)
#define VA_B UINT64_C(0x00007f0000002080)
#define VA_C UINT64_C(0x00007f0000003000)
#define VA_E UINT64_C(0x00007f0000004000)
#define TS_B UINT64_C(123456789)

START_TEST(test_spe_stream_resyncs) {
        struct stream s = {};
        size_t at_a, at_b, at_c, at_d, at_e, garbage, align_end, i, prev;
        _cleanup_free_ char *path = NULL;
        json_t *lines, *rec[8], *inc[2], *gar[4], *sum, *pk;
        struct run r;
        char want[256];

        put(&s, 3, 0x00, 0x00, 0x00);                           /* PADs */
        at_a = s.n;                                             /* A: a load, END */
        put(&s, 2, 0x49, 0x00);
        put(&s, 1, 0xb2), put_le(&s, VA_A, 8);
        put(&s, 1, 0xb3), put_le(&s, PA_A | (UINT64_C(1) << 63), 8);
        put(&s, 1, 0x98), put_le(&s, 42, 2);
        put(&s, 2, 0x43, 0x0e);                                 /* DATA-SOURCE: DRAM */
        put(&s, 3, 0x52, 0x06, 0x00);                           /* EVENTS retired, L1D-access */
        put(&s, 1, 0x01);
        garbage = s.n;
        put(&s, 3, 0x5a, 0xff, 0x02);                           /* no packet starts with these */
        put(&s, 2, 0x21, 0x00);                                 /* alignment PAD to 4 bytes */
        align_end = (s.n + 3) & ~(size_t) 3;
        while (s.n < align_end)
                put(&s, 1, 0x00);
        at_b = s.n;                                             /* B: a store, extended VA header, TS */
        put(&s, 2, 0x49, 0x01);
        put(&s, 2, 0x20, 0xb2), put_le(&s, VA_B, 8);
        put(&s, 1, 0x98), put_le(&s, 7, 2);
        put(&s, 1, 0x71), put_le(&s, TS_B, 8);
        at_c = s.n;                                             /* C: a bad byte inside: damaged */
        put(&s, 2, 0x49, 0x00);
        put(&s, 1, 0xff);
        put(&s, 1, 0xb2), put_le(&s, VA_C, 8);
        put(&s, 1, 0x01);
        at_d = s.n;                                             /* D: a branch: no data address */
        put(&s, 2, 0x4a, 0x00);
        put(&s, 1, 0xb0), put_le(&s, 0x400000, 8);
        put(&s, 1, 0x01);
        put(&s, 1, 0x01);                                       /* an END closing nothing */
        at_e = s.n;                                             /* E: cut off by the end */
        put(&s, 2, 0x49, 0x00);
        put(&s, 1, 0xb2), put_le(&s, VA_E, 8);

        path = write_file("stream.bin", s.b, s.n);
        /* A Neoverse N1: its DATA-SOURCE packet is read (DRAM, not the events' L1). */
        r = decode(NULL, "--format=spe", "--cpu=0x410fd0c0", path, NULL);
        ck_assert_msg(r.status == EXIT_DAMAGED, "status %d: %s", r.status, r.err);
        ck_assert_ptr_nonnull(strstr(r.err, "damaged"));
        /* Every byte on exactly one line, in order: ". 0xOFFSET: " then 16 columns of " xx". */
        prev = 0;
        for (const char *p = r.out; (p = strstr(p, "\n. 0x")); p++) {
                unsigned long off;
                size_t nbytes = 0;

                ck_assert_int_eq(sscanf(p, "\n. 0x%lx:", &off), 1);
                ck_assert_uint_eq(off, prev);
                while (nbytes < 16 && isxdigit((unsigned char) p[1 + 14 + 3 * nbytes + 1]))
                        nbytes++;
                ck_assert_uint_ge(nbytes, 1);
                ck_assert_int_eq(p[1 + 14 + 3 * 16], ' ');    /* no '+': nothing cut off */
                prev = off + nbytes;
        }
        ck_assert_uint_eq(prev, s.n);
        ck_assert_uint_eq(count_substr(r.out, "=> SAMPLE"), 2);
        ck_assert_uint_eq(count_substr(r.out, "=> no sample"), 3);
        ck_assert_uint_eq(count_substr(r.out, "PAD alignment 4"), 1);
        snprintf(want, sizeof(want), "=> SAMPLE vaddr=0x%" PRIx64 " paddr=0x%" PRIx64 " load latency=42 level=%s",
                 VA_A, PA_A, dp_mem_level_name(dp_mem_level_from_spe(0x0e)));
        ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
        snprintf(want, sizeof(want), "# spe: %zu bytes, 24 packets, 5 records, 2 samples, 1 no-data, "
                 "2 damaged (4 bad bytes, 1 cut off at the end)", s.n);
        ck_assert_msg(count_lines(r.out, want) == 1, "no '%s' in\n%s", want, r.out);
        run_done(&r);

        /* No MIDR: the EVENTS packet's level (L1D access, no refill), as perf
         * reads a CPU it does not list; the header says which. */
        r = decode(NULL, "--format=spe", path, NULL);
        ck_assert_msg(strstr(r.out, "# cpu: none given (--cpu=MIDR): levels from the EVENTS packet\n"), "%s", r.out);
        snprintf(want, sizeof(want), "=> SAMPLE vaddr=0x%" PRIx64 " paddr=0x%" PRIx64 " load latency=42 level=l1",
                 VA_A, PA_A);
        ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
        run_done(&r);
        r = decode(NULL, "--format=spe", "--cpu=0x410fd083", path, NULL);       /* Cortex-A72: not listed */
        ck_assert_msg(strstr(r.out, "# cpu: MIDR 0x410fd083: not a CPU perf reads DATA-SOURCE on"), "%s", r.out);
        ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
        run_done(&r);

        r = decode(NULL, "--format=spe", "--json", path, NULL);
        ck_assert_int_eq(r.status, EXIT_DAMAGED);
        lines = json_lines(r.out);
        ck_assert_uint_eq(of_type(lines, "record", rec, DP_ARRAY_SIZE(rec)), 4);
        ck_assert_uint_eq(of_type(lines, "incomplete", inc, DP_ARRAY_SIZE(inc)), 1);
        ck_assert_uint_eq(of_type(lines, "garbage", gar, DP_ARRAY_SIZE(gar)), 1);
        ck_assert_int_eq(jint(gar[0], "offset"), (int64_t) garbage);
        ck_assert_int_eq(jint(gar[0], "bad_bytes"), 3);
        ck_assert_int_eq(jint(rec[0], "offset"), (int64_t) at_a);
        ck_assert_int_eq(jint(rec[1], "offset"), (int64_t) at_b);
        ck_assert_int_eq(jint(rec[2], "offset"), (int64_t) at_c);
        ck_assert_int_eq(jint(rec[3], "offset"), (int64_t) at_d);
        ck_assert_int_eq(jint(inc[0], "offset"), (int64_t) at_e);
        ck_assert_int_eq(jint(inc[0], "size"), (int64_t) (s.n - at_e));
        ck_assert_str_eq(jstr(rec[0], "result"), "sample");
        ck_assert_str_eq(jstr(rec[1], "result"), "sample");
        ck_assert_str_eq(jstr(rec[2], "result"), "damaged");
        ck_assert_str_eq(jstr(rec[3], "result"), "no-data");
        ck_assert_str_eq(jstr(inc[0], "result"), "damaged");
        ck_assert_uint_eq(jhex(json_object_get(rec[0], "sample"), "vaddr"), VA_A);
        ck_assert_uint_eq(jhex(json_object_get(rec[0], "sample"), "paddr"), PA_A);
        ck_assert_str_eq(jstr(json_object_get(rec[0], "sample"), "op"), "load");
        ck_assert_uint_eq(jhex(json_object_get(rec[1], "sample"), "vaddr"), VA_B);
        ck_assert_str_eq(jstr(json_object_get(rec[1], "sample"), "op"), "store");
        ck_assert_int_eq(jint(json_object_get(rec[1], "sample"), "latency"), 7);
        ck_assert_uint_eq(jhex(json_object_get(rec[1], "sample"), "timestamp"), TS_B);
        ck_assert(json_is_null(json_object_get(json_object_get(rec[1], "sample"), "paddr")));
        /* A record's packets cover it exactly. */
        for (size_t k = 0; k < 4; k++) {
                prev = (size_t) jint(rec[k], "offset");
                json_array_foreach(json_object_get(rec[k], "packets"), i, pk) {
                        ck_assert_int_eq(jint(pk, "offset"), (int64_t) prev);
                        prev += (size_t) jint(pk, "size");
                }
                ck_assert_uint_eq(prev, (size_t) (jint(rec[k], "offset") + jint(rec[k], "size")));
        }
        sum = summary_of(lines);
        ck_assert_int_eq(jint(sum, "records"), 5);
        ck_assert_int_eq(jint(sum, "samples"), 2);
        ck_assert_int_eq(jint(sum, "no_data"), 1);
        ck_assert_int_eq(jint(sum, "damaged"), 2);
        ck_assert_int_eq(jint(sum, "bad_bytes"), 4);
        ck_assert_int_eq(jint(sum, "incomplete"), 1);
        ck_assert_int_eq(jint(sum, "packets"), 24);
        json_decref(lines);
        run_done(&r);
}
END_TEST

/* ---- AMD IBS op (FIELD-NOTES §3) ---- */

#define CAPS_BASE 0x7u                  /* avail, fetchsam, opsam */
#define CAPS_BRNTRGT (1u << 5)
#define CAPS_OPDATA4 (1u << 10)
#define CAPS_ZEN4 (1u << 11)

struct ibs_op {
        uint32_t caps;
        uint64_t ctl, rip, data, data2, data3, lin, phys, br_target, data4;
};

/* The RAW payload: caps, the seven registers, then BR_TARGET and OP_DATA4 as the caps say. */
static void put_ibs(struct stream *s, const struct ibs_op *op) {
        put_le(s, op->caps, 4);
        put_le(s, op->ctl, 8);
        put_le(s, op->rip, 8);
        put_le(s, op->data, 8);
        put_le(s, op->data2, 8);
        put_le(s, op->data3, 8);
        put_le(s, op->lin, 8);
        put_le(s, op->phys, 8);
        if (op->caps & CAPS_BRNTRGT)
                put_le(s, op->br_target, 8);
        if (op->caps & CAPS_OPDATA4)
                put_le(s, op->data4, 8);
}

static const struct ibs_op ibs_ops[] = {
        /* an L1 hit load */
        { CAPS_BASE, CTL_OK, 0x401000, 0, 0, D3_LD | D3_LIN_VALID | D3_PHY_VALID | (4ull << 22),
          0x7f0000001000, 0x1000, 0, 0 },
        /* a store that missed, with BR_TARGET */
        { CAPS_BASE | CAPS_BRNTRGT, CTL_OK, 0x401004, 0, 0, D3_ST | D3_DC_MISS | D3_L2_MISS | D3_LIN_VALID,
          0x7f0000002000, 0, 0x401100, 0 },
        /* a load from remote DRAM, with OP_DATA4 */
        { CAPS_BASE | CAPS_OPDATA4, CTL_OK, 0x401008, 0, D2_DRAM | D2_RMT_NODE,
          D3_LD | D3_DC_MISS | D3_L2_MISS | D3_LIN_VALID | D3_PHY_VALID | D3_LAT(300),
          0x7f0000003000, 0x3000, 0, 0xabcdef },
        /* the known answer of the kernel's IBS documentation, with both trailing registers */
        { CAPS_BASE | CAPS_BRNTRGT | CAPS_OPDATA4 | CAPS_ZEN4, 0x000002c30006186aull, 0xffffffff81000000ull, 0, 0,
          0x0000000031960092ull, 0xff110008a5398920ull, 0x00000008a5398920ull, 0x401200, 0x1234 },
        /* op_val clear: no sample */
        { CAPS_BASE, 1ull << 17, 0x40100c, 0, 0, D3_LD | D3_LIN_VALID, 0x7f0000005000, 0, 0, 0 },
};

START_TEST(test_ibs_payloads) {
        struct stream s = {};
        size_t offsets[DP_ARRAY_SIZE(ibs_ops) + 1];
        _cleanup_free_ char *bin = NULL, *hex = NULL;
        json_t *lines, *rec[8], *regs, *f, *smp;
        struct run r, rh;
        char want[128];

        for (size_t i = 0; i < DP_ARRAY_SIZE(ibs_ops); i++) {
                offsets[i] = s.n;
                put_ibs(&s, &ibs_ops[i]);
        }
        offsets[DP_ARRAY_SIZE(ibs_ops)] = s.n;
        bin = write_file("ibs.bin", s.b, s.n);
        hex = write_hex("ibs.hex", s.b, s.n);

        r = decode(NULL, "--format=ibs", bin, NULL);
        rh = decode(NULL, "--format=ibs", hex, NULL);
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        ck_assert_int_eq(rh.status, 0);
        ck_assert_str_eq(body(r.out), body(rh.out));
        ck_assert_ptr_nonnull(strstr(r.out, "# cpu: none given (--cpu=FAMILY:MODEL): no errata applied"));
        for (size_t i = 0; i < DP_ARRAY_SIZE(ibs_ops); i++) {
                snprintf(want, sizeof(want), ". 0x%08zx: IBS op RAW payload, %zu bytes", offsets[i],
                         offsets[i + 1] - offsets[i]);
                ck_assert_msg(count_lines(r.out, want) == 1, "missing: %s\n%s", want, r.out);
        }
        ck_assert_uint_eq(count_substr(r.out, "  BR_TARGET "), 2);
        ck_assert_uint_eq(count_substr(r.out, "  IBS_OP_DATA4 "), 2);
        ck_assert_ptr_nonnull(strstr(r.out, "BR_TARGET     0x0000000000401100"));
        ck_assert_ptr_nonnull(strstr(r.out, "IBS_OP_DATA4  0x0000000000abcdef"));
        snprintf(want, sizeof(want), "=> SAMPLE vaddr=0x%" PRIx64 " paddr=0x%" PRIx64 " load level=l1",
                 ibs_ops[0].lin, ibs_ops[0].phys);
        ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
        snprintf(want, sizeof(want), "# ibs: %zu bytes, 5 records, 4 samples, 1 no-data, 0 damaged", s.n);
        ck_assert_msg(strstr(r.out, want), "no '%s' in\n%s", want, r.out);
        run_done(&r);
        run_done(&rh);

        r = decode(NULL, "--format=ibs", "--json", bin, NULL);
        ck_assert_int_eq(r.status, 0);
        lines = json_lines(r.out);
        ck_assert_uint_eq(of_type(lines, "record", rec, DP_ARRAY_SIZE(rec)), DP_ARRAY_SIZE(ibs_ops));
        for (size_t i = 0; i < DP_ARRAY_SIZE(ibs_ops); i++) {
                const struct ibs_op *op = &ibs_ops[i];

                ck_assert_int_eq(jint(rec[i], "offset"), (int64_t) offsets[i]);
                ck_assert_int_eq(jint(rec[i], "size"), (int64_t) (4 + 8 * (7 + !!(op->caps & CAPS_BRNTRGT) +
                                                                               !!(op->caps & CAPS_OPDATA4))));
                regs = json_object_get(rec[i], "registers");
                ck_assert_uint_eq(jhex(regs, "caps"), op->caps);
                ck_assert_uint_eq(jhex(regs, "op_data3"), op->data3);
                ck_assert_uint_eq(jhex(regs, "dc_lin_addr"), op->lin);
                if (op->caps & CAPS_BRNTRGT)
                        ck_assert_uint_eq(jhex(regs, "br_target"), op->br_target);
                else
                        ck_assert(json_is_null(json_object_get(regs, "br_target")));
                if (op->caps & CAPS_OPDATA4)
                        ck_assert_uint_eq(jhex(regs, "op_data4"), op->data4);
                else
                        ck_assert(json_is_null(json_object_get(regs, "op_data4")));
                ck_assert(json_is_false(json_object_get(rec[i], "erratum_1293")));
        }
        /* FIELD-NOTES §3's known answer. */
        f = json_object_get(rec[3], "fields");
        ck_assert_int_eq(jint(f, "max_cnt"), 100000);
        ck_assert(json_is_true(json_object_get(f, "op_en")));
        ck_assert(json_is_true(json_object_get(f, "op_val")));
        ck_assert_int_eq(jint(f, "cur_cnt"), 707);
        ck_assert(json_is_true(json_object_get(f, "st_op")));
        ck_assert(json_is_false(json_object_get(f, "ld_op")));
        ck_assert(json_is_true(json_object_get(f, "dc_miss")));
        ck_assert(json_is_true(json_object_get(f, "dc_lin_addr_valid")));
        ck_assert(json_is_true(json_object_get(f, "dc_phy_addr_valid")));
        ck_assert(json_is_true(json_object_get(f, "l2_miss")));
        ck_assert_int_eq(jint(f, "op_mem_width_bytes"), 32);
        smp = json_object_get(rec[3], "sample");
        ck_assert_uint_eq(jhex(smp, "vaddr"), 0xff110008a5398920ull);
        ck_assert_uint_eq(jhex(smp, "paddr"), 0x00000008a5398920ull);
        ck_assert_str_eq(jstr(smp, "op"), "store");
        /* The remote DRAM load: its level and latency. */
        smp = json_object_get(rec[2], "sample");
        ck_assert_str_eq(jstr(smp, "level"), dp_mem_level_name(DP_MEM_REMOTE_DRAM));
        ck_assert_int_eq(jint(smp, "latency"), 300);
        /* op_val clear. */
        ck_assert_str_eq(jstr(rec[4], "result"), "no-data");
        ck_assert_ptr_nonnull(strstr(jstr(rec[4], "reason"), "op_val"));
        ck_assert(json_is_null(json_object_get(summary_of(lines), "cpu")));
        ck_assert_int_eq(jint(summary_of(lines), "samples"), 4);
        json_decref(lines);
        run_done(&r);
}
END_TEST

START_TEST(test_ibs_damaged_resyncs) {
        struct stream s = {}, third = {};
        size_t second, tail;
        _cleanup_free_ char *path = NULL;
        json_t *lines, *rec[4], *gar[4], *sum;
        struct run r;

        put_ibs(&s, &ibs_ops[0]);
        put(&s, 7, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee);
        second = s.n;
        put_ibs(&s, &ibs_ops[1]);
        tail = s.n;
        put_ibs(&third, &ibs_ops[2]);
        for (size_t i = 0; i < 30; i++)
                put(&s, 1, third.b[i]);                         /* a payload cut off */
        path = write_file("ibs-damaged.bin", s.b, s.n);

        r = decode(NULL, "--format=ibs", path, NULL);
        ck_assert_msg(r.status == EXIT_DAMAGED, "status %d: %s", r.status, r.err);
        ck_assert_ptr_nonnull(strstr(r.err, "damaged"));
        ck_assert_uint_eq(count_substr(r.out, "IBS op RAW payload,"), 2);
        ck_assert_ptr_nonnull(strstr(r.out, ". 0x0000003c: 7 bytes that start no IBS op RAW payload\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "30 bytes that start no IBS op RAW payload (too short for one)"));
        ck_assert_ptr_nonnull(strstr(r.out, "2 records, 2 samples, 0 no-data, 2 damaged (37 bytes skipped)"));
        run_done(&r);

        r = decode(NULL, "--format=ibs", "--json", path, NULL);
        ck_assert_int_eq(r.status, EXIT_DAMAGED);
        lines = json_lines(r.out);
        ck_assert_uint_eq(of_type(lines, "record", rec, DP_ARRAY_SIZE(rec)), 2);
        ck_assert_uint_eq(of_type(lines, "garbage", gar, DP_ARRAY_SIZE(gar)), 2);
        ck_assert_int_eq(jint(rec[1], "offset"), (int64_t) second);
        ck_assert_int_eq(jint(gar[0], "offset"), 60);
        ck_assert_int_eq(jint(gar[0], "size"), 7);
        ck_assert_int_eq(jint(gar[1], "offset"), (int64_t) tail);
        ck_assert_int_eq(jint(gar[1], "size"), 30);
        sum = summary_of(lines);
        ck_assert_int_eq(jint(sum, "damaged"), 2);
        ck_assert_int_eq(jint(sum, "bad_bytes"), 37);
        json_decref(lines);
        run_done(&r);
}
END_TEST

/* The keys whose values differ between two objects of the same keys, as "a,b,". */
static void differing_keys(json_t *a, json_t *b, char *out, size_t size) {
        const char *key;
        json_t *v;
        size_t used = 0;

        out[0] = '\0';
        ck_assert_uint_eq(json_object_size(a), json_object_size(b));
        json_object_foreach(a, key, v)
                if (!json_equal(v, json_object_get(b, key)))
                        used += (size_t) snprintf(out + used, size - used, "%s,", key);
}

static json_t *decode_json_lines(const char *path, const char *cpu) {
        struct run r = cpu ? decode(NULL, "--format=ibs", "--json", cpu, path, NULL)
                           : decode(NULL, "--format=ibs", "--json", path, NULL);
        json_t *lines;

        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        lines = json_lines(r.out);
        run_done(&r);
        return lines;
}

START_TEST(test_ibs_cpu_erratum) {
        /* A remote DRAM load with SwPf, one with DcMissNoMabAlloc, one with neither. */
        const uint64_t d3 = D3_LD | D3_DC_MISS | D3_L2_MISS | D3_LIN_VALID | D3_PHY_VALID | D3_LAT(200);
        const struct ibs_op ops[] = {
                { CAPS_BASE, CTL_OK, 0x401000, 0, D2_DRAM | D2_RMT_NODE, d3 | D3_SW_PF, 0x7f0000001000, 0x1000, 0, 0 },
                { CAPS_BASE, CTL_OK, 0x401000, 0, D2_DRAM | D2_RMT_NODE, d3 | D3_NO_MAB, 0x7f0000002000, 0x2000, 0, 0 },
                { CAPS_BASE, CTL_OK, 0x401000, 0, D2_DRAM | D2_RMT_NODE, d3, 0x7f0000003000, 0x3000, 0, 0 },
        };
        struct stream s = {};
        _cleanup_free_ char *path = NULL;
        json_t *none, *affected, *affected_dec, *unaffected, *a, *b;
        char diff[512];
        struct run r;

        for (size_t i = 0; i < DP_ARRAY_SIZE(ops); i++)
                put_ibs(&s, &ops[i]);
        path = write_file("ibs-erratum.bin", s.b, s.n);
        none = decode_json_lines(path, NULL);
        affected = decode_json_lines(path, "--cpu=0x19:0x01");
        affected_dec = decode_json_lines(path, "--cpu=25:1");
        unaffected = decode_json_lines(path, "--cpu=0x19:0x10");
        ck_assert_uint_eq(json_array_size(none), DP_ARRAY_SIZE(ops) + 1);

        /* Hex and decimal name the same CPU. */
        ck_assert(json_equal(affected, affected_dec));
        ck_assert_int_eq(jint(json_object_get(summary_of(affected), "cpu"), "family"), 0x19);
        ck_assert_int_eq(jint(json_object_get(summary_of(affected), "cpu"), "model"), 0x01);
        ck_assert(json_is_true(json_object_get(summary_of(affected), "erratum_1293")));
        ck_assert(json_is_false(json_object_get(summary_of(unaffected), "erratum_1293")));

        for (size_t i = 0; i < DP_ARRAY_SIZE(ops); i++) {
                bool fires = i < 2;

                /* A CPU without the erratum decodes as no CPU at all. */
                a = json_array_get(none, i);
                b = json_array_get(unaffected, i);
                ck_assert(json_equal(json_object_get(a, "fields"), json_object_get(b, "fields")));
                ck_assert(json_equal(json_object_get(a, "sample"), json_object_get(b, "sample")));
                ck_assert(json_is_false(json_object_get(b, "erratum_1293")));

                /* An affected one drops OP_DATA2 and L2Miss, for SwPf and DcMissNoMabAlloc ops only. */
                b = json_array_get(affected, i);
                ck_assert(json_boolean_value(json_object_get(b, "erratum_1293")) == fires);
                differing_keys(json_object_get(a, "fields"), json_object_get(b, "fields"), diff, sizeof(diff));
                ck_assert_str_eq(diff, fires ? "op_data2_valid,data_src_lo,data_src,rmt_node,l2_miss_valid," : "");
                differing_keys(json_object_get(a, "sample"), json_object_get(b, "sample"), diff, sizeof(diff));
                ck_assert_str_eq(diff, fires ? "level,data_src," : "");
                ck_assert_str_eq(jstr(json_object_get(a, "sample"), "level"), dp_mem_level_name(DP_MEM_REMOTE_DRAM));
        }
        json_decref(none);
        json_decref(affected);
        json_decref(affected_dec);
        json_decref(unaffected);

        /* And the text dump says so. */
        r = decode(NULL, "--format=ibs", "--cpu=0x19:0x01", path, NULL);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "# cpu: family 0x19 model 0x01: erratum 1293 applies"));
        ck_assert_uint_eq(count_substr(r.out, "ignored (erratum 1293)"), 2);
        ck_assert_uint_eq(count_substr(r.out, "l2_miss=ignored"), 2);
        ck_assert_uint_eq(count_substr(r.out, "erratum 1293: SwPf set"), 1);
        ck_assert_uint_eq(count_substr(r.out, "erratum 1293: DcMissNoMabAlloc set"), 1);
        run_done(&r);
        r = decode(NULL, "--format=ibs", path, NULL);
        ck_assert_int_eq(r.status, 0);
        ck_assert_uint_eq(count_substr(r.out, "ignored"), 0);
        ck_assert_uint_eq(count_substr(r.out, "note: SwPf set"), 1);
        ck_assert_uint_eq(count_substr(r.out, "note: DcMissNoMabAlloc set"), 1);
        run_done(&r);
        r = decode(NULL, "--format=ibs", "--cpu=0x19:0x10", path, NULL);
        ck_assert_ptr_nonnull(strstr(r.out, "# cpu: family 0x19 model 0x10: erratum 1293 does not apply"));
        run_done(&r);
}
END_TEST

/* ---- bad input ---- */

static void expect_failure(struct run r, int status, const char *message) {
        ck_assert_msg(r.status == status, "status %d (want %d): %s", r.status, status, r.err);
        ck_assert_msg(strstr(r.err, message), "no '%s' in: %s", message, r.err);
        run_done(&r);
}

START_TEST(test_bad_input) {
        _cleanup_free_ char *vectors = vectors_path(), *odd = NULL, *odd_pair = NULL, *text = NULL, *missing = NULL,
                            *empty = NULL;
        static const char odd_text[] = "b0 5c 8b 8c 86 c2 c0 ff c0\n# a comment\n98 0b 0\n";
        static const char odd_pair_text[] = "| an odd run of digits\n98 0b0 01\n";
        static const char text_text[] = "b0 5c zz\n";
        struct run r;

        odd = write_file("odd.hex", odd_text, strlen(odd_text));
        odd_pair = write_file("odd-pair.hex", odd_pair_text, strlen(odd_pair_text));
        text = write_file("typo.hex", text_text, strlen(text_text));
        empty = write_file("empty", "", 0);
        missing = path_in_dir("does-not-exist");

        expect_failure(decode(NULL, vectors, NULL), 2, "decode needs --format");
        expect_failure(decode(NULL, "--format=arm", vectors, NULL), 2, "--format: expected spe, ibs or perf.data, got 'arm'");
        expect_failure(decode(NULL, "--format=spe", "--cpu=0x19:1", vectors, NULL), 2,
                       "--cpu=FAMILY:MODEL is for --format=ibs");
        expect_failure(decode(NULL, "--format=ibs", "--cpu=0x19", vectors, NULL), 2, "--cpu=MIDR is for --format=spe");
        expect_failure(decode(NULL, "--format=spe", "--cpu=410fd0c0", vectors, NULL), 2,
                       "--cpu: expected FAMILY:MODEL (IBS) or a MIDR_EL1");
        expect_failure(decode(NULL, "--format=spe", "--cpu=0x1410fd0c0", vectors, NULL), 2, "got '0x1410fd0c0'");
        expect_failure(decode(NULL, "--format=ibs", "--cpu=0x19:0x1g", vectors, NULL), 2, "got '0x19:0x1g'");
        expect_failure(decode(NULL, "--format=ibs", "--cpu=:1", vectors, NULL), 2, "--cpu: expected");
        expect_failure(decode(NULL, "--format=ibs", "--cpu=0x100000000:1", vectors, NULL), 2, "--cpu: expected");
        expect_failure(decode(NULL, "--format=spe", vectors, vectors, NULL), 2, "unexpected argument");
        expect_failure(decode(NULL, "--format=spe", "--top=3", vectors, NULL), 2, "decode does not take --top");
        expect_failure(decode(NULL, "--format=spe", missing, NULL), 1, "No such file or directory");
        expect_failure(decode(NULL, "--format=spe", dir, NULL), 1, "Is a directory");
        expect_failure(decode(NULL, "--format=spe", odd, NULL), 1, "odd.hex:3: odd number of hex digits in '0'");
        expect_failure(decode(NULL, "--format=spe", odd_pair, NULL), 1, "odd-pair.hex:2: odd number of hex digits in '0b0'");
        /* Text that is not hex is read as binary, with a note saying where. */
        r = decode(NULL, "--format=spe", text, NULL);
        ck_assert_ptr_nonnull(strstr(r.err, "line 1: 'z' is not a hex digit"));
        ck_assert_ptr_nonnull(strstr(r.out, "(binary)"));
        run_done(&r);
        /* IBS payloads are not SPE bytes, and the other way round. */
        expect_failure(decode(NULL, "--format=ibs", vectors, NULL), EXIT_DAMAGED, "damaged");
        /* Nothing is not damage. */
        r = decode(NULL, "--format=spe", empty, NULL);
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "# spe: 0 bytes, 0 packets, 0 records"));
        run_done(&r);
        r = decode(NULL, "--format=ibs", "--json", NULL);       /* standard input: /dev/null */
        ck_assert_int_eq(r.status, 0);
        json_decref(json_lines(r.out));
        run_done(&r);
}
END_TEST

START_TEST(test_other_commands_refuse_decode_options) {
        const char *ctl = getenv("DP_DAMONCTL");
        const char *stats[] = { "stats", "--format=spe", NULL }, *help[] = { "--help", NULL };
        struct run r;

        ck_assert_ptr_nonnull(ctl);
        r = ctl_collect(dir, ctl_spawn(dir, "unix:/nonexistent", 0, stats));
        expect_failure(r, 2, "stats does not take --format");
        r = ctl_collect(dir, ctl_spawn(dir, "unix:/nonexistent", 0, help));
        ck_assert_int_eq(r.status, 0);
        ck_assert_ptr_nonnull(strstr(r.out, "decode [FILE|-]"));
        ck_assert_ptr_nonnull(strstr(r.out, "--format=spe|ibs"));
        ck_assert_ptr_nonnull(strstr(r.out, "--cpu=FAMILY:MODEL"));
        run_done(&r);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("damonctl-decode");
        TCase *tc = tcase_create("decode");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_spe_vectors);
        tcase_add_test(tc, test_spe_inputs_agree);
        tcase_add_test(tc, test_spe_stream_resyncs);
        tcase_add_test(tc, test_ibs_payloads);
        tcase_add_test(tc, test_ibs_damaged_resyncs);
        tcase_add_test(tc, test_ibs_cpu_erratum);
        tcase_add_test(tc, test_bad_input);
        tcase_add_test(tc, test_other_commands_refuse_decode_options);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(suite());
}
