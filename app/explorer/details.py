"""The selected node: generalized table, class-size histogram, suppressed rows, its figures, risk.

Shown under the lattice, the trade-off plot and the export (one instance, several tabs). The figures
are those of the core's metrics registry (``METRICS``), in its order, with its labels.
"""

from __future__ import annotations

import holoviews as hv
import numpy as np
import pandas as pd
import panel as pn
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.style import CANVAS, integer_ticks
from microrelease.app.text import shown, tabulator_titles
from microrelease.core.lattice.metrics import METRICS
from microrelease.core.lattice.quality import QUALITY_MODELS

PREVIEW_ROWS = 200
PREVIEW_COLUMNS = 40
FATE_COLORS = {"released": "#3182bd", "suppressed": "#969696"}
HISTOGRAM_HEIGHT = 240
CLASS_SEPARATOR = " · "
WRAPPED = {"type": "textarea"}  # Tabulator wraps these cells instead of widening the table


def figure_text(value) -> str:
    return f"{value:,}" if isinstance(value, int) else f"{value:.3f}"


def figures_table(figures: dict) -> str:
    """A Markdown table of the node's figures, one row per registered metric."""
    rows = [f"| {m.label} | {figure_text(figures[name])} | {m.description} |" for name, m in METRICS.items()]
    return "\n".join(["| figure | value | meaning |", "|---|---|---|", *rows])


RISK_ROWS = (  # what node details show of Explorer.risk, in this order
    ("highest", "Prosecutor: highest risk", "1 / smallest released class"),
    ("average", "Prosecutor: average risk", "released classes / released rows"),
    ("records_at_risk", "Prosecutor: records at risk", "share of released rows whose risk is above the threshold"),
    ("population_uniques", "Population uniques (estimated)", "share of the population unique in its QIs"),
)


def risk_table(risk: dict, threshold: float, fraction: float) -> str:
    """A Markdown table of the node's re-identification risk (see ``Explorer.risk``)."""
    def value(name):
        if name not in risk:
            return "set *population uniques at most* to estimate it"
        v = risk[name]
        if v is None:
            return "no estimate"
        text = f"{v:.4f}"
        return f"{text} ({risk['uniqueness_model']}, the data as a {fraction:g} sample)" \
            if name == "population_uniques" else text

    rows = [f"| {label} | {value(name)} | {meaning} |" for name, label, meaning in RISK_ROWS]
    return "\n".join([f"**Re-identification risk** (at risk: above {threshold:g})", "",
                      "| figure | value | meaning |", "|---|---|---|", *rows])


def quality_table(quality: dict) -> str:
    """ARX's quality models of the node (lower is better), as the profile gives them."""
    rows = [f"| {QUALITY_MODELS[name].label} | {figure_text(int(v) if float(v).is_integer() else v)} | "
            f"{QUALITY_MODELS[name].description} |" for name, v in quality.items()]
    missing = [QUALITY_MODELS[n].label for n in QUALITY_MODELS if n not in quality]
    note = f"  \n{', '.join(missing)}: choose that policy to compute it." if missing else ""
    return "\n".join(["**Quality** (ARX's models; lower is better)", "", "| model | value | meaning |", "|---|---|---|",
                      *rows]) + note


def k_map_line(k_map, population: int | None, name: str) -> str:
    """Under k-map: the population records of the node's smallest released class ('' otherwise)."""
    if k_map is None:
        return ""
    size = "none released" if not population else f"<span id='sel-population'>{population:,}</span> records"
    return (f"  \n{k_map.describe()}: smallest released class in the population {shown(name)} "
            f"({k_map.population.n_rows:,} rows): {size}")


def preview(frame: pd.DataFrame, first: list[str]) -> pd.DataFrame:
    """At most PREVIEW_COLUMNS columns of ``frame``, those in ``first`` before the others: a column is a
    Tabulator column in the page, and a table of thousands froze it."""
    ahead = [c for c in first if c in frame.columns]
    rest = [c for c in frame.columns if c not in set(ahead)]
    return frame[(ahead + rest)[:max(PREVIEW_COLUMNS, len(ahead))]] if len(frame.columns) > PREVIEW_COLUMNS else frame


def class_size_plot(sizes: np.ndarray, counts: np.ndarray, released: np.ndarray) -> hv.Spikes:
    """Classes per class size, released ones and suppressed ones (smaller than k) in their colours."""
    fate = np.where(released, "released", "suppressed")
    return hv.Spikes((sizes, counts, fate), "class size", ["classes", "fate"]).opts(
        color="fate", cmap=FATE_COLORS, line_width=3, tools=["hover"], responsive=True, height=HISTOGRAM_HEIGHT,
        title="Equivalence-class sizes (classes smaller than k are suppressed)", backend_opts=CANVAS,
        shared_axes=False, xticks=integer_ticks(), yticks=integer_ticks())


def failing_classes(failing: pd.DataFrame, qis: list[str]) -> pd.DataFrame:
    """The failing classes, their QI values joined into one ``class`` column: eight QI columns, the
    statistics and the distribution side by side do not fit the page."""
    shown_frame = failing.drop(columns=qis)
    shown_frame.insert(0, "class", failing[qis].astype(str).agg(CLASS_SEPARATOR.join, axis=1))
    return shown_frame


class NodeDetails(pn.viewable.Viewer):
    state = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self.table = pn.widgets.Tabulator(disabled=True, show_index=False, height=300, pagination=None,
                                          sizing_mode="stretch_width", css_classes=["released-table"])
        self.suppressed = pn.widgets.Tabulator(disabled=True, show_index=True, height=180,
                                               sizing_mode="stretch_width", css_classes=["suppressed-table"])
        self.metrics = pn.pane.Markdown(css_classes=["node-metrics"], sizing_mode="stretch_width")
        self.failures_title = pn.pane.Markdown(sizing_mode="stretch_width", visible=False)
        self.failures = pn.widgets.Tabulator(disabled=True, show_index=False, height=220, visible=False,
                                             layout="fit_columns", sizing_mode="stretch_width",
                                             formatters={"class": WRAPPED, "fails": WRAPPED, "distribution": WRAPPED},
                                             css_classes=["failing-classes"])
        # A figure replaced through the pane's ``object``, never a DynamicMap refreshed by the Explorer: a
        # tap sets ``selected`` inside a HoloViews stream callback, which may run without the document
        # lock (Panel schedules it as an unlocked coroutine), and a DynamicMap would then write to its Bokeh
        # figure directly (bokeh's "_pending_writes should be non-None"). Panel applies a pane's new object
        # under the lock, or holds the document and sends the change itself.
        self.histogram = pn.pane.HoloViews(class_size_plot(*[np.zeros(0, dtype=int)] * 3), visible=False,
                                           sizing_mode="stretch_width", height=HISTOGRAM_HEIGHT + 10,
                                           css_classes=["class-sizes"])
        # After the lattice's recolouring (precedence 0): the node's release is the slower update and
        # must not hold back the answer the user is looking at.
        self.state.param.watch(self._refresh, ["selected", "answer"], precedence=10)
        self._refresh()

    def _refresh(self, *_) -> None:
        # The node's changes go to the page as one message. Sent change by change (a tap's callback may
        # run outside the document lock), a table's new columns could reach the page before its rows, and
        # Tabulator drops rows that arrive while it rebuilds: a released table once stayed empty.
        with pn.io.hold():
            self._show_node()

    def _show_node(self) -> None:
        e = self.state
        if e.answer is None or e.selected is None:
            self.metrics.object = "Tap a node in the lattice or the trade-off plot to see its release."
            self.table.value = self.suppressed.value = None
            self.failures.visible = self.failures_title.visible = self.histogram.visible = False
            return
        gt = e.release(e.selected)
        r = e.answer.node(e.selected)
        self._show_failures(e.explain(e.selected))
        self.histogram.param.update(object=class_size_plot(*e.class_sizes(e.selected)), visible=True)
        first = [*e.dataset.quasi_identifiers, *e.dataset.schema.sensitive]
        released = preview(gt.released.head(PREVIEW_ROWS).reset_index(drop=True), first)
        suppressed = preview(e.suppressed_rows(gt, PREVIEW_ROWS), first)
        # column names come from the data, and Tabulator writes a title as HTML
        self.table.param.update(value=released, titles=tabulator_titles(released))
        self.suppressed.param.update(value=suppressed, titles=tabulator_titles(suppressed))
        hidden = len(gt.released.columns) - len(released.columns)
        self.metrics.object = (
            f"**Selected node <span id='sel'>{list(r.vector)}</span>** (height {r.height}; "
            f"{shown(e.vector_text(e.selected))})  \n"
            f"{'satisfies' if r.satisfies else 'does not satisfy'} k = {e.k} within MaxSup = {e.max_sup}"
            f"{' · k-minimal' if r.k_minimal else ''}  \n"
            f"suppressed rows: <span id='sel-suppressed'>{r.suppressed}</span> · released {e.dataset.n_rows - r.suppressed}"
            f" of {e.dataset.n_rows} · **highest re-identification risk "
            f"{'—' if not r.max_risk else f'{r.max_risk:.3f} (1 in {r.smallest_class})'}**"
            + k_map_line(e.applied_k_map, e.smallest_released_population(e.selected), e.population_name)
            + (f"  \nShowing the first {PREVIEW_ROWS} rows." if len(gt.released) > PREVIEW_ROWS else "")
            + (f"  \nShowing {len(released.columns)} of {len(gt.released.columns):,} columns (the QIs and "
               f"sensitive ones first); the release writes them all." if hidden else "")
            + "\n\n" + figures_table(e.figures(e.selected))
            + "\n\n" + risk_table(e.risk(e.selected), e.risk_threshold, e.sampling_fraction)
            + "\n\n" + quality_table(e.quality(e.selected))
        )

    def _show_failures(self, failing: pd.DataFrame) -> None:
        qis = list(self.state.dataset.quasi_identifiers)
        if len(failing):
            self.failures_title.object = (
                "**Classes failing a privacy model** (class: the values of "
                + CLASS_SEPARATOR.join(shown(q) for q in qis) + "; statistic per model; sensitive distribution)")
            frame = failing_classes(failing.head(PREVIEW_ROWS), qis)
            # statistics are named by their model, too long for a narrow header
            self.failures.param.update(value=frame, header_tooltips={c: c for c in frame.columns})
        else:
            self.failures.value = None
        self.failures.visible = self.failures_title.visible = len(failing) > 0

    def __panel__(self):
        return pn.Column(
            self.metrics,
            self.failures_title,
            self.failures,
            self.histogram,
            pn.pane.Markdown("**Generalized table** (identifiers dropped, suppressed rows removed)"),
            self.table,
            pn.pane.Markdown("**Suppressed rows** (input row number and values)"),
            self.suppressed,
            sizing_mode="stretch_width",
        )
