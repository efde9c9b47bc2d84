"""Dashboard state: param classes that import no Panel (views hang off them; tests drive them).

``Explorer`` owns one dataset, its whole-lattice profile and the current question (k, MaxSup,
policy). Every change of the question is answered from the profile (``microrelease.core.query``),
never by re-reading the data. What the lattice view draws is derived here too, so the browser and
the tests see the same thing.

What the dashboard exports is :meth:`Explorer.release_spec`: the same ``NodeRelease`` the CLI's
``release`` builds for the same question, so the file is the release the screen shows.
"""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import numpy as np
import pandas as pd
import param

from microrelease.app import graph
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
from microrelease.core.exceptions import MicroreleaseError
from microrelease.core.lattice.hierarchies import find_hierarchy_file, read_arx
from microrelease.core.lattice.release import NodeRelease
from microrelease.core.lattice.search import FindVectorResult
from microrelease.core.models.definitions import (
    DISTANCES,
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    TCloseness,
)
from microrelease.core.models.profile import (
    SensitiveFrequency,
    build_model_profile,
    explain_node,
    sensitive_frequency,
)

STATUS = ("fails", "satisfies", "k-minimal", "preferred", "fails privacy model")
STATUS_COLORS = {"fails": "#bdbdbd", "satisfies": "#6baed6", "k-minimal": "#fd8d3c", "preferred": "#d62728",
                 "fails privacy model": "#9e9ac8"}
L_KINDS = ("none", "distinct", "entropy", "recursive")


class Explorer(param.Parameterized):
    """A dataset's lattice, the (k, MaxSup, policy) question, and the answer from the profile."""

    k = param.Integer(default=2, bounds=(1, None), doc="every released QI combination has >= k rows")
    max_sup = param.Integer(default=0, bounds=(0, None), label="MaxSup (rows)")
    policy = param.Selector(default="min-relative", objects=list(POLICIES))
    weights = param.Dict(default={}, doc="per-QI weights for the weighted policy")
    view = param.Selector(default="auto", objects=["auto", "focused", "full", "sub-lattice"])
    fixed = param.Dict(default={}, doc="QI -> level, for the sub-lattice view")
    expanded = param.List(default=[], item_type=int, doc="nodes whose neighbours are drawn too")
    selected = param.Integer(default=None, allow_None=True)
    probe = param.Integer(default=None, allow_None=True, doc="Find_vector step highlighted (index in the trace)")
    sensitive = param.Selector(default="", objects=[""], doc="sensitive attribute of l-diversity / t-closeness")
    l_kind = param.Selector(default="none", objects=list(L_KINDS), label="l-diversity")
    l = param.Number(default=2, bounds=(1, None), label="l")  # noqa: E741 - the papers' name
    c = param.Number(default=3, bounds=(0, None), inclusive_bounds=(False, True), label="c (recursive)")
    t = param.Number(default=0.0, bounds=(0, 1), label="t-closeness t (0 = off)")
    distance = param.Selector(default="equal", objects=list(DISTANCES), label="EMD ground distance")

    dataset = param.ClassSelector(class_=Dataset, allow_None=True, precedence=-1)
    profile = param.ClassSelector(class_=LatticeProfile, allow_None=True, precedence=-1)
    plain_profile = param.ClassSelector(class_=LatticeProfile, allow_None=True, precedence=-1,
                                        doc="k-anonymity alone (to tell which nodes fail only a privacy model)")
    answer = param.ClassSelector(class_=Answer, allow_None=True, precedence=-1)
    preferred = param.Integer(default=None, allow_None=True, precedence=-1)
    message = param.String(default="", precedence=-1)

    def __init__(self, dataset: Dataset | None = None, profile: LatticeProfile | None = None, **params):
        super().__init__(**params)
        self._drawn_key, self._drawn, self._loading = None, None, False
        # The sensitive frequency and the (rebuilt) privacy models the current profile was built
        # with: release(), explain() and release_spec() use these very objects (None / () without models).
        self.applied_sensitive: SensitiveFrequency | None = None
        self.applied_models: tuple = ()
        if dataset is not None:
            self.load(dataset, profile)

    # --- loading --------------------------------------------------------------------------------
    def load(self, dataset: Dataset, profile: LatticeProfile | None = None,
             progress: Callable[[float], None] | None = None) -> None:
        """Use ``dataset`` (building its profile unless given) and answer the current question."""
        profile = profile or build_profile(dataset, progress=progress)
        self.plain_profile = profile
        n = dataset.n_rows
        k, max_sup = min(self.k, n), min(self.max_sup, n)
        weights = {q: w for q, w in self.weights.items() if q in dataset.quasi_identifiers}
        answer, preferred, message = self._compute(profile, k, max_sup, weights)
        # One batch, with the answer computed above: views never see the new lattice with the old
        # answer, and _answer does not compute it a second time.
        self._loading = True
        try:
            with param.parameterized.batch_call_watchers(self):
                self.k, self.max_sup, self.weights = k, max_sup, weights
                self.param.k.bounds = (1, n)
                self.param.max_sup.bounds = (0, n)
                self.dataset, self.profile = dataset, profile
                self.applied_sensitive, self.applied_models = None, ()
                others = [c for c in dataset.table.columns if c not in dataset.quasi_identifiers
                          and c not in dataset.schema.identifiers]
                self.param.sensitive.objects = ["", *others]
                self.sensitive, self.l_kind, self.t = "", "none", 0.0
                self.selected, self.probe, self.expanded, self.fixed = None, None, [], {}
                self.answer, self.preferred, self.message = answer, preferred, message
        finally:
            self._loading = False

    def _compute(self, profile: LatticeProfile, k: int, max_sup: int, weights: dict):
        answer = query(profile, k, max_sup)
        try:
            return answer, profile.lattice.index(answer.preferred(self.policy, weights).vector), ""
        except NoSolutionError as exc:
            return answer, None, str(exc)

    def models(self) -> list:
        """The privacy models asked for (empty: k-anonymity alone)."""
        models = []
        if self.l_kind == "distinct":
            models.append(DistinctLDiversity(int(self.l)))
        elif self.l_kind == "entropy":
            models.append(EntropyLDiversity(float(self.l)))
        elif self.l_kind == "recursive":
            models.append(RecursiveCLDiversity(float(self.c), int(self.l)))
        if self.t > 0:
            models.append(TCloseness(float(self.t), self.distance))
        return models

    def sensitive_frequency(self) -> SensitiveFrequency:
        hierarchy = None
        if self.distance == "hierarchical" and self.t > 0:
            folder = self.dataset.hierarchy_dir
            found = find_hierarchy_file(folder, self.sensitive) if folder else None
            hierarchy = read_arx(found, self.sensitive) if found else None
        return sensitive_frequency(self.dataset, self.sensitive, hierarchy)

    @param.depends("sensitive", "l_kind", "l", "c", "t", "distance", watch=True)
    def _apply_models(self) -> None:
        if self.dataset is None or self._loading:
            return
        models = self.models()
        applied: tuple[SensitiveFrequency | None, tuple] = (None, ())
        if not models or not self.sensitive:
            profile, message = self.plain_profile, "" if not models else "Choose a sensitive attribute for the models."
        else:
            try:
                sf = self.sensitive_frequency()
                models = [TCloseness(m.t, m.distance, sf.hierarchy, sf.ground_order) if isinstance(m, TCloseness)
                          else m for m in models]
                profile, message = build_model_profile(self.dataset, sf, models), ""
                applied = (sf, tuple(models))
            except MicroreleaseError as exc:
                profile, message = self.plain_profile, f"Privacy models not applied: {exc}"
        answer, preferred, note = self._compute(profile, self.k, self.max_sup, self.weights)
        with param.parameterized.batch_call_watchers(self):
            self.applied_sensitive, self.applied_models = applied
            self.profile, self.selected = profile, None
            self.answer, self.preferred, self.message = answer, preferred, message or note

    @param.depends("k", "max_sup", "policy", "weights", watch=True)
    def _answer(self) -> None:
        if self.profile is None or self._loading:
            return
        answer, preferred, message = self._compute(self.profile, self.k, self.max_sup, self.weights)
        with param.parameterized.batch_call_watchers(self):
            self.answer, self.preferred, self.message = answer, preferred, message

    # --- derived ---------------------------------------------------------------------------------
    @property
    def lattice(self):
        return self.profile.lattice

    def status(self) -> np.ndarray:
        """Per node: 0 fails, 1 satisfies, 2 k-minimal, 3 preferred (indices into STATUS)."""
        a = self.answer
        s = a.satisfying.astype(np.int8) + a.minimal.astype(np.int8)
        if self.profile is not self.plain_profile and self.plain_profile is not None:
            plain = self.plain_profile.stats(self.k).suppressed <= self.max_sup
            s[plain & ~a.satisfying] = 4  # k-anonymity alone would do: a privacy model fails
        if self.preferred is not None:
            s[self.preferred] = 3
        return s

    def failing_models(self, i: int) -> str:
        """Rows in classes failing each privacy model at node i ('' without models)."""
        rows = self.profile.failing_by_model if self.profile is not None else {}
        return "; ".join(f"{name}: {int(r[i])} rows" for name, r in rows.items() if r[i]) if rows else ""

    def effective_view(self) -> str:
        if self.view != "auto":
            return self.view
        return "full" if self.lattice.size <= graph.FOCUS_LIMIT else "focused"

    def drawn_graph(self) -> nx.DiGraph:
        """The drawn part of the lattice (networkx, ``pos`` on every node) for the current view.

        Several views ask for it after one change; it is computed once per state.
        """
        key = (id(self.answer), self.preferred, self.selected, self.effective_view(),
               tuple(sorted(self.fixed.items())), tuple(self.expanded))
        if self._drawn_key != key:
            self._drawn_key, self._drawn = key, graph.drawn_graph(self.lattice, self._drawn_ids())
        return self._drawn

    def drawn(self) -> np.ndarray:
        """Node numbers the lattice view draws, for the current view mode."""
        return np.fromiter(self.drawn_graph().nodes, dtype=np.int64)

    def _drawn_ids(self) -> np.ndarray:
        mode = self.effective_view()
        if mode == "full":
            ids = np.arange(self.lattice.size)
        elif mode == "sub-lattice":
            ids = graph.sublattice(self.lattice, self.fixed)
        else:
            first = [i for i in (self.preferred, self.selected) if i is not None]
            ids = graph.frontier(self.lattice, self.answer.satisfying, self.answer.minimal, first=first)
        if self.expanded:
            below, above = graph.neighbours(self.lattice, self.expanded)
            ids = np.union1d(ids, np.concatenate([below, above, self.expanded]))
        if self.selected is not None and self.selected not in ids:
            ids = np.append(ids, self.selected)
        return np.asarray(ids, dtype=np.int64)

    def vector_text(self, i: int) -> str:
        """The vector spelled with level names: ``sex: *, age: 10-wide bands, ...``."""
        v = self.lattice.node(i)
        return ", ".join(f"{h.attribute}: {h.level_names[d]}" for h, d in zip(self.dataset.hierarchies, v, strict=True))

    def nodes_frame(self, ids: np.ndarray | None = None) -> pd.DataFrame:
        """One row per node (default: every node) with what the views show and hover."""
        ids = np.arange(self.lattice.size) if ids is None else np.asarray(ids, dtype=np.int64)
        a, m = self.answer, self.answer.metrics
        status = self.status()[ids]
        return pd.DataFrame({
            "node": ids,
            "vector": [str(list(self.lattice.node(int(i)))) for i in ids],
            "levels": [self.vector_text(int(i)) for i in ids],
            "height": self.lattice.node_heights[ids],
            "status": np.asarray(STATUS, dtype=object)[status],
            "suppressed": a.stats.suppressed[ids],
            "accuracy": m["accuracy"][ids].round(4),
            "completeness": m["completeness"][ids].round(4),
            "distinct": a.stats.distinct[ids],
            "models": [self.failing_models(int(i)) for i in ids],
        })

    def k_minimal_vectors(self) -> list[list[int]]:
        return [list(n.vector) for n in self.answer.k_minimal_nodes()]

    def find_vector(self) -> FindVectorResult:
        return self.answer.find_vector()

    def release(self, node: int | None = None) -> GeneralizedTable:
        """The generalized table with minimal required suppression at ``node`` (default: selected)."""
        node = self.selected if node is None else node
        return generalize(self.dataset, self.lattice.node(node), self.k, sensitive=self.applied_sensitive,
                          models=self.applied_models)

    def explain(self, node: int | None = None) -> pd.DataFrame:
        """The classes of ``node`` (default: selected) that fail a privacy model, with their distributions."""
        node = self.selected if node is None else node
        if not self.applied_models or node is None:
            return pd.DataFrame()
        return explain_node(self.dataset, self.applied_sensitive, self.lattice.node(node), self.applied_models,
                            k=self.k)

    # --- export: the CLI's release decision ------------------------------------------------------
    def export_node(self) -> int | None:
        """The node an export writes: the selected one, else the policy's preferred one (None: neither)."""
        return self.selected if self.selected is not None else self.preferred

    def release_spec(self, node: int | None = None) -> NodeRelease:
        """The release decision of the current state, built exactly as ``microrelease release`` builds it.

        ``node`` (default: the selected node) is released as ``--node`` does (chosen_by "node"); with
        no node and no selection, the policy's preferred node (chosen_by "policy NAME", with the
        policy and its weights). MaxSup, the sensitive attribute and the privacy models are those
        the current profile (and so the screen) was computed with. Raises NoSolutionError when
        there is nothing to release.
        """
        if self.dataset is None or self.answer is None:
            raise NoSolutionError("no data loaded: nothing to release")
        node = self.selected if node is None else node
        data, k, max_sup, sensitive, models = (self.dataset, self.k, self.max_sup, self.applied_sensitive,
                                               self.applied_models)
        if node is not None:
            return NodeRelease(data, self.lattice.node(int(node)), k, max_sup, sensitive, models)
        if self.preferred is None:
            raise NoSolutionError(self.message or f"no node satisfies k={k} with MaxSup={max_sup}")
        return NodeRelease(data, self.lattice.node(self.preferred), k, max_sup, sensitive, models,
                           f"policy {self.policy}", self.policy,
                           dict(self.weights) if self.policy == "weighted" and self.weights else None)

    def export_refusal(self, node: int | None) -> str:
        """Why ``node`` cannot be exported ('' when it can). From the answer the screen shows; the
        core refuses the same nodes (more suppressed rows than MaxSup, model failures included)."""
        if self.answer is None:
            return "Nothing to export: no data loaded."
        if node is None:
            return "Nothing to export: " + (self.message or "no node is selected and none satisfies the question.")
        r = self.answer.node(int(node))
        if r.satisfies:
            return ""
        text = (f"Node {list(r.vector)} cannot be exported: it does not satisfy k = {self.k} within MaxSup = "
                f"{self.max_sup} (it needs {r.suppressed} suppressed rows)")
        failing = self.failing_models(int(node))
        return text + (f"; it fails the privacy models: {failing}." if failing else ".")

    def summary(self) -> str:
        """One paragraph for the page, with stable element ids the browser tests read."""
        if self.answer is None:
            return "No data loaded."
        kmin = self.k_minimal_vectors()
        pref = "none" if self.preferred is None else str(list(self.lattice.node(self.preferred)))
        shown = " ".join(str(v) for v in kmin[:40]) + (f" … (+{len(kmin) - 40})" if len(kmin) > 40 else "")
        return (
            f"**k = <span id='k'>{self.k}</span>, MaxSup = <span id='max-sup'>{self.max_sup}</span> rows** "
            f"({self.max_sup / self.dataset.n_rows:.2%}) · {int(self.answer.satisfying.sum())} of "
            f"{self.lattice.size} nodes satisfy · <span id='n-kmin'>{len(kmin)}</span> k-minimal: "
            f"<span id='kmin'>{shown}</span> · preferred ({self.policy}): <span id='preferred'>{pref}</span>"
            + (f" · models: <span id='models'>{', '.join(m.describe() for m in self.profile.models)}</span> "
               f"on {self.sensitive}" if self.profile.models else "")
            + (f"\n\n⚠ {self.message}" if self.message else "")
        )
