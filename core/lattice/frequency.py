"""The frequency set (Samarati §4.1): the distinct QI combinations of a table with their counts.

Everything about k-anonymity at any lattice node follows from this small set: generalizing the
table to a node and counting classes equals generalizing the distinct combinations and summing
their counts. So the rows are read once, and every node is evaluated on the frequency set.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


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
