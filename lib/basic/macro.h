/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers shared by every file: cleanup attributes, branch hints, sizes. */

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DP_CACHELINE 64
#define DP_ALIGNED_CACHELINE __attribute__((aligned(DP_CACHELINE)))

#define dp_likely(x) __builtin_expect(!!(x), 1)
#define dp_unlikely(x) __builtin_expect(!!(x), 0)

#define DP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define DP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DP_MAX(a, b) ((a) > (b) ? (a) : (b))

static inline void dp_freep(void *p) {
        free(*(void **) p);
}

static inline void dp_closep(int *fd) {
        if (*fd >= 0)
                close(*fd);
}

static inline void dp_fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static inline void dp_closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

#define _cleanup_free_ __attribute__((cleanup(dp_freep)))
#define _cleanup_close_ __attribute__((cleanup(dp_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(dp_fclosep)))
#define _cleanup_closedir_ __attribute__((cleanup(dp_closedirp)))

/* Hand ownership out of a cleanup variable. */
#define DP_TAKE_PTR(p)                                  \
        ({                                              \
                __typeof__(p) _taken = (p);             \
                (p) = NULL;                             \
                _taken;                                 \
        })
#define DP_TAKE_FD(fd)                                  \
        ({                                              \
                int _taken = (fd);                      \
                (fd) = -1;                              \
                _taken;                                 \
        })

static inline int dp_negative_errno(void) {
        return errno > 0 ? -errno : -EIO;
}

/* qsort()'s comparison of uint64_t values, ascending. */
static inline int dp_cmp_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

/* Little-endian host loads from byte buffers that need not be aligned
 * (perf records and files). */
static inline uint64_t dp_load_u64(const void *p) {
        uint64_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}

static inline uint32_t dp_load_u32(const void *p) {
        uint32_t v;

        memcpy(&v, p, sizeof(v));
        return v;
}
