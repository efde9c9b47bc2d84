"""Which lattice nodes to draw, and where: pure numpy/networkx, no UI library.

Drawing all 6,480 nodes of adult's lattice gives an unreadable blob, so above ``FOCUS_LIMIT``
nodes the dashboard opens on the *k-minimal frontier*: the k-minimal nodes, the failing nodes just
below them and the satisfying nodes just above them. Users can add a node's neighbours, fix some
QIs at chosen levels (the sub-lattice of the others), or ask for the full lattice.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import networkx as nx
import numpy as np
import pandas as pd

from microrelease.core import Lattice

FOCUS_LIMIT = 300  # lattices up to this size are drawn whole by default
DRAW_CAP = 500  # the focused view never draws more nodes than this


def neighbours(lattice: Lattice, ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """(direct predecessors, direct successors) of the given node numbers."""
    ids = np.asarray(list(ids), dtype=np.int64)
    src, tgt = lattice.edges
    below = src[np.isin(tgt, ids)]
    above = tgt[np.isin(src, ids)]
    return np.unique(below), np.unique(above)


def frontier(lattice: Lattice, satisfying: np.ndarray, minimal: np.ndarray, *, first: Iterable[int] = (),
             cap: int = DRAW_CAP) -> np.ndarray:
    """The focused view: ``first`` nodes, the k-minimal ones, failing ones just below, passing ones just above.

    Capped at ``cap`` nodes, filled in that order of priority (within a group, lowest height first).
    """
    minimal_ids = np.flatnonzero(minimal)
    below, above = neighbours(lattice, minimal_ids)
    below = below[~satisfying[below]]
    above = above[satisfying[above] & ~minimal[above]]
    chosen: dict[int, None] = {}
    heights = lattice.node_heights
    for group in (np.asarray(list(first), dtype=np.int64), minimal_ids, below, above):
        for i in group[np.argsort(heights[group], kind="stable")]:
            if len(chosen) >= cap:
                return np.fromiter(chosen, dtype=np.int64)
            chosen.setdefault(int(i))
    return np.fromiter(chosen, dtype=np.int64)


def sublattice(lattice: Lattice, fixed: Mapping[str, int]) -> np.ndarray:
    """Node numbers whose levels equal ``fixed`` (QI name -> level) on those QIs."""
    mask = np.ones(lattice.size, dtype=bool)
    for name, level in fixed.items():
        mask &= lattice.grid[:, lattice.names.index(name)] == level
    return np.flatnonzero(mask)


def layered_layout(lattice: Lattice, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x, y for the drawn nodes: y = height; x spreads each layer evenly, centred, in vector order."""
    ids = np.asarray(ids, dtype=np.int64)
    y = lattice.node_heights[ids].astype(float)
    x = np.zeros(len(ids))
    order = np.lexsort((ids, y))
    widest = max(1, np.bincount(y.astype(int)).max()) if len(ids) else 1
    for h in np.unique(y):
        layer = order[y[order] == h]
        n = len(layer)
        x[layer] = (np.arange(n) - (n - 1) / 2) * (widest / max(n, 1)) ** 0.5
    return x, y


def drawn_graph(lattice: Lattice, ids: np.ndarray) -> nx.DiGraph:
    """The drawn part of the lattice as a networkx DiGraph with ``pos`` on every node."""
    ids = np.asarray(ids, dtype=np.int64)
    x, y = layered_layout(lattice, ids)
    graph = nx.DiGraph()
    for i, xi, yi in zip(ids.tolist(), x.tolist(), y.tolist(), strict=True):
        graph.add_node(i, pos=(xi, yi), vector=lattice.node(i))
    src, tgt = lattice.edges
    keep = np.isin(src, ids) & np.isin(tgt, ids)
    graph.add_edges_from(zip(src[keep].tolist(), tgt[keep].tolist(), strict=True))
    return graph


def height_overview(lattice: Lattice, satisfying: np.ndarray, minimal: np.ndarray,
                    model_fails: np.ndarray | None = None) -> pd.DataFrame:
    """Per height: how many nodes fail, fail only a privacy model, satisfy (not minimal), are k-minimal."""
    h = lattice.node_heights
    bins = lattice.max_height + 1
    model_fails = np.zeros(len(h), dtype=bool) if model_fails is None else model_fails
    return pd.DataFrame({
        "height": np.arange(bins),
        "fails": np.bincount(h[~satisfying & ~model_fails], minlength=bins),
        "fails privacy model": np.bincount(h[model_fails], minlength=bins),
        "satisfies": np.bincount(h[satisfying & ~minimal], minlength=bins),
        "k-minimal": np.bincount(h[minimal], minlength=bins),
    })

