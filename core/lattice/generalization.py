"""Generalization and suppression at one node (Samarati §3-§4).

Samarati's Def. 4.2 and Theorem 4.1: generalizing a table T to a distance vector and then removing
*all and only* the rows whose generalized QI combination occurs fewer than k times yields the
unique generalization with *minimal required suppression* at that vector. Its suppressed row count
is what ``satisfies(node, k, MaxSup)`` compares with MaxSup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from microrelease.core.lattice.distance_vectors import Node
from microrelease.core.lattice.frequency import FrequencySet
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.validation import validate_k

if TYPE_CHECKING:  # annotations only: the dataset module builds on the lattice's
    from microrelease.core.data.dataset import Dataset


def generalize_codes(hierarchies: Sequence[Hierarchy], codes: np.ndarray, node: Sequence[int]) -> np.ndarray:
    """Ground codes (n × m) -> level codes at ``node`` (n × m)."""
    out = np.empty_like(codes)
    for i, (h, d) in enumerate(zip(hierarchies, node, strict=True)):
        out[:, i] = h.codes[d][codes[:, i]]
    return out


def class_sizes(freq: FrequencySet, hierarchies: Sequence[Hierarchy], node: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Equivalence classes at ``node`` by grouping the frequency set.

    Returns ``(sizes, tuple_class)``: the row count of each class, and the class of each
    frequency-set tuple.
    """
    level_codes = generalize_codes(hierarchies, freq.codes, node)
    radices = [h.level_size(d) for h, d in zip(hierarchies, node, strict=True)]
    if float(np.prod(radices, dtype=float)) < 2**62:
        key = np.zeros(len(level_codes), dtype=np.int64)
        for i, r in enumerate(radices):  # mixed-radix number of the generalized tuple
            key = key * r + level_codes[:, i]
        _, tuple_class = np.unique(key, return_inverse=True)
    else:
        _, tuple_class = np.unique(level_codes, axis=0, return_inverse=True)
    tuple_class = tuple_class.reshape(-1)
    sizes = np.bincount(tuple_class, weights=freq.counts).astype(np.int64)
    return sizes, tuple_class


def class_representatives(tuple_class: np.ndarray, n_classes: int) -> np.ndarray:
    """The first frequency-set tuple of each class (its ground codes stand for the class's generalized ones)."""
    first = np.zeros(n_classes, dtype=np.int64)
    first[tuple_class[::-1]] = np.arange(len(tuple_class))[::-1]
    return first


def suppressed_count(freq: FrequencySet, hierarchies: Sequence[Hierarchy], node: Sequence[int], k: int) -> int:
    """Rows removed by minimal required suppression at ``node`` (rows in classes smaller than k)."""
    sizes, _ = class_sizes(freq, hierarchies, node)
    return int(sizes[sizes < k].sum())


def satisfies(freq: FrequencySet, hierarchies: Sequence[Hierarchy], node: Sequence[int], k: int, max_sup: int) -> bool:
    """Samarati's satisfies(vector, k, MaxSup): at most MaxSup rows need suppressing at ``node``.

    Parameters
    ----------
    freq : FrequencySet
        The frequency set of the quasi-identifiers at the bottom of the lattice.
    hierarchies : sequence of Hierarchy
        One hierarchy per quasi-identifier.
    node : sequence of int
        The distance vector to test.
    k : int
        The k of k-anonymity.
    max_sup : int
        MaxSup, the most rows that may be suppressed.

    Returns
    -------
    bool
        Whether the node's generalization is k-anonymous with at most ``max_sup`` suppressed rows.
    """
    return suppressed_count(freq, hierarchies, node, k) <= max_sup


@dataclass(frozen=True, eq=False)
class GeneralizedTable:
    """The k-anonymous table at ``node`` with minimal required suppression.

    ``released``: the generalized rows that remain (identifier columns dropped, input order kept,
    index = input row number). ``suppressed_rows``: input row numbers removed. ``classes``: one row
    per released equivalence class (generalized QI values and ``size``). ``class_sizes``: the sizes
    of all classes before suppression.

    Parameters
    ----------
    node : Node
        The distance vector.
    k : int
        The k of k-anonymity.
    n_input : int
        The input's number of rows.
    released : pandas.DataFrame
        The generalized rows that remain.
    suppressed_rows : numpy.ndarray
        Input row numbers removed.
    classes : pandas.DataFrame
        One row per released equivalence class.
    class_sizes : numpy.ndarray
        The sizes of all classes before suppression.
    """

    node: Node
    k: int
    n_input: int
    released: pd.DataFrame
    suppressed_rows: np.ndarray
    classes: pd.DataFrame
    class_sizes: np.ndarray  # every equivalence class at the node, suppressed ones included


def generalize(dataset: Dataset, node: Sequence[int], k: int, *, sensitive_frequency=None,
               models: Sequence = ()) -> GeneralizedTable:
    """Generalize ``dataset`` to ``node`` and apply minimal required suppression for ``k`` and, if
    given, for privacy ``models`` on a sensitive attribute (``sensitive_frequency``, a
    ``SensitiveFrequency`` of ``dataset``): a class is
    suppressed when it is smaller than k or fails a model.

    Parameters
    ----------
    dataset : Dataset
        The table and its hierarchies.
    node : sequence of int
        The distance vector: one generalization level per quasi-identifier.
    k : int
        The k of k-anonymity: the rows of smaller classes are suppressed.
    sensitive_frequency : SensitiveFrequency, optional
        The sensitive attribute, when ``models`` are given.
    models : sequence of PrivacyModel, optional
        Privacy models a class must satisfy too (its rows are suppressed otherwise).

    Returns
    -------
    GeneralizedTable
        The released table, the suppressed rows and the equivalence classes.

    Examples
    --------
    >>> table = generalize(load_sample("toy"), (1, 1, 2), k=2)
    >>> len(table.suppressed_rows), sorted(table.class_sizes.tolist())
    (0, [2, 2, 3])
    """
    node = dataset.lattice.validate_node(node)
    k = validate_k(k, dataset.n_rows)
    freq = dataset.frequency
    sizes, tuple_class = class_sizes(freq, dataset.hierarchies, node)
    row_class = tuple_class[freq.row_tuple]
    keep = sizes[row_class] >= k
    if models:
        keep &= sensitive_frequency.passing(row_class, len(sizes), models)[row_class]
    table = dataset.table[dataset.schema.output_columns(list(dataset.table.columns))].copy()
    level_codes = generalize_codes(dataset.hierarchies, dataset.codes, node)
    for i, (name, h, d) in enumerate(zip(dataset.quasi_identifiers, dataset.hierarchies, node, strict=True)):
        table[name] = np.asarray(h.labels[d], dtype=object)[level_codes[:, i]]
    released = table[keep]
    classes = (
        released.groupby(list(dataset.quasi_identifiers), sort=True, dropna=False).size().rename("size").reset_index()
        if len(released)
        else pd.DataFrame(columns=[*dataset.quasi_identifiers, "size"])
    )
    return GeneralizedTable(node, k, dataset.n_rows, released, np.flatnonzero(~keep), classes, sizes)
