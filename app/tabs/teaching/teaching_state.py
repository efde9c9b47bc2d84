"""What the Teaching tab shows (param only): a Find_vector probe, the VT matrix, the pairs check.

Probes are numbered from 1 as the page reads them ("Probe 2 of 4"); ``Explorer.probe`` is the index in
the trace (``step - 1``), which the lattice views highlight.
"""

from __future__ import annotations

import itertools

import pandas as pd
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.kernel_readiness import kernel_strategy
from microrelease.core import build_profile, check_k_anonymity, load_sample, outlier_matrix
from microrelease.core.lattice.search import Probe

VT_LIMIT = 60  # distinct tuples: larger VT matrices are not readable on a page
PAIRS_QIS = 6  # the live pairs check groups the table once per pair of the first QIs
EXAMPLE = "samarati"  # the paper's example table, the one to project in class
EXAMPLE_K = 2
VT_FIRST = ["suppressed", "C_x at node", "outlier", "count"]  # kept in view while the tuples scroll

# All 8 combinations of three binary QIs: every pair of QIs is 2-anonymous, all three are not.
PAIRS_EXAMPLE = pd.DataFrame(
    list(itertools.product(["F", "M"], ["young", "old"], ["94139", "94142"])), columns=["sex", "age", "ZIP"]
)


def pairs_check(table: pd.DataFrame, qi: list[str]) -> pd.DataFrame:
    """Smallest class size over every pair of QIs, and over all of them together (0: a release with
    no rows, every row suppressed, has no class at all)."""
    combos = [*itertools.combinations(qi, 2), tuple(qi)] if len(qi) > 2 else [tuple(qi)]
    rows = []
    for combo in combos:
        sizes = check_k_anonymity(table, list(combo), 1).smallest_classes["size"]
        rows.append({"QIs": ", ".join(combo), "smallest class": int(sizes.iloc[0]) if len(sizes) else 0})
    return pd.DataFrame(rows)


def vector_text(levels) -> str:
    """A distance vector as plain integers: ``(0, 2)``."""
    return "(" + ", ".join(str(int(d)) for d in levels) + ")"


def is_top_probe(probe: Probe, max_height: int) -> bool:
    """The probe Find_vector adds once the bounds have met, to test the top it never reached."""
    return probe.low == probe.high and probe.tried == max_height


class TeachingState(param.Parameterized):
    explorer = param.ClassSelector(class_=Explorer)
    step = param.Integer(default=1, bounds=(1, 2), label="Find_vector probe")
    highlight = param.Boolean(default=True, label="highlight this probe in the lattice")
    presentation = param.Boolean(default=False, label="Presentation mode")

    def __init__(self, **params):
        super().__init__(**params)
        self.explorer.param.watch(self._restart, ["answer"])
        self._restart()

    def steps(self) -> int:
        """Probes in the trace of Find_vector for the current question."""
        return len(self.explorer.find_vector().trace) if self.explorer.answer is not None else 0

    def _restart(self, *_) -> None:
        """A new answer: back to the first probe."""
        if self.explorer.answer is None:
            return
        with param.parameterized.batch_call_watchers(self):
            # a slider needs start < end: one probe keeps (1, 2) and the view disables the slider
            self.param.step.bounds = (1, max(2, self.steps()))
            self.step = 1
        self._highlight()

    @param.depends("step", "highlight", watch=True)
    def _highlight(self) -> None:
        """The lattice rings the vectors this probe tested and bands the height it tried."""
        steps = self.steps()
        self.explorer.probe = min(self.step, steps) - 1 if self.highlight and steps else None

    # --- the step buttons ---------------------------------------------------------------------
    def can_go_back(self) -> bool:
        return self.step > 1

    def can_go_on(self) -> bool:
        return self.step < self.steps()

    def previous_step(self) -> None:
        if self.can_go_back():
            self.step -= 1

    def next_step(self) -> None:
        if self.can_go_on():
            self.step += 1

    def restart(self) -> None:
        self.step = 1

    def load_example(self) -> None:
        """Samarati's example table (small: loaded and profiled at once) with the paper's k = 2."""
        dataset = load_sample(EXAMPLE)
        self.explorer.load(dataset, build_profile(dataset, strategy=kernel_strategy("lattice")))
        self.explorer.param.update(k=EXAMPLE_K, max_sup=0)

    # --- what is shown ------------------------------------------------------------------------
    def probe(self):
        """(the FindVectorResult, index of the probe shown); index None when there is nothing to search."""
        result = self.explorer.find_vector()
        return result, (min(self.step, len(result.trace)) - 1 if result.trace else None)

    def vt_frame(self) -> pd.DataFrame | None:
        """The outlier matrix VT, one row per outlier tuple: whether it is suppressed at the selected
        node and its C_x there (when a node is selected), the tuple, its count, then one column per
        distinct tuple (named by its values) holding the distance vector ``(d1, ..., dm)``. None when the
        table has more than VT_LIMIT distinct QI combinations."""
        e = self.explorer
        freq = e.dataset.frequency
        if freq.n_distinct > VT_LIMIT:
            return None
        vt = outlier_matrix(freq, e.dataset.hierarchies, e.k)
        labels = ["(" + ", ".join(h.ground[c] for h, c in zip(e.dataset.hierarchies, row, strict=True)) + ")"
                  for row in freq.codes]
        frame = pd.DataFrame({"outlier": [labels[x] for x in vt.outliers],
                              "count": [int(c) for c in freq.counts[vt.outliers]]})
        if e.selected is not None:
            sizes = vt.class_size_at(e.lattice.node(e.selected))
            frame["C_x at node"] = [int(c) for c in sizes]
            frame["suppressed"] = [bool(c < e.k) for c in sizes]
        for y, label in enumerate(labels):
            frame[label] = [vector_text(vt.vt[r, y]) for r in range(len(vt.outliers))]
        first = [c for c in VT_FIRST if c in frame.columns]
        return frame[first + [c for c in frame.columns if c not in first]]

    def pairs_frame(self) -> pd.DataFrame:
        """Pairs vs all QIs on the selected node's release (or the original table)."""
        e = self.explorer
        table = e.release(e.selected).released if e.selected is not None else e.dataset.table
        return pairs_check(table, list(e.dataset.quasi_identifiers)[:PAIRS_QIS])
