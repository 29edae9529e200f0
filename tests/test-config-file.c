/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "time-util.h"
#include "config.h"
#include "macro.h"

#include "check-main.h"
#include "config-messages.h"
#include "test-tree.h"

static const char *fixtures(void) {
        const char *d = getenv("DP_CONFIG_FIXTURES");

        ck_assert_msg(d, "DP_CONFIG_FIXTURES is not set");
        return d;
}

/* tests/config/NAME as the build's paths see it, at tmp_root/NAME: its main
 * file at DP_CONFIG_MAIN_FILE (which follows meson's sysconfdir), its drop-in
 * directories where they always are; each a symlink into the fixture. */
static void link_into(const char *rel, const char *target) {
        char path[PATH_MAX];

        ck_assert((size_t) snprintf(path, sizeof(path), "%s/%s", tmp_root, rel) < sizeof(path));
        for (char *p = path + strlen(tmp_root) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                mkdir(path, 0755);
                *p = '/';
        }
        ck_assert_int_eq(symlink(target, path), 0);
}

static void views_setup(void) {
        static const char *const names[] = { "dropins", "errors" };
        static const char *const dirs[] = { "etc", "run", "usr/local/lib", "usr/lib" };
        char rel[PATH_MAX], target[PATH_MAX];

        test_tree_make("/tmp/test-config-file-XXXXXX");
        for (size_t i = 0; i < DP_ARRAY_SIZE(names); i++) {
                snprintf(rel, sizeof(rel), "%s%s", names[i], DP_CONFIG_MAIN_FILE);
                snprintf(target, sizeof(target), "%s/%s/etc/damon-perfd.conf", fixtures(), names[i]);
                link_into(rel, target);
                for (size_t d = 0; d < DP_ARRAY_SIZE(dirs); d++) {
                        snprintf(target, sizeof(target), "%s/%s/%s/" DP_CONFIG_DROPIN_DIR_NAME, fixtures(), names[i],
                                 dirs[d]);
                        snprintf(rel, sizeof(rel), "%s/%s/" DP_CONFIG_DROPIN_DIR_NAME, names[i], dirs[d]);
                        if (access(target, F_OK) == 0)
                                link_into(rel, target);
                }
        }
}

/* Parses one [Section] Key=Value on top of the defaults. */
static int parse_one(const char *section, const char *assignment, struct dp_config *c, struct messages *m) {
        char text[1024];

        snprintf(text, sizeof(text), "[%s]\n%s\n", section, assignment);
        dp_config_defaults(c);
        memset(m, 0, sizeof(*m));
        return dp_config_parse_text(c, text, strlen(text), "test.conf", collect, m);
}

static void assert_same(const struct dp_config *a, const struct dp_config *b) {
        ck_assert_str_eq(a->source, b->source);
        ck_assert_str_eq(a->cpus, b->cpus);
        ck_assert_uint_eq(a->sample_period, b->sample_period);
        ck_assert_uint_eq(a->ring_pages, b->ring_pages);
        ck_assert_uint_eq(a->queue_capacity, b->queue_capacity);
        ck_assert_uint_eq(a->poll_ms, b->poll_ms);
        ck_assert_int_eq(a->target_mode, b->target_mode);
        ck_assert_uint_eq(a->n_pids, b->n_pids);
        for (size_t i = 0; i < a->n_pids; i++)
                ck_assert_uint_eq(a->pids[i], b->pids[i]);
        ck_assert_uint_eq(a->max_targets, b->max_targets);
        ck_assert_uint_eq(a->min_nr_regions, b->min_nr_regions);
        ck_assert_uint_eq(a->max_nr_regions, b->max_nr_regions);
        ck_assert_uint_eq(a->sample_interval_us, b->sample_interval_us);
        ck_assert_uint_eq(a->aggr_interval_us, b->aggr_interval_us);
        ck_assert_uint_eq(a->maps_refresh_us, b->maps_refresh_us);
        ck_assert_int_eq(a->damon_mode, b->damon_mode);
        ck_assert_str_eq(a->damon_root, b->damon_root);
        ck_assert_str_eq(a->damon_state_file, b->damon_state_file);
        ck_assert_int_eq(a->damon_kdamond, b->damon_kdamond);
        ck_assert_uint_eq(a->damon_context, b->damon_context);
        ck_assert_uint_eq(a->damon_hint_interval_us, b->damon_hint_interval_us);
        ck_assert_uint_eq(a->damon_max_targets, b->damon_max_targets);
        ck_assert_int_eq(a->damon_goal, b->damon_goal);
        ck_assert_uint_eq(a->damon_goal_target, b->damon_goal_target);
        ck_assert_str_eq(a->api_socket, b->api_socket);
        ck_assert_str_eq(a->api_socket_group, b->api_socket_group);
}

START_TEST(test_timespan_parse) {
        static const struct {
                const char *text;
                uint64_t usec;
        } good[] = {
                { "0", 0 }, { "5000us", 5000 }, { "7usec", 7 }, { "100ms", 100000 }, { "3msec", 3000 },
                { "1s", 1000000 }, { "2sec", 2000000 }, { "1", 1000000 }, { " 15 ", 15000000 },
                { "2min", 120000000 }, { "1m", 60000000 }, { "1h", 3600000000ull }, { "2hr", 7200000000ull },
                { "1s 500ms", 1500000 }, { "1s500ms", 1500000 }, { "1h 2min 3s 4ms 5us", 3723004005ull },
                { "10 ms", 10000 }, { "1min 30s", 90000000 }, { "90s", 90000000 },
                /* Fractions, as systemd's parse_sec(): a bare one is seconds. */
                { "1.5", 1500000 }, { "1.5s", 1500000 }, { "0.25min", 15000000 }, { ".5s", 500000 },
                { "2.5ms", 2500 }, { "1.5h", 5400000000ull }, { "0.000001", 1 }, { "1.5 s", 1500000 },
                { "1.5s 250ms", 1750000 }, { "0.5min 0.5s", 30500000 }, { "3.0", 3000000 },
                /* Past the microsecond the rest is dropped, as systemd does. */
                { "0.0000019", 1 }, { "1.5us", 1 }, { "0.1234567ms", 123 },
        };
        static const char *const bad[] = {
                "", " ", "ms", "1x", "1 s s", "-1s", "1s,2ms", "s1", "1 parsec", "-1.5", "+1", "1.5.5", "5.",
                ".", ".s", "1..5", "1,5s", "1.5x", "0x10", "1e3", "1.-5", "1.5 .", "nan", "inf", "1s -1s",
        };
        uint64_t us;

        for (size_t i = 0; i < DP_ARRAY_SIZE(good); i++) {
                us = 12345;
                ck_assert_msg(dp_timespan_parse(good[i].text, &us) == 0, "'%s' refused", good[i].text);
                ck_assert_msg(us == good[i].usec, "'%s' gave %llu", good[i].text, (unsigned long long) us);
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(bad); i++) {
                us = 12345;
                ck_assert_msg(dp_timespan_parse(bad[i], &us) == -EINVAL, "'%s' accepted", bad[i]);
                ck_assert_uint_eq(us, 12345);
        }
        ck_assert_int_eq(dp_timespan_parse("18446744073709551616us", &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse("18446744073709551615us 1us", &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse("99999999999999h", &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse("5124095576.1h", &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse("18446744073709.551615s", &us), 0);
        ck_assert_uint_eq(us, UINT64_MAX);
        ck_assert_int_eq(dp_timespan_parse("18446744073709.551616s", &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse("18446744073709551616.5us", &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse(NULL, &us), -EINVAL);
        ck_assert_int_eq(dp_timespan_parse("1s", NULL), -EINVAL);

        /* Within limits: the command lines' --duration. */
        us = 7;
        ck_assert_int_eq(dp_timespan_parse_in("1.5", 0, 10 * USEC_PER_SEC, &us), 0);
        ck_assert_uint_eq(us, 1500000);
        ck_assert_int_eq(dp_timespan_parse_in("10s", 0, 10 * USEC_PER_SEC, &us), 0);
        ck_assert_uint_eq(us, 10000000);
        ck_assert_int_eq(dp_timespan_parse_in("1ms", USEC_PER_MSEC, 10 * USEC_PER_SEC, &us), 0);
        ck_assert_uint_eq(us, 1000);
        us = 7;
        ck_assert_int_eq(dp_timespan_parse_in("10.000001s", 0, 10 * USEC_PER_SEC, &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse_in("999us", USEC_PER_MSEC, 10 * USEC_PER_SEC, &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse_in("99999999999999h", 0, UINT64_MAX, &us), -ERANGE);
        ck_assert_int_eq(dp_timespan_parse_in("soon", 0, UINT64_MAX, &us), -EINVAL);
        ck_assert_int_eq(dp_timespan_parse_in("1s", 0, UINT64_MAX, NULL), -EINVAL);
        ck_assert_uint_eq(us, 7);
}
END_TEST

START_TEST(test_timespan_format) {
        static const uint64_t values[] = { 0, 1, 999, 1000, 5000, 100000, 1000000, 1500000, 60000000,
                                           3723004005ull, UINT64_MAX };
        char buf[128];
        uint64_t back;

        ck_assert_int_eq(dp_timespan_format(0, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0");
        ck_assert_int_eq(dp_timespan_format(1500000, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "1s 500ms");
        ck_assert_int_eq(dp_timespan_format(3723004005ull, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "1h 2min 3s 4ms 5us");
        ck_assert_int_eq(dp_timespan_format(100000, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "100ms");
        ck_assert_int_eq(dp_timespan_format(1500000, buf, 5), -ENOBUFS);
        ck_assert_int_eq(dp_timespan_format(0, buf, 1), -ENOBUFS);
        for (size_t i = 0; i < DP_ARRAY_SIZE(values); i++) {
                ck_assert_int_eq(dp_timespan_format(values[i], buf, sizeof(buf)), 0);
                ck_assert_int_eq(dp_timespan_parse(buf, &back), 0);
                ck_assert_uint_eq(back, values[i]);
        }
}
END_TEST

START_TEST(test_every_key_good) {
        struct dp_config c;
        struct messages m;
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/good.conf", fixtures());
        memset(&m, 0, sizeof(m));
        ck_assert_int_eq(dp_config_load(&c, NULL, path, collect, &m), 0);
        ck_assert_uint_eq(m.n, 0);
        ck_assert_str_eq(c.source, "event:perf::page-faults");
        ck_assert_str_eq(c.cpus, "0-1,3");
        ck_assert_uint_eq(c.sample_period, 1000);
        ck_assert_uint_eq(c.ring_pages, 128);
        ck_assert_uint_eq(c.queue_capacity, 1024);
        ck_assert_uint_eq(c.poll_ms, 250);
        ck_assert_int_eq(c.target_mode, DP_TARGETS_PIDS);
        ck_assert_uint_eq(c.n_pids, 3);
        ck_assert_uint_eq(c.pids[0], 1);
        ck_assert_uint_eq(c.pids[2], 4242);
        ck_assert_uint_eq(c.max_targets, 7);
        ck_assert_uint_eq(c.min_nr_regions, 20);
        ck_assert_uint_eq(c.max_nr_regions, 2000);
        ck_assert_uint_eq(c.sample_interval_us, 10000);
        ck_assert_uint_eq(c.aggr_interval_us, 200000);
        ck_assert_uint_eq(c.maps_refresh_us, 2500000);
        ck_assert_int_eq(c.damon_mode, DP_DAMON_ATTACH);
        ck_assert_str_eq(c.damon_root, "/tmp/fake-damon/admin");
        ck_assert_str_eq(c.damon_state_file, "/run/test/damon.state");
        ck_assert_int_eq(c.damon_kdamond, 2);
        ck_assert_uint_eq(c.damon_context, 1);
        ck_assert_uint_eq(c.damon_hint_interval_us, 2000000);
        ck_assert_uint_eq(c.damon_max_targets, 3);
        ck_assert_int_eq(c.damon_goal, DP_DAMON_GOAL_HOT_FRACTION);
        ck_assert_uint_eq(c.damon_goal_target, 2500);
        ck_assert_str_eq(c.api_socket, "/run/test/dp.sock");
        ck_assert_str_eq(c.api_socket_group, "damon");
}
END_TEST

START_TEST(test_key_values) {
        static const struct {
                const char *section, *assignment;
                bool ok;
        } cases[] = {
                { "Sampling", "Source=auto", true }, { "Sampling", "Source=ibs", true },
                { "Sampling", "Source=pebs", true }, { "Sampling", "Source=spe", true },
                { "Sampling", "Source=pagefault", true }, { "Sampling", "Source=", true },
                { "Sampling", "Source=event:", false }, { "Sampling", "Source=IBS", false },
                { "Sampling", "Source=event:a b", false }, { "Sampling", "Source=magic", false },
                { "Sampling", "CPUs=0", true }, { "Sampling", "CPUs=", true }, { "Sampling", "CPUs=0-3,8", true },
                { "Sampling", "CPUs=3-1", false }, { "Sampling", "CPUs=0 1", false },
                { "Sampling", "CPUs=4096", false }, { "Sampling", "CPUs=x", false },
                { "Sampling", "SamplePeriod=0", true }, { "Sampling", "SamplePeriod=", true },
                { "Sampling", "SamplePeriod=9223372036854775807", true },
                { "Sampling", "SamplePeriod=9223372036854775808", false },
                { "Sampling", "SamplePeriod=-1", false }, { "Sampling", "SamplePeriod=1k", false },
                { "Sampling", "RingPages=1", true }, { "Sampling", "RingPages=65536", true },
                { "Sampling", "RingPages=0", false }, { "Sampling", "RingPages=3", false },
                { "Sampling", "RingPages=131072", false }, { "Sampling", "RingPages=", false },
                { "Sampling", "QueueSize=64", true }, { "Sampling", "QueueSize=16777216", true },
                { "Sampling", "QueueSize=32", false }, { "Sampling", "QueueSize=1000", false },
                { "Sampling", "QueueSize=33554432", false },
                { "Sampling", "PollIntervalSec=1ms", true }, { "Sampling", "PollIntervalSec=10", true },
                { "Sampling", "PollIntervalSec=0", false }, { "Sampling", "PollIntervalSec=1500us", false },
                { "Sampling", "PollIntervalSec=11s", false }, { "Sampling", "PollIntervalSec=fast", false },
                { "Tracking", "Targets=all", true }, { "Tracking", "Targets=physical", true },
                { "Tracking", "Targets=", true }, { "Tracking", "Targets=1 2\t3", true },
                { "Tracking", "Targets=0", false }, { "Tracking", "Targets=all 1", false },
                { "Tracking", "Targets=1,2", false }, { "Tracking", "Targets=2147483648", false },
                { "Tracking", "MaxTargets=1", true }, { "Tracking", "MaxTargets=65536", true },
                { "Tracking", "MaxTargets=0", false }, { "Tracking", "MaxTargets=65537", false },
                { "Tracking", "MinRegions=3", true }, { "Tracking", "MinRegions=2", false },
                { "Tracking", "MaxRegions=1048576", true }, { "Tracking", "MaxRegions=1048577", false },
                { "Tracking", "SampleIntervalSec=1us", true }, { "Tracking", "SampleIntervalSec=1min", true },
                { "Tracking", "SampleIntervalSec=0", false }, { "Tracking", "SampleIntervalSec=61s", false },
                { "Tracking", "AggregationIntervalSec=1h", true },
                { "Tracking", "AggregationIntervalSec=0", false },
                { "Tracking", "AggregationIntervalSec=1h 1us", false },
                { "Tracking", "MapsRefreshSec=24h", true }, { "Tracking", "MapsRefreshSec=25h", false },
                { "Tracking", "MapsRefreshSec=soon", false },
                { "API", "Socket=/run/x.sock", true }, { "API", "Socket=", true },
                { "API", "Socket=x.sock", false },
                { "API", "Socket=/0123456789012345678901234567890123456789012345678901234567890123456789"
                         "01234567890123456789012345678901234567890", false },
                { "API", "SocketGroup=wheel", true }, { "API", "SocketGroup=", true },
                { "API", "SocketGroup=100", true }, { "API", "SocketGroup=a b", false },
                { "API", "SocketGroup=-x", false },
                { "DAMON", "Mode=own", true }, { "DAMON", "Mode=attach", true },
                { "DAMON", "Mode=off", true }, { "DAMON", "Mode=", true }, { "DAMON", "Mode=on", false },
                { "DAMON", "SysfsRoot=/tmp/x", true }, { "DAMON", "SysfsRoot=", true },
                { "DAMON", "SysfsRoot=tmp/x", false }, { "DAMON", "SysfsRoot=/a/../b", false },
                { "DAMON", "StateFile=/run/x", true }, { "DAMON", "StateFile=x", false },
                { "DAMON", "Kdamond=0", true }, { "DAMON", "Kdamond=", true },
                { "DAMON", "Kdamond=-1", false }, { "DAMON", "Kdamond=65536", false },
                { "DAMON", "Context=0", true }, { "DAMON", "Context=x", false },
                { "DAMON", "HintIntervalSec=100ms", true }, { "DAMON", "HintIntervalSec=1h", true },
                { "DAMON", "HintIntervalSec=99ms", false }, { "DAMON", "HintIntervalSec=2h", false },
                { "DAMON", "MaxTargets=1", true }, { "DAMON", "MaxTargets=64", true },
                { "DAMON", "MaxTargets=0", false }, { "DAMON", "MaxTargets=65", false },
                { "DAMON", "QuotaGoal=none", true }, { "DAMON", "QuotaGoal=hot-fraction", true },
                { "DAMON", "QuotaGoal=", true }, { "DAMON", "QuotaGoal=cold", false },
                { "DAMON", "QuotaGoalTarget=1", true }, { "DAMON", "QuotaGoalTarget=10000", true },
                { "DAMON", "QuotaGoalTarget=0", false }, { "DAMON", "QuotaGoalTarget=10001", false },
        };
        struct dp_config c;
        struct messages m;

        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                int r = parse_one(cases[i].section, cases[i].assignment, &c, &m);

                ck_assert_msg((r == 0) == cases[i].ok, "[%s] %s: got %d", cases[i].section,
                              cases[i].assignment, r);
                ck_assert_uint_eq(m.n_errors, cases[i].ok ? 0 : 1);
                if (!cases[i].ok) {
                        ck_assert_int_eq(r, -EINVAL);
                        ck_assert_msg(strncmp(m.text[0], "test.conf:2: ", 13) == 0, "%s", m.text[0]);
                        ck_assert_msg(strstr(m.text[0], ": expected "), "%s", m.text[0]);
                }
        }
}
END_TEST

START_TEST(test_value_effects) {
        struct dp_config c;
        struct messages m;

        ck_assert_int_eq(parse_one("Sampling", "PollIntervalSec=1s 500ms", &c, &m), 0);
        ck_assert_uint_eq(c.poll_ms, 1500);
        ck_assert_int_eq(parse_one("Tracking", "Targets=physical", &c, &m), 0);
        ck_assert_int_eq(c.target_mode, DP_TARGETS_PHYS);
        ck_assert_int_eq(parse_one("API", "Socket=", &c, &m), 0);
        ck_assert_str_eq(c.api_socket, DP_CONFIG_DEFAULT_SOCKET);
        ck_assert_int_eq(parse_one("Sampling", "Source=", &c, &m), 0);
        ck_assert_str_eq(c.source, "auto");

        /* Later assignments win; an empty Targets= resets to the default. */
        static const char text[] = "[Tracking]\nTargets=5 6\nTargets=\n[Sampling]\nRingPages=8\nRingPages=16\n";
        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, text, strlen(text), "x", NULL, NULL), 0);
        ck_assert_int_eq(c.target_mode, DP_TARGETS_ALL);
        ck_assert_uint_eq(c.n_pids, 0);
        ck_assert_uint_eq(c.ring_pages, 16);

        /* 64 pids fit, 65 do not. */
        char many[1024] = "Targets=";
        for (int i = 1; i <= 64; i++)
                sprintf(many + strlen(many), "%d ", i);
        ck_assert_int_eq(parse_one("Tracking", many, &c, &m), 0);
        ck_assert_uint_eq(c.n_pids, 64);
        strcat(many, "65");
        ck_assert_int_eq(parse_one("Tracking", many, &c, &m), -EINVAL);
}
END_TEST

START_TEST(test_syntax) {
        static const char text[] =
                "# comment\n"
                "; comment\n"
                "\n"
                "   [Sampling]   \n"
                "  RingPages   =   32  \r\n"
                "[Sampling\n"
                "just words\n"
                "=5\n"
                "[]\n"
                "[DAMON]\n"
                "Ops=paddr\n";
        static const char outside[] = "RingPages=8\n[Sampling]\nQueueSize=128";
        static const char nul[] = "[Sampling]\nRing\0Pages=8\nQueueSize=128\n";
        struct dp_config c;
        struct messages m = {};

        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, text, strlen(text), "s.conf", collect, &m), -EINVAL);
        ck_assert_uint_eq(c.ring_pages, 32);
        ck_assert_uint_eq(m.n, 5);
        ck_assert_str_eq(m.text[0], "s.conf:6: expected a section header such as [Sampling], got '[Sampling'");
        ck_assert_str_eq(m.text[1], "s.conf:7: expected Key=Value or [Section], got 'just words'");
        ck_assert_str_eq(m.text[2], "s.conf:8: expected a key name before '='");
        ck_assert_str_eq(m.text[3], "s.conf:9: expected a section header such as [Sampling], got '[]'");
        ck_assert_str_eq(m.text[4], "s.conf:11: unknown key Ops= in section [DAMON], ignoring");
        ck_assert_int_eq(m.severity[4], DP_CONFIG_WARNING);
        ck_assert_uint_eq(m.n_errors, 4);

        memset(&m, 0, sizeof(m));
        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, outside, strlen(outside), "o.conf", collect, &m), -EINVAL);
        ck_assert_str_eq(m.text[0], "o.conf:1: expected a [Section] header before 'RingPages=8'");
        ck_assert_uint_eq(c.ring_pages, 128);          /* the default */
        ck_assert_uint_eq(c.queue_capacity, 128);      /* last line without a newline */

        memset(&m, 0, sizeof(m));
        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, nul, sizeof(nul) - 1, "n.conf", collect, &m), -EINVAL);
        ck_assert_str_eq(m.text[0], "n.conf:2: expected text, found a NUL byte");
        ck_assert_uint_eq(c.queue_capacity, 128);

        /* Nothing at all is fine. */
        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, "", 0, "e.conf", NULL, NULL), 0);
}
END_TEST

START_TEST(test_dropin_order) {
        char root[PATH_MAX + 16], expect[PATH_MAX + 256];
        static const char *const tails[] = {
                DP_CONFIG_MAIN_FILE,
                "/run/damon-perfd.conf.d/10-early.conf",
                "/etc/damon-perfd.conf.d/50-ring.conf",
                "/usr/local/lib/damon-perfd.conf.d/60-local.conf",
                "/usr/lib/damon-perfd.conf.d/90-last.conf",
        };
        struct dp_config c;
        struct messages m = {};
        char **paths = NULL;
        size_t n = 0;

        snprintf(root, sizeof(root), "%s/dropins", tmp_root);
        ck_assert_int_eq(dp_config_files_list(root, NULL, &paths, collect, &m), 0);
        for (; paths[n]; n++) {
                ck_assert_uint_lt(n, DP_ARRAY_SIZE(tails));
                snprintf(expect, sizeof(expect), "%s%s", root, tails[n]);
                ck_assert_str_eq(paths[n], expect);
        }
        ck_assert_uint_eq(n, DP_ARRAY_SIZE(tails));
        dp_config_files_free(paths);

        ck_assert_int_eq(dp_config_load(&c, root, NULL, collect, &m), 0);
        ck_assert_uint_eq(m.n, 0);
        ck_assert_uint_eq(c.ring_pages, 16);            /* /etc masks /run, /usr/local/lib, /usr/lib */
        ck_assert_uint_eq(c.queue_capacity, 256);       /* 60-local after the main file */
        ck_assert_uint_eq(c.max_targets, 40);           /* 90-last is applied last */

        /* --config: that file alone, no drop-ins. */
        snprintf(expect, sizeof(expect), "%s/dropins/etc/damon-perfd.conf", fixtures());
        ck_assert_int_eq(dp_config_load(&c, root, expect, collect, &m), 0);
        ck_assert_uint_eq(c.ring_pages, 2);
        ck_assert_uint_eq(c.queue_capacity, 128);
        ck_assert_uint_eq(c.max_targets, 10);
}
END_TEST

START_TEST(test_missing_and_unreadable) {
        struct dp_config c, defaults;
        struct messages m = {};
        char root[PATH_MAX], path[PATH_MAX], expect[PATH_MAX + 64];
        char **paths = NULL;

        /* No files at all: the defaults, silently. */
        snprintf(root, sizeof(root), "%s/does-not-exist", fixtures());
        ck_assert_int_eq(dp_config_files_list(root, NULL, &paths, collect, &m), 0);
        ck_assert_ptr_null(paths[0]);
        dp_config_files_free(paths);
        memset(&c, 0x5a, sizeof(c));
        ck_assert_int_eq(dp_config_load(&c, root, NULL, collect, &m), 0);
        ck_assert_uint_eq(m.n, 0);
        dp_config_defaults(&defaults);
        assert_same(&c, &defaults);

        /* A file named with --config must exist. */
        snprintf(path, sizeof(path), "%s/does-not-exist.conf", fixtures());
        ck_assert_int_eq(dp_config_load(&c, NULL, path, collect, &m), -ENOENT);
        snprintf(expect, sizeof(expect), "%s: cannot open: No such file or directory", path);
        ck_assert_str_eq(m.text[0], expect);

        /* A main file that cannot be read is an error, not the defaults. */
        memset(&m, 0, sizeof(m));
        snprintf(root, sizeof(root), "%s/dropins/etc/damon-perfd.conf.d", fixtures());
        ck_assert_int_lt(dp_config_load(&c, NULL, root, collect, &m), 0);
        ck_assert_uint_eq(m.n_errors, 1);
        snprintf(expect, sizeof(expect), "%s: cannot read: Is a directory", root);
        ck_assert_str_eq(m.text[0], expect);
}
END_TEST

START_TEST(test_error_messages) {
        char root[PATH_MAX + 16], main_file[PATH_MAX + 256], dropin[PATH_MAX + 64], expect[PATH_MAX + 512];
        struct dp_config c, before;
        struct messages m = {};

        snprintf(root, sizeof(root), "%s/errors", tmp_root);
        snprintf(main_file, sizeof(main_file), "%s%s", root, DP_CONFIG_MAIN_FILE);
        snprintf(dropin, sizeof(dropin), "%s/etc/damon-perfd.conf.d/20-api.conf", root);
        dp_config_defaults(&c);
        before = c;
        ck_assert_int_eq(dp_config_load(&c, root, NULL, collect, &m), -EINVAL);
        ck_assert_uint_eq(m.n, 6);
        ck_assert_uint_eq(m.n_errors, 3);
        assert_same(&c, &before);       /* a rejected configuration changes nothing */

        snprintf(expect, sizeof(expect), "%s:2: RingPages=3: expected a power of two between 1 and 65536", main_file);
        ck_assert_str_eq(m.text[0], expect);
        ck_assert_int_eq(m.severity[0], DP_CONFIG_ERROR);
        snprintf(expect, sizeof(expect), "%s:5: unknown section [Nonsense], ignoring its keys", main_file);
        ck_assert_str_eq(m.text[1], expect);
        ck_assert_int_eq(m.severity[1], DP_CONFIG_WARNING);
        snprintf(expect, sizeof(expect), "%s:8: unknown key Colour= in section [Tracking], ignoring", main_file);
        ck_assert_str_eq(m.text[2], expect);
        ck_assert_int_eq(m.severity[2], DP_CONFIG_WARNING);
        snprintf(expect, sizeof(expect), "%s:9: MinRegions=2: expected a whole number between 3 and 1048576",
                 main_file);
        ck_assert_str_eq(m.text[3], expect);
        snprintf(expect, sizeof(expect),
                 "%s:2: Socket=relative/path: expected an absolute socket path of at most 107 bytes "
                 "(empty: the default)", dropin);
        ck_assert_str_eq(m.text[4], expect);
        ck_assert_int_eq(m.severity[4], DP_CONFIG_ERROR);
        snprintf(expect, sizeof(expect), "%s:4: unknown key Ops= in section [DAMON], ignoring", dropin);
        ck_assert_str_eq(m.text[5], expect);
        ck_assert_int_eq(m.severity[5], DP_CONFIG_WARNING);
}
END_TEST

START_TEST(test_validation_after_merge) {
        static const char text[] = "[Tracking]\nMinRegions=500\nMaxRegions=100\n";
        char path[] = "/tmp/test-config-file-XXXXXX";
        struct messages m = {};
        struct dp_config c;
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        ck_assert_int_eq(dp_config_load(&c, NULL, path, collect, &m), -EINVAL);
        unlink(path);
        ck_assert_uint_eq(m.n_errors, 1);
        ck_assert_msg(strstr(m.text[0], ": invalid combination of settings: regions need"), "%s", m.text[0]);
}
END_TEST

static void round_trip(const struct dp_config *c) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0;
        struct dp_config back;
        struct messages m = {};
        FILE *f = open_memstream(&text, &size);

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(dp_config_format(c, f), 0);
        fclose(f);
        memset(&back, 0x5a, sizeof(back));
        dp_config_defaults(&back);
        ck_assert_int_eq(dp_config_parse_text(&back, text, size, "printed", collect, &m), 0);
        ck_assert_uint_eq(m.n, 0);
        assert_same(&back, c);
        /* Every key is printed. */
        ck_assert_ptr_nonnull(strstr(text, "\nSampleIntervalSec="));
        ck_assert_ptr_nonnull(strstr(text, "\nSocketGroup="));
}

START_TEST(test_round_trip) {
        struct dp_config c;
        struct messages m = {};
        char path[PATH_MAX];

        dp_config_defaults(&c);
        round_trip(&c);
        snprintf(path, sizeof(path), "%s/good.conf", fixtures());
        ck_assert_int_eq(dp_config_load(&c, NULL, path, collect, &m), 0);
        round_trip(&c);
        c.target_mode = DP_TARGETS_PHYS;
        c.n_pids = 0;
        c.sample_interval_us = 1234567;
        c.poll_ms = 1001;
        round_trip(&c);
}
END_TEST

/* The shipped etc/damon-perfd.conf lists every key with its default,
 * commented out: uncommented, it must parse to exactly the defaults. */
START_TEST(test_shipped_file) {
        _cleanup_free_ char *shipped = NULL, *printed = NULL;
        char path[PATH_MAX], line[512];
        struct dp_config c, defaults;
        struct messages m = {};
        size_t shipped_size = 0, printed_size = 0;
        FILE *in, *out;

        snprintf(path, sizeof(path), "%s/../../etc/damon-perfd.conf", fixtures());
        in = fopen(path, "re");
        ck_assert_ptr_nonnull(in);
        out = open_memstream(&shipped, &shipped_size);
        ck_assert_ptr_nonnull(out);
        while (fgets(line, sizeof(line), in))
                fputs(line[0] == '#' && line[1] >= 'A' && line[1] <= 'Z' ? line + 1 : line, out);
        fclose(in);
        fclose(out);

        dp_config_defaults(&c);
        c.ring_pages = 2;       /* so that the test sees the file set it back */
        ck_assert_int_eq(dp_config_parse_text(&c, shipped, shipped_size, path, collect, &m), 0);
        ck_assert_uint_eq(m.n, 0);
        dp_config_defaults(&defaults);
        assert_same(&c, &defaults);

        out = open_memstream(&printed, &printed_size);
        ck_assert_ptr_nonnull(out);
        ck_assert_int_eq(dp_config_format(&defaults, out), 0);
        fclose(out);
        for (char *p = printed; *p; p = strchr(p, '\n') + 1) {
                size_t len = strcspn(p, "\n");

                snprintf(line, sizeof(line), "\n%.*s\n", (int) len, p);
                ck_assert_msg(strstr(shipped, line), "shipped file lacks '%.*s'", (int) len, p);
        }
}
END_TEST

static Suite *config_file_suite(void) {
        Suite *s = suite_create("config-file");
        TCase *tc = tcase_create("core"), *files = tcase_create("files");

        tcase_add_test(tc, test_timespan_parse);
        tcase_add_test(tc, test_timespan_format);
        tcase_add_test(tc, test_every_key_good);
        tcase_add_test(tc, test_key_values);
        tcase_add_test(tc, test_value_effects);
        tcase_add_test(tc, test_syntax);
        tcase_add_test(tc, test_missing_and_unreadable);
        tcase_add_test(tc, test_validation_after_merge);
        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_shipped_file);
        suite_add_tcase(s, tc);
        /* On trees laid out for this build's sysconfdir. */
        tcase_add_checked_fixture(files, views_setup, tree_teardown);
        tcase_add_test(files, test_dropin_order);
        tcase_add_test(files, test_error_messages);
        suite_add_tcase(s, files);
        return s;
}

int main(void) {
        return dp_check_run(config_file_suite());
}
