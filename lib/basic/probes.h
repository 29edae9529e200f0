/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Static user-space probes (USDT), provider "damon_perfd": the daemon's
 * counterpart of kernel tracepoints, for perf, bpftrace and SystemTap.  An
 * unattached probe is one nop, but its arguments must be in registers there:
 * pass values the code has at hand (a field, a constant string), never work
 * one out just for the probe.
 *
 * The meson option usdt (auto: on when <sys/sdt.h> exists, Debian's
 * systemtap-sdt-dev) sets DP_USDT.  Off, every DP_PROBEn() is empty: the
 * arguments are type-checked but never evaluated, so nothing is left unused.
 *
 * They live in lib/ too, where the per-sample work happens: a probe is a nop
 * plus an ELF note, with no state and no I/O, so lib stays pure; replay,
 * tests and benchmarks carry the same unattached nops.
 *
 * The probes (README.rst, "Tracepoints"); source, reason, from and to are
 * constant strings (bpftrace: str(argN)), errno is positive or 0:
 *   sample(addr, cpu, pid, source, reason)      every sample the tracker files;
 *                                               reason: match, update, miss_tgid,
 *                                               miss_region, miss_bound
 *   report_missed(reason, pid, addr)            those of them filed as a miss
 *   ring_overflow(cpu, depth)                   a sample dropped: its CPU's queue was full
 *   drain(cpu, count)                           the tracker took a CPU queue's samples
 *   state_change(cpu, from, to, errno)          a CPU's sampler changed state
 *   damon_commit(kdamond, target, nr_regions, result)  one target's regions
 *                                               committed to DAMON; target: its pid
 *                                               (0: paddr), result: 0 or -errno
 */

#ifndef DP_USDT
#define DP_USDT 0
#endif

#if DP_USDT
/* Registers or constants only: perf's SDT argument parser skips indexed
 * memory operands, which the default "nor" lets the compiler choose. */
#ifndef STAP_SDT_ARG_CONSTRAINT
#define STAP_SDT_ARG_CONSTRAINT nr
#endif
#include <sys/sdt.h>

#define DP_PROBE0(name) STAP_PROBE(damon_perfd, name)
#define DP_PROBE1(name, a) STAP_PROBE1(damon_perfd, name, a)
#define DP_PROBE2(name, a, b) STAP_PROBE2(damon_perfd, name, a, b)
#define DP_PROBE3(name, a, b, c) STAP_PROBE3(damon_perfd, name, a, b, c)
#define DP_PROBE4(name, a, b, c, d) STAP_PROBE4(damon_perfd, name, a, b, c, d)
#define DP_PROBE5(name, a, b, c, d, e) STAP_PROBE5(damon_perfd, name, a, b, c, d, e)
#define DP_PROBE6(name, a, b, c, d, e, f) STAP_PROBE6(damon_perfd, name, a, b, c, d, e, f)
#else
#define DP_PROBE0(name) do { } while (0)
#define DP_PROBE1(name, a) do { if (0) { (void) (a); } } while (0)
#define DP_PROBE2(name, a, b) do { if (0) { (void) (a); (void) (b); } } while (0)
#define DP_PROBE3(name, a, b, c) do { if (0) { (void) (a); (void) (b); (void) (c); } } while (0)
#define DP_PROBE4(name, a, b, c, d) \
        do { if (0) { (void) (a); (void) (b); (void) (c); (void) (d); } } while (0)
#define DP_PROBE5(name, a, b, c, d, e) \
        do { if (0) { (void) (a); (void) (b); (void) (c); (void) (d); (void) (e); } } while (0)
#define DP_PROBE6(name, a, b, c, d, e, f) \
        do { if (0) { (void) (a); (void) (b); (void) (c); (void) (d); (void) (e); (void) (f); } } while (0)
#endif
