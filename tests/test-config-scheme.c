/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* [DAMON] Scheme= (lib/conf/config-scheme.c): every word, its canonical
 * print that parses back to the same scheme, each bad word refused with a
 * message naming the file, the line and the word, repeated lines and empty
 * resets as systemd's lists, and the checks against the other settings. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "config-keys.h"
#include "config-scheme.h"
#include "config.h"
#include "macro.h"

#include "check-main.h"
#include "config-messages.h"

static struct dp_damon_scheme parse_ok(const char *text) {
        struct dp_damon_scheme s;
        char why[256] = "";

        ck_assert_msg(dp_scheme_parse(text, &s, why, sizeof(why)) == 0, "'%s': %s", text, why);
        return s;
}

/* Printed, and the print parsed again, it is the same scheme. */
static void assert_round_trip(const struct dp_damon_scheme *s, const char *canonical) {
        char printed[2048], again[2048];
        struct dp_damon_scheme back;

        ck_assert_int_eq(dp_scheme_format(s, printed, sizeof(printed)), 0);
        ck_assert_str_eq(printed, canonical);
        back = parse_ok(printed);
        ck_assert_int_eq(dp_scheme_format(&back, again, sizeof(again)), 0);
        ck_assert_str_eq(again, printed);
        ck_assert_int_eq(back.action, s->action);
        ck_assert_uint_eq(back.n_filters, s->n_filters);
        ck_assert_uint_eq(back.n_goals, s->n_goals);
        ck_assert_int_eq(back.age.unit, s->age.unit);
        ck_assert_int_eq(back.nr_accesses.unit, s->nr_accesses.unit);
}

START_TEST(test_words) {
        struct dp_damon_scheme s = parse_ok(
                "  migrate_hot target_nid=1\tsz=4K-2G nr_accesses=10%-max age=5s-1min quota_ms=20 quota_bytes=128M "
                "quota_reset=1500ms weights=1,2,3 goal=hot_fraction:2500 goal=node_mem_free_bp:500:1 "
                "goal=some_mem_psi_us:1000 wmarks=free_mem_rate:5s:500:400:200 reject=!anon allow=memcg:/a/b "
                "reject=addr:0x1000-0x3000 allow=target:2 reject=young allow=hot ");

        ck_assert_int_eq(s.action, DP_SCHEME_MIGRATE_HOT);
        ck_assert_int_eq(s.target_nid, 1);
        ck_assert_uint_eq(s.sz.min, 4096);
        ck_assert_uint_eq(s.sz.max, 2ull << 30);
        ck_assert_int_eq(s.nr_accesses.unit, DP_UNIT_PERCENT);
        ck_assert_uint_eq(s.nr_accesses.min, 10);
        ck_assert_uint_eq(s.nr_accesses.max, UINT64_MAX);
        ck_assert_int_eq(s.age.unit, DP_UNIT_USEC);
        ck_assert_uint_eq(s.age.min, 5000000);
        ck_assert_uint_eq(s.age.max, 60000000);
        ck_assert_uint_eq(s.quota_ms, 20);
        ck_assert_uint_eq(s.quota_bytes, 128 << 20);
        ck_assert_uint_eq(s.quota_reset_ms, 1500);
        ck_assert_uint_eq(s.weight_nr_accesses, 2);
        ck_assert_uint_eq(s.n_goals, 3);
        ck_assert_int_eq(s.goals[1].metric, DP_GOAL_NODE_MEM_FREE_BP);
        ck_assert_uint_eq(s.goals[1].nid, 1);
        ck_assert(s.wmarks);
        ck_assert_uint_eq(s.wmarks_interval_us, 5000000);
        ck_assert_uint_eq(s.wmarks_low, 200);
        ck_assert_uint_eq(s.n_filters, 6);
        ck_assert(!s.filters[0].matching && !s.filters[0].allow);
        ck_assert_str_eq(s.filters[1].memcg_path, "/a/b");
        ck_assert_uint_eq(s.filters[2].end, 0x3000);
        ck_assert_uint_eq(s.filters[3].target_idx, 2);
        ck_assert_ptr_eq(dp_scheme_hot_filter(&s), &s.filters[5]);
        assert_round_trip(&s, "migrate_hot target_nid=1 sz=4K-2G nr_accesses=10%-max age=5s-1min quota_ms=20 "
                              "quota_bytes=128M quota_reset=1s500ms weights=1,2,3 goal=hot_fraction:2500 "
                              "goal=node_mem_free_bp:500:1 goal=some_mem_psi_us:1000 "
                              "wmarks=free_mem_rate:5s:500:400:200 reject=!anon allow=memcg:/a/b "
                              "reject=addr:0x1000-0x3000 allow=target:2 reject=young allow=hot");

        /* The defaults print as the action alone; every pattern as one spelling. */
        s = parse_ok("stat sz=0-max nr_accesses=0%-max age=0s-max wmarks=none");
        assert_round_trip(&s, "stat");
        s = parse_ok("pageout age=0-10 nr_accesses=0-0");
        assert_round_trip(&s, "pageout nr_accesses=0-0 age=0-10");
        s = parse_ok("lru_deprio age=0s-2s");
        assert_round_trip(&s, "lru_deprio age=0s-2s");
        /* Only the hot ranges, on kernels without allow filters too. */
        s = parse_ok("migrate_hot target_nid=0 reject=!hot");
        ck_assert_ptr_eq(dp_scheme_hot_filter(&s), &s.filters[0]);
        ck_assert(!s.filters[0].matching && !s.filters[0].allow);
        assert_round_trip(&s, "migrate_hot target_nid=0 reject=!hot");
        /* A node's memory, the daemon's to turn into address filters. */
        s = parse_ok("migrate_cold target_nid=1 reject=node:1 reject=!node:3 allow=node:0");
        ck_assert_ptr_eq(dp_scheme_node_filter(&s), &s.filters[0]);
        ck_assert_uint_eq(s.filters[1].nid, 3);
        ck_assert(!s.filters[1].matching);
        assert_round_trip(&s, "migrate_cold target_nid=1 reject=node:1 reject=!node:3 allow=node:0");
        s = parse_ok("pageout reject=hot");
        ck_assert_ptr_null(dp_scheme_node_filter(&s));
}
END_TEST

START_TEST(test_bad_words) {
        static const struct {
                const char *value, *message;
        } cases[] = {
                { "", "expected an action first" },
                { "reclaim", "word 'reclaim': expected an action first" },
                { "pageout age", "word 'age': expected KEY=VALUE" },
                { "pageout colour=red", "word 'colour=red': unknown key 'colour'" },
                { "pageout age=x", "word 'age=x': expected MIN-MAX" },
                { "pageout age=10-5", "word 'age=10-5': expected" },
                { "pageout age=max-5", "word 'age=max-5'" },
                { "pageout sz=4X-max", "word 'sz=4X-max'" },
                { "pageout sz=99999999T-max", "word 'sz=99999999T-max'" },
                { "pageout nr_accesses=5%-200%", "word 'nr_accesses=5%-200%'" },
                { "pageout nr_accesses=5%-10", "word 'nr_accesses=5%-10'" },
                { "pageout quota_ms=-1", "word 'quota_ms=-1'" },
                { "pageout quota_reset=1500us", "word 'quota_reset=1500us': expected a time span of whole milliseconds" },
                { "pageout weights=1,2", "word 'weights=1,2'" },
                { "pageout weights=1,2,3,4", "word 'weights=1,2,3,4'" },
                { "pageout goal=hot_fraction:0", "word 'goal=hot_fraction:0'" },
                { "pageout goal=hot_fraction:10001", "word 'goal=hot_fraction:10001'" },
                { "pageout goal=node_mem_used_bp:100", "word 'goal=node_mem_used_bp:100'" },
                { "pageout goal=some_mem_psi_us:100:1", "word 'goal=some_mem_psi_us:100:1'" },
                { "pageout goal=cpu:10", "word 'goal=cpu:10'" },
                { "pageout wmarks=free_mem_rate:5s:100:200:50", "word 'wmarks=free_mem_rate:5s:100:200:50'" },
                { "pageout wmarks=free_mem_rate:0:500:400:200", "word 'wmarks=free_mem_rate:0:500:400:200'" },
                { "pageout reject=memcg", "word 'reject=memcg'" },
                { "pageout reject=memcg:relative", "word 'reject=memcg:relative'" },
                { "pageout reject=addr:0x3000-0x1000", "word 'reject=addr:0x3000-0x1000'" },
                { "pageout reject=anon:1", "word 'reject=anon:1'" },
                { "pageout allow=!hot", "word 'allow=!hot'" },
                { "pageout reject=hot reject=!hot", "word 'reject=!hot'" },
                { "pageout reject=hot allow=hot", "word 'allow=hot'" },
                { "pageout reject=node", "word 'reject=node'" },
                { "pageout reject=node:x", "word 'reject=node:x'" },
                { "pageout reject=node:65536", "word 'reject=node:65536'" },
                { "pageout allow=!node:0", "word 'allow=!node:0'" },
                { "pageout deny=anon", "unknown key 'deny'" },
                { "migrate_cold", "migrate_cold needs target_nid=NODE" },
                { "pageout target_nid=0", "target_nid= applies to migrate_hot and migrate_cold only" },
                { "migrate_hot target_nid=65536", "word 'target_nid=65536'" },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                struct dp_damon_scheme s;
                char why[512] = "";

                ck_assert_msg(dp_scheme_parse(cases[i].value, &s, why, sizeof(why)) == -EINVAL, "'%s' accepted",
                              cases[i].value);
                ck_assert_msg(strstr(why, cases[i].message), "'%s': \"%s\" lacks \"%s\"", cases[i].value, why,
                              cases[i].message);
        }
}
END_TEST

/* In a file: file:line, the whole value and the word; each line adds a
 * scheme, an empty one clears those before it (as a drop-in would). */
START_TEST(test_in_file) {
        static const char text[] = "[DAMON]\n"
                                   "Scheme=pageout age=10-max\n"
                                   "Scheme=lru_prio nr_accesses=x\n"
                                   "Scheme=stat\n";
        static const char dropin[] = "[DAMON]\nScheme=\nScheme=migrate_cold target_nid=1 age=30s-max\n";
        struct dp_config c;
        struct messages m = {};
        char printed[DP_CONFIG_VALUE_MAX];
        const struct dp_config_key *k = dp_config_key_find("DAMON", "Scheme");

        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, text, sizeof(text) - 1, "main.conf", collect, &m), -EINVAL);
        ck_assert_uint_eq(m.n_errors, 1);
        ck_assert_str_eq(m.text[0], "main.conf:3: Scheme=lru_prio nr_accesses=x: word 'nr_accesses=x': expected "
                                    "MIN-MAX, sampling intervals per aggregation or both in percent (0%-100%), "
                                    "MAX may be max, MIN <= MAX");
        ck_assert_uint_eq(c.damon_n_schemes, 2);
        ck_assert_str_eq(c.damon_schemes[0].origin, "main.conf:2");
        ck_assert_str_eq(c.damon_schemes[1].origin, "main.conf:4");
        ck_assert_int_eq(dp_config_parse_text(&c, dropin, sizeof(dropin) - 1, "10-tier.conf", collect, &m), 0);
        ck_assert_uint_eq(c.damon_n_schemes, 1);
        ck_assert_str_eq(c.damon_schemes[0].origin, "10-tier.conf:3");
        ck_assert_ptr_nonnull(k);
        ck_assert(k->repeated);
        ck_assert_int_eq(dp_config_key_print(k, &c, printed, sizeof(printed)), 0);
        ck_assert_str_eq(printed, "migrate_cold target_nid=1 age=30s-max");
}
END_TEST

/* At most DP_CONFIG_MAX_SCHEMES, and --check-config's print (one line each)
 * parses back to the same list. */
START_TEST(test_limit_and_format) {
        _cleanup_free_ char *printed = NULL;
        struct dp_config c, back;
        struct messages m = {};
        char text[2048] = "[DAMON]\n";
        size_t size = 0;
        FILE *f;

        for (int i = 0; i < DP_CONFIG_MAX_SCHEMES; i++)
                snprintf(text + strlen(text), sizeof(text) - strlen(text), "Scheme=pageout age=%d-max\n", i + 1);
        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, text, strlen(text), "t.conf", collect, &m), 0);
        ck_assert_uint_eq(c.damon_n_schemes, DP_CONFIG_MAX_SCHEMES);
        f = open_memstream(&printed, &size);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(dp_config_format(&c, f), 0);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(printed, "\nScheme=pageout age=1-max\nScheme=pageout age=2-max\n"));
        dp_config_defaults(&back);
        ck_assert_int_eq(dp_config_parse_text(&back, printed, size, "printed", collect, &m), 0);
        ck_assert_uint_eq(back.damon_n_schemes, DP_CONFIG_MAX_SCHEMES);
        ck_assert(!dp_config_key_differs(dp_config_key_find("DAMON", "Scheme"), &c, &back));

        snprintf(text + strlen(text), sizeof(text) - strlen(text), "Scheme=stat\n");
        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_parse_text(&c, text, strlen(text), "t.conf", collect, &m), -EINVAL);
        ck_assert_str_eq(m.text[m.n - 1], "t.conf:10: Scheme=stat: at most 8 schemes");

        /* None: the key prints empty, which reads back as none. */
        dp_config_defaults(&c);
        printed = (free(printed), NULL);
        f = open_memstream(&printed, &size);
        ck_assert_int_eq(dp_config_format(&c, f), 0);
        fclose(f);
        ck_assert_ptr_nonnull(strstr(printed, "\nScheme=\n"));
}
END_TEST

static int load_text(const char *text, struct messages *m) {
        char path[] = "/tmp/dp-scheme-conf-XXXXXX";
        struct dp_config c;
        int fd = mkstemp(path), r;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        close(fd);
        r = dp_config_load(&c, NULL, path, collect, m);
        ck_assert_ptr_nonnull(strstr(m->n ? m->text[m->n - 1] : path, path));
        unlink(path);
        return r;
}

/* What the schemes need of the other settings, each naming the scheme's line. */
START_TEST(test_against_settings) {
        static const struct {
                const char *text, *message;
        } cases[] = {
                { "[DAMON]\nMode=attach\nKdamond=0\nScheme=pageout\n",
                  ":4: Scheme=pageout needs [DAMON] Mode=own" },
                { "[DAMON]\nMode=off\n\nScheme=stat\n", ":4: Scheme=stat needs [DAMON] Mode=own" },
                { "[DAMON]\nScheme=lru_prio\n", ":2: Scheme=lru_prio needs Targets=physical" },
                { "[Tracking]\nTargets=physical\n[DAMON]\nScheme=pageout\nScheme=nohugepage\n",
                  ":5: Scheme=nohugepage needs process targets" },
                { "[DAMON]\nScheme=pageout reject=hot\n", ":2: Scheme=pageout with a hot filter needs Targets=physical "
                                                          "or [DAMON] MaxTargets=1" },
                { "[DAMON]\nMaxTargets=1\nScheme=pageout reject=node:0\n",
                  ":3: Scheme=pageout with a node filter needs Targets=physical" },
        };
        static const char *const good[] = {
                "[DAMON]\nMaxTargets=1\nScheme=pageout reject=hot\nScheme=hugepage\n",
                "[Tracking]\nTargets=physical\n[DAMON]\nScheme=migrate_hot target_nid=0 reject=node:0 allow=hot\n"
                "Scheme=lru_deprio\n",
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                struct messages m = {};

                ck_assert_int_eq(load_text(cases[i].text, &m), -EINVAL);
                ck_assert_uint_eq(m.n_errors, 1);
                ck_assert_msg(strstr(m.text[0], cases[i].message), "\"%s\" lacks \"%s\"", m.text[0],
                              cases[i].message);
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(good); i++) {
                struct messages m = {};

                ck_assert_int_eq(load_text(good[i], &m), 0);
                ck_assert_uint_eq(m.n, 0);
        }
}
END_TEST

/* What the DAMON thread asks of the schemes. */
START_TEST(test_predicates) {
        struct dp_config c;

        dp_config_defaults(&c);
        ck_assert(!dp_config_has_hot_filters(&c));
        ck_assert(!dp_config_feeds_hot_fraction(&c));
        c.damon_schemes[c.damon_n_schemes++] = parse_ok("pageout reject=anon goal=some_mem_psi_us:100");
        ck_assert(!dp_config_has_hot_filters(&c));
        ck_assert(!dp_config_feeds_hot_fraction(&c));
        c.damon_schemes[c.damon_n_schemes++] = parse_ok("stat goal=hot_fraction:100 reject=hot");
        ck_assert(dp_config_has_hot_filters(&c));
        ck_assert(dp_config_feeds_hot_fraction(&c));
        /* Only outside the hot ranges so far; inside with reject=!hot or allow=hot. */
        ck_assert(!dp_config_acts_inside_hot(&c));
        c.damon_schemes[c.damon_n_schemes++] = parse_ok("migrate_hot target_nid=0 reject=!hot");
        ck_assert(dp_config_acts_inside_hot(&c));
        c.damon_schemes[c.damon_n_schemes - 1] = parse_ok("lru_prio allow=hot");
        ck_assert(dp_config_acts_inside_hot(&c));
        c.damon_n_schemes = 0;
        c.damon_goal = DP_DAMON_GOAL_HOT_FRACTION;
        ck_assert(dp_config_feeds_hot_fraction(&c));
}
END_TEST

static Suite *config_scheme_suite(void) {
        Suite *s = suite_create("config-scheme");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_words);
        tcase_add_test(tc, test_bad_words);
        tcase_add_test(tc, test_in_file);
        tcase_add_test(tc, test_limit_and_format);
        tcase_add_test(tc, test_against_settings);
        tcase_add_test(tc, test_predicates);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(config_scheme_suite());
}
