"""Two metrics (default: accuracy against completeness) for every satisfying node; Pareto front;
preferred and selected ringed. Selecting a point selects the node in the lattice, and the other way
round (shared state). The axes' menus list the core's metrics registry.

Every point can be tapped: the axes leave a margin around the points (``TradeoffState.axis_range``),
and the toolbar and the legend sit outside the frame. The legend has one entry per status, in its colour.
"""

from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param

from microrelease.app.explorer.picker import NodePicker
from microrelease.app.style import BOUND, CANVAS, SELECTED, STATUS_COLORS
from microrelease.app.tabs.tradeoff.tradeoff_state import TradeoffState
from microrelease.core.lattice.metrics import METRICS

AXES = {m.label: name for name, m in METRICS.items()}
VALUES = ["node", "vector", "status", "suppressed", "accuracy", "completeness"]  # what hover and tap read
PLOT = {"backend_opts": CANVAS, "shared_axes": False, "framewise": True}
RING_SIZE = 22  # px: the preferred and selected rings, around points of size 8
LEGEND = ("satisfies", "k-minimal", "preferred")  # the statuses a satisfying node can have


def legend_keys() -> hv.Overlay:
    """The legend: one key per status, in its colour, from points at NaN (never drawn). Bokeh draws a
    legend read from the points' own status column by row index, and a frame with more rows than the
    one before was drawn with the previous frame's colours: wrong symbols, or a RangeError."""
    return hv.Overlay([hv.Points([(np.nan, np.nan)], ["x", "y"], label=status).opts(
        color=STATUS_COLORS[status], size=8, show_legend=True, **PLOT) for status in LEGEND])


class TradeoffView(NodePicker):
    state = param.ClassSelector(class_=TradeoffState)
    height = param.Integer(default=380)

    def __init__(self, **params):
        super().__init__(**params)
        self.x = pn.widgets.Select.from_param(self.state.param.x, options=AXES, css_classes=["tradeoff-x"], width=220)
        self.y = pn.widgets.Select.from_param(self.state.param.y, options=AXES, css_classes=["tradeoff-y"], width=220)

    def _values(self) -> list[str]:
        return list(dict.fromkeys([*VALUES, self.state.x, self.state.y]))

    def _hover(self) -> list[tuple[str, str]]:
        shown = dict.fromkeys([self.state.x, self.state.y, "accuracy", "completeness"])
        return [("vector", "@vector"), ("status", "@status"), *((METRICS[n].label.lower(), f"@{{{n}}}") for n in shown),
                ("suppressed", "@suppressed")]

    def _ranges(self) -> dict:
        return {"xlim": self.state.axis_range("x"), "ylim": self.state.axis_range("y")}

    @param.depends("state.explorer.answer", "state.explorer.preferred", "state.x", "state.y")
    def points(self) -> hv.Points:
        if self.state is None or self.state.explorer.answer is None:
            return hv.Points([], ["x", "y"], VALUES)
        self._frame = frame = self.state.points()
        return hv.Points(frame, ["x", "y"], self._values()).opts(
            color="status", cmap=STATUS_COLORS, size=8, tools=["hover", "tap"], hover_tooltips=self._hover(),
            nonselection_alpha=0.6, show_legend=False, **self._ranges(), **PLOT)

    @param.depends("state.explorer.answer", "state.x", "state.y")
    def front(self) -> hv.Curve:
        if self.state is None or self.state.explorer.answer is None or not self.state.explorer.answer.satisfying.any():
            return hv.Curve([], "x", "y")
        return hv.Curve(self.state.front(), "x", "y", label="Pareto front").opts(**BOUND, **PLOT)

    @param.depends("state.explorer.answer", "state.explorer.preferred", "state.explorer.selected", "state.x", "state.y")
    def rings(self) -> hv.Points:
        rows = self.state.rings() if self.state is not None and self.state.explorer.answer is not None else []
        return hv.Points(rows, ["x", "y"], ["ring"]).opts(
            # no legend entry: "preferred" would join the points' entry of that name with another
            # data source, which Bokeh refuses (a console error)
            size=RING_SIZE, fill_alpha=0, line_width=3, color="ring", show_legend=False,
            cmap={"preferred": STATUS_COLORS["preferred"], "selected": SELECTED}, **PLOT)

    @param.depends("state.x", "state.y")
    def plot(self) -> pn.pane.HoloViews:
        """The plot, drawn anew when the axes change (title and axis labels name the metrics)."""
        plot = (hv.DynamicMap(self.front) * self._points * hv.DynamicMap(self.rings) * legend_keys()).opts(
            hv.opts.Overlay(responsive=True, height=self.height, title=self.state.title(), toolbar="above",
                            legend_position="right",
                            xlabel=METRICS[self.state.x].label, ylabel=METRICS[self.state.y].label)
        )
        return pn.pane.HoloViews(plot, sizing_mode="stretch_width", min_height=self.height)

    def __panel__(self):
        return pn.Column(pn.Row(self.x, self.y), self.plot, sizing_mode="stretch_width")
