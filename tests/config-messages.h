/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What a configuration parse said, collected for the tests to look at: its
 * first CONFIG_MESSAGES_MAX messages with their severity, and how many there
 * were in all and how many of them were errors. */

#include <stdio.h>

#include "config-file.h"

#define CONFIG_MESSAGES_MAX 32

struct messages {
        size_t n, n_errors;
        char text[CONFIG_MESSAGES_MAX][512];
        enum dp_config_severity severity[CONFIG_MESSAGES_MAX];
};

/* The parser's message callback; @userdata is a struct messages. */
static inline void collect(enum dp_config_severity severity, const char *message, void *userdata) {
        struct messages *m = userdata;

        if (severity == DP_CONFIG_ERROR)
                m->n_errors++;
        if (m->n < CONFIG_MESSAGES_MAX) {
                snprintf(m->text[m->n], sizeof(m->text[0]), "%s", message);
                m->severity[m->n] = severity;
        }
        m->n++;
}
