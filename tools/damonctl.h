/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * damonctl: the command-line client of damon-perfd's varlink interface.
 * Shared between the command files: the parsed command line, the exit
 * codes, and the one way every command calls the daemon and reports failure.
 */

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "varlink-client.h"

#define CTL_INTERFACE "io.damon.perfd"
#define CTL_ADDRESS_DEFAULT "unix:/run/damon-perfd/io.damon.perfd"
#define CTL_ADDRESS_ENV "DAMON_PERFD_ADDRESS"

/* Documented in --help and damonctl(1). */
enum {
        CTL_EXIT_OK = 0,
        CTL_EXIT_FAILURE = 1,           /* an error reply from the daemon, a bad reply, or I/O */
        CTL_EXIT_USAGE = 2,             /* bad command line */
        CTL_EXIT_UNREACHABLE = 3,       /* damon-perfd is not running, or went away */
        CTL_EXIT_PERMISSION = 4,        /* permission denied: socket or method */
        CTL_EXIT_DAMAGED = 5,           /* decode: the input is damaged (the rest is still dumped) */
};

enum ctl_decode_format {
        CTL_DECODE_NONE,
        CTL_DECODE_SPE,                 /* ARM SPE profiling-buffer (AUX) bytes */
        CTL_DECODE_IBS,                 /* AMD IBS op PERF_SAMPLE_RAW payloads */
        CTL_DECODE_PERF_DATA,           /* a perf record capture, sample by sample */
};

struct ctl {
        const char *address;
        bool json;

        /* stats */
        bool prometheus;
        const char *textfile_dir;
        uint64_t interval_sec;          /* 0: once */
        uint64_t count;                 /* 0: until interrupted */

        /* regions */
        bool target_set;
        int64_t target;
        uint64_t top;                   /* 0: the daemon's default */

        /* monitor */
        bool samples;
        bool max_per_second_set;
        uint64_t max_per_second;

        /* heatmap (and --target above; --target=phys is 0) */
        uint64_t interval_ns;           /* 0: the daemon's aggregation interval (live), 100 ms (replay) */
        uint64_t duration_ns;           /* 0: until interrupted */
        uint64_t range_start;           /* range_start == range_end: all regions, gaps collapsed */
        uint64_t range_end;
        bool no_color;
        const char *svg_path;
        const char *replay_path;

        /* selftest (and --duration above: the test window) */
        bool standalone;
        const char *workload_path;      /* NULL: damon-perfd-workload found beside damonctl or in $PATH */
        const char *daemon_path;        /* NULL: damon-perfd found likewise */
        const char *config_path;        /* --standalone's configuration; NULL: a private one, DAMON off */

        /* decode (and --json above: one object per line) */
        enum ctl_decode_format decode_format;
        bool cpu_set;                   /* --cpu=FAMILY:MODEL: the IBS samples' CPU, for errata */
        uint32_t cpu_family, cpu_model;
        bool midr_set;                  /* --cpu=MIDR: the SPE samples' CPU, for its data-source encoding */
        uint32_t midr;
        const char *input_path;         /* NULL or "-": standard input */

        struct dp_varlink_client *client;
};

/* Set by SIGINT/SIGTERM once ctl_handle_signals() is in place. */
extern volatile sig_atomic_t ctl_interrupted;

/* SIGINT and SIGTERM end a blocking read on the daemon's socket (the handler
 * shuts it down) and set ctl_interrupted, so long-running commands exit 0. */
int ctl_handle_signals(void);

/* Connects to ctl->address unless connected.  An exit code; prints why on failure. */
int ctl_connect(struct ctl *ctl);

/* Calls io.damon.perfd.@method with @parameters (borrowed, may be NULL) and
 * puts the reply's parameters in *ret.  With @more, returns the first reply
 * and ctl_next() gives the rest.  An exit code: on failure the reason (an
 * error reply with its parameters, or a transport failure) is printed, and
 * with @more *continues says whether more replies follow.  When a signal
 * interrupted the call (ctl_interrupted), CTL_EXIT_OK with *ret NULL. */
int ctl_call(struct ctl *ctl, const char *method, json_t *parameters, json_t **ret);
int ctl_call_more(struct ctl *ctl, const char *method, json_t *parameters, json_t **ret, bool *continues);
int ctl_next(struct ctl *ctl, json_t **ret, bool *continues);

/* The socket path in ctl->address, for messages. */
const char *ctl_address_path(const struct ctl *ctl);

/* Prints @reply pretty-printed on stdout (--json).  An exit code. */
int ctl_print_json(json_t *reply);

/* "invalid reply from damon-perfd: @what", CTL_EXIT_FAILURE. */
int ctl_bad_reply(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Reads an integer / string field of a reply object, or reports a bad reply
 * naming @where.@key.  @optional accepts absence or null (then *ret is
 * left alone and false is stored in *present if given).  An exit code. */
int ctl_get_int(json_t *o, const char *where, const char *key, int64_t *ret);
int ctl_get_string(json_t *o, const char *where, const char *key, const char **ret);
int ctl_get_optional_int(json_t *o, const char *where, const char *key, int64_t *ret, bool *present);
int ctl_get_optional_string(json_t *o, const char *where, const char *key, const char **ret);
int ctl_get_array(json_t *o, const char *where, const char *key, json_t **ret);

/* The commands; each returns an exit code. */
int ctl_stats(struct ctl *ctl);
int ctl_cpus(struct ctl *ctl);
int ctl_targets(struct ctl *ctl);
int ctl_regions(struct ctl *ctl);
int ctl_heatmap(struct ctl *ctl);
int ctl_damon(struct ctl *ctl);
int ctl_monitor(struct ctl *ctl);
int ctl_reload(struct ctl *ctl);
int ctl_selftest(struct ctl *ctl);
int ctl_decode(struct ctl *ctl);
