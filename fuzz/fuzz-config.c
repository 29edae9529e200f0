/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Fuzz target for the damon-perfd.conf parser (Scheme= words included) and
 * the time-span parser.
 * Byte 0 bit 0 picks the mode: the input as raw file text, or each byte as a
 * token from a vocabulary of sections, keys, values and separators, so random
 * inputs reach every key's parser.
 *
 * Invariants: the parser returns 0 or -EINVAL (-ENOMEM aside), it returns
 * -EINVAL exactly when it reported an error, and an accepted configuration
 * printed with dp_config_format() parses back, silently, to the same settings
 * (field by field, and key by key as a reload compares them).
 * A time span that parses formats and parses back to the same value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-file.h"
#include "config-keys.h"
#include "time-util.h"
#include "macro.h"

#include "fuzz.h"


static const char *const tokens[] = {
        "\n", "\n", "\n", "=", " ", "#", ";", "[", "]", "\r", "\t",
        "[Sampling]\n", "[Tracking]\n", "[API]\n", "[DAMON]\n", "[Other]\n",
        "Source=", "CPUs=", "SamplePeriod=", "RingPages=", "QueueSize=", "PollIntervalSec=",
        "Targets=", "MaxTargets=", "MinRegions=", "MaxRegions=", "SampleIntervalSec=",
        "AggregationIntervalSec=", "MapsRefreshSec=", "Socket=", "SocketGroup=", "Unknown=",
        "auto", "ibs", "pebs", "spe", "pagefault", "event:", "all", "physical",
        "0", "1", "3", "7", "64", "128", "65536", "4294967296", "18446744073709551616", "-",
        "us", "ms", "s", "min", "h", "1s 500ms", ",", "0-3", "/run/x", "wheel",
        "Mode=", "SysfsRoot=", "StateFile=", "Kdamond=", "Context=", "HintIntervalSec=", "QuotaGoal=",
        "QuotaGoalTarget=", "own", "attach", "off", "none", "hot-fraction", "/sys/kernel/mm/damon/admin",
        "/a/../b", "2500", "10000", "10001",
        /* [DAMON] Scheme= (index 78 on) */
        "Scheme=", "pageout", "age=", "migrate_hot", "nr_accesses=", "sz=", "max", "%", "target_nid=",
        "quota_bytes=", "quota_reset=", "allow=", "reject=", "hot", "!anon", "memcg:/a", "addr:0x1000-0x2000",
        "goal=hot_fraction:", "wmarks=free_mem_rate:5s:500:400:200", "weights=1,2,3", "goal=node_mem_used_bp:1:0",
        "0%-max", "10s-max", "4K", "quota_ms=", "lru_prio", "stat", "target:0", "young", "node_mem_free_bp",
        "node:0", "!node:1",
};

struct counts {
        size_t errors;
};

static void count(enum dp_config_severity severity, const char *message, void *userdata) {
        struct counts *c = userdata;

        CHECK(message && *message);
        if (severity == DP_CONFIG_ERROR)
                c->errors++;
}

static void same(const struct dp_config *a, const struct dp_config *b) {
        CHECK(strcmp(a->source, b->source) == 0);
        CHECK(strcmp(a->cpus, b->cpus) == 0);
        CHECK(a->sample_period == b->sample_period);
        CHECK(a->ring_pages == b->ring_pages);
        CHECK(a->queue_capacity == b->queue_capacity);
        CHECK(a->poll_ms == b->poll_ms);
        CHECK(a->target_mode == b->target_mode);
        CHECK(a->n_pids == b->n_pids);
        CHECK(a->n_pids == 0 || memcmp(a->pids, b->pids, a->n_pids * sizeof(a->pids[0])) == 0);
        CHECK(a->max_targets == b->max_targets);
        CHECK(a->min_nr_regions == b->min_nr_regions);
        CHECK(a->max_nr_regions == b->max_nr_regions);
        CHECK(a->sample_interval_us == b->sample_interval_us);
        CHECK(a->aggr_interval_us == b->aggr_interval_us);
        CHECK(a->maps_refresh_us == b->maps_refresh_us);
        CHECK(a->damon_mode == b->damon_mode);
        CHECK(strcmp(a->damon_root, b->damon_root) == 0);
        CHECK(strcmp(a->damon_state_file, b->damon_state_file) == 0);
        CHECK(a->damon_kdamond == b->damon_kdamond);
        CHECK(a->damon_context == b->damon_context);
        CHECK(a->damon_hint_interval_us == b->damon_hint_interval_us);
        CHECK(a->damon_max_targets == b->damon_max_targets);
        CHECK(a->damon_goal == b->damon_goal);
        CHECK(a->damon_goal_target == b->damon_goal_target);
        CHECK(a->damon_n_schemes == b->damon_n_schemes);
        CHECK(!dp_config_key_differs(dp_config_key_find("DAMON", "Scheme"), a, b));
        CHECK(strcmp(a->api_socket, b->api_socket) == 0);
        CHECK(strcmp(a->api_socket_group, b->api_socket_group) == 0);
}

static void fuzz_parse(const char *text, size_t size) {
        struct counts n = {};
        struct dp_config c, back;
        char *printed = NULL;
        size_t printed_size = 0;
        FILE *f;
        int r;

        dp_config_defaults(&c);
        r = dp_config_parse_text(&c, text, size, "fuzz.conf", count, &n);
        if (r == -ENOMEM)
                return;
        CHECK(r == 0 || r == -EINVAL);
        CHECK((r == 0) == (n.errors == 0));
        if (r < 0)
                return;

        f = open_memstream(&printed, &printed_size);
        if (!f)
                return;
        CHECK(dp_config_format(&c, f) == 0);
        fclose(f);
        dp_config_defaults(&back);
        r = dp_config_parse_text(&back, printed, printed_size, "printed", count, &n);
        CHECK(r == 0 && n.errors == 0);
        same(&c, &back);
        free(printed);
}

static void fuzz_timespan(const uint8_t *data, size_t size) {
        char text[128], buf[128];
        uint64_t us, back;
        size_t n = DP_MIN(size, sizeof(text) - 1);

        memcpy(text, data, n);
        text[n] = '\0';
        if (dp_timespan_parse(text, &us) < 0)
                return;
        CHECK(dp_timespan_format(us, buf, sizeof(buf)) == 0);
        CHECK(dp_timespan_parse(buf, &back) == 0 && back == us);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text;
        size_t len = 0, room = 1;

        if (size < 1)
                return 0;
        fuzz_timespan(data + 1, size - 1);
        if (!(data[0] & 1)) {
                fuzz_parse((const char *) data + 1, size - 1);
                return 0;
        }
        /* Room for the tokens as they are, whatever their length. */
        for (size_t i = 1; i < size; i++)
                room += strlen(tokens[data[i] % DP_ARRAY_SIZE(tokens)]);
        text = malloc(room);
        if (!text)
                return 0;
        for (size_t i = 1; i < size; i++) {
                const char *t = tokens[data[i] % DP_ARRAY_SIZE(tokens)];
                size_t k = strlen(t);

                memcpy(text + len, t, k);
                len += k;
        }
        fuzz_parse(text, len);
        free(text);
        return 0;
}
