/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every fuzz target shares: the entry point libFuzzer (or
 * standalone-main.c) calls, and an invariant check that aborts loudly. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                        \
        do {                                                                            \
                if (!(x)) {                                                             \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                        \
                }                                                                       \
        } while (0)
