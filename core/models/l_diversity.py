"""l-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam, "l-Diversity: Privacy Beyond
k-Anonymity", ACM TKDD 2007), in its three instantiations:

- distinct l-diversity: at least l distinct sensitive values in the class;
- entropy l-diversity: the entropy of the class's sensitive distribution is at least log(l);
- recursive (c, l)-diversity: r₁ < c·(r_l + r_{l+1} + … + r_m), with r₁ ≥ r₂ ≥ … the class's value counts.

Each is kept when two satisfying classes merge (the paper's monotonicity), so satisfaction without
suppression is monotone up the lattice; with suppression it is not (a failing class can merge with
a passing one into a failing one, so the rows suppressed may grow).
Text specs (the ``l_diversity`` parameter): ``distinct:L``, ``entropy:L``, ``recursive:C:L``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from microrelease.core.criteria.controls import Control, control
from microrelease.core.models.privacy_model import (
    TOLERANCE,
    KernelCode,
    PrivacyModel,
    Statistic,
    distributions,
)

# What a front end asks (one box each, shared by the three: Control); a box of l takes any number, as
# entropy l does, and a whole one for the others is checked by their spec
L = Control("l", "l", float, 2, low=1, step=1, doc="the class's distinct / effective values at least l")
C = Control("c", "c (recursive)", float, 3, low=0, low_open=True, step=0.5,
            doc="the most frequent value below c times the tail from the l-th")


def entropy(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (natural log) of each row's distribution."""
    p = distributions(counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(p), 0.0)
    return terms.sum(axis=1)


@dataclass(frozen=True)
class LDiversity(PrivacyModel):
    """What the three l-diversities share: the parameter ``l`` (a field of each: recursive (c, l)
    puts it second), given through the ``l_diversity`` parameter."""

    parameter: ClassVar[str] = "l_diversity"
    monotone_generalization: ClassVar[bool] = True
    monotone_suppression: ClassVar[bool] = False
    field_types: ClassVar[tuple[type, ...]]  # of the dataclass fields, in the order the syntax gives them
    # the front end's choice among the three (its choices: "none" and the specs' keywords)
    selector: ClassVar[Control] = Control("l_kind", "l-diversity", str, "none")
    if TYPE_CHECKING:  # what every subclass declares (as a field here it would be the first dataclass field)
        l: float  # noqa: E741
        kind: ClassVar[int]

    @classmethod
    def from_spec(cls, spec: str):
        """``keyword:F1[:F2]`` as in ``syntax``, each field of its type; None for another form."""
        keyword, *values = [p.strip() for p in str(spec).split(":")]
        if keyword != cls.syntax.split(":")[0] or len(values) != len(cls.field_types):
            return None
        try:
            return cls(*(kind(v) for kind, v in zip(cls.field_types, values, strict=True)))
        except ValueError:
            return None

    def spec(self) -> str:
        return ":".join([self.syntax.split(":")[0], *(repr(getattr(self, f.name)) for f in fields(self))])

    def kernel_code(self) -> KernelCode:
        return KernelCode(self.kind, **{f.name: float(getattr(self, f.name)) for f in fields(self)})

    def validate(self, n_values: int, attribute: str):
        if not self.l >= 1:
            raise self.invalid(f"The 'l' parameter must be at least 1. Got {self.l!r} instead.")
        if self.l > n_values:
            raise self.invalid(f"l = {self.l:g} is larger than the {n_values} distinct values of {attribute}: "
                               "no class could ever satisfy it")
        return self

    def needs(self) -> frozenset[Statistic]:
        return frozenset({Statistic.VALUE_COUNTS})

    def satisfies_counts(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return self.statistic(counts, table) >= self.l


@dataclass(frozen=True)
class DistinctLDiversity(LDiversity):
    """Distinct l-diversity (Machanavajjhala et al.): every class holds at least ``l`` distinct sensitive values.

    Parameters
    ----------
    l : int
        The least number of distinct sensitive values per class.
    """

    l: int = control(L)  # noqa: E741 - the paper's name

    name: ClassVar[str] = "distinct-l-diversity"
    syntax: ClassVar[str] = "distinct:L"
    example: ClassVar[str] = "distinct:3"
    kind: ClassVar[int] = 0
    # a class holding one passing class has its values and rows: only failing classes merge into a failing
    # one, so what a node suppresses includes what any node above it does (monotone with suppression too)
    monotone_suppression: ClassVar[bool] = True
    field_types: ClassVar[tuple[type, ...]] = (int,)

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return (counts > 0).sum(axis=1).astype(float)

    def describe(self) -> str:
        return f"distinct {self.l}-diversity"


@dataclass(frozen=True)
class EntropyLDiversity(LDiversity):
    """Entropy l-diversity (Machanavajjhala et al.): every class's sensitive entropy is at least log(``l``).

    Parameters
    ----------
    l : float
        The entropy bound, as a number of equally likely values.
    """

    l: float = control(L)  # noqa: E741

    name: ClassVar[str] = "entropy-l-diversity"
    syntax: ClassVar[str] = "entropy:L"
    example: ClassVar[str] = "entropy:3"
    kind: ClassVar[int] = 1
    field_types: ClassVar[tuple[type, ...]] = (float,)

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return np.exp(entropy(counts))  # the class's "effective l"

    def satisfies_counts(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return entropy(counts) >= np.log(self.l) - TOLERANCE

    def describe(self) -> str:
        return f"entropy {self.l:g}-diversity"


@dataclass(frozen=True)
class RecursiveCLDiversity(LDiversity):
    """Recursive (c, l)-diversity (Machanavajjhala et al.): in every class, the most frequent sensitive value
    is rarer than ``c`` times the sum of the frequencies from the ``l``-th most frequent on.

    Parameters
    ----------
    c : float
        The factor c.
    l : int
        The rank l.
    """

    c: float = control(C)
    l: int = control(L)  # noqa: E741

    name: ClassVar[str] = "recursive-cl-diversity"
    syntax: ClassVar[str] = "recursive:C:L"
    example: ClassVar[str] = "recursive:3:2"
    kind: ClassVar[int] = 2
    field_types: ClassVar[tuple[type, ...]] = (float, int)

    def validate(self, n_values: int, attribute: str):
        super().validate(n_values, attribute)
        if not self.c > 0:
            raise self.invalid(f"The 'c' parameter must be positive. Got {self.c!r} instead.")
        return self

    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        """r₁ / (r_l + … + r_m): the class passes when this is below c."""
        ranked = -np.sort(-counts, axis=1)
        tail = ranked[:, self.l - 1:].sum(axis=1)
        with np.errstate(divide="ignore"):
            return np.where(tail > 0, ranked[:, 0] / np.where(tail > 0, tail, 1), np.inf)

    def satisfies_counts(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        return self.statistic(counts, table) < self.c

    def describe(self) -> str:
        return f"recursive ({self.c:g}, {self.l})-diversity"
