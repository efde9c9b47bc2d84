"""Which lattice nodes to draw, and where: pure numpy/networkx, no UI library.

Drawing all 6,480 nodes of adult's lattice gives an unreadable blob, so above ``FOCUS_LIMIT``
nodes the dashboard opens on the *k-minimal frontier*: the k-minimal nodes, the failing nodes just
below them and the satisfying nodes just above them (``.frontier`` chooses them under the cap).
Users can add a node's neighbours, fix some QIs at chosen levels (the sub-lattice of the others), or
ask for the full lattice.

The drawn graph has an edge for each direct generalization step between two drawn nodes; a drawn node
that no such step joins to another (a selected node far from the frontier, say) gets *path* edges
(drawn dashed) to its nearest drawn generalizations and specializations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import networkx as nx
import numpy as np
import pandas as pd

from microrelease.core import Lattice

FOCUS_LIMIT = 300  # lattices up to this size are drawn whole by default
DRAW_CAP = 500  # the focused view never draws more nodes than this
PATHS_LIMIT = 2500  # path edges need an n x n comparison: only for drawings up to this size
EDGE_SCAN = 50_000  # up to this many nodes the drawn edges are picked from every edge; above, from the drawn nodes


def neighbours(lattice: Lattice, ids: Iterable[int]) -> tuple[np.ndarray, np.ndarray]:
    """(direct predecessors, direct successors) of the given node numbers."""
    ids = np.asarray(list(ids), dtype=np.int64)
    src, tgt = lattice.edges
    below = src[np.isin(tgt, ids)]
    above = tgt[np.isin(src, ids)]
    return np.unique(below), np.unique(above)


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


def path_edges(lattice: Lattice, ids: np.ndarray, ends: Iterable[int]) -> np.ndarray:
    """(k x 2) pairs (a, b) of drawn nodes, a below b in the lattice order, one of them in ``ends``, more
    than one step apart and with no drawn node strictly between: where ``ends`` sit among the drawn."""
    ids = np.asarray(ids, dtype=np.int64)
    rows = np.flatnonzero(np.isin(ids, list(ends)))
    if len(ids) < 2 or not len(rows):
        return np.zeros((0, 2), dtype=np.int64)
    grid = lattice.grid[ids]
    below = np.all(grid[:, None, :] <= grid[None, :, :], axis=2)  # below[i, j]: node i <= node j
    np.fill_diagonal(below, False)
    less = below.astype(np.float32)
    height = lattice.node_heights[ids]
    up = below[rows] & ~((less[rows] @ less) > 0)  # no drawn node strictly between
    down = below[:, rows] & ~((less @ less[:, rows]) > 0)
    a, b = np.nonzero(up)
    c, d = np.nonzero(down)
    pairs = np.unique(np.column_stack([np.concatenate([rows[a], c]), np.concatenate([b, rows[d]])]), axis=0)
    pairs = pairs[height[pairs[:, 1]] - height[pairs[:, 0]] > 1]
    return ids[pairs]


def edges_among(lattice: Lattice, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(source, target) of the direct generalization steps between the nodes ``ids``. On a large lattice
    (the pruned search's: 2.9 million edges at 12 QIs) each drawn node's successors are computed instead
    of scanning every edge (0.1 s of each answer)."""
    if lattice.size <= EDGE_SCAN:
        src, tgt = lattice.edges
        keep = np.isin(src, ids) & np.isin(tgt, ids)
        return src[keep], tgt[keep]
    shape = np.array(lattice.shape, dtype=np.int64)
    strides = np.append(shape[::-1].cumprod()[::-1][1:], 1)  # node numbers: the last QI varies fastest
    grid = lattice.grid[ids].astype(np.int64)
    pairs = [(ids[grid[:, a] < shape[a] - 1], ids[grid[:, a] < shape[a] - 1] + stride)
             for a, stride in enumerate(strides.tolist())]
    src, tgt = (np.concatenate(side) if pairs else np.zeros(0, dtype=np.int64) for side in zip(*pairs, strict=True))
    keep = np.isin(tgt, ids)
    return src[keep], tgt[keep]


def drawn_graph(lattice: Lattice, ids: np.ndarray) -> nx.DiGraph:
    """The drawn part of the lattice as a networkx DiGraph with ``pos`` on every node and ``path`` on
    every edge: False for a direct generalization step; True for a path through nodes not drawn, from
    or to a drawn node that no direct step joins to another (up to PATHS_LIMIT drawn nodes)."""
    ids = np.asarray(ids, dtype=np.int64)
    x, y = layered_layout(lattice, ids)
    graph = nx.DiGraph()
    for i, xi, yi, vector in zip(ids.tolist(), x.tolist(), y.tolist(), lattice.grid[ids].tolist(), strict=True):
        graph.add_node(i, pos=(xi, yi), vector=tuple(vector))
    src, tgt = edges_among(lattice, ids)
    graph.add_edges_from(zip(src.tolist(), tgt.tolist(), strict=True), path=False)
    alone = [i for i in graph if graph.degree(i) == 0]
    if alone and len(ids) <= PATHS_LIMIT:
        graph.add_edges_from(path_edges(lattice, ids, alone).tolist(), path=True)
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


def overview_bars(overview: pd.DataFrame, statuses: tuple[str, ...], width: float = 0.8) -> pd.DataFrame:
    """Side-by-side bars (for a log scale: stacking misleads there): per height one bar per status with
    nodes, ``x0``..``x1`` within ``height ± width / 2``, from ``bottom`` (below 1) to the count."""
    rows = []
    for _, row in overview.iterrows():
        present = [s for s in statuses if row[s]]
        step = width / max(len(present), 1)
        for j, status in enumerate(present):
            x0 = row["height"] - width / 2 + j * step
            rows.append((x0, x0 + step, int(row[status]), status, int(row["height"])))
    return pd.DataFrame(rows, columns=["x0", "x1", "nodes", "status", "height"])
