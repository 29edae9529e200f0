/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl decode --format=perf.data as a user runs it (DP_DAMONCTL): the
 * real PEBS capture line by line and as JSON, a generated IBS capture whose
 * records go to every layer-4 counter (and the register fields with them),
 * a capture whose last record is damaged (exit 5, the samples before it
 * still shown), and
 * the command lines it refuses.  Against perf itself: test-perf-diff.c.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode-ibs.h"
#include "macro.h"

#include "check-main.h"
#include "perf-diff-captures.h"
#include "test-ctl-run.h"

static char dir[] = "/tmp/test-damonctl-decode-perf-XXXXXX";

static void setup(void) {
        strcpy(dir, "/tmp/test-damonctl-decode-perf-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        ck_assert_int_eq(system(cmd), 0);
}

static struct run decode(const char *a, const char *b, const char *c) {
        const char *const args[] = { "decode", a, b, c, NULL };

        return ctl_collect(dir, ctl_spawn(dir, "unix:/nonexistent", 0, args));    /* no daemon needed */
}

static unsigned count(const char *text, const char *needle) {
        unsigned n = 0;

        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                n++;
        return n;
}

START_TEST(test_real_pebs) {
        const char *testdata = getenv("DP_TESTDATA");
        char path[512];
        struct run r;
        json_t *last = NULL;
        size_t samples = 0;

        ck_assert_ptr_nonnull(testdata);
        snprintf(path, sizeof(path), "%s/pebs-ivybridge-numatop.perf.data", testdata);
        r = decode("--format=perf.data", path, NULL);
        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "# event 0: cpu event 0x1cd is a PEBS memory-access event"));
        /* 14 samples, 12 of them at kernel addresses, as perf script shows them. */
        ck_assert_uint_eq(count(r.out, " pebs "), 14);
        ck_assert_uint_eq(count(r.out, " load kernel "), 12);
        ck_assert_uint_eq(count(r.out, " load valid "), 2);
        ck_assert_ptr_nonnull(strstr(r.out, " 214145/214145  [000] 572699.320213005 pebs     addr=0xffff881817d63e02 "
                                            "phys=- weight=7 level=l1 load kernel data_src=0x68100142 |OP LOAD|LVL "
                                            "L1 hit|SNP None|TLB L1 or L2 hit|LCK No|BLK  N/A\n"));
        ck_assert_ptr_nonnull(strstr(r.out, "LCK Yes"));        /* the one locked load, weight 519 */
        ck_assert_ptr_nonnull(strstr(r.out, "# 14 samples: valid 2 null 0 addr_zero 0 kernel 12 inv_phys 0\n"));
        run_done(&r);

        r = decode("--format=perf.data", "--json", path);
        ck_assert_int_eq(r.status, 0);
        for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n")) {
                json_t *o = json_loads(line, 0, NULL);

                ck_assert_msg(o, "not JSON: %s", line);
                json_decref(last);
                last = o;
                if (strcmp(json_string_value(json_object_get(o, "type")), "sample") != 0)
                        continue;
                samples++;
                ck_assert_str_eq(json_string_value(json_object_get(o, "source")), "pebs");
                ck_assert_int_eq(json_integer_value(json_object_get(o, "pid")), 214145);
                ck_assert_str_eq(json_string_value(json_object_get(o, "op")), "load");
                ck_assert(json_is_null(json_object_get(o, "phys_addr")));
        }
        ck_assert_uint_eq(samples, 14);
        ck_assert_str_eq(json_string_value(json_object_get(last, "type")), "summary");
        ck_assert_int_eq(json_integer_value(json_object_get(last, "kernel")), 12);
        json_decref(last);
        run_done(&r);
}
END_TEST

/* One op for each counter: valid, null (no En/Val; a branch), addr_zero, kernel. */
static const char *ibs_capture(const char *name, bool cut) {
        static const struct {
                uint64_t ctl, data3, lin;
        } ops[] = {
                { CTL_OK, D3_LD | D3_DC_MISS | D3_L2_MISS | D3_LIN_VALID | D3_LAT(300), 0x00007f0000001000ull },
                { CTL_EN | 0x186a, D3_LD | D3_LIN_VALID, 0x00007f0000002000ull },
                { CTL_OK, D3_LIN_VALID, 0x00007f0000003000ull },
                { CTL_OK, D3_ST | D3_LIN_VALID, 0 },
                { CTL_OK, D3_ST | D3_LIN_VALID, 0xffff888000004000ull },
        };
        static char path[256];
        struct pdw w;
        uint8_t *img;
        size_t size;
        FILE *f;

        diff_ibs_begin(&w, 0x19, 0x11, DIFF_ID_TYPES);
        for (size_t i = 0; i < DP_ARRAY_SIZE(ops); i++)
                diff_ibs_sample(&w, DIFF_ID_TYPES, &(struct pdw_id) { 77, 78, 1000 + i, 0x300, 1 },
                                &(struct diff_ibs_op) { .caps = DIFF_IBS_CAPS | DIFF_IBS_CAPS_ZEN4, .ctl = ops[i].ctl,
                                                        .data2 = D2_DRAM | D2_RMT_NODE, .data3 = ops[i].data3,
                                                        .lin = ops[i].lin });
        img = pdw_finish(&w, &size);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        if (cut) {
                /* The last record (104 bytes, as all here) claims to run past the data section. */
                uint64_t data_offset, data_size;
                uint16_t huge = 0xfff8;

                memcpy(&data_offset, img + 40, 8);
                memcpy(&data_size, img + 48, 8);
                memcpy(img + data_offset + data_size - 104 + 6, &huge, 2);
        }
        ck_assert_uint_eq(fwrite(img, 1, size, f), size);
        ck_assert_int_eq(fclose(f), 0);
        free(img);
        return path;
}

START_TEST(test_ibs_counters) {
        struct run r = decode("--format=perf.data", ibs_capture("ibs.data", false), NULL);

        ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
        ck_assert_ptr_nonnull(strstr(r.out, "addr=0x7f0000001000 phys=- weight=300 level=remote-dram load valid "));
        ck_assert_uint_eq(count(r.out, " null: the decoder made no sample of it\n"), 2);
        ck_assert_ptr_nonnull(strstr(r.out, "addr=0x0 phys=- weight=0 level=l1 store addr_zero "));
        ck_assert_ptr_nonnull(strstr(r.out, "addr=0xffff888000004000 phys=- weight=0 level=l1 store kernel "));
        ck_assert_ptr_nonnull(strstr(r.out, "# 5 samples: valid 1 null 2 addr_zero 1 kernel 1 inv_phys 0\n"));
        run_done(&r);

        /* JSON: every register field, also of records the decoder refused. */
        r = decode("--format=perf.data", "--json", ibs_capture("ibs.data", false));
        ck_assert_int_eq(r.status, 0);
        ck_assert_uint_eq(count(r.out, "\"ibs\":{"), 5);
        ck_assert_uint_eq(count(r.out, "\"rmt_node\":true"), 5);
        ck_assert_uint_eq(count(r.out, "\"counter\":\"null\""), 2);
        run_done(&r);
}
END_TEST

START_TEST(test_cut_capture) {
        struct run r = decode("--format=perf.data", ibs_capture("cut.data", true), NULL);

        ck_assert_int_eq(r.status, 5);
        ck_assert_uint_eq(count(r.out, " ibs "), 4);    /* the samples before the cut */
        ck_assert_ptr_nonnull(strstr(r.err, "damaged after 4 samples"));
        run_done(&r);
}
END_TEST

START_TEST(test_refused) {
        struct run r = decode("--format=perf.data", "-", NULL);

        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "give the capture's FILE"));
        run_done(&r);
        r = decode("--format=perf.data", "--cpu=0x19:0x01", "x.data");
        ck_assert_int_eq(r.status, 2);
        ck_assert_ptr_nonnull(strstr(r.err, "a perf.data capture names its CPU itself"));
        run_done(&r);
        r = decode("--format=perf.data", "/nonexistent/x.data", NULL);
        ck_assert_int_eq(r.status, 1);
        ck_assert_ptr_nonnull(strstr(r.err, "not a readable perf.data capture"));
        run_done(&r);
}
END_TEST

static Suite *decode_perf_suite(void) {
        Suite *s = suite_create("decode-perf");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_real_pebs);
        tcase_add_test(tc, test_ibs_counters);
        tcase_add_test(tc, test_cut_capture);
        tcase_add_test(tc, test_refused);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(decode_perf_suite());
}
