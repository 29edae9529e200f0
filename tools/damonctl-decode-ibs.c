/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl decode, the AMD IBS side: IBS op PERF_SAMPLE_RAW payloads one
 * after another, each dumped register by register with the fields the
 * daemon's decoder reads from it, then the struct dp_sample it makes of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "decode-ibs.h"
#include "macro.h"
#include "damonctl-decode.h"

/* After damage, an IBS payload is looked for only where the caps word looks
 * like one: IBS present and op sampling, nothing above bit 19 (the highest
 * the kernel defines), so that garbage rarely passes for a payload. */
#define IBS_CAPS_REQUIRED (DP_IBS_CAPS_AVAIL | DP_IBS_CAPS_OPSAM)
#define IBS_CAPS_UNDEFINED 0xfff00000u

/* The size of the IBS op RAW payload at @offset, or 0 when none starts there.
 * While @hunting for one after damage, its caps word must look like one. */
static size_t ibs_payload_at(const struct dump *d, size_t offset, bool hunting, struct dp_ibs_op_regs *regs) {
        size_t left = d->size - offset, n;
        uint32_t caps;

        if (left < DP_IBS_OP_RAW_MIN_SIZE)
                return 0;
        caps = dp_load_u32(d->buf + offset);
        if (hunting && ((caps & IBS_CAPS_REQUIRED) != IBS_CAPS_REQUIRED || (caps & IBS_CAPS_UNDEFINED)))
                return 0;
        n = 4 + 8 * (DP_IBS_OP_FIXED_REGS + !!(caps & DP_IBS_CAPS_BRNTRGT) + !!(caps & DP_IBS_CAPS_OPDATA4));
        if (n > left || dp_ibs_op_parse_raw(d->buf + offset, n, regs) < 0)
                return 0;
        return n;
}

static void print_ibs_fields(const struct dump *d, const struct dp_ibs_op_regs *regs,
                             const struct dp_ibs_op_fields *x) {
        static const char *const caps_names[] = {
                "avail", "fetchsam", "opsam", "rdwropcnt", "opcnt", "brntrgt", "opcntext",
                "ripinvalidchk", "opbrnfuse", "fetchctlextd", "opdata4", "zen4", "opldlat",
        };
        FILE *f = d->out;

        fprintf(f, "  caps          0x%08" PRIx32 " ", regs->caps);
        for (unsigned i = 0; i < 32; i++)
                if ((regs->caps & (1u << i)) && i < DP_ARRAY_SIZE(caps_names))
                        fprintf(f, " %s", caps_names[i]);
                else if (regs->caps & (1u << i))
                        fprintf(f, " bit%u", i);
        fputc('\n', f);
        fprintf(f, "  IBS_OP_CTL    0x%016" PRIx64 "  max_cnt=%" PRIu32 " en=%d val=%d cnt_ctl=%d l3_miss_only=%d"
                " ldlat_en=%d ldlat_thrsh=%u cur_cnt=%" PRIu32 "\n",
                regs->op_ctl, x->max_cnt, x->op_en, x->op_val, x->cnt_ctl, x->l3_miss_only, x->ldlat_en,
                x->ldlat_thrsh, x->cur_cnt);
        fprintf(f, "  IBS_OP_RIP    0x%016" PRIx64 "  rip_invalid=%d\n", regs->op_rip, x->op_rip_invalid);
        fprintf(f, "  IBS_OP_DATA   0x%016" PRIx64 "  comp_to_ret=%u tag_to_ret=%u return=%d brn_taken=%d"
                " brn_misp=%d brn_ret=%d brn_fuse=%d microcode=%d\n",
                regs->op_data, x->comp_to_ret_ctr, x->tag_to_ret_ctr, x->op_return, x->op_brn_taken,
                x->op_brn_misp, x->op_brn_ret, x->op_brn_fuse, x->op_microcode);
        if (x->op_data2_valid)
                fprintf(f, "  IBS_OP_DATA2  0x%016" PRIx64 "  data_src=%u rmt_node=%d cache_hit_st=%d strm_st=%d"
                        " rmt_socket=%d\n",
                        regs->op_data2, x->data_src, x->rmt_node, x->cache_hit_st, x->strm_st, x->rmt_socket);
        else
                fprintf(f, "  IBS_OP_DATA2  0x%016" PRIx64 "  ignored (erratum 1293)\n", regs->op_data2);
        fprintf(f, "  IBS_OP_DATA3  0x%016" PRIx64 "  ld=%d st=%d dc_miss=%d l2_miss=%s l1tlb_miss=%d l2tlb_miss=%d"
                " uc=%d wc=%d locked=%d no_mab_alloc=%d sw_pf=%d lin_valid=%d phy_valid=%d width=%u"
                " miss_lat=%u tlb_refill_lat=%u\n",
                regs->op_data3, x->ld_op, x->st_op, x->dc_miss,
                x->l2_miss_valid ? (x->l2_miss ? "1" : "0") : "ignored", x->dc_l1tlb_miss, x->dc_l2tlb_miss,
                x->dc_uc_mem_acc, x->dc_wc_mem_acc, x->dc_locked_op, x->dc_miss_no_mab_alloc, x->sw_pf,
                x->dc_lin_addr_valid, x->dc_phy_addr_valid, x->op_mem_width_bytes, x->dc_miss_lat,
                x->tlb_refill_lat);
        fprintf(f, "  DC_LIN_ADDR   0x%016" PRIx64 "\n", regs->dc_lin_addr);
        fprintf(f, "  DC_PHYS_ADDR  0x%016" PRIx64 "\n", regs->dc_phys_addr);
        if (regs->has_br_target)
                fprintf(f, "  BR_TARGET     0x%016" PRIx64 "\n", regs->br_target);
        if (regs->has_op_data4)
                fprintf(f, "  IBS_OP_DATA4  0x%016" PRIx64 "\n", regs->op_data4);
}

enum field_kind {
        FIELD_BOOL,
        FIELD_U8,
        FIELD_U16,
        FIELD_U32,
        FIELD_U64,                      /* an address: a hex string */
};

#define FIELD(name, kind) { #name, offsetof(struct dp_ibs_op_fields, name), kind }

/* Every member of struct dp_ibs_op_fields, in its order. */
static const struct {
        const char *name;
        size_t offset;
        enum field_kind kind;
} ibs_fields[] = {
        FIELD(max_cnt, FIELD_U32), FIELD(l3_miss_only, FIELD_BOOL), FIELD(op_en, FIELD_BOOL),
        FIELD(op_val, FIELD_BOOL), FIELD(cnt_ctl, FIELD_BOOL), FIELD(ldlat_en, FIELD_BOOL),
        FIELD(cur_cnt, FIELD_U32), FIELD(ldlat_thrsh, FIELD_U8),
        FIELD(comp_to_ret_ctr, FIELD_U16), FIELD(tag_to_ret_ctr, FIELD_U16), FIELD(op_return, FIELD_BOOL),
        FIELD(op_brn_taken, FIELD_BOOL), FIELD(op_brn_misp, FIELD_BOOL), FIELD(op_brn_ret, FIELD_BOOL),
        FIELD(op_rip_invalid, FIELD_BOOL), FIELD(op_brn_fuse, FIELD_BOOL), FIELD(op_microcode, FIELD_BOOL),
        FIELD(op_data2_valid, FIELD_BOOL), FIELD(data_src_lo, FIELD_U8), FIELD(data_src_hi, FIELD_U8),
        FIELD(data_src, FIELD_U8), FIELD(rmt_node, FIELD_BOOL), FIELD(cache_hit_st, FIELD_BOOL),
        FIELD(strm_st, FIELD_BOOL), FIELD(rmt_socket, FIELD_BOOL),
        FIELD(ld_op, FIELD_BOOL), FIELD(st_op, FIELD_BOOL), FIELD(dc_l1tlb_miss, FIELD_BOOL),
        FIELD(dc_l2tlb_miss, FIELD_BOOL), FIELD(dc_l1tlb_hit_2m, FIELD_BOOL), FIELD(dc_l1tlb_hit_1g, FIELD_BOOL),
        FIELD(dc_l2tlb_hit_2m, FIELD_BOOL), FIELD(dc_miss, FIELD_BOOL), FIELD(dc_mis_acc, FIELD_BOOL),
        FIELD(dc_wc_mem_acc, FIELD_BOOL), FIELD(dc_uc_mem_acc, FIELD_BOOL), FIELD(dc_locked_op, FIELD_BOOL),
        FIELD(dc_miss_no_mab_alloc, FIELD_BOOL), FIELD(dc_lin_addr_valid, FIELD_BOOL),
        FIELD(dc_phy_addr_valid, FIELD_BOOL), FIELD(dc_l2_tlb_hit_1g, FIELD_BOOL), FIELD(l2_miss, FIELD_BOOL),
        FIELD(sw_pf, FIELD_BOOL), FIELD(l2_miss_valid, FIELD_BOOL), FIELD(op_mem_width, FIELD_U8),
        FIELD(op_mem_width_bytes, FIELD_U16), FIELD(op_dc_miss_open_mem_reqs, FIELD_U8),
        FIELD(dc_miss_lat, FIELD_U16), FIELD(tlb_refill_lat, FIELD_U16),
        FIELD(op_rip, FIELD_U64), FIELD(dc_lin_addr, FIELD_U64), FIELD(dc_phys_addr, FIELD_U64),
        FIELD(br_target, FIELD_U64), FIELD(op_data4, FIELD_U64),
};

json_t *decode_ibs_fields_json(const struct dp_ibs_op_fields *x) {
        const uint8_t *base = (const uint8_t *) x;
        json_t *o = json_object();

        for (size_t i = 0; o && i < DP_ARRAY_SIZE(ibs_fields); i++) {
                const uint8_t *p = base + ibs_fields[i].offset;
                json_t *v = NULL;
                uint16_t u16;
                uint32_t u32;
                bool b;

                switch (ibs_fields[i].kind) {
                case FIELD_BOOL:
                        memcpy(&b, p, sizeof(b));
                        v = json_boolean(b);
                        break;
                case FIELD_U8:
                        v = json_integer(*p);
                        break;
                case FIELD_U16:
                        memcpy(&u16, p, sizeof(u16));
                        v = json_integer(u16);
                        break;
                case FIELD_U32:
                        memcpy(&u32, p, sizeof(u32));
                        v = json_integer(u32);
                        break;
                case FIELD_U64:
                        v = decode_json_hex(dp_load_u64(p));
                        break;
                }
                if (json_object_set_new(o, ibs_fields[i].name, v) < 0) {
                        json_decref(o);
                        o = NULL;
                }
        }
        return o;
}

static json_t *ibs_regs_json(const struct dp_ibs_op_regs *regs) {
        return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o?, s:o?}",
                         "caps", decode_json_hex(regs->caps),
                         "op_ctl", decode_json_hex(regs->op_ctl),
                         "op_rip", decode_json_hex(regs->op_rip),
                         "op_data", decode_json_hex(regs->op_data),
                         "op_data2", decode_json_hex(regs->op_data2),
                         "op_data3", decode_json_hex(regs->op_data3),
                         "dc_lin_addr", decode_json_hex(regs->dc_lin_addr),
                         "dc_phys_addr", decode_json_hex(regs->dc_phys_addr),
                         "br_target", regs->has_br_target ? decode_json_hex(regs->br_target) : NULL,
                         "op_data4", regs->has_op_data4 ? decode_json_hex(regs->op_data4) : NULL);
}

/* Why dp_ibs_op_decode() made no sample of these registers. */
static const char *ibs_no_data_reason(const struct dp_ibs_op_fields *x) {
        if (!x->op_en || !x->op_val)
                return "no valid op (op_en or op_val clear)";
        if (!x->ld_op && !x->st_op)
                return "not a load or store";
        return "no data address (linear address not valid)";
}

static void ibs_record(struct dump *d, size_t offset, size_t n, const struct dp_ibs_op_regs *regs) {
        struct dp_perf_sample ps = {
                .present = PERF_SAMPLE_RAW,
                .raw = d->buf + offset,
                .raw_size = (uint32_t) n,
        };
        bool erratum = dp_ibs_cpu_has_erratum_1293(d->cpu);
        const char *result, *reason = NULL;
        struct dp_ibs_op_fields fields;
        struct dp_sample s = {};
        int r;

        d->records++;
        dp_ibs_op_decode_regs(regs, d->cpu, &fields);
        /* The rule fires only for ops with SwPf or DcMissNoMabAlloc. */
        erratum = erratum && (fields.sw_pf || fields.dc_miss_no_mab_alloc);
        r = dp_ibs_op_decode(&ps, d->cpu, &s);
        if (r == 0) {
                d->samples++;
                result = "sample";
        } else if (r == -ENODATA) {
                d->no_data++;
                result = "no-data";
                reason = ibs_no_data_reason(&fields);
        } else {
                /* dp_ibs_op_parse_raw() took it: cannot happen, but say so if it does. */
                d->damaged++;
                result = "damaged";
                reason = strerror(-r);
        }

        if (d->json) {
                decode_emit(d, json_pack("{s:s, s:s, s:I, s:I, s:I, s:o, s:o, s:b, s:s, s:o?, s:s?}",
                                         "type", "record", "format", "ibs",
                                         "record", (json_int_t) d->records - 1,
                                         "offset", (json_int_t) offset,
                                         "size", (json_int_t) n,
                                         "registers", ibs_regs_json(regs),
                                         "fields", decode_ibs_fields_json(&fields),
                                         "erratum_1293", erratum,
                                         "result", result,
                                         "sample", r == 0 ? decode_sample_json(&s, NULL) : NULL,
                                         "reason", reason));
                return;
        }
        fprintf(d->out, ". 0x%08zx: IBS op RAW payload, %zu bytes\n", offset, n);
        print_ibs_fields(d, regs, &fields);
        if (erratum)
                fprintf(d->out, "  erratum 1293: %s set: OP_DATA2 and L2Miss ignored\n",
                        fields.sw_pf ? "SwPf" : "DcMissNoMabAlloc");
        else if (!d->cpu && (fields.sw_pf || fields.dc_miss_no_mab_alloc))
                fprintf(d->out, "  note: %s set: on family 0x19 models 0x00-0x0f (erratum 1293) OP_DATA2 and "
                        "L2Miss mean nothing; --cpu tells\n", fields.sw_pf ? "SwPf" : "DcMissNoMabAlloc");
        if (r == 0)
                decode_print_sample(d, &s, NULL);
        else
                fprintf(d->out, "  => no sample: %s\n", reason);
}

static void ibs_garbage(struct dump *d, size_t offset, size_t end) {
        size_t n = end - offset;

        d->damaged++;
        d->bad_bytes += n;
        if (d->json)
                decode_emit(d, json_pack("{s:s, s:s, s:I, s:I, s:I}", "type", "garbage", "format", "ibs",
                                         "offset", (json_int_t) offset, "size", (json_int_t) n,
                                         "bad_bytes", (json_int_t) n));
        else
                fprintf(d->out, ". 0x%08zx: %zu bytes that start no IBS op RAW payload%s\n", offset, n,
                        end == d->size && n < DP_IBS_OP_RAW_MIN_SIZE ? " (too short for one)" : "");
}

/* RAW payloads one after another.  Where none decodes, the bytes up to the
 * next offset where one does are one damaged stretch. */
void decode_dump_ibs(struct dump *d) {
        size_t offset = 0, garbage = SIZE_MAX;

        while (offset < d->size) {
                struct dp_ibs_op_regs regs;
                size_t n = ibs_payload_at(d, offset, garbage != SIZE_MAX, &regs);

                if (n == 0) {
                        if (garbage == SIZE_MAX)
                                garbage = offset;
                        offset++;
                        continue;
                }
                if (garbage != SIZE_MAX) {
                        ibs_garbage(d, garbage, offset);
                        garbage = SIZE_MAX;
                }
                ibs_record(d, offset, n, &regs);
                offset += n;
        }
        if (garbage != SIZE_MAX)
                ibs_garbage(d, garbage, d->size);
}
