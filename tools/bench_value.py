# SPDX-License-Identifier: LGPL-2.1-or-later
"""The value benchmark's rows for tools/bench (--only value): DAMON alone
and DAMON with damon-perfd on the same workloads in the project's qemu guest
(tests/qemu/value.sh, DP_VALUE=full), the arms alternating within one boot,
medians over --reps.  ours = DAMON with the daemon (its hints; with
DP_VALUE_ARMS=damon,daemon,filter also its hints and a stat scheme with
reject=hot, the "hot filter" rows), peer = DAMON alone.
"""

import math
import os
import re
import statistics
import subprocess

SCENARIOS = ["window", "chunks", "chunks-max100"]
GOAL = 0.9


def parse_console(path):
    """Every DP-QEMU: VALUE line of the guest's console, as a dict."""
    out = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("DP-QEMU: VALUE "):
                out.append(dict(kv.split("=", 1) for kv in line.split()[2:] if "=" in kv))
    return out


def run_guest(build, reps, timeout_s):
    # DP_VALUE_ARMS (e.g. damon,daemon,filter) passes on to the guest; each
    # arm asserts once per scenario, a daemon arm once more for its exit.
    arms = os.environ.get("DP_VALUE_ARMS", "damon,daemon")
    per_rep = 3 * sum(1 if arm == "damon" else 2 for arm in arms.split(","))
    env = dict(os.environ, DP_QEMU_APPEND="DP_VALUE=full DP_VALUE_REPS=%d DP_VALUE_ARMS=%s" % (reps, arms),
               DP_QEMU_EXPECTED=str(2 + per_rep * reps), DP_QEMU_TIMEOUT=str(timeout_s),
               DP_QEMU_WORKDIR=os.path.join(build, "value-qemu"))
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([os.path.join(here, "..", "tests", "qemu", "run"), build], env=env, check=False)
    return parse_console(os.path.join(build, "value-qemu", "console.log"))


def seconds(v):
    """A time from the guest; -1 (never) is infinite."""
    v = float(v)
    return math.inf if v < 0 else v


def med(lines, key, conv=float):
    # A field the guest could not measure (a process gone mid-read) is empty.
    xs = [conv(x[key]) for x in lines if x.get(key, "") != ""]
    return statistics.median(xs) if xs else None


def fmt_s(v):
    return "never" if v is None or math.isinf(v) else "%.1f s" % v


def scenario_rows(row, name, phase, ours, peer, reps, arm=""):
    """The rows of one scenario's phase: times (faster is better: ratio = alone / ours), quality, costs."""
    rows = []
    what = "value, %s%s%s" % (name, arm, ", after the move" if phase == "1" else "")
    tag = " (median of %d)" % reps if reps > 1 else ""
    for key, label in (("converge_s", "time to converge"), ("for_good_s", "time converged for good")):
        o, p = med(ours, key, seconds), med(peer, key, seconds)
        ratio = None if o is None or p is None or math.isinf(o) or o == 0 else p / o if not math.isinf(p) else math.inf
        rows.append(row("%s: %s%s" % (what, label, tag), fmt_s(o), "", fmt_s(p), "DAMON alone",
                        None if ratio is None or math.isinf(ratio) else ratio, ">= 2x faster",
                        ratio is not None and ratio >= 2))
    for key, label in (("precision", "precision of DAMON's hot regions"), ("recall", "recall of them")):
        o, p = med(ours, key), med(peer, key)
        rows.append(row("%s: %s, steady state" % (what, label), o, "", p, "DAMON alone",
                        o / p if p else None, ">= 0.9", o is not None and o >= GOAL))
    chunks = med(ours, "chunks", int)
    if name.startswith("chunks") and phase == "0":
        o, p = med(ours, "found_10s", int), med(peer, "found_10s", int)
        rows.append(row("%s: chunks found within 10 s (of %d)" % (what, chunks), o, "", p, "DAMON alone",
                        o / p if p else None, ">= 90%", o is not None and o >= GOAL * chunks))
    if phase == "0":
        rows.append(row("%s: DAMON's regions in the mapping" % what, med(ours, "regions", int), "",
                        med(peer, "regions", int), "DAMON alone", None, "info", None))
        rows.append(row("%s: kdamond CPU over the run" % what, med(ours, "kdamond_cpu_s"), "s",
                        med(peer, "kdamond_cpu_s"), "DAMON alone", None, "info", None))
        rows.append(row("%s: daemon CPU over the run" % what, med(ours, "daemon_cpu_s"), "s", None, "",
                        None, "info", None))
    return rows


def spared_rows(row, name, phase, filt):
    """What the reject=hot scheme spares, against the true hot set: the
    PMU's hot ranges as DAMON's schemes are given them."""
    what = "value, %s%s: the reject=hot scheme spares" % (name, ", after the move" if phase == "1" else "")
    out = []
    for key, label in (("spared_precision", "precision"), ("spared_recall", "recall")):
        o = med(filt, key)
        out.append(row("%s, %s" % (what, label), o, "", None, "", None, ">= 0.9", o is not None and o >= GOAL))
    return out


def bench_value(a, raw, row):
    lines = run_guest(a.build, a.reps, 300 + 450 * a.reps)
    raw["value"] = lines
    rows = []
    for name in SCENARIOS:
        for phase in sorted({x["phase"] for x in lines if x.get("scenario") == name}):
            pick = [x for x in lines if x.get("scenario") == name and x["phase"] == phase]
            ours = [x for x in pick if x["arm"] == "daemon"]
            peer = [x for x in pick if x["arm"] == "damon"]
            rows += scenario_rows(row, name, phase, ours, peer, a.reps)
            filt = [x for x in pick if x["arm"] == "filter"]
            if filt:
                rows += scenario_rows(row, name, phase, filt, peer, a.reps, " (hot filter)")
                rows += spared_rows(row, name, phase, filt)
    if not rows:
        rows.append(row("value: the guest printed no VALUE lines", None, "", None, "", None, "runs", False))
    return rows
