"""The privacy criteria of one question (``Criteria``): k-anonymity and any others of the
registry, with what they read. A release, its report's minimality check, the written file's
verification and the searches take one ``Criteria`` and read it only through the protocol
(``criterion``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from microrelease.core.criteria.criterion import ClassView, Criterion, Scope, Statistic, monotone
from microrelease.core.criteria.k_anonymity import KAnonymity
from microrelease.core.criteria.registry import CRITERIA
from microrelease.core.exceptions import InvalidParameterError

if TYPE_CHECKING:
    import numpy as np

    from microrelease.core.models.sensitive import SensitiveFrequency


@dataclass(frozen=True, eq=False)
class Criteria:
    """``k`` (k-anonymity, always) and ``others`` (criteria of the registry, each at most once by
    name); ``sensitive``: the SensitiveFrequency the sensitive-attribute criteria read.

    Parameters
    ----------
    k : KAnonymity
        The k-anonymity criterion.
    others : tuple, optional
        Further criteria of the registry (``CRITERIA``).
    sensitive : SensitiveFrequency, optional
        What the sensitive-attribute criteria read.
    """

    k: KAnonymity
    others: tuple[Criterion, ...] = ()
    sensitive: SensitiveFrequency | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.k, KAnonymity):
            raise InvalidParameterError(f"criteria: k must be a KAnonymity, got {self.k!r}", parameter="k")
        object.__setattr__(self, "others", tuple(self.others))
        names = [c.name for c in self.others]
        for c in self.others:
            if CRITERIA.get(getattr(c, "name", "")) is not type(c) or isinstance(c, KAnonymity):
                raise InvalidParameterError(f"criteria: {c!r} is not a criterion of the registry besides k-anonymity "
                                            f"(known: {sorted(CRITERIA)})", parameter="criteria")
            if names.count(c.name) > 1:
                raise InvalidParameterError(f"criteria: {c.name} given twice", parameter=c.parameter)
        if self.models and self.sensitive is None:
            raise InvalidParameterError(f"{', '.join(m.describe() for m in self.models)} read a sensitive attribute: "
                                        "pass its SensitiveFrequency (prepare_models)", parameter="sensitive")
        if self.k_map is not None and self.k_map.population is None:
            raise InvalidParameterError("k-map needs a population table (KMap.bind)", parameter="population")

    @classmethod
    def of(cls, k: int, *others, sensitive=None) -> Criteria:
        """``Criteria.of(5)``: 5-anonymity; ``Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)``."""
        return cls(KAnonymity(k), tuple(others), sensitive)

    @property
    def all(self) -> tuple:
        return (self.k, *self.others)

    @property
    def class_scoped(self) -> tuple:
        """The criteria beside k judged class by class (their failing classes are suppressed)."""
        return tuple(c for c in self.others if c.scope is Scope.CLASS)

    @property
    def release_scoped(self) -> tuple:
        return tuple(c for c in self.others if c.scope is Scope.RELEASE)

    @property
    def models(self) -> tuple:
        """The criteria reading the sensitive attribute."""
        return tuple(c for c in self.others if Statistic.VALUE_COUNTS in c.needs())

    @property
    def k_map(self):
        return next((c for c in self.others if Statistic.POPULATION_SIZE in c.needs()), None)

    def monotone(self, max_sup: int) -> bool:
        return monotone(self.all, max_sup)

    def describe(self) -> list[str]:
        return [c.describe() for c in self.all]

    def failing(self, classes: ClassView) -> dict[str, np.ndarray]:
        """Per scope-CLASS criterion beside k (by description): which classes fail it."""
        return {c.describe(): ~c.satisfies(classes) for c in self.class_scoped}

    def release_fault(self, released_sizes) -> tuple[Criterion, float] | None:
        """The first scope-RELEASE criterion the released classes fail, with their figure; None if all hold."""
        for c in self.release_scoped:
            value = c.table_figure(released_sizes)
            if not c.satisfies_value(value):
                return c, value
        return None
