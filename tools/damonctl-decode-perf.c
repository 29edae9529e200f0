/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * damonctl decode --format=perf.data: a `perf record` capture sample by
 * sample, as the daemon's replay sees it.  The capture goes through the very
 * replay `damon-perfd --replay` runs (lib/replay: the source each event's PMU
 * names, the capture's CPUID for errata, AUX data for SPE) with an observer
 * on the reader stage, which is told of every sample record, valid or not,
 * with the layer-4 counter it went to.  One line per sample: pid/tid, CPU,
 * time, address, physical address, weight (our latency), level, load/store,
 * counter, and data_src the way `perf script -F data_src` prints it; --json:
 * one object per sample (IBS RAW samples with every register field), then a
 * summary.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "data-src-format.h"
#include "decode-ibs.h"
#include "macro.h"
#include "mem-level.h"
#include "replay.h"
#include "tracker.h"
#include "damonctl.h"
#include "damonctl-decode.h"

struct perf_view {
        FILE *out;
        bool json;
        struct dp_source_context context;       /* what the capture's CPUID says (IBS errata) */
        uint64_t samples;
        uint64_t by_counter[_DP_C_MAX];
        bool out_of_memory;
};

/* What is known of one sample record, decoded or not. */
struct view_row {
        const char *source;
        uint32_t pid, tid, cpu;
        uint64_t time;
        bool have_addr;
        uint64_t addr;
        const struct dp_sample *s;      /* NULL: the decoder made nothing of it */
        bool have_ibs;
        struct dp_ibs_op_fields ibs;
};

/* The record's own fields, for records the decoder refused too. */
static void row_from_record(struct perf_view *v, const struct dp_sample_outcome *o, struct view_row *row) {
        struct dp_perf_sample ps;
        const struct dp_perf_sample *p = o->parsed;
        struct dp_ibs_op_regs regs;

        if (!p && o->record && dp_perf_parse_sample(o->layout, o->record, o->record->size, &ps) == 0)
                p = &ps;
        if (!p)
                return;
        row->pid = p->pid;
        row->tid = p->tid;
        row->time = p->time;
        if (p->present & PERF_SAMPLE_CPU)
                row->cpu = p->cpu;
        if (p->present & PERF_SAMPLE_ADDR) {
                row->have_addr = true;
                row->addr = p->addr;
        }
        if (o->source == &dp_source_ibs && (p->present & PERF_SAMPLE_RAW) &&
            dp_ibs_op_parse_raw(p->raw, p->raw_size, &regs) == 0) {
                dp_ibs_op_decode_regs(&regs, &v->context.ibs_cpu, &row->ibs);
                row->have_ibs = true;
        }
}

static const char *op_name(const struct dp_sample *s) {
        const uint16_t both = DP_SAMPLE_LOAD | DP_SAMPLE_STORE;

        if (!s)
                return NULL;
        /* IBS can flag an op both (LdOp and StOp: a read-modify-write). */
        if ((s->flags & both) == both)
                return "load+store";
        return (s->flags & DP_SAMPLE_STORE) ? "store" : (s->flags & DP_SAMPLE_LOAD) ? "load" : NULL;
}

static void print_row(struct perf_view *v, const struct view_row *row, enum dp_counter outcome) {
        const struct dp_sample *s = row->s;
        char text[DP_DATA_SRC_TEXT_MAX];

        fprintf(v->out, "%7" PRIu32 "/%-7" PRIu32 " [%03" PRIu32 "] %5" PRIu64 ".%09" PRIu64 " %-8s", row->pid,
                row->tid, row->cpu, row->time / 1000000000, row->time % 1000000000, row->source);
        if (!s) {
                if (row->have_addr)
                        fprintf(v->out, " addr=0x%" PRIx64, row->addr);
                fprintf(v->out, " %s: the decoder made no sample of it\n", dp_counter_name(outcome));
                return;
        }
        fprintf(v->out, " addr=0x%" PRIx64, s->vaddr);
        if (s->flags & DP_SAMPLE_PHYS_VALID)
                fprintf(v->out, " phys=0x%" PRIx64, s->paddr);
        else
                fputs(" phys=-", v->out);
        fprintf(v->out, " weight=%" PRIu32 " level=%s %s %s", s->latency, dp_mem_level_name(dp_sample_level(s)),
                op_name(s) ?: "-", dp_counter_name(outcome));
        (void) dp_data_src_format(s->data_src, text, sizeof(text));
        fprintf(v->out, " data_src=0x%" PRIx64 " %s\n", s->data_src, text);
}

static json_t *row_json(const struct view_row *row, enum dp_counter outcome) {
        const struct dp_sample *s = row->s;
        char text[DP_DATA_SRC_TEXT_MAX];
        json_t *o;

        if (s)
                (void) dp_data_src_format(s->data_src, text, sizeof(text));
        o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:s}",
                      "type", "sample",
                      "source", row->source,
                      "pid", (json_int_t) row->pid,
                      "tid", (json_int_t) row->tid,
                      "cpu", (json_int_t) row->cpu,
                      "time", (json_int_t) row->time,
                      "counter", dp_counter_name(outcome));
        if (!o)
                return NULL;
        if (s) {
                json_t *more = json_pack("{s:o, s:o?, s:o, s:s, s:I, s:s, s:s?}",
                                         "addr", decode_json_hex(s->vaddr),
                                         "phys_addr", (s->flags & DP_SAMPLE_PHYS_VALID) ? decode_json_hex(s->paddr)
                                                                                        : NULL,
                                         "data_src", decode_json_hex(s->data_src),
                                         "data_src_text", text,
                                         "weight", (json_int_t) s->latency,
                                         "level", dp_mem_level_name(dp_sample_level(s)),
                                         "op", op_name(s));

                if (!more || json_object_update(o, more) < 0)
                        json_decref(DP_TAKE_PTR(o));
                json_decref(more);
        } else if (row->have_addr && json_object_set_new(o, "addr", decode_json_hex(row->addr)) < 0)
                json_decref(DP_TAKE_PTR(o));
        if (o && row->have_ibs && json_object_set_new(o, "ibs", decode_ibs_fields_json(&row->ibs)) < 0)
                json_decref(DP_TAKE_PTR(o));
        return o;
}

static void on_outcome(const struct dp_sample_outcome *o, void *userdata) {
        struct perf_view *v = userdata;
        struct view_row row = {
                .source = o->source ? o->source->name : "?",
                .s = o->sample,
        };
        json_t *j;

        if (o->spe_context) {
                row.pid = o->spe_context->pid;
                row.tid = o->spe_context->tid;
                row.cpu = o->spe_context->cpu;
                row.time = o->spe_context->time;
        } else
                row_from_record(v, o, &row);
        /* The decoder's word on who and when, where it made a sample. */
        if (o->sample) {
                row.pid = o->sample->pid;
                row.tid = o->sample->tid;
                row.cpu = o->sample->cpu;
                row.time = o->sample->time;
        }
        v->samples++;
        v->by_counter[o->outcome]++;
        if (!v->json) {
                print_row(v, &row, o->outcome);
                return;
        }
        j = row_json(&row, o->outcome);
        if (!j) {
                v->out_of_memory = true;
                return;
        }
        (void) json_dumpf(j, v->out, JSON_COMPACT);
        fputc('\n', v->out);
        json_decref(j);
}

static void on_choice(size_t index, const struct dp_capture_choice *choice, void *userdata) {
        struct perf_view *v = userdata;

        if (!v->json)
                fprintf(v->out, "# event %zu: %s\n", index, choice->reason);
}

static void print_summary(struct perf_view *v, const char *path, int run) {
        static const enum dp_counter counters[] = { DP_C_VALID, DP_C_NULL, DP_C_ADDR_ZERO, DP_C_KERNEL,
                                                    DP_C_INV_PHYS };

        if (v->json) {
                json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:s?}", "type", "summary", "format", "perf.data",
                                      "input", path, "samples", (json_int_t) v->samples,
                                      "error", run < 0 ? strerror(-run) : NULL);

                for (size_t i = 0; o && i < DP_ARRAY_SIZE(counters); i++)
                        if (json_object_set_new(o, dp_counter_name(counters[i]),
                                                json_integer((json_int_t) v->by_counter[counters[i]])) < 0)
                                json_decref(DP_TAKE_PTR(o));
                if (!o) {
                        v->out_of_memory = true;
                        return;
                }
                (void) json_dumpf(o, v->out, JSON_COMPACT);
                fputc('\n', v->out);
                json_decref(o);
                return;
        }
        fprintf(v->out, "# %" PRIu64 " samples:", v->samples);
        for (size_t i = 0; i < DP_ARRAY_SIZE(counters); i++)
                fprintf(v->out, " %s %" PRIu64, dp_counter_name(counters[i]), v->by_counter[counters[i]]);
        fputc('\n', v->out);
}

int decode_perf_data(const char *path, bool json) {
        _cleanup_perf_data_ struct dp_perf_data *data = NULL;
        _cleanup_tracker_ struct dp_tracker *tracker = NULL;
        struct perf_view v = { .out = stdout, .json = json };
        struct dp_tracker_config tc;
        struct dp_perf_cpuid cpuid;
        struct dp_replay *rp = NULL;
        int r, run;

        r = dp_perf_data_open(path, &data);
        if (r < 0) {
                fprintf(stderr, "%s: not a readable perf.data capture: %s\n", path, strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        dp_tracker_config_init(&tc);
        r = dp_tracker_new(&tc, &tracker);
        if (r >= 0)
                r = dp_replay_new(NULL, tracker, false, &rp);
        if (!json && r >= 0)
                fprintf(v.out, "# decode --format=perf.data: %s\n", path);
        /* Each event decoded by its PMU's source, as damon-perfd --replay does. */
        if (r >= 0 && (r = dp_replay_use_capture_sources(rp, data, on_choice, &v, NULL)) == -ENOENT)
                r = 0;
        if (r < 0) {
                dp_replay_free(rp);
                fprintf(stderr, "%s: setting up the replay: %s\n", path, strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        dp_capture_source_context(dp_perf_data_cpuid(data, &cpuid) == 0 ? &cpuid : NULL, &v.context);
        dp_replay_set_observer(rp, on_outcome, &v);
        run = dp_replay_run(rp, data);
        dp_replay_free(rp);
        print_summary(&v, path, run);

        if (v.out_of_memory) {
                fputs("out of memory\n", stderr);
                return CTL_EXIT_FAILURE;
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "writing to stdout: %s\n", strerror(errno ?: EIO));
                return CTL_EXIT_FAILURE;
        }
        if (run < 0) {
                fprintf(stderr, "%s: damaged after %" PRIu64 " samples: %s\n", path, v.samples, strerror(-run));
                return CTL_EXIT_DAMAGED;
        }
        return CTL_EXIT_OK;
}
