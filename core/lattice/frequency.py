"""The frequency set (Samarati §4.1): the distinct QI combinations of a table with their counts.

Everything about k-anonymity at any lattice node follows from this small set: generalizing the
table to a node and counting classes equals generalizing the distinct combinations and summing
their counts. So the rows are read once, and every node is evaluated on the frequency set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

from microrelease.core.lattice.distance_vectors import Lattice

if TYPE_CHECKING:
    from microrelease.core.data.roles import Schema
    from microrelease.core.engines.source import Source
    from microrelease.core.lattice.hierarchies import Hierarchy


@dataclass(frozen=True, eq=False)
class FrequencySet:
    """Distinct ground-level QI code combinations and how many rows carry each.

    ``codes[t]`` is tuple t (one ground code per QI), ``counts[t]`` its row count, and
    ``row_tuple[r]`` the tuple of input row r (so suppression can be mapped back to rows), when
    the rows are in memory; None for a frequency set computed by an engine over files.
    """

    codes: np.ndarray
    counts: np.ndarray
    row_tuple: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return int(self.counts.sum())

    @property
    def n_distinct(self) -> int:
        return len(self.counts)


def frequency_set(codes: np.ndarray) -> FrequencySet:
    """Group the rows' ground codes (n_rows × m) into the frequency set."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    tuples, row_tuple, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    return FrequencySet(tuples.astype(np.int32), counts.astype(np.int64), row_tuple.reshape(-1).astype(np.int64))


@runtime_checkable
class FrequencySource(Protocol):
    """What the lattice needs of a table: its roles, hierarchies and frequency set, and where its rows are.

    Met by ``Dataset`` (rows in memory) and
    ``TableSummary`` (rows in files, summarized by an
    engine). The search, the metrics and the release take either; the derived members are written
    here once.
    """

    schema: Schema
    hierarchies: tuple[Hierarchy, ...]
    missing_counts: dict[str, int]
    checksum: str
    frequency: FrequencySet
    columns: tuple[str, ...]  # every column of the table, in file order

    @property
    def rows(self) -> Source:
        """Where the rows live, for an engine to read them again at release."""
        ...

    @property
    def n_rows(self) -> int:
        return self.frequency.n_rows

    @property
    def quasi_identifiers(self) -> tuple[str, ...]:
        return self.schema.quasi_identifiers

    @property
    def lattice(self) -> Lattice:
        return Lattice(tuple(h.height for h in self.hierarchies), self.quasi_identifiers)
