"""Hypothesis strategies shared across families: small random tables with random (valid) hierarchies.

A strategy used by one test file only is written beside its test (numeric tables in
core/micro, neighbouring tables in core/dp, event sequences in core/sequential).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from hypothesis import strategies as st

from microrelease.core import Hierarchy


@dataclass
class RandomCase:
    names: list[str]
    hierarchy_rows: list[list[tuple[str, ...]]]  # per QI, ARX rows
    table: list[tuple[str, ...]]  # QI values per row
    k: int
    max_sup: int

    @property
    def heights(self) -> list[int]:
        return [len(rows[0]) - 1 for rows in self.hierarchy_rows]

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.table, columns=self.names)

    def hierarchies(self) -> dict[str, Hierarchy]:
        return {n: Hierarchy(n, tuple(rows)) for n, rows in zip(self.names, self.hierarchy_rows, strict=True)}


@st.composite
def hierarchy_rows(draw, name: str) -> list[tuple[str, ...]]:
    """A random tree: ground values, then each level a random many-to-one map, then one top value."""
    n_ground = draw(st.integers(1, 5))
    height = draw(st.integers(0, 3))
    columns = [[f"{name}{i}" for i in range(n_ground)]]
    for j in range(1, height + 1):
        prev = columns[-1]
        labels = sorted(set(prev))
        if j == height:
            up = {lab: "*" for lab in labels}
        else:
            targets = draw(st.lists(st.integers(0, len(labels) - 1), min_size=len(labels), max_size=len(labels)))
            up = {lab: f"{name}L{j}_{t}" for lab, t in zip(labels, targets, strict=True)}
        columns.append([up[v] for v in prev])
    return [tuple(col[i] for col in columns) for i in range(n_ground)]


@st.composite
def random_cases(draw, max_qis: int = 3, max_rows: int = 25) -> RandomCase:
    m = draw(st.integers(1, max_qis))
    names = [f"q{i}" for i in range(m)]
    hier = [draw(hierarchy_rows(n)) for n in names]
    n = draw(st.integers(1, max_rows))
    table = [tuple(draw(st.sampled_from([r[0] for r in hier[i]])) for i in range(m)) for _ in range(n)]
    k = draw(st.integers(1, n))
    max_sup = draw(st.integers(0, n))
    return RandomCase(names, hier, table, k, max_sup)
