/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Throughput of the per-CPU SPSC sample queue against a plain mutex+condvar
 * bounded queue, producer and consumer on different CPUs, measured side by
 * side in one run (repetitions interleaved across configurations) and
 * reported as the median samples/s.
 *
 *   bench-spsc [--seconds N] [--reps N] [--batch B] [--capacity C] [--json FILE]
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "macro.h"
#include "spsc.h"

#define MAX_BATCH 4096
#define MAX_REPS 64

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
}

static double now_seconds(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Cheap, deterministic content so the consumer can check order and the
 * compiler cannot drop the writes. */
static inline void sample_fill(struct dp_sample *s, uint64_t seq) {
        s->time = seq;
        s->vaddr = seq << 12;
        s->paddr = 0;
        s->data_src = 0;
        s->pid = 1;
        s->tid = (uint32_t) seq;
        s->latency = 0;
        s->cpu = 0;
        s->flags = DP_SAMPLE_LOAD;
}

/* ---- the baseline: a bounded ring under one mutex ---- */

struct mutex_queue {
        pthread_mutex_t lock;
        pthread_cond_t not_full;
        pthread_cond_t not_empty;
        struct dp_sample *slots;
        uint64_t mask;
        uint64_t head;
        uint64_t tail;
        bool closed;
};

static int mutex_queue_init(struct mutex_queue *q, size_t capacity) {
        *q = (struct mutex_queue) { .mask = capacity - 1 };
        if (posix_memalign((void **) &q->slots, DP_CACHELINE, capacity * sizeof(*q->slots)) != 0)
                return -ENOMEM;
        memset(q->slots, 0, capacity * sizeof(*q->slots));
        pthread_mutex_init(&q->lock, NULL);
        pthread_cond_init(&q->not_full, NULL);
        pthread_cond_init(&q->not_empty, NULL);
        return 0;
}

static void mutex_queue_destroy(struct mutex_queue *q) {
        pthread_cond_destroy(&q->not_empty);
        pthread_cond_destroy(&q->not_full);
        pthread_mutex_destroy(&q->lock);
        free(q->slots);
}

/* Copies all @n samples in, waiting for room; returns false once closed. */
static bool mutex_queue_push(struct mutex_queue *q, const struct dp_sample *in, size_t n) {
        pthread_mutex_lock(&q->lock);
        while (n > 0) {
                uint64_t room, index, chunk;

                while (q->head - q->tail > q->mask && !q->closed)
                        pthread_cond_wait(&q->not_full, &q->lock);
                if (q->closed)
                        break;
                room = q->mask + 1 - (q->head - q->tail);
                index = q->head & q->mask;
                chunk = DP_MIN(DP_MIN((uint64_t) n, room), q->mask + 1 - index);
                memcpy(&q->slots[index], in, chunk * sizeof(*in));
                q->head += chunk;
                in += chunk;
                n -= chunk;
                pthread_cond_signal(&q->not_empty);
        }
        pthread_mutex_unlock(&q->lock);
        return n == 0;
}

/* Copies out up to @max samples, waiting while empty; 0 once closed and drained. */
static size_t mutex_queue_pop(struct mutex_queue *q, struct dp_sample *out, size_t max) {
        uint64_t avail, index, first_part;
        size_t n;

        pthread_mutex_lock(&q->lock);
        while (q->head == q->tail && !q->closed)
                pthread_cond_wait(&q->not_empty, &q->lock);
        avail = q->head - q->tail;
        n = (size_t) DP_MIN(avail, (uint64_t) max);
        index = q->tail & q->mask;
        first_part = DP_MIN((uint64_t) n, q->mask + 1 - index);
        memcpy(out, &q->slots[index], first_part * sizeof(*out));
        memcpy(out + first_part, q->slots, (n - first_part) * sizeof(*out));
        q->tail += n;
        if (n > 0)
                pthread_cond_signal(&q->not_full);
        pthread_mutex_unlock(&q->lock);
        return n;
}

static void mutex_queue_close(struct mutex_queue *q) {
        pthread_mutex_lock(&q->lock);
        q->closed = true;
        pthread_cond_broadcast(&q->not_full);
        pthread_cond_broadcast(&q->not_empty);
        pthread_mutex_unlock(&q->lock);
}

/* ---- configurations ---- */

enum bench_kind {
        KIND_SPSC_INPLACE,      /* reserve/commit, peek/consume: no copies */
        KIND_SPSC_BULK,         /* local batch, push_many; peek/consume */
        KIND_SPSC_COPY,         /* push, pop into a buffer */
        KIND_MUTEX,             /* mutex_queue_push/pop of whole batches */
};

struct bench_config {
        const char *name;
        enum bench_kind kind;
        size_t batch;           /* samples per publish / per consumer step */
        double rates[MAX_REPS];
        long preemptions[MAX_REPS];     /* involuntary context switches, both threads */
        double median;
};

struct bench_run {
        const struct bench_config *config;
        struct dp_spsc *spsc;
        struct mutex_queue mutex;
        pthread_barrier_t start;
        atomic_bool stop;
        atomic_bool producer_done;
        int producer_cpu, consumer_cpu;
        bool can_spin;          /* producer and consumer have their own CPUs */
        uint64_t consumed;
        uint64_t sequence_errors;
        uint64_t checksum;
        double end_time;
        long producer_preemptions;
        long consumer_preemptions;
};

/* A bench thread that was preempted measured the scheduler, not the queue. */
static long thread_preemptions(void) {
        struct rusage usage;

        if (getrusage(RUSAGE_THREAD, &usage) < 0)
                return 0;
        return usage.ru_nivcsw;
}

static void pin_to(int cpu) {
        cpu_set_t set;

        if (cpu < 0)
                return;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        (void) pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void wait_a_bit(const struct bench_run *run) {
        if (run->can_spin)
                cpu_relax();
        else
                sched_yield();
}

static void *producer_main(void *arg) {
        struct bench_run *run = arg;
        const struct bench_config *c = run->config;
        struct dp_sample buf[MAX_BATCH];
        uint64_t seq = 0;

        pin_to(run->producer_cpu);
        pthread_barrier_wait(&run->start);
        run->producer_preemptions = -thread_preemptions();

        while (!atomic_load_explicit(&run->stop, memory_order_relaxed)) {
                switch (c->kind) {
                case KIND_SPSC_INPLACE:
                        for (size_t i = 0; i < c->batch; i++) {
                                struct dp_sample *slot;

                                while (!(slot = dp_spsc_reserve(run->spsc))) {
                                        dp_spsc_publish(run->spsc);
                                        wait_a_bit(run);
                                }
                                sample_fill(slot, seq++);
                                dp_spsc_commit(run->spsc);
                        }
                        dp_spsc_publish(run->spsc);
                        break;
                case KIND_SPSC_BULK:
                        for (size_t i = 0; i < c->batch; i++)
                                sample_fill(&buf[i], seq++);
                        for (size_t done = 0; done < c->batch;) {
                                size_t pushed = dp_spsc_push_many(run->spsc, buf + done, c->batch - done);

                                if (pushed == 0) {
                                        dp_spsc_publish(run->spsc);
                                        wait_a_bit(run);
                                }
                                done += pushed;
                        }
                        dp_spsc_publish(run->spsc);
                        break;
                case KIND_SPSC_COPY:
                        for (size_t i = 0; i < c->batch; i++) {
                                struct dp_sample s;

                                sample_fill(&s, seq++);
                                while (dp_spsc_push(run->spsc, &s) < 0) {
                                        dp_spsc_publish(run->spsc);
                                        wait_a_bit(run);
                                }
                        }
                        dp_spsc_publish(run->spsc);
                        break;
                case KIND_MUTEX:
                        for (size_t i = 0; i < c->batch; i++)
                                sample_fill(&buf[i], seq++);
                        if (!mutex_queue_push(&run->mutex, buf, c->batch))
                                goto done;
                        break;
                }
        }
done:
        run->producer_preemptions += thread_preemptions();
        atomic_store_explicit(&run->producer_done, true, memory_order_release);
        return NULL;
}

/* Stands in for the tracker's work; the totals live on the consumer's stack,
 * not in struct bench_run, whose line the producer polls. */
struct consumer_totals {
        uint64_t sequence_errors;
        uint64_t checksum;
};

static inline void consume_one(struct consumer_totals *t, const struct dp_sample *s, uint64_t expected) {
        t->sequence_errors += s->time != expected;
        t->checksum += s->vaddr ^ s->tid;
}

static void *consumer_main(void *arg) {
        struct bench_run *run = arg;
        const struct bench_config *c = run->config;
        struct dp_sample buf[MAX_BATCH];
        struct consumer_totals totals = {};
        uint64_t consumed = 0;

        pin_to(run->consumer_cpu);
        pthread_barrier_wait(&run->start);
        run->consumer_preemptions = -thread_preemptions();

        for (;;) {
                size_t n = 0;

                switch (c->kind) {
                case KIND_SPSC_INPLACE:
                case KIND_SPSC_BULK: {
                        const struct dp_sample *first;

                        n = DP_MIN(dp_spsc_peek(run->spsc, &first), c->batch);
                        for (size_t i = 0; i < n; i++)
                                consume_one(&totals, &first[i], consumed + i);
                        dp_spsc_consume(run->spsc, n);
                        break;
                }
                case KIND_SPSC_COPY:
                        n = dp_spsc_pop(run->spsc, buf, c->batch);
                        for (size_t i = 0; i < n; i++)
                                consume_one(&totals, &buf[i], consumed + i);
                        break;
                case KIND_MUTEX:
                        n = mutex_queue_pop(&run->mutex, buf, c->batch);
                        for (size_t i = 0; i < n; i++)
                                consume_one(&totals, &buf[i], consumed + i);
                        if (n == 0)
                                goto done;
                        break;
                }
                consumed += n;
                if (n == 0) {
                        /* Check "done" before the final empty look, not after, so
                         * nothing published just before it is left behind. */
                        if (atomic_load_explicit(&run->producer_done, memory_order_acquire)) {
                                const struct dp_sample *first;

                                if (dp_spsc_peek(run->spsc, &first) == 0)
                                        goto done;
                                continue;
                        }
                        wait_a_bit(run);
                }
        }
done:
        run->end_time = now_seconds();
        run->consumer_preemptions += thread_preemptions();
        run->consumed = consumed;
        run->sequence_errors = totals.sequence_errors;
        run->checksum = totals.checksum;
        return NULL;
}

static int run_once(const struct bench_config *c, size_t capacity, double seconds, int cpus[2], bool can_spin,
                    double *ret_rate, long *ret_preemptions, uint64_t *ret_errors) {
        struct bench_run run = {
                .config = c,
                .producer_cpu = cpus[0],
                .consumer_cpu = cpus[1],
                .can_spin = can_spin,
        };
        pthread_t producer, consumer;
        struct timespec pause;
        double start;
        int r;

        if (c->kind == KIND_MUTEX)
                r = mutex_queue_init(&run.mutex, capacity);
        else
                r = dp_spsc_new(capacity, &run.spsc);
        if (r < 0)
                return r;

        pthread_barrier_init(&run.start, NULL, 3);
        if (pthread_create(&consumer, NULL, consumer_main, &run) != 0 ||
            pthread_create(&producer, NULL, producer_main, &run) != 0) {
                fprintf(stderr, "pthread_create failed\n");
                exit(EXIT_FAILURE);
        }
        pthread_barrier_wait(&run.start);
        start = now_seconds();

        pause.tv_sec = (time_t) seconds;
        pause.tv_nsec = (long) ((seconds - (double) pause.tv_sec) * 1e9);
        while (nanosleep(&pause, &pause) < 0 && errno == EINTR)
                ;
        atomic_store(&run.stop, true);
        pthread_join(producer, NULL);
        if (c->kind == KIND_MUTEX)
                mutex_queue_close(&run.mutex);
        pthread_join(consumer, NULL);

        *ret_rate = (double) run.consumed / (run.end_time - start);
        *ret_errors = run.sequence_errors;
        *ret_preemptions = run.producer_preemptions + run.consumer_preemptions;

        pthread_barrier_destroy(&run.start);
        if (c->kind == KIND_MUTEX)
                mutex_queue_destroy(&run.mutex);
        else
                dp_spsc_free(run.spsc);
        return 0;
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

static double median_of(const double *values, int n) {
        double sorted[MAX_REPS];

        memcpy(sorted, values, n * sizeof(*values));
        qsort(sorted, n, sizeof(*sorted), compare_double);
        return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* The mutex row with the same batch size, to compare against. */
static const struct bench_config *baseline_for(const struct bench_config *configs, size_t n,
                                               const struct bench_config *c) {
        for (size_t i = 0; i < n; i++)
                if (configs[i].kind == KIND_MUTEX && configs[i].batch == c->batch)
                        return &configs[i];
        return NULL;
}

static void pick_cpus(int cpus[2], bool *can_spin) {
        cpu_set_t set;
        int found = 0;

        cpus[0] = cpus[1] = -1;
        *can_spin = false;
        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return;
        for (int cpu = 0; cpu < CPU_SETSIZE && found < 2; cpu++)
                if (CPU_ISSET(cpu, &set))
                        cpus[found++] = cpu;
        if (found < 2) {
                cpus[0] = cpus[1] = -1; /* one CPU: pinning buys nothing */
                return;
        }
        *can_spin = true;
}

/* The VM's two vCPUs may sit close together or far apart on the host, which
 * moves every number here by a factor of two or more; a cache-line ping-pong
 * between the two bench CPUs shows which case a repetition got. */
struct ping_pong {
        _Atomic uint64_t turn DP_ALIGNED_CACHELINE;
        int cpus[2];
        uint64_t rounds;
        double round_trip_ns;
};

static void *pong_main(void *arg) {
        struct ping_pong *pp = arg;

        pin_to(pp->cpus[1]);
        for (uint64_t i = 0; i < pp->rounds; i++) {
                while (atomic_load_explicit(&pp->turn, memory_order_acquire) != 2 * i + 1)
                        ;
                atomic_store_explicit(&pp->turn, 2 * i + 2, memory_order_release);
        }
        return NULL;
}

static void *ping_main(void *arg) {
        struct ping_pong *pp = arg;
        double start;

        pin_to(pp->cpus[0]);
        start = now_seconds();
        for (uint64_t i = 0; i < pp->rounds; i++) {
                atomic_store_explicit(&pp->turn, 2 * i + 1, memory_order_release);
                while (atomic_load_explicit(&pp->turn, memory_order_acquire) != 2 * i + 2)
                        ;
        }
        pp->round_trip_ns = (now_seconds() - start) * 1e9 / (double) pp->rounds;
        return NULL;
}

/* Takes about 10 ms; -1 when there are not two CPUs to bounce a line between. */
static double measure_round_trip_ns(const int cpus[2], bool can_spin) {
        struct ping_pong pp = { .cpus = { cpus[0], cpus[1] }, .rounds = 20000 };
        pthread_t ping, pong;

        if (!can_spin)
                return -1;
        if (pthread_create(&pong, NULL, pong_main, &pp) != 0)
                return -1;
        if (pthread_create(&ping, NULL, ping_main, &pp) != 0) {
                /* The pong thread would wait forever: let it run out. */
                for (uint64_t i = 0; i < pp.rounds; i++) {
                        atomic_store(&pp.turn, 2 * i + 1);
                        while (atomic_load(&pp.turn) != 2 * i + 2)
                                ;
                }
                pthread_join(pong, NULL);
                return -1;
        }
        pthread_join(ping, NULL);
        pthread_join(pong, NULL);
        return pp.round_trip_ns;
}

struct bench_context {
        double seconds;
        size_t reps;
        size_t capacity;
        int cpus[2];
        bool can_spin;
        double load_before;
        double round_trip_ns[MAX_REPS];
};

/* Involuntary context switches of the two bench threads per measured second
 * above which the machine was busy with something else.  A quiet run here
 * sees 20-60 (timer and kernel housekeeping). */
#define BUSY_PREEMPTIONS_PER_SECOND 100

static double preemptions_per_second(const struct bench_config *c, const struct bench_context *ctx) {
        long total = 0;

        for (size_t k = 0; k < ctx->reps; k++)
                total += c->preemptions[k];
        return (double) total / (ctx->seconds * (double) ctx->reps);
}

static int write_json(const char *path, const struct bench_config *configs, size_t n,
                      const struct bench_context *ctx) {
        json_t *root, *results, *round_trips;
        int r = 0;

        root = json_pack("{s:s, s:f, s:I, s:I, s:[i,i], s:f, s:o, s:o}", "benchmark", "spsc", "seconds",
                         ctx->seconds, "repetitions", (json_int_t) ctx->reps, "capacity",
                         (json_int_t) ctx->capacity, "cpus", ctx->cpus[0], ctx->cpus[1], "load_average_before",
                         ctx->load_before, "round_trip_ns", json_array(), "results", json_array());
        if (!root)
                return -ENOMEM;
        round_trips = json_object_get(root, "round_trip_ns");
        for (size_t k = 0; k < ctx->reps; k++)
                json_array_append_new(round_trips, json_real(ctx->round_trip_ns[k]));
        results = json_object_get(root, "results");
        for (size_t i = 0; i < n; i++) {
                const struct bench_config *c = &configs[i], *base = baseline_for(configs, n, c);
                json_t *rates = json_array(), *preemptions = json_array(), *entry;

                for (size_t k = 0; k < ctx->reps; k++) {
                        json_array_append_new(rates, json_real(c->rates[k]));
                        json_array_append_new(preemptions, json_integer(c->preemptions[k]));
                }
                entry = json_pack("{s:s, s:s, s:I, s:f, s:o, s:o}", "name", c->name, "queue",
                                  c->kind == KIND_MUTEX ? "mutex" : "spsc", "batch", (json_int_t) c->batch,
                                  "samples_per_sec_median", c->median, "samples_per_sec", rates,
                                  "involuntary_context_switches", preemptions);
                if (!entry) {
                        r = -ENOMEM;
                        break;
                }
                if (c->kind != KIND_MUTEX && base)
                        json_object_set_new(entry, "ratio_vs_mutex", json_real(c->median / base->median));
                json_array_append_new(results, entry);
        }
        if (r == 0 && json_dump_file(root, path, JSON_INDENT(2)) < 0)
                r = -EIO;
        json_decref(root);
        return r;
}

/* Repetitions are interleaved across configurations so that drift on the
 * machine hits every row alike.  Returns -EBADMSG if a consumer saw samples
 * out of sequence. */
static int run_all(struct bench_config *configs, size_t n, struct bench_context *ctx) {
        int result = 0;

        for (size_t k = 0; k < ctx->reps; k++) {
                ctx->round_trip_ns[k] = measure_round_trip_ns(ctx->cpus, ctx->can_spin);
                for (size_t i = 0; i < n; i++) {
                        uint64_t errors;
                        int r = run_once(&configs[i], ctx->capacity, ctx->seconds, ctx->cpus, ctx->can_spin,
                                         &configs[i].rates[k], &configs[i].preemptions[k], &errors);

                        if (r < 0) {
                                fprintf(stderr, "bench-spsc: %s: %s\n", configs[i].name, strerror(-r));
                                return r;
                        }
                        if (errors > 0) {
                                fprintf(stderr, "bench-spsc: %s: %" PRIu64 " samples out of sequence\n",
                                        configs[i].name, errors);
                                result = -EBADMSG;
                        }
                }
        }
        for (size_t i = 0; i < n; i++)
                configs[i].median = median_of(configs[i].rates, (int) ctx->reps);
        return result;
}

static void print_table(const struct bench_config *configs, size_t n, const struct bench_context *ctx) {
        bool busy = false;

        printf("core-to-core round trip per repetition (ns):");
        for (size_t k = 0; k < ctx->reps; k++)
                printf(" %.0f", ctx->round_trip_ns[k]);
        printf("\n%-30s %6s %11s %9s %9s %9s %10s\n", "queue", "batch", "median M/s", "min M/s", "max M/s",
               "vs mutex", "preempt/s");
        for (size_t i = 0; i < n; i++) {
                const struct bench_config *c = &configs[i], *base = baseline_for(configs, n, c);
                double lo = c->rates[0], hi = c->rates[0], preempt_rate = preemptions_per_second(c, ctx);

                for (size_t k = 1; k < ctx->reps; k++) {
                        lo = DP_MIN(lo, c->rates[k]);
                        hi = DP_MAX(hi, c->rates[k]);
                }
                busy = busy || preempt_rate > BUSY_PREEMPTIONS_PER_SECOND;
                printf("%-30s %6zu %11.1f %9.1f %9.1f", c->name, c->batch, c->median / 1e6, lo / 1e6, hi / 1e6);
                if (c->kind != KIND_MUTEX && base)
                        printf(" %8.1fx", c->median / base->median);
                else
                        printf(" %9s", "-");
                printf(" %10.0f\n", preempt_rate);
        }
        if (busy)
                printf("note: bench threads were preempted more than %d times/s: other load on the machine "
                       "skewed some rows low\n", BUSY_PREEMPTIONS_PER_SECOND);
}

/* Other work on the machine skews spinning threads badly; say how busy it was. */
static double load_average(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/loadavg", "re");
        double load;

        if (!f || fscanf(f, "%lf", &load) != 1)
                return -1;
        return load;
}

static void usage(FILE *f) {
        fprintf(f,
                "Usage: bench-spsc [--seconds N] [--reps N] [--batch B] [--capacity C] [--json FILE]\n"
                "  --seconds N   measuring time per configuration and repetition (default 2)\n"
                "  --reps N      repetitions, the median is reported (default 3, max %d)\n"
                "  --batch B     samples per publish / consumer step (default 64, max %d)\n"
                "  --capacity C  queue capacity, a power of two (default 4096)\n"
                "  --json FILE   also write the results as JSON\n",
                MAX_REPS, MAX_BATCH);
}

static int parse_size(const char *arg, size_t min, size_t max, size_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(arg, &end, 10);
        if (errno != 0 || end == arg || *end != '\0' || arg[0] == '-' || v < min || v > max)
                return -EINVAL;
        *ret = (size_t) v;
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "seconds", required_argument, NULL, 's' },
                { "reps", required_argument, NULL, 'r' },
                { "batch", required_argument, NULL, 'b' },
                { "capacity", required_argument, NULL, 'c' },
                { "json", required_argument, NULL, 'j' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        struct bench_context ctx = { .seconds = 2.0, .reps = 3, .capacity = 4096 };
        const char *json_path = NULL;
        size_t batch = 64;
        int opt, r;

        while ((opt = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                char *end;

                switch (opt) {
                case 's':
                        errno = 0;
                        ctx.seconds = strtod(optarg, &end);
                        if (errno != 0 || end == optarg || *end != '\0' ||
                            !(ctx.seconds > 0 && ctx.seconds <= 3600)) {
                                fprintf(stderr, "bench-spsc: --seconds needs a number in (0, 3600]\n");
                                return EXIT_FAILURE;
                        }
                        break;
                case 'r':
                        if (parse_size(optarg, 1, MAX_REPS, &ctx.reps) < 0) {
                                fprintf(stderr, "bench-spsc: --reps needs 1..%d\n", MAX_REPS);
                                return EXIT_FAILURE;
                        }
                        break;
                case 'b':
                        if (parse_size(optarg, 1, MAX_BATCH, &batch) < 0) {
                                fprintf(stderr, "bench-spsc: --batch needs 1..%d\n", MAX_BATCH);
                                return EXIT_FAILURE;
                        }
                        break;
                case 'c':
                        if (parse_size(optarg, 2, DP_SPSC_CAPACITY_MAX, &ctx.capacity) < 0 ||
                            (ctx.capacity & (ctx.capacity - 1)) != 0) {
                                fprintf(stderr, "bench-spsc: --capacity needs a power of two in [2, 2^28]\n");
                                return EXIT_FAILURE;
                        }
                        break;
                case 'j':
                        json_path = optarg;
                        break;
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
                default:
                        usage(stderr);
                        return EXIT_FAILURE;
                }
        }
        if (optind < argc) {
                usage(stderr);
                return EXIT_FAILURE;
        }
        if (batch > ctx.capacity) {
                fprintf(stderr, "bench-spsc: --batch must not exceed --capacity\n");
                return EXIT_FAILURE;
        }

        struct bench_config configs[] = {
                { .name = "spsc in place (reserve/peek)", .kind = KIND_SPSC_INPLACE, .batch = batch },
                { .name = "spsc bulk (push_many/peek)", .kind = KIND_SPSC_BULK, .batch = batch },
                { .name = "spsc copy (push/pop)", .kind = KIND_SPSC_COPY, .batch = batch },
                { .name = "mutex+condvar", .kind = KIND_MUTEX, .batch = batch },
                { .name = "spsc unbatched", .kind = KIND_SPSC_COPY, .batch = 1 },
                { .name = "mutex+condvar unbatched", .kind = KIND_MUTEX, .batch = 1 },
        };
        /* With --batch 1 the batched rows would repeat the unbatched ones. */
        size_t first = batch == 1 ? 4 : 0, n_configs = DP_ARRAY_SIZE(configs) - first;

        pick_cpus(ctx.cpus, &ctx.can_spin);
        ctx.load_before = load_average();
        printf("bench-spsc: %.1f s x %zu reps per configuration, capacity %zu, producer CPU %d, consumer CPU %d%s, "
               "load average %.2f\n",
               ctx.seconds, ctx.reps, ctx.capacity, ctx.cpus[0], ctx.cpus[1],
               ctx.can_spin ? "" : " (unpinned, yielding)", ctx.load_before);

        r = run_all(configs + first, n_configs, &ctx);
        if (r < 0 && r != -EBADMSG)
                return EXIT_FAILURE;
        print_table(configs + first, n_configs, &ctx);

        if (json_path) {
                int k = write_json(json_path, configs + first, n_configs, &ctx);

                if (k < 0) {
                        fprintf(stderr, "bench-spsc: writing %s: %s\n", json_path, strerror(-k));
                        return EXIT_FAILURE;
                }
        }
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
