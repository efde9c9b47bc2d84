"""How fast the dashboard opens and answers, measured in a real headless chromium on adult, in one run.

Serves ``microrelease app`` twice on a free port and drives Debian's chromium (through the playwright
package) against the targets of issue 14:

- first usable page, **cold**: numba's cache empty (``NUMBA_CACHE_DIR`` a fresh folder: a first-ever
  run compiles every kernel it uses) - from the URL printed to the lattice drawn and the page idle;
- first usable page, **warm**: the kernels in numba's cache (compiled first if need be);
- in the warm session: the median time from typing a new k to the recoloured lattice;
- then the first privacy model (0.2-closeness on salary-class at k = 5) until the lattice is recoloured;
- on the generated 12-QI table (``--sample wide12``, 349,920 nodes, answered by the pruned search; issue
  25): the first answer (from the server's start and from the URL printed to the k-minimal count shown
  and the evaluated frontier drawn), k changes and policy changes (a policy among the k-minimal nodes
  reuses the search's tags; a quality policy is a new branch-and-bound search), each until the summary
  shows the new answer and the page is idle.

Each figure is printed with the server process's CPU seconds over the same span (the machine is shared:
CPU time says what the server did, wall time what a user waited), its target and PASS or MISSED.

Run: python benchmarks/dashboard.py [--changes 12] [--only adult|wide12]
"""

from __future__ import annotations

import argparse
import os
import queue
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

TARGETS = {"cold": 10.0, "warm": 3.0, "k": 0.150, "model": 1.5, "wide first": 10.0, "wide change": 1.0}  # seconds
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
IDLE = "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle"
STATUS = """() => { if (!window.Bokeh || !Bokeh.documents.length) return null;
  for (const m of Bokeh.documents[0].all_models)
    if (m.type === 'ColumnDataSource' && m.data.levels && m.data.status) return Array.from(m.data.status).join();
  return null }"""
USABLE = f"() => ({IDLE})() && ({STATUS})() !== null"
# The text of the element with an id, looked up through the shadow roots Panel's panes render into (the
# root holding it is kept: the pane's text is replaced, its root is not). Polled every animation frame by
# wait_for_function: a playwright locator's wait backs off to 500 ms between tries, half a second of
# every figure once the first tries miss.
TEXT_OF = """(id) => { const cached = window.__mrRoots && window.__mrRoots[id];
  let hit = cached && cached.isConnected !== false ? cached.querySelector('#' + id) : null;
  if (!hit) { const roots = [document];
    while (roots.length && !hit) { const root = roots.pop(); hit = root.querySelector('#' + id);
      if (hit) { (window.__mrRoots = window.__mrRoots || {})[id] = root; break; }
      for (const el of root.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot); } }
  return hit ? hit.textContent : null }"""


def wait_text(page, element_id: str, shown: str | None = None, timeout: float = 180_000) -> None:
    """Until the element ``element_id`` exists (and, given ``shown``, reads it), checked every frame."""
    predicate = "t => t !== null" if shown is None else f"t => t === {shown!r}"
    page.wait_for_function(f"() => ({predicate})(({TEXT_OF})({element_id!r}))", timeout=timeout)
KS = [2, 10, 50, 5, 25, 3, 100, 8, 40, 4, 20, 60]
TICK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` (all its threads; not its children)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def verdict(seconds: float, target: float) -> str:
    return f"target <= {target:g} s -> {'PASS' if seconds <= target else 'MISSED'}"


class Server:
    """``microrelease app --sample SAMPLE`` on a free port; ``printed`` is when its URL line appeared,
    ``started`` when the process was started."""

    def __init__(self, env: dict[str, str], sample: str = "adult"):
        self.port = port = free_port()
        self.url = f"http://127.0.0.1:{port}/"
        script = Path(sys.executable).parent / "microrelease"
        self.started = time.perf_counter()
        self.process = subprocess.Popen([str(script), "app", "--sample", sample, "--port", str(port)], env=env,
                                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                        start_new_session=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put((time.perf_counter(), line)) for line in self.process.stdout],
                         daemon=True).start()
        while True:
            printed, line = lines.get(timeout=120)
            if self.url in line:
                self.printed, self.cpu_printed = printed, cpu_seconds(self.process.pid)
                break

    def wait_listening(self) -> None:
        """Until the port accepts connections (a GET would open a session of its own)."""
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=30).close()
                return
            except OSError:
                time.sleep(0.02)

    def stop(self) -> None:
        """The server, then anything it started (its warm-up process) that is still running."""
        self.process.terminate()
        self.process.wait(30)
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass


def first_page(browser, env: dict[str, str], label: str):
    """Open the page on a new server; print the time from the URL to a usable page. Returns (server, page)."""
    server = Server(env)
    page = browser.new_page(viewport={"width": 1500, "height": 1100})
    server.wait_listening()  # the browser would fail on a port not yet listening; the clock runs from the URL
    page.goto(server.url)
    page.wait_for_function(USABLE, timeout=180_000)
    wall, cpu = time.perf_counter() - server.printed, cpu_seconds(server.process.pid) - server.cpu_printed
    print(f"first usable page, {label:4}: {wall:5.2f} s after the URL was printed (server CPU {cpu:5.2f} s); "
          f"{verdict(wall, TARGETS[label])}", flush=True)
    return server, page, wall


def change(page, server: Server, act) -> tuple[float, float]:
    """(wall, server CPU) from ``act()`` to the lattice's statuses changing in the browser."""
    page.wait_for_function(IDLE)
    before = page.evaluate(STATUS)
    cpu = cpu_seconds(server.process.pid)
    start = time.perf_counter()
    act()
    page.wait_for_function(f"() => ({STATUS})() !== {before!r}", timeout=120_000)
    return time.perf_counter() - start, cpu_seconds(server.process.pid) - cpu


def k_changes(page, server: Server, n: int) -> float:
    box = page.locator(".k-input input").first
    times, cpus = [], []
    for i in range(n):
        k = KS[i % len(KS)]
        box.fill(str(k))
        wall, cpu = change(page, server, lambda: box.press("Enter"))
        times.append(wall)
        cpus.append(cpu)
        print(f"  k -> {k:>3}: {1000 * wall:6.1f} ms (server CPU {1000 * cpu:5.0f} ms)", flush=True)
    median = statistics.median(times)
    print(f"k change -> recoloured lattice: median {1000 * median:.0f} ms (min {1000 * min(times):.0f}, "
          f"max {1000 * max(times):.0f}; server CPU median {1000 * statistics.median(cpus):.0f} ms); "
          f"target <= {1000 * TARGETS['k']:.0f} ms -> {'PASS' if median <= TARGETS['k'] else 'MISSED'}", flush=True)
    return median


def first_model(page, server: Server) -> float:
    page.locator(".sensitive-select select").select_option("salary-class")
    page.wait_for_function(IDLE)
    box = page.locator(".t-value input").first
    box.fill("0.2")
    wall, cpu = change(page, server, lambda: box.press("Enter"))
    print(f"first privacy model (0.2-closeness on salary-class, k = 5) -> recoloured lattice: {wall:.2f} s "
          f"(server CPU {cpu:.2f} s); {verdict(wall, TARGETS['model'])}", flush=True)
    return wall


WIDE_KS = [10, 20, 3, 7, 5]  # 5 last: the opening question, asked again (kept answers)
WIDE_POLICIES = ["min-absolute", "loss", "min-relative"]


def answered(page, server: Server, act, element_id: str, shown: str) -> tuple[float, float]:
    """(wall, server CPU) from ``act()`` to the summary's ``element_id`` reading ``shown`` (the summary is
    written with the new answer) and the page idle."""
    page.wait_for_function(IDLE)
    cpu = cpu_seconds(server.process.pid)
    start = time.perf_counter()
    act()
    wait_text(page, element_id, shown)
    page.wait_for_function(IDLE, timeout=180_000)
    return time.perf_counter() - start, cpu_seconds(server.process.pid) - cpu


def wide_figures(browser) -> None:
    """The 12-QI table: the first answer, k changes and policy changes (see the module docstring)."""
    from microrelease.core import POLICIES

    server = Server(dict(os.environ), "wide12")
    try:
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        server.wait_listening()
        page.goto(server.url)
        wait_text(page, "n-kmin", timeout=300_000)  # in a shadow root: not document.querySelector
        page.wait_for_function(USABLE, timeout=300_000)
        now = time.perf_counter()
        wall, since_start = now - server.printed, now - server.started
        cpu = cpu_seconds(server.process.pid) - server.cpu_printed
        drawn = page.locator("#n-drawn").text_content()
        print(f"12 QIs, first answer: {wall:5.2f} s after the URL was printed (server CPU {cpu:5.2f} s), "
              f"{since_start:5.2f} s after the server started; {page.locator('#n-kmin').text_content()} k-minimal, "
              f"{drawn} nodes drawn; {verdict(wall, TARGETS['wide first'])}", flush=True)
        page.locator(".bk-tab", has_text="Lattice").first.click()
        box = page.locator(".k-input input").first
        for k in WIDE_KS:
            box.fill(str(k))
            wall, cpu = answered(page, server, lambda: box.press("Enter"), "k", str(k))
            again = " (asked before: a kept answer)" if k == 5 else ""
            print(f"12 QIs, k -> {k:>2}{again}: {wall:5.2f} s (server CPU {cpu:5.2f} s); "
                  f"{verdict(wall, TARGETS['wide change'])}", flush=True)
        select = page.locator(".policy-select select")
        for policy in WIDE_POLICIES:
            label = POLICIES[policy].label
            wall, cpu = answered(page, server, lambda label=label: select.select_option(label=label),
                                 "policy", policy)
            how = "the same tags" if POLICIES[policy].among == "k-minimal" else "a new search"
            print(f"12 QIs, policy -> {policy} ({how}): {wall:5.2f} s (server CPU {cpu:5.2f} s); "
                  f"{verdict(wall, TARGETS['wide change'])}", flush=True)
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=12)
    parser.add_argument("--only", choices=["adult", "wide12"], help="only adult's figures, or only the 12-QI table's")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if not chromium:
        sys.exit("no chromium: apt-get install -y chromium")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    subprocess.run([sys.executable, "-c", "from microrelease.app.kernel_readiness import compile_kernels; compile_kernels()"],
                   check=True, stderr=subprocess.DEVNULL)  # the warm run's kernels in numba's cache
    with sync_playwright() as p, tempfile.TemporaryDirectory(prefix="numba-cold-") as cold_cache:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        browser.new_page().close()  # the browser's own start is not the server's
        if args.only == "wide12":
            wide_figures(browser)
            browser.close()
            return
        server, page, _ = first_page(browser, {**os.environ, "NUMBA_CACHE_DIR": cold_cache}, "cold")
        page.close()
        server.stop()
        server, page, _ = first_page(browser, dict(os.environ), "warm")
        try:
            page.locator(".bk-tab", has_text="Lattice").first.click()
            first_model(page, server)
            box = page.locator(".t-value input").first
            box.fill("0")
            change(page, server, lambda: box.press("Enter"))  # k-anonymity alone again
            k_changes(page, server, args.changes)
        finally:
            server.stop()
        try:
            if args.only is None:
                wide_figures(browser)
        finally:
            browser.close()
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
