"""Accuracy against completeness for every satisfying node; Pareto front; preferred and selected ringed."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param

from microrelease.app import graph
from microrelease.app.state import STATUS_COLORS
from microrelease.app.views.common import CANVAS, NodePicker

HOVER = [("vector", "@vector"), ("status", "@status"), ("accuracy", "@accuracy"), ("completeness", "@completeness"),
         ("suppressed", "@suppressed")]


class TradeoffView(NodePicker):
    """Selecting a point selects the node in the lattice, and the other way round (shared state)."""

    height = param.Integer(default=380)

    @param.depends("explorer.answer", "explorer.preferred")
    def points(self) -> hv.Points:
        e = self.explorer
        if e is None or e.answer is None:
            return hv.Points([], ["accuracy", "completeness"], ["node", "vector", "status", "suppressed"])
        ids = np.flatnonzero(e.answer.satisfying)
        self._frame = frame = e.nodes_frame(ids)
        return hv.Points(frame, ["accuracy", "completeness"], ["node", "vector", "status", "suppressed"]).opts(
            color="status", cmap=STATUS_COLORS, size=8, tools=["hover", "tap"], hover_tooltips=HOVER,
            nonselection_alpha=0.6, show_legend=True, legend_position="bottom_left", backend_opts=CANVAS, shared_axes=False, framewise=True,
        )

    @param.depends("explorer.answer")
    def front(self) -> hv.Curve:
        e = self.explorer
        if e is None or e.answer is None or not e.answer.satisfying.any():
            return hv.Curve([], "accuracy", "completeness")
        ids = np.flatnonzero(e.answer.satisfying)
        acc, comp = e.answer.metrics["accuracy"][ids], e.answer.metrics["completeness"][ids]
        f = graph.pareto_front(acc, comp)
        return hv.Curve((acc[f], comp[f]), "accuracy", "completeness", label="Pareto front").opts(
            color="#444444", line_dash="dashed", backend_opts=CANVAS, shared_axes=False, framewise=True)

    @param.depends("explorer.answer", "explorer.preferred", "explorer.selected")
    def rings(self) -> hv.Points:
        e = self.explorer
        rows = []
        if e is not None and e.answer is not None:
            for i, label in ((e.preferred, "preferred"), (e.selected, "selected")):
                if i is not None:
                    rows.append((e.answer.metrics["accuracy"][i], e.answer.metrics["completeness"][i], label))
        return hv.Points(rows, ["accuracy", "completeness"], ["ring"]).opts(
            # no legend entry: "preferred" would join the points' entry of that name with another
            # data source, which Bokeh refuses (a console error)
            size=22, fill_alpha=0, line_width=3, color="ring", show_legend=False,
            cmap={"preferred": STATUS_COLORS["preferred"], "selected": "#000000"}, backend_opts=CANVAS, shared_axes=False, framewise=True)

    def __panel__(self):
        plot = (hv.DynamicMap(self.front) * self._points * hv.DynamicMap(self.rings)).opts(
            hv.opts.Overlay(responsive=True, height=self.height, title="Accuracy vs completeness (satisfying nodes)")
        )
        return pn.pane.HoloViews(plot, sizing_mode="stretch_width", min_height=self.height)
