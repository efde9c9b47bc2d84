"""The shared lattice state (param only, no Panel): a dataset, its profile, the question, the answer.

``Explorer`` owns one dataset, its whole-lattice profile and the current question (k, MaxSup,
policy, privacy models). Every change of the question is answered from the profile
(``microrelease.core.query``), never by re-reading the data. On a lattice too large for the profile
(``large``: the core's rule, ``microrelease.app.explorer.large``) the pruned search answers each
question instead, off the page, from one warm evaluator. It also holds what the lattice views
share: the selected node, the lattice view mode (mode, fixed QIs, expanded nodes) and the
Find_vector probe highlighted. Colours and text for the page live in the views.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd
import param

from microrelease.app.explorer.criteria_params import declare, names
from microrelease.app.explorer.large import LargeAnswer, Searcher, large_lattice
from microrelease.app.explorer.models import ModelSteps
from microrelease.app.explorer.population import (
    KMapSteps,
    PopulationTable,
    k_map_release,
    population_for,
)
from microrelease.app.kernel_readiness import kernel_strategy
from microrelease.app.latest import Latest
from microrelease.core import (
    POLICIES,
    Answer,
    Dataset,
    GeneralizedTable,
    LatticeProfile,
    NoSolutionError,
    build_profile,
    generalize,
    query,
)
from microrelease.core.criteria.criteria_set import Criteria
from microrelease.core.criteria.criterion import Scope
from microrelease.core.criteria.registry import parse_criteria
from microrelease.core.exceptions import InvalidParameterError, MicroreleaseError
from microrelease.core.lattice.hierarchies import describe_vector, describe_vectors
from microrelease.core.lattice.quality import QUALITY_MODELS
from microrelease.core.lattice.search import FindVectorResult
from microrelease.core.models.model_profile import explain_node
from microrelease.core.models.sensitive import SensitiveFrequency, prepare_models
from microrelease.core.risk.criteria import PopulationUniqueness
from microrelease.core.risk.k_map import KMap, code_population
from microrelease.core.risk.reidentification import node_risk
from microrelease.core.risk.uniqueness import uniqueness_by_node

# Per node, ``status()`` gives an index into STATUS.
STATUS = ("fails", "satisfies", "k-minimal", "preferred", "fails privacy model")
VIEW_MODES = ("auto", "focused", "full", "sub-lattice")
SEARCH_STEP = 0.1  # the pruned search's progress bar moves in steps of this share
# A served page's search is flagged (the progress bar and Cancel shown) once it has run this long: showing
# and hiding them lays the whole page out again in the browser, twice the time of a short search itself
SHOW_AFTER = 0.4  # seconds
class Explorer(ModelSteps, KMapSteps, param.Parameterized):
    """A dataset's lattice, the (k, MaxSup, policy) question, and the answer from the profile."""

    k = param.Integer(default=2, bounds=(1, None), doc="every released QI combination has >= k rows")
    max_sup = param.Integer(default=0, bounds=(0, None), label="MaxSup (rows)")
    policy = param.Selector(default="min-relative", objects=list(POLICIES))
    weights = param.Dict(default={}, doc="per-QI weights for the weighted policy")
    view = param.Selector(default="auto", objects=list(VIEW_MODES))
    fixed = param.Dict(default={}, doc="QI -> level, for the sub-lattice view")
    expanded = param.List(default=[], item_type=int, doc="nodes whose neighbours are drawn too")
    selected = param.Integer(default=None, allow_None=True)
    probe = param.Integer(default=None, allow_None=True, doc="Find_vector step highlighted (index in the trace)")
    sensitive_attribute = param.Selector(default="", objects=[""], doc="sensitive attribute of l-diversity / t-closeness")
    # The privacy criteria's parameters (l_kind, l, c, t, ground, max_risk, ..., k_map: one per control the
    # registry's criteria declare) are generated: controls.declare, below the class and on each new Explorer
    population_name = param.String(default="", precedence=-1,
                                   doc="the population table k-map reads ('' = none known: k-map is off)")

    dataset = param.ClassSelector(class_=Dataset, allow_None=True, precedence=-1)
    profile = param.ClassSelector(class_=LatticeProfile, allow_None=True, precedence=-1)
    plain_profile = param.ClassSelector(class_=LatticeProfile, allow_None=True, precedence=-1,
                                        doc="k-anonymity alone (to tell which nodes fail only a privacy model)")
    answer = param.ClassSelector(class_=(Answer, LargeAnswer), allow_None=True, precedence=-1)
    preferred = param.Integer(default=None, allow_None=True, precedence=-1)
    message = param.String(default="", precedence=-1)
    model_running = param.Boolean(default=False, precedence=-1,
                                  doc="the profile under the privacy models asked for is being built")
    model_progress = param.Number(default=0.0, bounds=(0, 1), precedence=-1,
                                  doc="fraction of that profile built")
    large = param.Boolean(default=False, precedence=-1,
                          doc="the lattice is too large for the profile: the pruned search answers (explorer.large)")
    searching = param.Boolean(default=False, precedence=-1, doc="a pruned search is answering the question")
    search_progress = param.Number(default=0.0, bounds=(0, 1), precedence=-1, doc="fraction of that search done")

    def __init__(self, dataset: Dataset | None = None, profile: LatticeProfile | None = None, *,
                 population: PopulationTable | None = None, **params):
        declare(type(self))  # a criterion registered since the class was made (a test's) gets its parameters
        super().__init__(**params)
        # A criterion on the classes changes the profile; one on the release only the query of it. One
        # watcher each, so that a batch of changes is answered once.
        self.param.watch(lambda *_: self._apply_models(), ["sensitive_attribute", *names(scope=Scope.CLASS)])
        self.param.watch(lambda *_: self._answer(), ["k", "max_sup", "policy", "weights", *names(scope=Scope.RELEASE)])
        self._loading = False
        # k-map: the population given to the dashboard (a bundled sample knows its own), the one of the
        # dataset loaded, its joint roll-up with the dataset once built, and the KMap in force (or None)
        self.given_population = population
        self._population: PopulationTable | None = None
        self.joint = None  # KMapProfile
        self._joint_running = False
        self.applied_k_map = None  # KMap
        # The sensitive frequency and the (rebuilt) privacy models the current profile was built
        # with: release(), explain() and the export use these very objects (None / () without models).
        self.applied_frequency: SensitiveFrequency | None = None
        self.applied_models: tuple = ()
        # Runs a function where the page may be changed (a served page's event loop, under the
        # document lock); None: here and now (tests, notebooks). With it, a privacy model's profile
        # is built on a worker thread, so that the page stays responsive.
        self.hand_back: Callable[[Callable[[], None]], None] | None = None
        # What a question answered here and now changes goes to a served page as one message under this
        # (sent change by change, the browser lays the page out again for each: half a second at 12 QIs).
        self.hold: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext
        self._models = Latest("microrelease-models")
        self._search = Latest("microrelease-search")
        self.searcher: Searcher | None = None  # the loaded table's warm evaluator, on a large lattice
        self._lattice = None
        self._prepared = None  # on a large lattice: (attribute and specs, the models prepared for them)
        self._coded = None  # on a large lattice: the population coded for k-map
        self._unasked = ""
        self._quality: tuple | None = None  # (profile, k, scores): see quality_scores
        self._risk: tuple | None = None  # (profile, k, threshold, figures): see risk_figures
        if dataset is not None:
            self.load(dataset, profile)

    # --- loading --------------------------------------------------------------------------------
    def load(self, dataset: Dataset, profile: LatticeProfile | None = None,
             progress: Callable[[float], None] | None = None, *, searcher: Searcher | None = None) -> None:
        """Use ``dataset`` (building its profile unless given) and answer the current question; on a
        lattice too large for the profile (``large_lattice``), the pruned search answers, off the page."""
        if profile is None and (searcher is not None or large_lattice(dataset)):
            return self._load_large(dataset, searcher)
        quality = POLICIES[self.policy].reads_quality_profile  # see _with_quality
        if profile is None or (quality and profile.quality is None):
            profile = build_profile(dataset, progress=progress, quality=quality,
                                    strategy=kernel_strategy("quality" if quality else "lattice"))
        self.plain_profile = profile
        n = dataset.n_rows
        k, max_sup = min(self.k, n), min(self.max_sup, n)
        weights = {q: w for q, w in self.weights.items() if q in dataset.quasi_identifiers}
        answer, preferred, message = self._compute(profile, k, max_sup, weights)
        self._stop_models()  # a model profile being built is of the old dataset
        self._stop_search()
        self.searcher, self._lattice = None, profile.lattice
        # One batch, with the answer computed above: views never see the new lattice with the old
        # answer, and _answer does not compute it a second time.
        self._loading = True
        try:
            with param.parameterized.batch_call_watchers(self):
                self.k, self.max_sup, self.weights = k, max_sup, weights
                self.param.k.bounds = (1, n)
                self.param.max_sup.bounds = (0, n)
                self.dataset, self.profile, self.large = dataset, profile, False
                self.applied_frequency, self.applied_models, self.applied_k_map = None, (), None
                self._population, self.joint = population_for(dataset, self.given_population), None
                self.population_name = self._population.name if self._population is not None else ""
                others = [c for c in dataset.table.columns if c not in dataset.quasi_identifiers
                          and c not in dataset.schema.identifiers]
                self.param.sensitive_attribute.objects = ["", *others]
                self.sensitive_attribute = ""
                self.param.update(self.class_criteria_off())
                self.selected, self.probe, self.expanded, self.fixed = None, None, [], {}
                self.answer, self.preferred, self.message = answer, preferred, message
        finally:
            self._loading = False

    def _load_large(self, dataset: Dataset, searcher: Searcher | None = None) -> None:
        """Use ``dataset``, whose lattice the pruned search answers: one warm evaluator for every question
        of this table; the first answer comes off the page (progress, Cancel). Privacy models, k-map and
        the risk limits read the profile: they are off here. ``searcher``: the table's, when shared."""
        self._stop_models()
        self._stop_search()
        n = dataset.n_rows
        self.searcher = searcher or Searcher(dataset)
        self._prepared = None
        self._lattice = self.searcher.lattice
        self._loading = True
        try:
            with param.parameterized.batch_call_watchers(self):
                self.k, self.max_sup = min(self.k, n), min(self.max_sup, n)
                self.weights = {q: w for q, w in self.weights.items() if q in dataset.quasi_identifiers}
                self.param.k.bounds = (1, n)
                self.param.max_sup.bounds = (0, n)
                self.large, self.dataset, self.profile, self.plain_profile = True, dataset, None, None
                self.applied_frequency, self.applied_models, self.applied_k_map = None, (), None
                self.joint = None  # no joint roll-up on a large lattice: the pruned search checks F per node
                self._population = population_for(dataset, self.given_population)
                self.population_name = self._population.name if self._population is not None else ""
                self._coded = None  # the population coded through the dataset's hierarchies, once asked for
                others = [c for c in dataset.table.columns if c not in dataset.quasi_identifiers
                          and c not in dataset.schema.identifiers]
                self.param.sensitive_attribute.objects = ["", *others]
                self.sensitive_attribute = ""
                self.param.update(self.class_criteria_off())
                self.selected, self.probe, self.expanded, self.fixed, self.view = None, None, [], {}, "auto"
                self.answer, self.preferred, self.message = None, None, ""
        finally:
            self._loading = False
        self._ask_pruned()

    def _ask_pruned(self) -> None:
        """Answer the question by the pruned search on a worker thread (here and now without a page): the
        answer shown stays until the new one replaces it; a newer question stops this one."""
        k, max_sup, policy, weights = self.k, self.max_sup, self.policy, dict(self.weights)
        searcher, shown = self.searcher, self.answer
        try:
            criteria, unasked = self.large_criteria()
        except MicroreleaseError as exc:  # a model that does not fit the attribute: said, nothing searched
            self._search.stop()
            return self._finish_search(InvalidParameterError(f"privacy models not applied: {exc}"))
        self._unasked = unasked
        known = searcher.known(k, max_sup, policy, weights, criteria)
        if known is not None:  # asked before (in any session of this table): no search, no worker
            self._search.stop()  # a search still running answers an older question: its answer is dropped
            return self._finish_search(known)
        reuse = shown if Searcher.serves(shown, k, max_sup, policy, criteria) else None

        served, started = self.hand_back is not None, time.monotonic()

        def work(report, should_stop):
            shown_at = [0.0]

            def coarse(fraction: float) -> None:  # each step shown is a message to the page: a second's search
                if fraction - shown_at[0] >= SEARCH_STEP and (  # takes 10, not 100
                        not served or time.monotonic() - started >= SHOW_AFTER):
                    shown_at[0] = fraction
                    report(fraction)

            try:
                return searcher.answer(k, max_sup, policy, weights, criteria=criteria, progress=coarse,
                                       should_stop=should_stop, reuse=reuse)
            except InvalidParameterError as exc:  # a policy the pruned search does not score (KL divergence)
                return exc

        if reuse is not None:  # the same tags: no search, no worker
            self._search.stop()
            return self._finish_search(work(lambda _: None, lambda: False))
        if not served:
            self.param.update(searching=True, search_progress=0.0)
        self._search.start(work, self._finish_search, lambda f: self.param.update(searching=True, search_progress=f),
                           self.hand_back)

    def _finish_search(self, outcome) -> None:
        self.param.update(searching=False, search_progress=1.0)
        if isinstance(outcome, Exception):
            self.message = f"Not answered: {outcome}" if isinstance(outcome, InvalidParameterError) else str(outcome)
            return
        answer, preferred, message = outcome
        with param.parameterized.batch_call_watchers(self):
            given = answer.given
            # the release, the details and the export read the models the answer was searched under
            self.applied_frequency = given.sensitive if given is not None and given.models else None
            self.applied_models = given.models if given is not None else ()
            self.answer, self.preferred = answer, preferred
            self.message = " ".join(m for m in (message, self._unasked) if m)

    def large_criteria(self) -> tuple[Criteria | None, str]:
        """On a large lattice: k and every criterion the sidebar asks for, as the pruned search takes them
        (None: k alone), and what could not be asked ('' or a line saying why). The models are prepared
        as the command line prepares them (MicroreleaseError when one does not fit the attribute)."""
        specs, unasked = self.model_specs(), ""
        models, sensitive = (), None
        if specs and self.sensitive_attribute:
            key = (self.sensitive_attribute, tuple(sorted(specs.items())))
            if self._prepared is None or self._prepared[0] != key:  # prepared once per question of models
                self._prepared = (key, prepare_models(self.dataset, self.sensitive_attribute, specs))
            models, sensitive = self._prepared[1].models, self._prepared[1].sensitive_frequency
        elif specs:
            unasked = "Choose a sensitive attribute for the models."
        others = (*models, *self.criteria(), *self._large_k_map())
        return (Criteria.of(self.k, *others, sensitive=sensitive) if others else None), unasked

    def _large_k_map(self) -> tuple:
        """The k-map the sidebar asks for on a large lattice, bound to the population (coded once per
        table; a DataError or a K above its rows is said as a model that does not fit)."""
        if self.k_map <= 0 or self._population is None:
            return ()
        if self._coded is None:
            self._coded = code_population(self._population.table, self.dataset, source=self._population.source)
        return (KMap(self.k_map, self._coded).validate(),)

    def _stop_search(self) -> None:
        self._search.stop()
        if self.searching:
            self.param.update(searching=False, search_progress=0.0)

    def cancel_profile(self) -> None:
        """Stop the search or the profile being built (the Cancel button under the progress bar)."""
        if self.searching:
            self._stop_search()
            shown = self.answer
            self.message = ("Cancelled: the lattice shows the answer " + (
                f"to k = {shown.k}, MaxSup = {shown.max_sup}" if shown is not None else "of no question yet")
                + "; change the question to search again.")
            return
        super().cancel_profile()

    def criteria(self) -> tuple:
        """The criteria on the release asked for (the risk limits, and any registered since), parsed from
        their text specs as the command line's."""
        strategy = kernel_strategy("uniqueness")  # compiled, or numpy until the warm-up has compiled it
        return tuple(replace(c, strategy=strategy) if isinstance(c, PopulationUniqueness) else c
                     for c in parse_criteria(self.specs(scope=Scope.RELEASE)))

    def unapplied(self) -> str:
        """Why the lattice does not answer the question the sidebar asks ('' when it does): privacy models
        or a k-map asked for but not applied (a conflict, a model that does not fit, a profile still being
        built). An export would otherwise write a release without them."""
        if self.model_running:
            return "the privacy model's or k-map's profile is still being built"
        if self.searching:
            return "the pruned search is still answering the question"
        missing = []
        if self.model_specs() and not self.applied_models:
            missing.append("the privacy models")
        if self.k_map and self.applied_k_map is None:
            missing.append(f"{self.k_map}-map")
        if not missing:
            return ""
        return f"{' and '.join(missing)} asked for in the sidebar are not applied" + (
            f" ({self.message})" if self.message else "")

    def _compute(self, profile: LatticeProfile, k: int, max_sup: int, weights: dict):
        answer = query(profile, k, max_sup, self.criteria())
        try:
            return answer, profile.lattice.index(answer.preferred(self.policy, weights).vector), ""
        except (NoSolutionError, InvalidParameterError) as exc:  # no node; or a quality policy with models
            return answer, None, str(exc)

    def _apply_models(self) -> None:  # on a new sensitive attribute or criterion on the classes (__init__)
        with self.hold():
            self._apply_models_now()

    def _apply_models_now(self) -> None:
        if self.large:  # the pruned search takes the models with the question (k-map: hidden there)
            if not self._loading:
                self._ask_pruned()
            return
        self._apply_model_specs()

    def _answer(self) -> None:  # on a new k, MaxSup, policy, weights or criterion on the release (__init__)
        with self.hold():
            self._answer_now()

    def _answer_now(self) -> None:
        if self._loading:
            return
        if self.large:
            return self._ask_pruned()
        if self.profile is None:
            return
        self._with_quality()
        answer, preferred, message = self._compute(self.profile, self.k, self.max_sup, self.weights)
        with param.parameterized.batch_call_watchers(self):
            self.answer, self.preferred, self.message = answer, preferred, message

    # --- what the sidebar changes ----------------------------------------------------------------
    def max_sup_share(self, percent: float) -> None:
        """MaxSup as a share of the rows; a share rounds down, as in the core."""
        n = self.dataset.n_rows
        self.max_sup = min(int(percent / 100 * n + 1e-9), n)

    def expand_selected(self) -> None:
        """Draw the selected node's neighbours too."""
        if self.selected is not None and self.selected not in self.expanded:
            self.expanded = [*self.expanded, self.selected]

    def fix(self, qi: str, level: int) -> None:
        """Fix ``qi`` at ``level`` in the sub-lattice view (a negative level frees it)."""
        fixed = {q: v for q, v in self.fixed.items() if q != qi}
        if level >= 0:
            fixed[qi] = level
        self.fixed = fixed
        if fixed:
            self.view = "sub-lattice"

    # --- derived ---------------------------------------------------------------------------------
    @property
    def lattice(self):
        return self.profile.lattice if self.profile is not None else self._lattice  # the pruned search's: no profile

    def status(self) -> np.ndarray:
        """Per node: an index into STATUS (0 fails, 1 satisfies, 2 k-minimal, 3 preferred, 4 fails a model)."""
        a = self.answer
        s = a.satisfying.astype(np.int8) + a.minimal.astype(np.int8)
        if not self.large and (self.profile is not self.plain_profile or a.criteria) and self.plain_profile is not None:
            plain = self.plain_profile.stats(self.k).suppressed <= self.max_sup
            s[plain & ~a.satisfying] = 4  # k-anonymity alone would do: a privacy model fails (or a risk one)
        if self.preferred is not None:
            s[self.preferred] = 3
        return s

    def failing_models(self, i: int) -> str:
        """Rows in classes failing each privacy model at node i ('' without models)."""
        rows = self.profile.failing_by_model if self.profile is not None else {}
        return "; ".join(f"{name}: {int(r[i])} rows" for name, r in rows.items() if r[i]) if rows else ""

    def vector_text(self, i: int) -> str:
        """Node i spelled with level names: ``sex: *, age: bands of 10, ...`` (raw text: escape it for a pane)."""
        return describe_vector(self.dataset.hierarchies, self.lattice.node(i))

    def nodes_frame(self, ids: np.ndarray | None = None) -> pd.DataFrame:
        """One row per node (default: every node) with what the views show and hover."""
        ids = np.arange(self.lattice.size) if ids is None else np.asarray(ids, dtype=np.int64)
        a, m = self.answer, self.answer.metrics
        status = self.status()[ids]
        return pd.DataFrame({
            "node": ids,
            "vector": [str(row) for row in self.lattice.grid[ids].tolist()],  # "[1, 0, 2]", one call for all
            "levels": describe_vectors(self.dataset.hierarchies, self.lattice.grid[ids]),
            "height": self.lattice.node_heights[ids],
            "status": np.asarray(STATUS, dtype=object)[status],
            "suppressed": a.stats.suppressed[ids],
            "accuracy": m["accuracy"][ids].round(4),
            "completeness": m["completeness"][ids].round(4),
            "distinct": a.stats.distinct[ids],
            "models": [self.failing_models(int(i)) for i in ids],
        })

    def figures(self, i: int) -> dict[str, int | float]:
        """Every registered metric (core ``METRICS``) of node i."""
        return {name: values[i].item() for name, values in self.answer.metrics.items()}

    def risk(self, i: int) -> dict[str, float | str | None]:
        """Node i's re-identification risk over its released classes: the prosecutor's highest, average
        and records above ``risk_threshold``; and, when a population-uniques limit is set, the estimated
        share of population uniques for ``sampling_fraction`` (Dankar's rule; None without an estimate).
        No journalist figure: only a population table gives class sizes in the population."""
        if self.large:  # from the node's classes (the risk limits are off on a large lattice)
            return self.answer.risk(i, self.risk_threshold)
        figures = self.risk_figures()
        out: dict[str, float | str | None] = {name: float(figures[name][i])
                                              for name in ("highest", "average", "records_at_risk")}
        if self.max_uniqueness <= 0:
            return out
        sizes, counts, released = self.class_sizes(i)  # this node's histogram, not the lattice's
        est = uniqueness_by_node(np.array([0, released.sum()]), sizes[released], counts[released],
                                 self.sampling_fraction, strategy=kernel_strategy("uniqueness"))
        out["population_uniques"] = float(est.share[0]) if est.converged[0] else None
        out["uniqueness_model"] = str(est.model[0])
        return out

    def quality(self, i: int) -> dict[str, float]:
        """ARX's quality models at node i that this profile can give (Loss needs its share mass
        and no privacy model)."""
        out = {}
        if self.large:  # no profile: the quality policy's score of the node (its search's), when chosen
            name = self.policy
            if name in QUALITY_MODELS and self.answer.pruned.search.quality == name:
                out[name] = self.answer.pruned.search.scores.get(i)
            return {n: v for n, v in out.items() if v is not None}
        return {name: float(scores[i]) for name, scores in self.quality_scores().items()}

    def quality_scores(self) -> dict[str, np.ndarray]:
        """Quality model -> score per node, for the models this profile can give, every node at once: the
        one computation ``quality`` (and the tabs through it) reads, kept until the profile or k
        changes. Not on a large lattice (no profile)."""
        key = (self.profile, self.k)
        if self._quality is None or self._quality[0] is not key[0] or self._quality[1] != key[1]:
            scores = {}
            for name, model in QUALITY_MODELS.items():
                try:
                    scores[name] = model.score(self.profile, self.k)
                except InvalidParameterError:  # Loss, entropy, KL without the share mass
                    continue
            self._quality = (*key, scores)
        return self._quality[2]

    def risk_figures(self) -> dict[str, np.ndarray]:
        """Prosecutor risk figure (core ``node_risk``) -> value per node at ``risk_threshold``, every node
        at once: the one computation ``risk`` (and the tabs through it) reads, kept until the
        profile, k or the threshold changes. Not on a large lattice (no profile)."""
        key = (self.profile, self.k, self.risk_threshold)
        if self._risk is None or self._risk[0] is not key[0] or self._risk[1:3] != key[1:]:
            self._risk = (*key, node_risk(self.profile, self.k, threshold=self.risk_threshold))
        return self._risk[3]

    def class_sizes(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class size, number of classes of that size, released: size >= k) at node i."""
        sizes, counts = (self.answer.class_sizes(i) if self.large else self.profile.histogram(self.lattice.node(i)))
        return sizes, counts, sizes >= self.k

    def suppressed_rows(self, table: GeneralizedTable, limit: int) -> pd.DataFrame:
        """The first ``limit`` input rows ``table`` suppressed (input row number and written columns)."""
        columns = self.dataset.schema.output_columns(list(self.dataset.table.columns))
        return self.dataset.table.loc[table.suppressed_rows[:limit], columns]

    def k_minimal_vectors(self) -> list[list[int]]:
        return self.lattice.grid[self.answer.k_minimal_indices].tolist()

    def find_vector(self) -> FindVectorResult:
        return self.answer.find_vector()

    def release(self, node_index: int | None = None) -> GeneralizedTable:
        """The generalized table with minimal required suppression at ``node`` (default: selected)."""
        node_index = self.selected if node_index is None else node_index
        if self.applied_k_map is not None:
            return k_map_release(self.dataset, self.lattice.node(node_index), self.k, self.applied_k_map,
                                 self.applied_frequency, self.applied_models)
        return generalize(self.dataset, self.lattice.node(node_index), self.k, sensitive_frequency=self.applied_frequency,
                          models=self.applied_models)

    def explain(self, node_index: int | None = None) -> pd.DataFrame:
        """The classes of ``node`` (default: selected) that fail a privacy model, with their distributions."""
        node_index = self.selected if node_index is None else node_index
        if not self.applied_models or node_index is None:
            return pd.DataFrame()
        return explain_node(self.dataset, self.applied_frequency, self.lattice.node(node_index), self.applied_models,
                            k=self.k)


declare(Explorer)  # the registry's criteria, as the class is made (the sidebar reads their parameters)
