/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <strings.h>

#include "counters.h"
#include "cpu-state.h"

#include "check-main.h"

START_TEST(test_names_unique_and_owned) {
        for (int a = 0; a < _DP_C_MAX; a++) {
                ck_assert_ptr_nonnull(dp_counter_name(a));
                ck_assert_int_lt(dp_counter_owner(a), _DP_OWNER_MAX);
                for (int b = a + 1; b < _DP_C_MAX; b++)
                        ck_assert_str_ne(dp_counter_name(a), dp_counter_name(b));
        }
        ck_assert_ptr_null(dp_counter_name(_DP_C_MAX));
        ck_assert(dp_counter_is_level(DP_C_RING_PEAK));
        ck_assert(!dp_counter_is_level(DP_C_MATCH));
        ck_assert_str_eq(dp_cpu_state_name(DP_CPU_RUNNING), "running");
        ck_assert_str_eq(dp_cpu_state_name(42), "invalid");
        /* The wire names are lowercase, the labels people read are capitals,
         * and every wire name parses back to its state. */
        for (int s = 0; s < _DP_CPU_STATE_MAX; s++) {
                for (const char *p = dp_cpu_state_name(s); *p; p++)
                        ck_assert_msg(islower((unsigned char) *p) || *p == '_', "%s", dp_cpu_state_name(s));
                ck_assert_int_eq(dp_cpu_state_from_name(dp_cpu_state_name(s)), s);
                ck_assert_int_eq(strcasecmp(dp_cpu_state_label(s), dp_cpu_state_name(s)), 0);
                ck_assert_str_eq(dp_cpu_state_label_of(dp_cpu_state_name(s)), dp_cpu_state_label(s));
        }
        ck_assert_str_eq(dp_cpu_state_label(DP_CPU_ERROR), "ERROR");
        ck_assert_int_eq(dp_cpu_state_from_name("RUNNING"), -EINVAL);
        ck_assert_int_eq(dp_cpu_state_from_name(""), -EINVAL);
        ck_assert_int_eq(dp_cpu_state_from_name(NULL), -EINVAL);
        ck_assert_str_eq(dp_cpu_state_label_of("sleeping"), "sleeping");
}
END_TEST

static void fill_consistent(struct dp_counter_values *v, uint64_t n) {
        memset(v, 0, sizeof(*v));
        v->v[DP_C_CALLBACK] = 5 * n;
        v->v[DP_C_VALID] = n;
        v->v[DP_C_NULL] = n;
        v->v[DP_C_ADDR_ZERO] = n;
        v->v[DP_C_KERNEL] = n;
        v->v[DP_C_INV_PHYS] = n;
        v->v[DP_C_ENQUEUE] = n - n / 4;
        v->v[DP_C_OVERFLOW] = n / 4;
        v->v[DP_C_DEQUEUE] = n / 2;
        v->v[DP_C_MATCH] = n / 2 - n / 8;
        v->v[DP_C_MISS_TGID] = n / 8;
        v->v[DP_C_UPDATE] = n / 16;
}

START_TEST(test_check_invariants) {
        struct dp_counter_values v;
        const char *which;

        fill_consistent(&v, 1000);
        ck_assert_int_eq(dp_counters_check(&v, &which), 0);
        ck_assert_ptr_null(which);
        ck_assert_uint_eq(dp_counters_in_flight(&v), 750 - 500);

        v.v[DP_C_NULL]++;
        ck_assert_int_eq(dp_counters_check(&v, &which), -EPROTO);
        ck_assert_ptr_nonnull(strstr(which, "callback"));

        fill_consistent(&v, 1000);
        v.v[DP_C_OVERFLOW]++;
        ck_assert_int_eq(dp_counters_check(&v, &which), -EPROTO);
        ck_assert_ptr_nonnull(strstr(which, "overflow"));

        fill_consistent(&v, 1000);
        v.v[DP_C_DEQUEUE] = v.v[DP_C_ENQUEUE] + 1;
        ck_assert_int_eq(dp_counters_check(&v, &which), -EPROTO);

        fill_consistent(&v, 1000);
        v.v[DP_C_MISS_REGION]++;
        ck_assert_int_eq(dp_counters_check(&v, &which), -EPROTO);
        ck_assert_ptr_nonnull(strstr(which, "dequeue"));

        fill_consistent(&v, 1000);
        v.v[DP_C_UPDATE] = v.v[DP_C_MATCH] + 1;
        ck_assert_int_eq(dp_counters_check(&v, &which), -EPROTO);
}
END_TEST

/* The AUX counters are the reader's, summed like counts, and outside every
 * invariant: no value of theirs can break dp_counters_check(). */
START_TEST(test_aux_counters_outside_invariants) {
        static const enum dp_counter aux[] = {
                DP_C_AUX_TRUNCATED, DP_C_AUX_PARTIAL, DP_C_AUX_COLLISION, DP_C_SPE_BAD_BYTES, DP_C_SPE_NO_DATA,
        };
        struct dp_counter_values v, w = {0};

        ck_assert_str_eq(dp_counter_name(DP_C_AUX_TRUNCATED), "aux_truncated");
        ck_assert_str_eq(dp_counter_name(DP_C_SPE_NO_DATA), "spe_no_data");
        fill_consistent(&v, 1000);
        for (size_t i = 0; i < DP_ARRAY_SIZE(aux); i++) {
                ck_assert_int_eq(dp_counter_owner(aux[i]), DP_OWNER_READER);
                ck_assert(!dp_counter_is_level(aux[i]));
                v.v[aux[i]] = 7 + i;
                w.v[aux[i]] = 100;
        }
        ck_assert_int_eq(dp_counters_check(&v, NULL), 0);
        dp_counters_sum(&v, &w);
        for (size_t i = 0; i < DP_ARRAY_SIZE(aux); i++)
                ck_assert_uint_eq(v.v[aux[i]], 107 + i);
}
END_TEST

START_TEST(test_sum_levels_take_max) {
        struct dp_counter_values a = {0}, b = {0};

        a.v[DP_C_MATCH] = 3;
        b.v[DP_C_MATCH] = 4;
        a.v[DP_C_RING_PEAK] = 10;
        b.v[DP_C_RING_PEAK] = 7;
        dp_counters_sum(&a, &b);
        ck_assert_uint_eq(a.v[DP_C_MATCH], 7);
        ck_assert_uint_eq(a.v[DP_C_RING_PEAK], 10);
}
END_TEST

START_TEST(test_publish_only_owned_range) {
        struct dp_cpu_stats s;
        struct dp_counter_values w, r;

        dp_cpu_stats_init(&s);
        for (int c = 0; c < _DP_C_MAX; c++)
                w.v[c] = 100 + c;
        dp_counters_publish(&s, DP_OWNER_READER, &w);
        dp_counters_snapshot(&s, &r);
        for (int c = 0; c < _DP_C_MAX; c++)
                ck_assert_uint_eq(r.v[c], dp_counter_owner(c) == DP_OWNER_READER ? 100u + c : 0u);
}
END_TEST

/* A reader and a tracker publish as the pipeline does; snapshots taken meanwhile
 * must never break an invariant. */
struct pipeline_sim {
        struct dp_cpu_stats stats;
        atomic_uint_fast64_t produced; /* enqueued so far, as "queue" contents */
        atomic_uint_fast64_t snapshots; /* taken by the checking thread */
        atomic_bool stop;
};

static void *sim_reader(void *arg) {
        struct pipeline_sim *p = arg;
        struct dp_counter_values v = {0};

        for (uint64_t i = 1; i <= 400000; i++) {
                /* Halfway, make sure the checker is really reading while we write. */
                if (i == 200000)
                        while (atomic_load(&p->snapshots) < 100)
                                ;
                v.v[DP_C_CALLBACK] += 3;
                v.v[DP_C_VALID] += 2;
                v.v[DP_C_KERNEL] += 1;
                v.v[DP_C_ENQUEUE] += 1;
                v.v[DP_C_OVERFLOW] += 1;
                if (i % 7 == 0 || i == 400000) {
                        dp_counters_publish(&p->stats, DP_OWNER_READER, &v);
                        atomic_store_explicit(&p->produced, v.v[DP_C_ENQUEUE], memory_order_release);
                }
        }
        atomic_store(&p->stop, true);
        return NULL;
}

static void *sim_tracker(void *arg) {
        struct pipeline_sim *p = arg;
        struct dp_counter_values v = {0};

        for (;;) {
                bool stop = atomic_load(&p->stop);
                uint64_t avail = atomic_load_explicit(&p->produced, memory_order_acquire);

                while (v.v[DP_C_DEQUEUE] < avail) {
                        v.v[DP_C_DEQUEUE]++;
                        v.v[(v.v[DP_C_DEQUEUE] & 1) ? DP_C_MATCH : DP_C_MISS_BOUND]++;
                        v.v[DP_C_UPDATE] = v.v[DP_C_MATCH] / 2;
                }
                dp_counters_publish(&p->stats, DP_OWNER_TRACKER, &v);
                if (stop && v.v[DP_C_DEQUEUE] == atomic_load(&p->produced))
                        return NULL;
        }
}

START_TEST(test_snapshot_consistent_under_concurrency) {
        struct pipeline_sim p = {0};
        pthread_t r, t;
        uint64_t snapshots = 0;
        struct dp_counter_values v;
        const char *which;

        dp_cpu_stats_init(&p.stats);
        ck_assert_int_eq(pthread_create(&r, NULL, sim_reader, &p), 0);
        ck_assert_int_eq(pthread_create(&t, NULL, sim_tracker, &p), 0);
        do {
                dp_counters_snapshot(&p.stats, &v);
                if (dp_counters_check(&v, &which) < 0)
                        ck_abort_msg("invariant broken in snapshot %lu: %s", (unsigned long) snapshots, which);
                snapshots++;
                atomic_store(&p.snapshots, snapshots);
        } while (!atomic_load(&p.stop) || v.v[DP_C_DEQUEUE] != 400000);
        ck_assert_int_eq(pthread_join(r, NULL), 0);
        ck_assert_int_eq(pthread_join(t, NULL), 0);

        dp_counters_snapshot(&p.stats, &v);
        ck_assert_int_eq(dp_counters_check(&v, NULL), 0);
        ck_assert_uint_eq(v.v[DP_C_CALLBACK], 1200000);
        ck_assert_uint_eq(dp_counters_in_flight(&v), 0);
        ck_assert_uint_ge(snapshots, 100);
}
END_TEST

START_TEST(test_state_machine) {
        struct dp_cpu_stats s;
        struct dp_cpu_status st;

        dp_cpu_stats_init(&s);
        ck_assert_int_eq(dp_cpu_get_status(&s).state, DP_CPU_UNINIT);
        /* No skipping steps. */
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_BOUND, DP_STEP_NONE, 0), -EINVAL);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_RUNNING, DP_STEP_NONE, 0), -EINVAL);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_CREATED, DP_STEP_NONE, 0), DP_CPU_UNINIT);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_CREATED, DP_STEP_NONE, 0), -EINVAL);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_BOUND, DP_STEP_NONE, 0), DP_CPU_CREATED);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ENABLED, DP_STEP_NONE, 0), DP_CPU_BOUND);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_RUNNING, DP_STEP_NONE, 0), DP_CPU_ENABLED);
        ck_assert_int_eq(dp_cpu_get_status(&s).state, DP_CPU_RUNNING);

        /* ERROR needs a step and a negative errno, and keeps both. */
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ERROR, DP_STEP_NONE, -EIO), -EINVAL);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ERROR, DP_STEP_RUN, 0), -EINVAL);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ERROR, DP_STEP_RUN, -EIO), DP_CPU_RUNNING);
        st = dp_cpu_get_status(&s);
        ck_assert_int_eq(st.state, DP_CPU_ERROR);
        ck_assert_int_eq(st.failed_step, DP_STEP_RUN);
        ck_assert_int_eq(st.error, -EIO);

        /* From ERROR only teardown (UNINIT) or ERROR again. */
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_CREATED, DP_STEP_NONE, 0), -EINVAL);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_UNINIT, DP_STEP_NONE, 0), DP_CPU_ERROR);
        st = dp_cpu_get_status(&s);
        ck_assert_int_eq(st.state, DP_CPU_UNINIT);
        ck_assert_int_eq(st.error, 0);

        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_CREATED, DP_STEP_NONE, 0), DP_CPU_UNINIT);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ERROR, DP_STEP_BIND, -ENOMEM), DP_CPU_CREATED);
        ck_assert_int_eq(dp_cpu_get_status(&s).error, -ENOMEM);
        ck_assert_str_eq(dp_cpu_step_name(dp_cpu_get_status(&s).failed_step), "bind");
}
END_TEST

int main(void) {
        Suite *s = suite_create("counters");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_names_unique_and_owned);
        tcase_add_test(tc, test_check_invariants);
        tcase_add_test(tc, test_aux_counters_outside_invariants);
        tcase_add_test(tc, test_sum_levels_take_max);
        tcase_add_test(tc, test_publish_only_owned_range);
        tcase_add_test(tc, test_snapshot_consistent_under_concurrency);
        tcase_add_test(tc, test_state_machine);
        suite_add_tcase(s, tc);

        return dp_check_run(s);
}
