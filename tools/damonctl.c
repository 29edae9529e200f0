/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl: reads damon-perfd's counters, CPUs, targets and regions over its
 * varlink interface, follows its events, and asks it to reload.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damon-perfd/macro.h"
#include "damonctl.h"
#include "dp-config.h"

static void help(FILE *f) {
        fprintf(f,
                "damonctl [OPTIONS...] COMMAND [OPTIONS...]\n\n"
                "Queries and follows damon-perfd over its varlink interface (io.damon.perfd).\n\n"
                "Commands:\n"
                "  stats                  Counters by pipeline layer, and per CPU\n"
                "  cpus                   Every CPU's sampler: state, failure, PMU, ring\n"
                "  targets                The monitored address spaces\n"
                "  regions                Regions, hottest first\n"
                "  damon                  DAMON's regions beside the PMU's, and what the daemon does\n"
                "                         with DAMON (owned, attached, observe-only, off)\n"
                "  monitor                Follow state changes (and samples) until Ctrl-C\n"
                "  reload                 Re-read targets and retry CPUs in ERROR (root only)\n\n"
                "Options:\n"
                "  -h --help              Show this help\n"
                "     --version           Show the version\n"
                "     --address=ADDRESS   unix:PATH of the daemon's socket (default: $" CTL_ADDRESS_ENV ",\n"
                "                         else " CTL_ADDRESS_DEFAULT ")\n"
                "     --json              Print the reply parameters as received, pretty-printed\n\n"
                "stats:\n"
                "     --interval=SEC      Repeat every SEC seconds with per-second rates (levels as\n"
                "                         values); the first report averages since the daemon started\n"
                "     --count=N           Stop after N reports (with --interval)\n"
                "     --prometheus        Prometheus text exposition format 0.0.4\n"
                "     --textfile=DIR      Write DIR/damon_perfd.prom atomically, for node_exporter's\n"
                "                         textfile collector (implies --prometheus)\n"
                "regions:\n"
                "     --target=PID        Only this target (0: the physical address space)\n"
                "     --top=N             At most N regions (also for damon)\n"
                "monitor:\n"
                "     --samples           Also show sampled records and misses\n"
                "     --max-per-second=N  At most N sampled records per second\n\n"
                "Exit status:\n"
                "  0  success (also when monitor or stats --interval is stopped with Ctrl-C)\n"
                "  1  an error reply from damon-perfd, an invalid reply, or an I/O error\n"
                "  2  invalid command line\n"
                "  3  damon-perfd is not running, or went away\n"
                "  4  permission denied (on the socket, or by the daemon)\n\n"
                "See damonctl(1).\n");
}

enum {
        ARG_VERSION = 0x100,
        ARG_ADDRESS,
        ARG_JSON,
        ARG_INTERVAL,
        ARG_COUNT,
        ARG_PROMETHEUS,
        ARG_TEXTFILE,
        ARG_TARGET,
        ARG_TOP,
        ARG_SAMPLES,
        ARG_MAX_PER_SECOND,
};

/* Which command takes which option (global ones are taken by all). */
static const struct {
        const char *name;
        int (*run)(struct ctl *ctl);
        int options[6];
} commands[] = {
        { "stats",   ctl_stats,   { ARG_INTERVAL, ARG_COUNT, ARG_PROMETHEUS, ARG_TEXTFILE } },
        { "cpus",    ctl_cpus,    {} },
        { "targets", ctl_targets, {} },
        { "regions", ctl_regions, { ARG_TARGET, ARG_TOP } },
        { "damon",   ctl_damon,   { ARG_TOP } },
        { "monitor", ctl_monitor, { ARG_SAMPLES, ARG_MAX_PER_SECOND } },
        { "reload",  ctl_reload,  {} },
};

static const struct option options[] = {
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, ARG_VERSION },
        { "address", required_argument, NULL, ARG_ADDRESS },
        { "json", no_argument, NULL, ARG_JSON },
        { "interval", required_argument, NULL, ARG_INTERVAL },
        { "count", required_argument, NULL, ARG_COUNT },
        { "prometheus", no_argument, NULL, ARG_PROMETHEUS },
        { "textfile", required_argument, NULL, ARG_TEXTFILE },
        { "target", required_argument, NULL, ARG_TARGET },
        { "top", required_argument, NULL, ARG_TOP },
        { "samples", no_argument, NULL, ARG_SAMPLES },
        { "max-per-second", required_argument, NULL, ARG_MAX_PER_SECOND },
        {}
};

static int usage_error(const char *format, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *format, ...) {
        va_list ap;

        fputs("damonctl: ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputs("\n"
              "usage: damonctl [--address=unix:PATH] [--json] {stats|cpus|targets|regions|damon|monitor|reload} ...\n"
              "See 'damonctl --help'.\n", stderr);
        return CTL_EXIT_USAGE;
}

static int parse_number(const char *arg, const char *name, uint64_t min, uint64_t max, uint64_t *ret) {
        unsigned long long v;
        char *end;

        errno = 0;
        v = strtoull(arg, &end, 10);
        if (errno || end == arg || *end || arg[0] == '-' || v < min || v > max)
                return usage_error("--%s: expected a whole number between %llu and %llu, got '%s'", name,
                                   (unsigned long long) min, (unsigned long long) max, arg);
        *ret = v;
        return CTL_EXIT_OK;
}

static const char *option_name(int opt) {
        for (size_t i = 0; options[i].name; i++)
                if (options[i].val == opt)
                        return options[i].name;
        return "?";
}

static bool command_takes(size_t command, int opt) {
        for (size_t i = 0; i < DP_ARRAY_SIZE(commands[command].options) && commands[command].options[i]; i++)
                if (commands[command].options[i] == opt)
                        return true;
        return false;
}

/* Returns -1 to go on and run *command, or an exit code. */
static int parse_argv(int argc, char **argv, struct ctl *ctl, size_t *command) {
        int seen[16], n_seen = 0, opt, k;
        uint64_t v;

        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help(stdout);
                        return CTL_EXIT_OK;
                case ARG_VERSION:
                        printf("damonctl %s\n", DP_VERSION);
                        return CTL_EXIT_OK;
                case ARG_ADDRESS:
                        ctl->address = optarg;
                        break;
                case ARG_JSON:
                        ctl->json = true;
                        break;
                case ARG_INTERVAL:
                        if ((k = parse_number(optarg, "interval", 1, 86400, &ctl->interval_sec)) != CTL_EXIT_OK)
                                return k;
                        break;
                case ARG_COUNT:
                        if ((k = parse_number(optarg, "count", 1, UINT32_MAX, &ctl->count)) != CTL_EXIT_OK)
                                return k;
                        break;
                case ARG_PROMETHEUS:
                        ctl->prometheus = true;
                        break;
                case ARG_TEXTFILE:
                        if (!*optarg)
                                return usage_error("--textfile: expected a directory");
                        ctl->textfile_dir = optarg;
                        ctl->prometheus = true;
                        break;
                case ARG_TARGET:
                        if ((k = parse_number(optarg, "target", 0, INT_MAX, &v)) != CTL_EXIT_OK)
                                return k;
                        ctl->target = (int64_t) v;
                        ctl->target_set = true;
                        break;
                case ARG_TOP:
                        if ((k = parse_number(optarg, "top", 1, INT32_MAX, &ctl->top)) != CTL_EXIT_OK)
                                return k;
                        break;
                case ARG_SAMPLES:
                        ctl->samples = true;
                        break;
                case ARG_MAX_PER_SECOND:
                        if ((k = parse_number(optarg, "max-per-second", 1, 1000000, &ctl->max_per_second)) !=
                            CTL_EXIT_OK)
                                return k;
                        ctl->max_per_second_set = true;
                        break;
                case ':':
                        return usage_error("option '%s' needs an argument", argv[optind - 1]);
                default:
                        return usage_error("unknown option '%s'", argv[optind - 1]);
                }
                if (opt >= ARG_INTERVAL && n_seen < (int) DP_ARRAY_SIZE(seen))
                        seen[n_seen++] = opt;
        }

        if (optind >= argc)
                return usage_error("no command given");
        for (*command = 0; *command < DP_ARRAY_SIZE(commands); (*command)++)
                if (strcmp(commands[*command].name, argv[optind]) == 0)
                        break;
        if (*command == DP_ARRAY_SIZE(commands))
                return usage_error("unknown command '%s'", argv[optind]);
        if (optind + 1 < argc)
                return usage_error("%s: unexpected argument '%s'", argv[optind], argv[optind + 1]);
        for (int i = 0; i < n_seen; i++)
                if (!command_takes(*command, seen[i]))
                        return usage_error("%s does not take --%s", argv[optind], option_name(seen[i]));

        if (ctl->count > 0 && ctl->interval_sec == 0)
                return usage_error("--count needs --interval");
        if (ctl->json && ctl->prometheus)
                return usage_error("--json and --prometheus exclude each other");
        if (ctl->max_per_second_set && !ctl->samples)
                return usage_error("--max-per-second needs --samples");

        if (!ctl->address)
                ctl->address = getenv(CTL_ADDRESS_ENV);
        if (!ctl->address || !*ctl->address)
                ctl->address = CTL_ADDRESS_DEFAULT;
        if (!(strncmp(ctl->address, "unix:", 5) == 0 && ctl->address[5]) && ctl->address[0] != '/')
                return usage_error("invalid address '%s': expected unix:PATH", ctl->address);
        return -1;
}

int main(int argc, char **argv) {
        struct ctl ctl = {};
        size_t command = 0;
        int k;

        k = parse_argv(argc, argv, &ctl, &command);
        if (k >= 0)
                return k;
        k = commands[command].run(&ctl);
        dp_varlink_client_free(ctl.client);
        return k;
}
