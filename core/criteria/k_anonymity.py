"""k-anonymity (Samarati 2001, Definition 2.2): every released combination of QI values is shared by
at least k rows. Monotone with and without suppression (Lemma 5.1): merging classes only grows them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from microrelease.core.criteria.controls import Control, control
from microrelease.core.criteria.criterion import ClassView, Scope, Statistic
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.validation import validate_int


@dataclass(frozen=True)
class KAnonymity:
    """Every released class has at least ``k`` rows (a smaller one is suppressed).

    Parameters
    ----------
    k : int
        The smallest class size (>= 1).
    """

    # the question's own (a front end asks for it apart from the other criteria: the dashboard's k slider)
    k: int = control(Control("k", "k", int, 2, low=1, doc="every released QI combination has >= k rows"))
    name: ClassVar[str] = "k-anonymity"
    parameter: ClassVar[str] = "k"
    syntax: ClassVar[str] = "K"
    example: ClassVar[str] = "5"
    scope: ClassVar[Scope] = Scope.CLASS
    monotone_generalization: ClassVar[bool] = True
    monotone_suppression: ClassVar[bool] = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", validate_int(self.k, "k", low=1))

    @classmethod
    def from_spec(cls, spec: str) -> KAnonymity:
        try:
            return cls(int(str(spec).strip()))
        except ValueError:
            raise InvalidParameterError(f"The 'k' parameter expects {cls.syntax}, a whole number >= 1; got {spec!r}",
                                        parameter="k") from None

    def spec(self) -> str:
        return str(self.k)

    def describe(self) -> str:
        return f"{self.k}-anonymity"

    def needs(self) -> frozenset[Statistic]:
        return frozenset({Statistic.CLASS_SIZE})

    def satisfies(self, classes: ClassView) -> np.ndarray:
        return classes.sizes >= self.k
