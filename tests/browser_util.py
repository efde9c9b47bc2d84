"""Helpers for the browser tests: free ports, serving the app with a log of its own, waiting for it,
the errors in its log and in a page's console, the page's JavaScript probes, screenshots as artifacts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
SERVED_APP_LOG = "served_app.log"  # the log of tests/app/conftest.py's ``served_app`` fixture
ERROR_WORDS = ("ERROR", "Traceback", "Exception")
NO_SESSION_PATH = "favicon.ico"  # answered by a served app without building a session (a GET of the page does)

# The bound of every wait on the page (ms): waits poll for a condition, and this bound is only reached
# when something is wrong. Generous, because a first-ever run compiles kernels on a 2-core machine that
# may be shared (CI saw load 11-27); MICRORELEASE_PATIENCE_S overrides it.
PATIENCE_MS = int(float(os.environ.get("MICRORELEASE_PATIENCE_S", "600")) * 1000)

# True once Bokeh has rendered the document and has nothing in flight.
IDLE = "() => window.Bokeh && Bokeh.documents.length > 0 && Bokeh.documents[0].is_idle"
# JavaScript statements that gather the view of every Bokeh figure on the page into ``figs``.
FIGURES = """const figs = [];
  const walk = v => { if (v.model.type === 'Figure') figs.push(v); for (const c of v.children()) walk(c); };
  for (const r of Bokeh.index.roots) walk(r);"""
# The page position [x, y] of the lattice node with vector ``vec`` (e.g. "[1, 1]"); null if not drawn.
NODE_XY = f"""(vec) => {{
  {FIGURES}
  for (const f of figs) for (const r of f.model.renderers) {{
    const d = r.data_source && r.data_source.data;
    if (!d || !d.levels || !d.vector) continue;
    const i = Array.from(d.vector).indexOf(vec);
    if (i < 0) continue;
    const rect = f.canvas_view.el.getBoundingClientRect();
    return [rect.left + f.frame.x_scale.compute(d.x[i]), rect.top + f.frame.y_scale.compute(d.y[i])];
  }}
  return null; }}"""


def node_with_status(axis: str) -> str:
    """A JavaScript function of a status: the vector of the drawn lattice node of that status with the
    largest ``axis`` coordinate ("x": the rightmost, "y": the highest); null if none is drawn."""
    return f"""(status) => {{
  {FIGURES}
  for (const f of figs) for (const r of f.model.renderers) {{
    const d = r.data_source && r.data_source.data;
    if (!d || !d.levels || !d.vector || !d.status) continue;
    let best = -1;
    for (let i = 0; i < d.status.length; i++)
      if (d.status[i] === status && (best < 0 || d.{axis}[i] > d.{axis}[best])) best = i;
    if (best >= 0) return d.vector[best];
  }}
  return null; }}"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log_path(log_name: str) -> Path:
    """Where a served app's log LOG_NAME is written: one per test worker (``pytest -n``), since the
    modules that share a fixture's log may run at the same time on two workers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return ARTIFACTS / (f"{worker}-{log_name}" if worker else log_name)


def until(condition, what: str, timeout: float = PATIENCE_MS / 1000, every: float = 0.1):
    """The first truthy ``condition()``, polled every EVERY seconds; fails naming WHAT after TIMEOUT."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {timeout:.0f} s")
        time.sleep(every)
    return value


def log_quiet(path: Path, quiet: float = 1.0) -> None:
    """Until the log at PATH has not grown for QUIET seconds: the server has finished writing what the
    last action started (an error it logs late is still this test's)."""
    seen = {"size": -1, "since": time.monotonic()}

    def unchanged() -> bool:
        size = path.stat().st_size
        if size != seen["size"]:
            seen.update(size=size, since=time.monotonic())
        return time.monotonic() - seen["since"] >= quiet

    until(unchanged, f"{path.name} still growing", every=0.2)


def painted(page) -> None:
    """Until the browser has painted two frames since now (canvases paint after the document is idle)."""
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")


def wait_http(url: str, timeout: float = PATIENCE_MS / 1000) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            # a first page can take seconds on a busy machine: wait for its answer, not just the socket
            with urllib.request.urlopen(url, timeout=max(2.0, deadline - time.time())):
                return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


@contextmanager
def served_app(*args: str, log_name: str, wait_path: str = "",
               timeout: float = PATIENCE_MS / 1000) -> Iterator[tuple[str, subprocess.Popen]]:
    """The real ``microrelease app ARGS`` on 127.0.0.1 and a free port, logging to ARTIFACTS/LOG_NAME (a
    log of its own: browser modules serve at the same time); (its URL, its process) once URL+WAIT_PATH
    answers (with NO_SESSION_PATH, without building a session and its figures for nobody)."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    ARTIFACTS.mkdir(exist_ok=True)
    with open(log_path(log_name), "w") as log:  # a file, not a pipe nobody reads (a full pipe blocks the server)
        proc = subprocess.Popen([str(Path(sys.executable).parent / "microrelease"), "app", *args,
                                 "--host", "127.0.0.1", "--port", str(port)],
                                stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            wait_http(url + wait_path, timeout)
            yield url, proc
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def app_fixture(*args: str, log_name: str, **options):
    """A module-scoped fixture: the URL of ``served_app(*args, log_name=log_name, **options)``, for a
    test module to serve its own app with a log of its own (modules run side by side)."""

    @pytest.fixture(scope="module")
    def url() -> Iterator[str]:
        with served_app(*args, log_name=log_name, **options) as (url, _):
            yield url

    return url


def server_errors(log_path: Path, since: int = 0) -> list[str]:
    """Error lines a served app logged to ``log_path`` after byte ``since``."""
    text = log_path.read_bytes()[since:].decode("utf-8", "replace")
    return [line for line in text.splitlines() if any(w in line for w in ERROR_WORDS)]


class ServerLog:
    """What a served app logged to ARTIFACTS/LOG_NAME since this was made, but for the lines holding
    one of ``expected`` (a list the test may still add to)."""

    def __init__(self, log_name: str, expected: Sequence[str] = ()):
        self.path, self.expected = log_path(log_name), expected
        self.start = self.path.stat().st_size

    def errors(self) -> list[str]:
        log_quiet(self.path)  # let the server finish what the last action started
        return [line for line in server_errors(self.path, self.start) if not any(e in line for e in self.expected)]

    def check(self) -> None:
        found = self.errors()
        assert not found, found


def errors(page) -> list[str]:
    """The errors of the page's console (but for a missing favicon), and its uncaught exceptions."""
    return [m for m in page.console_msgs if "PAGEERROR" in m or (m.startswith("error") and "favicon" not in m)]


def set_number(page, css: str, value: float) -> None:
    """Type ``value`` into the number box of the widget ``css`` and apply it."""
    box = page.locator(f"{css} input").first
    box.fill(str(value))
    box.press("Enter")


def follow_frames(page) -> None:
    """Note in ``page.last_frame`` when the server last sent anything on a websocket (see ``settle``);
    call before ``page.goto``."""
    page.last_frame = time.time()
    page.on("websocket", lambda ws: ws.on("framereceived", lambda _: setattr(page, "last_frame", time.time())))


def settle(page, quiet: float = 1.5, timeout: float = 60) -> None:
    """Until the server has sent nothing for ``quiet`` seconds: some updates are sent on a later tick,
    and a page closed before them leaves the server writing to a closed websocket (an error in its log
    that is the test's doing)."""
    deadline = time.time() + timeout
    while time.time() - page.last_frame < quiet and time.time() < deadline:
        page.wait_for_timeout(200)


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
