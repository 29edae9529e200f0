/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The tiering and reclaim workloads (tests/qemu/tier.sh, tools/bench --only
 * tier): a hot area kept busy with plain stores, which DAMON sees through
 * the accessed bit, beside a cold area touched once.
 *
 *   tier:    both areas start on the slow node (--slow-node); every
 *            interval the workload asks the kernel where each page is
 *            (move_pages(2) with nodes NULL) and reports the fraction of
 *            the hot area on the fast node and the cold pages there.
 *   reclaim: no node placement; every interval it reports its major
 *            faults (all in the hot area: the cold one is never touched
 *            again) and the areas' pages swapped out (/proc/self/smaps).
 *
 * The page-fault software event stands in for a PMU: a sparse stream of
 * the hot area's pages is write-protected with userfaultfd (asynchronous
 * write protection, Linux 6.7), so the next plain store to each faults once
 * and the kernel resolves it at once.  The page stays where it is, so the
 * sample carries its physical address (the page is present when perf
 * samples the fault), which a DAMON_PADDR hint needs, and a re-fault never
 * allocates a new page on whatever node the policy picks.
 */

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tier_workload {
        /* options */
        const char *mode;               /* "tier" or "reclaim" */
        size_t hot_bytes, cold_bytes;
        int slow_node, fast_node;
        double touch_ms, faults_per_s, report_ms, seconds;
        unsigned pieces;                /* first touches interleaved in this many pieces of each area */
        bool wait_go;                   /* laid out, wait for SIGUSR1 before the use starts */
        /* the layout */
        size_t page;
        char *hot, *cold;
        int uffd;                       /* -1 without userfaultfd */
};

/* Maps both areas (on the slow node for tier), touches them once, sets up
 * the write protection.  0 or a negative errno, with a message on stderr. */
int tier_map(struct tier_workload *w);
/* The one JSON line printed first: pid and both areas. */
void tier_describe(const struct tier_workload *w);
/* Keeps the hot area busy and reports until --seconds or *@stop; then the
 * summary line (see workload-tier.c).  0 or a negative errno. */
int tier_run(struct tier_workload *w, volatile sig_atomic_t *stop);
