/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ARM SPE packets, records and samples.  The packet layout follows the Arm
 * ARM ("Statistical Profiling Extension" packet formats) as the kernel's
 * drivers/perf/arm_spe_pmu.c and tools/perf/util/arm-spe-decoder/ use it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <linux/perf_event.h>

#include "decode-spe.h"
#include "macro.h"
#include "mem-level.h"

/* Header byte 0 patterns. */
#define HDR_PAD 0x00
#define HDR_END 0x01
#define HDR_TIMESTAMP 0x71
#define HDR_MASK_EV_DS 0xcf             /* events and data source: size bits 5:4 vary */
#define HDR_EVENTS 0x42
#define HDR_DATA_SOURCE 0x43
#define HDR_MASK_CTX_OP 0xfc            /* context and op type: index/class in bits 1:0 */
#define HDR_CONTEXT 0x64
#define HDR_OP_TYPE 0x48
#define HDR_EXTENDED 0x20               /* same mask: the index's high bits in 1:0 */
#define HDR_MASK_ADDR_CNT 0xf8          /* address and counter: index in bits 2:0 */
#define HDR_ADDRESS 0xb0
#define HDR_COUNTER 0x98
#define HDR1_ALIGNMENT 0x00             /* extended header byte 1 of an alignment pad */

#define ADDR_BITS_MASK ((UINT64_C(1) << 56) - 1)

static unsigned payload_size(uint8_t hdr) {
        return 1u << ((hdr >> 4) & 3);
}

static uint64_t load_le(const uint8_t *p, unsigned n) {
        uint64_t v = 0;

        /* Byte by byte: the buffer is little-endian whatever the host is, and unaligned. */
        for (unsigned i = 0; i < n; i++)
                v |= (uint64_t) p[i] << (8 * i);
        return v;
}

static int bad_byte(const uint8_t *buf, struct dp_spe_packet *out, int error) {
        *out = (struct dp_spe_packet) {
                .type = DP_SPE_BAD,
                .header = buf[0],
                .size = 1,
                .payload = buf[0],
        };
        return error;
}

/* A packet of @type whose header(s) take @header_bytes and whose size bits are in @hdr. */
static int with_payload(const uint8_t *buf, size_t len, unsigned header_bytes, uint8_t hdr,
                        enum dp_spe_packet_type type, uint8_t index, struct dp_spe_packet *out) {
        unsigned n = payload_size(hdr);

        if (len < header_bytes + n)
                return bad_byte(buf, out, -ENODATA);
        *out = (struct dp_spe_packet) {
                .type = type,
                .index = index,
                .extended = header_bytes == 2,
                .header = hdr,
                .size = header_bytes + n,
                .payload = load_le(buf + header_bytes, n),
        };
        return 0;
}

/* The extended alignment pad runs to the next multiple of 2 << (h0 & 3) at or
 * after the end of its own two header bytes. */
static int alignment_pad(const uint8_t *buf, size_t len, uint64_t stream_offset, struct dp_spe_packet *out) {
        uint64_t alignment = UINT64_C(2) << (buf[0] & 3);
        uint64_t end = (stream_offset + 2 + alignment - 1) & ~(alignment - 1);
        uint64_t size = end - stream_offset;

        if (size > len)
                return bad_byte(buf, out, -ENODATA);
        *out = (struct dp_spe_packet) {
                .type = DP_SPE_PAD,
                .extended = true,
                .header = buf[1],
                .size = (uint32_t) size,
                .payload = alignment,
        };
        return 0;
}

int dp_spe_packet_decode(const uint8_t *buf, size_t len, uint64_t stream_offset, struct dp_spe_packet *out) {
        uint8_t h0, h1;

        if (!buf || len == 0) {
                *out = (struct dp_spe_packet) { .type = DP_SPE_BAD, .size = 1 };
                return -EINVAL;
        }
        h0 = buf[0];
        if (h0 == HDR_PAD || h0 == HDR_END) {
                *out = (struct dp_spe_packet) {
                        .type = h0 == HDR_PAD ? DP_SPE_PAD : DP_SPE_END,
                        .header = h0,
                        .size = 1,
                };
                return 0;
        }
        if (h0 == HDR_TIMESTAMP)
                return with_payload(buf, len, 1, h0, DP_SPE_TIMESTAMP, 0, out);
        if ((h0 & HDR_MASK_EV_DS) == HDR_EVENTS)
                return with_payload(buf, len, 1, h0, DP_SPE_EVENTS, 0, out);
        if ((h0 & HDR_MASK_EV_DS) == HDR_DATA_SOURCE)
                return with_payload(buf, len, 1, h0, DP_SPE_DATA_SOURCE, 0, out);
        if ((h0 & HDR_MASK_CTX_OP) == HDR_CONTEXT)
                return with_payload(buf, len, 1, h0, DP_SPE_CONTEXT, h0 & 3, out);
        if ((h0 & HDR_MASK_CTX_OP) == HDR_OP_TYPE)
                return with_payload(buf, len, 1, h0, DP_SPE_OP_TYPE, h0 & 3, out);
        if ((h0 & HDR_MASK_ADDR_CNT) == HDR_ADDRESS)
                return with_payload(buf, len, 1, h0, DP_SPE_ADDRESS, h0 & 7, out);
        if ((h0 & HDR_MASK_ADDR_CNT) == HDR_COUNTER)
                return with_payload(buf, len, 1, h0, DP_SPE_COUNTER, h0 & 7, out);
        if ((h0 & HDR_MASK_CTX_OP) != HDR_EXTENDED)
                return bad_byte(buf, out, -EBADMSG);

        /* Extended header: byte 1 is an address or counter header whose index
         * gains two high bits from byte 0, or an alignment pad. */
        if (len < 2)
                return bad_byte(buf, out, -ENODATA);
        h1 = buf[1];
        if (h1 == HDR1_ALIGNMENT)
                return alignment_pad(buf, len, stream_offset, out);
        if ((h1 & HDR_MASK_ADDR_CNT) == HDR_ADDRESS)
                return with_payload(buf, len, 2, h1, DP_SPE_ADDRESS, (uint8_t) ((h0 & 3) << 3 | (h1 & 7)), out);
        if ((h1 & HDR_MASK_ADDR_CNT) == HDR_COUNTER)
                return with_payload(buf, len, 2, h1, DP_SPE_COUNTER, (uint8_t) ((h0 & 3) << 3 | (h1 & 7)), out);
        return bad_byte(buf, out, -EBADMSG);
}

const char *dp_spe_packet_type_name(enum dp_spe_packet_type type) {
        static const char *const names[_DP_SPE_PACKET_TYPE_MAX] = {
                [DP_SPE_BAD] = "BAD",
                [DP_SPE_PAD] = "PAD",
                [DP_SPE_END] = "END",
                [DP_SPE_TIMESTAMP] = "TIMESTAMP",
                [DP_SPE_ADDRESS] = "ADDRESS",
                [DP_SPE_COUNTER] = "COUNTER",
                [DP_SPE_CONTEXT] = "CONTEXT",
                [DP_SPE_OP_TYPE] = "OP-TYPE",
                [DP_SPE_EVENTS] = "EVENTS",
                [DP_SPE_DATA_SOURCE] = "DATA-SOURCE",
        };

        return (unsigned) type < _DP_SPE_PACKET_TYPE_MAX ? names[type] : "INVALID";
}

void dp_spe_address_fields(const struct dp_spe_packet *p, struct dp_spe_address *out) {
        uint64_t v = p->payload;

        *out = (struct dp_spe_address) {
                .addr = v & ADDR_BITS_MASK,
                .el = (uint8_t) ((v >> 61) & 3),
                .ns = (v >> 63) & 1,
                .tag = (uint8_t) (v >> 56),
                .ch = (v >> 62) & 1,
                .pat = (uint8_t) ((v >> 56) & 0xf),
        };
}

uint64_t dp_spe_va_canonical(uint64_t payload) {
        uint64_t addr = payload & ADDR_BITS_MASK;

        /* Bits 63:56 are the top-byte tag, not address bits; bits 55:52 all set
         * put the address in the kernel's upper half (arm64 memory layout). */
        if (((addr >> 52) & 0xf) == 0xf)
                addr |= UINT64_C(0xff) << 56;
        return addr;
}

void dp_spe_op_fields(const struct dp_spe_packet *p, struct dp_spe_op *out) {
        uint8_t v = (uint8_t) p->payload;

        *out = (struct dp_spe_op) { .cls = (enum dp_spe_op_class) (p->index & 3) };
        switch (out->cls) {
        case DP_SPE_OP_LDST:
                out->store = v & 0x01;
                if ((v & 0xe2) == 0x02) {
                        out->subclass = DP_SPE_LDST_EXTENDED;
                        out->atomic = v & 0x04;
                        out->exclusive = v & 0x08;
                        out->acquire_release = v & 0x10;
                        break;
                }
                if ((v & 0x0a) == 0x08) {
                        out->subclass = DP_SPE_LDST_SVE;
                        out->sve_evl = (uint16_t) (32u << ((v >> 4) & 7));
                        out->sve_predicated = v & 0x04;
                        out->sve_gather_scatter = v & 0x80;
                        break;
                }
                switch (v & 0xfe) {
                case 0x00: out->subclass = DP_SPE_LDST_GP_REG; break;
                case 0x04: out->subclass = DP_SPE_LDST_SIMD_FP; break;
                case 0x10: out->subclass = DP_SPE_LDST_UNSPEC_REG; break;
                case 0x30: out->subclass = DP_SPE_LDST_NV_SYSREG; break;
                case 0x14: out->subclass = DP_SPE_LDST_MTE_TAG; break;
                case 0x20: out->subclass = DP_SPE_LDST_MEMCPY; break;
                case 0x24: out->subclass = DP_SPE_LDST_MEMSET; break;
                default: out->subclass = DP_SPE_LDST_OTHER; break;
                }
                break;
        case DP_SPE_OP_BRANCH:
                out->conditional = v & 0x01;
                out->indirect = (v & 0xfe) == 0x02;
                break;
        case DP_SPE_OP_OTHER:
                if ((v & 0x89) == 0x08) {
                        out->sve_other = true;
                        out->sve_evl = (uint16_t) (32u << ((v >> 4) & 7));
                        out->sve_predicated = v & 0x04;
                        out->sve_fp = v & 0x02;
                } else
                        out->conditional = v & 0x01;
                break;
        default:
                out->unknown_class = true;
                break;
        }
}

/* Appends to a fixed buffer, remembering whether anything was cut. */
struct text {
        char *buf;
        size_t size, used;
        bool cut;
};

static void put(struct text *t, const char *format, ...) __attribute__((format(printf, 2, 3)));
static void put(struct text *t, const char *format, ...) {
        va_list ap;
        int n;

        if (t->cut)
                return;
        va_start(ap, format);
        n = vsnprintf(t->buf + t->used, t->size - t->used, format, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= t->size - t->used) {
                t->cut = true;
                t->used = t->size - 1;
                return;
        }
        t->used += (size_t) n;
}

/* A comma-separated list after a first item. */
static void put_item(struct text *t, bool *first, const char *item) {
        put(t, "%s%s", *first ? "" : ", ", item);
        *first = false;
}

static void describe_events(struct text *t, uint64_t v) {
        static const struct {
                uint64_t bit;
                const char *name;
        } names[] = {
                { DP_SPE_EV_EXCEPTION, "exception" },
                { DP_SPE_EV_RETIRED, "retired" },
                { DP_SPE_EV_L1D_ACCESS, "L1D-access" },
                { DP_SPE_EV_L1D_REFILL, "L1D-refill" },
                { DP_SPE_EV_TLB_ACCESS, "TLB-access" },
                { DP_SPE_EV_TLB_WALK, "TLB-walk" },
                { DP_SPE_EV_NOT_TAKEN, "not-taken" },
                { DP_SPE_EV_MISPREDICTED, "mispredicted" },
                { DP_SPE_EV_LLC_ACCESS, "LLC-access" },
                { DP_SPE_EV_LLC_MISS, "LLC-miss" },
                { DP_SPE_EV_REMOTE_ACCESS, "remote-access" },
                { DP_SPE_EV_ALIGNMENT, "alignment" },
                { DP_SPE_EV_SVE_PARTIAL_PRED, "SVE-partial-pred" },
                { DP_SPE_EV_SVE_EMPTY_PRED, "SVE-empty-pred" },
        };
        bool first = true;

        put(t, "EVENTS ");
        for (size_t i = 0; i < DP_ARRAY_SIZE(names); i++)
                if (v & names[i].bit) {
                        put_item(t, &first, names[i].name);
                        v &= ~names[i].bit;
                }
        if (v) {
                char other[24];

                snprintf(other, sizeof(other), "0x%" PRIx64, v);
                put_item(t, &first, other);
        }
        if (first)
                put(t, "none");
}

static void describe_op(struct text *t, const struct dp_spe_packet *p) {
        static const char *const subclass_names[] = {
                [DP_SPE_LDST_GP_REG] = "GP-REG",
                [DP_SPE_LDST_SIMD_FP] = "SIMD-FP",
                [DP_SPE_LDST_UNSPEC_REG] = "UNSPEC-REG",
                [DP_SPE_LDST_NV_SYSREG] = "NV-SYSREG",
                [DP_SPE_LDST_MTE_TAG] = "MTE-TAG",
                [DP_SPE_LDST_MEMCPY] = "MEMCPY",
                [DP_SPE_LDST_MEMSET] = "MEMSET",
        };
        struct dp_spe_op op;
        bool first = true;
        char evl[24];

        dp_spe_op_fields(p, &op);
        snprintf(evl, sizeof(evl), "EVLEN %u", op.sve_evl);
        switch (op.cls) {
        case DP_SPE_OP_LDST:
                put(t, "OP-TYPE LD/ST: ");
                put_item(t, &first, op.store ? "store" : "load");
                if (op.subclass == DP_SPE_LDST_EXTENDED) {
                        if (op.atomic)
                                put_item(t, &first, "atomic");
                        if (op.exclusive)
                                put_item(t, &first, "exclusive");
                        if (op.acquire_release)
                                put_item(t, &first, "acquire/release");
                        if (!op.atomic && !op.exclusive && !op.acquire_release)
                                put_item(t, &first, "extended");
                } else if (op.subclass == DP_SPE_LDST_SVE) {
                        put_item(t, &first, "SVE");
                        put_item(t, &first, evl);
                        if (op.sve_predicated)
                                put_item(t, &first, "predicated");
                        if (op.sve_gather_scatter)
                                put_item(t, &first, "gather/scatter");
                } else if (op.subclass == DP_SPE_LDST_OTHER)
                        put(t, ", subclass 0x%02x", (unsigned) (p->payload & 0xfe));
                else
                        put_item(t, &first, subclass_names[op.subclass]);
                break;
        case DP_SPE_OP_BRANCH:
                put(t, "OP-TYPE BRANCH: ");
                if (op.conditional)
                        put_item(t, &first, "conditional");
                if (op.indirect)
                        put_item(t, &first, "indirect");
                else if ((p->payload & 0xfe) == 0)
                        put_item(t, &first, "direct");
                else
                        put(t, "%ssubclass 0x%02x", first ? "" : ", ", (unsigned) (p->payload & 0xfe));
                break;
        case DP_SPE_OP_OTHER:
                put(t, "OP-TYPE OTHER: ");
                if (op.sve_other) {
                        put_item(t, &first, "SVE");
                        put_item(t, &first, evl);
                        if (op.sve_fp)
                                put_item(t, &first, "FP");
                        if (op.sve_predicated)
                                put_item(t, &first, "predicated");
                } else
                        put_item(t, &first, op.conditional ? "conditional-select" : "other");
                break;
        default:
                put(t, "OP-TYPE class %u 0x%02x", p->index & 3u, (unsigned) (p->payload & 0xff));
                break;
        }
}

static void describe_address(struct text *t, const struct dp_spe_packet *p) {
        static const char *const pc_like[] = {
                [DP_SPE_ADDR_PC] = "PC",
                [DP_SPE_ADDR_BRANCH_TARGET] = "TGT",
                [DP_SPE_ADDR_PREV_BRANCH] = "PBT",
        };
        struct dp_spe_address a;

        dp_spe_address_fields(p, &a);
        switch (p->index) {
        case DP_SPE_ADDR_PC:
        case DP_SPE_ADDR_BRANCH_TARGET:
        case DP_SPE_ADDR_PREV_BRANCH:
                put(t, "ADDRESS %s 0x%" PRIx64 " el=%u ns=%u", pc_like[p->index], a.addr, a.el, a.ns);
                break;
        case DP_SPE_ADDR_DATA_VA:
                put(t, "ADDRESS VA 0x%" PRIx64, a.addr);
                if (a.tag)
                        put(t, " tag=0x%02x", a.tag);
                break;
        case DP_SPE_ADDR_DATA_PA:
                put(t, "ADDRESS PA 0x%" PRIx64 " ns=%u ch=%u pat=%x", a.addr, a.ns, a.ch, a.pat);
                break;
        default:
                put(t, "ADDRESS #%u 0x%" PRIx64, p->index, p->payload);
                break;
        }
}

static const char *neoverse_source_name(uint64_t code) {
        switch (code) {
        case DP_SPE_DS_L1D: return "L1D";
        case DP_SPE_DS_L2: return "L2";
        case DP_SPE_DS_PEER_CORE: return "peer-core";
        case DP_SPE_DS_LOCAL_CLUSTER: return "local-cluster";
        case DP_SPE_DS_SYS_CACHE: return "system-cache";
        case DP_SPE_DS_PEER_CLUSTER: return "peer-cluster";
        case DP_SPE_DS_REMOTE: return "remote";
        case DP_SPE_DS_DRAM: return "DRAM";
        default: return NULL;
        }
}

int dp_spe_packet_describe(const struct dp_spe_packet *p, char *buf, size_t size) {
        static const char *const counter_names[] = {
                [DP_SPE_COUNTER_TOTAL] = "TOTAL",
                [DP_SPE_COUNTER_ISSUE] = "ISSUE",
                [DP_SPE_COUNTER_XLAT] = "XLAT",
        };
        struct text t = { .buf = buf, .size = size };
        const char *name;

        if (!buf || size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        switch (p->type) {
        case DP_SPE_BAD:
                put(&t, "BAD 0x%02x", (unsigned) (p->payload & 0xff));
                break;
        case DP_SPE_PAD:
                if (p->extended)
                        put(&t, "PAD alignment %" PRIu64, p->payload);
                else
                        put(&t, "PAD");
                break;
        case DP_SPE_END:
                put(&t, "END");
                break;
        case DP_SPE_TIMESTAMP:
                put(&t, "TIMESTAMP %" PRIu64, p->payload);
                break;
        case DP_SPE_ADDRESS:
                describe_address(&t, p);
                break;
        case DP_SPE_COUNTER:
                if (p->index < DP_ARRAY_SIZE(counter_names))
                        put(&t, "COUNTER %s latency %" PRIu64, counter_names[p->index], p->payload);
                else
                        put(&t, "COUNTER #%u latency %" PRIu64, p->index, p->payload);
                break;
        case DP_SPE_CONTEXT:
                if (p->index <= 1)
                        put(&t, "CONTEXT 0x%" PRIx64 " el=%u", p->payload, p->index + 1u);
                else
                        put(&t, "CONTEXT 0x%" PRIx64 " index=%u", p->payload, p->index);
                break;
        case DP_SPE_OP_TYPE:
                describe_op(&t, p);
                break;
        case DP_SPE_EVENTS:
                describe_events(&t, p->payload);
                break;
        case DP_SPE_DATA_SOURCE:
                name = neoverse_source_name(p->payload);
                put(&t, "DATA-SOURCE 0x%" PRIx64, p->payload);
                if (name)
                        put(&t, " (%s)", name);
                break;
        default:
                put(&t, "INVALID");
                break;
        }
        return t.cut ? -ENOBUFS : 0;
}

void dp_spe_iter_init(struct dp_spe_iter *it, const void *buf, size_t len, uint64_t stream_offset) {
        *it = (struct dp_spe_iter) {
                .buf = buf,
                .len = buf ? len : 0,
                .stream_offset = stream_offset,
        };
}

bool dp_spe_iter_next(struct dp_spe_iter *it, struct dp_spe_packet *out) {
        size_t left;

        if (it->pos >= it->len)
                return false;
        left = it->len - it->pos;
        if (dp_spe_packet_decode(it->buf + it->pos, left, it->stream_offset + it->pos, out) < 0)
                it->bad_bytes++;
        /* Never past the end, never standing still. */
        it->pos += DP_MIN((size_t) DP_MAX(out->size, 1u), left);
        return true;
}

static void record_take(struct dp_spe_record *rec, const struct dp_spe_packet *p) {
        struct dp_spe_address a;

        switch (p->type) {
        case DP_SPE_ADDRESS:
                dp_spe_address_fields(p, &a);
                switch (p->index) {
                case DP_SPE_ADDR_PC:
                        rec->have |= DP_SPE_HAVE_PC;
                        rec->pc = a.addr;
                        rec->pc_el = a.el;
                        rec->pc_ns = a.ns;
                        break;
                case DP_SPE_ADDR_BRANCH_TARGET:
                        rec->have |= DP_SPE_HAVE_BRANCH_TARGET;
                        rec->branch_target = a.addr;
                        break;
                case DP_SPE_ADDR_DATA_VA:
                        rec->have |= DP_SPE_HAVE_DATA_VA;
                        rec->va_payload = p->payload;
                        break;
                case DP_SPE_ADDR_DATA_PA:
                        rec->have |= DP_SPE_HAVE_DATA_PA;
                        rec->pa = a.addr;
                        rec->pa_ns = a.ns;
                        break;
                case DP_SPE_ADDR_PREV_BRANCH:
                        rec->have |= DP_SPE_HAVE_PREV_BRANCH;
                        rec->prev_branch = a.addr;
                        break;
                default:
                        break;
                }
                break;
        case DP_SPE_COUNTER:
                switch (p->index) {
                case DP_SPE_COUNTER_TOTAL:
                        rec->have |= DP_SPE_HAVE_LAT_TOTAL;
                        rec->lat_total = (uint16_t) p->payload;
                        break;
                case DP_SPE_COUNTER_ISSUE:
                        rec->have |= DP_SPE_HAVE_LAT_ISSUE;
                        rec->lat_issue = (uint16_t) p->payload;
                        break;
                case DP_SPE_COUNTER_XLAT:
                        rec->have |= DP_SPE_HAVE_LAT_XLAT;
                        rec->lat_xlat = (uint16_t) p->payload;
                        break;
                default:
                        break;
                }
                break;
        case DP_SPE_CONTEXT:
                rec->have |= DP_SPE_HAVE_CONTEXT;
                rec->context = (uint32_t) p->payload;
                rec->context_index = p->index;
                break;
        case DP_SPE_OP_TYPE:
                rec->have |= DP_SPE_HAVE_OP_TYPE;
                rec->op_header = p->header;
                rec->op_payload = (uint8_t) p->payload;
                break;
        case DP_SPE_EVENTS:
                rec->have |= DP_SPE_HAVE_EVENTS;
                rec->events = (uint32_t) p->payload;
                break;
        case DP_SPE_DATA_SOURCE:
                rec->have |= DP_SPE_HAVE_DATA_SOURCE;
                rec->data_source = (uint16_t) p->payload;
                break;
        case DP_SPE_TIMESTAMP:
                rec->have |= DP_SPE_HAVE_TIMESTAMP;
                rec->timestamp = p->payload;
                break;
        default:
                break;
        }
}

bool dp_spe_next_record(struct dp_spe_iter *it, struct dp_spe_record *rec) {
        struct dp_spe_packet p;
        bool started = false;

        *rec = (struct dp_spe_record) {};
        for (;;) {
                size_t at = it->pos;

                if (!dp_spe_iter_next(it, &p)) {
                        if (started)
                                it->incomplete_records++;
                        return false;
                }
                if (p.type == DP_SPE_PAD)
                        continue;
                if (p.type == DP_SPE_BAD) {
                        /* Garbage between records is just skipped (and counted by the iterator). */
                        if (started)
                                rec->bad_bytes++;
                        continue;
                }
                if (p.type == DP_SPE_END && !started)
                        continue;       /* an END that closes nothing */
                if (!started) {
                        started = true;
                        rec->offset = at;
                }
                record_take(rec, &p);
                if (p.type == DP_SPE_END || p.type == DP_SPE_TIMESTAMP) {
                        rec->size = it->pos - rec->offset;
                        return true;
                }
        }
}

uint64_t dp_spe_clock_to_ns(const struct dp_spe_clock *clock, uint64_t ticks) {
        uint16_t shift = clock->time_shift < 64 ? clock->time_shift : 63;
        uint64_t quot, rem;

        if (clock->cap_user_time_short)
                ticks = clock->time_cycles + ((ticks - clock->time_cycles) & clock->time_mask);
        quot = ticks >> shift;
        rem = ticks & ((UINT64_C(1) << shift) - 1);

        /* Split as the perf ABI documents, so that ticks * mult cannot overflow. */
        return clock->time_zero + quot * clock->time_mult + ((rem * clock->time_mult) >> shift) +
                (uint64_t) clock->offset_ns;
}

int dp_spe_clock_from_mmap_page(const struct perf_event_mmap_page *meta, struct dp_spe_clock *out) {
        struct perf_event_mmap_page *page = (struct perf_event_mmap_page *) meta; /* atomics need non-const */
        uint32_t seq;

        if (!meta || !out)
                return -EINVAL;
        /* The kernel bumps lock before and after an update: retry until a read
         * saw the same value on both sides. */
        do {
                seq = __atomic_load_n(&page->lock, __ATOMIC_ACQUIRE);
                if (!page->cap_user_time_zero)
                        return -EOPNOTSUPP;
                *out = (struct dp_spe_clock) {
                        .time_shift = __atomic_load_n(&page->time_shift, __ATOMIC_RELAXED),
                        .time_mult = __atomic_load_n(&page->time_mult, __ATOMIC_RELAXED),
                        .time_zero = __atomic_load_n(&page->time_zero, __ATOMIC_RELAXED),
                        .cap_user_time_short = page->cap_user_time_short,
                        .time_cycles = __atomic_load_n(&page->time_cycles, __ATOMIC_RELAXED),
                        .time_mask = __atomic_load_n(&page->time_mask, __ATOMIC_RELAXED),
                };
                __atomic_thread_fence(__ATOMIC_ACQUIRE);
        } while (__atomic_load_n(&page->lock, __ATOMIC_RELAXED) != seq);
        return 0;
}

/* mem_lvl, mem_lvl_num and the snoop fields of a load served by Neoverse
 * DATA-SOURCE @code, as perf writes them (tools/perf/util/arm-spe.c,
 * arm_spe__synth_data_source_common()); reserved codes leave them 0. */
static void neoverse_level_bits(uint16_t code, struct dp_mem_data_src *s) {
        switch (code) {
        case DP_SPE_DS_L1D:
                s->lvl = PERF_MEM_LVL_L1 | PERF_MEM_LVL_HIT;
                s->lvl_num = PERF_MEM_LVLNUM_L1;
                s->snoop = PERF_MEM_SNOOP_NONE;
                break;
        case DP_SPE_DS_L2:
        case DP_SPE_DS_PEER_CORE:
                s->lvl = PERF_MEM_LVL_L2 | PERF_MEM_LVL_HIT;
                s->lvl_num = PERF_MEM_LVLNUM_L2;
                if (code == DP_SPE_DS_L2)
                        s->snoop = PERF_MEM_SNOOP_NONE;
                else
                        s->snoopx = PERF_MEM_SNOOPX_PEER;
                break;
        case DP_SPE_DS_LOCAL_CLUSTER:
        case DP_SPE_DS_PEER_CLUSTER:
        case DP_SPE_DS_SYS_CACHE:
                s->lvl = PERF_MEM_LVL_L3 | PERF_MEM_LVL_HIT;
                s->lvl_num = PERF_MEM_LVLNUM_L3;
                /* A cache-to-cache transfer, or the system cache. */
                if (code == DP_SPE_DS_SYS_CACHE)
                        s->snoop = PERF_MEM_SNOOP_HIT;
                else
                        s->snoopx = PERF_MEM_SNOOPX_PEER;
                break;
        case DP_SPE_DS_REMOTE:
                s->lvl = PERF_MEM_LVL_NA;
                s->lvl_num = PERF_MEM_LVLNUM_NA;
                s->remote = 1;
                s->snoopx = PERF_MEM_SNOOPX_PEER;
                break;
        case DP_SPE_DS_DRAM:
                s->lvl = PERF_MEM_LVL_LOC_RAM | PERF_MEM_LVL_HIT;
                s->lvl_num = PERF_MEM_LVLNUM_RAM;
                s->snoop = PERF_MEM_SNOOP_NONE;
                break;
        default:
                break;
        }
}

/* The union perf_mem_data_src perf synthesizes for an SPE load or store
 * (arm_spe__synth_data_source()): the operation, the level the Neoverse
 * DATA-SOURCE names for a load (stores and records without the packet: NA),
 * the TLB from EVENTS (the walker; a walk is a miss); lock and block 0. */
static uint64_t synth_data_src(const struct dp_spe_record *rec, uint16_t flags) {
        struct dp_mem_data_src s = {
                .op = (flags & DP_SAMPLE_STORE) ? PERF_MEM_OP_STORE : PERF_MEM_OP_LOAD,
                .lvl = PERF_MEM_LVL_NA,
                .lvl_num = PERF_MEM_LVLNUM_NA,
                .snoop = PERF_MEM_SNOOP_NA,
        };

        if (!(flags & DP_SAMPLE_STORE) && (rec->have & DP_SPE_HAVE_DATA_SOURCE)) {
                s.lvl = 0;
                s.lvl_num = 0;
                s.snoop = 0;
                neoverse_level_bits(rec->data_source, &s);
        }
        if (rec->events & (DP_SPE_EV_TLB_ACCESS | DP_SPE_EV_TLB_WALK))
                s.dtlb = PERF_MEM_TLB_WK | ((rec->events & DP_SPE_EV_TLB_WALK) ? PERF_MEM_TLB_MISS : PERF_MEM_TLB_HIT);
        return dp_mem_data_src_pack(&s);
}

int dp_spe_record_to_sample(const struct dp_spe_record *rec, const struct dp_spe_context *ctx,
                            struct dp_sample *out) {
        unsigned cls = rec->op_header & 3;
        enum dp_mem_level level = DP_MEM_UNKNOWN;
        uint16_t flags = 0;

        if (rec->bad_bytes > 0)
                return -EBADMSG;
        if (!(rec->have & DP_SPE_HAVE_DATA_VA)) {
                /* Branches and other operations carry no data address: not a memory access. */
                if ((rec->have & DP_SPE_HAVE_OP_TYPE) && cls != DP_SPE_OP_LDST)
                        return -ENODATA;
                return -EBADMSG;
        }

        if ((rec->have & DP_SPE_HAVE_OP_TYPE) && cls == DP_SPE_OP_LDST) {
                flags |= (rec->op_payload & 0x01) ? DP_SAMPLE_STORE : DP_SAMPLE_LOAD;
                flags |= DP_SAMPLE_DATA_SRC_VALID;
        }
        if (rec->have & DP_SPE_HAVE_DATA_PA)
                flags |= DP_SAMPLE_PHYS_VALID;
        /* As for the other sources: a latency of 0 cycles is no measurement. */
        if ((rec->have & DP_SPE_HAVE_LAT_TOTAL) && rec->lat_total)
                flags |= DP_SAMPLE_LATENCY_VALID;
        /* Neoverse reports no level for stores (perf reads none either). */
        if ((rec->have & DP_SPE_HAVE_DATA_SOURCE) && !(flags & DP_SAMPLE_STORE))
                level = dp_mem_level_from_spe(rec->data_source);

        *out = (struct dp_sample) {
                .vaddr = dp_spe_va_canonical(rec->va_payload),
                .paddr = (rec->have & DP_SPE_HAVE_DATA_PA) ? rec->pa : 0,
                .data_src = (flags & DP_SAMPLE_DATA_SRC_VALID) ? synth_data_src(rec, flags) : 0,
                .latency = (rec->have & DP_SPE_HAVE_LAT_TOTAL) ? rec->lat_total : 0,
                .cpu = ctx->cpu,
                .flags = flags,
                .time = ctx->time,
                .pid = ctx->pid,
                .tid = ctx->tid,
        };
        dp_sample_set_level(out, level);
        if ((rec->have & DP_SPE_HAVE_TIMESTAMP) && ctx->clock)
                out->time = dp_spe_clock_to_ns(ctx->clock, rec->timestamp);
        if (rec->have & DP_SPE_HAVE_CONTEXT) {
                /* CONTEXTIDR holds the thread id (CONFIG_PID_IN_CONTEXTIDR); its
                 * process is known only from the tasks the caller tracks. */
                out->tid = rec->context;
                if (ctx->tid == rec->context && ctx->pid)
                        out->pid = ctx->pid;
                else if ((!ctx->tasks || dp_task_timeline_pid_of(ctx->tasks, rec->context, &out->pid) < 0) &&
                         (!ctx->threads || dp_thread_map_pid_of(ctx->threads, rec->context, &out->pid) < 0))
                        out->pid = rec->context;
        } else if (ctx->tasks && (rec->have & DP_SPE_HAVE_TIMESTAMP) && ctx->clock) {
                uint32_t pid, tid;

                /* Before the history kept, the caller's guess stands. */
                if (dp_task_timeline_at(ctx->tasks, out->time, &pid, &tid) == 0) {
                        out->pid = pid;
                        out->tid = tid;
                }
        }
        return 0;
}
