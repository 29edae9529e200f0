/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl selftest --standalone on this machine: a private damon-perfd with
 * DAMON off, the demo workload, every layer 1-7 passing on every CPU, and a
 * verdict that follows from what the machine has: PLUMBING-ONLY (exit 10)
 * here, where only the software control samples and the machine's own
 * kdamond 0 makes the DAMON write checks refused.  Everything it started is
 * gone afterwards.  Also: the in-damonctl workload, and the usage errors.
 *
 * Needs root (system-wide perf sampling).  The binaries come from meson in
 * DP_DAMONCTL and DP_DAEMON.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "macro.h"
#include "pmu.h"

#include "check-main.h"
#include "test-ctl-run.h"

static char dir[64];

static void setup(void) {
        snprintf(dir, sizeof(dir), "/tmp/dp-selftest-test-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
        char path[128];

        for (const char *const *f = (const char *const[]) { "stdout", "stderr", "damonctl", NULL }; *f; f++) {
                snprintf(path, sizeof(path), "%s/%s", dir, *f);
                unlink(path);
        }
        rmdir(dir);
}

/* The private instances' directories there are now, as one string. */
static char *private_dirs(void) {
        char *text = NULL;
        size_t size = 0;
        FILE *out = open_memstream(&text, &size);
        DIR *d = opendir("/tmp");
        struct dirent *de;

        ck_assert_ptr_nonnull(d);
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "damonctl-selftest-", 18) == 0)
                        fprintf(out, "%s\n", de->d_name);
        closedir(d);
        fclose(out);
        return text;
}

static bool machine_has_memory_pmu(void) {
        _cleanup_pmu_set_ struct dp_pmu_set *set = NULL;

        if (dp_pmu_detect(NULL, &set) < 0)
                return false;
        for (size_t i = 0; i < set->n; i++)
                if (!set->pmus[i].error && (set->pmus[i].kind != DP_PMU_CORE || set->pmus[i].mem_loads[0]))
                        return true;
        return false;
}

static unsigned machine_kdamonds(void) {
        _cleanup_free_ char *text = slurp("/sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds");

        return (unsigned) strtoul(text, NULL, 10);
}

static json_t *check_named(json_t *doc, const char *name) {
        json_t *c;
        size_t i;

        json_array_foreach(json_object_get(doc, "checks"), i, c)
                if (strcmp(json_string_value(json_object_get(c, "name")), name) == 0)
                        return c;
        ck_abort_msg("no check %s", name);
        return NULL;
}

static const char *result_of(json_t *doc, const char *name) {
        return json_string_value(json_object_get(check_named(doc, name), "result"));
}

static bool process_gone(json_int_t pid) {
        return kill((pid_t) pid, 0) < 0 && errno == ESRCH;
}

START_TEST(test_standalone_verdict) {
        const char *args[] = { "selftest", "--standalone", "--json", "--duration", "3", NULL };
        _cleanup_free_ char *dirs_before = private_dirs(), *dirs_after = NULL;
        json_t *doc, *c;
        json_error_t err;
        struct run r;
        size_t i, layers = 0;

        ck_assert_msg(geteuid() == 0, "the private damon-perfd samples every CPU and needs root");
        setup();
        r = ctl_collect(dir, ctl_spawn(dir, "unix:/nonexistent", 0, args));
        doc = json_loads(r.out, 0, &err);
        ck_assert_msg(doc, "not JSON (%s): %s\nstderr: %s", err.text, r.out, r.err);

        /* Every layer 1-7 passes on every CPU, whatever the machine. */
        json_array_foreach(json_object_get(doc, "checks"), i, c) {
                const char *layer = json_string_value(json_object_get(c, "layer"));

                if (strcmp(layer, "L0") == 0 || strcmp(layer, "DAMON") == 0)
                        continue;
                layers++;
                ck_assert_msg(strcmp(json_string_value(json_object_get(c, "result")), "PASS") == 0 &&
                                      !json_is_true(json_object_get(c, "partial")),
                              "%s %s: %s", layer, json_string_value(json_object_get(c, "name")),
                              json_string_value(json_object_get(c, "reason")));
        }
        ck_assert_uint_eq(layers, 10);  /* created bound enabled running sampling ring drain match target hot_area */
        ck_assert_str_eq(result_of(doc, "perf_event_open"), "PASS");
        ck_assert_str_eq(result_of(doc, "config"), "PASS");
        ck_assert_str_eq(result_of(doc, "capabilities"), "PASS");
        /* The private instance runs with DAMON off. */
        ck_assert_str_eq(result_of(doc, "hints"), "SKIP");
        ck_assert_str_eq(json_string_value(json_object_get(check_named(doc, "hints"), "reason")),
                         "off: [DAMON] Mode=off");
        /* The machine's kdamond 0 is foreign: DAMON write checks are refused. */
        ck_assert_str_eq(result_of(doc, "damon_guard"), machine_kdamonds() > 0 ? "SKIP" : "PASS");
        if (machine_kdamonds() > 0)
                ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(check_named(doc, "damon_guard"), "reason")),
                                             "kdamond 0 ("));
        ck_assert_str_eq(result_of(doc, "source"), machine_has_memory_pmu() ? "PASS" : "SKIP");
        /* DAMON off can never be fully integrated: PLUMBING-ONLY, exit 10. */
        ck_assert_str_eq(json_string_value(json_object_get(doc, "verdict")), "PLUMBING-ONLY");
        ck_assert_int_eq(json_integer_value(json_object_get(doc, "exit_status")), 10);
        ck_assert_msg(r.status == 10, "exit %d: %s", r.status, r.err);
        ck_assert(json_is_true(json_object_get(doc, "standalone")));
        ck_assert(!json_is_true(json_object_get(json_object_get(doc, "workload"), "in_damonctl")));

        /* Everything it started is gone: the workload, the private instance's directory. */
        ck_assert(process_gone(json_integer_value(json_object_get(json_object_get(doc, "workload"), "pid"))));
        dirs_after = private_dirs();
        ck_assert_str_eq(dirs_after, dirs_before);
        json_decref(doc);
        run_done(&r);
        teardown();
}
END_TEST

/* A damonctl with nothing beside it: the daemon by --daemon, the workload a
 * child of damonctl; the text output, line by line. */
START_TEST(test_standalone_text_with_inline_workload) {
        const char *daemon = getenv("DP_DAEMON");
        char copy[128], daemon_arg[PATH_MAX + 16], cmd[2 * PATH_MAX + 512];
        const char *layers[] = { "L1 created", "L2 bound", "L3 enabled", "L3 running", "L4 sampling", "L5 ring",
                                 "L6 drain", "L7 match", "L7 target", "L7 hot_area" };
        _cleanup_free_ char *out = NULL, *err = NULL;
        char path[160];
        int status;

        ck_assert_msg(daemon, "DP_DAEMON not set");
        setup();
        snprintf(copy, sizeof(copy), "%s/damonctl", dir);
        snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", getenv("DP_DAMONCTL"), copy);
        ck_assert_int_eq(system(cmd), 0);
        snprintf(daemon_arg, sizeof(daemon_arg), "--daemon=%s", daemon);
        snprintf(cmd, sizeof(cmd), "cd / && PATH=/nonexistent '%s' selftest --standalone --duration=2 '%s' "
                 ">'%s/stdout' 2>'%s/stderr'", copy, daemon_arg, dir, dir);
        status = system(cmd);
        snprintf(path, sizeof(path), "%s/stdout", dir);
        out = slurp(path);
        snprintf(path, sizeof(path), "%s/stderr", dir);
        err = slurp(path);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 10, "status %#x:\n%s\n%s", status, out, err);
        for (size_t i = 0; i < DP_ARRAY_SIZE(layers); i++) {
                char needle[64];

                snprintf(needle, sizeof(needle), "\n[PASS] %s: ", layers[i]);
                ck_assert_msg(strstr(out, needle), "no '%s' in:\n%s", needle + 1, out);
        }
        ck_assert_msg(strncmp(out, "selftest of a private damon-perfd; workload pid ", 48) == 0, "%s", out);
        ck_assert_ptr_nonnull(strstr(out, " (a child of damonctl), hot area 0x"));
        ck_assert_ptr_nonnull(strstr(out, "\n[PASS] L0 perf_event_open: "));
        ck_assert_ptr_nonnull(strstr(out, "\n[SKIP] DAMON hints: off: [DAMON] Mode=off\n"));
        ck_assert_ptr_nonnull(strstr(out, "\nverdict: PLUMBING-ONLY (exit 10): "));
        teardown();
}
END_TEST

START_TEST(test_usage_and_unreachable) {
        static const struct {
                const char *args[6];
                int status;
                const char *err;
        } cases[] = {
                { { "selftest", "--duration", "0.5" }, 2, "--duration must be at least 1 second" },
                { { "selftest", "--duration", "500ms" }, 2, "--duration must be at least 1 second" },
                { { "selftest", "--duration", "1.5.5" }, 2, "--duration: expected a time span" },
                { { "selftest", "--config", "/etc/damon-perfd.conf" }, 2, "needs --standalone" },
                { { "selftest", "--top", "3" }, 2, "selftest does not take --top" },
                { { "stats", "--standalone" }, 2, "stats does not take --standalone" },
                { { "selftest", "--daemon=" }, 2, "--daemon: expected a file name" },
                /* Nothing listens there: nothing is started either. */
                { { "selftest", "--duration", "1" }, 3, "damon-perfd is not running" },
                /* Time spans as the configuration takes them get as far. */
                { { "selftest", "--duration", "1min 30s" }, 3, "damon-perfd is not running" },
                { { "selftest", "--duration", "1.5" }, 3, "damon-perfd is not running" },
        };

        setup();
        for (size_t i = 0; i < DP_ARRAY_SIZE(cases); i++) {
                struct run r = ctl_collect(dir, ctl_spawn(dir, "unix:/nonexistent/socket", 0, cases[i].args));

                ck_assert_msg(r.status == cases[i].status && strstr(r.err, cases[i].err), "%s %s: exit %d: %s",
                              cases[i].args[0], cases[i].args[1], r.status, r.err);
                run_done(&r);
        }
        teardown();
}
END_TEST

int main(void) {
        Suite *s = suite_create("damonctl-selftest");
        TCase *tc = tcase_create("standalone");

        if (geteuid() != 0) {
                printf("test-damonctl-selftest: needs root for system-wide sampling; skipping\n");
                return 77;
        }
        tcase_set_timeout(tc, 90);
        tcase_add_test(tc, test_standalone_verdict);
        tcase_add_test(tc, test_standalone_text_with_inline_workload);
        tcase_add_test(tc, test_usage_and_unreachable);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
