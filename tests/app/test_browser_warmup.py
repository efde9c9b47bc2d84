"""The served app warms up off the first page's path: nothing competes with the first page, and once a
page is shown in a browser one child process at the lowest priority compiles the kernels and computes
the other tabs' figures."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browser_util import IDLE, errors, screenshot, until

# the test also fails on an error the server logged while it ran
pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("served_app_log")]


def warm_up_children(pid: int) -> list[tuple[int, int]]:
    """(pid, niceness) of the multiprocessing children of process ``pid``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == pid and b"spawn_main" in cmdline:
            found.append((int(stat.parent.name), int(fields[16])))
    return found


def test_the_warm_up_starts_only_once_a_page_is_shown_and_at_the_lowest_priority(served_app, page):
    url, proc = served_app
    time.sleep(2)  # the server is up, and a session was created without a browser (the fixture's GET)
    assert warm_up_children(proc.pid) == [], "the warm-up started before any page was shown"
    page.goto(url)
    page.wait_for_function(IDLE)
    # spawned once the page is ready, and lowered at once (seen here a moment later)
    until(lambda: (c := warm_up_children(proc.pid)) and all(nice == 19 for _, nice in c),
          "a warm-up child at the lowest priority after the page")
    screenshot(page, "warm_up_after_first_page")
    page.locator(".bk-tab", has_text="Microaggregation").first.click()
    page.locator(".micro-summary").first.wait_for()  # from the child, or computed here
    page.wait_for_function(IDLE)
    assert not errors(page)
