/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The SPE data source: which CPUs (MIDR) perf reads the DATA-SOURCE packet
 * on, the union perf_mem_data_src linux-perf 6.1 synthesizes (every common
 * code, every event combination, loads and stores, bit for bit), and our
 * level with and without the packet (doc/mem-levels.rst). */
#include <check.h>
#include <errno.h>
#include <stdbool.h>

#include <linux/perf_event.h>

#include "decode-spe.h"
#include "macro.h"
#include "mem-level.h"

#include "capture-source.h"
#include "perf-data-header.h"
#include "source-context.h"

#include "check-main.h"

#define MIDR_N1 0x410fd0c0u             /* Neoverse N1 r0p0 */
#define MIDR_N1_R4P1 0x414fd0c1u
#define MIDR_N2 0x410fd490u
#define MIDR_V1 0x410fd400u
#define MIDR_V2 0x410fd4f0u             /* listed only by newer perf */
#define MIDR_A72 0x410fd083u
#define MIDR_AMPEREONE 0xc00fac30u      /* translated only by newer perf */
#define MIDR_UNKNOWN 0u

#define F(field, value) ((uint64_t) PERF_MEM_##field##_##value << PERF_MEM_##field##_SHIFT)
#define LOAD F(OP, LOAD)
#define STORE F(OP, STORE)
#define LN(x) ((uint64_t) PERF_MEM_LVLNUM_##x << PERF_MEM_LVLNUM_SHIFT)
#define PEER ((uint64_t) PERF_MEM_SNOOPX_PEER << PERF_MEM_SNOOPX_SHIFT)

#define OP_LOAD 0x00
#define OP_STORE 0x01
#define NO_DS -1

/* One record as the packets come: data VA, OP-TYPE LD/ST, EVENTS (2 bytes),
 * DATA-SOURCE when @ds >= 0, END; decoded through the iterator. */
static struct dp_spe_record record(uint8_t op_payload, uint16_t events, int ds) {
        uint8_t b[32];
        size_t n = 0;
        struct dp_spe_record rec;
        struct dp_spe_iter it;

        b[n++] = 0xb2;                  /* ADDRESS, data VA */
        for (int i = 0; i < 8; i++)
                b[n++] = (uint8_t) (0x00007f0000001000ull >> (8 * i));
        b[n++] = 0x49;                  /* OP-TYPE LD/ST */
        b[n++] = op_payload;
        b[n++] = 0x52;                  /* EVENTS, 2 bytes */
        b[n++] = (uint8_t) events;
        b[n++] = (uint8_t) (events >> 8);
        if (ds >= 0) {
                b[n++] = 0x43;          /* DATA-SOURCE, 1 byte */
                b[n++] = (uint8_t) ds;
        }
        b[n++] = 0x01;                  /* END */
        dp_spe_iter_init(&it, b, n, 0);
        ck_assert(dp_spe_next_record(&it, &rec));
        ck_assert_int_eq(!!(rec.have & DP_SPE_HAVE_DATA_SOURCE), ds >= 0);
        return rec;
}

START_TEST(test_listed_midrs) {
        static const struct {
                uint32_t midr;
                bool listed;
        } rows[] = {
                { MIDR_N1, true }, { MIDR_N1_R4P1, true }, { MIDR_N2, true }, { MIDR_V1, true },
                { MIDR_V2, false }, { MIDR_A72, false }, { MIDR_AMPEREONE, false }, { MIDR_UNKNOWN, false },
                /* The architecture field is part of the model: 0xf on every ARMv8 core. */
                { 0x4100d0c0u, false },
                /* Another implementer with N1's part number. */
                { 0x420fd0c0u, false },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++)
                ck_assert_msg(dp_spe_midr_common_ds(rows[i].midr) == rows[i].listed, "MIDR 0x%08x", rows[i].midr);
}
END_TEST

/* A load on a listed CPU: arm_spe__synth_data_source_common(), code by code. */
START_TEST(test_common_encoding_exact) {
        static const struct {
                int ds;
                uint64_t bits;
                enum dp_mem_level level;
        } rows[] = {
                { 0x0, F(LVL, L1) | F(LVL, HIT) | LN(L1) | F(SNOOP, NONE), DP_MEM_L1 },
                { 0x8, F(LVL, L2) | F(LVL, HIT) | LN(L2) | F(SNOOP, NONE), DP_MEM_L2 },
                { 0x9, F(LVL, L2) | F(LVL, HIT) | LN(L2) | PEER, DP_MEM_L2 },
                { 0xa, F(LVL, L3) | F(LVL, HIT) | LN(L3) | PEER, DP_MEM_L3 },
                { 0xb, F(LVL, L3) | F(LVL, HIT) | LN(L3) | F(SNOOP, HIT), DP_MEM_L3 },
                /* Our level differs on purpose for these two (doc/mem-levels.rst). */
                { 0xc, F(LVL, L3) | F(LVL, HIT) | LN(L3) | PEER, DP_MEM_REMOTE_CACHE },
                { 0xd, F(LVL, NA) | LN(NA) | F(REMOTE, REMOTE) | PEER, DP_MEM_REMOTE_CACHE },
                { 0xe, F(LVL, LOC_RAM) | F(LVL, HIT) | LN(RAM) | F(SNOOP, NONE), DP_MEM_LOCAL_DRAM },
                /* A code perf does not know: nothing but the operation. */
                { 0x3, 0, DP_MEM_UNKNOWN },
        };
        /* Events that would say otherwise, to show they are not read. */
        const uint16_t events = DP_SPE_EV_RETIRED | DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_L1D_REFILL |
                                DP_SPE_EV_LLC_ACCESS;

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++) {
                struct dp_spe_record rec = record(OP_LOAD, events, rows[i].ds);

                ck_assert_msg(dp_spe_record_data_src(&rec, MIDR_N2) == (LOAD | rows[i].bits), "code 0x%x: 0x%llx",
                              rows[i].ds, (unsigned long long) dp_spe_record_data_src(&rec, MIDR_N2));
                ck_assert_msg(dp_spe_record_level(&rec, MIDR_N2) == rows[i].level, "code 0x%x", rows[i].ds);
        }
}
END_TEST

/* Elsewhere: arm_spe__synth_data_source_generic(), for loads and stores. */
START_TEST(test_event_encoding_exact) {
        static const struct {
                uint16_t events;
                uint64_t bits;
                enum dp_mem_level level;
        } rows[] = {
                { DP_SPE_EV_RETIRED, 0, DP_MEM_UNKNOWN },
                { DP_SPE_EV_L1D_ACCESS, F(LVL, L1) | F(LVL, HIT), DP_MEM_L1 },
                { DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_L1D_REFILL, F(LVL, L1) | F(LVL, MISS), DP_MEM_UNKNOWN },
                { DP_SPE_EV_L1D_REFILL, F(LVL, L1) | F(LVL, MISS), DP_MEM_UNKNOWN },
                /* The last-level cache events win over the L1D ones. */
                { DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_L1D_REFILL | DP_SPE_EV_LLC_ACCESS, F(LVL, L3) | F(LVL, HIT),
                  DP_MEM_L3 },
                { DP_SPE_EV_L1D_REFILL | DP_SPE_EV_LLC_ACCESS | DP_SPE_EV_LLC_MISS, F(LVL, L3) | F(LVL, MISS),
                  DP_MEM_UNKNOWN },
                { DP_SPE_EV_LLC_MISS, F(LVL, L3) | F(LVL, MISS), DP_MEM_UNKNOWN },
                { DP_SPE_EV_LLC_ACCESS | DP_SPE_EV_REMOTE_ACCESS, F(LVL, L3) | F(LVL, HIT) | F(REMOTE, REMOTE),
                  DP_MEM_L3 },
                { DP_SPE_EV_REMOTE_ACCESS, F(REMOTE, REMOTE), DP_MEM_UNKNOWN },
                { DP_SPE_EV_TLB_ACCESS, F(TLB, WK) | F(TLB, HIT), DP_MEM_UNKNOWN },
                { DP_SPE_EV_TLB_ACCESS | DP_SPE_EV_TLB_WALK, F(TLB, WK) | F(TLB, MISS), DP_MEM_UNKNOWN },
                { DP_SPE_EV_TLB_WALK | DP_SPE_EV_L1D_ACCESS, F(TLB, WK) | F(TLB, MISS) | F(LVL, L1) | F(LVL, HIT),
                  DP_MEM_L1 },
        };
        static const uint32_t elsewhere[] = { MIDR_UNKNOWN, MIDR_A72, MIDR_V2, MIDR_AMPEREONE };

        for (size_t i = 0; i < DP_ARRAY_SIZE(rows); i++)
                for (size_t m = 0; m < DP_ARRAY_SIZE(elsewhere); m++)
                        for (int store = 0; store <= 1; store++) {
                                /* A DATA-SOURCE packet too: not read on these CPUs. */
                                struct dp_spe_record rec = record(store ? OP_STORE : OP_LOAD, rows[i].events, 0xe);
                                uint64_t want = (store ? STORE : LOAD) | rows[i].bits;

                                ck_assert_msg(dp_spe_record_data_src(&rec, elsewhere[m]) == want,
                                              "row %zu midr 0x%08x store %d: 0x%llx", i, elsewhere[m], store,
                                              (unsigned long long) dp_spe_record_data_src(&rec, elsewhere[m]));
                                ck_assert_msg(dp_spe_record_level(&rec, elsewhere[m]) == rows[i].level,
                                              "row %zu midr 0x%08x store %d", i, elsewhere[m], store);
                        }
}
END_TEST

/* The record of the issue: EVENTS retired, L1D-access, TLB-access and no
 * DATA-SOURCE packet is an L1 hit, whatever the CPU. */
START_TEST(test_level_without_data_source) {
        const uint16_t events = DP_SPE_EV_RETIRED | DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_TLB_ACCESS;
        struct dp_spe_record rec = record(OP_LOAD, events, NO_DS);
        static const uint32_t midrs[] = { MIDR_UNKNOWN, MIDR_A72, MIDR_N1 };
        struct dp_spe_context ctx = { .pid = 1, .tid = 1 };
        struct dp_sample s;

        for (size_t m = 0; m < DP_ARRAY_SIZE(midrs); m++) {
                ctx.midr = midrs[m];
                ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), 0);
                ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L1);
                ck_assert_uint_eq(s.data_src, dp_spe_record_data_src(&rec, midrs[m]));
                ck_assert(s.flags & DP_SAMPLE_DATA_SRC_VALID);
        }
        ck_assert_uint_eq(dp_spe_record_data_src(&rec, MIDR_UNKNOWN),
                          LOAD | F(LVL, L1) | F(LVL, HIT) | F(TLB, WK) | F(TLB, HIT));

        /* A listed CPU's load that missed L1D and hit the LLC, without the
         * packet: perf reads code 0 (an L1D hit, its record is zeroed); our
         * level follows the events (the documented difference). */
        rec = record(OP_LOAD, DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_L1D_REFILL | DP_SPE_EV_LLC_ACCESS, NO_DS);
        ck_assert_uint_eq(dp_spe_record_data_src(&rec, MIDR_N1), LOAD | F(LVL, L1) | F(LVL, HIT) | LN(L1) |
                                                                         F(SNOOP, NONE));
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_N1), DP_MEM_L3);
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_UNKNOWN), DP_MEM_L3);
        /* With the packet (DRAM), the listed CPU takes it, the others the events. */
        rec = record(OP_LOAD, DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_L1D_REFILL | DP_SPE_EV_LLC_ACCESS, 0xe);
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_N1), DP_MEM_LOCAL_DRAM);
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_V1), DP_MEM_LOCAL_DRAM);
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_V2), DP_MEM_L3);
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_UNKNOWN), DP_MEM_L3);
}
END_TEST

/* Stores on a listed CPU: perf has no level for them; ours is the events'. */
START_TEST(test_listed_store) {
        struct dp_spe_record rec = record(OP_STORE, DP_SPE_EV_L1D_ACCESS | DP_SPE_EV_TLB_ACCESS | DP_SPE_EV_TLB_WALK,
                                          0x8);

        ck_assert_uint_eq(dp_spe_record_data_src(&rec, MIDR_N1), STORE | F(LVL, NA) | LN(NA) | F(SNOOP, NA) |
                                                                         F(TLB, WK) | F(TLB, MISS));
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_N1), DP_MEM_L1);
        rec = record(OP_STORE, DP_SPE_EV_RETIRED, NO_DS);
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_N1), DP_MEM_UNKNOWN);
}
END_TEST

/* Not a load or store: data_src 0, as perf's (which then makes no memory sample). */
START_TEST(test_other_operations) {
        struct dp_spe_record rec = record(OP_LOAD, DP_SPE_EV_L1D_ACCESS, 0x0);

        rec.op_header = 0x48;           /* OP-TYPE class OTHER */
        ck_assert_uint_eq(dp_spe_record_data_src(&rec, MIDR_N1), 0);
        ck_assert_uint_eq(dp_spe_record_data_src(&rec, MIDR_UNKNOWN), 0);
        ck_assert_int_eq(dp_spe_record_level(&rec, MIDR_N1), DP_MEM_UNKNOWN);
        rec.have &= ~(uint32_t) DP_SPE_HAVE_OP_TYPE;
        ck_assert_uint_eq(dp_spe_record_data_src(&rec, MIDR_N1), 0);
}
END_TEST

START_TEST(test_midr_parse) {
        uint32_t midr = 1;

        ck_assert_int_eq(dp_midr_parse("0x00000000410fd0c0\n", &midr), 0);
        ck_assert_uint_eq(midr, MIDR_N1);
        ck_assert_int_eq(dp_midr_parse("0x00000000c00fac30", &midr), 0);
        ck_assert_uint_eq(midr, MIDR_AMPEREONE);
        ck_assert_int_eq(dp_midr_parse("0x00000001410fd0c0\n", &midr), -ERANGE);
        ck_assert_int_eq(dp_midr_parse("410fd0c0\n", &midr), -EINVAL);
        ck_assert_int_eq(dp_midr_parse("0x\n", &midr), -EINVAL);
        ck_assert_int_eq(dp_midr_parse("0x410fd0c0 \n", &midr), -EINVAL);
        ck_assert_int_eq(dp_midr_parse("0x410fd0c0\n\n", &midr), -EINVAL);
        ck_assert_int_eq(dp_midr_parse("0x10000000000000000", &midr), -EINVAL);
        ck_assert_int_eq(dp_midr_parse("", &midr), -EINVAL);
        ck_assert_uint_eq(midr, MIDR_AMPEREONE);       /* untouched on error */
}
END_TEST

/* Replay: HEADER_CPUID's MIDR for every CPU; live: per CPU; else unknown. */
START_TEST(test_context_midr) {
        static const uint32_t per_cpu[3] = { MIDR_A72, 0, MIDR_N1 };
        struct dp_source_context c;
        struct dp_perf_cpuid id;

        ck_assert_int_eq(dp_perf_cpuid_parse("0x00000000410fd490", &id), 0);
        dp_capture_source_context(&id, &c);
        ck_assert_uint_eq(dp_source_context_midr(&c, 0), MIDR_N2);
        ck_assert_uint_eq(dp_source_context_midr(&c, 77), MIDR_N2);
        ck_assert_int_eq(dp_perf_cpuid_parse("GenuineIntel,6,58,9", &id), 0);
        dp_capture_source_context(&id, &c);
        ck_assert_uint_eq(dp_source_context_midr(&c, 0), 0);
        dp_capture_source_context(NULL, &c);
        ck_assert_uint_eq(dp_source_context_midr(&c, 0), 0);
        ck_assert_uint_eq(dp_source_context_midr(NULL, 0), 0);

        c = (struct dp_source_context) { .midr = per_cpu, .n_midr = DP_ARRAY_SIZE(per_cpu), .midr_all = MIDR_V1 };
        ck_assert_uint_eq(dp_source_context_midr(&c, 0), MIDR_A72);
        ck_assert_uint_eq(dp_source_context_midr(&c, 1), 0);
        ck_assert_uint_eq(dp_source_context_midr(&c, 2), MIDR_N1);
        ck_assert_uint_eq(dp_source_context_midr(&c, 3), 0);
}
END_TEST

static Suite *spe_data_source_suite(void) {
        Suite *s = suite_create("spe-data-source");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_listed_midrs);
        tcase_add_test(tc, test_common_encoding_exact);
        tcase_add_test(tc, test_event_encoding_exact);
        tcase_add_test(tc, test_level_without_data_source);
        tcase_add_test(tc, test_listed_store);
        tcase_add_test(tc, test_other_operations);
        tcase_add_test(tc, test_midr_parse);
        tcase_add_test(tc, test_context_midr);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(spe_data_source_suite());
}
