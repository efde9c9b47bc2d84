"""Special functions the population uniqueness models need, vectorized over numpy arrays (numpy has no
lgamma/digamma and scipy is not a dependency): log Gamma, and the digamma and trigamma functions
psi = d log Gamma / dx and psi' = d psi / dx, each by its recurrence up to x >= 10 and then its
asymptotic (Stirling) series.
"""

from __future__ import annotations

import math

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
