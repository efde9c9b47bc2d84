"""Seeded goodness-of-fit tests of the noise samplers (their own suite; they run in CI too).

Each sampler draws 100,000 values with a fixed seed; a chi-square test over 62 bins, with expected
counts from the exact CDF, must not reject at the 0.1 % level.
"""

from __future__ import annotations

import numpy as np
import pytest

from microrelease.core.dp import Laplace, Staircase

pytestmark = pytest.mark.statistical


def mechanisms(epsilon: float):
    yield Laplace(epsilon=epsilon)
    for gamma in ("mean-abs", "variance", "centred", 0.1, 1.0):
        yield Staircase(epsilon=epsilon, gamma=gamma)


@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_samples_follow_the_density(epsilon):
    from scipy.stats import chisquare

    for i, mech in enumerate(mechanisms(epsilon)):
        mech.rng = np.random.default_rng(1000 + i)
        sample = mech.randomise(np.zeros(100_000))
        edges = np.concatenate(([-np.inf], np.linspace(-6 / epsilon - 3, 6 / epsilon + 3, 61), [np.inf]))
        observed = np.histogram(sample, edges)[0]
        expected = np.diff(mech.cdf(edges)) * len(sample)
        assert chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > 0.001, mech  # α = 0.1 %


