"""The guided flow in a real headless chromium: tabs in the order of a decision (1 Data, 3 Explore,
4 Decide, then the tabs that stand aside), a line atop each saying what it needs and shows, a sidebar
holding only the controls of the tab in view, and number boxes that say why they refuse a value."""

from __future__ import annotations

import param
import pytest
from browser_util import IDLE, app_fixture, errors, follow_frames, painted, screenshot, set_number, settle
from playwright.sync_api import expect

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.explorer.sidebar import LATTICE_VIEW, QUESTION, Sidebar
from microrelease.app.main import sample_with_profile
from microrelease.app.tabs.tab_registry import OPENING_TAB, TABS
from microrelease.core import query

pytestmark = pytest.mark.browser

LOG = "served_flow.log"
TAB = {tab.name: tab for tab in TABS}


url = app_fixture("--sample", "samarati", log_name=LOG)


@pytest.fixture(autouse=True)
def _no_server_errors(url, no_server_errors):
    """Every test here also fails on an error the server logged while it ran."""
    no_server_errors(LOG)


def open_page(page, url: str) -> None:
    follow_frames(page)
    page.goto(url)
    page.wait_for_function(IDLE)
    page.locator(f".step-{OPENING_TAB}").wait_for()


def show(page, name: str) -> None:
    """Click the tab registered as ``name`` and wait for its step line (a tab built on first view takes
    seconds: the Sequences tab's attack curves)."""
    page.locator(".bk-tab", has_text=TAB[name].title).click()
    page.locator(f".step-{name}").wait_for()
    page.wait_for_function(IDLE)


def text(page, css: str) -> str:
    """The text of a Panel pane (drawn in its shadow root)."""
    return page.locator(css).first.evaluate("el => (el.shadowRoot || el).textContent")


def test_tabs_follow_the_steps_and_the_sidebar_holds_only_the_tab_s_controls(url, page):
    open_page(page, url)
    titles = page.locator(".bk-tab").all_text_contents()
    assert titles == [tab.title for tab in TABS]
    where = [next(i for i, title in enumerate(titles) if word in title) for word in ("Data", "Lattice", "Trade-off", "Export")]
    assert where == sorted(where)  # Data, then Explore (lattice, trade-off), then Decide
    assert [t for t in titles if t[0].isdigit()] == ["1 Data", "3 Explore: Lattice", "3 Explore: Trade-off",
                                                       "4 Decide: Export"]
    # the page opens on exploring the sample already loaded, with the question and the lattice's controls
    expect(page.locator(".bk-tab.bk-active")).to_have_text(TAB[OPENING_TAB].title)
    expect(page.locator(".k-input")).to_be_visible()
    expect(page.locator(".sidebar-lattice-view")).to_be_visible()

    show(page, "microaggregation")  # its own k, and no second one beside it
    expect(page.locator(".micro-k")).to_be_visible()
    expect(page.locator(".k-input")).to_be_hidden()
    expect(page.locator(".k-slider")).to_be_hidden()
    expect(page.locator("#k")).to_be_hidden()  # nor the question's k in the line above the tabs
    expect(page.locator(".sidebar-note")).to_be_visible()
    show(page, "lattice")
    expect(page.locator(".k-input")).to_be_visible()
    expect(page.locator("#k")).to_be_visible()
    expect(page.locator(".sidebar-note")).to_be_hidden()

    for tab in TABS:  # every tab: the sidebar sections its registry entry names, and a screenshot
        show(page, tab.name)
        for css, section in ((".k-input", QUESTION), (".sensitive-select", QUESTION), ("#k", QUESTION),
                             (".sidebar-lattice-view", LATTICE_VIEW)):
            if section in tab.sidebar:
                expect(page.locator(css)).to_be_visible()
            else:
                expect(page.locator(css)).to_be_hidden()
        expect(page.locator(f".step-{tab.name}")).to_contain_text("Needs:")
        painted(page)
        screenshot(page, f"tab_{tab.name}")
    settle(page)
    assert not errors(page), errors(page)


@pytest.mark.parametrize("typed", [0, 9999])
def test_the_k_box_says_why_it_refuses_a_value_and_keeps_k(url, page, typed):
    open_page(page, url)
    box = page.locator(".k-input input").first
    set_number(page, ".k-input", typed)
    expect(page.locator(".input-message")).to_contain_text(f"k must be from 1 to 9: {typed} was not applied; k stays 2")
    expect(box).to_have_value("2")  # the box shows the k in force again
    assert page.locator("#k").text_content() == "2"
    screenshot(page, f"k_box_refuses_{typed}")

    set_number(page, ".k-input", 3)  # a valid k is applied and the message goes
    page.locator("#k", has_text="3").wait_for()
    expect(page.locator(".input-message")).to_be_hidden()
    set_number(page, ".maxsup-rows", 10)
    expect(page.locator(".input-message")).to_contain_text("MaxSup (rows) must be from 0 to 9: 10 was not applied")
    expect(page.locator(".maxsup-rows input").first).to_have_value("0")
    set_number(page, ".maxsup-pct", 150)
    expect(page.locator(".input-message")).to_contain_text("MaxSup (% of rows) must be from 0 to 100")
    assert page.locator("#max-sup").text_content() == "0"
    settle(page)
    assert not errors(page), errors(page)


def test_each_step_says_what_it_needs_and_what_it_shows(url, page):
    dataset, profile = sample_with_profile("samarati")
    open_page(page, url)
    for k in (2, 3):  # the lines follow the question
        if k != 2:
            show(page, "lattice")
            set_number(page, ".k-input", k)
            page.locator("#k", has_text=str(k)).wait_for()
        a = query(profile, k, 0)
        preferred = a.preferred("min-relative")
        expect(page.locator(".step-lattice")).to_contain_text(
            f"{profile.lattice.size} nodes, {int(a.satisfying.sum())} satisfy k = {k} within MaxSup = 0, "
            f"{int(a.minimal.sum())} k-minimal, preferred {list(preferred.vector)}")
        show(page, "tradeoff")
        expect(page.locator(".step-tradeoff")).to_contain_text(f"{int(a.satisfying.sum())} satisfying nodes")
        show(page, "export")
        expect(page.locator(".step-export")).to_contain_text(
            f"the preferred node (min-relative) {list(preferred.vector)}: releases "
            f"{dataset.n_rows - preferred.suppressed} of {dataset.n_rows} rows")
        expect(page.locator(".step-export")).to_contain_text(f"(1 in {preferred.smallest_class})")
    show(page, "data")
    expect(page.locator(".step-data")).to_contain_text(
        f"samarati.csv: {dataset.n_rows} rows; 2 quasi-identifiers: Race (height 1), ZIP (height 2); "
        f"a lattice of {profile.lattice.size} nodes")
    show(page, "microaggregation")
    expect(page.locator(".step-microaggregation")).to_contain_text("its own k")
    assert "Shows:" not in text(page, ".step-microaggregation")
    settle(page)
    assert not errors(page), errors(page)


def test_the_privacy_model_progress_bar_follows_the_explorer():
    """The bar binds to the Explorer's ``model_progress``/``model_running`` when it has them (they come
    with the privacy models' progress); here a subclass stands in for that Explorer."""

    class BuildingExplorer(Explorer):
        model_progress = param.Number(default=0.0, bounds=(0, 1))
        model_running = param.Boolean(default=False)

    e = BuildingExplorer(*sample_with_profile("samarati"))
    sidebar = Sidebar(state=e)
    assert not sidebar.model_progress.visible
    e.param.update(model_running=True, model_progress=0.4)
    assert sidebar.model_progress.visible and sidebar.model_progress.value == 40
    e.param.update(model_running=False, model_progress=1.0)
    assert not sidebar.model_progress.visible
    Sidebar(state=Explorer(*sample_with_profile("samarati")))  # an Explorer without them: no bar, no error


# Every value the privacy-model progress bar takes in the page: (visible, value) at each change.
RECORD_PROGRESS = """() => { window.progressSeen = [];
  for (const m of Bokeh.documents[0].all_models) if (m.css_classes && m.css_classes.includes('model-progress')) {
    const note = () => window.progressSeen.push([m.visible, m.value]);
    m.properties.visible.change.connect(note); m.properties.value.change.connect(note); return true; }
  return false; }"""


def test_the_first_privacy_model_shows_its_progress(url, page):
    open_page(page, url)
    show(page, "data")
    page.locator(".sample-select select").select_option("adult")
    page.locator(".load-sample button").click()
    page.locator("#data-status", has_text="Loaded 30162 rows").wait_for()
    show(page, "lattice")
    assert page.evaluate(RECORD_PROGRESS)
    page.locator(".sensitive-select select").select_option("salary-class")
    set_number(page, ".t-value", 0.2)
    page.locator("#models", has_text="0.2-closeness").wait_for()
    expect(page.locator(".model-progress").first).to_be_hidden()
    seen = page.evaluate("() => window.progressSeen")
    shown = [value for visible, value in seen if visible]
    assert shown and seen[-1][0] is False, seen  # shown while the profile was built, hidden once done
    assert any(0 < value < 100 for value in shown) or len(set(shown)) > 1, seen  # and it moved
    screenshot(page, "adult_t_closeness_built")
    settle(page)
    assert not errors(page), errors(page)
