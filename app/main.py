"""The dashboard: one ``create_app()`` per browser session, the same object inline in Jupyter.

The page is the sidebar (the question), the summary line and one tab per entry of
:data:`microrelease.app.tabs.registry.TABS`. Served: ``microrelease app`` (see :mod:`microrelease.app.serve`). In a
notebook::

    import panel as pn; pn.extension("tabulator", inline=True)
    from microrelease.app import Dashboard, lattice_view, tradeoff_view
    Dashboard(sample="samarati")            # the whole app
    lattice_view(dataset, k=5, max_sup=100)  # just the lattice of a given dataset
"""

from __future__ import annotations

from functools import lru_cache

import panel as pn
import param

from microrelease.app.explorer.details import NodeDetails
from microrelease.app.explorer.sidebar import Sidebar
from microrelease.app.explorer.state import Explorer
from microrelease.app.explorer.summary import Summary
from microrelease.app.tabs.lattice.state import LatticeState
from microrelease.app.tabs.lattice.view import LatticeView
from microrelease.app.tabs.registry import TABS, TabContext
from microrelease.app.tabs.tradeoff.state import TradeoffState
from microrelease.app.tabs.tradeoff.view import TradeoffView
from microrelease.core import Dataset, LatticeProfile, build_profile, load_sample
from microrelease.core.data.samples import SAMPLES


@lru_cache(maxsize=8)
def sample_with_profile(name: str) -> tuple[Dataset, LatticeProfile]:
    """Bundled samples are read and profiled once per process and shared by sessions (read-only)."""
    dataset = load_sample(name)
    return dataset, build_profile(dataset)


class Dashboard(pn.viewable.Viewer):
    """The whole app over one Explorer; displays inline in Jupyter, served by :func:`create_app`.

    ``views`` holds each tab's view by its registry name (``views["lattice"].state`` is its state).
    """

    sample = param.Selector(default="adult", objects=list(SAMPLES))
    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, dataset: Dataset | None = None, **params):
        super().__init__(**params)
        if self.explorer is None:
            self.explorer = Explorer(k=2 if dataset is None and self.sample == "samarati" else 5)
        if dataset is not None:
            self.explorer.load(dataset)
        elif self.explorer.dataset is None:
            self.explorer.load(*sample_with_profile(self.sample))
        self.sidebar = Sidebar(state=self.explorer)
        self.summary = Summary(state=self.explorer)
        self.details = NodeDetails(state=self.explorer)
        context = TabContext(self.explorer, self.sample)
        self.views = {tab.name: tab.view(state=tab.state(context)) for tab in TABS}

    def tab_content(self, name: str):
        tab = next(t for t in TABS if t.name == name)
        view = self.views[name]
        return pn.Column(view, self.details, sizing_mode="stretch_width") if tab.details else view

    def __panel__(self):
        # A tab with costly shared figures (``warm``: the Sequences tab's attack curves take seconds) is
        # built when first shown, so that it delays neither the page nor a notebook cell. The others are
        # built at once: a lazy wrapper would slow every update of the lattice it holds (~80 ms a k change).
        tabs = pn.Tabs(
            *((tab.title, pn.param.ParamFunction(lambda name=tab.name: self.tab_content(name), lazy=True,
                                                 sizing_mode="stretch_width")
               if tab.warm is not None else self.tab_content(tab.name)) for tab in TABS),
            dynamic=True, sizing_mode="stretch_width",
        )
        return pn.Row(
            pn.Column(pn.pane.Markdown("## microrelease"), self.sidebar, width=320),
            pn.Column(self.summary, tabs, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )


def create_app(sample: str = "adult", dataset: Dataset | None = None) -> pn.viewable.Viewable:
    """A fresh app (fresh state) for one browser session."""
    return Dashboard(sample=sample, dataset=dataset).__panel__()


def _explorer(dataset: Dataset, k: int, max_sup: int, policy: str) -> Explorer:
    return Explorer(dataset, k=min(k, dataset.n_rows), max_sup=max_sup, policy=policy)


def lattice_view(dataset: Dataset, *, k: int = 2, max_sup: int = 0, policy: str = "min-relative") -> LatticeView:
    """Just the lattice view of ``dataset`` (for notebooks)."""
    return LatticeView(state=LatticeState(explorer=_explorer(dataset, k, max_sup, policy)))


def tradeoff_view(dataset: Dataset, *, k: int = 2, max_sup: int = 0, policy: str = "min-relative") -> TradeoffView:
    """Just the accuracy/completeness trade-off plot of ``dataset`` (for notebooks)."""
    return TradeoffView(state=TradeoffState(explorer=_explorer(dataset, k, max_sup, policy)))
