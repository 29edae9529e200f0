/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for what the daemon parses out of sysfs and procfs: CPU lists
 * (lib/basic/cpu-list.c), PMU format fields and event strings (lib/perf/pmu-format.c),
 * whole PMU directories and the source choice they lead to
 * (lib/perf/pmu-detect.c, lib/source-*.c), /proc/PID/maps and /proc/iomem
 * (lib/basic/proc-parse.c), the DAMON state file (lib/damon/damon-state.c), DAMON sysfs
 * numbers and the DAMON tree read back (lib/damon/damon-sysfs.c, damon-discover.c,
 * damon-commit.c).  Byte 0 picks the parser; the rest is its text, or (for
 * the trees) NUL-separated file contents.  Files live in a private directory
 * under $DP_FUZZ_TMPDIR (else /dev/shm, else /tmp), made once per process.
 *
 * Invariants: every parser returns 0 or its documented errors; what parses
 * prints back in the canonical form and parses to the same (CPU lists, format
 * fields, maps, iomem, state files); a format field places and reads back
 * every value that fits and refuses every one that does not, touching no
 * other bit; an event string sets exactly its terms; a DAMON number is read
 * exactly when it is a decimal the kernel could print; the DAMON tree
 * read-back terminates, and every region it returns is non-empty; a PMU set
 * keeps each PMU's first error or its parsed fields, and every source choice
 * explains itself.
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu-list.h"
#include "damon-control.h"
#include "damon-sysfs.h"
#include "macro.h"
#include "pmu.h"
#include "proc-parse.h"
#include "source.h"

#include "fuzz.h"
#include "source-choose.h"


enum selector {
        SEL_CPU_LIST,
        SEL_PMU_FIELDS,
        SEL_MAPS,
        SEL_IOMEM,
        SEL_DAMON_STATE,
        SEL_DAMON_NUMBER,
        SEL_DAMON_TREE,
        SEL_PMU_TREE,
        SEL_OPERATIONS,
        _SEL_MAX,
};

static char root[PATH_MAX];

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static void remove_root(void) {
        if (root[0])
                nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The private directory, made on first use and removed at exit. */
static const char *tree_root(void) {
        const char *bases[] = { getenv("DP_FUZZ_TMPDIR"), "/dev/shm", getenv("TMPDIR"), "/tmp" };

        if (root[0])
                return root;
        for (size_t i = 0; i < DP_ARRAY_SIZE(bases); i++) {
                if (!bases[i] || access(bases[i], W_OK) < 0)
                        continue;
                snprintf(root, sizeof(root), "%s/fuzz-sysfs.XXXXXX", bases[i]);
                if (mkdtemp(root)) {
                        atexit(remove_root);
                        return root;
                }
        }
        fprintf(stderr, "fuzz-sysfs: no writable temporary directory\n");
        abort();
}

/* What each file of the tree holds, so that a run rewrites only the files
 * whose contents changed (most inputs differ from the last in a byte or two). */
struct cached_file {
        char rel[96];
        size_t size;
        uint8_t data[4096];
};

static struct cached_file *cached(const char *rel) {
        static struct cached_file files[64];

        for (size_t i = 0; i < DP_ARRAY_SIZE(files); i++) {
                if (strcmp(files[i].rel, rel) == 0)
                        return &files[i];
                if (!files[i].rel[0] && strlen(rel) < sizeof(files[i].rel)) {
                        strcpy(files[i].rel, rel);
                        files[i].size = SIZE_MAX;
                        return &files[i];
                }
        }
        return NULL;
}

/* The library wrote @rel: its contents are no longer what was put. */
static void forget(const char *rel) {
        struct cached_file *c = cached(rel);

        if (c)
                c->size = SIZE_MAX;
}

/* Writes @size bytes to @rel under the tree, making directories on the way. */
static void put(const char *rel, const void *data, size_t size) {
        struct cached_file *c = cached(rel);
        char path[PATH_MAX];
        int fd;

        if (c && c->size == size && (size == 0 || memcmp(c->data, data, size) == 0))
                return;
        CHECK((size_t) snprintf(path, sizeof(path), "%s/%s", tree_root(), rel) < sizeof(path));
        for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                (void) mkdir(path, 0755);
                *p = '/';
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        CHECK(fd >= 0);
        CHECK(size == 0 || write(fd, data, size) == (ssize_t) size);
        close(fd);
        if (c) {
                c->size = size <= sizeof(c->data) ? size : SIZE_MAX;
                if (c->size != SIZE_MAX)
                        memcpy(c->data, data, size);
        }
}

static void put_string(const char *rel, const char *text) {
        put(rel, text, strlen(text));
}

/* The next NUL-separated piece of the input as a C string (static storage,
 * one of a few rotating buffers), "" at the end. */
static const char *piece(struct fuzz_input *in) {
        static char bufs[4][4096];
        static unsigned next;
        char *b = bufs[next++ % DP_ARRAY_SIZE(bufs)];
        const uint8_t *nul = memchr(in->p, '\0', in->left);
        size_t n = nul ? (size_t) (nul - in->p) : in->left;

        memcpy(b, in->p, DP_MIN(n, sizeof(bufs[0]) - 1));
        b[DP_MIN(n, sizeof(bufs[0]) - 1)] = '\0';
        in->p += n + !!nul;
        in->left -= n + !!nul;
        return b;
}

/* ---- CPU lists ---- */

static void fuzz_cpu_list(const char *text) {
        static struct dp_cpu_list list, again;
        char printed[DP_CPU_MAX * 12];
        size_t len = 0;
        int r = dp_cpu_list_parse(text, &list);

        CHECK(r == 0 || r == -EINVAL || r == -ERANGE);
        if (r < 0)
                return;
        CHECK(list.n >= 1 && list.n <= DP_CPU_MAX);
        for (size_t i = 0; i < list.n; i++) {
                CHECK(list.cpu[i] >= 0 && list.cpu[i] < DP_CPU_MAX);
                CHECK(i == 0 || list.cpu[i] > list.cpu[i - 1]);
                CHECK(dp_cpu_list_contains(&list, list.cpu[i]));
        }
        /* Printed as ranges, the way the kernel prints it, it reads back the same. */
        for (size_t i = 0; i < list.n;) {
                size_t j = i;

                while (j + 1 < list.n && list.cpu[j + 1] == list.cpu[j] + 1)
                        j++;
                len += (size_t) snprintf(printed + len, sizeof(printed) - len, "%s%d", i ? "," : "", list.cpu[i]);
                if (j > i)
                        len += (size_t) snprintf(printed + len, sizeof(printed) - len, "-%d", list.cpu[j]);
                i = j + 1;
        }
        snprintf(printed + len, sizeof(printed) - len, "\n");
        CHECK(dp_cpu_list_parse(printed, &again) == 0);
        CHECK(again.n == list.n && memcmp(again.cpu, list.cpu, list.n * sizeof(list.cpu[0])) == 0);
}

/* ---- PMU format fields and event strings ---- */

static const char *const word_names[] = { "config", "config1", "config2", "config3" };

static uint64_t *word_of(struct perf_event_attr *a, enum dp_pmu_config_word w) {
        return w == DP_PMU_CONFIG ? (uint64_t *) &a->config :
               w == DP_PMU_CONFIG1 ? (uint64_t *) &a->config1 :
               w == DP_PMU_CONFIG2 ? (uint64_t *) &a->config2 : NULL;
}

static void check_field(const struct dp_pmu_field *f, uint64_t value) {
        char printed[256];
        size_t len;
        struct dp_pmu_field again;
        struct perf_event_attr attr, before;
        unsigned width = dp_pmu_field_width(f);
        uint64_t got, fitting = width == 64 ? value : value & ((UINT64_C(1) << width) - 1);
        int r;

        CHECK(f->mask != 0 && width >= 1 && width <= 64);
        CHECK(f->word < _DP_PMU_CONFIG_WORD_MAX);

        /* Printed as ascending ranges, it parses to the same field. */
        len = (size_t) snprintf(printed, sizeof(printed), "%s:", word_names[f->word]);
        for (unsigned bit = 0; bit < 64;) {
                unsigned hi = bit;

                if (!(f->mask >> bit & 1)) {
                        bit++;
                        continue;
                }
                while (hi + 1 < 64 && (f->mask >> (hi + 1) & 1))
                        hi++;
                len += (size_t) snprintf(printed + len, sizeof(printed) - len, "%s%u", printed[len - 1] == ':' ? "" : ",",
                                         bit);
                if (hi > bit)
                        len += (size_t) snprintf(printed + len, sizeof(printed) - len, "-%u", hi);
                bit = hi + 1;
        }
        snprintf(printed + len, sizeof(printed) - len, "\n");
        CHECK(dp_pmu_field_parse(f->name, printed, &again) == 0);
        CHECK(again.word == f->word && again.mask == f->mask && strcmp(again.name, f->name) == 0);

        /* A value that fits goes into the field's bits and nowhere else. */
        memset(&attr, 0xa5, sizeof(attr));
        before = attr;
        r = dp_pmu_field_set(f, fitting, &attr);
        if (f->word == DP_PMU_CONFIG3) {
                CHECK(r == -EOPNOTSUPP);
                CHECK(memcmp(&attr, &before, sizeof(attr)) == 0);
                return;
        }
        CHECK(r == 0);
        CHECK(dp_pmu_field_get(f, &attr, &got) == 0 && got == fitting);
        CHECK((*word_of(&attr, f->word) & ~f->mask) == (*word_of(&before, f->word) & ~f->mask));
        CHECK((uint64_t) __builtin_popcountll(*word_of(&attr, f->word) & f->mask) ==
              (uint64_t) __builtin_popcountll(fitting));
        *word_of(&attr, f->word) = *word_of(&before, f->word);
        CHECK(memcmp(&attr, &before, sizeof(attr)) == 0);
        /* One that does not fit is refused, untouched. */
        if (width < 64 && value >> width) {
                CHECK(dp_pmu_field_set(f, value, &attr) == -ERANGE);
                CHECK(memcmp(&attr, &before, sizeof(attr)) == 0);
        }
}

/* Up to four fields "a".."d" from their format texts, then an event string
 * applied through them. */
static void fuzz_pmu_fields(struct fuzz_input *in) {
        static const char *const names[] = { "a", "b", "event", "umask" };
        struct dp_pmu pmu = { .name = "fuzz", .type = 77 };
        struct perf_event_attr attr = {};
        const char *event;
        bool overlap = false;
        int r;

        for (size_t i = 0; i < DP_ARRAY_SIZE(names); i++) {
                const char *text = piece(in);
                struct dp_pmu_field f;

                memset(&f, 0x5a, sizeof(f));
                r = dp_pmu_field_parse(names[i], text, &f);
                CHECK(r == 0 || r == -EBADMSG);
                if (r < 0)
                        continue;
                check_field(&f, fuzz_u64(&(struct fuzz_input) { (const uint8_t *) text, strlen(text) }));
                for (size_t j = 0; j < pmu.n_fields; j++)
                        overlap |= pmu.fields[j].word == f.word && (pmu.fields[j].mask & f.mask);
                pmu.fields[pmu.n_fields++] = f;
        }
        CHECK(dp_pmu_field_parse(NULL, "config:0", &(struct dp_pmu_field) {}) == -EINVAL);

        event = piece(in);
        r = dp_pmu_apply_event(&pmu, event, &attr);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOENT || r == -ERANGE || r == -EOPNOTSUPP);
        if (r < 0 || overlap)
                return;
        CHECK(attr.type == 77);
        /* Each term's value is in its field (a later term of one field wins). */
        for (size_t i = 0; i < pmu.n_fields; i++) {
                const struct dp_pmu_field *f = &pmu.fields[i];
                const char *p = event, *hit = NULL;
                size_t n = strlen(f->name);
                uint64_t want = 0, got;

                for (; *p; p++)
                        if ((p == event || p[-1] == ',') && strncmp(p, f->name, n) == 0 &&
                            (p[n] == '=' || p[n] == ',' || p[n] == '\0' || p[n] == ' ' || p[n] == '\n' ||
                             p[n] == '\t' || p[n] == '\r' || p[n] == '\f' || p[n] == '\v'))
                                hit = p;
                if (!hit || f->word == DP_PMU_CONFIG3)
                        continue;
                want = hit[n] == '=' ? strtoull(hit + n + 1, NULL, 0) : 1;
                CHECK(dp_pmu_field_get(f, &attr, &got) == 0);
                CHECK(got == want);
        }
}

/* ---- procfs ---- */

static size_t count_lines(const char *text, size_t len) {
        size_t lines = 0;

        for (size_t i = 0; i < len; i++)
                lines += text[i] == '\n';
        return lines;
}

static void fuzz_maps(const char *text, size_t len) {
        _cleanup_free_ struct dp_range *ranges = NULL, *again = NULL;
        size_t n = 0, n_again = 0, bad = 99, lines = count_lines(text, len);
        char *printed = NULL;
        size_t printed_size = 0;
        FILE *f;
        int r;

        r = dp_parse_maps(text, len, &ranges, &n, &bad);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r == -EBADMSG)
                CHECK(bad >= 1 && bad <= lines + 1);
        if (r < 0)
                return;
        CHECK(bad == 0 && n <= lines + 1 && (n == 0) == (ranges == NULL));
        f = open_memstream(&printed, &printed_size);
        CHECK(f);
        for (size_t i = 0; i < n; i++) {
                CHECK(ranges[i].start < ranges[i].end);
                fprintf(f, "%" PRIx64 "-%" PRIx64 " rw-p 00000000 00:00 0 [heap]\n", ranges[i].start, ranges[i].end);
        }
        fclose(f);
        CHECK(dp_parse_maps(printed, printed_size, &again, &n_again, NULL) == 0);
        CHECK(n_again == n && (n == 0 || memcmp(again, ranges, n * sizeof(*ranges)) == 0));
        free(printed);
}

static void fuzz_iomem(const char *text, size_t len) {
        _cleanup_free_ struct dp_range *ranges = NULL, *again = NULL;
        size_t n = 0, n_again = 0, bad = 99, lines = count_lines(text, len);
        bool all_zero = true;
        char *printed = NULL;
        size_t printed_size = 0;
        FILE *f;
        int r;

        r = dp_parse_iomem(text, len, &ranges, &n, &bad);
        CHECK(r == 0 || r == -EBADMSG || r == -ERANGE || r == -EPERM || r == -ENOENT || r == -ENOMEM);
        if (r == -EBADMSG || r == -ERANGE)
                CHECK(bad >= 1 && bad <= lines + 1);
        if (r < 0)
                return;
        CHECK(n >= 1 && ranges);
        f = open_memstream(&printed, &printed_size);
        CHECK(f);
        for (size_t i = 0; i < n; i++) {
                CHECK(ranges[i].start < ranges[i].end);
                fprintf(f, "%08" PRIx64 "-%08" PRIx64 " : System RAM\n  %08" PRIx64 "-%08" PRIx64 " : Kernel code\n",
                        ranges[i].start, ranges[i].end - 1, ranges[i].start, ranges[i].start);
        }
        fclose(f);
        r = dp_parse_iomem(printed, printed_size, &again, &n_again, NULL);
        /* All-zero addresses are what an unprivileged read shows. */
        for (size_t i = 0; i < n; i++)
                all_zero &= ranges[i].start == 0 && ranges[i].end == 1;
        if (all_zero)
                CHECK(r == -EPERM);
        else {
                CHECK(r == 0);
                CHECK(n_again == n && memcmp(again, ranges, n * sizeof(*ranges)) == 0);
        }
        free(printed);
}

/* ---- DAMON ---- */

static bool same_state(const struct dp_damon_state *a, const struct dp_damon_state *b) {
        if (a->role != b->role || a->daemon_pid != b->daemon_pid || a->kdamond != b->kdamond ||
            a->context != b->context || a->kdamond_pid != b->kdamond_pid || a->nr_originals != b->nr_originals)
                return false;
        for (size_t i = 0; i < a->nr_originals; i++)
                if (strcmp(a->originals[i].path, b->originals[i].path) != 0 ||
                    strcmp(a->originals[i].value, b->originals[i].value) != 0)
                        return false;
        return true;
}

static void fuzz_damon_state(const uint8_t *data, size_t size) {
        char path[PATH_MAX], saved[PATH_MAX];
        struct dp_damon_state s, sentinel, again = {};
        int r;

        put("state", data, size);
        snprintf(path, sizeof(path), "%s/state", tree_root());
        snprintf(saved, sizeof(saved), "%s/state.saved", tree_root());
        memset(&s, 0x5a, sizeof(s));
        sentinel = s;
        r = dp_damon_state_load(path, &s);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOMEM);
        if (r < 0) {
                CHECK(memcmp(&s, &sentinel, sizeof(s)) == 0);
                return;
        }
        CHECK(s.role == DP_DAMON_ROLE_OWNED || s.role == DP_DAMON_ROLE_ATTACHED);
        CHECK(s.role == DP_DAMON_ROLE_ATTACHED || s.nr_originals == 0);
        CHECK(s.daemon_pid >= 1 && s.kdamond <= 65535 && s.context <= 65535 && s.kdamond_pid >= -1);
        for (size_t i = 0; i < s.nr_originals; i++)
                CHECK(dp_damon_state_find_original(&s, s.originals[i].path) != NULL);
        /* What loads saves, and loads back the same. */
        CHECK(dp_damon_state_save(&s, saved) == 0);
        CHECK(dp_damon_state_load(saved, &again) == 0);
        CHECK(same_state(&s, &again));
        dp_damon_state_done(&s);
        dp_damon_state_done(&again);
}

/* A decimal number as the kernel prints it: digits, one optional newline. */
static bool reference_number(const uint8_t *data, size_t size, bool sign, int64_t *ret_signed, uint64_t *ret) {
        size_t n = size, i = 0;
        bool negative = false;
        uint64_t v = 0;

        if (n > 0 && data[n - 1] == '\n')
                n--;
        /* dp_damon_fs_read() reads into 32 bytes, its NUL included. */
        if (size >= 32)
                return false;
        if (sign && n > 0 && data[0] == '-') {
                negative = true;
                i++;
        }
        if (i == n)
                return false;
        for (; i < n; i++) {
                if (data[i] < '0' || data[i] > '9')
                        return false;
                if (v > (UINT64_MAX - (uint64_t) (data[i] - '0')) / 10)
                        return false;
                v = v * 10 + (uint64_t) (data[i] - '0');
        }
        if (sign) {
                if (negative ? v > (uint64_t) INT32_MAX + 1 : v > INT32_MAX)
                        return false;
                *ret_signed = negative ? -(int64_t) v : (int64_t) v;
        }
        *ret = v;
        return true;
}

static struct dp_damon_fs *open_damon(void) {
        struct dp_damon_fs *fs = NULL;
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/admin", tree_root());
        (void) mkdir(path, 0755);
        CHECK(dp_damon_fs_open(path, &fs) == 0);
        return fs;
}

static void fuzz_damon_number(const uint8_t *data, size_t size) {
        struct dp_damon_fs *fs;
        uint64_t u = 77, want_u = 0;
        int64_t want_i = 0;
        int i = 77, r;

        put("admin/kdamonds/nr_kdamonds", data, size);
        fs = open_damon();
        r = dp_damon_fs_read_u64(fs, "kdamonds/nr_kdamonds", &u);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOBUFS);
        CHECK((r == 0) == reference_number(data, size, false, NULL, &want_u));
        CHECK(r == 0 ? u == want_u : u == 77);
        r = dp_damon_fs_read_int(fs, "kdamonds/nr_kdamonds", &i);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOBUFS);
        CHECK((r == 0) == reference_number(data, size, true, &want_i, &want_u));
        CHECK(r == 0 ? i == want_i : i == 77);
        dp_damon_fs_free(fs);
}

/* The files of a small DAMON tree, in the order the input fills them. */
static const char *const damon_files[] = {
        "kdamonds/nr_kdamonds",
        "kdamonds/0/state",
        "kdamonds/0/pid",
        "kdamonds/0/contexts/nr_contexts",
        "kdamonds/0/contexts/0/avail_operations",
        "kdamonds/0/contexts/0/operations",
        "kdamonds/0/contexts/0/addr_unit",
        "kdamonds/0/contexts/0/targets/nr_targets",
        "kdamonds/0/contexts/0/schemes/nr_schemes",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/0/start",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/0/end",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/0/nr_accesses",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/0/age",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/1/start",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/1/end",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/1/nr_accesses",
        "kdamonds/0/contexts/0/schemes/0/tried_regions/1/age",
        "kdamonds/0/contexts/0/schemes/1/tried_regions/0/start",
        "kdamonds/0/contexts/0/schemes/1/tried_regions/0/end",
        "kdamonds/0/contexts/0/schemes/1/tried_regions/0/nr_accesses",
        "kdamonds/0/contexts/0/schemes/1/tried_regions/0/age",
        "kdamonds/1/state",
        "kdamonds/1/pid",
        "kdamonds/1/contexts/nr_contexts",
};

static void fuzz_damon_tree(struct fuzz_input *in) {
        struct dp_damon_tried_region *regions = NULL;
        struct dp_damon_tree tree;
        struct dp_damon_fs *fs;
        size_t n = 0;
        bool on;
        int r;

        for (size_t i = 0; i < DP_ARRAY_SIZE(damon_files); i++) {
                char rel[PATH_MAX];

                snprintf(rel, sizeof(rel), "admin/%s", damon_files[i]);
                put_string(rel, piece(in));
        }
        fs = open_damon();

        r = dp_damon_discover(fs, &tree);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOENT || r == -ENOBUFS);
        if (r == 0) {
                CHECK(tree.nr_listed == DP_MIN(tree.nr_kdamonds, (unsigned) DP_DAMON_MAX_KDAMONDS));
                /* Only kdamonds 0 and 1 exist: a tree read whole lists no more. */
                CHECK(tree.nr_listed <= 2);
                for (unsigned k = 0; k < tree.nr_listed; k++)
                        CHECK(tree.kdamonds[k].index == k);
        }
        r = dp_damon_kdamond_running(fs, 0, &on);
        CHECK(r == 0 || r == -EBADMSG || r == -ENOBUFS);

        /* The read-back commands "update_schemes_tried_regions" first. */
        dp_damon_fs_grant_kdamond(fs, 0);
        r = dp_damon_read_tried(fs, 0, 0, &regions, &n);
        forget("admin/kdamonds/0/state");
        CHECK(r == 0 || r == -EBADMSG || r == -ENOENT || r == -ENOBUFS);
        if (r == 0) {
                CHECK(n <= 3 && (n == 0) == (regions == NULL));
                for (size_t i = 0; i < n; i++) {
                        CHECK(regions[i].start < regions[i].end);
                        CHECK(regions[i].scheme <= 1);
                        CHECK(i == 0 || regions[i].scheme >= regions[i - 1].scheme);
                }
        } else
                CHECK(regions == NULL && n == 0);
        free(regions);
        CHECK(dp_damon_fs_refused(fs) == 0);
        dp_damon_fs_free(fs);
}

static void fuzz_operations(struct fuzz_input *in) {
        const char *avail = piece(in), *ops = piece(in);
        bool want = false;

        /* A whole word of @avail, separated by blanks. */
        for (const char *p = avail; *ops && (p = strstr(p, ops)); p++) {
                size_t n = strlen(ops);

                if ((p == avail || strchr(" \t\n", p[-1])) && (p[n] == '\0' || strchr(" \t\n", p[n])) &&
                    !strpbrk(ops, " \t\n")) {
                        want = true;
                        break;
                }
        }
        CHECK(dp_damon_operations_available(avail, ops) == want);
}

/* ---- PMU directories ---- */

static const char *const pmu_files[] = {
        "ibs_op/type",
        "ibs_op/format/rand_en",
        "ibs_op/format/cnt_ctl",
        "ibs_op/format/l3missonly",
        "ibs_op/format/ldlat",
        "ibs_op/caps/zen4_ibs_extensions",
        "ibs_op/caps/ldlat",
        "cpu_core/type",
        "cpu_core/cpus",
        "cpu_core/format/event",
        "cpu_core/format/umask",
        "cpu_core/format/ldlat",
        "cpu_core/events/mem-loads",
        "cpu_core/events/mem-loads-aux",
        "cpu_core/events/mem-stores",
        "cpu_core/caps/max_precise",
        "arm_spe_0/type",
        "arm_spe_0/cpumask",
        "arm_spe_0/format/load_filter",
        "arm_spe_0/format/min_latency",
        "arm_spe_0/caps/min_interval",
};

static void fuzz_pmu_tree(struct fuzz_input *in) {
        static const char *const settings[] = { "auto", "ibs", "pebs", "spe", "pagefault", "event:foo", "bogus" };
        static const struct dp_source *const sources[] = { &dp_source_ibs, &dp_source_pebs, &dp_source_spe };
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;
        char path[PATH_MAX];
        int r;

        for (size_t i = 0; i < DP_ARRAY_SIZE(pmu_files); i++) {
                char rel[PATH_MAX];

                snprintf(rel, sizeof(rel), "devices/%s", pmu_files[i]);
                put_string(rel, piece(in));
        }
        put_string("devices/software/type", "1\n");
        snprintf(path, sizeof(path), "%s/devices", tree_root());

        r = dp_pmu_detect(path, &set);
        CHECK(r == 0);
        CHECK(set->n == 3);
        for (size_t i = 0; i < set->n; i++) {
                const struct dp_pmu *pmu = &set->pmus[i];

                CHECK(i == 0 || strcmp(set->pmus[i - 1].name, pmu->name) < 0);
                CHECK(dp_pmu_set_find(set, pmu->name) == pmu);
                CHECK((pmu->error == 0) == (pmu->error_text[0] == '\0'));
                CHECK(pmu->n_fields <= DP_PMU_FIELDS_MAX && pmu->n_caps <= DP_PMU_CAPS_MAX);
                for (size_t j = 0; j < pmu->n_fields; j++) {
                        CHECK(dp_pmu_field(pmu, pmu->fields[j].name) != NULL);
                        check_field(&pmu->fields[j], j * 0x0123456789abcdefull);
                }
                for (size_t j = 0; j < pmu->n_caps; j++)
                        CHECK(dp_pmu_cap(pmu, pmu->caps[j].name) == pmu->caps[j].value);
                if (pmu->kind == DP_PMU_CORE && !pmu->error && pmu->mem_loads[0]) {
                        struct perf_event_attr attr = {};

                        r = dp_pmu_apply_event(pmu, pmu->mem_loads, &attr);
                        CHECK(r == 0 || r == -EBADMSG || r == -ENOENT || r == -ERANGE || r == -EOPNOTSUPP);
                }
        }
        CHECK(strstr(set->others, "software") != NULL);

        for (size_t i = 0; i < DP_ARRAY_SIZE(settings); i++) {
                struct dp_source_choice choice;

                memset(&choice, 0, sizeof(choice));
                r = dp_source_choose(set, settings[i], &choice);
                CHECK(r == 0 || r == -ENODEV || r == -EINVAL);
                CHECK(choice.reason[0] != '\0');
                CHECK(r < 0 || choice.source != NULL);
                if (i == 0)
                        CHECK(r == 0);
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(sources); i++)
                for (int cpu = 0; cpu < 2; cpu++) {
                        struct dp_source_options options = {
                                .pmus = set,
                                .pfm_pmu = "",
                                .sample_period = fuzz_u32(in),
                                .min_latency = fuzz_u16(in),
                                .want_phys = true,
                        };
                        struct dp_event_plan plan;

                        r = dp_source_build_events(sources[i], &options, cpu, &plan);
                        CHECK(r <= 0);
                        if (r < 0)
                                CHECK(plan.note[0] != '\0');
                        else
                                CHECK(plan.n >= 1 && plan.n <= DP_EVENT_PLAN_MAX && plan.ring < plan.n);
                }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct fuzz_input in = { data, size };
        enum selector sel = (enum selector) (fuzz_u8(&in) % _SEL_MAX);
        char *text;

        switch (sel) {
        case SEL_CPU_LIST:
                text = strndup((const char *) in.p, in.left);
                CHECK(text);
                fuzz_cpu_list(text);
                free(text);
                break;
        case SEL_PMU_FIELDS:
                fuzz_pmu_fields(&in);
                break;
        case SEL_MAPS:
                fuzz_maps((const char *) in.p, in.left);
                break;
        case SEL_IOMEM:
                fuzz_iomem((const char *) in.p, in.left);
                break;
        case SEL_DAMON_STATE:
                fuzz_damon_state(in.p, in.left);
                break;
        case SEL_DAMON_NUMBER:
                fuzz_damon_number(in.p, in.left);
                break;
        case SEL_DAMON_TREE:
                fuzz_damon_tree(&in);
                break;
        case SEL_PMU_TREE:
                fuzz_pmu_tree(&in);
                break;
        case SEL_OPERATIONS:
                fuzz_operations(&in);
                break;
        case _SEL_MAX:
                break;
        }
        return 0;
}
