"""Differential privacy (Soria-Comas's thesis): data-independent staircase noise (``mechanisms``,
``multivariate``), a comparison of the noises (``comparison``), DP microdata through
microaggregation (``microdata``, ``release``), the route from ratio closeness (t-closeness in the
multiplicative sense) to DP (``ratio_closeness``, ``ratio_partition``, ``ratio_release``) and prior
knowledge refinement (``prior``)."""

from microrelease.core.dp.comparison import compare_noise
from microrelease.core.dp.dp_writing import write_dp_release
from microrelease.core.dp.mechanisms import (
    GAMMA_PRESETS,
    MECHANISMS,
    Laplace,
    Staircase,
    least_variance_gamma,
)
from microrelease.core.dp.microdata import DP_METHODS, DPRelease, PrivacyWarning, dp_release, parse_bounds
from microrelease.core.dp.multivariate import MultivariateStaircase, compare_multivariate
from microrelease.core.dp.prior import PriorRefinement, normal_prior
from microrelease.core.dp.ratio_closeness import ratio_closeness_release, stratified_baseline
from microrelease.core.dp.ratio_release import write_ratio_closeness

__all__ = ["DP_METHODS", "GAMMA_PRESETS", "MECHANISMS", "DPRelease", "Laplace", "MultivariateStaircase",
           "PriorRefinement", "PrivacyWarning", "Staircase", "compare_multivariate", "compare_noise", "dp_release",
           "least_variance_gamma", "normal_prior", "parse_bounds", "ratio_closeness_release", "stratified_baseline",
           "write_dp_release", "write_ratio_closeness"]
