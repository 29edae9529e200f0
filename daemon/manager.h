/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

#include <stdatomic.h>
#include <systemd/sd-event.h>

#include "channel.h"
#include "config-file.h"
#include "config.h"
#include "cpu-list.h"
#include "stats.h"
#include "damon-thread.h"
#include "event-hub.h"
#include "hotplug.h"
#include "pmu-select.h"
#include "sampler.h"
#include "test-seam.h"
#include "tracker-thread.h"

enum dump_format {
        DUMP_NONE,
        DUMP_TEXT,
        DUMP_JSON,
};

struct manager_options {
        struct dp_config config;
        uint64_t duration_usec;         /* 0: until signalled */
        uint64_t print_interval_sec;    /* 0: no periodic report */
        uint32_t top;
        enum dump_format dump_stats;
        const char *stats_file;
        const char *replay;             /* a perf.data capture to analyse instead */
        const char *varlink_path;       /* NULL: DP_VARLINK_SERVER_SOCKET_PATH */
        const char *varlink_group;      /* owner group of the socket, NULL: root's */
        bool no_varlink;
        bool print_events;              /* --print-events: print what each CPU would open, and exit */

        /* How a reload reads the configuration again: the files, then the
         * command line on top, as at startup.  NULL: reload keeps it. */
        int argc;
        char **argv;
        int (*load_config)(const struct manager_options *running, struct dp_config *ret,
                           dp_config_report_t report, void *userdata);
};

/* Samples lost on one CPU since its last journal report (rate-limited). */
struct loss_report {
        uint64_t overflow, lost, lost_samples;
        uint64_t reported_ns;           /* 0: never reported */
};

struct manager {
        struct manager_options o;
        /* The detected PMUs and the source choice with its reason; the
         * samplers' source options point into it. */
        struct pmu_selection selection;
        const struct dp_source *source;
        struct dp_source_context source_context; /* this machine for the decoders (IBS errata, SPE MIDRs) */
        uint32_t *midr;                 /* DP_CPU_MAX entries behind source_context.midr (SPE only) */
        struct dp_cpu_list cpus;
        const struct test_seam *test;   /* test injections, read once at start-up */

        size_t n;
        /* One per configured CPU: all that its reader and the tracker share
         * (queue, wake fd, counters); the tracker sees only these. */
        struct channel *channels;
        struct sampler *samplers;       /* one per channel, in the same order */
        int stop_fd;
        atomic_bool readers_stop;
        struct tracker_thread *tracker;
        struct damon_thread *damon;     /* the only writer of DAMON sysfs */
        struct hotplug *hotplug;        /* closes and reopens the samplers of CPUs going offline and back */
        struct event_hub *hub;

        sd_event *event;
        struct dp_varlink_server *varlink;
        sd_event_source *hub_source;
        sd_event_source *tick_source;   /* the look at counters and CPUs (on_tick()) */
        struct monitor *monitors;       /* Monitor() subscribers */
        struct sampler_options sampler_options;
        uint64_t start_ns;
        struct dp_stats_view view;      /* scratch for reports */

        /* Valid samples per second between the last two collections at least
         * RATE_WINDOW_MIN_NS apart (looks or queries). */
        uint64_t rate_valid, rate_ns;
        double sample_rate;
        struct dp_counter_values *prev; /* per CPU, at the last look */
        struct loss_report *loss;       /* per CPU */
        bool losses_reported;           /* by the last look: the next comes at the loss interval */

        /* systemd: what the last STATUS= said, and the watchdog's view of the tracker. */
        bool status_sent;
        size_t status_running;
        double status_rate;
        uint64_t status_ns;             /* CLOCK_MONOTONIC when STATUS= was last sent */
        uint64_t watchdog_usec;         /* WatchdogSec, 0: none */
        bool tracker_stalled;
        uint64_t stall_heartbeat_ns;    /* the tracker's heartbeat when it was found stalled */
};

/* systemd-style reload (SIGHUP, Reload()): reads the configuration again and,
 * only if all of it is valid, applies the target settings live and logs each
 * other changed setting as needing a restart; then re-reads the targets'
 * ranges and retries every CPU in ERROR.  An invalid configuration changes
 * nothing: -EINVAL, with its errors ("file:line: ...") in *ret_errors when
 * that is non-NULL (a NULL-terminated array; free with manager_errors_free()). */
int manager_reload(struct manager *m, char ***ret_errors);
void manager_errors_free(char **errors);

/* The next look at the counters and CPUs now, not at its interval: a CPU
 * left RUNNING, or a Monitor() subscriber wants its per-second events. */
void manager_look_soon(struct manager *m);

/* A fresh snapshot of every CPU's counters into m->view. */
void manager_collect(struct manager *m);

/* The CPUs to sample: CPUs= as given, else the ones online now. */
int manager_cpu_list(const struct dp_config *c, struct dp_cpu_list *cpus);

/* Picks the source, sets up every CPU's sampler and starts the threads.  A CPU
 * that fails is left in ERROR; only a failure that leaves nothing to run is an error. */
int manager_new(const struct manager_options *options, struct manager **ret);

/* Runs the event loop until SIGTERM/SIGINT or the duration ends, then stops
 * the pipeline in order (readers drain their rings, the tracker drains the queues). */
int manager_run(struct manager *m);

void manager_free(struct manager *m);
