/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config-file.h"
#include "cpu-list.h"
#include "macro.h"
#include "time-util.h"

void dp_config_defaults(struct dp_config *c) {
        dp_config_init(c);
        strcpy(c->api_socket, DP_CONFIG_DEFAULT_SOCKET);
}

/* ---- values ---- */

static int parse_whole(const char *v, uint64_t min, uint64_t max, uint64_t *ret) {
        unsigned long long n;
        char *end;

        if (!isdigit((unsigned char) v[0]))
                return -EINVAL;
        errno = 0;
        n = strtoull(v, &end, 10);
        if (errno || *end || n < min || n > max)
                return -EINVAL;
        *ret = n;
        return 0;
}

static bool is_pow2(uint64_t v) {
        return v && !(v & (v - 1));
}

/* Each key's parser: 0, or -EINVAL with what was expected. */
typedef int (*key_parser_t)(struct dp_config *c, const char *v, const char **expected);

static int parse_source(struct dp_config *c, const char *v, const char **expected) {
        static const char *const names[] = { "auto", "ibs", "pebs", "spe", "pagefault" };
        bool ok = false;

        *expected = "expected auto, ibs, pebs, spe, pagefault or event:<libpfm event>";
        if (strncmp(v, "event:", 6) == 0) {
                ok = v[6] != '\0';
                for (const char *p = v; *p; p++)
                        if (!isgraph((unsigned char) *p))
                                ok = false;
        } else if (*v == '\0')
                ok = true;              /* reset to the default */
        else
                for (size_t i = 0; i < DP_ARRAY_SIZE(names); i++)
                        ok = ok || strcmp(v, names[i]) == 0;
        if (!ok || strlen(v) >= sizeof(c->source))
                return -EINVAL;
        strcpy(c->source, *v ? v : "auto");
        return 0;
}

static int parse_cpus(struct dp_config *c, const char *v, const char **expected) {
        struct dp_cpu_list *list;
        int r = 0;

        *expected = "expected a CPU list such as 0-3,8 (empty: every online CPU)";
        if (strlen(v) >= sizeof(c->cpus))
                return -EINVAL;
        if (*v) {
                /* Too big for the stack (16 KiB), and this is no hot path. */
                list = malloc(sizeof(*list));
                if (!list)
                        return -ENOMEM;
                r = dp_cpu_list_parse(v, list);
                free(list);
                if (r < 0 || strchr(v, ' ') || strchr(v, '\t'))
                        return -EINVAL;
        }
        strcpy(c->cpus, v);
        return 0;
}

static int parse_sample_period(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a whole number of events between 1 and 9223372036854775807 "
                    "(0 or empty: the source's default)";
        if (*v == '\0') {
                c->sample_period = 0;
                return 0;
        }
        return parse_whole(v, 0, UINT64_MAX >> 1, &c->sample_period);
}

static int parse_pow2_u32(const char *v, uint32_t min, uint32_t max, uint32_t *ret) {
        uint64_t n;

        if (parse_whole(v, min, max, &n) < 0 || !is_pow2(n))
                return -EINVAL;
        *ret = (uint32_t) n;
        return 0;
}

static int parse_ring_pages(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a power of two between 1 and 65536";
        return parse_pow2_u32(v, 1, 65536, &c->ring_pages);
}

static int parse_queue_size(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a power of two between 64 and 16777216";
        return parse_pow2_u32(v, 64, 1u << 24, &c->queue_capacity);
}

static int parse_span(const char *v, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t us;

        if (dp_timespan_parse(v, &us) < 0 || us < min || us > max)
                return -EINVAL;
        *ret = us;
        return 0;
}

static int parse_poll_interval(struct dp_config *c, const char *v, const char **expected) {
        uint64_t us;

        *expected = "expected a time span of whole milliseconds between 1ms and 10s";
        if (parse_span(v, USEC_PER_MSEC, 10 * USEC_PER_SEC, &us) < 0 || us % USEC_PER_MSEC)
                return -EINVAL;
        c->poll_ms = (uint32_t) (us / USEC_PER_MSEC);
        return 0;
}

static int parse_targets(struct dp_config *c, const char *v, const char **expected) {
        uint32_t pids[DP_CONFIG_MAX_PIDS];
        size_t n = 0;
        const char *p = v;

        *expected = "expected all, physical, or up to 64 space-separated process IDs";
        if (*v == '\0' || strcmp(v, "all") == 0) {
                c->target_mode = DP_TARGETS_ALL;
                c->n_pids = 0;
                return 0;
        }
        if (strcmp(v, "physical") == 0) {
                c->target_mode = DP_TARGETS_PHYS;
                c->n_pids = 0;
                return 0;
        }
        while (*p) {
                char word[24];
                size_t len = strcspn(p, " \t");
                uint64_t pid;

                if (len >= sizeof(word) || n >= DP_CONFIG_MAX_PIDS)
                        return -EINVAL;
                memcpy(word, p, len);
                word[len] = '\0';
                if (parse_whole(word, 1, INT_MAX, &pid) < 0)
                        return -EINVAL;
                pids[n++] = (uint32_t) pid;
                p += len;
                p += strspn(p, " \t");
        }
        memcpy(c->pids, pids, n * sizeof(pids[0]));
        c->n_pids = n;
        c->target_mode = DP_TARGETS_PIDS;
        return 0;
}

static int parse_max_targets(struct dp_config *c, const char *v, const char **expected) {
        uint64_t n;

        *expected = "expected a whole number between 1 and 65536";
        if (parse_whole(v, 1, 65536, &n) < 0)
                return -EINVAL;
        c->max_targets = (uint32_t) n;
        return 0;
}

static int parse_regions(const char *v, uint32_t *ret, const char **expected) {
        uint64_t n;

        *expected = "expected a whole number between 3 and 1048576";
        if (parse_whole(v, 3, 1u << 20, &n) < 0)
                return -EINVAL;
        *ret = (uint32_t) n;
        return 0;
}

static int parse_min_regions(struct dp_config *c, const char *v, const char **expected) {
        return parse_regions(v, &c->min_nr_regions, expected);
}

static int parse_max_regions(struct dp_config *c, const char *v, const char **expected) {
        return parse_regions(v, &c->max_nr_regions, expected);
}

static int parse_sample_interval(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a time span between 1us and 1min";
        return parse_span(v, 1, USEC_PER_MINUTE, &c->sample_interval_us);
}

static int parse_aggr_interval(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a time span between 1us and 1h";
        return parse_span(v, 1, USEC_PER_HOUR, &c->aggr_interval_us);
}

static int parse_maps_refresh(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a time span between 1us and 24h";
        return parse_span(v, 1, 24 * USEC_PER_HOUR, &c->maps_refresh_us);
}

static int parse_socket(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected an absolute socket path of at most 107 bytes (empty: the default)";
        if (*v == '\0')
                v = DP_CONFIG_DEFAULT_SOCKET;
        if (v[0] != '/' || strlen(v) >= sizeof(c->api_socket))
                return -EINVAL;
        strcpy(c->api_socket, v);
        return 0;
}

static int parse_socket_group(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a group name or number of at most 63 bytes (empty: root's group)";
        if (strlen(v) >= sizeof(c->api_socket_group) || v[0] == '-')
                return -EINVAL;
        for (const char *p = v; *p; p++)
                if (!isalnum((unsigned char) *p) && !strchr("_-.$", *p))
                        return -EINVAL;
        strcpy(c->api_socket_group, v);
        return 0;
}

static int parse_damon_mode(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected own, attach or off";
        if (strcmp(v, "own") == 0 || *v == '\0')
                c->damon_mode = DP_DAMON_OWN;
        else if (strcmp(v, "attach") == 0)
                c->damon_mode = DP_DAMON_ATTACH;
        else if (strcmp(v, "off") == 0)
                c->damon_mode = DP_DAMON_OFF;
        else
                return -EINVAL;
        return 0;
}

static int parse_abs_path(const char *v, const char *dflt, char *out, size_t size) {
        if (*v == '\0')
                v = dflt;
        if (v[0] != '/' || strlen(v) >= size || strstr(v, "/../") || strchr(v, '\n'))
                return -EINVAL;
        memcpy(out, v, strlen(v) + 1);
        return 0;
}

static int parse_damon_root(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected an absolute directory path of at most 255 bytes (empty: the default)";
        return parse_abs_path(v, DP_CONFIG_DEFAULT_DAMON_ROOT, c->damon_root, sizeof(c->damon_root));
}

static int parse_damon_state_file(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected an absolute file path of at most 255 bytes (empty: the default)";
        return parse_abs_path(v, DP_CONFIG_DEFAULT_DAMON_STATE, c->damon_state_file,
                              sizeof(c->damon_state_file));
}

static int parse_damon_kdamond(struct dp_config *c, const char *v, const char **expected) {
        uint64_t n;

        *expected = "expected a kdamond index between 0 and 65535 (empty: none)";
        if (*v == '\0') {
                c->damon_kdamond = -1;
                return 0;
        }
        if (parse_whole(v, 0, 65535, &n) < 0)
                return -EINVAL;
        c->damon_kdamond = (int32_t) n;
        return 0;
}

static int parse_damon_context(struct dp_config *c, const char *v, const char **expected) {
        uint64_t n;

        *expected = "expected a context index between 0 and 65535";
        if (parse_whole(v, 0, 65535, &n) < 0)
                return -EINVAL;
        c->damon_context = (uint32_t) n;
        return 0;
}

static int parse_damon_hint_interval(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected a time span between 100ms and 1h";
        return parse_span(v, 100 * USEC_PER_MSEC, USEC_PER_HOUR, &c->damon_hint_interval_us);
}

static int parse_damon_max_targets(struct dp_config *c, const char *v, const char **expected) {
        uint64_t n;

        *expected = "expected a whole number between 1 and 64";
        if (parse_whole(v, 1, 64, &n) < 0)
                return -EINVAL;
        c->damon_max_targets = (uint32_t) n;
        return 0;
}

static int parse_damon_goal(struct dp_config *c, const char *v, const char **expected) {
        *expected = "expected none or hot-fraction";
        if (*v == '\0' || strcmp(v, "none") == 0)
                c->damon_goal = DP_DAMON_GOAL_NONE;
        else if (strcmp(v, "hot-fraction") == 0)
                c->damon_goal = DP_DAMON_GOAL_HOT_FRACTION;
        else
                return -EINVAL;
        return 0;
}

static int parse_damon_goal_target(struct dp_config *c, const char *v, const char **expected) {
        uint64_t n;

        *expected = "expected a whole number between 1 and 10000 (hot-fraction is in 1/10000)";
        if (parse_whole(v, 1, 10000, &n) < 0)
                return -EINVAL;
        c->damon_goal_target = (uint32_t) n;
        return 0;
}

static const struct {
        const char *section, *key;
        key_parser_t parse;
} config_keys[] = {
        { "Sampling", "Source", parse_source },
        { "Sampling", "CPUs", parse_cpus },
        { "Sampling", "SamplePeriod", parse_sample_period },
        { "Sampling", "RingPages", parse_ring_pages },
        { "Sampling", "QueueSize", parse_queue_size },
        { "Sampling", "PollIntervalSec", parse_poll_interval },
        { "Tracking", "Targets", parse_targets },
        { "Tracking", "MaxTargets", parse_max_targets },
        { "Tracking", "MinRegions", parse_min_regions },
        { "Tracking", "MaxRegions", parse_max_regions },
        { "Tracking", "SampleIntervalSec", parse_sample_interval },
        { "Tracking", "AggregationIntervalSec", parse_aggr_interval },
        { "Tracking", "MapsRefreshSec", parse_maps_refresh },
        { "DAMON", "Mode", parse_damon_mode },
        { "DAMON", "SysfsRoot", parse_damon_root },
        { "DAMON", "StateFile", parse_damon_state_file },
        { "DAMON", "Kdamond", parse_damon_kdamond },
        { "DAMON", "Context", parse_damon_context },
        { "DAMON", "HintIntervalSec", parse_damon_hint_interval },
        { "DAMON", "MaxTargets", parse_damon_max_targets },
        { "DAMON", "QuotaGoal", parse_damon_goal },
        { "DAMON", "QuotaGoalTarget", parse_damon_goal_target },
        { "API", "Socket", parse_socket },
        { "API", "SocketGroup", parse_socket_group },
};

static const char *const known_sections[] = { "Sampling", "Tracking", "API", "DAMON" };

/* ---- the parser ---- */

struct parse_state {
        const char *file_name;
        unsigned line;
        dp_config_report_t report;
        void *userdata;
        bool failed;
};

_Pragma("GCC diagnostic push")
_Pragma("GCC diagnostic ignored \"-Wformat-nonliteral\"")
static void __attribute__((format(printf, 3, 4)))
say(struct parse_state *s, enum dp_config_severity severity, const char *fmt, ...) {
        char message[1024];
        int k;
        va_list ap;

        if (s->line > 0)
                k = snprintf(message, sizeof(message), "%s:%u: ", s->file_name, s->line);
        else
                k = snprintf(message, sizeof(message), "%s: ", s->file_name);
        if (k < 0 || (size_t) k >= sizeof(message))
                k = 0;
        va_start(ap, fmt);
        vsnprintf(message + k, sizeof(message) - (size_t) k, fmt, ap);
        va_end(ap);
        if (severity == DP_CONFIG_ERROR)
                s->failed = true;
        if (s->report)
                s->report(severity, message, s->userdata);
}
_Pragma("GCC diagnostic pop")

static char *strip(char *p) {
        char *end;

        while (isspace((unsigned char) *p))
                p++;
        end = p + strlen(p);
        while (end > p && isspace((unsigned char) end[-1]))
                *--end = '\0';
        return p;
}

/* Returns the known section's name, or NULL (after a warning or error). */
static const char *parse_section(struct parse_state *s, char *line) {
        size_t len = strlen(line);

        if (len < 3 || line[len - 1] != ']') {
                say(s, DP_CONFIG_ERROR, "expected a section header such as [Sampling], got '%s'", line);
                return NULL;
        }
        line[len - 1] = '\0';
        for (size_t i = 0; i < DP_ARRAY_SIZE(known_sections); i++)
                if (strcmp(line + 1, known_sections[i]) == 0)
                        return known_sections[i];
        say(s, DP_CONFIG_WARNING, "unknown section [%s], ignoring its keys", line + 1);
        return NULL;
}

static int parse_assignment(struct dp_config *c, struct parse_state *s, const char *section, char *line) {
        char *eq = strchr(line, '='), *key, *value;
        const char *expected = NULL;
        int r;

        if (!eq) {
                say(s, DP_CONFIG_ERROR, "expected Key=Value or [Section], got '%s'", line);
                return 0;
        }
        *eq = '\0';
        key = strip(line);
        value = strip(eq + 1);
        if (!*key) {
                say(s, DP_CONFIG_ERROR, "expected a key name before '='");
                return 0;
        }
        if (!section)
                return 0;       /* in an unknown section (warned) or none (errored) */
        for (size_t i = 0; i < DP_ARRAY_SIZE(config_keys); i++) {
                if (strcmp(config_keys[i].section, section) != 0 || strcmp(config_keys[i].key, key) != 0)
                        continue;
                r = config_keys[i].parse(c, value, &expected);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        say(s, DP_CONFIG_ERROR, "%s=%s: %s", key, value, expected);
                return 0;
        }
        say(s, DP_CONFIG_WARNING, "unknown key %s= in section [%s], ignoring", key, section);
        return 0;
}

int dp_config_parse_text(struct dp_config *c, const char *text, size_t size, const char *file_name,
                         dp_config_report_t report, void *userdata) {
        struct parse_state s = { .file_name = file_name ?: "(config)", .report = report, .userdata = userdata };
        const char *section = NULL;
        bool seen_section = false;
        size_t pos = 0;

        while (pos < size) {
                const char *nl = memchr(text + pos, '\n', size - pos);
                size_t len = nl ? (size_t) (nl - (text + pos)) : size - pos;
                _cleanup_free_ char *buf = NULL;
                char *line;
                int r;

                s.line++;
                if (memchr(text + pos, '\0', len)) {
                        say(&s, DP_CONFIG_ERROR, "expected text, found a NUL byte");
                        pos += len + 1;
                        continue;
                }
                buf = strndup(text + pos, len);
                if (!buf)
                        return -ENOMEM;
                pos += len + 1;
                line = strip(buf);
                if (*line == '\0' || *line == '#' || *line == ';')
                        continue;
                if (*line == '[') {
                        section = parse_section(&s, line);
                        seen_section = true;
                        continue;
                }
                if (!seen_section) {
                        say(&s, DP_CONFIG_ERROR, "expected a [Section] header before '%s'", line);
                        continue;
                }
                r = parse_assignment(c, &s, section, line);
                if (r < 0)
                        return r;
        }
        return s.failed ? -EINVAL : 0;
}

/* ---- files ---- */

void dp_config_files_free(char **paths) {
        if (!paths)
                return;
        for (char **p = paths; *p; p++)
                free(*p);
        free(paths);
}

static int cmp_names(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

static bool is_dropin_name(const char *name) {
        size_t len = strlen(name);

        return name[0] != '.' && len > 5 && strcmp(name + len - 5, ".conf") == 0;
}

static int push(char ***array, size_t *n, char *item) {
        char **grown;

        if (!item)
                return -ENOMEM;
        grown = realloc(*array, (*n + 2) * sizeof(char *));
        if (!grown) {
                free(item);
                return -ENOMEM;
        }
        grown[(*n)++] = item;
        grown[*n] = NULL;
        *array = grown;
        return 0;
}

static char *path_join(const char *root, const char *a, const char *b) {
        char *p;

        if (asprintf(&p, "%s%s%s%s", root, a, b ? "/" : "", b ?: "") < 0)
                return NULL;
        return p;
}

int dp_config_files_list(const char *root, const char *main_path, char ***ret_paths,
                         dp_config_report_t report, void *userdata) {
        /* Highest precedence first: an earlier directory masks a later one. */
        static const char *const dirs[] = {
                "/etc/" DP_CONFIG_DROPIN_DIR_NAME,
                "/run/" DP_CONFIG_DROPIN_DIR_NAME,
                "/usr/local/lib/" DP_CONFIG_DROPIN_DIR_NAME,
                "/usr/lib/" DP_CONFIG_DROPIN_DIR_NAME,
        };
        struct parse_state s = { .report = report, .userdata = userdata };
        char **paths = NULL, **names = NULL;
        size_t n_paths = 0, n_names = 0;
        _cleanup_free_ char *main_file = NULL;
        struct stat st;
        int r = 0;

        if (main_path) {
                r = push(&paths, &n_paths, strdup(main_path));
                if (r < 0)
                        return r;
                *ret_paths = paths;
                return 0;
        }
        if (!root || strcmp(root, "/") == 0)
                root = "";

        main_file = path_join(root, DP_CONFIG_MAIN_FILE, NULL);
        if (!main_file)
                return -ENOMEM;
        if (stat(main_file, &st) == 0 || errno != ENOENT)
                r = push(&paths, &n_paths, DP_TAKE_PTR(main_file));
        if (r < 0)
                goto fail;

        /* Collect NAME -> first directory holding it, kept as "NAME\0dir-index". */
        for (size_t d = 0; d < DP_ARRAY_SIZE(dirs); d++) {
                _cleanup_free_ char *dir_path = path_join(root, dirs[d], NULL);
                DIR *dir;
                struct dirent *de;

                if (!dir_path) {
                        r = -ENOMEM;
                        goto fail;
                }
                dir = opendir(dir_path);
                if (!dir) {
                        if (errno == ENOENT || errno == ENOTDIR)
                                continue;
                        r = dp_negative_errno();
                        s.file_name = dir_path;
                        say(&s, DP_CONFIG_ERROR, "cannot read drop-in directory: %s", strerror(-r));
                        goto fail;
                }
                while ((de = readdir(dir))) {
                        bool masked = false;
                        char *entry;

                        if (!is_dropin_name(de->d_name))
                                continue;
                        for (size_t i = 0; i < n_names && !masked; i++)
                                masked = strcmp(names[i], de->d_name) == 0;
                        if (masked)
                                continue;
                        if (asprintf(&entry, "%s%c%zu", de->d_name, '\0', d) < 0)
                                entry = NULL;
                        r = push(&names, &n_names, entry);
                        if (r < 0) {
                                closedir(dir);
                                goto fail;
                        }
                }
                closedir(dir);
        }

        if (n_names > 0)
                qsort(names, n_names, sizeof(char *), cmp_names);
        for (size_t i = 0; i < n_names; i++) {
                const char *name = names[i];
                size_t d = strtoul(name + strlen(name) + 1, NULL, 10);

                r = push(&paths, &n_paths, path_join(root, dirs[d], name));
                if (r < 0)
                        goto fail;
        }
        dp_config_files_free(names);
        if (!paths) {
                paths = calloc(1, sizeof(char *));
                if (!paths)
                        return -ENOMEM;
        }
        *ret_paths = paths;
        return 0;

fail:
        dp_config_files_free(names);
        dp_config_files_free(paths);
        return r;
}

static int read_file(const char *path, char **ret, size_t *ret_size, struct parse_state *s) {
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_free_ char *buf = NULL;
        size_t n;

        s->file_name = path;
        f = fopen(path, "re");
        if (!f) {
                int r = dp_negative_errno();

                say(s, DP_CONFIG_ERROR, "cannot open: %s", strerror(-r));
                return r;
        }
        buf = malloc(DP_CONFIG_MAX_FILE_SIZE + 1);
        if (!buf)
                return -ENOMEM;
        n = fread(buf, 1, DP_CONFIG_MAX_FILE_SIZE + 1, f);
        if (ferror(f)) {
                say(s, DP_CONFIG_ERROR, "cannot read: %s", strerror(errno ?: EIO));
                return -EIO;
        }
        if (n > DP_CONFIG_MAX_FILE_SIZE) {
                say(s, DP_CONFIG_ERROR, "larger than %d bytes, refusing", DP_CONFIG_MAX_FILE_SIZE);
                return -EFBIG;
        }
        *ret = DP_TAKE_PTR(buf);
        *ret_size = n;
        return 0;
}

int dp_config_load(struct dp_config *c, const char *root, const char *main_path,
                   dp_config_report_t report, void *userdata) {
        struct parse_state s = { .report = report, .userdata = userdata };
        struct dp_config parsed;
        char **paths = NULL;
        const char *why;
        int r, result = 0;

        dp_config_defaults(&parsed);
        r = dp_config_files_list(root, main_path, &paths, report, userdata);
        if (r < 0)
                return r;
        for (char **p = paths; *p; p++) {
                _cleanup_free_ char *text = NULL;
                size_t size;

                r = read_file(*p, &text, &size, &s);
                if (r == -ENOMEM) {
                        result = r;
                        break;
                }
                if (r == 0)
                        r = dp_config_parse_text(&parsed, text, size, *p, report, userdata);
                /* Keep going: every file's problems are reported at once. */
                if (r < 0 && result == 0)
                        result = r;
        }
        dp_config_files_free(paths);
        if (result < 0)
                return result;
        if (dp_config_validate(&parsed, &why) < 0) {
                s.file_name = main_path ?: "configuration";
                say(&s, DP_CONFIG_ERROR, "invalid combination of settings: %s", why);
                return -EINVAL;
        }
        *c = parsed;
        return 0;
}

/* ---- printing ---- */

static void print_span(FILE *f, const char *key, uint64_t usec) {
        char buf[128];

        if (dp_timespan_format(usec, buf, sizeof(buf)) < 0)
                snprintf(buf, sizeof(buf), "%lluus", (unsigned long long) usec);
        fprintf(f, "%s=%s\n", key, buf);
}

int dp_config_format(const struct dp_config *c, FILE *f) {
        fprintf(f, "[Sampling]\n");
        fprintf(f, "Source=%s\n", c->source);
        fprintf(f, "CPUs=%s\n", c->cpus);
        fprintf(f, "SamplePeriod=%llu\n", (unsigned long long) c->sample_period);
        fprintf(f, "RingPages=%u\n", c->ring_pages);
        fprintf(f, "QueueSize=%u\n", c->queue_capacity);
        print_span(f, "PollIntervalSec", (uint64_t) c->poll_ms * USEC_PER_MSEC);

        fprintf(f, "\n[Tracking]\nTargets=");
        if (c->target_mode == DP_TARGETS_ALL)
                fprintf(f, "all");
        else if (c->target_mode == DP_TARGETS_PHYS)
                fprintf(f, "physical");
        else
                for (size_t i = 0; i < c->n_pids && i < DP_CONFIG_MAX_PIDS; i++)
                        fprintf(f, "%s%u", i ? " " : "", c->pids[i]);
        fprintf(f, "\nMaxTargets=%u\n", c->max_targets);
        fprintf(f, "MinRegions=%u\n", c->min_nr_regions);
        fprintf(f, "MaxRegions=%u\n", c->max_nr_regions);
        print_span(f, "SampleIntervalSec", c->sample_interval_us);
        print_span(f, "AggregationIntervalSec", c->aggr_interval_us);
        print_span(f, "MapsRefreshSec", c->maps_refresh_us);

        fprintf(f, "\n[DAMON]\n");
        fprintf(f, "Mode=%s\n", c->damon_mode == DP_DAMON_OFF ? "off" :
                                c->damon_mode == DP_DAMON_ATTACH ? "attach" : "own");
        fprintf(f, "SysfsRoot=%s\n", c->damon_root);
        fprintf(f, "StateFile=%s\n", c->damon_state_file);
        if (c->damon_kdamond >= 0)
                fprintf(f, "Kdamond=%d\n", c->damon_kdamond);
        else
                fprintf(f, "Kdamond=\n");
        fprintf(f, "Context=%u\n", c->damon_context);
        print_span(f, "HintIntervalSec", c->damon_hint_interval_us);
        fprintf(f, "MaxTargets=%u\n", c->damon_max_targets);
        fprintf(f, "QuotaGoal=%s\n", c->damon_goal == DP_DAMON_GOAL_HOT_FRACTION ? "hot-fraction" : "none");
        fprintf(f, "QuotaGoalTarget=%u\n", c->damon_goal_target);

        fprintf(f, "\n[API]\n");
        fprintf(f, "Socket=%s\n", c->api_socket[0] ? c->api_socket : DP_CONFIG_DEFAULT_SOCKET);
        fprintf(f, "SocketGroup=%s\n", c->api_socket_group);
        return ferror(f) ? -EIO : 0;
}
