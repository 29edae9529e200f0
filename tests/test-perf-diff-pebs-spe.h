/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* test-perf-diff.c, Intel PEBS and ARM SPE: perf script's samples against
 * ours, field by field.  Included once. */

/* ---- PEBS ---- */

#define PEBS_FIELDS (DIFF_F_CPU | DIFF_F_ADDR | DIFF_F_DATA_SRC | DIFF_F_WEIGHT | DIFF_F_PHYS)
#define PEBS_FIELDS_ARG "pid,tid,cpu,time,addr,data_src,weight,phys_addr"

/* perf's fields against ours.  Our weight is a u32 latency: perf's u64
 * WEIGHT saturates there (doc/mem-levels.rst). */
static void pebs_sample_eq(struct diff *d, const struct diff_perf_row *p, const json_t *o, bool cpu) {
        eq_who_when(d, p, o, cpu);
        eq_str(d, "counter", counter_of(p->addr), js(o, "counter"));
        eq_u64(d, "addr", p->addr, diff_json_hex(o, "addr", 0));
        eq_u64(d, "phys_addr", p->phys, diff_json_hex(o, "phys_addr", 0));
        eq_u64(d, "weight (saturated to 32 bits)", DP_MIN(p->weight, (uint64_t) UINT32_MAX),
               diff_json_int(o, "weight"));
        eq_data_src(d, p, o);
        eq_str(d, "op", op_of_data_src(p->data_src), js(o, "op"));
        eq_str(d, "level", level_of_data_src(p->data_src), js(o, "level"));
}

static void pebs_compare(const char *name, uint64_t weight_type, const struct diff_pebs_sample *s, size_t n) {
        const uint64_t type = DIFF_PEBS_TYPES | weight_type;
        struct diff_perf_row *rows;
        const char *path;
        struct diff d;
        json_t *ours;
        struct pdw w;

        diff_pebs_begin(&w, weight_type);
        for (size_t i = 0; i < n; i++)
                diff_pebs_sample(&w, type, &(struct pdw_id) { 300 + i % 7, 300 + i % 11, 5000000 + 31 * i, 0,
                                                              (uint32_t) (i % 4) }, &s[i]);
        path = write_capture(&w, name);
        diff_init(&d, "pebs", name);
        ck_assert_uint_eq(diff_perf_script(path, "", PEBS_FIELDS_ARG, PEBS_FIELDS, &rows), n);
        ck_assert_uint_eq(diff_ours(path, &ours), n);
        for (size_t i = 0; i < n; i++) {
                d.sample = i;
                d.tally->samples++;
                pebs_sample_eq(&d, &rows[i], json_array_get(ours, i), true);
        }
        free(rows);
        json_decref(ours);
        diff_done(&d);
}

/* Every level, snoop, TLB, lock and block value, alone. */
static size_t pebs_enumerate(struct diff_pebs_sample *s, size_t max) {
        const uint64_t load = (uint64_t) PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT;
        size_t n = 0;

#define ADD(ds)                                                                                         \
        do {                                                                                            \
                ck_assert_uint_lt(n, max);                                                              \
                s[n] = (struct diff_pebs_sample) { .addr = 0x00007f0000001000ull + 64 * n,              \
                                                   .data_src = (ds), .weight = 7 + n,                   \
                                                   .phys_addr = n % 3 ? 0x100000000ull + 64 * n : 0 };  \
                n++;                                                                                    \
        } while (0)

        for (unsigned op = 0; op < 5; op++)
                ADD((uint64_t) 1 << op);
        for (unsigned b = 0; b < 14; b++) {
                ADD(load | (uint64_t) (1u << b | PERF_MEM_LVL_HIT) << PERF_MEM_LVL_SHIFT);
                ADD(load | (uint64_t) (1u << b | PERF_MEM_LVL_MISS) << PERF_MEM_LVL_SHIFT);
        }
        for (unsigned num = 0; num < 16; num++)
                for (unsigned hops = 0; hops < 5; hops++)
                        for (unsigned remote = 0; remote < 2; remote++)
                                ADD(load | (uint64_t) num << PERF_MEM_LVLNUM_SHIFT |
                                    (uint64_t) hops << PERF_MEM_HOPS_SHIFT |
                                    (uint64_t) remote << PERF_MEM_REMOTE_SHIFT |
                                    (uint64_t) PERF_MEM_LVL_HIT << PERF_MEM_LVL_SHIFT);
        for (unsigned x = 0; x < 32; x++)
                ADD(load | (uint64_t) x << PERF_MEM_SNOOP_SHIFT);
        for (unsigned x = 0; x < 4; x++)
                ADD(load | (uint64_t) x << PERF_MEM_SNOOPX_SHIFT | (uint64_t) (x & 1) << PERF_MEM_SNOOP_SHIFT);
        for (unsigned x = 0; x < 128; x++)
                ADD(load | (uint64_t) x << PERF_MEM_TLB_SHIFT);
        for (unsigned x = 0; x < 4; x++)
                ADD(load | (uint64_t) x << PERF_MEM_LOCK_SHIFT);
        for (unsigned x = 0; x < 8; x++)
                ADD(load | (uint64_t) x << PERF_MEM_BLK_SHIFT);
        ADD(0x1e05080021ull);                   /* the kernel's "not available" */
        ADD(0);
        /* Intel's own encodings (arch/x86/events/intel/ds.c): L1 hit, L3 hit
         * HitM, local DRAM, remote DRAM and a store to L1. */
        ADD(0x68100142ull);
        ADD(0x1a20080142ull);
        ADD(0x1a05082142ull);
        ADD(0x1a0508a142ull);
        ADD(0x0000142ull << 0 | 0x5000000ull);
        s[n - 3].addr = 0xffff888000001000ull;  /* kernel */
        s[n - 2].addr = 0;                      /* address 0 */
#undef ADD
        return n;
}

START_TEST(test_pebs_data_src) {
        static struct diff_pebs_sample s[512];
        size_t n = pebs_enumerate(s, DP_ARRAY_SIZE(s));

        /* WEIGHT: a u64 (a few above 32 bits); WEIGHT_STRUCT: var1 the latency, var2 the instruction latency. */
        for (size_t i = 0; i < n; i++)
                s[i].weight = i % 50 == 0 ? (uint64_t) i << 33 : 7 + i;
        pebs_compare("pebs-weight", PERF_SAMPLE_WEIGHT, s, n);
        for (size_t i = 0; i < n; i++)
                s[i].weight = (uint64_t) (i * 3) << 32 | (uint32_t) (5 * i + 1);
        pebs_compare("pebs-weight-struct", PERF_SAMPLE_WEIGHT_STRUCT, s, n);
}
END_TEST

START_TEST(test_pebs_random) {
        static struct diff_pebs_sample s[1500];
        uint64_t seed = 0x9eb5;

        for (size_t i = 0; i < DP_ARRAY_SIZE(s); i++) {
                uint64_t r = diff_rand(&seed);

                s[i] = (struct diff_pebs_sample) {
                        .addr = r % 7 == 0 ? diff_rand(&seed) | 1ull << 63 : r % 13 == 0 ? 0 : diff_rand(&seed) >> 17,
                        .data_src = random_data_src(&seed),
                        .weight = r & 1 ? diff_rand(&seed) : diff_rand(&seed) & 0xffff,
                        .phys_addr = r & 2 ? diff_rand(&seed) >> 12 : 0,
                };
        }
        pebs_compare("random-pebs", PERF_SAMPLE_WEIGHT, s, DP_ARRAY_SIZE(s));
}
END_TEST

/* The real capture: ours against perf, and perf against the text recorded
 * beside the capture (so the oracle here is the one the capture was read with). */
START_TEST(test_pebs_real) {
        const char *testdata = getenv("DP_TESTDATA");
        char path[512], text_path[512], cmd[600], *text = NULL, *line;
        struct diff_perf_row *rows;
        struct diff d;
        json_t *ours;
        size_t n, k = 0;

        ck_assert_ptr_nonnull(testdata);
        snprintf(path, sizeof(path), "%s/pebs-ivybridge-numatop.perf.data", testdata);
        snprintf(text_path, sizeof(text_path), "%s/pebs-ivybridge-numatop.perf.script", testdata);
        diff_init(&d, "pebs-real", "pebs-ivybridge-numatop");
        /* No CPU, no PHYS_ADDR in this capture. */
        n = diff_perf_script(path, "", "pid,tid,time,addr,data_src,weight",
                             DIFF_F_ADDR | DIFF_F_DATA_SRC | DIFF_F_WEIGHT, &rows);
        ck_assert_uint_eq(n, 14);
        ck_assert_uint_eq(diff_ours(path, &ours), n);
        for (size_t i = 0; i < n; i++) {
                d.sample = i;
                d.tally->samples++;
                pebs_sample_eq(&d, &rows[i], json_array_get(ours, i), false);
        }
        /* "comm pid/tid time: period event: addr data_src |words| weight ip" */
        snprintf(cmd, sizeof(cmd), "cat '%s'", text_path);
        ck_assert_int_eq(diff_run(cmd, &text), 0);
        for (line = text; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line)) {
                const char *at = strstr(line, "cpu/mem-loads/pp: ");
                struct diff_perf_row r = {};

                if (!at)
                        continue;
                ck_assert_uint_lt(k, n);
                at = diff_parse_u64(at + strlen("cpu/mem-loads/pp: "), 16, &r.addr);
                at = diff_parse_u64(at, 16, &r.data_src);
                /* The text, then the weight: the recorded words are known whole. */
                at = diff_parse_data_src_text(at + 1, &r);
                r.weight = strtoull(strstr(r.data_src_text, "|BLK  N/A") + 9, NULL, 10);
                r.data_src_text[strstr(r.data_src_text, "|BLK  N/A") + 9 - r.data_src_text] = '\0';
                r.text_cut = false;
                d.sample = k;
                eq_u64(&d, "recorded addr", r.addr, diff_json_hex(json_array_get(ours, k), "addr", 0));
                eq_data_src(&d, &r, json_array_get(ours, k));
                eq_u64(&d, "recorded weight", r.weight, diff_json_int(json_array_get(ours, k), "weight"));
                k++;
        }
        ck_assert_uint_eq(k, n);
        free(text);
        free(rows);
        json_decref(ours);
        diff_done(&d);
}
END_TEST

/* ---- SPE ---- */

/* The MIDRs whose DATA-SOURCE perf 6.1 reads with the Neoverse encoding. */
static bool spe_common_encoding(uint64_t midr) {
        uint64_t part = midr & 0xff00fff0;     /* implementer and part number */

        return part == 0x4100d0c0 || part == 0x4100d490 || part == 0x4100d400;
}

struct spe_machine {
        const char *name;
        uint64_t midr;
};

static const struct spe_machine spe_machines[] = {
        { "neoverse-n1", 0x410fd0c0 }, { "neoverse-n2", 0x410fd490 }, { "neoverse-v1", 0x410fd400 },
        { "cortex-a76", 0x410fd0b0 }, { "ampereone", 0xc00fac30 },
};

/* SPE EVENTS bits (Arm ARM, "Events packet"). */
#define SPE_EV_L1D_ACCESS (1u << 2)
#define SPE_EV_L1D_REFILL (1u << 3)
#define SPE_EV_LLC_ACCESS (1u << 8)
#define SPE_EV_LLC_MISS (1u << 9)

/* Our level by doc/mem-levels.rst ("ARM SPE"): perf's data_src read by the
 * tables, but for the three departures it lists, on the cores perf 6.1 reads
 * DATA-SOURCE for: a load without the packet and any store take the level
 * from the events (the last-level cache first; a miss names no level), and
 * codes 0xc (peer cluster) and 0xd (remote) are a remote cache. */
static const char *spe_doc_level(const struct diff_spe_rec *r, uint64_t midr, uint64_t perf_data_src) {
        if (!spe_common_encoding(midr))
                return level_of_data_src(perf_data_src);
        if (r->store || r->data_source < 0) {
                if (r->events & (SPE_EV_LLC_ACCESS | SPE_EV_LLC_MISS))
                        return (r->events & SPE_EV_LLC_MISS) ? "unknown" : "l3";
                if (r->events & (SPE_EV_L1D_ACCESS | SPE_EV_L1D_REFILL))
                        return (r->events & SPE_EV_L1D_REFILL) ? "unknown" : "l1";
                return "unknown";
        }
        if (r->data_source == 0xc || r->data_source == 0xd)
                return "remote-cache";
        return level_of_data_src(perf_data_src);
}

/* The records of @recs (branches make no sample) against perf's memory samples. */
static void spe_compare(const char *name, const char *path, uint64_t midr, const struct diff_spe_rec *recs,
                        const uint64_t *aux_time, size_t n) {
        const unsigned fields = DIFF_F_CPU | DIFF_F_ADDR | DIFF_F_DATA_SRC | DIFF_F_WEIGHT | DIFF_F_PHYS;
        struct diff_perf_row *rows;
        size_t m, k = 0;
        struct diff d;
        json_t *ours;

        diff_init(&d, "spe", name);
        m = diff_perf_script(path, "--itrace=M", "hw:pid,tid,cpu,time,addr,data_src,weight,phys_addr", fields, &rows);
        ck_assert_uint_eq(diff_ours(path, &ours), m);
        for (size_t i = 0; i < n; i++) {
                const struct diff_perf_row *p = &rows[k];
                const json_t *o;

                if (recs[i].branch || recs[i].other)
                        continue;
                ck_assert_uint_lt(k, m);
                o = json_array_get(ours, k);
                d.sample = k++;
                d.tally->samples++;
                eq_u64(&d, "pid", p->pid, diff_json_int(o, "pid"));
                eq_u64(&d, "tid", p->tid, diff_json_int(o, "tid"));
                eq_u64(&d, "cpu", p->cpu, diff_json_int(o, "cpu"));
                /* END-terminated: no timestamp, perf says 0, we keep the time of
                 * the stretch's PERF_RECORD_AUX (doc/mem-levels.rst). */
                if (recs[i].ts)
                        eq_u64(&d, "time", p->time, diff_json_int(o, "time"));
                else {
                        eq_u64(&d, "time of an END-terminated record (perf)", 0, p->time);
                        eq_u64(&d, "time of an END-terminated record (ours: its AUX record's)", aux_time[i],
                               diff_json_int(o, "time"));
                }
                eq_str(&d, "counter", counter_of(p->addr), js(o, "counter"));
                eq_u64(&d, "addr", p->addr, diff_json_hex(o, "addr", 0));
                eq_u64(&d, "phys_addr", p->phys, diff_json_hex(o, "phys_addr", 0));
                eq_u64(&d, "weight", p->weight, diff_json_int(o, "weight"));
                eq_data_src(&d, p, o);
                eq_str(&d, "op", op_of_data_src(p->data_src), js(o, "op"));
                eq_str(&d, "level", spe_doc_level(&recs[i], midr, p->data_src), js(o, "level"));
        }
        ck_assert_uint_eq(k, m);
        free(rows);
        json_decref(ours);
        diff_done(&d);
}

#define SPE_PC_USER (0x8000000000401000ull)             /* EL0, NS */
#define SPE_VA(i) (0x0000aaaa00000000ull + (uint64_t) (i) * 0x1040)

/* @recs into one capture on CPU @cpu, @per_stretch records an AUX stretch,
 * with COMM records naming threads 501 (of 500) and 601 (of 600). */
static const char *spe_write(const char *name, uint64_t midr, const struct diff_spe_rec *recs, size_t n,
                             size_t per_stretch, uint64_t *aux_time) {
        struct pdw_bytes p = {};
        uint64_t offset = 0;
        struct pdw w;

        diff_spe_begin(&w, midr);
        diff_spe_comm(&w, 500, 501, "worker", 10);
        diff_spe_comm(&w, 600, 601, "other", 11);
        for (size_t i = 0; i < n; i++) {
                size_t first = i - i % per_stretch;

                diff_spe_record(&p, offset, &recs[i]);
                if ((i + 1) % per_stretch && i + 1 < n)
                        continue;
                /* The stretch's AUX record comes after its last timed record. */
                aux_time[i] = 0;
                for (size_t k = first; k <= i; k++)
                        aux_time[i] = DP_MAX(aux_time[i], recs[k].ts + 1);
                for (size_t k = first; k <= i; k++)
                        aux_time[k] = aux_time[i];
                diff_spe_aux(&w, 0, offset, &p, aux_time[i]);
                offset += (p.n + 7) / 8 * 8;
                pdw_bytes_free(&p);
        }
        return write_capture(&w, name);
}

/* Every packet kind and DATA-SOURCE code, stores and loads. */
static size_t spe_enumerate(struct diff_spe_rec *r, size_t max) {
        static const int codes[] = { 0x0, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe, 0x3, -1 };
        static const uint32_t events[] = { 0x06, 0x0e, 0x16, 0x36, 0x10e, 0x30e, 0x70e, 0x02 };
        size_t n = 0;

        for (size_t c = 0; c < DP_ARRAY_SIZE(codes); c++)
                for (size_t e = 0; e < DP_ARRAY_SIZE(events); e++)
                        for (unsigned store = 0; store < 2; store++) {
                                ck_assert_uint_lt(n + 1, max);
                                r[n] = (struct diff_spe_rec) {
                                        .store = store, .pc = SPE_PC_USER, .va = SPE_VA(n),
                                        .pa = n % 3 ? (0x80000000ull + 64 * n) | 1ull << 63 : 0,
                                        .events = events[e], .data_source = codes[c],
                                        .data_source_size = 1 + (n % 5 == 0), .context = n % 2 ? 501 : 601,
                                        .latency = (uint16_t) (n % 7 ? 10 + n : 0), .issue = (uint16_t) (n % 4),
                                        .ts = n % 9 == 4 ? 0 : 1000 + 100 * n, .extended_counter = n % 6 == 1,
                                        .align_pad = n % 11 == 3 ? 2u << (n % 4) : 0,
                                        .more_packets = n % 8 == 5,
                                };
                                n++;
                                if (n % 10 == 0)
                                        r[n++] = (struct diff_spe_rec) { .branch = n % 20 == 0, .other = n % 20 != 0,
                                                                         .pc = SPE_PC_USER, .events = 0x82,
                                                                         .context = -1, .ts = 1000 + 100 * n };
                        }
        /* Addresses: a tagged user VA, a kernel VA (bits 55:52 all set), VA 0. */
        r[1].va |= 0x5a00000000000000ull;
        r[2].va = 0x00ff800012345000ull;
        r[3].va = 0;
        return n;
}

START_TEST(test_spe_packets) {
        static struct diff_spe_rec recs[256];
        static uint64_t aux_time[256];
        size_t n = spe_enumerate(recs, DP_ARRAY_SIZE(recs));

        for (size_t i = 0; i < DP_ARRAY_SIZE(spe_machines); i++) {
                const char *path = spe_write(spe_machines[i].name, spe_machines[i].midr, recs, n, 16, aux_time);

                spe_compare(spe_machines[i].name, path, spe_machines[i].midr, recs, aux_time, n);
        }
}
END_TEST

/* Records without CONTEXT: their task is the one the context switches say
 * ran at their time (perf: the last switch before the stretch it decodes). */
START_TEST(test_spe_no_context) {
        static const struct {
                uint64_t time;
                uint32_t pid, tid;              /* the task switched to */
        } switches[] = { { 100, 500, 501 }, { 400, 600, 601 }, { 700, 500, 501 } };
        struct diff_spe_rec recs[6];
        uint64_t aux_time[6];
        struct pdw_bytes p = {};
        const char *path;
        struct pdw w;

        diff_spe_begin(&w, spe_machines[0].midr);
        diff_spe_comm(&w, 500, 501, "worker", 10);
        diff_spe_comm(&w, 600, 601, "other", 11);
        for (size_t s = 0, i = 0; s < DP_ARRAY_SIZE(switches); s++) {
                struct pdw_id id = { .pid = s ? switches[s - 1].pid : 0, .tid = s ? switches[s - 1].tid : 0,
                                     .time = switches[s].time, .id = 0x200, .cpu = 0 };
                struct pdw_bytes b = {};

                /* Out of the previous task, naming the next one. */
                pdw_u32(&b, switches[s].pid);
                pdw_u32(&b, switches[s].tid);
                pdw_sample_id(&b, DIFF_ID_TYPES, &id);
                pdw_record(&w, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT, &b);
                pdw_bytes_free(&b);
                /* Two records while it runs, announced before the next switch. */
                for (size_t k = 0; k < 2; k++, i++) {
                        recs[i] = (struct diff_spe_rec) {
                                .store = k, .pc = SPE_PC_USER, .va = SPE_VA(i), .events = 0x16, .data_source = 0x8,
                                .context = -1, .latency = (uint16_t) (20 + i),
                                .ts = switches[s].time + 100 + 100 * k,
                        };
                        diff_spe_record(&p, 0, &recs[i]);
                }
                aux_time[i - 1] = aux_time[i - 2] = switches[s].time + 250;
                diff_spe_aux(&w, 0, 64 * s * 8, &p, aux_time[i - 1]);
                pdw_bytes_free(&p);
        }
        path = write_capture(&w, "spe-no-context");
        spe_compare("spe-no-context", path, spe_machines[0].midr, recs, aux_time, DP_ARRAY_SIZE(recs));
}
END_TEST

/* Well-formed random records: every packet drawn, loads, stores and
 * branches, records END- and TS-terminated, on a Neoverse N1. */
START_TEST(test_spe_random) {
        static struct diff_spe_rec recs[2000];
        static uint64_t aux_time[2000];
        static const int codes[] = { 0x0, 0x8, 0x9, 0xa, 0xb, 0xc, 0xd, 0xe };
        uint64_t seed = 0x5be, ts = 1000;
        const char *path;

        for (size_t i = 0; i < DP_ARRAY_SIZE(recs); i++) {
                uint64_t r = diff_rand(&seed), va = diff_rand(&seed);

                ts += 1 + r % 500;
                recs[i] = (struct diff_spe_rec) {
                        .store = r & 1,
                        .branch = (r >> 1) % 8 == 0,
                        .other = (r >> 1) % 8 == 1,
                        .more_packets = (r >> 30) % 4 == 0,
                        .pc = SPE_PC_USER,
                        /* user, tagged user, kernel */
                        .va = (r >> 4) % 3 == 0 ? va >> 16 : (r >> 4) % 3 == 1 ? (va >> 16) | (va & 0xff) << 56
                                                                                : va | 0x00f0000000000000ull,
                        .pa = r & 0x80 ? (diff_rand(&seed) >> 12) | 1ull << 63 : 0,
                        .events = (uint32_t) (diff_rand(&seed) & 0x7fe),
                        .data_source = codes[(r >> 8) % DP_ARRAY_SIZE(codes)],
                        .data_source_size = 1 + (r >> 11) % 2,
                        .context = (r >> 12) % 2 ? 501 : 601,
                        .latency = (uint16_t) diff_rand(&seed),
                        .issue = (uint16_t) ((r >> 16) % 3),
                        .ts = (r >> 20) % 10 == 0 ? 0 : ts,
                        .extended_counter = (r >> 24) % 4 == 0,
                        .align_pad = (r >> 26) % 8 == 0 ? 2u << ((r >> 29) % 4) : 0,
                };
        }
        path = spe_write("random-spe", spe_machines[0].midr, recs, DP_ARRAY_SIZE(recs), 64, aux_time);
        spe_compare("random-spe", path, spe_machines[0].midr, recs, aux_time, DP_ARRAY_SIZE(recs));
}
END_TEST
