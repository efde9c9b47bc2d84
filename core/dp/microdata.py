"""Differentially private microdata through microaggregation (Soria-Comas, Domingo-Ferrer, Sánchez,
Martínez, VLDB Journal 2014; Sánchez et al. 2016).

Numeric attributes with *declared* domain bounds [lo_j, hi_j] (Δ_j = hi_j − lo_j); bounds taken
from the data would leak (the minimum and maximum are someone's values), so they must be given.
Values outside the bounds are clamped, counted and reported (with a warning). The budget ε is split
evenly over the m attributes (sequential composition); the records of one cluster share one noisy
value (parallel composition over disjoint clusters).

Methods, each record released as:

- ``record-noise`` (the baseline): its own values plus noise of sensitivity Δ_j and budget ε/m;
- ``fixed-order-blocks``: the noisy centroid of its block. Blocks of k consecutive records (the
  short tail joins the last block) along one data-independent total order: distance to the domain's
  lower corner in normalized units, ties by the values in attribute order. (The papers call their
  version *insensitive MDAV*; what runs here is sorting along that fixed order and cutting blocks of
  k, hence the name.) Changing one record moves it in that order, and every block between its old
  and new place loses one record and gains one: each centroid moves by at most Δ_j/k, over n/k
  blocks, so the centroids' sensitivity is (n/k)·Δ_j/k, and it helps only when that is below Δ_j,
  i.e. k > √n (a warning says so otherwise);
- ``ir-mdav``: per attribute, individual ranking (sort by that attribute, consecutive groups of k),
  the noisy group mean. In one dimension the shifts caused by changing one value are between
  neighbours in sorted order, so the changes of all group means telescope to at most Δ_j/k: the
  noise needs sensitivity Δ_j/k only.

What is released, and what is ε-DP (``DPRelease.guarantee`` says it in words):

- only the attributes, with noise; identifiers never; any other column only when named in ``keep``
  (then released as is, *without protection*, with a warning); the rest is not released (listed);
- rows in an order drawn from OS entropy, whatever ``rng``: the input's order would tell which
  released rows came from which input rows (two rows of one group are equal, say);
- ``record-noise`` and ``fixed-order-blocks``: the record-level file is ε-DP (how many records share
  a block is fixed by n and k, not by the data);
- ``ir-mdav`` on several attributes: which records share a group in *every* attribute depends on the
  data (A = (0, .1, .9, 1), B = (0, .9, .1, 1) give 4 distinct records, the neighbour with B = .05
  gives 2), and records sharing every group share every noisy value: a record-level file is not
  ε-DP. So by default each attribute's column is released in its own random order (records do not
  link attributes; each column is an ε/m-DP multiset, the file ε-DP). ``linked=True`` keeps records
  whole, with the weaker guarantee stated: each column is ε/m-DP as a multiset, the co-membership of
  records across attributes is released as is.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.dp.mechanisms import MECHANISMS, Laplace, Staircase, validate_epsilon
from microrelease.core.exceptions import DataError, InvalidParameterError, PrivacyWarning
from microrelease.core.micro.micro_loss import InformationLoss, information_loss
from microrelease.core.micro.microaggregation import consecutive_groups, numeric_matrix
from microrelease.core.validation import validate_k, validate_rng

DP_METHODS = {
    "record-noise": "noise on every record (the baseline)",
    "fixed-order-blocks": "noisy centroids of blocks of k along one data-independent order",
    "ir-mdav": "per attribute, noisy means of individually ranked groups",
}
RENAMED = {"insensitive-mdav": "fixed-order-blocks"}  # old name -> what it is called now (said in the error)
NOT_RELEASED_NOTE = "not released (name it in keep to release it without protection)"


def parse_bounds(text: str) -> dict[str, tuple[float, float]]:
    """'A=0:100,B=-5:5' -> {'A': (0, 100), 'B': (-5, 5)}.

    Parameters
    ----------
    text : str
        Comma-separated ``attribute=low:high`` pairs.

    Returns
    -------
    dict of str to tuple of float
        The bounds of each attribute.

    Raises
    ------
    InvalidParameterError
        If the text is malformed.

    Examples
    --------
    >>> parse_bounds("A=0:100,B=-5:5")
    {'A': (0.0, 100.0), 'B': (-5.0, 5.0)}
    """
    out: dict[str, tuple[float, float]] = {}
    for item in [t.strip() for t in str(text).split(",") if t.strip()]:
        name, sep, rng = item.partition("=")
        lo, sep2, hi = rng.partition(":")
        try:
            if not sep or not sep2:
                raise ValueError
            bound = (float(lo), float(hi))
        except ValueError:
            raise InvalidParameterError(f"each item of 'bounds' must be NAME=LO:HI; got {item!r}",
                                        parameter="bounds") from None
        name = name.strip()
        if name in out:  # the last would win silently
            raise InvalidParameterError(f"the bounds of {name!r} are given twice ({out[name][0]:g}:{out[name][1]:g} "
                                        f"and {rng.strip()}); bound each column once", parameter="bounds")
        out[name] = bound
    return out


def validate_bounds(attributes: Sequence[str], bounds: Mapping[str, tuple[float, float]] | None) -> np.ndarray:
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
    wide = [f"{a}={lo:g}:{hi:g}" for a, (lo, hi) in zip(attributes, out, strict=True)
            if not math.isfinite(float(hi) - float(lo))]
    if wide:  # the sensitivity, HI - LO, would be inf
        raise InvalidParameterError(f"the range of {', '.join(wide)} is too wide: HI - LO overflows a float",
                                    parameter="bounds")
    return out


def fixed_order(x_unit: np.ndarray) -> np.ndarray:
    """Records sorted by distance to the lower corner of the unit domain, ties by values in order."""
    distance = np.sqrt((x_unit**2).sum(axis=1))
    return np.lexsort([x_unit[:, j] for j in range(x_unit.shape[1] - 1, -1, -1)] + [distance])


@dataclass(frozen=True, eq=False)
class DPRelease:
    """A DP release of numeric ``attributes`` and how it was made. ``released`` holds the attributes
    with noise and the ``kept`` columns, rows in an order drawn from OS entropy (for unlinked
    IR-MDAV, each attribute's column in its own order); ``identifiers`` and ``not_released`` are the
    input columns left out. ``clamped`` counts input values outside the bounds (a statistic of the
    original: for the data steward, never in the publishable report).

    Parameters
    ----------
    method : str
        The DP method.
    noise : str
        The noise mechanism.
    epsilon : float
        The privacy budget ε.
    k : int or None
        The microaggregation's group size, if any.
    attributes : tuple of str
        The attributes released with noise.
    released : pandas.DataFrame
        The released table.
    noise_scale : dict of str to float
        The noise scale of each attribute.
    sensitivity : dict of str to float
        The sensitivity of each attribute.
    bounds : dict of str to (float, float), optional
        The declared bounds.
    clamped : dict of str to int, optional
        Values clamped to the bounds, per attribute.
    identifiers : tuple of str, optional
        The identifiers dropped.
    kept : tuple of str, optional
        Columns released as is.
    not_released : tuple of str, optional
        Columns not released.
    linked : bool, default True
        Whether a record's attributes stay on one row.
    seeded : bool, default False
        Whether the random source was seeded (not for a real release).
    loss : InformationLoss, optional
        The information loss of the release.
    """

    method: str
    noise: str  # the mechanism: a key of microrelease.core.dp.mechanisms.MECHANISMS
    epsilon: float
    k: int | None
    attributes: tuple[str, ...]
    released: pd.DataFrame
    noise_scale: dict[str, float]  # per attribute: Laplace scale, or the staircase's Δ/ε
    sensitivity: dict[str, float]
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    clamped: dict[str, int] = field(default_factory=dict)
    identifiers: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    not_released: tuple[str, ...] = ()
    linked: bool = True  # records keep their attributes together (False: unlinked IR-MDAV columns)
    seeded: bool = False
    # record by record against the input (computed before the rows were shuffled): the data steward's
    loss: InformationLoss | None = None

    @property
    def guarantee(self) -> str:
        """What the released file guarantees, in words (the report's claim)."""
        m, eps = len(self.attributes), self.epsilon
        each = eps / m
        if self.method == "ir-mdav" and m > 1 and self.linked:
            text = (f"each attribute's column is {each:g}-DP as a multiset (epsilon {eps:g} split over {m} "
                    "attributes; replace-one neighbours), but the records are linked: which records share a group "
                    f"in several attributes depends on the data and is released as is, so the record-level file "
                    f"is NOT {eps:g}-DP")
        elif self.method == "ir-mdav" and m > 1:
            text = (f"the file is {eps:g}-DP (replace-one neighbours, n fixed): each of the {m} attributes' columns "
                    f"is a {each:g}-DP multiset in its own random order, so records do not link attributes")
        else:
            text = (f"the file is {eps:g}-DP (replace-one neighbours, n fixed)"
                    + (f", {each:g} per attribute" if m > 1 else "") + "; rows in an order drawn from OS entropy")
        if self.kept:
            text += f"; {', '.join(self.kept)} released as is, without protection"
        if self.seeded:
            text += "; the noise was seeded: anyone who knows the seed can undo it"
        return text

    def to_dict(self) -> dict:
        """The publishable parameters: nothing computed from the original values."""
        return {"method": self.method, "noise": self.noise, "epsilon_spent": self.epsilon, "k": self.k,
                "guarantee": self.guarantee, "records_linked": self.linked, "seeded": self.seeded,
                "per_attribute": {a: {"bounds": list(self.bounds.get(a, ())), "sensitivity": self.sensitivity[a],
                                      "epsilon": self.epsilon / len(self.attributes),
                                      "noise_scale": self.noise_scale[a],
                                      # released values are multiples of it (see Snapped)
                                      "output_grid": snapping_grid(self.noise_scale[a])} for a in self.attributes},
                "released_without_protection": list(self.kept), "identifiers_dropped": list(self.identifiers),
                "not_released": list(self.not_released)}


def validate_named_columns(table: pd.DataFrame, **named: Sequence[str]) -> None:
    """DataError naming the parameter whose columns the table lacks."""
    for name, given in named.items():
        unknown = [c for c in given if c not in table.columns]
        if unknown:
            raise DataError(f"unknown column(s) {unknown} in '{name}'; the table has {list(table.columns)}",
                            parameter=name)


def _columns(table: pd.DataFrame, attributes: tuple[str, ...], identifiers: tuple[str, ...],
             keep: tuple[str, ...]) -> tuple[str, ...]:
    """The columns neither released with noise, nor kept, nor identifiers (refusing bad names)."""
    validate_named_columns(table, identifiers=identifiers, keep=keep)
    for name, given, other, why in (
            ("identifiers", identifiers, attributes, "released with noise and dropped"),
            ("keep", keep, attributes, "released with noise and released as is"),
            ("keep", keep, identifiers, "an identifier and released as is (identifiers are never released)")):
        both = [c for c in given if c in other]
        if both:
            raise InvalidParameterError(f"{both} given in '{name}' cannot be both {why}", parameter=name)
    return tuple(c for c in table.columns if c not in {*attributes, *identifiers, *keep})


def _validate_method(method: str) -> None:
    if method in RENAMED:
        raise InvalidParameterError(f"method {method!r} is now called {RENAMED[method]!r} (it sorts along one "
                                    "fixed order and cuts blocks of k)", parameter="method")
    if method not in DP_METHODS:
        raise InvalidParameterError(f"The 'method' parameter must be one of {sorted(DP_METHODS)}. Got {method!r}.",
                                    parameter="method")


def dp_release(
    table: pd.DataFrame,
    attributes: Sequence[str],
    *,
    bounds: Mapping[str, tuple[float, float]],
    epsilon: float,
    method: str = "fixed-order-blocks",
    k: int | None = None,
    noise: str = "laplace",
    identifiers: Sequence[str] = (),
    keep: Sequence[str] = (),
    linked: bool = False,
    rng=None,
) -> DPRelease:
    """Release ``attributes`` of ``table`` with ε-DP by ``method`` (see ``DP_METHODS`` and the
    module docstring for what is released). ``identifiers`` are never released; ``keep`` columns are
    released as is, without protection (with a warning); ``linked`` keeps IR-MDAV's records whole
    (not ε-DP as a file; warned). ``k`` is the cluster size of the microaggregation methods (refused
    for ``record-noise``). ``rng`` seeds the noise, for tests and teaching only: anyone who knows the
    seed can undo the protection; the row order is drawn from OS entropy whatever it is.

    Parameters
    ----------
    table : pandas.DataFrame
        The records.
    attributes : sequence of str
        The numeric attributes released with noise.
    bounds : mapping of str to (float, float)
        Declared bounds of each attribute (values outside are clamped).
    epsilon : float
        The privacy budget ε.
    method : str, default "fixed-order-blocks"
        A key of ``DP_METHODS``.
    k : int, optional
        The group size of the microaggregation-based methods.
    noise : str, default "laplace"
        A key of ``MECHANISMS``.
    identifiers : sequence of str, optional
        Columns never released.
    keep : sequence of str, optional
        Columns released as is, unprotected.
    linked : bool, default False
        Keep the attributes of a record on one row (IR-MDAV).
    rng : int or numpy.random.Generator, optional
        The random source.

    Returns
    -------
    DPRelease
        The released table and how it was made.

    Raises
    ------
    InvalidParameterError
        If a parameter is out of range.
    """
    _validate_method(method)
    if noise not in MECHANISMS:
        raise InvalidParameterError(f"The 'noise' parameter must be one of {sorted(MECHANISMS)}. Got {noise!r}.",
                                    parameter="noise")
    epsilon = validate_epsilon(epsilon)
    attributes, identifiers, keep = tuple(attributes), tuple(identifiers), tuple(keep)
    not_released = _columns(table, attributes, identifiers, keep)
    if method == "record-noise" and k is not None:
        raise InvalidParameterError(f"method 'record-noise' adds noise to every record and has no clusters: "
                                    f"k = {k!r} would be ignored (give no k, or a microaggregation method)",
                                    parameter="k")
    several = method == "ir-mdav" and len(attributes) > 1
    if linked and method != "ir-mdav":
        raise InvalidParameterError(f"'linked' is for ir-mdav on several attributes; {method!r} releases whole "
                                    "records with its guarantee", parameter="linked")
    if keep and method != "record-noise":
        # beside a group's or block's shared noisy value, a kept column shows who shares it with whom: which
        # records share a group depends on the protected values, so the attributes would no longer be ε-DP
        raise InvalidParameterError(f"kept columns {list(keep)} would show which records share a {method} group, "
                                    "which depends on the protected values; keep columns with record-noise only",
                                    parameter="keep")
    x = numeric_matrix(table, attributes, "attribute")
    b = validate_bounds(attributes, bounds)
    lo, hi = b[:, 0], b[:, 1]
    outside = (x < lo) | (x > hi)
    clamped = {a: int(c) for a, c in zip(attributes, outside.sum(axis=0), strict=True) if c}
    if clamped:
        warnings.warn(f"values outside the declared bounds were clamped: {clamped}", PrivacyWarning, stacklevel=2)
    if keep:
        warnings.warn(f"{list(keep)} released as is, without protection", PrivacyWarning, stacklevel=2)
    if several and linked:
        warnings.warn("ir-mdav with linked records: which records share a group in several attributes is released "
                      "as is, so the file is not epsilon-DP as a whole (each column is, as a multiset)",
                      PrivacyWarning, stacklevel=2)
    x = np.clip(x, lo, hi)
    try:
        noisy, sensitivity = _noisy(x, lo, hi, epsilon / x.shape[1], method, noise, k, validate_rng(rng))
    except InvalidParameterError as exc:  # the mechanism saw one attribute's share: say what the user gave
        if exc.parameter != "epsilon":
            raise
        raise InvalidParameterError(f"epsilon {epsilon!r} over {x.shape[1]} attribute(s) is {epsilon / x.shape[1]!r} "
                                    f"each: {exc}", parameter="epsilon") from None
    if method != "record-noise":
        k = validate_k(k, len(x))
    released = _released(table, attributes, noisy, keep, shuffle_each=several and not linked)
    try:
        loss = information_loss(table, pd.DataFrame(noisy, columns=list(attributes), index=table.index), attributes)
    except DataError:  # a constant column has no SST: the loss is undefined, the release must not depend on it
        loss = None
    scale = {a: float(sensitivity[j] / (epsilon / len(attributes))) for j, a in enumerate(attributes)}
    return DPRelease(method, noise, epsilon, k, attributes, released, scale,
                     {a: float(sensitivity[j]) for j, a in enumerate(attributes)},
                     {a: (float(lo[j]), float(hi[j])) for j, a in enumerate(attributes)}, clamped, identifiers, keep,
                     not_released, linked=not several or linked, seeded=rng is not None, loss=loss)


def _noisy(x: np.ndarray, lo: np.ndarray, hi: np.ndarray, eps_each: float, method: str, noise: str, k: int | None,
           generator: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(noisy values in the input's row order, sensitivity per attribute) of ``method``."""
    n, m = x.shape
    width = hi - lo
    if method == "record-noise":
        return np.column_stack([_mechanism(noise, eps_each, width[j], generator).randomise(x[:, j])
                                for j in range(m)]), width
    if k is None:
        raise InvalidParameterError(f"method {method!r} needs k (the cluster size)", parameter="k")
    k = validate_k(k, n)
    if noise == "staircase" and n // k > 1:
        # Laplace's density ratio grows with the shift, so the groups' shifts add up to the L1 sensitivity;
        # the staircase's drops by e^-ε at a step edge however small the shift: every group mean that moves
        # costs ε, and one record moves up to n/k of them
        raise InvalidParameterError(f"staircase noise with {method} and {n // k} groups would not be {eps_each * m:g}-DP "
                                    "(each group mean a record moves costs the whole budget under the staircase); "
                                    "use laplace noise, or the staircase with record-noise", parameter="noise")
    noisy = np.empty_like(x)
    if method == "fixed-order-blocks":
        if k <= math.sqrt(n):
            warnings.warn(f"k = {k} <= sqrt(n) = {math.sqrt(n):.1f}: the centroids' sensitivity (n/k)·Δ/k is not "
                          "below a single record's Δ, so this adds no less noise than the baseline",
                          PrivacyWarning, stacklevel=3)
        group = consecutive_groups(fixed_order((x - lo) / width), k)
        sensitivity = (int(group.max()) + 1) * width / k
        sizes = np.bincount(group)
        for j in range(m):
            means = np.bincount(group, weights=x[:, j]) / sizes
            noisy[:, j] = _mechanism(noise, eps_each, sensitivity[j], generator).randomise(means)[group]
        return noisy, sensitivity
    sensitivity = width / k  # ir-mdav
    for j in range(m):
        group = consecutive_groups(np.argsort(x[:, j], kind="stable"), k)
        means = np.bincount(group, weights=x[:, j]) / np.bincount(group)
        noisy[:, j] = _mechanism(noise, eps_each, sensitivity[j], generator).randomise(means)[group]
    return noisy, sensitivity


def _released(table: pd.DataFrame, attributes: tuple[str, ...], noisy: np.ndarray, keep: tuple[str, ...], *,
              shuffle_each: bool) -> pd.DataFrame:
    """The released frame: rows in an order drawn from OS entropy (``shuffle_each``: every attribute's
    column in an order of its own)."""
    entropy = np.random.default_rng()  # never the user's seed: with it, the order could be undone
    order = entropy.permutation(len(table))
    released = table[list(keep)].iloc[order].reset_index(drop=True)
    for j, a in enumerate(attributes):
        released[a] = noisy[entropy.permutation(len(table)) if shuffle_each else order, j]
    return released[[c for c in table.columns if c in released.columns]]


def _mechanism(noise: str, epsilon: float, sensitivity: float, rng):
    if noise == "laplace":
        return Snapped(Laplace(epsilon=epsilon, sensitivity=sensitivity, rng=rng))
    return Snapped(Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma="mean-abs", rng=rng))


def snapping_grid(scale: float) -> float:
    """Λ, the grid released values are rounded to: the smallest power of two >= the noise scale Δ/ε."""
    return float(2.0 ** math.ceil(math.log2(scale)))


class Snapped:
    """A mechanism whose outputs are rounded to its grid Λ (Mironov, "On significance of the least
    significant bits for differential privacy", CCS 2012). In floating point, value + noise is not
    the exact sum: which doubles can come out depends on the value, and a file holding them at full
    precision lets an attacker rule a neighbour out with certainty (ε = ∞). Rounded to a power of two
    no finer than the noise scale (exact in binary: a division, a rounding and a multiplication by
    powers of two), every grid point near the value can come out of either neighbour; what is left
    of the leak is the chance that a sum falls within a rounding error of a grid boundary (about
    2^-52 relative): negligible beside ε. The rounding adds at most Λ/2 ≤ Δ/ε of error."""

    def __init__(self, mechanism):
        self.mechanism = mechanism
        self.grid = snapping_grid(mechanism.sensitivity / mechanism.epsilon)

    def randomise(self, values):
        return np.round(np.asarray(self.mechanism.randomise(values), dtype=float) / self.grid) * self.grid
