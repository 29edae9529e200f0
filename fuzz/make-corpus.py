#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/.

Every seed is built here from the formats (FIELD-NOTES, the kernel's and
perf's headers), small and deterministic, so that the fuzzers start past the
magic numbers and size fields.  Two seeds come from files when they are at
hand: the repository's own configuration examples and varlink interface, and
(with --capture PATH, e.g. ../shared/testdata/pagefault-system.perf.data) the
first records of a real capture, carved into a small valid perf.data.

    fuzz/make-corpus.py [--capture PATH]

Rewrites the seeds in the corpus directories it knows, keeping the
reproducers of past findings (regress-*, added by hand); commit what it
writes."""
import argparse
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz", "corpus")
MAX_SEED = 4096

# perf_event.h
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU = 1, 2, 4, 8, 16, 32, 64, 128
S_PERIOD, S_STREAM_ID, S_RAW, S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = 256, 512, 1024, 2048, 4096, 8192
S_WEIGHT, S_DATA_SRC, S_IDENTIFIER, S_TRANSACTION, S_REGS_INTR, S_PHYS_ADDR = 1 << 14, 1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19
S_AUX, S_CGROUP, S_DATA_PAGE_SIZE, S_CODE_PAGE_SIZE, S_WEIGHT_STRUCT = 1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24
R_MMAP, R_LOST, R_COMM, R_EXIT, R_THROTTLE, R_UNTHROTTLE, R_FORK, R_SAMPLE = 1, 2, 3, 4, 5, 6, 7, 9
R_MMAP2, R_AUX, R_ITRACE_START, R_LOST_SAMPLES, R_SWITCH, R_SWITCH_CPU_WIDE = 10, 11, 12, 13, 14, 15
R_FINISHED_ROUND, R_AUXTRACE_INFO, R_AUXTRACE, R_TIME_CONV = 68, 70, 71, 79
MISC_SWITCH_OUT, MISC_COMM_EXEC = 0x2000, 0x2000
ATTR_SIZE = 128         # PERF_ATTR_SIZE_VER7
FLAG_DISABLED, FLAG_MMAP, FLAG_COMM, FLAG_SAMPLE_ID_ALL = 1, 1 << 8, 1 << 9, 1 << 18
HEADER_CPUID, HEADER_PMU_MAPPINGS = 9, 16


def u8(v): return struct.pack("<B", v)
def u16(v): return struct.pack("<H", v)
def u32(v): return struct.pack("<I", v)
def u64(v): return struct.pack("<Q", v & (2 ** 64 - 1))


def record(rtype, body, misc=0):
    assert len(body) % 8 == 0
    return struct.pack("<IHH", rtype, misc, 8 + len(body)) + body


def attr(ptype, config, sample_type, flags, read_format=0, period=1, branch_type=0, regs_user=0, regs_intr=0):
    a = struct.pack("<IIQQQQQII", ptype, ATTR_SIZE, config, period, sample_type, read_format, flags, 0, 0)
    a += u64(0) + u64(0) + u64(branch_type) + u64(regs_user) + u32(0) + u32(0) + u64(regs_intr)
    return a.ljust(ATTR_SIZE, b"\0")


def perf_string(s):
    """A header string: u32 len (NUL and padding to 64 included), the bytes."""
    raw = s.encode() + b"\0"
    raw = raw.ljust((len(raw) + 63) // 64 * 64, b"\0")
    return u32(len(raw)) + raw


def perf_data(attrs, records, features=None):
    """A file-mode perf.data: attrs is [(attr bytes, [ids])], features {bit: bytes}."""
    features = features or {}
    out = bytearray(104)
    ids_offsets = []
    for _, ids in attrs:
        ids_offsets.append(len(out))
        out += b"".join(u64(i) for i in ids)
    while len(out) % 8:
        out += b"\0"
    attrs_offset = len(out)
    for (a, ids), off in zip(attrs, ids_offsets):
        out += a + u64(off) + u64(8 * len(ids))
    data_offset = len(out)
    data = b"".join(records)
    out += data
    table_at = len(out)
    out += bytes(16 * len(features))
    bitmap = [0, 0, 0, 0]
    for i, bit in enumerate(sorted(features)):
        bitmap[bit // 64] |= 1 << (bit % 64)
        struct.pack_into("<QQ", out, table_at + 16 * i, len(out), len(features[bit]))
        out += features[bit]
    struct.pack_into("<8sQQQQQQQQ", out, 0, b"PERFILE2", 104, ATTR_SIZE + 16, attrs_offset,
                     (ATTR_SIZE + 16) * len(attrs), data_offset, len(data), 0, 0)
    struct.pack_into("<4Q", out, 72, *bitmap)
    return bytes(out)


def sample_fixed(sample_type, ip, pid, tid, time, addr, cpu, period=1, ident=None, phys=None, data_src=None,
                 weight=None):
    """A sample of a layout without variable fields, fields in kernel order."""
    b = b""
    if sample_type & S_IDENTIFIER: b += u64(ident)
    if sample_type & S_IP: b += u64(ip)
    if sample_type & S_TID: b += u32(pid) + u32(tid)
    if sample_type & S_TIME: b += u64(time)
    if sample_type & S_ADDR: b += u64(addr)
    if sample_type & S_ID: b += u64(ident)
    if sample_type & S_CPU: b += u32(cpu) + u32(0)
    if sample_type & S_PERIOD: b += u64(period)
    if sample_type & (S_WEIGHT | S_WEIGHT_STRUCT): b += u64(weight or 0)
    if sample_type & S_DATA_SRC: b += u64(data_src or 0)
    if sample_type & S_PHYS_ADDR: b += u64(phys or 0)
    return record(R_SAMPLE, b)


def trailer(sample_type, pid, tid, time, cpu, ident=0):
    b = b""
    if sample_type & S_TID: b += u32(pid) + u32(tid)
    if sample_type & S_TIME: b += u64(time)
    if sample_type & S_ID: b += u64(ident)
    if sample_type & S_STREAM_ID: b += u64(ident)
    if sample_type & S_CPU: b += u32(cpu) + u32(0)
    if sample_type & S_IDENTIFIER: b += u64(ident)
    return b


def comm(name, pid, tid, st, time, cpu, ident=0, exec_=True):
    body = u32(pid) + u32(tid) + name.encode().ljust(16, b"\0")[:16]
    return record(R_COMM, body + trailer(st, pid, tid, time, cpu, ident), MISC_COMM_EXEC if exec_ else 0)


# ---- seeds ----

def perf_data_seeds():
    seeds = {}
    pf = S_IP | S_TID | S_TIME | S_ADDR | S_CPU | S_PERIOD
    a = attr(1, 2, pf, FLAG_DISABLED | FLAG_MMAP | FLAG_COMM | FLAG_SAMPLE_ID_ALL)
    recs = [comm("workload", 100, 100, pf, 1000, 0)]
    for i in range(12):
        recs.append(sample_fixed(pf, 0x401000 + i, 100, 100 + i % 2, 2000 + 100 * i, 0x7f0000001000 + 4096 * i,
                                 i % 2))
    recs.append(record(R_LOST, u64(0) + u64(3) + trailer(pf, 100, 100, 4000, 1)))
    recs.append(record(R_FINISHED_ROUND, b""))
    for i in range(6):
        recs.append(sample_fixed(pf, 0x402000, 100, 100, 5000 + i, 0x7f0000100000 + 64 * i, 1))
    seeds["one-attr"] = perf_data([(a, [11])], recs)

    # Two events told apart by IDENTIFIER, with feature sections.
    st = S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_CPU | S_PERIOD | S_PHYS_ADDR | S_DATA_SRC
    a1 = attr(1, 2, st, FLAG_DISABLED | FLAG_MMAP | FLAG_SAMPLE_ID_ALL)
    a2 = attr(1, 9, st, FLAG_DISABLED | FLAG_COMM | FLAG_SAMPLE_ID_ALL)
    recs = [comm("a.out", 7, 7, st, 10, 0, ident=60)]
    for i in range(16):
        recs.append(sample_fixed(st, 0x1000, 7, 7, 100 + i, 0x10000 + 8 * i, i % 2, ident=58 + i % 2,
                                 phys=0x8000 + i if i % 3 else 0, data_src=0x1e05080021))
    recs.append(record(R_THROTTLE, u64(200) + u64(58) + u64(58) + trailer(st, 7, 7, 200, 0, 58)))
    recs.append(record(R_SWITCH_CPU_WIDE, u32(8) + u32(8) + trailer(st, 7, 7, 300, 1, 59), MISC_SWITCH_OUT))
    pmus = u32(2) + u32(1) + perf_string("software") + u32(8) + perf_string("arm_spe_0")
    seeds["two-attrs-features"] = perf_data([(a1, [58, 59]), (a2, [60, 61])], recs,
                                            {HEADER_CPUID: perf_string("AuthenticAMD,26,2,0"),
                                             HEADER_PMU_MAPPINGS: pmus})

    # Variable fields: READ, CALLCHAIN, RAW, BRANCH_STACK (+HW_INDEX), REGS_USER, WEIGHT_STRUCT.
    st = S_IP | S_TID | S_TIME | S_ADDR | S_CPU | S_READ | S_CALLCHAIN | S_RAW | S_REGS_USER | S_WEIGHT_STRUCT
    a = attr(4, 0x1cd, st, FLAG_DISABLED | FLAG_SAMPLE_ID_ALL, read_format=4 | 16, regs_user=0x7)
    recs = []
    for i in range(4):
        b = u64(0x401000) + u32(9) + u32(9) + u64(50 + i) + u64(0x7ffd0000 + 64 * i) + u32(i) + u32(0)
        b += u64(1234) + u64(77) + u64(0)                         # READ: value, id, lost
        b += u64(2) + u64(0x401000) + u64(0x402000)               # CALLCHAIN
        raw = bytes(range(12))
        b += u32(len(raw)) + raw                                  # RAW: 4 + 12 = 16
        b += u64(2) + u64(1) + u64(2) + u64(3)                    # REGS_USER: abi 64, 3 regs
        b += u64(150 + i)                                         # WEIGHT_STRUCT
        recs.append(record(R_SAMPLE, b))
    recs.append(record(R_EXIT, u32(9) + u32(1) + u32(9) + u32(9) + u64(99) + trailer(st, 9, 9, 99, 0)))
    seeds["variable-fields"] = perf_data([(a, [1])], recs)

    # An SPE capture: AUXTRACE_INFO, AUX records and AUXTRACE with its payload.
    st = S_IDENTIFIER | S_TID | S_TIME | S_CPU
    a = attr(8, 0x3, st, FLAG_DISABLED | FLAG_SAMPLE_ID_ALL, period=1024)
    spe = spe_record(0x0000ffffa0001000, 0x412345, store=False) + spe_record(0x0000ffffa0002040, 0x412349, store=True)
    payload = spe.ljust((len(spe) + 7) // 8 * 8, b"\0")
    recs = [record(R_AUXTRACE_INFO, u32(4) + u32(0) + u64(8) + u64(0)),
            record(R_ITRACE_START, u32(42) + u32(42) + trailer(st, 42, 42, 10, 0, 5)),
            record(R_AUX, u64(0) + u64(len(spe)) + u64(0) + trailer(st, 42, 42, 20, 0, 5)),
            record(R_AUXTRACE, u64(len(payload)) + u64(0) + u64(7) + u32(0) + u32(42) + u32(0) + u32(0)) + payload,
            record(R_TIME_CONV, u64(10) + u64(1000) + u64(5))]
    seeds["spe-aux"] = perf_data([(a, [5])], recs,
                                 {HEADER_CPUID: perf_string("0x00000000410fd0c0"),
                                  HEADER_PMU_MAPPINGS: u32(1) + u32(8) + perf_string("arm_spe_0")})
    return seeds


def carve_capture(path):
    """The header, attrs and IDs of a real capture with its first records and
    first samples, and its CPUID and PMU_MAPPINGS sections: a valid small file."""
    d = open(path, "rb").read()
    _, _, attr_size, ao, asz, do, dsz, _, _ = struct.unpack_from("<8sQQQQQQQQ", d, 0)
    attrs = []
    for i in range(asz // attr_size):
        e = d[ao + i * attr_size: ao + (i + 1) * attr_size]
        ido, isz = struct.unpack_from("<QQ", e, attr_size - 16)
        ids = [struct.unpack_from("<Q", d, ido + 8 * k)[0] for k in range(isz // 8)]
        attrs.append((e[:attr_size - 16].ljust(ATTR_SIZE, b"\0")[:ATTR_SIZE], ids))
    assert all(struct.unpack_from("<I", a, 4)[0] == ATTR_SIZE for a, _ in attrs)
    recs, samples, p = [], 0, do
    while p < do + dsz and len(b"".join(recs)) < 2800:
        t, _, s = struct.unpack_from("<IHH", d, p)
        if t == R_SAMPLE and samples < 24:
            recs.append(d[p:p + s])
            samples += 1
        elif t != R_SAMPLE and len(recs) < 6:
            recs.append(d[p:p + s])
        p += s
    features, bitmap = {}, struct.unpack_from("<4Q", d, 72)
    index = 0
    for bit in range(256):
        if bitmap[bit // 64] >> (bit % 64) & 1:
            off, size = struct.unpack_from("<QQ", d, do + dsz + 16 * index)
            if bit in (HEADER_CPUID, HEADER_PMU_MAPPINGS):
                features[bit] = d[off:off + size]
            index += 1
    return perf_data(attrs, recs, features)


def spe_record(va, pc, store, ts=0x1000):
    """One SPE load/store record: PC, VA, PA, latency, op type, events, TS."""
    r = b"\xb0" + struct.pack("<Q", pc | (2 << 61))
    r += b"\xb2" + struct.pack("<Q", va)
    r += b"\xb3" + struct.pack("<Q", 0x80bd88a09e8 | (1 << 63))
    r += b"\x98" + struct.pack("<H", 11)
    r += b"\x49" + bytes([0x05 if store else 0x00])
    r += b"\x52" + struct.pack("<H", 0x0316)
    r += b"\x64" + struct.pack("<I", 42)
    r += b"\x71" + struct.pack("<Q", ts)
    return r


def perf_record_seeds():
    seeds = {}
    pf = S_IP | S_TID | S_TIME | S_ADDR | S_CPU | S_PERIOD

    def head(sample_type, fmt, branch, regs_user, regs_intr, ring, tail, queue):
        return u32(sample_type) + bytes([fmt, branch, regs_user, regs_intr, ring, tail, queue])

    recs = b""
    for i in range(6):
        recs += sample_fixed(pf, 0x401000, 100, 100, 1000 + i, 0x7f0000001000 + 4096 * i, 1)
    recs += record(R_LOST, u64(1) + u64(5) + trailer(pf, 100, 100, 2000, 1))
    recs += record(R_THROTTLE, u64(2000) + u64(1) + u64(1) + trailer(pf, 100, 100, 2000, 1))
    recs += sample_fixed(pf, 0x401000, 100, 100, 3000, 0xffff800000001000, 1)   # a kernel address
    recs += sample_fixed(pf, 0x401000, 100, 100, 3000, 0, 1)                    # address zero
    # A ring of 512 bytes whose tail sits near its end: records wrap.
    seeds["fixed-wrap"] = head(pf, 0x40, 0, 0, 0, 0x03, 58, 1) + recs
    seeds["fixed-big-ring"] = head(pf, 0x40, 0, 0, 0, 0x87, 3, 3) + recs

    st = S_IP | S_TID | S_TIME | S_ADDR | S_CPU | S_READ | S_CALLCHAIN | S_RAW | S_BRANCH_STACK | S_REGS_USER
    st |= S_STACK_USER | S_WEIGHT_STRUCT | S_DATA_SRC | S_PHYS_ADDR | S_AUX
    b = u64(0x401000) + u32(9) + u32(9) + u64(50) + u64(0x7ffd0000) + u32(1) + u32(0)
    b += u64(3) + u64(1) + u64(2) + u64(3) + u64(0) + u64(4) + u64(0)   # READ group: nr 3, value (+ id)
    b += u64(1) + u64(0x401000)                                        # CALLCHAIN
    b += u32(4) + b"\x01\x02\x03\x04"                                  # RAW
    b += u64(1) + u64(7) + u64(0x401000) + u64(0x402000) + u64(0)      # BRANCH_STACK, hw_idx 7, one entry
    b += u64(2) + u64(11) + u64(12)                                    # REGS_USER: 2 registers
    b += u64(16) + bytes(16) + u64(8)                                  # STACK_USER
    b += u64(99) + u64(0x1e05080021) + u64(0x1234000) + u64(8) + bytes(8)  # weight, data_src, phys, AUX
    seeds["variable"] = head(st, 0x40 | 0x01 | 0x04 | 0x08, 0x01, 2, 0, 0x05, 0, 2) + record(R_SAMPLE, b) * 2

    # IBS: RAW caps + 7 registers, through the IBS source (byte 5 bits 6-7 = 2).
    st = S_IP | S_TID | S_TIME | S_CPU | S_RAW
    raw = u32(0x3ff) + u64(0x000002c30006186a) + u64(0x401000) + u64(0) + u64(0x3) + u64(0x31960092)
    raw += u64(0x00007f1234560000) + u64(0x8a5398920)
    body = u64(0x401000) + u32(5) + u32(5) + u64(1) + u32(0) + u32(0) + u32(len(raw)) + raw
    seeds["ibs-raw"] = head(st, 0x40, 0x80, 0, 0, 0x04, 0, 2) + record(R_SAMPLE, body) * 3

    # Shaped: per record a kind byte (bits 0-3 the type, bit 4 a sample of the
    # layout's exact size), a size byte (body words) and the body.
    shaped = b""
    for kind, words in ((0x10, 0), (0x10, 0), (4, 4), (6, 5), (8, 5), (10, 3), (0xe2, 4), (0x10, 0), (12, 3)):
        body_len = 48 if kind & 0x10 else 8 * words     # the page-fault layout: 48 bytes of body
        shaped += bytes([kind, words]) + bytes(i * 7 % 256 for i in range(body_len))
    seeds["shaped"] = head(pf, 0x40, 0, 0, 0, 0x10 | 0x02, 30, 0) + shaped
    return seeds


def aux_seeds():
    seeds = {}
    spe = spe_record(0x0000ffffa0001000, 0x412345, store=False) + spe_record(0x0000ffffa0002040, 0x412349, True)
    spe += b"\x00" * 3 + b"\x42\x16\x01"   # padding, an EVENTS-only record closed by END

    def rec_aux(delta, size, kind=0):
        return bytes([kind]) + struct.pack("<hH", delta, size)

    def trailer_in(pid, tid, time):
        return bytes([pid, tid - pid]) + u64(time)

    # ctl: area 1024 (bits 0-2 = 4), sample_id_all, positions a few areas in.
    body = bytes([2]) + bytes([5, 5]) + trailer_in(5, 5, 100)                 # SWITCH_CPU_WIDE out: pid 5
    body += rec_aux(0, len(spe)) + trailer_in(5, 5, 200)
    body += rec_aux(len(spe), 16, 0x10) + trailer_in(5, 5, 300)               # TRUNCATED
    body += bytes([3]) + bytes([0, 0]) + trailer_in(9, 10, 400)                # switch in: trailer's task
    body += rec_aux(-64, 8) + trailer_in(9, 10, 500)                         # stale
    body += bytes([7 | 0x80])                                                # a short AUX record
    seeds["spe-stretches"] = bytes([0x24 | 0x40, 4, 0]) + bytes([6]) + body + spe
    # Wrapping positions, a clock, want_phys.
    body = bytes([6]) + bytes([7, 7]) + trailer_in(7, 7, 1)                   # ITRACE_START
    body += rec_aux(0, len(spe) * 2) + trailer_in(7, 7, 2)
    seeds["spe-wrap"] = bytes([0x80 | 0x20 | 0x10 | 0x08 | 3, 3]) + bytes([40]) + bytes([2]) + body + spe
    return seeds


def varlink_seeds():
    seeds = {}
    calls = [b'{"method":"io.damon.perfd.GetStats"}', b'{"method":"org.varlink.service.GetInfo"}',
             b'{"method":"io.damon.perfd.Monitor","more":true,"parameters":{"samples":true}}',
             b'{"method":"io.damon.perfd.GetRegions","parameters":{"target":5,"limit":null}}',
             b'{"method":"org.varlink.service.GetInterfaceDescription","parameters":{"interface":"io.damon.perfd"}}',
             b'{"method":"io.damon.perfd.Reload","oneway":true}', b'{"method":"io.damon.perfd.Nope"}',
             b'{"method":"io.damon.perfd.Monitor"}', b'{"method":"org.example.x.Y","upgrade":true}']
    stream = b"".join(c + b"\0" for c in calls)
    pad = (-len(stream)) % 4
    script = bytes([1, 5, 3, 6, 0, 1, 2, 7, 8, 9, 4, 1, 1, 0, 1])
    seeds["connection"] = bytes([0, 0x20, (len(stream) + pad) // 4]) + stream + b"\0" * pad + script
    seeds["connection-limits"] = bytes([0, 0x13 | 0x08, (len(stream) + pad) // 4]) + stream + b"\0" * pad + script
    seeds["messages"] = b"\1" + b"\0".join(calls + [
        b'{"parameters":{"a":1},"continues":true}', b'{"error":"org.varlink.service.MethodNotFound",'
        b'"parameters":{"method":"x.y.Z"}}', b'{"method":"a.b.C","parameters":null}', b'[1,2]',
        b'{"method":"a.b.C","method":"a.b.D"}', b'{"method":"a.b.C","oneway":true,"more":true}'])
    seeds["idl"] = b"\2" + b"""# A small interface.
interface org.example.fuzz

type Kind (one, two_words)
type Item (
  # doc
  name: string,
  kind: ?Kind,
  tags: [string]bool,
  children: []Item,
  inline: (a: int, b: ?[]float)
)
method Get(id: int, filter: ?object) -> (items: []Item)
error NotFound (id: int)
"""
    seeds["service-idl"] = b"\2" + c_string("lib/varlink/varlink-idl-data.c", "dp_varlink_org_varlink_service_idl[]")
    seeds["parameters"] = b"\3" + bytes([30]) + b'{"target":1,"limit":10}\0{"regions":[]}\0{}\0{"x":1}'
    return seeds


def c_string(rel, name):
    """The value of a C string constant @name in @rel (adjacent literals joined)."""
    import ast
    text = open(os.path.join(ROOT, rel), encoding="utf-8").read()
    at = text.index(name)
    body = text[text.index("=", at) + 1:text.index(";", at)]
    parts = [line.strip() for line in body.splitlines() if line.strip()]
    return "".join(ast.literal_eval(p) for p in parts).encode()


def sysfs_seeds():
    seeds = {}
    seeds["cpu-list"] = b"\0" + b"0-3,8,10-11\n"
    seeds["pmu-fields"] = b"\1" + b"config:0-7\0config:8-15,32-35\0config1:0-11\0config2:0\0a=3,b=0x12,event=0xcd,umask"
    seeds["maps"] = b"\2" + b"""55d0c0a00000-55d0c0a21000 r--p 00000000 08:01 1234   /usr/bin/cat
55d0c0c21000-55d0c0c42000 rw-p 00000000 00:00 0      [heap]
7f0000000000-7f0000001000 ---p 00000000 00:00 0
7ffd12340000-7ffd12361000 rw-p 00000000 00:00 0      [stack]
ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]
"""
    seeds["iomem"] = b"\3" + b"""00000000-00000fff : Reserved
00001000-0009fbff : System RAM
000a0000-000bffff : PCI Bus 0000:00
00100000-bffdffff : System RAM
  01000000-01e00000 : Kernel code
100000000-23fffffff : System RAM
"""
    seeds["state-owned"] = b"\4" + b"# damon-perfd\nversion=1\nrole=owned\ndaemon_pid=4242\nkdamond=0\ncontext=0\n" \
                                  b"kdamond_pid=77\nend\n"
    seeds["state-attached"] = b"\4" + b"version=1\nrole=attached\ndaemon_pid=1\nkdamond=2\ncontext=0\nkdamond_pid=-1\n" \
        b"original=kdamonds/2/contexts/0/targets/0/regions/nr_regions 3\n" \
        b"original=kdamonds/2/contexts/0/monitoring_attrs/intervals/sample_us 5000\nend\n"
    seeds["damon-number"] = b"\5" + b"18446744073709551615\n"
    seeds["damon-tree"] = b"\6" + b"\0".join([
        b"2\n", b"on\n", b"4242\n", b"1\n", b"vaddr fvaddr paddr\n", b"vaddr\n", b"1\n", b"1\n", b"2\n",
        b"4096\n", b"8192\n", b"3\n", b"10\n", b"8192\n", b"65536\n", b"0\n", b"1\n",
        b"4096\n", b"12288\n", b"20\n", b"5\n", b"off\n", b"-1\n", b"0\n"])
    seeds["pmu-tree"] = b"\7" + b"\0".join([
        b"11\n", b"config:57\n", b"config:19\n", b"config:16\n", b"config1:0-11\n", b"1\n", b"1\n",
        b"4\n", b"0-3\n", b"config:0-7\n", b"config:8-15\n", b"config1:0-15\n", b"event=0xcd,umask=0x1,ldlat=3\n",
        b"event=0x03,umask=0x82\n", b"event=0xcd,umask=0x2\n", b"3\n",
        b"8\n", b"0-1\n", b"config:33\n", b"config2:0-11\n", b"256\n"]) + bytes(16)
    seeds["operations"] = b"\x08" + b"vaddr fvaddr paddr\0paddr"
    return seeds


def config_seeds():
    seeds = {}
    for rel in ("tests/config/good.conf", "tests/config/dropins/etc/damon-perfd.conf",
                "tests/config/dropins/run/damon-perfd.conf.d/10-early.conf", "etc/damon-perfd.conf",
                "tests/config/schemes.conf"):
        path = os.path.join(ROOT, rel)
        if os.path.exists(path):
            text = open(path, "rb").read()[:MAX_SEED - 1]
            seeds[os.path.basename(os.path.dirname(rel)) + "-" + os.path.basename(rel)] = b"\0" + text
    # Token mode (byte 0 bit 0): section, key, value, newline ...
    seeds["tokens"] = b"\1" + bytes([12, 22, 42, 1, 16, 56, 2, 14, 33, 44, 0, 11, 19, 46, 2])
    # [DAMON] Scheme=migrate_hot target_nid=1 ... allow=hot ... \n Scheme=pageout sz=4K-max ... reject=hot ...
    seeds["tokens-schemes"] = b"\1" + bytes([14, 78, 81, 4, 86, 41, 4, 82, 99, 4, 80, 100, 4, 89, 91, 4, 90, 92, 4, 95, 75, 0, 78, 79, 4, 83, 101, 49, 84, 4, 102, 43, 4, 90, 91, 4, 96, 4, 97, 0])
    return seeds


def ibs_seeds():
    regs = u32(0x3ff) + u64(0x000002c30006186a) + u64(0x401000) + u64(0) + u64(0x3) + u64(0x31960092)
    regs += u64(0xff110008a5398920) + u64(0x00000008a5398920)
    fields = u64(0x7f0000001000) + u64(0x8a5398920) + u64(0x1e05080021) + u64(25)
    return {"raw-zen4": bytes([0x01 | 0x80, 0]) + fields + regs,
            "raw-shaped-zen3b1": bytes([0x01 | 0x40, 1]) + fields + regs,
            "fields-only": bytes([0x02 | 0x04 | 0x08 | 0x10, 0]) + fields}


def spe_seeds():
    one = spe_record(0x0000ffffa0001000, 0x412345, False)
    two = spe_record(0x0000ffffa0002040, 0x412349, True)
    vectors = bytes.fromhex("b05c8b8c86c2c0ffc0 b3e8098ad80b080080 b2c026c20720fcff00 990700 980b00 9a0100"
                            " 4916 4905 4a02 521e03 4216 71366c212c09000000 00 01")
    return {"two-records": bytes([0x20 | 0x40]) + one + two,
            "vectors": bytes([0x80 | 3]) + vectors,
            "padded": bytes([0x05]) + b"\0" * 5 + one + b"\x20\x00" + two[:20]}


def write(target, seeds):
    """Replaces the seeds of @target; reproducers of findings (regress-*) stay."""
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith("regress-"):
            os.unlink(os.path.join(d, f))
    for name, data in sorted(seeds.items()):
        if len(data) > MAX_SEED:
            sys.exit(f"make-corpus: {target}/{name} is {len(data)} bytes, more than {MAX_SEED}")
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--capture", help="a real perf.data to carve a seed from")
    args = ap.parse_args()

    data = perf_data_seeds()
    if args.capture:
        data["carved-capture"] = carve_capture(args.capture)
    elif os.path.exists(os.path.join(OUT, "fuzz-perf-data", "carved-capture")):
        data["carved-capture"] = open(os.path.join(OUT, "fuzz-perf-data", "carved-capture"), "rb").read()
    write("fuzz-perf-data", data)
    write("fuzz-perf-record", perf_record_seeds())
    write("fuzz-aux", aux_seeds())
    write("fuzz-varlink", varlink_seeds())
    write("fuzz-sysfs", sysfs_seeds())
    write("fuzz-config", config_seeds())
    write("fuzz-ibs", ibs_seeds())
    write("fuzz-spe", spe_seeds())


if __name__ == "__main__":
    main()
