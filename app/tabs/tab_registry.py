"""The registry of the dashboard's tabs, in page order: adding a tab is adding one entry here.

The page follows the steps of a release decision: 1 Data → 2 Question (the sidebar) → 3 Explore
(lattice, trade-off) → 4 Decide (node details, risk, export); the tabs after those stand aside from
the question. Each entry names the tab, gives its state (made from the session's ``TabContext``)
and its view class (the view is made as ``view(state=state)``), the one line at its top saying what
it needs and what it shows, and which sidebar sections it uses. The dashboard
(``microrelease.app.main``) builds its page from this list; once a first page is shown, ``serve``
computes each tab's shared figures (``warm``) in a low-priority child process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import panel as pn
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.explorer.sidebar import LATTICE_VIEW, QUESTION
from microrelease.app.tabs.compare.compare_state import CompareState
from microrelease.app.tabs.compare.compare_view import CompareView
from microrelease.app.tabs.data.data_state import DataState
from microrelease.app.tabs.data.data_view import DataView
from microrelease.app.tabs.dp.dp_state import DifferentialPrivacyState, release_curves
from microrelease.app.tabs.dp.dp_view import DifferentialPrivacyView
from microrelease.app.tabs.export.export_state import ExportState
from microrelease.app.tabs.export.export_view import ExportView
from microrelease.app.tabs.lattice.lattice_state import LatticeState
from microrelease.app.tabs.lattice.lattice_view import LatticeView
from microrelease.app.tabs.microaggregation.microaggregation_state import MicroaggregationState, curves
from microrelease.app.tabs.microaggregation.microaggregation_view import MicroaggregationView
from microrelease.app.tabs.sequences.sequences_state import SequencesState, attack_curves
from microrelease.app.tabs.sequences.sequences_view import SequencesView
from microrelease.app.tabs.teaching.teaching_state import TeachingState
from microrelease.app.tabs.teaching.teaching_view import TeachingView
from microrelease.app.tabs.tradeoff.tradeoff_state import TradeoffState
from microrelease.app.tabs.tradeoff.tradeoff_view import TradeoffView
from microrelease.app.text import shown


@dataclass(frozen=True)
class TabContext:
    """What a tab's state may start from: the session's shared Explorer and the sample it opened on."""

    explorer: Explorer
    sample: str


@dataclass(frozen=True)
class Tab:
    name: str  # the key of the tab's view in Dashboard.views
    title: str  # the tab's label on the page (its step number first, for the steps of the decision)
    state: Callable[[TabContext], param.Parameterized]
    view: type[pn.viewable.Viewer]
    needs: str = ""  # Markdown: what the tab needs, first half of the line at its top
    shows: Callable[[Explorer, param.Parameterized], str] | None = None  # Markdown from the current answer
    sidebar: tuple[str, ...] = ()  # sidebar sections shown with this tab (microrelease.app.explorer.sidebar)
    details: bool = False  # show the selected node's details under the view
    warm: Callable[[], object] | None = None  # figures shared by every session, computed once per process
    lazy: bool = False  # built when first shown: building it costs the first page time (a tab with warm is lazy)
    large: bool = False  # works on a lattice answered by the pruned search (explorer.large), or on its own data

    @property
    def built_when_shown(self) -> bool:
        return self.lazy or self.warm is not None


def _preferred(e: Explorer) -> str:
    return "none" if e.preferred is None else str(list(e.lattice.node(e.preferred)))


def data_shows(e: Explorer, _state) -> str:
    d = e.dataset
    qis = ", ".join(f"{shown(h.attribute)} (height {h.height})" for h in d.hierarchies)
    return (f"{shown(Path(d.source).name or 'the table')}: {d.n_rows:,} rows; {len(d.quasi_identifiers)} "
            f"quasi-identifiers: {qis}; a lattice of {e.lattice.size:,} nodes.")


def lattice_shows(e: Explorer, _state) -> str:
    a = e.answer
    searched = f" (pruned search: {a.nodes_evaluated:,} nodes evaluated)" if e.large else ""
    return (f"{e.lattice.size:,} nodes{searched}, {int(a.satisfying.sum()):,} satisfy k = {e.k} within MaxSup = "
            f"{e.max_sup:,}, {int(a.minimal.sum()):,} k-minimal, preferred {_preferred(e)}.")


def tradeoff_shows(e: Explorer, state: TradeoffState) -> str:
    front = len(state.front()[0]) if e.answer.satisfying.any() else 0
    return (f"{int(e.answer.satisfying.sum()):,} satisfying nodes, {front:,} on the Pareto front, "
            f"preferred {_preferred(e)}.")


def decide_shows(e: Explorer, state: ExportState) -> str:
    i = state.node()
    if i is None:
        return "nothing to release: no node satisfies the question."
    r = e.answer.node(i)
    how = "the selected node" if e.selected is not None else f"the preferred node ({e.policy})"
    risk = "no row" if not r.max_risk else f"highest re-identification risk {r.max_risk:.3f} (1 in {r.smallest_class})"
    verdict = "" if r.satisfies else " It does not satisfy the question: the export is refused."
    return (f"{how} {list(r.vector)}: releases {e.dataset.n_rows - r.suppressed:,} of {e.dataset.n_rows:,} rows, "
            f"{risk}.{verdict}")


def teaching_shows(e: Explorer, _state) -> str:
    found = e.find_vector()
    vector = "no vector" if found.vector is None else f"vector {list(found.vector)}"
    return f"Find_vector's {len(found.trace)} probes for k = {e.k}, MaxSup = {e.max_sup:,}: {vector}."


EXPLORE_NEEDS = "a loaded table (step 1) and a question (step 2, on the left)."
OWN_SETTINGS = "nothing from the steps: its own sample and its own k, below (the question on the left does not apply)."

TABS: tuple[Tab, ...] = (
    Tab("data", "1 Data", lambda c: DataState(explorer=c.explorer, sample=c.sample), DataView,
        needs="a bundled sample, or your CSV with roles and a hierarchy per quasi-identifier.", shows=data_shows,
        lazy=True, large=True),
    Tab("lattice", "3 Explore: Lattice", lambda c: LatticeState(explorer=c.explorer), LatticeView,
        needs=EXPLORE_NEEDS, shows=lattice_shows, sidebar=(QUESTION, LATTICE_VIEW), details=True, large=True),
    Tab("tradeoff", "3 Explore: Trade-off", lambda c: TradeoffState(explorer=c.explorer), TradeoffView,
        needs=EXPLORE_NEEDS, shows=tradeoff_shows, sidebar=(QUESTION,), details=True),
    Tab("export", "4 Decide: Export", lambda c: ExportState(explorer=c.explorer), ExportView,
        needs="a node: the one tapped in step 3, else the policy's preferred one.", shows=decide_shows,
        sidebar=(QUESTION,), details=True, large=True),
    Tab("compare", "Compare", lambda c: CompareState(explorer=c.explorer), CompareView,
        needs="nodes pinned here: the one tapped in step 3, else the preferred one; two or three side by side.",
        shows=lambda e, state: state.describe(), sidebar=(QUESTION,), lazy=True),
    Tab("teaching", "Teaching", lambda c: TeachingState(explorer=c.explorer), TeachingView,
        needs="the loaded table and the question (on the left).", shows=teaching_shows, sidebar=(QUESTION,),
        lazy=True),
    Tab("microaggregation", "Microaggregation", lambda c: MicroaggregationState(), MicroaggregationView,
        needs=OWN_SETTINGS, warm=lambda: curves("census"), large=True),
    Tab("dp", "Differential privacy", lambda c: DifferentialPrivacyState(), DifferentialPrivacyView,
        needs="nothing from the steps: its own ε and data, below.", warm=release_curves, large=True),
    Tab("sequences", "Sequences", lambda c: SequencesState(), SequencesView, needs=OWN_SETTINGS, warm=attack_curves, large=True),
)
OPENING_TAB = "lattice"  # a sample or the command line's table is loaded already: the page opens on exploring it


def warm_figures(names: Sequence[str]) -> None:
    """Compute the shared figures of the tabs named (what the warm-up child runs)."""
    for tab in TABS:
        if tab.name in names and tab.warm is not None:
            tab.warm()
