"""Population uniqueness estimated from a sample: how many records of the population are alone in
their QI combination, from the sample's frequency of frequencies (``c_j`` = number of sample classes
of size j; ``sizes``/``counts`` pairs) and the sampling fraction pi.

The population has N = n / pi records, n the sample size (ARX's ``ARXPopulationModel``). The models,
with ARX's ``RiskModelPopulationUniqueness`` as the reference implementation:

- **Pitman** (Hoshino 2001): the partition of the sample follows Pitman's sampling formula with
  parameters (theta, alpha), fitted by maximum likelihood; population uniques ~ Gamma(theta + 1) /
  Gamma(theta + alpha) * N^alpha, or theta when the fit is Ewens's (alpha = 0). See
  ``pitman``.
- **Zayatz** (1991): the population's class sizes are taken to be distributed like the sample's; a
  sample unique comes from a population unique with probability
  P = c_1 h(1) / sum_j c_j h(j), h(j) the hypergeometric chance that one record of a population
  class of size j is drawn; population uniques = c_1 P / pi.
- **SNB** (Chen & Keller-McNulty 1998, slide negative binomial): population class sizes are
  1 + NegBin(alpha, beta) over K classes (K by Haas et al.'s Shlosser-type estimator Sh3), a sample
  class is binomial(F, pi); alpha and beta solve E[c_1] = c_1, E[c_2] = c_2; uniques = K beta^alpha.
  The second moment is E[c_2] = K pi^2 alpha beta^alpha (1-beta) (2 - (1-alpha) d) / (2 (1-d)^(alpha+2)),
  d = (1-pi)(1-beta) (derived from the model, checked against the mixture by brute force in the
  tests). ARX's code (commit f8518512) writes (1-d)^(alpha+2) as a factor, and sums
  ``(1-q)^i f_i (1+q)^i - 1`` in Sh3, where Haas et al. have ``(1-q)^i ((1+q)^i - 1) f_i``: we follow
  the papers. alpha is eliminated (E[c_2] / E[c_1] = c_2 / c_1 is a quadratic in alpha), and beta is
  bracketed on a grid, then bisected (Brent's method when compiled): no starting point to guess.
- **Dankar** et al. (2012)'s rule, as ARX's DANKAR: pi <= 0.1: Pitman (Zayatz if Pitman has no
  estimate); else the smaller of Zayatz and SNB (SNB on a tie; Zayatz if SNB has no estimate).

Degenerate samples have exact answers, the same for every model: no sample unique -> 0; every record
unique -> N (each model's limit: alpha -> 1, or beta -> 1 with K = N); pi = 1 -> c_1 (the sample is
the population). A model that has no estimate (its equations have no solution in its parameter space,
or the solver does not converge) reports ``uniques = nan`` and ``converged = False``.

Every node is estimated compiled, one node at a time (``uniqueness_kernels``);
the numpy path, vectorized over the nodes, is kept as its oracle and as the path that compiles nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.risk.histograms import (
    NodeHistograms,
    draw_one_ratio,
    draw_one_table,
    node_totals,
    power_tables,
    snb_classes,
    validate_histograms,
    zayatz_sums,
)
from microrelease.core.risk.pitman import fit_pitman, fit_pitman_compiled
from microrelease.core.risk.uniqueness_kernels import snb_solve
from microrelease.core.validation import validate_sampling_fraction

MODELS = ("pitman", "zayatz", "snb", "dankar")
STRATEGIES = ("numba", "numpy")
DANKAR_SMALL_FRACTION = 0.1  # Dankar et al.: Pitman up to this sampling fraction


@dataclass(frozen=True)
class UniquenessEstimate:
    """Estimated population uniques of one sample.

    model : the model of this estimate (for ``"dankar"``, the model its rule chose).
    uniques : estimated number of population records unique in their QI combination (nan: none).
    share : ``uniques / population_size``, ARX's "fraction of unique tuples".
    converged : whether the model has an estimate (its solver converged inside its parameter space).
    parameters : the fitted parameters (pitman: theta, alpha; snb: alpha, beta, classes K;
        zayatz: p_unique = P(population unique | sample unique)).
    """

    model: str
    uniques: float
    share: float
    converged: bool
    population_size: float
    sample_uniques: int
    parameters: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True, eq=False)
class NodeUniqueness:
    """The same figures for many histograms at once (arrays indexed by node)."""

    model: np.ndarray
    uniques: np.ndarray
    share: np.ndarray
    converged: np.ndarray
    population_size: np.ndarray
    sample_uniques: np.ndarray
    parameters: dict = field(default_factory=dict)


def pitman(sizes, counts, sampling_fraction: float) -> UniquenessEstimate:
    """Pitman model (Hoshino 2001) for one sample's frequency of frequencies (``sizes``, ``counts``)."""
    return _one("pitman", sizes, counts, sampling_fraction)


def zayatz(sizes, counts, sampling_fraction: float) -> UniquenessEstimate:
    """Zayatz (1991)'s estimate for one sample's frequency of frequencies."""
    return _one("zayatz", sizes, counts, sampling_fraction)


def snb(sizes, counts, sampling_fraction: float) -> UniquenessEstimate:
    """Slide negative binomial model (Chen & Keller-McNulty 1998) for one sample."""
    return _one("snb", sizes, counts, sampling_fraction)


def dankar(sizes, counts, sampling_fraction: float) -> UniquenessEstimate:
    """Dankar et al. (2012)'s choice among Pitman, Zayatz and SNB, as ARX's DANKAR.

    Parameters
    ----------
    sizes : numpy.ndarray
        The class sizes of the sample's histogram.
    counts : numpy.ndarray
        How many classes have each size.
    sampling_fraction : float
        The sample's share of the population.

    Returns
    -------
    UniquenessEstimate
        The estimate and the model chosen.
    """
    return _one("dankar", sizes, counts, sampling_fraction)


def _one(model, sizes, counts, sampling_fraction) -> UniquenessEstimate:
    sizes, counts = np.atleast_1d(np.asarray(sizes)), np.atleast_1d(np.asarray(counts))
    if sizes.ndim != 1 or sizes.shape != counts.shape:
        raise InvalidParameterError(f"The 'counts' parameter must have the shape of 'sizes' {sizes.shape}. "
                                    f"Got {counts.shape} instead.", parameter="counts")
    res = uniqueness_by_node(np.array([0, len(sizes)]), sizes, counts, sampling_fraction, model=model)
    return UniquenessEstimate(str(res.model[0]), float(res.uniques[0]), float(res.share[0]), bool(res.converged[0]),
                              float(res.population_size[0]), int(res.sample_uniques[0]),
                              {k: float(v[0]) for k, v in res.parameters.items()})


def uniqueness_by_node(offsets, sizes, counts, sampling_fraction: float, *, model: str = "dankar",
                       strategy: str = "numba") -> NodeUniqueness:
    """Estimated population uniques of many samples at once, vectorized over nodes.

    ``offsets[i]:offsets[i+1]`` are node i's (size, count) pairs in ``sizes``/``counts`` (the CSR layout
    of ``LatticeProfile``). Each node's sample size n is
    sum(size * count) and its population N = n / ``sampling_fraction``. ``strategy``: ``"numba"``
    (compiled, ``uniqueness_kernels``) or ``"numpy"`` (vectorized over the
    nodes; the same steps, kept as the tests' oracle and as the path that compiles nothing).

    Parameters
    ----------
    offsets : numpy.ndarray
        Where each node's pairs start in ``sizes``/``counts``.
    sizes : numpy.ndarray
        Class sizes.
    counts : numpy.ndarray
        How many classes have each size.
    sampling_fraction : float
        The sample's share of the population.
    model : str, default "dankar"
        A key of ``MODELS``.
    strategy : str, default "numba"
        The implementation.

    Returns
    -------
    NodeUniqueness
        The estimate for every node.
    """
    if model not in MODELS:
        raise InvalidParameterError(f"The 'model' parameter must be one of {MODELS}. Got {model!r} instead.",
                                    parameter="model")
    if strategy not in STRATEGIES:
        raise InvalidParameterError(f"The 'strategy' parameter must be one of {STRATEGIES}. Got {strategy!r} "
                                    "instead.", parameter="strategy")
    fraction = validate_sampling_fraction(sampling_fraction)
    if strategy == "numba":
        offsets, sizes, counts = validate_histograms(offsets, sizes, counts)
        c1, n, estimate = _compiled(offsets, sizes, counts, fraction)
    else:
        h = NodeHistograms(offsets, sizes, counts)
        c1, n = h.c1, h.n
        estimate = {name: partial(fn, h, fraction, h.n / fraction) for name, fn in _ESTIMATORS.items()}
    population = n / fraction
    if model == "dankar":
        est, params = _dankar(estimate, fraction)
    else:
        est, params = estimate[model]()
        est = (np.full(len(n), model), *est)
    names, uniques, converged = est
    # exact answers for degenerate samples override the model (see the module docstring)
    uniques = np.where(c1 == 0, 0.0, uniques)
    uniques = np.where((c1 > 0) & (c1 == n), population, uniques)
    if fraction == 1.0:
        uniques = c1.astype(float)
    converged = converged | (c1 == 0) | (c1 == n) | (fraction == 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(population > 0, uniques / population, 0.0)
    return NodeUniqueness(names, uniques, share, converged, population, c1.astype(np.int64), params)


def _zayatz(h: NodeHistograms, fraction, population):
    with np.errstate(invalid="ignore", divide="ignore"):
        p_unique = h.c1 / h.per_node(h.counts * draw_one_ratio(h, fraction))
    uniques = h.c1 * p_unique / fraction
    return (uniques, np.isfinite(uniques)), {"p_unique": p_unique}


def _snb(h: NodeHistograms, fraction, population, grid=61, bisections=56):
    j, cnt = h.sizes.astype(np.int64), h.counts
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        # K, the population's classes: Haas et al. (1995)'s Sh3 (as ARX), powers from tables over the sizes
        q_pow, r_pow = power_tables(fraction, j)
        a_ = h.per_node(cnt * j * fraction**2 * r_pow[j - 1])
        b_ = h.per_node(cnt * (r_pow[j] - q_pow[j]))
        c_ = h.per_node(cnt * q_pow[j])
        d_ = h.per_node(cnt * j * fraction * q_pow[j - 1])
        classes = h.u + h.c1 * (a_ / b_) * (c_ / d_) ** 2
    todo = np.flatnonzero(h.regular() & (h.c2 > 0) & np.isfinite(classes))
    K, c1, ratio = classes[todo], h.c1[todo], h.c2[todo] / h.c1[todo]

    xs = np.linspace(-30, 30, grid)  # logit(beta)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        vals = _snb_excess(xs[None, :], fraction, K[:, None], c1[:, None], ratio[:, None])[0]
    # bracket the root of largest beta (E[c_1] rises from 0 as beta leaves 0), then bisect
    change = (vals[:, :-1] < 0) & (vals[:, 1:] >= 0)
    has = change.any(axis=1)
    last = grid - 2 - np.argmax(change[:, ::-1], axis=1)
    lo, hi = xs[last], xs[last + 1]
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for _ in range(bisections):
            mid = (lo + hi) / 2
            below = _snb_excess(mid, fraction, K, c1, ratio)[0] < 0
            lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
        _, alpha, log_b = _snb_excess((lo + hi) / 2, fraction, K, c1, ratio)
        est = K * np.exp(alpha * log_b)
    uniques, al, be = (np.full(h.nodes, np.nan) for _ in range(3))
    ok = has & np.isfinite(est)
    uniques[todo[ok]], al[todo], be[todo] = est[ok], alpha, np.exp(log_b)
    return (uniques, np.isfinite(uniques)), {"alpha": al, "beta": be, "classes": classes}


def _snb_excess(x, fraction, K, c1, ratio):
    """log E[c_1] - log c_1 at beta = expit(x), with the alpha > 0 that makes E[c_2] / E[c_1] = c_2 / c_1
    (a quadratic in alpha with one positive root); also returns alpha and log beta."""
    log_b, one_minus_b = -np.log1p(np.exp(-x)), 1 / (1 + np.exp(x))
    d = (1 - fraction) * one_minus_b
    s = 1 - d
    a2, a0 = fraction * one_minus_b * d, 2 * ratio * s * s
    a1 = fraction * one_minus_b * (2 - d) - 2 * ratio * s * d
    disc = np.sqrt(a1 * a1 + 4 * a2 * a0)
    alpha = np.where(a1 >= 0, 2 * a0 / (a1 + disc), (disc - a1) / np.maximum(2 * a2, 1e-300))
    excess = np.log(K * fraction) + alpha * (log_b - np.log1p(-d)) + np.log1p(alpha * d / s) - np.log(c1)
    return excess, alpha, log_b


_ESTIMATORS = {"pitman": fit_pitman, "zayatz": _zayatz, "snb": _snb}


def _dankar(estimate, fraction):
    """Dankar et al.'s rule over ``estimate[model]()``, each ((uniques, converged), parameters)."""
    (zay, zay_ok), zp = estimate["zayatz"]()
    if fraction <= DANKAR_SMALL_FRACTION:
        (pit, pit_ok), pp = estimate["pitman"]()
        names = np.where(pit_ok, "pitman", "zayatz")
        return (names, np.where(pit_ok, pit, zay), pit_ok | zay_ok), {**pp, **zp}
    (sn, sn_ok), sp = estimate["snb"]()
    use_zayatz = ~sn_ok | (zay < sn)
    names = np.where(use_zayatz, "zayatz", "snb")
    return (names, np.where(use_zayatz, zay, sn), np.where(use_zayatz, zay_ok, sn_ok)), {**sp, **zp}


def _compiled(offsets, sizes, counts, fraction, grid=61, steps=100):
    """The numba path: (c_1, n, each model's estimator), the numpy path's tables and steps."""
    n, u, c1, c2 = node_totals(offsets, sizes, counts)
    regular = (c1 > 0) & (c1 < n)

    def zayatz():
        table, row = draw_one_table(n, fraction, sizes)
        total = zayatz_sums(offsets, sizes, counts, n, c1, fraction, table, row)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_unique = c1 / total
        uniques = c1 * p_unique / fraction
        return (uniques, np.isfinite(uniques)), {"p_unique": p_unique}

    def snb():
        classes = snb_classes(offsets, sizes, counts, u, c1, fraction, *power_tables(fraction, sizes))
        todo = np.flatnonzero(regular & (c2 > 0) & np.isfinite(classes))
        found = snb_solve(todo, classes, c1, c2, fraction, np.linspace(-30, 30, grid), steps)
        uniques, alpha, beta = (np.full(len(n), np.nan) for _ in range(3))
        uniques[todo], alpha[todo], beta[todo] = found
        return (uniques, np.isfinite(uniques)), {"alpha": alpha, "beta": beta, "classes": classes}

    def pitman():
        todo = np.flatnonzero(regular)
        return fit_pitman_compiled(offsets, sizes, counts, (n, u, c1, c2), todo, n / fraction)

    return c1, n, {"zayatz": zayatz, "snb": snb, "pitman": pitman}
