# SPDX-License-Identifier: LGPL-2.1-or-later
"""The tiering benchmark's rows for tools/bench (--only tier): DAMON alone
and DAMON with damon-perfd, the same migrate_hot / migrate_cold schemes, in
the project's qemu guest with two NUMA nodes (tests/qemu/tier.sh,
DP_TIER=full), the arms alternating within one boot, medians over --reps.
ours = DAMON with the daemon, peer = DAMON alone.
"""

import math
import os
import statistics
import subprocess

GOAL = 0.9


def parse_console(path):
    """Every DP-QEMU: TIER line of the guest's console, as a dict."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("DP-QEMU: TIER "):
                out.append(dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv))
    return out


def run_guest(build, reps, seconds, timeout_s):
    env = dict(os.environ, DP_QEMU_NUMA="1",
               DP_QEMU_APPEND="DP_TIER=full DP_TIER_REPS=%d DP_TIER_SECONDS=%d" % (reps, seconds),
               DP_QEMU_EXPECTED=str(2 + 3 * reps), DP_QEMU_TIMEOUT=str(timeout_s),
               DP_QEMU_WORKDIR=os.path.join(build, "tier-qemu"))
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([os.path.join(here, "..", "tests", "qemu", "run"), build], env=env, check=False)
    return parse_console(os.path.join(build, "tier-qemu", "console.log"))


def med(lines, key, conv=float):
    xs = [conv(x[key]) for x in lines if key in x]
    return statistics.median(xs) if xs else None


def seconds(v):
    """A time from the guest; -1 (never) is infinite."""
    v = float(v)
    return math.inf if v < 0 else v


def fmt_s(v):
    return "never" if v is None or math.isinf(v) else "%.1f s" % v


def tier_rows(row, ours, peer, reps):
    tag = " (median of %d)" % reps if reps > 1 else ""
    rows = []
    o, p = med(ours, "to90_s", seconds), med(peer, "to90_s", seconds)
    if o is None or p is None or math.isinf(o):
        ratio = None
    elif math.isinf(p):
        ratio = math.inf
    else:
        ratio = p / o if o > 0 else math.inf
    rows.append(row("tier: time until 90% of the hot set is on node 0" + tag, fmt_s(o), "", fmt_s(p),
                    "DAMON alone", None if ratio is None or math.isinf(ratio) else ratio, ">= 2x sooner",
                    ratio is not None and ratio >= 2))
    o, p = med(ours, "hot_fast"), med(peer, "hot_fast")
    rows.append(row("tier: hot set on node 0 at the end" + tag, o, "", p, "DAMON alone",
                    o / p if o is not None and p else None, ">= 0.9", o is not None and o >= GOAL))
    cold = med(ours, "cold_pages", int)
    o, p = med(ours, "cold_fast_max", int), med(peer, "cold_fast_max", int)
    rows.append(row("tier: cold pages migrated up to node 0, most at once (of %s)%s" % (cold, tag), o, "", p,
                    "DAMON alone", o / p if o is not None and p else None, "<= DAMON alone",
                    o is not None and p is not None and o <= p))
    o, p = med(ours, "cold_fast", int), med(peer, "cold_fast", int)
    rows.append(row("tier: cold pages on node 0 at the end" + tag, o, "", p, "DAMON alone", None, "info", None))
    rows.append(row("tier: kdamond CPU over the run" + tag, med(ours, "kdamond_cpu_s"), "s",
                    med(peer, "kdamond_cpu_s"), "DAMON alone", None, "info", None))
    rows.append(row("tier: daemon CPU over the run" + tag, med(ours, "daemon_cpu_s"), "s", None, "", None, "info",
                    None))
    return rows


def bench_tier(a, raw, row, seconds_per_arm=60):
    lines = run_guest(a.build, a.reps, seconds_per_arm, 120 + 2 * (seconds_per_arm + 40) * a.reps)
    raw["tier"] = lines
    ours = [x for x in lines if x.get("arm") == "daemon" and "to90_s" in x]
    peer = [x for x in lines if x.get("arm") == "damon" and "to90_s" in x]
    if not ours and not peer:
        return [row("tier: the guest printed no TIER lines", None, "", None, "", None, "runs", False)]
    return tier_rows(row, ours, peer, a.reps)
