/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <string.h>

#include "counters.h"

static const struct {
        const char *name;
        enum dp_counter_owner owner;
        bool level;
} counter_info[_DP_C_MAX] = {
        [DP_C_CREATE]       = { "create",       DP_OWNER_CONTROL, false },
        [DP_C_BIND]         = { "bind",         DP_OWNER_CONTROL, false },
        [DP_C_ENABLE]       = { "enable",       DP_OWNER_CONTROL, false },
        [DP_C_CALLBACK]     = { "callback",     DP_OWNER_READER,  false },
        [DP_C_VALID]        = { "valid",        DP_OWNER_READER,  false },
        [DP_C_NULL]         = { "null",         DP_OWNER_READER,  false },
        [DP_C_ADDR_ZERO]    = { "addr_zero",    DP_OWNER_READER,  false },
        [DP_C_KERNEL]       = { "kernel",       DP_OWNER_READER,  false },
        [DP_C_INV_PHYS]     = { "inv_phys",     DP_OWNER_READER,  false },
        [DP_C_ENQUEUE]      = { "enqueue",      DP_OWNER_READER,  false },
        [DP_C_OVERFLOW]     = { "overflow",     DP_OWNER_READER,  false },
        [DP_C_RING_PEAK]    = { "ring_peak",    DP_OWNER_READER,  true  },
        [DP_C_LOST]         = { "lost",         DP_OWNER_READER,  false },
        [DP_C_LOST_SAMPLES] = { "lost_samples", DP_OWNER_READER,  false },
        [DP_C_KERNEL_LOST]  = { "kernel_lost",  DP_OWNER_READER,  true  },
        [DP_C_THROTTLE]     = { "throttle",     DP_OWNER_READER,  false },
        [DP_C_UNTHROTTLE]   = { "unthrottle",   DP_OWNER_READER,  false },
        [DP_C_BAD_RECORD]   = { "bad_record",   DP_OWNER_READER,  false },
        [DP_C_WAKEUP]       = { "wakeup",       DP_OWNER_READER,  false },
        [DP_C_DEQUEUE]      = { "dequeue",      DP_OWNER_TRACKER, false },
        [DP_C_DRAIN]        = { "drain",        DP_OWNER_TRACKER, false },
        [DP_C_MATCH]        = { "match",        DP_OWNER_TRACKER, false },
        [DP_C_MISS_TGID]    = { "miss_tgid",    DP_OWNER_TRACKER, false },
        [DP_C_MISS_REGION]  = { "miss_region",  DP_OWNER_TRACKER, false },
        [DP_C_MISS_BOUND]   = { "miss_bound",   DP_OWNER_TRACKER, false },
        [DP_C_UPDATE]       = { "update",       DP_OWNER_TRACKER, false },
        [DP_C_AUX_TRUNCATED] = { "aux_truncated", DP_OWNER_READER, false },
        [DP_C_AUX_PARTIAL]  = { "aux_partial",  DP_OWNER_READER,  false },
        [DP_C_AUX_COLLISION] = { "aux_collision", DP_OWNER_READER, false },
        [DP_C_SPE_BAD_BYTES] = { "spe_bad_bytes", DP_OWNER_READER, false },
        [DP_C_SPE_NO_DATA]  = { "spe_no_data",  DP_OWNER_READER,  false },
};

const char *dp_counter_name(enum dp_counter c) {
        return (unsigned) c < _DP_C_MAX ? counter_info[c].name : NULL;
}

enum dp_counter_owner dp_counter_owner(enum dp_counter c) {
        return (unsigned) c < _DP_C_MAX ? counter_info[c].owner : _DP_OWNER_MAX;
}

bool dp_counter_is_level(enum dp_counter c) {
        return (unsigned) c < _DP_C_MAX && counter_info[c].level;
}

void dp_cpu_stats_init(struct dp_cpu_stats *s) {
        memset(s, 0, sizeof(*s));
}

/*
 * Seqcount publish: an odd sequence marks a write in progress.  The release
 * fence after the first increment orders it before the stores of the values;
 * the final store-release orders the values before the even sequence.
 */
void dp_counters_publish(struct dp_cpu_stats *s, enum dp_counter_owner owner,
                         const struct dp_counter_values *values) {
        struct dp_counter_block *b = &s->block[owner];
        uint32_t seq = atomic_load_explicit(&b->seq, memory_order_relaxed);

        atomic_store_explicit(&b->seq, seq + 1, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        for (unsigned c = 0; c < _DP_C_MAX; c++)
                if (counter_info[c].owner == owner)
                        atomic_store_explicit(&b->v[c], values->v[c], memory_order_relaxed);
        atomic_store_explicit(&b->seq, seq + 2, memory_order_release);
}

static void block_read(const struct dp_counter_block *b, enum dp_counter_owner owner,
                       struct dp_counter_values *out) {
        struct dp_counter_block *mb = (struct dp_counter_block *) b; /* atomics need non-const */

        for (;;) {
                uint32_t seq = atomic_load_explicit(&mb->seq, memory_order_acquire);

                if (seq & 1)
                        continue;
                for (unsigned c = 0; c < _DP_C_MAX; c++)
                        if (counter_info[c].owner == owner)
                                out->v[c] = atomic_load_explicit(&mb->v[c], memory_order_relaxed);
                atomic_thread_fence(memory_order_acquire);
                if (atomic_load_explicit(&mb->seq, memory_order_relaxed) == seq)
                        return;
        }
}

void dp_counters_snapshot(const struct dp_cpu_stats *s, struct dp_counter_values *out) {
        /* Downstream first: whatever the tracker has taken, the reader had already queued. */
        block_read(&s->block[DP_OWNER_TRACKER], DP_OWNER_TRACKER, out);
        block_read(&s->block[DP_OWNER_READER], DP_OWNER_READER, out);
        block_read(&s->block[DP_OWNER_CONTROL], DP_OWNER_CONTROL, out);
}

void dp_counters_sum(struct dp_counter_values *a, const struct dp_counter_values *b) {
        for (unsigned c = 0; c < _DP_C_MAX; c++)
                a->v[c] = counter_info[c].level ? DP_MAX(a->v[c], b->v[c]) : a->v[c] + b->v[c];
}

int dp_counters_check(const struct dp_counter_values *v, const char **which) {
        const uint64_t *x = v->v;
        const char *broken = NULL;

        if (x[DP_C_VALID] + x[DP_C_NULL] + x[DP_C_ADDR_ZERO] + x[DP_C_KERNEL] + x[DP_C_INV_PHYS] !=
            x[DP_C_CALLBACK])
                broken = "valid + null + addr_zero + kernel + inv_phys == callback";
        else if (x[DP_C_ENQUEUE] + x[DP_C_OVERFLOW] != x[DP_C_VALID])
                broken = "enqueue + overflow == valid";
        else if (x[DP_C_DEQUEUE] > x[DP_C_ENQUEUE])
                broken = "dequeue + in_flight == enqueue";
        else if (x[DP_C_MATCH] + x[DP_C_MISS_TGID] + x[DP_C_MISS_REGION] + x[DP_C_MISS_BOUND] !=
                 x[DP_C_DEQUEUE])
                broken = "match + miss_tgid + miss_region + miss_bound == dequeue";
        else if (x[DP_C_UPDATE] > x[DP_C_MATCH])
                broken = "update <= match";

        if (which)
                *which = broken;
        return broken ? -EPROTO : 0;
}
