/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * daemon/log.c: the journal fields of every structured event, the stderr
 * line of a foreground run, and the catalog: every MESSAGE_ID the sources
 * use appears in systemd/damon-perfd.catalog exactly once, with a Subject,
 * Defined-By and Support, and only @FIELD@s its event carries.
 */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "log.h"

#include "check-main.h"

#define ENTRY_FIELDS_MAX 16
#define ENTRIES_MAX 32

struct captured {
        char field[ENTRY_FIELDS_MAX][512];
        size_t n;
};

static struct captured entries[ENTRIES_MAX];
static size_t n_entries;

static void capture(const struct iovec *iov, size_t n) {
        struct captured *c;

        ck_assert_uint_lt(n_entries, ENTRIES_MAX);
        ck_assert_uint_le(n, ENTRY_FIELDS_MAX);
        c = &entries[n_entries++];
        c->n = n;
        for (size_t i = 0; i < n; i++) {
                ck_assert_uint_lt(iov[i].iov_len, sizeof(c->field[i]));
                memcpy(c->field[i], iov[i].iov_base, iov[i].iov_len);
                c->field[i][iov[i].iov_len] = '\0';
        }
}

/* The value of @name in @c, NULL if absent; a field twice is a failure. */
static const char *field(const struct captured *c, const char *name) {
        const char *found = NULL;
        size_t len = strlen(name);

        for (size_t i = 0; i < c->n; i++)
                if (strncmp(c->field[i], name, len) == 0 && c->field[i][len] == '=') {
                        ck_assert_msg(!found, "field %s twice", name);
                        found = c->field[i] + len + 1;
                }
        return found;
}

static void assert_field(const struct captured *c, const char *name, const char *value) {
        const char *v = field(c, name);

        ck_assert_msg(v, "field %s missing", name);
        ck_assert_str_eq(v, value);
}

/* From here to capture_end(), every entry at every level is captured. */
static void capture_begin(void) {
        n_entries = 0;
        log_set_max_level(LOG_DEBUG);
        log_set_journal_sink(capture);
}

static void capture_end(void) {
        log_set_journal_sink(NULL);
}

/* Every event kind once, captured. */
static void emit_all(void) {
        capture_begin();
        log_started("1.2.3");
        log_ready("pagefault", 3, 4);
        log_reloading();
        log_stopping("duration reached");
        log_stopped(0);
        log_cpu_transition(7, DP_CPU_BOUND, DP_CPU_ERROR, DP_STEP_ENABLE, -EACCES, "software");
        log_source_selected("ibs", true, "ibs_op present");
        log_samples_lost(2, 10, 3, 300, 10);
        log_tracker_stalled(12000, 30000000);
        log_tracker_recovered(15000);
        log_damon_role("observe_only", -1, "kdamond 0 is running (pid 9) and is not ours: observe only");
        log_damon_error("commit", "/sys/kernel/mm/damon/admin/kdamonds/0/state", EINVAL, 0, 1);
        log_damon_restored("owned", 0, 0);
        capture_end();
}

static const struct captured *find_entry(const char *message_id) {
        const struct captured *found = NULL;

        for (size_t i = 0; i < n_entries; i++) {
                const char *id = field(&entries[i], "MESSAGE_ID");

                if (id && strcmp(id, message_id) == 0) {
                        ck_assert_msg(!found, "two entries with MESSAGE_ID %s", message_id);
                        found = &entries[i];
                }
        }
        ck_assert_msg(found, "no entry with MESSAGE_ID %s", message_id);
        return found;
}

START_TEST(test_every_entry_has_the_common_fields) {
        emit_all();
        ck_assert_uint_eq(n_entries, 13);
        for (size_t i = 0; i < n_entries; i++) {
                const char *id = field(&entries[i], "MESSAGE_ID"), *message = field(&entries[i], "MESSAGE");
                const char *priority = field(&entries[i], "PRIORITY");

                ck_assert_ptr_nonnull(message);
                ck_assert_msg(message[0], "empty MESSAGE");
                ck_assert_ptr_nonnull(id);
                ck_assert_uint_eq(strlen(id), 32);
                ck_assert_ptr_nonnull(priority);
                ck_assert_msg(strlen(priority) == 1 && priority[0] >= '0' && priority[0] <= '7', "PRIORITY=%s",
                              priority);
                assert_field(&entries[i], "SYSLOG_IDENTIFIER", "damon-perfd");
        }
}
END_TEST

START_TEST(test_cpu_transition_fields) {
        const struct captured *c;

        emit_all();
        c = find_entry(LOG_MESSAGE_CPU_STATE);
        assert_field(c, "PRIORITY", "3");
        assert_field(c, "DAMON_PERFD_CPU", "7");
        assert_field(c, "DAMON_PERFD_STATE", "error");
        assert_field(c, "DAMON_PERFD_PREV_STATE", "bound");
        assert_field(c, "DAMON_PERFD_ERRNO", "13");
        assert_field(c, "DAMON_PERFD_STEP", dp_cpu_step_name(DP_STEP_ENABLE));
        assert_field(c, "DAMON_PERFD_PMU", "software");
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "CPU7: BOUND -> ERROR"));
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), strerror(EACCES)));
}
END_TEST

START_TEST(test_damon_event_fields) {
        const struct captured *c;

        emit_all();
        c = find_entry(LOG_MESSAGE_DAMON_ROLE);
        assert_field(c, "DAMON_PERFD_DAMON_ROLE", "observe_only");
        assert_field(c, "DAMON_PERFD_KDAMOND", "-1");
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "is not ours: observe only"));
        c = find_entry(LOG_MESSAGE_DAMON_ERROR);
        assert_field(c, "PRIORITY", "4");
        assert_field(c, "DAMON_PERFD_DAMON_STEP", "commit");
        assert_field(c, "DAMON_PERFD_ERRNO", "22");
        assert_field(c, "DAMON_PERFD_COUNT", "1");
        assert_field(c, "DAMON_PERFD_SYSFS_PATH", "/sys/kernel/mm/damon/admin/kdamonds/0/state");
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"),
                                     "commit failed: /sys/kernel/mm/damon/admin/kdamonds/0/state: Invalid argument"));
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "retrying with backoff"));
        c = find_entry(LOG_MESSAGE_DAMON_RESTORED);
        assert_field(c, "DAMON_PERFD_ERRNO", "0");
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "restored owned kdamond 0"));
}
END_TEST

/* A kdamond someone restarted with their own settings is left to them: a
 * notice that says so, not an error. */
START_TEST(test_damon_taken_over_is_a_notice) {
        const struct captured *c;

        capture_begin();
        log_damon_restored("owned", 0, EEXIST);
        capture_end();
        c = find_entry(LOG_MESSAGE_DAMON_RESTORED);
        assert_field(c, "PRIORITY", "5");
        assert_field(c, "DAMON_PERFD_ERRNO", "17");
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "left owned kdamond 0 as it is"));
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "someone restarted it"));
}
END_TEST

/* EBUSY is DAMON's lock held by another writer, retried soon: a notice. */
START_TEST(test_damon_busy_is_a_notice) {
        const struct captured *c;

        capture_begin();
        log_damon_error("state", "/sys/kernel/mm/damon/admin/kdamonds/0/state", EBUSY, 0, 1);
        capture_end();
        c = find_entry(LOG_MESSAGE_DAMON_ERROR);
        assert_field(c, "PRIORITY", "5");
        assert_field(c, "DAMON_PERFD_DAMON_STEP", "state");
        assert_field(c, "DAMON_PERFD_ERRNO", "16");
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"),
                                     "state busy: /sys/kernel/mm/damon/admin/kdamonds/0/state: Device or resource busy"));
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "retrying shortly"));
}
END_TEST

START_TEST(test_other_event_fields) {
        const struct captured *c;

        emit_all();
        c = find_entry(LOG_MESSAGE_SOURCE_SELECTED);
        assert_field(c, "DAMON_PERFD_SOURCE", "ibs");
        assert_field(c, "DAMON_PERFD_HARDWARE", "1");
        ck_assert_ptr_nonnull(strstr(field(c, "MESSAGE"), "ibs_op present"));

        c = find_entry(LOG_MESSAGE_SAMPLES_LOST);
        assert_field(c, "PRIORITY", "4");
        assert_field(c, "DAMON_PERFD_CPU", "2");
        assert_field(c, "DAMON_PERFD_OVERFLOW", "10");
        assert_field(c, "DAMON_PERFD_LOST", "3");
        assert_field(c, "DAMON_PERFD_LOST_SAMPLES", "300");
        assert_field(c, "DAMON_PERFD_INTERVAL_SEC", "10");

        c = find_entry(LOG_MESSAGE_READY);
        assert_field(c, "DAMON_PERFD_SOURCE", "pagefault");
        assert_field(c, "DAMON_PERFD_CPUS_RUNNING", "3");
        assert_field(c, "DAMON_PERFD_CPUS_TOTAL", "4");

        c = find_entry(LOG_MESSAGE_TRACKER_STALLED);
        assert_field(c, "PRIORITY", "3");
        assert_field(c, "DAMON_PERFD_STALL_MSEC", "12000");
        assert_field(c, "DAMON_PERFD_WATCHDOG_USEC", "30000000");

        assert_field(find_entry(LOG_MESSAGE_STARTED), "DAMON_PERFD_VERSION", "1.2.3");
        assert_field(find_entry(LOG_MESSAGE_STOPPING), "DAMON_PERFD_REASON", "duration reached");
        assert_field(find_entry(LOG_MESSAGE_STOPPED), "DAMON_PERFD_ERRNO", "0");
        assert_field(find_entry(LOG_MESSAGE_TRACKER_RECOVERED), "DAMON_PERFD_STALL_MSEC", "15000");
        ck_assert_ptr_nonnull(find_entry(LOG_MESSAGE_RELOADING));
}
END_TEST

START_TEST(test_max_level_filters) {
        n_entries = 0;
        log_set_journal_sink(capture);
        log_set_max_level(LOG_WARNING);
        log_cpu_transition(1, DP_CPU_ENABLED, DP_CPU_RUNNING, DP_STEP_NONE, 0, "x");
        log_info("not shown");
        ck_assert_uint_eq(n_entries, 0);
        log_samples_lost(1, 1, 0, 0, 10);
        log_error("shown: %d", 42);
        ck_assert_uint_eq(n_entries, 2);
        assert_field(&entries[1], "MESSAGE", "shown: 42");
        ck_assert_ptr_null(field(&entries[1], "MESSAGE_ID"));
        log_set_journal_sink(NULL);
        log_set_max_level(LOG_INFO);
}
END_TEST

/* log_*_errno(): the message names the error (%m), the error comes back
 * negative, even when the level filters the entry out, and the caller's
 * errno is left alone. */
START_TEST(test_errno_helpers) {
        char expected[256];

        capture_begin();
        errno = EAGAIN;
        ck_assert_int_eq(log_error_errno(-ENOENT, "cannot open %s: %m", "x.conf"), -ENOENT);
        ck_assert_int_eq(errno, EAGAIN);
        ck_assert_int_eq(log_warning_errno(EACCES, "plain errno: %m"), -EACCES);
        log_set_max_level(LOG_INFO);
        ck_assert_int_eq(log_debug_errno(-EIO, "filtered out: %m"), -EIO);
        ck_assert_int_eq(errno, EAGAIN);
        capture_end();

        ck_assert_uint_eq(n_entries, 2);
        snprintf(expected, sizeof(expected), "cannot open x.conf: %s", strerror(ENOENT));
        assert_field(&entries[0], "MESSAGE", expected);
        assert_field(&entries[0], "PRIORITY", "3");
        ck_assert_ptr_null(field(&entries[0], "MESSAGE_ID"));
        snprintf(expected, sizeof(expected), "plain errno: %s", strerror(EACCES));
        assert_field(&entries[1], "MESSAGE", expected);
        assert_field(&entries[1], "PRIORITY", "4");
}
END_TEST

/* In a foreground run (stderr not the journal) the same events are lines on stderr. */
START_TEST(test_foreground_lines) {
        char path[] = "/tmp/dp-test-log-XXXXXX", text[1024];
        int fd = mkstemp(path), saved = dup(STDERR_FILENO);
        ssize_t n;

        ck_assert_int_ge(fd, 0);
        ck_assert_int_ge(saved, 0);
        unsetenv("JOURNAL_STREAM");
        log_setup();
        log_set_max_level(LOG_INFO);
        ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
        log_cpu_transition(3, DP_CPU_ENABLED, DP_CPU_RUNNING, DP_STEP_NONE, 0, "software");
        log_source_selected("pagefault", false, "nothing better");
        fflush(stderr);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        n = pread(fd, text, sizeof(text) - 1, 0);
        close(fd);
        unlink(path);
        ck_assert_int_gt(n, 0);
        text[n] = '\0';
        ck_assert_str_eq(text, "damon-perfd: info: CPU3: ENABLED -> RUNNING\n"
                               "damon-perfd: notice: sample source (not hardware memory sampling): nothing better\n");
}
END_TEST

static char *read_text(const char *dir, const char *name) {
        char path[4096];
        FILE *f;
        char *text;
        long size;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "re");
        ck_assert_msg(f, "cannot open %s", path);
        ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
        size = ftell(f);
        ck_assert_int_gt(size, 0);
        rewind(f);
        text = malloc((size_t) size + 1);
        ck_assert_ptr_nonnull(text);
        ck_assert_uint_eq(fread(text, 1, (size_t) size, f), (size_t) size);
        text[size] = '\0';
        fclose(f);
        return text;
}

static bool is_id_at(const char *p) {
        for (size_t i = 0; i < 32; i++)
                if (!isxdigit((unsigned char) p[i]) || isupper((unsigned char) p[i]))
                        return false;
        return !isxdigit((unsigned char) p[32]);
}

/* The catalog entry of @id: its text up to the next "-- " header, or NULL. */
static char *catalog_entry(const char *catalog, const char *id) {
        char header[64];
        const char *start, *end;
        size_t count = 0;

        snprintf(header, sizeof(header), "\n-- %s\n", id);
        for (const char *p = catalog; (p = strstr(p, header)); p++)
                count++;
        ck_assert_msg(count == 1, "MESSAGE_ID %s is in the catalog %zu times", id, count);
        start = strstr(catalog, header) + strlen(header);
        end = strstr(start, "\n-- ");
        return strndup(start, end ? (size_t) (end - start + 1) : strlen(start));
}

START_TEST(test_catalog_covers_every_message_id) {
        const char *catalog_path = getenv("DP_CATALOG"), *source_dir = getenv("DP_DAEMON_SOURCES");
        const char *sources[] = { "log.h", "log.c" };
        char *catalog, *dir;
        size_t ids_in_sources = 0, ids_in_catalog = 0;

        ck_assert_msg(catalog_path && source_dir, "DP_CATALOG and DP_DAEMON_SOURCES must be set");
        dir = strdup(catalog_path);
        *strrchr(dir, '/') = '\0';
        catalog = read_text(dir, strrchr(catalog_path, '/') + 1);
        free(dir);

        /* Every ID the sources name, wherever it is written. */
        for (size_t s = 0; s < DP_ARRAY_SIZE(sources); s++) {
                char *text = read_text(source_dir, sources[s]);

                for (const char *p = text; *p; p++) {
                        char id[33], *entry;

                        if ((p != text && isxdigit((unsigned char) p[-1])) || !is_id_at(p))
                                continue;
                        memcpy(id, p, 32);
                        id[32] = '\0';
                        entry = catalog_entry(catalog, id);
                        ck_assert_msg(strstr(entry, "\nSubject: ") == NULL && strncmp(entry, "Subject: ", 9) == 0,
                                      "%s: Subject must come first", id);
                        ck_assert_msg(strstr(entry, "\nDefined-By: damon-perfd\n"), "%s: no Defined-By", id);
                        ck_assert_msg(strstr(entry, "\nSupport: "), "%s: no Support", id);
                        ck_assert_msg(strstr(entry, "\n\n") && strlen(strstr(entry, "\n\n")) > 20, "%s: no body", id);
                        free(entry);
                        ids_in_sources++;
                        p += 31;
                }
                free(text);
        }
        ck_assert_uint_eq(ids_in_sources, 13);

        /* ... and nothing else in the catalog. */
        for (const char *p = catalog; (p = strstr(p, "\n-- ")); p++) {
                ck_assert_msg(is_id_at(p + 4), "malformed header at catalog offset %td", p - catalog);
                ids_in_catalog++;
        }
        ck_assert_uint_eq(ids_in_catalog, ids_in_sources);
        free(catalog);
}
END_TEST

/* Every @FIELD@ in an entry is a field its event really carries: else
 * journalctl -x would show it verbatim. */
START_TEST(test_catalog_fields_exist) {
        const char *catalog_path = getenv("DP_CATALOG");
        char *catalog, *dir;

        ck_assert_ptr_nonnull(catalog_path);
        dir = strdup(catalog_path);
        *strrchr(dir, '/') = '\0';
        catalog = read_text(dir, strrchr(catalog_path, '/') + 1);
        free(dir);

        emit_all();
        for (size_t i = 0; i < n_entries; i++) {
                const char *id = field(&entries[i], "MESSAGE_ID");
                char *entry = catalog_entry(catalog, id);
                size_t substitutions = 0;

                for (char *p = strchr(entry, '@'); p; p = strchr(p + 1, '@')) {
                        char *close = strchr(p + 1, '@');
                        char name[128];

                        ck_assert_msg(close, "%s: unpaired @", id);
                        ck_assert_uint_lt((size_t) (close - p - 1), sizeof(name));
                        memcpy(name, p + 1, (size_t) (close - p - 1));
                        name[close - p - 1] = '\0';
                        ck_assert_msg(field(&entries[i], name), "%s: @%s@ is not a field of the event", id, name);
                        substitutions++;
                        p = close;
                }
                if (strcmp(id, LOG_MESSAGE_RELOADING) != 0)
                        ck_assert_msg(substitutions > 0, "%s: no @FIELD@ in the entry", id);
                free(entry);
        }
        free(catalog);
}
END_TEST

/* journalctl's own parser accepts the file, when journalctl is here. */
START_TEST(test_journalctl_accepts_catalog) {
        const char *catalog_path = getenv("DP_CATALOG");
        char root[] = "/tmp/dp-test-catalog-XXXXXX", cmd[8192], line[256];
        size_t listed = 0;
        FILE *p;

        ck_assert_ptr_nonnull(catalog_path);
        if (access("/usr/bin/journalctl", X_OK) < 0 && access("/bin/journalctl", X_OK) < 0)
                return;
        ck_assert_ptr_nonnull(mkdtemp(root));
        snprintf(cmd, sizeof(cmd),
                 "mkdir -p %1$s/usr/lib/systemd/catalog && cp '%2$s' %1$s/usr/lib/systemd/catalog/ && "
                 "journalctl --root=%1$s --update-catalog 2>&1 && journalctl --root=%1$s --list-catalog",
                 root, catalog_path);
        p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        while (fgets(line, sizeof(line), p))
                if (strstr(line, " damon-perfd: "))
                        listed++;
        ck_assert_int_eq(pclose(p), 0);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        ck_assert_int_eq(system(cmd), 0);
        ck_assert_uint_eq(listed, 13);
}
END_TEST

int main(void) {
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("journal");

        tcase_add_test(tc, test_every_entry_has_the_common_fields);
        tcase_add_test(tc, test_cpu_transition_fields);
        tcase_add_test(tc, test_damon_event_fields);
        tcase_add_test(tc, test_damon_busy_is_a_notice);
        tcase_add_test(tc, test_damon_taken_over_is_a_notice);
        tcase_add_test(tc, test_other_event_fields);
        tcase_add_test(tc, test_max_level_filters);
        tcase_add_test(tc, test_errno_helpers);
        tcase_add_test(tc, test_foreground_lines);
        suite_add_tcase(s, tc);
        tc = tcase_create("catalog");
        tcase_add_test(tc, test_catalog_covers_every_message_id);
        tcase_add_test(tc, test_catalog_fields_exist);
        tcase_add_test(tc, test_journalctl_accepts_catalog);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
