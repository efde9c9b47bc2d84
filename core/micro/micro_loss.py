"""Information loss of a masked numeric release (the classic measures of the microaggregation literature).

SSE/SST (Domingo-Ferrer & Mateo-Sanz 2002): on the attributes standardized with the *original*
means and standard deviations, SSE = Σᵢ‖zᵢ − z'ᵢ‖² (original vs released record i) and SST =
Σᵢ‖zᵢ − z̄‖²; the loss is 100·SSE/SST %. 0 % is no change; replacing every record by the global
mean gives 100 %. Reported for all attributes together and per attribute (the per-attribute loss
is what IR-SWAP controls attribute by attribute), with means, variances and the correlation
matrix before and after.

Noise of a tiny ε can take released values near the float range: sums of squares then overflow,
and the loss is reported as infinite (and correlations as undefined) without numpy's warnings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.micro.microaggregation import Standardizer, numeric_matrix


@dataclass(frozen=True, eq=False)
class InformationLoss:
    """SSE/SST in %, overall and per attribute, and the first two moments before vs after."""

    sse_sst: float
    per_attribute: dict[str, float]
    moments: pd.DataFrame  # attribute, mean/variance original and released
    correlation_original: pd.DataFrame
    correlation_released: pd.DataFrame

    @property
    def max_correlation_change(self) -> float:
        diff = (self.correlation_released - self.correlation_original).abs().to_numpy()
        if diff.size and np.isnan(diff).all():
            return float("nan")
        return float(np.nanmax(diff)) if diff.size else 0.0

    def to_dict(self) -> dict:
        with np.errstate(over="ignore", invalid="ignore"):  # rounding an infinite moment
            moments = self.moments.round(6).to_dict(orient="records")
        return {
            "sse_sst_percent": round(self.sse_sst, 6),
            "per_attribute_percent": {a: round(v, 6) for a, v in self.per_attribute.items()},
            "moments": moments,
            "max_correlation_change": round(self.max_correlation_change, 6),
        }


def information_loss(original: pd.DataFrame, released: pd.DataFrame, attributes: Sequence[str]) -> InformationLoss:
    """Compare ``released`` with ``original`` (same rows, same order) over numeric ``attributes``.

    Parameters
    ----------
    original : pandas.DataFrame
        The table before protection.
    released : pandas.DataFrame
        The protected table (same rows, same order).
    attributes : sequence of str
        The numeric attributes compared.

    Returns
    -------
    InformationLoss
        The loss figures of the release.
    """
    attributes = list(attributes)
    x = numeric_matrix(original, attributes)
    y = numeric_matrix(released, attributes, "released attribute")
    if len(x) != len(y):
        raise ValueError(f"{len(x)} original rows but {len(y)} released rows: the loss compares row by row")
    scale = Standardizer.fit(x, attributes)
    z, z_released = scale(x), scale(y)
    with np.errstate(over="ignore", invalid="ignore"):  # released values near the float range: inf
        sse = ((z - z_released) ** 2).sum(axis=0)
        moments = pd.DataFrame({
            "attribute": attributes,
            "mean_original": x.mean(axis=0), "mean_released": y.mean(axis=0),
            "variance_original": x.var(axis=0, ddof=1), "variance_released": y.var(axis=0, ddof=1),
        })
    sst = ((z - z.mean(axis=0)) ** 2).sum(axis=0)
    # a released column may become constant, or overflow
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        corr_x, corr_y = np.corrcoef(x, rowvar=False), np.corrcoef(y, rowvar=False)
    return InformationLoss(
        float(100 * sse.sum() / sst.sum()),
        {a: float(100 * s / t) for a, s, t in zip(attributes, sse, sst, strict=True)},
        moments,
        pd.DataFrame(np.atleast_2d(corr_x), index=attributes, columns=attributes),
        pd.DataFrame(np.atleast_2d(corr_y), index=attributes, columns=attributes),
    )
