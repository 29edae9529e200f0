/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The differential test against Debian's perf (6.1): captures written here
 * as `perf record` writes them (perf-diff-captures.h) are read by perf
 * (`perf script`, and `perf report -D` for IBS RAW registers) and by
 * `damonctl decode --format=perf.data`, which runs the daemon's own replay;
 * every field perf prints must equal ours, sample for sample
 * (perf-diff-oracle.h reads both sides).  Where perf has no word (our level,
 * the layer-4 counter) ours is derived from perf's fields by the rules in
 * doc/mem-levels.rst.  Where we differ from perf on purpose, the test
 * asserts our documented choice (doc/mem-levels.rst, "Where we differ from
 * perf").  Sources: IBS op (every OP_DATA2/OP_DATA3 field, Zen 2/3/4,
 * erratum 1293, BR_TARGET and OP_DATA4, kernel-filled fields), PEBS (every
 * data_src field, WEIGHT and WEIGHT_STRUCT, PHYS_ADDR), SPE (every packet
 * kind, five MIDRs), the real PEBS capture in DP_TESTDATA, and a seeded
 * randomized part of each.  Skipped (77) when perf is not installed.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decode-ibs.h"
#include "macro.h"
#include "mem-level.h"

#include "check-main.h"
#include "perf-diff-captures.h"
#include "perf-diff-oracle.h"

/* Samples and fields compared, per source, for the summary. */
struct tally {
        const char *source;
        size_t samples, fields;
};

static struct tally tallies[] = {
        { "ibs", 0, 0 }, { "ibs-kernel-filled", 0, 0 }, { "pebs", 0, 0 }, { "pebs-real", 0, 0 }, { "spe", 0, 0 },
};

#define FAILURES_SHOWN 12

/* One capture's comparison. */
struct diff {
        struct tally *tally;
        const char *capture;
        size_t sample;                  /* index of the sample being compared */
        size_t failures;
        char shown[FAILURES_SHOWN][400];
};

static void diff_init(struct diff *d, const char *source, const char *capture) {
        memset(d, 0, sizeof(*d));
        for (size_t i = 0; i < DP_ARRAY_SIZE(tallies); i++)
                if (strcmp(tallies[i].source, source) == 0)
                        d->tally = &tallies[i];
        ck_assert_ptr_nonnull(d->tally);
        d->capture = capture;
}

static void disagree(struct diff *d, const char *field, const char *perf, const char *ours) {
        if (d->failures < FAILURES_SHOWN)
                snprintf(d->shown[d->failures], sizeof(d->shown[0]), "%s sample %zu: %s: perf %s, ours %s",
                         d->capture, d->sample, field, perf, ours);
        d->failures++;
}

static void eq_u64(struct diff *d, const char *field, uint64_t perf, uint64_t ours) {
        char p[32], o[32];

        d->tally->fields++;
        if (perf == ours)
                return;
        snprintf(p, sizeof(p), "%#" PRIx64, perf);
        snprintf(o, sizeof(o), "%#" PRIx64, ours);
        disagree(d, field, p, o);
}

static void eq_str(struct diff *d, const char *field, const char *perf, const char *ours) {
        d->tally->fields++;
        if (strcmp(perf ?: "(none)", ours ?: "(none)") != 0)
                disagree(d, field, perf ?: "(none)", ours ?: "(none)");
}

/* Ours as the JSON has it. */
static const char *js(const json_t *o, const char *key) {
        return json_string_value(json_object_get(o, key));
}

static void diff_done(struct diff *d) {
        for (size_t i = 0; i < DP_MIN(d->failures, (size_t) FAILURES_SHOWN); i++)
                fprintf(stderr, "DISAGREE %s\n", d->shown[i]);
        ck_assert_msg(d->failures == 0, "%zu disagreements with perf in %s, the first: %s", d->failures, d->capture,
                      d->shown[0]);
}

/* ---- captures on disk ---- */

static char tmpdir[] = "/tmp/test-perf-diff.XXXXXX";

static const char *write_capture(struct pdw *w, const char *name) {
        static char path[256];
        size_t size;
        uint8_t *img = pdw_finish(w, &size);
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s.data", tmpdir, name);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(img, 1, size, f), size);
        ck_assert_int_eq(fclose(f), 0);
        free(img);
        return path;
}

/* ---- the checks every source shares ---- */

static const char *op_of(bool load, bool store) {
        return load && store ? "load+store" : store ? "store" : load ? "load" : NULL;
}

static const char *op_of_data_src(uint64_t data_src) {
        struct dp_mem_data_src s;

        dp_mem_data_src_unpack(data_src, &s);
        if (dp_mem_data_src_is_na(data_src))
                return NULL;
        return op_of(s.op & PERF_MEM_OP_LOAD, s.op & PERF_MEM_OP_STORE);
}

/* The layer-4 counter a sample at @addr goes to (vaddr mode). */
static const char *counter_of(uint64_t addr) {
        return addr == 0 ? "addr_zero" : addr >> 63 ? "kernel" : "valid";
}

static const char *level_of_data_src(uint64_t data_src) {
        return dp_mem_level_name(dp_mem_data_src_is_na(data_src) ? DP_MEM_UNKNOWN
                                                                  : dp_mem_level_from_data_src(data_src));
}

/* pid, tid, cpu, time: every source prints them. */
static void eq_who_when(struct diff *d, const struct diff_perf_row *p, const json_t *o, bool cpu) {
        eq_u64(d, "pid", p->pid, diff_json_int(o, "pid"));
        eq_u64(d, "tid", p->tid, diff_json_int(o, "tid"));
        if (cpu)
                eq_u64(d, "cpu", p->cpu, diff_json_int(o, "cpu"));
        eq_u64(d, "time", p->time, diff_json_int(o, "time"));
}

/* data_src as hex and in words; perf cuts the line at 99 characters and pads
 * it to its widest: a cut one is compared with ours padded and cut alike. */
static void eq_data_src(struct diff *d, const struct diff_perf_row *p, const json_t *o) {
        const char *text = js(o, "data_src_text");
        char cut[sizeof(p->data_src_text)];

        eq_u64(d, "data_src", p->data_src, diff_json_hex(o, "data_src", 0));
        if (p->text_cut && text) {
                snprintf(cut, sizeof(cut), "%-*.*s", DIFF_PERF_LINE_CUT - 17, DIFF_PERF_LINE_CUT - 17, text);
                text = cut;
        }
        eq_str(d, "data_src_text", p->data_src_text, text);
}

#include "test-perf-diff-ibs.h"
#include "test-perf-diff-pebs-spe.h"

static void print_tallies(void) {
        printf("perf-diff: samples and fields compared with perf %s\n", "6.1");
        for (size_t i = 0; i < DP_ARRAY_SIZE(tallies); i++)
                printf("perf-diff: %-18s %6zu samples %8zu fields\n", tallies[i].source, tallies[i].samples,
                       tallies[i].fields);
}

static Suite *perf_diff_suite(void) {
        Suite *s = suite_create("perf-diff");
        TCase *tc = tcase_create("perf");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_ibs_registers);
        tcase_add_test(tc, test_ibs_kernel_filled);
        tcase_add_test(tc, test_ibs_random);
        tcase_add_test(tc, test_pebs_data_src);
        tcase_add_test(tc, test_pebs_real);
        tcase_add_test(tc, test_pebs_random);
        tcase_add_test(tc, test_spe_packets);
        tcase_add_test(tc, test_spe_no_context);
        tcase_add_test(tc, test_spe_random);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        char cmd[128];
        int r;

        /* perf is the oracle: without it there is nothing to compare with. */
        if (system("perf version >/dev/null 2>&1") != 0) {
                printf("SKIP: perf is not installed (Debian: apt-get install linux-perf): no oracle to compare "
                       "with\n");
                return 77;
        }
        if (!mkdtemp(tmpdir)) {
                perror("mkdtemp");
                return EXIT_FAILURE;
        }
        /* One process: the tallies add up over the cases. */
        setenv("CK_FORK", "no", 1);
        r = dp_check_run(perf_diff_suite());
        print_tallies();
        /* PERF_DIFF_KEEP=1 keeps the captures, to run perf on them by hand. */
        if (getenv("PERF_DIFF_KEEP"))
                printf("captures kept in %s\n", tmpdir);
        else {
                snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
                (void) !system(cmd);
        }
        return r;
}
