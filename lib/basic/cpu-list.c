/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "cpu-list.h"
#include "parse-util.h"

static int parse_cpu(const char **p, int *cpu) {
        const char *end;
        uint64_t v;
        int r;

        r = dp_parse_uint(*p, 10, &v, &end);
        if (r < 0)
                return r;       /* -EINVAL without a digit, -ERANGE past UINT64_MAX */
        if (v >= DP_CPU_MAX)
                return -ERANGE;
        *cpu = (int) v;
        *p = end;
        return 0;
}

int dp_cpu_list_parse(const char *text, struct dp_cpu_list *list) {
        bool present[DP_CPU_MAX] = {0};
        const char *p = text;
        int r;

        list->n = 0;
        while (*p && !isspace((unsigned char) *p)) {
                int first, last;

                r = parse_cpu(&p, &first);
                if (r < 0)
                        return r;
                last = first;
                if (*p == '-') {
                        p++;
                        r = parse_cpu(&p, &last);
                        if (r < 0)
                                return r;
                        if (last < first)
                                return -EINVAL;
                }
                for (int c = first; c <= last; c++)
                        present[c] = true;
                if (*p == ',') {
                        p++;
                        if (!*p || isspace((unsigned char) *p))
                                return -EINVAL;
                } else if (*p && !isspace((unsigned char) *p))
                        return -EINVAL;
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p)
                return -EINVAL;

        for (int c = 0; c < DP_CPU_MAX; c++)
                if (present[c])
                        list->cpu[list->n++] = c;
        return list->n ? 0 : -EINVAL;
}

bool dp_cpu_list_contains(const struct dp_cpu_list *list, int cpu) {
        for (size_t i = 0; i < list->n; i++)
                if (list->cpu[i] == cpu)
                        return true;
        return false;
}
