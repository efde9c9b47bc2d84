"""k-map against a population table (El Emam & Dankar 2008, "Protecting privacy using k-anonymity";
ARX's ``KMap`` criterion when the population is given as a table).

The data is a sample of a population table holding the same QI columns. At a node, a sample class
(the rows sharing one generalized QI combination) is kept only if the population holds at least K
records with that combination; a class that fails is suppressed (it counts against MaxSup), as a class
failing l-diversity is. A merged class's population count is the sum of its parts, so the model is
monotone under generalization and under suppression. k-anonymity with k still applies on the sample
(k = 1 gives k-map alone, ARX's usual use).

One joint roll-up (``joint_profile``) keeps, for every node, how many classes have each (sample
size f, population size F) pair; the profile for a K (``KMapProfile.profile``) is then a numpy
derivation: classes with F < K give ``failing_rows``, the others the class-size histogram.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
import pandas as pd

from microrelease.core.criteria.controls import Control, control
from microrelease.core.criteria.criterion import ClassView, Scope, Statistic
from microrelease.core.data.reading import as_text, read_table
from microrelease.core.exceptions import CoverageError, DataError, InvalidParameterError, MicroreleaseError
from microrelease.core.lattice.distance_vectors import Lattice
from microrelease.core.lattice.frequency import FrequencySet, FrequencySource
from microrelease.core.lattice.generalization import class_representatives, class_sizes
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy
from microrelease.core.lattice.profile import (
    MEMORY_BUDGET,
    LatticeProfile,
    assemble_profile,
    key_spec,
    roll_up,
)
from microrelease.core.lattice.quality_profile import (
    attach_quality,
    kernel_tables,
    node_quality_arrays,
    node_tables,
)
from microrelease.core.models.model_rollup_numpy import merge_classes

STRATEGIES = ("numba", "numpy")


@dataclass(frozen=True, eq=False)
class Population:
    """A population table's QI combinations, coded through the sample's hierarchies (extended with the
    missing-value rule where the population has blanks): distinct ground ``codes`` and their ``counts``."""

    hierarchies: tuple[Hierarchy, ...]
    codes: np.ndarray
    counts: np.ndarray
    n_rows: int
    source: str = ""

    def class_sizes(self, class_codes: np.ndarray, node: Sequence[int]) -> np.ndarray:
        """F: population rows generalizing, at ``node``, to the class of each row of ``class_codes``
        (ground codes of one sample row per class)."""
        class_codes = np.asarray(class_codes, dtype=np.int64)
        both = FrequencySet(np.concatenate([self.codes.astype(np.int64), class_codes]),
                            np.concatenate([self.counts, np.zeros(len(class_codes), dtype=np.int64)]))
        sizes, tuple_class = class_sizes(both, self.hierarchies, node)  # the representatives add no rows
        return sizes[tuple_class[len(self.codes):]]


def read_population(path: str) -> pd.DataFrame:
    """A population table as read (every cell text); a missing or malformed file is a DataError naming
    the ``population`` parameter.

    Parameters
    ----------
    path : str
        The population file.

    Returns
    -------
    pandas.DataFrame
        The table, every cell as text.

    Raises
    ------
    DataError
        If the file is missing or malformed.
    """
    try:
        return read_table(path, sep=None)
    except MicroreleaseError as exc:
        raise DataError(str(exc), parameter="population") from None


def code_population(table: pd.DataFrame, sample: FrequencySource, *, source: str = "") -> Population:
    """The population ``table`` coded through ``sample``'s hierarchies, checked to contain the sample.

    Raises DataError (parameter ``population``) for a QI column it lacks, a value missing from a
    hierarchy (naming column and values), or a ground QI combination the sample holds more often than
    the population (naming the first one).

    Parameters
    ----------
    table : pandas.DataFrame
        The population table.
    sample : FrequencySource
        The sample, whose hierarchies code the population.
    source : str, optional
        The population's name, for messages.

    Returns
    -------
    Population
        The coded population.

    Raises
    ------
    DataError
        If a QI column is missing or the population does not contain the sample.
    """
    qi = tuple(sample.quasi_identifiers)
    missing = [c for c in qi if c not in table.columns]
    if missing:
        raise DataError(f"QI column(s) {missing} not in the population table; it has {list(table.columns)}",
                        parameter="population")
    if len(table) == 0:
        raise DataError("the population table has no rows", parameter="population")
    hierarchies, codes = [], np.empty((len(table), len(qi)), dtype=np.int64)
    for i, (name, h) in enumerate(zip(qi, sample.hierarchies, strict=True)):
        values = as_text(table[name])
        if (values == MISSING).any():
            h = h.with_missing()  # appends one ground row: the sample's codes stay valid
        try:
            codes[:, i] = h.encode(values)
        except CoverageError as exc:
            raise DataError(f"population column {name!r}: {exc}", parameter="population") from None
        hierarchies.append(h)
    radices = [h.level_size(0) for h in hierarchies]
    pop_codes, pop_counts = merge_classes(codes, np.ones(len(codes), dtype=np.int64), radices)
    population = Population(tuple(hierarchies), pop_codes, pop_counts.astype(np.int64), len(table), source)
    _validate_contains(population, sample)
    return population


def _joined(population: Population, sample: FrequencySource) -> tuple[np.ndarray, np.ndarray]:
    """(ground codes, [sample count, population count, sample count²]) over the union of both tables'
    combinations (the square is what the quality models' KL divergence reads of each tuple)."""
    freq = sample.frequency
    codes = np.concatenate([freq.codes.astype(np.int64), population.codes])
    counts = np.zeros((len(codes), 3), dtype=np.int64)
    counts[:len(freq.codes), 0] = freq.counts
    counts[:len(freq.codes), 2] = freq.counts ** 2
    counts[len(freq.codes):, 1] = population.counts
    return merge_classes(codes, counts, [h.level_size(0) for h in population.hierarchies])


def _validate_contains(population: Population, sample: FrequencySource) -> None:
    codes, counts = _joined(population, sample)
    short = np.flatnonzero(counts[:, 0] > counts[:, 1])
    if len(short):
        j = short[0]
        combination = {h.attribute: h.ground[c] for h, c in zip(population.hierarchies, codes[j], strict=True)}
        raise DataError(f"the sample has {counts[j, 0]} row(s) of {combination} but the population only "
                        f"{counts[j, 1]}: a population contains the sample ({len(short)} such combination(s))",
                        parameter="population")


@dataclass(frozen=True)
class KMap:
    """El Emam & Dankar's k-map: every released class has at least ``k`` records in the population
    (a scope-CLASS criterion, ``criterion``; from text it has no population
    until ``bind``).

    Parameters
    ----------
    k : int
        The least population size of a released class.
    population : Population, optional
        The population table, coded (see ``code_population``).
    """

    k: int = control(Control("k_map", "k-map K (0 = off)", int, 0, low=0, off=0,
                             doc="every released class has >= K records in the population table"))
    population: Population | None = field(default=None, repr=False, compare=False)
    name: ClassVar[str] = "k-map"
    parameter: ClassVar[str] = "k_map"
    syntax: ClassVar[str] = "K"
    example: ClassVar[str] = "10"
    scope: ClassVar[Scope] = Scope.CLASS
    monotone_generalization: ClassVar[bool] = True
    monotone_suppression: ClassVar[bool] = True  # a merged class's population count is the sum

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int | np.integer) or self.k < 1:
            raise InvalidParameterError(f"The 'k_map' parameter must be an integer >= 1 (the population records "
                                        f"each released class needs). Got {self.k!r} instead.", parameter="k_map")

    @classmethod
    def from_spec(cls, spec: str) -> KMap:
        try:
            return cls(int(str(spec).strip()))
        except ValueError:
            return cls(spec)  # type: ignore[arg-type]  # the str reaches the k check, whose message names it

    def spec(self) -> str:
        return str(self.k)

    def bind(self, population: Population) -> KMap:
        """This criterion against ``population``."""
        return KMap(self.k, population)

    def validate(self) -> KMap:
        """This model, if some class could pass it: K at most the population's rows (else every class
        fails, which a front end says as such rather than as a suppression count)."""
        if self.population is None:
            raise InvalidParameterError("k-map needs a population table", parameter="population")
        if self.k > self.population.n_rows:
            raise InvalidParameterError(f"The 'k_map' parameter must be at most the population's rows "
                                        f"({self.population.n_rows}). Got {self.k!r} instead.", parameter="k_map")
        return self

    def describe(self) -> str:
        return f"{self.k}-map"

    def needs(self) -> frozenset[Statistic]:
        return frozenset({Statistic.POPULATION_SIZE})

    def satisfies(self, classes: ClassView) -> np.ndarray:
        """Whether each class (given its population size F) is kept."""
        return np.asarray(classes.population_sizes) >= self.k


@dataclass(frozen=True, eq=False)
class KMapProfile:
    """Every node's classes by joint (sample size f, population size F), CSR: node i's pairs are
    ``offsets[i]:offsets[i+1]`` in ``f``, ``big_f`` (sorted by f, then F) and ``counts`` (classes).

    Parameters
    ----------
    lattice : Lattice
        The lattice profiled.
    n_rows : int
        The sample's rows.
    population : Population
        The population.
    offsets : numpy.ndarray
        Where each node's pairs start.
    f : numpy.ndarray
        The sample class sizes.
    big_f : numpy.ndarray
        The population class sizes.
    counts : numpy.ndarray
        How many classes have each pair.
    strategy : str, optional
        The roll-up strategy used.
    sample : FrequencySource, optional
        The sample.
    """

    lattice: Lattice
    n_rows: int
    population: Population
    offsets: np.ndarray
    f: np.ndarray
    big_f: np.ndarray
    counts: np.ndarray
    strategy: str = ""
    sample: FrequencySource | None = field(default=None, repr=False)  # for the quality profile
    _cache: dict = field(default_factory=dict, repr=False)

    def pairs(self, node) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(f, F, classes) of one node."""
        i = self.lattice.index(tuple(node))
        lo, hi = self.offsets[i], self.offsets[i + 1]
        return self.f[lo:hi], self.big_f[lo:hi], self.counts[lo:hi]

    def smallest_released_population(self, node, k: int, k_map: int) -> int:
        """The population size F of the smallest released class at ``node`` (the smallest F among the
        released classes of the smallest size); 0 when nothing is released."""
        f, big_f, _ = self.pairs(node)
        kept = (f >= k) & (big_f >= k_map)
        if not kept.any():
            return 0
        return int(big_f[kept][f[kept] == f[kept].min()].min())

    def profile(self, k_map: int, quality: bool = False) -> LatticeProfile:
        """The lattice profile where classes with fewer than ``k_map`` population records fail
        (``failing_rows``); ``stats``, ``query``, policies and metrics read it unchanged. ``quality``: with
        what ARX's quality models read (one more roll-up for this K, ``k_map_quality``)."""
        model = KMap(k_map, self.population)
        if quality:
            if ("quality", model.k) not in self._cache:
                self._remember(("quality", model.k), k_map_quality(self, self.profile(model.k)))
            return self._cache[("quality", model.k)]
        if model.k in self._cache:
            return self._cache[model.k]
        n_nodes = self.lattice.size
        node_of = np.repeat(np.arange(n_nodes, dtype=np.int64), np.diff(self.offsets))
        fail = self.big_f < model.k
        rows = self.f * self.counts
        failing = _sum_by_node(node_of[fail], rows[fail], n_nodes, self.n_rows)
        failing_sq = _sum_by_node(node_of[fail], (self.f * rows)[fail], n_nodes, self.n_rows ** 2)
        keep = ~fail
        kept_node, kept_f, kept_c = node_of[keep], self.f[keep], self.counts[keep]
        # pairs are sorted by (node, f, F): the kept ones of equal (node, f) are adjacent
        composite = kept_node * (self.n_rows + 1) + kept_f
        starts = np.flatnonzero(np.r_[True, composite[1:] != composite[:-1]]) if len(composite) else np.zeros(0, int)
        sizes = kept_f[starts]
        counts = np.add.reduceat(kept_c, starts) if len(starts) else np.zeros(0, dtype=np.int64)
        offsets = np.concatenate(([0], np.cumsum(np.bincount(kept_node[starts], minlength=n_nodes))))
        for arr in (offsets, sizes, counts, failing, failing_sq):
            arr.setflags(write=False)
        profile = LatticeProfile(self.lattice, self.n_rows, offsets, sizes, counts.astype(np.int64),
                                 f"k-map ({self.strategy})", failing_rows=failing, failing_sq=failing_sq,
                                 models=(model,), failing_by_model={model.describe(): failing})
        self._remember(model.k, profile)
        return profile

    def _remember(self, key, profile: LatticeProfile) -> None:
        if len(self._cache) >= 16:
            self._cache.pop(next(iter(self._cache)))
        self._cache[key] = profile


def k_map_quality(joint: KMapProfile, profile: LatticeProfile) -> LatticeProfile:
    """``profile`` (``joint``'s for one K) with its quality figures: the sample and population rolled up
    again, the classes with fewer than K population records failing (compiled; ``numpy``: node by node)."""
    sample, population = joint.sample, joint.population
    assert sample is not None  # joint_profile keeps it
    k_map = profile.models[0].k
    freq, hierarchies = sample.frequency, tuple(sample.hierarchies)
    if joint.strategy == "numba":
        from microrelease.core.lattice.rollup_kernels import roll_once  # numba
        from microrelease.core.lattice.walk_kernel import WalkPlan  # numba

        spec = key_spec(population.hierarchies)
        assert spec is not None  # joint_profile refused keys over 62 bits
        codes, counts = _joined(population, sample)
        plan = WalkPlan(rows=0, population=1, k_map=float(k_map), squares=2,
                        quality=kernel_tables(hierarchies, freq.n_rows), shifts=spec.shifts, masks=spec.masks)
        pieces = roll_up(joint.lattice, spec, spec.pack(codes), counts.astype(float), plan.inner(), roll_once,
                         with_start=True)
    else:
        tables = node_tables(hierarchies)
        pieces = []
        for i, node in enumerate(joint.lattice):
            def passing(sizes, tuple_class, node=node):
                return population.class_sizes(freq.codes[class_representatives(tuple_class, len(sizes))], node) >= k_map

            s, c, pairs, failing = node_quality_arrays(freq, hierarchies, node, passing, tables)
            pieces.append((np.array([i]), np.array([0, len(s)]), s, c, pairs, failing[None, :]))
    return attach_quality(profile, freq, hierarchies, pieces)


def _sum_by_node(nodes: np.ndarray, values: np.ndarray, n_nodes: int, bound: int) -> np.ndarray:
    """Per-node sums; bincount (float) is exact while every sum is below 2**53 (``bound``), else add.at."""
    if bound < 2**53:
        return np.bincount(nodes, weights=values, minlength=n_nodes).astype(np.int64)
    out = np.zeros(n_nodes, dtype=np.int64)
    np.add.at(out, nodes, values)
    return out


def joint_profile(sample: FrequencySource, population: Population, *, strategy: str = "numba", progress=None,
                  should_stop=None, workers: int | None = None, memory_budget: int = MEMORY_BUDGET) -> KMapProfile:
    """The joint roll-up of ``sample`` and ``population`` over the whole lattice (see the module docstring).

    ``strategy``: ``"numba"`` (compiled, on the shared walk) or ``"numpy"`` (the oracle); the other
    arguments as for ``build_profile``.

    Parameters
    ----------
    sample : FrequencySource
        The sample.
    population : Population
        The coded population.
    strategy : str, default "numba"
        The roll-up's implementation.
    progress : callable, optional
        Called with the progress.
    should_stop : callable, optional
        Polled; when it returns true the build raises ``Cancelled``.
    workers : int, optional
        Threads.
    memory_budget : int, default 536870912
        Bytes the roll-up may hold at once.

    Returns
    -------
    KMapProfile
        Every node's joint class sizes.
    """
    if strategy not in STRATEGIES:
        raise InvalidParameterError(f"The 'strategy' parameter of k-map must be one of {STRATEGIES}. "
                                    f"Got {strategy!r} instead.", parameter="strategy")
    spec = key_spec(population.hierarchies)
    if spec is None:
        raise InvalidParameterError("k-map needs the QIs' codes to pack into 62 bits; use fewer or smaller QIs",
                                    parameter="quasi_identifiers")
    codes, counts = _joined(population, sample)
    counts = counts[:, :2]
    base = np.int64(population.n_rows + 1)
    if strategy == "numba":
        from microrelease.core.lattice.rollup_kernels import roll_once  # numba
        from microrelease.core.lattice.walk_kernel import WalkPlan  # numba

        inner, counts = WalkPlan(rows=0, population=1, pack=int(base)).inner(), counts.astype(float)
    else:
        from microrelease.core.lattice.rollup_numpy import roll_once  # numpy twin of a kernel
        from microrelease.core.risk.k_map_numpy import inner_joint_numpy  # numpy twin of a kernel

        def inner(*walk):
            return inner_joint_numpy(*walk, base)  # type: ignore[call-arg]  # mypy miscounts f(*args, x)

    lattice = sample.lattice
    pieces = roll_up(lattice, spec, spec.pack(codes), np.ascontiguousarray(counts), inner, roll_once,
                     progress=progress, should_stop=should_stop, workers=workers, memory_budget=memory_budget,
                     with_start=strategy == "numba")
    packed = assemble_profile(lattice, sample.n_rows, pieces, strategy)
    f, big_f = np.divmod(packed.sizes, base)
    return KMapProfile(lattice, sample.n_rows, population, packed.offsets, f, big_f, packed.counts, strategy, sample)
