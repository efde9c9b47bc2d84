"""The Lattice tab's two Bokeh figures: the lattice (nodes, edges, rings, probed height) and the nodes
per height. Plain Bokeh, built once per display; the view replaces their sources' data on each change.

Through HoloViews each k change cost ~60 ms on the server (a DynamicMap re-rendered per change, and a
recount of every model in the page's document for each re-rendered plot): most of a 150 ms budget.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd
from bokeh.models import ColumnDataSource, CustomJS, HoverTool, Legend, NumeralTickFormatter, Range1d, TapTool
from bokeh.plotting import figure
from bokeh.transform import factor_cmap

from microrelease.app.explorer.explorer import STATUS
from microrelease.app.style import (
    BAND,
    CANVAS,
    EDGE,
    PATH,
    RING,
    SELECTED,
    STATUS_COLORS,
    TESTED,
    integer_ticks,
)

RING_COLORS = {"tested": TESTED, "selected": SELECTED}
SEGMENT_COLUMNS = ["x0", "y0", "x1", "y1"]
BAR_COLUMNS = ["left", "right", "bottom", "top", "status", "height"]
TITLE = "Generalization lattice (bottom: original data; top: fully generalized)"
TOOLS = "pan,wheel_zoom,box_zoom,reset,save"
BACKEND = CANVAS["plot.output_backend"]


def columns(frame: pd.DataFrame) -> dict:
    """A frame as a ColumnDataSource's ``data`` (numpy columns travel as binary buffers)."""
    return {name: frame[name].to_numpy() for name in frame.columns}


def status_colors(statuses) -> dict:
    return {"fill_color": factor_cmap("status", [STATUS_COLORS[s] for s in statuses], list(statuses))}


@dataclass(frozen=True)
class LatticeFigure:
    """One displayed lattice figure: the figure and the source of each layer, bottom to top."""

    figure: figure
    band: ColumnDataSource
    edges: ColumnDataSource
    paths: ColumnDataSource
    rings: dict[str, ColumnDataSource]
    points: ColumnDataSource
    hover: HoverTool
    tapped: ColumnDataSource  # the node the page says was tapped (see TAP)

    def fit(self, x: pd.Series, y: pd.Series) -> None:
        """Ranges around the nodes at ``x``, ``y``, set by the server with the data (a range the browser
        computed after the data arrived would put a click made in between on the old positions)."""
        x0, x1 = (float(x.min()), float(x.max())) if len(x) else (0.0, 1.0)
        y0, y1 = (float(y.min()), float(y.max())) if len(y) else (0.0, 1.0)
        pad = max((x1 - x0) * 0.05, 0.5)
        for axis, start, end in ((self.figure.x_range, x0 - pad, x1 + pad), (self.figure.y_range, y0 - 0.6, y1 + 0.6)):
            axis.update(start=start, end=end, reset_start=start, reset_end=end)

    def resize(self, size: int) -> None:
        """Nodes of ``size`` pixels, rings around them."""
        for r in self.figure.renderers:
            if r.data_source is self.points:
                r.glyph.size = size
            elif any(r.data_source is s for s in self.rings.values()):
                r.glyph.size = size + 9


# Run in the page on a tap: of the nodes hit, the one nearest the pointer (in pixels; overlapping nodes
# all count as hit), named by its node number as the page shows it - a row number would be read against
# the server's frame, which a new question may have changed by then. The selection is cleared at once,
# so that tapping the same node again is a new tap.
TAP = """
const s = cb_data.source, hits = s.selected.indices, g = cb_data.geometries;
if (!hits.length) return;
const W = fig.inner_width, H = fig.inner_height, xr = fig.x_range, yr = fig.y_range;
let best = hits[0], nearest = Infinity;
for (const i of hits) {
  const dx = (s.data.x[i] - g.x) / (xr.end - xr.start) * W, dy = (s.data.y[i] - g.y) / (yr.end - yr.start) * H;
  if (dx * dx + dy * dy < nearest) { nearest = dx * dx + dy * dy; best = i; }
}
tapped.data = {node: [s.data.node[best]], at: [Date.now()]};
s.selected.indices = [];
"""


def lattice_figure(height: int, size: int, tooltips: list, on_tap: Callable[[int], None]) -> LatticeFigure:
    """An empty lattice figure; a tap on a node calls ``on_tap`` with its node number."""
    fig = figure(height=height, sizing_mode="stretch_width", tools=TOOLS, toolbar_location="above", title=TITLE,
                 y_axis_label="height", output_backend=BACKEND, x_range=Range1d(0, 1), y_range=Range1d(0, 1))
    fig.xaxis.visible = False
    fig.grid.visible = False
    fig.yaxis.ticker = integer_ticks()
    band = ColumnDataSource({"y0": [], "y1": []})
    fig.hstrip("y0", "y1", source=band, fill_color=BAND["color"], fill_alpha=BAND["alpha"], line_alpha=0)
    edges, paths = ColumnDataSource(dict.fromkeys(SEGMENT_COLUMNS, [])), ColumnDataSource(dict.fromkeys(SEGMENT_COLUMNS, []))
    fig.segment(*SEGMENT_COLUMNS, source=edges, line_color=EDGE["color"], line_width=EDGE["line_width"])
    fig.segment(*SEGMENT_COLUMNS, source=paths, line_color=PATH["color"], line_width=PATH["line_width"],
                line_dash=PATH["line_dash"])
    rings = {}
    for name, colour in RING_COLORS.items():
        rings[name] = ColumnDataSource({"x": [], "y": [], "vector": []})
        fig.scatter("x", "y", source=rings[name], size=size + 9, line_color=colour, fill_color=colour, **RING)
    points = ColumnDataSource({"x": [], "y": [], "status": []})
    nodes = fig.scatter("x", "y", source=points, size=size, line_color="white", line_width=1,
                        nonselection_alpha=1.0, selection_alpha=1.0, legend_field="status", **status_colors(STATUS))
    fig.legend.location = "top_left"
    hover = HoverTool(renderers=[nodes], tooltips=tooltips)
    tapped = ColumnDataSource({"node": [], "at": []})
    fig.add_tools(hover, TapTool(renderers=[nodes], mode="replace",
                                 callback=CustomJS(args={"fig": fig, "tapped": tapped}, code=TAP)))
    tapped.on_change("data", lambda _attr, _old, new: new["node"] and on_tap(int(new["node"][0])))
    return LatticeFigure(fig, band, edges, paths, rings, points, hover, tapped)


def overview_figure(statuses: tuple[str, ...]) -> tuple[figure, ColumnDataSource]:
    """Nodes per height and status as side-by-side bars on a log scale (``BAR_COLUMNS``), legend outside."""
    fig = figure(height=180, sizing_mode="stretch_width", y_axis_type="log", tools="save",
                 toolbar_location="above", title="nodes per height (log scale)", x_axis_label="height",
                 y_axis_label="nodes", output_backend=BACKEND)
    fig.grid.visible = False
    fig.xaxis.ticker = integer_ticks()
    fig.yaxis.ticker = integer_ticks(log=True)
    fig.yaxis.formatter = NumeralTickFormatter(format="0,0")
    fig.add_layout(Legend(), "right")  # made first, the bars' legend goes there (not over the bars)
    bars = ColumnDataSource(dict.fromkeys(BAR_COLUMNS, []))
    quads = fig.quad(left="left", right="right", bottom="bottom", top="top", source=bars, line_color="white",
                     legend_field="status", **status_colors(statuses))
    fig.add_tools(HoverTool(renderers=[quads], tooltips=[("height", "@height"), ("status", "@status"),
                                                         ("nodes", "@top{0,0}")]))
    return fig, bars
