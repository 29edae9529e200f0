#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The events damon-perfd opens against the events perf opens, on fake machines.

For each machine below, a fake PMU tree (tests/sysfs/<fixture>, copied and
fitted to this host's CPUs) is bind-mounted over /sys/bus/event_source/devices
in a private mount namespace, with /sys/devices/<pmu> beside it (perf mem
checks a PMU there).  Then, in that namespace:

* `damon-perfd --print-events` prints every perf_event_attr the daemon would
  open on each CPU: the daemon's own path from the configuration through PMU
  detection and the source's event builder;
* `perf record -vv` prints every perf_event_attr it opens for the same event
  written in perf's syntax (the "same" run: the format terms must encode to
  the same type and config words), and for the events `perf mem record`
  chooses on that machine (the "mem" run), by default and with --phys-data;
* the source options the configuration does not reach (stores, IBS's
  l3missonly and cnt_ctl, load-latency thresholds) are printed by
  print-plan, which runs the same library path for one CPU, and compared
  with perf's encoding of the same terms (the "options" run).

perf gives up at the first event this host's kernel refuses, so it runs with
perf-open-shim.so preloaded, which opens a software dummy in place of each
hardware event (what perf prints is not changed).  Every field either side
sets is compared; each difference must be listed in EXPECTED with both
values and why, or the test fails naming machine, CPU, event and field.

What perf reads there: the PMUs under /sys/bus/event_source/devices (type,
format/, events/, caps/max_precise, cpus, cpumask, nr_addr_filters; hybrid
is a cpu_* PMU with a cpus file), /sys/devices/<pmu> (perf mem's check that
a PMU exists), and the host's own CPU list and topology under
/sys/devices/system, which stay real (the fake trees' CPU lists are fitted to
the host's first two CPUs).  What cannot be faked, and how it is handled:

* The CPU vendor: perf mem picks its x86 table (ibs_op// or mem-loads) from
  the cpuid instruction, and this perf is an x86-64 binary whose arm64
  mem-events.c (the SPE event) and arm_spe recording options are not built
  in.  So `perf mem record` itself runs only where the host's vendor matches
  the machine (AMD host: the Zen machines; Intel host: the Intel ones); the
  other machines get what perf mem runs, `perf record -W -d` with perf mem's
  event strings: x86 ones from perf 6.1's tools/perf/arch/x86/util/
  mem-events.c, checked to be in this perf binary (on an AMD host, perf mem
  and `perf record -W -d -e ibs_op//` print the same attr), the SPE one
  from tools/perf/arch/arm64/util/mem-events.c; for SPE only the format
  words (type, config, config1, config2) are compared.
* libpfm (the daemon encodes a plain `cpu` PMU's loads with it) identifies the
  CPU with cpuid too: LIBPFM_FORCE_PMU names the machine's PMU instead.
* What the kernel would refuse: perf retries without what a PMU refuses
  (exclude_guest on IBS, precise_ip 3 on Sapphire Rapids' load-latency
  event); the shim accepts everything, so perf's first attempt is what is
  compared, and EXPECTED says what the kernel would leave.

usage: perf-attr-diff.py DAEMON PRINT-PLAN SHIM FIXTURES
       perf-attr-diff.py --inner EMPTY-DIR TREE CMD...     (inside the namespace)
Exits 77 (skipped) without root, perf, unshare or mount; a machine that
needs more CPUs than this host has is left out, with a note.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
LDLAT = 30      # perf mem's default load-latency threshold, as ours

# perf 6.1's perf mem event strings (tools/perf/arch/x86/util/mem-events.c),
# checked against the perf binary below; the arm64 one is not in an x86 build.
X86_LOADS = "%s/mem-loads,ldlat=%u/P"
X86_LOADS_AUX = "{%s/mem-loads-aux/,%s/mem-loads,ldlat=%u/}:P"
X86_STORES = "%s/mem-stores/P"
AMD_MEM = ["ibs_op//"]     # perf mem's AMD table: one event for loads and stores
ARM64_LDST = "arm_spe_0/ts_enable=1,pa_enable=1,load_filter=1,store_filter=1,min_latency=%u/"


class Machine:
    def __init__(self, name, fixture, kind, vendor, same, mem, options, cpus=("0",), rewrite=None, pfm=None):
        self.name, self.fixture, self.kind, self.vendor = name, fixture, kind, vendor
        self.same = same                # our events in perf's syntax
        self.mem = mem                  # perf mem's events, for perf record -W -d where perf mem cannot run
        self.options = options          # (CPU, print-plan options, the same events in perf's syntax)
        self.cpus = cpus                # compared: CPU 0, and CPU 1 for the hybrid machine's atom PMU
        self.rewrite = rewrite or {}    # file -> contents, to fit the host's CPUs
        self.pfm = pfm                  # LIBPFM_FORCE_PMU for the daemon
        self.tree = None                # the fake tree, once made

    def stores_config(self, cpu):
        """The config of the core PMU's events/mem-stores on @cpu (Intel: event config:0-7, umask 8-15)."""
        def read(*path):
            with open(os.path.join(self.tree, *path)) as f:
                return f.read().strip()

        for pmu in ("cpu", "cpu_core", "cpu_atom"):
            if not os.path.isdir(os.path.join(self.tree, pmu)):
                continue
            if os.path.exists(os.path.join(self.tree, pmu, "cpus")) and cpu not in expand_cpus(read(pmu, "cpus")):
                continue
            terms = dict(t.split("=") for t in read(pmu, "events", "mem-stores").split(","))
            return hex(int(terms["event"], 0) | int(terms.get("umask", "0"), 0) << 8)
        return None


def x86_mem(pmus, aux):
    loads = [X86_LOADS_AUX % (p, p, LDLAT) if p in aux else X86_LOADS % (p, LDLAT) for p in pmus]
    return loads + [X86_STORES % p for p in pmus]


MACHINES = [
    Machine("zen3", "amd-zen3", "ibs", "AuthenticAMD", ["ibs_op//"], AMD_MEM,
            ("0", ["--count-ops"], ["ibs_op/cnt_ctl=1/"])),
    Machine("zen4", "amd-zen4", "ibs", "AuthenticAMD", ["ibs_op//"], AMD_MEM,
            ("0", ["--l3-miss-only", "--count-ops"], ["ibs_op/l3missonly=1,cnt_ctl=1/"])),
    Machine("zen5", "amd-zen5", "ibs", "AuthenticAMD", ["ibs_op//"], AMD_MEM,
            ("0", ["--min-latency", "256"], ["ibs_op/l3missonly=1,ldlat=256/"])),
    Machine("icelake", "intel-icl", "pebs", "GenuineIntel", ["cpu/mem-loads,ldlat=30/pp"],
            x86_mem(["cpu"], []),
            ("0", ["--stores", "--min-latency", "64"], ["cpu/mem-loads,ldlat=64/pp", "cpu/mem-stores/pp"]),
            pfm="icl"),
    Machine("sapphire-rapids", "intel-spr", "pebs", "GenuineIntel",
            ["{cpu/mem-loads-aux/,cpu/mem-loads,ldlat=30/pp}"], x86_mem(["cpu"], ["cpu"]),
            ("0", ["--stores"], ["{cpu/mem-loads-aux/,cpu/mem-loads,ldlat=30/pp}", "cpu/mem-stores/pp"]),
            pfm="spr"),
    # Hybrid: cpu_core on CPU 0, cpu_atom on CPU 1 of this host.
    Machine("alder-lake", "intel-adl", "pebs", "GenuineIntel",
            ["{cpu_core/mem-loads-aux/,cpu_core/mem-loads,ldlat=30/pp}", "cpu_atom/mem-loads,ldlat=30/pp"],
            x86_mem(["cpu_core", "cpu_atom"], ["cpu_core"]),
            ("1", ["--stores"], ["cpu_atom/mem-loads,ldlat=30/pp", "cpu_atom/mem-stores/pp"]),
            cpus=("0", "1"), rewrite={"cpu_core/cpus": "0", "cpu_atom/cpus": "1"}),
    Machine("neoverse-spe", "arm-spe", "spe", "ARM", ["arm_spe_0/ts_enable=1,jitter=1,load_filter=1/"],
            [ARM64_LDST % LDLAT],
            ("0", ["--stores", "--phys", "--min-latency", "64"],
             ["arm_spe_0/ts_enable=1,jitter=1,load_filter=1,store_filter=1,pa_enable=1,min_latency=64/"]),
            rewrite={"arm_spe_0/cpumask": "0-1", "armv8_pmuv3_0/cpus": "0-1"}),
]

# Every difference between our attr and perf's, as (run, who, role, field):
# (ours, perf's, why).  run: "same" (our event in perf's syntax), "mem",
# "mem-phys" (perf mem's choice, without and with --phys-data; "mem*" both),
# "options" (print-plan), "*" every run; who: a machine's CPU
# ("alder-lake/cpu1"), a machine, a source kind or "*"; role: our event's
# role, "perf-only" for an event only perf opens; field as perf prints it,
# "event" for an event only one side opens, "group leader" for the index of
# its leader on that CPU.  An entry that no longer matches fails the test.
NO_PHYS = "TID|TIME|ADDR|CPU|WEIGHT|DATA_SRC"
PERF_MEM_SAMPLE = "IP|TID|TIME|ADDR|CPU|PERIOD|IDENTIFIER|DATA_SRC|WEIGHT_STRUCT"
PERF_MEM_SAMPLE_PHYS = "IP|TID|TIME|ADDR|CPU|PERIOD|IDENTIFIER|DATA_SRC|PHYS_ADDR|WEIGHT_STRUCT"
SAMPLE_TYPE_WHY = ("we resolve no symbols (no IP), sample at a fixed period (no PERIOD), tell loads from "
                   "stores by data_src (no IDENTIFIER) and read only the load latency (WEIGHT, the u64 the "
                   "kernel fills with it; WEIGHT_STRUCT adds the instruction latency we do not use)")
EXPECTED = {}
# Fields of every x86 sampling event (for SPE only the format words are compared).
for kind, role, period in (("ibs", "ibs_op", "131072"), ("pebs", "mem-loads", "1000"),
                           ("pebs", "mem-loads-aux", "0")):
    for field, e in {
        "{ sample_period, sample_freq }": (period, "4000", "a fixed period, so that a sample stands for a "
                                           "known number of events; perf mem asks for 4000 samples/s"),
        "freq": ("0", "1", "a fixed period, not a frequency"),
        "inherit": ("0", "1", "our events are per CPU (pid -1), where inherit has no effect"),
        "read_format": ("TOTAL_TIME_ENABLED|LOST", "ID|LOST", "we read time_enabled to see a CPU's event "
                        "detached by hotplug; perf reads IDs to tell its events apart"),
        "use_clockid": ("1", "0", "CLOCK_MONOTONIC timestamps, on the clock the tracker's intervals use"),
        "clockid": ("1", "0", "CLOCK_MONOTONIC"),
        "watermark": ("1", "0", "the reader wakes when the ring is half full, not per event"),
        "{ wakeup_events, wakeup_watermark }": ("262144", "0", "half of the default 128-page ring, in bytes"),
    }.items():
        EXPECTED[("mem*", kind, role, field)] = e
EXPECTED.update({
    # AMD IBS op.
    ("mem", "ibs", "ibs_op", "sample_type"): ("TID|TIME|ADDR|CPU|RAW|WEIGHT|DATA_SRC", PERF_MEM_SAMPLE,
                                              "RAW: we decode IBS's registers ourselves (errata, kernels "
                                              "before 6.1 fill no DATA_SRC); " + SAMPLE_TYPE_WHY),
    ("mem-phys", "ibs", "ibs_op", "sample_type"): ("TID|TIME|ADDR|CPU|RAW|WEIGHT|DATA_SRC|PHYS_ADDR",
                                                   PERF_MEM_SAMPLE_PHYS, "as without --phys"),
    ("mem*", "ibs", "ibs_op", "exclude_guest"): ("0", "1", "IBS cannot filter by mode "
                                                 "(PERF_PMU_CAP_NO_EXCLUDE): the kernel refuses exclude_guest "
                                                 "with EINVAL and perf opens again without it"),
    # Intel PEBS: loads.
    ("mem", "pebs", "mem-loads", "sample_type"): (NO_PHYS, PERF_MEM_SAMPLE, SAMPLE_TYPE_WHY),
    ("mem-phys", "pebs", "mem-loads", "sample_type"): (NO_PHYS + "|PHYS_ADDR", PERF_MEM_SAMPLE_PHYS,
                                                       SAMPLE_TYPE_WHY),
    ("mem*", "pebs", "mem-loads", "precise_ip"): ("2", "3", "perf's :P tries 3 (precise distribution) "
                                                  "first and goes down while the kernel refuses (Sapphire "
                                                  "Rapids allows 3 only on counter 0, which 0x1cd cannot "
                                                  "use); 2 gives PEBS's data address and latency and "
                                                  "schedules everywhere"),
    ("*", "pebs", "mem-loads", "{ bp_addr, config1 }"): ("0x1e", "0x1f", "ldlat 30: perf 6.1 ORs the user's "
                                                         "ldlat=30 into events/mem-loads' ldlat=3 "
                                                         "(pmu_format_value() never clears a bit); we "
                                                         "replace it, as libpfm does"),
    ("options", "icelake", "mem-loads", "{ bp_addr, config1 }"): ("0x40", "0x43", "ldlat 64, ORed with 3 by "
                                                                  "perf as above"),
    # A lone cpu/mem-loads/P (no aux leader): Ice Lake, Alder Lake's cpu_atom.
    ("mem*", "icelake", "mem-loads", "exclude_guest"): ("1", "0", "perf sets it for a p modifier or in a "
                                                        "group, not for a lone /P; a guest's loads would "
                                                        "use up the period with PEBS off in the guest, and "
                                                        "are not the host process's accesses"),
    ("mem*", "alder-lake/cpu1", "mem-loads", "exclude_guest"): ("1", "0", "as on Ice Lake"),
    # Intel PEBS: the mem-loads-aux leader only counts.
    ("mem*", "pebs", "mem-loads-aux", "freq"): ("0", "1", "the leader only counts; its member samples"),
    ("mem", "pebs", "mem-loads-aux", "sample_type"): ("0", PERF_MEM_SAMPLE, "the leader only counts"),
    ("mem-phys", "pebs", "mem-loads-aux", "sample_type"): ("0", PERF_MEM_SAMPLE_PHYS, "the leader only counts"),
    ("mem*", "pebs", "mem-loads-aux", "precise_ip"): ("0", "3", "the leader only counts: precise sampling "
                                                      "needs a sampling event"),
    # perf mem records stores too (-t load,store by default); Source=pebs samples loads only.
    ("mem*", "pebs", "perf-only", "event"): ("perf only", "mem-stores", "Source=pebs samples loads: a store "
                                             "has no load latency, and DAMON's access counts do not need "
                                             "both"),
    # ARM SPE: perf mem's terms against ours (x86 perf has no arm_spe recording options to compare).
    ("mem", "spe", "arm_spe", "config"): ("0x200010001", "0x600000003",
                                          "ours ts_enable jitter load_filter; perf mem's ts_enable pa_enable "
                                          "load_filter store_filter: jitter keeps samples out of lock-step "
                                          "with loops, physical addresses (CAP_PERFMON) only with --phys, "
                                          "loads only as for PEBS"),
    ("mem-phys", "spe", "arm_spe", "config"): ("0x200010003", "0x600000003", "as without --phys, with "
                                               "pa_enable"),
    ("mem*", "spe", "arm_spe", "{ bp_len, config2 }"): ("0", "0x1e", "perf mem's min_latency=30; we count "
                                                        "every sampled load, not only slow ones"),
})

# ---- running things inside the namespace ----

def inner(real, tree, cmd):
    """Runs as root in a fresh mount namespace: fake PMUs, then exec @cmd.
    @real: an empty directory to keep the real /sys/devices reachable at."""
    def mount(*args):
        subprocess.run(["mount", *args], check=True)

    mount("--bind", "/sys/devices", real)
    mount("-t", "tmpfs", "tmpfs", "/sys/devices")
    os.mkdir("/sys/devices/system")
    mount("--bind", os.path.join(real, "system"), "/sys/devices/system")
    for pmu in os.listdir(tree):
        os.symlink(os.path.join(tree, pmu), os.path.join("/sys/devices", pmu))
    mount("--bind", tree, "/sys/bus/event_source/devices")
    os.execvp(cmd[0], cmd)


def in_namespace(tree, cmd, env=None):
    real = os.path.join(os.path.dirname(tree), "real-devices")
    os.makedirs(real, exist_ok=True)
    full = ["unshare", "--mount", "--propagation", "private", sys.executable, os.path.abspath(__file__),
            "--inner", real, tree, *cmd]
    result = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120,
                            env={**os.environ, **(env or {})}, check=False)
    return result.returncode, result.stdout


# ---- parsing both outputs ----

RULE = "-" * 60
ATTR_LINE = re.compile(r"^  (\S.*?)\s+(\S+)$")


def parse_attrs(lines, i):
    """The block at lines[i] == RULE; returns (dict, index after its closing rule)."""
    assert lines[i + 1] == "perf_event_attr:", lines[i + 1]
    attr, i = {}, i + 2
    while lines[i] != RULE:
        m = ATTR_LINE.match(lines[i])
        if not m:
            raise ValueError(f"unparsable attr line {lines[i]!r}")
        attr[m.group(1)] = m.group(2)
        i += 1
    return attr, i + 1


OPEN_LINE = re.compile(r"^sys_perf_event_open: pid (-?\d+)\s+cpu (-?\d+)\s+group_fd (-?\d+)\s+flags \S+ = (\d+)")


def parse_perf(text):
    """perf record -vv: {cpu: [(attr, leader index in that CPU's list or None)]} of
    the hardware events; perf's own software dummies (side band, tracking) are left out."""
    lines, per_cpu, fds, i, attr = text.splitlines(), {}, {}, 0, None
    while i < len(lines):
        if lines[i] == RULE and i + 1 < len(lines) and lines[i + 1] == "perf_event_attr:":
            attr, i = parse_attrs(lines, i)
            continue
        m = OPEN_LINE.match(lines[i])
        if m and attr is not None and attr.get("type") != "1":
            cpu, group_fd, fd = m.group(2), int(m.group(3)), int(m.group(4))
            events = per_cpu.setdefault(cpu, [])
            fds[fd] = (cpu, len(events))
            leader = fds[group_fd][1] if group_fd >= 0 else None
            events.append((attr, leader))
        i += 1
    return per_cpu


CPUS_LINE = re.compile(r"^# cpus (\S+): (\S+) on (\S+), (\d+) events?")
EVENT_LINE = re.compile(r"^# event (\d+): (\S+), (group leader|in the group of event (\d+))")


def expand_cpus(text):
    cpus = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        cpus += [str(c) for c in range(int(lo), int(hi or lo) + 1)]
    return cpus


def parse_daemon(text):
    """damon-perfd --print-events: {cpu: [(attr, leader or None, role)]}."""
    lines, per_cpu, cpus, i, role, leader = text.splitlines(), {}, [], 0, None, None
    while i < len(lines):
        m, e = CPUS_LINE.match(lines[i]), EVENT_LINE.match(lines[i])
        if m:
            cpus = expand_cpus(m.group(1))
        elif e:
            role, leader = e.group(2), int(e.group(4)) if e.group(4) else None
        elif lines[i] == RULE:
            attr, i = parse_attrs(lines, i)
            for cpu in cpus:
                per_cpu.setdefault(cpu, []).append((attr, leader, role))
            continue
        i += 1
    return per_cpu


# ---- comparing ----

FORMAT_FIELDS = ("type", "config", "{ bp_addr, config1 }", "{ bp_len, config2 }")
SAME_FIELDS = FORMAT_FIELDS + ("precise_ip", "group leader")


def expectation(machine, cpu, run, role, field):
    """The EXPECTED entry for this field, the most specific first."""
    runs = (run, "mem*", "*") if run.startswith("mem") else (run, "*")
    for r in runs:
        for who in (f"{machine.name}/cpu{cpu}", machine.name, machine.kind, "*"):
            e = EXPECTED.get((r, who, role, field))
            if e is not None:
                return (r, who, role, field), e
    return None, None


class Report:
    def __init__(self):
        self.failures, self.used, self.fields, self.events, self.differences = [], set(), 0, 0, 0

    def compare(self, machine, run, cpu, ours, theirs):
        where = f"{machine.name} cpu{cpu} {run}"
        for n in range(max(len(ours), len(theirs))):
            role = ours[n][2] if n < len(ours) else "perf-only"
            if n >= len(ours) or n >= len(theirs):
                key, e = expectation(machine, cpu, run, role, "event")
                present = "perf only" if n >= len(ours) else "ours only"
                extra = theirs[n][0] if n >= len(ours) else ours[n][0]
                if e is None or e[0] != present:
                    self.failures.append(f"{where} event {n} ({role}): {present}, not expected")
                elif present == "perf only" and extra.get("config") != machine.stores_config(cpu):
                    self.failures.append(f"{where} event {n}: perf's extra event has config {extra.get('config')}, "
                                         f"not {machine.stores_config(cpu)} ({e[1]})")
                else:
                    self.used.add(key)
                    self.differences += 1
                continue
            self.events += 1
            a, b = dict(ours[n][0]), dict(theirs[n][0])
            a["group leader"] = str(ours[n][1])
            b["group leader"] = str(theirs[n][1])
            fields = SAME_FIELDS if run in ("same", "options") else FORMAT_FIELDS if machine.kind == "spe" else sorted(set(a) | set(b))
            for field in fields:
                self.one(machine, cpu, run, where, n, role, field, a.get(field, "0"), b.get(field, "0"))

    def one(self, machine, cpu, run, where, n, role, field, mine, perfs):
        self.fields += 1
        key, e = expectation(machine, cpu, run, role, field)
        if mine == perfs and e is None:
            return
        if e is None:
            self.failures.append(f"{where} event {n} ({role}) {field}: ours {mine}, perf {perfs}")
            return
        self.used.add(key)
        if (mine, perfs) != e[:2]:
            self.failures.append(f"{where} event {n} ({role}) {field}: ours {mine}, perf {perfs}; "
                                 f"expected ours {e[0]}, perf {e[1]} ({e[2]})")
        else:
            self.differences += 1


# ---- main ----

def host_vendor():
    with open("/proc/cpuinfo") as f:
        m = re.search(r"^vendor_id\s*:\s*(\S+)", f.read(), re.M)
    return m.group(1) if m else "unknown"


def check_perf_templates(perf):
    with open(os.path.realpath(perf), "rb") as f:
        binary = f.read()
    missing = [t for t in (X86_LOADS, X86_LOADS_AUX, X86_STORES) if t.encode() not in binary]
    return missing


def fake_tree(fixtures, machine, into):
    tree = os.path.join(into, machine.fixture)
    shutil.copytree(os.path.join(fixtures, machine.fixture), tree, symlinks=True)
    for path, text in machine.rewrite.items():
        with open(os.path.join(tree, path), "w") as f:
            f.write(text + "\n")
    return tree


def runs(machine, vendor, daemon, print_plan, out):
    """(run name, CPUs compared, our command, perf's command) of each comparison."""
    cpus = ",".join(machine.cpus)

    def record(cpus, events, *extra):
        return ["perf", "record", "-vv", "-a", "-C", cpus, "-o", out, *extra,
                *[arg for e in events for arg in ("-e", e)], "--", "true"]

    def ours(*options):
        return [daemon, "--print-events", "--no-varlink", "--source", machine.kind, "--cpus", cpus, *options]

    result = [("same", machine.cpus, ours(), record(cpus, machine.same))]
    for run, phys in (("mem", False), ("mem-phys", True)):
        if vendor == machine.vendor and machine.kind != "spe":
            perf = ["perf", "mem", "record", "-vv", *(["-p"] if phys else []), "-a", "-C", cpus, "-o", out,
                    "--", "true"]
        else:
            perf = record(cpus, machine.mem, "-W", "-d", *(["--phys-data"] if phys else []))
        result.append((run, machine.cpus, ours(*(["--phys"] if phys else [])), perf))
    cpu, options, events = machine.options
    result.append(("options", (cpu,), [print_plan, *options, machine.kind, cpu], record(cpu, events)))
    return result


def main():
    if len(sys.argv) > 3 and sys.argv[1] == "--inner":
        inner(sys.argv[2], sys.argv[3], sys.argv[4:])
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    daemon, print_plan, shim, fixtures = sys.argv[1:]
    if os.geteuid() != 0:
        print("SKIP: needs root for a private mount namespace (unshare -m) and bind mounts")
        sys.exit(SKIP)
    for tool in ("perf", "unshare", "mount"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed (perf: Debian's linux-perf)")
            sys.exit(SKIP)
    missing = check_perf_templates(shutil.which("perf"))
    if missing:
        sys.exit(f"FAIL: this perf does not build perf mem's events from {missing}: update the test's templates")
    machines = [m for m in MACHINES if max(int(c) for c in m.cpus + (m.options[0],)) < os.cpu_count()]
    for m in set(MACHINES) - set(machines):
        print(f"note: {m.name} left out: it needs CPUs {', '.join(m.cpus)} on this host")

    vendor, report = host_vendor(), Report()
    with tempfile.TemporaryDirectory(prefix="dp-attr-") as tmp:
        for machine in machines:
            tree = machine.tree = fake_tree(fixtures, machine, tmp)
            for run, cpus, our_cmd, perf_cmd in runs(machine, vendor, daemon, print_plan,
                                                     os.path.join(tmp, "perf.data")):
                rc, text = in_namespace(tree, our_cmd, {"LIBPFM_FORCE_PMU": machine.pfm} if machine.pfm else {})
                if rc != 0:
                    sys.exit(f"FAIL: {machine.name} {run}: {' '.join(our_cmd)} failed:\n{text}")
                ours = parse_daemon(text)
                rc, text = in_namespace(tree, perf_cmd, {"LD_PRELOAD": shim})
                theirs = parse_perf(text)
                for cpu in cpus:
                    if cpu not in ours or cpu not in theirs:
                        sys.exit(f"FAIL: {machine.name} {run}: no events on cpu{cpu} "
                                 f"(ours: {sorted(ours)}, perf's: {sorted(theirs)}); perf said:\n{text}")
                    report.compare(machine, run, cpu, ours[cpu], theirs[cpu])
    stale = sorted(set(EXPECTED) - report.used) if machines == MACHINES else []
    for key in stale:
        report.failures.append(f"expected difference {key} was not seen: remove it or find out why")
    for failure in report.failures:
        print("FAIL:", failure)
    print(f"{len(machines)} machines, {report.events} events, {report.fields} fields compared; "
          f"{report.differences} differences, each expected; {len(report.failures)} failures")
    sys.exit(1 if report.failures else 0)


if __name__ == "__main__":
    main()
