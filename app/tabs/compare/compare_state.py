"""What the Compare tab shows (param only): two or three pinned nodes side by side.

A node is pinned from the Explorer (the node tapped in the Lattice or Trade-off tab, else the
policy's preferred one); a fourth pin replaces the oldest, and a new table clears them. For each
pinned node, for the current question: its vector with level names, whether it satisfies, is
k-minimal, is preferred; every metric of the core's ``METRICS``; ARX's quality models
(``QUALITY_MODELS``) the profile can answer; the prosecutor re-identification risk at the Explorer's
``risk_threshold``;
its class-size histogram; and each QI's distribution before (the input) and after (the released
rows: minimal required suppression, classes smaller than k, or failing a privacy model or k-map, removed).
Everything is read from the profile, or from the frequency set (the distributions), never the rows;
the quality and risk figures are the Explorer's (``Explorer.quality`` / ``Explorer.risk``, which the
node details read too): this tab computes none of them itself.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import param

from microrelease.app.explorer.explorer import Explorer
from microrelease.app.explorer.population import k_map_released_tuples
from microrelease.core.data.dataset import Dataset
from microrelease.core.lattice.generalization import class_sizes, generalize_codes
from microrelease.core.lattice.metrics import METRICS
from microrelease.core.lattice.quality import QUALITY_MODELS

MAX_PINS = 3
# Explorer.risk's figures the table shows (the threshold is the Explorer's ``risk_threshold``, 0.2 by default)
RISK = {"highest": ("Prosecutor risk: highest", "1 / smallest released class"),
        "average": ("Prosecutor risk: average", "released classes / released rows"),
        "records_at_risk": ("Records at risk", "share of released rows whose risk exceeds {threshold:g}")}
INPUT = "input"  # the release name of the input's distribution
SUPPRESSED = "(suppressed)"  # the bar of a node's suppressed rows
MAX_BARS = 24  # bars per release in a distribution: the rest is summed into one bar
MASS_REASON = ("the profile has no share mass (it is built when a quality policy, e.g. loss, is chosen in the "
               "question)")
MODELS_REASON = ("privacy models (l-diversity, t-closeness) are applied and their profile has no share mass "
                 "(choosing a quality policy, e.g. loss, rebuilds it with the mass)")
K_MAP_REASON = ("k-map is applied and its profile for this K has no share mass (choosing a quality policy, e.g. "
                "loss, rolls it up with the mass)")


def add_pin(pins: list[int], node_index: int, limit: int = MAX_PINS) -> list[int]:
    """``pins`` with ``node`` last (oldest first); a node pinned already stays where it is, and past
    ``limit`` pins the oldest goes."""
    if node_index in pins:
        return list(pins)
    return [*pins, node_index][-limit:]


def released_tuples(dataset: Dataset, node, k: int, sensitive_frequency=None, models=()) -> np.ndarray:
    """Per tuple of ``dataset``'s frequency set: whether its rows are released at ``node`` (minimal
    required suppression: its class has at least k rows and passes every privacy model)."""
    freq = dataset.frequency
    sizes, tuple_class = class_sizes(freq, dataset.hierarchies, node)
    keep = sizes >= k
    if models:
        keep &= sensitive_frequency.passing(tuple_class[freq.row_tuple], len(sizes), models)
    return keep[tuple_class]


def value_counts(dataset: Dataset, node=None, released: np.ndarray | None = None) -> list[pd.Series]:
    """Per QI, rows per value, in the hierarchy's order (values with no row left out): of the input
    (``node`` None: ground values), or of the rows ``released`` (per frequency-set tuple) at ``node``,
    read at the node's level."""
    freq, hierarchies = dataset.frequency, dataset.hierarchies
    node = (0,) * len(hierarchies) if node is None else tuple(node)
    weights = freq.counts if released is None else np.where(released, freq.counts, 0)
    levels = generalize_codes(hierarchies, freq.codes, node)
    out = []
    for i, (h, d) in enumerate(zip(hierarchies, node, strict=True)):
        rows = np.bincount(levels[:, i], weights=weights, minlength=h.level_size(d)).round().astype(np.int64)
        counts = pd.Series(rows, index=pd.Index(h.labels[d], dtype=object), name=h.attribute)
        out.append(counts[counts > 0])
    return out


def capped(counts: pd.Series, max_bars: int | None = MAX_BARS) -> pd.Series:
    """At most ``max_bars`` values: the ``max_bars - 1`` largest in their order (ties: the first), the
    rest summed into one bar ``(N other values)``."""
    if max_bars is None or len(counts) <= max_bars:
        return counts
    kept = counts.index.isin(counts.nlargest(max_bars - 1, keep="first").index)
    rest = counts[~kept]
    return pd.concat([counts[kept], pd.Series([rest.sum()], index=[f"({len(rest)} other values)"])])


def distribution_frame(groups: dict[str, pd.Series], n_rows: int, max_bars: int | None = MAX_BARS) -> pd.DataFrame:
    """One row per bar: ``release`` (group), ``value``, ``rows`` and ``share`` of the input's rows."""
    parts = []
    for name, counts in groups.items():
        bars = capped(counts, max_bars)
        parts.append(pd.DataFrame({"release": name, "value": bars.index.astype(str), "rows": bars.to_numpy(np.int64)}))
    frame = pd.concat(parts, ignore_index=True)
    frame["share"] = frame["rows"] / n_rows
    return frame


class CompareState(param.Parameterized):
    explorer = param.ClassSelector(class_=Explorer)
    pins = param.List(default=[], item_type=int, doc="pinned node numbers, oldest first (at most MAX_PINS)")

    def __init__(self, **params):
        super().__init__(**params)
        # Before the views' updates (precedence 10): they must never see the old table's node numbers.
        self.explorer.param.watch(lambda _: setattr(self, "pins", []), "dataset", precedence=0)

    # --- pins -----------------------------------------------------------------------------------
    def candidate(self) -> int | None:
        """The node the pin button pins: the selected one, else the preferred one (None: neither)."""
        e = self.explorer
        return e.selected if e.selected is not None else e.preferred

    def pin(self, node_index: int | None = None) -> None:
        """Pin ``node`` (default: ``candidate``); nothing when there is no node."""
        node_index = self.candidate() if node_index is None else node_index
        if node_index is not None:
            self.pins = add_pin(self.pins, int(node_index))

    def unpin(self, node_index: int) -> None:
        self.pins = [p for p in self.pins if p != node_index]

    def vector(self, node_index: int) -> str:
        return str(list(self.explorer.lattice.node(node_index)))

    # --- figures --------------------------------------------------------------------------------
    def skipped(self) -> dict[str, str]:
        """Quality model -> why it is not shown: the models the Explorer's profile cannot give."""
        e = self.explorer
        given = e.quality_scores()
        reason = K_MAP_REASON if e.applied_k_map is not None else MODELS_REASON if e.profile.models else MASS_REASON
        return {name: reason for name in QUALITY_MODELS if name not in given}

    def quality_note(self) -> str:
        """Which quality models are not shown, and why ('' when all are)."""
        skipped = self.skipped()
        if not skipped:
            return ""
        names = " and ".join(QUALITY_MODELS[n].label for n in skipped)
        return f"{names} not shown: {next(iter(skipped.values()))}."

    def table(self) -> pd.DataFrame:
        """One row per figure (``section``, ``figure``, ``meaning``, ``better``: "higher", "lower" or ""
        when neither), one column per pin (its vector), holding the raw value (text, bool, int or float)."""
        e, pins = self.explorer, self.pins
        a = e.answer
        quality, risk = [e.quality(i) for i in pins], [e.risk(i) for i in pins]  # the Explorer's figures
        rows = [("node", "levels", "each QI's level", "", [e.vector_text(i) for i in pins]),
                ("node", "height", "sum of the levels", "", [int(e.lattice.node_heights[i]) for i in pins]),
                ("question", self.satisfies_label(), "at most MaxSup rows suppressed (and each risk model met)", "",
                 [bool(a.satisfying[i]) for i in pins]),
                ("question", "k-minimal", "satisfies, and no satisfying node below", "",
                 [bool(a.minimal[i]) for i in pins]),
                ("question", f"preferred ({e.policy})", "the policy's choice", "", [i == e.preferred for i in pins])]
        if e.applied_models:
            rows.append(("question", "rows failing a privacy model", "per model", "",
                         [e.failing_models(i) or "none" for i in pins]))
        rows += [("metric", m.label, m.description, "higher" if m.higher_is_better else "lower",
                  [a.metrics[name][i].item() for i in pins]) for name, m in METRICS.items()]
        rows += [("quality", m.label, m.description, "lower", [q[name] for q in quality])
                 for name, m in QUALITY_MODELS.items() if name in e.quality_scores()]
        rows += [("risk", label, meaning.format(threshold=e.risk_threshold), "lower", [r[name] for r in risk])
                 for name, (label, meaning) in RISK.items()]
        frame = pd.DataFrame([r[:4] for r in rows], columns=["section", "figure", "meaning", "better"])
        for j, i in enumerate(pins):
            frame[self.vector(i)] = pd.Series([values[j] for *_, values in rows], dtype=object)
        return frame

    def satisfies_label(self) -> str:
        """The question a node satisfies: k, MaxSup and the risk-based privacy models asked for."""
        e = self.explorer
        risk = "".join(f", {c.describe()}" for c in e.answer.criteria)
        return f"satisfies k = {e.k} within MaxSup = {e.max_sup}{risk}"

    def histogram(self, node_index: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class size, classes of that size, released: size >= k) at ``node``, from the profile."""
        return self.explorer.class_sizes(node_index)

    def distributions(self, max_bars: int | None = MAX_BARS) -> dict[str, pd.DataFrame]:
        """Per QI, its distribution frame (``distribution_frame``): the input, then each pinned
        node's released rows at its level, and its suppressed rows (when any) as one bar."""
        e = self.explorer
        d = e.dataset
        groups: list[dict[str, pd.Series]] = [{INPUT: counts} for counts in value_counts(d)]
        for i in self.pins:
            node = e.lattice.node(i)
            released = (k_map_released_tuples(d, node, e.k, e.applied_k_map, e.applied_frequency, e.applied_models)
                        if e.applied_k_map is not None
                        else released_tuples(d, node, e.k, e.applied_frequency, e.applied_models))
            suppressed = int(d.frequency.counts[~released].sum())
            for group, counts in zip(groups, value_counts(d, node, released), strict=True):
                extra = pd.Series([suppressed], index=[SUPPRESSED]) if suppressed else pd.Series(dtype=np.int64)
                group[self.vector(i)] = pd.concat([capped(counts, None if max_bars is None else max_bars - 1), extra])
        return {qi: distribution_frame(g, d.n_rows, max_bars) for qi, g in zip(d.quasi_identifiers, groups, strict=True)}

    def describe(self) -> str:
        """The tab's line: the question the figures answer and what the pin button pins (not the pins:
        the line is redrawn when the question changes, not on a pin)."""
        e, c = self.explorer, self.candidate()
        which = "the selected node" if e.selected is not None else f"the preferred node ({e.policy})"
        pins = "nothing: no node is selected and none satisfies" if c is None else f"{which} {self.vector(c)}"
        return f"each pinned node's figures for k = {e.k} within MaxSup = {e.max_sup:,}; the pin button pins {pins}."
