/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>

#include "report.h"

static void format_size(uint64_t bytes, char *buf, size_t size) {
        static const char units[] = "BKMGTP";
        double v = (double) bytes;
        unsigned u = 0;

        while (v >= 1024 && u < sizeof(units) - 2) {
                v /= 1024;
                u++;
        }
        snprintf(buf, size, u ? "%.1f%c" : "%.0f%c", v, units[u]);
}

void report_print(FILE *f, const struct dp_stats_view *view, const struct dp_tracker_snapshot *snap, unsigned top) {
        _cleanup_free_ struct dp_hot_region *hot = calloc(top, sizeof(*hot));
        uint32_t max_nr_accesses;
        size_t n;

        dp_stats_print(f, view);
        if (!snap || !hot)
                return;
        n = dp_snapshot_hottest(snap, top, hot);
        max_nr_accesses = snap->max_nr_accesses;
        fprintf(f, "hottest regions of %zu targets / %zu regions (rate: sampling intervals with an access per "
                   "aggregation, max %u):\n", snap->nr_targets, snap->nr_regions, max_nr_accesses);
        fprintf(f, "  %-8s %-18s %-18s %8s %7s %9s %5s\n", "target", "start", "end", "size", "rate", "samples", "age");
        for (size_t i = 0; i < n; i++) {
                const struct dp_snapshot_region *r = &hot[i].region;
                char size[16], target[16];

                format_size(r->end - r->start, size, sizeof(size));
                if (hot[i].tgid == 0)
                        snprintf(target, sizeof(target), "phys");
                else
                        snprintf(target, sizeof(target), "%u", hot[i].tgid);
                char samples[24] = "-";        /* not known: never a share by size */

                if (!(r->unknown & DP_REGION_LAST_SAMPLES_UNKNOWN))
                        snprintf(samples, sizeof(samples), "%llu", (unsigned long long) r->last_nr_samples);
                fprintf(f, "  %-8s 0x%016llx 0x%016llx %8s %3u/%-3u %9s %5u\n", target,
                        (unsigned long long) r->start, (unsigned long long) r->end, size, r->last_nr_accesses,
                        max_nr_accesses, samples, r->age);
        }
        fputc('\n', f);
}

json_t *report_region_samples(const struct dp_snapshot_region *r) {
        if (r->unknown & DP_REGION_LAST_SAMPLES_UNKNOWN)
                return json_null();
        return json_integer((json_int_t) r->last_nr_samples);
}

int report_write_json(FILE *f, const struct dp_stats_view *view, const struct dp_tracker_snapshot *snap,
                      unsigned top) {
        _cleanup_free_ struct dp_hot_region *hot = calloc(top, sizeof(*hot));
        json_t *doc = dp_stats_to_json(view), *regions = json_array();
        size_t nr_targets = 0, nr_regions = 0, n = 0;
        uint32_t max_nr_accesses = 0;
        int r = 0;

        if (!doc || !regions || !hot) {
                r = -ENOMEM;
                goto out;
        }
        if (snap) {
                n = dp_snapshot_hottest(snap, top, hot);
                max_nr_accesses = snap->max_nr_accesses;
                nr_targets = snap->nr_targets;
                nr_regions = snap->nr_regions;
        }
        for (size_t i = 0; i < n; i++) {
                const struct dp_snapshot_region *reg = &hot[i].region;

                json_array_append_new(regions, json_pack("{s:I,s:I,s:I,s:i,s:i,s:o,s:i}",
                        "target", (json_int_t) hot[i].tgid,
                        "start", (json_int_t) reg->start,
                        "end", (json_int_t) reg->end,
                        "nr_accesses", (int) reg->last_nr_accesses,
                        "max_nr_accesses", (int) max_nr_accesses,
                        "samples", report_region_samples(reg),
                        "age", (int) reg->age));
        }
        json_object_set_new(doc, "nr_targets", json_integer((json_int_t) nr_targets));
        json_object_set_new(doc, "nr_regions", json_integer((json_int_t) nr_regions));
        json_object_set(doc, "hottest", regions);
        if (json_dumpf(doc, f, JSON_INDENT(2)) < 0 || fputc('\n', f) == EOF)
                r = -EIO;
out:
        json_decref(regions);
        json_decref(doc);
        return r;
}
