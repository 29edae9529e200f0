/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "probes.h"
#include "log.h"
#include "tracker-thread-internal.h"
#include "time-util.h"

/* Every pass ends in a sleep until the first of: the current aggregation is
 * due (plus the lag its samples may have), the next maps refresh, or the
 * fullest queue fills to a quarter at the rate it last filled (no sooner than
 * SLEEP_MIN_NS).  A reader whose queue passes half full wakes the tracker at
 * once (channel_wake_if_needed()), as do reloads and stop, so a burst
 * cannot overflow a queue however long the sleep.  On a virtual machine a
 * sleep and wakeup costs 20-300 us of CPU, as much as draining thousands of
 * samples: at moderate rates this is one pass per aggregation interval
 * (bench/bench-overflow checks the queues at 1M samples/s per CPU). */
#define SLEEP_MIN_NS 10000000ull
/* How long after a whole second a slow wake-up comes: the readers' drains
 * there are done (reader.c's poll_timeout_ms()). */
#define GRID_LAG_NS (2 * NSEC_PER_MSEC)
/* A deadline this close counts as reached: a sleep moved to the grid may end
 * a hair before what it waited for, which would otherwise cost a wake-up of
 * its own right after (less than TICK_MARGIN_NS, so no sample is late). */
#define DEADLINE_SLACK_NS SLEEP_MIN_NS
/* The longest sleep while somebody looks at the view or the readers poll as
 * configured; otherwise the heartbeat bounds it (tracker_thread_set_heartbeat()). */
#define SLEEP_MAX_NS 1000000000ull
/* While a Monitor() client takes sampled records (the first of each batch),
 * passes come at least this often, so that it gets a steady stream. */
#define SLEEP_MAX_MONITORED_NS 40000000ull
/* While somebody looks at the view, readers drain their rings at least this
 * often, so that what is shown is at most about a second old: a varlink query
 * in the last FRESH_AFTER_QUERY_NS (tracker_thread_want_fresh()), a Monitor()
 * call taking samples, or hints given to DAMON.  Otherwise a quiet reader
 * sleeps up to reader.c's QUIET_POLL_MAX_MS, and the tracker with it. */
#define FRESH_POLL_MS 1000u
#define FRESH_AFTER_QUERY_NS (10 * NSEC_PER_SEC)
/* How late a sample may reach a queue beyond its reader's poll interval
 * before the aggregation it belongs to closes. */
#define TICK_MARGIN_NS 50000000ull

void tracker_publish_snapshot(struct tracker_thread *t) {
        struct dp_tracker_snapshot tmp;

        if (dp_tracker_snapshot(t->tracker, &t->work) < 0)
                return;
        /* Swap buffers: the thread keeps the old published one to refill next time. */
        pthread_mutex_lock(&t->lock);
        tmp = t->published;
        t->published = t->work;
        t->work = tmp;
        if (t->on_snapshot)
                t->on_snapshot(t->on_snapshot_userdata);
        pthread_mutex_unlock(&t->lock);
}

/*
 * When a Monitor() client asked for records, shows the first sample of a
 * batch while the per-second budget lasts: the hot path itself stays as it is.
 */
static void maybe_show_sample(struct tracker_thread *t, const struct dp_sample *s) {
        uint32_t rate = event_hub_sample_rate(t->hub);
        uint64_t now;
        enum dp_counter outcome;

        if (rate == 0)
                return;
        now = dp_now_ns(CLOCK_MONOTONIC);
        t->sample_tokens = DP_MIN((double) rate, t->sample_tokens + (double) rate * (double) (now - t->tokens_ns) / 1e9);
        t->tokens_ns = now;
        if (t->sample_tokens < 1)
                return;
        t->sample_tokens -= 1;

        outcome = dp_tracker_classify(t->tracker, s);
        event_hub_push(t->hub, &(struct hub_event) {
                .kind = outcome == DP_C_MATCH ? HUB_SAMPLE : HUB_REPORT_MISSED,
                .timestamp_usec = hub_now_usec(),
                .cpu = s->cpu,
                .pid = s->pid,
                .addr = t->config.target_mode == DP_TARGETS_PHYS ? s->paddr : s->vaddr,
                .reason = outcome,
        });
}

/* Takes what is queued now, but for samples of the aggregation after next:
 * those wait for the tick that opens it, unless @take_all (the last drain)
 * or their queue is past half full when looked at.  Returns the number of
 * samples taken. */
static size_t drain_all(struct tracker_thread *t, bool take_all) {
        uint64_t now = dp_now_ns(CLOCK_MONOTONIC);
        size_t total = 0;

        for (size_t i = 0; i < t->n; i++) {
                struct channel *ch = &t->channels[i];
                struct dp_spsc *q = ch->queue;
                struct dp_counter_values *c = &t->counters[i];
                const struct dp_sample *first;
                size_t n, peeked, got = 0;

                if (!q)
                        continue;
                while ((peeked = dp_spsc_peek(q, &first)) > 0) {
                        n = peeked;
                        if (!take_all && dp_spsc_depth_consumer(q) <= dp_spsc_capacity(q) / 2)
                                n = dp_tracker_open_prefix(t->tracker, first, peeked, now);
                        if (n == 0)
                                break;
                        maybe_show_sample(t, first);
                        dp_tracker_account_batch(t->tracker, first, n, c);
                        dp_spsc_consume(q, n);
                        got += n;
                        if (n < peeked)
                                break;
                }
                if (got) {
                        c->v[DP_C_DEQUEUE] += got;
                        c->v[DP_C_DRAIN]++;
                        DP_PROBE2(drain, ch->cpu, got);
                        dp_counters_publish(&ch->stats, DP_OWNER_TRACKER, c);
                        total += got;
                }
        }
        return total;
}

#define CAPPED_HOLD_NS NSEC_PER_SEC

/* The most samples any one queue took in since the last call: what its
 * reader pushed, not what the passes drained (samples held for their
 * aggregation and taken later would make a burst out of a steady rate). */
static size_t fullest_intake(struct tracker_thread *t) {
        size_t fullest = 0;

        for (size_t i = 0; i < t->n; i++) {
                uint64_t total;

                if (!t->channels[i].queue)
                        continue;
                /* A queue lives as long as its channel: its count only grows. */
                total = dp_spsc_published_consumer(t->channels[i].queue);
                fullest = DP_MAX(fullest, (size_t) (total - t->published_seen[i]));
                t->published_seen[i] = total;
        }
        return fullest;
}

/* A quarter of a queue (every queue has the one capacity; a CPU that failed has none). */
static uint64_t queue_quarter(const struct tracker_thread *t) {
        for (size_t i = 0; i < t->n; i++)
                if (t->channels[i].queue)
                        return dp_spsc_capacity(t->channels[i].queue) / 4;
        return 0;
}

static uint32_t hint_fresh_ms(const struct tracker_thread *t) {
        return atomic_load_explicit(&t->hint_fresh_ms, memory_order_relaxed);
}

/* Whether somebody looks at the view now (see FRESH_POLL_MS). */
static bool looked_at(const struct tracker_thread *t, uint64_t now) {
        return now < atomic_load_explicit(&t->fresh_until_ns, memory_order_relaxed) ||
               event_hub_sample_rate(t->hub) > 0 || hint_fresh_ms(t) > 0;
}

/* @cap_ms, the readers' cap for their queues' sake, within FRESH_POLL_MS
 * (the hints' freshness, if shorter, while hints are given; the configured
 * poll, if longer) while somebody looks. */
static uint32_t fresh_cap_ms(const struct tracker_thread *t, uint64_t now, uint32_t cap_ms) {
        uint32_t fresh = FRESH_POLL_MS, hints = hint_fresh_ms(t);

        if (!looked_at(t, now))
                return cap_ms;
        if (hints > 0)
                fresh = DP_MIN(fresh, hints);
        fresh = DP_MAX(fresh, t->config.poll_ms);
        return cap_ms ? DP_MIN(cap_ms, fresh) : fresh;
}

/*
 * Whether the queues afford the slowest reader's poll: samples of the
 * aggregations after next wait in them meanwhile.  While the fullest fills a
 * quarter of its queue sooner than the slowest poll and an aggregation, and
 * for a second after, every reader is told to poll at most as long as the
 * queue affords at that rate, and never more often than configured (a
 * trickle that was already asleep may then reach its aggregation late): a
 * busy CPU then holds the others to a few wake-ups a second, not to the
 * configured ten.  Once a pass, after its fill rate is known.
 */
static void update_poll_cap(struct tracker_thread *t, uint64_t now) {
        uint64_t aggr = t->config.aggr_interval_us * 1000;
        double quarter = (double) queue_quarter(t);
        uint32_t longest, shortest;

        /* While capped the readers poll as told: whether the cap is still
         * needed is judged by the poll they chose before it. */
        if (t->poll_cap_ms == 0) {
                channels_poll_span(t->channels, t->n, t->config.poll_ms, &longest, &shortest);
                t->uncapped_poll_ms = longest;
        }
        if ((double) (t->uncapped_poll_ms * NSEC_PER_MSEC + TICK_MARGIN_NS + aggr) * t->fill_per_ns >= quarter) {
                double afford_ms = (quarter / t->fill_per_ns - (double) (TICK_MARGIN_NS + aggr)) / NSEC_PER_MSEC;
                uint32_t cap = (uint32_t) DP_MIN(DP_MAX(afford_ms, (double) t->config.poll_ms),
                                                 (double) t->uncapped_poll_ms);

                /* A cap lowered pokes every reader sleeping longer: one within
                 * a quarter of the affordable either way stands (the queues
                 * force a drain only at half), or each wobble of the measured
                 * rate would wake them all. */
                if (t->poll_cap_ms == 0 || 4 * (uint64_t) cap > 5 * (uint64_t) t->poll_cap_ms ||
                    5 * (uint64_t) cap < 4 * (uint64_t) t->poll_cap_ms)
                        t->poll_cap_ms = cap;
                t->capped_until_ns = now + CAPPED_HOLD_NS;
        } else if (now >= t->capped_until_ns)
                t->poll_cap_ms = 0;
        channels_cap_poll_ms(t->channels, t->n, fresh_cap_ms(t, now, t->poll_cap_ms));
}

/* How long after its end an aggregation may close: the slowest reader's
 * poll interval (each says its own in its channel; the cap while
 * capped), plus a margin.  In *@ret_idle_poll_ns, how soon the readers bring
 * anything new when every one of them polls slower than configured (a quiet
 * machine), else 0. */
static uint64_t tick_lag_ns(const struct tracker_thread *t, uint64_t *ret_idle_poll_ns) {
        uint32_t longest, shortest;

        if (t->poll_cap_ms)
                longest = shortest = t->poll_cap_ms;
        else
                channels_poll_span(t->channels, t->n, t->config.poll_ms, &longest, &shortest);
        if (ret_idle_poll_ns)
                *ret_idle_poll_ns = shortest > t->config.poll_ms ? shortest * NSEC_PER_MSEC : 0;
        return longest * NSEC_PER_MSEC + TICK_MARGIN_NS;
}

/* ns from @now until @deadline, 0 when it has passed. */
static uint64_t until(uint64_t now, uint64_t deadline) {
        return deadline > now ? deadline - now : 0;
}

/* How long the thread may sleep at most: its heartbeat. */
static uint64_t beat_every_ns(const struct tracker_thread *t) {
        return atomic_load_explicit(&t->beat_every_ns, memory_order_relaxed);
}

/* How long to sleep at @now: until the fullest queue, filling as fast as in
 * the last pass, reaches a quarter, or something else is due. */
static uint64_t sleep_ns(const struct tracker_thread *t, uint64_t now) {
        uint64_t idle_poll, lag, ns, due;
        bool unwatched;

        /* Sampling has ended: no aggregation is due any more (the stop wakes
         * the thread), only the heartbeat. */
        if (atomic_load_explicit(&t->sampling_ends_ns, memory_order_relaxed))
                return DP_MIN(beat_every_ns(t), SLEEP_MAX_NS);
        lag = tick_lag_ns(t, &idle_poll);
        unwatched = idle_poll > 0 && !looked_at(t, now);
        ns = unwatched ? beat_every_ns(t) : SLEEP_MAX_NS;
        due = dp_tracker_aggregation_due_ns(t->tracker);

        if (t->fill_per_ns > 0)
                ns = DP_MAX((uint64_t) ((double) queue_quarter(t) / t->fill_per_ns), SLEEP_MIN_NS);
        /* While every reader polls slowly, aggregations close in batches, as
         * their samples arrive. */
        if (due > 0)
                ns = DP_MIN(ns, DP_MAX(until(now, due + lag), idle_poll));
        /* While nobody looks and the readers bring samples only every few
         * seconds, a maps refresh between their batches has nothing new to
         * act on, and nobody to show it to: it waits for the pass that takes
         * the next batch, as the heartbeat does. */
        if (!unwatched)
                ns = DP_MIN(ns, DP_MIN(until(now, t->next_refresh_ns), SLEEP_MAX_NS));
        if (event_hub_sample_rate(t->hub) > 0)
                ns = DP_MIN(ns, SLEEP_MAX_MONITORED_NS);
        /* A deadline just passed (the tick's clock starting): no busy loop. */
        ns = DP_MAX(ns, 1000000ull);
        /* A slow wake-up moves to the second grid, just after the readers'
         * drains there (earlier by at most half, or else later as far as the
         * heartbeat allows): it then comes right behind theirs instead of
         * waking a CPU by itself. */
        if (ns >= SLEEP_MAX_NS / 2) {
                uint64_t grid = dp_second_grid_ns(now + ns + 1) - NSEC_PER_SEC;

                if (grid < now + ns / 2)
                        grid += NSEC_PER_SEC;
                ns = until(now, grid + GRID_LAG_NS);
        }
        return DP_MIN(ns, beat_every_ns(t));
}

/* How long to rest at @now, with nothing to do: one heartbeat, ending on
 * the second grid when it is long enough to have room for that; a second
 * while somebody looks. */
static uint64_t rest_ns(const struct tracker_thread *t, uint64_t now) {
        uint64_t beat = beat_every_ns(t);

        /* Somebody looks: an exited target is dropped within a refresh. */
        if (looked_at(t, now))
                return DP_MIN(beat, SLEEP_MAX_NS);

        if (beat < 2 * NSEC_PER_SEC)
                return beat;
        return until(now, dp_second_grid_ns(now + beat - NSEC_PER_SEC) + GRID_LAG_NS);
}

/* Sleeps @ns or until woken through wake_fd. */
static void sleep_or_wake(struct tracker_thread *t, uint64_t ns) {
        struct pollfd pfd = { .fd = t->wake_fd, .events = POLLIN };
        struct timespec ts = { (time_t) (ns / 1000000000ull), (long) (ns % 1000000000ull) };
        eventfd_t value;

        if (ppoll(&pfd, 1, &ts, NULL) > 0 && (pfd.revents & POLLIN))
                (void) eventfd_read(t->wake_fd, &value);
}

static void wake(struct tracker_thread *t) {
        if (t->wake_fd >= 0)
                (void) eventfd_write(t->wake_fd, 1);
}

/* The time of the oldest sample waiting in any queue; UINT64_MAX for none. */
static uint64_t oldest_queued_ns(struct tracker_thread *t) {
        uint64_t oldest = UINT64_MAX;

        for (size_t i = 0; i < t->n; i++) {
                const struct dp_sample *first;

                if (t->channels[i].queue && dp_spsc_peek(t->channels[i].queue, &first) > 0 && first->time > 0)
                        oldest = DP_MIN(oldest, first->time);
        }
        return oldest;
}

/*
 * Closes every aggregation whose samples can all have been drained (their
 * readers poll at most the lag apart), one at a time, draining what waited
 * for each next one to open; a quiet spell closes as one.  Returns whether
 * any closed.
 */
static bool close_aggregations(struct tracker_thread *t, bool stopping, uint64_t now) {
        uint64_t lag = tick_lag_ns(t, NULL), upto = now > lag ? now - lag : 0;
        uint64_t ends = atomic_load_explicit(&t->sampling_ends_ns, memory_order_relaxed);
        bool closed = false;

        /* Stopping, the readers have drained their last: nothing is late.
         * Nothing is sampled after sampling ended, though: the time the
         * readers and DAMON take to stop (seconds, to restore a kdamond)
         * must not close as aggregations without an access, the last of
         * which every region would then show. */
        if (stopping)
                upto = now;
        if (ends)
                upto = DP_MIN(upto, ends);
        for (;;) {
                uint64_t due = dp_tracker_aggregation_due_ns(t->tracker);
                uint64_t at = due > 0 && due < upto ? due : upto;

                /* A quiet spell closes as one aggregation, up to its first sample. */
                if (t->quiet && t->aggr_samples == 0 && due > 0 && due < upto)
                        at = DP_MAX(due, DP_MIN(upto, oldest_queued_ns(t) - 1));

                if (!dp_tracker_tick(t->tracker, at))
                        return closed;
                closed = true;
                t->quiet = t->aggr_samples == 0;
                /* What waited for the aggregation that opened (stopping too:
                 * each closes with its own samples, the last second's of
                 * slow readers included). */
                t->aggr_samples = drain_all(t, false);
                if (at == upto)
                        return true;
        }
}

/* Sleeps idle, and returns true, when nothing was sampled since a quiet
 * aggregation closed and nobody waits for the thread: no reload, no refresh
 * asked, no Monitor() client.  Marked idle on every channel, the first batch
 * a reader pushes wakes it.  No aggregation closes while it is idle; the next
 * tick closes the whole quiet spell as one, and the maps of targets nobody
 * samples are not re-read.  What it costs when nothing happens is its
 * heartbeat, the watchdog's proof of life, as seldom as the main loop allows
 * (rest_ns()). */
static bool rest_idle(struct tracker_thread *t) {
        uint64_t now;

        if (!t->quiet || t->aggr_samples > 0 || atomic_load(&t->pending_set) ||
            atomic_load(&t->refresh_requested) || event_hub_sample_rate(t->hub) > 0 ||
            !channels_mark_idle(t->channels, t->n))
                return false;
        /* Nothing queued: no reader needs to be held to a fast poll. */
        t->fill_per_ns = 0;
        t->poll_cap_ms = 0;
        now = dp_now_ns(CLOCK_MONOTONIC);
        channels_cap_poll_ms(t->channels, t->n, fresh_cap_ms(t, now, 0));
        sleep_or_wake(t, rest_ns(t, now));
        channels_clear_idle(t->channels, t->n);
        t->last_pass_ns = 0;
        return true;
}

static void *tracker_main(void *arg) {
        struct tracker_thread *t = arg;

        (void) pthread_setname_np(pthread_self(), "dp-tracker");
        for (;;) {
                bool stopping = atomic_load_explicit(&t->stop, memory_order_acquire);
                uint64_t now, nap, elapsed;
                bool requested;

                atomic_store_explicit(&t->heartbeat_ns, dp_now_ns(CLOCK_MONOTONIC), memory_order_relaxed);
                if (atomic_exchange(&t->pending_set, false)) {
                        tracker_apply_pending_targets(t);
                        atomic_store(&t->refresh_requested, true);
                }
                /* -ENOMEM: the hints go without granules until a later pass. */
                (void) dp_tracker_keep_granules(t->tracker, hint_fresh_ms(t) > 0);
                t->aggr_samples += drain_all(t, false);
                now = dp_now_ns(CLOCK_MONOTONIC);
                if (!stopping && rest_idle(t))
                        continue;

                if (close_aggregations(t, stopping, now + DEADLINE_SLACK_NS)) {
                        tracker_adopt_unknown(t);
                        tracker_publish_snapshot(t);
                }
                /* The last drain takes the rest, into the aggregation still open. */
                if (stopping)
                        t->aggr_samples += drain_all(t, true);
                requested = atomic_exchange(&t->refresh_requested, false);
                if (requested || now + DEADLINE_SLACK_NS >= t->next_refresh_ns) {
                        tracker_refresh_targets(t, requested);
                        t->next_refresh_ns = now + t->config.maps_refresh_us * 1000;
                }
                if (stopping)
                        break; /* the drain above was the last one: the readers had stopped */

                elapsed = t->last_pass_ns ? now - t->last_pass_ns : SLEEP_MIN_NS;
                t->fill_per_ns = (double) fullest_intake(t) / (double) DP_MAX(elapsed, 1);
                update_poll_cap(t, now);
                nap = sleep_ns(t, now);
                t->last_pass_ns = now;
                sleep_or_wake(t, nap);
        }
        tracker_publish_snapshot(t);
        return NULL;
}

int tracker_thread_start(const struct dp_config *config, struct channel *channels, size_t n,
                         struct event_hub *hub, struct tracker_thread **ret) {
        struct dp_tracker_config tc;
        struct tracker_thread *t;
        int r;

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->config = *config;
        t->channels = channels;
        t->n = n;
        t->hub = hub;
        t->self = getpid();
        t->wake_fd = -1;
        pthread_mutex_init(&t->lock, NULL);
        pthread_mutex_init(&t->pending_lock, NULL);
        t->counters = calloc(n, sizeof(*t->counters));
        t->published_seen = calloc(n, sizeof(*t->published_seen));
        if (!t->counters || !t->published_seen) {
                r = -ENOMEM;
                goto fail;
        }

        dp_tracker_config_init(&tc);
        tc.mode = config->target_mode == DP_TARGETS_PHYS ? DP_TRACKER_PADDR : DP_TRACKER_VADDR;
        tc.min_nr_regions = config->min_nr_regions;
        tc.max_nr_regions = config->max_nr_regions;
        tc.sample_interval_ns = config->sample_interval_us * 1000;
        tc.aggr_interval_ns = config->aggr_interval_us * 1000;
        /* Room for any target setting a reload may bring within what was
         * configured at start (the pid list is bounded anyway). */
        t->phys = config->target_mode == DP_TARGETS_PHYS;
        t->capacity = config->target_mode == DP_TARGETS_PHYS ? 1 : DP_MAX(config->max_targets, DP_CONFIG_MAX_PIDS);
        tc.max_targets = t->capacity;
        tc.seed = dp_now_ns(CLOCK_MONOTONIC);
        /* The sample probe's label: every CPU samples with the one source. */
        for (size_t i = 0; i < n && !tc.source; i++)
                if (channels[i].source)
                        tc.source = channels[i].source->name;
        r = dp_tracker_new(&tc, &t->tracker);
        if (r < 0)
                goto fail;
        t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (t->wake_fd < 0) {
                r = dp_negative_errno();
                goto fail;
        }
        /* Before any reader runs (the manager starts them after the tracker). */
        for (size_t i = 0; i < n; i++)
                channel_set_wake_fd(&channels[i], t->wake_fd);

        /* Initial targets before any sample arrives. */
        tracker_refresh_targets(t, true);
        t->next_refresh_ns = dp_now_ns(CLOCK_MONOTONIC) + config->maps_refresh_us * 1000;
        tracker_publish_snapshot(t);

        atomic_store_explicit(&t->heartbeat_ns, dp_now_ns(CLOCK_MONOTONIC), memory_order_relaxed);
        atomic_store_explicit(&t->beat_every_ns, SLEEP_MAX_NS, memory_order_relaxed);
        r = -pthread_create(&t->thread, NULL, tracker_main, t);
        if (r < 0)
                goto fail;
        t->started = true;
        *ret = t;
        return 0;

fail:
        tracker_thread_free(t);
        return r;
}

int tracker_thread_set_targets(struct tracker_thread *t, const struct dp_config *c) {
        /* The dp_tracker's mode (vaddr or paddr) is fixed at creation. */
        if ((c->target_mode == DP_TARGETS_PHYS) != t->phys)
                return -EINVAL;
        if (c->target_mode == DP_TARGETS_ALL && c->max_targets > t->capacity)
                return -ENOSPC;
        if (c->n_pids > DP_CONFIG_MAX_PIDS)
                return -E2BIG;
        pthread_mutex_lock(&t->pending_lock);
        t->pending = (struct pending_targets) {
                .mode = c->target_mode,
                .n_pids = c->n_pids,
                .max_targets = c->max_targets,
        };
        memcpy(t->pending.pids, c->pids, sizeof(t->pending.pids));
        pthread_mutex_unlock(&t->pending_lock);
        atomic_store(&t->pending_set, true);
        wake(t);
        return 0;
}

void tracker_thread_give_hints(struct tracker_thread *t, uint32_t fresh_ms) {
        /* A change reaches the readers' polls at the thread's next pass: now. */
        if (atomic_exchange_explicit(&t->hint_fresh_ms, fresh_ms, memory_order_relaxed) != fresh_ms)
                wake(t);
}

void tracker_thread_notify_snapshots(struct tracker_thread *t, void (*fn)(void *userdata), void *userdata) {
        /* Under the lock tracker_publish_snapshot() calls it with: no call runs
         * on once this returns. */
        pthread_mutex_lock(&t->lock);
        t->on_snapshot = fn;
        t->on_snapshot_userdata = userdata;
        pthread_mutex_unlock(&t->lock);
}

uint32_t tracker_thread_target_capacity(struct tracker_thread *t) {
        return t->capacity;
}

void tracker_thread_request_refresh(struct tracker_thread *t) {
        atomic_store(&t->refresh_requested, true);
        wake(t);
}

void tracker_thread_want_fresh(struct tracker_thread *t) {
        uint64_t now = dp_now_ns(CLOCK_MONOTONIC);

        /* The first query after a quiet spell: the readers are capped (and
         * poked awake) at once, so that the queries after it see fresh data. */
        if (atomic_exchange(&t->fresh_until_ns, now + FRESH_AFTER_QUERY_NS) <= now)
                wake(t);
}

void tracker_thread_set_heartbeat(struct tracker_thread *t, uint64_t every_ns) {
        atomic_store_explicit(&t->beat_every_ns, DP_MAX(every_ns, SLEEP_MIN_NS), memory_order_relaxed);
        wake(t);
}

uint64_t tracker_thread_heartbeat_ns(struct tracker_thread *t) {
        return atomic_load_explicit(&t->heartbeat_ns, memory_order_relaxed);
}

void tracker_thread_sampling_ends(struct tracker_thread *t, uint64_t ns) {
        if (t)
                atomic_store_explicit(&t->sampling_ends_ns, ns, memory_order_relaxed);
}

void tracker_thread_stop(struct tracker_thread *t) {
        if (!t || !t->started)
                return;
        atomic_store_explicit(&t->stop, true, memory_order_release);
        wake(t);
        pthread_join(t->thread, NULL);
        t->started = false;
}

void tracker_thread_free(struct tracker_thread *t) {
        if (!t)
                return;
        tracker_thread_stop(t);
        if (t->wake_fd >= 0) {
                for (size_t i = 0; i < t->n; i++)
                        channel_set_wake_fd(&t->channels[i], -1);
                close(t->wake_fd);
        }
        dp_tracker_free(t->tracker);
        dp_tracker_snapshot_free(&t->work);
        dp_tracker_snapshot_free(&t->published);
        pthread_mutex_destroy(&t->lock);
        pthread_mutex_destroy(&t->pending_lock);
        free(t->counters);
        free(t->published_seen);
        free(t);
}

int tracker_thread_with_snapshot(struct tracker_thread *t,
                                 int (*fn)(const struct dp_tracker_snapshot *snap, void *userdata), void *userdata) {
        int r;

        pthread_mutex_lock(&t->lock);
        r = fn(&t->published, userdata);
        pthread_mutex_unlock(&t->lock);
        return r;
}
