"""The dashboard: one ``create_app()`` per browser session, the same object inline in Jupyter.

Served: ``microrelease app`` (see :func:`serve`). In a notebook::

    import panel as pn; pn.extension("tabulator", inline=True)
    from microrelease.app import Dashboard, lattice_view, tradeoff_view
    Dashboard(sample="samarati")            # the whole app
    lattice_view(dataset, k=5, max_sup=100)  # just the lattice of a given dataset
"""

from __future__ import annotations

import threading
from functools import lru_cache

import panel as pn
import param

from microrelease.app.dp_state import release_curves as dp_release_curves
from microrelease.app.micro_state import curves as micro_curves
from microrelease.app.sequential_state import attack_curves as sequential_attack_curves
from microrelease.app.setup import DataSetup
from microrelease.app.state import Explorer
from microrelease.app.views.controls import Controls
from microrelease.app.views.data import DataPanel
from microrelease.app.views.details import NodeDetails
from microrelease.app.views.dp import DifferentialPrivacy
from microrelease.app.views.export import Export
from microrelease.app.views.lattice import LatticeView
from microrelease.app.views.microaggregation import Microaggregation
from microrelease.app.views.sequential import SequentialView
from microrelease.app.views.teaching import Teaching
from microrelease.app.views.tradeoff import TradeoffView
from microrelease.core import Dataset, LatticeProfile, build_profile, load_sample
from microrelease.core.data.samples import SAMPLES


@lru_cache(maxsize=8)
def sample_with_profile(name: str) -> tuple[Dataset, LatticeProfile]:
    """Bundled samples are read and profiled once per process and shared by sessions (read-only)."""
    dataset = load_sample(name)
    return dataset, build_profile(dataset)


class Dashboard(pn.viewable.Viewer):
    """The whole app over one Explorer; displays inline in Jupyter, served by :func:`create_app`."""

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
        self.setup = DataSetup()
        self.summary = pn.pane.Markdown(self.explorer.summary(), css_classes=["summary"], sizing_mode="stretch_width")
        self.explorer.param.watch(lambda *_: setattr(self.summary, "object", self.explorer.summary()),
                                  ["answer", "preferred", "policy"])
        self.controls = Controls(explorer=self.explorer)
        self.lattice = LatticeView(explorer=self.explorer)
        self.tradeoff = TradeoffView(explorer=self.explorer)
        self.details = NodeDetails(explorer=self.explorer)
        self.teaching = Teaching(explorer=self.explorer)
        self.export = Export(explorer=self.explorer)
        self.micro = Microaggregation()
        self.dp = DifferentialPrivacy()
        self.sequential = SequentialView()
        self.data = DataPanel(setup=self.setup, explorer=self.explorer)
        self.data.sample.value = self.sample

    def __panel__(self):
        tabs = pn.Tabs(
            ("Lattice", pn.Column(self.lattice, self.details, sizing_mode="stretch_width")),
            ("Trade-off", pn.Column(self.tradeoff, self.details, sizing_mode="stretch_width")),
            ("Data", self.data),
            ("Teaching", self.teaching),
            ("Export", self.export),
            ("Microaggregation", self.micro),
            ("Differential privacy", self.dp),
            ("Sequences", self.sequential),
            dynamic=True, sizing_mode="stretch_width",
        )
        return pn.Row(
            pn.Column(pn.pane.Markdown("## microrelease"), self.controls, width=320),
            pn.Column(self.summary, tabs, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )


def create_app(sample: str = "adult", dataset: Dataset | None = None) -> pn.viewable.Viewable:
    """A fresh app (fresh state) for one browser session."""
    return Dashboard(sample=sample, dataset=dataset).__panel__()


def lattice_view(dataset: Dataset, *, k: int = 2, max_sup: int = 0, policy: str = "min-relative") -> LatticeView:
    """Just the lattice view of ``dataset`` (for notebooks)."""
    return LatticeView(explorer=Explorer(dataset, k=min(k, dataset.n_rows), max_sup=max_sup, policy=policy))


def tradeoff_view(dataset: Dataset, *, k: int = 2, max_sup: int = 0, policy: str = "min-relative") -> TradeoffView:
    """Just the accuracy/completeness trade-off plot of ``dataset`` (for notebooks)."""
    return TradeoffView(explorer=Explorer(dataset, k=min(k, dataset.n_rows), max_sup=max_sup, policy=policy))


def serve(*, host: str = "127.0.0.1", port: int = 5006, sample: str = "adult", dataset: Dataset | None = None,
          show: bool = False):
    """Serve the app (one fresh Dashboard per session); prints the URL; blocks until stopped."""
    # No pn.extension() here: outside a notebook it renders CDN resources and flips Panel's global
    # resource mode, and later dynamic components then link their CSS from the CDN.
    # Panel links the CSS of components re-rendered outside a request (watchers, threads) to its
    # CDN; a privacy tool must work offline and call nobody, so point those links at this server.
    import panel.reactive

    panel.reactive.CDN_DIST = f"http://{host}:{port}/static/extensions/panel/"
    print(f"microrelease dashboard: http://{host}:{port}/", flush=True)
    if dataset is None:
        sample_with_profile(sample)  # warm the cache: the first session opens at once

    def warm_tabs() -> None:  # the other tabs' curves, shared by sessions, computed while the server starts
        micro_curves("census")
        dp_release_curves()
        sequential_attack_curves()

    threading.Thread(target=warm_tabs, name="warm-tabs", daemon=True).start()
    return pn.serve(lambda: create_app(sample, dataset), address=host, port=port, show=show,
                    websocket_origin=[f"{host}:{port}"], title="microrelease", threaded=False)
