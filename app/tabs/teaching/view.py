"""Teaching: step through Find_vector, the outlier matrix VT, and why checking pairs is not enough."""

from __future__ import annotations

import panel as pn
import param

from microrelease.app.tabs.teaching.state import (
    PAIRS_EXAMPLE,
    PAIRS_QIS,
    VT_LIMIT,
    TeachingState,
    pairs_check,
)

SHOWN_TESTED = 12


class TeachingView(pn.viewable.Viewer):
    state = param.ClassSelector(class_=TeachingState)

    def __init__(self, **params):
        super().__init__(**params)
        s, e = self.state, self.state.explorer
        self.step = pn.widgets.IntSlider.from_param(s.param.step, css_classes=["fv-step"])
        self.show = pn.widgets.Checkbox.from_param(s.param.highlight)
        self.probe_text = pn.pane.Markdown(css_classes=["fv-probe"], sizing_mode="stretch_width")
        self.vt = pn.widgets.Tabulator(disabled=True, height=260, sizing_mode="stretch_width", show_index=False)
        self.vt_text = pn.pane.Markdown(sizing_mode="stretch_width")
        self.pairs_live = pn.widgets.Tabulator(disabled=True, height=220, show_index=False, sizing_mode="stretch_width")
        s.param.watch(self._probe, ["step"])
        e.param.watch(self._probe, ["answer"])
        e.param.watch(self._vt, ["answer", "selected"])
        # not on every k change: the check groups the whole table once per pair
        e.param.watch(self._pairs, ["selected", "dataset"])
        self._probe()
        self._vt()
        self._pairs()

    def _probe(self, *_) -> None:
        if self.state.explorer.answer is None:
            return
        self.step.disabled = self.state.steps() <= 1
        result, i = self.state.probe()
        if i is None:
            self.probe_text.object = "The lattice has a single height: nothing to search."
            return
        p = result.trace[i]
        tested = ", ".join(str(list(v)) for v in p.tested[:SHOWN_TESTED]) + (" …" if len(p.tested) > SHOWN_TESTED else "")
        self.probe_text.object = (
            f"Probe {i + 1} of {len(result.trace)}: low = {p.low}, high = {p.high}, **try height "
            f"<span id='fv-try'>{p.tried}</span>**. Tested {len(p.tested)} vector(s): {tested}. "
            + (f"**{list(p.satisfied)} satisfies** → high := {p.tried}." if p.satisfied is not None
               else f"None satisfies → low := {p.tried + 1}.")
            + f"  \nResult: {list(result.vector) if result.vector is not None else 'no vector satisfies'}"
        )

    def _vt(self, *_) -> None:
        e = self.state.explorer
        if e.answer is None:
            return
        frame = self.state.vt_frame()
        self.vt.value = frame
        if frame is None:
            self.vt_text.object = (f"VT is shown for tables with at most {VT_LIMIT} distinct QI combinations; "
                                   f"this one has {e.dataset.frequency.n_distinct}.")
            return
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
        return pn.Column(
            "### Step through Find_vector (Samarati's binary search over height)",
            self.step, self.show, self.probe_text,
            "### The outlier distance matrix VT",
            self.vt_text, self.vt,
            "### Why checking pairs of attributes is not enough",
            pn.pane.Markdown("Every pair of these three QIs is 2-anonymous, yet each full combination is unique:"),
            pn.Row(pn.widgets.Tabulator(PAIRS_EXAMPLE, disabled=True, show_index=False, width=300, height=280),
                   pn.widgets.Tabulator(pairs_check(PAIRS_EXAMPLE, ["sex", "age", "ZIP"]), disabled=True,
                                        show_index=False, width=330, css_classes=["pairs-example"])),
            pn.pane.Markdown("The same check on the current table (the selected node's release, or the original data; "
                             f"first {PAIRS_QIS} QIs):"),
            self.pairs_live,
            sizing_mode="stretch_width",
        )
