"""The generalization lattice of distance vectors (Samarati §4, Def. 4.1 and Fig. 4).

For quasi-identifiers A_1..A_m with hierarchy heights h_1..h_m, a *distance vector* (a node) is
``(d_1, ..., d_m)`` with 0 <= d_i <= h_i: generalize A_i to level d_i. Vectors are ordered
component-wise; the *height* of a vector is ``sum(d_i)``. The bottom (0, ..., 0) is the original
table, the top (h_1, ..., h_m) the fully generalized one. A direct successor raises one level by one.

Nodes are numbered in ``itertools.product`` order (the last QI varies fastest), which equals
``numpy.ravel_multi_index`` over the heights + 1, so whole-lattice arrays index by node number.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from microrelease.core.exceptions import InvalidParameterError

if TYPE_CHECKING:
    import networkx as nx

Node = tuple[int, ...]


@dataclass(frozen=True)
class Lattice:
    """The lattice of distance vectors for hierarchies of the given ``heights`` (in QI order).

    Parameters
    ----------
    heights : tuple of int
        The height of each quasi-identifier's hierarchy.
    names : tuple of str, optional
        The quasi-identifiers' names.

    Examples
    --------
    >>> lattice = Lattice((1, 2))
    >>> lattice.max_height, lattice.nodes_at_height(1)
    (3, [(0, 1), (1, 0)])
    """

    heights: tuple[int, ...]
    names: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "heights", tuple(int(h) for h in self.heights))
        if not self.heights or any(h < 0 for h in self.heights):
            raise InvalidParameterError(f"lattice heights must be non-empty and >= 0, got {self.heights}")
        names = tuple(self.names) or tuple(f"A{i + 1}" for i in range(len(self.heights)))
        if len(names) != len(self.heights):
            raise InvalidParameterError(f"{len(names)} names for {len(self.heights)} heights")
        object.__setattr__(self, "names", names)

    # --- sizes and numbering -------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(h + 1 for h in self.heights)

    @property
    def size(self) -> int:
        """Number of nodes: the product of (h_i + 1)."""
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def max_height(self) -> int:
        """Height of the top vector: sum of the hierarchy heights."""
        return sum(self.heights)

    @property
    def bottom(self) -> Node:
        return (0,) * len(self.heights)

    @property
    def top(self) -> Node:
        return self.heights

    def validate_node(self, node: Sequence[int]) -> Node:
        """Return ``node`` as a tuple, or raise naming the QI whose level is out of range.

        Parameters
        ----------
        node : sequence of int
            A distance vector.

        Returns
        -------
        Node
            The node.
        """
        node = tuple(int(d) for d in node)
        if len(node) != len(self.heights):
            raise InvalidParameterError(
                f"node {list(node)} has {len(node)} levels but there are {len(self.heights)} QIs {list(self.names)}",
                parameter="node")
        for d, h, name in zip(node, self.heights, self.names, strict=True):
            if not 0 <= d <= h:
                raise InvalidParameterError(f"node {list(node)}: level {d} of {name!r} is outside 0..{h}", parameter="node")
        return node

    def index(self, node: Sequence[int]) -> int:
        """The node number of ``node``.

        Parameters
        ----------
        node : sequence of int
            A distance vector.

        Returns
        -------
        int
            Its number.
        """
        return sum(d * s for d, s in zip(self.validate_node(node), self._strides, strict=True))

    @cached_property
    def _strides(self) -> tuple[int, ...]:
        strides, acc = [], 1
        for size in reversed(self.shape):
            strides.append(acc)
            acc *= size
        return tuple(reversed(strides))

    def node(self, index: int) -> Node:
        """The node of number ``index``.

        Parameters
        ----------
        index : int
            A node number.

        Returns
        -------
        Node
            The node.
        """
        if not 0 <= index < self.size:
            raise InvalidParameterError(f"node number {index} outside 0..{self.size - 1}")
        return tuple(self.grid[index].tolist())

    def __iter__(self) -> Iterator[Node]:
        return (tuple(int(d) for d in row) for row in self.grid)

    def __len__(self) -> int:
        return self.size

    # --- whole-lattice arrays (cached, read-only) ----------------------------------------------
    @cached_property
    def grid(self) -> np.ndarray:
        """(size × m) array: row i is node i's distance vector."""
        g = np.indices(self.shape).reshape(len(self.shape), -1).T.astype(np.int16)
        g.setflags(write=False)
        return g

    @cached_property
    def node_heights(self) -> np.ndarray:
        h = self.grid.sum(axis=1, dtype=np.int32)
        h.setflags(write=False)
        return h

    @cached_property
    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(source, target) arrays of every direct generalization step (target = source + e_i)."""
        src, tgt = [], []
        ids = np.arange(self.size)
        for i, h in enumerate(self.heights):
            can = self.grid[:, i] < h
            src.append(ids[can])
            tgt.append(ids[can] + self._strides[i])
        s, t = np.concatenate(src), np.concatenate(tgt)
        order = np.lexsort((t, s))
        s, t = s[order], t[order]
        s.setflags(write=False)
        t.setflags(write=False)
        return s, t

    # --- order relations -----------------------------------------------------------------------
    def height(self, node: Sequence[int]) -> int:
        """The height of ``node`` (the sum of its levels).

        Parameters
        ----------
        node : sequence of int
            A distance vector.

        Returns
        -------
        int
            Its height.
        """
        return sum(self.validate_node(node))

    def successors(self, node: Sequence[int]) -> list[Node]:
        """Direct successors: one QI generalized one more level.

        Parameters
        ----------
        node : sequence of int
            A distance vector.

        Returns
        -------
        list of Node
            Its direct successors.
        """
        node = self.validate_node(node)
        return [node[:i] + (d + 1,) + node[i + 1 :] for i, d in enumerate(node) if d < self.heights[i]]

    def predecessors(self, node: Sequence[int]) -> list[Node]:
        """Direct predecessors: one QI generalized one level less.

        Parameters
        ----------
        node : sequence of int
            A distance vector.

        Returns
        -------
        list of Node
            Its direct predecessors.
        """
        node = self.validate_node(node)
        return [node[:i] + (d - 1,) + node[i + 1 :] for i, d in enumerate(node) if d > 0]

    def nodes_at_height(self, height: int) -> list[Node]:
        """All vectors of the given height, in lexicographic order (Find_vector probes them so).

        Parameters
        ----------
        height : int
            A height.

        Returns
        -------
        list of Node
            The nodes.
        """
        return self._tuples_by_height[height] if 0 <= height <= self.max_height else []

    @cached_property
    def _tuples_by_height(self) -> list[list[Node]]:
        return [[tuple(row) for row in self.grid[idx].tolist()] for idx in self._by_height]

    def indices_at_height(self, height: int) -> np.ndarray:
        """Node numbers of the given height, ascending (which is lexicographic order of vectors).

        Parameters
        ----------
        height : int
            A height.

        Returns
        -------
        numpy.ndarray
            Their numbers.
        """
        return self._by_height[height] if 0 <= height <= self.max_height else np.zeros(0, dtype=np.int64)

    @cached_property
    def _by_height(self) -> list[np.ndarray]:
        order = np.argsort(self.node_heights, kind="stable")
        bounds = np.searchsorted(self.node_heights[order], np.arange(self.max_height + 2))
        return [order[bounds[h]:bounds[h + 1]] for h in range(self.max_height + 1)]

    def to_networkx(self) -> nx.DiGraph:
        """The lattice as a DiGraph (edges point up); nodes carry ``vector``, ``height``, ``index``."""
        import networkx as nx  # here: a third of a second of every command's start, for the drawings only

        g = nx.DiGraph()
        for i, row in enumerate(self.grid):
            vec = tuple(int(d) for d in row)
            g.add_node(vec, vector=vec, height=int(self.node_heights[i]), index=i)
        src, tgt = self.edges
        nodes = [tuple(int(d) for d in row) for row in self.grid]
        g.add_edges_from((nodes[s], nodes[t]) for s, t in zip(src.tolist(), tgt.tolist(), strict=True))
        return g
