"""Sensitivity-independent differential privacy via prior knowledge refinement (Soria-Comas &
Domingo-Ferrer, 2012), in the teaching form used by the dashboard.

The answer's domain is cut into bins, and the user states a prior π over them (what anyone may
believe before the release). The release draws a bin y with probability

    P(y | true answer in bin b) = π(y) · e^((ε/2)·[y = b]) / Z_b,   Z_b = 1 + π(b)·(e^(ε/2) − 1),

and returns a value uniformly inside it. For two datasets with answers in bins b and b', the
probabilities of any output differ by at most e^(ε/2)·(Z_b'/Z_b) ≤ e^ε (because 1 ≤ Z ≤ e^(ε/2)):
ε-DP whatever the query's sensitivity. What the release teaches beyond the prior is bounded too:
P(y | b)/π(y) ≤ e^(ε/2). Deviation from the paper: its refinement gains a factor e^ε over the prior;
here the gain is e^(ε/2), because the normalisation Z_b also depends on the true bin and takes the
other half of the budget (with e^ε in the numerator the two datasets' output probabilities could
differ by e^ε·Z_b'/Z_b, up to e^(2ε)). And the sharper a prior centred near the truth, the more accurate the
answer at the same ε: P(right bin) = π(b)·e^(ε/2) / Z_b grows with π(b).
"""

from __future__ import annotations

import math

import numpy as np

from microrelease.core.dp.mechanisms import validate_epsilon
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.validation import validate_rng


def normal_prior(edges: np.ndarray, centre: float, spread: float) -> np.ndarray:
    """A prior over the bins of ``edges``: a normal belief (centre, spread) integrated per bin, renormalized.

    Parameters
    ----------
    edges : numpy.ndarray
        The bins' edges.
    centre : float
        The belief's mean.
    spread : float
        The belief's standard deviation.

    Returns
    -------
    numpy.ndarray
        The probability of each bin.
    """
    if not spread > 0:
        raise InvalidParameterError(f"The 'spread' parameter must be positive. Got {spread!r}.",
                                    parameter="spread")
    cdf = 0.5 * (1 + np.array([math.erf((e - centre) / (spread * math.sqrt(2))) for e in edges]))
    p = np.diff(cdf) + 1e-12  # every bin keeps some belief: a zero would forbid that output forever
    return p / p.sum()


class PriorRefinement:
    """The mechanism of the module docstring over bins ``edges`` with prior ``prior``.

    Parameters
    ----------
    epsilon : float
        The privacy budget ε.
    edges : numpy.ndarray
        The bins' edges.
    prior : numpy.ndarray
        The prior probability of each bin.
    rng : int or numpy.random.Generator, optional
        The random source.
    """

    def __init__(self, *, epsilon: float, edges, prior, rng=None):
        self.epsilon = validate_epsilon(epsilon)
        self.edges = np.asarray(edges, dtype=float)
        self.prior = np.asarray(prior, dtype=float)
        if self.edges.ndim != 1 or len(self.edges) < 2 or np.any(np.diff(self.edges) <= 0):
            raise InvalidParameterError("The 'edges' parameter must be increasing bin edges (at least two).",
                                        parameter="edges")
        if len(self.prior) != len(self.edges) - 1 or np.any(self.prior < 0) or not math.isclose(self.prior.sum(), 1):
            raise InvalidParameterError("The 'prior' parameter must be one probability per bin, summing to 1.",
                                        parameter="prior")
        self.rng = validate_rng(rng)
        self.boost = math.exp(self.epsilon / 2)

    def bin_of(self, value: float) -> int:
        return int(np.clip(np.searchsorted(self.edges, value, side="right") - 1, 0, len(self.prior) - 1))

    def output_distribution(self, value: float) -> np.ndarray:
        weights = self.prior.copy()
        weights[self.bin_of(value)] *= self.boost
        return weights / weights.sum()

    def randomise(self, value: float) -> float:
        y = self.rng.choice(len(self.prior), p=self.output_distribution(value))
        return float(self.rng.uniform(self.edges[y], self.edges[y + 1]))

    def accuracy(self, value: float) -> float:
        """P(the released value falls in the true answer's bin)."""
        return float(self.output_distribution(value)[self.bin_of(value)])

    def expected_abs_error(self, value: float) -> float:
        mids = (self.edges[:-1] + self.edges[1:]) / 2
        return float((self.output_distribution(value) * np.abs(mids - value)).sum())
