/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's varlink API under abuse, all at once: 10,000 connections
 * opened and dropped, a client sending one byte a second, a 17 MiB message,
 * messages that are not UTF-8, not JSON or not varlink, a Monitor() with
 * samples whose replies are never read and pipelined calls whose replies are
 * never read.  Meanwhile another client must be served within 100 ms (a
 * fresh connection and a GetStats round trip, timed every 100 ms; 95 of
 * 100 of them, and every one within a second), the
 * daemon's RSS must stay bounded, and afterwards it still serves, its
 * counters reconcile and its log has no error in it.
 *
 * Needs root (system-wide perf sampling).
 */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"

#include "check-main.h"
#include "test-daemon-run.h"
#include "test-workload.h"

#define CHURN_CONNECTIONS 10000
#define CHURN_BATCH 100
#define HUGE_MESSAGE_BYTES (17u << 20)
#define ABUSE_SECONDS 8.0
/* The bounds on the daemon's RSS growth, in KiB: while abused (a never-read
 * Monitor() may queue up to 16 MiB, the oversized message up to 16 MiB on
 * its way to refusal), and once the abusers are gone (what the allocator
 * keeps). */
#define RSS_GROWTH_PEAK_MAX_KIB (48u << 10)
#define RSS_GROWTH_AFTER_MAX_KIB (40u << 10)
/* 95 of 100 round trips within 100 ms, and every one within a second: a
 * loop the abusers block fails the first; a single slow one is the machine
 * (2 shared cores running other tests) as often as the daemon.  The ASan
 * build (the daemon's too) runs two to three times slower, its realloc()
 * copies where glibc's remaps (the 17 MiB message's buffer faults in page by
 * page), and its quarantine keeps freed memory resident: there the average
 * must stay within 100 ms, and RSS is not measured. */
#if defined(__SANITIZE_ADDRESS__)
#define SERVED_P95_WITHIN_SEC 1.0
#define CHECK_RSS 0
#else
#define SERVED_P95_WITHIN_SEC 0.1
#define CHECK_RSS 1
#endif
#define SERVED_WITHIN_SEC 1.0
#define SERVED_ON_AVERAGE_WITHIN_SEC 0.1
#define MAX_ROUNDS 256

static struct test_daemon d;

struct abuse {
        atomic_bool stop;
        atomic_uint churned;
        atomic_bool huge_refused, trickle_answered;
        atomic_uint garbage_closed;
        char error[256];                /* the first thing that went unexpectedly */
};

static void abuse_failed(struct abuse *a, const char *what) {
        if (!a->error[0])
                snprintf(a->error, sizeof(a->error), "%s: %s", what, strerror(errno));
}

static int raw_connect(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        const char *path = d.address + strlen("unix:");
        int fd;

        ck_assert_uint_lt(strlen(path), sizeof(sa.sun_path));
        memcpy(sa.sun_path, path, strlen(path) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Whether the server closes @fd within @sec: reads (and drops) replies until EOF. */
static bool closed_by_server(int fd, double sec) {
        char buf[4096];

        for (double deadline = test_now() + sec; test_now() < deadline;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                ssize_t n;

                if (poll(&p, 1, 100) <= 0)
                        continue;
                n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno == ECONNRESET))
                        return true;
        }
        return false;
}

/* 10,000 connections, a hundred at a time, every tenth with half a message. */
static void *churn(void *userdata) {
        struct abuse *a = userdata;
        int fds[CHURN_BATCH];

        while (atomic_load(&a->churned) < CHURN_CONNECTIONS && !atomic_load(&a->stop)) {
                for (size_t i = 0; i < CHURN_BATCH; i++) {
                        fds[i] = raw_connect();
                        if (fds[i] < 0) {
                                abuse_failed(a, "churn: connect");
                                return NULL;
                        }
                        if (i % 10 == 0)
                                (void) !send(fds[i], "{\"method\":", 10, MSG_NOSIGNAL);
                }
                for (size_t i = 0; i < CHURN_BATCH; i++)
                        close(fds[i]);
                atomic_fetch_add(&a->churned, CHURN_BATCH);
        }
        return NULL;
}

/* One byte a second; at the end the rest, and the answer must come. */
static void *trickle(void *userdata) {
        static const char call[] = "{\"method\":\"io.damon.perfd.GetStats\"}";
        struct abuse *a = userdata;
        char buf[65536];
        size_t sent = 0;
        int fd = raw_connect();

        if (fd < 0) {
                abuse_failed(a, "trickle: connect");
                return NULL;
        }
        while (!atomic_load(&a->stop) && sent < sizeof(call) - 1) {
                if (send(fd, call + sent, 1, MSG_NOSIGNAL) != 1) {
                        abuse_failed(a, "trickle: send");
                        break;
                }
                sent++;
                for (int i = 0; i < 10 && !atomic_load(&a->stop); i++)
                        test_sleep(0.1);
        }
        /* The rest and the NUL (sizeof includes it). */
        if (send(fd, call + sent, sizeof(call) - sent, MSG_NOSIGNAL) == (ssize_t) (sizeof(call) - sent)) {
                struct pollfd p = { .fd = fd, .events = POLLIN };

                if (poll(&p, 1, 2000) == 1 && recv(fd, buf, sizeof(buf), 0) > 0 && strstr(buf, "\"totals\""))
                        atomic_store(&a->trickle_answered, true);
        }
        close(fd);
        return NULL;
}

/* A message of 17 MiB, beyond the 16 MiB limit: the server must hang up. */
static void *huge(void *userdata) {
        static const char head[] = "{\"method\":\"io.damon.perfd.GetStats\",\"parameters\":{\"x\":\"";
        struct abuse *a = userdata;
        _cleanup_free_ char *message = malloc(HUGE_MESSAGE_BYTES);
        size_t sent = 0;
        int fd = raw_connect();

        if (fd < 0 || !message) {
                abuse_failed(a, "huge: connect");
                return NULL;
        }
        memset(message, 'a', HUGE_MESSAGE_BYTES);
        memcpy(message, head, sizeof(head) - 1);
        memcpy(message + HUGE_MESSAGE_BYTES - 4, "\"}}", 4);   /* the NUL ends it */
        while (sent < HUGE_MESSAGE_BYTES) {
                ssize_t n = send(fd, message + sent, HUGE_MESSAGE_BYTES - sent, MSG_NOSIGNAL);

                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        break;          /* EPIPE, ECONNRESET: refused half way */
                }
                sent += (size_t) n;
        }
        if (sent < HUGE_MESSAGE_BYTES || closed_by_server(fd, 3))
                atomic_store(&a->huge_refused, true);
        close(fd);
        return NULL;
}

/* Each message is refused by closing the connection. */
static void *garbage(void *userdata) {
        static const struct {
                const char *bytes;
                size_t size;
        } messages[] = {
#define M(s) { s, sizeof(s) }   /* with the NUL that ends a message */
                M("\xff\xfe\xfd\xfc"),
                M("{\"method\":\"io.damon.perfd.GetSt\xc3\x28ts\"}"),
                M("{\"method\":\"io.damon.perfd.GetStats\",\"parameters\":{\"x\":\"\xed\xa0\x80\"}}"),
                M("{not json"),
                M("[1,2,3]"),
                M("{\"method\":\"io.damon.perfd.GetStats\",\"bogus\":1}"),
                M("{\"method\":42}"),
#undef M
        };
        struct abuse *a = userdata;

        for (size_t i = 0; i < DP_ARRAY_SIZE(messages); i++) {
                int fd = raw_connect();

                if (fd < 0 || send(fd, messages[i].bytes, messages[i].size, MSG_NOSIGNAL) != (ssize_t) messages[i].size) {
                        abuse_failed(a, "garbage: connect or send");
                        if (fd >= 0)
                                close(fd);
                        return NULL;
                }
                if (closed_by_server(fd, 2))
                        atomic_fetch_add(&a->garbage_closed, 1);
                else if (!a->error[0])
                        snprintf(a->error, sizeof(a->error), "garbage message %zu was not refused", i);
                close(fd);
        }
        return NULL;
}

/* Connections whose replies are never read: a Monitor() with every sample it
 * may have, and a thousand pipelined GetRegions() calls. */
static void open_deaf_clients(int fds[2]) {
        static const char monitor[] =
                "{\"method\":\"io.damon.perfd.Monitor\",\"parameters\":{\"samples\":true,\"max_per_second\":10000},"
                "\"more\":true}";
        static const char regions[] = "{\"method\":\"io.damon.perfd.GetRegions\"}";

        fds[0] = raw_connect();
        ck_assert_int_ge(fds[0], 0);
        ck_assert_int_eq(send(fds[0], monitor, sizeof(monitor), MSG_NOSIGNAL), (ssize_t) sizeof(monitor));
        fds[1] = raw_connect();
        ck_assert_int_ge(fds[1], 0);
        ck_assert_int_ge(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
        for (int i = 0; i < 1000; i++)
                if (send(fds[1], regions, sizeof(regions), MSG_NOSIGNAL) != (ssize_t) sizeof(regions))
                        break;  /* the server stopped reading: what pacing means */
}

/* A client that behaves: a fresh connection and one GetStats, timed. */
static double served_in(void) {
        _cleanup_varlink_client_ struct dp_varlink_client *c = NULL;
        double start = test_now();
        const char *error = NULL;
        json_t *reply = NULL;

        ck_assert_int_eq(dp_varlink_client_connect(d.address, &c), 0);
        ck_assert_int_eq(dp_varlink_client_call(c, "io.damon.perfd.GetStats", NULL, 0, &reply, &error), 0);
        ck_assert_ptr_null(error);
        ck_assert_ptr_nonnull(json_object_get(reply, "totals"));
        json_decref(reply);
        return test_now() - start;
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return (x > y) - (x < y);
}

START_TEST(test_abuse) {
        static void *(*const abusers[])(void *) = { churn, trickle, huge, garbage };
        pthread_t threads[DP_ARRAY_SIZE(abusers)];
        struct abuse a = {};
        _cleanup_free_ char *log = NULL;
        uint64_t baseline, peak = 0, after;
        double times[MAX_ROUNDS], slowest, p95, total = 0;
        struct dp_stats_reply s;
        struct test_workload w;
        unsigned rounds = 0;
        int deaf[2];

        test_workload_start(&w, "30");
        test_daemon_start(&d, "[DAMON]\nMode=off\n", NULL, NULL);
        test_daemon_wait_ready(&d);
        for (int i = 0; i < 5; i++)     /* warm: the replies' buffers exist */
                (void) served_in();
        test_sleep(0.5);
        baseline = test_rss_kib(d.pid);

        open_deaf_clients(deaf);
        for (size_t i = 0; i < DP_ARRAY_SIZE(abusers); i++)
                ck_assert_int_eq(pthread_create(&threads[i], NULL, abusers[i], &a), 0);
        for (double until = test_now() + ABUSE_SECONDS; test_now() < until && rounds < MAX_ROUNDS;
             test_sleep(0.1)) {
                times[rounds] = served_in();
                total += times[rounds++];
                peak = DP_MAX(peak, test_rss_kib(d.pid));
        }
        ck_assert_uint_ge(rounds, 20);
        qsort(times, rounds, sizeof(times[0]), compare_double);
        slowest = times[rounds - 1];
        p95 = times[(rounds * 95 + 99) / 100 - 1];     /* the 95th of 100 */
        atomic_store(&a.stop, true);
        for (size_t i = 0; i < DP_ARRAY_SIZE(abusers); i++)
                pthread_join(threads[i], NULL);
        peak = DP_MAX(peak, test_rss_kib(d.pid));
        close(deaf[0]);
        close(deaf[1]);
        test_sleep(1);
        after = test_rss_kib(d.pid);
        printf("varlink abuse: %u rounds, GetStats served in %.1f ms on average, %.1f ms at the 95th percentile, "
               "%.1f ms at most; %u connections churned; RSS %llu KiB before, %llu at most, %llu after\n", rounds,
               total / rounds * 1000, p95 * 1000, slowest * 1000, atomic_load(&a.churned), (unsigned long long) baseline, (unsigned long long) peak,
               (unsigned long long) after);

        ck_assert_msg(!a.error[0], "%s", a.error);
        ck_assert_uint_ge(atomic_load(&a.churned), CHURN_CONNECTIONS);
        ck_assert_msg(atomic_load(&a.huge_refused), "a 17 MiB message was not refused");
        ck_assert_uint_eq(atomic_load(&a.garbage_closed), 7);
        ck_assert_msg(atomic_load(&a.trickle_answered), "the slow client's call went unanswered");
        ck_assert_msg(p95 < SERVED_P95_WITHIN_SEC, "GetStats round trips took %.1f ms at the 95th percentile",
                      p95 * 1000);
        ck_assert_msg(slowest < SERVED_WITHIN_SEC, "a GetStats round trip took %.1f ms under abuse", slowest * 1000);
        ck_assert_msg(total / rounds < SERVED_ON_AVERAGE_WITHIN_SEC, "GetStats round trips took %.1f ms on average",
                      total / rounds * 1000);
        if (CHECK_RSS) {
                ck_assert_msg(peak - baseline < RSS_GROWTH_PEAK_MAX_KIB, "RSS grew by %llu KiB under abuse",
                              (unsigned long long) (peak - baseline));
                ck_assert_msg(after < baseline || after - baseline < RSS_GROWTH_AFTER_MAX_KIB,
                              "RSS stayed %llu KiB above where it was", (unsigned long long) (after - baseline));
        }

        /* Still serving, still reconciling, nothing worth an error in the log. */
        test_daemon_stats(&d, &s);
        test_stats_reconcile(&s);
        ck_assert_int_gt(s.totals.v[DP_C_MATCH], 0);
        dp_stats_reply_done(&s);
        test_workload_stop(&w);
        ck_assert_int_eq(test_daemon_stop(&d), 0);
        log = test_daemon_log(&d);
        ck_assert_msg(test_count_lines(log, "error:") == 0, "%s", log);
        test_daemon_cleanup(&d);
}
END_TEST

int main(void) {
        Suite *s = suite_create("varlink-abuse");
        TCase *tc = tcase_create("daemon");

        if (geteuid() != 0) {
                printf("test-varlink-abuse: needs root for system-wide sampling; skipping\n");
                return 77;
        }
        tcase_set_timeout(tc, 90);
        tcase_add_test(tc, test_abuse);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
