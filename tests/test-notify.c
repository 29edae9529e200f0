/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real daemon's sd_notify protocol, against a NOTIFY_SOCKET of our own:
 * READY=1 only once the CPUs are RUNNING, a STATUS= that names the source,
 * watchdog pings while WATCHDOG_USEC is set, and STOPPING=1 at the end.  And
 * the watchdog's purpose: with the tracker thread held still (ptrace, that
 * thread only) the pings stop and an error is logged; they resume after.
 *
 * Needs root (system-wide perf sampling); the daemon comes from DP_DAEMON.
 */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check-main.h"

#define LOG_SIZE (1 << 20)
#define PINGS_MAX 256

struct session {
        char *log;                      /* the daemon's stderr so far */
        size_t log_len;
        char ready_log[LOG_SIZE / 16];  /* stderr as it was when READY=1 came */
        char status[512];               /* the first STATUS= */
        int ready, stopping, reloading;
        int ready_seq, stopping_seq, seq;
        double ready_at;
        double ping_at[PINGS_MAX];      /* when each WATCHDOG=1 came */
        size_t pings;
        double stall_from, stall_to;    /* the tracker thread held still, 0: not */
};

static double now_sec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static bool drain_log(struct session *s, int fd) {
        ssize_t n;

        while ((n = read(fd, s->log + s->log_len, LOG_SIZE - 1 - s->log_len)) > 0)
                s->log_len += (size_t) n;
        s->log[s->log_len] = '\0';
        return n == 0;
}

static void on_datagram(struct session *s, char *msg, int log_fd) {
        s->seq++;
        for (char *line = strtok(msg, "\n"); line; line = strtok(NULL, "\n")) {
                if (strcmp(line, "READY=1") == 0) {
                        /* The daemon wrote its lines before it sent this: they are in the pipe now. */
                        drain_log(s, log_fd);
                        snprintf(s->ready_log, sizeof(s->ready_log), "%s", s->log);
                        s->ready++;
                        s->ready_seq = s->seq;
                        s->ready_at = now_sec();
                } else if (strcmp(line, "STOPPING=1") == 0) {
                        s->stopping++;
                        s->stopping_seq = s->seq;
                } else if (strcmp(line, "WATCHDOG=1") == 0) {
                        if (s->pings < PINGS_MAX)
                                s->ping_at[s->pings++] = now_sec();
                } else if (strcmp(line, "RELOADING=1") == 0) {
                        s->reloading++;
                } else if (strncmp(line, "STATUS=", 7) == 0 && !s->status[0]) {
                        snprintf(s->status, sizeof(s->status), "%s", line + 7);
                }
        }
}

static void drain_datagrams(struct session *s, int sock, int log_fd) {
        char msg[4096];
        ssize_t n;

        while ((n = recv(sock, msg, sizeof(msg) - 1, 0)) > 0) {
                msg[n] = '\0';
                on_datagram(s, msg, log_fd);
        }
}

/* The thread id of the daemon's region tracker, by its name. */
static pid_t find_tracker_thread(pid_t pid) {
        char path[320], comm[32];
        struct dirent *de;
        pid_t found = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
        d = opendir(path);
        ck_assert_ptr_nonnull(d);
        while (!found && (de = readdir(d))) {
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/%d/task/%s/comm", (int) pid, de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (fgets(comm, sizeof(comm), f) && strcmp(comm, "dp-tracker\n") == 0)
                        found = (pid_t) atoi(de->d_name);
                fclose(f);
        }
        closedir(d);
        ck_assert_msg(found > 0, "no dp-tracker thread in %d", (int) pid);
        return found;
}

/* Runs the daemon to its end; with @stall_sec, holds the tracker thread still
 * that long, starting a second after READY=1. */
static void run_daemon(struct session *s, const char *duration, double stall_sec) {
        const char *daemon = getenv("DP_DAEMON");
        char dir[] = "/tmp/dp-notify-XXXXXX";
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int sock, pipefd[2], status;
        bool log_open = true;
        pid_t pid, tracker = 0;

        ck_assert_msg(daemon, "DP_DAEMON not set");
        ck_assert_msg(geteuid() == 0, "the daemon samples every CPU and needs root");
        s->log = malloc(LOG_SIZE);
        ck_assert_ptr_nonnull(s->log);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/notify", dir);
        sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        ck_assert_int_ge(sock, 0);
        ck_assert_int_eq(bind(sock, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(pipe2(pipefd, O_CLOEXEC), 0);

        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY);
                char self[32];

                snprintf(self, sizeof(self), "%d", (int) getpid());
                setenv("NOTIFY_SOCKET", sa.sun_path, 1);
                setenv("WATCHDOG_USEC", "2000000", 1);
                setenv("WATCHDOG_PID", self, 1);
                unsetenv("JOURNAL_STREAM");
                dup2(devnull, STDOUT_FILENO);
                dup2(pipefd[1], STDERR_FILENO);
                execl(daemon, daemon, duration, "--no-varlink", (char *) NULL);
                _exit(127);
        }
        close(pipefd[1]);
        ck_assert_int_eq(fcntl(pipefd[0], F_SETFL, O_NONBLOCK), 0);

        while (log_open) {
                struct pollfd fds[2] = { { .fd = pipefd[0], .events = POLLIN }, { .fd = sock, .events = POLLIN } };

                ck_assert_int_ge(poll(fds, 2, 100), 0);
                /* The log first: a datagram is never taken ahead of the lines written before it. */
                if (fds[0].revents)
                        log_open = !drain_log(s, pipefd[0]);
                drain_datagrams(s, sock, pipefd[0]);

                if (stall_sec > 0 && s->ready && !tracker && !s->stall_from && now_sec() > s->ready_at + 1) {
                        /* Seized and interrupted, only that thread stops; the event loop runs on. */
                        tracker = find_tracker_thread(pid);
                        ck_assert_int_eq(ptrace(PTRACE_SEIZE, tracker, NULL, NULL), 0);
                        ck_assert_int_eq(ptrace(PTRACE_INTERRUPT, tracker, NULL, NULL), 0);
                        ck_assert_int_eq(waitpid(tracker, &status, __WALL), tracker);
                        s->stall_from = now_sec();
                }
                if (tracker && now_sec() > s->stall_from + stall_sec) {
                        ck_assert_int_eq(ptrace(PTRACE_DETACH, tracker, NULL, NULL), 0);
                        s->stall_to = now_sec();
                        tracker = 0;
                }
        }
        /* The daemon closed stderr on exit; any last datagram is queued already. */
        drain_datagrams(s, sock, pipefd[0]);
        close(pipefd[0]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "daemon failed:\n%s", s->log);
        close(sock);
        unlink(sa.sun_path);
        rmdir(dir);
}

START_TEST(test_notify_protocol) {
        struct session *s = calloc(1, sizeof(*s));
        char source[64] = "";
        const char *p;

        ck_assert_ptr_nonnull(s);
        run_daemon(s, "--duration=3", 0);

        ck_assert_int_eq(s->ready, 1);
        ck_assert_msg(strstr(s->ready_log, ": ENABLED -> RUNNING\n"),
                      "READY=1 came before any CPU was RUNNING:\n%s", s->ready_log);
        ck_assert_msg(!strstr(s->ready_log, ", stopping\n"), "READY=1 after stopping:\n%s", s->ready_log);

        /* STATUS= names the source the daemon says it picked. */
        p = strstr(s->log, "ready: sampling ");
        ck_assert_msg(p, "no ready line:\n%s", s->log);
        p = strstr(p, " with ");
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(sscanf(p, " with %63s", source), 1);
        ck_assert_msg(strstr(s->status, source), "STATUS=%s does not name %s", s->status, source);
        ck_assert_ptr_nonnull(strstr(s->status, "CPUs running"));

        ck_assert_int_eq(s->stopping, 1);
        ck_assert_int_gt(s->stopping_seq, s->ready_seq);
        ck_assert_int_eq(s->reloading, 0);
        ck_assert_msg(s->pings >= 2, "only %zu watchdog pings in 3 s with WATCHDOG_USEC=2s", s->pings);
        ck_assert_ptr_null(strstr(s->log, "tracker has not made progress"));
        ck_assert_ptr_nonnull(strstr(s->log, "info: stopped\n"));
        free(s->log);
        free(s);
}
END_TEST

START_TEST(test_watchdog_stops_while_tracker_stalls) {
        struct session *s = calloc(1, sizeof(*s));
        double longest_gap = 0, gap_end = 0;
        size_t after = 0;

        ck_assert_ptr_nonnull(s);
        run_daemon(s, "--duration=12", 3.5);  /* room after the stall on a loaded machine */
        ck_assert_msg(s->stall_from > 0 && s->stall_to > s->stall_from, "the tracker was never held");

        /* Limit 1 s (half of WATCHDOG_USEC), checked once a second: no pings
         * for well over the usual interval (at most 1 s here), then again. */
        for (size_t i = 1; i < s->pings; i++)
                if (s->ping_at[i] - s->ping_at[i - 1] > longest_gap) {
                        longest_gap = s->ping_at[i] - s->ping_at[i - 1];
                        gap_end = s->ping_at[i];
                }
        for (size_t i = 0; i < s->pings; i++)
                after += s->ping_at[i] > s->stall_to;
        ck_assert_msg(longest_gap >= 1.8, "watchdog pings went on while the tracker stalled (gap %.2f s)",
                      longest_gap);
        ck_assert_msg(gap_end >= s->stall_to, "the ping gap ended %.2f s before the tracker was released",
                      s->stall_to - gap_end);
        ck_assert_msg(after >= 1, "no watchdog ping after the tracker recovered");
        ck_assert_msg(strstr(s->log, "error: the region tracker has not made progress for "), "%s", s->log);
        ck_assert_msg(strstr(s->log, "notice: the region tracker is making progress again after "), "%s", s->log);
        ck_assert_ptr_nonnull(strstr(s->log, "info: stopped\n"));
        free(s->log);
        free(s);
}
END_TEST

int main(void) {
        Suite *s = suite_create("notify");
        TCase *tc = tcase_create("daemon");

        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_notify_protocol);
        tcase_add_test(tc, test_watchdog_stops_while_tracker_stalls);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
