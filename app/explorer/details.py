"""The selected node: generalized table, class-size histogram, suppressed rows, its figures, risk.

Shown under the lattice and under the trade-off plot (one instance, both tabs). The figures are
those of the core's metrics registry (``METRICS``), in its order, with its labels.
"""

from __future__ import annotations

import holoviews as hv
import numpy as np
import panel as pn
import param

from microrelease.app.explorer.state import Explorer
from microrelease.app.style import CANVAS
from microrelease.core.lattice.metrics import METRICS

PREVIEW_ROWS = 200
FATE_COLORS = {"released": "#3182bd", "suppressed": "#969696"}


def figure_text(value) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:.3f}"


def figures_table(figures: dict) -> str:
    """A Markdown table of the node's figures, one row per registered metric."""
    rows = [f"| {m.label} | {figure_text(figures[name])} | {m.description} |" for name, m in METRICS.items()]
    return "\n".join(["| figure | value | meaning |", "|---|---|---|", *rows])


class NodeDetails(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self.table = pn.widgets.Tabulator(disabled=True, show_index=False, height=300, pagination=None,
                                          sizing_mode="stretch_width", css_classes=["released-table"])
        self.suppressed = pn.widgets.Tabulator(disabled=True, show_index=True, height=180,
                                               sizing_mode="stretch_width", css_classes=["suppressed-table"])
        self.metrics = pn.pane.Markdown(css_classes=["node-metrics"], sizing_mode="stretch_width")
        self.failures = pn.widgets.Tabulator(disabled=True, show_index=False, height=220, visible=False,
                                             sizing_mode="stretch_width", css_classes=["failing-classes"])
        # After the lattice's recolouring (precedence 0): the node's release is the slower update and
        # must not hold back the answer the user is looking at.
        self.state.param.watch(self._refresh, ["selected", "answer"], precedence=10)
        self._refresh()

    def _refresh(self, *_) -> None:
        e = self.state
        if e.answer is None or e.selected is None:
            self.metrics.object = "Tap a node in the lattice or the trade-off plot to see its release."
            self.table.value = self.suppressed.value = None
            self.failures.visible = False
            return
        gt = e.release(e.selected)
        r = e.answer.node(e.selected)
        failing = e.explain(e.selected)
        self.failures.value = failing.head(PREVIEW_ROWS) if len(failing) else None
        self.failures.visible = len(failing) > 0
        self.table.value = gt.released.head(PREVIEW_ROWS).reset_index(drop=True)
        self.suppressed.value = e.suppressed_rows(gt, PREVIEW_ROWS)
        self.metrics.object = (
            f"**Selected node <span id='sel'>{list(r.vector)}</span>** (height {r.height}; {e.vector_text(e.selected)})  \n"
            f"{'satisfies' if r.satisfies else 'does not satisfy'} k = {e.k} within MaxSup = {e.max_sup}"
            f"{' · k-minimal' if r.k_minimal else ''}  \n"
            f"suppressed rows: <span id='sel-suppressed'>{r.suppressed}</span> · released {e.dataset.n_rows - r.suppressed}"
            f" of {e.dataset.n_rows} · **highest re-identification risk "
            f"{'—' if not r.max_risk else f'{r.max_risk:.3f} (1 in {r.smallest_class})'}**"
            + (f"  \nShowing the first {PREVIEW_ROWS} rows." if len(gt.released) > PREVIEW_ROWS else "")
            + "\n\n" + figures_table(e.figures(e.selected))
        )

    @param.depends("state.selected", "state.answer")
    def histogram(self) -> hv.Spikes:
        e = self.state
        if e.answer is None or e.selected is None:
            return hv.Spikes([], "class size", ["classes", "fate"])
        sizes, counts, released = e.class_sizes(e.selected)
        fate = np.where(released, "released", "suppressed")
        return hv.Spikes((sizes, counts, fate), "class size", ["classes", "fate"]).opts(
            color="fate", cmap=FATE_COLORS, line_width=3, tools=["hover"],
            responsive=True, height=220, title="Equivalence-class sizes (classes smaller than k are suppressed)",
            backend_opts=CANVAS, shared_axes=False, framewise=True)

    def __panel__(self):
        # Shown and hidden through a layout, not the HoloViews pane itself: a tap sets ``selected`` inside
        # a HoloViews stream callback, and the pane would then update its Bokeh figure without the
        # document lock (bokeh's "_pending_writes should be non-None" error, which broke later taps).
        histogram = pn.Column(pn.pane.HoloViews(hv.DynamicMap(self.histogram), sizing_mode="stretch_width",
                                                min_height=240),
                              sizing_mode="stretch_width", visible=self.state.selected is not None)
        self.state.param.watch(lambda ev: setattr(histogram, "visible", ev.new is not None), ["selected"])
        return pn.Column(
            self.metrics,
            pn.pane.Markdown("**Classes failing a privacy model** (sensitive distribution; statistic per model)",
                             visible=self.failures.param.visible),
            self.failures,
            histogram,
            pn.pane.Markdown("**Generalized table** (identifiers dropped, suppressed rows removed)"),
            self.table,
            pn.pane.Markdown("**Suppressed rows** (input row number and values)"),
            self.suppressed,
            sizing_mode="stretch_width",
        )
