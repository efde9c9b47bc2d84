"""Special functions the population uniqueness models need, vectorized over numpy arrays (numpy has no
lgamma/digamma and scipy is not a dependency): log Gamma, and the digamma and trigamma functions
psi = d log Gamma / dx and psi' = d psi / dx, each by its recurrence up to x >= 10 and then its
asymptotic (Stirling) series; and the sums over i < u of 1/(z+i) and its kin that Pitman's score
reads (``rising_sums``). Each also for one number at a time, compiled (numba, ``*_one``), for the
solvers of ``uniqueness_kernels``: the same steps in the same order.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

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


@nb.njit(cache=True, nogil=True, error_model="numpy")
def lgamma_one(x):
    """log Gamma(x) for one x > 0, as ``lgamma``."""
    shift = 1.0
    for _ in range(10):
        if not x < 10:
            break
        shift *= x
        x += 1
    r2 = 1 / (x * x)
    series = (1 / 12 - r2 * (1 / 360 - r2 * (1 / 1260 - r2 * (1 / 1680 - r2 / 1188)))) / x
    return (x - 0.5) * math.log(x) - x + _HALF_LOG_2PI + series - math.log(shift)


@nb.njit(cache=True, nogil=True, error_model="numpy")
def digamma_trigamma_one(x):
    """(psi(x), psi'(x)) for one x > 0, as ``digamma_trigamma``."""
    psi, tri = 0.0, 0.0
    for _ in range(10):
        if not x < 10:
            break
        inv = 1 / x
        psi -= inv
        tri += inv * inv
        x += 1
    r, r2 = 1 / x, 1 / (x * x)
    psi += math.log(x) - r / 2 - r2 * (1 / 12 - r2 * (1 / 120 - r2 * (1 / 252 - r2 * (1 / 240 - r2 * (
        1 / 132 - r2 * 691 / 32760)))))
    tri += r + r2 / 2 + r * r2 * (1 / 6 - r2 * (1 / 30 - r2 * (1 / 42 - r2 * (1 / 30 - r2 * (
        5 / 66 - r2 * 691 / 2730)))))
    return psi, tri


def rising_sums(z, u):
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


@nb.njit(cache=True, nogil=True, error_model="numpy")
def rising_sums_one(z, u):
    """As ``rising_sums``, for one z."""
    pz1, tz1 = digamma_trigamma_one(z + 1)
    pzu, tzu = digamma_trigamma_one(z + u)
    dz, tz = pzu - pz1, tz1 - tzu
    if (u - 1) > 1e-3 * z:
        return dz, tz, (u - 1) - z * dz, dz - z * tz, (u - 1) - 2 * z * dz + z * z * tz
    m = u - 1
    p = (m, m * (m + 1) / 2, m * (m + 1) * (2 * m + 1) / 6, (m * (m + 1) / 2) ** 2,
         m * (m + 1) * (2 * m + 1) * (3 * m * m + 3 * m - 1) / 30,
         m * m * (m + 1) ** 2 * (2 * m * m + 2 * m - 1) / 12,
         m * (m + 1) * (2 * m + 1) * (3 * m**4 + 6 * m**3 - 3 * m + 1) / 42)
    return (_rising_series(p, z, 0, 0), _rising_series(p, z, 0, 1), _rising_series(p, z, 1, 0),
            _rising_series(p, z, 1, 1), _rising_series(p, z, 2, 1))


@nb.njit(cache=True, nogil=True, error_model="numpy")
def _rising_series(p, z, shift, square):
    """sum_{k<5} (-1)^k (k+1 if square) p[k + shift] / z^(k+1+square): the series of ``rising_sums``."""
    total = 0.0
    for k in range(5):
        total += (-1) ** k * (k + 1 if square else 1) * p[k + shift] / z ** (k + 1 + square)
    return total
