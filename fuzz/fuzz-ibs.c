/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the IBS op decoder (and the PEBS decoder and level table it
 * shares inputs with).  Input layout:
 *
 *   byte 0     which sample_type fields are present: bit 0 RAW, 1 ADDR,
 *              2 PHYS_ADDR, 3 DATA_SRC, 4 WEIGHT, 5 WEIGHT_STRUCT (wins over
 *              WEIGHT, as the parser never yields both); bits 6-7 the CPU
 *              (none, Zen 3 B1 with erratum 1293, Zen 3 model 0x21, Zen 5)
 *   byte 1     bit 0: "shape" the payload (round to caps + whole registers,
 *              set IBS-present, op_en and op_val) so deep paths are reached
 *              from random bytes; bits 1-7 unused
 *   32 bytes   addr, phys_addr, data_src, weight (zero-filled when short)
 *   the rest   the RAW payload
 *
 * Invariants: the decoder returns 0, -ENODATA or -EBADMSG; a failed decode
 * leaves the output untouched; a successful one has only known flags, a level
 * inside the enum, LATENCY_VALID exactly when there is a latency, a physical
 * address only with PHYS_VALID, DATA_SRC_VALID exactly when data_src says
 * something, and agrees with the register-level decode of the same payload.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode-ibs.h"
#include "decode-pebs.h"
#include "macro.h"
#include "mem-level.h"

#include "fuzz.h"


#define KNOWN_FLAGS                                                                     \
        (DP_SAMPLE_LOAD | DP_SAMPLE_STORE | DP_SAMPLE_PHYS_VALID | DP_SAMPLE_DATA_SRC_VALID | \
         DP_SAMPLE_LATENCY_VALID | DP_SAMPLE_LEVEL_MASK)

static const struct dp_ibs_cpu cpus[4] = {
        { 0, 0 },
        { .family = 0x19, .model = 0x01 },
        { .family = 0x19, .model = 0x21 },
        { .family = 0x1a, .model = 0x02 },
};

static void check_common(const struct dp_sample *s, uint16_t cpu) {
        CHECK(s->cpu == cpu);
        CHECK((s->flags & ~KNOWN_FLAGS) == 0);
        CHECK(dp_sample_level(s) < _DP_MEM_LEVEL_MAX);
        CHECK(dp_mem_level_name(dp_sample_level(s)) != NULL);
        CHECK(!!(s->flags & DP_SAMPLE_LATENCY_VALID) == (s->latency != 0));
        CHECK((s->flags & DP_SAMPLE_PHYS_VALID) || s->paddr == 0);
        CHECK(!!(s->flags & DP_SAMPLE_DATA_SRC_VALID) == !dp_mem_data_src_is_na(s->data_src));
}

static void fuzz_ibs(const struct dp_perf_sample *ps, const struct dp_ibs_cpu *cpu) {
        struct dp_sample s, before;
        int r;

        memset(&s, 0x5a, sizeof(s));
        s.cpu = 9;
        before = s;
        r = dp_ibs_op_decode(ps, cpu, &s);
        CHECK(r == 0 || r == -ENODATA || r == -EBADMSG);
        if (r < 0) {
                CHECK(memcmp(&s, &before, sizeof(s)) == 0);
                return;
        }
        check_common(&s, 9);

        if (ps->present & PERF_SAMPLE_RAW) {
                struct dp_ibs_op_regs regs;
                struct dp_ibs_op_fields f;

                CHECK(dp_ibs_op_parse_raw(ps->raw, ps->raw_size, &regs) == 0);
                dp_ibs_op_decode_regs(&regs, cpu, &f);
                CHECK(f.op_en && f.op_val && (f.ld_op || f.st_op) && f.dc_lin_addr_valid);
                CHECK(!!(s.flags & DP_SAMPLE_LOAD) == f.ld_op);
                CHECK(!!(s.flags & DP_SAMPLE_STORE) == f.st_op);
                CHECK(dp_sample_level(&s) == dp_ibs_op_level(&f));
                CHECK(s.vaddr == ((ps->present & PERF_SAMPLE_ADDR) ? ps->addr : f.dc_lin_addr));
                if (!(ps->present & PERF_SAMPLE_PHYS_ADDR))
                        CHECK(!!(s.flags & DP_SAMPLE_PHYS_VALID) == f.dc_phy_addr_valid);
                if (!(ps->present & PERF_SAMPLE_DATA_SRC))
                        CHECK(s.data_src == dp_ibs_op_data_src(&f, cpu));
                if (!(ps->present & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)))
                        CHECK(s.latency == ((f.ld_op && f.dc_miss) ? f.dc_miss_lat : 0));
                CHECK(f.data_src < 32);
                CHECK(f.op_data2_valid == f.l2_miss_valid);
                CHECK(f.op_data2_valid || f.data_src == 0);
        } else {
                CHECK(ps->present & PERF_SAMPLE_ADDR);
                CHECK(ps->addr != 0 && s.vaddr == ps->addr);
                if (!(ps->present & PERF_SAMPLE_DATA_SRC))
                        CHECK((s.flags & (DP_SAMPLE_LOAD | DP_SAMPLE_STORE | DP_SAMPLE_LEVEL_MASK)) == 0);
                else if (s.flags & DP_SAMPLE_DATA_SRC_VALID)
                        CHECK(dp_sample_level(&s) == dp_mem_level_from_data_src(s.data_src));
        }
}

static void fuzz_pebs(const struct dp_perf_sample *ps) {
        struct dp_sample s = { .cpu = 4 };
        int r = dp_pebs_decode(ps, &s);

        CHECK(r == 0 || r == -ENODATA);
        CHECK(r == 0 || !(ps->present & PERF_SAMPLE_ADDR));
        if (r == 0) {
                check_common(&s, 4);
                CHECK(s.vaddr == ps->addr);
        }
}

static void fuzz_tables(const uint8_t *data, size_t size) {
        for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
                uint64_t v = dp_load_u64(data + i);
                struct dp_mem_data_src m;

                CHECK(dp_mem_level_from_data_src(v) < _DP_MEM_LEVEL_MAX);
                dp_mem_data_src_unpack(v, &m);
                CHECK(dp_mem_data_src_pack(&m) == (v & ((1ull << 46) - 1)));
                CHECK(dp_mem_level_from_ibs((unsigned) v, v >> 40 & 1, v >> 41 & 1) < _DP_MEM_LEVEL_MAX);
                CHECK(dp_mem_level_from_spe((uint16_t) v) < _DP_MEM_LEVEL_MAX);
        }
}

static void fuzz_cpuinfo(const uint8_t *data, size_t size) {
        char text[512];
        struct dp_ibs_cpu cpu = { 77, 77 };
        size_t n = DP_MIN(size, sizeof(text) - 1);
        int r;

        memcpy(text, data, n);
        text[n] = '\0';
        r = dp_ibs_cpu_from_cpuinfo(text, &cpu);
        CHECK(r == 0 || r == -ENOENT || r == -EINVAL);
        if (r < 0)
                CHECK(cpu.family == 77 && cpu.model == 77);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* Aligned private copy: the payload may be reshaped in place. */
        static uint64_t raw_buf[512];
        uint8_t fields[32] = {};
        struct dp_perf_sample ps = {};
        uint8_t sel, shape;
        size_t raw_size;

        fuzz_tables(data, size);
        fuzz_cpuinfo(data, size);
        if (size < 2)
                return 0;
        sel = data[0];
        shape = data[1];
        data += 2, size -= 2;
        memcpy(fields, data, DP_MIN(size, sizeof(fields)));
        data += DP_MIN(size, sizeof(fields));
        size -= DP_MIN(size, sizeof(fields));

        raw_size = DP_MIN(size, sizeof(raw_buf));
        memcpy(raw_buf, data, raw_size);
        if ((shape & 1) && raw_size >= 12) {
                uint32_t caps;
                uint64_t ctl;

                raw_size = 4 + (raw_size - 4) / 8 * 8;
                memcpy(&caps, raw_buf, 4);
                caps |= DP_IBS_CAPS_AVAIL;
                memcpy(raw_buf, &caps, 4);
                memcpy(&ctl, (uint8_t *) raw_buf + 4, 8);
                ctl |= 3ull << 17;
                memcpy((uint8_t *) raw_buf + 4, &ctl, 8);
        }

        if (sel & 1)
                ps.present |= PERF_SAMPLE_RAW;
        if (sel & 2)
                ps.present |= PERF_SAMPLE_ADDR;
        if (sel & 4)
                ps.present |= PERF_SAMPLE_PHYS_ADDR;
        if (sel & 8)
                ps.present |= PERF_SAMPLE_DATA_SRC;
        if (sel & 32)
                ps.present |= PERF_SAMPLE_WEIGHT_STRUCT;
        else if (sel & 16)
                ps.present |= PERF_SAMPLE_WEIGHT;
        /* The parser zeroes absent fields; so do we. */
        if (ps.present & PERF_SAMPLE_ADDR)
                ps.addr = dp_load_u64(fields + 0);
        if (ps.present & PERF_SAMPLE_PHYS_ADDR)
                ps.phys_addr = dp_load_u64(fields + 8);
        if (ps.present & PERF_SAMPLE_DATA_SRC)
                ps.data_src = dp_load_u64(fields + 16);
        if (ps.present & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
                ps.weight = dp_load_u64(fields + 24);
        if (ps.present & PERF_SAMPLE_RAW) {
                /* A zero-size RAW has no data pointer, as the parser gives it. */
                ps.raw = raw_size ? (const void *) raw_buf : NULL;
                ps.raw_size = (uint32_t) raw_size;
        }

        fuzz_ibs(&ps, &cpus[sel >> 6]);
        fuzz_pebs(&ps);
        return 0;
}
