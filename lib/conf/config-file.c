/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config-file.h"
#include "config-keys.h"
#include "config-scheme.h"
#include "macro.h"

void dp_config_defaults(struct dp_config *c) {
        dp_config_init(c);
        strcpy(c->api_socket, DP_CONFIG_DEFAULT_SOCKET);
}

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
        const char *section;

        if (len < 3 || line[len - 1] != ']') {
                say(s, DP_CONFIG_ERROR, "expected a section header such as [Sampling], got '%s'", line);
                return NULL;
        }
        line[len - 1] = '\0';
        section = dp_config_section_find(line + 1);
        if (section)
                return section;
        say(s, DP_CONFIG_WARNING, "unknown section [%s], ignoring its keys", line + 1);
        return NULL;
}

static int parse_assignment(struct dp_config *c, struct parse_state *s, const char *section, char *line) {
        char *eq = strchr(line, '='), *key, *value;
        char why[512], origin[DP_SCHEME_ORIGIN_MAX];
        const struct dp_config_key *k;
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
        k = dp_config_key_find(section, key);
        if (!k) {
                say(s, DP_CONFIG_WARNING, "unknown key %s= in section [%s], ignoring", key, section);
                return 0;
        }
        r = dp_config_key_parse_why(k, c, value, why, sizeof(why));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                say(s, DP_CONFIG_ERROR, "%s=%s: %s", key, value, why);
        else if (k->repeated && *value) {
                snprintf(origin, sizeof(origin), "%s:%u", s->file_name, s->line);
                dp_config_key_note_origin(k, c, origin);
        }
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

/* Highest precedence first: an earlier directory masks a later one. */
static const char *const dropin_dirs[] = {
        "/etc/" DP_CONFIG_DROPIN_DIR_NAME,
        "/run/" DP_CONFIG_DROPIN_DIR_NAME,
        "/usr/local/lib/" DP_CONFIG_DROPIN_DIR_NAME,
        "/usr/lib/" DP_CONFIG_DROPIN_DIR_NAME,
};

/* Each drop-in NAME once, with the first directory that holds it. */
struct dropins {
        struct dropin {
                char *name;
                size_t dir;     /* in dropin_dirs[] */
        } *v;
        size_t n;
};

static void dropins_free(struct dropins *d) {
        for (size_t i = 0; i < d->n; i++)
                free(d->v[i].name);
        free(d->v);
}

static bool dropins_have(const struct dropins *d, const char *name) {
        for (size_t i = 0; i < d->n; i++)
                if (strcmp(d->v[i].name, name) == 0)
                        return true;
        return false;
}

static int dropins_add(struct dropins *d, const char *name, size_t dir) {
        struct dropin *grown = realloc(d->v, (d->n + 1) * sizeof(*grown));

        if (!grown)
                return -ENOMEM;
        d->v = grown;
        d->v[d->n].name = strdup(name);
        if (!d->v[d->n].name)
                return -ENOMEM;
        d->v[d->n++].dir = dir;
        return 0;
}

static int cmp_dropins(const void *a, const void *b) {
        return strcmp(((const struct dropin *) a)->name, ((const struct dropin *) b)->name);
}

/* Adds the drop-ins of dropin_dirs[@dir] that no earlier directory has. */
static int read_dropin_dir(struct dropins *d, const char *root, size_t dir, struct parse_state *s) {
        _cleanup_free_ char *dir_path = path_join(root, dropin_dirs[dir], NULL);
        struct dirent *de;
        DIR *dirp;
        int r = 0;

        if (!dir_path)
                return -ENOMEM;
        dirp = opendir(dir_path);
        if (!dirp) {
                if (errno == ENOENT || errno == ENOTDIR)
                        return 0;
                r = dp_negative_errno();
                s->file_name = dir_path;
                say(s, DP_CONFIG_ERROR, "cannot read drop-in directory: %s", strerror(-r));
                return r;
        }
        while (r >= 0 && (de = readdir(dirp)))
                if (is_dropin_name(de->d_name) && !dropins_have(d, de->d_name))
                        r = dropins_add(d, de->d_name, dir);
        closedir(dirp);
        return r;
}

/* The main file unless it is certainly absent: any other stat() failure is
 * reported when reading it. */
static int add_main_file(char ***paths, size_t *n, const char *root) {
        char *main_file = path_join(root, DP_CONFIG_MAIN_FILE, NULL);
        struct stat st;

        if (!main_file)
                return -ENOMEM;
        if (stat(main_file, &st) == 0 || errno != ENOENT)
                return push(paths, n, main_file);
        free(main_file);
        return 0;
}

static int add_dropins(char ***paths, size_t *n, const char *root, struct dropins *d) {
        int r = 0;

        if (d->n > 0)
                qsort(d->v, d->n, sizeof(d->v[0]), cmp_dropins);
        for (size_t i = 0; r >= 0 && i < d->n; i++)
                r = push(paths, n, path_join(root, dropin_dirs[d->v[i].dir], d->v[i].name));
        return r;
}

int dp_config_files_list(const char *root, const char *main_path, char ***ret_paths,
                         dp_config_report_t report, void *userdata) {
        struct parse_state s = { .report = report, .userdata = userdata };
        struct dropins dropins = {};
        char **paths = NULL;
        size_t n_paths = 0;
        int r;

        if (main_path) {
                r = push(&paths, &n_paths, strdup(main_path));
                if (r >= 0)
                        *ret_paths = paths;
                return r;
        }
        if (!root || strcmp(root, "/") == 0)
                root = "";

        r = add_main_file(&paths, &n_paths, root);
        for (size_t d = 0; r >= 0 && d < DP_ARRAY_SIZE(dropin_dirs); d++)
                r = read_dropin_dir(&dropins, root, d, &s);
        if (r >= 0)
                r = add_dropins(&paths, &n_paths, root, &dropins);
        dropins_free(&dropins);
        if (r >= 0 && !paths) {
                paths = calloc(1, sizeof(char *));
                if (!paths)
                        r = -ENOMEM;
        }
        if (r < 0) {
                dp_config_files_free(paths);
                return r;
        }
        *ret_paths = paths;
        return 0;
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
        char **paths = NULL, scheme_why[512];
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
        if (dp_config_check_schemes(&parsed, scheme_why, sizeof(scheme_why)) < 0) {
                /* The message names the scheme's own file and line. */
                if (report)
                        report(DP_CONFIG_ERROR, scheme_why, userdata);
                return -EINVAL;
        }
        *c = parsed;
        return 0;
}

/* ---- printing ---- */

int dp_config_format(const struct dp_config *c, FILE *f) {
        _cleanup_free_ char *value = malloc(DP_CONFIG_VALUE_MAX);
        const char *section = NULL;

        if (!value)
                return -ENOMEM;

        for (const struct dp_config_key *k = dp_config_keys; k < dp_config_keys + dp_config_n_keys; k++) {
                if (!section || strcmp(section, k->section) != 0) {
                        fprintf(f, "%s[%s]\n", section ? "\n" : "", k->section);
                        section = k->section;
                }
                if (dp_config_key_print(k, c, value, DP_CONFIG_VALUE_MAX) < 0)
                        return -ENOBUFS;
                /* A repeated key's values, one a line. */
                for (char *v = value, *nl; v; v = nl ? nl + 1 : NULL) {
                        nl = strchr(v, '\n');
                        if (nl)
                                *nl = '\0';
                        fprintf(f, "%s=%s\n", k->key, v);
                }
        }
        return ferror(f) ? -EIO : 0;
}
