/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * Round-trips synthetic PERF_RECORD_SAMPLEs through dp_perf_parse_sample().
 * The builder below writes fields in the kernel's order (perf_output_sample()),
 * independently of the parser, for many sample_type combinations.
 */

#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "perf-record.h"
#include "source.h"

#include "check-main.h"

#define ALL_SAMPLE_BITS ((UINT64_C(1) << 25) - 1)

/* Check's ck_assert reports every passing check to the parent process, which
 * is too slow for these loops; this only speaks up on failure. */
#define CHECK(cond, ...)                                \
        do {                                            \
                if (!(cond))                            \
                        ck_abort_msg(__VA_ARGS__);      \
        } while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void) {
        /* xorshift64*: deterministic, so failures reproduce. */
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1dULL;
}

static unsigned rnd_below(unsigned n) {
        return (unsigned) (rnd() % n);
}

/* ---- what one sample should contain ---- */

struct spec {
        struct perf_event_attr attr;
        uint64_t identifier, ip, time, addr, id, stream_id, period;
        uint32_t pid, tid, cpu;
        uint64_t read[64];
        unsigned read_nr;               /* group members */
        uint64_t callchain[16];
        unsigned callchain_nr;
        uint8_t raw[64];
        uint32_t raw_size;
        uint64_t branch[3 * 8], branch_counters[8], branch_hw_idx;
        unsigned branch_nr;
        bool branch_omit_hw_idx;        /* the kernel's "no branch stack" form */
        uint64_t regs_user_abi, regs_user[64];
        uint64_t stack_size, stack_dyn_size;
        uint8_t stack[256];
        uint64_t weight, data_src, transaction;
        uint64_t regs_intr_abi, regs_intr[64];
        uint64_t phys_addr, cgroup, data_page_size, code_page_size;
        uint64_t aux_size;
        uint8_t aux[128];
};

static unsigned read_words(const struct spec *s) {
        uint64_t f = s->attr.read_format;
        unsigned words = 1 + !!(f & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(f & PERF_FORMAT_TOTAL_TIME_RUNNING);
        unsigned per = 1 + !!(f & PERF_FORMAT_ID) + !!(f & PERF_FORMAT_LOST);

        if (f & PERF_FORMAT_GROUP)
                return words + s->read_nr * per;
        return words - 1 + per;
}

static void fill_bytes(uint8_t *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                p[i] = (uint8_t) rnd();
}

static void spec_random_values(struct spec *s, bool allow_empty_branch) {
        uint64_t bt = s->attr.branch_sample_type;

        s->identifier = rnd();
        s->ip = rnd();
        s->pid = (uint32_t) rnd();
        s->tid = (uint32_t) rnd();
        s->time = rnd();
        s->addr = rnd();
        s->id = rnd();
        s->stream_id = rnd();
        s->cpu = (uint32_t) rnd();
        s->period = rnd();
        s->read_nr = rnd_below(4);
        for (unsigned i = 0; i < DP_ARRAY_SIZE(s->read); i++)
                s->read[i] = rnd();
        if (s->attr.read_format & PERF_FORMAT_GROUP)
                s->read[0] = s->read_nr;
        s->callchain_nr = rnd_below(6);
        for (unsigned i = 0; i < s->callchain_nr; i++)
                s->callchain[i] = rnd();
        s->raw_size = 4 + 8 * rnd_below(5); /* size word + data always ends on 8 bytes */
        fill_bytes(s->raw, s->raw_size);
        s->branch_nr = rnd_below(5) + (allow_empty_branch ? 0 : 1);
        s->branch_omit_hw_idx = false;
        s->branch_hw_idx = (bt & PERF_SAMPLE_BRANCH_HW_INDEX) ? rnd() : 0;
        for (unsigned i = 0; i < 3 * s->branch_nr; i++)
                s->branch[i] = rnd();
        for (unsigned i = 0; i < s->branch_nr; i++)
                s->branch_counters[i] = rnd();
        s->regs_user_abi = rnd_below(3) == 0 ? PERF_SAMPLE_REGS_ABI_NONE : PERF_SAMPLE_REGS_ABI_64;
        s->regs_intr_abi = rnd_below(3) == 0 ? PERF_SAMPLE_REGS_ABI_NONE : PERF_SAMPLE_REGS_ABI_32;
        for (unsigned i = 0; i < 64; i++) {
                s->regs_user[i] = rnd();
                s->regs_intr[i] = rnd();
        }
        s->stack_size = rnd_below(2) ? 8 * (1 + rnd_below(16)) : 0;
        s->stack_dyn_size = s->stack_size ? rnd() % (s->stack_size + 1) : 0;
        fill_bytes(s->stack, s->stack_size);
        s->weight = rnd();
        s->data_src = rnd();
        s->transaction = rnd();
        s->phys_addr = rnd();
        s->cgroup = rnd();
        s->data_page_size = rnd();
        s->code_page_size = rnd();
        s->aux_size = 8 * rnd_below(9);
        fill_bytes(s->aux, s->aux_size);
}

/* ---- the builder ---- */

struct builder {
        _Alignas(8) uint8_t buf[8192];
        size_t len;
};

static void put(struct builder *b, const void *p, size_t n) {
        CHECK(b->len + n <= sizeof(b->buf), "builder overflow");
        memcpy(b->buf + b->len, p, n);
        b->len += n;
}

static void put_u64(struct builder *b, uint64_t v) {
        put(b, &v, 8);
}

static void put_u32x2(struct builder *b, uint32_t lo, uint32_t hi) {
        put(b, &lo, 4);
        put(b, &hi, 4);
}

static void put_header(struct builder *b, uint32_t type) {
        struct perf_event_header h = { .type = type };

        b->len = 0;
        put(b, &h, sizeof(h));
}

static void finish(struct builder *b) {
        struct perf_event_header h;

        memcpy(&h, b->buf, sizeof(h));
        h.size = (uint16_t) b->len;
        memcpy(b->buf, &h, sizeof(h));
}

static void put_regs(struct builder *b, uint64_t abi, uint64_t mask, const uint64_t *regs) {
        put_u64(b, abi);
        if (abi)
                for (int i = 0; i < __builtin_popcountll(mask); i++)
                        put_u64(b, regs[i]);
}

static void build_sample(struct builder *b, const struct spec *s) {
        uint64_t t = s->attr.sample_type;

        put_header(b, PERF_RECORD_SAMPLE);
        if (t & PERF_SAMPLE_IDENTIFIER)
                put_u64(b, s->identifier);
        if (t & PERF_SAMPLE_IP)
                put_u64(b, s->ip);
        if (t & PERF_SAMPLE_TID)
                put_u32x2(b, s->pid, s->tid);
        if (t & PERF_SAMPLE_TIME)
                put_u64(b, s->time);
        if (t & PERF_SAMPLE_ADDR)
                put_u64(b, s->addr);
        if (t & PERF_SAMPLE_ID)
                put_u64(b, s->id);
        if (t & PERF_SAMPLE_STREAM_ID)
                put_u64(b, s->stream_id);
        if (t & PERF_SAMPLE_CPU)
                put_u32x2(b, s->cpu, 0);
        if (t & PERF_SAMPLE_PERIOD)
                put_u64(b, s->period);
        if (t & PERF_SAMPLE_READ)
                put(b, s->read, 8 * read_words(s));
        if (t & PERF_SAMPLE_CALLCHAIN) {
                put_u64(b, s->callchain_nr);
                put(b, s->callchain, 8 * s->callchain_nr);
        }
        if (t & PERF_SAMPLE_RAW) {
                put(b, &s->raw_size, 4);
                put(b, s->raw, s->raw_size);
        }
        if (t & PERF_SAMPLE_BRANCH_STACK) {
                put_u64(b, s->branch_nr);
                if ((s->attr.branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX) && !s->branch_omit_hw_idx)
                        put_u64(b, s->branch_hw_idx);
                put(b, s->branch, 24 * s->branch_nr);
                if (s->attr.branch_sample_type & DP_PERF_SAMPLE_BRANCH_COUNTERS)
                        put(b, s->branch_counters, 8 * s->branch_nr);
        }
        if (t & PERF_SAMPLE_REGS_USER)
                put_regs(b, s->regs_user_abi, s->attr.sample_regs_user, s->regs_user);
        if (t & PERF_SAMPLE_STACK_USER) {
                put_u64(b, s->stack_size);
                put(b, s->stack, s->stack_size);
                if (s->stack_size)
                        put_u64(b, s->stack_dyn_size);
        }
        if (t & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
                put_u64(b, s->weight);
        if (t & PERF_SAMPLE_DATA_SRC)
                put_u64(b, s->data_src);
        if (t & PERF_SAMPLE_TRANSACTION)
                put_u64(b, s->transaction);
        if (t & PERF_SAMPLE_REGS_INTR)
                put_regs(b, s->regs_intr_abi, s->attr.sample_regs_intr, s->regs_intr);
        if (t & PERF_SAMPLE_PHYS_ADDR)
                put_u64(b, s->phys_addr);
        if (t & PERF_SAMPLE_CGROUP)
                put_u64(b, s->cgroup);
        if (t & PERF_SAMPLE_DATA_PAGE_SIZE)
                put_u64(b, s->data_page_size);
        if (t & PERF_SAMPLE_CODE_PAGE_SIZE)
                put_u64(b, s->code_page_size);
        if (t & PERF_SAMPLE_AUX) {
                put_u64(b, s->aux_size);
                put(b, s->aux, s->aux_size);
        }
        finish(b);
}

/* ---- checking ---- */

#define EXPECT_FIELD(bit, got, want)                                                    \
        do {                                                                            \
                if (t & (bit))                                                          \
                        CHECK((uint64_t) (got) == (uint64_t) (want),                    \
                                      "sample_type %#" PRIx64 ": %s = %#" PRIx64 ", want %#" PRIx64, \
                                      t, #got, (uint64_t) (got), (uint64_t) (want));    \
                else                                                                    \
                        CHECK((uint64_t) (got) == 0, "%s set though absent", #got);     \
        } while (0)

static void expect_mem(const void *got, const void *want, size_t n, const char *what) {
        if (n == 0)
                return;
        CHECK(got != NULL, "%s missing", what);
        CHECK(memcmp(got, want, n) == 0, "%s differs", what);
}

static void check_round_trip(const struct spec *s, const struct builder *b, const struct dp_perf_layout *l) {
        uint64_t t = s->attr.sample_type;
        struct dp_perf_sample out;
        int r;

        /* Garbage in every field: absent ones must come back zero. */
        memset(&out, 0xa5, sizeof(out));
        r = dp_perf_parse_sample(l, b->buf, b->len, &out);
        CHECK(r == 0, "sample_type %#" PRIx64 " read_format %#" PRIx64 " branch %#" PRIx64 ": parse failed %d",
              t, (uint64_t) s->attr.read_format, (uint64_t) s->attr.branch_sample_type, r);
        CHECK(out.present == t, "present %#" PRIx64, out.present);
        EXPECT_FIELD(PERF_SAMPLE_IDENTIFIER, out.identifier, s->identifier);
        EXPECT_FIELD(PERF_SAMPLE_IP, out.ip, s->ip);
        EXPECT_FIELD(PERF_SAMPLE_TID, out.pid, s->pid);
        EXPECT_FIELD(PERF_SAMPLE_TID, out.tid, s->tid);
        EXPECT_FIELD(PERF_SAMPLE_TIME, out.time, s->time);
        EXPECT_FIELD(PERF_SAMPLE_ADDR, out.addr, s->addr);
        EXPECT_FIELD(PERF_SAMPLE_ID, out.id, s->id);
        EXPECT_FIELD(PERF_SAMPLE_STREAM_ID, out.stream_id, s->stream_id);
        EXPECT_FIELD(PERF_SAMPLE_CPU, out.cpu, s->cpu);
        EXPECT_FIELD(PERF_SAMPLE_PERIOD, out.period, s->period);
        EXPECT_FIELD(PERF_SAMPLE_READ, out.read_words, read_words(s));
        if (t & PERF_SAMPLE_READ)
                expect_mem(out.read, s->read, 8 * read_words(s), "read values");
        EXPECT_FIELD(PERF_SAMPLE_CALLCHAIN, out.callchain_nr, s->callchain_nr);
        if (t & PERF_SAMPLE_CALLCHAIN)
                expect_mem(out.callchain, s->callchain, 8 * s->callchain_nr, "callchain");
        EXPECT_FIELD(PERF_SAMPLE_RAW, out.raw_size, s->raw_size);
        if (t & PERF_SAMPLE_RAW)
                expect_mem(out.raw, s->raw, s->raw_size, "raw");
        EXPECT_FIELD(PERF_SAMPLE_BRANCH_STACK, out.branch_nr, s->branch_nr);
        EXPECT_FIELD(PERF_SAMPLE_BRANCH_STACK, out.branch_hw_idx,
                     s->branch_omit_hw_idx ? 0 : s->branch_hw_idx);
        if (t & PERF_SAMPLE_BRANCH_STACK) {
                expect_mem(out.branch_entries, s->branch, 24 * s->branch_nr, "branch entries");
                if (s->attr.branch_sample_type & DP_PERF_SAMPLE_BRANCH_COUNTERS)
                        expect_mem(out.branch_counters, s->branch_counters, 8 * s->branch_nr, "counters");
                else
                        CHECK(!out.branch_counters, "counters without the flag");
        }
        EXPECT_FIELD(PERF_SAMPLE_REGS_USER, out.regs_user_abi, s->regs_user_abi);
        if ((t & PERF_SAMPLE_REGS_USER) && s->regs_user_abi)
                expect_mem(out.regs_user, s->regs_user, 8 * __builtin_popcountll(s->attr.sample_regs_user),
                           "user regs");
        else
                CHECK(!out.regs_user, "user regs without ABI");
        EXPECT_FIELD(PERF_SAMPLE_STACK_USER, out.stack_user_size, s->stack_size);
        EXPECT_FIELD(PERF_SAMPLE_STACK_USER, out.stack_user_dyn_size, s->stack_dyn_size);
        if (t & PERF_SAMPLE_STACK_USER)
                expect_mem(out.stack_user, s->stack, s->stack_size, "user stack");
        EXPECT_FIELD(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, out.weight, s->weight);
        EXPECT_FIELD(PERF_SAMPLE_DATA_SRC, out.data_src, s->data_src);
        EXPECT_FIELD(PERF_SAMPLE_TRANSACTION, out.transaction, s->transaction);
        EXPECT_FIELD(PERF_SAMPLE_REGS_INTR, out.regs_intr_abi, s->regs_intr_abi);
        if ((t & PERF_SAMPLE_REGS_INTR) && s->regs_intr_abi)
                expect_mem(out.regs_intr, s->regs_intr, 8 * __builtin_popcountll(s->attr.sample_regs_intr),
                           "intr regs");
        else
                CHECK(!out.regs_intr, "intr regs without ABI");
        EXPECT_FIELD(PERF_SAMPLE_PHYS_ADDR, out.phys_addr, s->phys_addr);
        EXPECT_FIELD(PERF_SAMPLE_CGROUP, out.cgroup, s->cgroup);
        EXPECT_FIELD(PERF_SAMPLE_DATA_PAGE_SIZE, out.data_page_size, s->data_page_size);
        EXPECT_FIELD(PERF_SAMPLE_CODE_PAGE_SIZE, out.code_page_size, s->code_page_size);
        EXPECT_FIELD(PERF_SAMPLE_AUX, out.aux_size, s->aux_size);
        if (t & PERF_SAMPLE_AUX)
                expect_mem(out.aux, s->aux, s->aux_size, "aux");

        /* Pointers of absent or empty fields are NULL. */
        CHECK((t & PERF_SAMPLE_READ) || !out.read, "read");
        CHECK(((t & PERF_SAMPLE_CALLCHAIN) && s->callchain_nr) || !out.callchain, "callchain");
        CHECK((t & PERF_SAMPLE_RAW) || !out.raw, "raw");
        CHECK(((t & PERF_SAMPLE_BRANCH_STACK) && s->branch_nr) || !out.branch_entries, "branch entries");
        CHECK(((t & PERF_SAMPLE_BRANCH_STACK) && s->branch_nr) || !out.branch_counters, "branch counters");
        CHECK(((t & PERF_SAMPLE_STACK_USER) && s->stack_size) || !out.stack_user, "stack");
        CHECK(((t & PERF_SAMPLE_AUX) && s->aux_size) || !out.aux, "aux");
}

/* Any other length than the built one must be refused. */
static void check_wrong_sizes(const struct builder *b, const struct dp_perf_layout *l) {
        static _Alignas(8) uint8_t longer[sizeof(((struct builder *) 0)->buf) + 16];
        struct dp_perf_sample out;

        for (size_t cut = 1; cut <= b->len; cut++)
                CHECK(dp_perf_parse_sample(l, b->buf, b->len - cut, &out) == -EBADMSG,
                      "sample_type %#" PRIx64 ": %zu of %zu bytes accepted", l->sample_type, b->len - cut, b->len);

        memcpy(longer, b->buf, b->len);
        memset(longer + b->len, 0, 16);
        for (size_t extra = 1; extra <= 16; extra++)
                CHECK(dp_perf_parse_sample(l, longer, b->len + extra, &out) == -EBADMSG,
                      "sample_type %#" PRIx64 ": %zu extra bytes accepted", l->sample_type, extra);
}

static void random_attr(struct spec *s, uint64_t sample_type) {
        memset(s, 0, sizeof(*s));
        s->attr.size = sizeof(s->attr);
        s->attr.sample_type = sample_type;
        s->attr.read_format = rnd() & 0x1f;
        s->attr.branch_sample_type = rnd() & (PERF_SAMPLE_BRANCH_HW_INDEX | DP_PERF_SAMPLE_BRANCH_COUNTERS |
                                              PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER);
        s->attr.sample_regs_user = rnd() & rnd();
        s->attr.sample_regs_intr = rnd() & rnd();
        s->attr.sample_id_all = rnd() & 1;
}

static void round_trip(uint64_t sample_type, unsigned rounds, bool wrong_sizes) {
        static struct spec s;
        static struct builder b;
        struct dp_perf_layout l;

        for (unsigned i = 0; i < rounds; i++) {
                random_attr(&s, sample_type);
                CHECK(dp_perf_layout_init(&l, &s.attr) == 0, "layout");
                spec_random_values(&s, false);
                build_sample(&b, &s);
                check_round_trip(&s, &b, &l);
                if (wrong_sizes)
                        check_wrong_sizes(&b, &l);
        }
}

START_TEST(test_every_single_bit) {
        for (unsigned bit = 0; bit < 25; bit++)
                round_trip(UINT64_C(1) << bit, 20, true);
        round_trip(0, 5, true);
}
END_TEST

START_TEST(test_every_pair_of_bits) {
        for (unsigned i = 0; i < 25; i++)
                for (unsigned j = i + 1; j < 25; j++) {
                        uint64_t t = (UINT64_C(1) << i) | (UINT64_C(1) << j);

                        if (t == (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
                                continue;
                        round_trip(t, 4, true);
                }
}
END_TEST

START_TEST(test_all_bits) {
        round_trip(ALL_SAMPLE_BITS & ~PERF_SAMPLE_WEIGHT, 50, true);
        round_trip(ALL_SAMPLE_BITS & ~PERF_SAMPLE_WEIGHT_STRUCT, 50, true);
}
END_TEST

START_TEST(test_random_combinations) {
        for (unsigned i = 0; i < 3000; i++) {
                uint64_t t = rnd() & ALL_SAMPLE_BITS;

                if ((t & PERF_SAMPLE_WEIGHT) && (t & PERF_SAMPLE_WEIGHT_STRUCT))
                        t &= ~(rnd() & 1 ? PERF_SAMPLE_WEIGHT : PERF_SAMPLE_WEIGHT_STRUCT);
                round_trip(t, 2, i % 10 == 0);
        }
}
END_TEST

/* READ in every read_format shape, group and single, with LOST. */
START_TEST(test_read_formats) {
        static struct spec s;
        static struct builder b;
        struct dp_perf_layout l;

        for (uint64_t f = 0; f < 32; f++)
                for (unsigned nr = 0; nr < 5; nr++) {
                        memset(&s, 0, sizeof(s));
                        s.attr.size = sizeof(s.attr);
                        s.attr.sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
                        s.attr.read_format = f;
                        ck_assert_int_eq(dp_perf_layout_init(&l, &s.attr), 0);
                        spec_random_values(&s, false);
                        s.read_nr = nr;
                        if (f & PERF_FORMAT_GROUP)
                                s.read[0] = nr;
                        build_sample(&b, &s);
                        check_round_trip(&s, &b, &l);
                        check_wrong_sizes(&b, &l);
                        ck_assert_uint_eq(l.read_size, 8 * (1 + !!(f & 1) + !!(f & 2) +
                                                            ((f & PERF_FORMAT_GROUP) ? 0 : !!(f & 4) + !!(f & 16))));
                }

        /* A group nr that cannot fit is refused without overflow. */
        memset(&s, 0, sizeof(s));
        s.attr.sample_type = PERF_SAMPLE_READ;
        s.attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST;
        ck_assert_int_eq(dp_perf_layout_init(&l, &s.attr), 0);
        put_header(&b, PERF_RECORD_SAMPLE);
        put_u64(&b, UINT64_C(0x5555555555555556));
        put_u64(&b, 1);
        put_u64(&b, 2);
        put_u64(&b, 3);
        finish(&b);
        {
                struct dp_perf_sample out;
                ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &out), -EBADMSG);
        }
}
END_TEST

/* Branch stacks with and without HW_INDEX, including the kernel's bare nr = 0. */
START_TEST(test_branch_stack) {
        static struct spec s;
        static struct builder b;
        struct dp_perf_layout l;
        uint64_t types[] = { 0, PERF_SAMPLE_BRANCH_HW_INDEX, DP_PERF_SAMPLE_BRANCH_COUNTERS,
                             PERF_SAMPLE_BRANCH_HW_INDEX | DP_PERF_SAMPLE_BRANCH_COUNTERS };

        for (unsigned i = 0; i < DP_ARRAY_SIZE(types); i++)
                for (unsigned nr = 0; nr <= 8; nr++)
                        for (int omit = 0; omit <= (nr == 0 && (types[i] & PERF_SAMPLE_BRANCH_HW_INDEX)); omit++) {
                                memset(&s, 0, sizeof(s));
                                s.attr.size = sizeof(s.attr);
                                s.attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK |
                                                     PERF_SAMPLE_REGS_USER | PERF_SAMPLE_DATA_SRC;
                                s.attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | types[i];
                                s.attr.sample_regs_user = 0xff;
                                ck_assert_int_eq(dp_perf_layout_init(&l, &s.attr), 0);
                                spec_random_values(&s, true);
                                s.branch_nr = nr;
                                for (unsigned k = 0; k < 3 * nr; k++)
                                        s.branch[k] = rnd();
                                s.branch_omit_hw_idx = omit;
                                build_sample(&b, &s);
                                check_round_trip(&s, &b, &l);
                                if (nr > 0 || !(types[i] & PERF_SAMPLE_BRANCH_HW_INDEX))
                                        check_wrong_sizes(&b, &l);
                        }
}
END_TEST

START_TEST(test_stack_user_and_aux_sizes) {
        static struct spec s;
        static struct builder b;
        struct dp_perf_layout l;
        struct dp_perf_sample out;

        memset(&s, 0, sizeof(s));
        s.attr.size = sizeof(s.attr);
        s.attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_AUX;
        s.attr.sample_regs_user = 0x3;
        ck_assert_int_eq(dp_perf_layout_init(&l, &s.attr), 0);
        for (uint64_t size = 0; size <= 256; size += 8) {
                spec_random_values(&s, false);
                s.stack_size = size;
                s.stack_dyn_size = size / 2;
                s.aux_size = size % 128;
                build_sample(&b, &s);
                check_round_trip(&s, &b, &l);
                check_wrong_sizes(&b, &l);
                if (size == 0) {
                        /* No dyn_size word after an empty dump. */
                        ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &out), 0);
                        ck_assert_ptr_null(out.stack_user);
                        ck_assert_uint_eq(b.len, 8 + 8 + 8 + 8 * (s.regs_user_abi ? 2 : 0) + 8 + 8);
                }
        }

        /* dyn_size larger than the dump, and a dump size off the 8-byte grid. */
        spec_random_values(&s, false);
        s.stack_size = 16;
        s.stack_dyn_size = 24;
        s.aux_size = 0;
        build_sample(&b, &s);
        ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &out), -EBADMSG);
        s.stack_dyn_size = 8;
        s.stack_size = 12;
        build_sample(&b, &s);
        ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &out), -EBADMSG);
}
END_TEST

START_TEST(test_raw_padding) {
        static struct spec s;
        static struct builder b;
        struct dp_perf_layout l;
        struct dp_perf_sample out;

        memset(&s, 0, sizeof(s));
        s.attr.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_PHYS_ADDR;
        ck_assert_int_eq(dp_perf_layout_init(&l, &s.attr), 0);
        spec_random_values(&s, false);
        /* The kernel's empty raw: size 4, four zero bytes. */
        s.raw_size = 4;
        memset(s.raw, 0, 4);
        build_sample(&b, &s);
        check_round_trip(&s, &b, &l);
        /* A raw size that leaves the next field misaligned is not the kernel's. */
        s.raw_size = 8;
        build_sample(&b, &s);
        put(&b, "\0\0\0\0", 4);
        finish(&b);
        ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &out), -EBADMSG);
        /* A huge raw size is bounded. */
        s.raw_size = UINT32_MAX - 3;
        put_header(&b, PERF_RECORD_SAMPLE);
        put(&b, &s.raw_size, 4);
        put(&b, "\0\0\0\0", 4);
        put_u64(&b, 0);
        finish(&b);
        ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &out), -EBADMSG);
}
END_TEST

START_TEST(test_huge_counts) {
        static struct builder b;
        struct dp_perf_layout l;
        struct dp_perf_sample out;
        struct perf_event_attr attr = { .size = sizeof(attr) };
        const uint64_t bits[] = { PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_STACK_USER,
                                  PERF_SAMPLE_AUX };
        const uint64_t counts[] = { 2, 3, 16, UINT64_C(1) << 61, UINT64_MAX / 24 + 1, UINT64_MAX - 7, UINT64_MAX };

        for (unsigned i = 0; i < DP_ARRAY_SIZE(bits); i++)
                for (unsigned j = 0; j < DP_ARRAY_SIZE(counts); j++) {
                        attr.sample_type = bits[i];
                        attr.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX | DP_PERF_SAMPLE_BRANCH_COUNTERS;
                        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
                        put_header(&b, PERF_RECORD_SAMPLE);
                        /* Byte sizes stay on the 8-byte grid so only the bound can refuse them. */
                        put_u64(&b, counts[j] & ((bits[i] & (PERF_SAMPLE_STACK_USER | PERF_SAMPLE_AUX)) ?
                                                 ~UINT64_C(7) : UINT64_MAX));
                        put_u64(&b, 0);
                        finish(&b);
                        ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &out), -EBADMSG);
                }
}
END_TEST

START_TEST(test_layout) {
        struct perf_event_attr attr = { .size = sizeof(attr) };
        struct dp_perf_layout l;

        attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR |
                           PERF_SAMPLE_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_DATA_SRC;
        attr.sample_id_all = 1;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        ck_assert_int_eq(l.off_identifier, -1);
        ck_assert_int_eq(l.off_ip, 0);
        ck_assert_int_eq(l.off_tid, 8);
        ck_assert_int_eq(l.off_time, 16);
        ck_assert_int_eq(l.off_addr, 24);
        ck_assert_int_eq(l.off_id, 32);
        ck_assert_int_eq(l.off_stream_id, -1);
        ck_assert_int_eq(l.off_cpu, 40);
        ck_assert_int_eq(l.off_period, -1);
        ck_assert_uint_eq(l.fixed_size, 48);
        ck_assert_uint_eq(l.id_trailer_size, 32);
        ck_assert(l.sample_id_all);
        /* No field of variable length: one size, DATA_SRC at its place. */
        ck_assert_uint_eq(l.sample_size, 8 + 48 + 8);
        ck_assert_int_eq(l.off_data_src, 48);
        ck_assert_int_eq(l.off_weight, -1);
        ck_assert_int_eq(l.off_phys_addr, -1);

        attr.sample_type |= PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CODE_PAGE_SIZE;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        ck_assert_int_eq(l.off_weight, 48);
        ck_assert_int_eq(l.off_data_src, 56);
        ck_assert_int_eq(l.off_phys_addr, 64);
        ck_assert_int_eq(l.off_code_page_size, 72);
        ck_assert_uint_eq(l.sample_size, 8 + 80);
        attr.sample_type |= PERF_SAMPLE_REGS_INTR;      /* its ABI word decides its length */
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        ck_assert_uint_eq(l.sample_size, 0);
        ck_assert_int_eq(l.off_weight, -1);
        ck_assert_int_eq(l.off_phys_addr, -1);
        attr.sample_type &= ~(PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CODE_PAGE_SIZE |
                              PERF_SAMPLE_REGS_INTR);

        attr.sample_type |= PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_PERIOD | PERF_SAMPLE_STREAM_ID;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        ck_assert_int_eq(l.off_identifier, 0);
        ck_assert_int_eq(l.off_ip, 8);
        ck_assert_int_eq(l.off_stream_id, 48);
        ck_assert_int_eq(l.off_cpu, 56);
        ck_assert_int_eq(l.off_period, 64);
        ck_assert_uint_eq(l.fixed_size, 72);
        ck_assert_uint_eq(l.id_trailer_size, 48);

        /* Things we cannot parse. */
        attr.sample_type = UINT64_C(1) << 25;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), -EINVAL);
        attr.sample_type = UINT64_C(1) << 63;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), -EINVAL);
        attr.sample_type = PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), -EINVAL);
        attr.sample_type = PERF_SAMPLE_IP;
        attr.read_format = 1u << 5;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), -EINVAL);
        attr.read_format = 0;
        attr.sample_type = PERF_SAMPLE_BRANCH_STACK;
        attr.branch_sample_type = 1u << 20;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), -EINVAL);
        attr.sample_type = PERF_SAMPLE_IP; /* branch bits do not matter without BRANCH_STACK */
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        ck_assert_int_eq(dp_perf_layout_init(NULL, &attr), -EINVAL);
        ck_assert_int_eq(dp_perf_layout_init(&l, NULL), -EINVAL);

        /* An old, short attr: fields past its size are zero, as for the kernel. */
        attr = (struct perf_event_attr) { .size = PERF_ATTR_SIZE_VER0, .sample_type = PERF_SAMPLE_REGS_USER };
        attr.sample_regs_user = 0xff;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        ck_assert_uint_eq(l.sample_regs_user, 0);
        attr.size = PERF_ATTR_SIZE_VER3;
        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        ck_assert_uint_eq(l.sample_regs_user, 0xff);
}
END_TEST

START_TEST(test_bad_arguments) {
        struct perf_event_attr attr = { .size = sizeof(attr), .sample_type = PERF_SAMPLE_IP };
        struct dp_perf_layout l;
        struct dp_perf_sample out;
        _Alignas(8) uint8_t rec[32] = { 0 };
        struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 16 };

        ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
        memcpy(rec, &h, sizeof(h));
        ck_assert_int_eq(dp_perf_parse_sample(&l, rec, 16, &out), 0);
        ck_assert_int_eq(dp_perf_parse_sample(&l, rec + 4, 16, &out), -EINVAL);
        ck_assert_int_eq(dp_perf_parse_sample(&l, rec, 12, &out), -EBADMSG);
        ck_assert_int_eq(dp_perf_parse_sample(&l, rec, 20, &out), -EBADMSG);
        ck_assert_int_eq(dp_perf_parse_sample(NULL, rec, 16, &out), -EINVAL);
        ck_assert_int_eq(dp_perf_parse_sample(&l, NULL, 16, &out), -EINVAL);
        ck_assert_int_eq(dp_perf_parse_sample(&l, rec, 16, NULL), -EINVAL);
}
END_TEST

/* ---- non-sample records ---- */

static const uint64_t id_bits[] = { PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID,
                                    PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER };

/* Appends the trailer in the kernel's order (perf_event__output_id_sample()). */
static void put_trailer(struct builder *b, uint64_t type, const struct dp_perf_sample_id *v) {
        if (type & PERF_SAMPLE_TID)
                put_u32x2(b, v->pid, v->tid);
        if (type & PERF_SAMPLE_TIME)
                put_u64(b, v->time);
        if (type & PERF_SAMPLE_ID)
                put_u64(b, v->id);
        if (type & PERF_SAMPLE_STREAM_ID)
                put_u64(b, v->stream_id);
        if (type & PERF_SAMPLE_CPU)
                put_u32x2(b, v->cpu, 0);
        if (type & PERF_SAMPLE_IDENTIFIER)
                put_u64(b, v->identifier);
}

START_TEST(test_sample_id_trailer) {
        static struct builder b;
        struct dp_perf_layout l;
        struct dp_perf_sample_id want, got;

        for (uint64_t combo = 0; combo < 64; combo++) {
                struct perf_event_attr attr = { .size = sizeof(attr), .sample_id_all = 1 };
                uint64_t t = PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC; /* not in trailers */

                for (unsigned i = 0; i < 6; i++)
                        if (combo & (1u << i))
                                t |= id_bits[i];
                attr.sample_type = t;
                ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
                ck_assert_uint_eq(l.id_trailer_size, 8 * __builtin_popcountll(combo));

                want = (struct dp_perf_sample_id) {
                        .present = t & ~(PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD | PERF_SAMPLE_DATA_SRC),
                        .pid = (uint32_t) rnd(), .tid = (uint32_t) rnd(), .time = rnd(), .id = rnd(),
                        .stream_id = rnd(), .cpu = (uint32_t) rnd(), .identifier = rnd(),
                };
                /* A PERF_RECORD_MMAP-like body of variable length comes first. */
                put_header(&b, PERF_RECORD_MMAP);
                for (unsigned i = 0; i < combo % 5 + 1; i++)
                        put_u64(&b, rnd());
                put_trailer(&b, t, &want);
                finish(&b);

                ck_assert_int_eq(dp_perf_parse_sample_id(&l, b.buf, b.len, &got), 0);
                ck_assert_uint_eq(got.present, want.present);
#define SAME(bit, f) ck_assert_uint_eq(got.f, (t & (bit)) ? want.f : 0)
                SAME(PERF_SAMPLE_TID, pid);
                SAME(PERF_SAMPLE_TID, tid);
                SAME(PERF_SAMPLE_TIME, time);
                SAME(PERF_SAMPLE_ID, id);
                SAME(PERF_SAMPLE_STREAM_ID, stream_id);
                SAME(PERF_SAMPLE_CPU, cpu);
                SAME(PERF_SAMPLE_IDENTIFIER, identifier);
#undef SAME
                /* Too short to hold the trailer. */
                ck_assert_int_eq(dp_perf_parse_sample_id(&l, b.buf, 8 + l.id_trailer_size, &got), 0);
                if (l.id_trailer_size > 0)
                        ck_assert_int_eq(dp_perf_parse_sample_id(&l, b.buf, 8 + l.id_trailer_size - 1, &got),
                                         -EBADMSG);

                /* Without sample_id_all there is no trailer at all. */
                attr.sample_id_all = 0;
                ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
                ck_assert_uint_eq(l.id_trailer_size, 0);
                ck_assert_int_eq(dp_perf_parse_sample_id(&l, b.buf, b.len, &got), 0);
                ck_assert_uint_eq(got.present, 0);
        }
}
END_TEST

START_TEST(test_loss_and_throttle_records) {
        static struct builder b;
        struct dp_perf_sample_id trailer = { .time = 77, .id = 42, .cpu = 1 };
        uint64_t t = PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU;
        uint64_t id = 0, lost = 0, time = 0;

        for (int with_trailer = 0; with_trailer <= 1; with_trailer++) {
                put_header(&b, PERF_RECORD_LOST);
                put_u64(&b, 1234);
                put_u64(&b, 99);
                if (with_trailer)
                        put_trailer(&b, t, &trailer);
                finish(&b);
                ck_assert_int_eq(dp_perf_parse_lost(b.buf, b.len, &id, &lost), 0);
                ck_assert_uint_eq(id, 1234);
                ck_assert_uint_eq(lost, 99);
                ck_assert_int_eq(dp_perf_parse_lost(b.buf, 23, &id, &lost), -EBADMSG);
                ck_assert_int_eq(dp_perf_parse_lost(b.buf, 8, &id, &lost), -EBADMSG);

                put_header(&b, PERF_RECORD_LOST_SAMPLES);
                put_u64(&b, 5000);
                if (with_trailer)
                        put_trailer(&b, t, &trailer);
                finish(&b);
                ck_assert_int_eq(dp_perf_parse_lost_samples(b.buf, b.len, &lost), 0);
                ck_assert_uint_eq(lost, 5000);
                ck_assert_int_eq(dp_perf_parse_lost_samples(b.buf, 15, &lost), -EBADMSG);

                for (uint32_t type = PERF_RECORD_THROTTLE; type <= PERF_RECORD_UNTHROTTLE; type++) {
                        put_header(&b, type);
                        put_u64(&b, 111111);
                        put_u64(&b, 7);
                        put_u64(&b, 8);
                        if (with_trailer)
                                put_trailer(&b, t, &trailer);
                        finish(&b);
                        ck_assert_int_eq(dp_perf_parse_throttle(b.buf, b.len, &time, &id), 0);
                        ck_assert_uint_eq(time, 111111);
                        ck_assert_uint_eq(id, 7);
                        ck_assert_int_eq(dp_perf_parse_throttle(b.buf, 31, &time, &id), -EBADMSG);
                }
        }

        /* And the trailer of a LOST record names its event. */
        {
                struct perf_event_attr attr = { .size = sizeof(attr), .sample_type = t | PERF_SAMPLE_ADDR,
                                                .sample_id_all = 1 };
                struct dp_perf_layout l;
                struct dp_perf_sample_id got;

                put_header(&b, PERF_RECORD_LOST);
                put_u64(&b, 42);
                put_u64(&b, 3);
                put_trailer(&b, t, &trailer);
                finish(&b);
                ck_assert_int_eq(dp_perf_layout_init(&l, &attr), 0);
                ck_assert_int_eq(dp_perf_parse_sample_id(&l, b.buf, b.len, &got), 0);
                ck_assert_uint_eq(got.id, 42);
                ck_assert_uint_eq(got.time, 77);
                ck_assert_uint_eq(got.cpu, 1);
        }
}
END_TEST

START_TEST(test_read_value_lost) {
        const uint64_t values[] = { 1000, 2000, 3000, 4000, 5000 };
        uint64_t lost = 0;

        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_LOST, values, 2, &lost), 0);
        ck_assert_uint_eq(lost, 2000);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_ID | PERF_FORMAT_LOST, values, 3, &lost), 0);
        ck_assert_uint_eq(lost, 3000);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_LOST, values, 3,
                                                 &lost), 0);
        ck_assert_uint_eq(lost, 3000);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                                 PERF_FORMAT_ID | PERF_FORMAT_LOST, values, 5, &lost), 0);
        ck_assert_uint_eq(lost, 5000);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                                 PERF_FORMAT_ID | PERF_FORMAT_LOST, values, 4, &lost), -EBADMSG);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_ID, values, 2, &lost), -ENODATA);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_GROUP | PERF_FORMAT_LOST, values, 5, &lost), -EINVAL);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_LOST, NULL, 2, &lost), -EINVAL);
}
END_TEST

/* time_enabled always comes right after the value, whatever else follows. */
START_TEST(test_read_time_enabled) {
        const uint64_t values[] = { 1000, 2000, 3000, 4000, 5000 };
        uint64_t lost = 0, enabled = 0;

        ck_assert_int_eq(dp_perf_read_time_enabled(PERF_FORMAT_TOTAL_TIME_ENABLED, values, 2, &enabled), 0);
        ck_assert_uint_eq(enabled, 2000);
        /* The daemon's own read_format: value, time_enabled, lost. */
        enabled = 0;
        ck_assert_int_eq(dp_perf_read_time_enabled(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_LOST, values, 3,
                                                   &enabled), 0);
        ck_assert_int_eq(dp_perf_read_value_lost(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_LOST, values, 3,
                                                 &lost), 0);
        ck_assert_uint_eq(enabled, 2000);
        ck_assert_uint_eq(lost, 3000);
        ck_assert_int_eq(dp_perf_read_time_enabled(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
                                                   PERF_FORMAT_ID | PERF_FORMAT_LOST, values, 5, &enabled), 0);
        ck_assert_uint_eq(enabled, 2000);
        ck_assert_int_eq(dp_perf_read_time_enabled(PERF_FORMAT_TOTAL_TIME_ENABLED, values, 1, &enabled), -EBADMSG);
        ck_assert_int_eq(dp_perf_read_time_enabled(PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_LOST, values, 3,
                                                   &enabled), -ENODATA);
        ck_assert_int_eq(dp_perf_read_time_enabled(PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED, values, 5,
                                                   &enabled), -EINVAL);
        ck_assert_int_eq(dp_perf_read_time_enabled(1u << 7, values, 5, &enabled), -EINVAL);
        ck_assert_int_eq(dp_perf_read_time_enabled(PERF_FORMAT_TOTAL_TIME_ENABLED, NULL, 2, &enabled), -EINVAL);
}
END_TEST

/* Bits of the fields of fixed length. */
#define FIXED_SAMPLE_BITS                                                                               \
        (ALL_SAMPLE_BITS & ~(PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |               \
                             PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | \
                             PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX))

/* A source with the generic decode that is not dp_source_decode_generic
 * itself: dp_source_decode_record() must then parse. */
static int decode_generic_copy(const struct dp_perf_sample *ps, const struct dp_source_context *context,
                               struct dp_sample *out) {
        return dp_source_decode_generic(ps, context, out);
}

/* Read in place, a fixed-size sample decodes to exactly what parsing it and
 * the generic decode give: every field, every flag. */
START_TEST(test_decode_in_place) {
        static const uint64_t data_srcs[] = { 0, UINT64_C(0x1e05080021), DP_DATA_SRC_NA,
                                              (uint64_t) PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT,
                                              (uint64_t) PERF_MEM_OP_STORE << PERF_MEM_OP_SHIFT };
        const struct dp_source copy = { .name = "copy", .decode = decode_generic_copy };
        static struct spec sp;
        static struct builder b;
        unsigned in_place = 0;

        for (unsigned i = 0; i < 20000; i++) {
                uint64_t t = rnd() & FIXED_SAMPLE_BITS;
                struct dp_perf_layout l;
                struct dp_perf_sample ps;
                struct dp_sample want, got, parsed;
                int rw, rg, rp;

                if ((t & PERF_SAMPLE_WEIGHT) && (t & PERF_SAMPLE_WEIGHT_STRUCT))
                        t &= ~PERF_SAMPLE_WEIGHT;
                if (rnd_below(4))
                        t |= PERF_SAMPLE_ADDR;
                random_attr(&sp, t);
                CHECK(dp_perf_layout_init(&l, &sp.attr) == 0, "layout %#" PRIx64, t);
                CHECK(l.sample_size != 0, "%#" PRIx64 " has no fixed size", t);
                spec_random_values(&sp, false);
                sp.data_src = rnd_below(2) ? data_srcs[rnd_below(DP_ARRAY_SIZE(data_srcs))] : sp.data_src;
                sp.weight = rnd_below(3) ? sp.weight : rnd_below(2) ? 0 : UINT64_C(1) << 32;
                sp.phys_addr = rnd_below(3) ? sp.phys_addr : 0;
                build_sample(&b, &sp);
                CHECK(b.len == l.sample_size, "%#" PRIx64 ": built %zu, layout says %u", t, b.len, l.sample_size);

                memset(&want, 0x5a, sizeof(want));
                memcpy(&got, &want, sizeof(got));
                memcpy(&parsed, &want, sizeof(parsed));
                ck_assert_int_eq(dp_perf_parse_sample(&l, b.buf, b.len, &ps), 0);
                if (ps.present & PERF_SAMPLE_CPU)
                        want.cpu = (uint16_t) ps.cpu;
                rw = dp_source_decode_generic(&ps, NULL, &want);
                in_place += dp_source_reads_in_place(&dp_source_pagefault, &l, (const void *) b.buf);
                rg = dp_source_decode_record(&dp_source_pagefault, NULL, &l, (const void *) b.buf, &got);
                rp = dp_source_decode_record(&copy, NULL, &l, (const void *) b.buf, &parsed);
                CHECK(rw == rg && rw == rp, "%#" PRIx64 ": %d, %d in place, %d parsed", t, rw, rg, rp);
                CHECK(memcmp(&want, &got, sizeof(want)) == 0, "%#" PRIx64 ": in place differs", t);
                CHECK(memcmp(&want, &parsed, sizeof(want)) == 0, "%#" PRIx64 ": parsed differs", t);
        }
        ck_assert_uint_eq(in_place, 20000);

        /* A record of another size than its layout's is parsed, and refused. */
        random_attr(&sp, PERF_SAMPLE_TID | PERF_SAMPLE_ADDR);
        {
                struct dp_perf_layout l;
                struct dp_sample out;

                ck_assert_int_eq(dp_perf_layout_init(&l, &sp.attr), 0);
                build_sample(&b, &sp);
                put_u64(&b, 0);
                finish(&b);
                ck_assert(!dp_source_reads_in_place(&dp_source_pagefault, &l, (const void *) b.buf));
                ck_assert_int_eq(dp_source_decode_record(&dp_source_pagefault, NULL, &l, (const void *) b.buf, &out),
                                 -EBADMSG);
        }
}
END_TEST

static Suite *perf_record_suite(void) {
        Suite *s = suite_create("perf-record");
        TCase *tc = tcase_create("core");

        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, test_every_single_bit);
        tcase_add_test(tc, test_every_pair_of_bits);
        tcase_add_test(tc, test_all_bits);
        tcase_add_test(tc, test_random_combinations);
        tcase_add_test(tc, test_read_formats);
        tcase_add_test(tc, test_branch_stack);
        tcase_add_test(tc, test_stack_user_and_aux_sizes);
        tcase_add_test(tc, test_raw_padding);
        tcase_add_test(tc, test_huge_counts);
        tcase_add_test(tc, test_layout);
        tcase_add_test(tc, test_decode_in_place);
        tcase_add_test(tc, test_bad_arguments);
        tcase_add_test(tc, test_sample_id_trailer);
        tcase_add_test(tc, test_loss_and_throttle_records);
        tcase_add_test(tc, test_read_value_lost);
        tcase_add_test(tc, test_read_time_enabled);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return dp_check_run(perf_record_suite());
}
