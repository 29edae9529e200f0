/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Replay of a `perf record` capture through the very same stages as live
 * sampling: each sample is decoded by the source, classified into the
 * sampling-layer counters and queued on its CPU's SPSC queue by the reader
 * stage; the queues are drained into the region tracker, whose intervals
 * follow the samples' own timestamps.
 *
 * A capture has no /proc to read, so targets come from the capture itself:
 * each process's (or, in paddr mode, the physical space's) bounds are the
 * 2 MiB chunks its samples touched; regions adapt inside them as usual.
 */

#include <stdbool.h>
#include <stddef.h>

#include "capture-source.h"
#include "counters.h"
#include "perf-data.h"
#include "ring-reader.h"
#include "source.h"
#include "tracker.h"

#define DP_REPLAY_CHUNK_SHIFT 21

struct dp_replay;

/* Called for every sample the tracker takes, with what it made of it. */
typedef void (*dp_replay_sample_fn)(const struct dp_sample *s, void *userdata);

/* The decode of kernel-filled fields only (ADDR, PHYS_ADDR, DATA_SRC,
 * WEIGHT), for events of no source we know; named "capture". */
extern const struct dp_source dp_replay_generic_source;

/* @source NULL: dp_replay_generic_source, right for page-fault, PEBS and
 * kernel-filled IBS captures alike.  It decodes every event that has no
 * source of its own (dp_replay_set_attr_source()). */
int dp_replay_new(const struct dp_source *source, struct dp_tracker *tracker, bool phys,
                  struct dp_replay **ret);
struct dp_replay *dp_replay_free(struct dp_replay *rp);

/* Decodes the records of attr @index with @source (NULL: the replay's own).
 * A source with an AUX format (ARM SPE) takes the capture's AUX data.
 * Set before the first pass. */
int dp_replay_set_attr_source(struct dp_replay *rp, size_t index, const struct dp_source *source);

/* What the decoders may need of the machine that took the capture (copied;
 * NULL: nothing known), e.g. from dp_capture_source_context(). */
void dp_replay_set_source_context(struct dp_replay *rp, const struct dp_source_context *context);

/* Called by dp_replay_use_capture_sources() with each attr's choice. */
typedef void (*dp_replay_choice_fn)(size_t index, const struct dp_capture_choice *choice, void *userdata);

/* Every attr's source as dp_capture_choose() picks it, and the context the
 * capture's HEADER_CPUID gives.  Returns the first access event's source
 * (dp_replay_generic_source when it has none of its own) in *@ret_primary
 * (may be NULL); -ENOENT (and the generic source) for a capture without an
 * access event.  Malformed PMU mappings are no error: the choice is then
 * made without them, and its reason says so. */
int dp_replay_use_capture_sources(struct dp_replay *rp, const struct dp_perf_data *data, dp_replay_choice_fn fn,
                                  void *userdata, const struct dp_source **ret_primary);

void dp_replay_set_sample_hook(struct dp_replay *rp, dp_replay_sample_fn fn, void *userdata);

/* Every sample record's outcome at the reader stage (dp_ring_reader_set_observer()),
 * valid or not, in the order the readers file them: for per-sample views.
 * Set before the first pass. */
void dp_replay_set_observer(struct dp_replay *rp, dp_sample_observer_fn fn, void *userdata);

/* Called after every aggregation, with the tracker: its regions hold the
 * aggregation just completed (last_nr_accesses, last_nr_samples), which
 * ended at dp_tracker_window_start_ns(). */
typedef void (*dp_replay_aggregation_fn)(const struct dp_tracker *tracker, void *userdata);

void dp_replay_set_aggregation_hook(struct dp_replay *rp, dp_replay_aggregation_fn fn, void *userdata);

/* Optional first pass: adds a target per process (or the physical space)
 * bounded by all the chunks its samples touched, in pid order until
 * max_targets.  Returns the number of targets added.  Without it,
 * dp_replay_run() adds and grows targets as their samples come (first come,
 * first served at max_targets): every valid sample is still accounted in its
 * process's bounds, in one pass over the file instead of two. */
int dp_replay_plan_targets(struct dp_replay *rp, struct dp_perf_data *data);

/* After dp_replay_plan_targets(): the target added with the most valid
 * samples (its tgid; 0 in paddr mode) and how many it has.  -ENOENT when
 * no target was added. */
int dp_replay_busiest_target(const struct dp_replay *rp, uint32_t *ret_tgid, uint64_t *ret_samples);

/* Every record through the pipeline.  0, or the reader's error for a
 * malformed file (everything before it is counted). */
int dp_replay_run(struct dp_replay *rp, struct dp_perf_data *data);

/* CPUs seen (1 + the highest CPU number), and one CPU's counters. */
size_t dp_replay_nr_cpus(const struct dp_replay *rp);
void dp_replay_counters(const struct dp_replay *rp, size_t cpu, struct dp_counter_values *out);
