/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "macro.h"
#include "fileio.h"
#include "proc-parse.h"

#include "check-main.h"

static const char maps_text[] =
        "5610b5ad7000-5610b5ad9000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
        "5610b5ad9000-5610b5ade000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
        "5610cbe0e000-5610cbe2f000 rw-p 00000000 00:00 0                          [heap]\n"
        "7f7a981db000-7f7a981fd000 rw-p 00000000 00:00 0 \n"
        "7f7a981fd000-7f7a98254000 r--p 00000000 fe:00 320475                     /tmp/scratch file (deleted)\n"
        "7f7a98443000-7f7a9844a000 r--s 00000000 fe:00 332280                     /usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache\n"
        "7f7a9844b000-7f7a9844d000 rw-p 00000000 00:00 0\n"
        "7f7a9844d000-7f7a98451000 r--p 00000000 00:00 0                          [vvar]\n"
        "7ffc1e0d5000-7ffc1e0f6000 rw-p 00000000 00:00 0                          [stack]\n"
        "7ffc1e0f6000-7ffc1e0f7000 ---p 00000000 00:00 0 \n"
        "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]\n";

START_TEST(test_maps_real_looking) {
        _cleanup_free_ struct dp_range *r = NULL;
        size_t n = 0, bad = 99;

        ck_assert_int_eq(dp_parse_maps(maps_text, strlen(maps_text), &r, &n, &bad), 0);
        ck_assert_uint_eq(bad, 0);
        ck_assert_uint_eq(n, 9);        /* every line but the PROT_NONE guard and [vsyscall] */
        ck_assert_uint_eq(r[0].start, 0x5610b5ad7000);
        ck_assert_uint_eq(r[0].end, 0x5610b5ad9000);
        ck_assert_uint_eq(r[2].start, 0x5610cbe0e000);  /* [heap] */
        ck_assert_uint_eq(r[3].end, 0x7f7a981fd000);    /* anonymous, trailing space */
        ck_assert_uint_eq(r[4].start, 0x7f7a981fd000);  /* deleted file */
        ck_assert_uint_eq(r[6].end, 0x7f7a9844d000);    /* anonymous, no trailing space */
        ck_assert_uint_eq(r[8].end, 0x7ffc1e0f6000);    /* [stack], the guard after it skipped */
        for (size_t i = 0; i < n; i++)
                ck_assert_uint_lt(r[i].start, UINT64_C(0x800000000000));
}
END_TEST

START_TEST(test_maps_no_trailing_newline_and_empty) {
        static const char one[] = "00400000-00401000 r-xp 00000000 08:01 1 /bin/x";
        _cleanup_free_ struct dp_range *r = NULL;
        struct dp_range *none = (struct dp_range *) 1;
        size_t n = 0;

        ck_assert_int_eq(dp_parse_maps(one, strlen(one), &r, &n, NULL), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(r[0].start, 0x400000);

        ck_assert_int_eq(dp_parse_maps("", 0, &none, &n, NULL), 0);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_null(none);
}
END_TEST

static void assert_bad_maps(const char *text, size_t expect_line) {
        struct dp_range *r = NULL;
        size_t n = 0, bad = 0;

        ck_assert_int_eq(dp_parse_maps(text, strlen(text), &r, &n, &bad), -EBADMSG);
        ck_assert_uint_eq(bad, expect_line);
        ck_assert_ptr_null(r);
}

START_TEST(test_maps_bad_lines) {
        const char *good = "00400000-00401000 r-xp 00000000 08:01 1 /bin/x\n";
        char buf[512];

        assert_bad_maps("garbage\n", 1);
        snprintf(buf, sizeof(buf), "%s%s", good, "00401000-00400000 r-xp 00000000 08:01 1 /bin/x\n");
        assert_bad_maps(buf, 2);        /* inverted */
        snprintf(buf, sizeof(buf), "%s%s%s", good, good, "00400000-00401000 rzxp 00000000 08:01 1\n");
        assert_bad_maps(buf, 3);        /* bad perms */
        assert_bad_maps("00400000-00401000 r-xp 00000000 0801 1\n", 1);        /* bad dev */
        assert_bad_maps("00400000-00401000 r-xp 00000000 08:01\n", 1);         /* no inode */
        assert_bad_maps("00400000-00401000 r-xp 00000000 08:01 1x /bin\n", 1); /* junk after inode */
        assert_bad_maps("00400000 r-xp 00000000 08:01 1\n", 1);                /* no end */
        assert_bad_maps("11112222333344445-00401000 r-xp 00000000 08:01 1\n", 1); /* 17 digits */
        snprintf(buf, sizeof(buf), "%s\n%s", good, good);
        assert_bad_maps(buf, 2);        /* blank line in the middle */
}
END_TEST

static const char iomem_text[] =
        "00000000-00000fff : Reserved\n"
        "00001000-0009fbff : System RAM\n"
        "0009fc00-000fffff : Reserved\n"
        "  000f0000-000fffff : System ROM\n"
        "00100000-bfffffff : System RAM\n"
        "  01000000-02276987 : Kernel code\n"
        "  03b36000-03c66fff : Kernel bss\n"
        "c0001000-eebfffff : PCI Bus 0000:00\n"
        "  d0000000-d0ffffff : System RAM\n"     /* nested: not top level */
        "    d0000000-d00fffff : Kernel data\n"
        "100000000-63fffffff : System RAM\n"
        "4000000000-7fffffffff : PCI Bus 0000:00\n"
        "  4000000000-400007ffff : 0000:00:01.0\n"
        "    4000000000-400007ffff : virtio-pci-modern\n"
        "7000000000-70ffffffff : System RAM (kmem)\n";

START_TEST(test_iomem_system_ram) {
        _cleanup_free_ struct dp_range *r = NULL;
        size_t n = 0;

        ck_assert_int_eq(dp_parse_iomem(iomem_text, strlen(iomem_text), &r, &n, NULL), 0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(r[0].start, 0x1000);
        ck_assert_uint_eq(r[0].end, 0x9fc00);           /* inclusive 0x9fbff -> exclusive */
        ck_assert_uint_eq(r[1].start, 0x100000);
        ck_assert_uint_eq(r[1].end, 0xc0000000);
        ck_assert_uint_eq(r[2].start, 0x100000000);
        ck_assert_uint_eq(r[2].end, 0x640000000);
}
END_TEST

START_TEST(test_iomem_zeros_without_privilege) {
        static const char zeros[] =
                "00000000-00000000 : Reserved\n"
                "00000000-00000000 : System RAM\n"
                "  00000000-00000000 : Kernel code\n"
                "00000000-00000000 : PCI Bus 0000:00\n";
        struct dp_range *r = NULL;
        size_t n = 0;

        ck_assert_int_eq(dp_parse_iomem(zeros, strlen(zeros), &r, &n, NULL), -EPERM);
        ck_assert_ptr_null(r);
}
END_TEST

START_TEST(test_iomem_errors) {
        static const char no_ram[] = "00000000-00000fff : Reserved\n";
        static const char bad[] = "00000000-00000fff : Reserved\n00001000-0009fbff System RAM\n";
        static const char inverted[] = "00002000-00001000 : System RAM\n";
        static const char no_name[] = "00001000-00002000 : \n";
        static const char top[] = "ffffffff00000000-ffffffffffffffff : System RAM\n";
        struct dp_range *r = NULL;
        size_t n = 0, line = 0;

        ck_assert_int_eq(dp_parse_iomem(no_ram, strlen(no_ram), &r, &n, &line), -ENOENT);
        ck_assert_int_eq(dp_parse_iomem("", 0, &r, &n, &line), -ENOENT);
        ck_assert_int_eq(dp_parse_iomem(bad, strlen(bad), &r, &n, &line), -EBADMSG);
        ck_assert_uint_eq(line, 2);
        ck_assert_int_eq(dp_parse_iomem(inverted, strlen(inverted), &r, &n, &line), -EBADMSG);
        ck_assert_uint_eq(line, 1);
        ck_assert_int_eq(dp_parse_iomem(no_name, strlen(no_name), &r, &n, &line), -EBADMSG);
        ck_assert_int_eq(dp_parse_iomem(top, strlen(top), &r, &n, &line), -ERANGE);
        ck_assert_ptr_null(r);
}
END_TEST

/* Not NUL-terminated: the parser must stay within len. */
START_TEST(test_parsers_respect_length) {
        _cleanup_free_ struct dp_range *r = NULL;
        const char *full = "00400000-00401000 r-xp 00000000 08:01 1 /bin/x\nGARBAGE";
        size_t n = 0;

        ck_assert_int_eq(dp_parse_maps(full, strlen(full) - strlen("GARBAGE"), &r, &n, NULL), 0);
        ck_assert_uint_eq(n, 1);
}
END_TEST

/* Garbage in any form gives an error or a result, never a crash (ASan checks). */
START_TEST(test_parsers_garbage) {
        unsigned seed = 7;
        char buf[256];

        for (int round = 0; round < 2000; round++) {
                size_t len = (size_t) (rand_r(&seed) % sizeof(buf));
                struct dp_range *r = NULL;
                size_t n = 0;
                int ret;

                memcpy(buf, maps_text, DP_MIN(len, sizeof(maps_text)));
                for (size_t i = 0; i < len; i++)
                        if (rand_r(&seed) % 8 == 0)
                                buf[i] = (char) (rand_r(&seed) % 256);

                ret = dp_parse_maps(buf, len, &r, &n, NULL);
                ck_assert(ret == 0 || ret == -EBADMSG);
                free(r);
                r = NULL;
                ret = dp_parse_iomem(buf, len, &r, &n, NULL);
                ck_assert(ret == 0 || ret == -EBADMSG || ret == -ENOENT || ret == -EPERM || ret == -ERANGE);
                free(r);
        }
}
END_TEST

START_TEST(test_read_file) {
        char path[] = "/tmp/test-proc-parse-XXXXXX";
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ struct dp_range *r = NULL;
        char link_path[PATH_MAX], *other = NULL;
        size_t len = 0, len2 = 0, n = 0;
        int fd;

        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, maps_text, strlen(maps_text)), (ssize_t) strlen(maps_text));
        close(fd);

        ck_assert_int_eq(dp_read_file(path, &buf, &len), 0);
        /* A symlink in the last place is refused, not followed. */
        snprintf(link_path, sizeof(link_path), "%s.link", path);
        ck_assert_int_eq(symlink(path, link_path), 0);
        ck_assert_int_eq(dp_read_file(link_path, &other, &len2), -ELOOP);
        ck_assert_ptr_null(other);
        unlink(link_path);
        unlink(path);
        ck_assert_uint_eq(len, strlen(maps_text));
        ck_assert_str_eq(buf, maps_text);
        ck_assert_int_eq(dp_parse_maps(buf, len, &r, &n, NULL), 0);
        ck_assert_uint_eq(n, 9);

        ck_assert_int_eq(dp_read_file("/nonexistent/file", &buf, &len), -ENOENT);
}
END_TEST

START_TEST(test_read_own_maps) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ struct dp_range *r = NULL;
        size_t len = 0, n = 0, bad = 0;

        /* procfs reports size 0; this checks the read-to-EOF path. */
        ck_assert_int_eq(dp_read_file("/proc/self/maps", &buf, &len), 0);
        ck_assert_uint_gt(len, 0);
        ck_assert_int_eq(dp_parse_maps(buf, len, &r, &n, &bad), 0);
        ck_assert_uint_gt(n, 3);
}
END_TEST

static Suite *proc_parse_suite(void) {
        Suite *s = suite_create("proc-parse");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_maps_real_looking);
        tcase_add_test(tc, test_maps_no_trailing_newline_and_empty);
        tcase_add_test(tc, test_maps_bad_lines);
        tcase_add_test(tc, test_iomem_system_ram);
        tcase_add_test(tc, test_iomem_zeros_without_privilege);
        tcase_add_test(tc, test_iomem_errors);
        tcase_add_test(tc, test_parsers_respect_length);
        tcase_add_test(tc, test_parsers_garbage);
        tcase_add_test(tc, test_read_file);
        tcase_add_test(tc, test_read_own_maps);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(proc_parse_suite());
}
