"""What every privacy criterion declares: one protocol for k-anonymity, the models on a sensitive
attribute, k-map and the risk limits (ARX's ``PrivacyCriterion``; quality is another protocol,
``policies``).

A criterion is a frozen dataclass whose fields are its parameters. Its class declares:

- ``name`` (its key in ``CRITERIA``), ``parameter`` (the API
  parameter that gives it as text; the command line's flag is ``--`` + parameter with dashes),
  ``syntax`` and ``example`` (its text form), ``from_spec`` / ``spec``, ``describe``;
- ``scope``: ``Scope.CLASS`` when each equivalence class is judged alone and one that fails is
  suppressed (counted against MaxSup), ``Scope.RELEASE`` when the released classes are judged
  together and a node either satisfies it or not;
- ``monotone_generalization`` / ``monotone_suppression``: whether satisfaction is kept going up the
  lattice without / with suppression (the searches prune by it, ``monotone``);
- ``needs``: the per-class statistics it reads (``Statistic``);
- the test: ``satisfies(classes)`` (scope CLASS: a bool per class of a ``ClassView``) or
  ``table_figure(released_sizes)`` and ``satisfies_value(value)`` (scope RELEASE; ``figure(profile, k)``
  gives every node's figure at once from the whole-lattice profile).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from functools import cached_property
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np


class Scope(Enum):
    CLASS = "class"  # each class judged alone; failing classes are suppressed
    RELEASE = "release"  # the released classes judged together


class Statistic(Enum):
    """What a criterion's check reads."""

    CLASS_SIZE = "class size"  # rows of the class
    VALUE_COUNTS = "value counts"  # how many rows of the class hold each sensitive value
    TABLE_DISTRIBUTION = "table distribution"  # the whole input's distribution of the sensitive values
    VALUE_HIERARCHY = "value hierarchy"  # the sensitive attribute's hierarchy (a ground distance)
    POPULATION_SIZE = "population size"  # records of the class in a population table
    RELEASED_SIZES = "released class sizes"  # the sizes of every released class together


@runtime_checkable
class Criterion(Protocol):
    """The declarations of the module docstring (a structural type: the criteria are plain frozen
    dataclasses, checked against it by the registry's contract test)."""

    name: ClassVar[str]
    parameter: ClassVar[str]
    syntax: ClassVar[str]
    example: ClassVar[str]
    scope: ClassVar[Scope]
    monotone_generalization: ClassVar[bool]
    monotone_suppression: ClassVar[bool]

    @classmethod
    def from_spec(cls, spec: str) -> Criterion | None:
        """The criterion ``spec`` writes; None when the spec is not of this class's form (a parameter
        that gives several classes tries each in turn)."""
        ...

    def spec(self) -> str: ...

    def describe(self) -> str: ...

    def needs(self) -> frozenset[Statistic]: ...


def monotone(criteria: Iterable, max_sup: int) -> bool:
    """Whether satisfaction of every one of ``criteria`` is kept going up the lattice at this MaxSup,
    so that a node with no satisfying direct predecessor has none below at all (Samarati's Lemma 5.1
    for k). The one statement of the rule: the profile's query, the pruned search and a report's
    minimality check read it."""
    return all(c.monotone_suppression if max_sup > 0 else c.monotone_generalization for c in criteria)


class ClassView:
    """The equivalence classes of one node, as a scope-CLASS criterion reads them: ``sizes`` always,
    the other statistics computed the first time one asks (each from its own source)."""

    def __init__(self, sizes: np.ndarray, *, value_counts=None, table_counts=None, population_sizes=None):
        self.sizes = np.asarray(sizes)
        self._value_counts, self._table_counts, self._population_sizes = value_counts, table_counts, population_sizes

    @staticmethod
    def _read(source, what: str):
        if source is None:
            raise ValueError(f"this node's classes were counted without the {what}")
        return source() if callable(source) else source

    @cached_property
    def value_counts(self) -> np.ndarray:
        """Classes × sensitive values: rows of each class holding each value."""
        return self._read(self._value_counts, "sensitive attribute")

    @cached_property
    def table_counts(self) -> np.ndarray:
        """The whole input's count of each sensitive value."""
        return self._read(self._table_counts, "sensitive attribute")

    @cached_property
    def population_sizes(self) -> np.ndarray:
        """Population records of each class."""
        return self._read(self._population_sizes, "population")
