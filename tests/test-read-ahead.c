/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The read-ahead gives a file's bytes as they are, contiguous across its
 * buffers' boundaries, and refuses what it cannot give. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "read-ahead.h"

#include "check-main.h"

#define FILE_SIZE ((5u << 20) + 4321)   /* several buffers and a ragged end */

static uint8_t byte_at(uint64_t offset) {
        return (uint8_t) (offset * 2654435761u >> 13);
}

/* A temporary file of FILE_SIZE known bytes, already unlinked. */
static int make_file(void) {
        char path[] = "/tmp/test-read-ahead-XXXXXX";
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
        struct dp_read_ahead *ra = NULL;
        uint64_t offset = begin, steps = 0;

        srand(seed);
        ck_assert_int_eq(dp_read_ahead_new(fd, begin, FILE_SIZE, &ra), 0);
        while (offset < FILE_SIZE) {
                size_t need = 1 + (size_t) rand() % DP_READ_AHEAD_SPAN, avail;
                const uint8_t *p;

                need = (size_t) DP_MIN((uint64_t) need, FILE_SIZE - offset);
                ck_assert_int_eq(dp_read_ahead_at(ra, offset, need, &p, &avail), 0);
                ck_assert_uint_ge(avail, need);
                ck_assert_uint_le(avail, FILE_SIZE - offset);
                check_bytes(p, offset, avail);
                /* Mostly the next record; now and then the same again, or far ahead. */
                switch (rand() % 8) {
                case 0:
                        break;
                case 1:
                        offset += 3 * DP_READ_AHEAD_SPAN + (uint64_t) (rand() % 4096);
                        break;
                default:
                        offset += need;
                }
                steps++;
        }
        ck_assert_uint_gt(steps, 50);
        dp_read_ahead_free(ra);
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
        struct dp_read_ahead *ra = NULL;
        const uint8_t *p;
        size_t avail;
        int fd = make_file();

        ck_assert_int_eq(dp_read_ahead_new(-1, 0, 10, &ra), -EINVAL);
        ck_assert_int_eq(dp_read_ahead_new(fd, 10, 5, &ra), -EINVAL);
        ck_assert_int_eq(dp_read_ahead_new(fd, 0, 10, NULL), -EINVAL);
        ck_assert_ptr_null(ra);

        ck_assert_int_eq(dp_read_ahead_new(fd, 100, 200000, &ra), 0);
        ck_assert_int_eq(dp_read_ahead_at(ra, 99, 8, &p, &avail), -EINVAL);       /* before the range */
        ck_assert_int_eq(dp_read_ahead_at(ra, 199999, 8, &p, &avail), -EINVAL);   /* past its end */
        ck_assert_int_eq(dp_read_ahead_at(ra, 100, 0, &p, &avail), -EINVAL);
        ck_assert_int_eq(dp_read_ahead_at(ra, 100, DP_READ_AHEAD_SPAN + 1, &p, &avail), -EINVAL);
        ck_assert_int_eq(dp_read_ahead_at(ra, 5000, 8, &p, &avail), 0);
        check_bytes(p, 5000, 8);
        ck_assert_int_eq(dp_read_ahead_at(ra, 4992, 8, &p, &avail), -EINVAL);     /* backwards */
        ck_assert_int_eq(dp_read_ahead_at(ra, 199992, 8, &p, &avail), 0);
        ck_assert_uint_eq(avail, 8);
        dp_read_ahead_free(ra);
        dp_read_ahead_free(NULL);

        /* A range past the end of the file: the bytes that are not there are an error, for good. */
        ck_assert_int_eq(dp_read_ahead_new(fd, FILE_SIZE - 16, FILE_SIZE + (3u << 20), &ra), 0);
        ck_assert_int_eq(dp_read_ahead_at(ra, FILE_SIZE - 16, 16, &p, &avail), -EBADMSG);
        ck_assert_int_eq(dp_read_ahead_at(ra, FILE_SIZE - 8, 8, &p, &avail), -EBADMSG);
        dp_read_ahead_free(ra);

        /* Freed while the thread waits for room. */
        ck_assert_int_eq(dp_read_ahead_new(fd, 0, FILE_SIZE, &ra), 0);
        usleep(20000);
        dp_read_ahead_free(ra);
        close(fd);
}
END_TEST

int main(void) {
        Suite *s = suite_create("read-ahead");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_bytes_as_they_are);
        tcase_add_test(tc, test_refusals);
        suite_add_tcase(s, tc);
        return dp_check_run(s);
}
