/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the perf.data reader (lib/perf/perf-data.c, the feature
 * sections of lib/perf/perf-data-header.c) and the replays that drive it
 * (lib/replay/replay.c with lib/source/capture-source.c and the AUX data of SPE captures),
 * as damonctl heatmap and the daemon's --replay run them.  The input is the file: it is written to a memfd and
 * opened by its /proc/self/fd path, as a capture on disk is (mapped, and
 * read(2) through the file window for one-pass reads), and from memory.
 *
 * Invariants: both opens agree; every way through the records sees the same
 * records in the same order with the same attrs and the same end (0 or the
 * same error, then sticky): dp_perf_data_next() on the mapping and on the
 * memory image, dp_perf_data_next_sequential(), and dp_perf_data_next_run()
 * whose runs hold whole samples of one attr and CPU; each record lies inside
 * the data section, in order, aligned, with its sample parsed (or, left
 * unparsed, of its layout's size) and its trailer read; a rewind starts over
 * the same; feature sections lie inside the file; and a replay of the
 * capture ends as the walk did, every CPU's counters reconciled.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "counters.h"
#include "macro.h"
#include "perf-data-header.h"
#include "perf-data.h"
#include "replay.h"
#include "tracker.h"

#include "fuzz.h"


#define RECORDS_MAX 65536
#define ID_BITS                                                                         \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |  \
         PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* What every walk must agree on about one record. */
struct seen {
        uint64_t offset;
        uint32_t type;
        uint16_t size;
        int attr_index;
        uint64_t payload_size;
};

struct walk {
        struct seen rec[RECORDS_MAX];
        size_t n;
        int end;                /* 0 at the end of the data, or the error */
        bool truncated;         /* more records than RECORDS_MAX */
};

static struct walk reference, other;

/* The memfd the input is written to, kept across runs. */
static int input_fd(void) {
        static int fd = -1;

        if (fd < 0) {
                fd = memfd_create("fuzz-perf.data", MFD_CLOEXEC);
                CHECK(fd >= 0);
        }
        return fd;
}

static void check_record(struct dp_perf_data *d, const struct dp_perf_data_record *rec, bool parsed) {
        const struct perf_event_header *h = rec->header;
        const uint8_t *body = (const uint8_t *) h + sizeof(*h);
        const struct dp_perf_layout *l = rec->layout;

        CHECK((uintptr_t) h % 8 == 0);
        CHECK(h->size >= sizeof(*h) && h->size % 8 == 0);
        CHECK(rec->file_offset % 8 == 0);
        CHECK(rec->attr_index >= -1 && rec->attr_index < (int) dp_perf_data_attr_count(d));
        if (rec->attr_index < 0)
                CHECK(!rec->attr && !l);
        else
                CHECK(rec->attr == dp_perf_data_attr(d, (size_t) rec->attr_index) && l);
        CHECK((rec->payload == NULL) == (rec->payload_size == 0));
        CHECK(rec->payload_size % 8 == 0);
        if (rec->payload_size) {
                /* ASan checks that the payload is there. */
                volatile uint8_t sum = 0;

                for (uint64_t i = 0; i < rec->payload_size; i += 64)
                        sum += ((const uint8_t *) rec->payload)[i];
                sum += ((const uint8_t *) rec->payload)[rec->payload_size - 1];
                (void) sum;
        }

        if (h->type == PERF_RECORD_SAMPLE) {
                CHECK(l);
                CHECK(rec->sample_id.present == 0);
                if (!parsed && l->sample_size) {
                        /* Left for the caller at the layout's offsets. */
                        CHECK(rec->sample.present == 0);
                        CHECK(h->size == l->sample_size);
                        return;
                }
                CHECK(rec->sample.present == l->sample_type);
                if (l->off_addr >= 0)
                        CHECK(rec->sample.addr == dp_load_u64(body + l->off_addr));
                if (l->off_time >= 0)
                        CHECK(rec->sample.time == dp_load_u64(body + l->off_time));
                if (l->off_cpu >= 0)
                        CHECK(rec->sample.cpu == dp_load_u32(body + l->off_cpu));
                if (l->off_tid >= 0)
                        CHECK(rec->sample.pid == dp_load_u32(body + l->off_tid));
                if (l->sample_size)
                        CHECK(h->size == l->sample_size);
                return;
        }
        CHECK(rec->sample.present == 0);
        if (rec->sample_id.present) {
                CHECK(l && l->sample_id_all);
                CHECK(rec->sample_id.present == (l->sample_type & ID_BITS));
                CHECK(h->size >= sizeof(*h) + l->id_trailer_size);
        }
}

static void note(struct walk *w, const struct dp_perf_data_record *rec) {
        if (w->n == RECORDS_MAX) {
                w->truncated = true;
                return;
        }
        w->rec[w->n++] = (struct seen) {
                .offset = rec->file_offset,
                .type = rec->header->type,
                .size = rec->header->size,
                .attr_index = rec->attr_index,
                .payload_size = rec->payload_size,
        };
}

static void same_walks(const struct walk *a, const struct walk *b) {
        CHECK(a->end == b->end);
        CHECK(a->n == b->n && a->truncated == b->truncated);
        CHECK(memcmp(a->rec, b->rec, a->n * sizeof(a->rec[0])) == 0);
}

enum how { NEXT, SEQUENTIAL };

static void walk(struct dp_perf_data *d, enum how how, struct walk *w) {
        struct dp_perf_data_record rec;
        uint64_t last_end = 0;
        int r;

        w->n = 0;
        w->truncated = false;
        dp_perf_data_rewind(d);
        while ((r = how == NEXT ? dp_perf_data_next(d, &rec) : dp_perf_data_next_sequential(d, &rec)) > 0) {
                CHECK(r == 1);
                CHECK(rec.file_offset >= last_end);
                last_end = rec.file_offset + rec.header->size + rec.payload_size;
                check_record(d, &rec, how == NEXT);
                note(w, &rec);
        }
        w->end = r;
        CHECK(r == 0 || r == -EBADMSG || r == -EPROTO || r == -EOPNOTSUPP || r == -ENOMEM || r == -EIO);
        /* The end, or the error, stays. */
        CHECK((how == NEXT ? dp_perf_data_next(d, &rec) : dp_perf_data_next_sequential(d, &rec)) == r);
}

static void walk_runs(struct dp_perf_data *d, size_t max, struct walk *w) {
        struct dp_perf_data_record rec;
        size_t n;
        int r;

        w->n = 0;
        w->truncated = false;
        dp_perf_data_rewind(d);
        while ((r = dp_perf_data_next_run(d, &rec, max, &n)) > 0) {
                const struct dp_perf_layout *l = rec.layout;
                const uint8_t *first = (const uint8_t *) rec.header;

                CHECK(n >= 1 && n <= max);
                check_record(d, &rec, false);
                note(w, &rec);
                if (n == 1)
                        continue;
                /* A run: unparsed samples of one attr and CPU, back to back. */
                CHECK(rec.header->type == PERF_RECORD_SAMPLE && l->sample_size && rec.sample.present == 0);
                for (size_t i = 1; i < n; i++) {
                        const uint8_t *p = first + i * l->sample_size;
                        const struct perf_event_header *h = (const struct perf_event_header *) p;
                        struct dp_perf_data_record member = rec;

                        CHECK(h->type == PERF_RECORD_SAMPLE && h->size == l->sample_size);
                        if (l->off_cpu >= 0)
                                CHECK(dp_load_u32(p + sizeof(*h) + l->off_cpu) ==
                                      dp_load_u32(first + sizeof(*h) + l->off_cpu));
                        member.header = h;
                        member.file_offset = rec.file_offset + i * l->sample_size;
                        note(w, &member);
                }
        }
        CHECK(n == 0);
        w->end = r;
}

static void check_features(struct dp_perf_data *d) {
        struct dp_perf_cpuid cpuid;
        char name[DP_PERF_PMU_NAME_MAX];
        int r;

        for (unsigned f = 0; f < 256; f++) {
                const uint8_t *p = NULL;
                size_t size = 0;
                volatile uint8_t sum = 0;

                r = dp_perf_data_feature(d, f, &p, &size);
                CHECK(r == 0 || r == -ENOENT || r == -EBADMSG);
                if (r < 0)
                        continue;
                for (size_t i = 0; i < size; i += 64)
                        sum += p[i];
                if (size)
                        sum += p[size - 1];
                (void) sum;
                if (f == DP_PERF_HEADER_CPUID) {
                        char text[256];

                        r = dp_perf_cpuid_string(p, size, text, sizeof(text));
                        CHECK(r == 0 || r == -EBADMSG || r == -ENAMETOOLONG);
                        if (r == 0)
                                CHECK(memchr(text, '\0', sizeof(text)) != NULL);
                }
        }
        r = dp_perf_data_cpuid(d, &cpuid);
        CHECK(r == 0 || r == -ENOENT || r == -EBADMSG || r == -EINVAL || r == -ENAMETOOLONG);
        if (r == 0)
                CHECK(cpuid.kind == DP_CPUID_X86 || cpuid.kind == DP_CPUID_ARM64);
        for (size_t i = 0; i < dp_perf_data_attr_count(d) && i < 8; i++) {
                r = dp_perf_data_pmu_name(d, dp_perf_data_attr(d, i)->type, name, sizeof(name));
                CHECK(r == 0 || r == -ENOENT || r == -EBADMSG || r == -ENAMETOOLONG);
                if (r == 0)
                        CHECK(memchr(name, '\0', sizeof(name)) != NULL);
        }
}

/* The ways the tools replay a capture: damonctl heatmap (the generic decode,
 * targets planned in a first pass), the daemon's --replay (each event's
 * source chosen from the capture, AUX data included), and the physical
 * address space. */
enum replay_way { REPLAY_PLANNED, REPLAY_CAPTURE_SOURCES, REPLAY_PHYS, _REPLAY_MAX };

static void check_replay(struct dp_perf_data *d, int walk_end, enum replay_way way) {
        _cleanup_tracker_ struct dp_tracker *tracker = NULL;
        const struct dp_source *primary = NULL;
        struct dp_tracker_config tc;
        struct dp_replay *rp = NULL;
        int r;

        dp_tracker_config_init(&tc);
        tc.max_targets = 64;
        if (way == REPLAY_PHYS)
                tc.mode = DP_TRACKER_PADDR;
        CHECK(dp_tracker_new(&tc, &tracker) == 0);
        CHECK(dp_replay_new(NULL, tracker, way == REPLAY_PHYS, &rp) == 0);
        if (way == REPLAY_CAPTURE_SOURCES) {
                r = dp_replay_use_capture_sources(rp, d, NULL, NULL, &primary);
                CHECK(r == 0 || r == -ENOENT || r == -ENOMEM);
                CHECK(primary != NULL);
        } else {
                r = dp_replay_plan_targets(rp, d);
                CHECK(r >= 0 || r == walk_end || r == -ENOMEM);
        }
        r = dp_replay_run(rp, d);
        /* The replay stops where the records do, or on its own error. */
        if (r != walk_end && r != -ENOMEM)
                fprintf(stderr, "replay (way %d): %s, the records: %s\n", (int) way, strerror(-r), strerror(-walk_end));
        CHECK(r == walk_end || r == -ENOMEM);
        for (size_t cpu = 0; cpu < dp_replay_nr_cpus(rp); cpu++) {
                struct dp_counter_values c;
                const char *why = NULL;

                dp_replay_counters(rp, cpu, &c);
                CHECK(dp_counters_check(&c, &why) == 0);
                /* Drained to the end: nothing is left in flight. */
                CHECK(c.v[DP_C_DEQUEUE] == c.v[DP_C_ENQUEUE]);
        }
        dp_replay_free(rp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_perf_data_ struct dp_perf_data *file = NULL, *memory = NULL;
        int fd = input_fd(), r_file, r_memory;
        char path[64];

        CHECK(ftruncate(fd, 0) == 0);
        CHECK(size == 0 || pwrite(fd, data, size, 0) == (ssize_t) size);
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

        r_file = dp_perf_data_open(path, &file);
        r_memory = dp_perf_data_open_memory(data, size, &memory);
        CHECK(r_file == r_memory);
        CHECK(r_file == 0 || r_file == -EBADMSG || r_file == -EPROTO || r_file == -EPROTONOSUPPORT ||
              r_file == -EOPNOTSUPP || r_file == -ENOMEM);
        if (r_file < 0) {
                CHECK(!file && !memory);
                return 0;
        }
        CHECK(dp_perf_data_attr_count(file) == dp_perf_data_attr_count(memory));
        CHECK(dp_perf_data_attr_count(file) >= 1);
        for (size_t i = 0; i < dp_perf_data_attr_count(file); i++) {
                const struct perf_event_attr *a = dp_perf_data_attr(file, i);

                CHECK(a->size <= sizeof(*a));
                CHECK(memcmp(a, dp_perf_data_attr(memory, i), sizeof(*a)) == 0);
        }
        CHECK(dp_perf_data_attr(file, dp_perf_data_attr_count(file)) == NULL);

        walk(memory, NEXT, &reference);
        walk(file, NEXT, &other);
        same_walks(&reference, &other);
        walk(file, SEQUENTIAL, &other);
        same_walks(&reference, &other);
        walk(memory, SEQUENTIAL, &other);
        same_walks(&reference, &other);
        walk_runs(file, 1024, &other);
        same_walks(&reference, &other);
        walk_runs(file, 1 + size % 5, &other);
        same_walks(&reference, &other);
        walk_runs(memory, 7, &other);
        same_walks(&reference, &other);
        /* One pass after another, of either kind, sees the same. */
        walk(file, NEXT, &other);
        same_walks(&reference, &other);

        check_features(file);
        check_replay(file, reference.end, (enum replay_way) (size % _REPLAY_MAX));
        return 0;
}
