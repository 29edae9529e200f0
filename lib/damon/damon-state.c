/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "damon-control.h"
#include "fileio.h"
#include "macro.h"
#include "parse-util.h"

#define STATE_VERSION 1
#define STATE_MAX_SIZE (1024 * 1024)

const char *dp_damon_role_name(enum dp_damon_role r) {
        switch (r) {
        case DP_DAMON_ROLE_OFF:
                return "off";
        case DP_DAMON_ROLE_OBSERVE:
                return "observe_only";
        case DP_DAMON_ROLE_OWNED:
                return "owned";
        case DP_DAMON_ROLE_ATTACHED:
                return "attached";
        }
        return "unknown";
}

void dp_damon_state_done(struct dp_damon_state *s) {
        free(s->originals);
        s->originals = NULL;
        s->nr_originals = s->originals_cap = 0;
}

const struct dp_damon_original *dp_damon_state_find_original(const struct dp_damon_state *s, const char *path) {
        for (size_t i = 0; i < s->nr_originals; i++)
                if (strcmp(s->originals[i].path, path) == 0)
                        return &s->originals[i];
        return NULL;
}

int dp_damon_state_add_original(struct dp_damon_state *s, const char *path, const char *value) {
        struct dp_damon_original *o;

        if (!*path || strpbrk(path, " \t\n") || strchr(value, '\n'))
                return -EINVAL;
        if (strlen(path) >= sizeof(o->path))
                return -ENAMETOOLONG;
        if (strlen(value) >= sizeof(o->value))
                return -E2BIG;
        if (s->nr_originals == s->originals_cap) {
                size_t cap = s->originals_cap ? s->originals_cap * 2 : 16;

                o = reallocarray(s->originals, cap, sizeof(*o));
                if (!o)
                        return -ENOMEM;
                s->originals = o;
                s->originals_cap = cap;
        }
        o = &s->originals[s->nr_originals++];
        strcpy(o->path, path);
        strcpy(o->value, value);
        return 0;
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);

                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return dp_negative_errno();
                }
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

static int fsync_parent(const char *file) {
        _cleanup_free_ char *copy = strdup(file);
        _cleanup_close_ int fd = -1;

        if (!copy)
                return -ENOMEM;
        fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0)
                return dp_negative_errno();
        return 0;
}

int dp_damon_state_save(const struct dp_damon_state *s, const char *file) {
        _cleanup_free_ char *text = NULL, *tmp = NULL;
        _cleanup_fclose_ FILE *f = NULL;
        _cleanup_close_ int fd = -1;
        size_t size = 0;
        int r;

        if (s->role != DP_DAMON_ROLE_OWNED && s->role != DP_DAMON_ROLE_ATTACHED)
                return -EINVAL;
        f = open_memstream(&text, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "# damon-perfd: what it changed in DAMON sysfs, for restore on stop and crash recovery\n"
                   "version=%d\nrole=%s\ndaemon_pid=%d\nkdamond=%u\ncontext=%u\nkdamond_pid=%d\n",
                STATE_VERSION, s->role == DP_DAMON_ROLE_OWNED ? "owned" : "attached", s->daemon_pid, s->kdamond,
                s->context, s->kdamond_pid);
        if (s->schemes[0])
                fprintf(f, "schemes=%s\n", s->schemes);
        for (size_t i = 0; i < s->nr_originals; i++)
                fprintf(f, "original=%s %s\n", s->originals[i].path, s->originals[i].value);
        fputs("end\n", f);
        if (fflush(f) != 0 || ferror(f))
                return -ENOMEM;

        if (asprintf(&tmp, "%s.tmp", file) < 0) {
                tmp = NULL;
                return -ENOMEM;
        }
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
                return dp_negative_errno();
        r = write_all(fd, text, size);
        if (r == 0 && fsync(fd) < 0)
                r = dp_negative_errno();
        if (r == 0 && close(DP_TAKE_FD(fd)) < 0)
                r = dp_negative_errno();
        if (r == 0 && rename(tmp, file) < 0)
                r = dp_negative_errno();
        if (r < 0) {
                unlink(tmp);
                return r;
        }
        /* The rename is durable only once the directory is. */
        return fsync_parent(file);
}

int dp_damon_state_remove(const char *file) {
        if (unlink(file) < 0 && errno != ENOENT)
                return dp_negative_errno();
        return 0;
}

/* ---- loading: strict, all or nothing ---- */

static int parse_long(const char *v, long min, long max, long *ret) {
        long long n;

        if (dp_parse_int_in(v, min, max, &n) < 0)
                return -EBADMSG;
        *ret = (long) n;
        return 0;
}

/* An original's path must be one we could have written: under our kdamond. */
static bool original_path_ok(const char *path, unsigned kdamond) {
        char prefix[32];
        int n = snprintf(prefix, sizeof(prefix), "kdamonds/%u/", kdamond);

        if (strncmp(path, prefix, (size_t) n) != 0 || path[n] == '\0' || strlen(path) >= DP_DAMON_ORIGINAL_PATH_MAX)
                return false;
        for (const char *p = path + n; *p;) {
                size_t len = strcspn(p, "/");

                if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                p += len;
                if (*p == '/' && *++p == '\0')
                        return false;
        }
        return true;
}

enum { KEY_VERSION, KEY_ROLE, KEY_DAEMON_PID, KEY_KDAMOND, KEY_CONTEXT, KEY_KDAMOND_PID, KEY_SCHEMES, _KEY_MAX };

static const char *const key_names[_KEY_MAX] = {
        [KEY_VERSION] = "version",     [KEY_ROLE] = "role",       [KEY_DAEMON_PID] = "daemon_pid",
        [KEY_KDAMOND] = "kdamond",     [KEY_CONTEXT] = "context", [KEY_KDAMOND_PID] = "kdamond_pid",
        [KEY_SCHEMES] = "schemes",
};

/* Action names, comma-separated: what DAMON sysfs itself would hold. */
static int parse_schemes(struct dp_damon_state *s, const char *v) {
        if (!*v || strlen(v) >= sizeof(s->schemes) || strspn(v, "abcdefghijklmnopqrstuvwxyz_,") != strlen(v))
                return -EBADMSG;
        strcpy(s->schemes, v);
        return 0;
}

static int parse_scalar(struct dp_damon_state *s, int key, const char *v) {
        long n = 0;
        int r = 0;

        switch (key) {
        case KEY_VERSION:
                r = parse_long(v, STATE_VERSION, STATE_VERSION, &n);
                break;
        case KEY_ROLE:
                if (strcmp(v, "owned") == 0)
                        s->role = DP_DAMON_ROLE_OWNED;
                else if (strcmp(v, "attached") == 0)
                        s->role = DP_DAMON_ROLE_ATTACHED;
                else
                        r = -EBADMSG;
                break;
        case KEY_DAEMON_PID:
                r = parse_long(v, 1, INT_MAX, &n);
                s->daemon_pid = (int) n;
                break;
        case KEY_KDAMOND:
                r = parse_long(v, 0, 65535, &n);
                s->kdamond = (unsigned) n;
                break;
        case KEY_CONTEXT:
                r = parse_long(v, 0, 65535, &n);
                s->context = (unsigned) n;
                break;
        case KEY_KDAMOND_PID:
                r = parse_long(v, -1, INT_MAX, &n);
                s->kdamond_pid = (int) n;
                break;
        case KEY_SCHEMES:
                r = parse_schemes(s, v);
                break;
        }
        return r;
}

static int parse_state(char *text, struct dp_damon_state *s) {
        bool seen[_KEY_MAX] = {}, ended = false;
        struct dp_damon_state originals = {};   /* collected, checked once the kdamond is known */
        char *line, *save = NULL;
        int r = 0;

        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *eq;
                int key;

                if (*line == '#')
                        continue;
                if (ended) {
                        r = -EBADMSG;           /* nothing may follow "end" */
                        break;
                }
                if (strcmp(line, "end") == 0) {
                        ended = true;
                        continue;
                }
                eq = strchr(line, '=');
                if (!eq) {
                        r = -EBADMSG;
                        break;
                }
                *eq = '\0';
                if (strcmp(line, "original") == 0) {
                        char *space = strchr(eq + 1, ' ');

                        if (!space) {
                                r = -EBADMSG;
                                break;
                        }
                        *space = '\0';
                        r = dp_damon_state_add_original(&originals, eq + 1, space + 1);
                        if (r < 0) {
                                r = r == -ENOMEM ? r : -EBADMSG;
                                break;
                        }
                        continue;
                }
                for (key = 0; key < _KEY_MAX; key++)
                        if (strcmp(line, key_names[key]) == 0)
                                break;
                if (key == _KEY_MAX || seen[key]) {
                        r = -EBADMSG;
                        break;
                }
                seen[key] = true;
                r = parse_scalar(s, key, eq + 1);
                if (r < 0)
                        break;
        }
        /* schemes= came later, and only an owned kdamond has it. */
        for (int key = 0; r == 0 && key < _KEY_MAX; key++)
                if (!seen[key] && key != KEY_SCHEMES)
                        r = -EBADMSG;
        if (r == 0 && seen[KEY_SCHEMES] && s->role != DP_DAMON_ROLE_OWNED)
                r = -EBADMSG;
        if (r == 0 && !ended)
                r = -EBADMSG;
        if (r == 0 && originals.nr_originals > 0 && s->role != DP_DAMON_ROLE_ATTACHED)
                r = -EBADMSG;
        for (size_t i = 0; r == 0 && i < originals.nr_originals; i++)
                if (!original_path_ok(originals.originals[i].path, s->kdamond))
                        r = -EBADMSG;
        if (r < 0) {
                dp_damon_state_done(&originals);
                return r;
        }
        s->originals = originals.originals;
        s->nr_originals = originals.nr_originals;
        s->originals_cap = originals.originals_cap;
        return 0;
}

int dp_damon_state_load(const char *file, struct dp_damon_state *ret) {
        _cleanup_free_ char *text = NULL;
        struct dp_damon_state s = {};
        size_t used = 0;
        int r;

        r = dp_read_file(file, &text, &used);
        if (r == -EFBIG)
                return -EBADMSG;
        if (r < 0)
                return r;
        if (used > STATE_MAX_SIZE || strlen(text) != used)
                return -EBADMSG;        /* too big for a state file, or a NUL byte */
        r = parse_state(text, &s);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}
