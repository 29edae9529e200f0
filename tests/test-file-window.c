/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The file window gives a file's bytes as they are, contiguous across its
 * chunks' boundaries, and refuses what it cannot give. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "file-window.h"

#include "check-main.h"

#define FILE_SIZE ((5u << 20) + 4321)   /* several buffers and a ragged end */

static uint8_t byte_at(uint64_t offset) {
        return (uint8_t) (offset * 2654435761u >> 13);
}

/* A temporary file of FILE_SIZE known bytes, already unlinked. */
static int make_file(void) {
        char path[] = "/tmp/test-file-window-XXXXXX";
        _cleanup_free_ uint8_t *buf = malloc(FILE_SIZE);
        int fd = mkstemp(path);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_ptr_nonnull(buf);
        for (size_t i = 0; i < FILE_SIZE; i++)
                buf[i] = byte_at(i);
        ck_assert_int_eq(write(fd, buf, FILE_SIZE), (ssize_t) FILE_SIZE);
        return fd;
}

static void check_bytes(const uint8_t *p, uint64_t offset, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (p[i] != byte_at(offset + i))
                        ck_abort_msg("byte %llu differs", (unsigned long long) (offset + i));
}

/* Forward steps of random sizes, some skipping ahead, from @begin. */
static void walk(int fd, uint64_t begin, unsigned seed) {
        struct dp_file_window *w = NULL;
        uint64_t offset = begin, steps = 0;

        srand(seed);
        ck_assert_int_eq(dp_file_window_new(fd, begin, FILE_SIZE, &w), 0);
        while (offset < FILE_SIZE) {
                size_t need = 1 + (size_t) rand() % DP_FILE_WINDOW_SPAN, avail;
                const uint8_t *p;

                need = (size_t) DP_MIN((uint64_t) need, FILE_SIZE - offset);
                ck_assert_int_eq(dp_file_window_at(w, offset, need, &p, &avail), 0);
                ck_assert_uint_ge(avail, need);
                ck_assert_uint_le(avail, FILE_SIZE - offset);
                check_bytes(p, offset, avail);
                /* Mostly the next record; now and then the same again, or far ahead. */
                switch (rand() % 8) {
                case 0:
                        break;
                case 1:
                        offset += 3 * DP_FILE_WINDOW_SPAN + (uint64_t) (rand() % 4096);
                        break;
                default:
                        offset += need;
                }
                steps++;
        }
        ck_assert_uint_gt(steps, 50);
        dp_file_window_free(w);
}

START_TEST(test_bytes_as_they_are) {
        int fd = make_file();

        walk(fd, 0, 1);
        walk(fd, 8, 2);
        walk(fd, 1234567, 3);
        close(fd);
}
END_TEST

START_TEST(test_refusals) {
        struct dp_file_window *w = NULL;
        const uint8_t *p;
        size_t avail;
        int fd = make_file();

        ck_assert_int_eq(dp_file_window_new(-1, 0, 10, &w), -EINVAL);
        ck_assert_int_eq(dp_file_window_new(fd, 10, 5, &w), -EINVAL);
        ck_assert_int_eq(dp_file_window_new(fd, 0, 10, NULL), -EINVAL);
        ck_assert_ptr_null(w);

        ck_assert_int_eq(dp_file_window_new(fd, 100, 200000, &w), 0);
        ck_assert_int_eq(dp_file_window_at(w, 99, 8, &p, &avail), -EINVAL);       /* before the range */
        ck_assert_int_eq(dp_file_window_at(w, 199999, 8, &p, &avail), -EINVAL);   /* past its end */
        ck_assert_int_eq(dp_file_window_at(w, 100, 0, &p, &avail), -EINVAL);
        ck_assert_int_eq(dp_file_window_at(w, 100, DP_FILE_WINDOW_SPAN + 1, &p, &avail), -EINVAL);
        ck_assert_int_eq(dp_file_window_at(w, 5000, 8, &p, &avail), 0);
        check_bytes(p, 5000, 8);
        ck_assert_int_eq(dp_file_window_at(w, 4992, 8, &p, &avail), -EINVAL);     /* backwards */
        ck_assert_int_eq(dp_file_window_at(w, 199992, 8, &p, &avail), 0);
        ck_assert_uint_eq(avail, 8);
        dp_file_window_free(w);
        dp_file_window_free(NULL);

        /* A range past the end of the file: the bytes that are not there are an error, for good. */
        ck_assert_int_eq(dp_file_window_new(fd, FILE_SIZE - 16, FILE_SIZE + (3u << 20), &w), 0);
        ck_assert_int_eq(dp_file_window_at(w, FILE_SIZE - 16, 16, &p, &avail), -EBADMSG);
        ck_assert_int_eq(dp_file_window_at(w, FILE_SIZE - 8, 8, &p, &avail), -EBADMSG);
        dp_file_window_free(w);

        close(fd);
}
END_TEST

START_TEST(test_read_error_sticks) {
        struct dp_file_window *w = NULL;
        const uint8_t *p;
        size_t avail;
        int pipe_fds[2];

        /* A pipe cannot be read at an offset: the error of that read, then the same for good. */
        ck_assert_int_eq(pipe(pipe_fds), 0);
        ck_assert_int_eq(dp_file_window_new(pipe_fds[0], 0, 4096, &w), 0);
        ck_assert_int_eq(dp_file_window_at(w, 0, 8, &p, &avail), -ESPIPE);
        ck_assert_int_eq(dp_file_window_at(w, 8, 8, &p, &avail), -ESPIPE);
        dp_file_window_free(w);
        close(pipe_fds[0]);
        close(pipe_fds[1]);
}
END_TEST

int main(void) {
        Suite *s = suite_create("file-window");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_bytes_as_they_are);
        tcase_add_test(tc, test_refusals);
        tcase_add_test(tc, test_read_error_sticks);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
