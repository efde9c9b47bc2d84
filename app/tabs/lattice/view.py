"""The lattice of distance vectors, drawn in layers by height, coloured by status; tap selects."""

from __future__ import annotations

import holoviews as hv
import pandas as pd
import panel as pn
import param
from bokeh.models import NumeralTickFormatter

from microrelease.app.explorer.details import figure_text
from microrelease.app.explorer.picker import NodePicker
from microrelease.app.explorer.state import STATUS
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
from microrelease.app.tabs.lattice import graph
from microrelease.app.tabs.lattice.state import BARS, LatticeState

# The figures of the hover, written as the node details write them (``figure_text``: one string for both).
FIGURES = {"suppressed": "suppressed rows", "accuracy": "accuracy", "completeness": "completeness",
           "distinct": "distinct classes"}
HOVER = [("vector", "@vector"), ("levels", "@levels"), ("status", "@status"),
         *((label, f"@{{{name}_text}}") for name, label in FIGURES.items())]
MODELS_HOVER = ("failing privacy models", "@models")  # only while privacy models are applied
RING_COLORS = {"tested": TESTED, "selected": SELECTED}
# The Explorer's parameters that change the drawing (nodes, colours, edges, rings, band) and the caption.
DRAWN_BY = ["answer", "preferred", "selected", "view", "fixed", "expanded", "profile", "probe"]
PLOT = {"backend_opts": CANVAS, "shared_axes": False, "framewise": True}


def hover_text(frame: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """``frame`` with ``<figure>_text`` columns: each figure of FIGURES written by ``figure_text``."""
    ids = frame["node"].to_numpy()
    for name in FIGURES:
        frame[f"{name}_text"] = [figure_text(v.item()) for v in metrics[name][ids]]
    return frame


class LatticeView(NodePicker):
    """Nodes as hv.Points over hv.Segments edges (hv.Graph cannot report a tapped node); the rings of
    the selected node and of the probe's vectors are layers of their own, under the nodes."""

    state = param.ClassSelector(class_=LatticeState)
    height = param.Integer(default=560)

    def _drawn_frame(self) -> pd.DataFrame:
        e = self.state.explorer
        frame = hover_text(self.state.drawn_frame(), e.answer.metrics)
        frame["models"] = frame["models"].replace("", "none")
        # Rows stay in the drawing's order, whatever the statuses (not sorted by status, say): a tap
        # sends a row number, and one made while the page still shows the previous answer must name
        # the same node in the new frame.
        return frame

    def _points_map(self) -> hv.DynamicMap:
        # The nodes and the other layers share one stream: a k change then redraws the overlay once,
        # not once per layer (HoloViews refreshes an overlay for each stream that fired).
        self._stream = hv.streams.Params(self.state.explorer, DRAWN_BY)
        return hv.DynamicMap(lambda **_: self.points(), streams=[self._stream])

    def _size(self) -> int:
        return 13 if self.state.drawn_graph().number_of_nodes() <= 600 else 5

    def points(self) -> hv.Points:
        if self.state is None or self.state.explorer.answer is None:
            return hv.Points([])
        self._frame = frame = self._drawn_frame()
        hover = [*HOVER, MODELS_HOVER] if self.state.explorer.applied_models else HOVER
        return hv.Points(frame, ["x", "y"], [c for c in frame.columns if c not in ("x", "y")]).opts(
            color="status", cmap=STATUS_COLORS, size=self._size(), line_color="white", line_width=1,
            tools=["hover", "tap"], hover_tooltips=hover, nonselection_alpha=1.0, selection_alpha=1.0,
            show_legend=True, legend_position="top_left", **PLOT)

    def _ring(self, ring: str) -> hv.Points:
        if self.state is None or self.state.explorer.answer is None:
            return hv.Points([], ["x", "y"], ["vector", "ring"])
        rows = self.state.rings()
        return hv.Points(rows[rows["ring"] == ring], ["x", "y"], ["vector", "ring"]).opts(
            size=self._size() + 9, line_color=RING_COLORS[ring], show_legend=False, **RING, **PLOT)

    def tested(self) -> hv.Points:
        return self._ring("tested")

    def selected(self) -> hv.Points:
        return self._ring("selected")

    def band(self) -> hv.HSpans:
        """The height the highlighted Find_vector probe tried."""
        probe = self.state.probe() if self.state is not None and self.state.explorer.answer is not None else None
        heights = [pos[1] for _, pos in self.state.drawn_graph().nodes(data="pos")] if probe is not None else []
        # Only over drawn layers: a band far below the focused frontier would stretch the axis to reach it
        # (the caption still names the height tried).
        spans = [(probe.tried - 0.5, probe.tried + 0.5)] if heights and min(heights) <= probe.tried <= max(heights) else []
        return hv.HSpans(spans).opts(**BAND, **PLOT)

    def _segments(self, paths: bool) -> hv.Segments:
        if self.state is None or self.state.explorer.answer is None:
            return hv.Segments([], ["x0", "y0", "x1", "y1"])
        return hv.Segments(self.state.edges(paths=paths), ["x0", "y0", "x1", "y1"]).opts(
            **(PATH if paths else EDGE), **PLOT)

    def edges(self) -> hv.Segments:
        return self._segments(paths=False)

    def paths(self) -> hv.Segments:
        return self._segments(paths=True)

    def decorations(self) -> hv.Overlay:
        """Everything drawn with the nodes but the nodes, as one layer: HoloViews redraws an overlay once
        per DynamicMap whose inputs changed, so five separate layers made five redraws of each k change."""
        return hv.Overlay([self.band(), self.edges(), self.paths(), self.tested(), self.selected()])

    @param.depends("state.explorer.answer", "state.explorer.preferred")
    def overview(self) -> hv.Rectangles:
        """Nodes per height and status, side by side on a log scale: a single k-minimal node stays
        visible beside a thousand failing ones."""
        bars = pd.DataFrame(columns=["x0", "x1", "nodes", "status", "height"])
        if self.state is not None and self.state.explorer.answer is not None:
            bars = graph.overview_bars(self.state.overview(), BARS)
        bars["bottom"] = 0.5  # below a count of 1 (a log axis has no 0)
        return hv.Rectangles(bars, ["x0", "bottom", "x1", "nodes"], ["status", "height"]).opts(
            color="status", cmap={s: STATUS_COLORS[s] for s in BARS}, line_color="white", logy=True,
            height=180, responsive=True, tools=["hover"], hover_tooltips=[("height", "@height"), ("status", "@status"),
                                                                         ("nodes", "@nodes")],
            title="nodes per height (log scale)", xlabel="height", ylabel="nodes", legend_position="right",
            xticks=integer_ticks(), yticks=integer_ticks(log=True), yformatter=NumeralTickFormatter(format="0,0"),
            **PLOT)

    @param.depends(*(f"state.explorer.{name}" for name in DRAWN_BY))
    def caption(self) -> str:
        if self.state is None or self.state.explorer.answer is None:
            return ""
        s, e = self.state, self.state.explorer
        n = s.drawn_graph().number_of_nodes()
        text = (f"Drawing <span id='n-drawn'>{n}</span> of {e.lattice.size} nodes "
                f"(<span id='view-mode'>{s.effective_view()}</span> view). Colours: "
                + ", ".join(f"<span style='color:{STATUS_COLORS[st]}'>●</span> {st}" for st in STATUS)
                + ". Black ring: selected.")
        focus = s.focus()
        if focus is not None and focus.truncated:
            drawn = ", ".join(f"{focus.drawn[g]:,} of {focus.total[g]:,} {g}" for g in focus.total)
            text += (f"  \n<span id='truncated'>**Truncated** at {focus.cap} nodes: drawn {drawn} "
                     f"({sum(focus.left_out().values()):,} left out).</span> The sidebar adds a node's "
                     "neighbours or shows the full lattice.")
        if any(path for *_, path in s.drawn_graph().edges(data="path")):
            text += " Dashed lines: paths through nodes not drawn."
        probe = s.probe()
        if probe is not None:
            shown = int(s.rings()["ring"].eq("tested").sum())
            text += (f"  \nGreen band and rings: Find_vector step <span id='probe-step'>{e.probe + 1}</span> tried height "
                     f"<span id='probe-height'>{probe.tried}</span> and tested {len(probe.tested):,} "
                     f"vector(s) ({shown:,} drawn).")
        return text

    def __panel__(self):
        plot = (hv.DynamicMap(lambda **_: self.decorations(), streams=[self._stream]) * self._points).opts(
            hv.opts.Overlay(responsive=True, height=self.height, xaxis=None, ylabel="height", toolbar="above",
                            yticks=integer_ticks(),
                            title="Generalization lattice (bottom: original data; top: fully generalized)")
        )
        return pn.Column(
            pn.pane.Markdown(self.caption, css_classes=["lattice-caption"], sizing_mode="stretch_width"),
            pn.pane.HoloViews(plot, sizing_mode="stretch_width", min_height=self.height),
            pn.pane.HoloViews(hv.DynamicMap(self.overview), sizing_mode="stretch_width", height=200),
            sizing_mode="stretch_width",
        )
