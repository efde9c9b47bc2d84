"""Risk-based privacy models: a node satisfies them when the risk of what it releases is low enough.

ARX's risk-based criteria, read over a node's released classes (those of at least k rows; classes
failing an l-diversity or t-closeness model are already out), for every node at once from the
profile (``reidentification``, ``uniqueness``):

- **average risk** ``max_risk = R``: the average prosecutor risk (released classes / released
  records) is at most R (ARX's ``AverageReidentificationRisk``);
- **records at risk** ``max_records_at_risk = T:P``: at most a share P of the released records has a
  prosecutor risk above T (a class smaller than 1/T);
- **population uniqueness** ``max_uniqueness = U:F``: the estimated share of population records that
  are unique in their QI combination is at most U, the data being a sample of a share F of the
  population (Dankar et al.'s estimator; ARX's ``PopulationUniqueness``).

Unlike k, none of them is monotone with suppression (merging classes can lower the number of classes
more slowly than it frees suppressed rows), so the search looks below every node for a satisfying one
(``query``). A node that releases nothing has no risk and
satisfies them; MaxSup bounds how much may be suppressed.

``CRITERIA`` is the registry read by the command line, the
dashboard and the contract tests (these are its scope-RELEASE criteria).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from microrelease.core.criteria.controls import Control, control
from microrelease.core.criteria.criterion import Scope, Statistic
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.profile import LatticeProfile
from microrelease.core.risk.reidentification import node_risk, table_risk
from microrelease.core.risk.uniqueness import uniqueness_by_node

TOLERANCE = 1e-12  # a risk equal to its limit satisfies it, whatever the rounding


def _share(text: str, what: str, parameter: str, *, closed_low: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and (0 <= value if closed_low else 0 < value) and value <= 1):
        interval = "[0, 1]" if closed_low else "(0, 1]"
        raise InvalidParameterError(f"The {parameter!r} parameter needs {what} in {interval}; got {text!r}",
                                    parameter=parameter)
    return value


@dataclass(frozen=True)
class AverageRisk:
    """The average prosecutor risk of the released records is at most ``limit``.

    Parameters
    ----------
    limit : float
        The largest average prosecutor risk, in (0, 1].
    """

    limit: float = control(Control("max_risk", "average risk at most (0 = off)", float, 0.0, low=0, high=1,
                                   step=0.01, off=0.0))
    name: ClassVar[str] = "average-risk"
    monotone_generalization: ClassVar[bool] = False  # see the module docstring (read by a report's minimality)
    monotone_suppression: ClassVar[bool] = False
    parameter: ClassVar[str] = "max_risk"
    syntax: ClassVar[str] = "R"
    help: ClassVar[str] = "average re-identification risk (prosecutor) at most R"
    example: ClassVar[str] = "0.05"
    scope: ClassVar[Scope] = Scope.RELEASE

    @classmethod
    def from_spec(cls, spec: str) -> AverageRisk:
        return cls(_share(spec, "a risk R", cls.parameter))

    def describe(self) -> str:
        return f"average re-identification risk <= {self.limit:g}"

    def spec(self) -> str:
        return f"{self.limit!r}"

    def needs(self) -> frozenset[Statistic]:
        return frozenset({Statistic.RELEASED_SIZES})

    def figure(self, profile: LatticeProfile, k: int) -> np.ndarray:
        return node_risk(profile, k, threshold=1.0)["average"]

    def table_figure(self, sizes: np.ndarray) -> float:
        """The figure of one released table, from its class sizes."""
        return table_risk(sizes, threshold=1.0).average

    def satisfies(self, profile: LatticeProfile, k: int) -> np.ndarray:
        return self.figure(profile, k) <= self.limit + TOLERANCE

    def satisfies_value(self, value: float) -> bool:
        return bool(value <= self.limit + TOLERANCE)


@dataclass(frozen=True)
class RecordsAtRisk:
    """At most a share ``share`` of the released records has a prosecutor risk above ``threshold``.

    Parameters
    ----------
    threshold : float
        The risk above which a record is at risk, in (0, 1].
    share : float
        The largest share of records at risk.
    """

    threshold: float = control(Control("risk_threshold", "a record is at risk above", float, 0.2, low=0, high=1,
                                       low_open=True, step=0.05))
    share: float = control(Control("max_at_risk", "records at risk at most (share; 1 = off)", float, 1.0, low=0,
                                   high=1, step=0.01, off=1.0))
    name: ClassVar[str] = "records-at-risk"
    monotone_generalization: ClassVar[bool] = False
    monotone_suppression: ClassVar[bool] = False
    parameter: ClassVar[str] = "max_records_at_risk"
    syntax: ClassVar[str] = "T:P"
    help: ClassVar[str] = "at most a share P of the released records with a risk above T"
    example: ClassVar[str] = "0.2:0.05"
    scope: ClassVar[Scope] = Scope.RELEASE

    @classmethod
    def from_spec(cls, spec: str) -> RecordsAtRisk:
        parts = spec.split(":")
        if len(parts) != 2:
            raise InvalidParameterError(f"The {cls.parameter!r} parameter expects {cls.syntax} (a risk threshold and "
                                        f"a share of records); got {spec!r}", parameter=cls.parameter)
        return cls(_share(parts[0], "a threshold T", cls.parameter),
                   _share(parts[1], "a share P", cls.parameter, closed_low=True))

    def describe(self) -> str:
        return f"records with risk above {self.threshold:g} <= {self.share:.4g} of the released"

    def spec(self) -> str:
        return f"{self.threshold!r}:{self.share!r}"

    def needs(self) -> frozenset[Statistic]:
        return frozenset({Statistic.RELEASED_SIZES})

    def figure(self, profile: LatticeProfile, k: int) -> np.ndarray:
        return node_risk(profile, k, threshold=self.threshold)["records_at_risk"]

    def table_figure(self, sizes: np.ndarray) -> float:
        return table_risk(sizes, threshold=self.threshold).records_at_risk

    def satisfies(self, profile: LatticeProfile, k: int) -> np.ndarray:
        return self.figure(profile, k) <= self.share + TOLERANCE

    def satisfies_value(self, value: float) -> bool:
        return bool(value <= self.share + TOLERANCE)


def released_histograms(profile: LatticeProfile, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every node's histogram of released class sizes (at least k rows), in the profile's CSR layout."""
    keep = profile.sizes >= k
    n_nodes = len(profile.offsets) - 1
    node_of_pair = np.repeat(np.arange(n_nodes), np.diff(profile.offsets))
    offsets = np.concatenate(([0], np.cumsum(np.bincount(node_of_pair[keep], minlength=n_nodes))))
    return offsets, profile.sizes[keep], profile.counts[keep]


@dataclass(frozen=True)
class PopulationUniqueness:
    """The estimated share of population uniques (Dankar et al.'s rule) is at most ``limit``, for a
    sample of a share ``sampling_fraction`` of the population.

    Parameters
    ----------
    limit : float
        The largest share of population uniques.
    sampling_fraction : float
        The sample's share of the population, in (0, 1].
    strategy : str, default "numba"
        The estimator's implementation.
    """

    limit: float = control(Control("max_uniqueness", "population uniques at most (0 = off)", float, 0.0, low=0,
                                   high=1, step=0.005, off=0.0))
    sampling_fraction: float = control(Control("sampling_fraction", "the data's share of the population", float,
                                               0.1, low=0, high=1, low_open=True, step=0.05))
    strategy: str = field(default="numba", compare=False)  # uniqueness_by_node's: "numpy" compiles nothing
    name: ClassVar[str] = "population-uniqueness"
    monotone_generalization: ClassVar[bool] = False
    monotone_suppression: ClassVar[bool] = False
    parameter: ClassVar[str] = "max_uniqueness"
    syntax: ClassVar[str] = "U:F"
    help: ClassVar[str] = ("estimated population uniques at most a share U, the data being a sample of a share F of "
                           "the population (Dankar et al.)")
    example: ClassVar[str] = "0.01:0.1"
    scope: ClassVar[Scope] = Scope.RELEASE

    @classmethod
    def from_spec(cls, spec: str) -> PopulationUniqueness:
        parts = spec.split(":")
        if len(parts) != 2:
            raise InvalidParameterError(f"The {cls.parameter!r} parameter expects {cls.syntax} (a share of population "
                                        f"uniques and the sampling fraction); got {spec!r}", parameter=cls.parameter)
        return cls(_share(parts[0], "a share U", cls.parameter, closed_low=True),
                   _share(parts[1], "a sampling fraction F", cls.parameter))

    def describe(self) -> str:
        return f"population uniques <= {self.limit:.4g} (Dankar's estimate, sampling fraction {self.sampling_fraction:g})"

    def spec(self) -> str:
        return f"{self.limit!r}:{self.sampling_fraction!r}"

    def needs(self) -> frozenset[Statistic]:
        return frozenset({Statistic.RELEASED_SIZES})

    def figure(self, profile: LatticeProfile, k: int) -> np.ndarray:
        est = uniqueness_by_node(*released_histograms(profile, k), self.sampling_fraction, strategy=self.strategy)
        # a model without an estimate cannot vouch for the node: read as every record unique
        return np.where(est.converged, est.share, 1.0)

    def table_figure(self, sizes: np.ndarray) -> float:
        values, counts = np.unique(np.asarray(sizes, dtype=np.int64), return_counts=True)
        est = uniqueness_by_node(np.array([0, len(values)]), values, counts, self.sampling_fraction,
                                 strategy=self.strategy)
        return float(est.share[0]) if est.converged[0] else 1.0

    def satisfies(self, profile: LatticeProfile, k: int) -> np.ndarray:
        return self.figure(profile, k) <= self.limit + TOLERANCE

    def satisfies_value(self, value: float) -> bool:
        return bool(value <= self.limit + TOLERANCE)
