"""The Lattice tab: the lattice of distance vectors in layers by height, coloured by status (a tap
selects a node), the nodes per height below it, and a caption saying what is drawn.

What each layer shows is computed here as a plain frame (the tests read these); the Bokeh figures
(``.figure``) are built once per display and their sources' data replaced on each change.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource
from panel.io.notebook import push_notebook

from microrelease.app.explorer.details import figure_text
from microrelease.app.explorer.explorer import STATUS
from microrelease.app.explorer.large import DRAW_CAP
from microrelease.app.style import STATUS_COLORS
from microrelease.app.tabs.lattice import graph
from microrelease.app.tabs.lattice.figure import (
    BAR_COLUMNS,
    SEGMENT_COLUMNS,
    LatticeFigure,
    columns,
    lattice_figure,
    overview_figure,
)
from microrelease.app.tabs.lattice.lattice_state import BARS, LatticeState

# The figures of the hover, written as the node details write them (``figure_text``: one string for both).
FIGURES = {"suppressed": "suppressed rows", "accuracy": "accuracy", "completeness": "completeness",
           "distinct": "distinct classes"}
HOVER = [("vector", "@vector"), ("levels", "@levels"), ("status", "@status"),
         *((label, f"@{{{name}_text}}") for name, label in FIGURES.items())]
MODELS_HOVER = ("failing privacy models", "@models")  # only while privacy models are applied
# The Explorer's parameters that change the drawing (nodes, colours, edges, rings, band) and the caption.
DRAWN_BY = ["answer", "preferred", "selected", "view", "fixed", "expanded", "profile", "probe", "large"]
RINGS_ONLY = {"selected", "probe"}  # unless they change the drawn nodes, these move rings and the band only


def hover_text(frame: pd.DataFrame, metrics: dict) -> pd.DataFrame:
    """``frame`` with ``<figure>_text`` columns: each figure of FIGURES written by ``figure_text``."""
    ids = frame["node"].to_numpy()
    for name in FIGURES:
        frame[f"{name}_text"] = [figure_text(v.item()) for v in metrics[name][ids]]
    return frame


@dataclass
class Display:
    """One display of the view: its lattice figure, its bars' source and its two Bokeh panes."""

    lattice: LatticeFigure
    bars: ColumnDataSource
    panes: tuple[pn.pane.Bokeh, ...]
    shown: bool = False

    def closed(self) -> bool:
        """Shown once and since cleaned up by Panel (a notebook output cleared, a page gone): no longer fed."""
        rendered = any(p._models for p in self.panes)  # Panel's record of where a pane is rendered
        self.shown = self.shown or rendered
        return self.shown and not rendered


class LatticeView(pn.viewable.Viewer):
    """Nodes as scatter points over segment edges; the rings of the selected node and of the probe's
    vectors are scatter layers of their own without fill; the probed height is a horizontal strip.
    Tapping a node selects it in the shared Explorer (``state.explorer``)."""

    state = param.ClassSelector(class_=LatticeState)
    height = param.Integer(default=560)
    live = param.Boolean(default=True, doc="kept current with the Explorer (off: a copy not in view, e.g. the "
                                           "Teaching tab's outside presentation mode; redrawn when back on)")

    def __init__(self, **params):
        super().__init__(**params)
        self._frame = pd.DataFrame()  # the drawn nodes, in the order of the points' rows
        self._displays: list[Display] = []  # one per display of the view (a notebook may show it twice)
        self._drawn = self._answered = None  # the drawn graph and the answer the figures show
        self.state.explorer.param.watch(self._redraw, DRAWN_BY)

    @property
    def figures(self) -> list[LatticeFigure]:
        return [d.lattice for d in self._displays]

    @property
    def bar_sources(self) -> list:
        return [d.bars for d in self._displays]

    # --- what is drawn (plain frames: the tests read these) ----------------------------------------
    def _ready(self) -> bool:
        return self.state.explorer.answer is not None

    def points(self) -> pd.DataFrame:
        """One row per drawn node, in the drawing's order, with the hover's texts."""
        if not self._ready():
            self._frame = pd.DataFrame(columns=["node", "x", "y", "vector", "levels", "status", "models"])
            return self._frame
        frame = hover_text(self.state.drawn_frame(), self.state.explorer.answer.metrics)
        frame["models"] = frame["models"].replace("", "none")
        self._frame = frame
        return frame

    def tooltips(self) -> list[tuple[str, str]]:
        applied = self._ready() and self.state.explorer.applied_models
        return [*HOVER, MODELS_HOVER] if applied else list(HOVER)

    def size(self) -> int:
        return 13 if not self._ready() or self.state.drawn_graph().number_of_nodes() <= 600 else 5

    def ring(self, ring: str) -> pd.DataFrame:
        """x, y and vector of the drawn nodes with ring ``ring`` ("tested" or "selected")."""
        if not self._ready():
            return pd.DataFrame(columns=["x", "y", "vector"])
        rows = self.state.rings()
        return rows.loc[rows["ring"] == ring, ["x", "y", "vector"]].reset_index(drop=True)

    def band(self) -> pd.DataFrame:
        """y0, y1 of the height the highlighted Find_vector probe tried (no row without a probe)."""
        probe = self.state.probe() if self._ready() else None
        heights = [pos[1] for _, pos in self.state.drawn_graph().nodes(data="pos")] if probe is not None else []
        # Only over drawn layers: a band far below the focused frontier would stretch the axis to reach it
        # (the caption still names the height tried).
        spans = [(probe.tried - 0.5, probe.tried + 0.5)] if heights and min(heights) <= probe.tried <= max(heights) else []
        return pd.DataFrame(spans, columns=["y0", "y1"], dtype=float)

    def segments(self, *, paths: bool) -> pd.DataFrame:
        """Direct generalization steps between drawn nodes, or (``paths``) paths through nodes not drawn."""
        rows = self.state.edges(paths=paths) if self._ready() else []
        return pd.DataFrame(rows, columns=SEGMENT_COLUMNS, dtype=float)

    def bars(self) -> pd.DataFrame:
        """The nodes-per-height bars (``BAR_COLUMNS``); ``bottom`` is below a count of 1 (a log axis has no 0)."""
        if not self._ready():
            return pd.DataFrame(columns=BAR_COLUMNS)
        bars = graph.overview_bars(self.state.overview(), BARS)
        return pd.DataFrame({"left": bars["x0"], "right": bars["x1"], "bottom": 0.5, "top": bars["nodes"],
                             "status": bars["status"], "height": bars["height"]})

    # --- keeping the figures current -----------------------------------------------------------------
    def _on_tap(self, node_index: int) -> None:
        if self._ready() and 0 <= node_index < self.state.explorer.lattice.size:
            self.state.explorer.selected = node_index

    def _fill(self, fig: LatticeFigure, whole: bool) -> None:
        """Put what is drawn now into ``fig``'s sources (``whole``: the nodes too, else rings and band)."""
        for name, source in fig.rings.items():
            source.data = columns(self.ring(name))
        fig.band.data = columns(self.band())
        if whole:
            fig.points.data = columns(self._frame)
            fig.edges.data = columns(self.segments(paths=False))
            fig.paths.data = columns(self.segments(paths=True))
            fig.hover.tooltips = self.tooltips()
            fig.resize(self.size())
            fig.fit(self._frame["x"], self._frame["y"])  # around the nodes: the band and rings lie on them

    def _redraw(self, *events) -> None:
        self._displays = [d for d in self._displays if not d.closed()]  # a notebook output cleared, say
        if not self._displays or not self.live:
            return
        drawn = self.state.drawn_graph() if self._ready() else None
        whole = drawn is not self._drawn or not {e.name for e in events} <= RINGS_ONLY
        self._drawn = drawn
        if whole:
            self.points()
        for d in self._displays:
            self._fill(d.lattice, whole)
        if whole and self._answered is not self.state.explorer.answer:
            self._answered = self.state.explorer.answer
            bars = columns(self.bars())
            for d in self._displays:
                d.bars.data = bars
        push_notebook(*(p for d in self._displays for p in d.panes))  # a served page has its document

    @param.depends("live", watch=True)
    def _back_in_view(self) -> None:
        if self.live:
            self._drawn = self._answered = None  # whatever changed while off: all of it redrawn
            self._redraw()

    @param.depends(*(f"state.explorer.{name}" for name in DRAWN_BY))
    def caption(self) -> str:
        if not self._ready():
            return ""
        s, e = self.state, self.state.explorer
        n = s.drawn_graph().number_of_nodes()
        if e.large:
            text = (f"<span id='large-caption'>Showing <span id='n-drawn'>{n}</span> of {e.lattice.size:,} nodes: "
                    "those the search evaluated</span> "
                    f"(<span id='view-mode'>evaluated</span> view; the pruned search evaluated "
                    f"<span id='n-evaluated'>{e.answer.nodes_evaluated:,}</span> and tagged the rest; at most "
                    f"{DRAW_CAP} are drawn: the preferred node, k-minimal nodes, the failing nodes evaluated below "
                    f"them, then others near their heights; the bars count every node). Colours: ")
        else:
            text = (f"Drawing <span id='n-drawn'>{n}</span> of {e.lattice.size} nodes "
                    f"(<span id='view-mode'>{s.effective_view()}</span> view). Colours: ")
        text += (", ".join(f"<span style='color:{STATUS_COLORS[st]}'>●</span> {st}" for st in STATUS)
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
        fig = lattice_figure(self.height, self.size(), self.tooltips(), self._on_tap)
        bars_fig, bars = overview_figure(BARS)
        self._drawn, self._answered = (self.state.drawn_graph() if self._ready() else None), self.state.explorer.answer
        self.points()
        self._fill(fig, whole=True)
        bars.data = columns(self.bars())
        panes = (pn.pane.Bokeh(fig.figure, sizing_mode="stretch_width", min_height=self.height),
                 pn.pane.Bokeh(bars_fig, sizing_mode="stretch_width", height=200))
        self._displays.append(Display(fig, bars, panes))
        return pn.Column(
            pn.pane.Markdown(self.caption, css_classes=["lattice-caption"], sizing_mode="stretch_width"),
            *panes, sizing_mode="stretch_width",
        )
