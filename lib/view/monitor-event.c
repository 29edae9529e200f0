/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "macro.h"
#include "monitor-event.h"

/* Strings come from the daemon; control characters would garble the terminal. */
static void put_sanitized(FILE *f, const char *s) {
        for (; *s; s++)
                fputc((unsigned char) *s < 0x20 || *s == 0x7f ? '?' : *s, f);
}

static void put_value(FILE *f, json_t *v) {
        if (json_is_string(v))
                put_sanitized(f, json_string_value(v));
        else if (json_is_integer(v))
                fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        else {
                _cleanup_free_ char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

                put_sanitized(f, s ? s : "?");
        }
}

static bool is_present(json_t *v) {
        return v && !json_is_null(v);
}

/* The fields with a fixed place in the line; everything else follows them. */
static const char *const placed[] = { "kind", "timestamp_usec", "cpu", "from", "to" };
static const char *const ordered[] = { "failed_step", "errno", "pid", "addr", "reason", "count", "depth" };

static bool is_placed(const char *key) {
        for (size_t i = 0; i < DP_ARRAY_SIZE(placed); i++)
                if (strcmp(placed[i], key) == 0)
                        return true;
        for (size_t i = 0; i < DP_ARRAY_SIZE(ordered); i++)
                if (strcmp(ordered[i], key) == 0)
                        return true;
        return false;
}

static void put_field(FILE *f, const char *key, json_t *v) {
        fprintf(f, " %s=", key);
        if (strcmp(key, "addr") == 0 && json_is_integer(v))
                fprintf(f, "%#llx", (unsigned long long) json_integer_value(v));
        else if (strcmp(key, "errno") == 0 && json_is_integer(v)) {
                json_int_t e = json_integer_value(v);

                fprintf(f, "%" JSON_INTEGER_FORMAT " (%s)", e,
                        e > 0 && e < 4096 ? strerror((int) e) : e < 0 && e > -4096 ? strerror((int) -e) : "?");
        } else
                put_value(f, v);
}

int dp_monitor_event_format(json_t *event, bool utc, char **ret) {
        _cleanup_free_ char *buf = NULL;
        json_t *kind, *ts, *cpu, *from, *to, *v;
        const char *key;
        size_t size = 0;
        json_int_t usec;
        struct tm tm;
        time_t sec;
        char when[64];
        FILE *f;

        if (!ret)
                return -EINVAL;
        kind = json_object_get(event, "kind");
        ts = json_object_get(event, "timestamp_usec");
        if (!json_is_object(event) || !json_is_string(kind) || !json_is_integer(ts))
                return -EBADMSG;
        f = open_memstream(&buf, &size);
        if (!f)
                return -ENOMEM;

        usec = json_integer_value(ts);
        sec = (time_t) (usec / 1000000);
        if (usec >= 0 && (utc ? gmtime_r(&sec, &tm) : localtime_r(&sec, &tm)) &&
            strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm) > 0)
                fprintf(f, "%s.%06lld", when, (long long) (usec % 1000000));
        else
                fprintf(f, "@%lld", (long long) usec);
        cpu = json_object_get(event, "cpu");
        if (json_is_integer(cpu))
                fprintf(f, " CPU%02" JSON_INTEGER_FORMAT, json_integer_value(cpu));
        fputc(' ', f);
        put_sanitized(f, json_string_value(kind));

        from = json_object_get(event, "from");
        to = json_object_get(event, "to");
        if (is_present(from) || is_present(to)) {
                fputc(' ', f);
                if (is_present(from))
                        put_value(f, from);
                else
                        fputc('?', f);
                fputs(" -> ", f);
                if (is_present(to))
                        put_value(f, to);
                else
                        fputc('?', f);
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(ordered); i++) {
                v = json_object_get(event, ordered[i]);
                if (is_present(v))
                        put_field(f, ordered[i], v);
        }
        json_object_foreach(event, key, v)
                if (!is_placed(key) && is_present(v))
                        put_field(f, key, v);

        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = DP_TAKE_PTR(buf);
        return 0;
}
