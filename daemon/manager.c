/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>

#include "channel.h"
#include "config-keys.h"
#include "cpu-hotplug.h"
#include "cpu-list.h"
#include "decode-ibs.h"
#include "decode-spe.h"
#include "fileio.h"
#include "stats.h"
#include "dp-config.h"
#include "event-hub.h"
#include "log.h"
#include "manager-varlink.h"
#include "manager.h"
#include "pmu-select.h"
#include "privileges.h"
#include "report.h"
#include "sampler.h"
#include "test-seam.h"
#include "tracker-thread.h"
#include "time-util.h"

/* Losses on one CPU reach the journal at most this often, summed since the last report. */
#define LOSS_REPORT_INTERVAL_NS (10 * 1000000000ull)
/* A tracker pass takes milliseconds; one this late is stuck, watchdog or not. */
#define TRACKER_STALL_MAX_NS (30 * NSEC_PER_SEC)
/* The main loop's look at its counters and CPUs: see tick_interval_ns(). */
#define TICK_BUSY_NS NSEC_PER_SEC
#define TICK_QUIET_NS (30 * NSEC_PER_SEC)
/* The sample rate is worked out over at least this long. */
#define RATE_WINDOW_MIN_NS NSEC_PER_SEC
/* How long READY=1 waits for the readers to report RUNNING (or ERROR). */
#define SAMPLERS_SETTLE_MAX_NS (5 * 1000000000ull)

int manager_cpu_list(const struct dp_config *c, struct dp_cpu_list *cpus) {
        _cleanup_free_ char *online = NULL;
        const char *text = c->cpus;
        size_t len;
        int r;

        if (!text[0]) {
                r = dp_read_file("/sys/devices/system/cpu/online", &online, &len);
                if (r < 0)
                        return log_error_errno(r, "cannot read /sys/devices/system/cpu/online: %m");
                text = online;
        }
        r = dp_cpu_list_parse(text, cpus);
        if (r < 0)
                log_error("invalid CPU list '%s': expected e.g. 0-3,6", text);
        return r;
}

/* This machine as the decoders need it, read once: the CPU model that IBS
 * errata depend on.  Without it (no x86 family/model) no erratum applies. */
static void load_source_context(struct dp_source_context *context) {
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        memset(context, 0, sizeof(*context));
        r = dp_read_file("/proc/cpuinfo", &text, &len);
        if (r >= 0)
                r = dp_ibs_cpu_from_cpuinfo(text, &context->ibs_cpu);
        if (r < 0) {
                memset(context, 0, sizeof(*context));
                log_debug("no CPU family/model in /proc/cpuinfo (%s): no IBS errata applied", strerror(-r));
                return;
        }
        log_debug("CPU family 0x%x model 0x%x%s", context->ibs_cpu.family, context->ibs_cpu.model,
                  dp_ibs_cpu_has_erratum_1293(&context->ibs_cpu) ? ": IBS erratum 1293 applies" : "");
}

/* Each sampled CPU's MIDR_EL1, read once: perf reads SPE's DATA-SOURCE packet
 * only on the cores whose encoding it lists.  A CPU without the file (offline
 * at start, or configured later by a reload) stays 0, unknown: its levels come
 * from the events. */
static void load_midrs(struct manager *m) {
        if (m->source->aux_format != DP_AUX_ARM_SPE)
                return;
        m->midr = calloc(DP_CPU_MAX, sizeof(*m->midr));
        if (!m->midr) {
                log_warning("no memory for the CPUs' MIDR: SPE levels come from the events");
                return;
        }
        for (size_t i = 0; i < m->cpus.n; i++) {
                _cleanup_free_ char *text = NULL;
                char path[128];
                int cpu = m->cpus.cpu[i], r;

                if (cpu < 0 || cpu >= DP_CPU_MAX)
                        continue;
                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/regs/identification/midr_el1", cpu);
                r = dp_read_file(path, &text, NULL);
                if (r >= 0)
                        r = dp_midr_parse(text, &m->midr[cpu]);
                if (r < 0)
                        log_debug("cpu %d: no MIDR from %s (%s): SPE levels from the events", cpu, path,
                                  strerror(-r));
                else
                        log_debug("cpu %d: MIDR 0x%08" PRIx32 "%s", cpu, m->midr[cpu],
                                  dp_spe_midr_common_ds(m->midr[cpu]) ? ", SPE data source read as perf reads it"
                                                                       : "");
        }
        m->source_context.midr = m->midr;
        m->source_context.n_midr = DP_CPU_MAX;
}

/* Valid samples per second since the rate was last worked out, when that
 * was long enough ago: at a look, and at a query between two looks. */
static void update_sample_rate(struct manager *m, uint64_t now) {
        uint64_t valid = m->view.total.v[DP_C_VALID];

        if (m->rate_ns && now < m->rate_ns + RATE_WINDOW_MIN_NS)
                return;
        if (m->rate_ns)
                m->sample_rate = (double) (valid - m->rate_valid) * 1e9 / (double) (now - m->rate_ns);
        m->rate_valid = valid;
        m->rate_ns = now;
}

void manager_collect(struct manager *m) {
        const struct dp_cpu_stats *stats[DP_CPU_MAX];
        int ids[DP_CPU_MAX];
        uint64_t now = dp_now_ns(CLOCK_MONOTONIC);

        for (size_t i = 0; i < m->n; i++) {
                stats[i] = &m->channels[i].stats;
                ids[i] = m->channels[i].cpu;
        }
        m->view.source = m->source;
        m->view.source_reason = m->selection.choice.reason;
        m->view.uptime_ns = now - m->start_ns;
        dp_stats_collect(&m->view, stats, ids, m->n);
        update_sample_rate(m, now);
        m->view.sample_rate = m->sample_rate;
}

/* The event hub, the hotplug watch, the source and the CPUs to sample. */
static int detect(struct manager *m) {
        int r;

        r = event_hub_new(&m->hub);
        if (r >= 0)
                r = hotplug_new(m->test->cpu_online, &m->hotplug);
        if (r < 0)
                return r;
        r = pmu_selection_run(m->o.config.source, NULL, &m->selection);
        if (r < 0)
                return r;
        m->source = m->selection.choice.source;
        load_source_context(&m->source_context);
        r = manager_cpu_list(&m->o.config, &m->cpus);
        if (r >= 0)
                load_midrs(m);
        return r;
}

/* Per configured CPU: its channel, its sampler and what the reports keep. */
static int allocate_cpus(struct manager *m) {
        m->n = m->cpus.n;
        m->samplers = calloc(m->n, sizeof(*m->samplers));
        /* Nothing open yet: manager_free() must not close fd 0 of a sampler never set up. */
        for (size_t i = 0; m->samplers && i < m->n; i++) {
                m->samplers[i].fd = -1;
                for (size_t e = 0; e < DP_EVENT_PLAN_MAX; e++)
                        m->samplers[i].fds[e] = -1;
        }
        m->channels = channels_new(m->n);
        m->view.cpus = calloc(m->n, sizeof(*m->view.cpus));
        m->prev = calloc(m->n, sizeof(*m->prev));
        m->loss = calloc(m->n, sizeof(*m->loss));
        m->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (!m->samplers || !m->channels || !m->view.cpus || !m->prev || !m->loss || m->stop_fd < 0)
                return -ENOMEM;
        return 0;
}

static void init_sampler_options(struct manager *m) {
        m->sampler_options = (struct sampler_options) {
                .source = m->source,
                .ring_pages = m->o.config.ring_pages,
                .queue_capacity = m->o.config.queue_capacity,
                .poll_ms = m->o.config.poll_ms,
                .hub = m->hub,
                .source_context = &m->source_context,
                .test = m->test,
        };
        pmu_selection_source_options(&m->selection, &m->o.config, &m->sampler_options.source_options);
}

/* Every CPU's channel, and its sampler up to ENABLED; a CPU that fails is
 * left in ERROR (one whose queue could not be allocated, at create). */
static void open_cpus(struct manager *m) {
        for (size_t i = 0; i < m->n; i++) {
                struct channel *c = &m->channels[i];

                (void) channel_open(c, m->cpus.cpu[i], m->source, m->sampler_options.queue_capacity);
                (void) sampler_setup(&m->samplers[i], c, &m->sampler_options, m->stop_fd, &m->readers_stop);
        }
}

/* Down to the capabilities needed, then the tracker, the readers and the
 * DAMON thread; an error only when nothing could be sampled. */
static int start_threads(struct manager *m) {
        size_t running = 0;
        int r;

        /* Samplers open: down to the capabilities the configuration needs, before
         * the first thread, since capabilities are per thread and inherited. */
        r = privileges_drop(&m->o.config, m->samplers, m->n, m->o.no_varlink ? NULL : m->o.varlink_group, NULL);
        if (r < 0)
                return r;

        /* The tracker first, so that no queue fills before anyone drains it. */
        r = tracker_thread_start(&m->o.config, m->channels, m->n, m->hub, &m->tracker);
        if (r < 0)
                return log_error_errno(r, "cannot start the region tracker: %m");
        for (size_t i = 0; i < m->n; i++)
                if (dp_cpu_get_status(&m->channels[i].stats).state == DP_CPU_ENABLED &&
                    sampler_start(&m->samplers[i]) == 0)
                        running++;
        if (running == 0) {
                log_error("no CPU could be sampled with %s; see the errors above", m->source->name);
                return -ENODEV;
        }
        log_debug("started %zu/%zu CPUs with %s (%s)", running, m->n, m->source->name, m->source->description);

        r = damon_thread_start(&m->o.config, m->tracker, &m->damon);
        if (r < 0)
                return log_error_errno(r, "cannot start the DAMON thread: %m");
        return 0;
}

int manager_new(const struct manager_options *options, struct manager **ret) {
        struct manager *m;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->o = *options;
        m->stop_fd = -1;
        m->start_ns = dp_now_ns(CLOCK_MONOTONIC);
        log_started(DP_VERSION);
        m->test = test_seam_get();

        r = detect(m);
        if (r >= 0)
                r = allocate_cpus(m);
        if (r < 0)
                goto fail;
        init_sampler_options(m);
        open_cpus(m);
        r = start_threads(m);
        if (r < 0)
                goto fail;
        *ret = m;
        return 0;

fail:
        manager_free(m);
        return r;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        char reason[64];

        (void) userdata;
        snprintf(reason, sizeof(reason), "received %s", strsignal((int) si->ssi_signo));
        log_stopping(reason);
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int on_duration(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) usec;
        (void) userdata;
        log_stopping("duration reached");
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

struct report_request {
        struct manager *m;
        FILE *f;
        bool json;
};

static int report_with_snapshot(const struct dp_tracker_snapshot *snap, void *userdata) {
        struct report_request *q = userdata;

        if (q->json)
                return report_write_json(q->f, &q->m->view, snap, q->m->o.top);
        report_print(q->f, &q->m->view, snap, q->m->o.top);
        return 0;
}

/* Formats into memory under the snapshot lock, writes after it: a slow
 * terminal or pipe must never hold up the tracker. */
static int report(struct manager *m, FILE *f, bool json) {
        _cleanup_free_ char *text = NULL;
        struct report_request q = { m, NULL, json };
        size_t len = 0;
        int r;

        manager_collect(m);
        q.f = open_memstream(&text, &len);
        if (!q.f)
                return -ENOMEM;
        r = tracker_thread_with_snapshot(m->tracker, report_with_snapshot, &q);
        if (fclose(q.f) != 0)
                r = -ENOMEM;
        if (r >= 0 && fwrite(text, 1, len, f) != len)
                r = -EIO;
        return r;
}

/* Time sources are one-shot: move and re-enable them to repeat. */
static int rearm(sd_event_source *s, uint64_t usec) {
        int r = sd_event_source_set_time(s, usec);

        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static void print_report(struct manager *m) {
        (void) report(m, stdout, false);
        fflush(stdout);
}

static int on_print(sd_event_source *s, uint64_t usec, void *userdata) {
        struct manager *m = userdata;

        print_report(m);
        return rearm(s, usec + m->o.print_interval_sec * 1000000ull);
}

static size_t count_running(struct manager *m) {
        size_t running = 0;

        for (size_t i = 0; i < m->n; i++)
                running += dp_cpu_get_status(&m->channels[i].stats).state == DP_CPU_RUNNING;
        return running;
}

static void format_status(struct manager *m, size_t running, char *buf, size_t size) {
        snprintf(buf, size, "Sampling with %s: %zu/%zu CPUs running, %.0f samples/s%s", m->source->name, running,
                 m->n, m->sample_rate, m->tracker_stalled ? "; region tracker stalled" : "");
}

/* STATUS= only when it changes materially: a CPU more or less, the tracker's
 * health at once; a sample rate off by more than 10% at most every
 * STATUS_RATE_INTERVAL_NS (a machine's background rate moves that much
 * every second, and each STATUS= is a format and a message). */
#define STATUS_RATE_INTERVAL_NS (10 * NSEC_PER_SEC)

static void update_status(struct manager *m, uint64_t now) {
        size_t running = count_running(m);
        double base = DP_MAX(m->status_rate, 10.0);
        char status[256];

        if (m->status_sent && running == m->status_running &&
            ((m->sample_rate >= m->status_rate - base * 0.1 && m->sample_rate <= m->status_rate + base * 0.1) ||
             now - m->status_ns < STATUS_RATE_INTERVAL_NS))
                return;
        m->status_ns = now;
        format_status(m, running, status, sizeof(status));
        (void) sd_notifyf(false, "STATUS=%s", status);
        m->status_sent = true;
        m->status_running = running;
        m->status_rate = m->sample_rate;
}

static uint64_t delta(uint64_t now, uint64_t before) {
        /* A retried CPU may start its counters afresh. */
        return now > before ? now - before : 0;
}

/* Rate-limited per CPU: a steady loss is one entry per interval with its sum. */
static void account_losses(struct manager *m, size_t i, const uint64_t *v, const uint64_t *p, uint64_t now) {
        struct loss_report *l = &m->loss[i];
        uint64_t since;

        l->overflow += delta(v[DP_C_OVERFLOW], p[DP_C_OVERFLOW]);
        l->lost += delta(v[DP_C_LOST], p[DP_C_LOST]);
        l->lost_samples += delta(v[DP_C_LOST_SAMPLES], p[DP_C_LOST_SAMPLES]);
        if (!l->overflow && !l->lost && !l->lost_samples)
                return;
        since = l->reported_ns ?: m->start_ns;
        if (l->reported_ns && now - l->reported_ns < LOSS_REPORT_INTERVAL_NS)
                return;
        log_samples_lost(m->view.cpus[i].cpu, l->overflow, l->lost, l->lost_samples,
                         DP_MAX((now - since + 500000000ull) / 1000000000ull, 1ull));
        *l = (struct loss_report) { .reported_ns = now };
        m->losses_reported = true;
}

/* How long the tracker may go without a pass before it counts as stalled. */
static uint64_t stall_limit_ns(const struct manager *m) {
        uint64_t limit = TRACKER_STALL_MAX_NS;

        if (m->watchdog_usec)
                limit = DP_MIN(limit, m->watchdog_usec * 1000 / 2);
        return limit;
}

/* The watchdog pings come from sd_event by themselves; they stop while the
 * tracker thread makes no progress, so systemd restarts a daemon whose
 * pipeline is stuck even though its event loop still runs. */
static void check_tracker(struct manager *m, uint64_t now) {
        uint64_t beat = tracker_thread_heartbeat_ns(m->tracker), age = delta(now, beat);
        uint64_t limit = stall_limit_ns(m);

        if (!m->tracker_stalled && age > limit) {
                m->tracker_stalled = true;
                m->stall_heartbeat_ns = beat;
                m->status_sent = false;
                log_tracker_stalled(age / 1000000, m->watchdog_usec);
                if (m->watchdog_usec)
                        (void) sd_event_set_watchdog(m->event, false);
        } else if (m->tracker_stalled && age <= limit) {
                m->tracker_stalled = false;
                m->status_sent = false;
                log_tracker_recovered(delta(beat, m->stall_heartbeat_ns) / 1000000);
                if (m->watchdog_usec)
                        (void) sd_event_set_watchdog(m->event, true);
        }
}

/* How long until the next look (on_tick()): a second while anybody needs it
 * that often (a Monitor() subscriber's per-second events, a CPU not RUNNING
 * whose return the look finds, a stalled tracker's recovery); the loss
 * interval while CPUs lose samples, so that a steady loss is reported at
 * that pace; otherwise TICK_QUIET_NS, or the stall limit if shorter (a
 * short watchdog).  Nothing else needs the quiet look sooner: a reader finds
 * its CPU gone at its next wake-up (cpu-hotplug.h) and leaves RUNNING, which
 * brings the look at once (manager_look_soon()), as a query does for the
 * figures it shows; STATUS= may show a sample rate that old.  On a VM each
 * wake-up of a thread that slept costs as much as thousands of samples. */
static uint64_t tick_interval_ns(struct manager *m) {
        uint64_t quiet = DP_MIN(TICK_QUIET_NS, stall_limit_ns(m));

        if (m->monitors || m->tracker_stalled || count_running(m) < m->n)
                return TICK_BUSY_NS;
        if (m->losses_reported)
                quiet = DP_MIN(quiet, LOSS_REPORT_INTERVAL_NS);
        return DP_MIN(quiet, hotplug_look_every_ns(m->hotplug));
}

/* @last_usec, the look that ran, plus the interval: on the second grid that
 * the readers' and the tracker's slow wake-ups share, when a second or more. */
static uint64_t next_tick_usec(struct manager *m, uint64_t last_usec) {
        uint64_t interval = tick_interval_ns(m);

        if (interval < NSEC_PER_SEC)
                return last_usec + interval / 1000;
        return dp_second_grid_ns(last_usec * 1000 + interval) / 1000;
}

/* The look: the online CPUs, the sample rate, losses, the tracker's health,
 * STATUS=, and the counter-derived Monitor() events. */
static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        struct manager *m = userdata;
        uint64_t now = dp_now_ns(CLOCK_MONOTONIC);

        hotplug_check(m->hotplug, m->samplers, m->n, &m->sampler_options);
        manager_collect(m);
        m->losses_reported = false;

        for (size_t i = 0; i < m->n; i++) {
                const uint64_t *v = m->view.cpus[i].counters.v, *p = m->prev[i].v;
                int cpu = m->view.cpus[i].cpu;

                account_losses(m, i, v, p, now);
                if (v[DP_C_OVERFLOW] > p[DP_C_OVERFLOW])
                        event_hub_push(m->hub, &(struct hub_event) {
                                .kind = HUB_RING_OVERFLOW, .timestamp_usec = hub_now_usec(), .cpu = cpu,
                                .count = v[DP_C_OVERFLOW] - p[DP_C_OVERFLOW], .depth = v[DP_C_RING_PEAK],
                        });
                if (event_hub_sample_rate(m->hub) && v[DP_C_DEQUEUE] > p[DP_C_DEQUEUE])
                        event_hub_push(m->hub, &(struct hub_event) {
                                .kind = HUB_DRAIN, .timestamp_usec = hub_now_usec(), .cpu = cpu,
                                .count = v[DP_C_DEQUEUE] - p[DP_C_DEQUEUE],
                        });
                m->prev[i] = m->view.cpus[i].counters;
        }
        check_tracker(m, now);
        update_status(m, now);
        /* A Monitor() subscriber follows the counters as they move. */
        if (m->monitors)
                tracker_thread_want_fresh(m->tracker);
        return rearm(s, next_tick_usec(m, usec));
}

void manager_look_soon(struct manager *m) {
        uint64_t now_usec = dp_now_ns(CLOCK_MONOTONIC) / 1000, at;

        if (m->tick_source && sd_event_source_get_time(m->tick_source, &at) >= 0 && at > now_usec)
                (void) sd_event_source_set_time(m->tick_source, now_usec);
}

/* Tells every reader to stop, wakes the sleeping ones and joins them.
 * Idempotent: manager_free() calls it too, for a start that failed after
 * some readers ran (the join would otherwise wait for a stop never said). */
static void stop_readers(struct manager *m) {
        uint64_t one = 1;

        atomic_store_explicit(&m->readers_stop, true, memory_order_release);
        if (m->stop_fd >= 0 && write(m->stop_fd, &one, sizeof(one)) < 0)
                log_warning("cannot wake the readers: %m; they stop within %u ms", m->o.config.poll_ms);
        for (size_t i = 0; m->samplers && i < m->n; i++)
                sampler_stop(&m->samplers[i]);
}

static void stop_pipeline(struct manager *m) {
        tracker_thread_sampling_ends(m->tracker, dp_now_ns(CLOCK_MONOTONIC));
        stop_readers(m);
        /* DAMON is restored before the tracker it reads from goes. */
        damon_thread_stop(m->damon);
        /* Only now: the readers have pushed their last samples. */
        tracker_thread_stop(m->tracker);
}

static int dump_final(struct manager *m) {
        _cleanup_fclose_ FILE *f = NULL;
        int r = 0;

        if (m->o.dump_stats != DUMP_NONE)
                r = report(m, stdout, m->o.dump_stats == DUMP_JSON);
        if (m->o.stats_file) {
                f = fopen(m->o.stats_file, "we");
                if (!f) {
                        log_error("cannot write %s: %m", m->o.stats_file);
                        return -errno;
                }
                r = report(m, f, true);
        }
        fflush(stdout);
        return r;
}

void manager_errors_free(char **errors) {
        for (char **e = errors; e && *e; e++)
                free(*e);
        free(errors);
}

struct reload_errors {
        char **v;
        size_t n;
        bool oom;
};

static void collect_config_error(enum dp_config_severity severity, const char *message, void *userdata) {
        struct reload_errors *e = userdata;
        char **v;

        if (severity != DP_CONFIG_ERROR || e->oom)
                return;
        v = realloc(e->v, (e->n + 2) * sizeof(*v));
        if (!v || !(v[e->n] = strdup(message))) {
                e->v = v ?: e->v;
                e->oom = true;
                return;
        }
        v[++e->n] = NULL;
        e->v = v;
}

static void log_needs_restart(const struct dp_config_key *k) {
        char name[64];

        dp_config_key_name(k, name, sizeof(name));
        log_warning("reload: %s changed; takes effect after a restart", name);
}

/* The live settings, Targets= and MaxTargets=, go to the tracker thread. */
static void apply_targets(struct manager *m, const struct dp_config *c, bool targets, bool max_targets) {
        struct dp_config *run = &m->o.config;
        int r = tracker_thread_set_targets(m->tracker, c);

        if (r == -ENOSPC)
                log_warning("reload: MaxTargets=%u is above the %u the tracker was started with; "
                            "Targets= and MaxTargets= take effect after a restart",
                            c->max_targets, tracker_thread_target_capacity(m->tracker));
        else if (r < 0)
                log_warning("reload: Targets= changed to or from the physical address space; "
                            "Targets= and MaxTargets= take effect after a restart");
        else {
                if (targets)
                        log_info("reload: Targets= applied");
                if (max_targets)
                        log_info("reload: MaxTargets=%u applied", c->max_targets);
                run->target_mode = c->target_mode;
                memcpy(run->pids, c->pids, sizeof(run->pids));
                run->n_pids = c->n_pids;
                run->max_targets = c->max_targets;
        }
}

/* What the running pipeline can take from @c: Targets= and MaxTargets=.
 * Everything else is fixed in the samplers, the rings, the queues, the
 * tracker, the DAMON thread or the socket: each change is named, none
 * applied. */
static void apply_config(struct manager *m, const struct dp_config *c) {
        bool targets = false, max_targets = false;

        for (const struct dp_config_key *k = dp_config_keys; k < dp_config_keys + dp_config_n_keys; k++) {
                if (!dp_config_key_differs(k, &m->o.config, c))
                        continue;
                if (k->offset == offsetof(struct dp_config, target_mode))
                        targets = true;
                else if (k->offset == offsetof(struct dp_config, max_targets))
                        max_targets = true;
                else
                        log_needs_restart(k);
        }
        if (targets || max_targets)
                apply_targets(m, c, targets, max_targets);
}

/* All of the new configuration is parsed and checked before any of it is
 * used: an invalid one leaves the running one untouched. */
static int reload_config(struct manager *m, char ***ret_errors) {
        struct reload_errors errors = {};
        struct dp_config c;
        int r;

        if (!m->o.load_config)
                return 0;
        r = m->o.load_config(&m->o, &c, collect_config_error, &errors);
        if (r < 0) {
                log_error("reload: configuration invalid, keeping the running one (errors: %zu, above)", errors.n);
                if (ret_errors && !errors.oom)
                        *ret_errors = DP_TAKE_PTR(errors.v);
                manager_errors_free(errors.v);
                return r == -ENOMEM ? r : -EINVAL;
        }
        manager_errors_free(errors.v);
        apply_config(m, &c);
        return 0;
}

int manager_reload(struct manager *m, char ***ret_errors) {
        size_t retried = 0;
        int r;

        (void) sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading\nMONOTONIC_USEC=%" PRIu64, dp_now_ns(CLOCK_MONOTONIC) / 1000);
        log_reloading();
        r = reload_config(m, ret_errors);
        if (r >= 0) {
                tracker_thread_request_refresh(m->tracker);
                /* Offline CPUs come back by themselves when they are online again. */
                for (size_t i = 0; i < m->n; i++)
                        if (dp_cpu_get_status(&m->channels[i].stats).state == DP_CPU_ERROR &&
                            !dp_hotplug_is_offline(dp_cpu_get_status(&m->channels[i].stats))) {
                                retried++;
                                (void) sampler_retry(&m->samplers[i], &m->sampler_options);
                        }
                if (retried)
                        log_info("reload: retried %zu CPUs", retried);
        }
        (void) sd_notify(false, "READY=1");
        m->status_sent = false;
        update_status(m, dp_now_ns(CLOCK_MONOTONIC));
        return r;
}

static int on_reload_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        (void) s;
        (void) si;
        (void) manager_reload(userdata, NULL);
        return 0;
}

/* The readers report RUNNING from their own threads: READY=1 waits for them
 * (bounded), so that "ready" means sampling, not just set up. */
static void wait_for_samplers(struct manager *m) {
        uint64_t deadline = dp_now_ns(CLOCK_MONOTONIC) + SAMPLERS_SETTLE_MAX_NS;

        for (;;) {
                size_t pending = 0;

                for (size_t i = 0; i < m->n; i++)
                        pending += dp_cpu_get_status(&m->channels[i].stats).state == DP_CPU_ENABLED;
                if (pending == 0)
                        return;
                if (dp_now_ns(CLOCK_MONOTONIC) >= deadline) {
                        log_warning("%zu CPUs still not running after %llu s", pending,
                                    SAMPLERS_SETTLE_MAX_NS / 1000000000ull);
                        return;
                }
                nanosleep(&(struct timespec) { 0, 1000000 }, NULL);
        }
}

int manager_run(struct manager *m) {
        char status[256];
        size_t running;
        int r;

        /* SIGTERM, SIGINT and SIGHUP are blocked since main(), in every thread. */
        r = sd_event_default(&m->event);
        if (r < 0)
                goto out;
        if (!m->o.no_varlink) {
                r = manager_varlink_start(m);
                if (r < 0)
                        goto out;
        }
        r = sd_event_add_signal(m->event, NULL, SIGTERM, on_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGINT, on_signal, m);
        if (r >= 0)
                r = sd_event_add_signal(m->event, NULL, SIGHUP, on_reload_signal, m);
        if (r >= 0 && m->o.duration_usec)
                r = sd_event_add_time_relative(m->event, NULL, CLOCK_MONOTONIC, m->o.duration_usec, 0,
                                               on_duration, m);
        if (r >= 0)
                r = sd_event_add_time(m->event, &m->tick_source, CLOCK_MONOTONIC,
                                      dp_second_grid_ns(dp_now_ns(CLOCK_MONOTONIC) + NSEC_PER_SEC) / 1000, 1,
                                      on_tick, m);
        if (r >= 0 && m->o.print_interval_sec)
                r = sd_event_add_time_relative(m->event, NULL, CLOCK_MONOTONIC,
                                               m->o.print_interval_sec * 1000000ull, 0, on_print, m);
        if (r >= 0)
                r = sd_event_set_watchdog(m->event, true);
        if (r < 0)
                goto out;
        if (r > 0 && sd_watchdog_enabled(false, &m->watchdog_usec) <= 0)
                m->watchdog_usec = 0;
        /* A pass at least twice within the limit, resting or not. */
        tracker_thread_set_heartbeat(m->tracker, stall_limit_ns(m) / 2);

        wait_for_samplers(m);
        running = count_running(m);
        log_ready(m->source->name, running, m->n);
        format_status(m, running, status, sizeof(status));
        (void) sd_notifyf(false, "READY=1\nSTATUS=%s", status);
        m->status_sent = true;
        m->status_running = running;
        r = sd_event_loop(m->event);

out:
        if (r < 0)
                log_error("event loop: %s", strerror(-r));
        (void) sd_notify(false, "STOPPING=1\nSTATUS=Stopping");
        manager_varlink_stop(m);
        stop_pipeline(m);
        if (dump_final(m) < 0 && r >= 0)
                r = -EIO;
        log_stopped(r);
        return r;
}

void manager_free(struct manager *m) {
        if (!m)
                return;
        stop_readers(m);
        damon_thread_free(m->damon);
        if (m->tracker) {
                tracker_thread_stop(m->tracker);
                tracker_thread_free(m->tracker);
        }
        for (size_t i = 0; m->samplers && i < m->n; i++)
                sampler_free(&m->samplers[i]);
        free(m->samplers);
        /* Only now: the readers and the tracker are gone. */
        channels_free(m->channels, m->n);
        free(m->view.cpus);
        free(m->prev);
        free(m->loss);
        if (m->stop_fd >= 0)
                close(m->stop_fd);
        sd_event_source_disable_unref(m->tick_source);
        sd_event_unref(m->event);
        event_hub_free(m->hub);
        hotplug_free(m->hotplug);
        pmu_selection_done(&m->selection);
        free(m->midr);
        free(m);
}
