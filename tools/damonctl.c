/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl: reads damon-perfd's counters, CPUs, targets and regions over its
 * varlink interface, follows its events, and asks it to reload; and dumps raw
 * PMU data through the daemon's decoders (decode), no daemon needed.
 */
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "parse-util.h"
#include "time-util.h"
#include "damonctl.h"
#include "decode-spe.h"
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
                "  heatmap                One target's access rate over address and time, live or\n"
                "                         from a perf.data capture; in the terminal and as SVG\n"
                "  damon                  DAMON's regions beside the PMU's, and what the daemon does\n"
                "                         with DAMON (owned, attached, observe_only, off)\n"
                "  monitor                Follow state changes (and samples) until Ctrl-C\n"
                "  reload                 Re-read the configuration, the targets' ranges, and retry CPUs\n"
                "                         in ERROR (root only); status 1 with each file:line if invalid\n"
                "  selftest               Check every pipeline layer with a workload of known hot area,\n"
                "                         then a verdict: FULLY INTEGRATED, PLUMBING-ONLY or UNUSABLE\n"
                "  decode [FILE|-]        Dump raw ARM SPE AUX bytes or AMD IBS op RAW payloads (binary\n"
                "                         or hex text) record by record, like perf report -D, with the\n"
                "                         sample the daemon makes of each, or a perf.data capture sample\n"
                "                         by sample as the daemon's replay decodes it; no daemon needed\n\n"
                "Options:\n"
                "  -h --help              Show this help\n"
                "     --version           Show the version\n"
                "     --address=ADDRESS   unix:PATH of the daemon's socket (default: $" CTL_ADDRESS_ENV ",\n"
                "                         else " CTL_ADDRESS_DEFAULT ")\n"
                "     --json              Print the reply parameters as received, pretty-printed\n"
                "                         (decode: one object per line)\n\n"
                "stats:\n"
                "     --interval=SEC      Repeat every SEC seconds with per-second rates (levels as\n"
                "                         values); the first report averages since the daemon started\n"
                "     --count=N           Stop after N reports (with --interval)\n"
                "     --prometheus        Prometheus text exposition format 0.0.4\n"
                "     --textfile=DIR      Write DIR/damon_perfd.prom atomically, for node_exporter's\n"
                "                         textfile collector (implies --prometheus)\n"
                "regions:\n"
                "     --target=PID        Only this target (0 or phys: the physical address space)\n"
                "     --top=N             At most N regions (also for damon)\n"
                "heatmap:\n"
                "     --target=PID|phys   The target (default: the hottest region's; in a replay,\n"
                "                         the process with the most samples)\n"
                "     --interval=SEC      A column every SEC seconds, e.g. 0.2 (default: the daemon's\n"
                "                         aggregation interval; in a replay, its aggregation, 0.1)\n"
                "     --duration=TIME     Stop after TIME: 1.5 (seconds), 90s, 2min, 1min 30s, 500ms\n"
                "                         (default: at Ctrl-C)\n"
                "     --range=START-END   Only these addresses (hex), gaps and all\n"
                "     --no-color          ASCII shades instead of colours (also when not a terminal)\n"
                "     --svg=FILE          Write the whole picture as SVG at the end\n"
                "     --replay=CAPTURE    From a perf.data capture (perf record -d) instead of the daemon\n"
                "monitor:\n"
                "     --samples           Also show sampled records and misses\n"
                "     --max-per-second=N  At most N sampled records per second\n"
                "selftest:\n"
                "     --duration=TIME     The test window, at least 1s (default 5s)\n"
                "     --standalone        Start a private damon-perfd for the test instead of asking the\n"
                "                         running one (a private socket; [DAMON] Mode=off)\n"
                "     --config=FILE       --standalone: the private instance's configuration instead\n"
                "     --daemon=PATH       damon-perfd (default: beside damonctl, else $PATH)\n"
                "     --workload=PATH     damon-perfd-workload (default: beside damonctl, else $PATH,\n"
                "                         else a child of damonctl)\n"
                "decode:\n"
                "     --format=spe|ibs|perf.data\n"
                "                         What the input holds: ARM SPE profiling-buffer bytes, AMD IBS\n"
                "                         op PERF_SAMPLE_RAW payloads one after another, or a perf record\n"
                "                         capture (a line per sample: pid/tid, CPU, time, address,\n"
                "                         physical address, weight, level, load/store, the layer-4\n"
                "                         counter, data_src as perf script prints it) (required)\n"
                "     --cpu=FAMILY:MODEL  The IBS samples' CPU, hex or decimal (e.g. 0x19:0x01), so that\n"
                "                         its errata apply (erratum 1293); default: none applied\n"
                "     --cpu=MIDR          The SPE samples' CPU, its MIDR_EL1 in hex (e.g. 0x410fd0c0), so\n"
                "                         that its DATA-SOURCE packet is read as perf reads it; default:\n"
                "                         unknown, levels from the events\n\n"
                "Exit status:\n"
                "  0  success (also when monitor or stats --interval is stopped with Ctrl-C)\n"
                "  1  an error reply from damon-perfd, an invalid reply, or an I/O error\n"
                "  2  invalid command line\n"
                "  3  damon-perfd is not running, or went away\n"
                "  4  permission denied (on the socket, or by the daemon)\n"
                "  5  decode: the input is damaged (everything that decodes is still dumped)\n"
                "  selftest: 0 FULLY INTEGRATED, 10 PLUMBING-ONLY, 11 UNUSABLE (or 1-4 as above)\n\n"
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
        ARG_DURATION,
        ARG_RANGE,
        ARG_NO_COLOR,
        ARG_SVG,
        ARG_REPLAY,
        ARG_STANDALONE,
        ARG_WORKLOAD,
        ARG_DAEMON,
        ARG_CONFIG,
        ARG_FORMAT,
        ARG_CPU,
};

/* Which command takes which option (global ones are taken by all). */
static const struct {
        const char *name;
        int (*run)(struct ctl *ctl);
        int options[8];
} commands[] = {
        { "stats",   ctl_stats,   { ARG_INTERVAL, ARG_COUNT, ARG_PROMETHEUS, ARG_TEXTFILE } },
        { "cpus",    ctl_cpus,    {} },
        { "targets", ctl_targets, {} },
        { "regions", ctl_regions, { ARG_TARGET, ARG_TOP } },
        { "heatmap", ctl_heatmap, { ARG_TARGET, ARG_INTERVAL, ARG_DURATION, ARG_RANGE, ARG_NO_COLOR, ARG_SVG,
                                    ARG_REPLAY } },
        { "damon",   ctl_damon,   { ARG_TOP } },
        { "monitor", ctl_monitor, { ARG_SAMPLES, ARG_MAX_PER_SECOND } },
        { "reload",  ctl_reload,  {} },
        { "selftest", ctl_selftest, { ARG_DURATION, ARG_STANDALONE, ARG_WORKLOAD, ARG_DAEMON, ARG_CONFIG } },
        { "decode",  ctl_decode,  { ARG_FORMAT, ARG_CPU } },
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
        { "duration", required_argument, NULL, ARG_DURATION },
        { "range", required_argument, NULL, ARG_RANGE },
        { "no-color", no_argument, NULL, ARG_NO_COLOR },
        { "svg", required_argument, NULL, ARG_SVG },
        { "replay", required_argument, NULL, ARG_REPLAY },
        { "standalone", no_argument, NULL, ARG_STANDALONE },
        { "workload", required_argument, NULL, ARG_WORKLOAD },
        { "daemon", required_argument, NULL, ARG_DAEMON },
        { "config", required_argument, NULL, ARG_CONFIG },
        { "format", required_argument, NULL, ARG_FORMAT },
        { "cpu", required_argument, NULL, ARG_CPU },
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
              "usage: damonctl [--address=unix:PATH] [--json] {stats|cpus|targets|regions|heatmap|damon|monitor|reload|selftest|decode} ...\n"
              "See 'damonctl --help'.\n", stderr);
        return CTL_EXIT_USAGE;
}

static int parse_number(const char *arg, const char *name, uint64_t min, uint64_t max, uint64_t *ret) {
        if (dp_parse_u64_in(arg, min, max, ret) < 0)
                return usage_error("--%s: expected a whole number between %llu and %llu, got '%s'", name,
                                   (unsigned long long) min, (unsigned long long) max, arg);
        return CTL_EXIT_OK;
}

/* Decimal seconds, e.g. "0.2", into nanoseconds. */
static int parse_seconds(const char *arg, const char *name, double min, double max, uint64_t *ret_ns) {
        double v;

        if (dp_parse_double(arg, &v) < 0 || !(v >= min && v <= max))
                return usage_error("--%s: expected seconds between %g and %g, got '%s'", name, min, max, arg);
        *ret_ns = (uint64_t) (v * 1e9 + 0.5);
        return CTL_EXIT_OK;
}

/* A time span as damon-perfd's configuration takes them ("1.5", "90s",
 * "2min", "1min 30s", "500ms"), into nanoseconds. */
static int parse_timespan(const char *arg, const char *name, uint64_t min_usec, uint64_t max_usec,
                          uint64_t *ret_ns) {
        char min[DP_TIMESPAN_MAX], max[DP_TIMESPAN_MAX];
        uint64_t us;

        if (dp_timespan_parse_in(arg, min_usec, max_usec, &us) < 0) {
                (void) dp_timespan_format(min_usec, min, sizeof(min));
                (void) dp_timespan_format(max_usec, max, sizeof(max));
                return usage_error("--%s: expected a time span between %s and %s, e.g. 1.5, 90s, 2min or "
                                   "1min 30s, got '%s'", name, min, max, arg);
        }
        *ret_ns = us * NSEC_PER_USEC;
        return CTL_EXIT_OK;
}

/* One hex address, with or without 0x, as in /proc/PID/maps. */
static bool parse_hex(const char *s, size_t len, uint64_t *ret) {
        char buf[32];

        if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                s += 2;
                len -= 2;
        }
        if (len == 0 || len >= sizeof(buf) || strspn(s, "0123456789abcdefABCDEF") < len)
                return false;
        memcpy(buf, s, len);
        buf[len] = '\0';
        return dp_parse_uint(buf, 16, ret, NULL) == 0;
}

static int parse_range(const char *arg, uint64_t *ret_start, uint64_t *ret_end) {
        const char *dash = strchr(arg, '-');

        if (!dash || !parse_hex(arg, (size_t) (dash - arg), ret_start) ||
            !parse_hex(dash + 1, strlen(dash + 1), ret_end) || *ret_start >= *ret_end)
                return usage_error("--range: expected START-END in hex with START below END, "
                                   "e.g. 7f0000000000-7f0000400000, got '%s'", arg);
        return CTL_EXIT_OK;
}

/* A CPU family or model: hex with 0x, else decimal (as /proc/cpuinfo has it). */
static bool parse_cpu_number(const char *s, size_t len, uint32_t *ret) {
        const char *end;
        uint64_t v;

        if (len >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
                if (!parse_hex(s, len, &v))
                        return false;
        } else if (dp_parse_uint(s, 10, &v, &end) < 0 || end != s + len)
                return false;
        if (v > UINT32_MAX)
                return false;
        *ret = (uint32_t) v;
        return true;
}

static int parse_cpu(const char *arg, struct ctl *ctl) {
        const char *colon = strchr(arg, ':');

        /* No colon: an arm64 MIDR_EL1, as sysfs and HEADER_CPUID write it. */
        if (!colon) {
                if (dp_midr_parse(arg, &ctl->midr) < 0)
                        return usage_error("--cpu: expected FAMILY:MODEL (IBS) or a MIDR_EL1 in hex with 0x "
                                           "(SPE, e.g. 0x410fd0c0), got '%s'", arg);
                ctl->midr_set = true;
                return CTL_EXIT_OK;
        }
        if ( !parse_cpu_number(arg, (size_t) (colon - arg), &ctl->cpu_family) ||
            !parse_cpu_number(colon + 1, strlen(colon + 1), &ctl->cpu_model))
                return usage_error("--cpu: expected FAMILY:MODEL, hex with 0x or decimal (0x19:0x01 or 25:1), "
                                   "got '%s'", arg);
        ctl->cpu_set = true;
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

/* parse_argv() and its steps return this to go on, else the exit code to end with. */
#define GO_ON (-1)

/* The command-specific options given, to check against the command once it is known. */
struct seen_options {
        int opt[16];
        int n;
};

/* The switch a flag option turns on; NULL if @opt takes an argument. */
static bool *flag_option(int opt, struct ctl *ctl) {
        switch (opt) {
        case ARG_JSON:
                return &ctl->json;
        case ARG_PROMETHEUS:
                return &ctl->prometheus;
        case ARG_SAMPLES:
                return &ctl->samples;
        case ARG_NO_COLOR:
                return &ctl->no_color;
        case ARG_STANDALONE:
                return &ctl->standalone;
        default:
                return NULL;
        }
}

/* An option naming a file, a directory, an address or a format; CTL_EXIT_OK or a usage error's exit code. */
static int parse_name_option(int opt, const char *arg, struct ctl *ctl) {
        switch (opt) {
        case ARG_ADDRESS:
                ctl->address = arg;
                return CTL_EXIT_OK;
        case ARG_TEXTFILE:
                if (!*arg)
                        return usage_error("--textfile: expected a directory");
                ctl->textfile_dir = arg;
                ctl->prometheus = true;
                return CTL_EXIT_OK;
        case ARG_SVG:
                if (!*arg)
                        return usage_error("--svg: expected a file name");
                ctl->svg_path = arg;
                return CTL_EXIT_OK;
        case ARG_REPLAY:
                if (!*arg)
                        return usage_error("--replay: expected a perf.data file");
                ctl->replay_path = arg;
                return CTL_EXIT_OK;
        case ARG_WORKLOAD:
        case ARG_DAEMON:
        case ARG_CONFIG:
                if (!*arg)
                        return usage_error("--%s: expected a file name", option_name(opt));
                *(opt == ARG_WORKLOAD ? &ctl->workload_path
                  : opt == ARG_DAEMON ? &ctl->daemon_path : &ctl->config_path) = arg;
                return CTL_EXIT_OK;
        case ARG_FORMAT:
                if (strcmp(arg, "spe") == 0)
                        ctl->decode_format = CTL_DECODE_SPE;
                else if (strcmp(arg, "ibs") == 0)
                        ctl->decode_format = CTL_DECODE_IBS;
                else if (strcmp(arg, "perf.data") == 0)
                        ctl->decode_format = CTL_DECODE_PERF_DATA;
                else
                        return usage_error("--format: expected spe, ibs or perf.data, got '%s'", arg);
                return CTL_EXIT_OK;
        default:        /* every option is handled above; getopt's '?' in parse_options() */
                return usage_error("unknown option '--%s'", option_name(opt));
        }
}

/* Any option but --help, --version and --interval (parsed once the command
 * is known); CTL_EXIT_OK or a usage error's exit code. */
static int parse_option(int opt, const char *arg, struct ctl *ctl) {
        bool *flag = flag_option(opt, ctl);
        uint64_t v;
        int k;

        if (flag) {
                *flag = true;
                return CTL_EXIT_OK;
        }
        switch (opt) {
        case ARG_COUNT:
                return parse_number(arg, "count", 1, UINT32_MAX, &ctl->count);
        case ARG_TARGET:
                if (strcmp(arg, "phys") == 0)
                        v = 0;
                else if ((k = parse_number(arg, "target", 0, INT_MAX, &v)) != CTL_EXIT_OK)
                        return k;
                ctl->target = (int64_t) v;
                ctl->target_set = true;
                return CTL_EXIT_OK;
        case ARG_TOP:
                return parse_number(arg, "top", 1, INT32_MAX, &ctl->top);
        case ARG_MAX_PER_SECOND:
                if ((k = parse_number(arg, "max-per-second", 1, 1000000, &ctl->max_per_second)) != CTL_EXIT_OK)
                        return k;
                ctl->max_per_second_set = true;
                return CTL_EXIT_OK;
        case ARG_DURATION:
                return parse_timespan(arg, "duration", USEC_PER_MSEC, 10000000 * USEC_PER_SEC, &ctl->duration_ns);
        case ARG_RANGE:
                return parse_range(arg, &ctl->range_start, &ctl->range_end);
        case ARG_CPU:
                return parse_cpu(arg, ctl);
        default:
                return parse_name_option(opt, arg, ctl);
        }
}

/* The options, wherever they stand; GO_ON, or an exit code (--help and
 * --version end here).  --interval is only kept in *interval_arg: whole
 * seconds for stats, fractions for heatmap. */
static int parse_options(int argc, char **argv, struct ctl *ctl, struct seen_options *seen,
                         const char **interval_arg) {
        int opt, k;

        opterr = 0;
        while ((opt = getopt_long(argc, argv, ":h", options, NULL)) >= 0) {
                switch (opt) {
                case 'h':
                        help(stdout);
                        return CTL_EXIT_OK;
                case ARG_VERSION:
                        printf("damonctl %s\n", DP_VERSION);
                        return CTL_EXIT_OK;
                case ':':
                        return usage_error("option '%s' needs an argument", argv[optind - 1]);
                case '?':
                        return usage_error("unknown option '%s'", argv[optind - 1]);
                case ARG_INTERVAL:
                        *interval_arg = optarg;
                        break;
                default:
                        if ((k = parse_option(opt, optarg, ctl)) != CTL_EXIT_OK)
                                return k;
                        break;
                }
                if (opt >= ARG_INTERVAL && seen->n < (int) DP_ARRAY_SIZE(seen->opt))
                        seen->opt[seen->n++] = opt;
        }
        return GO_ON;
}

/* The command, its argument, and whether it takes the options given; GO_ON or an exit code. */
static int parse_command(int argc, char **argv, struct ctl *ctl, const struct seen_options *seen,
                         size_t *command) {
        int arg;

        if (optind >= argc)
                return usage_error("no command given");
        for (*command = 0; *command < DP_ARRAY_SIZE(commands); (*command)++)
                if (strcmp(commands[*command].name, argv[optind]) == 0)
                        break;
        if (*command == DP_ARRAY_SIZE(commands))
                return usage_error("unknown command '%s'", argv[optind]);
        arg = optind + 1;
        if (commands[*command].run == ctl_decode && arg < argc)
                ctl->input_path = argv[arg++];
        if (arg < argc)
                return usage_error("%s: unexpected argument '%s'", argv[optind], argv[arg]);
        for (int i = 0; i < seen->n; i++)
                if (!command_takes(*command, seen->opt[i]))
                        return usage_error("%s does not take --%s", argv[optind], option_name(seen->opt[i]));
        return GO_ON;
}

/* Options that exclude or need each other; GO_ON or an exit code. */
static int check_combinations(const struct ctl *ctl, size_t command) {
        if (commands[command].run == ctl_heatmap && ctl->json)
                return usage_error("heatmap does not take --json: it draws a picture (--svg=FILE for a file)");
        if (ctl->replay_path && ctl->duration_ns > 0)
                return usage_error("--duration is for a live heatmap: a replay takes the whole capture");
        if (commands[command].run == ctl_selftest && ctl->duration_ns > 0 && ctl->duration_ns < 1000000000ull)
                return usage_error("selftest: --duration must be at least 1 second");
        if (ctl->config_path && !ctl->standalone)
                return usage_error("--config is the private instance's: it needs --standalone");
        if (ctl->count > 0 && ctl->interval_sec == 0)
                return usage_error("--count needs --interval");
        if (ctl->json && ctl->prometheus)
                return usage_error("--json and --prometheus exclude each other");
        if (ctl->max_per_second_set && !ctl->samples)
                return usage_error("--max-per-second needs --samples");
        return GO_ON;
}

/* decode: what it reads, and as what (no daemon to talk to); GO_ON or an exit code. */
static int check_decode(const struct ctl *ctl) {
        if (ctl->decode_format == CTL_DECODE_NONE)
                return usage_error("decode needs --format=spe, --format=ibs or --format=perf.data");
        if ((ctl->cpu_set || ctl->midr_set) && ctl->decode_format == CTL_DECODE_PERF_DATA)
                return usage_error("--cpu is for --format=ibs or spe: a perf.data capture names its CPU itself");
        if (ctl->cpu_set && ctl->decode_format != CTL_DECODE_IBS)
                return usage_error("--cpu=FAMILY:MODEL is for --format=ibs; SPE takes --cpu=MIDR");
        if (ctl->midr_set && ctl->decode_format != CTL_DECODE_SPE)
                return usage_error("--cpu=MIDR is for --format=spe; IBS takes --cpu=FAMILY:MODEL");
        /* A capture is read by its header's offsets: a file, not a pipe. */
        if (ctl->decode_format == CTL_DECODE_PERF_DATA && (!ctl->input_path || strcmp(ctl->input_path, "-") == 0))
                return usage_error("decode --format=perf.data: give the capture's FILE (standard input is not "
                                   "read)");
        /* Nobody types AUX bytes into a terminal by accident: "-" says so. */
        if (!ctl->input_path && isatty(STDIN_FILENO))
                return usage_error("decode: no input: give FILE, or - for standard input");
        return GO_ON;
}

/* The daemon's address: --address, else $DAMON_PERFD_ADDRESS, else the default; GO_ON or an exit code. */
static int resolve_address(struct ctl *ctl) {
        if (!ctl->address)
                ctl->address = getenv(CTL_ADDRESS_ENV);
        if (!ctl->address || !*ctl->address)
                ctl->address = CTL_ADDRESS_DEFAULT;
        if (!(strncmp(ctl->address, "unix:", 5) == 0 && ctl->address[5]) && ctl->address[0] != '/')
                return usage_error("invalid address '%s': expected unix:PATH", ctl->address);
        return GO_ON;
}

/* Returns GO_ON to go on and run *command, or an exit code. */
static int parse_argv(int argc, char **argv, struct ctl *ctl, size_t *command) {
        struct seen_options seen = {};
        const char *interval_arg = NULL;
        int k;

        k = parse_options(argc, argv, ctl, &seen, &interval_arg);
        if (k == GO_ON)
                k = parse_command(argc, argv, ctl, &seen, command);
        if (k != GO_ON)
                return k;
        if (interval_arg) {
                if (commands[*command].run == ctl_heatmap)
                        k = parse_seconds(interval_arg, "interval", 0.001, 86400, &ctl->interval_ns);
                else
                        k = parse_number(interval_arg, "interval", 1, 86400, &ctl->interval_sec);
                if (k != CTL_EXIT_OK)
                        return k;
        }
        k = check_combinations(ctl, *command);
        if (k != GO_ON)
                return k;
        if (commands[*command].run == ctl_decode)
                return check_decode(ctl);
        return resolve_address(ctl);
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
