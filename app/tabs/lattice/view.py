"""The lattice of distance vectors, drawn in layers by height, coloured by status; tap selects."""

from __future__ import annotations

import holoviews as hv
import panel as pn
import param

from microrelease.app.explorer.picker import NodePicker
from microrelease.app.explorer.state import STATUS
from microrelease.app.style import CANVAS, NO_RING, SELECTED, STATUS_COLORS, TESTED
from microrelease.app.tabs.lattice.state import BARS, LatticeState

HOVER = [("vector", "@vector"), ("levels", "@levels"), ("status", "@status"), ("suppressed rows", "@suppressed"),
         ("failing privacy models", "@models"),
         ("accuracy", "@accuracy"), ("completeness", "@completeness"), ("distinct classes", "@distinct")]
RINGS = {"": NO_RING, "tested": TESTED, "selected": SELECTED}
DEPENDS = ["state.explorer.answer", "state.explorer.preferred", "state.explorer.selected", "state.explorer.view",
           "state.explorer.fixed", "state.explorer.expanded", "state.explorer.probe", "state.explorer.profile"]


class LatticeView(NodePicker):
    """Nodes as hv.Points over hv.Segments edges (hv.Graph cannot report a tapped node)."""

    state = param.ClassSelector(class_=LatticeState)
    height = param.Integer(default=560)

    def _drawn_frame(self):
        frame = self.state.drawn_frame()
        frame["outline"] = frame["ring"].map(RINGS)
        return frame

    @param.depends(*DEPENDS)
    def points(self) -> hv.Points:
        if self.state is None or self.state.explorer.answer is None:
            return hv.Points([])
        self._frame = frame = self._drawn_frame()
        return hv.Points(frame, ["x", "y"], [c for c in frame.columns if c not in ("x", "y")]).opts(
            color="status", cmap=STATUS_COLORS, size=13 if len(frame) <= 600 else 5, line_color="outline",
            line_width=2, tools=["hover", "tap"], hover_tooltips=HOVER, nonselection_alpha=1.0,
            selection_alpha=1.0, show_legend=True, legend_position="top_left", backend_opts=CANVAS, shared_axes=False,
            framewise=True,
        )

    @param.depends(*DEPENDS)
    def edges(self) -> hv.Segments:
        if self.state is None or self.state.explorer.answer is None:
            return hv.Segments([])
        return hv.Segments(self.state.edges(), ["x0", "y0", "x1", "y1"]).opts(
            color="#cccccc", line_width=1, backend_opts=CANVAS, shared_axes=False, framewise=True)

    @param.depends("state.explorer.answer", "state.explorer.preferred")
    def overview(self) -> hv.Rectangles:
        """Stacked bars of the nodes per height and status (numeric axes, so the ranges follow a newly
        loaded lattice)."""
        rects = []
        if self.state is not None and self.state.explorer.answer is not None:
            for _, row in self.state.overview().iterrows():
                bottom = 0
                for status in BARS:
                    count = int(row[status])
                    if count:
                        rects.append((row.height - 0.4, bottom, row.height + 0.4, bottom + count, status, count))
                        bottom += count
        return hv.Rectangles(rects, ["x0", "y0", "x1", "y1"], ["status", "nodes"]).opts(
            color="status", cmap={s: STATUS_COLORS[s] for s in BARS},
            line_color="white", height=140, responsive=True, tools=["hover"], title="nodes per height",
            xlabel="height", ylabel="nodes", backend_opts=CANVAS, shared_axes=False, framewise=True,
        )

    @param.depends(*DEPENDS)
    def caption(self) -> str:
        if self.state is None or self.state.explorer.answer is None:
            return ""
        n = self.state.drawn_graph().number_of_nodes()
        return (f"Drawing <span id='n-drawn'>{n}</span> of {self.state.explorer.lattice.size} nodes "
                f"(<span id='view-mode'>{self.state.effective_view()}</span> view). Colours: "
                + ", ".join(f"<span style='color:{STATUS_COLORS[s]}'>●</span> {s}" for s in STATUS)
                + ". Black ring: selected; green ring: vectors tested by the Find_vector step shown.")

    def __panel__(self):
        plot = (hv.DynamicMap(self.edges) * self._points).opts(
            hv.opts.Overlay(responsive=True, height=self.height, xaxis=None, ylabel="height", toolbar="above",
                            title="Generalization lattice (bottom: original data; top: fully generalized)")
        )
        return pn.Column(
            pn.pane.Markdown(self.caption, css_classes=["lattice-caption"], sizing_mode="stretch_width"),
            pn.pane.HoloViews(plot, sizing_mode="stretch_width", min_height=self.height),
            pn.pane.HoloViews(hv.DynamicMap(self.overview), sizing_mode="stretch_width", height=160),
            sizing_mode="stretch_width",
        )
