"""Individual re-identification risk of each sample record (Benedetti & Franconi 1998), as sdcMicro's
``indivRisk`` / ``measure_risk`` compute it (method "approx", their default).

A record's class has f_k records in the sample and F_k = the sum of their sampling weights in the
population (with a constant sampling fraction pi, F_k = f_k / pi). Given f_k, the population size of
the class is f_k + NegBin(f_k, p_k) with p_k = f_k / F_k, and the record's risk is E[1 / F]:

- f_k = 1: p/(1-p) log(1/p);  f_k = 2: p/(1-p) - (p/(1-p))^2 log(1/p)  (both exact);
- f_k > 2: p / (f_k - (1 - p))  (Franconi & Polettini 2004's approximation);
- p_k = 1 (the class is whole in the sample): 1 / f_k.

The expected number of re-identifications is the sum of the records' risks (sdcMicro's
``global_risk_ER``); its share of the records is ``global_risk``.

References: Benedetti, R. and Franconi, L. (1998), Statistical and technological solutions for
controlled data dissemination; Franconi, L. and Polettini, S. (2004), Individual risk estimation in
mu-Argus: a review, PSD 2004, LNCS 3050; Templ, Kowarik and Meindl (2015), sdcMicro, JSS 67(4).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.validation import validate_sampling_fraction

_SERIES_BELOW = 1e-4  # 1 - p below this: Taylor series in q = 1 - p, where the closed forms cancel


@dataclass(frozen=True, eq=False)
class IndividualRisk:
    """risk : per record, its Benedetti-Franconi risk; expected_reidentifications : their sum;
    global_risk : that sum over the number of records."""

    risk: np.ndarray
    expected_reidentifications: float
    global_risk: float


def individual_risk(frequency, weight_sum=None, *, sampling_fraction: float | None = None) -> IndividualRisk:
    """Benedetti-Franconi risk of every record.

    Parameters
    ----------
    frequency : array_like of int
        Per record, f_k, the number of sample records in its class (integers >= 1).
    weight_sum : array_like of float, optional
        Per record, F_k, the sum of the sampling weights of its class (>= f_k).
    sampling_fraction : float, optional
        Instead of ``weight_sum``, a constant fraction pi in (0, 1]: F_k = f_k / pi.
        ``sampling_fraction=1`` treats the sample as the population (risk 1 / f_k).

    Returns
    -------
    IndividualRisk
        The risk of every record.

    Raises
    ------
    InvalidParameterError
        If a frequency, weight or fraction is out of range.
    """
    f = _validate_frequency(frequency)
    if (weight_sum is None) == (sampling_fraction is None):
        raise InvalidParameterError("Give exactly one of 'weight_sum' and 'sampling_fraction'.",
                                    parameter="weight_sum")
    if sampling_fraction is not None:
        p = np.full(f.shape, validate_sampling_fraction(sampling_fraction))
        q = 1 - p
    else:
        F = np.asarray(weight_sum, dtype=float)
        if F.shape != f.shape:
            raise InvalidParameterError(f"The 'weight_sum' parameter must have the shape of 'frequency' {f.shape}. "
                                        f"Got {F.shape} instead.", parameter="weight_sum")
        if F.size and not (np.all(np.isfinite(F)) and np.all(F >= f)):
            bad = np.flatnonzero(~(np.isfinite(F) & (F >= f)))[0]
            raise InvalidParameterError(f"The 'weight_sum' parameter must be finite and at least the class's "
                                        f"frequency (record {bad}: weight sum {F.flat[bad]!r} < {f.flat[bad]}).",
                                        parameter="weight_sum")
        p, q = f / F, (F - f) / F  # q computed apart: exact when F is close to f
    risk = benedetti_franconi(f, p, q)
    total = float(risk.sum())
    return IndividualRisk(risk, total, total / risk.size if risk.size else 0.0)


def benedetti_franconi(frequency, p, q=None) -> np.ndarray:
    """The approximate risk (sdcMicro's "approx") for sample frequencies f and p = f / F (elementwise;
    ``q`` = 1 - p if known more precisely than by subtraction)."""
    f, p = np.asarray(frequency, dtype=float), np.asarray(p, dtype=float)
    q = 1 - p if q is None else np.asarray(q, dtype=float)
    f, p, q = np.broadcast_arrays(f, p, q)
    near = q < _SERIES_BELOW
    with np.errstate(divide="ignore", invalid="ignore"):
        odds, log_inv = p / q, -np.log(p)
        # near p = 1 the closed forms cancel; there E[1/F] = p sum_j q^j / (j + 1) (f = 1) and
        # p - p^2 sum_j q^j / (j + 2) (f = 2), the series of the same expectations
        one = np.where(near, p * (1 + q / 2 + q * q / 3 + q**3 / 4), odds * log_inv)
        two = np.where(near, p - p * p * (1 / 2 + q / 3 + q * q / 4 + q**3 / 5), odds - odds * odds * log_inv)
        risk = np.where(f == 1, one, np.where(f == 2, two, p / (f - q)))
    return np.where(q <= 0, 1 / f, risk)


def class_frequencies(labels, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """Per record: f_k (records sharing its class label) and F_k (the sum of their ``weights``; without
    weights, f_k). ``labels``: one class label per record (1-D), or one row of QI codes per record (2-D)."""
    labels = np.asarray(labels)
    if labels.ndim not in (1, 2):
        raise InvalidParameterError(f"The 'labels' parameter must be 1-D or 2-D. Got {labels.ndim} dimensions.",
                                    parameter="labels")
    _, inverse, counts = np.unique(labels, axis=0 if labels.ndim == 2 else None, return_inverse=True,
                                   return_counts=True)
    inverse = inverse.ravel()
    f = counts[inverse]
    if weights is None:
        return f, f.astype(float)
    w = np.asarray(weights, dtype=float)
    if w.shape != (len(labels),) or not np.all(np.isfinite(w) & (w > 0)):
        raise InvalidParameterError(f"The 'weights' parameter must hold one positive finite weight per record "
                                    f"({len(labels)}).", parameter="weights")
    return f, np.bincount(inverse, weights=w)[inverse]


def reidentifications_by_node(offsets, sizes, counts, sampling_fraction: float) -> np.ndarray:
    """Expected re-identifications of every node (sum over its records of the Benedetti-Franconi risk)
    with a constant sampling fraction, from CSR class-size histograms (as in ``LatticeProfile``).

    Parameters
    ----------
    offsets : numpy.ndarray
        Where each node's pairs start in ``sizes``/``counts``.
    sizes : numpy.ndarray
        Class sizes.
    counts : numpy.ndarray
        How many classes have each size.
    sampling_fraction : float
        The sample's share of the population.

    Returns
    -------
    numpy.ndarray
        The expected re-identifications of every node.
    """
    offsets, sizes, counts = np.asarray(offsets), np.asarray(sizes), np.asarray(counts)
    fraction = validate_sampling_fraction(sampling_fraction)
    _validate_frequency(sizes, "sizes")
    top = int(sizes.max()) if sizes.size else 0
    per_size = benedetti_franconi(np.arange(1, top + 1), fraction, 1 - fraction)  # one value per class size
    per_pair = sizes * counts * per_size[sizes.astype(np.int64) - 1]
    node = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    return np.bincount(node, weights=per_pair, minlength=len(offsets) - 1)


def _validate_frequency(frequency, name="frequency") -> np.ndarray:
    f = np.asarray(frequency)
    if f.size and (not np.issubdtype(f.dtype, np.number) or not np.all(np.isfinite(f))
                   or not np.all(f == np.floor(f)) or f.min() < 1):
        raise InvalidParameterError(f"The {name!r} parameter must hold class sizes: whole numbers >= 1.",
                                    parameter=name)
    return f.astype(float)
