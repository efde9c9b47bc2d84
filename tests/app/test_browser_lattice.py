"""The Lattice tab in a real headless chromium, read back from Bokeh's models in the page: the legend is
the statuses in their colours, the selected and probe rings are layers of their own, a capped drawing
says so and stays connected, ticks are whole numbers, the hover writes figures as the details do."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from browser_util import FIGURES, IDLE, NO_SESSION_PATH, NODE_XY, app_fixture, errors, screenshot, set_number

pytestmark = pytest.mark.browser
# Everything the lattice figure and the overview hold, as plain data. The lattice is the figure with
# the node points (a source with ``levels``); rings are the scatters without fill; edges the segments.
LATTICE = """() => {
  """ + FIGURES + """
  const plain = d => Object.fromEntries(Object.entries(d).map(([k, v]) => [k, Array.from(v)]));
  const ticks = f => { const out = {}; for (const [m, v] of f.renderer_views)
    if (m.type.endsWith('Axis')) out[m === f.model.left[0] ? 'y' : 'x'] = Array.from(v.tick_coords.major[m === f.model.left[0] ? 1 : 0]);
    return out; };
  const out = {};
  for (const f of figs) {
    const rs = f.model.renderers.filter(r => r.data_source);
    const points = rs.find(r => r.data_source.data.levels);
    const quads = rs.find(r => r.glyph.type === 'Quad');
    if (points) {
      const legends = f.model.center.concat(f.model.right).filter(m => m.type === 'Legend');
      const legend = [];
      for (const lg of legends) for (const item of lg.items) {
        const r = item.renderers[0], d = r.data_source.data, fill = r.glyph.fill_color;
        const field = item.label.field;
        for (const label of (field ? Array.from(new Set(d[field])) : [item.label.value])) {
          const i = field ? Array.from(d[field]).indexOf(label) : 0;
          const colour = fill.transform ? fill.transform.palette[fill.transform.factors.indexOf(d[fill.field][i])]
                                        : fill.value;
          legend.push([label, colour]);
        }
      }
      const rings = {};
      for (const r of rs) if (r.glyph.type === 'Scatter' && r !== points && r.glyph.fill_alpha.value === 0)
        rings[r.glyph.line_color.value] = plain(r.data_source.data);
      const segments = rs.filter(r => r.glyph.type === 'Segment').map(r => ({dashed: r.glyph.line_dash.value.length > 0,
        data: plain(r.data_source.data)}));
      const band = rs.filter(r => r.glyph.type === 'HStrip').map(r => plain(r.data_source.data));
      const hover = f.model.toolbar.tools.filter(t => t.type === 'HoverTool' && t.tooltips).map(t => t.tooltips);
      out.lattice = {points: plain(points.data_source.data), legend, rings, segments, band, hover, ticks: ticks(f)};
    }
    if (quads) out.overview = {bars: plain(quads.data_source.data), ticks: ticks(f), yscale: f.model.y_scale.type,
                               legend_outside: f.model.right.some(m => m.type === 'Legend'),
                               legend_inside: f.model.center.some(m => m.type === 'Legend')};
  }
  return out; }"""


SAMARATI_LOG, ADULT_LOG = "served_lattice_samarati.log", "served_lattice_adult.log"
samarati_url = app_fixture("--sample", "samarati", log_name=SAMARATI_LOG, wait_path=NO_SESSION_PATH)
adult_url = app_fixture("--sample", "adult", log_name=ADULT_LOG, wait_path=NO_SESSION_PATH)


def open_page(page, url: str) -> None:
    page.goto(url)  # the first page waits for the server's warm-up
    page.wait_for_function(IDLE)
    page.locator("#n-drawn").wait_for()


def lattice(page) -> dict:
    page.wait_for_function(IDLE)
    return page.evaluate(LATTICE)


def vectors_at(points: dict, xy: dict) -> set[str]:
    """The vectors of the node points at the ring's positions."""
    where = {(round(x, 9), round(y, 9)): v for x, y, v in zip(points["x"], points["y"], points["vector"], strict=True)}
    return {where[(round(x, 9), round(y, 9))] for x, y in zip(xy["x"], xy["y"], strict=True)}


def tap(page, vector: str) -> None:
    models = lattice(page)
    xy = page.evaluate(NODE_XY, vector)
    assert vector in models["lattice"]["points"]["vector"]
    page.mouse.click(*xy)
    page.locator("#sel", has_text=vector).wait_for()


def check_legend(models: dict) -> None:
    from microrelease.app.explorer.explorer import STATUS
    from microrelease.app.style import STATUS_COLORS

    legend = models["lattice"]["legend"]
    assert legend and all(label in STATUS for label, _ in legend), legend
    assert all(colour == STATUS_COLORS[label] for label, colour in legend), legend
    assert {label for label, _ in legend} == set(models["lattice"]["points"]["status"])


def check_integer_ticks(models: dict) -> None:
    for ticks in (models["lattice"]["ticks"]["y"], models["overview"]["ticks"]["x"], models["overview"]["ticks"]["y"]):
        assert ticks and all(float(t).is_integer() for t in ticks), ticks


def test_samarati_legend_rings_band_ticks_and_hover(samarati_url, page, no_server_errors):
    from microrelease.app.explorer.explorer import Explorer
    from microrelease.app.main import sample_with_profile
    from microrelease.app.style import SELECTED, TESTED

    no_server_errors(SAMARATI_LOG)
    open_page(page, samarati_url)
    # the Teaching tab, once opened, highlights Find_vector's first probe in the lattice
    page.locator(".bk-tab", has_text="Teaching").first.click()
    page.locator("#fv-try").wait_for()
    page.locator(".bk-tab", has_text="Lattice").first.click()
    page.locator("#probe-step").wait_for()
    models = lattice(page)
    check_legend(models)
    check_integer_ticks(models)
    e = Explorer(*sample_with_profile("samarati"), k=2)  # the page's question
    step = int(page.locator("#probe-step").text_content())
    probe = e.find_vector().trace[step - 1]
    tested = models["lattice"]["rings"][TESTED]
    assert vectors_at(models["lattice"]["points"], tested) == {str(list(v)) for v in probe.tested}
    assert models["lattice"]["rings"][SELECTED]["x"] == []
    assert models["lattice"]["band"] == [{"y0": [probe.tried - 0.5], "y1": [probe.tried + 0.5]}]
    labels = [label for label, _ in models["lattice"]["hover"][0]]
    assert "levels" in labels and "failing privacy models" not in labels  # no model applied

    set_number(page, ".maxsup-rows", 2)
    page.wait_for_function(f"""() => {{ const p = ({LATTICE})().lattice.points;
      return p.status[p.vector.indexOf('[0, 1]')] === 'preferred' }}""")
    e.max_sup = 2
    probe = e.find_vector().trace[int(page.locator("#probe-step").text_content()) - 1]
    tap(page, "[1, 1]")
    page.wait_for_function(f"""() => {{ const m = ({LATTICE})().lattice;
      return m && m.rings['{SELECTED}'] && m.rings['{SELECTED}'].x.length === 1 }}""")
    models = lattice(page)
    check_legend(models)  # a tap no longer turns the legend into ring colours
    assert vectors_at(models["lattice"]["points"], models["lattice"]["rings"][SELECTED]) == {"[1, 1]"}
    assert vectors_at(models["lattice"]["points"], models["lattice"]["rings"][TESTED]) == {
        str(list(v)) for v in probe.tested}
    # the hover writes each figure as the node details do
    points = models["lattice"]["points"]
    i = points["vector"].index("[1, 1]")
    page.locator(".node-metrics td", has_text=re.compile(r"^Accuracy$")).first.wait_for()
    for label, column in (("Accuracy", "accuracy_text"), ("Completeness", "completeness_text")):
        row = page.locator(".node-metrics tr", has=page.locator("td", has_text=re.compile(f"^{label}$"))).first
        assert row.locator("td").nth(1).text_content().strip() == points[column][i]
    screenshot(page, "lattice_samarati_tapped")
    assert not errors(page), errors(page)


def test_a_tap_while_the_lattice_redraws_selects_the_node_tapped(samarati_url, page, no_server_errors):
    """A new question, then a tap as soon as the page is idle (the lattice may still show the previous
    answer): the row number the tap sends names the same node in the new frame (rows once sorted by
    status selected another node here)."""
    no_server_errors(SAMARATI_LOG)
    page.goto(samarati_url)
    page.wait_for_function(IDLE)
    set_number(page, ".k-input", 2)
    set_number(page, ".maxsup-rows", 0)
    page.locator("#max-sup", has_text="0").wait_for()
    screenshot(page, "lattice_samarati_first_frame")
    set_number(page, ".maxsup-rows", 2)
    page.locator("#max-sup", has_text="2").wait_for()
    tap(page, "[1, 1]")  # (once the page is idle; the lattice may still be redrawing)
    page.wait_for_function(f"""() => {{ const p = ({LATTICE})().lattice.points;
      return p.status[p.vector.indexOf('[0, 1]')] === 'preferred' }}""")
    assert not errors(page), errors(page)


def test_a_tap_names_the_node_the_page_shows_whatever_the_servers_rows(samarati_url, page, no_server_errors):
    """The page may show another frame than the server holds (a new question on its way): a tap names
    the node by its number as drawn in the page, never by a row number the server would read against
    its own frame. Here the page's rows are reversed, the server's are not."""
    no_server_errors(SAMARATI_LOG)
    open_page(page, samarati_url)
    page.evaluate(f"""() => {{ {FIGURES}
      for (const f of figs) for (const r of f.model.renderers) {{
        const s = r.data_source; if (!s || !s.data.levels) continue;
        const d = {{}}; for (const [k, v] of Object.entries(s.data)) d[k] = Array.from(v).reverse();
        s.data = d; }} }}""")
    for vector in ("[0, 1]", "[1, 1]", "[0, 0]"):
        tap(page, vector)
    assert not errors(page), errors(page)


def test_adult_capped_drawing_says_so_and_joins_its_heights(adult_url, page, no_server_errors):
    from microrelease.app.explorer.explorer import Explorer
    from microrelease.app.main import sample_with_profile
    from microrelease.app.tabs.lattice.lattice_state import LatticeState

    no_server_errors(ADULT_LOG)
    open_page(page, adult_url)
    for css, value, shown in ((".k-input", 5, "#k"), (".maxsup-rows", 301, "#max-sup")):  # MaxSup 1 % of 30162
        set_number(page, css, value)
        page.locator(shown, has_text=str(value)).wait_for()
    page.locator("#truncated").wait_for()
    state = LatticeState(explorer=Explorer(*sample_with_profile("adult"), k=5, max_sup=301))
    focus = state.focus()
    assert focus.truncated
    caption = page.locator("#truncated").text_content()
    assert f"Truncated at {focus.cap} nodes" in caption
    for group, total in focus.total.items():
        assert f"{focus.drawn[group]:,} of {total:,} {group}" in caption
    assert f"({sum(focus.left_out().values()):,} left out)" in caption

    expected = state.overview()
    kmin_counts = {int(h): int(n) for h, n in zip(expected["height"], expected["k-minimal"], strict=True) if n}
    page.wait_for_function(f"""() => {{ const m = ({LATTICE})(); if (!m.overview) return false;
      const b = m.overview.bars, got = {{}};
      b.status.forEach((s, i) => {{ if (s === 'k-minimal') got[b.height[i]] = b.top[i]; }});
      return m.lattice.points.vector.length === {len(focus.ids)} && JSON.stringify(got) === '{json.dumps(kmin_counts).replace(" ", "")}' }}""")
    models = lattice(page)
    points, segments = models["lattice"]["points"], models["lattice"]["segments"]
    ends = {(x, y) for s in segments for k in ("0", "1") for x, y in zip(s["data"]["x" + k], s["data"]["y" + k],
                                                                           strict=True)}
    alone = [v for x, y, v in zip(points["x"], points["y"], points["vector"], strict=True) if (x, y) not in ends]
    assert not alone, f"drawn nodes without an edge: {alone[:5]}"
    heights = sorted(set(points["y"]))
    solid = [s["data"] for s in segments if not s["dashed"]]
    joined = {(y0, y1) for d in solid for y0, y1 in zip(d["y0"], d["y1"], strict=True)}
    assert all((a, b) in joined for a, b in zip(heights, heights[1:], strict=False)), (heights, sorted(joined))
    check_legend(models)
    check_integer_ticks(models)
    # nodes per height: a log scale, the legend beside the bars, every k-minimal count drawn
    overview = models["overview"]
    assert overview["yscale"] == "LogScale" and overview["legend_outside"] and not overview["legend_inside"]
    bars = overview["bars"]
    kmin = {h: top for h, top, s in zip(bars["height"], bars["top"], bars["status"], strict=True) if s == "k-minimal"}
    assert kmin == kmin_counts
    assert all(b < 1 for b in bars["bottom"])  # a count of 1 is a visible bar
    assert np.isclose(max(bars["top"]), expected.drop(columns="height").to_numpy().max())
    labels = [label for label, _ in models["lattice"]["hover"][0]]
    assert "failing privacy models" not in labels
    screenshot(page, "lattice_adult_capped")

    # with a privacy model applied, the hover has the row of the models each node fails
    page.locator(".sensitive-select select").select_option("salary-class")
    set_number(page, ".t-value", 0.2)
    page.locator("#models", has_text="0.2-closeness").wait_for()
    page.wait_for_function(f"""() => {{ const m = ({LATTICE})().lattice;
      return m.hover[0].some(t => t[0] === 'failing privacy models') && m.points.models.some(v => v.includes('0.2-closeness')) }}""")
    assert not errors(page), errors(page)
