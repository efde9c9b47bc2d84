"""Prosecutor, journalist and marketer re-identification risk, for one table or every lattice node.

El Emam's three attackers, as ARX's ``RiskModelSampleSummary`` computes them over the released
(not suppressed) equivalence classes; f_j is a released class's size in the sample, n = Σ f_j the
released records, J the released classes, F_j the class's size in the population:

- **prosecutor** (knows the target is in the file): a record of class j is re-identified with
  probability 1/f_j. Highest = 1 / min f_j; average (ARX's "success rate") = |J| / n, the mean of
  1/f_j over records; records at risk = share of records with 1/f_j > threshold.
- **journalist** (knows only that the target is in the population): risk 1/F_j. Highest = 1 / min
  F_j; records at risk = share of *sample* records with 1/F_j > threshold; average as ARX (El Emam's
  "journalist re-identification C"): max(|J| / Σ F_j, (1/n) Σ f_j / F_j), the larger of the mean risk
  over the population records of the released classes and over the released records.
- **marketer** (re-identifies as many records as it can): expected share re-identified =
  (1/n) Σ f_j / F_j.

Where F_j comes from: a population table (``population_sizes``; ARX's convention when the data
is a research subset of the population), or sdcMicro's estimate from sampling weights, F_j = Σ of
the weights in class j, which for one sampling fraction π is F_j = f_j / π (a real number). With
neither, the population is the sample itself (ARX's default): journalist = prosecutor and marketer
= |J| / n. A table or node with nothing released has every figure 0 (no record can be re-identified;
the project's metrics read "1 / smallest class" the same way).

References: K. El Emam, "Guide to the De-Identification of Personal Health Information", CRC Press
2013, ch. "Measuring the Probability of Re-Identification"; K. El Emam, F. K. Dankar, "Protecting
privacy using k-anonymity", JAMIA 15(5), 2008. Reference implementations: ARX
``org.deidentifier.arx.risk.RiskModelSampleSummary``; sdcMicro ``freqCalc`` (population frequencies
from weights).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.exceptions import DataError, InvalidParameterError
from microrelease.core.lattice.profile import LatticeProfile
from microrelease.core.validation import validate_k, validate_sampling_fraction, validate_share

FIGURES = ("highest", "average", "records_at_risk", "journalist_highest", "journalist_average",
           "journalist_records_at_risk", "marketer")


@dataclass(frozen=True)
class Risk:
    """The re-identification risk of one released table (all figures in [0, 1]).

    ``highest``, ``average``, ``records_at_risk``: prosecutor model; ``journalist_*``: the same
    against the population; ``marketer``: expected share of records re-identified; ``threshold``:
    the risk a record may have without counting as at risk (strictly above it counts).

    Parameters
    ----------
    highest : float
        Prosecutor model: the highest risk.
    average : float
        Prosecutor model: the average risk.
    records_at_risk : float
        Prosecutor model: the share of records above ``threshold``.
    journalist_highest : float
        Journalist model: the highest risk.
    journalist_average : float
        Journalist model: the average risk.
    journalist_records_at_risk : float
        Journalist model: the share of records above ``threshold``.
    marketer : float
        Marketer model: the expected share of records re-identified.
    threshold : float
        The risk threshold.
    """

    highest: float
    average: float
    records_at_risk: float
    journalist_highest: float
    journalist_average: float
    journalist_records_at_risk: float
    marketer: float
    threshold: float


def _validate_sizes(sizes: object) -> np.ndarray:
    arr = np.asarray(sizes)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise InvalidParameterError(f"The 'sizes' parameter must be a 1-D sequence of integer class sizes. "
                                    f"Got an array of shape {arr.shape} and dtype {arr.dtype} instead.",
                                    parameter="sizes")
    arr = arr.astype(np.int64)
    if arr.size and arr.min() < 1:
        i = int(np.argmin(arr))
        raise InvalidParameterError(f"The 'sizes' parameter must hold class sizes of at least 1. "
                                    f"Got {int(arr[i])} at class {i} instead.", parameter="sizes")
    return arr


def _validate_population(population: object, sizes: np.ndarray) -> np.ndarray:
    arr = np.asarray(population, dtype=float)
    if arr.shape != sizes.shape:
        raise InvalidParameterError(f"The 'population_sizes' parameter must give one size per class of 'sizes' "
                                    f"({len(sizes)}). Got shape {arr.shape} instead.",
                                    parameter="population_sizes")
    bad = ~np.isfinite(arr) | (arr < sizes)  # a population must contain the sample
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InvalidParameterError(f"The 'population_sizes' parameter must be finite and at least each class's "
                                    f"sample size (a population contains the sample). Got {float(arr[i])!r} for class "
                                    f"{i} of sample size {int(sizes[i])} instead.", parameter="population_sizes")
    return arr


def prosecutor(sizes: np.ndarray) -> tuple[float, float]:
    """The prosecutor's highest risk (1 / the smallest class) and average risk (ARX's success rate:
    the mean of 1/f_j over the records = classes / rows) of classes of the given sizes, all at least 1;
    both 0 when there are none. The one formula ``table_risk`` and the release report's figures read."""
    if not len(sizes):
        return 0.0, 0.0
    return 1.0 / float(sizes.min()), len(sizes) / float(sizes.sum())


def table_risk(sizes: Sequence[int] | np.ndarray, *, threshold: float, sampling_fraction: float | None = None,
               population_sizes: Sequence[float] | np.ndarray | None = None) -> Risk:
    """Prosecutor, journalist and marketer risk of one released table (see the module docstring).

    Parameters
    ----------
    sizes : sequence of int or numpy.ndarray
        The sizes f_j of the released equivalence classes (suppressed records left out).
    threshold : float
        A record whose risk is strictly above it counts as at risk, in (0, 1].
    sampling_fraction : float, optional
        π in (0, 1]: estimate each population class size as F_j = f_j / π.
    population_sizes : sequence of float or numpy.ndarray, optional
        F_j for each class, aligned with ``sizes`` (see ``population_sizes``); at most one of
        this and ``sampling_fraction``. With neither, the population is the sample.

    Returns
    -------
    Risk
        The table's prosecutor, journalist and marketer figures.

    Raises
    ------
    InvalidParameterError
        A threshold or fraction outside (0, 1], a class size below 1, a population class smaller
        than its sample class, or both population parameters.
    """
    threshold = validate_share(threshold, "threshold")
    f = _validate_sizes(sizes)
    if sampling_fraction is not None and population_sizes is not None:
        raise InvalidParameterError("Give either 'sampling_fraction' or 'population_sizes', not both.",
                                    parameter="population_sizes")
    if population_sizes is not None:
        big_f = _validate_population(population_sizes, f)
    elif sampling_fraction is not None:
        big_f = f / validate_sampling_fraction(sampling_fraction)
    else:
        big_f = f.astype(float)
    n = int(f.sum())
    if n == 0:
        return Risk(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, threshold)
    risk = 1.0 / f
    journalist = 1.0 / big_f
    marketer = float((f / big_f).sum()) / n
    highest, average = prosecutor(f)
    return Risk(
        highest=highest,
        average=average,
        records_at_risk=int(f[risk > threshold].sum()) / n,
        journalist_highest=float(journalist.max()),
        journalist_average=max(len(f) / float(big_f.sum()), marketer),
        journalist_records_at_risk=int(f[journalist > threshold].sum()) / n,
        marketer=marketer,
        threshold=threshold,
    )


def _rows(keys: object, parameter: str) -> list:
    """Class keys as hashable values: a DataFrame's rows as tuples (missing values as None, since
    two NaNs never compare equal), anything else item by item."""
    if isinstance(keys, pd.DataFrame):
        clean = keys.astype(object).where(keys.notna(), None)
        return list(clean.itertuples(index=False, name=None))
    if isinstance(keys, str) or not isinstance(keys, Iterable):
        raise TypeError(f"The {parameter!r} parameter must be a DataFrame or a sequence of QI tuples. "
                        f"Got {type(keys).__name__} instead.")
    return [tuple(k) if isinstance(k, list) else k for k in keys]


def population_sizes(sample_keys: pd.DataFrame | Iterable, population_keys: pd.DataFrame | Iterable) -> np.ndarray:
    """F_j: how many rows of the population table fall in each sample class.

    ``sample_keys``: one key (a QI tuple) per sample class, or a DataFrame of the QI columns, one row
    per class; a key given twice is answered twice. ``population_keys``: the population's rows, the
    same way. Returns an int64 array aligned with ``sample_keys``, for
    ``table_risk``'s ``population_sizes``.

    Raises
    ------
    DataError : a sample class absent from the population (a population must contain the sample),
        named with its key; or two DataFrames with different columns.

    Parameters
    ----------
    sample_keys : pandas.DataFrame or iterable
        One key per sample class.
    population_keys : pandas.DataFrame or iterable
        One key per population row.

    Returns
    -------
    numpy.ndarray
        F_j for each sample class.
    """
    if isinstance(sample_keys, pd.DataFrame) and isinstance(population_keys, pd.DataFrame) \
            and list(sample_keys.columns) != list(population_keys.columns):
        raise DataError(f"The population's columns {list(population_keys.columns)} differ from the sample's "
                        f"{list(sample_keys.columns)}.", parameter="population_keys")
    sample = _rows(sample_keys, "sample_keys")
    counts = Counter(_rows(population_keys, "population_keys"))
    missing = [key for key in dict.fromkeys(sample) if key not in counts]
    if missing:
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise DataError(f"Sample class(es) {', '.join(map(repr, missing[:5]))}{more} absent from the population: "
                        f"a population must contain the sample.", parameter="population_keys")
    return np.array([counts[key] for key in sample], dtype=np.int64)


def _first_safe_size(threshold: float, sampling_fraction: float | None, n_rows: int) -> int:
    """The smallest class size s in [1, n_rows + 1] whose risk is at most ``threshold``.

    The risk (1/s, or 1/(s/π)) is computed with the same float operations as ``table_risk`` and
    does not increase with s, so the classes at risk are exactly those smaller than the answer.
    """
    def risk(s: int) -> float:
        return 1.0 / s if sampling_fraction is None else 1.0 / (s / sampling_fraction)

    lo, hi = 1, n_rows + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if risk(mid) <= threshold:
            hi = mid
        else:
            lo = mid + 1
    return lo


def node_risk(profile: LatticeProfile, k: int, *, threshold: float,
              sampling_fraction: float | None = None) -> dict[str, np.ndarray]:
    """Every figure of ``Risk`` for every node of ``profile``'s lattice at once.

    A node releases its classes of at least k rows (classes failing a privacy model are already
    out of the histogram). Each figure is an array indexed by node number, keyed by its
    ``Risk`` field name (``FIGURES``), equal to ``table_risk`` of the node's released
    class sizes with the same ``threshold`` and ``sampling_fraction``.

    Because a class's risk falls as its size grows, the records at risk are those in released
    classes smaller than one size s*, and their count is the suppression at k' = max(k, s*) minus
    the suppression at k: two prefix-sum look-ups of ``LatticeProfile.stats``, no pass over
    the classes.

    Parameters
    ----------
    profile : LatticeProfile
        The profile.
    k : int
        The k of k-anonymity.
    threshold : float
        The risk threshold.
    sampling_fraction : float, optional
        The sample's share of the population (default: the sample is the population).

    Returns
    -------
    dict of str to numpy.ndarray
        Each figure of ``Risk``, per node.
    """
    k = validate_k(k, profile.n_rows)
    threshold = validate_share(threshold, "threshold")
    if sampling_fraction is not None:
        sampling_fraction = validate_sampling_fraction(sampling_fraction)
    n_rows = profile.n_rows
    stats = profile.stats(k)
    released = n_rows - stats.suppressed
    has = released > 0
    classes = stats.distinct.astype(float)

    def share(numerator) -> np.ndarray:
        return np.divide(numerator, released, out=np.zeros(len(released)), where=has)

    def at_risk(fraction: float | None) -> np.ndarray:
        safe = max(k, _first_safe_size(threshold, fraction, n_rows))
        return share(profile.stats(safe).suppressed - stats.suppressed)

    smallest = stats.smallest
    out = {
        "highest": np.divide(1.0, smallest, out=np.zeros(len(smallest)), where=smallest > 0),
        "average": share(classes),
        "records_at_risk": at_risk(None),
    }
    if sampling_fraction is None:
        out |= {"journalist_highest": out["highest"].copy(), "journalist_average": out["average"].copy(),
                "journalist_records_at_risk": out["records_at_risk"].copy(), "marketer": out["average"].copy()}
        return out
    # F_j = f_j / π: then Σ f_j/F_j = π|J| and Σ F_j = n/π, so ARX's two journalist averages and the
    # marketer risk are all π|J|/n (table_risk sums them class by class; equal up to rounding)
    smallest_population = smallest / sampling_fraction
    out["journalist_highest"] = np.divide(1.0, smallest_population, out=np.zeros(len(smallest)),
                                          where=smallest > 0)
    out["journalist_average"] = share(classes * sampling_fraction)
    out["journalist_records_at_risk"] = at_risk(sampling_fraction)
    out["marketer"] = out["journalist_average"].copy()
    return out
