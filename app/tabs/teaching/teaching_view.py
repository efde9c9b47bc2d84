"""Teaching: step through Find_vector, the outlier matrix VT, and why checking pairs is not enough.

Presentation mode is the layout to project in class: larger type, Samarati's example one click away,
and a lattice beside the steps with the probed height banded (a second view over the same Explorer,
built the first time the mode is turned on).
"""

from __future__ import annotations

import panel as pn
import param

from microrelease.app.tabs.lattice.lattice_state import LatticeState
from microrelease.app.tabs.lattice.lattice_view import LatticeView
from microrelease.app.tabs.teaching.teaching_state import (
    EXAMPLE_K,
    PAIRS_EXAMPLE,
    PAIRS_QIS,
    VT_FIRST,
    VT_LIMIT,
    TeachingState,
    is_top_probe,
    pairs_check,
)
from microrelease.app.text import shown, shown_html

SHOWN_TESTED = 12
# Presentation mode: larger type in every part of the tab (a class on each part's host element, as
# Panel draws each part in a shadow root of its own).
PRESENTING = "presenting"
PRESENTING_CSS = """
:host(.presenting) { font-size: 1.45em; }
:host(.presenting) .tabulator { font-size: 1.25em; }
:host(.presenting) .bk-input, :host(.presenting) .bk-btn, :host(.presenting) .bk-slider-title { font-size: 1.1em; }
"""
LATTICE_HEIGHT = 460
TABLE_GROWTH = 1.35


def vectors(vs) -> str:
    return ", ".join(str(list(v)) for v in vs)


class TeachingView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=TeachingState)

    def __init__(self, **params):
        super().__init__(**params)
        s, e = self.state, self.state.explorer
        self.presentation = pn.widgets.Toggle.from_param(s.param.presentation, width=200,
                                                         css_classes=["presentation-toggle"])
        self.example = pn.widgets.Button(label=f"Load Samarati's example (k = {EXAMPLE_K})", width=260,
                                         css_classes=["load-example"])
        self.example.on_click(lambda _: s.load_example())
        self.step = pn.widgets.IntSlider.from_param(s.param.step, css_classes=["fv-step"], width=320)
        self.back = pn.widgets.Button(label="◀ previous", width=110, css_classes=["fv-previous"])
        self.forward = pn.widgets.Button(label="next ▶", width=110, css_classes=["fv-next"])
        self.again = pn.widgets.Button(label="↺ restart", width=110, css_classes=["fv-restart"])
        self.back.on_click(lambda _: s.previous_step())
        self.forward.on_click(lambda _: s.next_step())
        self.again.on_click(lambda _: s.restart())
        self.show = pn.widgets.Checkbox.from_param(s.param.highlight)
        self.probe_text = pn.pane.Markdown(css_classes=["fv-probe"], sizing_mode="stretch_width")
        self.vt = pn.widgets.Tabulator(disabled=True, height=260, sizing_mode="stretch_width", show_index=False,
                                       css_classes=["vt-table"])
        self.vt_text = pn.pane.Markdown(sizing_mode="stretch_width", css_classes=["vt-text"])
        self.pairs_live = pn.widgets.Tabulator(disabled=True, height=220, show_index=False, sizing_mode="stretch_width")
        self.lattice = pn.Column(sizing_mode="stretch_width", visible=False, css_classes=["teaching-lattice"])
        self.lattice_view: LatticeView | None = None
        md = {"sizing_mode": "stretch_width"}
        self.texts = [
            pn.pane.Markdown("### Step through Find_vector (Samarati's binary search over height)", **md),
            pn.pane.Markdown("### The outlier distance matrix VT", **md),
            pn.pane.Markdown("### Why checking pairs of attributes is not enough", **md),
            pn.pane.Markdown("Every pair of these three QIs is 2-anonymous, yet each full combination is unique:", **md),
            pn.pane.Markdown("The same check on the current table (the selected node's release, or the original "
                             f"data; first {PAIRS_QIS} QIs):", **md),
        ]
        self.pairs_example = [
            pn.widgets.Tabulator(PAIRS_EXAMPLE, disabled=True, show_index=False, width=300, height=280),
            pn.widgets.Tabulator(pairs_check(PAIRS_EXAMPLE, ["sex", "age", "ZIP"]), disabled=True,
                                 show_index=False, width=330, css_classes=["pairs-example"]),
        ]
        self._parts = [self.step, self.back, self.forward, self.again, self.show, self.probe_text, self.vt,
                       self.vt_text, self.pairs_live, *self.texts, *self.pairs_example]
        for part in self._parts:
            part.stylesheets = [*part.stylesheets, PRESENTING_CSS]
        self._table_sizes = {part: {"height": part.height, "width": part.width} for part in self._parts
                             if isinstance(part, pn.widgets.Tabulator)}
        s.param.watch(self._probe, ["step"])
        s.param.watch(self._present, ["presentation"])
        e.param.watch(self._probe, ["answer"])
        e.param.watch(self._vt, ["answer", "selected"])
        # not on every k change: the check groups the whole table once per pair
        e.param.watch(self._pairs, ["selected", "dataset"])
        self._probe()
        self._vt()
        self._pairs()

    def _present(self, *_) -> None:
        on = self.state.presentation
        if on and self.lattice_view is None:
            self.lattice_view = LatticeView(state=LatticeState(explorer=self.state.explorer), height=LATTICE_HEIGHT)
            self.lattice.objects = [self.lattice_view]
        if self.lattice_view is not None:
            self.lattice_view.live = on  # hidden, it is not kept current (redrawn when shown again)
        self.lattice.visible = on
        for part in self._parts:
            classes = [c for c in part.css_classes if c != PRESENTING]
            # a table given a new size measures its columns again, in the new type size
            sizes = {k: v if not on or v is None else round(v * TABLE_GROWTH)
                     for k, v in self._table_sizes.get(part, {}).items()}
            part.param.update(css_classes=[*classes, PRESENTING] if on else classes, **sizes)

    def _probe(self, *_) -> None:
        s, e = self.state, self.state.explorer
        if e.answer is None:
            return
        n = s.steps()
        self.step.visible = n > 1  # one probe: nothing to slide over
        self.back.disabled, self.forward.disabled = not s.can_go_back(), not s.can_go_on()
        result, i = s.probe()
        if i is None:
            self.probe_text.object = "The lattice has a single height: nothing to search."
            return
        self.probe_text.object = self._probe_words(result, i) + "  \n" + (
            f"**Find_vector's answer:** {list(result.vector)} at height {sum(result.vector)}, the lowest height "
            "where a vector satisfies." if result.vector is not None
            else "**Find_vector's answer:** no vector satisfies, not even the top.")

    def _probe_words(self, result, i: int) -> str:
        """One probe in plain words: the bounds, the height tried, what was tested, what follows."""
        e = self.state.explorer
        p, n = result.trace[i], len(result.trace)
        question = f"k = {e.k} within MaxSup = {e.max_sup}"
        tested = vectors(p.tested[:SHOWN_TESTED]) + (f" … (the first {SHOWN_TESTED} shown)"
                                                      if len(p.tested) > SHOWN_TESTED else "")
        head = f"**Probe <span id='fv-step'>{i + 1}</span> of <span id='fv-steps'>{n}</span>.** "
        if is_top_probe(p, e.lattice.max_height):
            where = ("No height tried so far has a satisfying vector, and the bounds have met at the top, which "
                     f"was never tested: **try height <span id='fv-try'>{p.tried}</span>** (the top).")
        else:
            where = (f"The lowest height with a satisfying vector lies between low = {p.low} and high = {p.high}. "
                     f"Find_vector tries the middle, ⌊(low + high) / 2⌋: **try height "
                     f"<span id='fv-try'>{p.tried}</span>**.")
        what = f" It tests the vectors of that height in order, {len(p.tested)} of them: {tested}."
        if p.satisfied is not None:
            outcome = (f" **{list(p.satisfied)} satisfies** {question} ({shown(e.vector_text(e.lattice.index(p.satisfied)))}),"
                       f" so a solution exists at height {p.tried}: high becomes {p.tried}.")
        else:
            outcome = (f" **None of them satisfies** {question}, so every solution is higher: "
                       f"low becomes {p.tried + 1}.")
        return head + where + what + outcome

    def _vt(self, *_) -> None:
        e = self.state.explorer
        if e.answer is None:
            return
        frame = self.state.vt_frame()
        self.vt.visible = frame is not None
        if frame is None:
            self.vt.value = None
            self.vt_text.object = (
                f"VT has one row per outlier and one column per distinct QI combination, so it is shown for tables "
                f"with at most {VT_LIMIT} distinct combinations; this one has {e.dataset.frequency.n_distinct:,}. "
                "Load Samarati's example to see it.")
            return
        # Tuples are columns named by their values: plain field names, the values as escaped titles
        # (Tabulator writes a title as HTML).
        fields = {c: (c if c in VT_FIRST else f"t{j}") for j, c in enumerate(frame.columns)}
        self.vt.param.update(value=frame.rename(columns=fields),
                             titles={f: shown_html(c) for c, f in fields.items()},
                             frozen_columns=[c for c in VT_FIRST if c in frame.columns])
        node = e.lattice.node(e.selected) if e.selected is not None else None
        self.vt_text.object = (
            f"Outliers are the distinct tuples occurring fewer than k = {e.k} times. Entry [x, y] is the distance "
            "vector at which x and y first become equal. At node v, outlier x keeps C_x = Σ count(y) over "
            "VT[x, y] ≤ v and is suppressed when C_x < k."
            + (f" Selected node: {list(node)}." if node is not None else " Select a node to see which are suppressed.")
        )

    def _pairs(self, *_) -> None:
        if self.state.explorer.dataset is not None:
            self.pairs_live.value = self.state.pairs_frame()

    def __panel__(self):
        find_vector, vt, pairs, pairs_intro, pairs_live = self.texts
        return pn.Column(
            pn.Row(self.presentation, self.example),
            find_vector,
            pn.Row(self.step, self.back, self.forward, self.again), self.show, self.probe_text,
            self.lattice,
            vt, self.vt_text, self.vt,
            pairs, pairs_intro, pn.Row(*self.pairs_example), pairs_live, self.pairs_live,
            sizing_mode="stretch_width",
        )
