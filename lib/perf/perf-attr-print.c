/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "macro.h"
#include "perf-attr-print.h"

#define ATTR_RULE "------------------------------------------------------------"

struct bit_name {
        uint64_t bit;
        const char *name;
};

/* perf's own names, in bit order (p_sample_type(), p_read_format()). */
static const struct bit_name sample_type_names[] = {
        { PERF_SAMPLE_IP, "IP" },
        { PERF_SAMPLE_TID, "TID" },
        { PERF_SAMPLE_TIME, "TIME" },
        { PERF_SAMPLE_ADDR, "ADDR" },
        { PERF_SAMPLE_READ, "READ" },
        { PERF_SAMPLE_CALLCHAIN, "CALLCHAIN" },
        { PERF_SAMPLE_ID, "ID" },
        { PERF_SAMPLE_CPU, "CPU" },
        { PERF_SAMPLE_PERIOD, "PERIOD" },
        { PERF_SAMPLE_STREAM_ID, "STREAM_ID" },
        { PERF_SAMPLE_RAW, "RAW" },
        { PERF_SAMPLE_BRANCH_STACK, "BRANCH_STACK" },
        { PERF_SAMPLE_REGS_USER, "REGS_USER" },
        { PERF_SAMPLE_STACK_USER, "STACK_USER" },
        { PERF_SAMPLE_WEIGHT, "WEIGHT" },
        { PERF_SAMPLE_DATA_SRC, "DATA_SRC" },
        { PERF_SAMPLE_IDENTIFIER, "IDENTIFIER" },
        { PERF_SAMPLE_TRANSACTION, "TRANSACTION" },
        { PERF_SAMPLE_REGS_INTR, "REGS_INTR" },
        { PERF_SAMPLE_PHYS_ADDR, "PHYS_ADDR" },
        { PERF_SAMPLE_AUX, "AUX" },
        { PERF_SAMPLE_CGROUP, "CGROUP" },
        { PERF_SAMPLE_DATA_PAGE_SIZE, "DATA_PAGE_SIZE" },
        { PERF_SAMPLE_CODE_PAGE_SIZE, "CODE_PAGE_SIZE" },
        { PERF_SAMPLE_WEIGHT_STRUCT, "WEIGHT_STRUCT" },
};

static const struct bit_name read_format_names[] = {
        { PERF_FORMAT_TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED" },
        { PERF_FORMAT_TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING" },
        { PERF_FORMAT_ID, "ID" },
        { PERF_FORMAT_GROUP, "GROUP" },
        { PERF_FORMAT_LOST, "LOST" },
};

static const char *bits_names(uint64_t value, const struct bit_name *names, size_t n, char *buf, size_t size) {
        size_t used = 0;

        buf[0] = '\0';
        for (size_t i = 0; i < n; i++)
                if (value & names[i].bit) {
                        used += (size_t) snprintf(buf + DP_MIN(used, size), size - DP_MIN(used, size), "%s%s",
                                                  used ? "|" : "", names[i].name);
                        value &= ~names[i].bit;
                }
        if (value)
                snprintf(buf + DP_MIN(used, size), size - DP_MIN(used, size), "%s%#" PRIx64, used ? "|" : "",
                         value);
        return buf;
}

const char *dp_perf_sample_type_names(uint64_t sample_type, char *buf, size_t size) {
        return bits_names(sample_type, sample_type_names, DP_ARRAY_SIZE(sample_type_names), buf, size);
}

const char *dp_perf_read_format_names(uint64_t read_format, char *buf, size_t size) {
        return bits_names(read_format, read_format_names, DP_ARRAY_SIZE(read_format_names), buf, size);
}

static void print_u(FILE *f, const char *name, uint64_t v) {
        if (v)
                fprintf(f, "  %-32s %" PRIu64 "\n", name, v);
}

static void print_x(FILE *f, const char *name, uint64_t v) {
        if (v)
                fprintf(f, "  %-32s %#" PRIx64 "\n", name, v);
}

/* The one-bit flags, in perf's order. */
static void print_flags(FILE *f, const struct perf_event_attr *a) {
        const struct {
                const char *name;
                uint64_t v;
        } flags[] = {
                { "disabled", a->disabled }, { "inherit", a->inherit }, { "pinned", a->pinned },
                { "exclusive", a->exclusive }, { "exclude_user", a->exclude_user },
                { "exclude_kernel", a->exclude_kernel }, { "exclude_hv", a->exclude_hv },
                { "exclude_idle", a->exclude_idle }, { "mmap", a->mmap }, { "comm", a->comm },
                { "freq", a->freq }, { "inherit_stat", a->inherit_stat }, { "enable_on_exec", a->enable_on_exec },
                { "task", a->task }, { "watermark", a->watermark }, { "precise_ip", a->precise_ip },
                { "mmap_data", a->mmap_data }, { "sample_id_all", a->sample_id_all },
                { "exclude_host", a->exclude_host }, { "exclude_guest", a->exclude_guest },
                { "exclude_callchain_kernel", a->exclude_callchain_kernel },
                { "exclude_callchain_user", a->exclude_callchain_user }, { "mmap2", a->mmap2 },
                { "comm_exec", a->comm_exec }, { "use_clockid", a->use_clockid },
                { "context_switch", a->context_switch }, { "write_backward", a->write_backward },
                { "namespaces", a->namespaces }, { "ksymbol", a->ksymbol }, { "bpf_event", a->bpf_event },
                { "aux_output", a->aux_output }, { "cgroup", a->cgroup }, { "text_poke", a->text_poke },
                { "build_id", a->build_id }, { "inherit_thread", a->inherit_thread },
                { "remove_on_exec", a->remove_on_exec }, { "sigtrap", a->sigtrap },
        };

        for (size_t i = 0; i < DP_ARRAY_SIZE(flags); i++)
                print_u(f, flags[i].name, flags[i].v);
}

int dp_perf_attr_fprint(FILE *f, const struct perf_event_attr *a) {
        char names[512];

        fprintf(f, "%s\nperf_event_attr:\n", ATTR_RULE);
        print_u(f, "type", a->type);
        print_u(f, "size", a->size);
        print_x(f, "config", a->config);
        print_u(f, "{ sample_period, sample_freq }", a->sample_period);
        if (a->sample_type)
                fprintf(f, "  %-32s %s\n", "sample_type",
                        dp_perf_sample_type_names(a->sample_type, names, sizeof(names)));
        if (a->read_format)
                fprintf(f, "  %-32s %s\n", "read_format",
                        dp_perf_read_format_names(a->read_format, names, sizeof(names)));
        print_flags(f, a);
        print_u(f, "{ wakeup_events, wakeup_watermark }", a->wakeup_events);
        print_u(f, "bp_type", a->bp_type);
        print_x(f, "{ bp_addr, config1 }", a->config1);
        print_x(f, "{ bp_len, config2 }", a->config2);
        print_x(f, "branch_sample_type", a->branch_sample_type);
        print_x(f, "sample_regs_user", a->sample_regs_user);
        print_u(f, "sample_stack_user", a->sample_stack_user);
        if (a->clockid)
                fprintf(f, "  %-32s %" PRId32 "\n", "clockid", a->clockid);
        print_x(f, "sample_regs_intr", a->sample_regs_intr);
        print_u(f, "aux_watermark", a->aux_watermark);
        print_u(f, "sample_max_stack", a->sample_max_stack);
        print_u(f, "aux_sample_size", a->aux_sample_size);
        print_u(f, "sig_data", a->sig_data);
        fprintf(f, "%s\n", ATTR_RULE);
        return ferror(f) ? -EIO : 0;
}
