/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "data-src-format.h"
#include "macro.h"
#include "mem-level.h"

struct text {
        char *buf;
        size_t size, len;
        bool cut;
};

static void put(struct text *t, const char *fmt, ...) {
        va_list ap;
        int n;

        if (t->cut)
                return;
        va_start(ap, fmt);
        n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
        va_end(ap);
        if (n < 0 || (size_t) n >= t->size - t->len) {
                t->cut = true;
                return;
        }
        t->len += (size_t) n;
}

/* Each set bit of @bits named from @names (bit 0 first), joined by " or ";
 * returns how many were named. */
static unsigned put_bits(struct text *t, uint64_t bits, const char *const *names, size_t n_names, unsigned printed) {
        for (size_t i = 0; bits && i < n_names; i++, bits >>= 1)
                if (bits & 1)
                        put(t, "%s%s", printed++ ? " or " : "", names[i]);
        return printed;
}

static const char *op_name(uint8_t op) {
        if (op & PERF_MEM_OP_NA)
                return "N/A";
        if (op & PERF_MEM_OP_LOAD)
                return "LOAD";
        if (op & PERF_MEM_OP_STORE)
                return "STORE";
        if (op & PERF_MEM_OP_PFETCH)
                return "PFETCH";
        if (op & PERF_MEM_OP_EXEC)
                return "EXEC";
        return "No";
}

static void put_lvl(struct text *t, const struct dp_mem_data_src *s) {
        static const char *const lvl[] = {
                "N/A", "HIT", "MISS", "L1", "LFB/MAB", "L2", "L3", "Local RAM", "Remote RAM (1 hop)",
                "Remote RAM (2 hops)", "Remote Cache (1 hop)", "Remote Cache (2 hops)", "I/O", "Uncached",
        };
        static const char *const hops[] = {
                "N/A", "core, same node", "node, same socket", "socket, same board", "board",
        };
        static const char *const lvl_num[16] = {
                [PERF_MEM_LVLNUM_CXL] = "CXL", [PERF_MEM_LVLNUM_IO] = "I/O",
                [PERF_MEM_LVLNUM_ANY_CACHE] = "Any cache", [PERF_MEM_LVLNUM_LFB] = "LFB/MAB",
                [PERF_MEM_LVLNUM_RAM] = "RAM", [PERF_MEM_LVLNUM_PMEM] = "PMEM", [PERF_MEM_LVLNUM_NA] = "N/A",
        };
        size_t start = t->len;
        unsigned printed = 0;

        if (s->remote)
                put(t, "Remote ");
        /* With mem_hops the legacy bits are not shown (perf reads past its
         * table for hops 5-7; those are reserved and named by number here). */
        if (s->hops < DP_ARRAY_SIZE(hops) && s->hops)
                put(t, "%s ", hops[s->hops]);
        else if (s->hops)
                put(t, "hops %u ", s->hops);
        else
                printed = put_bits(t, s->lvl & ~(PERF_MEM_LVL_HIT | PERF_MEM_LVL_MISS), lvl, DP_ARRAY_SIZE(lvl), 0);
        if (s->lvl_num) {
                put(t, "%s", printed++ ? " or " : "");
                if (lvl_num[s->lvl_num])
                        put(t, "%s", lvl_num[s->lvl_num]);
                else
                        put(t, "L%u", s->lvl_num);
        }
        if (t->len == start)
                put(t, "N/A");
        if (s->lvl & PERF_MEM_LVL_HIT)
                put(t, " hit");
        if (s->lvl & PERF_MEM_LVL_MISS)
                put(t, " miss");
}

static void put_snoop(struct text *t, const struct dp_mem_data_src *s) {
        static const char *const snoop[] = { "N/A", "None", "Hit", "Miss", "HitM" };
        static const char *const snoopx[] = { "Fwd", "Peer" };
        unsigned printed = put_bits(t, s->snoop, snoop, DP_ARRAY_SIZE(snoop), 0);

        if (!put_bits(t, s->snoopx, snoopx, DP_ARRAY_SIZE(snoopx), printed))
                put(t, "N/A");
}

static void put_tlb(struct text *t, const struct dp_mem_data_src *s) {
        static const char *const tlb[] = { "N/A", "HIT", "MISS", "L1", "L2", "Walker", "Fault" };

        if (!put_bits(t, s->dtlb & ~(PERF_MEM_TLB_HIT | PERF_MEM_TLB_MISS), tlb, DP_ARRAY_SIZE(tlb), 0))
                put(t, "N/A");
        if (s->dtlb & PERF_MEM_TLB_HIT)
                put(t, " hit");
        if (s->dtlb & PERF_MEM_TLB_MISS)
                put(t, " miss");
}

static void put_blk(struct text *t, const struct dp_mem_data_src *s) {
        if (!s->blk || (s->blk & PERF_MEM_BLK_NA)) {
                put(t, " N/A");
                return;
        }
        if (s->blk & PERF_MEM_BLK_DATA)
                put(t, " Data");
        if (s->blk & PERF_MEM_BLK_ADDR)
                put(t, " Addr");
}

int dp_data_src_format(uint64_t data_src, char *buf, size_t size) {
        struct text t = { .buf = buf, .size = size };
        struct dp_mem_data_src s;

        if (!buf || size == 0)
                return -ENOBUFS;
        buf[0] = '\0';
        dp_mem_data_src_unpack(data_src, &s);
        put(&t, "|OP %s|LVL ", op_name(s.op));
        put_lvl(&t, &s);
        put(&t, "|SNP ");
        put_snoop(&t, &s);
        put(&t, "|TLB ");
        put_tlb(&t, &s);
        put(&t, "|LCK %s|BLK ", (s.lock & PERF_MEM_LOCK_NA) ? "N/A" : (s.lock & PERF_MEM_LOCK_LOCKED) ? "Yes" : "No");
        put_blk(&t, &s);
        return t.cut ? -ENOBUFS : (int) t.len;
}
