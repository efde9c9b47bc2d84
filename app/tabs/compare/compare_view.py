"""Pinned nodes side by side: a column per node (its vector with level names, an unpin button, its
class-size histogram), one table of their figures (the best of each row in bold), and one bar chart
per QI: the input's distribution, then each pinned node's released rows (and its suppressed rows).

The figures are replaced through their panes' ``object`` (see ``NodeDetails``
on why), and only when what they show changed: a new MaxSup or policy redraws the table alone.
"""

from __future__ import annotations

import pandas as pd
import panel as pn
import param
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, NumeralTickFormatter
from bokeh.plotting import figure

from microrelease.app.explorer.details import HISTOGRAM_HEIGHT, class_size_plot
from microrelease.app.style import CANVAS
from microrelease.app.tabs.compare.compare_state import INPUT, MAX_PINS, SUPPRESSED, CompareState
from microrelease.app.text import shown

PIN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c")  # one per pin, in pin order
INPUT_COLOR, SUPPRESSED_COLOR = "#636363", "#bdbdbd"
BAR_HEIGHT = 320
EMPTY = ("Nothing pinned yet: tap a node in the Lattice or Trade-off tab (or keep the preferred one), come back "
         "and pin it; pin two or three to compare them.")


def value_text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return shown(value)
    if float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.4f}"


def figures_markdown(table: pd.DataFrame, vectors: list[str]) -> str:
    """The figures as a Markdown table, one column per pinned node; the best value of a row in bold
    (when the row says which way is better and the nodes differ)."""
    lines = ["| figure | " + " | ".join(vectors) + " | meaning |", "|---|" + "---|" * len(vectors) + "---|"]
    for _, row in table.iterrows():
        values = [row[v] for v in vectors]
        best = None
        if row["better"] and len(set(values)) > 1:
            best = (max if row["better"] == "higher" else min)(values)
        cells = [f"**{value_text(v)}**" if best is not None and v == best else value_text(v) for v in values]
        lines.append(f"| {shown(row['figure'])} | " + " | ".join(cells) + f" | {shown(row['meaning'])} |")
    return "\n".join(lines)


def distribution_figure(qi: str, frame: pd.DataFrame, colors: dict[str, str]) -> figure:
    """One bar per (release, value), grouped by release, as a share of the input's rows."""
    factors = list(zip(frame["release"], frame["value"], strict=True))
    color = [SUPPRESSED_COLOR if v == SUPPRESSED else colors[r] for r, v in factors]
    source = ColumnDataSource({"x": factors, "release": frame["release"].tolist(), "value": frame["value"].tolist(),
                               "rows": frame["rows"].to_numpy(), "share": frame["share"].to_numpy(), "color": color})
    fig = figure(x_range=FactorRange(*factors), height=BAR_HEIGHT, sizing_mode="stretch_width", tools="save",
                 toolbar_location="above", title=f"{qi}: the input, then each pinned node's released rows",
                 output_backend=CANVAS["plot.output_backend"])
    fig.vbar(x="x", top="share", width=0.85, source=source, fill_color="color", line_color="color")
    fig.add_tools(HoverTool(tooltips=[("release", "@release"), ("value", "@value"), ("rows", "@rows"),
                                      ("share of the input", "@share{0.0%}")]))
    fig.y_range.start = 0
    fig.yaxis.formatter = NumeralTickFormatter(format="0%")
    fig.yaxis.axis_label = "share of the input's rows"
    fig.xaxis.major_label_orientation = 1.0
    fig.xgrid.grid_line_color = None
    return fig


class CompareView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=CompareState)

    def __init__(self, **params):
        super().__init__(**params)
        self.pin_button = pn.widgets.Button(label="Pin the selected node", color="primary",
                                            css_classes=["compare-pin-button"])
        self.pin_button.on_click(lambda _: self.state.pin())
        self.note = pn.pane.Markdown(css_classes=["compare-note"], sizing_mode="stretch_width")
        self.columns = pn.Row(sizing_mode="stretch_width", css_classes=["compare-columns"])
        self.table = pn.pane.Markdown(css_classes=["compare-table"], sizing_mode="stretch_width")
        self.quality_note = pn.pane.Markdown(css_classes=["compare-quality-note"], sizing_mode="stretch_width")
        self.bars_title = pn.pane.Markdown("**Each QI before and after** (share of the input's rows; grey: "
                                           "suppressed rows)", sizing_mode="stretch_width")
        self.bars = pn.GridBox(ncols=2, sizing_mode="stretch_width", css_classes=["compare-distributions"])
        self._plots_key = None  # what the columns and the bars were drawn for
        # After the lattice's recolouring (precedence 0) and the state's clearing of the pins on a new table.
        self.state.param.watch(self._refresh, "pins", precedence=10)
        self.state.explorer.param.watch(self._refresh, ["answer", "preferred"], precedence=10)
        self.state.explorer.param.watch(self._label, ["selected", "preferred"], precedence=10)
        self._refresh()

    def _label(self, *_) -> None:
        s = self.state
        node = s.candidate() if s.explorer.answer is not None else None
        which = "selected" if s.explorer.selected is not None else "preferred"
        self.pin_button.param.update(label="Nothing to pin" if node is None else f"Pin the {which} node {s.vector(node)}",
                                     disabled=node is None)

    def _refresh(self, *_) -> None:
        s, e = self.state, self.state.explorer
        self._label()
        pins = list(s.pins) if e.answer is not None else []
        self.note.object = (f"{len(pins)} of {MAX_PINS} pinned; a fourth replaces the oldest, and loading a table "
                            "clears them." if pins else EMPTY)
        for part in (self.table, self.quality_note, self.bars_title, self.bars):
            part.visible = bool(pins)
        if not pins:
            self.columns.objects, self._plots_key = [], None
            return
        vectors = [s.vector(i) for i in pins]
        self.table.object = figures_markdown(s.table(), vectors)
        note = s.quality_note()
        self.quality_note.param.update(object=note, visible=bool(note))
        key = (e.profile, e.k, tuple(pins))  # the profile by identity (LatticeProfile: eq=False)
        if key == self._plots_key:
            return
        self._plots_key = key
        colors = {INPUT: INPUT_COLOR} | {v: PIN_COLORS[j % len(PIN_COLORS)] for j, v in enumerate(vectors)}
        self.columns.objects = [self._column(j, i, vectors[j]) for j, i in enumerate(pins)]
        self.bars.objects = [pn.pane.Bokeh(distribution_figure(qi, frame, colors), sizing_mode="stretch_width")
                             for qi, frame in s.distributions().items()]

    def _column(self, j: int, node_index: int, vector: str) -> pn.Column:
        s, e = self.state, self.state.explorer
        header = pn.pane.Markdown(
            f"<span style='color:{PIN_COLORS[j % len(PIN_COLORS)]}'>■</span> **<span id='pin-{j}' class='pin-vector'>"
            f"{vector}</span>**  \n{shown(e.vector_text(node_index))}", sizing_mode="stretch_width")
        unpin = pn.widgets.Button(label=f"Unpin {vector}", css_classes=["compare-unpin", f"compare-unpin-{j}"], width=200)
        unpin.on_click(lambda _: s.unpin(node_index))
        histogram = pn.pane.HoloViews(class_size_plot(*s.histogram(node_index)).opts(title=f"{vector}: class sizes"),
                                      sizing_mode="stretch_width", height=HISTOGRAM_HEIGHT + 10)
        return pn.Column(header, unpin, histogram, sizing_mode="stretch_width", css_classes=["compare-pin"])

    def __panel__(self):
        return pn.Column("### Compare", pn.Row(self.pin_button, self.note, sizing_mode="stretch_width"),
                         self.columns, self.table, self.quality_note, self.bars_title, self.bars,
                         sizing_mode="stretch_width")
