"""A wide CSV uploaded to the dashboard (issue 26), in a real headless chromium, in one run: a 300-row
table with 1,000, 5,000 and 10,000 columns (the toy sample's three QIs and N columns of integers,
as ``benchmarks/wide_tables.py`` writes it) dropped on the Data tab of ``microrelease app``.

For each width: the wall time from handing the file to the browser until the Data tab reports the
table read and the page is idle (what the user waits), the server's CPU seconds over the same span,
how much the server's peak resident memory grew, and whether the page answered a click afterwards
(the "Load" button's tab is switched to and back: a frozen page would not). Before issue 26 the page
built one role menu per column and a preview of every column: a 5,000-column file froze it for over
30 s and added 146 MB to the server.

Run: python benchmarks/wide_upload.py [--columns 1000,5000,10000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from dashboard import ARGS, IDLE, Server, cpu_seconds, wait_text
from wide_tables import write_table

TARGET_SECONDS = 10.0  # "without freezing": the page answers within seconds of the upload


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory so far (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def upload(browser, server: Server, path: Path) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    page.set_default_timeout(600_000)
    page.goto(server.url)
    page.wait_for_function(IDLE)
    page.locator(".bk-tab", has_text="Data").click()
    page.wait_for_function(IDLE)
    box = page.locator(".csv-upload input[type=file]").first
    columns = len(path.read_text().split("\n", 1)[0].split(";"))
    cpu, peak = cpu_seconds(server.process.pid), peak_rss_mb(server.process.pid)
    start = time.perf_counter()
    box.set_input_files(str(path))
    wait_text(page, "data-status", None, timeout=600_000)
    page.wait_for_function(f"""() => {{ const roots = [document];
      while (roots.length) {{ const r = roots.pop(); const el = r.querySelector('#data-status');
        if (el && el.textContent.includes('{columns:,} columns')) return true;
        for (const e of r.querySelectorAll('*')) if (e.shadowRoot) roots.push(e.shadowRoot); }}
      return false }}""", timeout=600_000)
    page.wait_for_function(IDLE, timeout=600_000)
    wall = time.perf_counter() - start
    spent, grown = cpu_seconds(server.process.pid) - cpu, peak_rss_mb(server.process.pid) - peak
    click = time.perf_counter()
    page.locator(".bk-tab", has_text="Lattice").click()
    page.locator(".bk-tab", has_text="Data").click()
    page.wait_for_function(IDLE, timeout=600_000)
    answer = time.perf_counter() - click
    verdict = "PASS" if wall <= TARGET_SECONDS else "MISSED"
    print(f"{columns - 3:>6,} columns ({path.stat().st_size / 1e6:4.1f} MB): read and shown in {wall:6.2f} s "
          f"(server CPU {spent:6.2f} s, server peak RSS +{grown:6.1f} MB); two tab clicks answered in "
          f"{answer:5.2f} s; target <= {TARGET_SECONDS:g} s -> {verdict}", flush=True)
    page.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--columns", default="1000,5000,10000")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        folder = Path(tmp)
        tables = [write_table(folder, int(c)) for c in args.columns.split(",")]
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        server = Server(dict(os.environ), "toy")
        try:
            server.wait_listening()
            print(f"microrelease app --sample toy; chromium headless; {os.cpu_count()} CPUs; "
                  f"load {os.getloadavg()[0]:.1f}", flush=True)
            for path in tables:
                upload(browser, server, path)
        finally:
            server.stop()
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
