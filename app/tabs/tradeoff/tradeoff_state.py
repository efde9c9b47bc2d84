"""What the Trade-off tab plots (param only): two registered metrics of every satisfying node.

The axes are chosen among the core's metrics registry (``METRICS``; accuracy against completeness by
default). The Pareto front is drawn in each metric's better direction (``higher_is_better``).
Each axis spans what its metric can take: a share on [0, 1], another metric its values (a constant
one around its value), with a margin so that a point on the edge is drawn, and can be tapped, whole.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.core.lattice.metrics import METRICS

SHARES = frozenset({"accuracy", "completeness", "max_risk", "average_risk"})  # metrics that are shares of a whole: [0, 1]
MARGIN = 0.08  # of an axis's span, on each side: room for the ring of a point on the edge


def pareto_front(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the points no other point beats on both x and y, higher being better (sorted by x)."""
    order = np.lexsort((-y, -x))  # x desc, then y desc
    front, best = [], -np.inf
    for i in order:
        if y[i] > best:
            front.append(i)
            best = y[i]
    return np.asarray(front[::-1], dtype=np.int64)


class TradeoffState(param.Parameterized):
    explorer = param.ClassSelector(class_=Explorer)
    x = param.Selector(default="accuracy", objects=list(METRICS), label="x axis")
    y = param.Selector(default="completeness", objects=list(METRICS), label="y axis")

    def title(self) -> str:
        return f"{METRICS[self.x].label} vs {METRICS[self.y].label.lower()} (satisfying nodes)"

    def _satisfying(self) -> np.ndarray:
        return np.flatnonzero(self.explorer.answer.satisfying)

    def points(self) -> pd.DataFrame:
        """The Explorer's node columns for every satisfying node, with the chosen metrics as ``x`` and
        ``y`` (and under their own names). Rows go by status (satisfies, k-minimal, preferred): the
        preferred node is drawn last, on top."""
        ids = self._satisfying()
        ids = ids[np.argsort(self.explorer.status()[ids], kind="stable")]
        frame = self.explorer.nodes_frame(ids)
        for axis, name in (("x", self.x), ("y", self.y)):
            frame[axis] = frame[name] = self.explorer.answer.metrics[name][ids].round(4)
        return frame

    def axis_range(self, axis: str) -> tuple[float, float]:
        """(start, end) of the ``"x"`` or ``"y"`` axis: [0, 1] for a share, else the satisfying nodes'
        values (from 0 when none is negative; a constant one around its value), with a MARGIN each side."""
        name = self.x if axis == "x" else self.y
        values = self.explorer.answer.metrics[name][self._satisfying()] if self.explorer.answer is not None else []
        if name in SHARES or not len(values):
            low, high = 0.0, 1.0
        else:
            low, high = float(np.min(values)), float(np.max(values))
            if low == high:
                half = abs(low) * 0.1 or 1.0
                low, high = low - half, high + half
            if np.min(values) >= 0:
                low = max(low, 0.0)
        margin = MARGIN * (high - low)
        return low - margin, high + margin

    def front(self) -> tuple[np.ndarray, np.ndarray]:
        """x and y of the Pareto front of the satisfying nodes, left to right."""
        ids = self._satisfying()
        x, y = (self.explorer.answer.metrics[name][ids] for name in (self.x, self.y))
        sign_x, sign_y = (1 if METRICS[name].higher_is_better else -1 for name in (self.x, self.y))
        f = pareto_front(sign_x * x, sign_y * y)
        order = np.argsort(x[f], kind="stable")
        return x[f][order], y[f][order]

    def rings(self) -> list[tuple[float, float, str]]:
        """(x, y, "preferred" / "selected") of the preferred and the selected node."""
        e, m = self.explorer, self.explorer.answer.metrics
        return [(m[self.x][i], m[self.y][i], label) for i, label in ((e.preferred, "preferred"), (e.selected, "selected"))
                if i is not None]
