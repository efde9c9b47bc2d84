"""Microaggregation: MDAV and the k-anonymity it gives (MDAV-ID), and probabilistic k-anonymity by
swapping inside groups (MDAV-SWAP, IR-SWAP).

MDAV, *Maximum Distance to Average Vector* (Domingo-Ferrer & Torra 2005; the form used by sdcMicro),
on the standardized (z-scored) attributes:

    while at least 3k records remain:
        c = centroid of the remaining records
        r = the remaining record farthest from c;  s = the remaining record farthest from r
        group r with its k-1 nearest remaining records; then s with its k-1 nearest
    if between 2k and 3k-1 remain: r = the farthest from their centroid; group r with its k-1
        nearest; the rest is the last group
    else the rest is the last group

so every group has between k and 2k-1 records. Distances are Euclidean. **Tie rule**: among equally
far (or equally near) records the one that comes first in the input wins, so the partition is
a function of the data alone. Each step computes distances from one point to the remaining rows
only (the taken rows are swapped to the end, so the remaining ones stay a contiguous block):
memory is O(n), time O(n²/k).

The methods (Soria-Comas's thesis, 2013):

- ``mdav-id``: each group's QI values are replaced by the group centroid; the QIs are then
  k-anonymous (every released QI vector is shared by its whole group).
- ``mdav-swap``: MDAV groups on the QIs, then the QI vectors are randomly permuted among the
  group's records (each QI vector moves whole): values stay truthful, and the link between a
  person's QIs and their confidential attributes holds with probability 1/|group| <= 1/k
  (*probabilistic k-anonymity*).
- ``ir-swap``: for each confidential attribute separately, *individual ranking*: sort the records
  by that attribute (ties by input order), cut into consecutive groups of k (the last, short one
  joins the group before it), and permute that attribute's values within each group. Each
  attribute may have its own k.

Only numeric attributes are microaggregated: a nominal or text QI has no centroid and no
distance, and is refused with an error naming it (generalize it with the lattice instead).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.exceptions import DataError, InvalidParameterError
from microrelease.core.micro.mdav_numpy import mdav as mdav_numpy
from microrelease.core.validation import validate_int, validate_k, validate_rng

METHODS: dict[str, str] = {
    "mdav-id": "MDAV groups; QIs replaced by the group centroid (k-anonymity)",
    "mdav-swap": "MDAV groups; QI vectors permuted inside each group (probabilistic k-anonymity)",
    "ir-swap": "each confidential attribute ranked, cut into groups of k, permuted inside each group",
}


def numeric_matrix(table: pd.DataFrame, columns: Sequence[str], role: str = "attribute") -> np.ndarray:
    """The ``columns`` as a float matrix; DataError naming a missing, non-numeric or NaN column."""
    if not columns:
        raise DataError(f"no {role} columns given")
    unknown = [c for c in columns if c not in table.columns]
    if unknown:
        raise DataError(f"unknown {role} column(s) {unknown}; the table has {list(table.columns)}")
    out = np.empty((len(table), len(columns)), dtype=np.float64)
    for j, name in enumerate(columns):
        values = pd.to_numeric(table[name], errors="coerce")
        bad = values.isna() & table[name].notna() & (table[name].astype(str).str.strip() != "")
        if bad.any():
            example = table[name][bad].iloc[0]
            raise DataError(f"{role} {name!r} must be numeric: {int(bad.sum())} value(s) are not, e.g. {example!r} "
                            "(a nominal attribute has no centroid; generalize it with the lattice instead)")
        if values.isna().any():
            raise DataError(f"{role} {name!r} has {int(values.isna().sum())} missing value(s); "
                            "impute or drop those rows first")
        out[:, j] = values.to_numpy(dtype=np.float64)
        # 'inf' parses as a number, but makes the standard deviation NaN (reported as "constant")
        infinite = np.isinf(out[:, j])
        if infinite.any():
            example = table[name].to_numpy()[infinite][0]
            raise DataError(f"{role} {name!r} has {int(infinite.sum())} row(s) with an infinite value, e.g. "
                            f"{example!r}; only finite numbers can be microaggregated: fix or drop those rows")
    return out


@dataclass(frozen=True)
class Standardizer:
    """z = (x - mean) / sd, with the sample standard deviation (n - 1), as R's ``scale``."""

    mean: np.ndarray
    sd: np.ndarray

    @classmethod
    def fit(cls, x: np.ndarray, names: Sequence[str]) -> Standardizer:
        if len(x) < 2:
            raise DataError("at least 2 records are needed to standardize")
        sd = x.std(axis=0, ddof=1)
        constant = [names[j] for j in np.flatnonzero(~(sd > 0)).tolist()]
        if constant:
            raise DataError(f"column(s) {constant} are constant: they cannot be standardized "
                            "(and carry no information to protect); leave them out")
        return cls(x.mean(axis=0), sd)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return (x - self.mean) / self.sd


def mdav_groups(z: np.ndarray, k: int, *, strategy: str = "numba", progress=None) -> np.ndarray:
    """MDAV on the (already standardized) rows of ``z``: the group number of every row.

    Groups are numbered in the order MDAV forms them. ``strategy``: ``"numba"`` (compiled loop,
    the default) or ``"numpy"`` (vectorized passes; the same result, kept as the compiled loop's
    oracle in the tests). ``progress`` is called by the numpy strategy only.
    """
    n = len(z)
    k = validate_k(k, n)
    if strategy == "numba":
        from microrelease.core.micro.mdav_kernels import mdav  # numba: compiled on first use

        group = mdav(np.ascontiguousarray(z, dtype=np.float64), k)
        if progress is not None:
            progress(1.0)
        return group
    if strategy != "numpy":
        raise InvalidParameterError(f"The 'strategy' parameter must be 'numba' or 'numpy'. Got {strategy!r} instead.",
                                    parameter="strategy")

    return mdav_numpy(np.asarray(z, dtype=np.float64), k, progress)


def consecutive_groups(order: np.ndarray, k: int) -> np.ndarray:
    """Group number of every record: k consecutive records of ``order`` per group, the short tail
    joined to the group before it (groups of k to 2k−1)."""
    n = len(order)
    n_groups = max(1, n // k)
    group = np.empty(n, dtype=np.int64)
    group[order] = np.minimum(np.arange(n) // k, n_groups - 1)
    return group


def ranking_groups(values: np.ndarray, k: int) -> np.ndarray:
    """Individual ranking: sort by value (ties by input order), consecutive groups of k, the last
    short group joined to the one before it. Returns the group number of every row."""
    k = validate_k(k, len(values))
    return consecutive_groups(np.argsort(values, kind="stable"), k)


def permute_within(group: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A permutation ``perm`` of the rows that only moves rows inside their group: row i receives
    the values of row ``perm[i]``, and ``group[perm] == group``."""
    n = len(group)
    by_group = np.lexsort((rng.random(n), group))  # rows sorted by group, random inside each
    sorted_rows = np.lexsort((np.arange(n), group))  # rows sorted by group, in input order
    perm = np.empty(n, dtype=np.int64)
    perm[sorted_rows] = by_group
    return perm


@dataclass(frozen=True, eq=False)
class Microaggregation:
    """A microaggregated table and how it was made.

    ``released``: the output table (identifiers dropped). ``groups``: for MDAV methods, the group
    of every row; for IR-SWAP, one array per confidential attribute (``attribute_groups``).

    Parameters
    ----------
    method : str
        The method used (a key of ``METHODS``).
    k : int
        The smallest group size.
    qi : tuple of str
        The quasi-identifiers aggregated.
    confidential : tuple of str
        The confidential attributes.
    original : pandas.DataFrame
        The input table.
    released : pandas.DataFrame
        The output table (identifiers dropped).
    groups : numpy.ndarray or None
        For MDAV methods, the group of every row.
    attribute_groups : dict of str to numpy.ndarray, optional
        For IR-SWAP, the groups of each confidential attribute.
    attribute_k : dict of str to int, optional
        The k of each attribute, when they differ.
    seed : int, optional
        The seed of the randomized methods.
    """

    method: str
    k: int
    qi: tuple[str, ...]
    confidential: tuple[str, ...]
    original: pd.DataFrame
    released: pd.DataFrame
    groups: np.ndarray | None
    attribute_groups: dict[str, np.ndarray] = field(default_factory=dict)
    attribute_k: dict[str, int] = field(default_factory=dict)
    seed: int | None = None

    @property
    def group_sizes(self) -> np.ndarray:
        return np.bincount(self.groups) if self.groups is not None else np.array([], dtype=np.int64)


def microaggregate(
    table: pd.DataFrame,
    *,
    qi: Sequence[str] = (),
    confidential: Sequence[str] = (),
    k: int,
    method: str = "mdav-id",
    k_per_attribute: Mapping[str, int] | None = None,
    identifiers: Sequence[str] = (),
    rng: int | np.random.Generator | None = None,
    strategy: str = "numba",
    progress=None,
) -> Microaggregation:
    """Protect ``table`` by ``method`` (see ``METHODS``); identifiers are dropped from the output.

    ``qi`` are the numeric quasi-identifiers (MDAV methods); ``confidential`` the numeric
    confidential attributes (needed by ``ir-swap``; measured by the linkage attack). For
    ``ir-swap``, ``k_per_attribute`` may give an attribute its own k (default ``k``).

    Parameters
    ----------
    table : pandas.DataFrame
        The table to protect.
    qi : sequence of str, optional
        The numeric quasi-identifiers (aggregated together).
    confidential : sequence of str, optional
        The numeric confidential attributes.
    k : int
        The smallest group size.
    method : str, default "mdav-id"
        A key of ``METHODS``.
    k_per_attribute : mapping of str to int, optional
        Per-attribute k (for the methods that take one).
    identifiers : sequence of str, optional
        Direct identifiers, dropped from the output.
    rng : int or numpy.random.Generator, optional
        The random source of the randomized methods.
    strategy : str, default "numba"
        The MDAV implementation (``"numba"`` or ``"numpy"``).
    progress : callable, optional
        Called with the progress.

    Returns
    -------
    Microaggregation
        The released table and its groups.

    Raises
    ------
    InvalidParameterError
        If ``method``, ``k`` or a column is invalid.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"age": [20, 21, 22, 60, 61, 62], "pay": [1.0, 2, 3, 10, 11, 12]})
    >>> result = microaggregate(table, qi=["age", "pay"], k=3, method="mdav-id", strategy="numpy")
    >>> result.released["age"].tolist()
    [21.0, 21.0, 21.0, 61.0, 61.0, 61.0]
    """
    if method not in METHODS:
        raise InvalidParameterError(f"The 'method' parameter must be one of {sorted(METHODS)}. Got {method!r} instead.",
                                    parameter="method")
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"The 'table' parameter must be a pandas DataFrame. Got {type(table).__name__}.")
    if len(table) == 0:
        raise DataError("the table has no rows")
    qi, confidential = tuple(qi), tuple(confidential)
    overlap = sorted(set(qi) & set(confidential))
    if overlap:
        raise DataError(f"column(s) {overlap} are given both as QI and as confidential", parameter="confidential")
    dropped = [c for c in identifiers if c in (*qi, *confidential)]
    if dropped:  # an identifier is dropped from the output: it cannot also be released
        role = "QI" if dropped[0] in qi else "confidential"
        raise DataError(f"column(s) {dropped} are given both as identifier and as {role}", parameter="identifiers")
    unknown = [c for c in identifiers if c not in table.columns]
    if unknown:
        raise DataError(f"unknown identifier column(s) {unknown}")
    k = validate_k(k, len(table))
    generator = validate_rng(rng)
    seed = rng if isinstance(rng, int) else None
    released = table.drop(columns=list(identifiers)).reset_index(drop=True).copy()
    original = table.reset_index(drop=True)

    if method == "ir-swap":
        if not confidential:
            raise DataError("ir-swap permutes confidential attributes: 'confidential' is empty",
                            parameter="confidential")
        extra = sorted(set(k_per_attribute or {}) - set(confidential))
        if extra:
            raise DataError(f"k given for column(s) {extra} that are not confidential attributes",
                            parameter="k_per_attribute")
        x = numeric_matrix(original, confidential, "confidential attribute")
        groups, ks = {}, {}
        for j, name in enumerate(confidential):
            own = (k_per_attribute or {}).get(name)
            ks[name] = validate_k(k, len(table)) if own is None else validate_int(
                own, f"k_per_attribute[{name!r}]", low=1, high=len(table), high_means="the number of rows")
            groups[name] = ranking_groups(x[:, j], ks[name])
            perm = permute_within(groups[name], generator)
            released[name] = original[name].to_numpy()[perm]
        return Microaggregation(method, k, qi, confidential, original, released, None, groups, ks, seed)

    if k_per_attribute:
        raise DataError("a k per attribute applies to ir-swap only", parameter="k_per_attribute")
    x = numeric_matrix(original, qi, "QI")
    if confidential:
        numeric_matrix(original, confidential, "confidential attribute")  # checked, kept as is
    z = Standardizer.fit(x, qi)(x)
    group = mdav_groups(z, k, strategy=strategy, progress=progress)
    if method == "mdav-id":
        sums = np.zeros((group.max() + 1, x.shape[1]))
        np.add.at(sums, group, x)
        centroids = sums / np.bincount(group)[:, None]
        for j, name in enumerate(qi):
            released[name] = centroids[group, j]
    else:  # mdav-swap: whole QI vectors move between the records of one group
        perm = permute_within(group, generator)
        for name in qi:
            released[name] = original[name].to_numpy()[perm]
    return Microaggregation(method, k, qi, confidential, original, released, group, {}, {}, seed)


__all__ = ["METHODS", "Microaggregation", "Standardizer", "consecutive_groups", "mdav_groups", "microaggregate",
           "numeric_matrix", "permute_within", "ranking_groups"]

