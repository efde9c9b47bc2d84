"""From t-closeness to differential privacy (Domingo-Ferrer & Soria-Comas, "From t-closeness to
differential privacy and vice versa", 2015): release *truthful* confidential values, and bound what
the QIs reveal about them.

The confidential attribute is cut into bins fixed in advance by its declared bounds (equal widths;
never data-derived). A partition of the records into classes is *t-close in the multiplicative
sense* when in every class C and for every bin v, 1/t ≤ p_C(v)/p(v) ≤ t (p the whole table's
distribution); called *ratio closeness* here, so that "t-closeness" keeps one meaning in this
package: Li et al.'s EMD bound (:mod:`microrelease.core.models.t_closeness`). Then learning a
person's class (from their QIs) changes the odds of any bin by at most t; with t = exp(ε/2) the release of the confidential attribute is ε-differentially private
with respect to that knowledge (the paper's equivalence). A bin present in the table but absent
from a class gives an infinite ratio, so classes must be large and mixed.

Construction: MDAV groups of at least k records on the standardized QIs (k-anonymity), then,
while a class breaks the bound, the worst class is merged with the one, among its 8 nearest by
centroid, that leaves the merged class the smallest ratio. It ends (one class is the table itself, with ratio 1). The QIs are released as class
centroids; the confidential values are released as they are. Reported: the ε actually achieved,
2·max |ln(p_C(v)/p(v))|, the class sizes, and the information loss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.dp.mechanisms import check_epsilon
from microrelease.core.dp.microdata import check_bounds
from microrelease.core.micro.information_loss import information_loss
from microrelease.core.micro.microaggregation import Standardizer, mdav_groups, numeric_matrix
from microrelease.core.validation import check_int, check_k

NEIGHBOURS = 8  # classes considered for each merge

@dataclass(frozen=True, eq=False)
class RatioClosenessRelease:
    released: pd.DataFrame
    classes: np.ndarray  # class of every record
    epsilon_target: float
    epsilon_achieved: float
    t: float
    sse_sst: float  # information loss on the QIs (the confidential values are untouched)

    @property
    def class_sizes(self) -> np.ndarray:
        return np.bincount(self.classes)


def _log_ratios(bins: np.ndarray, classes: np.ndarray, n_bins: int) -> np.ndarray:
    """Per class: max over bins of |ln(p_C(v) / p(v))| (bins absent from the table ignored)."""
    n_classes = int(classes.max()) + 1
    counts = np.zeros((n_classes, n_bins))
    np.add.at(counts, (classes, bins), 1)
    table = counts.sum(axis=0)
    present = table > 0
    p_class = counts[:, present] / counts.sum(axis=1, keepdims=True)
    p_table = table[present] / table.sum()
    with np.errstate(divide="ignore"):
        return np.abs(np.log(p_class / p_table)).max(axis=1)


def ratio_closeness_release(table: pd.DataFrame, qi: Sequence[str], confidential: str, *, epsilon: float,
                      bounds: tuple[float, float], k: int, bins: int = 4) -> RatioClosenessRelease:
    """Build the partition (see the module docstring) and release QI centroids with true values."""
    epsilon = check_epsilon(epsilon)
    bins = check_int(bins, "bins", low=1)
    qi = list(qi)
    x = numeric_matrix(table, qi, "QI")
    k = check_k(k, len(table))
    lo, hi = check_bounds([confidential], {confidential: bounds})[0]
    values = np.clip(numeric_matrix(table, [confidential], "confidential attribute")[:, 0], lo, hi)
    value_bin = np.minimum(((values - lo) / (hi - lo) * bins).astype(np.int64), bins - 1)
    z = Standardizer.fit(x, qi)(x)
    classes = mdav_groups(z, k)
    limit = epsilon / 2
    while True:
        worst = _log_ratios(value_bin, classes, bins)
        c = int(np.argmax(worst))
        if worst[c] <= limit + 1e-12 or classes.max() == 0:
            break
        sizes = np.bincount(classes)
        centroids = np.zeros((len(sizes), z.shape[1]))
        np.add.at(centroids, classes, z)
        centroids /= sizes[:, None]
        distance = ((centroids - centroids[c]) ** 2).sum(axis=1)
        distance[c] = np.inf
        # among the few nearest classes, the one whose merge leaves the smallest ratio: merging
        # blindly with the nearest tends to snowball into one class holding everything
        nearest = np.argsort(distance, kind="stable")[:min(NEIGHBOURS, len(sizes) - 1)]
        counts = np.zeros((len(sizes), bins))
        np.add.at(counts, (classes, value_bin), 1)
        table_p = counts.sum(axis=0) / counts.sum()
        present = table_p > 0
        merged = counts[nearest] + counts[c]
        with np.errstate(divide="ignore"):
            ratios = np.abs(np.log(merged[:, present] / merged.sum(axis=1, keepdims=True) / table_p[present])).max(axis=1)
        other = int(nearest[np.lexsort((distance[nearest], ratios))[0]])
        classes = np.where(classes == c, other, classes)
        classes = np.unique(classes, return_inverse=True)[1].reshape(-1)  # renumber 0..C-1
    achieved = 2 * float(_log_ratios(value_bin, classes, bins).max())
    released = table.copy()
    sums = np.zeros((int(classes.max()) + 1, x.shape[1]))
    np.add.at(sums, classes, x)
    centroids = sums / np.bincount(classes)[:, None]
    for j, name in enumerate(qi):
        released[name] = centroids[classes, j]
    loss = information_loss(table, released, qi).sse_sst
    return RatioClosenessRelease(released, classes, epsilon, achieved, math.exp(epsilon / 2), loss)
