/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A NUMA node's memory as physical address ranges, and the schemes' node
 * filters written as address filters over them. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config-scheme.h"
#include "damon-node.h"
#include "explain.h"
#include "fileio.h"
#include "macro.h"
#include "parse-util.h"

static int read_block_size(const char *sys_root, uint64_t *ret) {
        _cleanup_free_ char *text = NULL;
        char path[PATH_MAX];
        size_t len;
        int r;

        snprintf(path, sizeof(path), "%s/devices/system/memory/block_size_bytes", sys_root);
        r = dp_read_file(path, &text, &len);
        if (r == -ENOENT)
                return -ENODATA;        /* no memory block sysfs */
        if (r < 0)
                return r;
        text[strcspn(text, "\n")] = '\0';
        /* Hexadecimal without "0x", as the kernel prints it. */
        if (dp_parse_uint(text, 16, ret, NULL) < 0 || *ret == 0 || *ret > UINT64_MAX / 2)
                return -EBADMSG;
        return 0;
}

/* The index of a memoryN entry, or -1 for any other name. */
static long long block_index(const char *name) {
        uint64_t i;

        if (strncmp(name, "memory", 6) != 0 || dp_parse_u64_in(name + 6, 0, INT64_MAX, &i) < 0)
                return -1;
        return (long long) i;
}

/* The memoryN entries of @d as the byte ranges of their @size blocks, in
 * readdir's order, into *@ret. */
static int list_blocks(DIR *d, uint64_t size, struct dp_range **ret, size_t *ret_n) {
        _cleanup_free_ struct dp_range *v = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;

        while ((de = readdir(d))) {
                long long i = block_index(de->d_name);

                if (i < 0)
                        continue;
                if ((uint64_t) i > UINT64_MAX / size - 1)
                        return -EBADMSG;
                if (n == cap) {
                        struct dp_range *grown = reallocarray(v, cap ? cap * 2 : 64, sizeof(*v));

                        if (!grown)
                                return -ENOMEM;
                        v = grown;
                        cap = cap ? cap * 2 : 64;
                }
                v[n++] = (struct dp_range) { (uint64_t) i * size, ((uint64_t) i + 1) * size };
        }
        *ret = DP_TAKE_PTR(v);
        *ret_n = n;
        return 0;
}

int dp_damon_node_memory(const char *sys_root, uint32_t nid, struct dp_range *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ struct dp_range *blocks = NULL;
        char path[PATH_MAX];
        uint64_t size;
        size_t n;
        int r;

        snprintf(path, sizeof(path), "%s/devices/system/node/node%u", sys_root, nid);
        d = opendir(path);
        if (!d)
                return dp_negative_errno();
        r = read_block_size(sys_root, &size);
        if (r == 0)
                r = list_blocks(d, size, &blocks, &n);
        /* Sorted, and adjacent blocks joined into the node's pieces. */
        if (r == 0 && n > 0)
                r = dp_ranges_coalesce(blocks, n, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return -ENODATA;
        if (n > DP_DAMON_NODE_RANGES_MAX)
                return -E2BIG;
        memcpy(ret, blocks, n * sizeof(*ret));
        return (int) n;
}

static const char *node_error(int error) {
        switch (error) {
        case -ENOENT:
                return "no such node";
        case -ENODATA:
                return "it has no memory blocks (a node without memory, or a kernel without memory block sysfs)";
        case -E2BIG:
                return "its memory lies in more than 8 pieces, a filter each";
        default:
                return strerror(-error);
        }
}

/* The address filters for node filter @f over the node's @k pieces. */
static size_t node_entries(const struct dp_scheme_filter *f, const struct dp_range *pieces, size_t k,
                           struct dp_scheme_filter entries[static DP_DAMON_NODE_RANGES_MAX + 1]) {
        struct dp_scheme_filter addr = { .type = DP_FILTER_ADDR, .allow = f->allow, .matching = true };
        size_t n = 0;

        if (f->matching || k == 1) {
                addr.matching = f->matching;
                for (size_t i = 0; i < k; i++) {
                        entries[n] = addr;
                        entries[n].start = pieces[i].start;
                        entries[n++].end = pieces[i].end;
                }
                return n;
        }
        for (size_t i = 0; i <= k; i++) {
                uint64_t start = i == 0 ? 0 : pieces[i - 1].end, end = i == k ? UINT64_MAX : pieces[i].start;

                if (start < end) {
                        entries[n] = addr;
                        entries[n].start = start;
                        entries[n++].end = end;
                }
        }
        return n;
}

static int resolve_scheme(const char *sys_root, const struct dp_damon_scheme *in, struct dp_damon_scheme *out,
                          char *why, size_t size) {
        const char *origin = in->origin[0] ? in->origin : "configuration",
                   *name = dp_scheme_action_name(in->action);

        *out = *in;
        out->n_filters = 0;
        for (size_t i = 0; i < in->n_filters; i++) {
                const struct dp_scheme_filter *f = &in->filters[i];
                struct dp_scheme_filter entries[DP_DAMON_NODE_RANGES_MAX + 1];
                struct dp_range pieces[DP_DAMON_NODE_RANGES_MAX];
                size_t n;
                int k;

                if (f->type != DP_FILTER_NODE) {
                        if (out->n_filters == DP_SCHEME_MAX_FILTERS)
                                goto too_many;
                        out->filters[out->n_filters++] = *f;
                        continue;
                }
                k = dp_damon_node_memory(sys_root, f->nid, pieces);
                if (k < 0)
                        return dp_explain(k, why, size, "%s: Scheme=%s: %s=%snode:%u: %s in %s/devices/system/node",
                                          origin, name, f->allow ? "allow" : "reject", f->matching ? "" : "!", f->nid,
                                          node_error(k), sys_root);
                n = node_entries(f, pieces, (size_t) k, entries);
                if (out->n_filters + n > DP_SCHEME_MAX_FILTERS)
                        goto too_many;
                memcpy(&out->filters[out->n_filters], entries, n * sizeof(*entries));
                out->n_filters += n;
        }
        return 0;
too_many:
        return dp_explain(-E2BIG, why, size, "%s: Scheme=%s: its node filters take more than %d address filters "
                          "with the others", origin, name, DP_SCHEME_MAX_FILTERS);
}

int dp_damon_resolve_node_filters(const char *sys_root, const struct dp_damon_scheme *in, size_t n,
                                  struct dp_damon_scheme *out, char *why, size_t size) {
        for (size_t i = 0; i < n; i++) {
                int r = resolve_scheme(sys_root, &in[i], &out[i], why, size);

                if (r < 0)
                        return r;
        }
        return 0;
}
