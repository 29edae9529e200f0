# SPDX-License-Identifier: LGPL-2.1-or-later
"""The tiering and reclaim benchmarks' rows for tools/bench (--only tier):
DAMON alone and DAMON with damon-perfd, the same schemes in both, in the
project's qemu guest with two NUMA nodes and a swap disk
(tests/qemu/tier.sh, DP_TIER=full DP_RECLAIM=full), the arms alternating
within one boot, --reps times; then a boot for each further layout of the
hot set (LAYOUTS, --tier-layouts): in pieces among the cold pages, and in
one stretch again with the workload's page faults, the daemon's samples,
at 1000 a second instead of 200.  With --boots N, N boots of each layout
(reclaim in the first of the first layout only), medians over all their
runs: within a boot the runs share where its free memory lay, so boots differ
more than runs do.  ours = DAMON with the daemon, peer = DAMON alone.
"""

import math
import os
import statistics
import subprocess

GOAL = 0.9


def parse_console(path):
    """Every DP-QEMU: TIER and RECLAIM line of the guest's console, as a dict with its kind."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            words = line.split()
            if len(words) > 2 and words[0] == "DP-QEMU:" and words[1] in ("TIER", "RECLAIM"):
                x = dict(kv.split("=", 1) for kv in words[2:] if "=" in kv)
                x["kind"] = words[1].lower()
                out.append(x)
    return out


# With the hot set in pieces and the kernel's NUMA balancing off, DAMON
# alone often has not moved 90% of it up in 40 s: the arms are longer, so
# that a time to compare is there more often than "never".
PIECES_SECONDS = 80

# The hot set's layouts in physical memory (tests/qemu/tier.sh), each with
# the guest's settings and an arm's seconds: one stretch above the cold
# area; 8 pieces scattered through a cold area three times the size, as a
# long-running heap's hot objects lie; and the stretch with 1000 samples a
# second, still below the thousands a second per CPU a hardware PMU takes
# (at 200, the daemon needs a second or more of samples to outline the hot
# set, and DAMON alone often finds it in less).
LAYOUTS = {
    "stretch": ("", 40),
    "pieces": ("DP_TIER_PIECES=8 DP_TIER_COLD_MIB=192", PIECES_SECONDS),
    "stretch-1k": ("DP_TIER_FAULTS_PER_S=1000", 40),
}


def run_guest(build, reps, seconds, timeout_s, layout="stretch", reclaim=True):
    """Boots the guest for the tiering case in @layout (and the reclaim case)."""
    append = "DP_TIER=full DP_TIER_REPS=%d DP_TIER_SECONDS=%d %s" % (reps, seconds, LAYOUTS[layout][0])
    if reclaim:
        append += " DP_RECLAIM=full DP_RECLAIM_REPS=%d DP_RECLAIM_SECONDS=%d" % (reps, seconds)
    env = dict(os.environ, DP_QEMU_NUMA="1", DP_QEMU_SWAP_MIB="512", DP_QEMU_APPEND=append,
               DP_QEMU_EXPECTED=str(2 + (8 if reclaim else 5) * reps), DP_QEMU_TIMEOUT=str(timeout_s),
               DP_QEMU_WORKDIR=os.path.join(build, "tier-qemu"))
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([os.path.join(here, "..", "tests", "qemu", "run"), build], env=env, check=False)
    return parse_console(os.path.join(build, "tier-qemu", "console.log"))


def usable(x):
    """A run whose kdamond ran: one whose did not (a kdamond left over made
    the daemon only observe, say) measured nothing."""
    return x.get("damon_ran") != "0"


def med(lines, key, conv=float):
    xs = [conv(x[key]) for x in lines if key in x]
    return statistics.median(xs) if xs else None


def seconds(v):
    """A time from the guest; -1 (never) is infinite."""
    v = float(v)
    return math.inf if v < 0 else v


def fmt_s(v):
    return "never" if v is None or math.isinf(v) else "%.1f s" % v


def runs_tag(runs, boots):
    """How many runs a median pools, and from how many boots."""
    if runs <= 1:
        return ""
    return " (median of %d%s)" % (runs, " in %d boots" % boots if boots > 1 else "")


def per_boot(lines, arm, key, conv=float):
    """Each boot's median of @key for @arm, in boot order."""
    boots = sorted({x["boot"] for x in lines})
    return [med([x for x in lines if x["boot"] == b and x.get("arm") == arm], key, conv) for b in boots]


def tier_rows(row, ours, peer, arm="daemon", layout="stretch", boots=1):
    where = " [%s%s]" % (arm, {"stretch": "", "pieces": ", hot set in pieces",
                                "stretch-1k": ", 1000 samples a second"}.get(layout, ", " + layout))
    tag = where + runs_tag(len(ours), boots)
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
    cold = None if cold is None else int(cold)
    o, p = med(ours, "cold_fast_max", int), med(peer, "cold_fast_max", int)
    rows.append(row("tier: cold pages migrated up to node 0, most at once (of %s)%s" % (cold, tag), o, "", p,
                    "DAMON alone", o / p if o is not None and p else None, "<= DAMON alone",
                    o is not None and p is not None and o <= p))
    o, p = med(ours, "cold_fast", int), med(peer, "cold_fast", int)
    rows.append(row("tier: cold pages on node 0 at the end" + tag, o, "", p, "DAMON alone", None, "info", None))
    # tier.sh turns the kernel's NUMA balancing off: what it moved would be
    # counted for whichever arm it happened in.
    o, p = med(ours, "numab_migrated", int), med(peer, "numab_migrated", int)
    rows.append(row("tier: pages NUMA balancing migrated (balancing off)" + tag, o, "", p, "DAMON alone", None,
                    "0 in both", o == 0 and p == 0 if o is not None and p is not None else None))
    rows.append(row("tier: kdamond CPU over the run" + tag, med(ours, "kdamond_cpu_s"), "s",
                    med(peer, "kdamond_cpu_s"), "DAMON alone", None, "info", None))
    rows.append(row("tier: daemon CPU over the run" + tag, med(ours, "daemon_cpu_s"), "s", None, "", None, "info",
                    None))
    # Page faults besides the workload's write-protected stores (200 or 1000
    # a second) are samples too, of other memory (the guest's own processes).
    rows.append(row("tier: the daemon's samples a second, halfway" + tag, med(ours, "samples_per_s"), "", None, "",
                    None, "info", None))
    if boots > 1:
        # The boots side by side: where the pooled median comes from.
        o, p = per_boot(ours, arm, "to90_s", seconds), per_boot(peer, "damon", "to90_s", seconds)
        rows.append(row("tier: time until 90%% on node 0, each boot's median%s" % where,
                        ", ".join(fmt_s(v) for v in o), "", ", ".join(fmt_s(v) for v in p), "DAMON alone", None,
                        "info", None))
    return rows


def reclaim_rows(row, ours, peer, reps):
    tag = runs_tag(reps, 1)
    rows = []
    hot = med(ours, "hot_pages", int)
    hot = None if hot is None else int(hot)
    o, p = med(ours, "majflt", int), med(peer, "majflt", int)
    rows.append(row("reclaim: major faults in the hot set (%s pages)%s" % (hot, tag), o, "", p, "DAMON alone",
                    o / p if o is not None and p else None, "<= DAMON alone", o is not None and p is not None
                    and o <= p))
    o, p = med(ours, "hot_out_max", int), med(peer, "hot_out_max", int)
    rows.append(row("reclaim: hot pages swapped out, most at once (of %s)%s" % (hot, tag), o, "", p, "DAMON alone",
                    o / p if o is not None and p else None, "<= DAMON alone", o is not None and p is not None
                    and o <= p))
    cold = med(ours, "cold_pages", int)
    cold = None if cold is None else int(cold)
    o, p = med(ours, "cold_out", int), med(peer, "cold_out", int)
    rows.append(row("reclaim: cold pages paged out at the end (of %s)%s" % (cold, tag), o, "", p, "DAMON alone",
                    o / p if o is not None and p else None, ">= 0.9x DAMON alone",
                    o is not None and p is not None and o >= 0.9 * p))
    rows.append(row("reclaim: pages written to swap" + tag, med(ours, "pswpout"), "", med(peer, "pswpout"),
                    "DAMON alone", None, "info", None))
    rows.append(row("reclaim: kdamond CPU over the run" + tag, med(ours, "kdamond_cpu_s"), "s",
                    med(peer, "kdamond_cpu_s"), "DAMON alone", None, "info", None))
    rows.append(row("reclaim: daemon CPU over the run" + tag, med(ours, "daemon_cpu_s"), "s", None, "", None,
                    "info", None))
    return rows


def boot_guests(a, seconds, timeout_s, layout, reclaim_first):
    """--boots guests for @layout, each line tagged with its boot (1, 2, ...);
    the reclaim case in the first only."""
    out = []
    for boot in range(1, a.boots + 1):
        reclaim = reclaim_first and boot == 1
        for x in run_guest(a.build, a.reps, seconds, timeout_s(reclaim), layout, reclaim):
            x["boot"] = boot
            out.append(x)
    return out


def bench_tier(a, raw, row):
    got = {}
    for i, layout in enumerate(a.tier_layouts):
        secs = LAYOUTS[layout][1]
        got[layout] = boot_guests(a, secs, lambda reclaim, s=secs: 180 + (5 if reclaim else 3) * (s + 40) * a.reps,
                                  layout, i == 0)
        raw["tier" if layout == "stretch" else "tier_" + layout.replace("-", "_")] = got[layout]
    rows = []
    left_out = [x for xs in got.values() for x in xs if not usable(x)]
    if left_out:
        rows.append(row("runs left out of the medians below: kdamond never ran (%s)" % ", ".join(
            "%s %s rep %s" % (x["kind"], x.get("arm"), x.get("rep")) for x in left_out), len(left_out), "", None, "",
            None, "none", False))
    got = {layout: [x for x in xs if usable(x)] for layout, xs in got.items()}
    for layout, lines in got.items():
        peer = [x for x in lines if x["kind"] == "tier" and x.get("arm") == "damon" and "to90_s" in x]
        for arm in ("daemon", "daemon-wide"):
            ours = [x for x in lines if x["kind"] == "tier" and x.get("arm") == arm and "to90_s" in x]
            if ours and peer:
                rows += tier_rows(row, ours, peer, arm, layout, a.boots)
            else:
                rows.append(row("tier [%s, %s]: the guest printed no TIER lines for both arms" % (arm, layout), None,
                                "", None, "", None, "runs", False))
    lines = got[a.tier_layouts[0]]
    ours = [x for x in lines if x["kind"] == "reclaim" and x.get("arm") == "daemon" and "majflt" in x]
    peer = [x for x in lines if x["kind"] == "reclaim" and x.get("arm") == "damon" and "majflt" in x]
    if ours and peer:
        rows += reclaim_rows(row, ours, peer, len(ours))
    else:
        rows.append(row("reclaim: the guest printed no RECLAIM lines for both arms", None, "", None, "", None,
                        "runs", False))
    return rows
