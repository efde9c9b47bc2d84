"""What the Trade-off tab plots (param only): two registered metrics of every satisfying node.

The axes are chosen among the core's metrics registry (``METRICS``; accuracy against completeness by
default). The Pareto front is drawn in each metric's better direction (``higher_is_better``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import param

from microrelease.app.explorer.state import Explorer
from microrelease.core.lattice.metrics import METRICS


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
        ``y`` (and under their own names)."""
        ids = self._satisfying()
        frame = self.explorer.nodes_frame(ids)
        for axis, name in (("x", self.x), ("y", self.y)):
            frame[axis] = frame[name] = self.explorer.answer.metrics[name][ids].round(4)
        return frame

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
