"""k-map against a population table in the dashboard (param-free helpers of ``Explorer``).

The population a dataset may be checked against (El Emam & Dankar's k-map; ARX's ``KMap`` with a
population table): a bundled sample's own (``Sample.population_path``: adult-sample's is the whole
adult table), else the table given with ``microrelease app --population FILE``. The joint roll-up
of sample and population (``joint_profile``) is built once per dataset, off the page; each K is
then ``KMapProfile.profile(K)`` (tens of milliseconds). Beside l-diversity / t-closeness the joint
roll-up carries no sensitive values: the models' profile is built with the population joined into
its walk (``build_model_profile(..., k_map=...)``), once per K, as any model profile is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import param

from microrelease.app.kernel_readiness import kernel_strategy
from microrelease.core import POLICIES, Dataset, GeneralizedTable, generalize
from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.data.reading import read_table
from microrelease.core.data.samples import SAMPLES
from microrelease.core.exceptions import Cancelled, InvalidParameterError, MicroreleaseError
from microrelease.core.lattice.generalization import class_representatives, class_sizes
from microrelease.core.lattice.node_release import node_suppression
from microrelease.core.risk.k_map import KMap, KMapProfile, code_population, joint_profile


@dataclass(frozen=True, eq=False)
class PopulationTable:
    """A population table as read (every cell text) and the name the page and the report give it."""

    table: pd.DataFrame
    source: str

    @property
    def name(self) -> str:
        return Path(self.source).name or "<DataFrame>"


@lru_cache(maxsize=4)
def _read(path: str) -> PopulationTable:
    """A bundled sample's population, read once per process and shared by sessions (read-only)."""
    return PopulationTable(read_table(path, sep=None), path)


def population_for(dataset: Dataset, given: PopulationTable | None) -> PopulationTable | None:
    """The population ``dataset`` is a sample of: the one the user gave (``--population``), else a bundled
    sample's own (None: unknown). The command line takes the given file first too."""
    if given is not None:
        return given
    for s in SAMPLES.values():
        if s.population_path is not None and dataset.source and Path(dataset.source) == s.path:
            return _read(str(s.population_path))
    return None


def joint_strategy() -> str:
    """``"numba"`` when the joint roll-up's kernels run without compiling (else numpy: the same result)."""
    return kernel_strategy("k-map")


def build_joint(dataset: Dataset, population: PopulationTable, progress=None, should_stop=None) -> KMapProfile:
    """Code ``population`` through ``dataset``'s hierarchies (DataError naming ``population`` when it
    does not contain the sample) and roll both up over the lattice."""
    coded = code_population(population.table, dataset, source=population.source)
    return joint_profile(dataset, coded, strategy=joint_strategy(), progress=progress, should_stop=should_stop)


def coded_k_map(dataset: Dataset, population: PopulationTable, big_k: int) -> KMap:
    """``big_k``-map against ``population`` coded through ``dataset``'s hierarchies (DataError naming
    ``population`` when it does not contain the sample; InvalidParameterError for a K above its rows)."""
    return KMap(big_k, code_population(population.table, dataset, source=population.source)).validate()


def k_map_release(dataset: Dataset, node, k: int, k_map: KMap, frequency=None, models=()) -> GeneralizedTable:
    """``generalize`` at ``node`` with the classes having fewer than K population records suppressed
    too (the classes the core's release writer suppresses for ``k_map``), and those failing ``models``
    (on ``frequency``, the sensitive attribute's) when k-map is asked beside them."""
    table = generalize(dataset, node, k)
    suppression = node_suppression(dataset, node, Criteria.of(k, *models, k_map, sensitive=frequency))
    freq = dataset.frequency
    _, tuple_class = class_sizes(freq, dataset.hierarchies, node)
    keep = ~suppression.suppressed[tuple_class[freq.row_tuple]]
    released = table.released[keep[table.released.index.to_numpy()]]
    qi = list(dataset.quasi_identifiers)
    classes = (released.groupby(qi, sort=True, dropna=False).size().rename("size").reset_index() if len(released)
               else pd.DataFrame(columns=[*qi, "size"]))
    return GeneralizedTable(table.node, k, dataset.n_rows, released, np.flatnonzero(~keep), classes,
                            table.class_sizes)


def k_map_released_tuples(dataset: Dataset, node, k: int, k_map: KMap, frequency=None, models=()) -> np.ndarray:
    """Per tuple of ``dataset``'s frequency set: whether its rows are released at ``node`` under k and k-map
    (and ``models``, as ``k_map_release``)."""
    suppression = node_suppression(dataset, node, Criteria.of(k, *models, k_map, sensitive=frequency))
    _, tuple_class = class_sizes(dataset.frequency, dataset.hierarchies, node)
    return ~suppression.suppressed[tuple_class]


class KMapSteps:
    """The Explorer's k-map steps (a mixin of ``Explorer``, which
    owns the parameters ``k_map``, ``model_running``, ``model_progress`` and the profile in force)."""

    def _apply_k_map(self) -> None:
        """k-map with the K in force: derived from the joint roll-up, built first (off the page) if need be."""
        if self._population is None:
            self._stop_models()
            self._use_models((None, ()), self.plain_profile, "k-map needs a population table: serve the "
                             "adult-sample sample, or your data with `microrelease app --population FILE`.")
            return
        if self.joint is not None:
            self._stop_models()
            self._use_k_map()
            return
        if self._joint_running:  # its finish derives the K then in force
            return
        self._stop_models()
        dataset, population = self.dataset, self._population

        def work(report, should_stop):
            try:
                return build_joint(dataset, population, progress=report, should_stop=should_stop)
            except Cancelled:
                raise
            except MicroreleaseError as exc:  # a population that does not contain the sample: said on the page
                return exc

        self._joint_running = True
        self.param.update(model_running=True, model_progress=0.0)
        try:
            self._models.start(work, self._finish_joint, lambda f: setattr(self, "model_progress", f),
                               self.hand_back)
        except Exception:
            self._joint_running = self.model_running = False
            raise

    def _finish_joint(self, outcome) -> None:
        self._joint_running = False
        self.param.update(model_running=False, model_progress=1.0)
        if isinstance(outcome, Exception):
            reason = outcome if isinstance(outcome, MicroreleaseError) else \
                f"an internal error ({type(outcome).__name__}); the server log has the details"
            self._use_models((None, ()), self.plain_profile, f"k-map not applied: {reason}")
        else:
            self.joint = outcome
            self._use_k_map()

    def _use_k_map(self) -> None:
        """The profile of the K in force; the selection stays (a K change only recolours the lattice). A
        quality policy reads the quality figures: one more roll-up for this K."""
        try:
            KMap(self.k_map, self.joint.population).validate()
        except InvalidParameterError as exc:  # a K no class can reach: said, and nothing applied
            self._use_models((None, ()), self.plain_profile, f"k-map not applied: {exc}")
            return
        profile = self.joint.profile(self.k_map, quality=POLICIES[self.policy].reads_quality_profile)
        answer, preferred, note = self._compute(profile, self.k, self.max_sup, self.weights)
        with param.parameterized.batch_call_watchers(self):
            self.applied_frequency, self.applied_models = None, ()
            self.applied_k_map = profile.models[0]
            self.profile = profile
            self.answer, self.preferred, self.message = answer, preferred, note

    def cancel_profile(self) -> None:
        """Stop the privacy model's or k-map's profile being built; k-map goes off (0), models stay asked."""
        self._stop_models()
        if self.k_map:
            self.k_map = 0

    def smallest_released_population(self, i: int) -> int | None:
        """Under k-map: the population records of node i's smallest released class (0: none released)."""
        if self.applied_k_map is None:
            return None
        node = self.lattice.node(i)
        if not self.applied_models:
            return self.joint.smallest_released_population(node, self.k, self.applied_k_map.k)
        # beside the models no joint roll-up is made: the node's classes counted in the population here
        criteria = Criteria.of(self.k, *self.applied_models, self.applied_k_map, sensitive=self.applied_frequency)
        suppression = node_suppression(self.dataset, node, criteria)
        kept = ~suppression.suppressed
        if not kept.any():
            return 0
        freq = self.dataset.frequency
        _, tuple_class = class_sizes(freq, self.dataset.hierarchies, node)
        first = class_representatives(tuple_class, len(suppression.sizes))
        big_f = self.applied_k_map.population.class_sizes(freq.codes[first], node)[kept]
        sizes = suppression.sizes[kept]
        return int(big_f[sizes == sizes.min()].min())

