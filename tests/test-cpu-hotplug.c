/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>

#include "counters.h"
#include "cpu-hotplug.h"

#include "check-main.h"

static struct dp_cpu_status status(enum dp_cpu_state state, enum dp_cpu_step step, int error) {
        return (struct dp_cpu_status) { .state = state, .failed_step = step, .error = error };
}

/* Every state, offline and online: only an online CPU closed as offline reopens. */
START_TEST(test_decide_every_state) {
        for (enum dp_cpu_state st = DP_CPU_UNINIT; st < _DP_CPU_STATE_MAX; st++) {
                struct dp_cpu_status s = status(st, st == DP_CPU_ERROR ? DP_STEP_RUN : DP_STEP_NONE,
                                                st == DP_CPU_ERROR ? -EIO : 0);

                ck_assert_msg(dp_hotplug_decide(false, s) == DP_HOTPLUG_CLOSE, "%s offline", dp_cpu_state_name(st));
                ck_assert_msg(dp_hotplug_decide(true, s) == DP_HOTPLUG_KEEP, "%s online", dp_cpu_state_name(st));
        }
        /* Closed as offline: left alone while offline, reopened once back. */
        ck_assert_int_eq(dp_hotplug_decide(false, status(DP_CPU_ERROR, DP_STEP_OFFLINE, -ENODEV)), DP_HOTPLUG_KEEP);
        ck_assert_int_eq(dp_hotplug_decide(true, status(DP_CPU_ERROR, DP_STEP_OFFLINE, -ENODEV)), DP_HOTPLUG_REOPEN);
        /* Other errors wait for a reload, online; offline they become "offline" too. */
        for (enum dp_cpu_step step = DP_STEP_CREATE; step < DP_STEP_OFFLINE; step++) {
                ck_assert_int_eq(dp_hotplug_decide(true, status(DP_CPU_ERROR, step, -ENODEV)), DP_HOTPLUG_KEEP);
                ck_assert_int_eq(dp_hotplug_decide(false, status(DP_CPU_ERROR, step, -ENODEV)), DP_HOTPLUG_CLOSE);
        }
}
END_TEST

START_TEST(test_is_offline) {
        ck_assert(dp_hotplug_is_offline(status(DP_CPU_ERROR, DP_STEP_OFFLINE, -ENODEV)));
        ck_assert(!dp_hotplug_is_offline(status(DP_CPU_ERROR, DP_STEP_RUN, -ENODEV)));
        ck_assert(!dp_hotplug_is_offline(status(DP_CPU_RUNNING, DP_STEP_NONE, 0)));
        ck_assert_str_eq(dp_cpu_step_name(DP_STEP_OFFLINE), "offline");
}
END_TEST

/* A CPU's whole round trip through the real state machine, as the daemon
 * drives it: running, offline, ignored while offline, reopened, running. */
START_TEST(test_round_trip) {
        struct dp_cpu_stats s;
        struct dp_cpu_status st;

        dp_cpu_stats_init(&s);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_CREATED, DP_STEP_NONE, 0), DP_CPU_UNINIT);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_BOUND, DP_STEP_NONE, 0), DP_CPU_CREATED);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ENABLED, DP_STEP_NONE, 0), DP_CPU_BOUND);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_RUNNING, DP_STEP_NONE, 0), DP_CPU_ENABLED);
        ck_assert_int_eq(dp_hotplug_decide(true, dp_cpu_get_status(&s)), DP_HOTPLUG_KEEP);

        ck_assert_int_eq(dp_hotplug_decide(false, dp_cpu_get_status(&s)), DP_HOTPLUG_CLOSE);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ERROR, DP_STEP_OFFLINE, -ENODEV), DP_CPU_RUNNING);
        st = dp_cpu_get_status(&s);
        ck_assert_int_eq(st.state, DP_CPU_ERROR);
        ck_assert_int_eq(st.failed_step, DP_STEP_OFFLINE);
        ck_assert_int_eq(st.error, -ENODEV);
        ck_assert_int_eq(dp_hotplug_decide(false, st), DP_HOTPLUG_KEEP);
        ck_assert_int_eq(dp_hotplug_decide(false, st), DP_HOTPLUG_KEEP);

        ck_assert_int_eq(dp_hotplug_decide(true, st), DP_HOTPLUG_REOPEN);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_UNINIT, DP_STEP_NONE, 0), DP_CPU_ERROR);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_CREATED, DP_STEP_NONE, 0), DP_CPU_UNINIT);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_BOUND, DP_STEP_NONE, 0), DP_CPU_CREATED);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ENABLED, DP_STEP_NONE, 0), DP_CPU_BOUND);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_RUNNING, DP_STEP_NONE, 0), DP_CPU_ENABLED);
        ck_assert_int_eq(dp_hotplug_decide(true, dp_cpu_get_status(&s)), DP_HOTPLUG_KEEP);

        /* Reopening while the CPU went away again: open fails with ENODEV at
         * create, and the next look makes it "offline" once more. */
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_UNINIT, DP_STEP_NONE, 0), DP_CPU_RUNNING);
        ck_assert_int_eq(dp_cpu_transition(&s, DP_CPU_ERROR, DP_STEP_CREATE, -ENODEV), DP_CPU_UNINIT);
        ck_assert_int_eq(dp_hotplug_decide(false, dp_cpu_get_status(&s)), DP_HOTPLUG_CLOSE);
}
END_TEST

/* time_enabled as the reader sees it once a second. */
START_TEST(test_liveness) {
        struct dp_event_liveness l = {};

        /* The first reading has nothing to compare with. */
        ck_assert(!dp_event_liveness_stalled(&l, 0));
        ck_assert(!dp_event_liveness_stalled(&l, 1000000000));
        ck_assert(!dp_event_liveness_stalled(&l, 1000000001));
        /* Detached: it stands still, for good. */
        ck_assert(dp_event_liveness_stalled(&l, 1000000001));
        ck_assert(dp_event_liveness_stalled(&l, 1000000001));

        /* A reopened event starts afresh (the sampler resets the state). */
        l = (struct dp_event_liveness) {};
        ck_assert(!dp_event_liveness_stalled(&l, 1000000001));
        ck_assert(!dp_event_liveness_stalled(&l, 2000000000));
        ck_assert(dp_event_liveness_stalled(&l, 2000000000));
}
END_TEST

int main(void) {
        Suite *s = suite_create("cpu-hotplug");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_decide_every_state);
        tcase_add_test(tc, test_is_offline);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_liveness);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
