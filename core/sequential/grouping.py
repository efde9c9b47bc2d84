"""Grouping entities by the cost F (the patent's "rank by similarity, take the first >= k").

- ``greedy`` (default, MDAV-like): the seed is the remaining entity farthest from the data's centre
  (its mean F to a fixed spread of 64 entities); the seed and its k−1 nearest remaining entities by F
  (ties: input order) form a group; repeat while k remain; the last < k entities each join the group
  whose seed is nearest.
- ``ranking`` (the claim read literally): one seed (the farthest from the centre), every entity
  ranked by F to it, the ranking cut into consecutive groups of k, the short tail joined to the last.

Both give groups of at least k entities (if there are at least k entities).
"""

from __future__ import annotations

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.micro.microaggregation import consecutive_groups
from microrelease.core.sequential.cost import CostModel
from microrelease.core.validation import check_k

VARIANTS = ("greedy", "ranking")


def centrality(model: CostModel, sample: int = 64) -> np.ndarray:
    """Mean F from every entity to a fixed, evenly spread set of entities (large = far from the centre)."""
    n = model.data.n_entities
    anchors = np.unique(np.linspace(0, n - 1, min(sample, n)).astype(np.int64))
    total = np.zeros(n)
    everyone = np.arange(n)
    for a in anchors:
        total += model.costs_from(int(a), everyone)
    return total / len(anchors)


def group_entities(model: CostModel, k: int, *, variant: str = "greedy", progress=None) -> np.ndarray:
    """The group number of every entity."""
    if variant not in VARIANTS:
        raise InvalidParameterError(f"The 'variant' parameter must be one of {VARIANTS}. Got {variant!r}.",
                                    parameter="variant")
    n = model.data.n_entities
    k = check_k(k, n)
    far = centrality(model)
    group = np.full(n, -1, dtype=np.int64)
    if variant == "ranking":
        seed = int(np.argmax(far))
        cost = model.costs_from(seed, np.arange(n))
        return consecutive_groups(np.lexsort((np.arange(n), cost)), k)
    remaining = np.arange(n)
    seeds = []
    g = 0
    while len(remaining) >= k:
        seed = int(remaining[np.argmax(far[remaining])])  # first in input order among ties
        cost = model.costs_from(seed, remaining)
        chosen = remaining[np.lexsort((remaining, cost))[:k]]
        group[chosen] = g
        seeds.append(seed)
        remaining = remaining[group[remaining] < 0]
        g += 1
        if progress is not None:
            progress(1 - len(remaining) / n)
    for e in remaining:  # fewer than k left: each joins the group whose seed is nearest
        group[e] = int(np.argmin(model.costs_from(int(e), np.array(seeds, dtype=np.int64))))
    if progress is not None:
        progress(1.0)
    return group
