/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse-util.h"

int dp_parse_uint(const char *text, int base, uint64_t *ret, const char **ret_end) {
        unsigned long long v;
        char *end;

        /* The first character a digit of @base: strtoull() would skip space and take a sign. */
        if (!text || !ret || !(base == 16 ? isxdigit((unsigned char) text[0]) : isdigit((unsigned char) text[0])))
                return -EINVAL;
        errno = 0;
        v = strtoull(text, &end, base);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno || end == text || (!ret_end && *end))
                return -EINVAL;
        *ret = v;
        if (ret_end)
                *ret_end = end;
        return 0;
}

int dp_parse_u64_in(const char *text, uint64_t min, uint64_t max, uint64_t *ret) {
        uint64_t v;
        int r = dp_parse_uint(text, 10, &v, NULL);

        if (r < 0)
                return r;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int dp_parse_u32_in(const char *text, uint32_t min, uint32_t max, uint32_t *ret) {
        uint64_t v;
        int r = dp_parse_u64_in(text, min, max, &v);

        if (r < 0)
                return r;
        *ret = (uint32_t) v;
        return 0;
}

int dp_parse_int_in(const char *text, long long min, long long max, long long *ret) {
        const char *digits = text && text[0] == '-' ? text + 1 : text;
        long long v;
        char *end;

        if (!digits || !ret || !isdigit((unsigned char) digits[0]))
                return -EINVAL;
        errno = 0;
        v = strtoll(text, &end, 10);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno || *end)
                return -EINVAL;
        if (v < min || v > max)
                return -ERANGE;
        *ret = v;
        return 0;
}

int dp_parse_double(const char *text, double *ret) {
        const char *digits = text && text[0] == '-' ? text + 1 : text;
        double v;
        char *end;

        if (!digits || !ret)
                return -EINVAL;
        /* A digit first (or a point and a digit), then only what a decimal
         * number is written with: that leaves out hex, inf and nan. */
        if (!(isdigit((unsigned char) digits[0]) || (digits[0] == '.' && isdigit((unsigned char) digits[1]))) ||
            digits[strspn(digits, "0123456789.eE+-")] != '\0')
                return -EINVAL;
        errno = 0;
        v = strtod(text, &end);
        if (errno == ERANGE)
                return -ERANGE;
        if (errno || *end)
                return -EINVAL;
        *ret = v;
        return 0;
}
