/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's tracker thread (daemon/tracker-thread.c) against channels
 * (daemon/channel.c) this test builds and fills by hand, without samplers:
 * between aggregations it sleeps rather than polls, a queue past half full
 * wakes it at once, stop does not wait for its sleep to end, and a query caps
 * the readers' polls at once, poking awake those that sleep longer.  The
 * intervals are set long (a second), so that "at once" and "asleep" are
 * hundreds of milliseconds apart even on a busy machine.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "config.h"
#include "tracker-thread.h"

#include "check-main.h"

#define QUEUE 1024
#define CHANNELS 2

struct rig {
        struct dp_config config;
        struct channel *channels;
        struct tracker_thread *tt;
        uint8_t area[64 * 4096];
};

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void sleep_s(double s) {
        nanosleep(&(struct timespec) { (time_t) s, (long) ((s - (double) (time_t) s) * 1e9) }, NULL);
}

/* @poll_ms: the configured poll interval; @said_ms: what each channel's
 * reader says it polls at (0: nothing).  The longer sets the tracker's lag
 * (+ 50 ms). */
static struct rig *rig_start_saying(unsigned poll_ms, unsigned said_ms) {
        struct rig *r = calloc(1, sizeof(*r));

        ck_assert_ptr_nonnull(r);
        r->channels = channels_new(CHANNELS);
        ck_assert_ptr_nonnull(r->channels);
        memset(r->area, 1, sizeof(r->area));    /* mapped, so that this process has ranges */
        dp_config_init(&r->config);
        r->config.target_mode = DP_TARGETS_PIDS;
        r->config.pids[0] = (uint32_t) getpid();
        r->config.n_pids = 1;
        r->config.poll_ms = poll_ms;
        r->config.aggr_interval_us = 1000000;
        r->config.sample_interval_us = 50000;
        r->config.maps_refresh_us = 2000000;
        for (size_t i = 0; i < CHANNELS; i++) {
                ck_assert_int_eq(atomic_load(&r->channels[i].wake_fd), -1);
                ck_assert_int_eq(channel_open(&r->channels[i], (int) i, NULL, QUEUE), 0);
                channel_set_poll_ms(&r->channels[i], said_ms);
        }
        ck_assert_int_eq(tracker_thread_start(&r->config, r->channels, CHANNELS, NULL, &r->tt), 0);
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert_int_ge(atomic_load(&r->channels[i].wake_fd), 0);
        return r;
}

static struct rig *rig_start_polling(unsigned poll_ms) {
        return rig_start_saying(poll_ms, 0);
}

static struct rig *rig_start(void) {
        return rig_start_polling(1000);
}

static void rig_free(struct rig *r) {
        tracker_thread_free(r->tt);
        /* Freed with the thread: no reader may write to it any more. */
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert_int_eq(atomic_load(&r->channels[i].wake_fd), -1);
        channels_free(r->channels, CHANNELS);
        free(r);
}

/* Queues @n samples in the area on channel @i's queue, as its reader would,
 * timed @ahead seconds from now. */
static void produce_at(struct rig *r, size_t i, size_t n, double ahead) {
        struct dp_spsc *q = r->channels[i].queue;

        for (size_t k = 0; k < n; k++) {
                struct dp_sample s = {
                        .time = (uint64_t) ((now_s() + ahead) * 1e9),
                        .vaddr = (uint64_t) (uintptr_t) &r->area[(k * 4096) % sizeof(r->area)],
                        .pid = (uint32_t) getpid(),
                        .tid = (uint32_t) getpid(),
                        .cpu = (uint16_t) i,
                };

                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        dp_spsc_publish(q);
}

static void produce(struct rig *r, size_t i, size_t n) {
        produce_at(r, i, n, 0);
}

static size_t depth(struct rig *r, size_t i) {
        return dp_spsc_depth_producer(r->channels[i].queue);
}

/* How long until channel @i's queue is empty, at most @limit seconds. */
static double drained_within(struct rig *r, size_t i, double limit) {
        double t0 = now_s();

        while (depth(r, i) > 0 && now_s() - t0 < limit)
                sleep_s(0.002);
        return now_s() - t0;
}

/* Until the thread's first pass has begun (its heartbeat is stamped at the
 * start of each), then a moment more for it to fall asleep: a first pass
 * after samples were queued would take them all, there being no sampling
 * clock yet. */
static void wait_first_pass(struct rig *r) {
        for (double t0 = now_s(); tracker_thread_heartbeat_ns(r->tt) == 0 && now_s() - t0 < 5;)
                sleep_s(0.005);
        ck_assert_uint_ne(tracker_thread_heartbeat_ns(r->tt), 0);
        sleep_s(0.05);
}

START_TEST(test_sleeps_until_due) {
        struct rig *r = rig_start();

        wait_first_pass(r);                     /* past its first pass, asleep */
        produce(r, 0, QUEUE / 4);               /* below half: nobody wakes it */
        channel_wake_if_needed(&r->channels[0]);
        sleep_s(0.3);
        ck_assert_uint_eq(depth(r, 0), QUEUE / 4);
        /* It comes by itself, once the aggregation is due (1 s, plus the lag). */
        ck_assert_double_lt(drained_within(r, 0, 5), 5);
        rig_free(r);
}
END_TEST

START_TEST(test_half_full_wakes_it) {
        struct rig *r = rig_start();
        double took;

        wait_first_pass(r);
        produce(r, 1, QUEUE / 2 + 1);
        channel_wake_if_needed(&r->channels[1]);
        took = drained_within(r, 1, 5);
        ck_assert_uint_eq(depth(r, 1), 0);
        /* Its own sleep would end a second or more later. */
        ck_assert_msg(took < 0.5, "a queue past half full was drained only after %.3f s", took);
        rig_free(r);
}
END_TEST

START_TEST(test_stop_does_not_wait_out_the_sleep) {
        struct rig *r = rig_start();
        double t0;

        wait_first_pass(r);
        produce(r, 0, 10);
        t0 = now_s();
        tracker_thread_stop(r->tt);
        ck_assert_msg(now_s() - t0 < 0.5, "stop took %.3f s", now_s() - t0);
        /* Its last pass took what was queued. */
        ck_assert_uint_eq(depth(r, 0), 0);
        rig_free(r);
}
END_TEST

static int count_aggregations(const struct dp_tracker_snapshot *snap, void *userdata) {
        *(uint64_t *) userdata = snap->nr_aggregations;
        return 0;
}

/* Until the tracker has made @n aggregations (10 s at most); returns when
 * it was seen. */
static double wait_aggregations(struct rig *r, uint64_t n) {
        double t0 = now_s();
        uint64_t made = 0;

        do {
                sleep_s(0.01);
                ck_assert_int_eq(tracker_thread_with_snapshot(r->tt, count_aggregations, &made), 0);
        } while (made < n && now_s() - t0 < 10);
        ck_assert_uint_eq(made, n);
        return now_s();
}

/* Readers that say they poll slowly (2.5 s) while a queue fills fast: the
 * queues could not hold the samples of the aggregations after next for that
 * long, so the tracker closes at the configured lag and caps every reader's
 * poll at the configured interval; once the burst is over, the cap goes. */
START_TEST(test_a_busy_queue_caps_the_lag) {
        struct rig *r = rig_start_saying(100, 2500);
        double t0;

        wait_first_pass(r);
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert_uint_eq(atomic_load(&r->channels[i].poll_cap_ms), 0);
        produce(r, 0, QUEUE / 2 + 100);
        channel_wake_if_needed(&r->channels[0]);
        ck_assert_double_lt(drained_within(r, 0, 5), 5);
        for (t0 = now_s(); atomic_load(&r->channels[1].poll_cap_ms) == 0 && now_s() - t0 < 5;)
                sleep_s(0.005);
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert_uint_eq(atomic_load(&r->channels[i].poll_cap_ms), 100);
        ck_assert_uint_eq(channel_capped_poll_ms(&r->channels[1], 2500), 100);
        for (t0 = now_s(); atomic_load(&r->channels[1].poll_cap_ms) != 0 && now_s() - t0 < 10;)
                sleep_s(0.01);
        ck_assert_uint_eq(atomic_load(&r->channels[1].poll_cap_ms), 0);
        rig_free(r);
}
END_TEST

/* Nothing sampled: once an aggregation closed empty, the thread closes no
 * more and marks its channels idle; the first batch pushed wakes it (the
 * producer clears the mark as it writes the wake fd), and it goes on. */
START_TEST(test_idle_until_a_batch) {
        struct rig *r = rig_start_polling(100);
        uint64_t made = 0;

        wait_aggregations(r, 1);
        sleep_s(2.5);                           /* two and a half aggregations, nothing sampled */
        ck_assert_int_eq(tracker_thread_with_snapshot(r->tt, count_aggregations, &made), 0);
        ck_assert_uint_eq(made, 1);
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert(atomic_load(&r->channels[i].consumer_idle));

        produce(r, 0, 10);                      /* far below half full */
        channel_wake_if_needed(&r->channels[0]);
        ck_assert(!atomic_load(&r->channels[0].consumer_idle));
        ck_assert_double_lt(drained_within(r, 0, 5), 5);
        /* And aggregations close again: the quiet spell as one, then its own. */
        for (double t0 = now_s(); made < 2 && now_s() - t0 < 10; sleep_s(0.01))
                ck_assert_int_eq(tracker_thread_with_snapshot(r->tt, count_aggregations, &made), 0);
        ck_assert_uint_ge(made, 2);
        rig_free(r);
}
END_TEST

static void count_call(void *userdata) {
        atomic_fetch_add((atomic_uint *) userdata, 1);
}

/* Until an aggregation closes after the @made already seen (10 s at most),
 * samples queued to keep them closing; returns how many were made. */
static uint64_t wait_one_more_aggregation(struct rig *r, uint64_t made) {
        uint64_t now = made;

        produce(r, 0, 10);
        channel_wake_if_needed(&r->channels[0]);
        for (double t0 = now_s(); now <= made && now_s() - t0 < 10; sleep_s(0.01))
                ck_assert_int_eq(tracker_thread_with_snapshot(r->tt, count_aggregations, &now), 0);
        ck_assert_uint_gt(now, made);
        return now;
}

/* Each snapshot the thread publishes, an aggregation closed among them, is
 * announced to whoever asked (the DAMON thread looks then for a new hot
 * area), and to nobody once told NULL. */
START_TEST(test_snapshots_are_announced) {
        struct rig *r = rig_start_polling(100);
        atomic_uint calls = 0;
        unsigned before;
        uint64_t made = 0;

        tracker_thread_notify_snapshots(r->tt, count_call, &calls);
        for (int i = 0; i < 2; i++) {
                before = atomic_load(&calls);
                made = wait_one_more_aggregation(r, made);
                ck_assert_uint_gt(atomic_load(&calls), before);
        }
        tracker_thread_notify_snapshots(r->tt, NULL, NULL);
        before = atomic_load(&calls);
        (void) wait_one_more_aggregation(r, made);
        ck_assert_uint_eq(atomic_load(&calls), before);
        rig_free(r);
}
END_TEST

/* Samples of the aggregation after next wait in their queue for the tick
 * that opens it (dp_tracker_open_prefix()), and then count in their own
 * sampling intervals.  With 1 s aggregations and a lag of 2.55 s (a 2.5 s
 * poll interval), the pass at t that closes the first aggregation opens
 * the second, [t - 2.55, t - 1.55) s, and the third; the fourth,
 * [t - 0.55, t + 0.45), opens at t + 1 s.  Samples timed t - 0.45 to
 * t - 0.06 s, 30 ms apart at one address, wait until then and are each the
 * first of their 50 ms interval in 8 or 9 of them (counted as updates).
 * Filed at once, they would all have gone to the third aggregation's last
 * interval: one update. */
static void samples_ahead_wait(unsigned poll_ms, unsigned said_ms) {
        struct rig *r = rig_start_saying(poll_ms, said_ms);
        struct dp_spsc *q = r->channels[0].queue;
        struct dp_counter_values v;
        double t;

        t = wait_aggregations(r, 1);
        for (int k = 0; k < 14; k++) {
                struct dp_sample s = {
                        .time = (uint64_t) ((t - 0.45 + 0.03 * k) * 1e9),
                        .vaddr = (uint64_t) (uintptr_t) &r->area[0],
                        .pid = (uint32_t) getpid(),
                        .tid = (uint32_t) getpid(),
                };

                ck_assert_int_eq(dp_spsc_push(q, &s), 0);
        }
        dp_spsc_publish(q);
        (void) wait_aggregations(r, 2);
        ck_assert_double_lt(drained_within(r, 0, 5), 5);
        dp_counters_snapshot(&r->channels[0].stats, &v);
        ck_assert_uint_eq(v.v[DP_C_MATCH], 14);
        ck_assert_msg(v.v[DP_C_UPDATE] >= 8 && v.v[DP_C_UPDATE] <= 9, "%llu updates",
                      (unsigned long long) v.v[DP_C_UPDATE]);
        rig_free(r);
}

START_TEST(test_samples_ahead_wait_for_their_aggregation) {
        samples_ahead_wait(2500, 0);
}
END_TEST

/* The same lag when the configuration says 100 ms but the readers say they
 * poll only every 2.5 s (a quiet machine): what they bring late still counts
 * in its own aggregation. */
START_TEST(test_lag_follows_the_slowest_reader) {
        samples_ahead_wait(100, 2500);
}
END_TEST

/* Whether channel @i's poke fd was written since the last look (and clears it). */
static bool poked(struct rig *r, size_t i) {
        eventfd_t value;

        ck_assert_int_ge(r->channels[i].poke_fd, 0);
        return eventfd_read(r->channels[i].poke_fd, &value) == 0 && value > 0;
}

/* Waits up to @limit seconds for every channel's cap to be @cap_ms. */
static bool capped_within(struct rig *r, unsigned cap_ms, double limit) {
        for (double t0 = now_s(); now_s() - t0 < limit; sleep_s(0.005)) {
                size_t n = 0;

                for (size_t i = 0; i < CHANNELS; i++)
                        n += atomic_load(&r->channels[i].poll_cap_ms) == cap_ms;
                if (n == CHANNELS)
                        return true;
        }
        return false;
}

/* Nobody looks: readers that say they sleep 5 s are left to it.  A query
 * (tracker_thread_want_fresh()) caps them at a second at once, and pokes
 * each awake, since each sleeps longer than that; another query changes
 * nothing and pokes nobody. */
START_TEST(test_a_query_caps_and_pokes_sleeping_readers) {
        struct rig *r = rig_start_saying(100, 5000);

        wait_first_pass(r);
        ck_assert(capped_within(r, 0, 0.01));
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert(!poked(r, i));

        tracker_thread_want_fresh(r->tt);
        ck_assert_msg(capped_within(r, 1000, 0.5), "a query left the readers uncapped");
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert_msg(poked(r, i), "channel %zu's reader was not poked awake", i);

        tracker_thread_want_fresh(r->tt);
        sleep_s(0.1);
        ck_assert(capped_within(r, 1000, 0.01));
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert(!poked(r, i));
        rig_free(r);
}
END_TEST

/* Readers that already poll within the cap are capped but not poked. */
START_TEST(test_a_query_leaves_fast_readers_asleep) {
        struct rig *r = rig_start_saying(100, 500);

        wait_first_pass(r);
        tracker_thread_want_fresh(r->tt);
        ck_assert(capped_within(r, 1000, 0.5));
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert(!poked(r, i));
        rig_free(r);
}
END_TEST

static int most_accesses(const struct dp_tracker_snapshot *snap, void *userdata) {
        uint32_t *most = userdata;

        for (size_t i = 0; i < snap->nr_regions; i++)
                *most = DP_MAX(*most, snap->regions[i].last_nr_accesses);
        return 0;
}

/* Samples every 100 ms for 2.5 s (every aggregation has some, wherever
 * its edges fall), then sampling ends and the stop comes 2.5 s later (as
 * when a kdamond is restored in between): the last pass closes no
 * aggregation after the end of sampling, so the last one closed is one
 * with accesses, not an empty one that every region would show. */
START_TEST(test_no_empty_aggregations_after_sampling_ends) {
        struct rig *r = rig_start();
        uint32_t most = 0;

        wait_first_pass(r);
        for (double t0 = now_s(); now_s() - t0 < 2.5; sleep_s(0.1))
                produce(r, 0, 5);
        tracker_thread_sampling_ends(r->tt, (uint64_t) (now_s() * 1e9));
        sleep_s(2.5);
        tracker_thread_stop(r->tt);
        ck_assert_uint_eq(depth(r, 0), 0);
        ck_assert_int_eq(tracker_thread_with_snapshot(r->tt, most_accesses, &most), 0);
        ck_assert_msg(most > 0, "the last aggregation closed had no access in any region");
        rig_free(r);
}
END_TEST

/* Hints to DAMON every 300 ms hold the readers to that, not to a second,
 * and poke the sleeping ones at once; hints every 3 s hold them to the
 * second a look does, and none lets them sleep as they say again. */
START_TEST(test_hints_hold_readers_to_their_interval) {
        struct rig *r = rig_start_saying(100, 5000);

        wait_first_pass(r);
        ck_assert(capped_within(r, 0, 0.01));

        tracker_thread_give_hints(r->tt, 300);
        ck_assert_msg(capped_within(r, 300, 0.5), "hints every 300 ms left the readers at %u ms",
                      (unsigned) atomic_load(&r->channels[0].poll_cap_ms));
        for (size_t i = 0; i < CHANNELS; i++)
                ck_assert_msg(poked(r, i), "channel %zu's reader was not poked awake", i);

        tracker_thread_give_hints(r->tt, 3000);
        ck_assert(capped_within(r, 1000, 0.5));

        tracker_thread_give_hints(r->tt, 0);
        ck_assert_msg(capped_within(r, 0, 0.5), "without hints the readers stay capped");
        rig_free(r);
}
END_TEST

/* Readers that say they sleep 2.5 s while one queue fills at a steady 170
 * samples a second, a rate whose quarter queue (256) affords about half a
 * second's poll with the 1 s aggregation: they are capped and poked, then
 * poll as told (as readers do).  Once the measured rate has settled (two
 * seconds), the cap holds while the fill goes on: it never lapses, and the
 * pass-to-pass wobble of the rate moves it at most once (a loaded machine
 * may stall this loop and make one burst of a steady rate). */
START_TEST(test_a_steady_fill_keeps_its_cap_without_pokes) {
        struct rig *r = rig_start_saying(100, 2500);
        unsigned changes = 0, lapses = 0, pokes = 0, cap = 0;
        double t0, capped_at = 0;
        size_t produced = 0;

        wait_first_pass(r);
        for (t0 = now_s(); now_s() - t0 < 10; sleep_s(0.02)) {
                unsigned now_cap = atomic_load(&r->channels[1].poll_cap_ms);
                size_t due = (size_t) ((now_s() - t0) * 170);
                bool settled = capped_at > 0 && now_s() - capped_at > 2;

                produce(r, 0, due - produced);
                produced = due;
                if (now_cap != cap) {
                        changes += settled;
                        lapses += settled && now_cap == 0;
                        for (size_t i = 0; i < CHANNELS; i++)
                                channel_set_poll_ms(&r->channels[i], now_cap ? now_cap : 2500);
                }
                if (now_cap && capped_at == 0)
                        capped_at = now_s();
                cap = now_cap;
                for (size_t i = 0; i < CHANNELS; i++)
                        pokes += poked(r, i) && settled;
        }
        ck_assert_msg(cap > 100 && cap < 2500, "the readers' cap is %u ms", cap);
        ck_assert_msg(capped_at > 0 && capped_at - t0 < 3, "capped only after %.1f s", capped_at - t0);
        ck_assert_msg(lapses == 0 && changes <= 1 && pokes <= CHANNELS,
                      "settled, the cap lapsed %u times, changed %u times and poked %u times", lapses, changes, pokes);
        rig_free(r);
}
END_TEST

static Suite *tracker_thread_suite(void) {
        Suite *s = suite_create("tracker-thread");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_sleeps_until_due);
        tcase_add_test(tc, test_half_full_wakes_it);
        tcase_add_test(tc, test_stop_does_not_wait_out_the_sleep);
        tcase_add_test(tc, test_idle_until_a_batch);
        tcase_add_test(tc, test_snapshots_are_announced);
        tcase_add_test(tc, test_a_busy_queue_caps_the_lag);
        tcase_add_test(tc, test_samples_ahead_wait_for_their_aggregation);
        tcase_add_test(tc, test_lag_follows_the_slowest_reader);
        tcase_add_test(tc, test_a_query_caps_and_pokes_sleeping_readers);
        tcase_add_test(tc, test_a_query_leaves_fast_readers_asleep);
        tcase_add_test(tc, test_hints_hold_readers_to_their_interval);
        tcase_add_test(tc, test_no_empty_aggregations_after_sampling_ends);
        tcase_add_test(tc, test_a_steady_fill_keeps_its_cap_without_pokes);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(tracker_thread_suite());
}
