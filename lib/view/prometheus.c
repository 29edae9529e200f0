/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-state.h"
#include "macro.h"
#include "prometheus.h"

#define PREFIX "damon_perfd_"

static const char *const help_texts[_DP_STATS_VALUES_MAX] = {
        [DP_C_CREATE]       = "perf events opened (layer 1).",
        [DP_C_BIND]         = "perf rings mapped (layer 2).",
        [DP_C_ENABLE]       = "perf events enabled (layer 3).",
        [DP_C_CALLBACK]     = "Sample records seen = valid + null + addr_zero + kernel + inv_phys (layer 4).",
        [DP_C_VALID]        = "Sample records decoded with a usable address.",
        [DP_C_NULL]         = "Sample records malformed or without an address.",
        [DP_C_ADDR_ZERO]    = "Sample records with address 0.",
        [DP_C_KERNEL]       = "Sample records with a kernel address.",
        [DP_C_INV_PHYS]     = "Sample records without the physical address a physical target needs.",
        [DP_C_ENQUEUE]      = "Valid samples queued for the region tracker (layer 5).",
        [DP_C_OVERFLOW]     = "Valid samples dropped because the queue was full.",
        [DP_C_RING_PEAK]    = "Deepest queue occupancy seen, in samples.",
        [DP_C_LOST]         = "Samples the kernel reported lost in PERF_RECORD_LOST.",
        [DP_C_LOST_SAMPLES] = "Samples the kernel reported lost in PERF_RECORD_LOST_SAMPLES.",
        [DP_C_KERNEL_LOST]  = "The kernel's PERF_FORMAT_LOST count as last read.",
        [DP_C_THROTTLE]     = "PERF_RECORD_THROTTLE records.",
        [DP_C_UNTHROTTLE]   = "PERF_RECORD_UNTHROTTLE records.",
        [DP_C_BAD_RECORD]   = "Ring records or headers that were corrupt.",
        [DP_C_WAKEUP]       = "Reader passes over the perf ring.",
        [DP_C_DEQUEUE]      = "Samples taken from the queues (layer 6).",
        [DP_C_DRAIN]        = "Non-empty drains of the queues.",
        [DP_C_MATCH]        = "Samples attributed to a region (layer 7).",
        [DP_C_MISS_TGID]    = "Samples of a process that is not a target.",
        [DP_C_MISS_REGION]  = "Samples inside a target's bounds but in no region.",
        [DP_C_MISS_BOUND]   = "Samples outside a target's bounds.",
        [DP_C_UPDATE]       = "Region access increments, at most one per region and sampling interval.",
        [DP_C_AUX_TRUNCATED] = "AUX stretches flagged TRUNCATED: the kernel stopped the event until re-enabled.",
        [DP_C_AUX_PARTIAL]  = "AUX stretches flagged PARTIAL: they hold a damaged record.",
        [DP_C_AUX_COLLISION] = "AUX stretches flagged COLLISION: samples collided in the hardware.",
        [DP_C_SPE_BAD_BYTES] = "SPE bytes skipped to resynchronise on a packet boundary.",
        [DP_C_SPE_NO_DATA]  = "SPE records without a data address (branches, other operations).",
        [DP_STATS_IN_FLIGHT] = "Samples queued but not yet taken (enqueue - dequeue).",
};

int dp_prometheus_escape_label(const char *value, char **ret) {
        char *out, *p;

        if (!value || !ret)
                return -EINVAL;
        /* Every byte grows to at most two. */
        out = malloc(strlen(value) * 2 + 1);
        if (!out)
                return -ENOMEM;
        p = out;
        for (const char *s = value; *s; s++) {
                switch (*s) {
                case '\\':
                        p = stpcpy(p, "\\\\");
                        break;
                case '"':
                        p = stpcpy(p, "\\\"");
                        break;
                case '\n':
                        p = stpcpy(p, "\\n");
                        break;
                default:
                        *p++ = *s;
                }
        }
        *p = '\0';
        *ret = out;
        return 0;
}

char *dp_prometheus_metric_name(unsigned i, char *buf, size_t size) {
        const char *name = dp_stats_value_name(i);

        if (!name || !buf)
                return NULL;
        snprintf(buf, size, PREFIX "%s%s", name, dp_stats_value_is_level(i) ? "" : "_total");
        return buf;
}

/* HELP text escapes backslash and line feed (but not quotes). */
static void put_family(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s ", name);
        for (const char *s = help; *s; s++) {
                if (*s == '\\')
                        fputs("\\\\", f);
                else if (*s == '\n')
                        fputs("\\n", f);
                else
                        fputc(*s, f);
        }
        fprintf(f, "\n# TYPE %s %s\n", name, type);
}

/* A float sample value: Go's ParseFloat spellings for the non-finite ones. */
static void put_double(FILE *f, double v) {
        if (isnan(v))
                fputs("NaN", f);
        else if (isinf(v))
                fputs(v > 0 ? "+Inf" : "-Inf", f);
        else
                fprintf(f, "%.17g", v);
}

static int put_source_info(FILE *f, const struct dp_stats_reply *r) {
        _cleanup_free_ char *name = NULL, *pmu = NULL;
        int k;

        if ((k = dp_prometheus_escape_label(r->source_name, &name)) < 0 ||
            (k = dp_prometheus_escape_label(r->source_pmu, &pmu)) < 0)
                return k;
        put_family(f, PREFIX "source_info", "gauge",
                   "The sample source; hardware=\"false\" marks a software positive control, "
                   "not hardware memory-access sampling.");
        fprintf(f, PREFIX "source_info{name=\"%s\",pmu=\"%s\",hardware=\"%s\"} 1\n", name, pmu,
                r->source_hardware ? "true" : "false");
        return 0;
}

static bool is_known_state(const char *state) {
        for (int s = 0; s < _DP_CPU_STATE_MAX; s++)
                if (strcmp(dp_cpu_state_name(s), state) == 0)
                        return true;
        return false;
}

static int put_cpu_states(FILE *f, const struct dp_stats_reply *r) {
        put_family(f, PREFIX "cpu_state", "gauge", "The state of each CPU's sampler: 1 for the current state.");
        for (size_t i = 0; i < r->n_cpus; i++) {
                const struct dp_stats_reply_cpu *c = &r->cpus[i];

                for (int s = 0; s < _DP_CPU_STATE_MAX; s++)
                        fprintf(f, PREFIX "cpu_state{cpu=\"%" PRIi64 "\",state=\"%s\"} %d\n", c->cpu,
                                dp_cpu_state_name(s), strcmp(dp_cpu_state_name(s), c->state) == 0);
                /* A state this client does not know still shows, as its own series. */
                if (!is_known_state(c->state)) {
                        _cleanup_free_ char *state = NULL;
                        int k = dp_prometheus_escape_label(c->state, &state);

                        if (k < 0)
                                return k;
                        fprintf(f, PREFIX "cpu_state{cpu=\"%" PRIi64 "\",state=\"%s\"} 1\n", c->cpu, state);
                }
        }
        return 0;
}

int dp_prometheus_write_stats(FILE *f, const struct dp_stats_reply *r) {
        int k;

        if (!f || !r)
                return -EINVAL;
        k = put_source_info(f, r);
        if (k < 0)
                return k;

        put_family(f, PREFIX "uptime_seconds", "gauge", "Seconds since the daemon started.");
        fprintf(f, PREFIX "uptime_seconds %" PRIi64 ".%06" PRIi64 "\n", r->uptime_usec / 1000000,
                r->uptime_usec % 1000000);
        put_family(f, PREFIX "sample_rate", "gauge", "Valid samples per second over the last few seconds.");
        fputs(PREFIX "sample_rate ", f);
        put_double(f, r->sample_rate);
        fputc('\n', f);

        k = put_cpu_states(f, r);
        if (k < 0)
                return k;

        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++) {
                char name[64];

                dp_prometheus_metric_name(i, name, sizeof(name));
                put_family(f, name, dp_stats_value_is_level(i) ? "gauge" : "counter", help_texts[i]);
                for (size_t c = 0; c < r->n_cpus; c++)
                        fprintf(f, "%s{cpu=\"%" PRIi64 "\"} %" PRIi64 "\n", name, r->cpus[c].cpu,
                                r->cpus[c].values.v[i]);
        }
        return ferror(f) ? -EIO : 0;
}
