"""Noise for ε-differential privacy: Laplace and the staircase mechanism, in diffprivlib's shape.

A query f with sensitivity Δ (the most one person can change it) is released as f + X. With density
p, the release is ε-DP when p(x) ≤ e^ε · p(x + d) for every x and every |d| ≤ Δ.

- **Laplace**: p(x) = exp(−|x|/s) / 2s with s = Δ/ε.
- **Staircase** (Soria-Comas & Domingo-Ferrer, "Optimal data-independent noise for differential
  privacy", Information Sciences 2013; Geng & Viswanath 2015): with b = e^(−ε), γ ∈ (0, 1] and
  a = (1 − b) / (2Δ(γ + b(1 − γ))), p(x) = a·b^j on |x| ∈ [jΔ, (j + γ)Δ) and a·b^(j+1) on
  [(j + γ)Δ, (j + 1)Δ). Every step of width Δ outward multiplies the density by b, exactly the
  ratio ε-DP allows, so more mass sits near zero than under Laplace. Presets:
  ``"mean-abs"`` γ = 1/(1 + e^(ε/2)) (least E|X|); ``"variance"`` the closed-form least-variance γ
  (Geng & Viswanath, Theorem 7); ``"centred"`` γ = ½ (uniform on [−Δ/2, Δ/2], each step outward ×
  b): the most mass in the intervals [−(i + ½)Δ, (i + ½)Δ] only. The thesis's Definition 6 compares
  the mass of [−α, α] for every α, and no one γ wins for all α: at α = 0.1Δ and ε = 1, γ = 0.1 puts
  0.147 there, γ = ½ only 0.092. So no preset is "the" optimal noise: each is best for its measure.

Each mechanism has a keyword-only constructor (``epsilon``, ``sensitivity``, ``rng``), one verb
``randomise(value)``, and exact ``bias()``, ``variance()``, ``mean_abs()``, ``density(x)`` and
``cdf(x)``, so tests compare with closed forms rather than with samples only.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.validation import validate_positive, validate_rng


def validate_epsilon(epsilon) -> float:
    return validate_positive(epsilon, "epsilon")


def validate_sensitivity(sensitivity) -> float:
    return validate_positive(sensitivity, "sensitivity")


MAX_SCALE = 2.0 ** 1015  # Δ/ε at most this: the snapping grid (a power of two >= Δ/ε) and noise up to 2^8 scales stay finite


def validate_scale(sensitivity: float, epsilon: float) -> float:
    """Δ/ε, refused when floating point cannot hold the noise it calls for (ε = 1e-320: Δ/ε is infinite)."""
    scale = sensitivity / epsilon
    if not scale <= MAX_SCALE:
        raise InvalidParameterError(
            f"The 'epsilon' parameter is too small for the sensitivity: the noise scale sensitivity/epsilon = "
            f"{sensitivity!r}/{epsilon!r} = {scale!r} is beyond floating point (at most 2^1015); give a larger epsilon",
            parameter="epsilon")
    return scale


class Laplace:
    """Laplace noise with scale Δ/ε.

    References: C. Dwork, F. McSherry, K. Nissim, A. Smith, "Calibrating noise to sensitivity in
    private data analysis", TCC 2006.

    Parameters
    ----------
    epsilon : float
        The privacy budget ε (> 0).
    sensitivity : float, default 1.0
        The query's global sensitivity Δ.
    rng : int or numpy.random.Generator, optional
        The random source (a seed or a generator).

    Examples
    --------
    >>> noise = Laplace(epsilon=1.0, sensitivity=2.0)
    >>> noise.scale, noise.variance()
    (2.0, 8.0)
    """

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, rng=None):
        self.epsilon = validate_epsilon(epsilon)
        self.sensitivity = validate_sensitivity(sensitivity)
        self.rng = validate_rng(rng)
        self.scale = validate_scale(self.sensitivity, self.epsilon)

    def __repr__(self) -> str:
        return f"Laplace(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r})"

    def randomise(self, value):
        value = np.asarray(value, dtype=float)
        out = value + self.rng.laplace(0.0, self.scale, size=value.shape)
        return float(out) if out.ndim == 0 else out

    def bias(self) -> float:
        return 0.0

    def variance(self) -> float:
        return 2 * self.scale**2

    def mean_abs(self) -> float:
        return self.scale

    def density(self, x):
        x = np.asarray(x, dtype=float)
        return np.exp(-np.abs(x) / self.scale) / (2 * self.scale)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        half = 0.5 * np.exp(-np.abs(x) / self.scale)
        return np.where(x < 0, half, 1 - half)

    def prob_within(self, t):
        """P(|X| <= t)."""
        return 1 - np.exp(-np.asarray(t, dtype=float) / self.scale)


def least_variance_gamma(epsilon: float) -> float:
    """Geng & Viswanath's closed form of the γ minimising the staircase's variance.

    Their −b/(1 − b) + (b − 2b² + 2b⁴ − b⁵)^⅓ / (2^⅓ (1 − b)²) is ((b(1 + b)/2)^⅓ − b) / (1 − b), as
    b − 2b² + 2b⁴ − b⁵ = b(1 + b)(1 − b)³. Written as b·(e^c − 1)/(1 − b), c = ln((b(1 + b)/2)^⅓ / b),
    nothing cancels when b → 1 (small ε: the textbook form loses every digit below ε ≈ 1e-4).

    Parameters
    ----------
    epsilon : float
        The privacy budget ε.

    Returns
    -------
    float
        The γ in (0, 1] of least variance.
    """
    one_minus_b = -math.expm1(-epsilon)
    c = (2 * epsilon + math.log1p(-one_minus_b / 2)) / 3
    if c < 1:
        gamma = math.exp(-epsilon) * math.expm1(c) / one_minus_b
    else:  # large ε: e^c alone would overflow, b·e^c = e^(c − ε) does not
        gamma = math.exp(c - epsilon) * -math.expm1(-c) / one_minus_b
    return min(1.0, max(1e-12, gamma))


GAMMA_PRESETS: dict[str, Callable[[float], float]] = {
    "mean-abs": lambda eps: max(1e-12, math.exp(-eps / 2) / (1 + math.exp(-eps / 2))),  # = 1/(1+e^{ε/2}), no overflow
    "variance": least_variance_gamma,
    "centred": lambda eps: 0.5,
}


class Staircase:
    """The staircase mechanism (see the module docstring); ``gamma`` a number in (0, 1] or a preset.

    References: J. Soria-Comas, J. Domingo-Ferrer, "Optimal data-independent noise for differential
    privacy", Information Sciences 250, 2013; Q. Geng, P. Viswanath, "The optimal noise-adding
    mechanism in differential privacy", IEEE Trans. Inf. Theory 62(2), 2016.

    Parameters
    ----------
    epsilon : float
        The privacy budget ε (> 0).
    sensitivity : float, default 1.0
        The query's global sensitivity Δ.
    gamma : float or str, default "mean-abs"
        The staircase's γ in (0, 1], or a preset of ``GAMMA_PRESETS`` (the γ minimizing that cost).
    rng : int or numpy.random.Generator, optional
        The random source (a seed or a generator).

    Examples
    --------
    >>> Staircase(epsilon=1.0).mean_abs() < Laplace(epsilon=1.0).mean_abs()
    True
    """

    def __init__(self, *, epsilon: float, sensitivity: float = 1.0, gamma: float | str = "mean-abs", rng=None):
        self.epsilon = validate_epsilon(epsilon)
        self.sensitivity = validate_sensitivity(sensitivity)
        validate_scale(self.sensitivity, self.epsilon)
        self.rng = validate_rng(rng)
        if isinstance(gamma, str):
            if gamma not in GAMMA_PRESETS:
                raise InvalidParameterError(f"The 'gamma' parameter must be in (0, 1] or one of {sorted(GAMMA_PRESETS)}. "
                                            f"Got {gamma!r}.", parameter="gamma")
            self.preset: str | None = gamma
            gamma = GAMMA_PRESETS[gamma](self.epsilon)
        else:
            self.preset = None
        if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 < gamma <= 1:
            raise InvalidParameterError(f"The 'gamma' parameter must be in (0, 1]. Got {gamma!r}.",
                                        parameter="gamma")
        self.gamma: float = float(gamma)
        self.b: float = math.exp(-self.epsilon)
        # 1 − b from expm1: below ε ≈ 1e-16, b rounds to 1 and 1 − b would be 0
        self.one_minus_b: float = -math.expm1(-self.epsilon)
        self.a: float = self.one_minus_b / (2 * self.sensitivity * (self.gamma + self.b * (1 - self.gamma)))

    def __repr__(self) -> str:
        return f"Staircase(epsilon={self.epsilon!r}, sensitivity={self.sensitivity!r}, gamma={self.gamma!r})"

    def _sums(self):
        """a·Σ b^j, a·Σ j b^j, a·Σ j² b^j over j >= 0, as a/(1 − b) times (1 − b)·Σ: for a tiny ε, a is
        near ε and the sums near 1/ε³, but neither factor over- or underflows."""
        b, q = self.b, self.one_minus_b
        per = self.a / q
        return per, per * b / q, per * b * (1 + b) / q**2

    def randomise(self, value):
        value = np.asarray(value, dtype=float)
        n = value.shape
        g, b, d = self.gamma, self.b, self.sensitivity
        sign = np.where(self.rng.random(n) < 0.5, -1.0, 1.0)
        # P(G >= j) = b^j = e^(−εj), j >= 0: G = floor(E/ε) for a standard exponential E. Exact for
        # every ε, where numpy's geometric(1 − b) saturates at the int64 maximum below ε ≈ 1e-19.
        steps = np.floor(self.rng.standard_exponential(n) / self.epsilon)
        inner = self.rng.random(n) < g / (g + (1 - g) * b)  # the wide step of height b^j, or the narrow one
        u = self.rng.random(n)
        magnitude = np.where(inner, steps + g * u, steps + g + (1 - g) * u) * d
        out = value + sign * magnitude
        return float(out) if out.ndim == 0 else out

    def bias(self) -> float:
        return 0.0

    def mean_abs(self) -> float:
        g, b, d = self.gamma, self.b, self.sensitivity
        s0, s1, _ = self._sums()
        return d**2 * ((2 * g + 2 * b * (1 - g)) * s1 + (g**2 + b * (1 - g**2)) * s0)

    def variance(self) -> float:
        g, b, d = self.gamma, self.b, self.sensitivity
        s0, s1, s2 = self._sums()
        return (2 * d**3 / 3) * ((3 * g + 3 * b * (1 - g)) * s2 + (3 * g**2 + 3 * b * (1 - g**2)) * s1
                                 + (g**3 + b * (1 - g**3)) * s0)

    def density(self, x):
        r = np.abs(np.asarray(x, dtype=float)) / self.sensitivity
        j = np.floor(r)
        return self.a * np.exp(-self.epsilon * np.where(r - j < self.gamma, j, j + 1))  # a·b^step

    def prob_within(self, t):
        """P(|X| <= t)."""
        r = np.asarray(t, dtype=float) / self.sensitivity
        finite = np.isfinite(r)
        r = np.where(finite, r, 0.0)
        g, b, d = self.gamma, self.b, self.sensitivity
        j = np.floor(r)
        # (1 − b^j)/(1 − b) with b^j = e^(−εj): no 0/0 when b rounds to 1
        full = 2 * self.a * d * (g + (1 - g) * b) * -np.expm1(-self.epsilon * j) / self.one_minus_b
        part = r - j
        last = np.where(part < g, part, g + b * (part - g))
        return np.where(finite, np.clip(full + 2 * self.a * d * np.exp(-self.epsilon * j) * last, 0, 1), 1.0)

    def cdf(self, x):
        x = np.asarray(x, dtype=float)
        inside = self.prob_within(np.abs(x))
        return np.where(x < 0, 0.5 - inside / 2, 0.5 + inside / 2)


MECHANISMS = {"laplace": Laplace, "staircase": Staircase}
