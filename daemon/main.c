/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "dp-config.h"
#include "log.h"
#include "manager.h"
#include "replay-run.h"

static void help(void) {
        printf("damon-perfd [OPTIONS...]\n\n"
               "Samples memory accesses on every CPU with the best memory-access PMU the machine has\n"
               "and tracks DAMON-like hot and cold regions of the sampled address spaces.\n\n"
               "  -h --help                  Show this help\n"
               "     --version               Show the version\n"
               "     --config=PATH           Read settings from PATH only (default: " DP_CONFIG_MAIN_FILE "\n"
               "                             and damon-perfd.conf.d/*.conf drop-ins); options override it\n"
               "     --check-config          Check the configuration, print the effective one, and exit\n"
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
               "     --duration=SEC          Exit after SEC seconds (default: run until signalled)\n"
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

static int parse_u64(const char *arg, const char *name, uint64_t min, uint64_t max, uint64_t *ret) {
        unsigned long long v;
        char *end;

        errno = 0;
        v = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max) {
                log_error("--%s: expected a whole number between %llu and %llu, got '%s'", name,
                          (unsigned long long) min, (unsigned long long) max, arg);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int parse_u32(const char *arg, const char *name, uint32_t min, uint32_t max, uint32_t *ret) {
        uint64_t v;
        int r = parse_u64(arg, name, min, max, &v);

        if (r == 0)
                *ret = (uint32_t) v;
        return r;
}

enum {
        ARG_VERSION = 0x100,
        ARG_SOURCE,
        ARG_CPUS,
        ARG_PID,
        ARG_PHYS,
        ARG_MAX_TARGETS,
        ARG_SAMPLE_PERIOD,
        ARG_RING_PAGES,
        ARG_QUEUE_SIZE,
        ARG_MIN_REGIONS,
        ARG_MAX_REGIONS,
        ARG_SAMPLE_INTERVAL,
        ARG_AGGR_INTERVAL,
        ARG_DURATION,
        ARG_PRINT_INTERVAL,
        ARG_TOP,
        ARG_DUMP_STATS,
        ARG_STATS_FILE,
        ARG_REPLAY,
        ARG_VARLINK,
        ARG_VARLINK_GROUP,
        ARG_NO_VARLINK,
        ARG_CONFIG,
        ARG_CHECK_CONFIG,
};

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

/* At startup, and again on reload (@reloading) to read the configuration the
 * same way: the files, then every option on top.  Options that passed at
 * startup pass again, so a reload can only fail on the files. */
static int parse_argv(int argc, char **argv, struct manager_options *o, struct config_report *cr, bool reloading) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "source", required_argument, NULL, ARG_SOURCE },
                { "cpus", required_argument, NULL, ARG_CPUS },
                { "pid", required_argument, NULL, ARG_PID },
                { "phys", no_argument, NULL, ARG_PHYS },
                { "max-targets", required_argument, NULL, ARG_MAX_TARGETS },
                { "sample-period", required_argument, NULL, ARG_SAMPLE_PERIOD },
                { "ring-pages", required_argument, NULL, ARG_RING_PAGES },
                { "queue-size", required_argument, NULL, ARG_QUEUE_SIZE },
                { "min-regions", required_argument, NULL, ARG_MIN_REGIONS },
                { "max-regions", required_argument, NULL, ARG_MAX_REGIONS },
                { "sample-interval-ms", required_argument, NULL, ARG_SAMPLE_INTERVAL },
                { "aggr-interval-ms", required_argument, NULL, ARG_AGGR_INTERVAL },
                { "duration", required_argument, NULL, ARG_DURATION },
                { "print-interval", required_argument, NULL, ARG_PRINT_INTERVAL },
                { "top", required_argument, NULL, ARG_TOP },
                { "dump-stats", optional_argument, NULL, ARG_DUMP_STATS },
                { "stats-file", required_argument, NULL, ARG_STATS_FILE },
                { "replay", required_argument, NULL, ARG_REPLAY },
                { "varlink", required_argument, NULL, ARG_VARLINK },
                { "varlink-group", required_argument, NULL, ARG_VARLINK_GROUP },
                { "no-varlink", no_argument, NULL, ARG_NO_VARLINK },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "check-config", no_argument, NULL, ARG_CHECK_CONFIG },
                { "verbose", no_argument, NULL, 'v' },
                {}
        };
        struct dp_config *c = &o->config;
        const char *why;
        uint64_t v = 0;
        uint32_t pid = 0;
        bool check_config, targets_from_options = false;
        int opt, r = 0;

        optind = 0;     /* glibc: a reload parses the same argv again */
        if (load_config_file(argc, argv, options, o, cr, &check_config) < 0) {
                if (!reloading)
                        log_error("invalid configuration (see --check-config)");
                return -EINVAL;
        }
        if (reloading)
                check_config = false;
        while ((opt = getopt_long(argc, argv, "hv", options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("damon-perfd %s\n", DP_VERSION);
                        return 0;
                case ARG_SOURCE:
                        if (strlen(optarg) >= sizeof(c->source)) {
                                log_error("--source: name too long: '%s'", optarg);
                                return -EINVAL;
                        }
                        strcpy(c->source, optarg);
                        break;
                case ARG_CPUS:
                        if (strlen(optarg) >= sizeof(c->cpus)) {
                                log_error("--cpus: list too long");
                                return -EINVAL;
                        }
                        strcpy(c->cpus, optarg);
                        break;
                case ARG_PID:
                        if (!targets_from_options) {    /* replace the file's targets */
                                c->target_mode = DP_TARGETS_ALL;
                                c->n_pids = 0;
                                targets_from_options = true;
                        }
                        r = parse_u32(optarg, "pid", 1, INT_MAX, &pid);
                        if (r < 0)
                                return r;
                        if (c->n_pids >= DP_CONFIG_MAX_PIDS) {
                                log_error("--pid: at most %d pids", DP_CONFIG_MAX_PIDS);
                                return -E2BIG;
                        }
                        if (c->target_mode == DP_TARGETS_PHYS) {
                                log_error("--pid and --phys exclude each other");
                                return -EINVAL;
                        }
                        c->pids[c->n_pids++] = pid;
                        c->target_mode = DP_TARGETS_PIDS;
                        break;
                case ARG_PHYS:
                        if (!targets_from_options) {
                                c->target_mode = DP_TARGETS_ALL;
                                c->n_pids = 0;
                                targets_from_options = true;
                        }
                        if (c->target_mode == DP_TARGETS_PIDS) {
                                log_error("--pid and --phys exclude each other");
                                return -EINVAL;
                        }
                        c->target_mode = DP_TARGETS_PHYS;
                        break;
                case ARG_MAX_TARGETS:
                        r = parse_u32(optarg, "max-targets", 1, 65536, &c->max_targets);
                        break;
                case ARG_SAMPLE_PERIOD:
                        r = parse_u64(optarg, "sample-period", 1, UINT64_MAX >> 1, &c->sample_period);
                        break;
                case ARG_RING_PAGES:
                        r = parse_u32(optarg, "ring-pages", 1, 65536, &c->ring_pages);
                        break;
                case ARG_QUEUE_SIZE:
                        r = parse_u32(optarg, "queue-size", 64, 1u << 24, &c->queue_capacity);
                        break;
                case ARG_MIN_REGIONS:
                        r = parse_u32(optarg, "min-regions", 3, 1u << 20, &c->min_nr_regions);
                        break;
                case ARG_MAX_REGIONS:
                        r = parse_u32(optarg, "max-regions", 3, 1u << 20, &c->max_nr_regions);
                        break;
                case ARG_SAMPLE_INTERVAL:
                        r = parse_u64(optarg, "sample-interval-ms", 1, 60000, &v);
                        c->sample_interval_us = v * 1000;
                        break;
                case ARG_AGGR_INTERVAL:
                        r = parse_u64(optarg, "aggr-interval-ms", 1, 600000, &v);
                        c->aggr_interval_us = v * 1000;
                        c->maps_refresh_us = DP_MAX(c->maps_refresh_us, c->aggr_interval_us);
                        break;
                case ARG_DURATION:
                        r = parse_u64(optarg, "duration", 0, 365ull * 24 * 3600, &o->duration_sec);
                        break;
                case ARG_PRINT_INTERVAL:
                        r = parse_u64(optarg, "print-interval", 1, 86400, &o->print_interval_sec);
                        break;
                case ARG_TOP:
                        r = parse_u32(optarg, "top", 1, 1000, &o->top);
                        break;
                case ARG_DUMP_STATS:
                        if (!optarg || strcmp(optarg, "text") == 0)
                                o->dump_stats = DUMP_TEXT;
                        else if (strcmp(optarg, "json") == 0)
                                o->dump_stats = DUMP_JSON;
                        else {
                                log_error("--dump-stats: expected text or json, got '%s'", optarg);
                                return -EINVAL;
                        }
                        break;
                case ARG_STATS_FILE:
                        o->stats_file = optarg;
                        break;
                case ARG_REPLAY:
                        o->replay = optarg;
                        break;
                case ARG_VARLINK:
                        if (optarg[0] != '/') {
                                log_error("--varlink: expected an absolute socket path, got '%s'", optarg);
                                return -EINVAL;
                        }
                        if (strlen(optarg) >= sizeof(c->api_socket)) {
                                log_error("--varlink: socket path too long: '%s'", optarg);
                                return -EINVAL;
                        }
                        strcpy(c->api_socket, optarg);
                        break;
                case ARG_VARLINK_GROUP:
                        if (strlen(optarg) >= sizeof(c->api_socket_group)) {
                                log_error("--varlink-group: name too long: '%s'", optarg);
                                return -EINVAL;
                        }
                        strcpy(c->api_socket_group, optarg);
                        break;
                case ARG_CONFIG:
                case ARG_CHECK_CONFIG:
                        break;          /* handled by load_config_file() */
                case ARG_NO_VARLINK:
                        o->no_varlink = true;
                        break;
                case 'v':
                        if (!reloading)
                                log_set_max_level(LOG_DEBUG);
                        break;
                default:
                        return -EINVAL;
                }
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                log_error("unexpected argument '%s' (see --help)", argv[optind]);
                return -EINVAL;
        }
        if (dp_config_validate(c, &why) < 0) {
                char message[256];

                /* The files and the options together may still disagree. */
                snprintf(message, sizeof(message), "invalid settings (files and options together): %s", why);
                report_config_message(DP_CONFIG_ERROR, message, cr);
                return -EINVAL;
        }
        /* The file's [API] settings, possibly overridden by --varlink*. */
        o->varlink_path = c->api_socket[0] ? c->api_socket : NULL;
        o->varlink_group = c->api_socket_group[0] ? c->api_socket_group : NULL;
        if (check_config) {
                if (dp_config_format(c, stdout) < 0 || fflush(stdout) != 0)
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

        if (options.replay)
                return replay_run(&options, options.replay) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        r = manager_new(&options, &m);
        if (r < 0)
                return EXIT_FAILURE;
        r = manager_run(m);
        manager_free(m);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
