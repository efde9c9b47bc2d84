"""ARX's quality (utility) models, for every node of the lattice at once (Prasser & Kohlmayer, ARX).

At a node with levels (d_1..d_m) over hierarchies of heights (h_1..h_m) and ground domains of
|D_i| values (the values of the hierarchy, not only those in the data), on n rows of which S are
suppressed (the rows of the classes smaller than k; a node that does not satisfy is scored as if all
of them were suppressed):

- **Loss** (ARX's loss, generalization and suppression weighted equally): per QI,
  L_i = (Σ over rows of share_i − n/|D_i|) / (n − n/|D_i|), where share_i is the share of D_i under
  the row's generalized value and a suppressed row counts 1; combined by the geometric mean
  ∏(1 + L_i)^(1/m) − 1;
- **Precision**: the mean over rows and QIs of d_i / h_i, a suppressed row counting 1 (0 for h_i = 0);
- **Height**: Σ d_i;
- **Discernibility** (DM): Σ released class sizes² + S · n; **DM*** (monotone): Σ over all classes,
  suppressed ones included, of size²;
- **AECS** (average equivalence class size): n / (released classes + 1 if any row is suppressed);
- **Non-uniform entropy** (Gionis & Tassa; ARX's non-monotonic ``MetricMDNUNMEntropyPrecomputed``, summed
  over QIs): per QI, −Σ over ground values v of a_v log2(a_v / b_v) over all n rows (a_v: rows holding v,
  b_v: rows holding v's generalization at d_i), plus, for the suppressed rows, S log2 S − Σ_u a_u log2 a_u
  (a_u: suppressed rows whose generalized value is u): their entropy once replaced by ``*``;
- **KL divergence** (Machanavajjhala et al.; ARX's ``MetricSDNMKLDivergence``), in bits: summed over the
  *rows* r, as ARX sums, of p(x_r) log2(p(x_r) / q(x_r)), with p(x) = c_x / n the share of rows holding
  ground tuple x, and q spreading a released class C uniformly over its area (the ground tuples its values
  cover, ∏ leaves_i): q = |C| / n / area(C); a suppressed row's q = S / n / ∏ |D_i|.

The rows a node suppresses are those of its classes smaller than k and, with privacy models (l-diversity,
t-closeness), of the classes failing them. Every figure is lower-is-better. Loss, non-uniform entropy and KL
read more than the class sizes: the quality profile (``quality_profile``)
keeps, per class size, the sums they need, so that the rows suppressed for any k give theirs back with one
prefix sum, and every node is scored at once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.lattice.profile import LatticeProfile
from microrelease.core.lattice.quality_profile import share_tables, xlog2x


def _released(profile: LatticeProfile, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per node: the first pair kept for k, the running sums over the released pairs (nodes × columns of
    ``Quality.cumulative``) and over the pairs suppressed for k (prefix sums over each node's pairs,
    sizes ascending, as ``LatticeProfile.stats`` sums rows)."""
    q = profile.quality
    if q is None:
        raise InvalidParameterError("the quality models need a profile built with quality=True", parameter="policy")
    cum = q.cumulative
    start, end = profile.offsets[:-1], profile.offsets[1:]
    composite = profile._prefix[0]
    n_nodes = len(start)
    first_kept = np.searchsorted(composite, (np.arange(n_nodes, dtype=np.int64) * (profile.n_rows + 1) + k)
                                 .astype(composite.dtype))
    return first_kept, cum[end] - cum[first_kept], cum[first_kept] - cum[start]


def loss(profile: LatticeProfile, k: int, suppressed: np.ndarray) -> np.ndarray:
    """ARX's Loss of every node (see the module docstring); ``suppressed``: rows per node."""
    _, released, _ = _released(profile, k)
    assert profile.quality is not None  # _released raised otherwise
    n, dom = profile.n_rows, profile.quality.domain.astype(float)
    floor = n / dom
    per_qi = (released[:, :len(dom)] + suppressed[:, None] - floor) / np.where(n - floor > 0, n - floor, 1.0)
    return np.prod(1.0 + per_qi, axis=1) ** (1.0 / per_qi.shape[1]) - 1.0


def non_uniform_entropy(profile: LatticeProfile, k: int, suppressed: np.ndarray) -> np.ndarray:
    """ARX's non-uniform entropy of every node (see the module docstring)."""
    q = profile.quality
    first_kept, _, _ = _released(profile, k)
    assert q is not None  # _released raised otherwise
    start = profile.offsets[:-1]
    entropy_col = len(q.domain) + 2
    # the suppressed rows' Σ a log2 a: the last pair suppressed for k, or the failing classes alone
    # (no pair at all when every class fails a model: the failing classes alone, then)
    from_pairs = q.pairs[np.maximum(first_kept - 1, 0), entropy_col] if len(q.pairs) else np.zeros(len(start))
    last = np.where(first_kept > start, from_pairs, q.failing[:, 1])
    grid = profile.lattice.grid
    generalization = q.conditional[np.arange(grid.shape[1]), grid].sum(axis=1)
    return generalization + grid.shape[1] * xlog2x(suppressed) - last


def kl_divergence(profile: LatticeProfile, k: int, suppressed: np.ndarray) -> np.ndarray:
    """ARX's KL divergence of every node, in bits (see the module docstring)."""
    q = profile.quality
    _, released, small = _released(profile, k)
    assert q is not None  # _released raised otherwise
    m, n = len(q.domain), profile.n_rows
    if not n:
        return np.zeros(len(suppressed))
    square, square_area, square_log_size = released[:, m], released[:, m + 1], released[:, m + 2]
    released_term = square_log_size - np.log2(n) * square - square_area
    square_suppressed = small[:, m] + q.failing[:, 0]
    log_max_area = np.log2(q.domain.astype(float)).sum()
    outliers = np.where(suppressed > 0, np.log2(np.maximum(suppressed, 1) / n) - log_max_area, 0.0)
    return (q.tuples - released_term - square_suppressed * outliers) / n


def precision(profile: LatticeProfile, suppressed: np.ndarray) -> np.ndarray:
    lat = profile.lattice
    h = np.asarray(lat.heights, dtype=float)
    ratio = lat.grid / np.where(h > 0, h, 1.0)
    n = profile.n_rows
    return ((n - suppressed)[:, None] * ratio + suppressed[:, None]).mean(axis=1) / n


def all_classes_sq(profile: LatticeProfile) -> np.ndarray:
    """DM*: Σ over every class of size² (suppressed ones included; with privacy models, the classes
    failing them too, which the histogram leaves out: ``failing_sq``)."""
    passing = profile.stats(1).released_sq.astype(float)  # every passing class is released for k = 1
    return passing + (profile.failing_sq if profile.failing_sq is not None else 0)


@dataclass(frozen=True)
class QualityModel:
    """``score(profile, k)``: one value per node, lower is better."""

    name: str
    label: str
    description: str
    score: Callable[[LatticeProfile, int], np.ndarray]
    needs_mass: bool = False


def _suppressed(profile: LatticeProfile, k: int) -> np.ndarray:
    return profile.stats(k).suppressed.astype(float)


def _aecs(profile: LatticeProfile, k: int) -> np.ndarray:
    s = profile.stats(k)
    return profile.n_rows / np.maximum(s.distinct + (s.suppressed > 0), 1)


QUALITY_MODELS: dict[str, QualityModel] = {
    q.name: q
    for q in (
        QualityModel("loss", "Loss (ARX)", "geometric mean over QIs of the share of the domain lost",
                     lambda p, k: loss(p, k, _suppressed(p, k)), needs_mass=True),
        QualityModel("precision", "Precision (ARX)", "mean of level/height over rows and QIs (suppressed: 1)",
                     lambda p, k: precision(p, _suppressed(p, k))),
        QualityModel("height", "Height (ARX)", "sum of the levels", lambda p, k: p.lattice.node_heights.astype(float)),
        QualityModel("discernibility", "Discernibility (DM)", "sum of released class sizes² + suppressed × rows",
                     lambda p, k: (p.stats(k).released_sq + p.stats(k).suppressed * p.n_rows).astype(float)),
        QualityModel("dm-star", "Discernibility DM* (monotone)", "sum of every class size²",
                     lambda p, k: all_classes_sq(p)),
        QualityModel("aecs", "AECS", "rows / (released classes + 1 if any row is suppressed)", _aecs),
        QualityModel("nu-entropy", "Non-uniform entropy (ARX)", "bits lost per QI value, summed over QIs",
                     lambda p, k: non_uniform_entropy(p, k, _suppressed(p, k)), needs_mass=True),
        QualityModel("kl-divergence", "KL divergence (ARX)", "bits between the input's and the release's "
                     "tuple distributions", lambda p, k: kl_divergence(p, k, _suppressed(p, k)), needs_mass=True),
    )
}


def optimum(answer, name: str) -> tuple[int, int]:
    """ARX's optimum for quality model ``name``: the best of every satisfying node of ``answer`` (a
    ``Answer``), and the best k-minimal node (they differ when the
    model is not monotone). Ties: fewer suppressed rows, then the lexicographically smallest vector.
    Raises InvalidParameterError when no node satisfies."""
    if name not in QUALITY_MODELS:
        raise InvalidParameterError(f"The 'policy' parameter must be one of {sorted(QUALITY_MODELS)}. Got {name!r}.",
                                    parameter="policy")
    score = np.round(QUALITY_MODELS[name].score(answer.profile, answer.k), 9)
    lattice = answer.lattice
    best = []
    for candidates in (np.flatnonzero(answer.satisfying), np.flatnonzero(answer.minimal)):
        if not len(candidates):
            raise InvalidParameterError(f"no node satisfies k={answer.k} with MaxSup={answer.max_sup}", parameter="k")
        keys = [lattice.grid[candidates, i] for i in range(len(lattice.heights) - 1, -1, -1)]
        keys += [answer.stats.suppressed[candidates], score[candidates]]
        best.append(int(candidates[np.lexsort(keys)[0]]))
    return best[0], best[1]


def node_quality(hierarchies: tuple[Hierarchy, ...], node, sizes: np.ndarray, class_levels: np.ndarray,
                 suppressed: np.ndarray, n_rows: int) -> dict[str, float]:
    """Every quality model of one node from its classes (``class_levels``: level codes, classes ×
    QIs; ``suppressed``: which classes are removed, for k or a privacy model), by the formulas of the
    module docstring: what a release's report gives (not the non-uniform entropy nor the KL divergence,
    which read the suppressed rows' values: see ``node_release``)."""
    flat, off = share_tables(hierarchies)
    removed = int(sizes[suppressed].sum())
    kept = ~suppressed
    per_qi, precisions = [], []
    for i, (h, d) in enumerate(zip(hierarchies, node, strict=True)):
        mass = float((sizes[kept] * flat[off[i, d] + class_levels[kept, i]]).sum())
        floor = n_rows / len(h.ground)
        per_qi.append((mass + removed - floor) / (n_rows - floor) if n_rows - floor > 0 else 0.0)
        precisions.append(((n_rows - removed) * (d / h.height if h.height else 0.0) + removed) / n_rows)
    released = sizes[kept]
    return {"loss": float(np.prod(1 + np.array(per_qi)) ** (1 / len(per_qi)) - 1),
            "precision": float(np.mean(precisions)), "height": float(sum(node)),
            "discernibility": float((released.astype(float) ** 2).sum() + removed * n_rows),
            "dm-star": float((sizes.astype(float) ** 2).sum()),
            "aecs": n_rows / max(len(released) + (1 if removed else 0), 1)}


def policy_score(name: str):
    """The preference-policy form of quality model ``name``: scored from the profile the class
    figures were answered from (built with ``quality=True``)."""
    def score(lattice, stats, candidates, weights):
        profile = stats.source
        if profile is None or getattr(profile, "quality", None) is None and QUALITY_MODELS[name].needs_mass:
            raise InvalidParameterError(f"the policy {name!r} needs a lattice profile built with quality=True",
                                        parameter="policy")
        return QUALITY_MODELS[name].score(profile, stats.k)[candidates]
    return score
