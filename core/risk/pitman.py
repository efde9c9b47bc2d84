"""The Pitman model of population uniqueness (Hoshino 2001), fitted for many samples at once.

The partition of the sample follows Pitman's sampling formula with parameters (theta, alpha), fitted
by maximum likelihood (Newton on the score, from Hoshino's moment estimates as ARX starts); population
uniques ~ Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha (Hoshino's large-N form, as ARX's
``ModelPitman``). When the likelihood is highest as alpha -> 0 the model is Ewens's (alpha = 0,
Pitman's special case): theta is Ewens's MLE and the estimate its limit, theta (ARX's code has no such
case, only alpha == 0 -> no estimate, so its figures may differ there). The score's sums over classes
are expanded once per node (``_pitman_moments``), so that a Newton step costs O(nodes).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from microrelease.core.risk.histograms import NodeHistograms
from microrelease.core.risk.special_functions import digamma_trigamma, lgamma, rising_sums
from microrelease.core.risk.uniqueness_kernels import pitman_fit


def fit_pitman(h: NodeHistograms, fraction, population, iterations=100):
    """Pitman's estimate of population uniques for every node of ``h`` (population: N per node):
    ((uniques, converged), {"theta", "alpha"}), uniques nan where the fit has no estimate."""
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


def fit_pitman_compiled(offsets, sizes, counts, totals, todo, population, iterations=100):
    """``fit_pitman`` compiled (``pitman_fit``), for the
    nodes ``todo`` of int64 CSR histograms with ``totals`` = (n, u, c_1, c_2) per node."""
    largest = int(sizes.max()) if len(sizes) else 0
    psi, _, band = taylor_tables(largest)
    terms = np.array([t for _, _, t in _TAYLOR_BANDS])
    found = pitman_fit(todo, offsets, sizes, counts, *totals, population, psi, _transposed(largest), band, terms,
                       iterations)
    uniques, theta, alpha = (np.full(len(population), np.nan) for _ in range(3))
    uniques[todo], theta[todo], alpha[todo] = found
    return (uniques, np.isfinite(uniques)), {"theta": theta, "alpha": alpha}


@lru_cache(maxsize=4)
def _transposed(largest: int):
    """zeta(k+1, j - 1/2) with a row per class size j: the terms one class needs, side by side."""
    return np.ascontiguousarray(taylor_tables(largest)[1].T)


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


def _pitman_moments(h: NodeHistograms, todo):
    """Per node: sum_{j>=3} c_j psi(j - 1/2) and Z_k = sum_{j>=3} c_j zeta(k+1, j - 1/2), so that
    sum_{j>=3} c_j psi(j - a) = sum c_j psi(j - 1/2) - sum_k Z_k (a - 1/2)^k (Taylor series at a = 1/2,
    converging for |a - 1/2| < j - 1/2): a Newton step then costs O(nodes) instead of O(classes)."""
    pos = np.full(h.nodes, -1)
    pos[todo] = np.arange(len(todo))
    keep = (h.sizes >= 3) & (pos[h.node] >= 0)
    node, size, count = pos[h.node[keep]], h.sizes[keep].astype(np.int64), h.counts[keep]
    psi, zeta, _ = taylor_tables(int(size.max()) if len(size) else 0)
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


@lru_cache(maxsize=4)
def taylor_tables(largest: int):
    """For class sizes j up to ``largest`` (at least 64): psi(j - 1/2), zeta(k+1, j - 1/2) (row k, column j;
    row 0 zero) and each size's band in ``_TAYLOR_BANDS`` (-1 below 3). Read-only."""
    top = max(largest, 64)
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
    band = np.full(top + 1, -1, dtype=np.int64)
    for b, (lo, hi, _) in enumerate(_TAYLOR_BANDS):
        band[lo:hi] = b
    for table in (psi, zeta, band):
        table.flags.writeable = False
    return psi, zeta, band


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
    dz, tz, r0, r1, r2 = rising_sums(z, u)
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


