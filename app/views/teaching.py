"""Teaching: step through Find_vector, the outlier matrix VT, and why checking pairs is not enough."""

from __future__ import annotations

import itertools

import pandas as pd
import panel as pn
import param

from microrelease.app.state import Explorer
from microrelease.core import check_k_anonymity, outlier_matrix

VT_LIMIT = 60  # distinct tuples: larger VT matrices are not readable on a page

# All 8 combinations of three binary QIs: every pair of QIs is 2-anonymous, all three are not.
PAIRS_EXAMPLE = pd.DataFrame(
    list(itertools.product(["F", "M"], ["young", "old"], ["94139", "94142"])), columns=["sex", "age", "ZIP"]
)


def pairs_check(table: pd.DataFrame, qi: list[str]) -> pd.DataFrame:
    """Smallest class size over every pair of QIs, and over all of them together."""
    combos = [*itertools.combinations(qi, 2), tuple(qi)] if len(qi) > 2 else [tuple(qi)]
    rows = []
    for combo in combos:
        check = check_k_anonymity(table, list(combo), 1)
        rows.append({"QIs": ", ".join(combo), "smallest class": int(check.smallest_classes["size"].iloc[0])})
    return pd.DataFrame(rows)


class Teaching(pn.viewable.Viewer):
    explorer = param.ClassSelector(class_=Explorer)

    def __init__(self, **params):
        super().__init__(**params)
        self.step = pn.widgets.IntSlider(label="Find_vector probe", start=0, end=1, value=0, css_classes=["fv-step"])
        self.show = pn.widgets.Checkbox(label="highlight this probe in the lattice", value=True)
        self.step.param.watch(self._highlight, "value")
        self.show.param.watch(self._highlight, "value")
        self.explorer.param.watch(self._reset, ["answer"])
        self.probe_text = pn.pane.Markdown(css_classes=["fv-probe"], sizing_mode="stretch_width")
        self.vt = pn.widgets.Tabulator(disabled=True, height=260, sizing_mode="stretch_width", show_index=False)
        self.vt_text = pn.pane.Markdown(sizing_mode="stretch_width")
        self.pairs_live = pn.widgets.Tabulator(disabled=True, height=220, show_index=False, sizing_mode="stretch_width")
        self.explorer.param.watch(self._vt, ["answer", "selected"])
        self.explorer.param.watch(self._pairs, ["selected", "dataset"])
        self._reset()
        self._vt()
        self._pairs()

    def _reset(self, *_) -> None:
        e = self.explorer
        if e.answer is None:
            return
        trace = e.find_vector().trace
        self.step.end = max(1, len(trace) - 1)
        self.step.disabled = len(trace) <= 1
        self.step.value = 0
        self._highlight()

    def _highlight(self, *_) -> None:
        e = self.explorer
        result = e.find_vector()
        if not result.trace:
            self.probe_text.object = "The lattice has a single height: nothing to search."
            e.probe = None
            return
        i = min(self.step.value, len(result.trace) - 1)
        p = result.trace[i]
        tested = ", ".join(str(list(v)) for v in p.tested[:12]) + (" …" if len(p.tested) > 12 else "")
        self.probe_text.object = (
            f"Probe {i + 1} of {len(result.trace)}: low = {p.low}, high = {p.high}, **try height "
            f"<span id='fv-try'>{p.tried}</span>**. Tested {len(p.tested)} vector(s): {tested}. "
            + (f"**{list(p.satisfied)} satisfies** → high := {p.tried}." if p.satisfied is not None
               else f"None satisfies → low := {p.tried + 1}.")
            + f"  \nResult: {list(result.vector) if result.vector is not None else 'no vector satisfies'}"
        )
        e.probe = i if self.show.value else None

    def _vt(self, *_) -> None:
        e = self.explorer
        if e.answer is None:
            return
        freq = e.dataset.frequency
        if freq.n_distinct > VT_LIMIT:
            self.vt.value = None
            self.vt_text.object = (f"VT is shown for tables with at most {VT_LIMIT} distinct QI combinations; "
                                   f"this one has {freq.n_distinct}.")
            return
        vt = outlier_matrix(freq, e.dataset.hierarchies, e.k)
        labels = ["(" + ", ".join(h.ground[c] for h, c in zip(e.dataset.hierarchies, row, strict=True)) + ")"
                  for row in freq.codes]
        frame = pd.DataFrame({"outlier": [labels[x] for x in vt.outliers], "count": freq.counts[vt.outliers]})
        for y, label in enumerate(labels):
            frame[label] = [str(list(vt.vt[r, y])) for r in range(len(vt.outliers))]
        node = e.lattice.node(e.selected) if e.selected is not None else None
        if node is not None:
            frame["C_x at node"] = vt.class_size_at(node)
            frame["suppressed"] = frame["C_x at node"] < e.k
        self.vt.value = frame
        self.vt_text.object = (
            f"Outliers are the distinct tuples occurring fewer than k = {e.k} times. Entry [x, y] is the distance "
            "vector at which x and y first become equal. At node v, outlier x keeps C_x = Σ count(y) over "
            "VT[x, y] ≤ v and is suppressed when C_x < k."
            + (f" Selected node: {list(node)}." if node is not None else " Select a node to see which are suppressed.")
        )

    def _pairs(self, *_) -> None:
        """Pairs vs all QIs on the selected node's release (or the original table); not on every
        k change, since it groups the whole table once per pair."""
        e = self.explorer
        if e.dataset is None:
            return
        table = e.release(e.selected).released if e.selected is not None else e.dataset.table
        self.pairs_live.value = pairs_check(table, list(e.dataset.quasi_identifiers)[:6])

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
                             "first 6 QIs):"),
            self.pairs_live,
            sizing_mode="stretch_width",
        )
