/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The ring reader against ring images in ordinary memory: a fake control page
 * followed by a data area, filled by a producer that mimics the kernel.
 */

#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "perf-ring.h"

#include "check-main.h"

#define PAGE 4096

struct fake_ring {
        uint8_t *mem;
        struct perf_event_mmap_page *meta;
        uint8_t *data;
        uint64_t size;
        uint64_t head;          /* producer position, published on produce_publish() */
        uint8_t *scratch;
        struct dp_perf_ring ring;
};

static _Alignas(8) uint8_t scratch_buffer[DP_PERF_RECORD_MAX];

static void fake_ring_init(struct fake_ring *f, uint64_t data_size, uint64_t start) {
        f->mem = aligned_alloc(PAGE, PAGE + data_size);
        ck_assert_ptr_nonnull(f->mem);
        /* Stale bytes that a buggy reader would pick up. */
        memset(f->mem + PAGE, 0xee, data_size);
        memset(f->mem, 0, PAGE);
        f->meta = (struct perf_event_mmap_page *) f->mem;
        f->meta->data_offset = PAGE;
        f->meta->data_size = data_size;
        f->meta->data_head = start;
        f->meta->data_tail = start;
        f->data = f->mem + PAGE;
        f->size = data_size;
        f->head = start;
        f->scratch = scratch_buffer;
        memset(f->scratch, 0xdd, DP_PERF_RECORD_MAX);
        ck_assert_int_eq(dp_perf_ring_init(&f->ring, f->meta, PAGE, data_size, f->scratch), 0);
}

static void fake_ring_free(struct fake_ring *f) {
        free(f->mem);
}

static uint8_t pattern(uint32_t seq, size_t i) {
        return (uint8_t) (seq * 131u + i * 7u + (i >> 8));
}

/* Writes a record the way the kernel does, byte by byte across the end of the
 * data area, without publishing it yet. */
static void produce_type(struct fake_ring *f, uint32_t seq, uint16_t size, uint32_t type) {
        uint8_t rec[DP_PERF_RECORD_MAX];
        struct perf_event_header h = { .type = type, .misc = (uint16_t) seq, .size = size };

        ck_assert_uint_ge(size, 8);
        /* The kernel never overwrites what the reader has not released. */
        ck_assert_uint_le(f->head + size - f->meta->data_tail, f->size);
        memcpy(rec, &h, sizeof(h));
        for (size_t i = 8; i < size; i++)
                rec[i] = pattern(seq, i);
        for (size_t i = 0; i < size; i++)
                f->data[(f->head + i) & (f->size - 1)] = rec[i];
        f->head += size;
}

static void produce(struct fake_ring *f, uint32_t seq, uint16_t size) {
        produce_type(f, seq, size, PERF_RECORD_SAMPLE);
}

static void publish(struct fake_ring *f) {
        __atomic_store_n(&f->meta->data_head, f->head, __ATOMIC_RELEASE);
}

/* Check's ck_assert reports every passing check to the parent process, which
 * is too slow for per-record loops; this only speaks up on failure. */
#define CHECK(cond, ...)                                \
        do {                                            \
                if (!(cond))                            \
                        ck_abort_msg(__VA_ARGS__);      \
        } while (0)

static void expect_record_type(const struct perf_event_header *h, uint32_t seq, uint16_t size, uint32_t type) {
        const uint8_t *p = (const uint8_t *) h;

        CHECK(h, "record %u missing", seq);
        CHECK(h->size == size && h->misc == (uint16_t) seq && h->type == type,
              "record %u: header type %u misc %u size %u, want type %u size %u", seq, h->type, h->misc, h->size,
              type, size);
        CHECK((uintptr_t) h % 8 == 0, "record %u misaligned", seq);
        for (size_t i = 8; i < size; i++)
                if (p[i] != pattern(seq, i))
                        ck_abort_msg("record %u size %u: byte %zu is %#x, want %#x", seq, size, i, p[i],
                                     pattern(seq, i));
}

static void expect_record(const struct perf_event_header *h, uint32_t seq, uint16_t size) {
        expect_record_type(h, seq, size, PERF_RECORD_SAMPLE);
}

/* One record at every 8-byte start position, so that the wrap falls at every
 * possible split of the record; near the u64 limit too. */
START_TEST(test_wrap_at_every_offset) {
        const uint16_t sizes[] = { 8, 16, 24, 40, 64, 136, 512, 2048, 4096 };
        const uint64_t bases[] = { 0, UINT64_C(1) << 40, UINT64_MAX - 4095 };
        struct fake_ring f;
        unsigned wrapped = 0;

        for (unsigned b = 0; b < DP_ARRAY_SIZE(bases); b++)
                for (unsigned s = 0; s < DP_ARRAY_SIZE(sizes); s++)
                        for (uint64_t off = 0; off < 4096; off += 8) {
                                const struct perf_event_header *h;
                                uint64_t start = bases[b] + off;
                                bool wraps = off + sizes[s] > 4096;
                                int err = 1;

                                fake_ring_init(&f, 4096, start);
                                produce(&f, (uint32_t) off, sizes[s]);
                                publish(&f);

                                CHECK(dp_perf_ring_begin(&f.ring) == sizes[s], "begin");
                                h = dp_perf_ring_next(&f.ring, &err);
                                CHECK(err == 0, "err %d", err);
                                expect_record(h, (uint32_t) off, sizes[s]);
                                /* Copied only when it really wraps. */
                                CHECK(((const uint8_t *) h == f.scratch) == wraps, "size %u at %" PRIu64
                                      ": wrapped %d, copied %d", sizes[s], off, wraps,
                                      (const uint8_t *) h == f.scratch);
                                wrapped += wraps;

                                CHECK(!dp_perf_ring_next(&f.ring, &err) && err == 0, "extra record");
                                CHECK(f.meta->data_tail == start, "tail moved before end");
                                dp_perf_ring_end(&f.ring);
                                CHECK(f.meta->data_tail == start + sizes[s], "tail not published");
                                fake_ring_free(&f);
                        }
        ck_assert_uint_gt(wrapped, 1000);
}
END_TEST

START_TEST(test_records_up_to_64k) {
        const uint16_t big = 65528; /* the largest 8-byte multiple a u16 size can hold */
        const uint64_t data_size = 128 * 1024;
        struct fake_ring f;

        for (uint64_t off = 0; off < data_size; off += 8 * 257) {
                const struct perf_event_header *h;
                int err;

                fake_ring_init(&f, data_size, off + data_size * 3);
                produce(&f, 1, big);
                produce(&f, 2, 65536 - 16);
                publish(&f);
                ck_assert_uint_eq(dp_perf_ring_begin(&f.ring), big + 65536 - 16);
                h = dp_perf_ring_next(&f.ring, &err);
                expect_record(h, 1, big);
                h = dp_perf_ring_next(&f.ring, &err);
                expect_record(h, 2, 65536 - 16);
                ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
                ck_assert_int_eq(err, 0);
                dp_perf_ring_end(&f.ring);
                ck_assert_uint_eq(f.meta->data_tail, f.head);
                fake_ring_free(&f);
        }

        /* A single record filling the whole ring. */
        fake_ring_init(&f, 65536, 12345 * 8);
        produce(&f, 3, big);
        publish(&f);
        {
                int err;
                dp_perf_ring_begin(&f.ring);
                expect_record(dp_perf_ring_next(&f.ring, &err), 3, big);
        }
        fake_ring_free(&f);
}
END_TEST

/* Producer and consumer take turns for many records; the tail moves only
 * when the consumer says it is done. */
START_TEST(test_many_records) {
        struct fake_ring f;
        uint32_t next_seq = 0, want_seq = 0;
        uint16_t sizes[1 << 16];
        uint64_t rng = 12345;

        fake_ring_init(&f, 65536, 0);
        while (want_seq < 200000) {
                uint64_t avail;
                unsigned got = 0;
                int err;

                /* Fill until the next record would not fit. */
                for (;;) {
                        uint16_t size;

                        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                        size = (uint16_t) (8 + 8 * ((rng >> 33) % ((rng >> 60) ? 64 : 1024)));
                        if (f.head + size - f.meta->data_tail > f.size)
                                break;
                        sizes[next_seq & 0xffff] = size;
                        produce(&f, next_seq++, size);
                }
                publish(&f);

                avail = dp_perf_ring_begin(&f.ring);
                ck_assert_uint_eq(avail, f.head - f.meta->data_tail);
                for (const struct perf_event_header *h; (h = dp_perf_ring_next(&f.ring, &err)); got++) {
                        expect_record(h, want_seq, sizes[want_seq & 0xffff]);
                        want_seq++;
                        /* Nothing is handed back before dp_perf_ring_end(). */
                        CHECK(f.meta->data_tail == f.head - avail, "tail moved before end");
                        /* Give back only part of the snapshot sometimes. */
                        if ((rng >> 20) % 7 == 0 && got == 3)
                                break;
                }
                ck_assert_int_eq(err, 0);
                ck_assert_uint_gt(got, 0);
                dp_perf_ring_end(&f.ring);
                ck_assert_uint_eq(f.meta->data_tail, f.ring.tail);
        }
        /* Drain the rest. */
        dp_perf_ring_begin(&f.ring);
        for (int err; dp_perf_ring_next(&f.ring, &err); want_seq++)
                ;
        dp_perf_ring_end(&f.ring);
        ck_assert_uint_eq(want_seq, next_seq);
        ck_assert_uint_eq(f.meta->data_tail, f.head);
        fake_ring_free(&f);
}
END_TEST

/* Records written after begin() stay invisible until the next begin(). */
START_TEST(test_snapshot) {
        struct fake_ring f;
        int err;

        fake_ring_init(&f, 4096, 0);
        produce(&f, 0, 32);
        publish(&f);
        ck_assert_uint_eq(dp_perf_ring_begin(&f.ring), 32);
        produce(&f, 1, 48);
        publish(&f);
        expect_record(dp_perf_ring_next(&f.ring, &err), 0, 32);
        ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
        ck_assert_int_eq(err, 0);
        dp_perf_ring_end(&f.ring);
        ck_assert_uint_eq(dp_perf_ring_begin(&f.ring), 48);
        expect_record(dp_perf_ring_next(&f.ring, &err), 1, 48);
        dp_perf_ring_end(&f.ring);
        ck_assert_uint_eq(dp_perf_ring_begin(&f.ring), 0);
        ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
        ck_assert_int_eq(err, 0);
        fake_ring_free(&f);
}
END_TEST

static void write_header(struct fake_ring *f, uint64_t pos, uint16_t size) {
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = size };

        memcpy(f->data + (pos & (f->size - 1)), &h, sizeof(h));
}

/* A bad header drops the rest of the snapshot: tail jumps to head. */
START_TEST(test_corrupt_header) {
        const uint16_t bad_sizes[] = { 0, 4, 7, 12, 20, 4096 + 8, 65535 };
        struct fake_ring f;
        int err;

        for (unsigned i = 0; i < DP_ARRAY_SIZE(bad_sizes); i++) {
                uint64_t good_end;

                fake_ring_init(&f, 4096, 4000);
                produce(&f, 9, 64);
                good_end = f.head;
                write_header(&f, f.head, bad_sizes[i]);
                f.head += 256;
                produce(&f, 10, 64); /* unreachable behind the bad one */
                publish(&f);

                ck_assert_uint_eq(dp_perf_ring_begin(&f.ring), 64 + 256 + 64);
                expect_record(dp_perf_ring_next(&f.ring, &err), 9, 64);
                ck_assert_int_eq(err, 0);
                ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
                ck_assert_int_eq(err, -EBADMSG);
                ck_assert_uint_eq(f.ring.tail, f.head);
                ck_assert_uint_eq(f.meta->data_tail, 4000);
                dp_perf_ring_end(&f.ring);
                ck_assert_uint_eq(f.meta->data_tail, f.head);
                ck_assert_uint_gt(f.head, good_end);
                /* And reading goes on normally afterwards. */
                produce(&f, 11, 24);
                publish(&f);
                ck_assert_uint_eq(dp_perf_ring_begin(&f.ring), 24);
                expect_record(dp_perf_ring_next(&f.ring, &err), 11, 24);
                dp_perf_ring_end(&f.ring);
                fake_ring_free(&f);
        }

        /* A record longer than what was published. */
        fake_ring_init(&f, 4096, 0);
        write_header(&f, 0, 64);
        f.head = 32;
        publish(&f);
        dp_perf_ring_begin(&f.ring);
        ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
        ck_assert_int_eq(err, -EBADMSG);
        ck_assert_uint_eq(f.ring.tail, 32);
        fake_ring_free(&f);

        /* Fewer than 8 bytes published, a head beyond the ring size, a tail
         * off the 8-byte grid. */
        fake_ring_init(&f, 4096, 0);
        f.meta->data_head = 4;
        dp_perf_ring_begin(&f.ring);
        ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
        ck_assert_int_eq(err, -EBADMSG);
        f.meta->data_head = f.ring.tail + 4096 + 8;
        dp_perf_ring_begin(&f.ring);
        ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
        ck_assert_int_eq(err, -EBADMSG);
        ck_assert_uint_eq(f.ring.tail, f.meta->data_head);
        f.ring.tail += 4;
        f.meta->data_head = f.ring.tail + 64;
        dp_perf_ring_begin(&f.ring);
        ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
        ck_assert_int_eq(err, -EBADMSG);
        fake_ring_free(&f);
}
END_TEST

/* Runs of same-type, same-size records come out whole and in order, never
 * across the end of the data area nor past a record of another type or size;
 * dp_perf_ring_next() takes what they leave, and every record comes out once. */
START_TEST(test_runs) {
        enum { RUN_SIZE = 48 };
        struct fake_ring f;
        uint32_t next_seq = 0, want_seq = 0;
        uint16_t sizes[1 << 16];
        uint32_t types[1 << 16];
        uint64_t rng = 777, in_runs = 0, runs = 0, singles = 0;

        fake_ring_init(&f, 8192, UINT64_MAX - 8192 * 3 + 1); /* the u64 wraps too */
        while (want_seq < 100000) {
                int err = 0;

                for (;;) {
                        uint16_t size = RUN_SIZE;
                        uint32_t type = PERF_RECORD_SAMPLE;

                        rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
                        if ((rng >> 40) % 16 == 0)
                                type = PERF_RECORD_LOST;        /* same size, other type */
                        else if ((rng >> 40) % 16 == 1)
                                size = 56;                      /* same type, other size */
                        if (f.head + size - f.meta->data_tail > f.size)
                                break;
                        sizes[next_seq & 0xffff] = size;
                        types[next_seq & 0xffff] = type;
                        produce_type(&f, next_seq++, size, type);
                }
                publish(&f);

                dp_perf_ring_begin(&f.ring);
                for (;;) {
                        const struct perf_event_header *h;
                        size_t n;

                        h = dp_perf_ring_next_run(&f.ring, PERF_RECORD_SAMPLE, RUN_SIZE, &n);
                        if (n) {
                                const uint8_t *p = (const uint8_t *) h;

                                CHECK(p >= f.data && p + n * RUN_SIZE <= f.data + f.size, "run leaves the ring");
                                for (size_t i = 0; i < n; i++, want_seq++) {
                                        CHECK(types[want_seq & 0xffff] == PERF_RECORD_SAMPLE &&
                                              sizes[want_seq & 0xffff] == RUN_SIZE, "record %u in a run", want_seq);
                                        expect_record((const void *) (p + i * RUN_SIZE), want_seq, RUN_SIZE);
                                }
                                runs++;
                                in_runs += n;
                                continue;
                        }
                        CHECK(!h, "no run, but a record");
                        h = dp_perf_ring_next(&f.ring, &err);
                        if (!h)
                                break;
                        expect_record_type(h, want_seq, sizes[want_seq & 0xffff], types[want_seq & 0xffff]);
                        want_seq++;
                        singles++;
                }
                ck_assert_int_eq(err, 0);
                dp_perf_ring_end(&f.ring);
        }
        ck_assert_uint_eq(want_seq, next_seq);
        ck_assert_uint_eq(f.meta->data_tail, f.head);
        /* Most records came in runs; the wrap and the odd ones one by one. */
        ck_assert_uint_gt(in_runs, 4 * singles);
        ck_assert_uint_gt(in_runs, 3 * runs);
        fake_ring_free(&f);

        /* A snapshot the kernel cannot have written is no run: next() says so. */
        fake_ring_init(&f, 4096, 0);
        produce(&f, 1, RUN_SIZE);
        f.meta->data_head = f.ring.tail + 4096 + 8;
        dp_perf_ring_begin(&f.ring);
        {
                size_t n = 1;
                int err;

                ck_assert_ptr_null(dp_perf_ring_next_run(&f.ring, PERF_RECORD_SAMPLE, RUN_SIZE, &n));
                ck_assert_uint_eq(n, 0);
                ck_assert_uint_eq(f.ring.tail, 0);
                ck_assert_ptr_null(dp_perf_ring_next(&f.ring, &err));
                ck_assert_int_eq(err, -EBADMSG);
        }
        fake_ring_free(&f);
}
END_TEST

START_TEST(test_init) {
        struct fake_ring f;
        struct dp_perf_ring ring;

        fake_ring_init(&f, 8192, 800);
        ck_assert_ptr_eq(f.ring.data, f.data);
        ck_assert_uint_eq(f.ring.mask, 8191);
        ck_assert_uint_eq(f.ring.tail, 800);
        ck_assert_int_eq(dp_perf_ring_init(&ring, f.meta, PAGE, 4096, f.scratch), -EINVAL); /* != data_size */
        ck_assert_int_eq(dp_perf_ring_init(&ring, f.meta, PAGE, 8192, f.scratch + 1), -EINVAL);
        ck_assert_int_eq(dp_perf_ring_init(&ring, f.meta, PAGE, 8192, NULL), -EINVAL);
        ck_assert_int_eq(dp_perf_ring_init(&ring, NULL, PAGE, 8192, f.scratch), -EINVAL);
        /* Old kernels leave data_offset/data_size 0: one page in. */
        f.meta->data_offset = 0;
        f.meta->data_size = 0;
        ck_assert_int_eq(dp_perf_ring_init(&ring, f.meta, PAGE, 8192, f.scratch), 0);
        ck_assert_ptr_eq(ring.data, f.data);
        ck_assert_int_eq(dp_perf_ring_init(&ring, f.meta, PAGE, 6000, f.scratch), -EINVAL);
        ck_assert_int_eq(dp_perf_ring_init(&ring, f.meta, PAGE, 0, f.scratch), -EINVAL);
        ck_assert_int_eq(dp_perf_ring_init(&ring, f.meta, 0, 8192, f.scratch), -EINVAL);
        fake_ring_free(&f);
}
END_TEST

static Suite *perf_ring_suite(void) {
        Suite *s = suite_create("perf-ring");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_wrap_at_every_offset);
        tcase_add_test(tc, test_records_up_to_64k);
        tcase_add_test(tc, test_many_records);
        tcase_add_test(tc, test_snapshot);
        tcase_add_test(tc, test_corrupt_header);
        tcase_add_test(tc, test_runs);
        tcase_add_test(tc, test_init);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(perf_ring_suite());
}
