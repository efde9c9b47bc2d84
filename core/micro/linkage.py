"""Disclosure risk by distance-based record linkage (the intruder of the microaggregation literature).

The intruder holds the original QIs of the people in the release. For each of them, they link to
the released record nearest in QI space (Euclidean, on the QIs standardized with the original
means and standard deviations). If several released records are equally near, they pick one at
random; so a person counts as *re-identified* with probability [true record among the nearest] /
(number of nearest). For the confidential attributes, the intruder *learns* the value of the
record they link to; a value counts as learned correctly when it equals the person's true value.

Bounds: MDAV-ID and MDAV-SWAP keep the linkage rate at most 1/k (a group of at least k records
shares, or swaps, each QI vector); IR-SWAP releases the QIs unchanged (re-identification is
certain) but each confidential value is right with probability about 1/k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.micro.microaggregation import Standardizer, numeric_matrix
from microrelease.core.validation import validate_rng


@dataclass(frozen=True)
class LinkageRisk:
    """Expected shares over the attacked records (all of them, or a seeded sample)."""

    reidentified: float
    confidential_learned: float | None
    bound: float
    attacked: int

    def to_dict(self) -> dict:
        return {"reidentified": round(self.reidentified, 6),
                "confidential_learned": None if self.confidential_learned is None else round(self.confidential_learned, 6),
                "bound_1_over_k": round(self.bound, 6), "records_attacked": self.attacked}


def record_linkage(
    original: pd.DataFrame,
    released: pd.DataFrame,
    qi: Sequence[str],
    confidential: Sequence[str] = (),
    *,
    k: int,
    sample: int | None = 5000,
    rng: int | np.random.Generator | None = 0,
    block: int = 512,
) -> LinkageRisk:
    """Run the attack; row i of ``released`` is the release of row i of ``original``.

    ``sample``: attack at most this many records (a seeded random sample; None = all). Distances
    are computed ``block`` records at a time, so memory stays O(block × n).

    Parameters
    ----------
    original : pandas.DataFrame
        The table before protection.
    released : pandas.DataFrame
        The protected table (same rows, same order).
    qi : sequence of str
        The quasi-identifiers an intruder links on.
    confidential : sequence of str, optional
        Confidential attributes also known to the intruder.
    k : int
        The release's k (the expected linkage rate is at most 1/k).
    sample : int or None, default 5000
        How many original rows are linked (None: all).
    rng : int or numpy.random.Generator, optional
        The random source of the sample.
    block : int, default 512
        Rows per block of the distance computation.

    Returns
    -------
    LinkageRisk
        The share of rows linked to their own protected record.
    """
    qi, confidential = list(qi), list(confidential)
    x = numeric_matrix(original, qi, "QI")
    y = numeric_matrix(released, qi, "released QI")
    scale = Standardizer.fit(x, qi)
    z, z_released = scale(x), scale(y)
    n = len(z)
    generator = validate_rng(rng)
    attacked = np.arange(n) if sample is None or sample >= n else np.sort(generator.choice(n, sample, replace=False))
    conf_true = original[confidential].to_numpy() if confidential else None
    conf_released = released[confidential].to_numpy() if confidential else None
    released_sq = np.einsum("ij,ij->i", z_released, z_released)
    hits = learned = 0.0
    for start in range(0, len(attacked), block):
        rows = attacked[start:start + block]
        a = z[rows]
        # fast squared distances, then the near candidates recomputed exactly: only exact ties
        # are ties (the fast formula's rounding would merge records that merely lie close)
        d = np.einsum("ij,ij->i", a, a)[:, None] + released_sq[None, :] - 2 * a @ z_released.T
        lowest = d.min(axis=1, keepdims=True)
        ri, cj = np.nonzero(d <= lowest + 1e-6 * (1 + np.abs(lowest)))
        exact = ((z_released[cj] - a[ri]) ** 2).sum(axis=1)
        row_min = np.full(len(rows), np.inf)
        np.minimum.at(row_min, ri, exact)
        tie = exact == row_min[ri]
        ri, cj = ri[tie], cj[tie]
        ties = np.bincount(ri, minlength=len(rows))
        share = 1.0 / ties[ri]
        hits += float(share[cj == rows[ri]].sum())
        if conf_true is not None and conf_released is not None:  # both or neither
            for j in range(len(confidential)):
                learned += float(share[conf_released[cj, j] == conf_true[rows[ri], j]].sum())
    m = len(attacked)
    return LinkageRisk(hits / m, learned / (m * len(confidential)) if confidential else None, 1.0 / k, m)
