"""Node details and the Teaching tab in a real headless chromium: a tap draws the class-size histogram
with a real size and the server logs nothing; VT reads as plain vectors with C_x and "suppressed" in
view; the probe slider and the step buttons agree with the text; presentation mode; adult's VT is
left out and its failing-classes table fits the page."""

from __future__ import annotations

import pytest
from browser_util import (
    FIGURES,
    IDLE,
    NO_SESSION_PATH,
    NODE_XY,
    ServerLog,
    app_fixture,
    errors,
    node_with_status,
    screenshot,
    set_number,
)

pytestmark = pytest.mark.browser
expect = pytest.importorskip("playwright.sync_api", reason="pip install playwright").expect

SAMARATI_LOG, ADULT_LOG = "served_teaching_samarati.log", "served_teaching_adult.log"
# The class-size histograms on the page: size of each drawn figure and its spikes (x: size, y1: classes).
HISTOGRAMS = """() => {
  """ + FIGURES + """
  return figs.filter(f => String(f.model.title && f.model.title.text).startsWith('Equivalence-class sizes')).map(f => {
    const rect = f.el.getBoundingClientRect();
    const d = f.model.renderers.find(r => r.data_source && r.data_source.data.y1).data_source.data;
    return {width: rect.width, height: rect.height, x: Array.from(d.x), y: Array.from(d.y1)};
  }); }"""
LATTICE_FIGURE = """() => {
  """ + FIGURES + """
  return figs.filter(f => String(f.model.title && f.model.title.text).startsWith('Generalization lattice'))
             .map(f => f.el.getBoundingClientRect().height); }"""
# The rightmost node of a status: away from the legend in the lattice's top left corner.
RIGHTMOST = node_with_status("x")

samarati_url = app_fixture("--sample", "samarati", log_name=SAMARATI_LOG, wait_path=NO_SESSION_PATH)
adult_url = app_fixture("--sample", "adult", log_name=ADULT_LOG, wait_path=NO_SESSION_PATH)


@pytest.fixture
def samarati_log(samarati_url, no_server_errors) -> ServerLog:
    return no_server_errors(SAMARATI_LOG)


@pytest.fixture
def adult_log(adult_url, no_server_errors) -> ServerLog:
    return no_server_errors(ADULT_LOG)


def open_page(page, url: str, tab: str | None = None) -> None:
    page.goto(url)  # the first page waits for the server's warm-up
    page.wait_for_function(IDLE)
    if tab is not None:
        page.locator(".bk-tab", has_text=tab).first.click()
        page.wait_for_function(IDLE)


def tap(page, vector: str) -> None:
    page.wait_for_function(IDLE)
    xy = page.evaluate(NODE_XY, vector)
    assert xy is not None, f"node {vector} is not drawn"
    page.mouse.click(*xy)
    page.locator("#sel", has_text=vector).first.wait_for()


def test_each_tap_draws_the_histogram_of_its_node_and_logs_nothing(samarati_url, samarati_log, page):
    from microrelease.app.explorer.explorer import Explorer
    from microrelease.app.main import sample_with_profile

    explorer = Explorer(*sample_with_profile("samarati"), k=2)
    open_page(page, samarati_url)
    for vector in ["[1, 1]", "[0, 2]", "[1, 0]"]:
        tap(page, vector)
        sizes, counts, _ = explorer.class_sizes(explorer.lattice.index(tuple(int(d) for d in vector[1:-1].split(","))))
        page.wait_for_function(f"""(xs) => ({HISTOGRAMS})().some(h => h.width > 0 && h.height > 0 &&
                                   JSON.stringify(h.x) === JSON.stringify(xs))""", arg=[int(s) for s in sizes])
        shown = [h for h in page.evaluate(HISTOGRAMS) if h["width"] > 0]
        assert len(shown) == 1 and shown[0]["height"] > 100, shown
        assert shown[0]["x"] == list(sizes) and shown[0]["y"] == list(counts)
        samarati_log.check()  # after every tap, not only at the end
    page.locator(".class-sizes").first.scroll_into_view_if_needed()
    screenshot(page, "node_details_histogram")
    assert not errors(page), errors(page)


def test_vt_shows_plain_vectors_with_c_x_and_suppressed_in_view(samarati_url, samarati_log, page):
    open_page(page, samarati_url)
    tap(page, "[0, 1]")
    page.locator(".bk-tab", has_text="Teaching").first.click()
    table = page.locator(".vt-table").first
    table.locator(".tabulator-cell[tabulator-field='C_x at node']").first.wait_for()
    titles = [t for t in table.locator(".tabulator-col-title").all_text_contents() if t.strip()]
    assert titles[:4] == ["suppressed", "C_x at node", "outlier", "count"], titles
    cells = table.locator(".tabulator-cell").all_text_contents()
    assert not any("np." in c for c in cells) and "(0, 2)" in cells, cells
    # at [0, 1] two singleton outliers stay below k = 2
    assert table.locator(".tabulator-cell[tabulator-field='suppressed']").all_text_contents().count("true") == 2
    holder = table.locator(".tabulator-tableholder")
    holder.evaluate("e => { e.scrollLeft = e.scrollWidth; }")  # scrolled to the last tuple, C_x stays in view
    box, cell = holder.bounding_box(), table.locator(".tabulator-cell[tabulator-field='C_x at node']").first.bounding_box()
    assert box["x"] <= cell["x"] and cell["x"] + cell["width"] <= box["x"] + box["width"], (box, cell)
    screenshot(page, "teaching_vt")
    assert not errors(page), errors(page)


def test_probe_slider_and_step_buttons_follow_the_text(samarati_url, samarati_log, page):
    open_page(page, samarati_url, "Teaching")
    step, steps = page.locator("#fv-step"), page.locator("#fv-steps")
    slider = page.locator(".fv-step .bk-slider-value").first
    step.wait_for()
    assert (step.text_content(), steps.text_content(), slider.text_content()) == ("1", "2", "1")
    expect(page.locator(".fv-previous button")).to_be_disabled()
    page.locator(".fv-next button").click()
    page.locator("#fv-step", has_text="2").wait_for()
    expect(slider).to_have_text("2")
    assert page.locator("#fv-try").text_content() == "2"
    expect(page.locator(".fv-next button")).to_be_disabled()
    page.locator(".fv-previous button").click()
    page.locator("#fv-step", has_text="1").wait_for()
    expect(slider).to_have_text("1")
    page.locator(".fv-next button").click()
    page.locator("#fv-step", has_text="2").wait_for()
    page.locator(".fv-restart button").click()
    page.locator("#fv-step", has_text="1").wait_for()
    expect(slider).to_have_text("1")
    assert not errors(page), errors(page)


def test_presentation_mode_enlarges_the_steps_and_bands_the_probe_in_a_lattice(samarati_url, samarati_log, page):
    open_page(page, samarati_url, "Teaching")
    text = page.locator(".fv-probe").first
    text.wait_for()
    size = float(text.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px"))
    assert not page.evaluate(LATTICE_FIGURE)  # the Lattice tab's figure is not on this tab
    page.locator(".presentation-toggle button").click()
    page.wait_for_function(f"() => ({LATTICE_FIGURE})().some(h => h > 300)")
    assert float(text.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px")) >= 1.3 * size
    # the lattice beside the steps bands the height the probe tries, and follows the next button
    page.locator(".teaching-lattice #probe-height", has_text=page.locator("#fv-try").text_content()).wait_for()
    page.locator(".fv-next button").click()
    page.locator("#fv-step", has_text="2").wait_for()
    page.locator(".teaching-lattice #probe-height", has_text=page.locator("#fv-try").text_content()).wait_for()
    # Samarati's example, from another question
    set_number(page, ".k-input", 3)
    page.locator("#k", has_text="3").wait_for()
    page.locator(".load-example button").click()
    page.locator("#k", has_text="2").wait_for()
    expect(page.locator(".k-input input").first).to_have_value("2")
    page.locator(".fv-probe", has_text="satisfies k = 2 within MaxSup = 0").first.wait_for()
    page.locator(".teaching-lattice #probe-height", has_text="1").wait_for()
    page.wait_for_function(IDLE)
    screenshot(page, "teaching_presentation")
    assert not errors(page), errors(page)


def test_adult_leaves_vt_out_and_fits_its_failing_classes(adult_url, adult_log, page):
    open_page(page, adult_url, "Teaching")
    page.locator(".vt-text", has_text="at most 60").wait_for()
    expect(page.locator(".vt-table")).to_be_hidden()
    screenshot(page, "teaching_adult")

    page.locator(".bk-tab", has_text="Lattice").first.click()
    page.wait_for_function(IDLE)
    page.locator(".sensitive-select select").select_option("salary-class")
    set_number(page, ".t-value", 0.2)
    page.locator("#models", has_text="0.2-closeness").wait_for()
    page.wait_for_function(f"() => ({RIGHTMOST})('fails privacy model') !== null")
    tap(page, page.evaluate(RIGHTMOST, "fails privacy model"))
    table = page.locator(".failing-classes").first
    table.locator(".tabulator-row").first.wait_for()
    holder = table.locator(".tabulator-tableholder")
    width, visible = holder.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert width <= visible, (width, visible)
    classes = table.locator(".tabulator-cell[tabulator-field='class']").all_text_contents()
    assert classes and all(len(c.split(" · ")) == 8 for c in classes)  # one value per QI of adult
    table.scroll_into_view_if_needed()
    screenshot(page, "adult_failing_classes")
    assert not errors(page), errors(page)

