"""Browser-test fixtures: Debian's chromium driven by the playwright package, a served app."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

import browser_util
import pytest
from browser_util import PATIENCE_MS, SERVED_APP_LOG, ServerLog

CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM:
        pytest.skip("no chromium: install it with `apt-get install -y chromium` (Debian) to run the browser tests")
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright (no browser download needed)")
    sync_api.expect.set_options(timeout=PATIENCE_MS)  # its assertions poll too, 5 s by default
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    context.set_default_timeout(PATIENCE_MS)
    pg = context.new_page()
    pg.console_msgs, pg.requests = [], []
    pg.on("request", lambda r: pg.requests.append(r.url))
    pg.on("console", lambda m: pg.console_msgs.append(f"{m.type}: {m.text}"))
    pg.on("pageerror", lambda e: pg.console_msgs.append(f"PAGEERROR {e}"))
    yield pg
    # Close only once the document has nothing in flight: a page closed mid-update leaves the server
    # sending on a closed websocket, which is the test's doing, not the app's.
    try:
        pg.wait_for_function("() => !window.Bokeh || Bokeh.documents.length === 0 || Bokeh.documents[0].is_idle",
                             timeout=10_000)
    except Exception:  # noqa: BLE001 - a page that never loaded Bokeh, or was already closed
        pass
    context.close()


@pytest.fixture(scope="module")
def served_app():
    """The real `microrelease app` command on a free port, opening on Samarati's example: (URL, process)."""
    with browser_util.served_app("--sample", "samarati", log_name=SERVED_APP_LOG) as served:
        yield served


@pytest.fixture
def no_server_errors():
    """Fails the test on an error a served app logged while it ran: ``no_server_errors(LOG_NAME)``
    watches that log from now on (but for lines holding one of ``expected``) and returns its ServerLog."""
    watched: list[ServerLog] = []

    def watch(log_name: str, expected: Sequence[str] = ()) -> ServerLog:
        watched.append(ServerLog(log_name, expected))
        return watched[-1]

    yield watch
    for log in watched:
        log.check()


@pytest.fixture
def served_app_log(served_app, no_server_errors) -> ServerLog:
    """Fails the test on an error the ``served_app`` logged while it ran."""
    return no_server_errors(SERVED_APP_LOG)
