"""What the Lattice tab draws (param only): which nodes, where, and which are ringed.

Drawing all 6,480 nodes of adult's lattice gives an unreadable blob, so above ``graph.FOCUS_LIMIT``
nodes the view opens on the k-minimal frontier (see :mod:`microrelease.app.tabs.lattice.graph`).
The view mode, the fixed QIs and the expanded nodes are the Explorer's (the sidebar sets them).
"""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import param

from microrelease.app.explorer.state import Explorer
from microrelease.app.tabs.lattice import graph

BARS = ("fails", "fails privacy model", "satisfies", "k-minimal")  # stacked bottom to top in the overview


class LatticeState(param.Parameterized):
    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self._drawn_key, self._drawn = None, None

    def effective_view(self) -> str:
        e = self.explorer
        if e.view != "auto":
            return e.view
        return "full" if e.lattice.size <= graph.FOCUS_LIMIT else "focused"

    def drawn_graph(self) -> nx.DiGraph:
        """The drawn part of the lattice (networkx, ``pos`` on every node) for the current view.

        Several plots ask for it after one change; it is computed once per state.
        """
        e = self.explorer
        key = (id(e.answer), e.preferred, e.selected, self.effective_view(), tuple(sorted(e.fixed.items())),
               tuple(e.expanded))
        if self._drawn_key != key:
            self._drawn_key, self._drawn = key, graph.drawn_graph(e.lattice, self._drawn_ids())
        return self._drawn

    def _drawn_ids(self) -> np.ndarray:
        e = self.explorer
        mode = self.effective_view()
        if mode == "full":
            ids = np.arange(e.lattice.size)
        elif mode == "sub-lattice":
            ids = graph.sublattice(e.lattice, e.fixed)
        else:
            first = [i for i in (e.preferred, e.selected) if i is not None]
            ids = graph.frontier(e.lattice, e.answer.satisfying, e.answer.minimal, first=first)
        if e.expanded:
            below, above = graph.neighbours(e.lattice, e.expanded)
            ids = np.union1d(ids, np.concatenate([below, above, e.expanded]))
        if e.selected is not None and e.selected not in ids:
            ids = np.append(ids, e.selected)
        return np.asarray(ids, dtype=np.int64)

    def drawn_frame(self) -> pd.DataFrame:
        """One row per drawn node: the Explorer's node columns, x and y, and ``ring``: "selected",
        "tested" (by the Find_vector probe highlighted) or ""."""
        e = self.explorer
        g = self.drawn_graph()
        ids = np.fromiter(g.nodes, dtype=np.int64)
        frame = e.nodes_frame(ids)
        frame["x"], frame["y"] = zip(*(g.nodes[i]["pos"] for i in g.nodes), strict=True) if len(ids) else ([], [])
        ring = np.full(len(ids), "", dtype=object)
        if e.probe is not None:
            trace = e.find_vector().trace
            if 0 <= e.probe < len(trace):
                ring[np.isin(ids, [e.lattice.index(v) for v in trace[e.probe].tested])] = "tested"
        if e.selected is not None:
            ring[ids == e.selected] = "selected"
        frame["ring"] = ring
        return frame

    def edges(self) -> list[tuple[float, float, float, float]]:
        """(x0, y0, x1, y1) of every drawn edge."""
        g = self.drawn_graph()
        return [(*g.nodes[a]["pos"], *g.nodes[b]["pos"]) for a, b in g.edges]

    def overview(self) -> pd.DataFrame:
        """Per height, nodes that fail, fail only a privacy model, satisfy (not minimal), are k-minimal."""
        e = self.explorer
        return graph.height_overview(e.lattice, e.answer.satisfying, e.answer.minimal, e.status() == 4)
