/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * PERF_RECORD_SAMPLE and friends, decoded against a layout derived from the
 * event's attr.  Field order follows perf_output_sample() in the kernel.
 * Every variable-length field is checked against what is left of the record
 * before it is touched, and a sample must be filled exactly by its fields.
 */

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "macro.h"
#include "perf-record.h"

/* Every sample_type bit up to and including WEIGHT_STRUCT (bit 24); newer bits
 * may add fields we do not know how to skip. */
#define DP_PERF_SAMPLE_KNOWN ((UINT64_C(1) << 25) - 1)
#define DP_PERF_FORMAT_KNOWN ((UINT64_C(1) << 5) - 1)
/* branch_sample_type bits through BRANCH_COUNTERS (bit 19). */
#define DP_PERF_BRANCH_KNOWN ((UINT64_C(1) << 20) - 1)

/* Fields whose length varies from sample to sample (REGS_* by their ABI word). */
#define DP_PERF_SAMPLE_VARIABLE_BITS                                                        \
        (PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK | \
         PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_AUX)

#define DP_PERF_SAMPLE_ID_BITS                                                  \
        (PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
         PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

#define HEADER_SIZE sizeof(struct perf_event_header)
#define BRANCH_ENTRY_SIZE 24u

/* Attr fields beyond attr->size read as zero, as the kernel treats them. */
static uint64_t attr_u64(const struct perf_event_attr *attr, size_t offset) {
        size_t size = attr->size ? attr->size : PERF_ATTR_SIZE_VER0;
        uint64_t v;

        if (offset + sizeof(v) > size)
                return 0;
        memcpy(&v, (const uint8_t *) attr + offset, sizeof(v));
        return v;
}

/* Words of the READ field that do not depend on a group's nr. */
static unsigned read_fixed_words(uint64_t read_format) {
        unsigned words = 1 + !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
                         !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING);

        if (!(read_format & PERF_FORMAT_GROUP))
                words += !!(read_format & PERF_FORMAT_ID) + !!(read_format & PERF_FORMAT_LOST);
        return words;
}

int dp_perf_layout_init(struct dp_perf_layout *layout, const struct perf_event_attr *attr) {
        uint64_t type, read_format, branch_type;
        int16_t off = 0;

        if (!layout || !attr)
                return -EINVAL;

        type = attr->sample_type;
        read_format = attr->read_format;
        branch_type = attr_u64(attr, offsetof(struct perf_event_attr, branch_sample_type));
        if (type & ~DP_PERF_SAMPLE_KNOWN)
                return -EINVAL;
        /* The kernel refuses both at once; only one u64 is ever written. */
        if ((type & PERF_SAMPLE_WEIGHT) && (type & PERF_SAMPLE_WEIGHT_STRUCT))
                return -EINVAL;
        if (read_format & ~DP_PERF_FORMAT_KNOWN)
                return -EINVAL;
        if ((type & PERF_SAMPLE_BRANCH_STACK) && (branch_type & ~DP_PERF_BRANCH_KNOWN))
                return -EINVAL;

        *layout = (struct dp_perf_layout) {
                .sample_type = type,
                .read_format = read_format,
                .branch_sample_type = branch_type,
                .sample_regs_user = attr_u64(attr, offsetof(struct perf_event_attr, sample_regs_user)),
                .sample_regs_intr = attr_u64(attr, offsetof(struct perf_event_attr, sample_regs_intr)),
                .sample_id_all = attr->sample_id_all,
                .off_identifier = -1, .off_ip = -1, .off_tid = -1, .off_time = -1, .off_addr = -1,
                .off_id = -1, .off_stream_id = -1, .off_cpu = -1, .off_period = -1,
                .read_size = (uint16_t) (8 * read_fixed_words(read_format)),
                .off_weight = -1, .off_data_src = -1, .off_transaction = -1, .off_phys_addr = -1,
                .off_cgroup = -1, .off_data_page_size = -1, .off_code_page_size = -1,
        };

#define PLACE(bit, field)                       \
        if (type & (bit)) {                     \
                layout->field = off;            \
                off += 8;                       \
        }
        PLACE(PERF_SAMPLE_IDENTIFIER, off_identifier);
        PLACE(PERF_SAMPLE_IP, off_ip);
        PLACE(PERF_SAMPLE_TID, off_tid);
        PLACE(PERF_SAMPLE_TIME, off_time);
        PLACE(PERF_SAMPLE_ADDR, off_addr);
        PLACE(PERF_SAMPLE_ID, off_id);
        PLACE(PERF_SAMPLE_STREAM_ID, off_stream_id);
        PLACE(PERF_SAMPLE_CPU, off_cpu);
        PLACE(PERF_SAMPLE_PERIOD, off_period);
        layout->fixed_size = (uint16_t) off;

        /* In kernel order after the variable fields, of which there are none. */
        if (!(type & DP_PERF_SAMPLE_VARIABLE_BITS)) {
                PLACE(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, off_weight);
                PLACE(PERF_SAMPLE_DATA_SRC, off_data_src);
                PLACE(PERF_SAMPLE_TRANSACTION, off_transaction);
                PLACE(PERF_SAMPLE_PHYS_ADDR, off_phys_addr);
                PLACE(PERF_SAMPLE_CGROUP, off_cgroup);
                PLACE(PERF_SAMPLE_DATA_PAGE_SIZE, off_data_page_size);
                PLACE(PERF_SAMPLE_CODE_PAGE_SIZE, off_code_page_size);
                layout->sample_size = (uint16_t) (HEADER_SIZE + off);
        }
#undef PLACE

        if (layout->sample_id_all)
                layout->id_trailer_size =
                        (uint16_t) (8 * __builtin_popcountll(type & DP_PERF_SAMPLE_ID_BITS));
        return 0;
}

/* A bounded view of the part of the record not yet parsed. */
struct cursor {
        const uint8_t *p;
        size_t left;
};

static inline int take_u64(struct cursor *c, uint64_t *v) {
        if (c->left < 8)
                return -EBADMSG;
        *v = dp_load_u64(c->p);
        c->p += 8;
        c->left -= 8;
        return 0;
}

/* @n items of @item_size bytes, NULL when empty; the division keeps a huge
 * count from overflowing. */
static inline int take_array(struct cursor *c, uint64_t n, size_t item_size, const void **ret) {
        if (n > c->left / item_size)
                return -EBADMSG;
        *ret = n > 0 ? c->p : NULL;
        c->p += n * item_size;
        c->left -= n * item_size;
        return 0;
}

static int take_regs(struct cursor *c, uint64_t mask, uint64_t *abi, const uint64_t **regs) {
        const void *p = NULL;
        int r;

        r = take_u64(c, abi);
        if (r < 0)
                return r;
        /* ABI_NONE means the kernel had no registers to dump: no words follow. */
        if (*abi != PERF_SAMPLE_REGS_ABI_NONE) {
                r = take_array(c, (uint64_t) __builtin_popcountll(mask), 8, &p);
                if (r < 0)
                        return r;
        }
        *regs = p;
        return 0;
}

static int take_read(const struct dp_perf_layout *layout, struct cursor *c, struct dp_perf_sample *out) {
        uint64_t words = layout->read_size / 8;
        const void *p;
        int r;

        if (layout->read_format & PERF_FORMAT_GROUP) {
                uint64_t per_member = 1 + !!(layout->read_format & PERF_FORMAT_ID) +
                                      !!(layout->read_format & PERF_FORMAT_LOST);
                uint64_t nr;

                if (c->left < 8)
                        return -EBADMSG;
                nr = dp_load_u64(c->p);
                /* Bound nr before multiplying so the word count cannot wrap. */
                if (nr > c->left / 8 / per_member)
                        return -EBADMSG;
                words += nr * per_member;
        }
        r = take_array(c, words, 8, &p);
        if (r < 0)
                return r;
        out->read = p;
        out->read_words = (uint32_t) words;
        return 0;
}

/* Everything after BRANCH_STACK.  Assigns every field it covers, so it can be
 * rerun from another cursor position. */
static int parse_tail(const struct dp_perf_layout *layout, struct cursor c, struct dp_perf_sample *out) {
        uint64_t type = layout->sample_type;
        const void *p;
        int r;

        if (type & PERF_SAMPLE_REGS_USER) {
                r = take_regs(&c, layout->sample_regs_user, &out->regs_user_abi, &out->regs_user);
                if (r < 0)
                        return r;
        }

        if (type & PERF_SAMPLE_STACK_USER) {
                uint64_t size;

                r = take_u64(&c, &size);
                if (r < 0)
                        return r;
                /* The kernel dumps whole words only, which keeps what follows aligned. */
                if (size % 8 != 0)
                        return -EBADMSG;
                r = take_array(&c, size, 1, &p);
                if (r < 0)
                        return r;
                out->stack_user = p;
                out->stack_user_size = size;
                out->stack_user_dyn_size = 0;
                if (size != 0) {
                        r = take_u64(&c, &out->stack_user_dyn_size);
                        if (r < 0)
                                return r;
                        if (out->stack_user_dyn_size > size)
                                return -EBADMSG;
                }
        }

#define TAKE(bit, field)                                        \
        if (type & (bit)) {                                     \
                r = take_u64(&c, &out->field);                  \
                if (r < 0)                                      \
                        return r;                               \
        }
        TAKE(PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT, weight);
        TAKE(PERF_SAMPLE_DATA_SRC, data_src);
        TAKE(PERF_SAMPLE_TRANSACTION, transaction);
        if (type & PERF_SAMPLE_REGS_INTR) {
                r = take_regs(&c, layout->sample_regs_intr, &out->regs_intr_abi, &out->regs_intr);
                if (r < 0)
                        return r;
        }
        TAKE(PERF_SAMPLE_PHYS_ADDR, phys_addr);
        TAKE(PERF_SAMPLE_CGROUP, cgroup);
        TAKE(PERF_SAMPLE_DATA_PAGE_SIZE, data_page_size);
        TAKE(PERF_SAMPLE_CODE_PAGE_SIZE, code_page_size);
#undef TAKE

        if (type & PERF_SAMPLE_AUX) {
                r = take_u64(&c, &out->aux_size);
                if (r < 0)
                        return r;
                if (out->aux_size % 8 != 0)
                        return -EBADMSG;
                r = take_array(&c, out->aux_size, 1, &p);
                if (r < 0)
                        return r;
                out->aux = p;
        }

        /* Sample records carry no padding of their own: the fields fill them. */
        return c.left == 0 ? 0 : -EBADMSG;
}

/* Everything after the fixed leading fields, i.e. all a layout cannot place. */
static inline void clear_variable_fields(struct dp_perf_sample *out) {
        out->read = NULL;
        out->read_words = 0;
        out->callchain = NULL;
        out->callchain_nr = 0;
        out->raw = NULL;
        out->raw_size = 0;
        out->branch_entries = NULL;
        out->branch_nr = 0;
        out->branch_hw_idx = 0;
        out->branch_counters = NULL;
        out->regs_user_abi = 0;
        out->regs_user = NULL;
        out->stack_user = NULL;
        out->stack_user_size = 0;
        out->stack_user_dyn_size = 0;
        out->weight = 0;
        out->data_src = 0;
        out->transaction = 0;
        out->regs_intr_abi = 0;
        out->regs_intr = NULL;
        out->phys_addr = 0;
        out->cgroup = 0;
        out->data_page_size = 0;
        out->code_page_size = 0;
        out->aux = NULL;
        out->aux_size = 0;
}

/* The fixed leading fields, each at its offset or zero.  Field by field
 * rather than one memset of @out: on x86 a 288-byte memset becomes
 * "rep stos", whose start-up cost dominated the whole parse. */
static inline void load_leading_fields(const struct dp_perf_layout *layout, const uint8_t *body,
                                       struct dp_perf_sample *out) {
        out->present = layout->sample_type;
        out->identifier = layout->off_identifier >= 0 ? dp_load_u64(body + layout->off_identifier) : 0;
        out->ip = layout->off_ip >= 0 ? dp_load_u64(body + layout->off_ip) : 0;
        out->pid = layout->off_tid >= 0 ? dp_load_u32(body + layout->off_tid) : 0;
        out->tid = layout->off_tid >= 0 ? dp_load_u32(body + layout->off_tid + 4) : 0;
        out->time = layout->off_time >= 0 ? dp_load_u64(body + layout->off_time) : 0;
        out->addr = layout->off_addr >= 0 ? dp_load_u64(body + layout->off_addr) : 0;
        out->id = layout->off_id >= 0 ? dp_load_u64(body + layout->off_id) : 0;
        out->stream_id = layout->off_stream_id >= 0 ? dp_load_u64(body + layout->off_stream_id) : 0;
        out->cpu = layout->off_cpu >= 0 ? dp_load_u32(body + layout->off_cpu) : 0;
        out->period = layout->off_period >= 0 ? dp_load_u64(body + layout->off_period) : 0;
}

/* The trailing fields of a layout without variable fields, each at its offset. */
static inline void load_fixed_trailing_fields(const struct dp_perf_layout *layout, const uint8_t *body,
                                              struct dp_perf_sample *out) {
        out->weight = layout->off_weight >= 0 ? dp_load_u64(body + layout->off_weight) : 0;
        out->data_src = layout->off_data_src >= 0 ? dp_load_u64(body + layout->off_data_src) : 0;
        out->transaction = layout->off_transaction >= 0 ? dp_load_u64(body + layout->off_transaction) : 0;
        out->phys_addr = layout->off_phys_addr >= 0 ? dp_load_u64(body + layout->off_phys_addr) : 0;
        out->cgroup = layout->off_cgroup >= 0 ? dp_load_u64(body + layout->off_cgroup) : 0;
        out->data_page_size = layout->off_data_page_size >= 0 ? dp_load_u64(body + layout->off_data_page_size) : 0;
        out->code_page_size = layout->off_code_page_size >= 0 ? dp_load_u64(body + layout->off_code_page_size) : 0;
}

static inline int take_callchain(struct cursor *c, struct dp_perf_sample *out) {
        const void *p;
        int r;

        r = take_u64(c, &out->callchain_nr);
        if (r < 0)
                return r;
        r = take_array(c, out->callchain_nr, 8, &p);
        if (r < 0)
                return r;
        out->callchain = p;
        return 0;
}

static inline int take_raw(struct cursor *c, struct dp_perf_sample *out) {
        const void *p;
        int r;

        if (c->left < 4)
                return -EBADMSG;
        out->raw_size = dp_load_u32(c->p);
        c->p += 4;
        c->left -= 4;
        /* The kernel pads the raw data so that size word + data end on 8 bytes. */
        if ((4 + (uint64_t) out->raw_size) % 8 != 0)
                return -EBADMSG;
        r = take_array(c, out->raw_size, 1, &p);
        if (r < 0)
                return r;
        out->raw = p;
        return 0;
}

/* BRANCH_STACK and everything after it: where the tail starts may depend on
 * whether it parses (see below). */
static inline int parse_branch_stack_and_tail(const struct dp_perf_layout *layout, struct cursor c,
                                              struct dp_perf_sample *out) {
        bool hw_index = layout->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX;
        bool counters = layout->branch_sample_type & DP_PERF_SAMPLE_BRANCH_COUNTERS;
        uint64_t words_each = 3 + counters;
        const void *p;
        int r;

        r = take_u64(&c, &out->branch_nr);
        if (r < 0)
                return r;

        /* With no branch stack at hand the kernel writes nr = 0 alone, even
         * when HW_INDEX would add hw_idx.  Try the documented form first. */
        if (hw_index && out->branch_nr == 0) {
                struct cursor without = c;

                if (take_u64(&c, &out->branch_hw_idx) >= 0 && parse_tail(layout, c, out) >= 0)
                        return 0;
                out->branch_hw_idx = 0;
                return parse_tail(layout, without, out);
        }

        if (hw_index) {
                r = take_u64(&c, &out->branch_hw_idx);
                if (r < 0)
                        return r;
        }
        if (out->branch_nr > c.left / 8 / words_each)
                return -EBADMSG;
        r = take_array(&c, out->branch_nr, BRANCH_ENTRY_SIZE, &p);
        if (r < 0)
                return r;
        out->branch_entries = p;
        if (counters) {
                r = take_array(&c, out->branch_nr, 8, &p);
                if (r < 0)
                        return r;
                out->branch_counters = p;
        }
        return parse_tail(layout, c, out);
}

/* The hot path of replay and of the readers for decoders that need the parsed
 * sample: the helpers above are static inline so that this compiles to the
 * one function it was before being split. */
int dp_perf_parse_sample(const struct dp_perf_layout *layout, const void *record, size_t size,
                         struct dp_perf_sample *out) {
        const uint8_t *body;
        uint64_t type;
        struct cursor c;
        int r;

        if (!layout || !record || !out)
                return -EINVAL;
        /* Pointers into the record are handed out as u64 arrays. */
        if ((uintptr_t) record % 8 != 0)
                return -EINVAL;
        if (size < HEADER_SIZE + layout->fixed_size || size % 8 != 0)
                return -EBADMSG;

        type = layout->sample_type;
        body = (const uint8_t *) record + HEADER_SIZE;
        load_leading_fields(layout, body, out);
        clear_variable_fields(out);

        /* Every field at its place: no walk, and the size says it all. */
        if (layout->sample_size) {
                if (size != layout->sample_size)
                        return -EBADMSG;
                load_fixed_trailing_fields(layout, body, out);
                return 0;
        }

        c = (struct cursor) { body + layout->fixed_size, size - HEADER_SIZE - layout->fixed_size };
        if (type & PERF_SAMPLE_READ) {
                r = take_read(layout, &c, out);
                if (r < 0)
                        return r;
        }
        if (type & PERF_SAMPLE_CALLCHAIN) {
                r = take_callchain(&c, out);
                if (r < 0)
                        return r;
        }
        if (type & PERF_SAMPLE_RAW) {
                r = take_raw(&c, out);
                if (r < 0)
                        return r;
        }
        if (type & PERF_SAMPLE_BRANCH_STACK)
                return parse_branch_stack_and_tail(layout, c, out);
        return parse_tail(layout, c, out);
}

int dp_perf_parse_sample_id(const struct dp_perf_layout *layout, const void *record, size_t size,
                            struct dp_perf_sample_id *out) {
        uint64_t type;
        const uint8_t *p;

        if (!layout || !record || !out)
                return -EINVAL;

        *out = (struct dp_perf_sample_id) {};
        if (!layout->sample_id_all)
                return 0;
        if (size < HEADER_SIZE + layout->id_trailer_size)
                return -EBADMSG;

        type = layout->sample_type;
        out->present = type & DP_PERF_SAMPLE_ID_BITS;
        p = (const uint8_t *) record + size - layout->id_trailer_size;

        if (type & PERF_SAMPLE_TID) {
                out->pid = dp_load_u32(p);
                out->tid = dp_load_u32(p + 4);
                p += 8;
        }
        if (type & PERF_SAMPLE_TIME) {
                out->time = dp_load_u64(p);
                p += 8;
        }
        if (type & PERF_SAMPLE_ID) {
                out->id = dp_load_u64(p);
                p += 8;
        }
        if (type & PERF_SAMPLE_STREAM_ID) {
                out->stream_id = dp_load_u64(p);
                p += 8;
        }
        if (type & PERF_SAMPLE_CPU) {
                out->cpu = dp_load_u32(p);
                p += 8;
        }
        if (type & PERF_SAMPLE_IDENTIFIER)
                out->identifier = dp_load_u64(p);
        return 0;
}

/* The first @words u64 of a record body, after checking they are there. */
static int record_body(const void *record, size_t size, size_t words, const uint8_t **ret) {
        if (!record)
                return -EINVAL;
        if (size < HEADER_SIZE + 8 * words)
                return -EBADMSG;
        *ret = (const uint8_t *) record + HEADER_SIZE;
        return 0;
}

int dp_perf_parse_lost(const void *record, size_t size, uint64_t *id, uint64_t *lost) {
        const uint8_t *body;
        int r;

        r = record_body(record, size, 2, &body);
        if (r < 0)
                return r;
        if (id)
                *id = dp_load_u64(body);
        if (lost)
                *lost = dp_load_u64(body + 8);
        return 0;
}

int dp_perf_parse_lost_samples(const void *record, size_t size, uint64_t *lost) {
        const uint8_t *body;
        int r;

        r = record_body(record, size, 1, &body);
        if (r < 0)
                return r;
        if (lost)
                *lost = dp_load_u64(body);
        return 0;
}

int dp_perf_parse_throttle(const void *record, size_t size, uint64_t *time, uint64_t *id) {
        const uint8_t *body;
        int r;

        /* time, id, stream_id */
        r = record_body(record, size, 3, &body);
        if (r < 0)
                return r;
        if (time)
                *time = dp_load_u64(body);
        if (id)
                *id = dp_load_u64(body + 8);
        return 0;
}

int dp_perf_read_value_lost(uint64_t read_format, const uint64_t *values, size_t n_words, uint64_t *lost) {
        size_t pos;

        if (!values || !lost)
                return -EINVAL;
        if (read_format & (PERF_FORMAT_GROUP | ~DP_PERF_FORMAT_KNOWN))
                return -EINVAL;
        if (!(read_format & PERF_FORMAT_LOST))
                return -ENODATA;

        /* value, [time_enabled], [time_running], [id], lost */
        pos = 1 + !!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) +
              !!(read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) + !!(read_format & PERF_FORMAT_ID);
        if (n_words <= pos)
                return -EBADMSG;
        *lost = values[pos];
        return 0;
}

int dp_perf_read_time_enabled(uint64_t read_format, const uint64_t *values, size_t n_words, uint64_t *time_enabled) {
        if (!values || !time_enabled)
                return -EINVAL;
        if (read_format & (PERF_FORMAT_GROUP | ~DP_PERF_FORMAT_KNOWN))
                return -EINVAL;
        if (!(read_format & PERF_FORMAT_TOTAL_TIME_ENABLED))
                return -ENODATA;
        /* value, time_enabled, ... */
        if (n_words < 2)
                return -EBADMSG;
        *time_enabled = values[1];
        return 0;
}
