#!/usr/bin/env python3
"""Renders the recommend HTML page in headless Chromium and checks what it shows.

Usage: check_page.py GPUADVISOR_BINARY WORK_DIR

1. Writes the page of `recommend --model 70B --task qlora --budget 20000 --format html` and checks
   its markup: one plan circle per plan in the JSON output (all plans and the Pareto front), a
   Pareto step line, the axis labels, and nothing that runs or fetches (no script, no src/href).
2. Takes a screenshot with `chromium --headless` and checks, decoding the PNG with the standard
   library only, that it is not blank: enough non-white pixels, enough distinct colours, and the
   colours of the best plan and of the Pareto line present.

Exits 77 (skipped) when Chromium is not installed, 1 on a failed check, 0 otherwise.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

SKIP = 77
WORKLOAD = ["recommend", "--model", "70B", "--task", "qlora", "--budget", "20000"]
BEST_BLUE = (0x1F, 0x4E, 0x8C)
PARETO_ORANGE = (0xE8, 0x59, 0x0C)


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(binary, args):
    r = subprocess.run([binary] + args, capture_output=True, text=True, timeout=60)
    if r.returncode not in (0, 1):
        fail(f"{' '.join(args)}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def check_markup(page, doc):
    # The plans the page should plot: every plan and every Pareto plan with a price, each once.
    keys = set()
    for p in doc["plans"] + doc.get("pareto", []):
        if p["total_price_usd"] is not None:
            keys.add((p["gpu_id"], p["count"], p["precision"], p["tp"], p["zero"], p["checkpointing"]))
    circles = re.findall(r'<circle [^>]*class="plan[ "]', page)
    if len(circles) != len(keys):
        fail(f"{len(circles)} plan circles in the page, {len(keys)} plans with a price in the JSON output")
    best = re.findall(r'<circle [^>]*class="plan best', page)
    if doc["plans"] and len(best) != 1:
        fail(f"{len(best)} circles marked as the best plan, expected 1")
    if not re.search(r'<path d="M[-0-9.]+ [-0-9.]+[^"]*" class="pareto"', page):
        fail("no Pareto step line (<path class=\"pareto\">)")
    for label in ("Price (USD)", "Speed (tokens/s)"):
        if f">{label}" not in page:
            fail(f"axis label {label!r} missing")
    if "<table>" not in page or "rtx-" not in page and "a100" not in page:
        fail("the plan table is missing")
    for bad in ("<script", " src=", " href=", "@import", "url("):
        if bad in page.lower():
            fail(f"the page must not load or run anything, found {bad!r}")
    return len(keys)


def png_pixels(path):
    """Decodes an 8-bit RGB or RGBA non-interlaced PNG; returns (width, height, rows of RGB tuples)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                fail(f"unexpected PNG format (depth {depth}, colour type {colour}, interlace {interlace})")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def near(p, q, tol=12):
    return all(abs(a - b) <= tol for a, b in zip(p, q))


def check_screenshot(png):
    width, height, rows = png_pixels(png)
    total = width * height
    non_white = sum(1 for row in rows for p in row if p != (255, 255, 255))
    colours = {p for row in rows for p in row}
    blue = sum(1 for row in rows for p in row if near(p, BEST_BLUE))
    orange = sum(1 for row in rows for p in row if near(p, PARETO_ORANGE))
    print(f"screenshot {width}x{height}: {100 * non_white / total:.1f}% non-white, {len(colours)} colours, "
          f"{blue} best-plan blue, {orange} Pareto orange pixels")
    if non_white < total * 0.03:
        fail("the screenshot is (nearly) blank")
    if len(colours) < 16:
        fail("too few colours: the charts did not render")
    if blue < 20:
        fail("no best-plan marker in the screenshot")
    if orange < 20:
        fail("no Pareto line in the screenshot")


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    binary, work = sys.argv[1], sys.argv[2]
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("SKIP: chromium is not installed")
        return SKIP
    os.makedirs(work, exist_ok=True)
    page = run(binary, WORKLOAD + ["--format", "html"])
    doc = json.loads(run(binary, WORKLOAD + ["--format", "json", "--top", "100", "--pareto"]))
    html_path = os.path.join(work, "recommend.html")
    with open(html_path, "w", encoding="utf-8") as f:
        f.write(page)
    n = check_markup(page, doc)
    print(f"markup: {n} plan points, Pareto line, axis labels, nothing loaded or run")
    png = os.path.join(work, "recommend.png")
    if os.path.exists(png):
        os.remove(png)
    with tempfile.TemporaryDirectory() as profile:
        cmd = ["timeout", "60", browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--no-first-run", "--no-default-browser-check", "--hide-scrollbars", f"--user-data-dir={profile}",
               f"--screenshot={png}", "--window-size=1200,1600", "file://" + os.path.abspath(html_path)]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if not os.path.exists(png):
        fail(f"chromium wrote no screenshot (exit {r.returncode}): {r.stderr.strip()[-800:]}")
    check_screenshot(png)
    print(f"ok: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
