/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ARM SPE packets against the known answers in testdata/spe-vectors.txt
 * (every line, field by field), resynchronisation after garbage, record
 * assembly and the record -> sample rules. */
#include <check.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "decode-spe.h"
#include "mem-level.h"

#include "check-main.h"

/* ---- builders for synthetic buffers ---- */

struct buf {
        uint8_t b[1024];
        size_t n;
};

static void put_le(struct buf *b, uint64_t v, unsigned n) {
        for (unsigned i = 0; i < n; i++)
                b->b[b->n++] = (uint8_t) (v >> (8 * i));
}

static void put_byte(struct buf *b, uint8_t v) {
        b->b[b->n++] = v;
}

static void put_addr(struct buf *b, unsigned index, uint64_t payload) {
        put_byte(b, (uint8_t) (0xb0 | index));
        put_le(b, payload, 8);
}

static void put_counter(struct buf *b, unsigned index, uint16_t value) {
        put_byte(b, (uint8_t) (0x98 | index));
        put_le(b, value, 2);
}

static void put_ts(struct buf *b, uint64_t ts) {
        put_byte(b, 0x71);
        put_le(b, ts, 8);
}

/* A load record as a Neoverse core writes it, closed by END or TS. */
static void put_load_record(struct buf *b, uint64_t va_payload, uint64_t pa, uint16_t lat, uint8_t source,
                            int64_t context, uint64_t ts) {
        put_addr(b, 0, 0xc000000000401000ull);          /* PC: el bits 62:61 = 2, ns */
        put_byte(b, 0x49);                              /* OP-TYPE LD/ST, load, GP */
        put_byte(b, 0x00);
        put_byte(b, 0x52);                              /* EVENTS, 2 bytes */
        put_le(b, 0x0206, 2);                           /* retired, L1D access, LLC miss */
        put_byte(b, 0x43);                              /* DATA-SOURCE, 1 byte */
        put_byte(b, source);
        put_counter(b, 0, lat);
        put_counter(b, 1, 3);
        put_counter(b, 2, 2);
        put_addr(b, 2, va_payload);
        put_addr(b, 3, pa | (1ull << 63));
        if (context >= 0) {
                put_byte(b, 0x64);
                put_le(b, (uint64_t) context, 4);
        }
        if (ts)
                put_ts(b, ts);
        else
                put_byte(b, 0x01);
}

/* ---- the known-answer file ---- */

static FILE *open_vectors(void) {
        const char *dir = getenv("DP_TESTDATA");
        char path[4096];
        FILE *f;

        ck_assert_msg(dir, "DP_TESTDATA is not set");
        snprintf(path, sizeof(path), "%s/spe-vectors.txt", dir);
        f = fopen(path, "re");
        ck_assert_msg(f, "cannot open %s", path);
        return f;
}

static char *trim(char *s) {
        char *e;

        while (isspace((unsigned char) *s))
                s++;
        e = s + strlen(s);
        while (e > s && isspace((unsigned char) e[-1]))
                *--e = '\0';
        return s;
}

static size_t parse_hex_bytes(const char *s, uint8_t *out, size_t max) {
        size_t n = 0;
        char *end;

        for (;;) {
                unsigned long v;

                while (isspace((unsigned char) *s))
                        s++;
                if (!*s)
                        return n;
                v = strtoul(s, &end, 16);
                ck_assert_msg(end != s && v <= 0xff && n < max, "bad hex byte at '%s'", s);
                out[n++] = (uint8_t) v;
                s = end;
        }
}

/* "key=value" among the words: the value, or -1. */
static long long word_value(char **words, size_t n, const char *key) {
        size_t k = strlen(key);

        for (size_t i = 0; i < n; i++)
                if (strncmp(words[i], key, k) == 0 && words[i][k] == '=')
                        return strtoll(words[i] + k + 1, NULL, 16);
        return -1;
}

static bool has_item(char **items, size_t n, const char *item) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(items[i], item) == 0)
                        return true;
        return false;
}

static uint64_t event_bit(const char *name) {
        static const struct {
                const char *name;
                uint64_t bit;
        } table[] = {
                { "exception", DP_SPE_EV_EXCEPTION },   { "retired", DP_SPE_EV_RETIRED },
                { "L1D-access", DP_SPE_EV_L1D_ACCESS }, { "L1D-refill", DP_SPE_EV_L1D_REFILL },
                { "TLB-access", DP_SPE_EV_TLB_ACCESS }, { "TLB-walk", DP_SPE_EV_TLB_WALK },
                { "not-taken", DP_SPE_EV_NOT_TAKEN },   { "mispredicted", DP_SPE_EV_MISPREDICTED },
                { "LLC-access", DP_SPE_EV_LLC_ACCESS }, { "LLC-miss", DP_SPE_EV_LLC_MISS },
                { "remote-access", DP_SPE_EV_REMOTE_ACCESS },
        };

        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcmp(table[i].name, name) == 0)
                        return table[i].bit;
        ck_abort_msg("unknown event name '%s' in the vectors", name);
        return 0;
}

/* Splits "a, b, c" in place. */
static size_t split_items(char *s, char **items, size_t max) {
        size_t n = 0;

        for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ","))
                items[n++] = trim(tok);
        return n;
}

/* Checks @p against the meaning text, field by field. */
static void check_meaning(const struct dp_spe_packet *p, const char *meaning) {
        char copy[256], *words[16], *save = NULL;
        size_t n = 0;

        snprintf(copy, sizeof(copy), "%s", meaning);
        /* OP-TYPE and EVENTS carry comma lists: handle them before splitting on spaces. */
        if (strncmp(copy, "OP-TYPE ", 8) == 0) {
                char *rest = copy + 8, *colon = strchr(rest, ':'), *items[16];
                struct dp_spe_op op;
                size_t k;

                ck_assert_ptr_nonnull(colon);
                *colon = '\0';
                k = split_items(colon + 1, items, 16);
                ck_assert_int_eq(p->type, DP_SPE_OP_TYPE);
                dp_spe_op_fields(p, &op);
                if (strcmp(rest, "LD/ST") == 0) {
                        ck_assert_int_eq(op.cls, DP_SPE_OP_LDST);
                        ck_assert(has_item(items, k, "store") || has_item(items, k, "load"));
                        ck_assert_int_eq(op.store, has_item(items, k, "store"));
                        ck_assert_int_eq(op.atomic, has_item(items, k, "atomic"));
                        ck_assert_int_eq(op.exclusive, has_item(items, k, "exclusive"));
                        ck_assert_int_eq(op.acquire_release, has_item(items, k, "acquire/release"));
                        if (has_item(items, k, "SIMD-FP"))
                                ck_assert_int_eq(op.subclass, DP_SPE_LDST_SIMD_FP);
                        if (has_item(items, k, "atomic") || has_item(items, k, "acquire/release"))
                                ck_assert_int_eq(op.subclass, DP_SPE_LDST_EXTENDED);
                } else if (strcmp(rest, "BRANCH") == 0) {
                        ck_assert_int_eq(op.cls, DP_SPE_OP_BRANCH);
                        ck_assert_int_eq(op.indirect, has_item(items, k, "indirect"));
                        ck_assert_int_eq(op.conditional, has_item(items, k, "conditional"));
                } else
                        ck_abort_msg("unknown op class '%s'", rest);
                return;
        }
        if (strncmp(copy, "EVENTS ", 7) == 0) {
                char *items[32];
                size_t k = split_items(copy + 7, items, 32);
                uint64_t mask = 0;

                for (size_t i = 0; i < k; i++)
                        mask |= event_bit(items[i]);
                ck_assert_int_eq(p->type, DP_SPE_EVENTS);
                ck_assert_uint_eq(p->payload, mask);
                return;
        }

        for (char *w = strtok_r(copy, " ", &save); w && n < 16; w = strtok_r(NULL, " ", &save))
                words[n++] = w;
        ck_assert_uint_ge(n, 1);
        if (strcmp(words[0], "PAD") == 0)
                ck_assert_int_eq(p->type, DP_SPE_PAD);
        else if (strcmp(words[0], "END") == 0)
                ck_assert_int_eq(p->type, DP_SPE_END);
        else if (strcmp(words[0], "TIMESTAMP") == 0) {
                ck_assert_uint_eq(n, 2);
                ck_assert_int_eq(p->type, DP_SPE_TIMESTAMP);
                ck_assert_uint_eq(p->payload, strtoull(words[1], NULL, 10));
        } else if (strcmp(words[0], "COUNTER") == 0) {
                static const char *const names[] = { "TOTAL", "ISSUE", "XLAT" };
                unsigned index = 99;

                ck_assert_uint_eq(n, 4);
                ck_assert_str_eq(words[2], "latency");
                for (unsigned i = 0; i < 3; i++)
                        if (strcmp(words[1], names[i]) == 0)
                                index = i;
                ck_assert_int_eq(p->type, DP_SPE_COUNTER);
                ck_assert_uint_eq(p->index, index);
                ck_assert_uint_eq(p->payload, strtoull(words[3], NULL, 10));
        } else if (strcmp(words[0], "ADDRESS") == 0) {
                static const char *const names[] = { "PC", "TGT", "VA", "PA", "PBT" };
                struct dp_spe_address a;
                unsigned index = 99;
                long long v;

                ck_assert_uint_ge(n, 3);
                for (unsigned i = 0; i < 5; i++)
                        if (strcmp(words[1], names[i]) == 0)
                                index = i;
                ck_assert_int_eq(p->type, DP_SPE_ADDRESS);
                ck_assert_uint_eq(p->index, index);
                dp_spe_address_fields(p, &a);
                ck_assert_uint_eq(a.addr, strtoull(words[2], NULL, 16));
                if ((v = word_value(words, n, "el")) >= 0)
                        ck_assert_uint_eq(a.el, v);
                if ((v = word_value(words, n, "ns")) >= 0)
                        ck_assert_uint_eq(a.ns, v);
                if ((v = word_value(words, n, "ch")) >= 0)
                        ck_assert_uint_eq(a.ch, v);
                if ((v = word_value(words, n, "pat")) >= 0)
                        ck_assert_uint_eq(a.pat, v);
                if (index == DP_SPE_ADDR_DATA_VA)
                        ck_assert_uint_eq(a.tag, (v = word_value(words, n, "tag")) >= 0 ? v : 0);
        } else
                ck_abort_msg("unknown packet kind '%s' in the vectors", words[0]);
}

START_TEST(test_known_answer_vectors) {
        FILE *f = open_vectors();
        char line[512];
        unsigned tested = 0, kinds = 0;
        bool seen[_DP_SPE_PACKET_TYPE_MAX] = {};

        while (fgets(line, sizeof(line), f)) {
                char *s = trim(line), *bar, *meaning, desc[DP_SPE_DESC_MAX];
                struct dp_spe_packet p;
                uint8_t bytes[32];
                size_t n;

                if (!*s || *s == '#')
                        continue;
                bar = strchr(s, '|');
                ck_assert_msg(bar, "line without '|': %s", s);
                *bar = '\0';
                meaning = trim(bar + 1);
                n = parse_hex_bytes(s, bytes, sizeof(bytes));
                ck_assert_uint_ge(n, 1);

                /* The whole line is exactly one packet... */
                ck_assert_int_eq(dp_spe_packet_decode(bytes, n, 0, &p), 0);
                ck_assert_uint_eq(p.size, n);
                /* ... whose meaning matches field by field ... */
                check_meaning(&p, meaning);
                /* ... and whose description is the file's text. */
                ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
                ck_assert_str_eq(desc, meaning);
                if (!seen[p.type])
                        kinds++;
                seen[p.type] = true;
                /* One byte short is cut off, not misread (single-byte packets excepted). */
                if (n > 1)
                        ck_assert_int_eq(dp_spe_packet_decode(bytes, n - 1, 0, &p), -ENODATA);
                tested++;
        }
        fclose(f);
        ck_assert_uint_eq(tested, 15);
        ck_assert_uint_eq(kinds, 7);
}
END_TEST

START_TEST(test_iterator_resyncs_after_garbage) {
        struct buf b = {};
        struct dp_spe_iter it;
        struct dp_spe_packet p;
        enum dp_spe_packet_type types[32];
        size_t n = 0;

        put_counter(&b, 0, 11);
        put_byte(&b, 0x02);                     /* no such header */
        put_byte(&b, 0xff);                     /* no such header */
        put_byte(&b, 0x20);                     /* extended header ... */
        put_byte(&b, 0x05);                     /* ... with an unknown byte 1: both skipped one by one */
        put_addr(&b, 2, 0x0000aaaabbbbccccull);
        put_byte(&b, 0x01);
        put_byte(&b, 0x99);                     /* a counter cut off by the end */
        put_byte(&b, 0x07);

        dp_spe_iter_init(&it, b.b, b.n, 0);
        while (dp_spe_iter_next(&it, &p)) {
                ck_assert_uint_ge(p.size, 1);
                ck_assert_uint_lt(n, 32);
                types[n++] = p.type;
                if (p.type == DP_SPE_ADDRESS)
                        ck_assert_uint_eq(p.payload, 0x0000aaaabbbbccccull);
        }
        ck_assert_uint_eq(it.pos, b.n);
        /* COUNTER, BAD x3, the 0x05 byte also BAD, ADDRESS, END, BAD (0x99 cut), BAD (0x07) */
        ck_assert_uint_eq(n, 9);
        ck_assert_int_eq(types[0], DP_SPE_COUNTER);
        for (int i = 1; i <= 4; i++)
                ck_assert_int_eq(types[i], DP_SPE_BAD);
        ck_assert_int_eq(types[5], DP_SPE_ADDRESS);
        ck_assert_int_eq(types[6], DP_SPE_END);
        ck_assert_int_eq(types[7], DP_SPE_BAD);
        ck_assert_int_eq(types[8], DP_SPE_BAD);
        ck_assert_uint_eq(it.bad_bytes, 6);
}
END_TEST

START_TEST(test_extended_headers_and_alignment) {
        uint8_t addr[] = { 0x21, 0xb2, 1, 2, 3, 4, 5, 6, 7, 0 };
        uint8_t counter[] = { 0x22, 0x99, 0x34, 0x12 };
        uint8_t pad[32] = { 0x23, 0x00 };
        struct dp_spe_packet p;
        char desc[DP_SPE_DESC_MAX];

        ck_assert_int_eq(dp_spe_packet_decode(addr, sizeof(addr), 0, &p), 0);
        ck_assert_int_eq(p.type, DP_SPE_ADDRESS);
        ck_assert(p.extended);
        ck_assert_uint_eq(p.index, (1 << 3) | 2);
        ck_assert_uint_eq(p.size, 10);
        ck_assert_uint_eq(p.payload, 0x0007060504030201ull);
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "ADDRESS #10 0x7060504030201");

        ck_assert_int_eq(dp_spe_packet_decode(counter, sizeof(counter), 0, &p), 0);
        ck_assert_int_eq(p.type, DP_SPE_COUNTER);
        ck_assert_uint_eq(p.index, (2 << 3) | 1);
        ck_assert_uint_eq(p.payload, 0x1234);

        /* 0x23: 16-byte alignment, relative to the position in the buffer. */
        ck_assert_int_eq(dp_spe_packet_decode(pad, sizeof(pad), 0, &p), 0);
        ck_assert_int_eq(p.type, DP_SPE_PAD);
        ck_assert_uint_eq(p.size, 16);
        ck_assert_int_eq(dp_spe_packet_decode(pad, sizeof(pad), 5, &p), 0);
        ck_assert_uint_eq(p.size, 11);
        ck_assert_int_eq(dp_spe_packet_decode(pad, sizeof(pad), 14, &p), 0);
        ck_assert_uint_eq(p.size, 2);
        ck_assert_int_eq(dp_spe_packet_decode(pad, 8, 0, &p), -ENODATA);
        ck_assert_int_eq(p.type, DP_SPE_BAD);
        ck_assert_uint_eq(p.size, 1);
        /* An extended header as the very last byte. */
        ck_assert_int_eq(dp_spe_packet_decode(pad, 1, 0, &p), -ENODATA);
        ck_assert_int_eq(dp_spe_packet_decode(pad, 0, 0, &p), -EINVAL);
}
END_TEST

START_TEST(test_every_header_byte_is_bounded) {
        uint8_t b[16];

        /* Whatever the header, a decode never claims more than it was given. */
        for (unsigned h0 = 0; h0 < 256; h0++)
                for (unsigned h1 = 0; h1 < 256; h1 += 7)
                        for (size_t len = 1; len <= sizeof(b); len++) {
                                struct dp_spe_packet p;
                                int r;

                                memset(b, 0xa5, sizeof(b));
                                b[0] = (uint8_t) h0;
                                b[1] = (uint8_t) h1;
                                r = dp_spe_packet_decode(b, len, h1, &p);
                                ck_assert_uint_ge(p.size, 1);
                                ck_assert_uint_le(p.size, len);
                                if (r < 0)
                                        ck_assert(p.type == DP_SPE_BAD && p.size == 1);
                        }
}
END_TEST

START_TEST(test_addresses_and_ops) {
        struct dp_spe_packet p = { .type = DP_SPE_OP_TYPE, .index = DP_SPE_OP_LDST };
        struct dp_spe_op op;
        char desc[DP_SPE_DESC_MAX];

        /* The kernel's canonicalisation: tag dropped, kernel addresses sign-filled. */
        ck_assert_uint_eq(dp_spe_va_canonical(0x00fffc2007c226c0ull), 0xfffffc2007c226c0ull);
        ck_assert_uint_eq(dp_spe_va_canonical(0xab007fffff001000ull), 0x00007fffff001000ull);
        ck_assert_uint_eq(dp_spe_va_canonical(0x0000ffff00000000ull), 0x0000ffff00000000ull);

        p.payload = 0xa9;               /* SVE: bit 3 set, bit 1 clear; EVL bits 6:4 = 2; SG; store */
        dp_spe_op_fields(&p, &op);
        ck_assert_int_eq(op.subclass, DP_SPE_LDST_SVE);
        ck_assert_uint_eq(op.sve_evl, 128);
        ck_assert(op.sve_gather_scatter && op.store && !op.sve_predicated);
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "OP-TYPE LD/ST: store, SVE, EVLEN 128, gather/scatter");

        p.payload = 0x25;
        dp_spe_op_fields(&p, &op);
        ck_assert_int_eq(op.subclass, DP_SPE_LDST_MEMSET);
        p.payload = 0x1a;               /* load-acquire exclusive */
        dp_spe_op_fields(&p, &op);
        ck_assert(op.exclusive && op.acquire_release && !op.atomic && !op.store);
        p.payload = 0x00;
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "OP-TYPE LD/ST: load, GP-REG");

        p.index = DP_SPE_OP_BRANCH;
        p.payload = 0x01;
        dp_spe_op_fields(&p, &op);
        ck_assert(op.conditional && !op.indirect);
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "OP-TYPE BRANCH: conditional, direct");

        p.index = DP_SPE_OP_OTHER;
        p.payload = 0x01;
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "OP-TYPE OTHER: conditional-select");

        p = (struct dp_spe_packet) { .type = DP_SPE_DATA_SOURCE, .payload = 0xe };
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "DATA-SOURCE 0xe (DRAM)");
        p = (struct dp_spe_packet) { .type = DP_SPE_CONTEXT, .payload = 4242 };
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "CONTEXT 0x1092 el=1");
        p = (struct dp_spe_packet) { .type = DP_SPE_EVENTS, .payload = 0x80002 };
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, sizeof(desc)), 0);
        ck_assert_str_eq(desc, "EVENTS retired, 0x80000");

        /* A short buffer is cut, terminated and reported. */
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, 8), -ENOBUFS);
        ck_assert_uint_eq(strlen(desc), 7);
        ck_assert_int_eq(dp_spe_packet_describe(&p, desc, 0), -ENOBUFS);
}
END_TEST

START_TEST(test_records_and_samples) {
        struct buf b = {};
        struct dp_spe_iter it;
        struct dp_spe_record rec;
        struct dp_spe_clock clock = { .time_shift = 4, .time_mult = 40, .time_zero = 1000, .offset_ns = -500 };
        /* A Neoverse N1, whose DATA-SOURCE packet perf reads. */
        struct dp_spe_context ctx = { .pid = 100, .tid = 4242, .cpu = 7, .time = 555, .clock = &clock,
                                      .midr = 0x410fd0c0 };
        struct dp_sample s;

        for (int i = 0; i < 5; i++)
                put_byte(&b, 0x00);                             /* leading padding */
        /* 1: a load with every field, closed by TS. */
        put_load_record(&b, 0x5affffff12345678ull, 0x80001234ull, 321, 0xe, 4242, 0x1000);
        /* 2: a branch, closed by END: no data address. */
        put_addr(&b, 0, 0x8000000000400000ull);
        put_byte(&b, 0x4a);
        put_byte(&b, 0x02);
        put_byte(&b, 0x01);
        /* 3: a store without CONTEXT or TS, on another thread. */
        put_addr(&b, 2, 0x00007f0000002000ull);
        put_byte(&b, 0x49);
        put_byte(&b, 0x01);
        put_byte(&b, 0x01);
        /* 4: a load whose VA packet is missing. */
        put_byte(&b, 0x49);
        put_byte(&b, 0x00);
        put_byte(&b, 0x01);
        /* 5: a load damaged by a stray byte. */
        put_byte(&b, 0x49);
        put_byte(&b, 0x00);
        put_byte(&b, 0x0f);
        put_addr(&b, 2, 0x00007f0000003000ull);
        put_byte(&b, 0x01);
        /* 6: cut off by the end of the buffer. */
        put_byte(&b, 0x49);
        put_byte(&b, 0x00);
        put_addr(&b, 2, 0x00007f0000004000ull);

        dp_spe_iter_init(&it, b.b, b.n, 0);

        ck_assert(dp_spe_next_record(&it, &rec));
        ck_assert_uint_eq(rec.offset, 5);
        ck_assert(rec.have & DP_SPE_HAVE_TIMESTAMP);
        ck_assert_uint_eq(rec.timestamp, 0x1000);
        ck_assert_uint_eq(rec.pc, 0x401000);
        ck_assert_uint_eq(rec.pc_el, 2);
        ck_assert(rec.pc_ns);
        ck_assert_uint_eq(rec.lat_issue, 3);
        ck_assert_uint_eq(rec.lat_xlat, 2);
        ck_assert_uint_eq(rec.events, 0x0206);
        ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), 0);
        ck_assert_uint_eq(s.vaddr, 0xffffffff12345678ull);       /* bits 55:52 all set: kernel */
        ck_assert_uint_eq(s.paddr, 0x80001234ull);
        ck_assert_uint_eq(s.latency, 321);
        ck_assert_uint_eq(s.flags & 0xff, DP_SAMPLE_LOAD | DP_SAMPLE_PHYS_VALID | DP_SAMPLE_LATENCY_VALID |
                                                  DP_SAMPLE_DATA_SRC_VALID);
        ck_assert_int_eq(dp_sample_level(&s), dp_mem_level_from_spe(0xe));
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_LOCAL_DRAM);
        ck_assert_uint_eq(s.pid, 100);                  /* the tracked task has this thread id */
        ck_assert_uint_eq(s.tid, 4242);
        ck_assert_uint_eq(s.cpu, 7);
        ck_assert_uint_eq(s.time, 1000 + (0x1000 >> 4) * 40 - 500);
        ck_assert_uint_eq(s.data_src & 0x1f, PERF_MEM_OP_LOAD);

        ck_assert(dp_spe_next_record(&it, &rec));
        ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), -ENODATA);

        ck_assert(dp_spe_next_record(&it, &rec));
        ctx.clock = NULL;
        ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), 0);
        ck_assert_uint_eq(s.vaddr, 0x7f0000002000ull);
        ck_assert_uint_eq(s.flags & 0xff, DP_SAMPLE_STORE | DP_SAMPLE_DATA_SRC_VALID);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_UNKNOWN);
        ck_assert_uint_eq(s.time, 555);
        ck_assert_uint_eq(s.pid, 100);
        ck_assert_uint_eq(s.tid, 4242);

        ck_assert(dp_spe_next_record(&it, &rec));
        ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), -EBADMSG);

        ck_assert(dp_spe_next_record(&it, &rec));
        ck_assert_uint_eq(rec.bad_bytes, 1);
        ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), -EBADMSG);

        ck_assert(!dp_spe_next_record(&it, &rec));
        ck_assert_uint_eq(it.incomplete_records, 1);
        ck_assert_uint_eq(it.bad_bytes, 1);
        ck_assert(!dp_spe_next_record(&it, &rec));
        ck_assert_uint_eq(it.incomplete_records, 1);
}
END_TEST

START_TEST(test_context_attribution) {
        struct buf b = {};
        struct dp_spe_iter it;
        struct dp_spe_record rec;
        struct dp_spe_context ctx = { .pid = 100, .tid = 100, .midr = 0x410fd0c0 };
        struct dp_sample s;

        put_load_record(&b, 0x00007f0000001000ull, 0x1000, 5, 0x0, 777, 0);
        dp_spe_iter_init(&it, b.b, b.n, 0);
        ck_assert(dp_spe_next_record(&it, &rec));
        ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), 0);
        /* Another thread than the tracked one: its tid is all we know. */
        ck_assert_uint_eq(s.pid, 777);
        ck_assert_uint_eq(s.tid, 777);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L1);

        /* Nobody known, no CONTEXT: unattributed. */
        b.n = 0;
        put_load_record(&b, 0x00007f0000001000ull, 0x1000, 5, 0x8, -1, 0);
        dp_spe_iter_init(&it, b.b, b.n, 0);
        ck_assert(dp_spe_next_record(&it, &rec));
        ctx = (struct dp_spe_context) { .midr = 0x410fd0c0 };
        ck_assert_int_eq(dp_spe_record_to_sample(&rec, &ctx, &s), 0);
        ck_assert_uint_eq(s.pid, 0);
        ck_assert_int_eq(dp_sample_level(&s), DP_MEM_L2);
}
END_TEST

START_TEST(test_clock_conversion) {
        struct dp_spe_clock c = { .time_shift = 31, .time_mult = 3u << 30, .time_zero = 7 };
        uint64_t ticks = 0x0123456789abcdefull;
        unsigned __int128 exact = ((unsigned __int128) ticks * c.time_mult) >> c.time_shift;

        /* The split form equals the exact product for any tick count. */
        ck_assert_uint_eq(dp_spe_clock_to_ns(&c, ticks), (uint64_t) exact + 7);
        c = (struct dp_spe_clock) { .time_mult = 1 };
        ck_assert_uint_eq(dp_spe_clock_to_ns(&c, 12345), 12345);
}
END_TEST

START_TEST(test_clock_from_mmap_page) {
        struct perf_event_mmap_page page = { .time_shift = 31, .time_mult = 0x55555555, .time_zero = 99 };
        struct dp_spe_clock c = { .offset_ns = 7 };

        /* Without cap_user_time_zero the fields mean nothing. */
        ck_assert_int_eq(dp_spe_clock_from_mmap_page(&page, &c), -EOPNOTSUPP);
        page.cap_user_time_zero = 1;
        ck_assert_int_eq(dp_spe_clock_from_mmap_page(&page, &c), 0);
        ck_assert_uint_eq(c.time_shift, 31);
        ck_assert_uint_eq(c.time_mult, 0x55555555);
        ck_assert_uint_eq(c.time_zero, 99);
        ck_assert_int_eq(c.offset_ns, 0);
        ck_assert_int_eq(dp_spe_clock_from_mmap_page(NULL, &c), -EINVAL);
}
END_TEST

static Suite *spe_suite(void) {
        Suite *s = suite_create("decode-spe");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_known_answer_vectors);
        tcase_add_test(tc, test_iterator_resyncs_after_garbage);
        tcase_add_test(tc, test_extended_headers_and_alignment);
        tcase_add_test(tc, test_every_header_byte_is_bounded);
        tcase_add_test(tc, test_addresses_and_ops);
        tcase_add_test(tc, test_records_and_samples);
        tcase_add_test(tc, test_context_attribution);
        tcase_add_test(tc, test_clock_conversion);
        tcase_add_test(tc, test_clock_from_mmap_page);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(spe_suite());
}
