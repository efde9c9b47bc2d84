"""The Trade-off tab in a real headless chromium, read back from Bokeh's models in the page: at MaxSup 0
(every point at completeness 1) the axes frame the points with a margin, the preferred point can be
tapped, and the legend is the statuses in their colours."""

from __future__ import annotations

import pytest
from browser_util import FIGURES, IDLE, app_fixture, errors, follow_frames, screenshot, set_number, settle

from microrelease.app.explorer.explorer import STATUS
from microrelease.app.style import STATUS_COLORS
from microrelease.app.tabs.tradeoff.tradeoff_view import LEGEND, RING_SIZE

pytestmark = pytest.mark.browser

LOG = "served_tradeoff.log"
# The trade-off figure as plain data: its ranges, frame (page pixels), points (with page pixels) and
# legend entries (label, fill colour, outline colour of the symbol drawn for it).
TRADEOFF = """() => {
  """ + FIGURES + """
  const f = figs.find(f => f.model.title && String(f.model.title.text).includes('satisfying nodes'));
  if (!f) return null;
  const points = f.model.renderers.find(r => r.data_source && r.data_source.data.status && r.data_source.data.vector);
  if (!points) return null;
  const colour = (spec, d, i) => spec.transform
    ? spec.transform.palette[spec.transform.factors.indexOf(d[spec.field][i])] : spec.value;
  const legend = [];
  const panels = [...f.model.center, ...f.model.right, ...f.model.left, ...f.model.above, ...f.model.below];
  for (const lg of panels.filter(m => m.type === 'Legend')) for (const item of lg.items) {
    const r = item.renderers[0], d = r.data_source.data, field = item.label.field;
    for (const label of (field ? Array.from(new Set(d[field])) : [item.label.value])) {
      const i = field ? Array.from(d[field]).indexOf(label) : 0;
      legend.push({label, field: Boolean(field), fill: r.glyph.fill_color ? colour(r.glyph.fill_color, d, i) : null,
                   line: colour(r.glyph.line_color, d, i), ring: r.glyph.fill_alpha && r.glyph.fill_alpha.value === 0});
    }
  }
  const d = points.data_source.data, rect = f.canvas_view.el.getBoundingClientRect(), b = f.frame.bbox;
  return {
    x_range: [f.model.x_range.start, f.model.x_range.end], y_range: [f.model.y_range.start, f.model.y_range.end],
    frame: {left: rect.left + b.left, right: rect.left + b.right, top: rect.top + b.top, bottom: rect.top + b.bottom},
    status: Array.from(d.status), vector: Array.from(d.vector), y: Array.from(d.y),
    screen: Array.from(d.x).map((x, i) => [rect.left + f.frame.x_scale.compute(x), rect.top + f.frame.y_scale.compute(d.y[i])]),
    legend, legend_inside: f.model.center.some(m => m.type === 'Legend'), toolbar: f.model.toolbar_location,
  };
}"""


url = app_fixture("--sample", "samarati", log_name=LOG)


@pytest.fixture(autouse=True)
def _no_server_errors(url, no_server_errors):
    """Every test here also fails on an error the server logged while it ran."""
    no_server_errors(LOG)


def open_tradeoff(page, url: str) -> dict:
    follow_frames(page)
    page.goto(url)
    page.wait_for_function(IDLE)
    page.locator(".bk-tab", has_text="Trade-off").click()
    page.locator(".step-tradeoff").wait_for()
    return tradeoff(page)


def tradeoff(page, until: str = "true") -> dict:
    """The figure's data once drawn (and once ``until``, a JS expression over it as ``t``, holds)."""
    page.wait_for_function(f"() => {{ const t = ({TRADEOFF})(); return t !== null && ({until}); }}")
    page.wait_for_function(IDLE)
    return page.evaluate(TRADEOFF)


def inside(t: dict, xy: list[float], margin: float) -> bool:
    """Whether a point drawn at page position ``xy`` is at least ``margin`` px inside the frame."""
    f = t["frame"]
    return f["left"] + margin <= xy[0] <= f["right"] - margin and f["top"] + margin <= xy[1] <= f["bottom"] - margin


def test_at_maxsup_0_every_point_is_framed_and_the_preferred_one_can_be_tapped(url, page):
    t = open_tradeoff(page, url)  # samarati, k = 2, MaxSup = 0: every satisfying node releases every row
    assert set(t["y"]) == {1}
    start, end = t["y_range"]
    assert (start, end) != (0, 2) and start < 1 < end and end - 1 < 0.2  # completeness is a share: [0, 1] + margin
    x_start, x_end = t["x_range"]
    assert x_start < 0 and x_end > 1  # accuracy too
    assert not t["legend_inside"] and t["toolbar"] == "above"  # neither covers a point
    for xy, vector in zip(t["screen"], t["vector"], strict=True):  # each drawn whole, ring included
        assert inside(t, xy, RING_SIZE / 2), (vector, xy, t["frame"])

    preferred = t["vector"][t["status"].index("preferred")]
    page.mouse.click(*t["screen"][t["status"].index("preferred")])
    wait_for_details(page, preferred)
    screenshot(page, "tradeoff_maxsup0_preferred_tapped")
    settle(page)
    assert not errors(page), errors(page)


def test_a_constant_metric_is_shown_around_its_value(url, page):
    open_tradeoff(page, url)
    page.locator(".tradeoff-y select").select_option("Suppressed rows")  # 0 for every node at MaxSup 0
    t = tradeoff(page, "t.y_range[1] < 1.5")
    start, end = t["y_range"]
    assert start < 0 < end and (start, end) != (-1, 1)
    for xy in t["screen"]:
        assert inside(t, xy, RING_SIZE / 2)
    screenshot(page, "tradeoff_constant_suppressed")
    settle(page)
    assert not errors(page), errors(page)


def wait_for_details(page, vector: str) -> None:
    """Until the details of the tapped node are on the page (the last of what a tap updates)."""
    page.locator("#sel", has_text=vector).wait_for()
    page.locator(".released-table .tabulator-row").first.wait_for()
    page.wait_for_function(IDLE)


def legend_is_the_statuses(t: dict) -> None:
    entries = [e for e in t["legend"] if e["label"] != "Pareto front"]
    assert [e["label"] for e in entries] == [s for s in STATUS if s in LEGEND], entries  # in STATUS order
    assert set(t["status"]) <= set(LEGEND)
    for e in entries:
        assert not e["field"], e  # a key of its own: not read from the points' rows by index
        assert not e["ring"], e  # the rings of the preferred and selected nodes have no entry
        assert e["fill"].lower() == e["line"].lower() == STATUS_COLORS[e["label"]].lower(), e


def test_the_legend_is_the_statuses_in_their_colours(url, page):
    t = open_tradeoff(page, url)
    legend_is_the_statuses(t)
    # Fewer points, then more: Bokeh drew a legend read from the points' rows with the previous, shorter
    # frame's colours (wrong symbols; here a "RangeError: Offset is outside the bounds of the DataView").
    set_number(page, ".k-input", 9)
    t = tradeoff(page, "t.status.length === 1")
    set_number(page, ".k-input", 2)
    t = tradeoff(page, "t.status.length === 3")
    legend_is_the_statuses(t)
    set_number(page, ".maxsup-rows", 2)
    t = tradeoff(page, "t.status.length > 3")
    tapped = t["status"].index("k-minimal")
    page.mouse.click(*t["screen"][tapped])  # the selected ring is drawn
    wait_for_details(page, t["vector"][tapped])
    legend_is_the_statuses(tradeoff(page))
    screenshot(page, "tradeoff_legend")
    settle(page)
    assert not errors(page), errors(page)
