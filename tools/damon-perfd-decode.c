/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damon-perfd-decode: dumps hardware sample data the way `perf report -D`
 * does, packet by packet (ARM SPE) or register by register (AMD IBS op RAW
 * payloads), each followed by the struct dp_sample the daemon would make of
 * it.  Input is binary, or hex text ("b0 5c 8b ...", '#' and '|' start
 * comments, so testdata/spe-vectors.txt reads as it is).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "damon-perfd/decode-ibs.h"
#include "damon-perfd/decode-spe.h"
#include "damon-perfd/macro.h"
#include "damon-perfd/mem-level.h"

#define INPUT_MAX (256u << 20)
#define BYTES_PER_LINE 16

enum format {
        FORMAT_SPE,
        FORMAT_IBS,
};

struct spe_totals {
        size_t packets, records, samples, no_data, damaged;
};

static int read_all(FILE *f, uint8_t **ret, size_t *ret_size) {
        _cleanup_free_ uint8_t *buf = NULL;
        size_t size = 0, allocated = 0;

        for (;;) {
                size_t n;

                if (size == allocated) {
                        uint8_t *p;

                        if (allocated >= INPUT_MAX)
                                return -EFBIG;
                        allocated = allocated ? allocated * 2 : 65536;
                        p = realloc(buf, allocated);
                        if (!p)
                                return -ENOMEM;
                        buf = p;
                }
                n = fread(buf + size, 1, allocated - size, f);
                size += n;
                if (n == 0)
                        break;
        }
        if (ferror(f))
                return -EIO;
        *ret = DP_TAKE_PTR(buf);
        *ret_size = size;
        return 0;
}

/* Hex text: only hex digits and blanks outside comments ('#' or '|' to the
 * end of the line), and at least one digit. */
static bool looks_like_hex(const uint8_t *buf, size_t size) {
        bool comment = false, digits = false;

        for (size_t i = 0; i < size; i++) {
                uint8_t c = buf[i];

                if (c == '\n')
                        comment = false;
                else if (comment)
                        continue;
                else if (c == '#' || c == '|')
                        comment = true;
                else if (isxdigit(c))
                        digits = true;
                else if (!isspace(c))
                        return false;
        }
        return digits;
}

/* Converts hex text to bytes in place; digits pair up across blanks ("b05c" = "b0 5c"). */
static int hex_to_bytes(uint8_t *buf, size_t *size) {
        bool comment = false, high = true;
        size_t out = 0;
        uint8_t byte = 0;

        for (size_t i = 0; i < *size; i++) {
                uint8_t c = buf[i];
                unsigned v;

                if (c == '\n')
                        comment = false;
                if (comment || isspace(c))
                        continue;
                if (c == '#' || c == '|') {
                        comment = true;
                        continue;
                }
                v = isdigit(c) ? (unsigned) (c - '0') : (unsigned) (tolower(c) - 'a' + 10);
                if (high)
                        byte = (uint8_t) (v << 4);
                else
                        buf[out++] = (uint8_t) (byte | v);
                high = !high;
        }
        if (!high)
                return -EBADMSG;        /* an odd number of digits */
        *size = out;
        return 0;
}

static void print_packet_line(FILE *f, size_t offset, const uint8_t *bytes, size_t n, const char *desc) {
        size_t shown = DP_MIN(n, (size_t) BYTES_PER_LINE);

        fprintf(f, ". 0x%08zx: ", offset);
        for (size_t i = 0; i < BYTES_PER_LINE; i++) {
                if (i < shown)
                        fprintf(f, " %02x", bytes[i]);
                else
                        fputs("   ", f);
        }
        fprintf(f, "%s  %s\n", n > shown ? "+" : " ", desc);
}

/* Prints the packets of [offset, offset + size) of @buf; runs of one-byte PADs share a line. */
static void dump_spe_packets(FILE *f, const uint8_t *buf, size_t offset, size_t size, struct spe_totals *t) {
        struct dp_spe_iter it;
        struct dp_spe_packet p;

        dp_spe_iter_init(&it, buf + offset, size, offset);
        for (;;) {
                size_t at = it.pos, n;
                char desc[DP_SPE_DESC_MAX];

                if (!dp_spe_iter_next(&it, &p))
                        return;
                t->packets++;
                n = it.pos - at;
                if (p.type == DP_SPE_PAD && !p.extended)
                        while (it.pos < it.len && it.buf[it.pos] == 0x00 && n < BYTES_PER_LINE) {
                                it.pos++;
                                n++;
                        }
                (void) dp_spe_packet_describe(&p, desc, sizeof(desc));
                print_packet_line(f, offset + at, buf + offset + at, n, desc);
        }
}

static void print_sample(FILE *f, const struct dp_sample *s, const struct dp_spe_record *rec) {
        const char *level = dp_mem_level_name(dp_sample_level(s));

        fprintf(f, "  => SAMPLE vaddr=0x%" PRIx64, s->vaddr);
        if (s->flags & DP_SAMPLE_PHYS_VALID)
                fprintf(f, " paddr=0x%" PRIx64, s->paddr);
        if (s->flags & (DP_SAMPLE_LOAD | DP_SAMPLE_STORE))
                fprintf(f, " %s", (s->flags & DP_SAMPLE_STORE) ? "store" : "load");
        if (s->flags & DP_SAMPLE_LATENCY_VALID)
                fprintf(f, " latency=%" PRIu32, s->latency);
        fprintf(f, " level=%s", level ?: "?");
        if (s->pid)
                fprintf(f, " pid=%" PRIu32 " tid=%" PRIu32, s->pid, s->tid);
        else
                fputs(" pid=-", f);
        if (rec && (rec->have & DP_SPE_HAVE_TIMESTAMP))
                fprintf(f, " ts=%" PRIu64, rec->timestamp);
        fputc('\n', f);
}

static void dump_spe(FILE *f, const uint8_t *buf, size_t size) {
        const struct dp_spe_context ctx = {};  /* a file tells no current task, and no clock */
        struct spe_totals t = {};
        struct dp_spe_record rec;
        struct dp_spe_iter it;
        size_t done = 0;

        dp_spe_iter_init(&it, buf, size, 0);
        while (dp_spe_next_record(&it, &rec)) {
                struct dp_sample s;
                int r;

                dump_spe_packets(f, buf, done, it.pos - done, &t);
                done = it.pos;
                t.records++;
                r = dp_spe_record_to_sample(&rec, &ctx, &s);
                if (r == 0) {
                        t.samples++;
                        print_sample(f, &s, &rec);
                } else if (r == -ENODATA) {
                        t.no_data++;
                        fputs("  => no sample: a branch or other operation, no data address\n", f);
                } else {
                        t.damaged++;
                        fprintf(f, "  => no sample: %s\n",
                                rec.bad_bytes ? "damaged record (bytes that start no packet)"
                                              : "malformed record (a load/store without a data address, or no OP-TYPE)");
                }
        }
        dump_spe_packets(f, buf, done, size - done, &t);
        if (it.incomplete_records)
                fputs("  => no sample: the data ends inside a record\n", f);
        fprintf(f, "# spe: %zu bytes, %zu packets, %zu records, %zu samples, %zu without data address, "
                "%zu damaged, %" PRIu64 " bad bytes, %" PRIu64 " incomplete\n",
                size, t.packets, t.records, t.samples, t.no_data, t.damaged, it.bad_bytes, it.incomplete_records);
}

/* The size of the IBS RAW payload at @p as its caps announce it; 0 when it is not one. */
static size_t ibs_payload_size(const uint8_t *p, size_t left) {
        uint32_t caps;

        if (left < DP_IBS_OP_RAW_MIN_SIZE)
                return 0;
        caps = dp_load_u32(p);
        if (!(caps & DP_IBS_CAPS_AVAIL))
                return 0;
        return 4 + 8 * (DP_IBS_OP_FIXED_REGS + !!(caps & DP_IBS_CAPS_BRNTRGT) + !!(caps & DP_IBS_CAPS_OPDATA4));
}

static void print_ibs_fields(FILE *f, const struct dp_ibs_op_regs *regs, const struct dp_ibs_op_fields *x) {
        fprintf(f, "  caps 0x%08" PRIx32 "\n", regs->caps);
        fprintf(f, "  IBS_OP_CTL    0x%016" PRIx64 "  max_cnt=%" PRIu32 " en=%d val=%d cnt_ctl=%d l3_miss_only=%d"
                " ldlat_en=%d ldlat_thrsh=%u cur_cnt=%" PRIu32 "\n",
                regs->op_ctl, x->max_cnt, x->op_en, x->op_val, x->cnt_ctl, x->l3_miss_only, x->ldlat_en,
                x->ldlat_thrsh, x->cur_cnt);
        fprintf(f, "  IBS_OP_RIP    0x%016" PRIx64 "  rip_invalid=%d\n", regs->op_rip, x->op_rip_invalid);
        fprintf(f, "  IBS_OP_DATA   0x%016" PRIx64 "  comp_to_ret=%u tag_to_ret=%u return=%d brn_taken=%d"
                " brn_misp=%d brn_ret=%d microcode=%d\n",
                regs->op_data, x->comp_to_ret_ctr, x->tag_to_ret_ctr, x->op_return, x->op_brn_taken,
                x->op_brn_misp, x->op_brn_ret, x->op_microcode);
        fprintf(f, "  IBS_OP_DATA2  0x%016" PRIx64 "  valid=%d data_src=%u rmt_node=%d cache_hit_st=%d\n",
                regs->op_data2, x->op_data2_valid, x->data_src, x->rmt_node, x->cache_hit_st);
        fprintf(f, "  IBS_OP_DATA3  0x%016" PRIx64 "  ld=%d st=%d dc_miss=%d l2_miss=%d lin_valid=%d phy_valid=%d"
                " locked=%d sw_pf=%d width=%u miss_lat=%u tlb_refill_lat=%u\n",
                regs->op_data3, x->ld_op, x->st_op, x->dc_miss, x->l2_miss, x->dc_lin_addr_valid,
                x->dc_phy_addr_valid, x->dc_locked_op, x->sw_pf, x->op_mem_width_bytes, x->dc_miss_lat,
                x->tlb_refill_lat);
        fprintf(f, "  DC_LIN_ADDR   0x%016" PRIx64 "\n", regs->dc_lin_addr);
        fprintf(f, "  DC_PHYS_ADDR  0x%016" PRIx64 "\n", regs->dc_phys_addr);
        if (regs->has_br_target)
                fprintf(f, "  BR_TARGET     0x%016" PRIx64 "\n", regs->br_target);
        if (regs->has_op_data4)
                fprintf(f, "  IBS_OP_DATA4  0x%016" PRIx64 "\n", regs->op_data4);
}

/* A sequence of RAW payloads (u32 caps, then the registers the caps announce). */
static int dump_ibs(FILE *f, const uint8_t *buf, size_t size) {
        size_t offset = 0, samples = 0, payloads = 0;

        while (offset < size) {
                size_t n = ibs_payload_size(buf + offset, size - offset);
                struct dp_ibs_op_fields fields;
                struct dp_ibs_op_regs regs;
                struct dp_perf_sample ps;
                struct dp_sample s = {};
                int r;

                if (n == 0 || n > size - offset || dp_ibs_op_parse_raw(buf + offset, n, &regs) < 0) {
                        fprintf(f, ". 0x%08zx: not an IBS op RAW payload (%zu bytes left)\n", offset, size - offset);
                        fprintf(f, "# ibs: %zu bytes, %zu payloads, %zu samples, stopped at 0x%zx\n", size,
                                payloads, samples, offset);
                        return -EBADMSG;
                }
                payloads++;
                fprintf(f, ". 0x%08zx: IBS op RAW payload, %zu bytes\n", offset, n);
                dp_ibs_op_decode_regs(&regs, NULL, &fields);
                print_ibs_fields(f, &regs, &fields);

                ps = (struct dp_perf_sample) { .present = PERF_SAMPLE_RAW, .raw = buf + offset, .raw_size = (uint32_t) n };
                r = dp_ibs_op_decode(&ps, NULL, &s);
                if (r == 0) {
                        samples++;
                        print_sample(f, &s, NULL);
                } else
                        fprintf(f, "  => no sample: %s\n",
                                r == -ENODATA ? "no data address (not a load/store, or invalid)" : strerror(-r));
                offset += n;
        }
        fprintf(f, "# ibs: %zu bytes, %zu payloads, %zu samples\n", size, payloads, samples);
        return 0;
}

static void help(FILE *f) {
        fputs("Usage: damon-perfd-decode --format=spe|ibs FILE\n"
              "\n"
              "Dumps hardware sample data packet by packet (like perf report -D) with the\n"
              "sample the daemon makes of each record.  FILE is binary or hex text ('#' and\n"
              "'|' start comments); '-' reads standard input.\n"
              "\n"
              "  spe  ARM SPE profiling-buffer bytes (the AUX area of an arm_spe event)\n"
              "  ibs  AMD IBS op PERF_SAMPLE_RAW payloads, one after another\n",
              f);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "format", required_argument, NULL, 'f' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        _cleanup_fclose_ FILE *in = NULL;
        _cleanup_free_ uint8_t *buf = NULL;
        int format = -1, c, r;
        const char *path;
        size_t size;

        while ((c = getopt_long(argc, argv, "f:h", options, NULL)) >= 0)
                switch (c) {
                case 'f':
                        if (strcmp(optarg, "spe") == 0)
                                format = FORMAT_SPE;
                        else if (strcmp(optarg, "ibs") == 0)
                                format = FORMAT_IBS;
                        else {
                                fprintf(stderr, "damon-perfd-decode: unknown format '%s' (spe or ibs)\n", optarg);
                                return EXIT_FAILURE;
                        }
                        break;
                case 'h':
                        help(stdout);
                        return EXIT_SUCCESS;
                default:
                        help(stderr);
                        return EXIT_FAILURE;
                }
        if (format < 0 || optind != argc - 1) {
                help(stderr);
                return EXIT_FAILURE;
        }

        path = argv[optind];
        if (strcmp(path, "-") != 0) {
                in = fopen(path, "re");
                if (!in) {
                        fprintf(stderr, "damon-perfd-decode: %s: %s\n", path, strerror(errno));
                        return EXIT_FAILURE;
                }
        }
        r = read_all(in ?: stdin, &buf, &size);
        if (r < 0) {
                fprintf(stderr, "damon-perfd-decode: reading %s: %s\n", path, strerror(-r));
                return EXIT_FAILURE;
        }
        if (looks_like_hex(buf, size)) {
                r = hex_to_bytes(buf, &size);
                if (r < 0) {
                        fprintf(stderr, "damon-perfd-decode: %s: odd number of hex digits\n", path);
                        return EXIT_FAILURE;
                }
        }

        if (format == FORMAT_SPE)
                dump_spe(stdout, buf, size);
        else if (dump_ibs(stdout, buf, size) < 0)
                return EXIT_FAILURE;
        return fflush(stdout) == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
