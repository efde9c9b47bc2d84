"""The dashboard: one ``create_app()`` per browser session, the same object inline in Jupyter.

The page is the sidebar (step 2, the question), the summary line and one tab per entry of
``microrelease.app.tabs.tab_registry.TABS``, in the order of a decision (1 Data, 3 Explore, 4 Decide,
then the tabs that stand aside); each tab opens with one line saying what it needs and what it shows.
Served: ``microrelease app`` (see ``microrelease.app.serve``). In a notebook::

    import panel as pn; pn.extension("tabulator", "filedropper", inline=True)
    from microrelease.app import Dashboard, lattice_view, tradeoff_view
    Dashboard(sample="samarati")            # the whole app
    lattice_view(dataset, k=5, max_sup=100)  # just the lattice of a given dataset
"""

from __future__ import annotations

from functools import lru_cache

import panel as pn
import param

from microrelease.app.explorer.details import NodeDetails
from microrelease.app.explorer.explorer import Explorer
from microrelease.app.explorer.headline import Summary
from microrelease.app.explorer.large import Searcher, large_lattice
from microrelease.app.explorer.population import PopulationTable
from microrelease.app.explorer.sidebar import QUESTION, Sidebar
from microrelease.app.kernel_readiness import kernel_strategy
from microrelease.app.tabs.data.data_view import page_hand_back, page_hold
from microrelease.app.tabs.lattice.lattice_state import LatticeState
from microrelease.app.tabs.lattice.lattice_view import LatticeView
from microrelease.app.tabs.tab_registry import OPENING_TAB, TABS, TabContext
from microrelease.app.tabs.tradeoff.tradeoff_state import TradeoffState
from microrelease.app.tabs.tradeoff.tradeoff_view import TradeoffView
from microrelease.app.wide import GENERATED, generated_sample
from microrelease.core import Dataset, LatticeProfile, build_profile, load_sample
from microrelease.core.data.samples import SAMPLES

TAB = {tab.name: tab for tab in TABS}
NAMES = [tab.name for tab in TABS]


APP_SAMPLES = (*SAMPLES, *GENERATED)  # the bundled samples, then the generated wide ones


@lru_cache(maxsize=8)
def sample_with_profile(name: str) -> tuple[Dataset, LatticeProfile | None]:
    """Bundled samples are read and profiled once per process and shared by sessions (read-only); a
    lattice too large for the profile has none (the pruned search answers it)."""
    dataset = generated_sample(name) if name in GENERATED else load_sample(name)
    if large_lattice(dataset):
        return dataset, None
    # Not compiled yet (a first-ever run): the numpy path of the same roll-up, not seconds of compiling.
    return dataset, build_profile(dataset, strategy=kernel_strategy("lattice"))


LARGE_NOTE = ("not on this table: its lattice of {:,} nodes is answered by the pruned search, which gives the "
              "tags, the k-minimal set, Find_vector and the figures of the nodes it evaluated, not every node's "
              "figures; this tab reads those of every node (the whole-lattice profile).")


DEFAULT_K = 5  # the question a session opens on (k = 2 on Samarati's 9-row example), MaxSup 0, min-relative


@lru_cache(maxsize=4)
def sample_searcher(name: str) -> Searcher:
    """The pruned search of a bundled sample whose lattice is too large for the profile: one warm
    evaluator (and its kept answers) shared by every session."""
    return Searcher(sample_with_profile(name)[0])


def warm_sample(name: str) -> None:
    """Read (and profile) a sample before the first session; a large one's opening question answered."""
    dataset, profile = sample_with_profile(name)
    if profile is None:
        sample_searcher(name).answer(min(DEFAULT_K, dataset.n_rows), 0, "min-relative", {})


class Views(dict):
    """Each tab's view by its registry name, built on first use (a tab ``built_when_shown`` is built
    when it is first opened: the Teaching tab's pairs check, say, would delay every first page)."""

    def __init__(self, build):
        super().__init__()
        self._build = build

    def __missing__(self, name: str):
        view = self[name] = self._build(name)
        return view


class Dashboard(pn.viewable.Viewer):
    """The whole app over one Explorer; displays inline in Jupyter, served by ``create_app``.

    ``views`` holds each tab's view by its registry name (``views["lattice"].state`` is its state);
    ``tab`` is the name of the tab in view (the sidebar shows that tab's sections).
    """

    sample = param.Selector(default="adult", objects=list(APP_SAMPLES))
    explorer = param.ClassSelector(class_=Explorer)
    tab = param.Selector(default=OPENING_TAB, objects=[t.name for t in TABS])

    def __init__(self, dataset: Dataset | None = None, population: PopulationTable | None = None, **params):
        super().__init__(**params)
        if self.explorer is None:  # ``population``: k-map's table for ``dataset`` (a sample may know its own)
            self.explorer = Explorer(k=2 if dataset is None and self.sample == "samarati" else DEFAULT_K,
                                     population=population)
        if self.explorer.hand_back is None:  # served: profiles and searches run off the page's thread
            self.explorer.hand_back, self.explorer.hold = page_hand_back(), page_hold()
        if dataset is not None:
            self.explorer.load(dataset)
        elif self.explorer.dataset is None:
            dataset, profile = sample_with_profile(self.sample)
            self.explorer.load(dataset, profile, searcher=None if profile is not None else sample_searcher(self.sample))
        self.sidebar = Sidebar(state=self.explorer)
        self.summary = Summary(state=self.explorer)
        self.summary_box = pn.Column(self.summary, sizing_mode="stretch_width")  # shown with the question only
        self.details = NodeDetails(state=self.explorer)
        context = TabContext(self.explorer, self.sample if self.sample in SAMPLES else "adult")
        self.views = Views(lambda name: TAB[name].view(state=TAB[name].state(context)))
        for tab in TABS:
            if not tab.built_when_shown and self.works(tab.name):
                self.views[tab.name]  # noqa: B018 - built now: shown at once, or holding the shared lattice
        self.step_lines = {tab.name: pn.pane.Markdown(css_classes=["step-line", f"step-{tab.name}"],
                                                      sizing_mode="stretch_width", margin=(5, 10, 0, 10))
                           for tab in TABS}
        # After the views' own updates: the line restates what they show and must not delay them.
        self.explorer.param.watch(lambda *_: self._describe(self.tab), ["answer", "preferred", "dataset"],
                                  precedence=20)
        # a tap changes only the Decide line (the node it releases), not what the other tabs count
        self.explorer.param.watch(lambda *_: TAB[self.tab].details and self._describe(self.tab), ["selected"],
                                  precedence=20)
        self._on_tab()

    @param.depends("tab", watch=True)
    def _on_tab(self) -> None:
        sections = TAB[self.tab].sidebar
        self.sidebar.show(sections)
        self.summary_box.visible = QUESTION in sections  # the question's k is not shown beside a tab's own
        self._describe(self.tab)

    def _describe(self, name: str) -> None:
        """The line at the top of tab ``name``: what it needs, what it shows now. Only the tab in view is
        kept current (the others are described when they come into view)."""
        tab, e = TAB[name], self.explorer
        if not self.works(name):
            self.step_lines[name].object = f"**Needs:** {tab.needs} **Shows:** {LARGE_NOTE.format(e.lattice.size)}"
            return
        if e.large and e.answer is None:  # the first pruned search is running (the sidebar shows its progress)
            self.step_lines[name].object = f"**Needs:** {tab.needs} **Shows:** searching the lattice of {e.lattice.size:,} nodes…"
            return
        shows = "" if tab.shows is None else (
            " **Shows:** " + ("nothing yet: load a table in step 1." if e.answer is None
                              else tab.shows(e, self.views[name].state)))
        self.step_lines[name].object = f"**Needs:** {tab.needs}{shows}"

    def works(self, name: str) -> bool:
        """Whether tab ``name`` works on the loaded table: on a large lattice, only the tabs that read
        the pruned search's answer (``Tab.large``) and those with their own data."""
        return not self.explorer.large or TAB[name].large

    def tab_content(self, name: str):
        if not self.works(name):
            return pn.Column(self.step_lines[name], sizing_mode="stretch_width")
        parts = [self.step_lines[name], self.views[name], *([self.details] if TAB[name].details else [])]
        return pn.Column(*parts, sizing_mode="stretch_width")

    def __panel__(self):
        # A tab that is costly to build (``built_when_shown``: the Sequences tab's attack curves take
        # seconds, the Teaching tab's pairs check most of one) is built when first shown, so that it delays
        # neither the page nor a notebook cell. The others are built at once: a lazy wrapper would slow
        # every update of the lattice it holds (~80 ms a k change).
        tabs = pn.Tabs(
            *((tab.title, pn.param.ParamFunction(lambda name=tab.name: self.tab_content(name), lazy=True,
                                                 sizing_mode="stretch_width")
               if tab.built_when_shown else self.tab_content(tab.name)) for tab in TABS),
            active=NAMES.index(self.tab), dynamic=True, sizing_mode="stretch_width",
        )
        tabs.param.watch(lambda ev: setattr(self, "tab", NAMES[ev.new]), "active")
        self.param.watch(lambda ev: setattr(tabs, "active", NAMES.index(ev.new)), "tab")
        return pn.Row(
            pn.Column(pn.pane.Markdown("## microrelease"), self.sidebar, width=320),
            pn.Column(self.summary_box, tabs, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )


def create_app(sample: str = "adult", dataset: Dataset | None = None,
               population: PopulationTable | None = None) -> pn.viewable.Viewable:
    """A fresh app (fresh state) for one browser session."""
    return Dashboard(sample=sample, dataset=dataset, population=population).__panel__()


def _explorer(dataset: Dataset, k: int, max_sup: int, policy: str) -> Explorer:
    return Explorer(dataset, k=min(k, dataset.n_rows), max_sup=max_sup, policy=policy)


def lattice_view(dataset: Dataset, *, k: int = 2, max_sup: int = 0, policy: str = "min-relative") -> LatticeView:
    """Just the lattice view of ``dataset`` (for notebooks)."""
    return LatticeView(state=LatticeState(explorer=_explorer(dataset, k, max_sup, policy)))


def tradeoff_view(dataset: Dataset, *, k: int = 2, max_sup: int = 0, policy: str = "min-relative") -> TradeoffView:
    """Just the accuracy/completeness trade-off plot of ``dataset`` (for notebooks)."""
    return TradeoffView(state=TradeoffState(explorer=_explorer(dataset, k, max_sup, policy)))
