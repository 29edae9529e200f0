/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* test-perf-diff.c, AMD IBS op: perf report -D's register dump
 * (amd-sample-raw.c) field by field against ours, and the sample we make of
 * the registers against what perf's fields say.  Included once. */

struct ibs_machine {
        const char *name;
        unsigned family, model;
};

static const struct ibs_machine ibs_machines[] = {
        { "zen2", 0x17, 0x31 },
        { "zen3-erratum1293", 0x19, 0x01 },
        { "zen3", 0x19, 0x21 },
        { "zen4", 0x19, 0x11 },
};

/* Our level by doc/mem-levels.rst from what perf printed of the registers. */
static const char *ibs_doc_level(const struct diff_ibs_dump *x, bool zen4) {
        uint64_t ld = 0, uc = 0, miss = 0, l2miss = 0, nomab = 0, code = 0, rmt = 0;
        bool l2_valid = diff_dump_field(x->data3, "L2Miss", &l2miss);
        enum dp_mem_level level = DP_MEM_UNKNOWN;

        diff_dump_field(x->data3, "LdOp", &ld);
        diff_dump_field(x->data3, "DcUcMemAcc", &uc);
        diff_dump_field(x->data3, "DcMiss", &miss);
        diff_dump_field(x->data3, "DcMissNoMabAlloc", &nomab);
        diff_dump_field(x->data2, "DataSrc", &code);     /* not printed: 0, or reserved */
        diff_dump_field(x->data2, "RmtNode", &rmt);
        if (uc && code != 7)
                return "unknown";
        if (!miss)
                return "l1";
        if (l2_valid && !l2miss)
                return "l2";
        if (ld && x->data2[0]) {
                static const enum dp_mem_level legacy[8] = {
                        [2] = DP_MEM_L3, [3] = DP_MEM_LOCAL_DRAM, [4] = DP_MEM_REMOTE_CACHE, [7] = DP_MEM_IO,
                };
                static const enum dp_mem_level ext[32] = {
                        [1] = DP_MEM_L3, [2] = DP_MEM_REMOTE_CACHE, [3] = DP_MEM_LOCAL_DRAM,
                        [5] = DP_MEM_REMOTE_CACHE, [6] = DP_MEM_PMEM, [7] = DP_MEM_IO, [8] = DP_MEM_CXL,
                        [12] = DP_MEM_REMOTE_DRAM,
                };

                level = zen4 ? ext[code & 31] : legacy[code & 7];
                if (level == DP_MEM_LOCAL_DRAM && rmt)
                        level = DP_MEM_REMOTE_DRAM;
        }
        if (level == DP_MEM_UNKNOWN && nomab)
                level = DP_MEM_L1;
        return dp_mem_level_name(level);
}

/* A field perf prints as "Name value" against ours, when perf printed it;
 * @printed: whether it should have. */
static void ibs_field(struct diff *d, const char *line, const char *perf_name, const json_t *ours,
                      const char *our_name, bool printed) {
        char what[64];
        uint64_t v;
        bool has = diff_dump_field(line, perf_name, &v);

        snprintf(what, sizeof(what), "%s printed", perf_name);
        eq_u64(d, what, printed, has);
        if (has)
                eq_u64(d, perf_name, v, diff_json_int(ours, our_name));
}

static void ibs_registers_eq(struct diff *d, const struct diff_ibs_dump *x, const json_t *f, bool zen4) {
        static const char *const data3[][2] = {
                { "LdOp", "ld_op" }, { "StOp", "st_op" }, { "DcL1TlbMiss", "dc_l1tlb_miss" },
                { "DcL2TlbMiss", "dc_l2tlb_miss" }, { "DcL1TlbHit2M", "dc_l1tlb_hit_2m" },
                { "DcL1TlbHit1G", "dc_l1tlb_hit_1g" }, { "DcL2TlbHit2M", "dc_l2tlb_hit_2m" }, { "DcMiss", "dc_miss" },
                { "DcMisAcc", "dc_mis_acc" }, { "DcWcMemAcc", "dc_wc_mem_acc" }, { "DcUcMemAcc", "dc_uc_mem_acc" },
                { "DcLockedOp", "dc_locked_op" }, { "DcMissNoMabAlloc", "dc_miss_no_mab_alloc" },
                { "DcLinAddrValid", "dc_lin_addr_valid" }, { "DcPhyAddrValid", "dc_phy_addr_valid" },
                { "DcL2TlbHit1G", "dc_l2_tlb_hit_1g" }, { "SwPf", "sw_pf" }, { "DcMissLat", "dc_miss_lat" },
                { "TlbRefillLat", "tlb_refill_lat" },
        };
        static const char *const data[][2] = {
                { "CompToRetCtr", "comp_to_ret_ctr" }, { "TagToRetCtr", "tag_to_ret_ctr" },
                { "BrnRet", "op_brn_ret" }, { "RipInvalid", "op_rip_invalid" }, { "BrnFuse", "op_brn_fuse" },
                { "Microcode", "op_microcode" },
        };
        bool brn_ret = diff_json_int(f, "op_brn_ret"), l2_valid = diff_json_int(f, "l2_miss_valid");
        uint64_t code = diff_json_int(f, "data_src"), v = 0;

        ibs_field(d, x->ctl, "MaxCnt", f, "max_cnt", true);
        ibs_field(d, x->ctl, "L3MissOnly", f, "l3_miss_only", zen4);
        ibs_field(d, x->ctl, "En", f, "op_en", true);
        ibs_field(d, x->ctl, "Val", f, "op_val", true);
        ibs_field(d, x->ctl, "CntCtl", f, "cnt_ctl", true);
        ibs_field(d, x->ctl, "CurCnt", f, "cur_cnt", true);
        eq_u64(d, "IbsOpRip printed", !diff_json_int(f, "op_rip_invalid"), diff_dump_hex(x->rip, &v));
        if (x->rip[0])
                eq_u64(d, "IbsOpRip", v, diff_json_hex(f, "op_rip", 0));
        for (size_t i = 0; i < DP_ARRAY_SIZE(data); i++)
                ibs_field(d, x->data, data[i][0], f, data[i][1], true);
        ibs_field(d, x->data, "OpReturn", f, "op_return", brn_ret);
        ibs_field(d, x->data, "OpBrnTaken", f, "op_brn_taken", brn_ret);
        ibs_field(d, x->data, "OpBrnMisp", f, "op_brn_misp", brn_ret);

        /* OP_DATA2: not printed under erratum 1293, where we ignore it too. */
        eq_u64(d, "ibs_op_data2 printed", diff_json_int(f, "op_data2_valid"), x->data2[0] != 0);
        if (x->data2[0]) {
                bool cache_code = zen4 ? code == 1 || code == 2 || code == 5 : code == 2;

                ibs_field(d, x->data2, "RmtNode", f, "rmt_node", true);
                ibs_field(d, x->data2, "CacheHitSt", f, "cache_hit_st", cache_code);
                /* perf names codes 1-7 (1-12 on Zen 4), not 0 or the reserved 13-31. */
                ibs_field(d, x->data2, "DataSrc", f, "data_src", code != 0 && code < (zen4 ? 13 : 8));
        }
        for (size_t i = 0; i < DP_ARRAY_SIZE(data3); i++)
                ibs_field(d, x->data3, data3[i][0], f, data3[i][1], true);
        ibs_field(d, x->data3, "L2Miss", f, "l2_miss", l2_valid);
        ibs_field(d, x->data3, "OpDcMissOpenMemReqs", f, "op_dc_miss_open_mem_reqs", l2_valid);
        ibs_field(d, x->data3, "OpMemWidth", f, "op_mem_width_bytes", diff_json_int(f, "op_mem_width") != 0);

        eq_u64(d, "IbsDCLinAd printed", diff_json_int(f, "dc_lin_addr_valid"), diff_dump_hex(x->lin, &v));
        if (x->lin[0])
                eq_u64(d, "IbsDCLinAd", v, diff_json_hex(f, "dc_lin_addr", 0));
        eq_u64(d, "IbsDCPhysAd printed", diff_json_int(f, "dc_phy_addr_valid"), diff_dump_hex(x->phys, &v));
        if (x->phys[0])
                eq_u64(d, "IbsDCPhysAd", v, diff_json_hex(f, "dc_phys_addr", 0));
}

/* BR_TARGET: perf 6.1 reads the register after DC_PHYSADDR whether the
 * payload has one or not (OP_DATA4, or bytes past the payload); we read it
 * only when the caps announce it (doc/mem-levels.rst). */
static void ibs_br_target_eq(struct diff *d, const struct diff_ibs_dump *x, const json_t *f,
                             const struct diff_ibs_op *op) {
        uint64_t v = 0;
        bool printed = diff_dump_hex(x->brt, &v);

        if (!(op->caps & DIFF_IBS_CAPS_BRNTRGT)) {
                eq_u64(d, "br_target without BR_TARGET (ours: none)", 0, diff_json_hex(f, "br_target", 0));
                return;
        }
        eq_u64(d, "IbsBrTarget printed", diff_json_int(f, "op_brn_ret") && op->br_target != 0, printed);
        if (printed)
                eq_u64(d, "IbsBrTarget", v, diff_json_hex(f, "br_target", 0));
}

/* The sample we make of an op, against perf's registers (and kernel-filled fields). */
static void ibs_sample_eq(struct diff *d, const struct diff_ibs_dump *x, const struct diff_perf_row *p,
                          const json_t *o, bool zen4, bool kernel_filled) {
        uint64_t ld = 0, st = 0, lin_valid = 0, miss = 0, lat = 0, lin = 0, phys = 0;
        uint64_t addr;

        if (!x->ctl[0]) {
                /* perf dumps no op without En and Val; we make no sample of it. */
                eq_str(d, "counter", "null", js(o, "counter"));
                return;
        }
        diff_dump_field(x->data3, "LdOp", &ld);
        diff_dump_field(x->data3, "StOp", &st);
        diff_dump_field(x->data3, "DcLinAddrValid", &lin_valid);
        diff_dump_field(x->data3, "DcMiss", &miss);
        diff_dump_field(x->data3, "DcMissLat", &lat);
        diff_dump_hex(x->lin, &lin);
        if ((!ld && !st) || !lin_valid) {
                eq_str(d, "counter", "null", js(o, "counter"));
                return;
        }
        addr = kernel_filled ? p->addr : lin;
        eq_str(d, "counter", counter_of(addr), js(o, "counter"));
        eq_u64(d, "addr", addr, diff_json_hex(o, "addr", 0));
        if (kernel_filled) {
                eq_u64(d, "phys_addr", p->phys, diff_json_hex(o, "phys_addr", 0));
                eq_u64(d, "weight", p->weight, diff_json_int(o, "weight"));
                eq_data_src(d, p, o);
        } else {
                eq_u64(d, "phys_addr", diff_dump_hex(x->phys, &phys) ? phys : 0, diff_json_hex(o, "phys_addr", 0));
                eq_u64(d, "weight (DcMissLat of a load that missed)", ld && miss ? lat : 0,
                       diff_json_int(o, "weight"));
        }
        eq_str(d, "op", op_of(ld, st), js(o, "op"));
        eq_str(d, "level", ibs_doc_level(x, zen4), js(o, "level"));
}

/* Writes @ops as one capture of @m and compares every sample. */
static void ibs_compare(const struct ibs_machine *m, const char *name, uint64_t sample_type,
                        const struct diff_ibs_op *ops, size_t n) {
        bool zen4 = diff_ibs_is_zen4(m->family, m->model), kernel_filled = sample_type & PERF_SAMPLE_DATA_SRC;
        const unsigned fields = DIFF_F_CPU | (kernel_filled ? DIFF_F_ADDR | DIFF_F_DATA_SRC | DIFF_F_WEIGHT |
                                                              DIFF_F_PHYS : 0);
        struct diff_perf_row *rows;
        struct diff_ibs_dump *dumps;
        const char *path;
        struct diff d;
        json_t *ours;
        struct pdw w;

        diff_ibs_begin(&w, m->family, m->model, sample_type);
        for (size_t i = 0; i < n; i++)
                diff_ibs_sample(&w, sample_type, &(struct pdw_id) { 100 + i % 3, 200 + i % 5, 1000000 + 17 * i,
                                                                    0x300, (uint32_t) (i % 2) }, &ops[i]);
        path = write_capture(&w, name);
        diff_init(&d, kernel_filled ? "ibs-kernel-filled" : "ibs", name);
        ck_assert_uint_eq(diff_perf_script(path, "", kernel_filled ? "pid,tid,cpu,time,addr,data_src,weight,"
                                                                     "phys_addr" : "pid,tid,cpu,time",
                                           fields, &rows), n);
        ck_assert_uint_eq(diff_perf_ibs_dumps(path, &dumps), n);
        ck_assert_uint_eq(diff_ours(path, &ours), n);
        for (size_t i = 0; i < n; i++) {
                const json_t *o = json_array_get(ours, i), *f = json_object_get(o, "ibs");

                d.sample = i;
                d.tally->samples++;
                eq_who_when(&d, &rows[i], o, true);
                ck_assert_msg(f, "%s sample %zu: no IBS fields in ours", name, i);
                if (dumps[i].ctl[0]) {
                        ibs_registers_eq(&d, &dumps[i], f, zen4);
                        ibs_br_target_eq(&d, &dumps[i], f, &ops[i]);
                } else
                        eq_u64(&d, "op_en && op_val (perf dumps none)", 0,
                               diff_json_int(f, "op_en") && diff_json_int(f, "op_val"));
                ibs_sample_eq(&d, &dumps[i], &rows[i], o, zen4, kernel_filled);
        }
        free(rows);
        free(dumps);
        json_decref(ours);
        diff_done(&d);
}

#define IBS_USER_LIN 0x00007f1234560000ull
#define IBS_PHYS 0x0000000234560000ull
#define IBS_BASE_LOAD (D3_LD | D3_DC_MISS | D3_L2_MISS | D3_LIN_VALID | D3_PHY_VALID | D3_LAT(123) | \
                       (uint64_t) 4 << 22)

static struct diff_ibs_op ibs_op(uint32_t caps, uint64_t ctl, uint64_t data, uint64_t data2, uint64_t data3,
                                 size_t i) {
        return (struct diff_ibs_op) {
                .caps = caps, .ctl = ctl, .rip = 0x401000 + 4 * i, .data = data, .data2 = data2, .data3 = data3,
                .lin = IBS_USER_LIN + 64 * i, .phys = IBS_PHYS + 64 * i,
                .br_target = (i % 3) ? 0x402000 + i : 0, .data4 = 0xd4d4000 + i,
        };
}

/* Every register field alone and in the combinations that change what
 * perf prints or what we decode. */
static size_t ibs_enumerate(const struct ibs_machine *m, struct diff_ibs_op *ops, size_t max) {
        uint32_t caps = DIFF_IBS_CAPS | (diff_ibs_is_zen4(m->family, m->model) ? DIFF_IBS_CAPS_ZEN4 : 0);
        unsigned codes = diff_ibs_is_zen4(m->family, m->model) ? 32 : 8;
        size_t n = 0;

#define ADD(ctl, data, data2, data3)                                                                       \
        do {                                                                                               \
                ck_assert_uint_lt(n, max);                                                                 \
                ops[n] = ibs_op(caps | (n % 4 == 1 ? DIFF_IBS_CAPS_BRNTRGT : 0) |                          \
                                (n % 4 == 2 ? DIFF_IBS_CAPS_OPDATA4 : 0) |                                 \
                                (n % 4 == 3 ? DIFF_IBS_CAPS_BRNTRGT | DIFF_IBS_CAPS_OPDATA4 : 0),          \
                                ctl, data, data2, data3, n);                                               \
                n++;                                                                                       \
        } while (0)

        for (unsigned b = 0; b < 64; b++)                       /* OP_DATA3, each bit alone */
                ADD(CTL_OK, 0, D2_DRAM, IBS_BASE_LOAD ^ (1ull << b));
        for (unsigned c = 0; c < codes; c++)                    /* every data source, RmtNode, CacheHitSt */
                for (unsigned x = 0; x < 4; x++)
                        ADD(CTL_OK, 0, D2_CODE(c) | (x & 1 ? D2_RMT_NODE : 0) | (x & 2 ? D2_CACHE_HIT_ST : 0),
                            IBS_BASE_LOAD);
        for (unsigned x = 0; x < 16; x++)                       /* erratum 1293's inputs */
                ADD(CTL_OK, 0, D2_CODE(x & 1 ? 2 : 3),
                    (IBS_BASE_LOAD & ~D3_L2_MISS) | (x & 2 ? D3_SW_PF : 0) | (x & 4 ? D3_NO_MAB : 0) |
                    (x & 8 ? D3_L2_MISS : 0) | (uint64_t) (x * 3) << 26);
        for (unsigned b = 0; b < 64; b++)                       /* OP_DATA, each bit alone */
                ADD(CTL_OK, 1ull << b, D2_DRAM, IBS_BASE_LOAD);
        for (unsigned x = 0; x < 8; x++)                        /* a branch: return, taken, mispredicted */
                ADD(CTL_OK, 1ull << 37 | (uint64_t) x << 34 | 0x00070005, 0, D3_LIN_VALID | D3_LD);
        for (unsigned b = 0; b < 64; b++)                       /* OP_CTL, each bit beside En and Val */
                ADD(CTL_OK | 1ull << b, 0, D2_DRAM, IBS_BASE_LOAD);
        ADD(CTL_EN | 0x186a, 0, 0, IBS_BASE_LOAD);              /* not valid: no dump, no sample */
        ADD(CTL_VAL | 0x186a, 0, 0, IBS_BASE_LOAD);
        ADD(CTL_OK, 0, 0, D3_ST | D3_LIN_VALID | D3_PHY_VALID); /* store, load+store, neither */
        ADD(CTL_OK, 0, D2_DRAM, D3_ST | D3_LD | D3_DC_MISS | D3_LIN_VALID);
        ADD(CTL_OK, 0, D2_DRAM, D3_DC_MISS | D3_LIN_VALID);
        ADD(CTL_OK, 0, D2_DRAM, IBS_BASE_LOAD | D3_UC);         /* uncached */
        ADD(CTL_OK, 0, D2_CODE(7), IBS_BASE_LOAD | D3_UC);      /* uncached I/O */
        ops[n - 1].lin = 0xffff888012345678ull;                 /* a kernel address */
        ADD(CTL_OK, 0, D2_DRAM, IBS_BASE_LOAD);
        ops[n - 1].lin = 0;                                     /* address 0 */
#undef ADD
        return n;
}

START_TEST(test_ibs_registers) {
        static struct diff_ibs_op ops[512];

        for (size_t i = 0; i < DP_ARRAY_SIZE(ibs_machines); i++) {
                size_t n = ibs_enumerate(&ibs_machines[i], ops, DP_ARRAY_SIZE(ops));

                ibs_compare(&ibs_machines[i], ibs_machines[i].name, DIFF_ID_TYPES, ops, n);
        }
}
END_TEST

/* A union perf_mem_data_src with every field drawn, but within what perf
 * can print (mem_hops 0-4: perf indexes a table of five). */
static uint64_t random_data_src(uint64_t *seed) {
        uint64_t r = diff_rand(seed), lvl = 1ull << (r % 14);
        struct dp_mem_data_src s = {
                .op = (uint8_t) (1u << (r >> 4) % 5),
                .lvl = (uint16_t) (lvl | ((r >> 8) & 1 ? PERF_MEM_LVL_HIT : PERF_MEM_LVL_MISS)),
                .snoop = (uint8_t) (1u << (r >> 12) % 5),
                .lock = (uint8_t) ((r >> 16) & 3),
                .dtlb = (uint8_t) ((r >> 18) & 0x7f),
                .lvl_num = (uint8_t) ((r >> 25) & 0xf),
                .remote = (uint8_t) ((r >> 29) & 1),
                .snoopx = (uint8_t) ((r >> 30) & 3),
                .blk = (uint8_t) ((r >> 32) & 7),
                .hops = (uint8_t) ((r >> 35) % 5),
        };

        return dp_mem_data_src_pack(&s);
}

START_TEST(test_ibs_kernel_filled) {
        const uint64_t type = DIFF_ID_TYPES | PERF_SAMPLE_ADDR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_DATA_SRC |
                              PERF_SAMPLE_WEIGHT;
        static struct diff_ibs_op ops[512];
        uint64_t seed = 0x1b5;

        for (size_t i = 0; i < DP_ARRAY_SIZE(ibs_machines); i += 3) {
                size_t n = ibs_enumerate(&ibs_machines[i], ops, DP_ARRAY_SIZE(ops));

                /* The kernel fills ADDR and PHYS_ADDR only when the registers say
                 * valid, DATA_SRC and WEIGHT always. */
                for (size_t k = 0; k < n; k++) {
                        ops[k].addr = (ops[k].data3 & D3_LIN_VALID) ? ops[k].lin : 0;
                        ops[k].phys_addr = (ops[k].data3 & D3_PHY_VALID) ? ops[k].phys : 0;
                        ops[k].data_src = random_data_src(&seed);
                        ops[k].weight = diff_rand(&seed) & 0xffff;
                }
                ibs_compare(&ibs_machines[i], i ? "zen4-kernel-filled" : "zen2-kernel-filled", type, ops, n);
        }
}
END_TEST

/* Well-formed but random: En and Val set on nine ops in ten, every other
 * bit of every register drawn. */
START_TEST(test_ibs_random) {
        static struct diff_ibs_op ops[1000];
        uint64_t seed = 0x5eed16;

        for (size_t i = 0; i < DP_ARRAY_SIZE(ibs_machines); i += 1) {
                bool zen4 = diff_ibs_is_zen4(ibs_machines[i].family, ibs_machines[i].model);
                char name[64];

                if (i == 0 || i == 2)
                        continue;       /* the erratum model and Zen 4 cover both decodes */
                for (size_t k = 0; k < DP_ARRAY_SIZE(ops); k++) {
                        uint64_t r = diff_rand(&seed), lin = diff_rand(&seed);

                        ops[k] = (struct diff_ibs_op) {
                                .caps = DIFF_IBS_CAPS | (zen4 ? DIFF_IBS_CAPS_ZEN4 : 0) |
                                        (r & 1 ? DIFF_IBS_CAPS_BRNTRGT : 0) | (r & 2 ? DIFF_IBS_CAPS_OPDATA4 : 0),
                                .ctl = diff_rand(&seed) | (r % 10 ? CTL_EN | CTL_VAL : 0),
                                .rip = diff_rand(&seed),
                                .data = diff_rand(&seed),
                                .data2 = diff_rand(&seed) & 0x3ff,
                                .data3 = diff_rand(&seed) | (r & 4 ? D3_LIN_VALID : 0),
                                /* user, kernel, or 0 */
                                .lin = (r >> 8) % 3 == 0 ? lin | 1ull << 63 : (r >> 8) % 3 == 1 ? lin >> 17 : 0,
                                .phys = diff_rand(&seed) >> 12,
                                .br_target = diff_rand(&seed),
                                .data4 = diff_rand(&seed),
                        };
                }
                snprintf(name, sizeof(name), "random-%s", ibs_machines[i].name);
                ibs_compare(&ibs_machines[i], name, DIFF_ID_TYPES, ops, DP_ARRAY_SIZE(ops));
        }
}
END_TEST
