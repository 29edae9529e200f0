/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the ARM SPE decoder: packets, records, samples, and the
 * ring reader's AUX path.  Input layout:
 *
 *   byte 0     bits 0-4: the stream offset of the data (alignment pads depend
 *              on it); bit 5: give the reader a tracked current task; bit 6:
 *              want_phys; bit 7: a timestamp clock
 *   the rest   profiling-buffer bytes
 *
 * Invariants: the iterator always advances and never passes the end, and its
 * packets tile the input exactly as direct decodes at the same offsets do;
 * every description fits DP_SPE_DESC_MAX; records lie inside the input, in
 * order, and skip the same bad bytes as the packet walk; a record becomes a
 * sample (0) or not (-ENODATA, -EBADMSG), and a sample agrees with its record;
 * through the reader, the counters keep callback = valid + null + addr_zero +
 * kernel + inv_phys and the whole stretch is given back.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux-ring.h"
#include "decode-spe.h"
#include "macro.h"
#include "ring-reader.h"

#include "fuzz.h"


#define KNOWN_FLAGS                                                                     \
        (DP_SAMPLE_LOAD | DP_SAMPLE_STORE | DP_SAMPLE_PHYS_VALID | DP_SAMPLE_DATA_SRC_VALID | \
         DP_SAMPLE_LATENCY_VALID | DP_SAMPLE_LEVEL_MASK)

#define AUX_MAX 4096

static void check_packets(const uint8_t *buf, size_t len, uint64_t stream_offset, uint64_t *bad) {
        struct dp_spe_iter it;
        struct dp_spe_packet p, direct;
        size_t n = 0;

        dp_spe_iter_init(&it, buf, len, stream_offset);
        for (;;) {
                size_t at = it.pos;
                char desc[DP_SPE_DESC_MAX], tiny[5];
                int r;

                if (!dp_spe_iter_next(&it, &p))
                        break;
                CHECK(it.pos > at && it.pos <= len);
                CHECK(it.pos - at == p.size);
                CHECK(++n <= len);

                r = dp_spe_packet_decode(buf + at, len - at, stream_offset + at, &direct);
                CHECK(r == 0 || r == -EBADMSG || r == -ENODATA);
                CHECK(direct.type == p.type && direct.index == p.index && direct.extended == p.extended &&
                      direct.header == p.header && direct.size == p.size && direct.payload == p.payload);
                CHECK((r < 0) == (p.type == DP_SPE_BAD));
                CHECK(p.type != DP_SPE_BAD || p.size == 1);

                CHECK(dp_spe_packet_describe(&p, desc, sizeof(desc)) == 0);
                CHECK(strlen(desc) < sizeof(desc) && desc[0] != '\0');
                r = dp_spe_packet_describe(&p, tiny, sizeof(tiny));
                CHECK((r == 0 || r == -ENOBUFS) && strlen(tiny) < sizeof(tiny));
        }
        CHECK(it.pos == len);
        *bad = it.bad_bytes;
}

static void check_sample(const struct dp_spe_record *rec, const struct dp_spe_context *ctx) {
        struct dp_sample s, untouched;
        int r;

        memset(&s, 0xa5, sizeof(s));
        untouched = s;
        r = dp_spe_record_to_sample(rec, ctx, &s);
        CHECK(r == 0 || r == -ENODATA || r == -EBADMSG);
        if (r < 0) {
                CHECK(memcmp(&s, &untouched, sizeof(s)) == 0);
                CHECK(r != -ENODATA || !(rec->have & DP_SPE_HAVE_DATA_VA));
                return;
        }
        CHECK(rec->have & DP_SPE_HAVE_DATA_VA);
        CHECK(rec->bad_bytes == 0);
        CHECK((s.flags & ~KNOWN_FLAGS) == 0);
        CHECK(dp_sample_level(&s) < _DP_MEM_LEVEL_MAX);
        CHECK(s.vaddr == dp_spe_va_canonical(rec->va_payload));
        CHECK((s.vaddr >> 56) == 0 || (s.vaddr >> 56) == 0xff);
        CHECK(!!(s.flags & DP_SAMPLE_PHYS_VALID) == !!(rec->have & DP_SPE_HAVE_DATA_PA));
        CHECK(!!(s.flags & DP_SAMPLE_LATENCY_VALID) == (s.latency != 0));
        CHECK(s.latency == ((rec->have & DP_SPE_HAVE_LAT_TOTAL) ? rec->lat_total : 0));
        CHECK(!(s.flags & DP_SAMPLE_LOAD) || !(s.flags & DP_SAMPLE_STORE));
        CHECK(s.paddr >> 56 == 0);
        CHECK(s.cpu == ctx->cpu);
        if (rec->have & DP_SPE_HAVE_CONTEXT)
                CHECK(s.tid == rec->context);
        else
                CHECK(s.pid == ctx->pid && s.tid == ctx->tid);
}

static void check_records(const uint8_t *buf, size_t len, uint64_t stream_offset, uint64_t bad,
                          const struct dp_spe_context *ctx) {
        struct dp_spe_iter it;
        struct dp_spe_record rec;
        size_t end = 0, records = 0;

        dp_spe_iter_init(&it, buf, len, stream_offset);
        while (dp_spe_next_record(&it, &rec)) {
                CHECK(rec.offset >= end);
                CHECK(rec.size >= 1 && rec.offset + rec.size == it.pos && it.pos <= len);
                end = it.pos;
                CHECK(++records <= len);
                check_sample(&rec, ctx);
        }
        CHECK(it.pos == len);
        CHECK(it.bad_bytes == bad);
        CHECK(it.incomplete_records <= 1);
        /* The end is sticky. */
        CHECK(!dp_spe_next_record(&it, &rec));
}


/* The bytes as one announced stretch of an AUX area, starting at its end so
 * that it wraps, through the reader. */
static void check_reader(const uint8_t *buf, size_t len, uint8_t control) {
        static uint8_t area[AUX_MAX];
        static struct perf_event_mmap_page meta;
        static struct dp_spsc *queue;
        struct dp_spe_clock clock = { .time_shift = 3, .time_mult = 5 };
        struct perf_event_attr attr = {
                .size = sizeof(attr),
                .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
                .sample_id_all = 1,
        };
        struct dp_ring_reader r;
        const struct dp_sample *s;
        uint64_t start = 5 * AUX_MAX - len / 2, *c = r.counters.v;
        size_t n;

        if (len > AUX_MAX)
                return;
        if (!queue)
                CHECK(dp_spsc_new(64, &queue) == 0);
        memset(&meta, 0, sizeof(meta));
        meta.aux_size = AUX_MAX;
        meta.aux_tail = start;
        for (size_t i = 0; i < len; i++)
                area[(start + i) % AUX_MAX] = buf[i];

        CHECK(dp_ring_reader_init(&r, &attr, &dp_source_spe, queue, 1, control & 0x40) == 0);
        CHECK(dp_ring_reader_attach_aux(&r, &meta, area, AUX_MAX) == 0);
        if (control & 0x20) {
                r.aux.pid = 1000;
                r.aux.tid = 1001;
        }
        if (control & 0x80)
                r.aux.clock = &clock;
        dp_ring_reader_take_aux(&r, &(struct dp_aux_record) { .offset = start, .size = len }, 77);
        dp_spsc_publish(queue);

        CHECK(meta.aux_tail == start + len);
        CHECK(r.aux.counts.bytes == len);
        CHECK(c[DP_C_VALID] + c[DP_C_NULL] + c[DP_C_ADDR_ZERO] + c[DP_C_KERNEL] + c[DP_C_INV_PHYS] ==
              c[DP_C_CALLBACK]);
        CHECK(c[DP_C_ENQUEUE] + c[DP_C_OVERFLOW] == c[DP_C_VALID]);
        CHECK(dp_counters_check(&r.counters, NULL) == 0);
        while ((n = dp_spsc_peek(queue, &s)) > 0) {
                for (size_t i = 0; i < n; i++) {
                        CHECK(s[i].vaddr != 0 && s[i].vaddr >> 63 == 0 && s[i].pid != 0);
                        CHECK(s[i].cpu == 1);
                        CHECK(!(control & 0x40) || (s[i].flags & DP_SAMPLE_PHYS_VALID));
                }
                dp_spsc_consume(queue, n);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct dp_spe_context ctx = { .pid = 42, .tid = 43, .cpu = 9, .time = 1234 };
        struct dp_spe_clock clock = { .time_shift = 10, .time_mult = 1000000, .time_zero = 5, .offset_ns = -5 };
        uint64_t stream_offset, bad;
        uint8_t control;

        if (size < 1)
                return 0;
        control = data[0];
        stream_offset = control & 0x1f;
        data++;
        size--;
        if (control & 0x80)
                ctx.clock = &clock;

        check_packets(data, size, stream_offset, &bad);
        check_records(data, size, stream_offset, bad, &ctx);
        check_reader(data, size, control);
        return 0;
}
