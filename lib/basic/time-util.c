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

int dp_timespan_parse(const char *text, uint64_t *ret_usec) {
        const char *p = text;
        uint64_t total = 0;
        bool any = false;

        for (;;) {
                uint64_t n = 0, unit = USEC_PER_SEC, part;
                size_t len;

                while (isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        break;
                if (!isdigit((unsigned char) *p))
                        return -EINVAL;
                for (; isdigit((unsigned char) *p); p++) {
                        if (n > (UINT64_MAX - 9) / 10)
                                return -ERANGE;
                        n = n * 10 + (uint64_t) (*p - '0');
                }
                while (*p == ' ' || *p == '\t')
                        p++;
                len = 0;
                while (isalpha((unsigned char) p[len]))
                        len++;
                if (len > 0) {
                        bool found = false;

                        for (size_t i = 0; i < DP_ARRAY_SIZE(time_units); i++)
                                if (strlen(time_units[i].suffix) == len &&
                                    strncmp(p, time_units[i].suffix, len) == 0) {
                                        unit = time_units[i].usec;
                                        found = true;
                                        break;
                                }
                        if (!found)
                                return -EINVAL;
                        p += len;
                }
                if (n > UINT64_MAX / unit)
                        return -ERANGE;
                part = n * unit;
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
