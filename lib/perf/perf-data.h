/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reader for perf.data files as written by `perf record` (magic "PERFILE2",
 * little-endian, seekable "file" mode; not pipe mode).  The whole file is held
 * in memory; records are handed out in file order, each SAMPLE decoded against
 * the layout of the attr its sample ID belongs to.  Note that `perf script`
 * shows samples sorted by time, which need not be file order.
 *
 * Errors: -EBADMSG for structural damage (truncation, sizes or offsets out of
 * bounds, misaligned records), -EPROTO for inconsistent contents (a sample ID
 * no attr owns, attrs whose ID positions differ, sample_type bits we cannot
 * parse), -EPROTONOSUPPORT for pipe-mode, byte-swapped or version-1 files,
 * -EOPNOTSUPP for compressed (perf record -z) data.
 */

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#include "perf-record.h"

/* Record types perf itself writes into files (tools/lib/perf/include/perf/event.h). */
#define DP_PERF_RECORD_USER_TYPE_START 64
#define DP_PERF_RECORD_FINISHED_ROUND 68

struct dp_perf_data;

/* Reads @path into memory and checks header, attrs, ID and feature sections. */
int dp_perf_data_open(const char *path, struct dp_perf_data **ret);

/* Same from a buffer (copied, so it may be freed or be unaligned afterwards). */
int dp_perf_data_open_memory(const void *buf, size_t size, struct dp_perf_data **ret);

/* Returns NULL; accepts NULL. */
struct dp_perf_data *dp_perf_data_free(struct dp_perf_data *data);

static inline void dp_perf_data_freep(struct dp_perf_data **data) {
        dp_perf_data_free(*data);
}
#define _cleanup_perf_data_ __attribute__((cleanup(dp_perf_data_freep)))

/* The event attrs of the file, in file order; zero-extended to our struct, so
 * ->size is at most sizeof(struct perf_event_attr).  NULL past the end. */
size_t dp_perf_data_attr_count(const struct dp_perf_data *data);
const struct perf_event_attr *dp_perf_data_attr(const struct dp_perf_data *data, size_t index);

struct dp_perf_data_record {
        const struct perf_event_header *header; /* 8-byte aligned, header->size bytes */
        uint64_t file_offset;
        /* The attr the record belongs to, or -1 (and NULL pointers) for records
         * not tied to one: perf's own types (>= 64), and kernel records in a
         * multi-attr file without sample_id_all. */
        int attr_index;
        const struct perf_event_attr *attr;
        const struct dp_perf_layout *layout;
        struct dp_perf_sample sample;           /* PERF_RECORD_SAMPLE only (else present = 0) */
        struct dp_perf_sample_id sample_id;     /* other kernel records' trailer (else present = 0) */
        /* Data perf stores right after some records, outside header->size
         * (PERF_RECORD_AUXTRACE, HEADER_TRACING_DATA); NULL/0 otherwise. */
        const void *payload;
        uint64_t payload_size;
};

/* Next record of the data section into @ret (valid until dp_perf_data_free()).
 * Returns 1 for a record, 0 at the end, or a negative errno, which every later
 * call repeats until dp_perf_data_rewind(). */
int dp_perf_data_next(struct dp_perf_data *data, struct dp_perf_data_record *ret);

/* The same for one pass over the records, faster, with two differences:
 * - records of a file are read(2) through a small buffer rather than touched
 *   in the mapping, so ->header (and ->sample's pointers) are valid only until
 *   the next call; ->payload stays valid until dp_perf_data_free();
 * - samples of a fixed-size layout (->layout->sample_size != 0) are only
 *   checked to have that size (-EBADMSG if not) and left unparsed
 *   (->sample.present = 0), for the caller to read at the layout's offsets;
 *   samples of other layouts are parsed.
 * Either call may follow the other. */
int dp_perf_data_next_sequential(struct dp_perf_data *data, struct dp_perf_data_record *ret);

/* dp_perf_data_next_sequential() in runs: when the record is an unparsed
 * sample (of a fixed-size layout), so are the samples right after it that
 * share its attr (its ID) and its CPU, up to @max in all: they are taken
 * along, *@ret_n says how many (the i-th at ->header + i * sample_size bytes),
 * and ->file_offset is the first's.  Other records come alone: *@ret_n = 1
 * (0 at the end or on error).  -EINVAL for @max 0. */
int dp_perf_data_next_run(struct dp_perf_data *data, struct dp_perf_data_record *ret, size_t max, size_t *ret_n);

/* Start over at the first record. */
void dp_perf_data_rewind(struct dp_perf_data *data);

/* The bytes of the header feature section @feature (a HEADER_* bit of
 * tools/perf/util/header.h, e.g. DP_PERF_HEADER_CPUID), valid until
 * dp_perf_data_free(); they need not be aligned.  -ENOENT when the file
 * has no such section.  perf-data-header.h parses them. */
int dp_perf_data_feature(const struct dp_perf_data *data, unsigned feature, const uint8_t **ret, size_t *ret_size);
