"""Population uniqueness estimated from a sample: how many records of the population are alone in
their QI combination, from the sample's frequency of frequencies (``c_j`` = number of sample classes
of size j; ``sizes``/``counts`` pairs) and the sampling fraction pi.

The population has N = n / pi records, n the sample size (ARX's ``ARXPopulationModel``). The models,
with ARX's ``RiskModelPopulationUniqueness`` as the reference implementation:

- **Pitman** (Hoshino 2001): the partition of the sample follows Pitman's sampling formula with
  parameters (theta, alpha), fitted by maximum likelihood (Newton on the score, from Hoshino's moment
  estimates as ARX starts); population uniques ~ Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha
  (Hoshino's large-N form, as ARX). When the likelihood is highest as alpha -> 0 the model is Ewens's
  (alpha = 0, Pitman's special case): theta is Ewens's MLE and the estimate its limit, theta (ARX's
  code has no such case, only alpha == 0 -> no estimate, so its figures may differ there).
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
  bracketed on a grid and bisected: no starting point to guess.
- **Dankar** et al. (2012)'s rule, as ARX's DANKAR: pi <= 0.1: Pitman (Zayatz if Pitman has no
  estimate); else the smaller of Zayatz and SNB (SNB on a tie; Zayatz if SNB has no estimate).

Degenerate samples have exact answers, the same for every model: no sample unique -> 0; every record
unique -> N (each model's limit: alpha -> 1, or beta -> 1 with K = N); pi = 1 -> c_1 (the sample is
the population). A model that has no estimate (its equations have no solution in its parameter space,
or the solver does not converge) reports ``uniques = nan`` and ``converged = False``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from microrelease.core.exceptions import InvalidParameterError

MODELS = ("pitman", "zayatz", "snb", "dankar")
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
    """Dankar et al. (2012)'s choice among Pitman, Zayatz and SNB, as ARX's DANKAR."""
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


def uniqueness_by_node(offsets, sizes, counts, sampling_fraction: float, *, model: str = "dankar") -> NodeUniqueness:
    """Estimated population uniques of many samples at once, vectorized over nodes.

    ``offsets[i]:offsets[i+1]`` are node i's (size, count) pairs in ``sizes``/``counts`` (the CSR layout
    of :class:`~microrelease.core.lattice.profile.LatticeProfile`). Each node's sample size n is
    sum(size * count) and its population N = n / ``sampling_fraction``.
    """
    if model not in MODELS:
        raise InvalidParameterError(f"The 'model' parameter must be one of {MODELS}. Got {model!r} instead.",
                                    parameter="model")
    fraction = _check_fraction(sampling_fraction)
    h = _Histograms(offsets, sizes, counts)
    population = h.n / fraction
    if model == "dankar":
        est, params = _dankar(h, fraction, population)
    else:
        est, params = _ESTIMATORS[model](h, fraction, population)
        est = (np.full(h.nodes, model), *est)
    names, uniques, converged = est
    # exact answers for degenerate samples override the model (see the module docstring)
    uniques = np.where(h.c1 == 0, 0.0, uniques)
    uniques = np.where((h.c1 > 0) & (h.c1 == h.n), population, uniques)
    if fraction == 1.0:
        uniques = h.c1.astype(float)
    converged = converged | (h.c1 == 0) | (h.c1 == h.n) | (fraction == 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(population > 0, uniques / population, 0.0)
    return NodeUniqueness(names, uniques, share, converged, population, h.c1.astype(np.int64), params)


def _check_fraction(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"The 'sampling_fraction' parameter must be a real number. Got {value!r} instead.")
    if not (math.isfinite(value) and 0 < value <= 1):
        raise InvalidParameterError(f"The 'sampling_fraction' parameter must be in (0, 1]. Got {value!r} instead.",
                                    parameter="sampling_fraction")
    return float(value)


class _Histograms:
    """Per-node n, u (classes), c_1, c_2 and the pairs with their node, from CSR arrays (validated)."""

    def __init__(self, offsets, sizes, counts):
        offsets, sizes, counts = (np.asarray(a) for a in (offsets, sizes, counts))
        for name, arr in (("offsets", offsets), ("sizes", sizes), ("counts", counts)):
            if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
                raise InvalidParameterError(f"The {name!r} parameter must be a 1-D array of integers. "
                                            f"Got dtype {arr.dtype}, shape {arr.shape} instead.", parameter=name)
        if len(offsets) < 2 or offsets[0] != 0 or offsets[-1] != len(sizes) or np.any(np.diff(offsets) < 0):
            raise InvalidParameterError("The 'offsets' parameter must rise from 0 to len(sizes) "
                                        f"({len(sizes)}). Got {offsets!r} instead.", parameter="offsets")
        if len(counts) != len(sizes):
            raise InvalidParameterError(f"The 'counts' parameter must have len(sizes) ({len(sizes)}) entries. "
                                        f"Got {len(counts)} instead.", parameter="counts")
        if np.any(sizes < 1):
            raise InvalidParameterError(f"The 'sizes' parameter must hold class sizes >= 1. Got {sizes.min()}.",
                                        parameter="sizes")
        if np.any(counts < 0):
            raise InvalidParameterError(f"The 'counts' parameter must hold counts >= 0. Got {counts.min()}.",
                                        parameter="counts")
        self.nodes = len(offsets) - 1
        self.node = np.repeat(np.arange(self.nodes), np.diff(offsets))
        self.sizes, self.counts = sizes.astype(float), counts.astype(float)
        self.n = self._sum(self.sizes * self.counts)
        self.u = self._sum(self.counts)
        self.c1 = self._sum(np.where(sizes == 1, self.counts, 0.0))
        self.c2 = self._sum(np.where(sizes == 2, self.counts, 0.0))

    def _sum(self, values, node=None):
        return np.bincount(self.node if node is None else node, weights=values, minlength=self.nodes)

    def regular(self):
        """Nodes that need a model: some sample uniques, not all records unique."""
        return (self.c1 > 0) & (self.c1 < self.n)


def _zayatz(h: _Histograms, fraction, population):
    with np.errstate(invalid="ignore", divide="ignore"):
        p_unique = h.c1 / h._sum(h.counts * _draw_one_ratio(h, fraction))
    uniques = h.c1 * p_unique / fraction
    return (uniques, np.isfinite(uniques)), {"p_unique": p_unique}


def _draw_one_ratio(h: _Histograms, fraction):
    """Per pair, h(j) / h(1): h(j) = j C(N - j, n - 1) / C(N, n), the hypergeometric chance that exactly
    one record of a population class of size j is drawn; h(j) / h(1) = j prod_{i<j} (N-n-i+1) / (N-i)."""
    values, inverse = np.unique(h.n, return_inverse=True)
    top = int(h.sizes.max()) if len(h.sizes) else 1
    j = np.arange(1, top + 1, dtype=float)
    if len(values) * top <= len(h.sizes):  # few sample sizes (no failing rows): one table per n
        table = np.empty((len(values), top))
        for row, n in enumerate(values):
            N = n / fraction
            with np.errstate(divide="ignore", invalid="ignore"):
                steps = np.log(np.maximum(N - n - j[:-1] + 1, 0) / (N - j[:-1]))
            table[row] = np.exp(np.log(j) + np.concatenate(([0.0], np.cumsum(steps))))
        return table[inverse[h.node], h.sizes.astype(np.int64) - 1]
    n, size = h.n[h.node], h.sizes
    N = n / fraction
    possible = N - n - size + 2 > 0  # else more than N - n records would stay out of the sample
    with np.errstate(invalid="ignore", divide="ignore"):
        log_ratio = (np.log(size) + lgamma(np.where(possible, N - size + 1, 1.0)) - lgamma(np.maximum(N, 1.0))
                     + lgamma(N - n + 1) - lgamma(np.where(possible, N - n - size + 2, 1.0)))
    return np.where(possible, np.exp(log_ratio), 0.0)


def _pitman(h: _Histograms, fraction, population, iterations=100):
    todo = np.flatnonzero(h.regular())
    n, u, c1, c2 = h.n[todo], h.u[todo], h.c1[todo], h.c2[todo]
    # Hoshino's moment estimates, ARX's starting point (c_2 = 0 taken as 1, as ARX)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = c1 * (c1 - 1) / np.maximum(c2, 1.0)
        t = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
        a = (t * (c1 - n) + (n - 1) * c1) / (n * u)
    start_bad = ~(np.isfinite(t) & np.isfinite(a) & (a > 0) & (a < 1) & (t > -a))
    a[start_bad], t[start_bad] = 0.5, 1.0
    psi_sum, zeta = _pitman_moments(h, todo)
    active, done = np.ones(len(todo), bool), np.zeros(len(todo), bool)
    for _ in range(iterations):
        idx = np.flatnonzero(active)
        if not len(idx):
            break
        (g_t, g_a), (h_tt, h_ta, h_aa) = _pitman_score(t[idx], a[idx], n[idx], u[idx], c1[idx], c2[idx],
                                                      psi_sum[idx], zeta[:, idx])
        det = h_tt * h_aa - h_ta * h_ta
        with np.errstate(invalid="ignore", divide="ignore"):
            dt, da = (h_aa * g_t - h_ta * g_a) / det, (h_tt * g_a - h_ta * g_t) / det
        lost = ~(np.isfinite(dt) & np.isfinite(da))
        dt, da = np.where(lost, 0.0, dt), np.where(lost, 0.0, da)
        step = np.ones(len(idx))
        for _ in range(60):  # halve the Newton step until it stays in the model (0 < a < 1, t > -a)
            nt, na = t[idx] - step * dt, a[idx] - step * da
            out = ~((na > 0) & (na < 1) & (nt > -na))
            if not out.any():
                break
            step[out] /= 2
        t[idx], a[idx] = nt, na
        # relative 1e-7: where the likelihood is flat (alpha small) the score carries ~1e-9 noise
        small = (np.abs(step * dt) <= 1e-7 * (1 + np.abs(nt))) & (np.abs(step * da) <= 1e-7 * na)
        done[idx[small & ~lost]] = True
        active[idx[small | lost]] = False
        # the likelihood rises towards a boundary: alpha -> 1 (estimate -> N), or alpha -> 0 (below)
        upper = na > 1 - 1e-9
        done[idx[upper]], active[idx[upper | (na < 1e-6)]] = True, False
    # alpha -> 0: Pitman's formula becomes Ewens's; if the likelihood falls with alpha at theta's Ewens MLE,
    # the maximum over 0 <= alpha < 1 is there, and Gamma(theta + 1) / Gamma(theta + alpha) N^alpha -> theta
    ewens = ~done & (a < 1e-6)
    t[ewens], a[ewens] = _ewens_theta(n[ewens], u[ewens]), 0.0
    slope = u * (u - 1) / (2 * t) - (c2 + _moments_at(psi_sum, zeta, 0.0)[0] + np.euler_gamma * (u - c1 - c2))
    done |= ewens & (slope <= 0)
    with np.errstate(invalid="ignore", over="ignore"):
        est = np.exp(lgamma(t + 1) - lgamma(t + a) + a * np.log(population[todo]))
    ok = done & np.isfinite(est) & (est >= 0) & (est <= population[todo])
    uniques, theta, alpha = (np.full(h.nodes, np.nan) for _ in range(3))
    uniques[todo[ok]], theta[todo], alpha[todo] = est[ok], t, a
    return (uniques, np.isfinite(uniques)), {"theta": theta, "alpha": alpha}


def _ewens_theta(n, u, bisections=100):
    """Ewens's MLE: the theta with (u - 1) / theta = sum_{i<n} 1 / (theta + i) (one root, 1 < u < n)."""
    lo, hi = np.full(len(n), -25.0), np.full(len(n), 35.0)  # log theta
    for _ in range(bisections):
        mid = (lo + hi) / 2
        theta = np.exp(mid)
        psi_n, psi_1 = digamma_trigamma(theta + n)[0], digamma_trigamma(theta + 1)[0]
        rising = (u - 1) / theta > psi_n - psi_1
        lo, hi = np.where(rising, mid, lo), np.where(rising, hi, mid)
    return np.exp((lo + hi) / 2)


# class sizes [lo, hi) and the Taylor terms that reach 1e-16 there: |a - 1/2| / (j - 1/2) < 1/5 for j >= 3
_TAYLOR_BANDS = ((3, 5, 22), (5, 8, 16), (8, 16, 13), (16, 32, 10), (32, 64, 8), (64, 128, 7), (128, 256, 6),
                 (256, 4096, 5), (4096, None, 4))


def _pitman_moments(h: _Histograms, todo):
    """Per node: sum_{j>=3} c_j psi(j - 1/2) and Z_k = sum_{j>=3} c_j zeta(k+1, j - 1/2), so that
    sum_{j>=3} c_j psi(j - a) = sum c_j psi(j - 1/2) - sum_k Z_k (a - 1/2)^k (Taylor series at a = 1/2,
    converging for |a - 1/2| < j - 1/2): a Newton step then costs O(nodes) instead of O(classes)."""
    pos = np.full(h.nodes, -1)
    pos[todo] = np.arange(len(todo))
    keep = (h.sizes >= 3) & (pos[h.node] >= 0)
    node, size, count = pos[h.node[keep]], h.sizes[keep].astype(np.int64), h.counts[keep]
    top = max(int(size.max()) if len(size) else 0, 64)
    inv = 1 / (np.arange(1, top + 1) - 0.5)  # 1 / (l - 1/2)
    psi = np.concatenate(([np.nan], np.cumsum(inv) - inv - np.euler_gamma - 2 * math.log(2)))  # psi(j - 1/2)
    x = top + 0.5
    zeta, power = np.zeros((_TAYLOR_BANDS[0][2] + 1, top + 1)), inv.copy()  # zeta[k, j] = zeta(k+1, j - 1/2)
    for k in range(1, len(zeta)):  # sum_{l=j}^{top} (l - 1/2)^-s + the Euler-Maclaurin tail, s = k + 1
        s_ = k + 1
        with np.errstate(under="ignore"):
            power = power * inv
            tail = x ** (1 - s_) / (s_ - 1) + x**-s_ / 2 + s_ * x ** (-s_ - 1) / 12 \
                - s_ * (s_ + 1) * (s_ + 2) * x ** (-s_ - 3) / 720
        zeta[k, 1:] = np.cumsum(power[::-1])[::-1] + tail
    z = np.zeros((len(zeta), len(todo)))
    for lo, hi, terms in _TAYLOR_BANDS:
        band = np.flatnonzero((size >= lo) & (size < hi if hi else True))
        if len(band):  # one gather per row of the table: each row stays in cache
            starts = band[np.flatnonzero(np.r_[True, node[band][1:] != node[band][:-1]])]
            sb, cb, rows = size[band], count[band], np.empty((terms, len(band)))
            for k in range(1, terms + 1):
                np.multiply(zeta[k].take(sb), cb, out=rows[k - 1])
            z[1:terms + 1, node[starts]] += np.add.reduceat(rows, np.searchsorted(band, starts), axis=1)
    psi_sum = np.bincount(node, weights=count * psi[size], minlength=len(todo))
    return psi_sum, z


def _moments_at(psi_sum, zeta, a):
    """sum_{j>=3} c_j psi(j - a) and sum_{j>=3} c_j psi'(j - a) from the moments (Horner in b = a - 1/2)."""
    b = np.asarray(a, dtype=float) - 0.5
    poly = slope = np.zeros(np.broadcast_shapes(b.shape, psi_sum.shape))
    for k in range(len(zeta) - 1, -1, -1):  # P(b) = sum_{k>=1} Z_k b^k and P'(b)
        slope = slope * b + poly
        poly = poly * b + (zeta[k] if k else 0.0)
    return psi_sum - poly, slope


def _pitman_score(t, a, n, u, c1, c2, psi_sum, zeta):
    """Score and Hessian of the log-likelihood of Pitman's sampling formula (Hoshino 2001),
    sum_{i<u} log(t + i a) - sum_{i<n} log(t + i) + sum_j c_j sum_{l<j} log(l - a), in closed form."""
    z = t / a
    dz, tz, r0, r1, r2 = _rising_sums(z, u)
    (pt1, tt1), (ptn, ttn) = digamma_trigamma(t + 1), digamma_trigamma(t + n)
    (pa1, ta1), (pa2, ta2) = digamma_trigamma(1 - a), digamma_trigamma(2 - a)
    psi_3, tri_3 = _moments_at(psi_sum, zeta, a)
    sum_psi, sum_tri = c2 * pa2 + psi_3, c2 * ta2 + tri_3  # sum_{j>=2} c_j psi(j - a), c_j psi'(j - a)
    classes_2 = u - c1  # classes of size >= 2
    g_t = dz / a - (ptn - pt1)
    g_a = r0 / a - (sum_psi - classes_2 * pa1)
    h_tt = -tz / a**2 + (tt1 - ttn)
    h_ta = -r1 / a**2
    h_aa = -r2 / a**2 - (classes_2 * ta1 - sum_tri)
    return (g_t, g_a), (h_tt, h_ta, h_aa)


def _rising_sums(z, u):
    """Over i = 1..u-1: sum 1/(z+i), 1/(z+i)^2, i/(z+i), i/(z+i)^2, i^2/(z+i)^2. By digammas; but when
    z >> u (alpha small) those cancel, and the series in i/z with Faulhaber's power sums is used."""
    (pz1, tz1), (pzu, tzu) = digamma_trigamma(z + 1), digamma_trigamma(z + u)
    dz, tz = pzu - pz1, tz1 - tzu
    sums = [dz, tz, (u - 1) - z * dz, dz - z * tz, (u - 1) - 2 * z * dz + z * z * tz]
    far = (u - 1) <= 1e-3 * z  # 5 terms leave (u / z)^5 <= 1e-15
    if far.any():
        m, zf = u[far] - 1, z[far]
        p = [m, m * (m + 1) / 2, m * (m + 1) * (2 * m + 1) / 6, (m * (m + 1) / 2) ** 2,
             m * (m + 1) * (2 * m + 1) * (3 * m * m + 3 * m - 1) / 30,
             m * m * (m + 1) ** 2 * (2 * m * m + 2 * m - 1) / 12,
             m * (m + 1) * (2 * m + 1) * (3 * m**4 + 6 * m**3 - 3 * m + 1) / 42]  # sum_i i^k, k = 0..6
        for out, (shift, square) in zip(sums, [(0, 0), (0, 1), (1, 0), (1, 1), (2, 1)], strict=True):
            # 1/(z+i) = sum_k (-i)^k / z^(k+1);  1/(z+i)^2 = sum_k (k+1) (-i)^k / z^(k+2)
            out[far] = sum((-1) ** k * (k + 1 if square else 1) * p[k + shift] / zf ** (k + 1 + square)
                           for k in range(5))
    return sums


def _snb(h: _Histograms, fraction, population, grid=61, bisections=56):
    q = 1 - fraction
    j, cnt = h.sizes.astype(np.int64), h.counts
    with np.errstate(invalid="ignore", divide="ignore", under="ignore"):
        # K, the population's classes: Haas et al. (1995)'s Sh3 (as ARX), powers from tables over the sizes
        q_pow = q ** np.arange(j.max() + 1 if len(j) else 1)
        r_pow = (1 - fraction**2) ** np.arange(j.max() + 1 if len(j) else 1)
        a_ = h._sum(cnt * j * fraction**2 * r_pow[j - 1])
        b_ = h._sum(cnt * (r_pow[j] - q_pow[j]))
        c_ = h._sum(cnt * q_pow[j])
        d_ = h._sum(cnt * j * fraction * q_pow[j - 1])
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


_ESTIMATORS = {"pitman": _pitman, "zayatz": _zayatz, "snb": _snb}


def _dankar(h: _Histograms, fraction, population):
    (zay, zay_ok), zp = _zayatz(h, fraction, population)
    if fraction <= DANKAR_SMALL_FRACTION:
        (pit, pit_ok), pp = _pitman(h, fraction, population)
        names = np.where(pit_ok, "pitman", "zayatz")
        return (names, np.where(pit_ok, pit, zay), pit_ok | zay_ok), {**pp, **zp}
    (sn, sn_ok), sp = _snb(h, fraction, population)
    use_zayatz = ~sn_ok | (zay < sn)
    names = np.where(use_zayatz, "zayatz", "snb")
    return (names, np.where(use_zayatz, zay, sn), np.where(use_zayatz, zay_ok, sn_ok)), {**sp, **zp}


# --- special functions, vectorized (numpy has no lgamma/digamma and scipy is not a dependency) ---

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def lgamma(x):
    """log Gamma(x) for x > 0: shift to x >= 10, then Stirling's series (error < 1e-14)."""
    x = np.array(x, dtype=float)
    shift = np.ones_like(x)
    for _ in range(10):
        small = x < 10
        if not small.any():
            break
        shift = np.where(small, shift * x, shift)
        x = np.where(small, x + 1, x)
    r2 = 1 / (x * x)
    series = (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 / 1188)))) / x
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + series - np.log(shift)


def digamma_trigamma(x):
    """(psi(x), psi'(x)) for x > 0: shift to x >= 10 by the recurrences, then asymptotic series."""
    x = np.array(x, dtype=float)
    psi, tri = np.zeros_like(x), np.zeros_like(x)
    for _ in range(10):
        small = x < 10
        if not small.any():
            break
        inv = np.where(small, 1 / np.where(small, x, 1), 0)
        psi -= inv
        tri += inv * inv
        x = np.where(small, x + 1, x)
    r, r2 = 1 / x, 1 / (x * x)
    psi += np.log(x) - r / 2 - r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 * (1 / 240 - r2 * (
        1 / 132 - r2 * 691 / 32760)))))
    tri += r + r2 / 2 + r * r2 * (1 / 6 - r2 * (1 / 30 - r2 * (1 / 42 - r2 * (1 / 30 - r2 * (
        5 / 66 - r2 * 691 / 2730)))))
    return psi, tri
