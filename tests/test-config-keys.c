/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The table of settings (lib/conf/config-keys.c) that the file parser,
 * --check-config, damon-perfd's options and its reload all walk: every key
 * complete, printed, owning its field, and every option it names accepted. */
#include <check.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "config-keys.h"
#include "config.h"
#include "macro.h"

#include "check-main.h"
#include "config-messages.h"

/* tests/config/good.conf: every key set. */
static void load_good(struct dp_config *c) {
        const char *d = getenv("DP_CONFIG_FIXTURES");
        struct messages m = {};
        char path[PATH_MAX];

        ck_assert_msg(d, "DP_CONFIG_FIXTURES is not set");
        snprintf(path, sizeof(path), "%s/good.conf", d);
        ck_assert_int_eq(dp_config_load(c, NULL, path, collect, &m), 0);
}

/* Every key is complete, once, in a known section, and prints its default;
 * the printed value parses back to it. */
START_TEST(test_table_complete) {
        struct dp_config defaults, back;
        char value[DP_CONFIG_VALUE_MAX];

        dp_config_defaults(&defaults);
        ck_assert_uint_gt(dp_config_n_keys, 0);
        for (size_t i = 0; i < dp_config_n_keys; i++) {
                const struct dp_config_key *k = &dp_config_keys[i];

                ck_assert_ptr_nonnull(k->section);
                ck_assert_ptr_nonnull(k->key);
                ck_assert_msg(k->parse && k->print, "%s= has no parser or printer", k->key);
                ck_assert_msg(k->expected && strncmp(k->expected, "expected ", 9) == 0, "%s=: %s", k->key,
                              k->expected);
                ck_assert_msg(k->size > 0 && k->offset + k->size <= sizeof(struct dp_config), "%s=", k->key);
                ck_assert_str_eq(dp_config_section_find(k->section), k->section);
                ck_assert_ptr_eq(dp_config_key_find(k->section, k->key), k);
                for (size_t j = 0; j < i; j++)
                        ck_assert_msg(dp_config_keys[j].offset != k->offset, "%s= and %s= share a field",
                                      dp_config_keys[j].key, k->key);

                ck_assert_int_eq(dp_config_key_print(k, &defaults, value, sizeof(value)), 0);
                dp_config_defaults(&back);
                ck_assert_msg(dp_config_key_parse(k, &back, value) == 0, "%s=%s refused", k->key, value);
                ck_assert(!dp_config_key_differs(k, &back, &defaults));
        }
}
END_TEST

/* --check-config prints dp_config_format(): every key of the table, once,
 * under its own section, and nothing else. */
START_TEST(test_format_lists_every_key) {
        _cleanup_free_ char *text = NULL;
        size_t size = 0, n_keys = 0;
        bool seen[64] = {};
        char section[64] = "";
        struct dp_config c;
        FILE *f = open_memstream(&text, &size);

        ck_assert_uint_le(dp_config_n_keys, DP_ARRAY_SIZE(seen));
        ck_assert_ptr_nonnull(f);
        dp_config_defaults(&c);
        ck_assert_int_eq(dp_config_format(&c, f), 0);
        fclose(f);
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                const struct dp_config_key *k;
                char *eq = strchr(line, '=');

                if (line[0] == '[') {
                        ck_assert_uint_lt(strlen(line), sizeof(section));
                        snprintf(section, sizeof(section), "%.*s", (int) strlen(line) - 2, line + 1);
                        continue;
                }
                ck_assert_msg(eq, "not a key: '%s'", line);
                *eq = '\0';
                k = dp_config_key_find(section, line);
                ck_assert_msg(k, "[%s] %s= printed, not in the table", section, line);
                ck_assert_msg(!seen[k - dp_config_keys], "[%s] %s= printed twice", section, line);
                seen[k - dp_config_keys] = true;
                n_keys++;
        }
        for (size_t i = 0; i < dp_config_n_keys; i++)
                ck_assert_msg(seen[i], "[%s] %s= not printed", dp_config_keys[i].section, dp_config_keys[i].key);
        ck_assert_uint_eq(n_keys, dp_config_n_keys);
}
END_TEST

/* Each key's parser writes its own field only: a value parsed for one key
 * leaves every other key as it was. */
START_TEST(test_keys_own_their_fields) {
        struct dp_config good, defaults, c;
        char value[DP_CONFIG_VALUE_MAX];

        load_good(&good);
        dp_config_defaults(&defaults);
        for (size_t i = 0; i < dp_config_n_keys; i++) {
                const struct dp_config_key *k = &dp_config_keys[i];

                c = defaults;
                ck_assert_int_eq(dp_config_key_print(k, &good, value, sizeof(value)), 0);
                ck_assert_int_eq(dp_config_key_parse(k, &c, value), 0);
                ck_assert(!dp_config_key_differs(k, &c, &good));
                for (size_t j = 0; j < dp_config_n_keys; j++)
                        ck_assert_msg(j == i || !dp_config_key_differs(&dp_config_keys[j], &c, &defaults),
                                      "%s=%s changed %s=", k->key, value, dp_config_keys[j].key);
        }
}
END_TEST

/* A reload names every change the daemon cannot apply by these names. */
START_TEST(test_reload_kinds) {
        char name[64];

        dp_config_key_name(dp_config_key_find("Sampling", "RingPages"), name, sizeof(name));
        ck_assert_str_eq(name, "RingPages=");
        dp_config_key_name(dp_config_key_find("Tracking", "MapsRefreshSec"), name, sizeof(name));
        ck_assert_str_eq(name, "MapsRefreshSec=");
        dp_config_key_name(dp_config_key_find("API", "SocketGroup"), name, sizeof(name));
        ck_assert_str_eq(name, "[API] SocketGroup=");
        dp_config_key_name(dp_config_key_find("DAMON", "MaxTargets"), name, sizeof(name));
        ck_assert_str_eq(name, "[DAMON] MaxTargets=");
}
END_TEST

/* An argument each option of the table accepts and that changes its key from
 * the default.  A new option must be added here: the test fails without. */
static const struct {
        const char *option, *arg;
} option_args[] = {
        { "source", "ibs" }, { "cpus", "0" }, { "sample-period", "1000" }, { "ring-pages", "64" },
        { "queue-size", "1024" }, { "pid", "42" }, { "phys", NULL }, { "max-targets", "7" },
        { "min-regions", "5" }, { "max-regions", "500" }, { "sample-interval-ms", "10" },
        { "aggr-interval-ms", "200" }, { "varlink", "/run/test/x.sock" }, { "varlink-group", "wheel" },
};

static const char *option_arg(const char *option) {
        for (size_t i = 0; i < DP_ARRAY_SIZE(option_args); i++)
                if (strcmp(option_args[i].option, option) == 0)
                        return option_args[i].arg ?: "";
        ck_abort_msg("--%s: add an argument it accepts to option_args[]", option);
        return NULL;
}

/* Runs getopt_long() over "--name[=arg]" with the table's options; the
 * option number it returns, or -1.  optarg points into a static buffer. */
static int getopt_one(const struct option *options, const char *name, const char *arg) {
        static char word[512];
        char *argv[] = { (char *) "damon-perfd", word, NULL };
        int opt;

        snprintf(word, sizeof(word), "--%s%s%s", name, arg && *arg ? "=" : "", arg && *arg ? arg : "");
        optind = 0;
        opterr = 0;
        opt = getopt_long(2, argv, "", options, NULL);
        return opt >= 0x100 ? opt - 0x100 : -1;
}

/* Every option the table names is one getopt_long() knows, reaches its own
 * key, and accepts a good argument. */
START_TEST(test_options_accepted) {
        struct option options[DP_CONFIG_MAX_OPTIONS + 1] = {};
        struct dp_config defaults, c;
        int n_options = dp_config_getopt_options(options, DP_CONFIG_MAX_OPTIONS, 0x100), n = 0;

        ck_assert_int_gt(n_options, 0);
        dp_config_defaults(&defaults);
        for (size_t i = 0; i < dp_config_n_keys; i++)
                for (size_t j = 0; j < DP_ARRAY_SIZE(dp_config_keys[i].options); j++) {
                        const struct dp_config_key *k = &dp_config_keys[i];
                        const struct dp_config_option *o = &k->options[j];
                        struct dp_config_options_pass pass = {};
                        const char *arg;

                        if (!o->name)
                                continue;
                        arg = option_arg(o->name);
                        ck_assert_msg(o->has_arg == (*arg != '\0'), "--%s", o->name);
                        ck_assert_int_eq(getopt_one(options, o->name, arg), n);
                        if (o->has_arg)
                                ck_assert_str_eq(optarg, arg);
                        else
                                ck_assert_ptr_null(optarg);
                        c = defaults;
                        ck_assert_int_eq(dp_config_option_apply(&pass, (size_t) n, optarg, &c), 0);
                        ck_assert_msg(dp_config_key_differs(k, &c, &defaults), "--%s=%s did not set %s=", o->name,
                                      arg, k->key);
                        n++;
                }
        ck_assert_int_eq(n, n_options);
        ck_assert_int_eq(getopt_one(options, "no-such-option", NULL), -1);
}
END_TEST

static int apply_option(struct dp_config_options_pass *pass, const char *name, const char *arg, struct dp_config *c) {
        struct option options[DP_CONFIG_MAX_OPTIONS + 1] = {};
        int n;

        ck_assert_int_gt(dp_config_getopt_options(options, DP_CONFIG_MAX_OPTIONS, 0x100), 0);
        n = getopt_one(options, name, arg);
        ck_assert_int_ge(n, 0);
        return dp_config_option_apply(pass, (size_t) n, optarg, c);
}

/* The options keep their own rules and messages (not the file's). */
START_TEST(test_option_rules) {
        struct messages m = {};
        struct dp_config_options_pass pass = { .report = collect, .userdata = &m };
        struct dp_config c;

        dp_config_defaults(&c);
        ck_assert_int_eq(apply_option(&pass, "max-targets", "0", &c), -EINVAL);
        ck_assert_str_eq(m.text[0], "--max-targets: expected a whole number between 1 and 65536, got '0'");
        ck_assert_int_eq(apply_option(&pass, "sample-period", "0", &c), -EINVAL);
        ck_assert_str_eq(m.text[1],
                         "--sample-period: expected a whole number between 1 and 9223372036854775807, got '0'");
        ck_assert_int_eq(apply_option(&pass, "varlink", "x.sock", &c), -EINVAL);
        ck_assert_str_eq(m.text[2], "--varlink: expected an absolute socket path, got 'x.sock'");
        ck_assert_int_eq(apply_option(&pass, "pid", "+5", &c), -EINVAL);
        ck_assert_str_eq(m.text[3], "--pid: expected a whole number between 1 and 2147483647, got '+5'");
        ck_assert_uint_eq(m.n_errors, 4);

        /* Ring pages are checked with the others (dp_config_validate()), as ever. */
        ck_assert_int_eq(apply_option(&pass, "ring-pages", "3", &c), 0);
        ck_assert_uint_eq(c.ring_pages, 3);
        /* Milliseconds, and the maps refreshed no more often than an aggregation. */
        ck_assert_int_eq(apply_option(&pass, "aggr-interval-ms", "5000", &c), 0);
        ck_assert_uint_eq(c.aggr_interval_us, 5000000);
        ck_assert_uint_eq(c.maps_refresh_us, 5000000);

        /* The first --pid replaces the file's targets, later ones add to them. */
        c.target_mode = DP_TARGETS_PIDS;
        c.n_pids = 1;
        c.pids[0] = 99;
        pass.keys_set = 0;
        ck_assert_int_eq(apply_option(&pass, "pid", "1", &c), 0);
        ck_assert_int_eq(apply_option(&pass, "pid", "2", &c), 0);
        ck_assert_uint_eq(c.n_pids, 2);
        ck_assert_uint_eq(c.pids[0], 1);
        ck_assert_uint_eq(c.pids[1], 2);
        ck_assert_int_eq(apply_option(&pass, "phys", NULL, &c), -EINVAL);
        ck_assert_str_eq(m.text[4], "--pid and --phys exclude each other");
        /* The first --phys replaces file's pids. */
        pass.keys_set = 0;
        ck_assert_int_eq(apply_option(&pass, "phys", NULL, &c), 0);
        ck_assert_int_eq(c.target_mode, DP_TARGETS_PHYS);
        ck_assert_uint_eq(c.n_pids, 0);
}
END_TEST

static Suite *config_keys_suite(void) {
        Suite *s = suite_create("config-keys");
        TCase *tc = tcase_create("table");

        tcase_add_test(tc, test_table_complete);
        tcase_add_test(tc, test_format_lists_every_key);
        tcase_add_test(tc, test_keys_own_their_fields);
        tcase_add_test(tc, test_reload_kinds);
        tcase_add_test(tc, test_options_accepted);
        tcase_add_test(tc, test_option_rules);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(config_keys_suite());
}
