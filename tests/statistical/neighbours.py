"""Helpers of the neighbour-pair harness (``test_neighbour_pairs.py``): release two neighbouring
tables many times, unseeded, and compare what comes out.

- :func:`release_runs`: the released attribute values of every run, for both tables;
- :func:`structural_properties` and :func:`compare_counts`: properties that must not depend on the
  data, and a test of "same distribution" on their counts (exact when both are deterministic);
- :func:`ratio_violations`: the ε-DP inequality P_a(S ∈ E) ≤ e^ε · P_b(S ∈ E) on fixed events E of a
  one-dimensional statistic S, with Clopper–Pearson bounds as the statistical slack.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from microrelease.core.dp import PrivacyWarning, dp_release


@dataclass(frozen=True, eq=False)
class NeighbourPair:
    """Two tables of the same size that differ in exactly one record (replace-one neighbours)."""

    name: str
    a: pd.DataFrame
    b: pd.DataFrame
    bounds: dict[str, tuple[float, float]]
    k: int

    def __post_init__(self):
        # a pair that is not a neighbour pair would make every check below meaningless
        assert list(self.a.columns) == list(self.b.columns) and len(self.a) == len(self.b), self.name
        assert int((self.a.to_numpy() != self.b.to_numpy()).any(axis=1).sum()) == 1, self.name

    @property
    def attributes(self) -> tuple[str, ...]:
        return tuple(self.a.columns)


@dataclass(frozen=True, eq=False)
class Runs:
    """Released attribute values, shape (runs, n, m), of each table; ``noise_scale`` as the release
    reports it (a parameter of the method, not a sample: fine for choosing bins)."""

    a: np.ndarray
    b: np.ndarray
    noise_scale: dict[str, float]


def release_runs(pair: NeighbourPair, method: str, noise: str, runs: int, *, epsilon: float,
                 linked: bool | None = None) -> Runs:
    """``runs`` unseeded releases (rng=None: OS entropy) of each table of ``pair``."""
    k = None if method == "record-noise" else pair.k
    options = {} if linked is None else {"linked": linked}  # only when asked: the default is what is tested
    columns = list(pair.attributes)
    out, scale = [], {}
    with warnings.catch_warnings():
        # k <= sqrt(n) for the fixed-order method and linked=True warn by design; not what is tested here
        warnings.simplefilter("ignore", PrivacyWarning)
        for table in (pair.a, pair.b):
            values = []
            for _ in range(runs):
                release = dp_release(table, pair.attributes, bounds=pair.bounds, epsilon=epsilon,
                                     method=method, k=k, noise=noise, **options)
                values.append(release.released[columns].to_numpy(dtype=float))
            out.append(np.stack(values))
            scale = dict(release.noise_scale)
    return Runs(out[0], out[1], scale)


def _pattern(items) -> tuple[int, ...]:
    """Items labelled by first occurrence: (0, 1, 0, 2) says items 0 and 2 are equal, the rest distinct."""
    seen: dict = {}
    return tuple(seen.setdefault(item, len(seen)) for item in items)


def structural_properties(pair: NeighbourPair, method: str) -> dict[str, Callable[[np.ndarray], object]]:
    """Properties of one release (an (n, m) array) computable from the output alone that must have one
    distribution for every table of size n: which released values are equal is fixed by n and k
    (groups of k to 2k − 1, placed in an order drawn from OS entropy), never by the values."""
    props: dict[str, Callable[[np.ndarray], object]] = {
        "rows 0 and 1 equal": lambda x: bool((x[0] == x[1]).all()),
        "number of distinct records": lambda x: len({tuple(r) for r in x.tolist()}),
        "record multiplicities (sorted)": lambda x: tuple(sorted(Counter(map(tuple, x.tolist())).values())),
        "record equality pattern": lambda x: _pattern(map(tuple, x.tolist())),
    }
    n = len(pair.a)
    equal_groups = method == "record-noise" or n % pair.k == 0
    for j, name in enumerate(pair.attributes):
        props[f"equality pattern of column {name}"] = lambda x, j=j: _pattern(x[:, j].tolist())
        if equal_groups:
            # the rows holding a column's minimum are one group, a uniformly placed set of rows whose size
            # is the same for every group only when k divides n (otherwise the tail group is larger)
            props[f"row of the minimum of {name}"] = lambda x, j=j: int(np.argmin(x[:, j]))
    return props


def _show(counts: Counter, most: int = 6) -> str:
    shown = ", ".join(f"{value!r}: {c}" for value, c in counts.most_common(most))
    return "{" + shown + (f", ... ({len(counts) - most} more)" if len(counts) > most else "") + "}"


def compare_counts(name: str, values_a: list, values_b: list, alpha: float) -> str | None:
    """None when the two samples of a property are consistent with one distribution; otherwise a
    message naming the property and its counts for both tables. Both deterministic: compared exactly;
    else Fisher's exact test (two categories) or a chi-square test, rejecting at ``alpha``."""
    ca, cb = Counter(values_a), Counter(values_b)
    if len(ca) == 1 and len(cb) == 1:
        if ca.keys() == cb.keys():
            return None
        only_a, only_b = next(iter(ca)), next(iter(cb))
        return f"{name!r}: always {only_a!r} for table a, always {only_b!r} for table b (exact)"
    # categories pooled by their total count: symmetric in the two tables, so the test keeps its level;
    # rare ones go together (the chi-square approximation needs counts), a still rare rest is left out
    keys = sorted(set(ca) | set(cb), key=repr)
    common = [key for key in keys if ca[key] + cb[key] >= 10]
    rows = [[ca[key], cb[key]] for key in common]
    rare = [key for key in keys if key not in common]
    rest = [sum(ca[key] for key in rare), sum(cb[key] for key in rare)]
    if sum(rest) >= 10:
        rows.append(rest)
    if len(rows) < 2:
        return None
    table = np.array(rows)
    if len(rows) == 2:
        p, test = stats.fisher_exact(table).pvalue, "Fisher's exact test"
    else:
        p, test = stats.chi2_contingency(table).pvalue, f"chi-square test over {len(rows)} categories"
    if p >= alpha:
        return None
    return f"{name!r}: table a {_show(ca)}, table b {_show(cb)} ({test}, p = {p:.2g} < {alpha:g})"


def fixed_edges(lo: float, hi: float, scale: float, *, per_scale: int = 4, most: int = 60) -> np.ndarray:
    """Bin edges from the declared bounds and the noise scale only (never from the samples): from
    3 scales below the bounds to 3 above, a quarter scale apart (at most ``most`` edges)."""
    step = max(scale / per_scale, (hi - lo + 6 * scale) / most)
    return np.arange(lo - 3 * scale, hi + 3 * scale + step / 2, step)


def _events(values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Counts of the bins (open at both ends), then of {S < e} and of {S >= e} for every edge e."""
    below = np.searchsorted(np.sort(values), edges, side="left")
    bins = np.diff(np.concatenate(([0], below, [len(values)])))
    return np.concatenate([bins, below, len(values) - below])


def _event_names(edges: np.ndarray) -> list[str]:
    ext = [-math.inf, *edges.tolist(), math.inf]
    return ([f"[{ext[i]:.4g}, {ext[i + 1]:.4g})" for i in range(len(ext) - 1)]
            + [f"S < {e:.4g}" for e in edges] + [f"S >= {e:.4g}" for e in edges])


def ratio_violations(stat_a: np.ndarray, stat_b: np.ndarray, epsilon: float, edges: np.ndarray,
                     alpha: float) -> list[str]:
    """Events E (histogram bins over ``edges``, and the tails below and above each edge) where the data
    contradict P_a(E) ≤ e^ε · P_b(E) or the reverse. ε-DP bounds the ratio on every event of any
    post-processing; tails are where Laplace and the staircase reach it, and they gather mass.

    The slack: an event is flagged only when the Clopper–Pearson lower bound of one probability
    exceeds e^ε times the upper bound of the other. Each bound fails with probability at most α' =
    ``alpha`` / (4 · #events) (Bonferroni over both bounds of both tables at every event), so a true
    ε-DP pair is flagged with probability at most ``alpha``. In ratio terms, the empirical ratio may
    exceed e^ε by the factor (upper_b / p̂_b) / (lower_a / p̂_a), large for rare events, near 1 for
    frequent ones."""
    runs_a, runs_b = len(stat_a), len(stat_b)
    ca, cb = _events(stat_a, edges), _events(stat_b, edges)
    each = alpha / (4 * len(ca))
    names, bound, out = _event_names(edges), math.exp(epsilon), []
    for (p, n_p, label_p), (q, n_q, label_q) in (((ca, runs_a, "a"), (cb, runs_b, "b")),
                                                 ((cb, runs_b, "b"), (ca, runs_a, "a"))):
        lower = np.where(p > 0, stats.beta.ppf(each, np.maximum(p, 1), n_p - p + 1), 0.0)
        upper = np.where(q < n_q, stats.beta.ppf(1 - each, q + 1, np.maximum(n_q - q, 1)), 1.0)
        for i in np.flatnonzero(lower > bound * upper):
            out.append(f"{names[i]}: table {label_p} {p[i]}/{n_p}, table {label_q} {q[i]}/{n_q}; at least "
                       f"{lower[i]:.3g} against at most {upper[i]:.3g}: ratio > {lower[i] / upper[i]:.3g} > "
                       f"e^{epsilon:g} = {bound:.3g}")
    return out


STATISTICS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    # of one released column over runs, shape (runs, n); all ignore the row order
    "mean": lambda col: col.mean(axis=1),
    "minimum": lambda col: col.min(axis=1),
    "maximum": lambda col: col.max(axis=1),
    "upper median": lambda col: np.sort(col, axis=1)[:, col.shape[1] // 2],
}
