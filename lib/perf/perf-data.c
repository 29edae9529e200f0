/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * perf.data reader (tools/perf/Documentation/perf.data-file-format.txt).  The
 * file is copied into one 8-byte aligned buffer and validated up front: every
 * section must lie inside it, so record iteration only has to bound records by
 * the data section.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "perf-data.h"
#include "file-window.h"

/* struct perf_file_header: magic, size, attr_size, attrs, data, event_types,
 * then a 256-bit feature bitmap.  Offsets rather than a struct keep the parser
 * free of alignment and padding assumptions. */
#define FILE_HEADER_SIZE 104
#define FILE_HEADER_SIZE_NO_FEATURES 72 /* older perf: no feature bitmap */
#define PIPE_HEADER_SIZE 16
#define OFF_SIZE 8
#define OFF_ATTR_SIZE 16
#define OFF_ATTRS 24
#define OFF_DATA 40
#define OFF_FEATURES 72
#define FEATURE_WORDS 4
#define SECTION_SIZE 16 /* struct perf_file_section { u64 offset, size; } */

#define RECORD_HEADER_TRACING_DATA 66
#define RECORD_AUXTRACE 71
#define RECORD_COMPRESSED 81
#define RECORD_COMPRESSED2 83

struct id_owner {
        uint64_t id;
        size_t attr;
};

/* perf numbers the IDs of a session's events consecutively, one per event and
 * CPU: their low bits index a small cache that spares most lookups. */
#define ID_CACHE_SIZE 64

struct dp_perf_data {
        uint8_t *image;
        bool mapped;          /* image is a read-only mapping of the file, else malloc'ed */
        size_t image_size;

        size_t n_attrs;
        struct perf_event_attr *attrs;
        struct dp_perf_layout *layouts;

        struct id_owner *ids; /* sorted by id */
        size_t n_ids;
        int sample_id_pos;    /* byte offset of the ID in a sample body; -1 with one attr */
        int trailer_id_pos;   /* bytes from the end of a record to its trailer ID; -1 when none */

        struct id_owner id_cache[ID_CACHE_SIZE]; /* IDs looked up, by their low bits; id 0: empty */

        uint64_t data_begin, data_end;
        uint64_t cursor;
        int error;            /* sticky iteration error */

        /* dp_perf_data_next_sequential() of a file: records read(2) a chunk at
         * a time, of which file bytes [window_begin, window_end) are at hand. */
        int fd;               /* the file, or -1 for a memory image */
        struct dp_file_window *file_window;
        const uint8_t *window;
        uint64_t window_begin, window_end;
};

/* A {offset, size} section descriptor, checked to lie inside the image. */
static int load_section(const struct dp_perf_data *d, size_t at, uint64_t *offset, uint64_t *size) {
        uint64_t o, s;

        if (at > d->image_size || d->image_size - at < SECTION_SIZE)
                return -EBADMSG;
        o = dp_load_u64(d->image + at);
        s = dp_load_u64(d->image + at + 8);
        if (o > d->image_size || s > d->image_size - o)
                return -EBADMSG;
        *offset = o;
        *size = s;
        return 0;
}

struct dp_perf_data *dp_perf_data_free(struct dp_perf_data *d) {
        if (!d)
                return NULL;
        if (d->mapped)
                munmap(d->image, d->image_size ?: 1);
        else
                free(d->image);
        dp_file_window_free(d->file_window);
        if (d->fd >= 0)
                close(d->fd);
        free(d->attrs);
        free(d->layouts);
        free(d->ids);
        free(d);
        return NULL;
}

size_t dp_perf_data_attr_count(const struct dp_perf_data *d) {
        return d ? d->n_attrs : 0;
}

const struct perf_event_attr *dp_perf_data_attr(const struct dp_perf_data *d, size_t index) {
        if (!d || index >= d->n_attrs)
                return NULL;
        return &d->attrs[index];
}

static int check_magic(const struct dp_perf_data *d) {
        uint64_t header_size;

        if (d->image_size < PIPE_HEADER_SIZE)
                return -EBADMSG;
        if (memcmp(d->image, "2ELIFREP", 8) == 0 || memcmp(d->image, "PERFFILE", 8) == 0)
                return -EPROTONOSUPPORT; /* other endianness, or format version 1 */
        if (memcmp(d->image, "PERFILE2", 8) != 0)
                return -EBADMSG;

        header_size = dp_load_u64(d->image + OFF_SIZE);
        if (header_size == PIPE_HEADER_SIZE)
                return -EPROTONOSUPPORT;
        if (header_size != FILE_HEADER_SIZE && header_size != FILE_HEADER_SIZE_NO_FEATURES)
                return -EBADMSG;
        if (d->image_size < header_size)
                return -EBADMSG;
        return 0;
}

static int compare_id_owner(const void *a, const void *b) {
        const struct id_owner *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

/* Each entry is a perf_event_attr of attr.size bytes followed by the
 * section of the IDs the kernel gave that event. */
static int load_attrs(struct dp_perf_data *d) {
        uint64_t attr_size, attrs_offset, attrs_size, n_ids = 0;
        size_t i, k = 0;
        int r;

        attr_size = dp_load_u64(d->image + OFF_ATTR_SIZE);
        r = load_section(d, OFF_ATTRS, &attrs_offset, &attrs_size);
        if (r < 0)
                return r;
        if (attr_size < PERF_ATTR_SIZE_VER0 + SECTION_SIZE || attr_size > UINT32_MAX)
                return -EBADMSG;
        if (attrs_size == 0 || attrs_size % attr_size != 0)
                return -EBADMSG;

        d->n_attrs = attrs_size / attr_size;
        d->attrs = calloc(d->n_attrs, sizeof(*d->attrs));
        d->layouts = calloc(d->n_attrs, sizeof(*d->layouts));
        if (!d->attrs || !d->layouts)
                return -ENOMEM;

        for (i = 0; i < d->n_attrs; i++) {
                const uint8_t *entry = d->image + attrs_offset + i * attr_size;
                uint64_t ids_offset, ids_size;
                uint32_t size = dp_load_u32(entry + offsetof(struct perf_event_attr, size));

                if (size == 0)
                        size = PERF_ATTR_SIZE_VER0;
                /* perf reads attr.size bytes and then the IDs section; both ways
                 * of stepping through the array must agree. */
                if ((uint64_t) size + SECTION_SIZE != attr_size)
                        return -EBADMSG;

                memcpy(&d->attrs[i], entry, DP_MIN((size_t) size, sizeof(d->attrs[i])));
                d->attrs[i].size = DP_MIN((uint32_t) size, (uint32_t) sizeof(d->attrs[i]));
                r = dp_perf_layout_init(&d->layouts[i], &d->attrs[i]);
                if (r < 0)
                        return -EPROTO;

                r = load_section(d, (size_t) (entry - d->image) + size, &ids_offset, &ids_size);
                if (r < 0)
                        return r;
                if (ids_size % 8 != 0)
                        return -EBADMSG;
                n_ids += ids_size / 8;
                /* Real ID sections do not overlap; crafted ones must not make us
                 * allocate more than the file holds. */
                if (n_ids > d->image_size / 8)
                        return -EBADMSG;
        }

        d->ids = calloc(n_ids ? n_ids : 1, sizeof(*d->ids));
        if (!d->ids)
                return -ENOMEM;
        for (i = 0; i < d->n_attrs; i++) {
                const uint8_t *entry = d->image + attrs_offset + i * attr_size;
                uint64_t ids_offset, ids_size;

                r = load_section(d, (size_t) (entry - d->image) + attr_size - SECTION_SIZE,
                                 &ids_offset, &ids_size);
                if (r < 0)
                        return r;
                for (uint64_t j = 0; j < ids_size / 8; j++)
                        d->ids[k++] = (struct id_owner) { dp_load_u64(d->image + ids_offset + 8 * j), i };
        }
        d->n_ids = k;
        qsort(d->ids, d->n_ids, sizeof(*d->ids), compare_id_owner);
        for (i = 1; i < d->n_ids; i++)
                if (d->ids[i].id == d->ids[i - 1].id && d->ids[i].attr != d->ids[i - 1].attr)
                        return -EPROTO; /* one ID, two events: samples are ambiguous */
        return 0;
}

/* Where the ID sits counted from the end of a sample_id trailer, or -1. */
static int trailer_id_pos(uint64_t type) {
        if (type & PERF_SAMPLE_IDENTIFIER)
                return 8;
        if (type & PERF_SAMPLE_ID)
                return 8 * (1 + !!(type & PERF_SAMPLE_STREAM_ID) + !!(type & PERF_SAMPLE_CPU));
        return -1;
}

/* With several attrs a record names its event only through its ID, so every
 * attr must put it in the same place (perf enforces the same). */
static int setup_attribution(struct dp_perf_data *d) {
        d->sample_id_pos = -1;
        d->trailer_id_pos = -1;
        if (d->n_attrs == 1) {
                d->trailer_id_pos = trailer_id_pos(d->layouts[0].sample_type);
                return 0;
        }

        for (size_t i = 0; i < d->n_attrs; i++) {
                const struct dp_perf_layout *l = &d->layouts[i];
                int sample_pos = l->off_identifier >= 0 ? l->off_identifier : l->off_id;
                int trailer_pos = trailer_id_pos(l->sample_type);

                if (sample_pos < 0)
                        return -EPROTO;
                if (i == 0) {
                        d->sample_id_pos = sample_pos;
                        d->trailer_id_pos = trailer_pos;
                } else if (sample_pos != d->sample_id_pos || trailer_pos != d->trailer_id_pos ||
                           l->sample_id_all != d->layouts[0].sample_id_all)
                        return -EPROTO;
        }
        return 0;
}

/* The feature sections follow the data section; checking them catches files
 * cut short after the data. */
static int check_features(const struct dp_perf_data *d) {
        uint64_t table, n = 0;

        if (dp_load_u64(d->image + OFF_SIZE) < FILE_HEADER_SIZE)
                return 0;
        for (size_t w = 0; w < FEATURE_WORDS; w++)
                n += (uint64_t) __builtin_popcountll(dp_load_u64(d->image + OFF_FEATURES + 8 * w));

        table = d->data_end;
        for (uint64_t i = 0; i < n; i++) {
                uint64_t offset, size;
                int r;

                r = load_section(d, (size_t) (table + i * SECTION_SIZE), &offset, &size);
                if (r < 0)
                        return r;
        }
        return 0;
}

int dp_perf_data_feature(const struct dp_perf_data *d, unsigned feature, const uint8_t **ret, size_t *ret_size) {
        uint64_t offset, size, index = 0;
        int r;

        if (!d || !ret || !ret_size)
                return -EINVAL;
        if (feature >= 64 * FEATURE_WORDS || dp_load_u64(d->image + OFF_SIZE) < FILE_HEADER_SIZE)
                return -ENOENT;
        if (!(dp_load_u64(d->image + OFF_FEATURES + 8 * (feature / 64)) >> (feature % 64) & 1))
                return -ENOENT;
        /* The section descriptors follow the data section, in bit order. */
        for (unsigned w = 0; w <= feature / 64; w++) {
                uint64_t bits = dp_load_u64(d->image + OFF_FEATURES + 8 * w);

                if (w == feature / 64)
                        bits &= (UINT64_C(1) << (feature % 64)) - 1;
                index += (uint64_t) __builtin_popcountll(bits);
        }
        r = load_section(d, (size_t) (d->data_end + index * SECTION_SIZE), &offset, &size);
        if (r < 0)
                return r;
        *ret = d->image + offset;
        *ret_size = (size_t) size;
        return 0;
}

/* Takes ownership of @image (a mapping when @mapped, else malloc'ed). */
static int perf_data_parse(uint8_t *image, size_t size, bool mapped, struct dp_perf_data **ret) {
        struct dp_perf_data *d;
        uint64_t data_offset, data_size;
        int r;

        d = calloc(1, sizeof(*d));
        if (!d) {
                if (mapped)
                        munmap(image, size ?: 1);
                else
                        free(image);
                return -ENOMEM;
        }
        d->image = image;
        d->image_size = size;
        d->mapped = mapped;
        d->fd = -1;

        r = check_magic(d);
        if (r < 0)
                goto fail;
        r = load_section(d, OFF_DATA, &data_offset, &data_size);
        if (r < 0)
                goto fail;
        /* Records are 8-byte multiples; the section start keeps them aligned. */
        if (data_offset % 8 != 0) {
                r = -EBADMSG;
                goto fail;
        }
        d->data_begin = d->cursor = data_offset;
        d->data_end = data_offset + data_size;

        r = load_attrs(d);
        if (r < 0)
                goto fail;
        r = setup_attribution(d);
        if (r < 0)
                goto fail;
        r = check_features(d);
        if (r < 0)
                goto fail;

        *ret = d;
        return 0;
fail:
        dp_perf_data_free(d);
        return r;
}

int dp_perf_data_open_memory(const void *buf, size_t size, struct dp_perf_data **ret) {
        uint8_t *image;

        if (!buf || !ret)
                return -EINVAL;
        /* malloc gives 8-byte alignment, which record parsing relies on. */
        image = malloc(size ? size : 1);
        if (!image)
                return -ENOMEM;
        memcpy(image, buf, size);
        return perf_data_parse(image, size, false, ret);
}

int dp_perf_data_open(const char *path, struct dp_perf_data **ret) {
        _cleanup_close_ int fd = -1;
        struct dp_perf_data *d;
        uint8_t *image;
        struct stat st;
        int r;

        if (!path || !ret)
                return -EINVAL;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return dp_negative_errno();
        if (fstat(fd, &st) < 0)
                return dp_negative_errno();
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if ((uint64_t) st.st_size > SIZE_MAX)
                return -EFBIG;

        if (st.st_size == 0)
                return dp_perf_data_open_memory("", 0, ret);
        /* Mapped, not read: captures run to gigabytes, and a copy costs more than
         * all the decoding.  Page alignment gives the records their 8 bytes.
         * Not populated: one-pass readers stream the data section instead. */
        image = mmap(NULL, (size_t) st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (image == MAP_FAILED)
                return dp_negative_errno();
        (void) madvise(image, (size_t) st.st_size, MADV_SEQUENTIAL);
        r = perf_data_parse(image, (size_t) st.st_size, true, &d);
        if (r < 0)
                return r;
        d->fd = DP_TAKE_FD(fd);
        *ret = d;
        return 0;
}

void dp_perf_data_rewind(struct dp_perf_data *d) {
        if (!d)
                return;
        d->cursor = d->data_begin;
        d->error = 0;
}

static int find_attr(struct dp_perf_data *d, uint64_t id, size_t *attr) {
        const struct id_owner key = { .id = id }, *hit;
        struct id_owner *cached;

        /* perf synthesizes records with ID 0; they belong to the first event. */
        if (d->n_attrs == 1 || id == 0) {
                *attr = 0;
                return 0;
        }
        cached = &d->id_cache[id % ID_CACHE_SIZE];
        if (cached->id == id) {
                *attr = cached->attr;
                return 0;
        }
        hit = bsearch(&key, d->ids, d->n_ids, sizeof(*d->ids), compare_id_owner);
        if (!hit)
                return -EPROTO;
        *attr = hit->attr;
        *cached = *hit;
        return 0;
}

static void bind_attr(const struct dp_perf_data *d, size_t attr, struct dp_perf_data_record *rec) {
        rec->attr_index = (int) attr;
        rec->attr = &d->attrs[attr];
        rec->layout = &d->layouts[attr];
}

static inline __attribute__((always_inline)) int decode_sample(struct dp_perf_data *d, struct dp_perf_data_record *rec,
                                                               bool parse) {
        size_t size = rec->header->size, attr = 0;
        int r;

        if (d->n_attrs > 1) {
                if (size < sizeof(struct perf_event_header) + (size_t) d->sample_id_pos + 8)
                        return -EBADMSG;
                r = find_attr(d, dp_load_u64((const uint8_t *) rec->header + sizeof(struct perf_event_header) +
                                          d->sample_id_pos), &attr);
                if (r < 0)
                        return r;
        }
        bind_attr(d, attr, rec);
        /* Fixed-size samples need no walk to be checked. */
        if (!parse && rec->layout->sample_size)
                return size == rec->layout->sample_size ? 0 : -EBADMSG;
        return dp_perf_parse_sample(rec->layout, rec->header, size, &rec->sample);
}

static int decode_kernel_record(struct dp_perf_data *d, struct dp_perf_data_record *rec) {
        size_t size = rec->header->size, attr = 0;
        int r;

        if (!d->layouts[0].sample_id_all) {
                /* No trailer names the event; with one attr there is no doubt. */
                if (d->n_attrs == 1)
                        bind_attr(d, 0, rec);
                return 0;
        }
        if (d->n_attrs > 1) {
                if (size < sizeof(struct perf_event_header) + (size_t) d->trailer_id_pos)
                        return -EBADMSG;
                r = find_attr(d, dp_load_u64((const uint8_t *) rec->header + size - d->trailer_id_pos), &attr);
                if (r < 0)
                        return r;
        }
        bind_attr(d, attr, rec);
        return dp_perf_parse_sample_id(rec->layout, rec->header, size, &rec->sample_id);
}

/* Bytes perf stored after the record, outside header.size.  They are handed
 * out from the image even when the record comes from the window: they may be
 * larger than it. */
static int find_payload(const struct dp_perf_data *d, struct dp_perf_data_record *rec, uint64_t left) {
        const uint8_t *p = (const uint8_t *) rec->header;
        uint64_t size;

        switch (rec->header->type) {
        case RECORD_AUXTRACE:
                if (rec->header->size < 16)
                        return -EBADMSG;
                size = dp_load_u64(p + 8);
                break;
        case RECORD_HEADER_TRACING_DATA:
                if (rec->header->size < 12)
                        return -EBADMSG;
                size = ((uint64_t) dp_load_u32(p + 8) + 7) & ~UINT64_C(7);
                break;
        default:
                return 0;
        }
        if (size % 8 != 0 || size > left - rec->header->size)
                return -EBADMSG;
        rec->payload = size ? d->image + d->cursor + rec->header->size : NULL;
        rec->payload_size = size;
        return 0;
}

/* The @need bytes at the cursor (at most what the data section has left),
 * from the window, which slides on through the file.  Reading beats
 * touching the mapping for one pass: on virtual machines the first access to
 * each page of a fresh mapping can cost more than all the decoding of what is
 * on it. */
static int window_fill(struct dp_perf_data *d, uint64_t need, const uint8_t **ret) {
        size_t avail;
        int r;

        /* A rewind starts over. */
        if (d->file_window && d->cursor < d->window_begin) {
                dp_file_window_free(d->file_window);
                d->file_window = NULL;
        }
        if (!d->file_window) {
                r = dp_file_window_new(d->fd, d->cursor, d->data_end, &d->file_window);
                if (r < 0)
                        return r;
        }
        r = dp_file_window_at(d->file_window, d->cursor, (size_t) need, ret, &avail);
        if (r < 0)
                return r;
        d->window = *ret;
        d->window_begin = d->cursor;
        d->window_end = d->cursor + avail;
        return 0;
}

static inline int window_at(struct dp_perf_data *d, uint64_t need, const uint8_t **ret) {
        if (dp_likely(d->cursor >= d->window_begin && d->cursor + need <= d->window_end)) {
                *ret = d->window + (d->cursor - d->window_begin);
                return 0;
        }
        return window_fill(d, need, ret);
}

/* The record at the cursor, whole: in the image, or in the window. */
static inline int record_at(struct dp_perf_data *d, uint64_t left, bool sequential,
                            const struct perf_event_header **ret) {
        const struct perf_event_header *h;
        const uint8_t *p;
        int r;

        if (!sequential || d->fd < 0) {
                *ret = (const struct perf_event_header *) (d->image + d->cursor);
                return 0;
        }
        r = window_at(d, sizeof(*h), &p);
        if (r < 0)
                return r;
        h = (const struct perf_event_header *) p;
        if (h->size > sizeof(*h) && h->size <= left) {
                r = window_at(d, h->size, &p);
                if (r < 0)
                        return r;
        }
        *ret = (const struct perf_event_header *) p;
        return 0;
}

static inline __attribute__((always_inline)) int next_record(struct dp_perf_data *d, struct dp_perf_data_record *rec,
                                                             bool sequential) {
        const struct perf_event_header *h;
        uint64_t left = d->data_end - d->cursor;
        int r;

        if (left == 0)
                return 0;
        if (left < sizeof(*h))
                return -EBADMSG;

        r = record_at(d, left, sequential, &h);
        if (r < 0)
                return r;
        if (h->size < sizeof(*h) || h->size % 8 != 0 || h->size > left)
                return -EBADMSG;

        /* Field by field: zeroing the whole record (two sample structs) would
         * cost more than parsing it. */
        rec->header = h;
        rec->file_offset = d->cursor;
        rec->attr_index = -1;
        rec->attr = NULL;
        rec->layout = NULL;
        rec->sample.present = 0;
        rec->sample_id.present = 0;
        rec->payload = NULL;
        rec->payload_size = 0;
        r = find_payload(d, rec, left);
        if (r < 0)
                return r;

        if (h->type == PERF_RECORD_SAMPLE)
                r = decode_sample(d, rec, !sequential);
        else if (h->type == RECORD_COMPRESSED || h->type == RECORD_COMPRESSED2)
                r = -EOPNOTSUPP;
        else if (h->type != 0 && h->type < DP_PERF_RECORD_USER_TYPE_START)
                r = decode_kernel_record(d, rec);
        if (r < 0)
                return r;

        d->cursor += h->size + rec->payload_size;
        return 1;
}

static inline __attribute__((always_inline)) int next(struct dp_perf_data *d, struct dp_perf_data_record *ret,
                                                      bool sequential) {
        int r;

        if (!d || !ret)
                return -EINVAL;
        if (d->error < 0)
                return d->error;
        r = next_record(d, ret, sequential);
        if (r < 0)
                d->error = r;
        return r;
}

int dp_perf_data_next(struct dp_perf_data *d, struct dp_perf_data_record *ret) {
        return next(d, ret, false);
}

/* The common record of a one-pass read, taken with the fewest steps: a whole
 * sample of a fixed-size layout in the window.  NULL for anything else. */
static inline const struct perf_event_header *fast_sample(struct dp_perf_data *d, size_t *attr) {
        const struct perf_event_header *h;
        const struct id_owner *cached;
        uint64_t at = d->cursor - d->window_begin, id;

        if (dp_unlikely(d->cursor < d->window_begin || d->cursor + sizeof(*h) > d->window_end || d->error < 0))
                return NULL;
        h = (const struct perf_event_header *) (d->window + at);
        if (h->type != PERF_RECORD_SAMPLE || d->cursor + h->size > d->window_end)
                return NULL;
        *attr = 0;
        if (d->n_attrs > 1) {
                if (h->size < sizeof(*h) + (size_t) d->sample_id_pos + 8)
                        return NULL;
                id = dp_load_u64((const uint8_t *) h + sizeof(*h) + d->sample_id_pos);
                cached = &d->id_cache[id % ID_CACHE_SIZE];
                if (id == 0 || cached->id != id)
                        return NULL;
                *attr = cached->attr;
        }
        /* Only a layout of fixed size says what size is right; a variable one
         * has sample_size 0, which a record of size 0 would match (and never
         * move the cursor on). */
        if (!d->layouts[*attr].sample_size || h->size != d->layouts[*attr].sample_size)
                return NULL;
        return h;
}

/* Out of line, so that the fast path pays for none of its registers. */
static __attribute__((noinline)) int next_sequential_slow(struct dp_perf_data *d, struct dp_perf_data_record *ret) {
        return next(d, ret, true);
}

int dp_perf_data_next_sequential(struct dp_perf_data *d, struct dp_perf_data_record *ret) {
        const struct perf_event_header *h;
        size_t attr;

        if (d && ret && (h = fast_sample(d, &attr))) {
                ret->header = h;
                ret->file_offset = d->cursor;
                bind_attr(d, attr, ret);
                ret->sample.present = 0;
                ret->sample_id.present = 0;
                ret->payload = NULL;
                ret->payload_size = 0;
                d->cursor += h->size;
                return 1;
        }
        return next_sequential_slow(d, ret);
}

int dp_perf_data_next_run(struct dp_perf_data *d, struct dp_perf_data_record *ret, size_t max, size_t *ret_n) {
        const struct dp_perf_layout *l;
        const uint8_t *p, *end;
        size_t n = 1;
        int r;

        if (!ret_n || max == 0)
                return -EINVAL;
        r = dp_perf_data_next_sequential(d, ret);
        *ret_n = r > 0;
        if (r <= 0 || ret->header->type != PERF_RECORD_SAMPLE || !ret->layout->sample_size ||
            d->cursor > d->window_end || d->cursor < d->window_begin)
                return r;

        /* The samples right after it, as long as they are whole in the window
         * and provably of the same attr (the same ID) and CPU. */
        l = ret->layout;
        p = (const uint8_t *) ret->header + l->sample_size;
        end = d->window + (d->window_end - d->window_begin);
        for (; n < max && end - p >= (ptrdiff_t) l->sample_size; n++, p += l->sample_size) {
                const struct perf_event_header *h = (const struct perf_event_header *) p;
                const uint8_t *body = p + sizeof(*h), *first = (const uint8_t *) ret->header + sizeof(*h);

                if (h->type != PERF_RECORD_SAMPLE || h->size != l->sample_size)
                        break;
                if (d->n_attrs > 1 && dp_load_u64(body + d->sample_id_pos) != dp_load_u64(first + d->sample_id_pos))
                        break;
                if (l->off_cpu >= 0 && dp_load_u32(body + l->off_cpu) != dp_load_u32(first + l->off_cpu))
                        break;
        }
        d->cursor += (n - 1) * l->sample_size;
        *ret_n = n;
        return r;
}
