/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * ARM SPE (Statistical Profiling Extension) decoding, in three layers:
 *
 *   packets  - the byte format of the profiling buffer (the AUX area of an
 *              arm_spe_N event): one header byte (or two, extended), then a
 *              little-endian payload of 1 << ((hdr >> 4) & 3) bytes;
 *   records  - the packets of one sampled operation, up to END or TIMESTAMP;
 *   samples  - struct dp_sample from a record plus what the caller knows
 *              about the CPU (current task, time).
 *
 * Everything works on caller memory: no allocation, no global state, so the
 * reader calls it per AUX segment and fuzzers feed it arbitrary bytes.  A byte
 * that starts no packet is skipped and counted, and decoding resumes at the
 * next byte, as the kernel's perf tool does.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sample.h"
#include "task-timeline.h"

enum dp_spe_packet_type {
        DP_SPE_BAD,             /* a byte that starts no packet, or a packet cut off by the end of the data */
        DP_SPE_PAD,
        DP_SPE_END,
        DP_SPE_TIMESTAMP,
        DP_SPE_ADDRESS,
        DP_SPE_COUNTER,
        DP_SPE_CONTEXT,
        DP_SPE_OP_TYPE,
        DP_SPE_EVENTS,
        DP_SPE_DATA_SOURCE,
        _DP_SPE_PACKET_TYPE_MAX,
};

/* ADDRESS packet index. */
enum dp_spe_addr_index {
        DP_SPE_ADDR_PC = 0,
        DP_SPE_ADDR_BRANCH_TARGET = 1,
        DP_SPE_ADDR_DATA_VA = 2,
        DP_SPE_ADDR_DATA_PA = 3,
        DP_SPE_ADDR_PREV_BRANCH = 4,
};

/* COUNTER packet index. */
enum dp_spe_counter_index {
        DP_SPE_COUNTER_TOTAL = 0,       /* total latency, issue to completion */
        DP_SPE_COUNTER_ISSUE = 1,       /* dispatch to issue */
        DP_SPE_COUNTER_XLAT = 2,        /* address translation */
};

/* OP-TYPE packet class (header bits 1:0). */
enum dp_spe_op_class {
        DP_SPE_OP_OTHER = 0,
        DP_SPE_OP_LDST = 1,             /* load, store or atomic */
        DP_SPE_OP_BRANCH = 2,           /* branch or exception return */
};

/* LD/ST subclass (payload bits 7:1). */
enum dp_spe_ldst_subclass {
        DP_SPE_LDST_GP_REG,             /* general-purpose registers */
        DP_SPE_LDST_SIMD_FP,
        DP_SPE_LDST_EXTENDED,           /* atomic, exclusive or acquire/release */
        DP_SPE_LDST_SVE,
        DP_SPE_LDST_UNSPEC_REG,
        DP_SPE_LDST_NV_SYSREG,
        DP_SPE_LDST_MTE_TAG,
        DP_SPE_LDST_MEMCPY,
        DP_SPE_LDST_MEMSET,
        DP_SPE_LDST_OTHER,              /* an encoding we do not name */
};

/* EVENTS payload bits. */
enum dp_spe_event {
        DP_SPE_EV_EXCEPTION = 1u << 0,
        DP_SPE_EV_RETIRED = 1u << 1,
        DP_SPE_EV_L1D_ACCESS = 1u << 2,
        DP_SPE_EV_L1D_REFILL = 1u << 3,
        DP_SPE_EV_TLB_ACCESS = 1u << 4,
        DP_SPE_EV_TLB_WALK = 1u << 5,
        DP_SPE_EV_NOT_TAKEN = 1u << 6,
        DP_SPE_EV_MISPREDICTED = 1u << 7,
        DP_SPE_EV_LLC_ACCESS = 1u << 8,
        DP_SPE_EV_LLC_MISS = 1u << 9,
        DP_SPE_EV_REMOTE_ACCESS = 1u << 10,
        DP_SPE_EV_ALIGNMENT = 1u << 11,
        DP_SPE_EV_SVE_PARTIAL_PRED = 1u << 17,
        DP_SPE_EV_SVE_EMPTY_PRED = 1u << 18,
};

/* One packet, as found in the buffer. */
struct dp_spe_packet {
        enum dp_spe_packet_type type;
        uint8_t index;          /* ADDRESS/COUNTER: 0-31; OP-TYPE: class; CONTEXT: 0 EL1, 1 EL2 */
        bool extended;          /* a two-byte header */
        uint8_t header;         /* the header byte that names the packet (byte 1 when extended) */
        uint32_t size;          /* bytes taken, header(s) included; always >= 1 */
        uint64_t payload;       /* little-endian payload, zero-extended; BAD: the skipped byte */
};

/* Longest description dp_spe_packet_describe() writes, NUL included. */
#define DP_SPE_DESC_MAX 256

/* Decodes the packet at @buf.  @stream_offset is the position of buf[0] in
 * the profiling buffer (alignment pads end on a multiple of their alignment
 * there).  Returns 0 and fills @out, or -EBADMSG when buf[0] starts no packet,
 * -ENODATA when the packet runs past @len, -EINVAL when @len is 0; on error
 * @out describes the one byte to skip (DP_SPE_BAD, size 1). */
int dp_spe_packet_decode(const uint8_t *buf, size_t len, uint64_t stream_offset, struct dp_spe_packet *out);

/* A printable description ("ADDRESS VA 0x...", "COUNTER TOTAL latency 11",
 * "OP-TYPE LD/ST: load, atomic, acquire/release", ...), the format of
 * testdata/spe-vectors.txt.  0, or -ENOBUFS when it had to be cut short. */
int dp_spe_packet_describe(const struct dp_spe_packet *p, char *buf, size_t size);

const char *dp_spe_packet_type_name(enum dp_spe_packet_type type);

/* The fields of an ADDRESS packet's payload. */
struct dp_spe_address {
        uint64_t addr;          /* bits 55:0 */
        uint8_t el;             /* PC and branch targets: exception level, bits 62:61 */
        bool ns;                /* PC, branch targets, PA: non-secure, bit 63 */
        uint8_t tag;            /* VA: top-byte tag, bits 63:56 */
        bool ch;                /* PA: checked, bit 62 */
        uint8_t pat;            /* PA: physical address tag, bits 59:56 */
};

void dp_spe_address_fields(const struct dp_spe_packet *p, struct dp_spe_address *out);

/* A data VA payload as a canonical address: the tag dropped and, as the
 * kernel's decoder does, the top byte filled with ones when bits 55:52 are
 * all set (a kernel address). */
uint64_t dp_spe_va_canonical(uint64_t payload);

/* The fields of an OP-TYPE packet. */
struct dp_spe_op {
        enum dp_spe_op_class cls;
        /* DP_SPE_OP_LDST */
        bool store;
        enum dp_spe_ldst_subclass subclass;
        bool atomic, exclusive, acquire_release;        /* subclass EXTENDED */
        bool sve_predicated, sve_gather_scatter;        /* subclass SVE */
        uint16_t sve_evl;                               /* SVE (LD/ST and other): vector length, bits */
        /* DP_SPE_OP_BRANCH: conditional; DP_SPE_OP_OTHER: conditional select */
        bool conditional;
        bool indirect;                                  /* DP_SPE_OP_BRANCH */
        bool sve_other, sve_fp;                         /* DP_SPE_OP_OTHER */
        bool unknown_class;                             /* class 3 */
};

void dp_spe_op_fields(const struct dp_spe_packet *p, struct dp_spe_op *out);

/* Packet iterator over one contiguous stretch of a profiling buffer. */
struct dp_spe_iter {
        const uint8_t *buf;
        size_t len;
        size_t pos;                     /* offset of the next packet */
        uint64_t stream_offset;         /* buffer position of buf[0] */
        uint64_t bad_bytes;             /* bytes skipped to resynchronise */
        uint64_t incomplete_records;    /* packets at the end that no END/TS closed */
};

void dp_spe_iter_init(struct dp_spe_iter *it, const void *buf, size_t len, uint64_t stream_offset);

/* The next packet, or false at the end.  A byte that starts no packet comes
 * back as DP_SPE_BAD of size 1 and is counted in bad_bytes; every call that
 * returns true advances by at least one byte. */
bool dp_spe_iter_next(struct dp_spe_iter *it, struct dp_spe_packet *out);

/* Which fields of a record its packets filled. */
enum dp_spe_record_have {
        DP_SPE_HAVE_PC = 1u << 0,
        DP_SPE_HAVE_BRANCH_TARGET = 1u << 1,
        DP_SPE_HAVE_DATA_VA = 1u << 2,
        DP_SPE_HAVE_DATA_PA = 1u << 3,
        DP_SPE_HAVE_PREV_BRANCH = 1u << 4,
        DP_SPE_HAVE_TIMESTAMP = 1u << 5,
        DP_SPE_HAVE_CONTEXT = 1u << 6,
        DP_SPE_HAVE_OP_TYPE = 1u << 7,
        DP_SPE_HAVE_EVENTS = 1u << 8,
        DP_SPE_HAVE_DATA_SOURCE = 1u << 9,
        DP_SPE_HAVE_LAT_TOTAL = 1u << 10,
        DP_SPE_HAVE_LAT_ISSUE = 1u << 11,
        DP_SPE_HAVE_LAT_XLAT = 1u << 12,
};

/* One sampled operation: the packets from the first non-PAD packet up to and
 * including END or TIMESTAMP.  A later packet of the same kind wins. */
struct dp_spe_record {
        uint32_t have;                  /* enum dp_spe_record_have */
        uint32_t bad_bytes;             /* unparsable bytes inside the record: damaged */
        size_t offset, size;            /* where in the iterator's buffer */
        uint64_t pc, branch_target, prev_branch; /* bits 55:0 */
        uint8_t pc_el;
        bool pc_ns;
        uint64_t va_payload;            /* raw, tag included; see dp_spe_va_canonical() */
        uint64_t pa;                    /* bits 55:0 */
        bool pa_ns;
        uint64_t timestamp;             /* generic-timer ticks */
        uint32_t context;               /* CONTEXTIDR: the thread id on Linux */
        uint8_t context_index;
        uint8_t op_header;              /* OP-TYPE header byte (class in bits 1:0) and payload */
        uint8_t op_payload;
        uint32_t events;                /* enum dp_spe_event */
        uint16_t data_source;
        uint16_t lat_total, lat_issue, lat_xlat;
};

/* The next complete record, or false when no further END/TS closes one (the
 * trailing packets are then counted in incomplete_records).  PAD and bad bytes
 * between records are skipped; bad bytes inside a record mark it damaged. */
bool dp_spe_next_record(struct dp_spe_iter *it, struct dp_spe_record *rec);

/* Generic-timer ticks to nanoseconds, with the perf_event_mmap_page fields
 * (valid when cap_user_time_zero), plus @offset_ns from the perf clock to the
 * clock the samples are filed under.  With cap_user_time_short (arm64) the
 * counter behind time_zero is narrower than the ticks: only its low bits
 * (time_mask) count, relative to time_cycles. */
struct dp_spe_clock {
        uint16_t time_shift;
        uint32_t time_mult;
        uint64_t time_zero;
        int64_t offset_ns;
        bool cap_user_time_short;
        uint64_t time_cycles;
        uint64_t time_mask;
};

uint64_t dp_spe_clock_to_ns(const struct dp_spe_clock *clock, uint64_t ticks);

struct perf_event_mmap_page;

/* Reads time_shift, time_mult and time_zero from an event's control page,
 * under its seqlock (they change, e.g. across suspend).  -EOPNOTSUPP when the
 * kernel does not set cap_user_time_zero.  offset_ns is set to 0: the ticks
 * then convert to the perf clock (local_clock), not to CLOCK_MONOTONIC. */
int dp_spe_clock_from_mmap_page(const struct perf_event_mmap_page *meta, struct dp_spe_clock *out);

/* What the caller knows of the CPU the buffer belongs to. */
struct dp_spe_context {
        uint32_t pid, tid;              /* the task current on the CPU; 0 = unknown */
        uint16_t cpu;
        uint64_t time;                  /* time for records without a convertible TS (e.g. the
                                         * PERF_RECORD_AUX's own), in the samples' clock */
        const struct dp_spe_clock *clock; /* NULL: timestamps are not converted, @time is used */
        /* Optional: the CPU's context switches, in the clock @clock converts
         * to.  A record with a converted TS is then filed under the task that
         * ran at that time, and a CONTEXT thread under the process it names. */
        const struct dp_task_timeline *tasks;
        /* Optional: threads' processes, for CONTEXT threads @tasks does not know. */
        const struct dp_thread_map *threads;
        /* MIDR_EL1 of the CPU (its low 32 bits, which perf compares), for the
         * data-source encoding; 0 = unknown, read as a CPU perf does not list. */
        uint32_t midr;
};

/* Whether perf reads the DATA-SOURCE packet of CPU @midr with the common
 * (Neoverse) encoding: Neoverse N1, N2 and V1, any variant and revision, as
 * linux-perf 6.1 lists them.  Elsewhere the level comes from the events. */
bool dp_spe_midr_common_ds(uint32_t midr);

/* The MIDR_EL1 of /sys/devices/system/cpu/cpuN/regs/identification/midr_el1
 * ("0x00000000410fd0c0\n"): its low 32 bits.  -EINVAL when malformed or
 * wider than 64 bits; -ERANGE when bits 63:32 (RES0) are set. */
int dp_midr_parse(const char *text, uint32_t *ret);

/* The union perf_mem_data_src perf 6.1 synthesizes for @rec on CPU @midr,
 * bit for bit (arm_spe__synth_data_source()): 0 for an operation that is no
 * load or store. */
uint64_t dp_spe_record_data_src(const struct dp_spe_record *rec, uint32_t midr);

/* Our level for @rec: the DATA-SOURCE packet of a load on a CPU perf lists
 * (dp_mem_level_from_spe()); otherwise the events (last-level cache access
 * without miss: l3, L1D access without refill: l1, a miss: unknown).  Unlike
 * perf, a listed CPU's load without the packet is not taken for an L1D hit;
 * doc/mem-levels.rst. */
enum dp_mem_level dp_spe_record_level(const struct dp_spe_record *rec, uint32_t midr);

/* Turns a record into @out.  vaddr from the data VA (canonical), paddr from
 * the PA (DP_SAMPLE_PHYS_VALID), LOAD/STORE from OP-TYPE, latency from the
 * total COUNTER (DP_SAMPLE_LATENCY_VALID when not 0), data_src and level from
 * dp_spe_record_data_src() and dp_spe_record_level() with @ctx->midr, time from TS through @ctx->clock, tid from CONTEXT (its pid then
 * comes from @ctx when the current task matches, else from @ctx->tasks or
 * @ctx->threads, else it is the tid), else pid/tid from @ctx->tasks at the converted time, else
 * from @ctx (0 when nobody knows: the caller files those as unattributed).  Returns 0; -ENODATA for a record of a branch or other
 * operation without a data address (no sample); -EBADMSG for a damaged record
 * or a load/store without a data address. */
int dp_spe_record_to_sample(const struct dp_spe_record *rec, const struct dp_spe_context *ctx,
                            struct dp_sample *out);
