/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl against a fake damon-perfd: a forked process that speaks varlink
 * (NUL-terminated JSON) on a temporary unix socket and answers with canned
 * replies of the interface's shapes, so that every command, its output, its
 * error messages and its exit codes are checked without root or perf.
 *
 * The fake logs every call it receives (one JSON line each), so the tests
 * also check the parameters damonctl sends.  The path of damonctl comes from
 * meson in DP_DAMONCTL.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "macro.h"
#include "stats-reply.h"

#include "check-main.h"
#include "test-ctl-run.h"

enum fake_mode {
        FAKE_GOOD,
        FAKE_BROKEN,            /* replies of the wrong shape, or none */
};

struct fake {
        pid_t pid;
        char dir[64];
        char socket[128];
        char address[160];
        char log[128];
};

/* Every value i of a CPU with @base is base * 1000 + i. */
static json_t *counters_json(int64_t base) {
        json_t *o = json_object();

        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++)
                json_object_set_new(o, dp_stats_value_name(i), json_integer(base * 1000 + i));
        return o;
}

/* The n-th GetStats reply on a connection: counts grow by 1000 a second. */
static json_t *stats_json(int64_t n) {
        return json_pack("{s:{s:s,s:s,s:b,s:s},s:I,s:f,s:o,s:[{s:i,s:s,s:o},{s:i,s:s,s:o}]}",
                         "source", "name", "pagefault", "pmu", "software", "hardware", 0,
                         "description", "software page faults",
                         "uptime_usec", (json_int_t) n * 1000000,
                         "sample_rate", 250.0,
                         "totals", counters_json(10 * n),
                         "cpus",
                         "cpu", 0, "state", "running", "counters", counters_json(n),
                         "cpu", 1, "state", "running", "counters", counters_json(n + 1));
}

static json_t *cpus_json(void) {
        return json_pack("{s:[{s:i,s:s,s:n,s:n,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i},"
                         "{s:i,s:s,s:s,s:i,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i}]}",
                         "cpus",
                         "cpu", 0, "state", "running", "failed_step", "errno", "pmu", "software",
                         "pmu_type", 1, "config", 2, "sample_period", 1, "ring_bytes", 262144,
                         "queue_capacity", 65536, "ring_peak", 77, "lost", 0,
                         "cpu", 1, "state", "error", "failed_step", "enable", "errno", EACCES, "pmu", "software",
                         "pmu_type", 1, "config", 2, "sample_period", 1, "ring_bytes", 262144,
                         "queue_capacity", 65536, "ring_peak", 0, "lost", 3);
}

static json_t *targets_json(void) {
        return json_pack("{s:[{s:i,s:s,s:I,s:I,s:i},{s:i,s:s,s:I,s:I,s:i}],s:i,s:i}",
                         "targets",
                         "pid", 42, "kind", "process", "start", (json_int_t) 0x400000, "end",
                         (json_int_t) 0x7fff0000, "nr_regions", 12,
                         "pid", 43, "kind", "process", "start", (json_int_t) 0x10000, "end", (json_int_t) 0x20000,
                         "nr_regions", 3,
                         "max_nr_accesses", 20, "aggregations", 57);
}

static json_t *regions_json(json_t *parameters) {
        json_t *limit = json_object_get(parameters, "limit");
        json_t *regions = json_array();

        for (int i = 0; i < 4 && (!limit || i < json_integer_value(limit)); i++)
                /* The last one's count is not known: null, shown as "-". */
                json_array_append_new(regions, json_pack("{s:i,s:I,s:I,s:i,s:o,s:i}", "target", 42, "start",
                                                         (json_int_t) 0x7f0000000000 + i * 0x100000, "end",
                                                         (json_int_t) 0x7f0000100000 + i * 0x100000,
                                                         "nr_accesses", 20 - 5 * i, "samples",
                                                         i == 3 ? json_null() : json_integer(100 - i), "age", i));
        return json_pack("{s:o,s:i,s:i,s:i}", "regions", regions, "max_nr_accesses", 20, "sample_interval_usec",
                         5000, "aggr_interval_usec", 100000);
}

static json_t *damon_view_json(bool broken) {
        json_t *regions = json_array(), *view;

        for (int i = 0; i < 2; i++)
                json_array_append_new(regions, json_pack("{s:i,s:I,s:I,s:i,s:i,s:i,s:o,s:I}", "target", 42, "start",
                                                         (json_int_t) 0x7f0000000000 + i * 0x100000, "end",
                                                         (json_int_t) 0x7f0000100000 + i * 0x100000,
                                                         "damon_nr_accesses", 18 - 16 * i, "damon_age", 3 + i,
                                                         "pmu_nr_accesses", 20 - 20 * i, "pmu_samples",
                                                         i ? json_null() : json_integer(640),
                                                         "pmu_bytes", (json_int_t) 0x100000));
        view = json_pack("{s:s,s:s,s:i,s:i,s:b,s:i,s:i,s:i,s:i,s:[{s:s,s:i,s:i,s:s}],s:[i],s:i,s:I,s:i,s:o,"
                         "s:[{s:i,s:f,s:f,s:I,s:I,s:i,s:i}]}",
                         "role", "owned", "reason", "no kdamond existed", "kdamond", 0, "context", 0, "running", 1,
                         "commits", 7, "commits_skipped", 23, "goal_feeds", 0, "read_backs", broken ? -1 : 30,
                         "errors", "step", "commit", "errno", 16, "count", 2, "path", "/sys/kernel/mm/damon/admin/kdamonds/0/state", "targets", 42, "hot_fraction", 5000,
                         "last_commit_usec", (json_int_t) 1700000000000000, "max_nr_accesses", 20,
                         broken ? "regionz" : "regions", regions,
                         "agreement", "target", 42, "precision", 0.75, "recall", 0.5, "damon_hot_bytes",
                         (json_int_t) 0x100000, "pmu_hot_bytes", (json_int_t) 0x180000, "pmu_hot_ranges", 3,
                         "ranges_found", 2);
        /* Our stat scheme and a configured migrate_hot, with DAMON's stats. */
        json_object_set_new(view, "schemes", json_pack(
                "[{s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:i,s:i,s:i,s:i,s:i,s:i,s:i},"
                "{s:s,s:i,s:i,s:I,s:i,s:i,s:i,s:i,s:i,s:i,s:I,s:i,s:s,s:i,s:i,s:i,s:I,s:i,s:I}]",
                "action", "stat", "sz_min", 0, "nr_accesses_min", 0, "nr_accesses_max", 20, "age_min", 0,
                "age_max", 100, "quota_ms", 0, "quota_bytes", 0, "quota_reset_ms", 0, "watermarks", "none",
                "goals", 0, "filters", 0, "nr_tried", 40, "sz_tried", 0, "nr_applied", 40, "sz_applied", 0,
                "qt_exceeds", 0,
                "action", "migrate_hot", "target_nid", 0, "sz_min", 4096, "sz_max", (json_int_t) 1 << 30,
                "nr_accesses_min", 10, "nr_accesses_max", 20, "age_min", 0, "age_max", 100, "quota_ms", 0,
                "quota_reset_ms", 1000, "quota_bytes", (json_int_t) 256 << 20, "goals", 1, "watermarks", "none",
                "filters", 2, "nr_tried", 12, "sz_tried", 6291456, "nr_applied", (json_int_t) 3,
                "sz_applied", 2097152, "qt_exceeds", (json_int_t) 5));
        return view;
}

static json_t *event_json(int i, bool samples) {
        if (samples)
                return json_pack("{s:{s:s,s:I,s:i,s:i,s:I}}", "event", "kind", "sample", "timestamp_usec",
                                 (json_int_t) 1700000000000000 + i, "cpu", i % 2, "pid", 42, "addr",
                                 (json_int_t) 0x7f0000001000);
        return json_pack("{s:{s:s,s:I,s:i,s:s,s:s}}", "event", "kind", "state_change", "timestamp_usec",
                         (json_int_t) 1700000000000000 + i, "cpu", i, "from", "enabled", "to", "running");
}

static bool send_message(int fd, json_t *parameters, const char *error, bool continues) {
        json_t *m = json_object();
        char *text;
        bool ok;

        if (parameters)
                json_object_set(m, "parameters", parameters);
        if (error)
                json_object_set_new(m, "error", json_string(error));
        if (continues)
                json_object_set_new(m, "continues", json_true());
        text = json_dumps(m, JSON_COMPACT);
        ok = text && write(fd, text, strlen(text) + 1) == (ssize_t) strlen(text) + 1;
        free(text);
        json_decref(m);
        json_decref(parameters);
        return ok;
}

/* Answers one call; false to close the connection. */
static bool answer(int fd, json_t *call, enum fake_mode mode, int *n_stats) {
        const char *method = json_string_value(json_object_get(call, "method"));
        json_t *parameters = json_object_get(call, "parameters");
        bool samples = json_is_true(json_object_get(parameters, "samples"));

        if (!method)
                return false;
        if (strcmp(method, "io.damon.perfd.GetStats") == 0)
                return send_message(fd, mode == FAKE_BROKEN ? json_pack("{s:i}", "source", 1)
                                                            : stats_json(++*n_stats), NULL, false);
        if (strcmp(method, "io.damon.perfd.GetCPUs") == 0)
                return send_message(fd, mode == FAKE_BROKEN ? json_pack("{s:[{s:s}]}", "cpus", "cpu", "x")
                                                            : cpus_json(), NULL, false);
        if (strcmp(method, "io.damon.perfd.GetTargets") == 0)
                return mode == FAKE_BROKEN ? false : send_message(fd, targets_json(), NULL, false);
        if (strcmp(method, "io.damon.perfd.GetRegions") == 0) {
                json_t *target = json_object_get(parameters, "target");

                if (json_is_integer(target) && json_integer_value(target) == 999)
                        return send_message(fd, json_pack("{s:i}", "target", 999), "io.damon.perfd.NoSuchTarget",
                                            false);
                return send_message(fd, regions_json(parameters), NULL, false);
        }
        if (strcmp(method, "io.damon.perfd.GetDamonView") == 0)
                return send_message(fd, damon_view_json(mode == FAKE_BROKEN), NULL, false);
        if (strcmp(method, "io.damon.perfd.Monitor") == 0) {
                if (!json_is_true(json_object_get(call, "more")))
                        return send_message(fd, NULL, "org.varlink.service.ExpectedMore", false);
                for (int i = 0; i < 3; i++)
                        if (!send_message(fd, event_json(i, samples), NULL, true))
                                return false;
                /* With samples the fake "stops" mid-stream; without, it
                 * stays until the client hangs up. */
                return !samples;
        }
        if (strcmp(method, "io.damon.perfd.Reload") == 0)
                return send_message(fd, NULL, "org.varlink.service.PermissionDenied", false);
        return send_message(fd, json_pack("{s:s}", "method", method), "org.varlink.service.MethodNotFound", false);
}

static void log_call(const char *log, json_t *call) {
        char *text = json_dumps(call, JSON_COMPACT);
        FILE *f = fopen(log, "a");

        if (f && text)
                fprintf(f, "%s\n", text);
        if (f)
                fclose(f);
        free(text);
}

static void serve_connection(int fd, const char *log, enum fake_mode mode) {
        char buf[65536];
        size_t used = 0;
        int n_stats = 0;

        for (;;) {
                char *nul = memchr(buf, '\0', used);
                ssize_t n;

                if (nul) {
                        json_t *call = json_loads(buf, 0, NULL);
                        bool go_on;

                        if (!call)
                                return;
                        log_call(log, call);
                        go_on = answer(fd, call, mode, &n_stats);
                        json_decref(call);
                        if (!go_on)
                                return;
                        used -= (size_t) (nul + 1 - buf);
                        memmove(buf, nul + 1, used);
                        continue;
                }
                if (used == sizeof(buf))
                        return;
                n = read(fd, buf + used, sizeof(buf) - used);
                if (n <= 0)
                        return;
                used += (size_t) n;
        }
}

static void fake_start(struct fake *f, enum fake_mode mode) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd;

        strcpy(f->dir, "/tmp/dp-damonctl-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(f->dir));
        snprintf(f->socket, sizeof(f->socket), "%s/io.damon.perfd", f->dir);
        snprintf(f->address, sizeof(f->address), "unix:%s", f->socket);
        snprintf(f->log, sizeof(f->log), "%s/calls.log", f->dir);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fd, 0);
        strcpy(sa.sun_path, f->socket);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        ck_assert_int_eq(listen(fd, 16), 0);
        f->pid = fork();
        ck_assert_int_ge(f->pid, 0);
        if (f->pid == 0) {
                /* Clients hang up mid-stream; that must not end the fake. */
                signal(SIGPIPE, SIG_IGN);
                for (;;) {
                        int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

                        if (c < 0)
                                _exit(1);
                        serve_connection(c, f->log, mode);
                        close(c);
                }
        }
        close(fd);
}

static void remove_dir(const char *path) {
        DIR *d = opendir(path);
        struct dirent *e;

        if (!d)
                return;
        while ((e = readdir(d)))
                if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
                        char p[512];

                        snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
                        if (unlinkat(dirfd(d), e->d_name, 0) < 0)
                                remove_dir(p);
                }
        closedir(d);
        rmdir(path);
}

static void fake_stop(struct fake *f) {
        kill(f->pid, SIGKILL);
        waitpid(f->pid, NULL, 0);
        remove_dir(f->dir);
}






static pid_t spawn_ctl(const struct fake *f, uid_t uid, const char *const *args) {
        return ctl_spawn(f->dir, f->address, uid, args);
}

static struct run collect(const struct fake *f, pid_t pid) {
        return ctl_collect(f->dir, pid);
}

#define RUN(f, ...) collect((f), spawn_ctl((f), 0, (const char *const[]) { __VA_ARGS__, NULL }))

static void assert_contains(const char *text, const char *needle) {
        /* Check's messages are short: the whole text goes to stderr. */
        if (!strstr(text, needle))
                fprintf(stderr, "--- text without '%s':\n%s---\n", needle, text);
        ck_assert_msg(strstr(text, needle), "'%.200s' missing", needle);
}

START_TEST(test_stats_text_json_prometheus) {
        struct fake f;
        struct run r;
        json_t *doc, *expect;

        fake_start(&f, FAKE_GOOD);
        r = RUN(&f, "stats");
        ck_assert_msg(r.status == 0, "stats: %d %s", r.status, r.err);
        assert_contains(r.out, "source: pagefault on PMU software  SOFTWARE POSITIVE CONTROL (not hardware access sampling)\n");
        assert_contains(r.out, "CPU00: st=RUNNING cb=1003 enq=1009 deq=1019 ovf=1010 match=1021 miss=3069 upd=1025\n");
        assert_contains(r.out, "CPU01: st=RUNNING cb=2003 ");
        assert_contains(r.out, "│ 7 match    │ match         │ 10021 │");
        assert_contains(r.out, "│ aux        │ aux_truncated │ 10026 │");
        ck_assert_str_eq(r.err, "");
        run_done(&r);

        /* --json: the reply parameters as received. */
        r = RUN(&f, "stats", "--json");
        ck_assert_int_eq(r.status, 0);
        doc = json_loads(r.out, 0, NULL);
        expect = stats_json(1);
        ck_assert_msg(json_equal(doc, expect), "--json differs:\n%s", r.out);
        ck_assert_ptr_nonnull(strstr(r.out, "\n  \"source\": {"));
        json_decref(doc);
        json_decref(expect);
        run_done(&r);

        r = RUN(&f, "--json", "stats", "--prometheus");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "exclude each other");
        run_done(&r);

        r = RUN(&f, "stats", "--prometheus");
        ck_assert_int_eq(r.status, 0);
        assert_contains(r.out, "# TYPE damon_perfd_match_total counter\n");
        assert_contains(r.out, "damon_perfd_match_total{cpu=\"1\"} 2021\n");
        assert_contains(r.out, "damon_perfd_spe_no_data_total{cpu=\"1\"} 2030\n");
        assert_contains(r.out, "damon_perfd_source_info{name=\"pagefault\",pmu=\"software\",hardware=\"false\"} 1\n");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_stats_textfile) {
        char dir[200], path[260];
        struct fake f;
        struct run r, p;
        struct stat st;
        _cleanup_free_ char *text = NULL;
        DIR *d;
        struct dirent *e;
        int n = 0;

        fake_start(&f, FAKE_GOOD);
        snprintf(dir, sizeof(dir), "%s/textfile", f.dir);
        ck_assert_int_eq(mkdir(dir, 0755), 0);
        r = RUN(&f, "stats", "--textfile", dir);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_str_eq(r.out, "");
        snprintf(path, sizeof(path), "%s/damon_perfd.prom", dir);
        ck_assert_int_eq(stat(path, &st), 0);
        /* node_exporter runs as another user. */
        ck_assert_int_eq(st.st_mode & 0777, 0644);
        text = slurp(path);
        p = RUN(&f, "stats", "--prometheus");
        ck_assert_str_eq(text, p.out);
        /* No temporary file left behind. */
        d = opendir(dir);
        while ((e = readdir(d)))
                n += e->d_name[0] != '.' || strlen(e->d_name) > 2;
        closedir(d);
        ck_assert_int_eq(n, 1);
        run_done(&r);
        run_done(&p);

        r = RUN(&f, "stats", "--textfile", "/nonexistent/dir");
        ck_assert_int_eq(r.status, 1);
        assert_contains(r.err, "cannot create a file in /nonexistent/dir");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_stats_interval) {
        struct fake f;
        struct run r;
        const char *second;

        fake_start(&f, FAKE_GOOD);
        r = RUN(&f, "stats", "--interval", "1", "--count", "2");
        ck_assert_msg(r.status == 0, "%s", r.err);
        second = strstr(r.out, "\n\nsource:");
        ck_assert_ptr_nonnull(second);
        assert_contains(r.out, "per second since the daemon started (1.00s)");
        /* The fake's counts grow by 1000 per second of its uptime; levels stay values. */
        assert_contains(second, "per second over 1.00s");
        assert_contains(second, "CPU00: st=RUNNING cb=1000 enq=1000 deq=1000 ovf=1000 match=1000 miss=3000 upd=1000\n");
        assert_contains(second, "│ ring_peak (level)   │      20011 │");
        run_done(&r);

        r = RUN(&f, "stats", "--count", "2");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "--count needs --interval");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_cpus_targets_regions) {
        _cleanup_free_ char *log = NULL;
        struct fake f;
        struct run r;
        json_t *doc, *expect;

        fake_start(&f, FAKE_GOOD);
        r = RUN(&f, "cpus");
        ck_assert_msg(r.status == 0, "%s", r.err);
        assert_contains(r.out, "│ CPU │ STATE   │ FAILED                    │ PMU      │ TYPE/CONFIG │");
        assert_contains(r.out, "│   1 │ ERROR   │ enable: Permission denied │ software │ 1/0x2       │");
        assert_contains(r.out, "256.0 KiB");
        run_done(&r);

        r = RUN(&f, "cpus", "--json");
        doc = json_loads(r.out, 0, NULL);
        expect = cpus_json();
        ck_assert(json_equal(doc, expect));
        json_decref(doc);
        json_decref(expect);
        run_done(&r);

        r = RUN(&f, "targets");
        ck_assert_msg(r.status == 0, "%s", r.err);
        assert_contains(r.out, "│  42 │ process │ 0x400000 │ 0x7fff0000 │  2.0 GiB │      12 │");
        assert_contains(r.out, "2 targets, 57 aggregations, max_nr_accesses 20\n");
        run_done(&r);

        r = RUN(&f, "regions", "--target", "42", "--top", "2");
        ck_assert_msg(r.status == 0, "%s", r.err);
        assert_contains(r.out, "│     42 │ 0x7f0000000000 │ 0x7f0000100000 │ 1.0 MiB │    20/20 │ ██████████ │     100 │   0 │");
        assert_contains(r.out, "│ 0x7f0000100000 │ 0x7f0000200000 │ 1.0 MiB │    15/20 │ ███████▌   │");
        assert_contains(r.out, "2 regions;");
        log = slurp(f.log);
        assert_contains(log, "{\"method\":\"io.damon.perfd.GetRegions\",\"parameters\":{\"target\":42,\"limit\":2}}\n");
        run_done(&r);

        r = RUN(&f, "regions", "--target", "42");
        ck_assert_msg(r.status == 0, "%s", r.err);
        assert_contains(r.out, "│ 0x7f0000300000 │ 0x7f0000400000 │ 1.0 MiB │     5/20 │ ██▌        │       - │   3 │");
        run_done(&r);

        r = RUN(&f, "regions", "--target", "999");
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "GetRegions failed: io.damon.perfd.NoSuchTarget {\"target\":999}: "
                                "that target is not monitored\n");
        run_done(&r);

        r = RUN(&f, "regions", "--top", "0");
        ck_assert_int_eq(r.status, 2);
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_damon_view) {
        _cleanup_free_ char *log = NULL;
        struct fake f;
        struct run r;

        fake_start(&f, FAKE_GOOD);
        r = RUN(&f, "damon");
        ck_assert_int_eq(r.status, 0);
        assert_contains(r.out, "DAMON: owned, kdamond 0 (on): no kdamond existed\n");
        assert_contains(r.out, "Targets: 42; hot fraction 50.00% (PMU)\n");
        assert_contains(r.out, "Commits: 7 (23 skipped: no material change); quota goal feeds: 0; read-backs: 30\n");
        assert_contains(r.out, "Failed: commit (/sys/kernel/mm/damon/admin/kdamonds/0/state): Device or resource busy, "
                               "2 times\n");
        /* DAMON's count and the PMU's side by side, with their bars. */
        assert_contains(r.out, "│ 0x7f0000000000 │ 0x7f0000100000 │ 1.0 MiB │    18 │ █████████  │  20 │ ██████████ │");
        /* A PMU count the daemon does not know (null) is "-", not 0. */
        assert_contains(r.out, "│ 0x7f0000100000 │ 0x7f0000200000 │ 1.0 MiB │     2 │ █          │   0 │            │       - │   4 │");
        assert_contains(r.out, "2 regions as DAMON reports them");
        /* How DAMON's hot regions agree with the sampled ones. */
        assert_contains(r.out, "Agreement, target 42: DAMON calls 1.0 MiB hot, the samples 1.5 MiB in 3 ranges; "
                               "precision 0.75, recall 0.50, 2 of 3 ranges found\n");
        /* Each scheme with its stats, before the regions. */
        assert_contains(r.out, "│ 1 │ migrate_hot -> node 0 │ 4.0 KiB-1.0 GiB │ 10-20    │ 0-100 │ 0 ms, 268435456 B │");
        assert_contains(r.out, "│    12 │ 6.0 MiB │       3 │ 2.0 MiB │              5 │");
        assert_contains(r.out, "2 DAMOS schemes;");
        ck_assert(strstr(r.out, "2 DAMOS schemes;") < strstr(r.out, "2 regions as DAMON reports them"));
        log = slurp(f.log);
        assert_contains(log, "{\"method\":\"io.damon.perfd.GetDamonView\"}\n");
        run_done(&r);

        r = RUN(&f, "--json", "damon");
        ck_assert_int_eq(r.status, 0);
        assert_contains(r.out, "\"role\": \"owned\"");
        run_done(&r);
        fake_stop(&f);

        fake_start(&f, FAKE_BROKEN);
        r = RUN(&f, "damon");
        ck_assert_int_eq(r.status, 1);
        assert_contains(r.err, "invalid reply from damon-perfd");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_reload_denied) {
        struct fake f;
        struct run r;

        fake_start(&f, FAKE_GOOD);
        r = RUN(&f, "reload");
        ck_assert_int_eq(r.status, 4);
        ck_assert_str_eq(r.err, "Reload failed: org.varlink.service.PermissionDenied {}: only root may call this\n");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

/* Waits until @path has at least @lines lines. */
static void wait_lines(const char *path, int lines) {
        for (int i = 0; i < 500; i++) {
                _cleanup_free_ char *text = slurp(path);
                int n = 0;

                for (const char *p = text; (p = strchr(p, '\n')); p++)
                        n++;
                if (n >= lines)
                        return;
                usleep(10000);
        }
        ck_abort_msg("%s never got %d lines", path, lines);
}

START_TEST(test_heatmap_live) {
        _cleanup_free_ char *log = NULL, *svg = NULL;
        char path[200], out[160];
        struct fake f;
        struct run r;
        pid_t pid;

        /* Not a terminal: ASCII shades, the picture once at the end, sized by these. */
        setenv("COLUMNS", "40", 1);
        setenv("LINES", "10", 1);
        fake_start(&f, FAKE_GOOD);
        snprintf(path, sizeof(path), "%s/heatmap.svg", f.dir);
        r = RUN(&f, "heatmap", "--target", "42", "--duration", "0.5", "--interval", "0.1", "--svg", path);
        ck_assert_msg(r.status == 0, "heatmap: %d %s", r.status, r.err);
        ck_assert_str_eq(r.err, "");
        /* The fake's four 1 MiB regions at 20, 15, 10 and 5 of 20: a row each,
         * the lowest addresses hottest, in every column. */
        assert_contains(r.out, "Access heatmap: pid 42, a column every 0.10 s\n"
                               "0x7f0000300000 |----");
        assert_contains(r.out, "\n               |####");
        assert_contains(r.out, "\n               |++++");
        assert_contains(r.out, "\n0x7f0000000000 |@@@@");
        assert_contains(r.out, ".:-=+*#%@ 0% .. 100% of sampling intervals with an access (hottest 100%)\n");
        log = slurp(f.log);
        assert_contains(log, "{\"method\":\"io.damon.perfd.GetRegions\",\"parameters\":{\"target\":42,"
                             "\"limit\":1000000}}\n");
        svg = slurp(path);
        assert_contains(svg, "<title>Access heatmap: pid 42, a column every 0.10 s</title>");
        assert_contains(svg, "<g data-start=\"0x7f0000000000\" data-end=\"0x7f0000006666\">");
        run_done(&r);

        /* Without --target: the hottest region's; a range zooms in.  --duration takes time spans. */
        r = RUN(&f, "heatmap", "--duration", "100ms", "--interval", "0.1", "--range", "7f0000200000-0x7f0000400000");
        ck_assert_msg(r.status == 0, "heatmap: %d %s", r.status, r.err);
        ck_assert_str_eq(r.err, "heatmap: target 42, which has the hottest region\n");
        /* The upper 2 MiB only, at 10 and 5 of 20; two columns, drawn four characters wide. */
        assert_contains(r.out, "\n0x7f0000380000 |--------\n");
        assert_contains(r.out, "\n0x7f0000200000 |++++++++\n");
        assert_contains(r.out, " of sampling intervals with an access (hottest 50%)\n");
        run_done(&r);

        r = RUN(&f, "heatmap", "--target", "999", "--duration", "0.1");
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "GetRegions failed: io.damon.perfd.NoSuchTarget {\"target\":999}: "
                                "that target is not monitored\n");
        ck_assert_str_eq(r.out, "");
        run_done(&r);

        /* Until Ctrl-C, then the picture. */
        pid = spawn_ctl(&f, 0, (const char *const[]) { "heatmap", "--target", "phys", "--interval", "0.05", NULL });
        snprintf(out, sizeof(out), "%s/calls.log", f.dir);
        wait_lines(out, 12);
        ck_assert_int_eq(kill(pid, SIGINT), 0);
        r = collect(&f, pid);
        ck_assert_msg(r.status == 0, "heatmap exited %d: %s", r.status, r.err);
        assert_contains(r.out, "Access heatmap: the physical address space, a column every 0.05 s\n");
        assert_contains(r.out, "\n0x7f0000000000 |@@");
        run_done(&r);
        fake_stop(&f);
        unsetenv("COLUMNS");
        unsetenv("LINES");
}
END_TEST

START_TEST(test_heatmap_replay) {
        const char *testdata = getenv("DP_TESTDATA");
        _cleanup_free_ char *svg = NULL, *log = NULL;
        char capture[512], path[200];
        struct fake f;
        struct run r;

        ck_assert_ptr_nonnull(testdata);
        snprintf(capture, sizeof(capture), "%s/pagefault-system.perf.data", testdata);
        /* No daemon needed: the capture goes through the tracker in damonctl. */
        fake_start(&f, FAKE_GOOD);
        snprintf(path, sizeof(path), "%s/replay.svg", f.dir);
        r = RUN(&f, "heatmap", "--replay", capture, "--svg", path);
        ck_assert_msg(r.status == 0, "heatmap --replay: %d %s", r.status, r.err);
        ck_assert_str_eq(r.err, "heatmap: pid 14462, the busiest of 42 in the capture (18233 samples)\n");
        assert_contains(r.out, "Access heatmap: pid 14462 in pagefault-system.perf.data, a column every 0.10 s\n");
        svg = slurp(path);
        assert_contains(svg, "<title>Access heatmap: pid 14462 in pagefault-system.perf.data, a column every "
                             "0.10 s</title>");
        /* The capture's 0.57 s at 0.1 s an aggregation; its hottest cells. */
        assert_contains(svg, ">0.5</text>");
        /* 75% since splits cut only where the samples were counted (issue 16). */
        assert_contains(svg, "(the hottest cell: 75%)");
        log = slurp(f.log);
        ck_assert_ptr_null(strstr(log, "GetRegions"));
        run_done(&r);

        r = RUN(&f, "heatmap", "--replay", capture, "--target", "14499", "--interval", "0.05");
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_str_eq(r.err, "");
        assert_contains(r.out, "Access heatmap: pid 14499 in pagefault-system.perf.data, a column every 0.05 s\n");
        run_done(&r);

        r = RUN(&f, "heatmap", "--replay", capture, "--target", "1");
        ck_assert_int_eq(r.status, 1);
        assert_contains(r.err, "heatmap: pid 1 has no samples in ");
        assert_contains(r.err, "(the busiest process is 14462)\n");
        run_done(&r);

        r = RUN(&f, "heatmap", "--replay", capture, "--target", "phys");
        ck_assert_int_eq(r.status, 1);
        assert_contains(r.err, "has no samples with a physical address\n");
        run_done(&r);

        r = RUN(&f, "heatmap", "--replay", "/nonexistent.data");
        ck_assert_int_eq(r.status, 1);
        assert_contains(r.err, "heatmap: /nonexistent.data: not a readable perf.data capture: ");
        run_done(&r);

        r = RUN(&f, "heatmap", "--replay", capture, "--svg", "/nonexistent/dir/x.svg");
        ck_assert_int_eq(r.status, 1);
        assert_contains(r.err, "heatmap: cannot write /nonexistent/dir/x.svg: No such file or directory\n");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_heatmap_usage) {
        static const char *const bad[][4] = {
                { "--range", "0x2000-0x1000", "--range: expected START-END in hex with START below END" },
                { "--range", "7f00", "--range: expected START-END" },
                { "--range", "0x1000-0xzz", "--range: expected START-END" },
                { "--interval", "0", "--interval: expected seconds between 0.001 and 86400, got '0'" },
                { "--duration", "soon", "--duration: expected a time span between 1ms and 2777h 46min 40s, "
                                        "e.g. 1.5, 90s, 2min or 1min 30s, got 'soon'" },
                { "--duration", "0", "--duration: expected a time span between 1ms and" },
                { "--duration", "999us", "got '999us'" },
                { "--duration", "2778h", "got '2778h'" },
                { "--duration", "-1", "got '-1'" },
                { "--duration", "1.5.5", "got '1.5.5'" },
                { "--duration", "1 parsec", "got '1 parsec'" },
                { "--target", "-3", "--target: expected a whole number" },
                { "--svg", "", "--svg: expected a file name" },
        };
        struct fake f;
        struct run r;

        fake_start(&f, FAKE_GOOD);
        for (size_t i = 0; i < DP_ARRAY_SIZE(bad); i++) {
                r = RUN(&f, "heatmap", bad[i][0], bad[i][1]);
                ck_assert_msg(r.status == 2, "%s %s: %d", bad[i][0], bad[i][1], r.status);
                assert_contains(r.err, bad[i][2]);
                run_done(&r);
        }
        r = RUN(&f, "--json", "heatmap");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "heatmap does not take --json");
        run_done(&r);

        r = RUN(&f, "heatmap", "--replay", "x.data", "--duration", "3");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "--duration is for a live heatmap");
        run_done(&r);

        r = RUN(&f, "regions", "--svg", "x.svg");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "regions does not take --svg");
        run_done(&r);

        /* stats keeps whole seconds. */
        r = RUN(&f, "stats", "--interval", "0.5");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "--interval: expected a whole number");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_monitor_interrupted) {
        _cleanup_free_ char *log = NULL;
        char out[160];
        struct fake f;
        struct run r;
        pid_t pid;

        fake_start(&f, FAKE_GOOD);
        pid = spawn_ctl(&f, 0, (const char *const[]) { "monitor", NULL });
        snprintf(out, sizeof(out), "%s/stdout", f.dir);
        wait_lines(out, 3);
        ck_assert_int_eq(kill(pid, SIGINT), 0);
        r = collect(&f, pid);
        ck_assert_msg(r.status == 0, "monitor exited %d: %s", r.status, r.err);
        ck_assert_str_eq(r.err, "");
        assert_contains(r.out, " CPU00 state_change enabled -> running\n");
        assert_contains(r.out, " CPU02 state_change enabled -> running\n");
        log = slurp(f.log);
        assert_contains(log, "\"method\":\"io.damon.perfd.Monitor\"");
        assert_contains(log, "\"more\":true");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_stats_interval_interrupted) {
        char out[160];
        struct fake f;
        struct run r;
        pid_t pid;

        fake_start(&f, FAKE_GOOD);
        pid = spawn_ctl(&f, 0, (const char *const[]) { "stats", "--interval", "60", NULL });
        snprintf(out, sizeof(out), "%s/stdout", f.dir);
        /* The first report, then Ctrl-C while it waits 60 s for the next. */
        wait_lines(out, 10);
        ck_assert_int_eq(kill(pid, SIGINT), 0);
        r = collect(&f, pid);
        ck_assert_msg(r.status == 0, "stats --interval exited %d: %s", r.status, r.err);
        ck_assert_str_eq(r.err, "");
        assert_contains(r.out, "per second since the daemon started");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_monitor_daemon_goes_away) {
        _cleanup_free_ char *log = NULL;
        struct fake f;
        struct run r;

        fake_start(&f, FAKE_GOOD);
        r = RUN(&f, "monitor", "--samples", "--max-per-second", "5");
        ck_assert_int_eq(r.status, 3);
        assert_contains(r.out, " CPU01 sample pid=42 addr=0x7f0000001000\n");
        ck_assert_str_eq(r.err, "Monitor failed: damon-perfd closed the connection (did it stop?)\n");
        log = slurp(f.log);
        assert_contains(log, "\"parameters\":{\"samples\":true,\"max_per_second\":5}");
        run_done(&r);

        r = RUN(&f, "monitor", "--max-per-second", "5");
        ck_assert_int_eq(r.status, 2);
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_bad_replies) {
        struct fake f;
        struct run r;

        fake_start(&f, FAKE_BROKEN);
        r = RUN(&f, "cpus");
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "invalid reply from damon-perfd: cpus[0].cpu: expected an integer\n");
        run_done(&r);

        r = RUN(&f, "stats");
        ck_assert_int_eq(r.status, 1);
        ck_assert_str_eq(r.err, "invalid reply from damon-perfd: source: expected an object\n");
        run_done(&r);

        /* The fake hangs up instead of answering. */
        r = RUN(&f, "targets");
        ck_assert_int_eq(r.status, 3);
        assert_contains(r.err, "GetTargets failed: damon-perfd closed the connection");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_not_running) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        char address[200];
        struct fake f;
        struct run r;
        int fd;

        fake_start(&f, FAKE_GOOD);
        snprintf(address, sizeof(address), "unix:%s/nonexistent", f.dir);
        r = RUN(&f, "--address", address, "stats");
        ck_assert_int_eq(r.status, 3);
        assert_contains(r.err, "damon-perfd is not running (no socket at ");
        assert_contains(r.err, "/nonexistent)\n");
        run_done(&r);

        /* A socket file nobody listens on. */
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/stale", f.dir);
        ck_assert_int_eq(bind(fd, (struct sockaddr *) &sa, sizeof(sa)), 0);
        close(fd);
        snprintf(address, sizeof(address), "unix:%s", sa.sun_path);
        r = RUN(&f, "--address", address, "cpus");
        ck_assert_int_eq(r.status, 3);
        assert_contains(r.err, "damon-perfd is not running (nothing listens on ");
        run_done(&r);

        r = RUN(&f, "--address", "tcp:localhost", "cpus");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "invalid address 'tcp:localhost'");
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_permission_denied) {
        struct fake f;
        struct run r;
        char expect[300];

        if (geteuid() != 0)
                return;         /* needs root to become another user */
        fake_start(&f, FAKE_GOOD);
        /* nobody may enter the directory, but not connect to the socket. */
        ck_assert_int_eq(chmod(f.dir, 0755), 0);
        ck_assert_int_eq(chmod(f.socket, 0600), 0);
        r = collect(&f, spawn_ctl(&f, 65534, (const char *const[]) { "stats", NULL }));
        ck_assert_int_eq(r.status, 4);
        snprintf(expect, sizeof(expect), "permission denied on %s: talking to damon-perfd needs privileges "
                 "(root or the socket's group)\n", f.socket);
        ck_assert_str_eq(r.err, expect);
        run_done(&r);
        fake_stop(&f);
}
END_TEST

START_TEST(test_usage) {
        struct fake f;
        struct run r;

        fake_start(&f, FAKE_GOOD);
        r = RUN(&f, "frobnicate");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "unknown command 'frobnicate'\nusage: damonctl");
        ck_assert_str_eq(r.out, "");
        run_done(&r);

        r = RUN(&f, "stats", "--bogus");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "unknown option '--bogus'");
        run_done(&r);

        r = RUN(&f, "cpus", "--top", "3");
        ck_assert_int_eq(r.status, 2);
        assert_contains(r.err, "cpus does not take --top");
        run_done(&r);

        r = RUN(&f, "stats", "extra");
        ck_assert_int_eq(r.status, 2);
        run_done(&r);

        r = RUN(&f, "stats", "--interval", "0");
        ck_assert_int_eq(r.status, 2);
        run_done(&r);

        r = RUN(&f, "--help");
        ck_assert_int_eq(r.status, 0);
        assert_contains(r.out, "Exit status:\n");
        assert_contains(r.out, "  3  damon-perfd is not running, or went away\n");
        run_done(&r);

        r = RUN(&f, "--version");
        ck_assert_int_eq(r.status, 0);
        ck_assert_int_eq(strncmp(r.out, "damonctl ", 9), 0);
        run_done(&r);
        fake_stop(&f);
}
END_TEST

int main(void) {
        Suite *s = suite_create("damonctl-fake");
        TCase *tc = tcase_create("fake");

        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_stats_text_json_prometheus);
        tcase_add_test(tc, test_stats_textfile);
        tcase_add_test(tc, test_stats_interval);
        tcase_add_test(tc, test_cpus_targets_regions);
        tcase_add_test(tc, test_damon_view);
        tcase_add_test(tc, test_heatmap_live);
        tcase_add_test(tc, test_heatmap_replay);
        tcase_add_test(tc, test_heatmap_usage);
        tcase_add_test(tc, test_reload_denied);
        tcase_add_test(tc, test_monitor_interrupted);
        tcase_add_test(tc, test_stats_interval_interrupted);
        tcase_add_test(tc, test_monitor_daemon_goes_away);
        tcase_add_test(tc, test_bad_replies);
        tcase_add_test(tc, test_not_running);
        tcase_add_test(tc, test_permission_denied);
        tcase_add_test(tc, test_usage);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
