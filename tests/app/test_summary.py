"""Vectors read as named levels: the summary line above the tabs (ids kept, names escaped, the
k-minimal list folded into a table), in a real browser, and in the command line's search output."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser

import pandas as pd
import pytest
from browser_util import IDLE, errors, screenshot, set_number

pn = pytest.importorskip("panel")

from microrelease.app.cli import main  # noqa: E402
from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.explorer.headline import summary_text  # noqa: E402
from microrelease.app.main import sample_with_profile  # noqa: E402
from microrelease.core import Hierarchy, load_dataset  # noqa: E402

IDS = ("k", "max-sup", "n-kmin", "kmin", "preferred")


@pytest.fixture(autouse=True)
def _reset_panel_state():
    yield
    pn.state.reset()


class _Page(HTMLParser):
    """The text inside each element with an id, every tag seen, and the table cells."""

    def __init__(self):
        super().__init__()
        self.open: list[tuple[str, str | None]] = []
        self.by_id: dict[str, str] = {}
        self.tags: list[str] = []
        self.cells: list[str] = []
        self.text = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.open.append((tag, dict(attrs).get("id")))
        if tag in ("td", "th"):
            self.cells.append("")

    def handle_endtag(self, tag):
        while self.open and self.open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        self.text += data
        for _, element_id in self.open:
            if element_id:
                self.by_id[element_id] = self.by_id.get(element_id, "") + data
        if self.open and self.open[-1][0] in ("td", "th"):
            self.cells[-1] += data


def rendered(markdown: str) -> _Page:
    """The summary as the page's Markdown pane renders it to HTML."""
    md = pn.pane.Markdown(markdown)
    page = _Page()
    page.feed(html.unescape(md._transform_object(markdown)["object"]))
    return page


def test_summary_keeps_the_ids_and_names_the_preferred_and_k_minimal_levels():
    e = Explorer(*sample_with_profile("samarati"), k=2)
    page = rendered(summary_text(e))
    assert {i: page.by_id[i] for i in IDS} == {"k": "2", "max-sup": "0", "n-kmin": "2", "kmin": "[0, 2] [1, 1]",
                                                "preferred": "[0, 2]"}
    assert "details" in page.tags and "summary" in page.tags
    assert "preferred (min-relative): [0, 2] = Race: as is, ZIP: level 2 (all: 941**)" in page.text
    assert page.cells == ["vector", "Race", "ZIP", "[0, 2]", "as is", "level 2 (all: 941**)",
                          "[1, 1]", "level 1 (all: person)", "level 1 (e.g. 9413*)"]


def test_long_k_minimal_lists_are_cut_on_the_line_and_in_the_table():
    e = Explorer(*sample_with_profile("adult"), k=5, max_sup=301)
    n = len(e.k_minimal_vectors())
    assert n > 40
    page = rendered(summary_text(e))
    assert page.by_id["kmin"].endswith(f"… (+{n - 5})") and page.by_id["kmin"].count("[") == 5
    assert page.by_id["n-kmin"] == str(n)
    assert sum(c.startswith("[") for c in page.cells) == 40
    assert f"… and {n - 40} more" in summary_text(e)


def test_level_names_and_column_names_from_data_are_escaped():
    payload = "<img src=x onerror=f()>"  # short enough not to be cut as an example
    column = "<b>q|1</b>"
    h = Hierarchy(column, (("x", payload), ("y", payload)))  # named by example: "level 1 (all: <img ...>)"
    ds = load_dataset(pd.DataFrame({column: ["x", "y", "x", "y"]}), qi=[column], hierarchies={column: h})
    e = Explorer(ds, k=3)  # only the top, [1], keeps all four rows
    page = rendered(summary_text(e))
    assert "img" not in page.tags and "b" not in page.tags
    # read as text, and the | in the column name did not split the table
    assert page.cells == ["vector", column, "[1]", f"level 1 (all: {payload})"]
    assert f"[1] = {column}: level 1 (all: {payload})" in page.text


def test_cli_search_text_shows_named_levels(capsys):
    code = main(["search", "--sample", "samarati", "--k", "2", "--max-sup", "2", "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "  [1, 0]  " in out and "Race: level 1 (all: person), ZIP: as is" in out
    assert "preferred by min-relative: [0, 1]" in out and "  = Race: as is, ZIP: level 1 (e.g. 9413*)" in out
    main(["search", "--sample", "samarati", "--k", "2", "--max-sup", "2", "--quiet", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert result["preferred"]["levels"] == {"Race": "as is", "ZIP": "level 1 (e.g. 9413*)"}
    assert {tuple(n["vector"]): n["levels"]["Race"] for n in result["k_minimal"]} == {
        (0, 1): "as is", (1, 0): "level 1 (all: person)"}


# --- in the browser --------------------------------------------------------------------------------

@pytest.mark.browser
def test_the_page_folds_the_k_minimal_list_into_named_levels(served_app, served_app_log, page):
    url, _ = served_app
    page.goto(url)
    page.wait_for_function(IDLE)
    set_number(page, ".k-input", 2)
    set_number(page, ".maxsup-rows", 0)
    page.locator("#max-sup", has_text="0").wait_for()
    assert page.locator("#kmin").text_content() == "[0, 2] [1, 1]"
    assert page.locator("#preferred").text_content() == "[0, 2]"
    cell = page.locator("details.kmin-list td", has_text="level 1 (e.g. 9413*)")
    assert not cell.is_visible()  # folded
    page.locator("details.kmin-list summary").click()
    cell.wait_for()
    page.locator(".summary", has_text="= Race: as is, ZIP: level 2 (all: 941**)").first.wait_for()
    screenshot(page, "summary_named_levels")
    assert not errors(page), errors(page)
