/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The perf.data reader against a real capture
 * ($DP_TESTDATA/pagefault-system.perf.data, `perf record -e page-faults -c 1
 * -d -a`) and the `perf script` text of the same file, which prints
 * "comm pid/tid [cpu] secs.usecs: addr ip" per sample, sorted by time.
 */

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "perf-data.h"

#include "check-main.h"

#define CHECK(cond, ...)                                \
        do {                                            \
                if (!(cond))                            \
                        ck_abort_msg(__VA_ARGS__);      \
        } while (0)

#define DATA_FILE "pagefault-system.perf.data"
#define SCRIPT_FILE "pagefault-system.perf.script"
/* FIELD-NOTES §1: the software page-fault event reports "not available" in every field. */
#define DATA_SRC_NA UINT64_C(0x1e05080021)

struct row {
        uint64_t time, addr, ip, order;
        uint32_t pid, tid, cpu;
};

static char *testdata_path(const char *name) {
        const char *dir = getenv("DP_TESTDATA");
        char *path;

        if (!dir)
                ck_abort_msg("DP_TESTDATA is not set; run through `meson test` (tests/meson.build sets it)");
        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
        if (access(path, R_OK) < 0)
                ck_abort_msg("test data %s is missing (%s); the shared testdata directory is needed",
                             path, strerror(errno));
        return path;
}

static void *read_whole(const char *path, size_t *size) {
        FILE *f = fopen(path, "re");
        uint8_t *buf;
        long n;

        CHECK(f, "cannot open %s: %s", path, strerror(errno));
        ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
        n = ftell(f);
        ck_assert_int_gt(n, 0);
        rewind(f);
        buf = malloc((size_t) n);
        ck_assert_ptr_nonnull(buf);
        ck_assert_uint_eq(fread(buf, 1, (size_t) n, f), (size_t) n);
        fclose(f);
        *size = (size_t) n;
        return buf;
}

/* Splits off the last whitespace-separated token of line[0..*len). */
static char *last_token(char *line, size_t *len) {
        while (*len > 0 && line[*len - 1] == ' ')
                line[--*len] = '\0';
        while (*len > 0 && line[*len - 1] != ' ')
                (*len)--;
        return line + *len;
}

/* The comm may hold spaces, so the columns are taken from the right. */
static size_t load_script(struct row **ret) {
        _cleanup_free_ char *path = testdata_path(SCRIPT_FILE);
        _cleanup_free_ char *line = NULL;
        size_t n = 0, cap = 0, linecap = 0;
        struct row *rows = NULL;
        FILE *f = fopen(path, "re");
        ssize_t got;

        CHECK(f, "cannot open %s: %s", path, strerror(errno));
        while ((got = getline(&line, &linecap, f)) > 0) {
                size_t len = (size_t) got;
                char *ip, *addr, *time, *cpu, *ids;
                uint64_t secs, usecs;
                struct row r = { .order = n };

                if (line[len - 1] == '\n')
                        line[--len] = '\0';
                /* Each call cuts off the spaces before the token it returned last. */
                ip = last_token(line, &len);
                addr = last_token(line, &len);
                time = last_token(line, &len);
                cpu = last_token(line, &len);
                ids = last_token(line, &len);
                CHECK(len > 0, "script line %zu has no comm", n + 1);
                CHECK(sscanf(ip, "%" SCNx64, &r.ip) == 1 && sscanf(addr, "%" SCNx64, &r.addr) == 1 &&
                      sscanf(time, "%" SCNu64 ".%6" SCNu64 ":", &secs, &usecs) == 2 &&
                      sscanf(cpu, "[%" SCNu32 "]", &r.cpu) == 1 &&
                      sscanf(ids, "%" SCNu32 "/%" SCNu32, &r.pid, &r.tid) == 2,
                      "cannot parse script line %zu", n + 1);
                r.time = secs * 1000000 + usecs; /* microseconds, as printed */
                if (n == cap) {
                        cap = cap ? 2 * cap : 4096;
                        rows = realloc(rows, cap * sizeof(*rows));
                        ck_assert_ptr_nonnull(rows);
                }
                rows[n++] = r;
        }
        fclose(f);
        *ret = rows;
        return n;
}

struct walk {
        struct row *samples;
        size_t n_samples, cap;
        uint64_t *offsets;       /* file offset of every record, and the end */
        size_t n_records;
        size_t n_by_type[128];
        int end;                 /* what dp_perf_data_next() returned last */
};

static void walk_free(struct walk *w) {
        free(w->samples);
        free(w->offsets);
}

static void walk_all(struct dp_perf_data *d, struct walk *w) {
        struct dp_perf_data_record rec;
        int r;

        *w = (struct walk) {};
        while ((r = dp_perf_data_next(d, &rec)) > 0) {
                uint32_t type = rec.header->type;

                w->n_by_type[DP_MIN(type, (uint32_t) DP_ARRAY_SIZE(w->n_by_type) - 1)]++;
                if (w->n_records % 4096 == 0) {
                        w->offsets = realloc(w->offsets, (w->n_records + 4097) * sizeof(*w->offsets));
                        ck_assert_ptr_nonnull(w->offsets);
                }
                w->offsets[w->n_records++] = rec.file_offset;
                if (type != PERF_RECORD_SAMPLE)
                        continue;

                if (w->n_samples == w->cap) {
                        w->cap = w->cap ? 2 * w->cap : 4096;
                        w->samples = realloc(w->samples, w->cap * sizeof(*w->samples));
                        ck_assert_ptr_nonnull(w->samples);
                }
                w->samples[w->n_samples] = (struct row) {
                        .time = rec.sample.time, .addr = rec.sample.addr, .ip = rec.sample.ip,
                        .pid = rec.sample.pid, .tid = rec.sample.tid, .cpu = rec.sample.cpu,
                        .order = w->n_samples,
                };
                w->n_samples++;
        }
        w->end = r;
}

static bool same_rows(const struct row *a, const struct row *b, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (a[i].time != b[i].time || a[i].addr != b[i].addr || a[i].ip != b[i].ip ||
                    a[i].pid != b[i].pid || a[i].tid != b[i].tid || a[i].cpu != b[i].cpu)
                        return false;
        return true;
}

static int compare_time(const void *a, const void *b) {
        const struct row *x = a, *y = b;

        if (x->time != y->time)
                return x->time < y->time ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

START_TEST(test_matches_perf_script) {
        _cleanup_free_ char *path = testdata_path(DATA_FILE);
        _cleanup_perf_data_ struct dp_perf_data *d = NULL;
        _cleanup_free_ struct row *script = NULL;
        struct dp_perf_data_record rec;
        struct walk w;
        size_t n_script, n = 0, other = 0;
        int r;

        n_script = load_script(&script);
        ck_assert_uint_gt(n_script, 1000);

        ck_assert_int_eq(dp_perf_data_open(path, &d), 0);
        ck_assert_uint_eq(dp_perf_data_attr_count(d), 2);
        ck_assert_uint_eq(dp_perf_data_attr(d, 0)->sample_type,
                          PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                          PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC);
        ck_assert_uint_eq(dp_perf_data_attr(d, 0)->type, PERF_TYPE_SOFTWARE);
        ck_assert_uint_eq(dp_perf_data_attr(d, 0)->config, PERF_COUNT_SW_PAGE_FAULTS);
        ck_assert_uint_eq(dp_perf_data_attr(d, 1)->config, PERF_COUNT_SW_DUMMY);
        ck_assert_ptr_null(dp_perf_data_attr(d, 2));

        /* Every sample belongs to the page-fault event; every kernel record
         * carries a trailer naming one of the two. */
        while ((r = dp_perf_data_next(d, &rec)) > 0) {
                if (rec.header->type == PERF_RECORD_SAMPLE) {
                        CHECK(rec.attr_index == 0, "sample %zu attributed to attr %d", n, rec.attr_index);
                        CHECK(rec.sample.data_src == DATA_SRC_NA, "sample %zu data_src %#" PRIx64, n,
                              rec.sample.data_src);
                        CHECK(rec.sample.tid != 0 || rec.sample.pid == 0, "sample %zu: tid 0", n);
                        n++;
                } else if (rec.header->type < DP_PERF_RECORD_USER_TYPE_START) {
                        CHECK(rec.attr_index >= 0 && rec.sample_id.present != 0,
                              "kernel record type %u at %#" PRIx64 " without trailer", rec.header->type,
                              rec.file_offset);
                        other++;
                } else
                        CHECK(rec.attr_index == -1, "perf record type %u attributed", rec.header->type);
        }
        ck_assert_int_eq(r, 0);
        ck_assert_uint_gt(other, 100);

        dp_perf_data_rewind(d);
        walk_all(d, &w);
        ck_assert_int_eq(w.end, 0);
        ck_assert_uint_eq(w.n_samples, n);
        ck_assert_uint_gt(w.n_by_type[PERF_RECORD_MMAP2], 0);
        ck_assert_uint_gt(w.n_by_type[PERF_RECORD_COMM], 0);
        ck_assert_uint_gt(w.n_by_type[DP_PERF_RECORD_FINISHED_ROUND], 0);

        /* perf script sorts by time; the file holds per-CPU chunks. */
        qsort(w.samples, w.n_samples, sizeof(*w.samples), compare_time);
        ck_assert_uint_eq(w.n_samples, n_script);
        for (size_t i = 0; i < n_script; i++) {
                const struct row *got = &w.samples[i], *want = &script[i];

                CHECK(got->pid == want->pid && got->tid == want->tid && got->cpu == want->cpu &&
                      got->addr == want->addr && got->ip == want->ip && got->time / 1000 == want->time,
                      "script line %zu: got %u/%u [%u] %" PRIu64 " %#" PRIx64 " %#" PRIx64
                      ", want %u/%u [%u] %" PRIu64 " %#" PRIx64 " %#" PRIx64, i + 1,
                      got->pid, got->tid, got->cpu, got->time / 1000, got->addr, got->ip,
                      want->pid, want->tid, want->cpu, want->time, want->addr, want->ip);
        }
        walk_free(&w);
}
END_TEST

START_TEST(test_memory_equals_file) {
        _cleanup_free_ char *path = testdata_path(DATA_FILE);
        _cleanup_perf_data_ struct dp_perf_data *from_file = NULL, *from_memory = NULL, *tiny = NULL;
        _cleanup_free_ uint8_t *buf = NULL, *shifted = NULL;
        struct walk a, b;
        size_t size;

        buf = read_whole(path, &size);
        ck_assert_int_eq(dp_perf_data_open(path, &from_file), 0);
        /* At an odd address: the reader must not depend on the caller's alignment. */
        shifted = malloc(size + 1);
        ck_assert_ptr_nonnull(shifted);
        memcpy(shifted + 1, buf, size);
        ck_assert_int_eq(dp_perf_data_open_memory(shifted + 1, size, &from_memory), 0);
        ck_assert_int_eq(dp_perf_data_open_memory(buf, 1, &tiny), -EBADMSG);
        ck_assert_ptr_null(tiny);

        walk_all(from_file, &a);
        walk_all(from_memory, &b);
        ck_assert_int_eq(a.end, 0);
        ck_assert_int_eq(b.end, 0);
        ck_assert_uint_eq(a.n_records, b.n_records);
        ck_assert_uint_eq(a.n_samples, b.n_samples);
        ck_assert_int_eq(same_rows(a.samples, b.samples, a.n_samples), true);
        walk_free(&a);
        walk_free(&b);
}
END_TEST

static uint64_t get_u64(const uint8_t *p) {
        uint64_t v;

        memcpy(&v, p, 8);
        return v;
}

static void set_u64(uint8_t *p, uint64_t v) {
        memcpy(p, &v, 8);
}

/* A prefix of the file, which must be refused, or read as a prefix of the
 * records. */
static void check_prefix_outcome(const uint8_t *buf, size_t len, const struct walk *full) {
        _cleanup_perf_data_ struct dp_perf_data *d = NULL;
        struct walk w;
        int r;

        r = dp_perf_data_open_memory(buf, len, &d);
        if (r < 0) {
                CHECK(r == -EBADMSG || r == -EPROTO, "%zu bytes: open gave %d (%s)", len, r, strerror(-r));
                return;
        }
        walk_all(d, &w);
        CHECK(w.end == 0 || w.end == -EBADMSG, "%zu bytes: iteration gave %d", len, w.end);
        CHECK(w.n_samples <= full->n_samples && w.n_records <= full->n_records,
              "%zu bytes: more than all", len);
        CHECK(same_rows(w.samples, full->samples, w.n_samples),
              "%zu bytes: not a prefix", len);
        walk_free(&w);
}

/* How many of @full's records end at or before @cut bytes into the data
 * section, and whether one starts (or the section ends) right at @cut. */
static size_t records_before(const struct walk *full, uint64_t data_offset, uint64_t data_size, uint64_t cut,
                             bool *at_boundary) {
        size_t n = 0;

        while (n < full->n_records &&
               (n + 1 < full->n_records ? full->offsets[n + 1] - data_offset : data_size) <= cut)
                n++;
        *at_boundary = (n < full->n_records ? full->offsets[n] - data_offset : data_size) == cut;
        return n;
}

/* One record as a reader sees it: where it is, what it is, and its bytes. */
struct seen {
        uint64_t offset;
        int attr_index;
        uint32_t type, size;
        uint64_t sample_id_present;
        uint32_t sample_id_cpu;
        struct dp_perf_sample sample;   /* parsed, for samples */
        uint8_t bytes[64];              /* the first ones */
};

static void seen_take(struct seen *s, const struct dp_perf_data_record *rec, const struct perf_event_header *h,
                      uint64_t offset) {
        *s = (struct seen) {
                .offset = offset, .attr_index = rec->attr_index, .type = h->type, .size = h->size,
                .sample_id_present = rec->sample_id.present,
                .sample_id_cpu = (rec->sample_id.present & PERF_SAMPLE_CPU) ? rec->sample_id.cpu : 0,
        };
        memcpy(s->bytes, h, DP_MIN((size_t) h->size, sizeof(s->bytes)));
        if (h->type == PERF_RECORD_SAMPLE)
                ck_assert_int_eq(dp_perf_parse_sample(rec->layout, h, h->size, &s->sample), 0);
}

static bool seen_equal(const struct seen *a, const struct seen *b) {
        const struct dp_perf_sample *x = &a->sample, *y = &b->sample;

        return a->offset == b->offset && a->attr_index == b->attr_index && a->type == b->type && a->size == b->size &&
               a->sample_id_present == b->sample_id_present && a->sample_id_cpu == b->sample_id_cpu &&
               memcmp(a->bytes, b->bytes, DP_MIN((size_t) a->size, sizeof(a->bytes))) == 0 &&
               x->present == y->present && x->pid == y->pid && x->tid == y->tid && x->time == y->time &&
               x->addr == y->addr && x->cpu == y->cpu && x->ip == y->ip && x->data_src == y->data_src;
}

enum way { WAY_NEXT, WAY_SEQUENTIAL, WAY_RUN };

/* Every record by one of the three ways; the run way expands its runs. */
static size_t walk_way(struct dp_perf_data *d, enum way way, size_t max_run, struct seen **ret, int *end) {
        struct dp_perf_data_record rec;
        struct seen *v = NULL;
        size_t n = 0, cap = 0, k = 1;
        int r;

        for (;;) {
                r = way == WAY_NEXT ? dp_perf_data_next(d, &rec)
                    : way == WAY_SEQUENTIAL ? dp_perf_data_next_sequential(d, &rec)
                                            : dp_perf_data_next_run(d, &rec, max_run, &k);
                if (r <= 0)
                        break;
                ck_assert_uint_ge(k, 1);
                ck_assert_uint_le(k, max_run);
                if (way != WAY_NEXT && rec.header->type == PERF_RECORD_SAMPLE && rec.layout->sample_size)
                        ck_assert_uint_eq(rec.sample.present, 0);       /* left unparsed */
                for (size_t i = 0; i < k; i++) {
                        const struct perf_event_header *h = (const void *) ((const uint8_t *) rec.header +
                                                                             i * rec.header->size);

                        if (n == cap) {
                                cap = cap ? 2 * cap : 4096;
                                v = realloc(v, cap * sizeof(*v));
                                ck_assert_ptr_nonnull(v);
                        }
                        seen_take(&v[n++], &rec, h, rec.file_offset + i * rec.header->size);
                }
        }
        *end = r;
        *ret = v;
        return n;
}

static void check_ways(struct dp_perf_data *d) {
        _cleanup_free_ struct seen *a = NULL, *b = NULL, *c = NULL, *e = NULL;
        size_t na, nb, nc, ne, runs_of_many = 0;
        int ra, rb, rc, re;

        dp_perf_data_rewind(d);
        na = walk_way(d, WAY_NEXT, 1, &a, &ra);
        dp_perf_data_rewind(d);
        nb = walk_way(d, WAY_SEQUENTIAL, 1, &b, &rb);
        dp_perf_data_rewind(d);
        nc = walk_way(d, WAY_RUN, 1000, &c, &rc);
        dp_perf_data_rewind(d);
        ne = walk_way(d, WAY_RUN, 3, &e, &re);
        ck_assert_int_eq(ra, 0);
        ck_assert_int_eq(rb, 0);
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(re, 0);
        ck_assert_uint_gt(na, 1000);
        ck_assert_uint_eq(nb, na);
        ck_assert_uint_eq(nc, na);
        ck_assert_uint_eq(ne, na);
        for (size_t i = 0; i < na; i++) {
                CHECK(seen_equal(&a[i], &b[i]), "record %zu at %#" PRIx64 ": sequential differs", i, a[i].offset);
                CHECK(seen_equal(&a[i], &c[i]), "record %zu at %#" PRIx64 ": run differs", i, a[i].offset);
                CHECK(seen_equal(&a[i], &e[i]), "record %zu at %#" PRIx64 ": short run differs", i, a[i].offset);
                runs_of_many += i > 0 && a[i].type == PERF_RECORD_SAMPLE && a[i - 1].type == PERF_RECORD_SAMPLE;
        }
        ck_assert_uint_gt(runs_of_many, 100);
}

/* The one-pass ways give every record as dp_perf_data_next() does, from the
 * file (through the file window) and from memory; they
 * mix with it, and a rewind starts them over. */
START_TEST(test_sequential_ways) {
        _cleanup_free_ char *path = testdata_path(DATA_FILE);
        _cleanup_perf_data_ struct dp_perf_data *from_file = NULL, *from_memory = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        struct dp_perf_data_record rec, seq;
        size_t size, k;

        ck_assert_int_eq(dp_perf_data_open(path, &from_file), 0);
        check_ways(from_file);
        buf = read_whole(path, &size);
        ck_assert_int_eq(dp_perf_data_open_memory(buf, size, &from_memory), 0);
        check_ways(from_memory);

        /* Mixed: each call takes the record after the last one taken. */
        dp_perf_data_rewind(from_file);
        for (int i = 0; i < 5000; i++) {
                uint64_t at;

                ck_assert_int_eq(dp_perf_data_next(from_file, &rec), 1);
                at = rec.file_offset + rec.header->size + rec.payload_size;
                ck_assert_int_eq(i % 2 ? dp_perf_data_next_sequential(from_file, &seq)
                                       : dp_perf_data_next_run(from_file, &seq, 1, &k), 1);
                ck_assert_uint_eq(seq.file_offset, at);
        }
        ck_assert_int_eq(dp_perf_data_next_run(from_file, &seq, 0, &k), -EINVAL);
}
END_TEST

START_TEST(test_truncated_copies) {
        _cleanup_free_ char *path = testdata_path(DATA_FILE);
        _cleanup_perf_data_ struct dp_perf_data *d = NULL;
        _cleanup_free_ uint8_t *buf = NULL, *copy = NULL;
        uint64_t data_offset, data_size;
        struct walk full;
        size_t size, cuts = 0;

        buf = read_whole(path, &size);
        ck_assert_int_eq(dp_perf_data_open_memory(buf, size, &d), 0);
        walk_all(d, &full);
        ck_assert_int_eq(full.end, 0);

        /* Plain truncation: the header's sections no longer fit. */
        for (size_t len = 0; len < size; len += len < 4096 ? 1 : 4093)
                check_prefix_outcome(buf, len, &full);
        for (size_t len = size - 64; len < size; len++)
                check_prefix_outcome(buf, len, &full);

        /* A capture cut inside the data section, its header saying so (as
         * when perf is stopped hard): a prefix of the records, then either a
         * clean end at a record boundary or -EBADMSG. */
        data_offset = get_u64(buf + 40);
        data_size = get_u64(buf + 48);
        copy = malloc(size);
        ck_assert_ptr_nonnull(copy);
        for (uint64_t cut = 0; cut <= data_size; cut += cut < 2048 ? 1 : 4099 + cut % 8, cuts++) {
                _cleanup_perf_data_ struct dp_perf_data *t = NULL;
                struct walk w;
                bool at_boundary;
                size_t whole;

                memcpy(copy, buf, data_offset + cut);
                set_u64(copy + 48, cut);
                memset(copy + 72, 0, 32); /* the feature sections are gone too */
                ck_assert_int_eq(dp_perf_data_open_memory(copy, data_offset + cut, &t), 0);
                walk_all(t, &w);

                whole = records_before(&full, data_offset, data_size, cut, &at_boundary);
                CHECK(w.n_records == whole, "cut %" PRIu64 ": %zu records, want %zu", cut, w.n_records, whole);
                CHECK(w.end == (at_boundary ? 0 : -EBADMSG), "cut %" PRIu64 ": end %d", cut, w.end);
                CHECK(same_rows(w.samples, full.samples, w.n_samples),
                      "cut %" PRIu64 ": not a prefix", cut);
                walk_free(&w);
        }
        ck_assert_uint_gt(cuts, 2000);
        walk_free(&full);
}
END_TEST

static int open_patched(const uint8_t *buf, size_t size, size_t at, const void *bytes, size_t n,
                        struct dp_perf_data **ret) {
        _cleanup_free_ uint8_t *copy = malloc(size);

        ck_assert_ptr_nonnull(copy);
        memcpy(copy, buf, size);
        memcpy(copy + at, bytes, n);
        return dp_perf_data_open_memory(copy, size, ret);
}

/* The first error of a walk over a patched copy. */
static int walk_patched(const uint8_t *buf, size_t size, size_t at, const void *bytes, size_t n) {
        _cleanup_perf_data_ struct dp_perf_data *d = NULL;
        struct dp_perf_data_record rec;
        int r;

        r = open_patched(buf, size, at, bytes, n, &d);
        ck_assert_int_eq(r, 0);
        while ((r = dp_perf_data_next(d, &rec)) > 0)
                ;
        /* Errors stick. */
        ck_assert_int_eq(dp_perf_data_next(d, &rec), r);
        return r;
}

START_TEST(test_malformed) {
        _cleanup_free_ char *path = testdata_path(DATA_FILE);
        _cleanup_free_ uint8_t *buf = NULL;
        struct dp_perf_data *d = NULL;
        uint64_t data_offset, first_sample = 0, v;
        size_t size;

        buf = read_whole(path, &size);
        data_offset = get_u64(buf + 40);

        ck_assert_int_eq(open_patched(buf, size, 0, "PERFILE3", 8, &d), -EBADMSG);
        ck_assert_int_eq(open_patched(buf, size, 0, "2ELIFREP", 8, &d), -EPROTONOSUPPORT);
        ck_assert_int_eq(open_patched(buf, size, 0, "PERFFILE", 8, &d), -EPROTONOSUPPORT);
        v = 16; /* pipe mode */
        ck_assert_int_eq(open_patched(buf, size, 8, &v, 8, &d), -EPROTONOSUPPORT);
        v = 100;
        ck_assert_int_eq(open_patched(buf, size, 8, &v, 8, &d), -EBADMSG);
        v = 136; /* attr_size disagreeing with attr.size */
        ck_assert_int_eq(open_patched(buf, size, 16, &v, 8, &d), -EBADMSG);
        v = size; /* attrs section beyond the end */
        ck_assert_int_eq(open_patched(buf, size, 24, &v, 8, &d), -EBADMSG);
        v = UINT64_MAX;
        ck_assert_int_eq(open_patched(buf, size, 32, &v, 8, &d), -EBADMSG);
        ck_assert_int_eq(open_patched(buf, size, 48, &v, 8, &d), -EBADMSG);
        v = data_offset + 4;
        ck_assert_int_eq(open_patched(buf, size, 40, &v, 8, &d), -EBADMSG);
        v = UINT64_C(1) << 40; /* sample_type bits nobody knows */
        ck_assert_int_eq(open_patched(buf, size, get_u64(buf + 24) + 24, &v, 8, &d), -EPROTO);
        ck_assert_ptr_null(d);
        ck_assert_int_eq(dp_perf_data_open_memory(buf, 0, &d), -EBADMSG);
        ck_assert_int_eq(dp_perf_data_open_memory(NULL, 10, &d), -EINVAL);
        ck_assert_int_eq(dp_perf_data_open("/nonexistent/perf.data", &d), -ENOENT);
        ck_assert_int_eq(dp_perf_data_open("/", &d), -EISDIR);

        /* Find the first sample and break it in different ways. */
        for (uint64_t off = data_offset; off < data_offset + get_u64(buf + 48);) {
                struct perf_event_header h;

                memcpy(&h, buf + off, sizeof(h));
                if (h.type == PERF_RECORD_SAMPLE) {
                        first_sample = off;
                        break;
                }
                off += h.size;
        }
        ck_assert_uint_gt(first_sample, 0);
        {
                /* IP TID TIME ADDR ID: the ID is the fifth word of the body. */
                uint64_t unknown_id = 0xdeadbeef;
                uint16_t bad_size;
                uint32_t type;

                ck_assert_int_eq(walk_patched(buf, size, first_sample + 8 + 32, &unknown_id, 8), -EPROTO);
                bad_size = 0;
                ck_assert_int_eq(walk_patched(buf, size, first_sample + 6, &bad_size, 2), -EBADMSG);
                bad_size = 60;
                ck_assert_int_eq(walk_patched(buf, size, first_sample + 6, &bad_size, 2), -EBADMSG);
                bad_size = 72; /* one word too many for the sample's fields */
                ck_assert_int_eq(walk_patched(buf, size, first_sample + 6, &bad_size, 2), -EBADMSG);
                type = 81; /* PERF_RECORD_COMPRESSED */
                ck_assert_int_eq(walk_patched(buf, size, first_sample, &type, 4), -EOPNOTSUPP);
                type = 70; /* some perf-internal record: passed through */
                ck_assert_int_eq(walk_patched(buf, size, first_sample, &type, 4), 0);
        }
}
END_TEST

/* A file of one attr with @sample_type and the data section @data (@n bytes),
 * in a temporary file so that one-pass reads go through the file window; its
 * path goes to @path (PATH_MAX). */
static void write_one_attr_file(uint64_t sample_type, const void *data, size_t n, char *path) {
        struct perf_event_attr attr = { .size = 128, .sample_type = sample_type, .sample_id_all = 1 };
        size_t ids = 104, attrs = ids + 8, data_at = attrs + 128 + 16;
        _cleanup_free_ uint8_t *buf = calloc(1, data_at + n);
        int fd;

        ck_assert_ptr_nonnull(buf);
        memcpy(buf, "PERFILE2", 8);
        set_u64(buf + 8, 104);                  /* header size: no features set */
        set_u64(buf + 16, 128 + 16);            /* attr_size */
        set_u64(buf + 24, attrs);
        set_u64(buf + 32, 128 + 16);
        set_u64(buf + 40, data_at);
        set_u64(buf + 48, n);
        set_u64(buf + ids, 1);                  /* the attr's one ID */
        memcpy(buf + attrs, &attr, DP_MIN(sizeof(attr), (size_t) 128));
        set_u64(buf + attrs + 128, ids);
        set_u64(buf + attrs + 136, 8);
        memcpy(buf + data_at, data, n);

        strcpy(path, "/tmp/test-perf-data.XXXXXX");
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, buf, data_at + n), (ssize_t) (data_at + n));
        close(fd);
}

/* The capture in testdata fits in one of the file window's chunks; this one
 * (6 MiB) takes several, with runs of samples and records of other sizes
 * across their boundaries. */
START_TEST(test_sequential_ways_across_chunks) {
        const uint64_t type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                              PERF_SAMPLE_CPU;
        const size_t cap = (size_t) 6 << 20;
        _cleanup_perf_data_ struct dp_perf_data *d = NULL;
        _cleanup_free_ uint8_t *data = malloc(cap);
        char path[PATH_MAX];
        size_t n = 0;

        ck_assert_ptr_nonnull(data);
        for (uint64_t i = 0; n + 128 <= cap; i++) {
                uint8_t *r = data + n;
                uint32_t cpu = (uint32_t) (i / 1000 % 4);

                if (i % 777 == 0) {
                        /* A COMM of 1-40 name bytes: header, pid/tid, name, then TID, TIME and CPU. */
                        size_t name = 8 * (1 + i / 777 % 5), size = 8 + 8 + name + 24;

                        memset(r, 0, size);
                        *(struct perf_event_header *) r = (struct perf_event_header) {
                                .type = PERF_RECORD_COMM, .size = (uint16_t) size };
                        memset(r + 16, 'a', name - 1);
                        set_u64(r + 16 + name + 8, i);
                        set_u64(r + 16 + name + 16, cpu);
                        n += size;
                        continue;
                }
                *(struct perf_event_header *) r = (struct perf_event_header) {
                        .type = PERF_RECORD_SAMPLE, .size = 48 };
                set_u64(r + 8, 0x401000 + i);                           /* IP */
                set_u64(r + 16, (uint64_t) (100 + i % 3) << 32 | 100);  /* TID, PID */
                set_u64(r + 24, i);                                     /* TIME */
                set_u64(r + 32, 0x7f0000000000 + 64 * i);               /* ADDR */
                set_u64(r + 40, cpu);                                   /* CPU, reserved */
                n += 48;
        }
        write_one_attr_file(type, data, n, path);
        ck_assert_int_eq(dp_perf_data_open(path, &d), 0);
        unlink(path);
        check_ways(d);
}
END_TEST

/* Found by fuzz-perf-data: with a layout of variable size (sample_size 0), a
 * sample record of size 0 already in the one-pass reader's window (a second
 * pass, as a replay planning its targets first makes) passed its fast path,
 * which then handed it out forever without moving on: a replay hung. */
START_TEST(test_zero_size_sample) {
        const uint64_t variable = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
        struct perf_event_header records[4] = { { .type = PERF_RECORD_SAMPLE, .size = 0 } };
        _cleanup_perf_data_ struct dp_perf_data *d = NULL;
        char path[PATH_MAX];

        write_one_attr_file(variable, records, sizeof(records), path);
        ck_assert_int_eq(dp_perf_data_open(path, &d), 0);
        unlink(path);
        /* Every way, after every other: each pass ends at once with the error. */
        for (int pass = 0; pass < 9; pass++) {
                struct dp_perf_data_record rec;
                size_t n = 0;
                int r, calls = 0, way = pass % 3;

                dp_perf_data_rewind(d);
                do
                        r = way == 0 ? dp_perf_data_next(d, &rec) :
                            way == 1 ? dp_perf_data_next_sequential(d, &rec) :
                                       dp_perf_data_next_run(d, &rec, 16, &n);
                while (r > 0 && ++calls < 10);
                ck_assert_msg(r == -EBADMSG, "pass %d: %d after %d records", pass, r, calls);
                ck_assert_int_eq(calls, 0);
        }
}
END_TEST

/* Random damage anywhere in the first part of the file: any answer but a
 * crash (run under ASan/UBSan). */
START_TEST(test_random_damage) {
        _cleanup_free_ char *path = testdata_path(DATA_FILE);
        _cleanup_free_ uint8_t *buf = NULL, *copy = NULL;
        uint64_t rng = 42;
        size_t size, opened = 0, len;

        buf = read_whole(path, &size);
        len = DP_MIN(size, (size_t) 64 * 1024);
        copy = malloc(size);
        ck_assert_ptr_nonnull(copy);
        for (unsigned i = 0; i < 400; i++) {
                _cleanup_perf_data_ struct dp_perf_data *d = NULL;
                struct dp_perf_data_record rec;
                unsigned records = 0;
                int r;

                memcpy(copy, buf, size);
                for (unsigned k = 0; k < 1 + i % 8; k++) {
                        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                        copy[(rng >> 33) % len] ^= (uint8_t) (1u << ((rng >> 29) & 7));
                }
                if (dp_perf_data_open_memory(copy, size, &d) < 0)
                        continue;
                opened++;
                /* The damage is near the start; a few thousand records cover it. */
                while (records++ < 3000 && (r = dp_perf_data_next(d, &rec)) > 0)
                        CHECK(rec.header->size >= 8 && rec.file_offset + rec.header->size <= size,
                              "bad record");
        }
        ck_assert_uint_gt(opened, 100);
}
END_TEST

static Suite *perf_data_suite(void) {
        Suite *s = suite_create("perf-data");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 300);
        tcase_add_test(tc, test_matches_perf_script);
        tcase_add_test(tc, test_memory_equals_file);
        tcase_add_test(tc, test_sequential_ways);
        tcase_add_test(tc, test_sequential_ways_across_chunks);
        tcase_add_test(tc, test_truncated_copies);
        tcase_add_test(tc, test_malformed);
        tcase_add_test(tc, test_random_damage);
        tcase_add_test(tc, test_zero_size_sample);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(perf_data_suite());
}
