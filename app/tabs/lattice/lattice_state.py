"""What the Lattice tab draws (param only): which nodes, where, which are ringed, the probed height.

Drawing all 6,480 nodes of adult's lattice gives an unreadable blob, so above ``graph.FOCUS_LIMIT``
nodes the view opens on the k-minimal frontier (see ``microrelease.app.tabs.lattice.frontier``).
The view mode, the fixed QIs and the expanded nodes are the Explorer's (the sidebar sets them).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.tabs.lattice import graph
from microrelease.app.tabs.lattice.frontier import Focus, frontier
from microrelease.core.lattice.search import Probe

BARS = ("fails", "fails privacy model", "satisfies", "k-minimal")  # side by side in the overview, in this order


class LatticeState(param.Parameterized):
    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self._drawn_key, self._drawn = None, None
        self._focus_key, self._focus = None, None
        self._rings_key, self._rings = None, None

    def effective_view(self) -> str:
        e = self.explorer
        if e.large:  # the pruned search's evaluated frontier: no view draws every node's figures there
            return "evaluated"
        if e.view != "auto":
            return e.view
        return "full" if e.lattice.size <= graph.FOCUS_LIMIT else "focused"

    def focus(self) -> Focus | None:
        """The focused view's frontier under the cap (None in the other views). Not keyed on the
        selected node: a tap must not rearrange the drawing."""
        e = self.explorer
        if self.effective_view() != "focused":
            return None
        key = (id(e.answer), e.preferred)
        if self._focus_key != key:
            first = [e.preferred] if e.preferred is not None else []
            self._focus_key, self._focus = key, frontier(e.lattice, e.answer.satisfying, e.answer.minimal, first=first)
        return self._focus

    def drawn_graph(self) -> nx.DiGraph:
        """The drawn part of the lattice (networkx, ``pos`` on every node, ``path`` on every edge) for
        the current view. Several plots ask for it after one change; it is computed once per state."""
        e = self.explorer
        ids = self._drawn_ids()
        key = (id(e.answer), self.effective_view(), ids.tobytes())
        if self._drawn_key != key:
            self._drawn_key, self._drawn = key, graph.drawn_graph(e.lattice, ids)
        return self._drawn

    def _drawn_ids(self) -> np.ndarray:
        e = self.explorer
        mode = self.effective_view()
        if mode == "evaluated":
            ids = e.answer.drawn
        elif mode == "full":
            ids = np.arange(e.lattice.size)
        elif mode == "sub-lattice":
            ids = graph.sublattice(e.lattice, e.fixed)
        else:
            ids = self.focus().ids
        if e.expanded:
            below, above = graph.neighbours(e.lattice, e.expanded)
            ids = np.union1d(ids, np.concatenate([below, above, e.expanded]))
        if e.selected is not None and e.selected not in ids:
            ids = np.append(ids, e.selected)
        return np.asarray(ids, dtype=np.int64)

    def probe(self) -> Probe | None:
        """The Find_vector probe highlighted (``explorer.probe``), if any."""
        e = self.explorer
        if e.probe is None or e.answer is None:
            return None
        trace = e.find_vector().trace
        return trace[e.probe] if 0 <= e.probe < len(trace) else None

    def tested(self) -> np.ndarray:
        """Node numbers of the vectors the highlighted probe tested (none without a probe)."""
        probe, lattice = self.probe(), self.explorer.lattice
        if probe is None or not probe.tested:
            return np.zeros(0, dtype=np.int64)
        # node numbers are ravel_multi_index over the heights + 1 (see Lattice): vectorized Lattice.index
        return np.ravel_multi_index(np.asarray(probe.tested).T, lattice.shape)

    def drawn_frame(self) -> pd.DataFrame:
        """One row per drawn node: the Explorer's node columns, x and y. (No column may be named like a
        property of Bokeh's ColumnDataSource: one named ``selected`` broke every tap after a redraw.)"""
        e = self.explorer
        g = self.drawn_graph()
        ids = np.fromiter(g.nodes, dtype=np.int64)
        frame = e.nodes_frame(ids)
        frame["x"], frame["y"] = zip(*(g.nodes[i]["pos"] for i in g.nodes), strict=True) if len(ids) else ([], [])
        return frame

    def rings(self) -> pd.DataFrame:
        """x, y, vector and ``ring`` ("tested" by the probe highlighted, or "selected") of the drawn nodes
        ringed; a node both tested and selected has both rings. Computed once per drawing, probe and
        selected node (both ring layers and the caption ask)."""
        e, g = self.explorer, self.drawn_graph()
        key = (g, e.probe, e.selected)  # the graph itself: an id could be reused
        if self._rings_key != key:
            ringed = [(int(i), "tested") for i in np.unique(self.tested())]
            ringed += [(e.selected, "selected")] if e.selected is not None else []
            rows = [(*g.nodes[i]["pos"], str(e.lattice.grid[i].tolist()), ring) for i, ring in ringed if i in g]
            self._rings_key, self._rings = key, pd.DataFrame(rows, columns=["x", "y", "vector", "ring"])
        return self._rings

    def edges(self, *, paths: bool = False) -> list[tuple[float, float, float, float]]:
        """(x0, y0, x1, y1) of every drawn edge: direct generalization steps, or (``paths``) paths
        through nodes not drawn."""
        g = self.drawn_graph()
        return [(*g.nodes[a]["pos"], *g.nodes[b]["pos"]) for a, b, path in g.edges(data="path") if path == paths]

    def overview(self) -> pd.DataFrame:
        """Per height, nodes that fail, fail only a privacy model, satisfy (not minimal), are k-minimal."""
        e = self.explorer
        return graph.height_overview(e.lattice, e.answer.satisfying, e.answer.minimal, e.status() == 4)
