/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "config-keys.h"
#include "damon-node.h"
#include "dp-config.h"
#include "log.h"
#include "macro.h"
#include "manager.h"
#include "parse-util.h"
#include "print-events.h"
#include "replay-run.h"
#include "test-seam.h"
#include "time-util.h"

static void help(void) {
        printf("damon-perfd [OPTIONS...]\n\n"
               "Samples memory accesses on every CPU with the best memory-access PMU the machine has\n"
               "and tracks DAMON-like hot and cold regions of the sampled address spaces.\n\n"
               "  -h --help                  Show this help\n"
               "     --version               Show the version\n"
               "     --config=PATH           Read settings from PATH only (default: " DP_CONFIG_MAIN_FILE "\n"
               "                             and damon-perfd.conf.d/*.conf drop-ins); options override it\n"
               "     --check-config          Check the configuration, print the effective one, and exit\n"
               "     --print-events          Print the perf events each CPU would open (as perf record -vv\n"
               "                             prints them), and exit\n"
               "     --source=NAME           auto (default: IBS, PEBS, SPE, else pagefault), ibs, pebs,\n"
               "                             spe, pagefault, or event:<libpfm event>\n"
               "     --cpus=LIST             CPUs to sample, e.g. 0-3,6 (default: all online)\n"
               "     --pid=PID               Track this process (repeatable; default: every process seen)\n"
               "     --phys                  Track the physical address space instead of processes\n"
               "     --max-targets=N         Cap on processes tracked when tracking all (default 256)\n"
               "     --sample-period=N       Events per sample (default: the source's)\n"
               "     --ring-pages=N          Data pages per CPU ring, a power of two (default 128)\n"
               "     --queue-size=N          Samples per CPU queue, a power of two (default 65536)\n"
               "     --min-regions=N         Minimum regions per target (default 10)\n"
               "     --max-regions=N         Maximum regions per target (default 1000)\n"
               "     --sample-interval-ms=N  DAMON sampling interval (default 5)\n"
               "     --aggr-interval-ms=N    DAMON aggregation interval (default 100)\n"
               "     --duration=TIME         Exit after TIME: 1.5 (seconds), 90s, 2min, 1min 30s, 500ms\n"
               "                             (default or 0: run until signalled)\n"
               "     --print-interval=SEC    Print counters and hottest regions every SEC seconds\n"
               "     --top=N                 Regions shown by --print-interval (default 10)\n"
               "     --dump-stats[=FORMAT]   Print the final counters on exit: text (default) or json\n"
               "     --stats-file=PATH       Write the final counters as JSON to PATH on exit\n"
               "     --replay=FILE           Analyse a perf record capture instead of sampling live\n"
               "     --varlink=PATH          Serve io.damon.perfd at PATH (default /run/damon-perfd/io.damon.perfd)\n"
               "     --varlink-group=GROUP   Group that may use the socket (mode 0660)\n"
               "     --no-varlink            Do not serve the varlink API\n"
               "  -v --verbose               Log debug messages\n");
}

/* A time span as the configuration file takes them: "1.5" (seconds), "90s",
 * "2min", "1min 30s", "500ms". */
static int parse_timespan(const char *arg, const char *name, uint64_t min_usec, uint64_t max_usec,
                          uint64_t *ret_usec) {
        char min[DP_TIMESPAN_MAX], max[DP_TIMESPAN_MAX];
        int r = dp_timespan_parse_in(arg, min_usec, max_usec, ret_usec);

        if (r < 0) {
                (void) dp_timespan_format(min_usec, min, sizeof(min));
                (void) dp_timespan_format(max_usec, max, sizeof(max));
                log_error("--%s: expected a time span between %s and %s, e.g. 1.5, 90s, 2min or 1min 30s, got '%s'",
                          name, min, max, arg);
                return -EINVAL;
        }
        return 0;
}

static int parse_u64(const char *arg, const char *name, uint64_t min, uint64_t max, uint64_t *ret) {
        if (dp_parse_u64_in(arg, min, max, ret) < 0) {
                log_error("--%s: expected a whole number between %llu and %llu, got '%s'", name,
                          (unsigned long long) min, (unsigned long long) max, arg);
                return -EINVAL;
        }
        return 0;
}

static int parse_u32(const char *arg, const char *name, uint32_t min, uint32_t max, uint32_t *ret) {
        uint64_t v;
        int r = parse_u64(arg, name, min, max, &v);

        if (r == 0)
                *ret = (uint32_t) v;
        return r;
}

/* The options that are not settings.  Each setting's own options come from
 * its row of the table (lib/conf/config-keys.c), numbered from ARG_SETTING. */
enum {
        ARG_VERSION = 0x100,
        ARG_DURATION,
        ARG_PRINT_INTERVAL,
        ARG_TOP,
        ARG_DUMP_STATS,
        ARG_STATS_FILE,
        ARG_REPLAY,
        ARG_NO_VARLINK,
        ARG_CONFIG,
        ARG_CHECK_CONFIG,
        ARG_PRINT_EVENTS,
        ARG_SETTING,            /* + n: option n of dp_config_getopt_options() */
};

/* getopt_long() names the candidates of an ambiguous prefix in this order:
 * --help and --version, the settings' options, then the rest, as ever. */
static const struct option first_options[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, ARG_VERSION },
};

static const struct option other_options[] = {
        { "duration", required_argument, NULL, ARG_DURATION },
        { "print-interval", required_argument, NULL, ARG_PRINT_INTERVAL },
        { "top", required_argument, NULL, ARG_TOP },
        { "dump-stats", optional_argument, NULL, ARG_DUMP_STATS },
        { "stats-file", required_argument, NULL, ARG_STATS_FILE },
        { "replay", required_argument, NULL, ARG_REPLAY },
        { "no-varlink", no_argument, NULL, ARG_NO_VARLINK },
        { "config", required_argument, NULL, ARG_CONFIG },
        { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
        { "print-events", no_argument, NULL, ARG_PRINT_EVENTS },
        { "verbose", no_argument, NULL, 'v' },
};

#define N_OPTIONS (DP_ARRAY_SIZE(first_options) + DP_CONFIG_MAX_OPTIONS + DP_ARRAY_SIZE(other_options) + 1)

/* Every option, then getopt's terminator. */
static void build_options(struct option options[static N_OPTIONS]) {
        size_t n = DP_ARRAY_SIZE(first_options);
        int r;

        memcpy(options, first_options, sizeof(first_options));
        r = dp_config_getopt_options(options + n, DP_CONFIG_MAX_OPTIONS, ARG_SETTING);
        assert(r >= 0);         /* test-config-keys (test_options_accepted) checks that they fit */
        n += (size_t) r;
        memcpy(options + n, other_options, sizeof(other_options));
        n += DP_ARRAY_SIZE(other_options);
        options[n] = (struct option) {};
}

/* Where configuration messages go besides the log: a reload collects its errors. */
struct config_report {
        dp_config_report_t forward;     /* NULL: the log only */
        void *userdata;
};

static void report_config_message(enum dp_config_severity severity, const char *message, void *userdata) {
        struct config_report *cr = userdata;

        if (severity == DP_CONFIG_ERROR)
                log_error("%s", message);
        else
                log_warning("%s", message);
        if (cr && cr->forward)
                cr->forward(severity, message, cr->userdata);
}

/* The file comes first so that every option given overrides it; --config and
 * --check-config are therefore picked out in a pass of their own. */
static int load_config_file(int argc, char **argv, const struct option *options, struct manager_options *o,
                            struct config_report *cr, bool *ret_check) {
        const char *path = NULL;
        bool info_only = false;
        int opt, saved_opterr = opterr;

        *ret_check = false;
        opterr = 0;
        while ((opt = getopt_long(argc, argv, "hv", options, NULL)) >= 0)
                if (opt == ARG_CONFIG)
                        path = optarg;
                else if (opt == ARG_CHECK_CONFIG)
                        *ret_check = true;
                else if (opt == 'h' || opt == ARG_VERSION)
                        info_only = true;
        opterr = saved_opterr;
        optind = 0;     /* glibc: reinitialise for the real pass */
        if (info_only)  /* --help works whatever the file says */
                return 0;
        return dp_config_load(&o->config, NULL, path, report_config_message, cr);
}

static int parse_dump_stats(const char *arg, struct manager_options *o) {
        if (!arg || strcmp(arg, "text") == 0)
                o->dump_stats = DUMP_TEXT;
        else if (strcmp(arg, "json") == 0)
                o->dump_stats = DUMP_JSON;
        else {
                log_error("--dump-stats: expected text or json, got '%s'", arg);
                return -EINVAL;
        }
        return 0;
}

/* An option that is not a setting: 0 to go on, 1 when it was the answer
 * (--help, --version), or a negative errno. */
static int parse_other_option(int opt, struct manager_options *o, bool reloading) {
        switch (opt) {
        case 'h':
                help();
                return 1;
        case ARG_VERSION:
                printf("damon-perfd %s\n", DP_VERSION);
                return 1;
        case ARG_DURATION:
                return parse_timespan(optarg, "duration", 0, 365 * 24 * USEC_PER_HOUR, &o->duration_usec);
        case ARG_PRINT_INTERVAL:
                return parse_u64(optarg, "print-interval", 1, 86400, &o->print_interval_sec);
        case ARG_TOP:
                return parse_u32(optarg, "top", 1, 1000, &o->top);
        case ARG_DUMP_STATS:
                return parse_dump_stats(optarg, o);
        case ARG_STATS_FILE:
                o->stats_file = optarg;
                return 0;
        case ARG_REPLAY:
                o->replay = optarg;
                return 0;
        case ARG_NO_VARLINK:
                o->no_varlink = true;
                return 0;
        case ARG_PRINT_EVENTS:
                o->print_events = true;
                return 0;
        case ARG_CONFIG:
        case ARG_CHECK_CONFIG:
                return 0;       /* handled by load_config_file() */
        case 'v':
                if (!reloading)
                        log_set_max_level(LOG_DEBUG);
                return 0;
        default:
                return -EINVAL;
        }
}

/* Every option, on top of the files' settings: 1 to go on, 0 after --help or
 * --version, or a negative errno. */
static int apply_options(int argc, char **argv, const struct option *options, struct manager_options *o,
                         bool reloading) {
        struct dp_config_options_pass pass = { .report = report_config_message };
        int opt, r;

        while ((opt = getopt_long(argc, argv, "hv", options, NULL)) >= 0) {
                if (opt >= ARG_SETTING)
                        r = dp_config_option_apply(&pass, (size_t) (opt - ARG_SETTING), optarg, &o->config);
                else
                        r = parse_other_option(opt, o, reloading);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        if (optind < argc) {
                log_error("unexpected argument '%s' (see --help)", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

/* The files and the options together may still disagree. */
static int check_settings(struct manager_options *o, struct config_report *cr) {
        struct dp_config *c = &o->config;
        const char *why;

        if (dp_config_validate(c, &why) < 0) {
                char message[256];

                snprintf(message, sizeof(message), "invalid settings (files and options together): %s", why);
                report_config_message(DP_CONFIG_ERROR, message, cr);
                return -EINVAL;
        }
        /* The file's [API] settings, possibly overridden by --varlink*. */
        o->varlink_path = c->api_socket[0] ? c->api_socket : NULL;
        o->varlink_group = c->api_socket_group[0] ? c->api_socket_group : NULL;
        return 0;
}

/* --check-config: the schemes' node filters against this machine's nodes, a
 * warning only (the file may be meant for another machine; here the daemon
 * would stay observe-only, saying the same). */
static void check_node_filters(const struct dp_config *c, struct config_report *cr) {
        struct dp_damon_scheme resolved[DP_CONFIG_MAX_SCHEMES];
        char why[256], message[300];

        if (dp_damon_resolve_node_filters(test_seam_get()->sys_root, c->damon_schemes, c->damon_n_schemes, resolved,
                                          why, sizeof(why)) < 0) {
                snprintf(message, sizeof(message), "on this machine: %s", why);
                report_config_message(DP_CONFIG_WARNING, message, cr);
        }
}

/* At startup, and again on reload (@reloading) to read the configuration the
 * same way: the files, then every option on top.  Options that passed at
 * startup pass again, so a reload can only fail on the files.  1 to run, 0
 * when done (--help, --version, --check-config), or a negative errno. */
static int parse_argv(int argc, char **argv, struct manager_options *o, struct config_report *cr, bool reloading) {
        struct option options[N_OPTIONS];
        bool check_config;
        int r;

        build_options(options);
        optind = 0;     /* glibc: a reload parses the same argv again */
        if (load_config_file(argc, argv, options, o, cr, &check_config) < 0) {
                if (!reloading)
                        log_error("invalid configuration (see --check-config)");
                return -EINVAL;
        }
        r = apply_options(argc, argv, options, o, reloading);
        if (r <= 0)
                return r;
        r = check_settings(o, cr);
        if (r < 0)
                return r;
        if (check_config && !reloading) {
                check_node_filters(&o->config, cr);
                if (dp_config_format(&o->config, stdout) < 0 || fflush(stdout) != 0)
                        return -EIO;
                return 0;
        }
        return 1;
}

/* manager_options.load_config: the configuration as at startup, from the
 * files as they are now and the same command line. */
static int reload_config(const struct manager_options *running, struct dp_config *ret, dp_config_report_t report,
                         void *userdata) {
        struct manager_options o = { .top = running->top };
        struct config_report cr = { report, userdata };
        int r;

        dp_config_init(&o.config);
        r = parse_argv(running->argc, running->argv, &o, &cr, true);
        if (r < 0)
                return r;
        *ret = o.config;
        return 0;
}

int main(int argc, char **argv) {
        struct manager_options options = {
                .top = 10,
                .argc = argc,
                .argv = argv,
                .load_config = reload_config,
        };
        struct manager *m = NULL;
        int r;

        /* Before any thread exists, so that each inherits the mask and the
         * signals reach only the event loop's signalfd. */
        sigset_t mask;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        log_setup();
        dp_config_init(&options.config);
        r = parse_argv(argc, argv, &options, NULL, false);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        if (options.print_events)
                return print_events_run(&options) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        if (options.replay)
                return replay_run(&options, options.replay) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        r = manager_new(&options, &m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_run(m);
        manager_free(m);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
