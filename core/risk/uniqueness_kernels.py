"""Compiled solvers of population uniqueness (numba): SNB's root and Pitman's fit of
``uniqueness``, node by node, each node's solver a scalar loop (no pass over
every node for each step of the slowest one). What the models read of each node's pairs is summed,
compiled, in ``histograms`` (``node_totals``, ``zayatz_sums``,
``snb_classes``) and, for Pitman's Taylor moments, in ``pitman_fit``.

The steps, constants and tolerances are those of the numpy path (``strategy="numpy"``, the tests'
oracle: ``_zayatz``, ``_snb``,
``fit_pitman``), and the tables they read (hypergeometric chances,
powers, Taylor moments) are built by the same numpy code and summed in the same order. One step
differs: SNB's root is found by Brent's method (about 5 steps) instead of 56 bisections: the same root,
but where the excess is flat (tiny fractions) the two stop at different points of its last digits.
On the adult lattice the estimates agree to 4e-12 (Pitman), exactly (Zayatz), 5e-10 (SNB at
pi = 0.001; 2e-13 at 0.1).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from microrelease.core.risk.special_functions import digamma_trigamma_one, lgamma_one, rising_sums_one

_EULER_GAMMA = float(np.euler_gamma)
_BISECTIONS = 56  # the numpy path's, for SNB (uniqueness._snb)


# --- SNB ---

@nb.njit(cache=True, nogil=True, error_model="numpy")
def _snb_at(log_b, one_minus_b, d, log1p_minus_d, fraction, log_kf, log_c1, ratio):
    """(log E[c_1] - log c_1, alpha) at one beta, as ``_snb_excess``."""
    s = 1 - d
    a2, a0 = fraction * one_minus_b * d, 2 * ratio * s * s
    a1 = fraction * one_minus_b * (2 - d) - 2 * ratio * s * d
    disc = math.sqrt(a1 * a1 + 4 * a2 * a0)
    alpha = 2 * a0 / (a1 + disc) if a1 >= 0 else (disc - a1) / max(2 * a2, 1e-300)
    return log_kf + alpha * (log_b - log1p_minus_d) + math.log1p(alpha * d / s) - log_c1, alpha


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _snb_root(x_pre, x_cur, f_pre, f_cur, fraction, log_kf, log_c1, ratio, steps):
    """The root in [x_pre, x_cur] (f_pre < 0 <= f_cur) to about 4 units in the last place, as the numpy
    path's 56 bisections find it, in 5 steps on a median node: Brent's method (scipy's ``brentq``:
    inverse quadratic or secant steps while they shrink the bracket fast enough, else bisection)."""
    x_blk, f_blk, s_pre, s_cur = 0.0, 0.0, 0.0, 0.0
    for _ in range(steps):
        if f_pre != 0 and f_cur != 0 and (f_pre < 0) != (f_cur < 0):
            x_blk, f_blk = x_pre, f_pre
            s_pre = s_cur = x_cur - x_pre
        if abs(f_blk) < abs(f_cur):
            x_pre, x_cur, x_blk = x_cur, x_blk, x_cur
            f_pre, f_cur, f_blk = f_cur, f_blk, f_cur
        delta = (4.5e-16 + 8.9e-16 * abs(x_cur)) / 2
        s_bis = (x_blk - x_cur) / 2
        if f_cur == 0 or abs(s_bis) < delta:
            break
        if abs(s_pre) > delta and abs(f_cur) < abs(f_pre):
            if x_pre == x_blk:  # secant
                s_try = -f_cur * (x_cur - x_pre) / (f_cur - f_pre)
            else:  # inverse quadratic
                d_pre, d_blk = (f_pre - f_cur) / (x_pre - x_cur), (f_blk - f_cur) / (x_blk - x_cur)
                s_try = -f_cur * (f_blk * d_blk - f_pre * d_pre) / (d_blk * d_pre * (f_blk - f_pre))
            if 2 * abs(s_try) < min(abs(s_pre), 3 * abs(s_bis) - delta):
                s_pre, s_cur = s_cur, s_try
            else:
                s_pre = s_cur = s_bis
        else:
            s_pre = s_cur = s_bis
        x_pre, f_pre = x_cur, f_cur
        x_cur += s_cur if abs(s_cur) > delta else (delta if s_bis > 0 else -delta)
        b = _snb_beta(x_cur, fraction)
        f_cur = _snb_at(b[0], b[1], b[2], b[3], fraction, log_kf, log_c1, ratio)[0]
        if math.isnan(f_cur):  # above the root, as the bisections take it
            f_cur = math.inf
    return x_cur


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _snb_beta(x, fraction):
    """log beta, 1 - beta, d = (1 - pi)(1 - beta) and log(1 - d) at beta = expit(x)."""
    log_b, one_minus_b = -math.log1p(math.exp(-x)), 1 / (1 + math.exp(x))
    d = (1 - fraction) * one_minus_b
    return log_b, one_minus_b, d, math.log1p(-d)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def snb_solve(todo, classes, c1, c2, fraction, xs, steps):
    """For nodes ``todo``: (uniques, alpha, beta). The root of largest beta: the last sign change on the
    grid ``xs`` of logit(beta) (scanned from the top, stopping there), then found in at most ``steps``
    steps (``_snb_root``); uniques nan where the grid has no sign change or the estimate is not
    finite."""
    grid = len(xs)
    at = np.empty((grid, 4))  # the grid's betas are the same for every node
    for g in range(grid):
        at[g] = _snb_beta(xs[g], fraction)
    uniques, alphas, betas = np.full(len(todo), np.nan), np.empty(len(todo)), np.empty(len(todo))
    for r in range(len(todo)):
        i = todo[r]
        log_kf, log_c1, ratio = math.log(classes[i] * fraction), math.log(c1[i]), c2[i] / c1[i]
        last, upper = -1, _snb_at(at[grid - 1, 0], at[grid - 1, 1], at[grid - 1, 2], at[grid - 1, 3],
                                  fraction, log_kf, log_c1, ratio)[0]
        for g in range(grid - 2, -1, -1):
            value = _snb_at(at[g, 0], at[g, 1], at[g, 2], at[g, 3], fraction, log_kf, log_c1, ratio)[0]
            if value < 0 and upper >= 0:
                last = g
                break
            upper = value
        g = last if last >= 0 else grid - 2  # no sign change: the top interval, as the numpy path
        lo, hi = xs[g], xs[g + 1]
        if last >= 0:
            x = _snb_root(lo, hi, value, upper, fraction, log_kf, log_c1, ratio, steps)
        else:  # no root: alpha and beta where the numpy path's bisections stop, reported all the same
            for _ in range(_BISECTIONS):
                mid = (lo + hi) / 2
                b = _snb_beta(mid, fraction)
                if _snb_at(b[0], b[1], b[2], b[3], fraction, log_kf, log_c1, ratio)[0] < 0:
                    lo = mid
                else:
                    hi = mid
            x = (lo + hi) / 2
        b = _snb_beta(x, fraction)
        alpha = _snb_at(b[0], b[1], b[2], b[3], fraction, log_kf, log_c1, ratio)[1]
        est = classes[i] * math.exp(alpha * b[0])
        if last >= 0 and math.isfinite(est):
            uniques[r] = est
        alphas[r], betas[r] = alpha, math.exp(b[0])
    return uniques, alphas, betas


# --- Pitman ---

@nb.njit(cache=True, nogil=True, error_model="numpy")
def pitman_fit(todo, offsets, sizes, counts, n, u, c1, c2, population, psi, zeta_t, band, terms, iterations):
    """For nodes ``todo``: (uniques, theta, alpha), as ``fit_pitman``: each node's Taylor
    moments from its pairs (``psi`` = psi(j - 1/2), ``zeta_t[j, k]`` = zeta(k+1, j - 1/2), ``terms[b]`` of
    them for sizes in band ``band[j]``), then Newton from Hoshino's moment estimates, the Ewens boundary,
    and Hoshino's estimate."""
    z, part = np.zeros(zeta_t.shape[1]), np.zeros((len(terms), zeta_t.shape[1]))
    uniques, thetas, alphas = np.full(len(todo), np.nan), np.empty(len(todo)), np.empty(len(todo))
    for r in range(len(todo)):
        i = todo[r]
        part[:] = 0.0
        psi_sum = 0.0
        for p in range(offsets[i], offsets[i + 1]):
            size = sizes[p]
            if size >= 3:
                cnt, b = float(counts[p]), band[size]
                psi_sum += cnt * psi[size]
                for k in range(1, terms[b] + 1):
                    part[b, k] += zeta_t[size, k] * cnt
        z[:] = 0.0
        for b in range(len(terms)):  # band by band, as the numpy path sums them: the same last digits
            for k in range(1, terms[b] + 1):
                z[k] += part[b, k]
        t, a, done = _pitman_newton(n[i], u[i], c1[i], c2[i], psi_sum, z, iterations)
        if not done and a < 1e-6:  # Pitman's formula becomes Ewens's (see fit_pitman)
            t, a = _ewens_theta(n[i], u[i]), 0.0
            slope = u[i] * (u[i] - 1) / (2 * t) - (c2[i] + _moments_at(psi_sum, z, 0.0)[0]
                                                   + _EULER_GAMMA * (u[i] - c1[i] - c2[i]))
            done = slope <= 0
        est = math.exp(lgamma_one(t + 1) - lgamma_one(t + a) + a * math.log(population[i]))
        if done and math.isfinite(est) and 0 <= est <= population[i]:
            uniques[r] = est
        thetas[r], alphas[r] = t, a
    return uniques, thetas, alphas


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _pitman_newton(n, u, c1, c2, psi_sum, z, iterations):
    """(theta, alpha, done): Newton on the score, each step halved until it stays in the model."""
    c = c1 * (c1 - 1) / max(c2, 1.0)  # Hoshino's moment estimates (c_2 = 0 taken as 1, as ARX)
    t = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c)
    a = (t * (c1 - n) + (n - 1) * c1) / (n * u)
    if not (math.isfinite(t) and math.isfinite(a) and 0 < a < 1 and t > -a):
        t, a = 1.0, 0.5
    for _ in range(iterations):
        g_t, g_a, h_tt, h_ta, h_aa = _pitman_score(t, a, n, u, c1, c2, psi_sum, z)
        det = h_tt * h_aa - h_ta * h_ta
        dt, da = (h_aa * g_t - h_ta * g_a) / det, (h_tt * g_a - h_ta * g_t) / det
        lost = not (math.isfinite(dt) and math.isfinite(da))
        if lost:
            dt, da = 0.0, 0.0
        step = 1.0
        for _ in range(60):
            nt, na = t - step * dt, a - step * da
            if 0 < na < 1 and nt > -na:
                break
            step /= 2
        t, a = nt, na
        small = abs(step * dt) <= 1e-7 * (1 + abs(nt)) and abs(step * da) <= 1e-7 * na
        if na > 1 - 1e-9:  # alpha -> 1: the estimate -> N
            return t, a, True
        if small or lost or na < 1e-6:
            return t, a, small and not lost
    return t, a, False


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _ewens_theta(n, u):
    """Ewens's MLE of theta, as pitman._ewens_theta."""
    lo, hi = -25.0, 35.0  # log theta, bisected as pitman._ewens_theta
    for _ in range(100):
        mid = (lo + hi) / 2
        theta = math.exp(mid)
        if (u - 1) / theta > digamma_trigamma_one(theta + n)[0] - digamma_trigamma_one(theta + 1)[0]:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _moments_at(psi_sum, z, a):
    """As pitman._moments_at, for one node."""
    b = a - 0.5
    poly, slope = 0.0, 0.0
    for k in range(len(z) - 1, -1, -1):
        slope = slope * b + poly
        poly = poly * b + (z[k] if k else 0.0)
    return psi_sum - poly, slope


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _pitman_score(t, a, n, u, c1, c2, psi_sum, z):
    """As pitman._pitman_score: (g_t, g_a, h_tt, h_ta, h_aa)."""
    dz, tz, r0, r1, r2 = rising_sums_one(t / a, u)
    pt1, tt1 = digamma_trigamma_one(t + 1)
    ptn, ttn = digamma_trigamma_one(t + n)
    pa1, ta1 = digamma_trigamma_one(1 - a)
    pa2, ta2 = digamma_trigamma_one(2 - a)
    psi_3, tri_3 = _moments_at(psi_sum, z, a)
    sum_psi, sum_tri = c2 * pa2 + psi_3, c2 * ta2 + tri_3
    classes_2 = u - c1
    return (dz / a - (ptn - pt1), r0 / a - (sum_psi - classes_2 * pa1), -tz / a**2 + (tt1 - ttn),
            -r1 / a**2, -r2 / a**2 - (classes_2 * ta1 - sum_tri))


