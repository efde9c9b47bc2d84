"""Differentially private microdata through microaggregation (Soria-Comas, Domingo-Ferrer, Sánchez,
Martínez, VLDB Journal 2014; Sánchez et al. 2016).

Numeric attributes with *declared* domain bounds [lo_j, hi_j] (Δ_j = hi_j − lo_j); bounds taken
from the data would leak (the minimum and maximum are someone's values), so they must be given.
Values outside the bounds are clamped, counted and reported (with a warning). The budget ε is split
evenly over the m attributes (sequential composition); the records of one cluster share one noisy
value (parallel composition over disjoint clusters).

Methods, each record released as:

- ``record-noise`` (the baseline): its own values plus noise of sensitivity Δ_j and budget ε/m;
- ``insensitive-mdav``: the noisy centroid of its cluster. Clusters of k consecutive records (the
  short tail joins the last cluster) along a data-independent total order: distance to the domain's
  lower corner in normalized units, ties by the values in attribute order. Changing one record moves
  it in that order, and every cluster between its old and new place loses one record and gains one:
  each centroid moves by at most Δ_j/k, over n/k clusters, so the centroids' sensitivity is
  (n/k)·Δ_j/k, and it helps only when that is below Δ_j, i.e. k > √n (a warning says so otherwise);
- ``ir-mdav``: per attribute, individual ranking (sort by that attribute, consecutive groups of k),
  the noisy group mean. In one dimension the shifts caused by changing one value are between
  neighbours in sorted order, so the changes of all group means telescope to at most Δ_j/k: the
  noise needs sensitivity Δ_j/k only.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.dp.mechanisms import MECHANISMS, Laplace, Staircase, check_epsilon
from microrelease.core.exceptions import DataError, InvalidParameterError
from microrelease.core.micro.microaggregation import consecutive_groups, numeric_matrix
from microrelease.core.validation import check_k, check_rng

DP_METHODS = {
    "record-noise": "noise on every record (the baseline)",
    "insensitive-mdav": "noisy centroids of clusters along a data-independent order",
    "ir-mdav": "per attribute, noisy means of individually ranked groups",
}


class PrivacyWarning(UserWarning):
    """Something weakens or wastes the privacy guarantee (clamped values, a k that cannot help)."""


def parse_bounds(text: str) -> dict[str, tuple[float, float]]:
    """'A=0:100,B=-5:5' -> {'A': (0, 100), 'B': (-5, 5)}."""
    out = {}
    for item in [t.strip() for t in str(text).split(",") if t.strip()]:
        name, sep, rng = item.partition("=")
        lo, sep2, hi = rng.partition(":")
        try:
            if not sep or not sep2:
                raise ValueError
            out[name.strip()] = (float(lo), float(hi))
        except ValueError:
            raise InvalidParameterError(f"each item of 'bounds' must be NAME=LO:HI; got {item!r}",
                                        parameter="bounds") from None
    return out


def check_bounds(attributes: Sequence[str], bounds: Mapping[str, tuple[float, float]] | None) -> np.ndarray:
    """(m, 2) array of declared bounds; InvalidParameterError naming a missing or inverted one, or
    one given for a column that is not among ``attributes`` (most likely a misspelt name)."""
    bounds = dict(bounds or {})
    missing = [a for a in attributes if a not in bounds]
    if missing:
        raise InvalidParameterError(f"no declared bounds for {missing} in 'bounds' (bounds taken from the data "
                                    "would leak someone's value)", parameter="bounds")
    unused = [name for name in bounds if name not in attributes]
    if unused:
        raise InvalidParameterError(f"bounds given for {unused}, which are not released with noise "
                                    f"(the attributes are {list(attributes)})", parameter="bounds")
    out = np.array([bounds[a] for a in attributes], dtype=float)
    bad = [a for a, (lo, hi) in zip(attributes, out, strict=True) if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi)]
    if bad:
        raise InvalidParameterError(f"bounds of {bad} must be finite with LO < HI", parameter="bounds")
    return out


def insensitive_order(x_unit: np.ndarray) -> np.ndarray:
    """Records sorted by distance to the lower corner of the unit domain, ties by values in order."""
    distance = np.sqrt((x_unit**2).sum(axis=1))
    return np.lexsort([x_unit[:, j] for j in range(x_unit.shape[1] - 1, -1, -1)] + [distance])


@dataclass(frozen=True, eq=False)
class DPRelease:
    """A DP release of numeric ``attributes`` and how it was made (``identifiers``: the columns dropped)."""

    method: str
    noise: str  # the mechanism: a key of microrelease.core.dp.mechanisms.MECHANISMS
    epsilon: float
    k: int | None
    attributes: tuple[str, ...]
    released: pd.DataFrame
    noise_scale: dict[str, float]  # per attribute: Laplace scale, or the staircase's Δ/ε
    sensitivity: dict[str, float]
    clamped: dict[str, int] = field(default_factory=dict)
    identifiers: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"method": self.method, "noise": self.noise, "epsilon_spent": self.epsilon, "k": self.k,
                "per_attribute": {a: {"sensitivity": self.sensitivity[a], "epsilon": self.epsilon / len(self.attributes),
                                      "noise_scale": self.noise_scale[a]} for a in self.attributes},
                "values_clamped": self.clamped, "identifiers_dropped": list(self.identifiers)}


def dp_release(
    table: pd.DataFrame,
    attributes: Sequence[str],
    *,
    bounds: Mapping[str, tuple[float, float]],
    epsilon: float,
    method: str = "insensitive-mdav",
    k: int | None = None,
    noise: str = "laplace",
    identifiers: Sequence[str] = (),
    rng=None,
) -> DPRelease:
    """Release ``attributes`` of ``table`` with ε-DP by ``method`` (see :data:`DP_METHODS`);
    ``identifiers`` are dropped from the output. ``k`` is the cluster size of the microaggregation
    methods (refused for ``record-noise``, which has no clusters)."""
    if method not in DP_METHODS:
        raise InvalidParameterError(f"The 'method' parameter must be one of {sorted(DP_METHODS)}. Got {method!r}.",
                                    parameter="method")
    if noise not in MECHANISMS:
        raise InvalidParameterError(f"The 'noise' parameter must be one of {sorted(MECHANISMS)}. Got {noise!r}.",
                                    parameter="noise")
    epsilon = check_epsilon(epsilon)
    attributes, identifiers = tuple(attributes), tuple(identifiers)
    unknown = [c for c in identifiers if c not in table.columns]
    if unknown:
        raise DataError(f"unknown identifier column(s) {unknown}; the table has {list(table.columns)}",
                        parameter="identifiers")
    both = [c for c in identifiers if c in attributes]
    if both:
        raise InvalidParameterError(f"{both} given both as attributes and as identifiers; a column cannot be both "
                                    "released with noise and dropped", parameter="identifiers")
    if method == "record-noise" and k is not None:
        raise InvalidParameterError(f"method 'record-noise' adds noise to every record and has no clusters: "
                                    f"k = {k!r} would be ignored (give no k, or a microaggregation method)",
                                    parameter="k")
    x = numeric_matrix(table, attributes, "attribute")
    b = check_bounds(attributes, bounds)
    lo, hi = b[:, 0], b[:, 1]
    outside = (x < lo) | (x > hi)
    clamped = {a: int(c) for a, c in zip(attributes, outside.sum(axis=0), strict=True) if c}
    if clamped:
        warnings.warn(f"values outside the declared bounds were clamped: {clamped}", PrivacyWarning, stacklevel=2)
    x = np.clip(x, lo, hi)
    n, m = x.shape
    width = hi - lo
    eps_each = epsilon / m
    generator = check_rng(rng)
    if method == "record-noise":
        sensitivity = width
        noisy = np.column_stack([_mechanism(noise, eps_each, sensitivity[j], generator).randomise(x[:, j])
                                 for j in range(m)])
    else:
        if k is None:
            raise InvalidParameterError(f"method {method!r} needs k (the cluster size)", parameter="k")
        k = check_k(k, n)
        noisy = np.empty_like(x)
        if method == "insensitive-mdav":
            if k <= math.sqrt(n):
                warnings.warn(f"k = {k} <= sqrt(n) = {math.sqrt(n):.1f}: the centroids' sensitivity (n/k)·Δ/k is not "
                              "below a single record's Δ, so this adds no less noise than the baseline",
                              PrivacyWarning, stacklevel=2)
            group = consecutive_groups(insensitive_order((x - lo) / width), k)
            n_groups = int(group.max()) + 1
            sensitivity = n_groups * width / k
            sizes = np.bincount(group)
            for j in range(m):
                means = np.bincount(group, weights=x[:, j]) / sizes
                noisy[:, j] = _mechanism(noise, eps_each, sensitivity[j], generator).randomise(means)[group]
        else:  # ir-mdav
            sensitivity = width / k
            for j in range(m):
                group = consecutive_groups(np.argsort(x[:, j], kind="stable"), k)
                means = np.bincount(group, weights=x[:, j]) / np.bincount(group)
                noisy[:, j] = _mechanism(noise, eps_each, sensitivity[j], generator).randomise(means)[group]
    released = table.drop(columns=list(identifiers))
    for j, a in enumerate(attributes):
        released[a] = noisy[:, j]
    scale = {a: float(sensitivity[j] / eps_each) for j, a in enumerate(attributes)}
    return DPRelease(method, noise, epsilon, k, attributes, released, scale,
                     {a: float(sensitivity[j]) for j, a in enumerate(attributes)}, clamped, identifiers)


def _mechanism(noise: str, epsilon: float, sensitivity: float, rng):
    if noise == "laplace":
        return Laplace(epsilon=epsilon, sensitivity=sensitivity, rng=rng)
    return Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma="mean-abs", rng=rng)
