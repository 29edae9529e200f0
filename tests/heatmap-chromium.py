#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""damonctl heatmap's SVG as a browser shows it.

Replays captures with `damonctl heatmap --replay ... --svg`, renders each SVG
to a PNG in headless Chromium, decodes the PNG and checks the picture: the
right size, not blank, and bright where the capture's accesses are:

* pagefault-system.perf.data (DP_TESTDATA): the rows sampled in the most
  sampling intervals by `perf script`'s own decoding are brighter than the
  rows never sampled;
* with root and perf: a fresh `perf record -e page-faults -c 1 -d` of the demo
  workload: the rows inside its hot area are much brighter than those inside
  its cold area.

usage: heatmap-chromium.py DAMONCTL WORKLOAD [--keep DIR]
       heatmap-chromium.py --render SVG PNG      (e.g. for doc/heatmap-demo.png)
Exits 77 (skipped) when Chromium is not installed.
"""

import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib

SVG_NS = "{http://www.w3.org/2000/svg}"
WIDTH, HEIGHT = 960, 600
# The plot area (see lib/view/heatmap-svg.c), less a pixel at each edge.
PLOT_X0, PLOT_X1 = 131, 849
# The workload capture: a hot area an eighth of the whole, so that it spans
# more than three of the heatmap's rows even where sanitizer mappings take
# rows of their own (16 in the release build, 6 under ASan), faulted on at
# about 40k faults a second.
HOT_MIB, COLD_MIB, HOT_PASSES_PER_S = 8, 56, 20


def chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


def render(browser, svg, png):
    """Screenshots @svg at its own size, in a throw-away profile, offline."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", "--force-device-scale-factor=1", f"--user-data-dir={profile}",
               f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}", "file://" + os.path.abspath(svg)]
        result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180, check=False)
    if result.returncode != 0 or not os.path.exists(png):
        sys.exit(f"chromium failed ({result.returncode}):\n{result.stdout.decode(errors='replace')}")


def paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{path}: not a PNG")
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]:
            sys.exit(f"{path}: bad CRC in {kind!r}")
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace != 0:
        sys.exit(f"{path}: unsupported PNG (depth {depth}, colour type {color}, interlace {interlace})")
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            for i in range(stride):
                line[i] = (line[i] + previous[i]) & 0xFF
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                up_left = previous[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + paeth(left, previous[i], up_left)) & 0xFF
        elif kind != 0:
            sys.exit(f"{path}: unknown filter type {kind} in line {y}")
        rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
        previous = line
    return width, height, rows


def luma(pixel):
    r, g, b = pixel
    return 0.299 * r + 0.587 * g + 0.114 * b


def svg_rows(svg):
    """Each drawn row: (start, end, y of its middle pixel line), from the SVG's own cells."""
    rows = []
    for group in ET.parse(svg).getroot().iter(SVG_NS + "g"):
        if "data-start" not in group.attrib:
            continue
        rect = group.find(SVG_NS + "rect")
        y = float(rect.get("y")) + float(rect.get("height")) / 2
        rows.append((int(group.get("data-start"), 16), int(group.get("data-end"), 16), int(y)))
    if len(rows) < 20:
        sys.exit(f"{svg}: only {len(rows)} rows drawn")
    return rows


def row_brightness(pixels, y, x0=PLOT_X0, x1=PLOT_X1):
    line = pixels[y][x0:x1]
    return sum(luma(p) for p in line) / len(line)


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def plot_scale(pixels, x0):
    """The brightness range the picture uses right of @x0: its darkest and brightest rows."""
    rows = [row_brightness(pixels, y, x0) for y in range(60, 520, 2)]
    return min(rows), max(rows)


def clearly_brighter(bright, dark, pixels, x0=PLOT_X0):
    """Whether rows @bright stand out from rows @dark right of @x0, judged by
    ranks and ratios against the scale that part of the picture uses rather
    than by a fixed gap: how bright "hot" is depends on how fast the workload
    ran, which depends on the machine's load and on the sanitizers.
    Returns (ok, explanation)."""
    low, high = plot_scale(pixels, x0)
    hot, cold = statistics.median(bright), statistics.median(dark)
    cold_p90 = quantile(dark, 0.9)
    # Typical hot row above nearly every cold row, twice as bright as the
    # typical cold one, and apart from it by a tenth of the picture's range.
    ok = hot > cold_p90 and hot >= 2 * max(cold, 1) and hot - cold >= 0.1 * (high - low)
    why = (f"median brightness {hot:.0f} of {len(bright)} rows against {cold:.0f} (90th percentile "
           f"{cold_p90:.0f}) of {len(dark)} rows; the rows there range {low:.0f}-{high:.0f}")
    return ok, why


def check_picture(svg, png):
    """The common checks: size, axes, and a picture that is not blank.  Returns the pixels."""
    text = open(svg, encoding="utf-8").read()
    for needle in ("time (s)", "scale-gradient", "id=\"address-axis\"", "id=\"region-boundaries\""):
        if needle not in text:
            sys.exit(f"{svg}: no {needle}")
    if len(re.findall(r">0x[0-9a-f]+</text>", text)) < 2:
        sys.exit(f"{svg}: fewer than two hex address labels")
    width, height, pixels = decode_png(png)
    if (width, height) != (WIDTH, HEIGHT):
        sys.exit(f"{png}: {width}x{height}, expected {WIDTH}x{HEIGHT}")
    plot = [p for y in range(60, 520, 4) for p in pixels[y][PLOT_X0:PLOT_X1:4]]
    colours = len(set(plot))
    grey = sum(1 for p in plot if p == (0xd9, 0xd9, 0xd9) or p == (255, 255, 255)) / len(plot)
    if colours < 6 or grey > 0.5:
        sys.exit(f"{png}: looks blank: {colours} colours in the plot, {grey:.0%} of it empty")
    # The title and axis labels are there: dark text on the white margins.
    if sum(1 for p in pixels[25][130:600] if luma(p) < 100) < 20:
        sys.exit(f"{png}: no title")
    print(f"{png}: {width}x{height}, {colours} colours in the plot")
    return pixels


def replay(damonctl, capture, svg, *args):
    result = subprocess.run([damonctl, "heatmap", "--replay", capture, "--svg", svg, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, check=False)
    if result.returncode != 0:
        sys.exit(f"damonctl heatmap --replay {capture} failed ({result.returncode}): {result.stderr.decode()}")
    return result.stderr.decode()


def system_capture(damonctl, browser, work):
    testdata = os.environ.get("DP_TESTDATA")
    if not testdata:
        sys.exit("DP_TESTDATA is not set")
    svg, png = os.path.join(work, "system.svg"), os.path.join(work, "system.png")
    said = replay(damonctl, os.path.join(testdata, "pagefault-system.perf.data"), svg)
    pid = int(re.search(r"heatmap: pid (\d+),", said).group(1))
    render(browser, svg, png)
    pixels = check_picture(svg, png)

    # perf script's own decoding: when and where that process's samples fell.
    # Like the tracker, count per row the sampling intervals (5 ms in a replay
    # at the default 0.1 s a column) with a sample, not the samples: a page
    # touched once is not hot, however many pages are.
    samples = []
    with open(os.path.join(testdata, "pagefault-system.perf.script"), encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r" (\d+)/\d+ +\[\d+\] +([\d.]+): +([0-9a-f]+) ", line)
            if m and int(m.group(1)) == pid:
                samples.append((int(float(m.group(2)) / 0.005), int(m.group(3), 16)))
    rows = svg_rows(svg)
    # Rows that straddle a collapsed gap (wider than the rest) carry its dashed line.
    width = sorted(end - start for start, end, _ in rows)[len(rows) // 2]
    rows = [r for r in rows if r[1] - r[0] <= width * 1.01]
    active = [len({t for t, a in samples if start <= a < end}) for start, end, _ in rows]
    ranked = sorted(range(len(rows)), key=lambda i: active[i], reverse=True)
    busiest = ranked[:max(1, len(rows) // 10)]
    idle = [i for i in range(len(rows)) if active[i] == 0]
    if len(busiest) < 3 or len(idle) < 3:
        sys.exit(f"too few rows to compare: {len(busiest)} busiest, {len(idle)} never sampled")
    ok, why = clearly_brighter([row_brightness(pixels, rows[i][2]) for i in busiest],
                               [row_brightness(pixels, rows[i][2]) for i in idle], pixels)
    print(f"system capture, pid {pid}: the busiest tenth of {len(rows)} rows (sampled in "
          f"{min(active[i] for i in busiest)} to {max(active)} intervals) against the rows never sampled: {why}")
    if not ok:
        sys.exit("the busiest rows are not clearly brighter than the rows never sampled")


def workload_capture(damonctl, workload, browser, work):
    perf = shutil.which("perf")
    if os.geteuid() != 0 or not perf:
        print("workload capture skipped: it needs root and perf")
        return
    capture = os.path.join(work, "workload.perf.data")
    # perf record keeps an earlier capture as .old: there is none to keep.
    for stale in (capture, capture + ".old"):
        if os.path.exists(stale):
            os.remove(stale)
    # The workload as perf's child: its cold area's first touch is in the capture too.
    result = subprocess.run([perf, "record", "-q", "-e", "page-faults", "-c", "1", "-d", "-o", capture, "--",
                             workload, "--hot-mib", str(HOT_MIB), "--cold-mib", str(COLD_MIB),
                             "--rate", str(HOT_PASSES_PER_S), "--seconds", "3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120, check=False)
    if result.returncode != 0:
        sys.exit(f"perf record failed ({result.returncode}): {result.stderr.decode()}")
    areas = json.loads(result.stdout.decode().splitlines()[0])
    svg, png = os.path.join(work, "workload.svg"), os.path.join(work, "workload.png")
    replay(damonctl, capture, svg, "--target", str(areas["pid"]))
    os.remove(capture)
    render(browser, svg, png)
    pixels = check_picture(svg, png)

    rows = svg_rows(svg)
    inside = lambda area: [y for start, end, y in rows if area[0] <= start and end <= area[1]]
    # The heatmap colours the tracker's adaptive regions, whose edges settle
    # over a few aggregations (a starved workload gives them fewer samples to
    # settle by): cold rows within the hot area's size of it may share a
    # region with it.  The far part of the cold area must be dark.
    reach = HOT_MIB << 20
    far_cold = (areas["cold"][0], min(areas["cold"][1], areas["hot"][0] - reach))
    hot_rows, cold_rows = inside(areas["hot"]), inside(far_cold)
    if len(hot_rows) < 4 or len(cold_rows) < 12:
        sys.exit(f"{len(hot_rows)} rows inside the hot area, {len(cold_rows)} inside the cold one")
    # The later half of the run: the cold area's first touch (a bright
    # diagonal at the start) is long over, the hot area is faulted on.
    middle = (PLOT_X0 + PLOT_X1) // 2
    ok, why = clearly_brighter([row_brightness(pixels, y, middle) for y in hot_rows],
                               [row_brightness(pixels, y, middle) for y in cold_rows], pixels, middle)
    print(f"workload pid {areas['pid']}, the run's later half, hot area against the cold area beyond "
          f"{HOT_MIB} MiB of it: {why}")
    if not ok:
        sys.exit("the hot area is not where the heatmap is hot")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--render":
        browser = chromium()
        if not browser:
            sys.exit("chromium is not installed")
        render(browser, sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) not in (3, 5) or (len(sys.argv) == 5 and sys.argv[3] != "--keep"):
        sys.exit(__doc__)
    damonctl, workload = sys.argv[1], sys.argv[2]
    browser = chromium()
    if not browser:
        print("SKIP: chromium is not installed (tools/run-tests installs it)")
        return 77
    keep = sys.argv[4] if len(sys.argv) == 5 else None
    with tempfile.TemporaryDirectory() as tmp:
        work = keep or tmp
        os.makedirs(work, exist_ok=True)
        system_capture(damonctl, browser, work)
        workload_capture(damonctl, workload, browser, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
