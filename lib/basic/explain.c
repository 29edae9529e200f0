/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "explain.h"

int dp_explain(int error, char *why, size_t size, const char *fmt, ...) {
        va_list ap;

        if (why && size) {
                va_start(ap, fmt);
                vsnprintf(why, size, fmt, ap);
                va_end(ap);
        }
        return error;
}
