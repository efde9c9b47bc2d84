"""The served dashboard on a 12-QI table (``--sample wide12``, 349,920 nodes): the pruned search answers
off the page, the lattice draws the evaluated frontier, and a k change and a policy change are
answered again; every answer shown is checked against the core's ``search_pruned`` on the same table."""

from __future__ import annotations

import json
import re

import pytest
from browser_util import IDLE, NODE_XY, app_fixture, errors, follow_frames, screenshot, set_number, settle

from microrelease.app.wide import wide_dataset
from microrelease.core import POLICIES
from microrelease.core.search import search_pruned

pytestmark = pytest.mark.browser
LOG = "served_app_large.log"
DRAWN = """() => { for (const m of Bokeh.documents[0].all_models)
  if (m.type === 'ColumnDataSource' && m.data.levels && m.data.vector) return m.data.vector.length; return -1 }"""

url = app_fixture("--sample", "wide12", log_name=LOG)


@pytest.fixture(autouse=True)
def _no_server_errors(url, no_server_errors):
    no_server_errors(LOG)


@pytest.fixture(scope="module")
def dataset():
    return wide_dataset(12)


def shown(page) -> tuple[int, int, int, list[int]]:
    """(k, MaxSup, k-minimal count, preferred vector) as the summary line shows them."""
    return (int(page.locator("#k").text_content()), int(page.locator("#max-sup").text_content()),
            int(page.locator("#n-kmin").text_content()), json.loads(page.locator("#preferred").text_content()))


def core_answer(dataset, k: int, max_sup: int, policy: str) -> tuple[int, list[int]]:
    answer = search_pruned(dataset, k, max_sup, policy)
    return len(answer.k_minimal_indices), list(answer.preferred(policy).vector)


def test_the_pruned_search_answers_a_12_qi_table(url, page, dataset):
    follow_frames(page)
    page.goto(url)
    page.wait_for_function(IDLE)
    page.locator(".bk-tab", has_text="Lattice").first.click()
    page.locator("#n-kmin").wait_for()  # the first answer, searched off the page
    assert "answered by the pruned search" in page.locator("#large-note").text_content()
    assert page.locator("#view-mode").text_content() == "evaluated"
    assert page.locator("#large-caption").text_content().endswith("of 349,920 nodes: those the search evaluated")
    assert int(page.locator("#n-evaluated").text_content().replace(",", "")) > 0
    drawn = int(page.locator("#n-drawn").text_content())
    assert 0 < drawn <= 500
    page.wait_for_function(f"() => ({DRAWN})() === {drawn}")  # the browser holds exactly those points
    k, max_sup, n_kmin, preferred = shown(page)
    assert (n_kmin, preferred) == core_answer(dataset, k, max_sup, "min-relative")
    screenshot(page, "wide12_first_answer")

    # a tap on the preferred node selects it, as on a small lattice
    page.wait_for_function(IDLE)
    xy = page.evaluate(NODE_XY, str(preferred))
    assert xy is not None, f"the preferred node {preferred} is not drawn"
    page.mouse.click(*xy)
    page.locator("#sel", has_text=str(preferred)).wait_for()

    # a k change: searched again from the warm evaluator
    set_number(page, ".k-input", 10)
    page.locator("#k", has_text=re.compile("^10$")).wait_for()
    k, max_sup, n_kmin, preferred = shown(page)
    assert k == 10
    assert (n_kmin, preferred) == core_answer(dataset, 10, max_sup, "min-relative")

    # a policy among the k-minimal nodes: the same tags, another preferred node
    page.locator(".policy-select select").select_option(label=POLICIES["min-absolute"].label)
    page.locator("#policy", has_text="min-absolute").wait_for()
    assert shown(page)[2:] == core_answer(dataset, 10, max_sup, "min-absolute")

    # a quality policy: a new branch-and-bound search (ARX's optimum over every satisfying node)
    page.locator(".policy-select select").select_option(label=POLICIES["loss"].label)
    page.locator("#policy", has_text="loss").wait_for()
    assert shown(page)[2:] == core_answer(dataset, 10, max_sup, "loss")
    screenshot(page, "wide12_loss")
    settle(page)
    assert not errors(page), errors(page)
