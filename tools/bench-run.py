#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The performance suite of issue #8, run by tools/bench: every measure beside
its peer, measured in the same run (medians where a repeat is cheap), then one
table and one JSON file.

Processes started here are ended here, by their own PID; daemons get sockets
of their own and a configuration that leaves DAMON alone ([DAMON] Mode=off).
"""

import argparse
import json
import math
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

from bench_tier import LAYOUTS, bench_tier
from bench_value import bench_value

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MONO = time.CLOCK_MONOTONIC


def now():
    return time.clock_gettime(MONO)


def log(*args):
    print(*args, flush=True)


# ---- what a process costs, from /proc ----

def stat_cpu_s(pid):
    """utime + stime of the whole process, in seconds (clock-tick resolution)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def schedstat_cpu_s(pid):
    """Time on CPU of every live thread, in seconds (nanosecond resolution)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / 1e9


def threads_cpu_s(pid):
    """Time on CPU by thread name, in seconds."""
    by = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                by[name] = by.get(name, 0) + int(f.read().split()[0]) / 1e9
        except (FileNotFoundError, ProcessLookupError):
            pass
    return by


def cpu_now(pid):
    return {"t": now(), "stat": stat_cpu_s(pid), "schedstat": schedstat_cpu_s(pid), "threads": threads_cpu_s(pid)}


def smaps_rss_kib(pid):
    """(all Rss, Rss of the perf ring mappings, their size) in KiB."""
    total = rings = rings_size = 0
    in_ring = False
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
                in_ring = "perf_event" in line
            elif line.startswith("Rss:"):
                kib = int(line.split()[1])
                total += kib
                if in_ring:
                    rings += kib
            elif in_ring and line.startswith("Size:"):
                rings_size += int(line.split()[1])
    return total, rings, rings_size


def run_timed(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
    """Runs @cmd; (wall s, user+sys s of it and its children, exit status)."""
    t0 = now()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=stderr)
    _, status, ru = os.wait4(p.pid, 0)
    wall = now() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, p.returncode


def stop(p, sig=signal.SIGTERM, timeout=20):
    """Ends one process we started, by its PID."""
    if p is None or p.poll() is not None:
        return
    p.send_signal(sig)
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def median(xs):
    return statistics.median(xs) if xs else float("nan")


# ---- the daemon, with a socket and a notify socket of its own ----

class Daemon:
    def __init__(self, build, tmp, name, extra=()):
        self.build = build
        self.dir = tempfile.mkdtemp(prefix=name + "-", dir=tmp)
        self.conf = os.path.join(self.dir, "damon-perfd.conf")
        with open(self.conf, "w") as f:
            f.write("[DAMON]\nMode=off\n")
        self.sock = os.path.join(self.dir, "io.damon.perfd")
        self.notify_path = os.path.join(self.dir, "notify")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        self.extra = list(extra)
        self.proc = None
        self.started = None
        self.status = ""

    def start(self):
        env = dict(os.environ, NOTIFY_SOCKET=self.notify_path)
        cmd = [os.path.join(self.build, "daemon", "damon-perfd"), f"--config={self.conf}",
               f"--varlink={self.sock}"] + self.extra
        self.stderr = open(os.path.join(self.dir, "stderr"), "w")
        self.started = now()
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=self.stderr)

    def wait_ready(self, timeout=20):
        """Seconds from exec to READY=1 (sent once every CPU is RUNNING)."""
        deadline = now() + timeout
        while now() < deadline:
            self.notify.settimeout(max(0.01, deadline - now()))
            try:
                msg = self.notify.recv(4096).decode(errors="replace")
            except socket.timeout:
                break
            for line in msg.splitlines():
                if line.startswith("STATUS="):
                    self.status = line[7:]
            if "READY=1" in msg.splitlines():
                ready = now() - self.started
                # Nobody reads on: a full queue of STATUS= updates would block
                # the daemon's sd_notify(), so it gets ECONNREFUSED instead.
                self.notify.close()
                os.unlink(self.notify_path)
                return ready
            if self.proc.poll() is not None:
                break
        raise RuntimeError(f"damon-perfd was not ready within {timeout} s; see {self.dir}/stderr")

    def damonctl(self, *args):
        p = subprocess.run([os.path.join(self.build, "tools", "damonctl"), f"--address=unix:{self.sock}", "--json"]
                           + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            with open(os.path.join(self.dir, "stderr")) as f:
                tail = "".join(f.readlines()[-10:])
            raise RuntimeError(f"damonctl {' '.join(args)} failed: {p.stderr.strip()}\n"
                               f"damon-perfd ({'running' if self.proc.poll() is None else 'exited'}) logged:\n{tail}")
        return json.loads(p.stdout)

    def callbacks(self):
        return self.damonctl("stats")["totals"]["callback"]

    def stop(self):
        stop(self.proc)
        self.notify.close()
        if self.stderr:
            self.stderr.close()


def start_workload(build, seconds, hot_mib=64, rate=200):
    """The workload: its hot area faulted @rate times a second (as fast as the CPU
    goes, when that is slower)."""
    return subprocess.Popen([os.path.join(build, "tools", "damon-perfd-workload"), "--hot-mib", str(hot_mib),
                             "--cold-mib", "1", "--rate", str(rate), "--seconds", str(seconds)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# ---- the measures ----

def bench_spsc(a, raw):
    path = os.path.join(a.tmp, "spsc.json")
    subprocess.run([os.path.join(a.build, "bench", "bench-spsc"), "--seconds", "1", "--reps", "5", "--json", path],
                   check=True)
    d = json.load(open(path))
    raw["spsc"] = d
    by = {r["name"]: r for r in d["results"]}
    bulk = next(r for r in d["results"] if r["queue"] == "spsc" and r["batch"] > 1 and "bulk" in r["name"])
    mutex = next(r for r in d["results"] if r["queue"] == "mutex" and r["batch"] == bulk["batch"])
    ours, peer = bulk["samples_per_sec_median"] / 1e6, mutex["samples_per_sec_median"] / 1e6
    rows = [row("SPSC queue, 2 threads, batches of %d" % bulk["batch"], ours, "M/s", peer, "mutex+condvar",
                ours / peer, ">= 100 M/s", ours >= 100)]
    inplace = by.get("spsc in place (reserve/peek)")
    if inplace:
        v = inplace["samples_per_sec_median"] / 1e6
        rows.append(row("SPSC queue, in-place reserve/commit (reader's path)", v, "M/s", peer, "mutex+condvar",
                        v / peer, "(info)", None))
    return rows


def bench_tracker(a, raw):
    path = os.path.join(a.tmp, "tracker.json")
    subprocess.run([os.path.join(a.build, "bench", "bench-tracker"), "--seconds", "0.2", "--reps", "5",
                    "--json", path], check=True)
    d = json.load(open(path))
    raw["tracker"] = d
    res = {(r["workload"], r["variant"]): r for r in d["results"]}
    batch = res[("random", "tracker, batch")]
    naive = res[("random", "naive linear search")]
    local = res.get(("local", "tracker, batch"))
    ours, peer = batch["samples_per_sec_median"] / 1e6, naive["samples_per_sec_median"] / 1e6
    rows = [row("tracker match+update, 100 targets x 100 regions (10k), random", ours, "M/s", peer,
                "naive search", ours / peer, ">= 20 M/s", ours >= 20)]
    if local:
        v = local["samples_per_sec_median"] / 1e6
        rows.append(row("tracker, same, page-fault-like runs (local)", v, "M/s", peer, "naive search", v / peer,
                        "(info)", None))

    # Cost growth beside what log n alone would give, from the smallest size.
    sc = sorted(d["scaling"], key=lambda s: s["total_regions"])
    base_n, base_ns = sc[0]["total_regions"], sc[0]["tracker_ns_per_sample"]
    growth = []
    for s in sc:
        n = s["total_regions"]
        log_ns = base_ns * math.log2(n) / math.log2(base_n)
        growth.append({"regions": n, "ns": s["tracker_ns_per_sample"], "log_n_ns": log_ns,
                       "naive_ns": s["naive_ns_per_sample"]})
    raw["cost_growth"] = growth
    ours_s = " / ".join("%.0f" % g["ns"] for g in growth) + " ns"
    peer_s = " / ".join("%.0f" % g["log_n_ns"] for g in growth) + " ns"
    # ~log n while the regions fit the caches: up to 10k regions within 1.5x of it.
    fits = [g for g in growth if g["regions"] <= 10000]
    worst = max(g["ns"] / g["log_n_ns"] for g in fits)
    rows.append(row("cost per sample at " + " / ".join(str(g["regions"]) for g in growth) + " regions",
                    ours_s, "", peer_s, "log n from the smallest", worst, "~log n (shown)", worst <= 1.5))

    usdt = d.get("usdt")
    if usdt and usdt.get("results"):
        r = next((x for x in usdt["results"] if x["workload"] == "random"), usdt["results"][0])
        rows.append(row("static probes in vs out, tracker batch (%s)" % r["workload"],
                        r["probes_in_ns_per_sample"], "ns", r["probes_out_ns_per_sample"], "probes compiled out",
                        r["in_vs_out"], "(info)", None))
    return rows


def record_capture(a, path, want):
    """A page-fault capture of the workload alone (so that its content does not
    depend on what else runs), grown until it holds @want samples."""
    tmp = path + ".new"
    est_bytes = want * 56 * 1.03            # IP|TID|TIME|ADDR|CPU|DATA_SRC samples: 56 bytes
    log(f"recording a capture of >= {want} page-fault samples into {path} ...")
    wl_out = os.path.join(a.tmp, "workload.json")
    with open(wl_out, "w") as out:
        perf = subprocess.Popen(["perf", "record", "-q", "-e", "page-faults", "-c", "1", "-d", "--sample-cpu",
                                 "-o", tmp, "--", os.path.join(a.build, "tools", "damon-perfd-workload"),
                                 "--hot-mib", "64", "--cold-mib", "1", "--rate", "200", "--seconds", "1800"],
                                stdout=out, stderr=subprocess.DEVNULL)
        try:
            wpid = None
            deadline = now() + 1800
            while now() < deadline and perf.poll() is None:
                time.sleep(0.5)
                if wpid is None:
                    m = re.search(r'"pid": (\d+)', open(wl_out).read())
                    wpid = int(m.group(1)) if m else None
                if wpid and os.path.exists(tmp) and os.path.getsize(tmp) >= est_bytes:
                    os.kill(wpid, signal.SIGTERM)      # the workload perf started for us
                    break
            perf.wait(60)
        finally:
            stop(perf, signal.SIGINT)
    os.replace(tmp, path)


def replay_counts(a, path):
    out = subprocess.run([os.path.join(a.build, "daemon", "damon-perfd"), f"--replay={path}", "--dump-stats=json"],
                         check=True, capture_output=True, text=True).stdout
    d = json.loads(out)
    return d["totals"], d.get("nr_targets")


def read_back(path):
    """Drops @path from the page cache and reads it in again, so that both
    replays read the same cached pages however the file came to be there:
    perf record's writes leave it in small folios, a read large ones where the
    kernel has them (ext4 since 6.16), and on this VM that alone moved our
    replay's CPU from 85 to 62 ms."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        while os.read(fd, 1 << 20):
            pass
    finally:
        os.close(fd)


def bench_replay(a, raw):
    path = os.path.join(a.build, "replay-workload.perf.data")
    totals = None
    if os.path.exists(path):
        totals, _ = replay_counts(a, path)
    if not totals or totals["callback"] < a.replay_samples:
        record_capture(a, path, a.replay_samples)
        totals, _ = replay_counts(a, path)
    samples = totals["callback"]
    read_back(path)
    daemon = os.path.join(a.build, "daemon", "damon-perfd")
    ours_w, ours_c, perf_w, perf_c = [], [], [], []
    for _ in range(a.reps):
        w, c, rc = run_timed([daemon, f"--replay={path}", "--dump-stats=json"])
        assert rc == 0, "damon-perfd --replay failed"
        ours_w.append(w)
        ours_c.append(c)
        w, c, rc = run_timed(["perf", "script", "-i", path, "-F", "pid,addr"])
        assert rc == 0, "perf script failed"
        perf_w.append(w)
        perf_c.append(c)
    o, p = median(ours_w), median(perf_w)
    oc, pc = median(ours_c), median(perf_c)
    raw["replay"] = {"capture": path, "bytes": os.path.getsize(path), "samples": samples, "matched": totals["match"],
                     "ours_wall_s": ours_w, "ours_cpu_s": ours_c, "perf_script_wall_s": perf_w,
                     "perf_script_cpu_s": perf_c}
    mb = os.path.getsize(path) / 1e6
    return [row("replay, decode + aggregate %.1fM samples (%.0f MB), wall" % (samples / 1e6, mb), o, "s", p,
                "perf script -F pid,addr", p / o, ">= 20x faster", p / o >= 20),
            row("replay, same, CPU time (user+sys)", oc, "s", pc, "perf script -F pid,addr", pc / oc,
                ">= 20x faster", pc / oc >= 20)]


def perf_window_samples(path, t0, t1):
    """Samples of a -k mono capture with times inside [t0, t1] (CLOCK_MONOTONIC s)."""
    out = subprocess.run(["perf", "script", "-i", path, "-F", "time"], check=True, capture_output=True,
                         text=True).stdout
    n = 0
    for line in out.splitlines():
        line = line.strip().rstrip(":")
        try:
            t = float(line)
        except ValueError:
            continue
        n += t0 <= t <= t1
    return n


def count_faults(seconds):
    """Page faults on every CPU over @seconds, as perf stat counts them."""
    p = subprocess.run(["perf", "stat", "-a", "-x,", "-e", "page-faults", "sleep", str(seconds)],
                       capture_output=True, text=True, check=True)
    for line in p.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("page-faults"):
            return int(fields[0])
    raise RuntimeError("perf stat printed no page-faults count: " + p.stderr)


def live_pair(a, warm, win, hot_mib, rate, perf_extra=(), unwatched=False):
    """One round: damon-perfd, then perf record (with @perf_extra), each alone on
    its own run of the workload; CPU time per sample of each over a @win s
    window after @warm s.  @unwatched: nobody queries the daemon (a query
    keeps its view fresh, its readers draining every second, for 10 s, and
    its counters are up to 10 s late otherwise): the window's samples are the
    page faults `perf stat -a` counts meanwhile, every one of which the
    daemon samples (its own lost counters are 0 at these rates)."""
    res = {}
    # damon-perfd, sampling every CPU and tracking every process, as shipped.
    wl = start_workload(a.build, warm + win + 10, hot_mib, rate)
    d = Daemon(a.build, a.tmp, "live")
    try:
        d.start()
        d.wait_ready()
        time.sleep(warm)
        if unwatched:
            c0 = cpu_now(d.proc.pid)
            faults = count_faults(win)
            c1 = cpu_now(d.proc.pid)
            # Counters that cannot be read at the window's ends count as 0;
            # losses since the start, which include the window's.
            after = d.damonctl("stats")["totals"]
            s0 = {k: 0 for k in after}
            s1 = dict(s0, callback=faults, lost=after["lost"], lost_samples=after["lost_samples"])
        else:
            c0, s0 = cpu_now(d.proc.pid), d.damonctl("stats")["totals"]
            time.sleep(win)
            c1, s1 = cpu_now(d.proc.pid), d.damonctl("stats")["totals"]
    finally:
        d.stop()
        stop(wl)
    n = s1["callback"] - s0["callback"]
    res["daemon"] = {"samples": n, "seconds": c1["t"] - c0["t"], "cpu_s": c1["schedstat"] - c0["schedstat"],
                     "cpu_s_stat": c1["stat"] - c0["stat"],
                     "wakeups": s1["wakeup"] - s0["wakeup"], "drains": s1["drain"] - s0["drain"],
                     "lost": (s1["lost"] - s0["lost"]) + (s1["lost_samples"] - s0["lost_samples"]),
                     "ns_per_sample_by_thread": {k: (v - c0["threads"].get(k, 0)) * 1e9 / max(n, 1)
                                                 for k, v in c1["threads"].items()}}

    # perf record, the same way, on the same workload.
    path = os.path.join(a.tmp, "live.perf.data")
    wl = start_workload(a.build, warm + win + 10, hot_mib, rate)
    perf = subprocess.Popen(["perf", "record", "-q", *perf_extra, "-e", "page-faults", "-c", "1", "-d", "-a",
                             "-k", "mono", "-o", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(warm)
        c0 = cpu_now(perf.pid)
        time.sleep(win)
        c1 = cpu_now(perf.pid)
    finally:
        stop(perf, signal.SIGINT, timeout=120)
        stop(wl)
    res["perf_record"] = {"samples": perf_window_samples(path, c0["t"], c1["t"]), "seconds": c1["t"] - c0["t"],
                          "cpu_s": c1["schedstat"] - c0["schedstat"], "cpu_s_stat": c1["stat"] - c0["stat"]}
    os.unlink(path)
    for k in res:
        r = res[k]
        r["ns_per_sample"] = r["cpu_s"] * 1e9 / max(r["samples"], 1)
        r["ns_per_sample_stat"] = r["cpu_s_stat"] * 1e9 / max(r["samples"], 1)
        r["samples_per_s"] = r["samples"] / r["seconds"]
    return res


def live_rounds(a, hot_mib, rate, label, perf_extra=(), unwatched=False, seconds=None):
    """--reps rounds of live_pair(); medians of each side and their ratio."""
    rounds = []
    for i in range(a.reps):
        r = live_pair(a, 2.0, seconds or a.live, hot_mib, rate, perf_extra, unwatched)
        rounds.append(r)
        log("   %s round %d/%d: damon-perfd %.1f ns (%.0fk samples/s), perf record %.1f ns (%.0fk/s)"
            % (label, i + 1, a.reps, r["daemon"]["ns_per_sample"], r["daemon"]["samples_per_s"] / 1e3,
               r["perf_record"]["ns_per_sample"], r["perf_record"]["samples_per_s"] / 1e3))
    ours = median([r["daemon"]["ns_per_sample"] for r in rounds])
    peer = median([r["perf_record"]["ns_per_sample"] for r in rounds])
    rate_s = median([r["daemon"]["samples_per_s"] for r in rounds])
    threads = {k: median([r["daemon"]["ns_per_sample_by_thread"].get(k, 0) for r in rounds])
               for k in rounds[0]["daemon"]["ns_per_sample_by_thread"]}
    return {"workload": {"hot_mib": hot_mib, "rate": rate}, "rounds": rounds, "ns_per_sample_median": ours,
            "perf_record_ns_per_sample_median": peer, "samples_per_s_median": rate_s,
            "ns_per_sample_by_thread_median": threads}


def bench_live(a, raw):
    res = live_rounds(a, 64, 200, "live")
    # The same beside it at a fixed, lower rate (the workload's pace, not the CPU's,
    # sets it): the daemon's per-wakeup and per-target costs weigh more per sample.
    low = live_rounds(a, 1, 150, "live, lower rate")
    raw["live"] = {"full_speed": res, "lower_rate": low}
    ours, peer = res["ns_per_sample_median"], res["perf_record_ns_per_sample_median"]
    low_ours, low_peer = low["ns_per_sample_median"], low["perf_record_ns_per_sample_median"]
    budget = 2500.0
    reps = "median of %d" % a.reps if a.reps > 1 else "one run"
    return [row("live: daemon CPU per sample (%.0fk samples/s, %s)" % (res["samples_per_s_median"] / 1e3, reps), ours,
                "ns", peer, "perf record -e page-faults -c 1 -d -a", ours / peer, "<= 1.0x", ours / peer <= 1.0),
            row("live, same at a lower rate (%.0fk samples/s, 1 MiB hot area)" % (low["samples_per_s_median"] / 1e3),
                low_ours, "ns", low_peer, "perf record, same", low_ours / low_peer, "<= 1.0x (info)", None),
            row("all-in daemon CPU per sample, steady state", ours, "ns", budget,
                "kernel budget (2.5 us at 100k/s, 25%)", ours / budget, "<= 100 ns", ours <= 100)]


# Fault rates of the workload for the cost-at-every-rate rows: (hot area in
# MiB, passes a second); faults/s = pages of the hot area x passes.  The last
# asks for more than one core can fault: it runs as fast as it goes.
RATES = [("2k", 1, 8), ("20k", 1, 78), ("200k", 8, 98), ("1M", 64, 61)]
PERF_CHEAPEST = ("-B", "-N")        # no build-id collection: perf record's cheapest form
# The rates rows' window takes in at least the daemon's slowest periodic
# wake-up (the main loop's quiet look, every 30 s), so that each window holds
# its share of every one, not a lucky none.
RATES_WINDOW_MIN_S = 30.0


def bench_rates(a, raw):
    """CPU per sample at fixed sampling rates beside perf record -B -N: where
    fixed costs (wake-ups, aggregations, /proc reads) would show."""
    rows, res = [], {}
    for name, hot_mib, rate in RATES:
        if a.rates and name not in a.rates.split(","):
            continue
        r = live_rounds(a, hot_mib, rate, "rate " + name, PERF_CHEAPEST, unwatched=True,
                        seconds=max(a.live, RATES_WINDOW_MIN_S))
        res[name] = r
        ours, peer = r["ns_per_sample_median"], r["perf_record_ns_per_sample_median"]
        rows.append(row("steady-state CPU per sample, nobody querying, %s faults/s asked (%.1fk/s reached)"
                        % (name, r["samples_per_s_median"] / 1e3), ours, "ns", peer,
                        "perf record -B -N -e page-faults -c 1 -d -a", ours / peer, "<= 1.0x", ours / peer <= 1.0))
    raw["rates"] = res
    return rows


def idle_cpu(pid, seconds):
    c0 = cpu_now(pid)
    time.sleep(seconds)
    c1 = cpu_now(pid)
    dt = c1["t"] - c0["t"]
    return {"seconds": dt, "cpu_ms_per_s": (c1["schedstat"] - c0["schedstat"]) * 1e3 / dt,
            "by_thread_ms_per_s": {k: (v - c0["threads"].get(k, 0)) * 1e3 / dt for k, v in c1["threads"].items()}}


def bench_idle(a, raw):
    """CPU a second with nothing but the machine's own background faults: the
    daemon as shipped (every CPU, every process), beside perf record -B -N."""
    d = Daemon(a.build, a.tmp, "idle")
    try:
        d.start()
        d.wait_ready()
        time.sleep(3)
        ours = idle_cpu(d.proc.pid, a.idle)
        samples = d.damonctl("stats")["totals"]["callback"]
    finally:
        d.stop()
    path = os.path.join(a.tmp, "idle.perf.data")
    perf = subprocess.Popen(["perf", "record", "-q", *PERF_CHEAPEST, "-e", "page-faults", "-c", "1", "-d", "-a",
                             "-o", path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(3)
        peer = idle_cpu(perf.pid, a.idle)
    finally:
        stop(perf, signal.SIGINT, timeout=120)
        os.unlink(path)
    raw["idle"] = {"daemon": ours, "perf_record": peer, "daemon_samples_total": samples}
    log("   idle: damon-perfd %.3f ms/s %s, perf record %.3f ms/s"
        % (ours["cpu_ms_per_s"], {k: round(v, 3) for k, v in ours["by_thread_ms_per_s"].items()},
           peer["cpu_ms_per_s"]))
    return [row("idle: CPU a second over %.0f s (every CPU sampled, background faults only)" % ours["seconds"],
                ours["cpu_ms_per_s"], "ms/s", peer["cpu_ms_per_s"], "perf record -B -N, same",
                ours["cpu_ms_per_s"] / max(peer["cpu_ms_per_s"], 1e-9), "<= 0.5 ms/s",
                ours["cpu_ms_per_s"] <= 0.5)]


def bench_overflow(a, raw):
    path = os.path.join(a.tmp, "overflow.json")
    subprocess.run([os.path.join(a.build, "bench", "bench-overflow"), "--seconds", "5", "--json", path])
    d = json.load(open(path))
    raw["overflow"] = d
    rate = min(d["achieved_rate"]) / 1e6
    return [row("SPSC overflow at 1M samples/s per CPU (%d CPUs, %.2fM/s reached)" % (d["producers"], rate),
                d["overflow"], "samples", d["queue_peak"], "deepest queue of %d" % d["queue_capacity"], None,
                "0", d["overflow"] == 0 and d["ring_full"] == 0 and rate >= 0.99)]


def slope_per_min(points):
    n = len(points)
    if n < 2:
        return 0.0
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    sxx = sum((t - mx) ** 2 for t, _ in points)
    return 60 * sum((t - mx) * (v - my) for t, v in points) / sxx if sxx else 0.0


def fd_count(pid):
    """Open file descriptors of @pid."""
    return len(os.listdir(f"/proc/{pid}/fd"))


SOAK_QUERY_EVERY = 5.0      # s between rounds of damonctl queries during the soak


def soak_query(d, wl_pid):
    """What an operator's tools ask of a running daemon, each over a new
    connection; returns (targets, regions) tracked, which the RSS follows."""
    d.damonctl("stats")
    d.damonctl("cpus")
    targets = d.damonctl("targets").get("targets", [])
    d.damonctl("regions", "--top=20")
    if any(t.get("pid") == wl_pid for t in targets):       # once the workload is a target
        d.damonctl("regions", f"--target={wl_pid}", "--top=5")
    d.damonctl("damon")
    return len(targets), sum(t.get("nr_regions", 0) for t in targets)


def ends(points, span):
    """(first, last) medians of (t, v) @points over their first and last @span s."""
    t_end = points[-1][0]
    first = [v for t, v in points if t < points[0][0] + span]
    last = [v for t, v in points if t > t_end - span]
    return median(first), median(last)


def bench_soak(a, raw):
    wl = start_workload(a.build, a.soak + 30)
    d = Daemon(a.build, a.tmp, "soak")
    samples, tracked, query_rounds, next_query = [], [], 0, 0.0
    try:
        d.start()
        d.wait_ready()
        t0 = now()
        while now() - t0 < a.soak:
            total, rings, rings_size = smaps_rss_kib(d.proc.pid)
            t = now() - t0
            samples.append({"t": t, "rss_beyond_mib": (total - rings) / 1024, "rss_total_mib": total / 1024,
                            "rings_rss_mib": rings / 1024, "rings_mapped_mib": rings_size / 1024,
                            "fds": fd_count(d.proc.pid)})
            if t >= next_query:
                tracked.append((t,) + soak_query(d, wl.pid))
                query_rounds += 1
                next_query += SOAK_QUERY_EVERY
            time.sleep(max(0.0, 1.0 - (now() - t0) % 1.0))
        callbacks = d.callbacks()
    finally:
        d.stop()
        stop(wl)
    beyond = [(s["t"], s["rss_beyond_mib"]) for s in samples]
    fds = [(s["t"], s["fds"]) for s in samples]
    # First against last minute (a quarter of a shorter soak): the first one
    # holds the start (queues, targets and regions being set up).
    span = min(60.0, a.soak / 4)
    rss_first, rss_last = ends(beyond, span)
    fd_first, fd_last = ends(fds, span)
    # Flat: the second half grows at under 1 MiB per 10 minutes, and the last
    # minute sits within 1 MiB of the first; not one fd more at the end than
    # the first minute ever had (connections come and go in between).
    slope = slope_per_min([p for p in beyond if p[0] >= a.soak / 2])
    fd_first_max = max(v for t, v in fds if t < fds[0][0] + span)
    fd_last_max = max(v for t, v in fds if t > fds[-1][0] - span)
    rss_flat = abs(slope) * 10 <= 1.0 and rss_last - rss_first <= 1.0
    fds_flat = fd_last_max <= fd_first_max
    raw["soak"] = {"seconds": a.soak, "samples": callbacks, "query_rounds": query_rounds,
                   "query_every_s": SOAK_QUERY_EVERY, "per_second": samples,
                   "tracked": [{"t": t, "targets": n, "regions": r} for t, n, r in tracked],
                   "rss_beyond_rings_mib": {"min": min(v for _, v in beyond), "max": max(v for _, v in beyond),
                                            "first_minute_median": rss_first, "last_minute_median": rss_last,
                                            "second_half_slope_mib_per_min": slope, "flat": rss_flat},
                   "fds": {"min": min(v for _, v in fds), "max": max(v for _, v in fds),
                           "first_minute_median": fd_first, "last_minute_median": fd_last,
                           "first_minute_max": fd_first_max, "last_minute_max": fd_last_max, "flat": fds_flat},
                   "rings_mapped_mib": samples[-1]["rings_mapped_mib"]}
    log("   RSS beyond the rings %.2f-%.2f MiB (first minute %.2f, last %.2f, %+.3f MiB/min); fds %d-%d "
        "(first minute %g, last %g); %d query rounds; %d-%d targets, %d-%d regions tracked"
        % (min(v for _, v in beyond), max(v for _, v in beyond), rss_first, rss_last, slope,
           min(v for _, v in fds), max(v for _, v in fds), fd_first, fd_last, query_rounds,
           min(x[1] for x in tracked), max(x[1] for x in tracked), min(x[2] for x in tracked),
           max(x[2] for x in tracked)))
    return [row("RSS beyond the rings, %d s soak: min-max, first/last minute, 2nd-half slope" % a.soak,
                "%.1f-%.1f MiB, %.1f/%.1f, %+.2f MiB/min" % (min(v for _, v in beyond), max(v for _, v in beyond),
                                                          rss_first, rss_last, slope), "",
                "%.1f MiB mapped, %.1f resident" % (samples[-1]["rings_mapped_mib"], samples[-1]["rings_rss_mib"]),
                "perf rings", None, "<= 16 MiB, flat", max(v for _, v in beyond) <= 16 and rss_flat),
            row("open fds, same soak, damonctl queries every %g s: min-max, first/last minute" % SOAK_QUERY_EVERY,
                "%d-%d, %g/%g" % (min(v for _, v in fds), max(v for _, v in fds), fd_first, fd_last), "", None,
                "", None, "flat", fds_flat)]


def bench_start(a, raw):
    times = []
    for i in range(5):
        d = Daemon(a.build, a.tmp, "start%d" % i)
        try:
            d.start()
            times.append(d.wait_ready())
            cpus = d.damonctl("cpus")
        finally:
            d.stop()
        states = json.dumps(cpus)
        assert '"running"' in states and '"error"' not in states, "not every CPU RUNNING at READY: " + states[:300]
    raw["start"] = {"seconds": times}
    ms = median(times) * 1e3
    return [row("start -> all CPUs RUNNING (READY=1), median of 5", ms, "ms", None, "", None, "<= 100 ms",
                ms <= 100)]


def row(measure, ours, unit, peer, peer_name, ratio, target, met):
    return {"measure": measure, "ours": ours, "unit": unit, "peer": peer, "peer_name": peer_name, "ratio": ratio,
            "target": target, "met": met}


def fmt(v, unit=""):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if isinstance(v, int):
        return f"{v} {unit}".strip()
    if abs(v) >= 100:
        s = f"{v:.0f}"
    elif abs(v) >= 10:
        s = f"{v:.1f}"
    else:
        s = f"{v:.2f}"
    return f"{s} {unit}".strip()


def print_table(rows):
    head = ["measure", "ours", "peer", "ratio", "target", "met?"]
    lines = []
    for r in rows:
        peer = fmt(r["peer"], r["unit"] if not isinstance(r["peer"], str) else "")
        if r["peer_name"]:
            peer = f"{peer} ({r['peer_name']})" if peer != "-" else r["peer_name"]
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}x" if r["ratio"] < 10 else f"{r['ratio']:.1f}x"
        met = "info" if r["met"] is None else "yes" if r["met"] else "NO"
        lines.append([r["measure"], fmt(r["ours"], r["unit"]), peer, ratio, r["target"], met])
    widths = [max(len(x[i]) for x in lines + [head]) for i in range(len(head))]
    sep = "-+-".join("-" * w for w in widths)
    print(" | ".join(h.ljust(w) for h, w in zip(head, widths)))
    print(sep)
    for x in lines:
        print(" | ".join(c.ljust(w) for c, w in zip(x, widths)))


MEASURES = {
    "spsc": bench_spsc,
    "tracker": bench_tracker,
    "replay": bench_replay,
    "live": bench_live,
    "rates": bench_rates,
    "idle": bench_idle,
    "overflow": bench_overflow,
    "soak": bench_soak,
    "start": bench_start,
    "value": lambda a, raw: bench_value(a, raw, row),
    "tier": lambda a, raw: bench_tier(a, raw, row),
}


def main():
    ap = argparse.ArgumentParser(description="damon-perfd performance suite (issue #8)")
    ap.add_argument("--build", required=True, help="release build directory")
    ap.add_argument("--json", help="where to write the figures (default: BUILD/bench.json)")
    ap.add_argument("--soak", type=float, default=60, help="RSS soak seconds (default 60; the full one: 600)")
    ap.add_argument("--live", type=float, default=15, help="live measuring window, seconds (default 15)")
    ap.add_argument("--idle", type=float, default=30, help="idle measuring window, seconds (default 30)")
    ap.add_argument("--reps", type=int, default=3,
                    help="replay, live, rates, value and tier repetitions, median taken (default 3)")
    ap.add_argument("--boots", type=int, default=1,
                    help="tier: guests booted for each layout, --reps repetitions in each, medians over all "
                         "(default 1): runs within one boot share its memory layout and are not independent")
    ap.add_argument("--tier-layouts", default=",".join(LAYOUTS),
                    help="tier: a comma-separated subset of %s (default: all; reclaim runs in the first)"
                         % ",".join(LAYOUTS))
    ap.add_argument("--replay-samples", type=int, default=5_000_000, help="samples the capture holds at least")
    ap.add_argument("--only", help="comma-separated subset of: " + ",".join(MEASURES))
    ap.add_argument("--rates", help="with rates: a comma-separated subset of " + ",".join(r[0] for r in RATES))
    a = ap.parse_args()
    if a.boots < 1 or a.reps < 1:
        ap.error("--boots and --reps want at least 1")
    a.tier_layouts = a.tier_layouts.split(",")
    if not a.tier_layouts or any(x not in LAYOUTS for x in a.tier_layouts):
        ap.error("unknown layout(s) in --tier-layouts %s: known are %s" % (",".join(a.tier_layouts),
                                                                           ",".join(LAYOUTS)))
    if a.rates and any(r not in [x[0] for x in RATES] for r in a.rates.split(",")):
        ap.error("unknown rate(s) in --rates %s: known are %s" % (a.rates, ",".join(r[0] for r in RATES)))
    a.build = os.path.abspath(a.build)
    a.json = a.json or os.path.join(a.build, "bench.json")
    # value and tier boot the qemu guest for minutes a repetition: only when named.
    only = a.only.split(",") if a.only else [m for m in MEASURES if m not in ("value", "tier")]
    unknown = [m for m in only if m not in MEASURES]
    if unknown:
        ap.error("unknown measure(s): " + ",".join(unknown))
    if os.geteuid() != 0 and any(m in only for m in ("live", "rates", "idle", "soak", "start", "replay")):
        ap.error("live, rates, idle, soak, start and replay need root (system-wide perf events)")

    rows, raw = [], {}
    load0 = os.getloadavg()
    t_start = now()
    with tempfile.TemporaryDirectory(prefix="dp-bench-") as tmp:
        a.tmp = tmp
        for m in only:
            log(f"== {m}")
            t = now()
            rows += MEASURES[m](a, raw)
            log(f"   ({now() - t:.0f} s)")
    machine = {"kernel": platform.release(), "cpus": os.cpu_count(), "load_before": load0,
               "load_after": os.getloadavg(), "seconds": now() - t_start}
    with open(a.json, "w") as f:
        json.dump({"machine": machine, "rows": rows, "raw": raw}, f, indent=2)
    print()
    print_table(rows)
    print(f"\n{os.cpu_count()} CPUs, load {load0[0]:.1f} before, {os.getloadavg()[0]:.1f} after, "
          f"{now() - t_start:.0f} s; figures in {a.json}")
    return 0 if all(r["met"] is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
