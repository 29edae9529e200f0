/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Does the pipeline keep up with 1M samples/s per CPU?  One producer thread
 * per CPU plays the kernel and the reader: it writes page-fault records into
 * a ring in memory at the given rate, and whenever the ring is filled to the
 * daemon's wakeup watermark drains it with the reader stage
 * (dp_ring_reader_drain) into that CPU's channel (daemon/channel.c), as the
 * daemon's reader thread does.  The daemon's own tracker thread
 * (daemon/tracker-thread.c, linked in) is the consumer, with the daemon's default queue size and
 * settings, tracking this process's hot area.  Reported: samples injected,
 * queued, dropped for want of queue space (overflow, the target is 0), the
 * deepest queue, and what the tracker made of them.
 *
 *   bench-overflow [--rate N] [--seconds S] [--producers P] [--queue-size Q] [--json FILE]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "channel.h"
#include "config.h"
#include "macro.h"
#include "parse-util.h"
#include "ring-reader.h"
#include "tracker-thread.h"
#include "time-util.h"

#define PAGE 4096
#define HOT_BYTES (64u << 20)
#define TICK_NS 1000000ull /* the producers' pace: a burst every millisecond */

/* A page fault as the kernel writes it for TID|TIME|ADDR|CPU. */
struct fault_record {
        struct perf_event_header h;
        uint32_t pid, tid;
        uint64_t time, addr;
        uint32_t cpu, res;
};

struct producer {
        int cpu;
        double rate;                    /* samples per second */
        double seconds;
        uint8_t *hot;                   /* the area the faults are in */
        struct channel *channel;        /* its queue and counters, shared with the tracker */
        struct dp_ring_reader reader;   /* the daemon's reader stage */
        struct perf_event_attr attr;
        uint8_t *scratch;
        uint8_t *mem;                   /* the ring: a control page, then the data */
        size_t data_size;
        uint64_t head;
        uint64_t injected;
        uint64_t ring_full;             /* records the kernel would have lost */
        double elapsed;
        pthread_t thread;
} DP_ALIGNED_CACHELINE;         /* each producer thread writes its own per sample */

/* As the kernel: into the ring, if there is room past the reader's tail. */
static bool ring_write(struct producer *p, const struct fault_record *rec) {
        struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *) p->mem;
        uint64_t tail = __atomic_load_n(&meta->data_tail, __ATOMIC_ACQUIRE);
        uint8_t *data = p->mem + PAGE;
        size_t at = (size_t) (p->head & (p->data_size - 1));

        size_t first = DP_MIN(sizeof(*rec), p->data_size - at);

        if (p->head + sizeof(*rec) - tail > p->data_size)
                return false;
        /* A record may wrap past the end of the data area, as in the kernel's. */
        memcpy(data + at, rec, first);
        memcpy(data, (const uint8_t *) rec + first, sizeof(*rec) - first);
        p->head += sizeof(*rec);
        __atomic_store_n(&meta->data_head, p->head, __ATOMIC_RELEASE);
        return true;
}

/* As daemon/reader.c after each wakeup. */
static void reader_drain(struct producer *p) {
        dp_ring_reader_drain(&p->reader);
        dp_counters_publish(&p->channel->stats, DP_OWNER_READER, &p->reader.counters);
        channel_wake_if_needed(p->channel);
}

static void *producer_main(void *arg) {
        struct producer *p = arg;
        struct perf_event_mmap_page *meta = (struct perf_event_mmap_page *) p->mem;
        uint64_t start = dp_now_ns(CLOCK_MONOTONIC), next = start, end = start + (uint64_t) (p->seconds * 1e9), page = 0;
        uint32_t pid = (uint32_t) getpid();
        size_t watermark = p->data_size / 2;    /* the daemon's wakeup_bytes (daemon/manager.c) */
        cpu_set_t set;

        CPU_ZERO(&set);
        CPU_SET(p->cpu, &set);
        (void) sched_setaffinity(0, sizeof(set), &set);

        for (;;) {
                uint64_t t = dp_now_ns(CLOCK_MONOTONIC);
                uint64_t due = (uint64_t) ((double) (DP_MIN(t, end) - start) * p->rate / 1e9);
                struct timespec ts;

                while (p->injected < due) {
                        struct fault_record rec = {
                                .h = { .type = PERF_RECORD_SAMPLE, .size = sizeof(rec) },
                                .pid = pid, .tid = pid + 1 + (uint32_t) p->cpu,
                                .time = t, .addr = (uint64_t) (uintptr_t) (p->hot + page * PAGE),
                                .cpu = (uint32_t) p->cpu,
                        };

                        if (!ring_write(p, &rec)) {
                                p->ring_full++;
                                p->injected++;
                                continue;
                        }
                        p->injected++;
                        page = (page + 1) % (HOT_BYTES / PAGE);
                        /* The kernel wakes the reader at the watermark. */
                        if (p->head - __atomic_load_n(&meta->data_tail, __ATOMIC_ACQUIRE) >= watermark)
                                reader_drain(p);
                }
                if (t >= end)
                        break;
                next += TICK_NS;
                ts = (struct timespec) { (time_t) (next / 1000000000ull), (long) (next % 1000000000ull) };
                clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        }
        /* The daemon's reader takes the rest when its poll interval passes. */
        reader_drain(p);
        p->elapsed = (double) (dp_now_ns(CLOCK_MONOTONIC) - start) / 1e9;
        return NULL;
}

static int setup_producer(struct producer *p, size_t ring_pages) {
        struct dp_source_options o = {};
        struct dp_event_plan plan;
        int r;

        p->data_size = ring_pages * PAGE;
        p->mem = aligned_alloc(PAGE, PAGE + p->data_size);
        p->scratch = malloc(DP_PERF_RECORD_MAX);
        if (!p->mem || !p->scratch)
                return -ENOMEM;
        memset(p->mem, 0, PAGE + p->data_size);
        ((struct perf_event_mmap_page *) p->mem)->data_offset = PAGE;
        ((struct perf_event_mmap_page *) p->mem)->data_size = p->data_size;

        r = dp_source_build_events(&dp_source_pagefault, &o, p->cpu, &plan);
        if (r < 0)
                return r;
        p->attr = plan.event[0].attr;
        r = dp_ring_reader_init(&p->reader, &p->attr, &dp_source_pagefault, p->channel->queue, (uint16_t) p->cpu,
                                false);
        if (r < 0)
                return r;
        return dp_perf_ring_init(&p->reader.ring, (struct perf_event_mmap_page *) p->mem, PAGE, p->data_size,
                                 p->scratch);
}

static int write_json(const char *path, const struct producer *p, size_t n, const struct dp_counter_values *total,
                      size_t queue_capacity, uint64_t ring_full) {
        json_t *root, *rates;
        double rate = n ? p[0].rate : 0;
        int r = 0;

        rates = json_array();
        for (size_t i = 0; i < n; i++)
                json_array_append_new(rates, json_real((double) p[i].injected / p[i].elapsed));
        root = json_pack("{s:s, s:f, s:f, s:I, s:I, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "benchmark",
                         "overflow", "rate_per_producer", rate, "seconds", n ? p[0].seconds : 0.0, "producers",
                         (json_int_t) n, "queue_capacity", (json_int_t) queue_capacity, "achieved_rate", rates,
                         "callback", (json_int_t) total->v[DP_C_CALLBACK], "enqueue",
                         (json_int_t) total->v[DP_C_ENQUEUE], "overflow", (json_int_t) total->v[DP_C_OVERFLOW],
                         "ring_full", (json_int_t) ring_full, "queue_peak", (json_int_t) total->v[DP_C_RING_PEAK],
                         "dequeue", (json_int_t) total->v[DP_C_DEQUEUE], "match", (json_int_t) total->v[DP_C_MATCH],
                         "in_flight", (json_int_t) dp_counters_in_flight(total));
        if (!root)
                return -ENOMEM;
        if (json_dump_file(root, path, JSON_INDENT(2)) < 0)
                r = -EIO;
        json_decref(root);
        return r;
}

static void usage(FILE *f) {
        fprintf(f,
                "Usage: bench-overflow [--rate N] [--seconds S] [--producers P] [--queue-size Q] [--json FILE]\n"
                "  --rate N        samples per second per producer (default 1000000)\n"
                "  --seconds S     how long to inject (default 5)\n"
                "  --producers P   producer threads, one per CPU (default: the online CPUs)\n"
                "  --queue-size Q  per-CPU queue capacity, a power of two (default: the daemon's)\n"
                "  --json FILE     also write the results as JSON\n");
}

struct settings {
        double rate, seconds;
        size_t n;                       /* producers */
        const char *json_path;
        struct dp_config config;        /* the daemon's defaults, but for --queue-size */
};

/* 1 to run, 0 to exit at once (--help), -1 on a bad option (reported). */
static int parse_options(int argc, char *argv[], struct settings *set) {
        static const struct option options[] = {
                { "rate", required_argument, NULL, 'r' },
                { "seconds", required_argument, NULL, 's' },
                { "producers", required_argument, NULL, 'p' },
                { "queue-size", required_argument, NULL, 'q' },
                { "json", required_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        uint64_t producers;
        const char *why;
        int opt;

        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                switch (opt) {
                case 'r':
                        if (dp_parse_double(optarg, &set->rate) < 0 || set->rate <= 0 || set->rate > 1e8) {
                                fprintf(stderr, "bench-overflow: --rate needs a number in (0, 1e8]\n");
                                return -1;
                        }
                        break;
                case 's':
                        if (dp_parse_double(optarg, &set->seconds) < 0 || set->seconds <= 0 || set->seconds > 3600) {
                                fprintf(stderr, "bench-overflow: --seconds needs a number in (0, 3600]\n");
                                return -1;
                        }
                        break;
                case 'p':
                        if (dp_parse_u64_in(optarg, 1, 256, &producers) < 0) {
                                fprintf(stderr, "bench-overflow: --producers needs 1..256\n");
                                return -1;
                        }
                        set->n = (size_t) producers;
                        break;
                case 'q':
                        if (dp_parse_u32_in(optarg, 0, UINT32_MAX, &set->config.queue_capacity) < 0 ||
                            dp_config_validate(&set->config, &why) < 0) {
                                fprintf(stderr, "bench-overflow: --queue-size needs a power of two in [64, 2^24]\n");
                                return -1;
                        }
                        break;
                case 'j':
                        set->json_path = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return -1;
                }
        }
        return 1;
}

/* The producers, each with its channel, as many as there are CPUs spread over them. */
static int setup_producers(const struct settings *set, long ncpu, uint8_t *hot, struct channel *channels,
                           struct producer *producers) {
        for (size_t i = 0; i < set->n; i++) {
                struct producer *p = &producers[i];
                int cpu = (int) i % (int) (ncpu > 0 ? ncpu : 1), r;

                r = channel_open(&channels[i], cpu, &dp_source_pagefault, set->config.queue_capacity);
                *p = (struct producer) { .cpu = cpu, .rate = set->rate, .seconds = set->seconds, .hot = hot,
                                         .channel = &channels[i] };
                if (r >= 0)
                        r = setup_producer(p, set->config.ring_pages);
                if (r < 0) {
                        fprintf(stderr, "bench-overflow: setting up producer %zu: %s\n", i, strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* The tracker thread, then every producer until it is done, then the tracker's last drain. */
static int run(const struct settings *set, struct channel *channels, struct producer *producers) {
        struct tracker_thread *tt = NULL;
        int r;

        r = tracker_thread_start(&set->config, channels, set->n, NULL, &tt);
        if (r < 0) {
                fprintf(stderr, "bench-overflow: starting the tracker thread: %s\n", strerror(-r));
                return r;
        }
        for (size_t i = 0; i < set->n; i++) {
                r = -pthread_create(&producers[i].thread, NULL, producer_main, &producers[i]);
                if (r < 0) {
                        fprintf(stderr, "bench-overflow: pthread_create: %s\n", strerror(-r));
                        return r;
                }
        }
        for (size_t i = 0; i < set->n; i++)
                pthread_join(producers[i].thread, NULL);
        /* Its last drain takes what the readers queued. */
        tracker_thread_free(tt);
        return 0;
}

/* The table, and the sums over every producer in *@total and *@ring_full. */
static void print_results(const struct settings *set, const struct channel *channels,
                          const struct producer *producers, struct dp_counter_values *total, uint64_t *ring_full) {
        struct dp_counter_values v;
        uint64_t injected = 0;

        printf("bench-overflow: %zu producer(s) x %.0f samples/s for %.1f s, queue %u, ring %u pages\n", set->n,
               set->rate, set->seconds, set->config.queue_capacity, set->config.ring_pages);
        printf("%-9s %12s %12s %12s %10s %10s %10s\n", "producer", "injected", "samples/s", "queued", "overflow",
               "ring full", "q. peak");
        for (size_t i = 0; i < set->n; i++) {
                dp_counters_snapshot(&channels[i].stats, &v);
                dp_counters_sum(total, &v);
                *ring_full += producers[i].ring_full;
                injected += producers[i].injected;
                printf("%-9zu %12" PRIu64 " %12.0f %12" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", i,
                       producers[i].injected, (double) producers[i].injected / producers[i].elapsed,
                       v.v[DP_C_ENQUEUE], v.v[DP_C_OVERFLOW], producers[i].ring_full, v.v[DP_C_RING_PEAK]);
        }
        printf("tracker: dequeued %" PRIu64 ", matched %" PRIu64 " (missed: tgid %" PRIu64 ", region %" PRIu64
               ", bound %" PRIu64 "), in flight %" PRIu64 "\n", total->v[DP_C_DEQUEUE], total->v[DP_C_MATCH],
               total->v[DP_C_MISS_TGID], total->v[DP_C_MISS_REGION], total->v[DP_C_MISS_BOUND],
               dp_counters_in_flight(total));
        printf("overflow: %" PRIu64 " of %" PRIu64 " samples (target 0)\n", total->v[DP_C_OVERFLOW], injected);
}

int main(int argc, char *argv[]) {
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        struct settings set = { .rate = 1e6, .seconds = 5, .n = ncpu > 0 ? (size_t) ncpu : 1 };
        struct dp_counter_values total = {};
        struct channel *channels = NULL;
        struct producer *producers = NULL;
        uint64_t ring_full = 0;
        uint8_t *hot;
        int r;

        dp_config_init(&set.config);
        r = parse_options(argc, argv, &set);
        if (r <= 0)
                return r == 0 ? EXIT_SUCCESS : EXIT_FAILURE;

        /* The tracked process is this one, its hot area a mapping of its own. */
        hot = mmap(NULL, HOT_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        channels = channels_new(set.n);
        producers = aligned_alloc(DP_CACHELINE, set.n * sizeof(*producers));
        if (hot == MAP_FAILED || !channels || !producers) {
                fprintf(stderr, "bench-overflow: out of memory\n");
                return EXIT_FAILURE;
        }
        set.config.target_mode = DP_TARGETS_PIDS;
        set.config.pids[0] = (uint32_t) getpid();
        set.config.n_pids = 1;

        if (setup_producers(&set, ncpu, hot, channels, producers) < 0 || run(&set, channels, producers) < 0)
                return EXIT_FAILURE;
        print_results(&set, channels, producers, &total, &ring_full);
        if (set.json_path) {
                r = write_json(set.json_path, producers, set.n, &total, set.config.queue_capacity, ring_full);
                if (r < 0)
                        fprintf(stderr, "bench-overflow: writing %s: %s\n", set.json_path, strerror(-r));
        }
        for (size_t i = 0; i < set.n; i++) {
                free(producers[i].scratch);
                free(producers[i].mem);
        }
        channels_free(channels, set.n);
        free(producers);
        munmap(hot, HOT_BYTES);
        return total.v[DP_C_OVERFLOW] == 0 && ring_full == 0 ? EXIT_SUCCESS : 2;
}
