/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The real daemon against a DAMON sysfs tree in a temporary directory
 * ([DAMON] SysfsRoot=), sampling the demo workload:
 *  - with no kdamond, it creates one, commits region hints whose boundaries
 *    sit at the workload's hot area, serves GetDamonView, and on stop turns
 *    the kdamond off and removes it again;
 *  - with a foreign running kdamond, it writes nothing at all.
 *
 * No kernel answers here, so the tree is made complete beforehand: the
 * directories that writing nr_* files would create already exist (as the
 * kernel would make them).  The one reaction the daemon depends on, a state
 * file that reads back "on" after any other keyword, is played by a thread
 * watching it with fanotify (state_keeper()).  The real kernel's reactions are covered by the
 * qemu test (tests/qemu/).
 *
 * Needs root (system-wide perf sampling).
 */
#include <check.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"

#include "check-main.h"
#include "damon-fake.h"
#include "test-ctl-run.h"
#include "test-workload.h"

#define NR_TARGET_DIRS 4
#define NR_REGION_DIRS 100
#define HOT_EDGE_SLACK (64 * 1024)

static char dir[64], address[128], state_file[160], log_path[160];

/* [DAMON] lines for the next start_daemon() (Scheme=, or a setting that
 * overrides the defaults there), each ending in a newline. */
static const char *damon_lines = "";
/* [Tracking] Targets= for the next start_daemon(), if not the workload. */
static const char *targets_value;

/* @env: one NAME=VALUE for the daemon's environment, or NULL. */
static pid_t start_daemon(pid_t workload, const char *seconds, const char *env) {
        const char *path = getenv("DP_DAEMON");
        char config[PATH_MAX + 1024], config_path[160], config_arg[200], varlink_arg[160], duration_arg[32],
                targets[32];
        pid_t pid;
        FILE *f;

        ck_assert_msg(path, "DP_DAEMON not set");
        snprintf(targets, sizeof(targets), "%s", targets_value ? targets_value : "");
        if (!targets_value)
                snprintf(targets, sizeof(targets), "%d", (int) workload);
        snprintf(config, sizeof(config),
                 "[Sampling]\nSource=pagefault\n"
                 "[Tracking]\nTargets=%s\nMaxRegions=%d\nMapsRefreshSec=500ms\n"
                 "[DAMON]\nSysfsRoot=%s\nStateFile=%s\nHintIntervalSec=1s\n%s",
                 targets, NR_REGION_DIRS, fake.admin, state_file, damon_lines);
        snprintf(config_path, sizeof(config_path), "%s/damon-perfd.conf", dir);
        f = fopen(config_path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(config, f);
        ck_assert_int_eq(fclose(f), 0);

        snprintf(config_arg, sizeof(config_arg), "--config=%s", config_path);
        snprintf(varlink_arg, sizeof(varlink_arg), "--varlink=%s", address + strlen("unix:"));
        snprintf(duration_arg, sizeof(duration_arg), "--duration=%s", seconds);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int devnull = open("/dev/null", O_WRONLY), err = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

                dup2(devnull, STDOUT_FILENO);
                dup2(err, STDERR_FILENO);
                if (env)
                        putenv((char *) env);
                execl(path, path, config_arg, varlink_arg, duration_arg, NULL);
                _exit(127);
        }
        return pid;
}

static int wait_daemon(pid_t pid) {
        int status;

        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Ends a daemon whose checks are done.  Its --duration only bounds a test
 * that hangs: a fixed lifetime would race the checks on a loaded machine. */
static int stop_daemon(pid_t pid) {
        ck_assert_int_eq(kill(pid, SIGTERM), 0);
        return wait_daemon(pid);
}

/* Until the daemon's socket exists (at most 10 s). */
static void wait_socket(void) {
        for (int i = 0; i < 200 && access(address + strlen("unix:"), F_OK) < 0; i++)
                usleep(50 * 1000);
}

static struct run damonctl_damon(void) {
        const char *args[] = { "--json", "damon", NULL };

        return ctl_collect(dir, ctl_spawn(dir, address, 0, args));
}

static void setup(void) {
        snprintf(dir, sizeof(dir), "/tmp/dp-damon-daemon-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(address, sizeof(address), "unix:%s/io.damon.perfd", dir);
        snprintf(state_file, sizeof(state_file), "%s/damon.state", dir);
        snprintf(log_path, sizeof(log_path), "%s/daemon.log", dir);
}

/* A passing test leaves nothing behind; a failing one keeps its files
 * (the daemon's log, stdout and stderr) for whoever looks into it. */
static void teardown(void) {
        tree_teardown();
        nftw(dir, test_tree_remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Everything a kernel would create for one kdamond with NR_TARGET_DIRS
 * targets of NR_REGION_DIRS regions and two schemes, under nr_kdamonds 0. */
static void make_complete_tree(void) {
        char rel[128];

        fake_make(false);
        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake_admin_write("kdamonds/0/contexts/nr_contexts", "1");
        fake_admin_write("kdamonds/0/contexts/0/targets/nr_targets", "4");
        for (int t = 0; t < NR_TARGET_DIRS; t++) {
                snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/targets/%d/regions/nr_regions", t);
                fake_admin_write(rel, "100");
        }
        fake_admin_write("kdamonds/0/contexts/0/schemes/nr_schemes", "2");
        fake_admin_write("kdamonds/0/contexts/0/schemes/1/filters/nr_filters", "16");
        fake_file("kdamonds/0/contexts/0/schemes/1/filters/nr_filters", "0", 0600);
        /* As before any kdamond existed: the counts are 0, the directories wait. */
        fake_file("kdamonds/0/contexts/0/targets/nr_targets", "0", 0600);
        fake_file("kdamonds/0/contexts/0/schemes/nr_schemes", "0", 0600);
        fake_file("kdamonds/0/contexts/nr_contexts", "0", 0600);
        fake_file("kdamonds/nr_kdamonds", "0", 0600);
}

static uint64_t monotonic_msec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* Plays the kernel's state file: after a keyword other than on/off is
 * written, it reads "on" again (the daemon only writes those while on).  The
 * kernel answers a keyword before the write returns, so no read finds one.
 * Here fanotify holds every open of the file (FAN_OPEN_PERM) until the
 * keeper has answered whatever the last writer left, and the keeper answers
 * at each close after a write too, as promptly as it can.  Where fanotify's
 * permission events are missing, only the latter (inotify): a read right
 * behind a write may then find the keyword, which no kernel shows (a commit
 * failed with ENOBUFS and backed off, one run in twenty).
 * Its own buffers: fake_get() and fake_abs() are not thread-safe. */
static char keeper_path[PATH_MAX];
static pthread_t keeper;
static int keeper_fd = -1;
static bool keeper_holds_opens;                /* fanotify, not inotify */
static _Atomic uint64_t keeper_answered_msec;  /* when it last turned a keyword back into "on" */

static bool state_is_keyword(int fd) {
        char now[64];
        ssize_t n = pread(fd, now, sizeof(now) - 1, 0);

        now[n > 0 ? n : 0] = '\0';
        return n > 0 && strcmp(now, "on\n") != 0 && strcmp(now, "off\n") != 0;
}

static void answer_keyword(int fd) {
        if (state_is_keyword(fd) && ftruncate(fd, 0) == 0 && pwrite(fd, "on\n", 3, 0) == 3)
                atomic_store(&keeper_answered_msec, monotonic_msec());
}

/* Each event's file is the state file, opened for the keeper without
 * events of its own; a held open goes on once the keyword is answered. */
static void answer_fanotify(const void *events, ssize_t len) {
        for (const struct fanotify_event_metadata *m = events; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
                if (m->fd < 0)
                        continue;
                answer_keyword(m->fd);
                if (m->mask & FAN_OPEN_PERM) {
                        struct fanotify_response allow = { .fd = m->fd, .response = FAN_ALLOW };

                        (void) !write(keeper_fd, &allow, sizeof(allow));
                }
                close(m->fd);
        }
}

static int keeper_stop[2] = { -1, -1 };

static void *state_keeper(void *userdata) {
        struct pollfd fds[2] = { { .fd = keeper_fd, .events = POLLIN }, { .fd = keeper_stop[0], .events = POLLIN } };
        _Alignas(struct fanotify_event_metadata) char events[4096];

        (void) userdata;
        while (poll(fds, 2, -1) > 0 && !(fds[1].revents & POLLIN)) {
                ssize_t len = read(keeper_fd, events, sizeof(events));
                int fd;

                if (len <= 0)
                        break;
                if (keeper_holds_opens) {
                        answer_fanotify(events, len);
                        continue;
                }
                fd = open(keeper_path, O_RDWR | O_CLOEXEC);
                if (fd < 0)
                        continue;
                answer_keyword(fd);
                close(fd);
        }
        return NULL;
}

static void state_keeper_start(void) {
        snprintf(keeper_path, sizeof(keeper_path), "%s", fake_abs("kdamonds/0/state"));
        keeper_fd = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDWR | O_CLOEXEC);
        keeper_holds_opens = keeper_fd >= 0 &&
                             fanotify_mark(keeper_fd, FAN_MARK_ADD, FAN_OPEN_PERM | FAN_CLOSE_WRITE, AT_FDCWD,
                                           keeper_path) == 0;
        if (!keeper_holds_opens) {
                if (keeper_fd >= 0)
                        close(keeper_fd);
                keeper_fd = inotify_init1(IN_CLOEXEC);
                ck_assert_int_ge(keeper_fd, 0);
                ck_assert_int_ge(inotify_add_watch(keeper_fd, keeper_path, IN_CLOSE_WRITE), 0);
        }
        ck_assert_int_eq(pipe2(keeper_stop, O_CLOEXEC), 0);
        ck_assert_int_eq(pthread_create(&keeper, NULL, state_keeper, NULL), 0);
        /* Without fanotify the keeper answers only when it runs: on a loaded
         * machine it preempts whatever runs (best effort; tests run as root),
         * and with fanotify every open of the file waits for it. */
        (void) pthread_setschedparam(keeper, SCHED_FIFO, &(struct sched_param) { .sched_priority = 1 });
}

static void state_keeper_stop(void) {
        ck_assert_int_eq(write(keeper_stop[1], "x", 1), 1);
        pthread_join(keeper, NULL);
        close(keeper_fd);
        close(keeper_stop[0]);
        close(keeper_stop[1]);
}

/* Stops a daemon whose kdamond the keeper plays.  Without fanotify the
 * keeper answers a keyword a moment after the kernel would: a restore right
 * behind a pass's keywords could read one still in the file, which no kernel
 * shows (seen under ASan in CI).  So the stop then lands in the quiet
 * between two passes (1 s apart): 200-500 ms after the keeper last answered. */
static int stop_daemon_between_passes(pid_t pid) {
        uint64_t seen = atomic_load(&keeper_answered_msec), start = monotonic_msec();

        while (!keeper_holds_opens && monotonic_msec() - start < 10000) {
                uint64_t last = atomic_load(&keeper_answered_msec), since = monotonic_msec() - last;

                if (last != seen && since >= 200 && since <= 500)
                        break;
                usleep(10 * 1000);
        }
        return stop_daemon(pid);
}

/* GetDamonView, parsed. */
static json_t *damon_view(void) {
        struct run r = damonctl_damon();
        json_t *view;

        ck_assert_msg(r.status == 0, "damonctl damon: status %d: %s", r.status, r.err);
        view = json_loads(r.out, 0, NULL);
        ck_assert_msg(view, "%s", r.out);
        run_done(&r);
        return view;
}

static json_int_t view_int(const char *key) {
        json_t *view = damon_view();
        json_int_t v = json_integer_value(json_object_get(view, key));

        json_decref(view);
        return v;
}

/* The count of one DAMON failure cause in GetDamonView (0 if absent). */
static json_int_t view_cause_count(const char *step, int error) {
        json_t *view = damon_view(), *e;
        json_int_t count = 0;
        size_t i;

        json_array_foreach(json_object_get(view, "errors"), i, e)
                if (strcmp(json_string_value(json_object_get(e, "step")), step) == 0 &&
                    json_integer_value(json_object_get(e, "errno")) == error)
                        count = json_integer_value(json_object_get(e, "count"));
        json_decref(view);
        return count;
}

static size_t count_substr(const char *text, const char *needle) {
        size_t n = 0;

        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

static uint64_t get_u64(const char *rel) {
        return strtoull(fake_get(rel), NULL, 0);
}

static uint64_t distance(uint64_t a, uint64_t b) {
        return a > b ? a - b : b - a;
}

/* A fresh tree with the keeper playing the kernel. */
static void prepare_owning(void) {
        setup();
        make_complete_tree();
        state_keeper_start();
}

/* The daemon owning DAMON for @w with @lines (newline-ended [DAMON] lines)
 * added, its socket up. */
static pid_t own_workload(const struct test_workload *w, const char *lines) {
        pid_t daemon;

        damon_lines = lines;
        daemon = start_daemon(w->pid, "60", NULL);
        damon_lines = "";
        wait_socket();
        return daemon;
}

/* Both, for the demo workload running @seconds. */
static pid_t start_owning(struct test_workload *w, const char *seconds, const char *lines) {
        prepare_owning();
        test_workload_start(w, seconds);
        return own_workload(w, lines);
}

/* The boundaries nearest @start and @end among the regions last committed
 * for @pid (read after the daemon exited, so that no write is caught half
 * done), which must be ordered and within the tree's room. */
static void committed_boundaries_near(pid_t pid, uint64_t start, uint64_t end, uint64_t *ret_start,
                                      uint64_t *ret_end) {
        uint64_t best_start = UINT64_MAX, best_end = UINT64_MAX, nr;
        char rel[160], pid_text[16];
        int target = -1;

        snprintf(pid_text, sizeof(pid_text), "%d", (int) pid);
        for (int t = 0; t < (int) get_u64("kdamonds/0/contexts/0/targets/nr_targets"); t++) {
                snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/targets/%d/pid_target", t);
                if (strcmp(fake_get(rel), pid_text) == 0)
                        target = t;
        }
        ck_assert_int_ge(target, 0);
        snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/targets/%d/regions/nr_regions", target);
        nr = get_u64(rel);
        ck_assert_uint_ge(nr, 3);
        ck_assert_uint_le(nr, NR_REGION_DIRS);
        for (uint64_t i = 0, prev_end = 0; i < nr; i++) {
                uint64_t s, e;

                snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/targets/%d/regions/%" PRIu64 "/start", target, i);
                s = get_u64(rel);
                snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/targets/%d/regions/%" PRIu64 "/end", target, i);
                e = get_u64(rel);
                ck_assert_uint_lt(s, e);
                ck_assert_uint_ge(s, prev_end);
                prev_end = e;
                if (distance(s, start) < distance(best_start, start))
                        best_start = s;
                if (distance(e, end) < distance(best_end, end))
                        best_end = e;
        }
        *ret_start = best_start;
        *ret_end = best_end;
}

START_TEST(test_own_commits_hot_edges_and_restores) {
        struct test_workload w;
        _cleanup_free_ char *log = NULL;
        uint64_t best_start, best_end, nr, hot_lo = UINT64_MAX, hot_hi = 0;
        char rel[160];
        json_t *view;
        struct run r;
        pid_t daemon;

        daemon = start_owning(&w, "45",
                              "MaxTargets=1\nScheme=pageout nr_accesses=0-0 age=5s-max quota_bytes=1M reject=hot\n");
        sleep(6);

        ck_assert_int_eq(access(state_file, F_OK), 0);
        r = damonctl_damon();
        ck_assert_int_eq(r.status, 0);
        view = json_loads(r.out, 0, NULL);
        ck_assert_msg(view, "%s", r.out);
        ck_assert_str_eq(json_string_value(json_object_get(view, "role")), "owned");
        ck_assert_int_eq(json_integer_value(json_object_get(view, "kdamond")), 0);
        ck_assert_int_ge(json_integer_value(json_object_get(view, "commits")), 1);
        ck_assert_int_eq(json_integer_value(json_array_get(json_object_get(view, "targets"), 0)), w.pid);
        /* Our stat scheme and the configured one, with the kernel's stats. */
        ck_assert_uint_eq(json_array_size(json_object_get(view, "schemes")), 2);
        ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(view, "schemes"), 1),
                                                           "action")), "pageout");
        ck_assert(json_is_integer(json_object_get(json_array_get(json_object_get(view, "schemes"), 1), "nr_tried")));
        json_decref(view);
        run_done(&r);

        /* The hot filter: addr filters over the sampled hot area, spared
         * from pageout, as soon as the PMU saw it hot (a pagefault sample
         * stream may take a few aggregations to). */
        for (int i = 0; i < 350 && get_u64("kdamonds/0/contexts/0/schemes/1/filters/nr_filters") == 0; i++)
                usleep(100 * 1000);
        nr = get_u64("kdamonds/0/contexts/0/schemes/1/filters/nr_filters");
        ck_assert_msg(nr >= 1, "no hot filter written in 41 s");
        for (uint64_t i = 0; i < nr; i++) {
                snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/schemes/1/filters/%" PRIu64 "/type", i);
                ck_assert_str_eq(fake_get(rel), "addr");
                snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/schemes/1/filters/%" PRIu64 "/addr_start", i);
                hot_lo = DP_MIN(hot_lo, get_u64(rel));
                snprintf(rel, sizeof(rel), "kdamonds/0/contexts/0/schemes/1/filters/%" PRIu64 "/addr_end", i);
                hot_hi = DP_MAX(hot_hi, get_u64(rel));
        }
        ck_assert_msg(hot_lo < (uint64_t) w.hot_end && hot_hi > (uint64_t) w.hot_start,
                      "hot filters %#llx-%#llx miss the hot area %#llx-%#llx", (unsigned long long) hot_lo,
                      (unsigned long long) hot_hi, (unsigned long long) w.hot_start, (unsigned long long) w.hot_end);

        ck_assert_int_eq(stop_daemon_between_passes(daemon), 0);
        test_workload_stop(&w);
        state_keeper_stop();
        /* The hint the daemon last committed stays in the files (the kernel
         * would drop them with the kdamond; here the directories stay):
         * read after the exit, so that no write is caught half done. */
        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/operations"), "vaddr");
        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/0/action"), "stat");
        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/action"), "pageout");
        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/access_pattern/age/min"), "50");
        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/quotas/bytes"), "1048576");
        committed_boundaries_near(w.pid, (uint64_t) w.hot_start, (uint64_t) w.hot_end, &best_start, &best_end);
        ck_assert_msg(distance(best_start, (uint64_t) w.hot_start) <= HOT_EDGE_SLACK,
                      "no boundary near the hot start %#llx (nearest %#llx)", (unsigned long long) w.hot_start,
                      (unsigned long long) best_start);
        ck_assert_msg(distance(best_end, (uint64_t) w.hot_end) <= HOT_EDGE_SLACK,
                      "no boundary near the hot end %#llx (nearest %#llx)", (unsigned long long) w.hot_end,
                      (unsigned long long) best_end);
        /* Restored: gone again, nothing left to recover.  (Whether "off" was
         * written first depends on the state file reading "on" at that
         * instant, which the keeper thread plays, not the kernel; the qemu
         * test checks it against the real kernel.) */
        ck_assert_str_eq(fake_get("kdamonds/nr_kdamonds"), "0");
        ck_assert_int_eq(access(state_file, F_OK), -1);
        log = slurp(log_path);
        ck_assert_msg(strstr(log, "DAMON: restored owned kdamond 0"), "%s", log);
        teardown();
}
END_TEST

/* A scheme this kernel cannot run (allow= before 6.14): the daemon removes
 * its kdamond again and stays observe-only, naming the line and the file. */
START_TEST(test_scheme_the_kernel_lacks) {
        _cleanup_free_ char *log = NULL;
        struct test_workload w;
        const char *reason = "";
        json_t *view = NULL;
        pid_t daemon;

        daemon = start_owning(&w, "30", "Scheme=pageout allow=anon\n");
        for (int i = 0; i < 100; i++) {
                json_decref(view);
                view = damon_view();
                if (strcmp(json_string_value(json_object_get(view, "role")), "observe_only") == 0)
                        break;
                usleep(100 * 1000);
        }
        reason = json_string_value(json_object_get(view, "reason"));
        ck_assert_msg(strstr(reason, "/damon-perfd.conf:11: Scheme=pageout: allow= needs "
                                     "schemes/1/filters/0/allow, which this kernel's DAMON lacks"), "%s", reason);
        ck_assert_str_eq(json_string_value(json_object_get(view, "role")), "observe_only");
        json_decref(view);
        ck_assert_str_eq(fake_get("kdamonds/nr_kdamonds"), "0");
        ck_assert_int_eq(access(state_file, F_OK), -1);
        ck_assert_int_eq(stop_daemon(daemon), 0);
        test_workload_stop(&w);
        state_keeper_stop();
        log = slurp(log_path);
        ck_assert_msg(strstr(log, "damon-perfd.conf:11: Scheme=pageout: allow= needs"), "%s", log);
        teardown();
}
END_TEST

START_TEST(test_foreign_kdamond_is_never_written) {
        _cleanup_free_ char *before = NULL, *after = NULL, *log = NULL;
        struct test_workload w;
        struct run r;
        pid_t daemon;

        setup();
        fake_make(false);
        fake_admin_write("kdamonds/nr_kdamonds", "1");
        fake_admin_write("kdamonds/0/contexts/nr_contexts", "1");
        fake_admin_write("kdamonds/0/contexts/0/operations", "paddr");
        fake_admin_write("kdamonds/0/state", "on");
        before = fake_snapshot();

        test_workload_start(&w, "10");
        daemon = start_daemon(w.pid, "60", NULL);
        wait_socket();
        sleep(1);
        r = damonctl_damon();
        ck_assert_int_eq(r.status, 0);
        ck_assert_msg(strstr(r.out, "\"role\": \"observe_only\""), "%s", r.out);
        run_done(&r);
        ck_assert_int_eq(stop_daemon(daemon), 0);
        test_workload_stop(&w);

        after = fake_snapshot();
        ck_assert_str_eq(after, before);
        ck_assert_int_eq(access(state_file, F_OK), -1);
        log = slurp(log_path);
        ck_assert_msg(strstr(log, "observe_only"), "%s", log);
        teardown();
}
END_TEST

/* What the daemon's read-back of its own kdamond will find: @n regions of
 * DAMON's (read whenever it asks, as the keeper answers every keyword). */
static void set_damon_regions(const struct fake_region *regions, size_t n) {
        ck_assert_uint_le(n, DP_ARRAY_SIZE(fake.tried));
        memcpy(fake.tried, regions, n * sizeof(*regions));
        fake.n_tried = n;
        fake_fill_tried("kdamonds/0/contexts/0/schemes/0", 0, 1);
}

/* Polls @key of GetDamonView until it exceeds @than, at most @seconds;
 * its last value. */
static json_int_t wait_view_int_above(const char *key, json_int_t than, int seconds) {
        json_int_t v = view_int(key);

        for (int i = 0; i < seconds * 5 && v <= than; i++) {
                usleep(200 * 1000);
                v = view_int(key);
        }
        return v;
}

/* While DAMON's own hot regions agree with the sampled hot area (each
 * covering at least 90% of the other), nothing is committed, although
 * DAMON's hot region starts 128 KiB inside the area, a boundary the hint
 * has and DAMON lacks; once DAMON calls nothing hot, commits resume. */
START_TEST(test_own_leaves_agreeing_damon_alone) {
        const uint64_t mib = 1 << 20, in = 128 << 10;
        struct test_workload w;
        json_int_t commits, skipped;
        pid_t daemon;

        daemon = start_owning(&w, "45", "MaxTargets=1\n");
        ck_assert_int_ge(wait_view_int_above("commits", 0, 20), 1);

        set_damon_regions((const struct fake_region[]) {
                                  { (uint64_t) w.hot_start - 4 * mib, (uint64_t) w.hot_start + in, 0, 5 },
                                  { (uint64_t) w.hot_start + in, (uint64_t) w.hot_end, 10, 5 },
                                  { (uint64_t) w.hot_end, (uint64_t) w.hot_end + 4 * mib, 0, 5 },
                          },
                          3);
        skipped = wait_view_int_above("commits_skipped", view_int("commits_skipped"), 20);
        commits = view_int("commits");
        /* Four more passes (HintIntervalSec=1s). */
        ck_assert_int_ge(wait_view_int_above("commits_skipped", skipped + 3, 10), skipped + 4);
        ck_assert_int_eq(view_int("commits"), commits);

        set_damon_regions((const struct fake_region[]) {
                                  { (uint64_t) w.hot_start - 4 * mib, (uint64_t) w.hot_end + 4 * mib, 0, 5 },
                          },
                          1);
        if (wait_view_int_above("commits", commits, 30) <= commits) {
                json_t *view = damon_view();
                _cleanup_free_ char *errors = json_dumps(json_object_get(view, "errors"), JSON_COMPACT);

                json_decref(view);
                ck_abort_msg("no commit once DAMON disagreed; the daemon's DAMON errors: %s", errors);
        }

        ck_assert_int_eq(stop_daemon_between_passes(daemon), 0);
        test_workload_stop(&w);
        state_keeper_stop();
        teardown();
}
END_TEST

/* A hot area that moves is hinted at once, not a hint interval later: with
 * passes a minute apart, the samples' new hot area starts one, which commits
 * within seconds of the move; three full passes follow it a few aggregations
 * apart, not a minute, and by then the window's new edges are committed (the
 * early pass may have seen only the part its first aggregation's samples
 * outlined).  Whether a read-back comes between the move and the commit is
 * left open: the full passes after an early one before the move may. */
START_TEST(test_own_follows_a_moved_hot_area_at_once) {
        struct test_workload w;
        uint64_t t0 = monotonic_msec(), best_start, best_end;
        json_int_t before, read_backs;
        pid_t daemon;

        prepare_owning();
        test_workload_start_moving(&w, "30", "6");
        daemon = own_workload(&w, "MaxTargets=1\nHintIntervalSec=60s\n");
        ck_assert_int_ge(wait_view_int_above("commits", 0, 5), 1);
        while (monotonic_msec() - t0 < 5500)
                usleep(100 * 1000);
        before = view_int("commits");
        ck_assert_int_gt(wait_view_int_above("commits", before, 8), before);
        /* The full passes after the early one, with their read-backs: at
         * least two of the three (the first may come before this look). */
        read_backs = view_int("read_backs");
        ck_assert_int_ge(wait_view_int_above("read_backs", read_backs + 1, 8), read_backs + 2);

        ck_assert_int_eq(stop_daemon(daemon), 0);
        test_workload_stop(&w);
        state_keeper_stop();
        committed_boundaries_near(w.pid, (uint64_t) w.moved_start, (uint64_t) w.moved_end, &best_start, &best_end);
        /* The passes stop once DAMON agrees: its hot regions and the sampled
         * ones each cover 90% of the other.  So the edges committed may
         * together fall short of the window by a tenth of it. */
        ck_assert_msg(distance(best_start, (uint64_t) w.moved_start) + distance(best_end, (uint64_t) w.moved_end) <=
                              (uint64_t) (w.moved_end - w.moved_start) / 10,
                      "the window moved to %#llx-%#llx, the nearest boundaries committed are %#llx and %#llx",
                      (unsigned long long) w.moved_start, (unsigned long long) w.moved_end,
                      (unsigned long long) best_start, (unsigned long long) best_end);
        teardown();
}
END_TEST

/* Someone turns our kdamond off while DAMON's sysfs lock is busy (injected:
 * the next 12 state reads answer EBUSY, as the kernel's do while the
 * turn-off holds the lock): each pass reads the state 4 times a moment apart
 * before it counts the busy read, so three passes meet it; the stop behind
 * them is still noticed and counted; the busy passes are counted, logged
 * once, and cost no backoff, so the kdamond runs again within a few passes.
 * On stop, 3 more busy reads do not keep the restore from removing the
 * kdamond. */
START_TEST(test_stop_behind_busy_state_is_noticed) {
        _cleanup_free_ char *log = NULL;
        struct test_workload w;
        uint64_t off_at, on_after = UINT64_MAX;
        json_int_t commits;
        pid_t daemon;
        int fd;

        setup();
        make_complete_tree();
        state_keeper_start();
        test_workload_start(&w, "30");
        daemon = start_daemon(w.pid, "60", "DAMON_PERFD_TEST_DAMON_BUSY=12,3");
        wait_socket();
        /* The first commit, and a pass later its read-back. */
        for (int i = 0; i < 100 && view_int("read_backs") < 1; i++)
                usleep(100 * 1000);
        ck_assert_int_ge(view_int("commits"), 1);
        ck_assert_str_eq(fake_get("kdamonds/0/state"), "on");
        commits = view_int("commits");

        /* In place: the keeper watches this inode. */
        fd = open(fake_abs("kdamonds/0/state"), O_WRONLY | O_TRUNC | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "off\n", 4), 4);
        ck_assert_int_eq(close(fd), 0);
        off_at = monotonic_msec();
        while (monotonic_msec() - off_at < 12000) {
                /* Each look is a damonctl query of the view published at a
                 * pass's end; the kdamond is on before that pass ends. */
                if (view_int("commits") > commits && strcmp(fake_get("kdamonds/0/state"), "on") == 0 &&
                    view_cause_count("kdamond-stopped", ESRCH) >= 1) {
                        on_after = monotonic_msec() - off_at;
                        break;
                }
                usleep(50 * 1000);
        }
        /* Passes 1 s apart and 3 busy ones 200 ms apart: about 2 s.  As
         * failures, the 3 would have backed off 14 s: the bound tells the
         * two apart with room for a loaded machine, where each look spawns
         * damonctl. */
        ck_assert_msg(on_after < 10000, "the kdamond ran again %" PRIu64 " ms after the stop", on_after);
        ck_assert_int_eq(view_cause_count("state", EBUSY), 3);
        ck_assert_int_eq(view_cause_count("kdamond-stopped", ESRCH), 1);

        ck_assert_int_eq(stop_daemon_between_passes(daemon), 0);
        test_workload_stop(&w);
        state_keeper_stop();
        log = slurp(log_path);
        ck_assert_msg(count_substr(log, "TEST INJECTION (DAMON_PERFD_TEST_DAMON_BUSY)") == 1, "%s", log);
        ck_assert_msg(count_substr(log, "DAMON: state busy: ") == 1, "%s", log);
        ck_assert_msg(count_substr(log, "kdamond 0 stopped without us") == 1, "%s", log);
        ck_assert_msg(!strstr(log, "DAMON: state failed"), "%s", log);
        ck_assert_msg(strstr(log, "DAMON: restored owned kdamond 0"), "%s", log);
        ck_assert_str_eq(fake_get("kdamonds/nr_kdamonds"), "0");
        teardown();
}
END_TEST

/* GetDamonView once the owned kdamond was started or refused, within 30 s. */
static json_t *view_once_started(void) {
        json_t *view = NULL;

        for (int i = 0; i < 300; i++) {
                json_decref(view);
                view = damon_view();
                if (strcmp(json_string_value(json_object_get(view, "role")), "owned") != 0 ||
                    json_integer_value(json_object_get(view, "commits")) > 0)
                        break;
                usleep(100 * 1000);
        }
        return view;
}

/* reject=node:N: address filters over the node's memory blocks, from the
 * sysfs the test seam names (node 0 in two pieces here); a node the
 * machine lacks leaves the daemon observe-only, naming the line. */
START_TEST(test_node_filters_from_sysfs) {
        static const struct {
                const char *lines, *reason;
        } cases[] = {
                { "Scheme=pageout nr_accesses=0-0 reject=node:0\n", NULL },
                { "Scheme=pageout nr_accesses=0-0 reject=node:7\n",
                  "/damon-perfd.conf:11: Scheme=pageout: reject=node:7: no such node in " },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                char env[PATH_MAX + 64];
                struct test_workload w;
                json_t *view;
                pid_t daemon;

                prepare_owning();
                put("devices/system/memory/block_size_bytes", "8000000\n");
                put("devices/system/node/node0/memory0", "");
                put("devices/system/node/node0/memory1", "");
                put("devices/system/node/node0/memory4", "");
                snprintf(env, sizeof(env), "DAMON_PERFD_TEST_SYS_ROOT=%s", tmp_root);
                test_workload_start(&w, "30");
                damon_lines = cases[i].lines;
                targets_value = "physical";
                daemon = start_daemon(w.pid, "60", env);
                damon_lines = "";
                targets_value = NULL;
                wait_socket();
                view = view_once_started();
                if (cases[i].reason) {
                        ck_assert_str_eq(json_string_value(json_object_get(view, "role")), "observe_only");
                        ck_assert_msg(strstr(json_string_value(json_object_get(view, "reason")), cases[i].reason),
                                      "%s", json_string_value(json_object_get(view, "reason")));
                        ck_assert_str_eq(fake_get("kdamonds/nr_kdamonds"), "0");
                } else {
                        ck_assert_str_eq(json_string_value(json_object_get(view, "role")), "owned");
                        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/operations"), "paddr");
                        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/filters/nr_filters"), "2");
                        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/filters/0/type"), "addr");
                        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/filters/0/addr_start"), "0");
                        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/filters/0/addr_end"), "268435456");
                        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/filters/1/addr_start"),
                                         "536870912");
                        ck_assert_str_eq(fake_get("kdamonds/0/contexts/0/schemes/1/filters/1/addr_end"), "671088640");
                }
                json_decref(view);
                ck_assert_int_eq(stop_daemon(daemon), 0);
                test_workload_stop(&w);
                state_keeper_stop();
                teardown();
        }
}
END_TEST

static Suite *damon_daemon_suite(void) {
        Suite *s = suite_create("damon-daemon");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_own_commits_hot_edges_and_restores);
        tcase_add_test(tc, test_own_leaves_agreeing_damon_alone);
        tcase_add_test(tc, test_own_follows_a_moved_hot_area_at_once);
        tcase_add_test(tc, test_foreign_kdamond_is_never_written);
        tcase_add_test(tc, test_scheme_the_kernel_lacks);
        tcase_add_test(tc, test_node_filters_from_sysfs);
        tcase_add_test(tc, test_stop_behind_busy_state_is_noticed);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        if (geteuid() != 0) {
                printf("test-damon-daemon: needs root for system-wide sampling; skipping\n");
                return 77;
        }
        return dp_check_run(damon_daemon_suite());
}
