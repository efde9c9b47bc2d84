"""What the Teaching tab shows (param only): a Find_vector probe, the VT matrix, the pairs check."""

from __future__ import annotations

import itertools

import pandas as pd
import param

from microrelease.app.explorer.state import Explorer
from microrelease.core import check_k_anonymity, outlier_matrix

VT_LIMIT = 60  # distinct tuples: larger VT matrices are not readable on a page
PAIRS_QIS = 6  # the live pairs check groups the table once per pair of the first QIs

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


class TeachingState(param.Parameterized):
    explorer = param.ClassSelector(class_=Explorer)
    step = param.Integer(default=0, bounds=(0, 1), label="Find_vector probe")
    highlight = param.Boolean(default=True, label="highlight this probe in the lattice")

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
            self.param.step.bounds = (0, max(1, self.steps() - 1))
            self.step = 0
        self._highlight()

    @param.depends("step", "highlight", watch=True)
    def _highlight(self) -> None:
        """The lattice rings the vectors this probe tested."""
        steps = self.steps()
        self.explorer.probe = min(self.step, steps - 1) if self.highlight and steps else None

    def probe(self):
        """(the FindVectorResult, index of the probe shown); index None when there is nothing to search."""
        result = self.explorer.find_vector()
        return result, (min(self.step, len(result.trace) - 1) if result.trace else None)

    def vt_frame(self) -> pd.DataFrame | None:
        """The outlier matrix VT (one row per outlier tuple), with C_x and suppression at the selected
        node; None when the table has more than VT_LIMIT distinct QI combinations."""
        e = self.explorer
        freq = e.dataset.frequency
        if freq.n_distinct > VT_LIMIT:
            return None
        vt = outlier_matrix(freq, e.dataset.hierarchies, e.k)
        labels = ["(" + ", ".join(h.ground[c] for h, c in zip(e.dataset.hierarchies, row, strict=True)) + ")"
                  for row in freq.codes]
        frame = pd.DataFrame({"outlier": [labels[x] for x in vt.outliers], "count": freq.counts[vt.outliers]})
        for y, label in enumerate(labels):
            frame[label] = [str(list(vt.vt[r, y])) for r in range(len(vt.outliers))]
        if e.selected is not None:
            frame["C_x at node"] = vt.class_size_at(e.lattice.node(e.selected))
            frame["suppressed"] = frame["C_x at node"] < e.k
        return frame

    def pairs_frame(self) -> pd.DataFrame:
        """Pairs vs all QIs on the selected node's release (or the original table)."""
        e = self.explorer
        table = e.release(e.selected).released if e.selected is not None else e.dataset.table
        return pairs_check(table, list(e.dataset.quasi_identifiers)[:PAIRS_QIS])
