/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "time-util.h"

static const struct {
        const char *suffix;
        uint64_t usec;
} time_units[] = {
        /* Longer spellings first, so "ms" is not read as "m" + garbage. */
        { "usec", 1 },
        { "us", 1 },
        { "msec", USEC_PER_MSEC },
        { "ms", USEC_PER_MSEC },
        { "sec", USEC_PER_SEC },
        { "s", USEC_PER_SEC },
        { "min", USEC_PER_MINUTE },
        { "m", USEC_PER_MINUTE },
        { "hr", USEC_PER_HOUR },
        { "h", USEC_PER_HOUR },
};

/* The unit spelled at *p, if any (the unit stays seconds when none is). */
static int read_unit(const char **p, uint64_t *unit) {
        size_t len = 0;

        while (isalpha((unsigned char) (*p)[len]))
                len++;
        if (len == 0)
                return 0;
        for (size_t i = 0; i < DP_ARRAY_SIZE(time_units); i++)
                if (strlen(time_units[i].suffix) == len && strncmp(*p, time_units[i].suffix, len) == 0) {
                        *unit = time_units[i].usec;
                        *p += len;
                        return 0;
                }
        return -EINVAL;
}

/* One number with its unit: "90", "1.5s", ".25min", "10 ms".  A fraction
 * counts down to the microsecond, the rest dropped, as systemd's parse_sec(). */
static int read_part(const char **p, uint64_t *ret) {
        const char *s = *p, *number, *fraction = NULL, *after;
        uint64_t n = 0, unit = USEC_PER_SEC, part, frac = 0;
        int r;

        for (number = s; isdigit((unsigned char) *s); s++) {
                if (n > (UINT64_MAX - 9) / 10)
                        return -ERANGE;
                n = n * 10 + (uint64_t) (*s - '0');
        }
        if (*s == '.') {
                fraction = ++s;
                while (isdigit((unsigned char) *s))
                        s++;
                /* Digits after the point, and some before it or after it: not "5." nor ".". */
                if (s == fraction)
                        return -EINVAL;
        } else if (s == number)
                return -EINVAL;
        after = s;
        while (*s == ' ' || *s == '\t')
                s++;
        r = read_unit(&s, &unit);
        if (r < 0)
                return r;
        /* Without a unit the number must end the text or a blank follow it: not "1.5.5". */
        if (s == after && *s && !isspace((unsigned char) *s))
                return -EINVAL;
        if (fraction)
                for (uint64_t k = unit / 10; k > 0 && isdigit((unsigned char) *fraction); k /= 10, fraction++)
                        frac += (uint64_t) (*fraction - '0') * k;
        if (n > UINT64_MAX / unit)
                return -ERANGE;
        part = n * unit;
        if (part > UINT64_MAX - frac)
                return -ERANGE;
        *ret = part + frac;
        *p = s;
        return 0;
}

int dp_timespan_parse(const char *text, uint64_t *ret_usec) {
        const char *p = text;
        uint64_t total = 0;
        bool any = false;

        if (!text || !ret_usec)
                return -EINVAL;
        for (;;) {
                uint64_t part;
                int r;

                while (isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        break;
                r = read_part(&p, &part);
                if (r < 0)
                        return r;
                if (total > UINT64_MAX - part)
                        return -ERANGE;
                total += part;
                any = true;
        }
        if (!any)
                return -EINVAL;
        *ret_usec = total;
        return 0;
}

int dp_timespan_parse_in(const char *text, uint64_t min_usec, uint64_t max_usec, uint64_t *ret_usec) {
        uint64_t us;
        int r;

        if (!ret_usec)
                return -EINVAL;
        r = dp_timespan_parse(text, &us);
        if (r < 0)
                return r;
        if (us < min_usec || us > max_usec)
                return -ERANGE;
        *ret_usec = us;
        return 0;
}

int dp_timespan_format(uint64_t usec, char *buf, size_t size) {
        static const struct {
                const char *suffix;
                uint64_t usec;
        } parts[] = {
                { "h", USEC_PER_HOUR }, { "min", USEC_PER_MINUTE }, { "s", USEC_PER_SEC },
                { "ms", USEC_PER_MSEC }, { "us", 1 },
        };
        size_t used = 0;

        if (size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        if (usec == 0)
                return size >= 2 ? (strcpy(buf, "0"), 0) : -ENOBUFS;
        for (size_t i = 0; i < DP_ARRAY_SIZE(parts); i++) {
                uint64_t n = usec / parts[i].usec;
                int k;

                if (n == 0)
                        continue;
                usec -= n * parts[i].usec;
                k = snprintf(buf + used, size - used, "%s%llu%s", used ? " " : "",
                             (unsigned long long) n, parts[i].suffix);
                if (k < 0 || (size_t) k >= size - used)
                        return -ENOBUFS;
                used += (size_t) k;
        }
        return 0;
}
