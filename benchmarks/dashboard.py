"""Time from changing k to the recoloured lattice, measured in a real headless chromium, on adult.

Starts `microrelease app` on a free port, opens it in Debian's chromium (driven by the playwright
package), then repeatedly types a new k into the k box and waits until the browser's data for the
lattice's points carries new statuses. Prints each time, the median and the target (200 ms).
Measured in the steady state: the server computes the other tabs' shared figures in the background
when it starts (about 20 s of CPU on 2 cores), so the benchmark first opens the Sequences tab, whose
figures come last, and prints how long the page took to be usable and to finish that warm-up.

Run: python benchmarks/dashboard.py [--changes 12]
"""

from __future__ import annotations

import argparse
import shutil
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

TARGET_MS = 200
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
IDLE = "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle"
STATUS = """() => { for (const m of Bokeh.documents[0].all_models)
  if (m.type === 'ColumnDataSource' && m.data.levels && m.data.status) return Array.from(m.data.status).join();
  return null }"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=12)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("no chromium: apt-get install -y chromium")
    port = free_port()
    script = Path(sys.executable).parent / "microrelease"
    server = subprocess.Popen([str(script), "app", "--sample", "adult", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(300):
            try:
                urllib.request.urlopen(url, timeout=2).close()
                break
            except OSError:
                time.sleep(0.2)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 1100})
            started = time.perf_counter()
            page.goto(url)
            page.wait_for_function(IDLE, timeout=60_000)
            usable = time.perf_counter() - started
            page.locator(".bk-tab", has_text="Sequences").first.click()
            page.locator(".seq-summary").first.wait_for(timeout=120_000)
            page.wait_for_function(IDLE, timeout=120_000)
            warmed = time.perf_counter() - started
            print(f"page usable after {usable:.1f} s; the other tabs' shared figures ready after {warmed:.1f} s")
            page.locator(".bk-tab", has_text="Lattice").first.click()
            page.wait_for_function(IDLE)
            box = page.locator(".k-input input").first
            times = []
            ks = [2, 10, 50, 5, 25, 3, 100, 8, 40, 4, 20, 60]
            for i in range(args.changes):
                k = ks[i % len(ks)]
                before = page.evaluate(STATUS)
                box.fill(str(k))
                start = time.perf_counter()
                box.press("Enter")
                page.wait_for_function(f"() => ({STATUS})() !== {before!r}", timeout=30_000)
                times.append((time.perf_counter() - start) * 1000)
                n = page.evaluate(f"() => ({STATUS})().split(',').length")
                print(f"k -> {k:>3}: recoloured {n} drawn nodes in {times[-1]:6.1f} ms")
                page.wait_for_function(IDLE)
            browser.close()
    finally:
        server.terminate()
        server.wait(10)
    median = statistics.median(times)
    print(f"\nadult (6,480 nodes, focused view): k change -> recoloured lattice, median {median:.0f} ms "
          f"(min {min(times):.0f}, max {max(times):.0f}); target <= {TARGET_MS} ms -> "
          f"{'met' if median <= TARGET_MS else 'MISSED'}")


if __name__ == "__main__":
    main()
