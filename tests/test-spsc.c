/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "spsc.h"

/* Every field is derived from the sequence number, so the consumer can check
 * both order and content. */
static void sample_fill(struct dp_sample *s, uint64_t seq) {
        s->time = seq;
        s->vaddr = seq * 4096 + 17;
        s->paddr = ~seq;
        s->data_src = seq ^ UINT64_C(0x5a5a5a5a5a5a5a5a);
        s->pid = (uint32_t) (seq >> 7);
        s->tid = (uint32_t) seq * 3u;
        s->latency = (uint32_t) (seq % 1000);
        s->cpu = (uint16_t) (seq & 0xff);
        s->flags = (uint16_t) (seq & 0x1f);
}

static bool sample_matches(const struct dp_sample *s, uint64_t seq) {
        struct dp_sample expected;

        sample_fill(&expected, seq);
        return s->time == expected.time && s->vaddr == expected.vaddr && s->paddr == expected.paddr &&
                s->data_src == expected.data_src && s->pid == expected.pid && s->tid == expected.tid &&
                s->latency == expected.latency && s->cpu == expected.cpu && s->flags == expected.flags;
}

static uint64_t sample_checksum(const struct dp_sample *s) {
        return s->time ^ (s->vaddr * 3) ^ (s->paddr * 5) ^ (s->data_src * 7) ^ ((uint64_t) s->pid << 1) ^
                ((uint64_t) s->tid << 2) ^ ((uint64_t) s->latency << 3) ^ ((uint64_t) s->cpu << 4) ^
                ((uint64_t) s->flags << 5);
}

static struct dp_spsc *queue_new(size_t capacity) {
        struct dp_spsc *q = NULL;

        ck_assert_int_eq(dp_spsc_new(capacity, &q), 0);
        ck_assert_ptr_nonnull(q);
        ck_assert_uint_eq(dp_spsc_capacity(q), capacity);
        return q;
}

START_TEST(test_init_validation) {
        static struct dp_spsc q;
        struct dp_spsc *heap = NULL;
        _Alignas(DP_CACHELINE) char raw[sizeof(struct dp_spsc) + DP_CACHELINE];

        ck_assert_int_eq(dp_spsc_init(NULL, 16), -EINVAL);
        ck_assert_int_eq(dp_spsc_init(&q, 0), -EINVAL);
        ck_assert_int_eq(dp_spsc_init(&q, 1), -EINVAL);
        ck_assert_int_eq(dp_spsc_init(&q, 3), -EINVAL);
        ck_assert_int_eq(dp_spsc_init(&q, 1000), -EINVAL);
        ck_assert_int_eq(dp_spsc_init(&q, (size_t) DP_SPSC_CAPACITY_MAX * 2), -EINVAL);
        ck_assert_int_eq(dp_spsc_init(&q, SIZE_MAX), -EINVAL);
        /* A queue that is not cache-line aligned would share lines; refuse it. */
        ck_assert_int_eq(dp_spsc_init((struct dp_spsc *) (raw + 8), 16), -EINVAL);
        ck_assert_int_eq(dp_spsc_new(5, &heap), -EINVAL);
        ck_assert_ptr_null(heap);
        ck_assert_int_eq(dp_spsc_new(4, NULL), -EINVAL);

        ck_assert_int_eq(dp_spsc_init(&q, 2), 0);
        ck_assert_uint_eq(dp_spsc_capacity(&q), 2);
        ck_assert_uint_eq((uintptr_t) q.slots % DP_CACHELINE, 0);
        dp_spsc_destroy(&q);
        ck_assert_ptr_null(q.slots);
        dp_spsc_destroy(&q); /* twice is harmless */

        ck_assert_int_eq(dp_spsc_init(&q, 1024), 0);
        ck_assert_uint_eq(dp_spsc_capacity(&q), 1024);
        dp_spsc_destroy(&q);

        dp_spsc_free(NULL);
}
END_TEST

START_TEST(test_fill_to_capacity) {
        struct dp_spsc *q = queue_new(8);
        struct dp_sample s, out[16];
        size_t n;

        for (uint64_t i = 0; i < 4; i++) {
                struct dp_sample *slot = dp_spsc_reserve(q);

                ck_assert_ptr_nonnull(slot);
                sample_fill(slot, i);
                dp_spsc_commit(q);
        }
        for (uint64_t i = 4; i < 8; i++) {
                sample_fill(&s, i);
                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        ck_assert_uint_eq(dp_spsc_depth_producer(q), 8);

        /* Full: neither reserve nor push may hand out a slot. */
        ck_assert_ptr_null(dp_spsc_reserve(q));
        sample_fill(&s, 99);
        ck_assert_int_eq(dp_spsc_push(q, &s), -ENOBUFS);
        ck_assert_uint_eq(dp_spsc_depth_producer(q), 8);

        dp_spsc_publish(q);
        n = dp_spsc_pop(q, out, DP_ARRAY_SIZE(out));
        ck_assert_uint_eq(n, 8);
        for (uint64_t i = 0; i < 8; i++)
                ck_assert_msg(sample_matches(&out[i], i), "sample %" PRIu64 " corrupted", i);
        ck_assert_uint_eq(dp_spsc_pop(q, out, DP_ARRAY_SIZE(out)), 0);

        /* Room again once the consumer released the slots. */
        ck_assert_ptr_nonnull(dp_spsc_reserve(q));
        ck_assert_uint_eq(dp_spsc_depth_producer(q), 0);
        dp_spsc_free(q);
}
END_TEST

START_TEST(test_reserve_without_commit) {
        struct dp_spsc *q = queue_new(4);
        const struct dp_sample *first = NULL;
        struct dp_sample *a, *b;

        a = dp_spsc_reserve(q);
        ck_assert_ptr_nonnull(a);
        sample_fill(a, 1000);
        /* No commit: the slot is offered again and nothing becomes visible. */
        b = dp_spsc_reserve(q);
        ck_assert_ptr_eq(a, b);
        dp_spsc_publish(q);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 0);
        ck_assert_ptr_null(first);

        sample_fill(b, 0);
        dp_spsc_commit(q);
        dp_spsc_publish(q);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 1);
        ck_assert(sample_matches(first, 0));
        dp_spsc_free(q);
}
END_TEST

START_TEST(test_unpublished_invisible) {
        struct dp_spsc *q = queue_new(16);
        const struct dp_sample *first = NULL;
        struct dp_sample s, out[16];

        for (uint64_t i = 0; i < 5; i++) {
                sample_fill(&s, i);
                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 0);
        ck_assert_ptr_null(first);
        ck_assert_uint_eq(dp_spsc_pop(q, out, 16), 0);
        /* Consuming what was never seen must not move the tail. */
        dp_spsc_consume(q, 3);
        ck_assert_uint_eq(dp_spsc_depth_producer(q), 5);

        dp_spsc_publish(q);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 5);
        for (uint64_t i = 0; i < 5; i++)
                ck_assert(sample_matches(&first[i], i));

        /* A second batch stays hidden until its own publish. */
        sample_fill(&s, 5);
        ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        dp_spsc_consume(q, 5);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 0);
        dp_spsc_publish(q);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 1);
        ck_assert(sample_matches(first, 5));

        /* Over-consuming is clamped to what was seen published. */
        dp_spsc_consume(q, 100);
        ck_assert_uint_eq(dp_spsc_depth_producer(q), 0);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 0);
        dp_spsc_free(q);
}
END_TEST

START_TEST(test_wrap_peek) {
        struct dp_spsc *q = queue_new(8);
        const struct dp_sample *first = NULL;
        struct dp_sample s;
        uint64_t seq = 0, expect = 0;
        size_t n;

        /* Move both indices to 6, then queue 5: slots 6,7 then 0,1,2. */
        for (; seq < 6; seq++) {
                sample_fill(&s, seq);
                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        dp_spsc_publish(q);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 6);
        dp_spsc_consume(q, 6);
        expect = 6;

        for (; seq < 11; seq++) {
                sample_fill(&s, seq);
                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        dp_spsc_publish(q);

        n = dp_spsc_peek(q, &first);
        ck_assert_uint_eq(n, 2);
        ck_assert_ptr_eq(first, &q->slots[6]);
        for (size_t i = 0; i < n; i++)
                ck_assert(sample_matches(&first[i], expect + i));
        dp_spsc_consume(q, n);
        expect += n;

        n = dp_spsc_peek(q, &first);
        ck_assert_uint_eq(n, 3);
        ck_assert_ptr_eq(first, &q->slots[0]);
        for (size_t i = 0; i < n; i++)
                ck_assert(sample_matches(&first[i], expect + i));
        dp_spsc_consume(q, n);
        expect += n;

        ck_assert_uint_eq(expect, 11);
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 0);
        dp_spsc_free(q);
}
END_TEST

START_TEST(test_pop_across_wrap) {
        struct dp_spsc *q = queue_new(8);
        struct dp_sample s, out[8];
        uint64_t seq = 0;

        for (; seq < 5; seq++) {
                sample_fill(&s, seq);
                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        dp_spsc_publish(q);
        ck_assert_uint_eq(dp_spsc_pop(q, out, 5), 5);

        /* Fill completely, wrapping: slots 5,6,7,0,1,2,3,4. */
        for (; seq < 13; seq++) {
                sample_fill(&s, seq);
                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        ck_assert_int_eq(dp_spsc_push(q, &s), -ENOBUFS);
        dp_spsc_publish(q);

        /* A short pop first, then one that spans the wrap point. */
        ck_assert_uint_eq(dp_spsc_pop(q, out, 2), 2);
        ck_assert(sample_matches(&out[0], 5));
        ck_assert(sample_matches(&out[1], 6));
        ck_assert_uint_eq(dp_spsc_pop(q, out, 8), 6);
        for (uint64_t i = 0; i < 6; i++)
                ck_assert_msg(sample_matches(&out[i], 7 + i), "sample %" PRIu64 " wrong after wrap", 7 + i);
        ck_assert_uint_eq(dp_spsc_pop(q, out, 8), 0);
        ck_assert_uint_eq(dp_spsc_pop(q, out, 0), 0);
        dp_spsc_free(q);
}
END_TEST

START_TEST(test_push_many) {
        struct dp_spsc *q = queue_new(8);
        const struct dp_sample *first = NULL;
        struct dp_sample in[16], out[16];

        for (uint64_t i = 0; i < DP_ARRAY_SIZE(in); i++)
                sample_fill(&in[i], i);

        ck_assert_uint_eq(dp_spsc_push_many(q, in, 0), 0);
        ck_assert_uint_eq(dp_spsc_push_many(q, in, 5), 5);
        /* Pending until published, like any other push. */
        ck_assert_uint_eq(dp_spsc_peek(q, &first), 0);
        dp_spsc_publish(q);
        ck_assert_uint_eq(dp_spsc_pop(q, out, 3), 3);

        /* Room for 6 of 10, written across the wrap point (slots 5..7, 0..2). */
        ck_assert_uint_eq(dp_spsc_push_many(q, in + 5, 10), 6);
        ck_assert_uint_eq(dp_spsc_depth_producer(q), 8);
        ck_assert_uint_eq(dp_spsc_push_many(q, in + 11, 5), 0);
        ck_assert_ptr_null(dp_spsc_reserve(q));
        dp_spsc_publish(q);

        ck_assert_uint_eq(dp_spsc_pop(q, out, DP_ARRAY_SIZE(out)), 8);
        for (uint64_t i = 0; i < 8; i++)
                ck_assert_msg(sample_matches(&out[i], 3 + i), "sample %" PRIu64 " wrong", 3 + i);
        ck_assert_uint_eq(dp_spsc_push_many(q, in + 11, 5), 5);
        dp_spsc_free(q);
}
END_TEST

/* ---- two-thread stress ---- */

#define STRESS_SAMPLES (UINT64_C(20) * 1000 * 1000)
#define STRESS_CAPACITY 1024
#define STRESS_MAX_BATCH 300

struct stress {
        struct dp_spsc *q;
        uint64_t total;
        uint64_t produced_checksum;
        uint64_t consumed_checksum;
        uint64_t consumed;
        uint64_t push_failures;     /* push refused right after a successful reserve */
        uint64_t first_bad_seq;     /* UINT64_MAX while all is well */
        uint64_t first_bad_expected;
};

static uint64_t xorshift64(uint64_t *state) {
        uint64_t x = *state;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return *state = x;
}

/* Spin briefly, then yield: under ASan on 2 cores the peer may be descheduled. */
static void backoff(unsigned *spins) {
        if (++*spins > 64) {
                sched_yield();
                *spins = 0;
        }
}

/* One sample at a time, alternating in-place writes with push. */
static void produce_singly(struct stress *st, uint64_t seq, uint64_t end, unsigned *spins) {
        for (; seq < end; seq++) {
                struct dp_sample *slot;

                while (!(slot = dp_spsc_reserve(st->q))) {
                        /* Full: let the consumer see what we have. */
                        dp_spsc_publish(st->q);
                        backoff(spins);
                }
                if (seq & 1) {
                        sample_fill(slot, seq);
                        dp_spsc_commit(st->q);
                } else {
                        struct dp_sample s;

                        sample_fill(&s, seq);
                        /* No ck_assert here: each one writes to Check's pipe. */
                        if (dp_spsc_push(st->q, &s) < 0) {
                                /* Keep the stream whole so the test ends. */
                                st->push_failures++;
                                *slot = s;
                                dp_spsc_commit(st->q);
                        }
                }
                st->produced_checksum += sample_checksum(slot);
        }
}

/* A local batch handed over with push_many, which may take only part of it. */
static void produce_many(struct stress *st, uint64_t seq, uint64_t end, unsigned *spins) {
        struct dp_sample buf[STRESS_MAX_BATCH];
        size_t n = (size_t) (end - seq), done = 0;

        for (size_t i = 0; i < n; i++) {
                sample_fill(&buf[i], seq + i);
                st->produced_checksum += sample_checksum(&buf[i]);
        }
        while (done < n) {
                size_t pushed = dp_spsc_push_many(st->q, buf + done, n - done);

                if (pushed == 0) {
                        dp_spsc_publish(st->q);
                        backoff(spins);
                }
                done += pushed;
        }
}

static void *stress_producer(void *arg) {
        struct stress *st = arg;
        uint64_t rng = 0x9e3779b97f4a7c15u, seq = 0;
        unsigned spins = 0;

        while (seq < st->total) {
                uint64_t r = xorshift64(&rng);
                uint64_t end = DP_MIN(seq + 1 + r % STRESS_MAX_BATCH, st->total);

                if ((r >> 32) % 3 == 0)
                        produce_many(st, seq, end, &spins);
                else
                        produce_singly(st, seq, end, &spins);
                seq = end;
                dp_spsc_publish(st->q);
        }
        return NULL;
}

static void *stress_consumer(void *arg) {
        struct stress *st = arg;
        uint64_t rng = 0x2545f4914f6cdd1du, expected = 0;
        struct dp_sample buf[STRESS_MAX_BATCH];
        unsigned spins = 0;

        st->first_bad_seq = UINT64_MAX;
        while (expected < st->total) {
                uint64_t want = 1 + xorshift64(&rng) % STRESS_MAX_BATCH;
                size_t n;

                /* Alternate peek/consume in place with pop into a buffer. */
                if (want & 1) {
                        const struct dp_sample *first;

                        n = DP_MIN(dp_spsc_peek(st->q, &first), (size_t) want);
                        for (size_t i = 0; i < n; i++) {
                                if (first[i].time != expected + i && st->first_bad_seq == UINT64_MAX) {
                                        st->first_bad_seq = first[i].time;
                                        st->first_bad_expected = expected + i;
                                }
                                st->consumed_checksum += sample_checksum(&first[i]);
                        }
                        dp_spsc_consume(st->q, n);
                } else {
                        n = dp_spsc_pop(st->q, buf, want);
                        for (size_t i = 0; i < n; i++) {
                                if (buf[i].time != expected + i && st->first_bad_seq == UINT64_MAX) {
                                        st->first_bad_seq = buf[i].time;
                                        st->first_bad_expected = expected + i;
                                }
                                st->consumed_checksum += sample_checksum(&buf[i]);
                        }
                }
                if (n == 0)
                        backoff(&spins);
                expected += n;
                st->consumed += n;
        }
        return NULL;
}

START_TEST(test_two_thread_stress) {
        struct stress st = { .q = queue_new(STRESS_CAPACITY) };
        const char *env = getenv("DP_SPSC_STRESS_SAMPLES");
        pthread_t producer, consumer;
        const struct dp_sample *first;

        st.total = env ? strtoull(env, NULL, 10) : STRESS_SAMPLES;
        ck_assert_int_eq(pthread_create(&consumer, NULL, stress_consumer, &st), 0);
        ck_assert_int_eq(pthread_create(&producer, NULL, stress_producer, &st), 0);
        ck_assert_int_eq(pthread_join(producer, NULL), 0);
        ck_assert_int_eq(pthread_join(consumer, NULL), 0);

        ck_assert_msg(st.first_bad_seq == UINT64_MAX, "out of order: got seq %" PRIu64 ", expected %" PRIu64,
                      st.first_bad_seq, st.first_bad_expected);
        ck_assert_uint_eq(st.push_failures, 0);
        ck_assert_uint_eq(st.consumed, st.total);
        ck_assert_uint_eq(st.consumed_checksum, st.produced_checksum);
        ck_assert_uint_eq(dp_spsc_peek(st.q, &first), 0);
        ck_assert_uint_eq(dp_spsc_depth_producer(st.q), 0);
        dp_spsc_free(st.q);
}
END_TEST

static Suite *spsc_suite(void) {
        Suite *s = suite_create("spsc");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_init_validation);
        tcase_add_test(tc, test_fill_to_capacity);
        tcase_add_test(tc, test_reserve_without_commit);
        tcase_add_test(tc, test_unpublished_invisible);
        tcase_add_test(tc, test_wrap_peek);
        tcase_add_test(tc, test_pop_across_wrap);
        tcase_add_test(tc, test_push_many);
        suite_add_tcase(s, tc);

        tc = tcase_create("stress");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_two_thread_stress);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        SRunner *sr = srunner_create(spsc_suite());
        int failed;

        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
