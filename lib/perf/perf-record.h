/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Decoding of perf ring records.  The layout of a PERF_RECORD_SAMPLE depends
 * on the event's attr (sample_type, read_format, regs masks, branch flags), so
 * it is computed once per event into a struct dp_perf_layout and every record
 * is parsed against that.  Nothing here allocates; pointers in the results
 * point into the record.
 */

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* branch_sample_type bit (Linux 6.8): a u64 counter word per branch entry follows
 * the entries.  Our own name, since the installed header may lack the enum. */
#define DP_PERF_SAMPLE_BRANCH_COUNTERS (1U << 19)

struct dp_perf_layout {
        uint64_t sample_type;
        uint64_t read_format;
        uint64_t sample_regs_user;
        uint64_t sample_regs_intr;
        uint64_t branch_sample_type;
        bool sample_id_all;
        /* Byte offsets of the fixed-size leading fields of a sample body
         * (after the 8-byte header), or -1 when absent. */
        int16_t off_identifier, off_ip, off_tid, off_time, off_addr, off_id,
                off_stream_id, off_cpu, off_period;
        uint16_t fixed_size;    /* bytes of those leading fields */
        uint16_t id_trailer_size; /* bytes of the sample_id trailer of non-sample records */
        uint16_t read_size;     /* bytes of the READ field (fixed by read_format); with
                                 * PERF_FORMAT_GROUP only nr/enabled/running, each of
                                 * the nr members adds 8 * (1 + ID + LOST) at runtime */
        /* Without fields of variable length (READ, CALLCHAIN, RAW, BRANCH_STACK,
         * REGS_USER, STACK_USER, REGS_INTR, AUX) every sample has this size,
         * header included, and the trailing fields below sit at fixed byte
         * offsets of the body too (-1 when absent); 0 with variable fields,
         * and then the offsets are all -1. */
        uint16_t sample_size;
        int16_t off_weight, off_data_src, off_transaction, off_phys_addr, off_cgroup,
                off_data_page_size, off_code_page_size;
};

/* Fills @layout from @attr; -EINVAL when the attr asks for a layout we cannot parse
 * (unknown sample_type, read_format or, with BRANCH_STACK, branch_sample_type bits;
 * WEIGHT together with WEIGHT_STRUCT).  Fields beyond attr->size read as zero, and
 * size 0 means PERF_ATTR_SIZE_VER0, as in the kernel. */
int dp_perf_layout_init(struct dp_perf_layout *layout, const struct perf_event_attr *attr);

/* Every field a PERF_RECORD_SAMPLE may carry; @present repeats the sample_type bits. */
struct dp_perf_sample {
        uint64_t present;
        uint64_t identifier;
        uint64_t ip;
        uint32_t pid, tid;
        uint64_t time;
        uint64_t addr;
        uint64_t id;
        uint64_t stream_id;
        uint32_t cpu;
        uint64_t period;
        const uint64_t *read;           /* read_format-shaped values */
        uint32_t read_words;
        const uint64_t *callchain;
        uint64_t callchain_nr;
        const void *raw;
        uint32_t raw_size;
        const void *branch_entries;     /* struct perf_branch_entry[branch_nr] */
        uint64_t branch_nr;
        uint64_t branch_hw_idx;
        uint64_t regs_user_abi;
        const uint64_t *regs_user;      /* popcount(sample_regs_user) words, NULL when abi is 0 */
        const void *stack_user;
        uint64_t stack_user_size;
        uint64_t stack_user_dyn_size;
        uint64_t weight;                /* WEIGHT, or WEIGHT_STRUCT as one u64 */
        uint64_t data_src;
        uint64_t transaction;
        uint64_t regs_intr_abi;
        const uint64_t *regs_intr;
        uint64_t phys_addr;
        uint64_t cgroup;
        uint64_t data_page_size;
        uint64_t code_page_size;
        const void *aux;
        uint64_t aux_size;
        const uint64_t *branch_counters; /* branch_nr words with DP_PERF_SAMPLE_BRANCH_COUNTERS */
};

/* Parses a whole PERF_RECORD_SAMPLE (@record starts at its perf_event_header,
 * @size is header.size).  Returns 0, or -EBADMSG when the record is shorter or
 * longer than its fields say (or breaks the kernel's 8-byte alignment rules),
 * -EINVAL when @record is not 8-byte aligned.  Absent fields read as zero, and
 * pointers of absent or empty arrays as NULL.
 * With BRANCH_HW_INDEX and nr = 0, hw_idx may be missing (the kernel omits it
 * when it had no branch stack): the form with hw_idx is tried first. */
int dp_perf_parse_sample(const struct dp_perf_layout *layout, const void *record, size_t size,
                         struct dp_perf_sample *out);

/* The sample_id trailer of a non-sample record (sample_id_all). */
struct dp_perf_sample_id {
        uint64_t present;       /* subset of TID|TIME|ID|STREAM_ID|CPU|IDENTIFIER */
        uint32_t pid, tid;
        uint64_t time;
        uint64_t id;
        uint64_t stream_id;
        uint32_t cpu;
        uint64_t identifier;
};

/* Parses the trailer of a non-sample record; 0 with present=0 when the layout has
 * no sample_id_all, -EBADMSG when the record is too short to hold it. */
int dp_perf_parse_sample_id(const struct dp_perf_layout *layout, const void *record, size_t size,
                            struct dp_perf_sample_id *out);

/* Bodies of the loss and throttle records, validated against @size. */
int dp_perf_parse_lost(const void *record, size_t size, uint64_t *id, uint64_t *lost);
int dp_perf_parse_lost_samples(const void *record, size_t size, uint64_t *lost);
int dp_perf_parse_throttle(const void *record, size_t size, uint64_t *time, uint64_t *id);

/* The value read(2) returns for a single (non-group) event with @read_format;
 * gives the lost count when PERF_FORMAT_LOST is set, -ENODATA otherwise. */
int dp_perf_read_value_lost(uint64_t read_format, const uint64_t *values, size_t n_words, uint64_t *lost);
/* Likewise its time_enabled (ns) when PERF_FORMAT_TOTAL_TIME_ENABLED is set,
 * -ENODATA otherwise. */
int dp_perf_read_time_enabled(uint64_t read_format, const uint64_t *values, size_t n_words, uint64_t *time_enabled);
