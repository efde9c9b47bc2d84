"""Differential privacy (Soria-Comas's thesis): optimal data-independent noise (``mechanisms``), a
comparison of the noises (``comparison``), and DP microdata through microaggregation (``microdata``)."""

from microrelease.core.dp.comparison import compare_noise
from microrelease.core.dp.mechanisms import (
           GAMMA_PRESETS,
           MECHANISMS,
           Laplace,
           Staircase,
           least_variance_gamma,
)
from microrelease.core.dp.microdata import DP_METHODS, DPRelease, PrivacyWarning, dp_release, parse_bounds

__all__ = ["DP_METHODS", "GAMMA_PRESETS", "MECHANISMS", "DPRelease", "Laplace", "PrivacyWarning", "Staircase",
           "compare_noise", "dp_release", "least_variance_gamma", "parse_bounds"]
