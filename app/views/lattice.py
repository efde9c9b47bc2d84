"""The lattice of distance vectors, drawn in layers by height, coloured by status; tap selects."""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from microrelease.app import graph
from microrelease.app.state import STATUS, STATUS_COLORS
from microrelease.app.views.common import CANVAS, NodePicker

HOVER = [("vector", "@vector"), ("levels", "@levels"), ("status", "@status"), ("suppressed rows", "@suppressed"),
         ("failing privacy models", "@models"),
         ("accuracy", "@accuracy"), ("completeness", "@completeness"), ("distinct classes", "@distinct")]
DEPENDS = ["explorer.answer", "explorer.preferred", "explorer.selected", "explorer.view", "explorer.fixed",
           "explorer.expanded", "explorer.probe", "explorer.profile"]


class LatticeView(NodePicker):
    """Nodes as hv.Points over hv.Segments edges (hv.Graph cannot report a tapped node)."""

    height = param.Integer(default=560)

    def _drawn_frame(self) -> pd.DataFrame:
        e = self.explorer
        g = e.drawn_graph()
        ids = np.fromiter(g.nodes, dtype=np.int64)
        frame = e.nodes_frame(ids)
        frame["x"], frame["y"] = zip(*(g.nodes[i]["pos"] for i in g.nodes), strict=True) if len(ids) else ([], [])
        outline = np.full(len(ids), "#ffffff", dtype=object)
        if e.probe is not None:
            trace = e.find_vector().trace
            if 0 <= e.probe < len(trace):
                tested = {e.lattice.index(v) for v in trace[e.probe].tested}
                outline[np.isin(ids, list(tested))] = "#2ca02c"
        if e.selected is not None:
            outline[ids == e.selected] = "#000000"
        frame["outline"] = outline
        return frame

    @param.depends(*DEPENDS)
    def points(self) -> hv.Points:
        if self.explorer is None or self.explorer.answer is None:
            return hv.Points([])
        self._frame = frame = self._drawn_frame()
        return hv.Points(frame, ["x", "y"], [c for c in frame.columns if c not in ("x", "y")]).opts(
            color="status", cmap=STATUS_COLORS, size=13 if len(frame) <= 600 else 5, line_color="outline",
            line_width=2, tools=["hover", "tap"], hover_tooltips=HOVER, nonselection_alpha=1.0,
            selection_alpha=1.0, show_legend=True, legend_position="top_left", backend_opts=CANVAS, shared_axes=False, framewise=True,
        )

    @param.depends(*DEPENDS)
    def edges(self) -> hv.Segments:
        e = self.explorer
        if e is None or e.answer is None:
            return hv.Segments([])
        g = e.drawn_graph()
        segs = [(*g.nodes[a]["pos"], *g.nodes[b]["pos"]) for a, b in g.edges]
        return hv.Segments(segs, ["x0", "y0", "x1", "y1"]).opts(color="#cccccc", line_width=1, backend_opts=CANVAS, shared_axes=False, framewise=True)

    @param.depends("explorer.answer", "explorer.preferred")
    def overview(self) -> hv.Rectangles:
        """Stacked bars of failing / failing a privacy model / satisfying / k-minimal nodes per height (numeric axes, so the
        ranges follow a newly loaded lattice)."""
        e = self.explorer
        rects = []
        if e is not None and e.answer is not None:
            df = graph.height_overview(e.lattice, e.answer.satisfying, e.answer.minimal, e.status() == 4)
            for _, row in df.iterrows():
                bottom = 0
                for status in ("fails", "fails privacy model", "satisfies", "k-minimal"):
                    count = int(row[status])
                    if count:
                        rects.append((row.height - 0.4, bottom, row.height + 0.4, bottom + count, status, count))
                        bottom += count
        return hv.Rectangles(rects, ["x0", "y0", "x1", "y1"], ["status", "nodes"]).opts(
            color="status", cmap={s: STATUS_COLORS[s] for s in ("fails", "fails privacy model", "satisfies", "k-minimal")},
            line_color="white", height=140, responsive=True, tools=["hover"], title="nodes per height",
            xlabel="height", ylabel="nodes", backend_opts=CANVAS, shared_axes=False, framewise=True,
        )

    @param.depends(*DEPENDS)
    def caption(self) -> str:
        e = self.explorer
        if e is None or e.answer is None:
            return ""
        n = e.drawn_graph().number_of_nodes()
        return (f"Drawing <span id='n-drawn'>{n}</span> of {e.lattice.size} nodes "
                f"(<span id='view-mode'>{e.effective_view()}</span> view). Colours: "
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
