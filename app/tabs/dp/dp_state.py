"""State of the Differential privacy tab (param only): ε, Δ, the noise comparison, the release curves."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import param

from microrelease.app.caching import computed_once
from microrelease.core.data.samples import microdata_sample
from microrelease.core.dp import PrivacyWarning, compare_noise, dp_release
from microrelease.core.dp.comparison import noise_mechanisms
from microrelease.core.dp.prior import PriorRefinement, normal_prior

CURVE_EPSILONS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
RELEASE_CASES = (("record-noise", "laplace", None), ("record-noise", "staircase", None),
                 ("fixed-order-blocks", "laplace", 200), ("ir-mdav", "laplace", 100))


def case_label(method: str, noise: str, k: int | None) -> str:
    """The baselines by their noise, the microaggregation methods by their k."""
    return f"{method} ({noise})" if k is None else f"{method} k={k}"


@computed_once(maxsize=2)
def release_curves(seeds: int = 3) -> pd.DataFrame:
    """SSE/SST (%) of the DP release methods on CASC Census for each ε of CURVE_EPSILONS (mean of seeds)."""
    sample = microdata_sample("census")
    table = pd.read_csv(sample.path)
    attributes = list(table.columns)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        for method, noise, k in RELEASE_CASES:
            for epsilon in CURVE_EPSILONS:
                # record by record against the input (the released rows are shuffled)
                losses = [dp_release(table, attributes, bounds=sample.bounds_dict, epsilon=epsilon, method=method,
                                     noise=noise, k=k, rng=s).loss.sse_sst for s in range(seeds)]
                rows.append({"method": case_label(method, noise, k), "epsilon": epsilon,
                             "sse_sst": float(np.mean(losses))})
    return pd.DataFrame(rows)


PRIOR_CENTRE, TRUE_ANSWER = 40, 42  # the teaching demo: answers on [0, 100] in 20 bins


class DifferentialPrivacyState(param.Parameterized):
    epsilon = param.Number(default=1.0, bounds=(0.05, 10), label="ε")
    sensitivity = param.Number(default=1.0, bounds=(0.01, None), inclusive_bounds=(False, True), label="Δ")
    prior_spread = param.Number(default=20.0, bounds=(1, 100), label="spread of the prior (teaching)")

    def noise_table(self) -> pd.DataFrame:
        table = compare_noise(self.epsilon, self.sensitivity).round(4)
        table["gamma"] = table["gamma"].astype(object).where(table["gamma"].notna(), "—")  # Laplace has no γ
        return table

    def densities(self) -> pd.DataFrame:
        reach = 4 * self.sensitivity * max(1.0, 1 / self.epsilon)
        x = np.linspace(-reach, reach, 1601)
        return pd.DataFrame({"x": x, **{name: mech.density(x)
                                        for name, mech in noise_mechanisms(self.epsilon, self.sensitivity).items()}})

    def prior_demo(self) -> tuple[float, float]:
        """(probability the right bin comes out, expected absolute error) of the prior-refinement
        mechanism for TRUE_ANSWER with a prior centred on PRIOR_CENTRE of spread ``prior_spread``."""
        edges = np.linspace(0, 100, 21)
        mech = PriorRefinement(epsilon=self.epsilon, edges=edges,
                               prior=normal_prior(edges, PRIOR_CENTRE, self.prior_spread))
        return mech.accuracy(TRUE_ANSWER), mech.expected_abs_error(TRUE_ANSWER)
