/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What every fuzz target shares: the entry point libFuzzer (or
 * standalone-main.c) calls, an invariant check that aborts loudly, and a
 * few helpers to carve an input into fields. */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(x)                                                                        \
        do {                                                                            \
                if (!(x)) {                                                             \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                        \
                }                                                                       \
        } while (0)

/* The input taken off the front a piece at a time.  Reads past the end give
 * zeros, so a short input still reaches every path with defaults. */
struct fuzz_input {
        const uint8_t *p;
        size_t left;
};

static inline size_t fuzz_take(struct fuzz_input *in, void *buf, size_t n) {
        size_t k = n < in->left ? n : in->left;

        if (k)
                memcpy(buf, in->p, k);
        if (n > k)
                memset((uint8_t *) buf + k, 0, n - k);
        in->p += k;
        in->left -= k;
        return k;
}

static inline uint8_t fuzz_u8(struct fuzz_input *in) {
        uint8_t v;

        fuzz_take(in, &v, 1);
        return v;
}

static inline uint16_t fuzz_u16(struct fuzz_input *in) {
        uint16_t v;

        fuzz_take(in, &v, 2);
        return v;
}

static inline uint32_t fuzz_u32(struct fuzz_input *in) {
        uint32_t v;

        fuzz_take(in, &v, 4);
        return v;
}

static inline uint64_t fuzz_u64(struct fuzz_input *in) {
        uint64_t v;

        fuzz_take(in, &v, 8);
        return v;
}

/* An exact-size heap copy, so that ASan catches any read past @size. */
static inline void *fuzz_dup(const void *data, size_t size) {
        void *p = malloc(size ? size : 1);

        if (!p) {
                fprintf(stderr, "fuzz: out of memory\n");
                abort();
        }
        if (size)
                memcpy(p, data, size);
        return p;
}
