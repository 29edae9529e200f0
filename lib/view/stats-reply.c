/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-state.h"
#include "macro.h"
#include "stats-reply.h"
#include "table.h"

const char *dp_stats_value_name(unsigned i) {
        if (i == DP_STATS_IN_FLIGHT)
                return "in_flight";
        return dp_counter_name((enum dp_counter) i);
}

bool dp_stats_value_is_level(unsigned i) {
        return i == DP_STATS_IN_FLIGHT || dp_counter_is_level((enum dp_counter) i);
}

static int bad(char *error, size_t error_size, const char *format, ...) __attribute__((format(printf, 3, 4)));
static int bad(char *error, size_t error_size, const char *format, ...) {
        va_list ap;

        if (error && error_size > 0) {
                va_start(ap, format);
                vsnprintf(error, error_size, format, ap);
                va_end(ap);
        }
        return -EBADMSG;
}

static int get_string(json_t *o, const char *where, const char *key, const char **ret, char *error,
                      size_t error_size) {
        json_t *v = json_object_get(o, key);

        if (!json_is_string(v))
                return bad(error, error_size, "%s.%s: expected a string", where, key);
        *ret = json_string_value(v);
        return 0;
}

static int get_int(json_t *o, const char *where, const char *key, bool allow_negative, int64_t *ret,
                   char *error, size_t error_size) {
        json_t *v = json_object_get(o, key);

        if (!json_is_integer(v))
                return bad(error, error_size, "%s.%s: expected an integer", where, key);
        if (!allow_negative && json_integer_value(v) < 0)
                return bad(error, error_size, "%s.%s: negative (%" JSON_INTEGER_FORMAT ")", where, key,
                           json_integer_value(v));
        *ret = json_integer_value(v);
        return 0;
}

static int parse_values(json_t *o, const char *where, struct dp_stats_values *ret, char *error,
                        size_t error_size) {
        int r;

        if (!json_is_object(o))
                return bad(error, error_size, "%s: expected an object", where);
        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++) {
                /* enqueue - dequeue of a torn snapshot may dip below zero; show it rather than fail. */
                r = get_int(o, where, dp_stats_value_name(i), i == DP_STATS_IN_FLIGHT, &ret->v[i], error,
                            error_size);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int get_names(json_t *o, const char *key, json_t **ret, char *error, size_t error_size) {
        json_t *a = json_object_get(o, key), *name;
        size_t i;

        if (!json_is_array(a))
                return bad(error, error_size, "capabilities.%s: expected an array of strings", key);
        json_array_foreach(a, i, name)
                if (!json_is_string(name))
                        return bad(error, error_size, "capabilities.%s[%zu]: expected a string", key, i);
        *ret = a;
        return 0;
}

/* Newer in the interface than the rest of the reply: absent is fine. */
static int parse_capabilities(json_t *params, struct dp_stats_reply *r, char *error, size_t error_size) {
        json_t *caps = json_object_get(params, "capabilities");
        int k;

        if (!caps)
                return 0;
        if (!json_is_object(caps))
                return bad(error, error_size, "capabilities: expected an object");
        if ((k = get_names(caps, "effective", &r->cap_effective, error, error_size)) < 0 ||
            (k = get_names(caps, "permitted", &r->cap_permitted, error, error_size)) < 0 ||
            (k = get_names(caps, "bounding", &r->cap_bounding, error, error_size)) < 0)
                return k;
        return 0;
}

int dp_stats_reply_parse(json_t *params, struct dp_stats_reply *ret, char *error, size_t error_size) {
        struct dp_stats_reply r = {};
        json_t *source, *rate, *cpus, *entry;
        size_t i;
        int k;

        if (!params || !ret)
                return -EINVAL;
        if (!json_is_object(params))
                return bad(error, error_size, "GetStats reply: expected an object");
        source = json_object_get(params, "source");
        if (!json_is_object(source))
                return bad(error, error_size, "source: expected an object");
        if ((k = get_string(source, "source", "name", &r.source_name, error, error_size)) < 0 ||
            (k = get_string(source, "source", "pmu", &r.source_pmu, error, error_size)) < 0 ||
            (k = get_string(source, "source", "description", &r.source_description, error, error_size)) < 0)
                return k;
        if (!json_is_boolean(json_object_get(source, "hardware")))
                return bad(error, error_size, "source.hardware: expected a boolean");
        r.source_hardware = json_is_true(json_object_get(source, "hardware"));
        /* Newer in the interface than the rest of Source: absent is fine, anything else must be a string. */
        if (json_object_get(source, "reason") &&
            (k = get_string(source, "source", "reason", &r.source_reason, error, error_size)) < 0)
                return k;
        k = get_int(params, "GetStats", "uptime_usec", false, &r.uptime_usec, error, error_size);
        if (k < 0)
                return k;
        rate = json_object_get(params, "sample_rate");
        if (!json_is_number(rate))
                return bad(error, error_size, "GetStats.sample_rate: expected a number");
        r.sample_rate = json_number_value(rate);
        k = parse_values(json_object_get(params, "totals"), "totals", &r.totals, error, error_size);
        if (k < 0)
                return k;
        k = parse_capabilities(params, &r, error, error_size);
        if (k < 0)
                return k;

        cpus = json_object_get(params, "cpus");
        if (!json_is_array(cpus))
                return bad(error, error_size, "cpus: expected an array");
        r.n_cpus = json_array_size(cpus);
        r.cpus = calloc(DP_MAX(r.n_cpus, 1u), sizeof(*r.cpus));
        if (!r.cpus)
                return -ENOMEM;
        json_array_foreach(cpus, i, entry) {
                struct dp_stats_reply_cpu *c = &r.cpus[i];
                char where[64];

                snprintf(where, sizeof(where), "cpus[%zu]", i);
                if (!json_is_object(entry))
                        k = bad(error, error_size, "%s: expected an object", where);
                else if ((k = get_int(entry, where, "cpu", false, &c->cpu, error, error_size)) >= 0 &&
                         (k = get_string(entry, where, "state", &c->state, error, error_size)) >= 0) {
                        snprintf(where, sizeof(where), "cpus[%zu].counters", i);
                        k = parse_values(json_object_get(entry, "counters"), where, &c->values, error,
                                         error_size);
                }
                if (k < 0) {
                        free(r.cpus);
                        return k;
                }
        }
        r.doc = json_incref(params);
        *ret = r;
        return 0;
}

void dp_stats_reply_done(struct dp_stats_reply *r) {
        if (!r)
                return;
        free(r->cpus);
        json_decref(r->doc);
        *r = (struct dp_stats_reply) {};
}

void dp_stats_values_to_counters(const struct dp_stats_values *v, struct dp_counter_values *out) {
        for (unsigned i = 0; i < _DP_C_MAX; i++)
                out->v[i] = (uint64_t) v->v[i];
}

/* True when a count in @cur is below the same count in @prev. */
static bool counts_went_back(const struct dp_stats_values *prev, const struct dp_stats_values *cur) {
        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++)
                if (!dp_stats_value_is_level(i) && cur->v[i] < prev->v[i])
                        return true;
        return false;
}

static void rates_of(const struct dp_stats_values *prev, const struct dp_stats_values *cur, double seconds,
                     double *out) {
        for (unsigned i = 0; i < _DP_STATS_VALUES_MAX; i++) {
                if (dp_stats_value_is_level(i))
                        out[i] = (double) cur->v[i];
                else if (seconds <= 0)
                        out[i] = 0;
                else
                        out[i] = (double) (cur->v[i] - (prev ? prev->v[i] : 0)) / seconds;
        }
}

static const struct dp_stats_reply_cpu *find_cpu(const struct dp_stats_reply *r, int64_t cpu) {
        for (size_t i = 0; i < r->n_cpus; i++)
                if (r->cpus[i].cpu == cpu)
                        return &r->cpus[i];
        return NULL;
}

int dp_stats_rates_compute(const struct dp_stats_reply *prev, const struct dp_stats_reply *cur,
                           struct dp_stats_rates *ret) {
        struct dp_stats_rates rates = {};
        double since_start;

        if (!cur || !ret)
                return -EINVAL;
        since_start = (double) cur->uptime_usec / 1e6;
        if (prev && (cur->uptime_usec < prev->uptime_usec || counts_went_back(&prev->totals, &cur->totals))) {
                rates.restarted = true;
                prev = NULL;
        }
        rates.since_start = !prev;
        rates.seconds = prev ? (double) (cur->uptime_usec - prev->uptime_usec) / 1e6 : since_start;
        rates_of(prev ? &prev->totals : NULL, &cur->totals, rates.seconds, rates.total);

        rates.n_cpus = cur->n_cpus;
        rates.cpus = calloc(DP_MAX(cur->n_cpus, 1u), sizeof(*rates.cpus));
        if (!rates.cpus)
                return -ENOMEM;
        for (size_t i = 0; i < cur->n_cpus; i++) {
                const struct dp_stats_reply_cpu *c = &cur->cpus[i];
                const struct dp_stats_reply_cpu *p = prev ? find_cpu(prev, c->cpu) : NULL;

                if (p && counts_went_back(&p->values, &c->values))
                        p = NULL;
                rates.cpus[i].cpu = c->cpu;
                rates.cpus[i].state = c->state;
                rates_of(p ? &p->values : NULL, &c->values, p ? rates.seconds : since_start, rates.cpus[i].v);
        }
        *ret = rates;
        return 0;
}

void dp_stats_rates_done(struct dp_stats_rates *r) {
        if (!r)
                return;
        free(r->cpus);
        *r = (struct dp_stats_rates) {};
}

char *dp_format_rate(double rate, char *buf, size_t size) {
        /* Whole numbers from 100 on; one decimal below, except an idle 0. */
        snprintf(buf, size, rate >= 100 || rate <= -100 || rate == 0 ? "%.0f" : "%.1f", rate);
        return buf;
}

/* The table's rows: the seven layers, then the AUX (SPE) reader's counters,
 * each with its values in interface order. */
static const struct {
        const char *layer;
        unsigned n;
        unsigned values[10];
} layers[] = {
        { "1 create",   1,  { DP_C_CREATE } },
        { "2 bind",     1,  { DP_C_BIND } },
        { "3 enable",   1,  { DP_C_ENABLE } },
        { "4 sampling", 6,  { DP_C_CALLBACK, DP_C_VALID, DP_C_NULL, DP_C_ADDR_ZERO, DP_C_KERNEL, DP_C_INV_PHYS } },
        { "5 ring",     10, { DP_C_ENQUEUE, DP_C_OVERFLOW, DP_C_RING_PEAK, DP_C_LOST, DP_C_LOST_SAMPLES,
                              DP_C_KERNEL_LOST, DP_C_THROTTLE, DP_C_UNTHROTTLE, DP_C_BAD_RECORD, DP_C_WAKEUP } },
        { "6 drain",    3,  { DP_C_DEQUEUE, DP_C_DRAIN, DP_STATS_IN_FLIGHT } },
        { "7 match",    5,  { DP_C_MATCH, DP_C_MISS_TGID, DP_C_MISS_REGION, DP_C_MISS_BOUND, DP_C_UPDATE } },
        { "aux",        5,  { DP_C_AUX_TRUNCATED, DP_C_AUX_PARTIAL, DP_C_AUX_COLLISION, DP_C_SPE_BAD_BYTES,
                              DP_C_SPE_NO_DATA } },
};

static char *format_value(const struct dp_stats_rates *rates, const double *rate_values,
                          const struct dp_stats_values *values, unsigned i, char *buf, size_t size) {
        if (rates && !dp_stats_value_is_level(i))
                return dp_format_rate(rate_values[i], buf, size);
        snprintf(buf, size, "%" PRIi64, values->v[i]);
        return buf;
}

static void format_uptime(int64_t usec, char *buf, size_t size) {
        int64_t s = usec / 1000000;

        if (s >= 86400)
                snprintf(buf, size, "%" PRIi64 "d %02" PRIi64 "h %02" PRIi64 "m", s / 86400, s / 3600 % 24,
                         s / 60 % 60);
        else if (s >= 3600)
                snprintf(buf, size, "%" PRIi64 "h %02" PRIi64 "m %02" PRIi64 "s", s / 3600, s / 60 % 60, s % 60);
        else if (s >= 60)
                snprintf(buf, size, "%" PRIi64 "m %02" PRIi64 "s", s / 60, s % 60);
        else
                snprintf(buf, size, "%.1fs", (double) usec / 1e6);
}

static int print_counter_table(FILE *f, const struct dp_stats_reply *r, const struct dp_stats_rates *rates) {
        static const char *const headers[] = { "layer", "counter", "total" };
        static const char *const rate_headers[] = { "layer", "counter", "per second" };
        _cleanup_table_ struct dp_table *t = NULL;
        int k;

        k = dp_table_new(rates ? rate_headers : headers, 3, &t);
        if (k < 0)
                return k;
        dp_table_set_align(t, 2, DP_TABLE_RIGHT);
        for (unsigned l = 0; l < DP_ARRAY_SIZE(layers); l++) {
                if (l > 0 && (k = dp_table_add_separator(t)) < 0)
                        return k;
                for (unsigned n = 0; n < layers[l].n; n++) {
                        unsigned i = layers[l].values[n];
                        char value[64];

                        if ((k = dp_table_add_cell(t, n == 0 ? layers[l].layer : "")) < 0 ||
                            (k = dp_table_add_cellf(t, "%s%s", dp_stats_value_name(i),
                                                    rates && dp_stats_value_is_level(i) ? " (level)" : "")) < 0 ||
                            (k = dp_table_add_cell(t, format_value(rates, rates ? rates->total : NULL, &r->totals,
                                                                   i, value, sizeof(value)))) < 0)
                                return k;
                }
        }
        return dp_table_write(t, DP_TABLE_BOX, f);
}

static void print_names(FILE *f, json_t *names) {
        json_t *name;
        size_t i;

        if (json_array_size(names) == 0)
                fputs("none", f);
        json_array_foreach(names, i, name)
                fprintf(f, "%s%s", i ? " " : "", json_string_value(name));
}

static void print_capabilities(FILE *f, const struct dp_stats_reply *r) {
        if (!r->cap_effective)
                return;
        fputs("capabilities: ", f);
        if (json_equal(r->cap_effective, r->cap_permitted) && json_equal(r->cap_effective, r->cap_bounding)) {
                print_names(f, r->cap_effective);
                fputs(" (effective = permitted = bounding)\n", f);
                return;
        }
        fputs("effective ", f);
        print_names(f, r->cap_effective);
        fputs("; permitted ", f);
        print_names(f, r->cap_permitted);
        fputs("; bounding ", f);
        print_names(f, r->cap_bounding);
        fputc('\n', f);
}

int dp_stats_reply_print(FILE *f, const struct dp_stats_reply *r, const struct dp_stats_rates *rates) {
        static const unsigned cpu_fields[] = { DP_C_CALLBACK, DP_C_ENQUEUE, DP_C_DEQUEUE, DP_C_OVERFLOW, DP_C_MATCH };
        static const char *const cpu_labels[] = { "cb", "enq", "deq", "ovf", "match" };
        char uptime[64], rate[32];
        size_t running = 0;
        int k;

        if (!f || !r || (rates && rates->n_cpus != r->n_cpus))
                return -EINVAL;
        for (size_t i = 0; i < r->n_cpus; i++)
                running += dp_cpu_state_from_name(r->cpus[i].state) == DP_CPU_RUNNING;

        fprintf(f, "source: %s on PMU %s", r->source_name, r->source_pmu);
        if (!r->source_hardware)
                fputs("  SOFTWARE POSITIVE CONTROL (not hardware access sampling)", f);
        fputc('\n', f);
        if (r->source_reason && r->source_reason[0])
                fprintf(f, "source choice: %s\n", r->source_reason);
        format_uptime(r->uptime_usec, uptime, sizeof(uptime));
        fprintf(f, "uptime: %s   sample rate: %s/s   CPUs running: %zu/%zu", uptime,
                dp_format_rate(r->sample_rate, rate, sizeof(rate)), running, r->n_cpus);
        if (rates)
                fprintf(f, rates->since_start ? "   per second since the daemon started (%.2fs)"
                                            : "   per second over %.2fs",
                        rates->seconds);
        fputc('\n', f);
        print_capabilities(f, r);

        k = print_counter_table(f, r, rates);
        if (k < 0)
                return k;

        for (size_t i = 0; i < r->n_cpus; i++) {
                const struct dp_stats_reply_cpu *c = &r->cpus[i];
                const double *rv = rates ? rates->cpus[i].v : NULL;
                char value[64], update[64];

                fprintf(f, "CPU%02" PRIi64 ": st=%-7s", c->cpu, dp_cpu_state_label_of(c->state));
                for (size_t j = 0; j < DP_ARRAY_SIZE(cpu_fields); j++)
                        fprintf(f, " %s=%s", cpu_labels[j],
                                format_value(rates, rv, &c->values, cpu_fields[j], value, sizeof(value)));
                if (rates)
                        dp_format_rate(rv[DP_C_MISS_TGID] + rv[DP_C_MISS_REGION] + rv[DP_C_MISS_BOUND], value,
                                       sizeof(value));
                else
                        snprintf(value, sizeof(value), "%" PRIi64,
                                 c->values.v[DP_C_MISS_TGID] + c->values.v[DP_C_MISS_REGION] +
                                         c->values.v[DP_C_MISS_BOUND]);
                fprintf(f, " miss=%s upd=%s\n", value,
                        format_value(rates, rv, &c->values, DP_C_UPDATE, update, sizeof(update)));
        }
        return ferror(f) ? -EIO : 0;
}
