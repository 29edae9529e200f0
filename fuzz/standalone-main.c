/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A stand-in for libFuzzer's driver, so every fuzz target also builds with
 * gcc and runs as a smoke test: over the files named on the command line
 * (a crash reproducer, or every file of a directory: a corpus), and with
 * --random N over N pseudo-random inputs from a fixed seed (--seed S to
 * change it), so a failure reproduces.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"

#include "fuzz.h"

#define MAX_RANDOM_SIZE 1024

static uint64_t next(uint64_t *state) {
        /* splitmix64: every seed, including 0, gives a full-period stream. */
        uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
}

static int run_random(uint64_t n, uint64_t seed) {
        static uint8_t buf[MAX_RANDOM_SIZE];
        uint64_t state = seed;

        for (uint64_t i = 0; i < n; i++) {
                /* Mostly short inputs, where structure is dense; some long ones. */
                uint64_t r = next(&state);
                size_t size = (r & 3) ? (size_t) (r >> 8) % 160 : (size_t) (r >> 8) % (MAX_RANDOM_SIZE + 1);

                for (size_t j = 0; j < size; j += 8) {
                        uint64_t v = next(&state);

                        memcpy(buf + j, &v, DP_MIN((size_t) 8, size - j));
                }
                /* Heap copy of the exact size, so ASan sees any overread. */
                uint8_t *copy = malloc(size ? size : 1);
                if (!copy) {
                        fprintf(stderr, "out of memory\n");
                        return EXIT_FAILURE;
                }
                memcpy(copy, buf, size);
                LLVMFuzzerTestOneInput(copy, size);
                free(copy);
        }
        printf("%" PRIu64 " random inputs (seed %" PRIu64 "): ok\n", n, seed);
        return EXIT_SUCCESS;
}

static int run_file(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ uint8_t *data = NULL;
        size_t size = 0, cap = 0;

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -errno;
        }
        for (;;) {
                size_t got;

                if (size == cap) {
                        uint8_t *bigger = realloc(data, cap ? cap * 2 : 4096);

                        if (!bigger)
                                return -ENOMEM;
                        data = bigger;
                        cap = cap ? cap * 2 : 4096;
                }
                got = fread(data + size, 1, cap - size, f);
                size += got;
                if (got == 0)
                        break;
        }
        if (ferror(f)) {
                fprintf(stderr, "%s: read error\n", path);
                return -EIO;
        }
        LLVMFuzzerTestOneInput(data, size);
        return 0;
}

/* Every file of @path when it is a directory (in name order, so a failure
 * reproduces), else @path itself.  Counts the files run in *files. */
static int run_path(const char *path, int *files) {
        struct dirent **entries = NULL;
        int n, failed = 0;

        n = scandir(path, &entries, NULL, alphasort);
        if (n < 0) {
                int e = errno;

                (*files)++;
                if (e == ENOTDIR)
                        return run_file(path);
                fprintf(stderr, "%s: %s\n", path, strerror(e));
                return -e;
        }
        for (int i = 0; i < n; i++) {
                char *file = NULL;

                if (entries[i]->d_name[0] != '.' &&
                    asprintf(&file, "%s/%s", path, entries[i]->d_name) >= 0) {
                        (*files)++;
                        if (run_file(file) < 0)
                                failed = 1;
                }
                free(file);
                free(entries[i]);
        }
        free(entries);
        return failed ? -EIO : 0;
}

static int parse_u64(const char *s, uint64_t *ret) {
        char *end;

        errno = 0;
        *ret = strtoull(s, &end, 0);
        return (errno || end == s || *end) ? -EINVAL : 0;
}

int main(int argc, char **argv) {
        uint64_t n = 0, seed = 1;
        bool random_mode = false;
        int failed = 0, files = 0;

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--random") == 0 || strcmp(argv[i], "--seed") == 0) {
                        uint64_t *target = argv[i][2] == 'r' ? &n : &seed;

                        if (i + 1 >= argc || parse_u64(argv[i + 1], target) < 0) {
                                fprintf(stderr, "%s needs a number\n", argv[i]);
                                return EXIT_FAILURE;
                        }
                        random_mode |= argv[i][2] == 'r';
                        i++;
                } else if (argv[i][0] == '-' && argv[i][1] == '-') {
                        fprintf(stderr, "usage: %s [--random N [--seed S]] [FILE...]\n", argv[0]);
                        return EXIT_FAILURE;
                } else if (run_path(argv[i], &files) < 0)
                        failed = 1;
        }
        if (random_mode && run_random(n, seed) != EXIT_SUCCESS)
                failed = 1;
        if (!random_mode && files == 0) {
                fprintf(stderr, "usage: %s [--random N [--seed S]] [FILE...]\n", argv[0]);
                return EXIT_FAILURE;
        }
        if (files)
                printf("%d file(s): %s\n", files, failed ? "errors" : "ok");
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
