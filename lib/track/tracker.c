/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "probes.h"
#include "tracker-internal.h"

#define MAX_TARGETS_LIMIT (1u << 20)

void dp_tracker_config_init(struct dp_tracker_config *c) {
        *c = (struct dp_tracker_config) {
                .mode = DP_TRACKER_VADDR,
                .min_nr_regions = 10,
                .max_nr_regions = 1000,
                .sample_interval_ns = 5 * 1000 * 1000,
                .aggr_interval_ns = 100 * 1000 * 1000,
                .max_targets = 1024,
                .seed = 0x5eed,
        };
}

static uint32_t hash_tgid(uint32_t tgid, uint32_t shift) {
        /* Fibonacci hashing: consecutive pids spread over the table. */
        return (uint32_t) (tgid * UINT32_C(2654435769)) >> shift;
}

int dp_tracker_new(const struct dp_tracker_config *c, struct dp_tracker **ret) {
        struct dp_tracker *t;
        size_t nr_slots = 16;
        uint32_t bits = 4;
        uint64_t aggr_samples;

        if (!c || !ret)
                return -EINVAL;
        if (c->mode != DP_TRACKER_VADDR && c->mode != DP_TRACKER_PADDR)
                return -EINVAL;
        if (c->min_nr_regions < 1 || c->max_nr_regions < c->min_nr_regions)
                return -EINVAL;
        if (c->sample_interval_ns == 0 || c->aggr_interval_ns < c->sample_interval_ns)
                return -EINVAL;
        if (c->max_targets < 1 || c->max_targets > MAX_TARGETS_LIMIT)
                return -EINVAL;
        aggr_samples = c->aggr_interval_ns / c->sample_interval_ns;
        if (aggr_samples > DP_MAX_NR_ACCESSES)
                return -EINVAL;

        while (nr_slots < 2 * (size_t) c->max_targets) {
                nr_slots *= 2;
                bits++;
        }

        t = calloc(1, sizeof(*t));
        if (!t)
                return -ENOMEM;
        t->slots = calloc(nr_slots, sizeof(*t->slots));
        t->targets = calloc(c->max_targets, sizeof(*t->targets));
        if (!t->slots || !t->targets) {
                dp_tracker_free(t);
                return -ENOMEM;
        }

        t->mode = c->mode;
        t->source = c->source ?: "unknown";
        t->config = *c;
        t->slot_shift = 32 - bits;
        t->slot_mask = nr_slots - 1;
        t->limits = (struct dp_region_limits) {
                .min_nr_regions = c->min_nr_regions,
                .max_nr_regions = c->max_nr_regions,
                .max_nr_accesses = (uint32_t) aggr_samples,
        };
        t->rng.state = c->seed;
        t->epoch = 1;
        t->window_first_epoch = t->epoch;
        t->max_nr_accesses = (uint32_t) aggr_samples;
        t->interval_reciprocal = UINT64_MAX / c->sample_interval_ns + 1;
        t->next_aggr_epoch = t->epoch + aggr_samples;

        *ret = t;
        return 0;
}

void dp_tracker_free(struct dp_tracker *t) {
        if (!t)
                return;
        for (size_t i = 0; i < t->nr_targets; i++) {
                dp_region_set_done(&t->targets[i]->set);
                free(t->targets[i]);
        }
        free(t->targets);
        free(t->slots);
        dp_sketch_done(&t->sketch);
        free(t);
}

static struct dp_target *lookup_target(const struct dp_tracker *t, uint32_t tgid) {
        for (size_t i = hash_tgid(tgid, t->slot_shift);; i = (i + 1) & t->slot_mask) {
                const struct target_slot *slot = &t->slots[i];

                if (!slot->target)
                        return NULL;
                if (slot->tgid == tgid)
                        return slot->target;
        }
}

static void insert_slot(struct dp_tracker *t, struct dp_target *target) {
        size_t i = hash_tgid(target->tgid, t->slot_shift);

        while (t->slots[i].target)
                i = (i + 1) & t->slot_mask;
        t->slots[i] = (struct target_slot) { .tgid = target->tgid, .target = target };
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void delete_slot(struct dp_tracker *t, uint32_t tgid) {
        size_t i = hash_tgid(tgid, t->slot_shift);

        while (t->slots[i].target && t->slots[i].tgid != tgid)
                i = (i + 1) & t->slot_mask;
        if (!t->slots[i].target)
                return;

        for (size_t j = (i + 1) & t->slot_mask; t->slots[j].target; j = (j + 1) & t->slot_mask) {
                size_t home = hash_tgid(t->slots[j].tgid, t->slot_shift);

                /* Move j into the hole at i unless its home lies cyclically in (i, j]. */
                if (((j - home) & t->slot_mask) >= ((j - i) & t->slot_mask)) {
                        t->slots[i] = t->slots[j];
                        i = j;
                }
        }
        t->slots[i] = (struct target_slot) {};
}

static void unknown_rebuild_without(struct dp_tracker *t, uint32_t tgid) {
        uint32_t keep[UNKNOWN_SLOTS];
        size_t n = 0;

        for (size_t i = 0; i < UNKNOWN_SLOTS; i++)
                if (t->unknown_used[i] && t->unknown[i] != tgid)
                        keep[n++] = t->unknown[i];
        memset(t->unknown_used, 0, sizeof(t->unknown_used));
        t->nr_unknown = 0;
        for (size_t k = 0; k < n; k++) {
                size_t i = hash_tgid(keep[k], 32 - 7);

                while (t->unknown_used[i])
                        i = (i + 1) & (UNKNOWN_SLOTS - 1);
                t->unknown[i] = keep[k];
                t->unknown_used[i] = true;
                t->nr_unknown++;
        }
}

int dp_tracker_add_target(struct dp_tracker *t, uint32_t tgid, const struct dp_range *ranges, size_t n) {
        _cleanup_free_ struct dp_target *target = NULL;
        int r;

        if (!t)
                return -EINVAL;
        if (t->mode == DP_TRACKER_PADDR ? t->nr_targets > 0 : lookup_target(t, tgid) != NULL)
                return -EEXIST;
        if (t->nr_targets >= t->config.max_targets)
                return -ENOSPC;

        target = calloc(1, sizeof(*target));
        if (!target)
                return -ENOMEM;
        r = dp_region_set_init(&target->set, ranges, n, &t->limits);
        if (r < 0)
                return r;

        target->tgid = tgid;
        target->index = t->nr_targets;
        target->sampled_aggr = target->aggregated_at = target->ranges_aggr = t->nr_aggregations;
        t->targets[t->nr_targets++] = target;
        insert_slot(t, target);
        if (t->mode == DP_TRACKER_PADDR)
                t->paddr_target = target;

        /* It is known now; don't hand it out as unknown. */
        if (t->last_unknown_valid && t->last_unknown == tgid)
                t->last_unknown_valid = false;
        if (t->nr_unknown > 0)
                unknown_rebuild_without(t, tgid);

        DP_TAKE_PTR(target);
        return 0;
}

int dp_tracker_set_ranges(struct dp_tracker *t, uint32_t tgid, const struct dp_range *ranges, size_t n) {
        struct dp_target *target;

        if (!t)
                return -EINVAL;
        target = lookup_target(t, tgid);
        if (!target)
                return -ENOENT;
        /* The closes it missed into the ages first: new regions start at 0. */
        dp_region_set_add_age(&target->set, t->nr_aggregations - target->aggregated_at);
        target->aggregated_at = t->nr_aggregations;
        target->misses = 0;
        target->ranges_aggr = t->nr_aggregations;
        return dp_region_set_update_ranges(&target->set, ranges, n, &t->limits);
}

int dp_tracker_remove_target(struct dp_tracker *t, uint32_t tgid) {
        struct dp_target *target;

        if (!t)
                return -EINVAL;
        target = lookup_target(t, tgid);
        if (!target)
                return -ENOENT;

        delete_slot(t, tgid);
        t->targets[target->index] = t->targets[--t->nr_targets];
        t->targets[target->index]->index = target->index;
        t->targets[t->nr_targets] = NULL;
        if (t->last_target == target)
                t->last_target = NULL;
        if (t->paddr_target == target)
                t->paddr_target = NULL;
        /* Room for a new target: a stranger skipped at max_targets may be recorded now. */
        t->last_unknown_valid = false;

        dp_sketch_forget(&t->sketch, tgid);
        dp_region_set_done(&target->set);
        free(target);
        return 0;
}

bool dp_tracker_has_target(const struct dp_tracker *t, uint32_t tgid) {
        return t && lookup_target(t, tgid);
}

size_t dp_tracker_nr_targets(const struct dp_tracker *t) {
        return t ? t->nr_targets : 0;
}

size_t dp_tracker_nr_regions(const struct dp_tracker *t) {
        size_t n = 0;

        for (size_t i = 0; t && i < t->nr_targets; i++)
                n += t->targets[i]->set.nr;
        return n;
}

int dp_tracker_target_regions(const struct dp_tracker *t, uint32_t tgid,
                              const struct dp_region **ret_regions, size_t *ret_n) {
        const struct dp_target *target;

        if (!t || !ret_regions || !ret_n)
                return -EINVAL;
        target = lookup_target(t, tgid);
        if (!target)
                return -ENOENT;
        *ret_regions = target->set.regions;
        *ret_n = target->set.nr;
        return 0;
}

/* Miss path for vaddr mode; cheap when the same stranger keeps missing. */
static void remember_unknown(struct dp_tracker *t, uint32_t tgid) {
        size_t i;

        if (t->last_unknown_valid && t->last_unknown == tgid)
                return;
        t->last_unknown = tgid;
        t->last_unknown_valid = true;
        if (t->nr_targets >= t->config.max_targets)
                return;

        for (i = hash_tgid(tgid, 32 - 7); t->unknown_used[i]; i = (i + 1) & (UNKNOWN_SLOTS - 1))
                if (t->unknown[i] == tgid)
                        return;
        if (t->nr_unknown >= DP_TRACKER_UNKNOWN_MAX) {
                t->unknown_dropped++;
                return;
        }
        t->unknown[i] = tgid;
        t->unknown_used[i] = true;
        t->nr_unknown++;
}

enum outcome {
        OUTCOME_MATCH,
        OUTCOME_MATCH_UPDATE,
        OUTCOME_MISS_TGID,
        OUTCOME_MISS_REGION,
        OUTCOME_MISS_BOUND,
        _OUTCOME_MAX,
};

/*
 * The sampling interval a sample belongs to comes from its own timestamp, not
 * from when it is drained: readers deliver in batches, and DAMON counts at most
 * one access per region per sampling interval.  Slots 0..max-1 are the current
 * aggregation, the next max slots the one after it (samples that arrive before
 * the tick that closes this one).  Late samples fall into slot 0; samples
 * without a time use the tracker's clock.  A multiply, no division.
 */
static inline uint64_t sample_slot(const struct dp_tracker *t, uint64_t time) {
        if (dp_unlikely(time == 0))
                return t->epoch - t->window_first_epoch;
        if (dp_unlikely(time < t->window_start_ns))
                return 0;
        return (uint64_t) (((unsigned __int128) (time - t->window_start_ns) * t->interval_reciprocal) >> 64);
}

/* Counts an access of @region in sampling interval @slot (sample_slot()). */
static inline enum outcome count_access(struct dp_tracker *t, struct dp_region *region, uint64_t slot) {
        uint64_t bit;

        if (dp_likely(slot < t->max_nr_accesses)) {
                bit = UINT64_C(1) << slot;
                if (region->access_mask & bit)
                        return OUTCOME_MATCH;
                region->access_mask |= bit;
                region->nr_accesses++;
                return OUTCOME_MATCH_UPDATE;
        }
        slot = DP_MIN(slot - t->max_nr_accesses, (uint64_t) t->max_nr_accesses - 1);
        bit = UINT64_C(1) << slot;
        if (region->next_access_mask & bit)
                return OUTCOME_MATCH;
        region->next_access_mask |= bit;
        region->next_nr_accesses++;
        return OUTCOME_MATCH_UPDATE;
}

/* The probes' names of the outcomes, as the counters they count in (update: a
 * match that is the region's first access of its sampling interval). */
static const char *const outcome_names[_OUTCOME_MAX] = {
        [OUTCOME_MATCH] = "match",
        [OUTCOME_MATCH_UPDATE] = "update",
        [OUTCOME_MISS_TGID] = "miss_tgid",
        [OUTCOME_MISS_REGION] = "miss_region",
        [OUTCOME_MISS_BOUND] = "miss_bound",
};

/* @ret_addr: the address matched against, for the probes.  The miss probe
 * sits on the miss path only, where it costs the hot path nothing. */
static inline __attribute__((always_inline)) enum outcome match_one(struct dp_tracker *t, const struct dp_sample *s,
                                                                   uint64_t *ret_addr) {
        struct dp_target *target;
        struct dp_region *region;
        enum outcome miss;
        uint64_t addr, slot;

        if (t->mode == DP_TRACKER_VADDR) {
                addr = *ret_addr = s->vaddr;
                target = t->last_target;
                if (dp_unlikely(!target || target->tgid != s->pid)) {
                        target = lookup_target(t, s->pid);
                        if (dp_unlikely(!target)) {
                                remember_unknown(t, s->pid);
                                miss = OUTCOME_MISS_TGID;
                                goto missed;
                        }
                        t->last_target = target;
                }
        } else {
                addr = *ret_addr = s->paddr;
                target = t->paddr_target;
                miss = !target ? OUTCOME_MISS_TGID : OUTCOME_MISS_BOUND;
                if (dp_unlikely(!target || !(s->flags & DP_SAMPLE_PHYS_VALID)))
                        goto missed;
        }

        switch (dp_region_set_find(&target->set, addr, &region)) {
        case DP_REGION_MATCH:
                break;
        case DP_REGION_MISS_REGION:
                miss = OUTCOME_MISS_REGION;
                target->misses++;
                goto missed;
        default:
                miss = OUTCOME_MISS_BOUND;
                target->misses++;
                goto missed;
        }

        slot = sample_slot(t, s->time);
        dp_region_count_sample(region, addr);
        target->sampled_aggr = t->nr_aggregations;
        if (t->keep_granules)
                dp_sketch_add(&t->sketch, target->tgid, addr, t->window_first_epoch + slot);
        return count_access(t, region, slot);

missed:
        DP_PROBE3(report_missed, outcome_names[miss], s->pid, addr);
        return miss;
}

/* Files one sample; the static probes see it with its outcome (nops unless
 * traced).  @source is t->source, loaded once per batch. */
static inline __attribute__((always_inline)) enum outcome account_one(struct dp_tracker *t, const struct dp_sample *s,
                                                                     const char *source) {
        uint64_t addr;
        enum outcome o = match_one(t, s, &addr);

        DP_PROBE5(sample, addr, s->cpu, s->pid, source, outcome_names[o]);
        return o;
}

enum dp_counter dp_tracker_classify(struct dp_tracker *t, const struct dp_sample *s) {
        struct dp_target *target;
        struct dp_region *region;
        uint64_t addr;

        if (t->mode == DP_TRACKER_VADDR) {
                target = lookup_target(t, s->pid);
                addr = s->vaddr;
        } else {
                target = t->paddr_target;
                if (target && !(s->flags & DP_SAMPLE_PHYS_VALID))
                        return DP_C_MISS_BOUND;
                addr = s->paddr;
        }
        if (!target)
                return DP_C_MISS_TGID;
        switch (dp_region_set_find(&target->set, addr, &region)) {
        case DP_REGION_MATCH:
                return DP_C_MATCH;
        case DP_REGION_MISS_REGION:
                return DP_C_MISS_REGION;
        default:
                return DP_C_MISS_BOUND;
        }
}

static void add_outcomes(struct dp_counter_values *c, const uint64_t n[static _OUTCOME_MAX]) {
        c->v[DP_C_MATCH] += n[OUTCOME_MATCH] + n[OUTCOME_MATCH_UPDATE];
        c->v[DP_C_UPDATE] += n[OUTCOME_MATCH_UPDATE];
        c->v[DP_C_MISS_TGID] += n[OUTCOME_MISS_TGID];
        c->v[DP_C_MISS_REGION] += n[OUTCOME_MISS_REGION];
        c->v[DP_C_MISS_BOUND] += n[OUTCOME_MISS_BOUND];
}

void dp_tracker_account(struct dp_tracker *t, const struct dp_sample *s, struct dp_counter_values *c) {
        uint64_t n[_OUTCOME_MAX] = {};

        n[account_one(t, s, t->source)]++;
        add_outcomes(c, n);
}

void dp_tracker_account_batch(struct dp_tracker *t, const struct dp_sample *s, size_t nr,
                              struct dp_counter_values *c) {
        const char *source = t->source;
        uint64_t n[_OUTCOME_MAX] = {};

        for (size_t i = 0; i < nr; i++)
                n[account_one(t, &s[i], source)]++;
        add_outcomes(c, n);
}

size_t dp_tracker_open_prefix(const struct dp_tracker *t, const struct dp_sample *s, size_t n, uint64_t now_ns) {
        uint64_t horizon;
        size_t lo = 0, hi;

        if (!t->clock_started || n == 0)
                return n;
        horizon = t->window_start_ns + 2 * (uint64_t) t->max_nr_accesses * t->config.sample_interval_ns;
        if (s[n - 1].time < horizon)
                return n;
        /* A queue is in time order (its CPU's ring is): the first sample at
         * or past the horizon is found by bisection, touching a few of the
         * cache lines a scan would (the accounting touches the rest). */
        for (hi = n - 1; lo < hi;) {
                size_t mid = lo + (hi - lo) / 2;

                if (s[mid].time < horizon)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (s[lo].time <= now_ns && (lo == 0 || s[lo - 1].time <= s[lo].time))
                return lo;
        /* Out of order around it, or a time from the future (a clock gone
         * wrong: waiting for it would hold up everything behind it): scan. */
        for (size_t i = 0; i < n; i++)
                if (s[i].time >= horizon && s[i].time <= now_ns)
                        return i;
        return n;
}

size_t dp_tracker_take_unknown(struct dp_tracker *t, uint32_t *out, size_t max) {
        size_t taken = 0;

        if (!t || (!out && max > 0))
                return 0;

        for (size_t i = 0; i < UNKNOWN_SLOTS && taken < max; i++)
                if (t->unknown_used[i])
                        out[taken++] = t->unknown[i];

        if (taken == t->nr_unknown) {
                memset(t->unknown_used, 0, sizeof(t->unknown_used));
                t->nr_unknown = 0;
        } else {
                for (size_t k = 0; k < taken; k++)
                        unknown_rebuild_without(t, out[k]);
        }
        t->last_unknown_valid = false;
        return taken;
}

uint64_t dp_tracker_unknown_dropped(const struct dp_tracker *t) {
        return t ? t->unknown_dropped : 0;
}

bool dp_tracker_tick(struct dp_tracker *t, uint64_t now_ns) {
        uint64_t passed;

        if (!t)
                return false;
        if (!t->clock_started) {
                t->clock_started = true;
                t->next_sample_ns = now_ns + t->config.sample_interval_ns;
                t->window_start_ns = now_ns;
                t->window_first_epoch = t->epoch;
                return false;
        }
        if (now_ns < t->next_sample_ns)
                return false;

        passed = (now_ns - t->next_sample_ns) / t->config.sample_interval_ns + 1;
        t->epoch += passed;
        t->next_sample_ns += passed * t->config.sample_interval_ns;
        if (t->epoch < t->next_aggr_epoch)
                return false;

        for (size_t i = 0; i < t->nr_targets; i++) {
                struct dp_target *target = t->targets[i];

                /* Quiet since before the last two closes: the last zeroed its
                 * rates (a sample filed ahead, into the aggregation after the
                 * one open, marks the one open). */
                if (target->sampled_aggr + 2 < t->nr_aggregations)
                        continue;
                dp_region_set_add_age(&target->set, t->nr_aggregations - target->aggregated_at);
                if (dp_region_set_aggregate(&target->set, &t->limits, &t->rng) < 0)
                        t->split_failures++;
                target->aggregated_at = t->nr_aggregations + 1;
        }
        if (t->nr_aggregations % DP_SKETCH_DECAY_AGGREGATIONS == 0)
                dp_sketch_decay(&t->sketch);
        t->next_aggr_epoch = t->epoch + t->limits.max_nr_accesses;
        /* The new aggregation starts with the sampling interval now running. */
        t->window_start_ns = t->next_sample_ns - t->config.sample_interval_ns;
        t->window_first_epoch = t->epoch;
        t->nr_aggregations++;
        return true;
}

uint32_t dp_tracker_max_nr_accesses(const struct dp_tracker *t) {
        return t ? t->limits.max_nr_accesses : 0;
}

uint64_t dp_tracker_epoch(const struct dp_tracker *t) {
        return t ? t->epoch : 0;
}

uint64_t dp_tracker_nr_aggregations(const struct dp_tracker *t) {
        return t ? t->nr_aggregations : 0;
}

uint64_t dp_tracker_window_start_ns(const struct dp_tracker *t) {
        return t ? t->window_start_ns : 0;
}

uint64_t dp_tracker_aggregation_due_ns(const struct dp_tracker *t) {
        uint64_t epochs;

        if (!t || !t->clock_started)
                return 0;
        /* A tick at next_sample_ns passes one epoch; each interval after it one more. */
        epochs = t->next_aggr_epoch > t->epoch ? t->next_aggr_epoch - t->epoch : 1;
        return t->next_sample_ns + (epochs - 1) * t->config.sample_interval_ns;
}

int dp_tracker_keep_granules(struct dp_tracker *t, bool keep) {
        if (keep && !t->keep_granules) {
                int r = dp_sketch_init(&t->sketch);

                if (r < 0)
                        return r;
        } else if (!keep && t->keep_granules)
                dp_sketch_done(&t->sketch);
        t->keep_granules = keep;
        return 0;
}

uint64_t dp_tracker_sketch_dropped(const struct dp_tracker *t) {
        return t ? t->sketch.dropped : 0;
}

uint64_t dp_tracker_split_failures(const struct dp_tracker *t) {
        return t ? t->split_failures : 0;
}
