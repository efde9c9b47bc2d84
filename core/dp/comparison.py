"""Laplace against the staircase presets at one (ε, Δ): E|X|, variance and P(|X| <= t), exactly.

The thesis's point in one table: at the same ε the staircase puts more mass near zero than
Laplace, and the centred staircase (γ = ½) maximizes the mass in every interval
[−(i + ½)Δ, (i + ½)Δ].
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from microrelease.core.dp.mechanisms import GAMMA_PRESETS, Laplace, Staircase


def noise_mechanisms(epsilon: float, sensitivity: float = 1.0) -> dict[str, Laplace | Staircase]:
    out: dict[str, Laplace | Staircase] = {"laplace": Laplace(epsilon=epsilon, sensitivity=sensitivity)}
    for preset in GAMMA_PRESETS:
        out[f"staircase ({preset})"] = Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=preset)
    return out


def compare_noise(epsilon: float, sensitivity: float = 1.0, within: Sequence[float] = (0.5, 1.5, 2.5)) -> pd.DataFrame:
    """One row per mechanism: γ, E|X|, variance, and P(|X| <= t·Δ) for each t in ``within``.

    Parameters
    ----------
    epsilon : float
        The privacy budget ε.
    sensitivity : float, default 1.0
        The sensitivity Δ.
    within : sequence of float, default (0.5, 1.5, 2.5)
        The multiples t of Δ at which P(|X| <= t·Δ) is given.

    Returns
    -------
    pandas.DataFrame
        One row per mechanism.
    """
    rows = []
    for name, mech in noise_mechanisms(epsilon, sensitivity).items():
        row = {"mechanism": name, "gamma": getattr(mech, "gamma", None), "mean_abs": mech.mean_abs(),
               "variance": mech.variance()}
        for t in within:
            row[f"P(|X|<={t:g}Δ)"] = float(mech.prob_within(t * sensitivity))
        rows.append(row)
    return pd.DataFrame(rows)
