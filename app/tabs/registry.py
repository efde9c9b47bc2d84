"""The registry of the dashboard's tabs, in page order: adding a tab is adding one entry here.

Each entry names the tab, gives its state (made from the session's :class:`TabContext`) and its
view class; the view is made as ``view(state=state)``. The dashboard (``microrelease.app.main``)
builds its page from this list, and ``serve`` warms each tab's shared figures before the first session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import panel as pn
import param

from microrelease.app.explorer.state import Explorer
from microrelease.app.tabs.data.state import DataState
from microrelease.app.tabs.data.view import DataView
from microrelease.app.tabs.dp.state import DifferentialPrivacyState, release_curves
from microrelease.app.tabs.dp.view import DifferentialPrivacyView
from microrelease.app.tabs.export.state import ExportState
from microrelease.app.tabs.export.view import ExportView
from microrelease.app.tabs.lattice.state import LatticeState
from microrelease.app.tabs.lattice.view import LatticeView
from microrelease.app.tabs.microaggregation.state import MicroaggregationState, curves
from microrelease.app.tabs.microaggregation.view import MicroaggregationView
from microrelease.app.tabs.sequences.state import SequencesState, attack_curves
from microrelease.app.tabs.sequences.view import SequencesView
from microrelease.app.tabs.teaching.state import TeachingState
from microrelease.app.tabs.teaching.view import TeachingView
from microrelease.app.tabs.tradeoff.state import TradeoffState
from microrelease.app.tabs.tradeoff.view import TradeoffView


@dataclass(frozen=True)
class TabContext:
    """What a tab's state may start from: the session's shared Explorer and the sample it opened on."""

    explorer: Explorer
    sample: str


@dataclass(frozen=True)
class Tab:
    name: str  # the key of the tab's view in Dashboard.views
    title: str  # the tab's label on the page
    state: Callable[[TabContext], param.Parameterized]
    view: type[pn.viewable.Viewer]
    details: bool = False  # show the selected node's details under the view
    warm: Callable[[], object] | None = None  # figures shared by every session, computed once per process


TABS: tuple[Tab, ...] = (
    Tab("lattice", "Lattice", lambda c: LatticeState(explorer=c.explorer), LatticeView, details=True),
    Tab("tradeoff", "Trade-off", lambda c: TradeoffState(explorer=c.explorer), TradeoffView, details=True),
    Tab("data", "Data", lambda c: DataState(explorer=c.explorer, sample=c.sample), DataView),
    Tab("teaching", "Teaching", lambda c: TeachingState(explorer=c.explorer), TeachingView),
    Tab("export", "Export", lambda c: ExportState(explorer=c.explorer), ExportView),
    Tab("microaggregation", "Microaggregation", lambda c: MicroaggregationState(), MicroaggregationView,
        warm=lambda: curves("census")),
    Tab("dp", "Differential privacy", lambda c: DifferentialPrivacyState(), DifferentialPrivacyView,
        warm=release_curves),
    Tab("sequences", "Sequences", lambda c: SequencesState(), SequencesView, warm=attack_curves),
)
