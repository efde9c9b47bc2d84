"""Many samples' class-size histograms at once, as the population uniqueness models read them: node i's
(size j, count c_j) pairs are ``offsets[i]:offsets[i+1]`` of ``sizes``/``counts`` (the CSR layout of
:class:`~microrelease.core.lattice.profile.LatticeProfile`; ``c_j``, the number of sample classes of
size j, is the sample's *frequency of frequencies*), with each node's sample size n, number of
classes u, sample uniques c_1 and classes of size 2, c_2.
"""

from __future__ import annotations

import numpy as np

from microrelease.core.exceptions import InvalidParameterError


class NodeHistograms:
    """Per-node n, u (classes), c_1, c_2 and the pairs with their node, from CSR arrays (validated)."""

    def __init__(self, offsets, sizes, counts):
        offsets, sizes, counts = (np.asarray(a) for a in (offsets, sizes, counts))
        for name, arr in (("offsets", offsets), ("sizes", sizes), ("counts", counts)):
            if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
                raise InvalidParameterError(f"The {name!r} parameter must be a 1-D array of integers. "
                                            f"Got dtype {arr.dtype}, shape {arr.shape} instead.", parameter=name)
        if len(offsets) < 2 or offsets[0] != 0 or offsets[-1] != len(sizes) or np.any(np.diff(offsets) < 0):
            raise InvalidParameterError("The 'offsets' parameter must rise from 0 to len(sizes) "
                                        f"({len(sizes)}). Got {offsets!r} instead.", parameter="offsets")
        if len(counts) != len(sizes):
            raise InvalidParameterError(f"The 'counts' parameter must have len(sizes) ({len(sizes)}) entries. "
                                        f"Got {len(counts)} instead.", parameter="counts")
        if np.any(sizes < 1):
            raise InvalidParameterError(f"The 'sizes' parameter must hold class sizes >= 1. Got {sizes.min()}.",
                                        parameter="sizes")
        if np.any(counts < 0):
            raise InvalidParameterError(f"The 'counts' parameter must hold counts >= 0. Got {counts.min()}.",
                                        parameter="counts")
        self.nodes = len(offsets) - 1
        self.node = np.repeat(np.arange(self.nodes), np.diff(offsets))
        self.sizes, self.counts = sizes.astype(float), counts.astype(float)
        self.n = self.per_node(self.sizes * self.counts)
        self.u = self.per_node(self.counts)
        self.c1 = self.per_node(np.where(sizes == 1, self.counts, 0.0))
        self.c2 = self.per_node(np.where(sizes == 2, self.counts, 0.0))

    def per_node(self, values):
        """Sum of ``values`` (one per pair) over each node's pairs."""
        return np.bincount(self.node, weights=values, minlength=self.nodes)

    def regular(self):
        """Nodes that need a model: some sample uniques, not all records unique."""
        return (self.c1 > 0) & (self.c1 < self.n)
