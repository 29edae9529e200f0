/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Both sides of the differential test (test-perf-diff.c), read into rows:
 *
 *   perf     `perf script --ns -F ...` lines (pid/tid, [cpu], time, then addr,
 *            data_src as hex and words, weight, phys_addr in the order perf
 *            prints them), and the AMD IBS register dumps `perf report -D`
 *            prints before each sample record (tools/perf/util/amd-sample-raw.c)
 *   ours     `damonctl decode --format=perf.data --json`, one object a sample
 */

#include <check.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Which fields a perf script run prints (as -F names them). */
#define DIFF_F_ADDR (1u << 0)
#define DIFF_F_DATA_SRC (1u << 1)
#define DIFF_F_WEIGHT (1u << 2)
#define DIFF_F_PHYS (1u << 3)
#define DIFF_F_CPU (1u << 4)

/* perf's data_src__fprintf() cuts "%16" PRIx64 " %s" at 99 characters. */
#define DIFF_PERF_LINE_CUT 99

struct diff_perf_row {
        uint32_t pid, tid, cpu;
        uint64_t time;
        uint64_t addr, data_src, weight, phys;
        char data_src_text[128];
        bool text_cut;                  /* perf printed only the first characters */
};

/* The lines of one IBS register dump, as perf report -D prints them. */
struct diff_ibs_dump {
        uint64_t time;                  /* of the sample record that followed */
        char ctl[256], rip[64], data[256], data2[256], data3[512], lin[64], phys[64], brt[64];
};

/* Runs @cmd (a shell command line); its standard output in *@out (free()
 * it).  Returns the exit status, -1 when it did not exit normally. */
static inline int diff_run(const char *cmd, char **out) {
        FILE *p = popen(cmd, "r");
        size_t n = 0, cap = 1 << 16;
        char *buf = malloc(cap);
        int status;

        ck_assert_ptr_nonnull(p);
        ck_assert_ptr_nonnull(buf);
        for (size_t k; (k = fread(buf + n, 1, cap - n - 1, p)) > 0;) {
                n += k;
                if (cap - n - 1 == 0) {
                        cap *= 2;
                        buf = realloc(buf, cap);
                        ck_assert_ptr_nonnull(buf);
                }
        }
        buf[n] = '\0';
        status = pclose(p);
        *out = buf;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline const char *diff_parse_u64(const char *s, int base, uint64_t *v) {
        char *end = NULL;
        size_t used;

        *v = strtoull(s, &end, base);
        used = (size_t) (end - s);
        ck_assert_msg(used > 0, "expected a number at '%.40s'", s);
        return s + used;        /* (not end: GCC takes it for a dangling local) */
}

/* data_src's words, the last thing on their line (perf pads them to its
 * widest line so far); perf cuts them where "%16x %s" reaches 99 characters. */
static inline const char *diff_parse_data_src_text(const char *s, struct diff_perf_row *row) {
        size_t len = strcspn(s, "\n");

        /* At its widest a line is cut: blanks at its end may be text or
         * padding, so it is compared padded (eq_data_src()). */
        row->text_cut = len >= DIFF_PERF_LINE_CUT - 17;
        if (row->text_cut)
                len = DIFF_PERF_LINE_CUT - 17;
        else
                while (len > 0 && s[len - 1] == ' ')
                        len--;
        ck_assert_uint_lt(len, sizeof(row->data_src_text));
        memcpy(row->data_src_text, s, len);
        row->data_src_text[len] = '\0';
        return s + len;
}

/* One `perf script --ns -F pid,tid,cpu,time,...` line. */
static inline void diff_parse_script_line(const char *line, unsigned fields, struct diff_perf_row *row) {
        char field[17] = {}, weight[64] = {};
        unsigned long long sec, nsec;
        int used = 0;
        const char *s;

        memset(row, 0, sizeof(*row));
        if (fields & DIFF_F_CPU)
                ck_assert_msg(sscanf(line, " %" SCNu32 "/%" SCNu32 " [%" SCNu32 "] %llu.%llu:%n", &row->pid,
                                     &row->tid, &row->cpu, &sec, &nsec, &used) == 5 && used > 0,
                              "unexpected perf script line: %.120s", line);
        else
                ck_assert_msg(sscanf(line, " %" SCNu32 "/%" SCNu32 " %llu.%llu:%n", &row->pid, &row->tid, &sec,
                                     &nsec, &used) == 4 && used > 0,
                              "unexpected perf script line: %.120s", line);
        row->time = sec * 1000000000ull + nsec;
        s = line + used;
        if (*s == ' ')
                s++;            /* "time: ", then the fields */
        if (fields & DIFF_F_DATA_SRC) {
                s = diff_parse_u64(s, 16, &row->data_src);
                ck_assert_msg(*s == ' ', "no blank after data_src in: %.120s", line);
                diff_parse_data_src_text(s + 1, row);
                return;
        }
        /* "%16" PRIx64 addresses and "%16" PRIu64 weights run together when a
         * weight has more than 16 digits: addresses are read by their width. */
        if (fields & DIFF_F_ADDR) {
                ck_assert_uint_ge(strcspn(s, "\n"), 16);
                memcpy(field, s, 16);
                diff_parse_u64(field, 16, &row->addr);
                s += 16;
        }
        if (fields & DIFF_F_PHYS) {
                size_t len = strcspn(s, "\n");

                ck_assert_uint_ge(len, 16);
                memcpy(field, s + len - 16, 16);
                diff_parse_u64(field, 16, &row->phys);
                memcpy(weight, s, DP_MIN(len - 16, sizeof(weight) - 1));
                s = weight;
        }
        if (fields & DIFF_F_WEIGHT)
                diff_parse_u64(s, 10, &row->weight);
}

static inline size_t diff_perf_script_run(const char *path, const char *options, const char *fields_arg,
                                          unsigned fields, struct diff_perf_row **ret) {
        char cmd[1024], *out, *line;
        struct diff_perf_row *rows = NULL;
        size_t n = 0, cap = 0;
        int status;

        snprintf(cmd, sizeof(cmd), "perf script -i '%s' --ns %s -F %s 2>/dev/null", path, options, fields_arg);
        status = diff_run(cmd, &out);
        ck_assert_msg(status == 0, "'%s' exited with %d", cmd, status);
        for (line = out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
                if (*line == '\n')
                        continue;
                if (n == cap) {
                        cap = cap ? 2 * cap : 256;
                        rows = realloc(rows, cap * sizeof(*rows));
                        ck_assert_ptr_nonnull(rows);
                }
                diff_parse_script_line(line, fields, &rows[n++]);
        }
        free(out);
        *ret = rows;
        return n;
}

/* perf script on @path with @fields_arg (-F, maybe "type:" first); rows in
 * *@ret (free() it), their number returned.  data_src is read in a run of
 * its own where it ends the line: its words have blanks and perf may cut
 * them, so what follows them on a line could not be told apart. */
static inline size_t diff_perf_script(const char *path, const char *options, const char *fields_arg,
                                      unsigned fields, struct diff_perf_row **ret) {
        char main_arg[256], ds_arg[256];
        const char *colon = strchr(fields_arg, ':'), *ds = strstr(fields_arg, ",data_src");
        struct diff_perf_row *rows, *ds_rows;
        size_t n, n_ds;

        if (!(fields & DIFF_F_DATA_SRC))
                return diff_perf_script_run(path, options, fields_arg, fields, ret);
        ck_assert_ptr_nonnull(ds);
        snprintf(main_arg, sizeof(main_arg), "%.*s%s", (int) (ds - fields_arg), fields_arg, ds + strlen(",data_src"));
        snprintf(ds_arg, sizeof(ds_arg), "%.*spid,tid,time,data_src", colon ? (int) (colon - fields_arg + 1) : 0,
                 fields_arg);
        n = diff_perf_script_run(path, options, main_arg, fields & ~DIFF_F_DATA_SRC, &rows);
        n_ds = diff_perf_script_run(path, options, ds_arg, DIFF_F_DATA_SRC, &ds_rows);
        ck_assert_uint_eq(n, n_ds);
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_eq(rows[i].time, ds_rows[i].time);
                rows[i].data_src = ds_rows[i].data_src;
                memcpy(rows[i].data_src_text, ds_rows[i].data_src_text, sizeof(rows[i].data_src_text));
                rows[i].text_cut = ds_rows[i].text_cut;
        }
        free(ds_rows);
        *ret = rows;
        return n;
}

static inline void diff_copy_line(char *dst, size_t size, const char *src) {
        size_t n = strcspn(src, "\n");

        ck_assert_uint_lt(n, size);
        memcpy(dst, src, n);
        dst[n] = '\0';
}

/* perf report -D on @path: one dump per PERF_RECORD_SAMPLE, in file order
 * (empty where perf printed none: an op without En and Val). */
static inline size_t diff_perf_ibs_dumps(const char *path, struct diff_ibs_dump **ret) {
        static const struct {
                const char *label;
                size_t offset, size;
        } labels[] = {
#define L(label, member) { label, offsetof(struct diff_ibs_dump, member), sizeof(((struct diff_ibs_dump *) 0)->member) }
                L("ibs_op_ctl:", ctl), L("IbsOpRip:", rip), L("ibs_op_data:", data), L("ibs_op_data2:", data2),
                L("ibs_op_data3:", data3), L("IbsDCLinAd:", lin), L("IbsDCPhysAd:", phys),
                L("IbsBrTarget:", brt),
#undef L
        };
        char cmd[1024], *out, *line;
        struct diff_ibs_dump cur = {}, *dumps = NULL;
        size_t n = 0, cap = 0;
        int status;

        snprintf(cmd, sizeof(cmd), "perf report -D -i '%s' 2>/dev/null", path);
        status = diff_run(cmd, &out);
        ck_assert_msg(status == 0, "'%s' exited with %d", cmd, status);
        for (line = out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
                unsigned long long time;
                unsigned cpu;

                for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
                        if (strncmp(line, labels[i].label, strlen(labels[i].label)) == 0)
                                diff_copy_line((char *) &cur + labels[i].offset, labels[i].size, line);
                if (!memmem(line, strcspn(line, "\n"), ": PERF_RECORD_SAMPLE(", 21) ||
                    sscanf(line, "%u %llu ", &cpu, &time) != 2)
                        continue;
                if (n == cap) {
                        cap = cap ? 2 * cap : 256;
                        dumps = realloc(dumps, cap * sizeof(*dumps));
                        ck_assert_ptr_nonnull(dumps);
                }
                cur.time = time;
                dumps[n++] = cur;
                memset(&cur, 0, sizeof(cur));
        }
        free(out);
        *ret = dumps;
        return n;
}

/* The number after " @name " in a dump line; false when perf did not print it. */
static inline bool diff_dump_field(const char *line, const char *name, uint64_t *v) {
        char key[48];
        const char *at;

        snprintf(key, sizeof(key), " %s ", name);
        at = strstr(line, key);
        if (!at)
                return false;
        diff_parse_u64(at + strlen(key), 10, v);
        return true;
}

/* The register a "Label:\t%016llx" line or a line's leading value shows. */
static inline bool diff_dump_hex(const char *line, uint64_t *v) {
        const char *tab = strchr(line, '\t');

        if (!line[0] || !tab)
                return false;
        diff_parse_u64(tab + 1, 16, v);
        return true;
}

/* Ours: damonctl decode --format=perf.data --json on @path; the sample
 * objects in *@ret (a JSON array; json_decref() it). */
static inline size_t diff_ours(const char *path, json_t **ret) {
        const char *ctl = getenv("DP_DAMONCTL");
        char cmd[1024], *out, *line;
        json_t *rows = json_array();
        int status;

        ck_assert_msg(ctl, "DP_DAMONCTL not set");
        snprintf(cmd, sizeof(cmd), "'%s' decode --format=perf.data --json '%s'", ctl, path);
        status = diff_run(cmd, &out);
        ck_assert_msg(status == 0, "'%s' exited with %d", cmd, status);
        for (line = out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
                json_error_t err;
                json_t *o = json_loadb(line, strcspn(line, "\n"), 0, &err);

                ck_assert_msg(o, "not JSON: %.80s (%s)", line, err.text);
                if (strcmp(json_string_value(json_object_get(o, "type")) ?: "", "sample") == 0)
                        json_array_append(rows, o);
                json_decref(o);
        }
        free(out);
        *ret = rows;
        return json_array_size(rows);
}

/* A "0x..." string field of ours, or @none when absent or null. */
static inline uint64_t diff_json_hex(const json_t *o, const char *key, uint64_t none) {
        const char *s = json_string_value(json_object_get(o, key));

        return s ? strtoull(s, NULL, 16) : none;
}

static inline uint64_t diff_json_int(const json_t *o, const char *key) {
        const json_t *v = json_object_get(o, key);

        ck_assert_msg(v, "no '%s' in our sample", key);
        return json_is_true(v) ? 1 : json_is_false(v) ? 0 : (uint64_t) json_integer_value(v);
}
