"""What every privacy model on a sensitive attribute declares, beside k-anonymity.

k-anonymity hides *who* a row is, not *what* it says: if every row of a class has the same
diagnosis, the class gives it away. A privacy model constrains the sensitive attribute inside each
equivalence class (the rows sharing one generalized QI combination). Each model is a frozen
dataclass whose fields are its parameters, and declares, in one place:

- ``name``: its key in ``CRITERIA`` (the criterion
  protocol, ``criterion``, of which these are the scope-CLASS criteria
  reading a sensitive attribute);
- ``parameter`` and ``syntax``: the API parameter that gives it as text (``l_diversity``,
  ``t_closeness``) and its text form there (``distinct:L``); ``from_spec`` / ``spec``;
- ``check``: its parameters' domains, against the sensitive attribute's number of values;
- ``monotone_generalization`` / ``monotone_suppression``: whether satisfaction is kept up the
  lattice without / with suppression (the search reads them to choose how to find k-minimal nodes);
- ``needs``: the per-class statistics and table-wide inputs its check reads;
- ``passes_counts`` and ``statistic``: its check on many classes at once, in numpy (the
  oracle; ``passes`` is the same check as the protocol asks it);
- ``kernel_code``: the kind code and parameters handed to the compiled profile kernel
  (``microrelease.core.models.model_rollup_kernels``), which evaluates the same arithmetic.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

import numpy as np

from microrelease.core.criteria.criterion import ClassView, Scope, Statistic
from microrelease.core.exceptions import InvalidParameterError

if TYPE_CHECKING:
    from typing import Self

    from microrelease.core.models.sensitive import SensitiveFrequency

TOLERANCE = 1e-12  # comparisons with l and t allow for rounding in logs and sums


class KernelCode(NamedTuple):
    """What the compiled kernel is told of one model: its kind code and parameters."""

    kind: int
    l: float = 0.0  # noqa: E741 - the paper's name
    c: float = 0.0
    t: float = 0.0


def distributions(counts: np.ndarray) -> np.ndarray:
    """Each row of counts as a distribution (an empty row stays zero)."""
    sizes = counts.sum(axis=1, keepdims=True)
    return counts / np.where(sizes > 0, sizes, 1)


@dataclass(frozen=True)
class PrivacyModel(ABC):
    """A constraint on the sensitive values of every equivalence class (see the module docstring).

    ``counts`` below is a matrix classes × sensitive values (row counts) and ``table`` the whole
    input's count of each value, in the same column order.
    """

    name: ClassVar[str]
    parameter: ClassVar[str]
    syntax: ClassVar[str]
    example: ClassVar[str]  # a valid text spec (for help texts and the registry's contract test)
    monotone_generalization: ClassVar[bool]
    monotone_suppression: ClassVar[bool]
    scope: ClassVar[Scope] = Scope.CLASS

    @classmethod
    @abstractmethod
    def from_spec(cls, spec: str) -> Self | None:
        """The model written ``spec`` (as in ``syntax``), or None if ``spec`` is not of this model."""

    @abstractmethod
    def spec(self) -> str:
        """This model as text: ``from_spec(model.spec()) == model``."""

    @abstractmethod
    def validate(self, n_values: int, attribute: str) -> Self:
        """This model, if its parameters fit a sensitive attribute of ``n_values`` distinct values
        (named ``attribute`` in messages); else ``InvalidParameterError``."""

    @abstractmethod
    def needs(self) -> frozenset[Statistic]:
        """What the check reads (see ``Statistic``)."""

    @abstractmethod
    def statistic(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        """The figure each class is judged on (shown when a node is explained)."""

    @abstractmethod
    def satisfies_counts(self, counts: np.ndarray, table: np.ndarray) -> np.ndarray:
        """Whether each class satisfies the model (bool per row of ``counts``)."""

    def satisfies(self, classes: ClassView) -> np.ndarray:
        """The criterion protocol's check (``criterion``)."""
        return self.satisfies_counts(classes.value_counts, classes.table_counts)

    @abstractmethod
    def describe(self) -> str:
        """A short name with the parameters, e.g. ``entropy 3-diversity``."""

    def kernel_code(self) -> KernelCode:
        """Kind code and parameters for the compiled kernel; a model without a branch there keeps this
        default (kind -1), and the profile then walks in numpy with the model's own check."""
        return KernelCode(-1)

    def bind(self, sensitive: SensitiveFrequency) -> Self:
        """This model, completed with what it takes from the sensitive attribute (default: nothing)."""
        return self

    @classmethod
    def invalid(cls, message: str) -> InvalidParameterError:
        """The error for a bad parameter of this model (``parameter`` set for the front ends)."""
        return InvalidParameterError(message, parameter=cls.parameter)
