"""From t-closeness to differential privacy (Domingo-Ferrer & Soria-Comas, "From t-closeness to
differential privacy and vice versa", 2015): release *truthful* confidential values, and bound what
the QIs reveal about them.

The confidential attribute is cut into bins fixed in advance, never from the data: ``bins`` equal
widths over its declared ``bounds`` [lo, hi] (values outside are clamped into the end bins and
counted), or declared ``cuts`` c₁ < … < c_m giving (−∞, c₁], (c₁, c₂], …, (c_m, ∞). A partition of
the records into classes is *t-close in the multiplicative sense* when in every class C and for
every bin v present in the table, 1/t ≤ p_C(v)/p(v) ≤ t (p the whole table's distribution); called
*ratio closeness* here, so that "t-closeness" keeps one meaning in this package: Li et al.'s EMD
bound (``microrelease.core.models.t_closeness``). Learning a person's class (from their QIs) then
changes the odds of any bin by at most t; with t = exp(ε/2) the release of the confidential
attribute is ε-differentially private with respect to that knowledge (the paper's equivalence).
Every class is also k-anonymous: at least k records, QIs released as the class centroid.

Construction (``.ratio_partition``), the thesis's "fitting the distribution in each of the
k-anonymous groups by selecting the individuals that must belong to each of the groups": first the
number of classes and every class's bin counts, the largest number of classes of equal size (± 1)
whose counts can meet the bound and k; then the classes are filled MDAV-like (the record farthest
from the centroid of those left, with the nearest records left in every bin); then swaps and moves of
records that lower the QI SSE and keep every class within the bound and k (classes' sizes may then
differ). A bin absent from the table sets no constraint. Every class must hold each present bin, so
no partition has more classes than the rarest bin has records (``class_ceiling``, an upper bound).
Deviation: planning equal sizes can miss a partition with more classes of unequal sizes (brute force
over every partition of 4 to 8 records found one such table in 300). When no partition into two or
more classes is found (a bin too rare, k above n/2), the release is one class, the table itself
(ratio 1), and ``single_class_reason`` says why.

``stratified_baseline`` is the simple alternative it is measured against: the same counts, class
c taking the c-th slice of every bin along the QIs' first principal axis.

Reported: the ε achieved, 2·max_C max_v |ln(p_C(v)/p(v))|, the class sizes, the QI information loss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd

from microrelease.core.dp.mechanisms import validate_epsilon
from microrelease.core.dp.ratio_partition import (
    class_ceiling,
    greedy_partition,
    largest_partition_plan,
    log_ratio_excess,
    refine,
    strata_partition,
)
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.micro.micro_loss import information_loss
from microrelease.core.micro.microaggregation import Standardizer, numeric_matrix
from microrelease.core.validation import validate_int, validate_k


@dataclass(frozen=True, eq=False)
class RatioClosenessRelease:
    """A ratio-closeness release: QIs as class centroids, the confidential attribute as it is."""

    released: pd.DataFrame
    classes: np.ndarray  # class of every record
    epsilon_target: float
    epsilon_achieved: float
    t: float  # exp(epsilon_target / 2)
    sse_sst: float  # information loss on the QIs, % (the confidential values are untouched)
    method: str  # "ratio-partition" or "stratified-baseline"
    cuts: tuple[float, ...]  # interior bin edges, as declared or from equal widths over the bounds
    bin_counts: tuple[int, ...]  # records per bin in the table
    clamped: int  # confidential values outside the declared bounds (0 with cuts)
    class_ceiling: int  # no partition meeting the bound and k has more classes
    single_class_reason: str | None  # why the release is one class, when it is
    qi: tuple[str, ...] = ()
    confidential: str = ""
    bounds: tuple[float, float] | None = None  # declared bounds (None: declared cuts)
    k: int = 1

    def value_bins(self, values: np.ndarray) -> np.ndarray:
        """The bin of each confidential value, by the declared bins this release was built with."""
        return _value_bins(values, self.bounds, len(self.cuts) + 1, None if self.bounds is not None else self.cuts)[0]

    @property
    def class_sizes(self) -> np.ndarray:
        return np.bincount(self.classes)


def _value_bins(values: np.ndarray, bounds, bins, cuts) -> tuple[np.ndarray, tuple[float, ...], int, int]:
    """Bin of every value, the interior cuts, the number of bins and of clamped values."""
    if (bounds is None) == (cuts is None):
        raise InvalidParameterError("give exactly one of 'bounds' (lo, hi), cut into equal-width bins, or "
                                    f"'cuts' (declared bin edges); got bounds={bounds!r}, cuts={cuts!r}",
                                    parameter="bounds" if cuts is None else "cuts")
    if cuts is not None:
        try:
            edges = np.asarray(cuts, dtype=float).reshape(-1)
        except (TypeError, ValueError):
            edges = np.array([np.nan])
        if not np.isfinite(edges).all() or (np.diff(edges) <= 0).any():
            raise InvalidParameterError(f"The 'cuts' parameter must be finite and strictly increasing. Got {cuts!r} "
                                        "instead.", parameter="cuts")
        # bins (-inf, c1], (c1, c2], ..., (cm, inf)
        return np.searchsorted(edges, values, side="left"), tuple(edges.tolist()), len(edges) + 1, 0
    bins = validate_int(bins, "bins", low=1)
    try:
        lo, hi = (float(b) for b in bounds)
    except (TypeError, ValueError):
        raise InvalidParameterError(f"The 'bounds' parameter must be a pair (lo, hi). Got {bounds!r} instead.",
                                    parameter="bounds") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise InvalidParameterError(f"The 'bounds' parameter must be finite with lo < hi. Got {bounds!r} instead.",
                                    parameter="bounds")
    if not math.isfinite(hi - lo):  # the bins' width would be inf: every edge at inf
        raise InvalidParameterError(f"the range {lo:g}:{hi:g} is too wide: HI - LO overflows a float",
                                    parameter="bounds")
    clamped = int(((values < lo) | (values > hi)).sum())
    grid = tuple(lo + (hi - lo) / bins * i for i in range(1, bins))
    # [lo, c1), [c1, c2), ..., [cm, hi]: the reported cuts are the edges used
    return np.searchsorted(grid, np.clip(values, lo, hi), side="right"), grid, bins, clamped


def _bin_names(edges: tuple[float, ...], bounds) -> list[str]:
    if bounds is None:  # declared cuts: (-inf, c1], (c1, c2], ..., (cm, inf)
        ends = ["-inf", *(f"{c:g}" for c in edges), "inf"]
        return [f"({a}, {b}]" if b != "inf" else f"({a}, inf)" for a, b in zip(ends, ends[1:], strict=False)]
    ends = [f"{float(bounds[0]):g}", *(f"{c:g}" for c in edges), f"{float(bounds[1]):g}"]
    return [f"[{a}, {b})" for a, b in zip(ends, ends[1:-1], strict=False)] + [f"[{ends[-2]}, {ends[-1]}]"]


def _single_class_reason(bin_counts: np.ndarray, names: list[str], half_epsilon: float, k: int,
                         n_classes: int) -> str | None:
    """Why no partition into two or more classes was found (None when one was)."""
    if n_classes > 1:
        return None
    n = int(bin_counts.sum())
    present = np.flatnonzero(bin_counts)
    rarest = int(present[np.argmin(bin_counts[present])])
    need = math.ceil(n / (bin_counts[rarest] * math.exp(half_epsilon)) - 1e-9)
    if k > n // 2:
        return f"k = {k} leaves room for one class of {n} records only"
    if bin_counts[rarest] < 2:
        return (f"bin {names[rarest]} holds 1 record: every class must hold a record of every bin present, "
                "so the table is the only class")
    if need > n // 2:
        return (f"bin {names[rarest]} holds {int(bin_counts[rarest])} of {n} records: a class holding one of "
                f"them needs at least {need} records to keep its share within exp({half_epsilon:g}), more "
                "than half the table")
    return (f"no partition into 2 or more classes of about equal size meets exp(±{half_epsilon:g}) on every bin "
            f"(the rarest, {names[rarest]}, holds {int(bin_counts[rarest])} of {n} records)")


def _release(table, qi, confidential, epsilon, k, bounds, bins, cuts, method) -> RatioClosenessRelease:
    epsilon = validate_epsilon(epsilon)
    qi = list(qi)
    if confidential in qi:
        raise InvalidParameterError(f"the confidential attribute {confidential!r} is also among the QIs {qi}: "
                                    "it cannot be both released as is and replaced by centroids",
                                    parameter="confidential")
    x = numeric_matrix(table, qi, "QI")
    values = numeric_matrix(table, [confidential], "confidential attribute")[:, 0]
    k = validate_k(k, len(table))
    value_bin, edges, n_bins, clamped = _value_bins(values, bounds, bins, cuts)
    z = Standardizer.fit(x, qi)(x)
    bin_counts = np.bincount(value_bin, minlength=n_bins)
    p = bin_counts / bin_counts.sum()
    half = epsilon / 2
    plan = largest_partition_plan(bin_counts, half, k)
    if method == "stratified-baseline":
        classes = strata_partition(z, value_bin, plan)
    else:
        classes = refine(z, value_bin, greedy_partition(z, value_bin, plan), p, half, k)
    counts = np.zeros((int(classes.max()) + 1, n_bins), dtype=np.int64)
    np.add.at(counts, (classes, value_bin), 1)
    achieved = 2 * float(log_ratio_excess(counts, p).max())
    sums = np.zeros((len(counts), x.shape[1]))
    np.add.at(sums, classes, x)
    centroids = sums / counts.sum(axis=1)[:, None]
    released = table.copy()
    for j, name in enumerate(qi):
        released[name] = centroids[classes, j]
    return RatioClosenessRelease(
        released, classes, epsilon, achieved, math.exp(half), information_loss(table, released, qi).sse_sst,
        method, edges, tuple(int(c) for c in bin_counts), clamped, class_ceiling(bin_counts, half, k),
        _single_class_reason(bin_counts, _bin_names(edges, bounds if cuts is None else None), half, k,
                             len(counts)),
        tuple(qi), confidential,
        None if bounds is None else cast("tuple[float, float]", tuple(float(b) for b in bounds)), k)


def ratio_closeness_release(table: pd.DataFrame, qi: Sequence[str], confidential: str, *, epsilon: float, k: int,
                            bounds: tuple[float, float] | None = None, bins: int = 4,
                            cuts: Sequence[float] | None = None) -> RatioClosenessRelease:
    """Partition the records into k-anonymous classes whose ``confidential`` bins stay within
    exp(±ε/2) of the table's shares; release the QIs as class centroids, the confidential values as
    they are (see the module docstring).

    Parameters
    ----------
    table, qi, confidential
        The records, the numeric quasi-identifiers, the numeric confidential attribute.
    epsilon
        The target ε: t = exp(ε/2) bounds every class's p_C(v)/p(v).
    k
        Every class holds at least k records.
    bounds, bins
        Declared (lo, hi) of the confidential attribute, cut into ``bins`` equal widths.
    cuts
        Instead of ``bounds``: declared interior edges (``bins`` is then not used).

    Returns
    -------
    RatioClosenessRelease
        The released table, its classes and the ratio-closeness figures.

    Raises
    ------
    InvalidParameterError
        Both or neither of ``bounds`` / ``cuts``; cuts not finite or not strictly increasing; k out of
        [1, rows]; epsilon not positive; the confidential attribute among the QIs.
    DataError
        An unknown, non-numeric, missing-valued or constant column.
    """
    return _release(table, qi, confidential, epsilon, k, bounds, bins, cuts, "ratio-partition")


def stratified_baseline(table: pd.DataFrame, qi: Sequence[str], confidential: str, *, epsilon: float, k: int,
                        bounds: tuple[float, float] | None = None, bins: int = 4,
                        cuts: Sequence[float] | None = None) -> RatioClosenessRelease:
    """The stratified baseline, same parameters and result as ``ratio_closeness_release``: the
    same number of classes and bin counts, class c taking the c-th slice of every bin along the first
    principal axis of the standardized QIs.

    Parameters
    ----------
    table : pandas.DataFrame
        The records.
    qi : sequence of str
        The numeric quasi-identifiers.
    confidential : str
        The numeric confidential attribute.
    epsilon : float
        The target ε.
    k : int
        Every class holds at least k records.
    bounds : tuple of float, optional
        Declared (lo, hi) of the confidential attribute.
    bins : int, default 4
        Equal-width bins of ``bounds``.
    cuts : sequence of float, optional
        Instead of ``bounds``: declared interior edges.

    Returns
    -------
    RatioClosenessRelease
        The baseline release.
    """
    return _release(table, qi, confidential, epsilon, k, bounds, bins, cuts, "stratified-baseline")
