"""The Compare tab in a real headless chromium: pin the preferred node, tap another in the lattice and
pin it, see both side by side (their columns, figures, class sizes and each QI's bars, read back from
the page and checked against the core's answer), unpin one; no error in the console or the server log."""

from __future__ import annotations

import json

import pytest
from browser_util import FIGURES, IDLE, NODE_XY, app_fixture, errors, follow_frames, screenshot, settle
from playwright.sync_api import expect

from microrelease.app.main import sample_with_profile
from microrelease.app.tabs.compare.compare_state import INPUT, SUPPRESSED
from microrelease.core import query

pytestmark = pytest.mark.browser

LOG = "served_compare.log"
# The QI bar charts as plain data: title, and the (release, value) factors and shares of their bars.
BARS = """() => {
  """ + FIGURES + """
  return figs.filter(f => f.model.title && String(f.model.title.text).includes("each pinned node's released rows"))
    .map(f => { const r = f.model.renderers.find(r => r.data_source && r.data_source.data.share);
                const d = r.data_source.data;
                return {title: f.model.title.text, release: Array.from(d.release), value: Array.from(d.value),
                        rows: Array.from(d.rows)}; });
}"""

# The titles of the class-size histograms drawn.
CLASS_SIZES = "(() => { " + FIGURES + """
  return figs.map(f => f.model.title ? String(f.model.title.text) : '').filter(t => t.endsWith(': class sizes')); })()"""

url = app_fixture("--sample", "samarati", log_name=LOG)


@pytest.fixture(autouse=True)
def _no_server_errors(url, no_server_errors):
    """Every test here also fails on an error the server logged while it ran."""
    no_server_errors(LOG)


def show(page, title: str, step: str) -> None:
    page.locator(".bk-tab", has_text=title).first.click()
    page.locator(f".step-{step}").wait_for()
    page.wait_for_function(IDLE)


def text(page, css: str) -> str:
    """The text of a Panel pane (drawn in its shadow root)."""
    return page.locator(css).first.evaluate("el => (el.shadowRoot || el).textContent")


def pin(page, label: str, slot: int, vector: str) -> None:
    button = page.locator(".compare-pin-button button")
    button.filter(has_text=label).wait_for()
    button.click()
    page.locator(f"#pin-{slot}", has_text=vector).wait_for()
    page.wait_for_function(IDLE)


def test_pin_two_nodes_see_them_side_by_side_and_unpin_one(url, page):
    dataset, profile = sample_with_profile("samarati")
    answer = query(profile, 2, 0)  # the page opens on k = 2, MaxSup = 0
    preferred = str(list(answer.preferred("min-relative").vector))
    other = "[1, 1]"
    assert other != preferred
    follow_frames(page)
    page.goto(url)
    page.wait_for_function(IDLE)

    show(page, "Compare", "compare")
    assert page.locator(".compare-pin").count() == 0
    pin(page, f"Pin the preferred node {preferred}", 0, preferred)

    show(page, "Lattice", "lattice")  # tap another node in the lattice
    page.mouse.click(*page.evaluate(NODE_XY, other))
    page.locator("#sel", has_text=other).wait_for()
    show(page, "Compare", "compare")
    pin(page, f"Pin the selected node {other}", 1, other)

    # both columns, each with its class sizes; one table with a column per node
    expect(page.locator(".compare-pin")).to_have_count(2)
    page.wait_for_function(CLASS_SIZES + ".length === 2")
    assert sorted(page.evaluate(CLASS_SIZES)) == sorted(f"{v}: class sizes" for v in (preferred, other))
    table = text(page, ".compare-table")
    for vector in (preferred, other):
        assert vector in table
    nodes = [answer.node(profile.lattice.index(tuple(json.loads(vec)))) for vec in (preferred, other)]
    flat = "".join(table.split()).replace(",", "")  # the cells' text, run together
    assert f"Suppressedrows{nodes[0].suppressed}{nodes[1].suppressed}" in flat
    assert f"Distinctcombinations{nodes[0].distinct}{nodes[1].distinct}" in flat

    # one bar chart per QI: the input, then each pinned node (its released rows and suppressed ones)
    page.wait_for_function(f"() => ({BARS})().length === {len(dataset.quasi_identifiers)}")
    for bars, qi in zip(page.evaluate(BARS), dataset.quasi_identifiers, strict=True):
        assert bars["title"].startswith(qi)
        assert list(dict.fromkeys(bars["release"])) == [INPUT, preferred, other]
        for release, node in zip((preferred, other), nodes, strict=True):
            rows = [r for rel, r in zip(bars["release"], bars["rows"], strict=True) if rel == release]
            values = [v for rel, v in zip(bars["release"], bars["value"], strict=True) if rel == release]
            assert sum(rows) == dataset.n_rows
            assert (SUPPRESSED in values) == (node.suppressed > 0)
    screenshot(page, "compare_two_pinned")

    page.locator(".compare-unpin-0 button").click()  # unpin the first: the other stays, alone
    expect(page.locator(".compare-pin")).to_have_count(1)
    page.locator("#pin-0", has_text=other).wait_for()
    page.wait_for_function(f"() => ({BARS})().every(b => !b.release.includes({preferred!r}))")
    assert preferred not in text(page, ".compare-table") and other in text(page, ".compare-table")
    page.wait_for_function(CLASS_SIZES + ".length === 1")
    screenshot(page, "compare_one_unpinned")
    settle(page)
    assert not errors(page), errors(page)
