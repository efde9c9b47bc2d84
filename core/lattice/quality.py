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
- **AECS** (average equivalence class size): n / (released classes + 1 if any row is suppressed).

Every figure is lower-is-better. Loss needs more than the class sizes: the profile's *share mass*
(per class size, per QI: Σ over the rows of classes of that size of share_i; see
:mod:`~microrelease.core.lattice.quality_kernels`), so that the rows suppressed for any k give their
share back with one prefix sum.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.generalization import class_sizes, generalize_codes
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.lattice.profile import LatticeProfile


def share_tables(hierarchies: tuple[Hierarchy, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Flat per-QI, per-level tables of share_i (ground values under a node / |D_i|):
    ``flat[off[i, level] + code]``."""
    depth = max(h.height for h in hierarchies) + 1
    off = np.zeros((len(hierarchies), depth), dtype=np.int64)
    parts, pos = [], 0
    for i, h in enumerate(hierarchies):
        for level in range(h.height + 1):
            off[i, level] = pos
            under = np.bincount(h.codes[level], minlength=h.level_size(level)) / len(h.ground)
            parts.append(under)
            pos += len(under)
    return np.concatenate(parts), off


def node_share_mass(freq, hierarchies: tuple[Hierarchy, ...], node) -> tuple[np.ndarray, np.ndarray]:
    """One node's class sizes and each class's share mass per QI (classes × QIs), by grouping the
    frequency set anew (the direct path, and the oracle of the compiled roll-up)."""
    sizes, tuple_class = class_sizes(freq, hierarchies, node)
    levels = generalize_codes(hierarchies, freq.codes, node)
    flat, off = share_tables(hierarchies)
    mass = np.zeros((len(sizes), len(hierarchies)))
    for i, d in enumerate(node):
        np.add.at(mass[:, i], tuple_class, freq.counts * flat[off[i, d] + levels[:, i]])
    return sizes, mass


@dataclass(frozen=True, eq=False)
class Quality:
    """What the quality models read besides the class sizes: per histogram pair of the profile, the
    share mass of each QI (pairs × QIs), and |D_i| per QI."""

    mass: np.ndarray
    domain: np.ndarray

    def __post_init__(self) -> None:
        self.mass.setflags(write=False)

    @cached_property
    def cumulative(self) -> np.ndarray:
        """Running sums of the mass over the pairs (one row more, zeros first): the same for every k,
        so a query for k costs two gathers."""
        cum = np.zeros((len(self.mass) + 1, self.mass.shape[1]))
        np.cumsum(self.mass, axis=0, out=cum[1:])
        return cum


def _masses(profile: LatticeProfile, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per node and QI: the share mass of all rows, and of the rows suppressed for k (prefix sums
    over each node's pairs, sizes ascending, as :meth:`LatticeProfile.stats` sums rows)."""
    q = profile.quality
    if q is None:
        raise InvalidParameterError("the quality models need a profile built with quality=True", parameter="policy")
    if profile.models:
        raise InvalidParameterError("the quality models do not yet take privacy models beyond k-anonymity "
                                    "(their failing classes carry no share mass)", parameter="policy")
    cum = q.cumulative
    start, end = profile.offsets[:-1], profile.offsets[1:]
    composite = profile._prefix[0]
    n_nodes = len(start)
    first_kept = np.searchsorted(composite, (np.arange(n_nodes, dtype=np.int64) * (profile.n_rows + 1) + k)
                                 .astype(composite.dtype))
    return cum[end] - cum[start], cum[first_kept] - cum[start]


def loss(profile: LatticeProfile, k: int, suppressed: np.ndarray) -> np.ndarray:
    """ARX's Loss of every node (see the module docstring); ``suppressed``: rows per node."""
    total, small = _masses(profile, k)
    n, dom = profile.n_rows, profile.quality.domain.astype(float)
    floor = n / dom
    per_qi = (total - small + suppressed[:, None] - floor) / np.where(n - floor > 0, n - floor, 1.0)
    return np.prod(1.0 + per_qi, axis=1) ** (1.0 / per_qi.shape[1]) - 1.0


def precision(profile: LatticeProfile, suppressed: np.ndarray) -> np.ndarray:
    lat = profile.lattice
    h = np.asarray(lat.heights, dtype=float)
    ratio = lat.grid / np.where(h > 0, h, 1.0)
    n = profile.n_rows
    return ((n - suppressed)[:, None] * ratio + suppressed[:, None]).mean(axis=1) / n


def all_classes_sq(profile: LatticeProfile) -> np.ndarray:
    """DM*: Σ over every class of size² (suppressed ones included; with privacy models, the classes
    failing them too, which the histogram leaves out: ``failing_sq``)."""
    n_nodes = len(profile.offsets) - 1
    node_of_pair = np.repeat(np.arange(n_nodes), np.diff(profile.offsets))
    passing = np.bincount(node_of_pair, weights=(profile.sizes ** 2 * profile.counts).astype(float), minlength=n_nodes)
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
    )
}


def build_quality(freq, hierarchies: tuple[Hierarchy, ...], lattice, spec, strategy: str, **walk) -> LatticeProfile:
    """The profile with its share mass (see :func:`~microrelease.core.lattice.profile.profile_frequency_set`):
    compiled with ``numba``, else node by node from the frequency set (``direct``; also the oracle)."""
    from microrelease.core.lattice.profile import assemble_profile, roll_up

    flat, off = share_tables(hierarchies)
    domain = np.array([len(h.ground) for h in hierarchies], dtype=np.int64)
    if strategy == "numba":
        from microrelease.core.lattice.quality_kernels import inner_quality
        from microrelease.core.lattice.rollup_kernels import roll_once

        def inner(*args):
            return inner_quality(*args, spec.shifts, spec.masks, flat, off)

        pieces = roll_up(lattice, spec, spec.pack(freq.codes), freq.counts.astype(np.int64), inner, roll_once,
                         with_start=True, **walk)
    else:
        pieces = []
        for i, node in enumerate(lattice):
            sizes, mass = node_share_mass(freq, hierarchies, node)
            s, which, c = np.unique(sizes, return_inverse=True, return_counts=True)
            per_size = np.zeros((len(s), len(hierarchies)))
            np.add.at(per_size, which.reshape(-1), mass)
            pieces.append((np.array([i]), np.array([0, len(s)]), s.astype(np.int64), c.astype(np.int64), per_size))
    profile = assemble_profile(lattice, freq.n_rows, pieces, f"{strategy} with quality")
    mass = np.empty((len(profile.sizes), len(hierarchies)))
    for ids, seg, _, _, piece_mass in pieces:
        dest = np.repeat(profile.offsets[ids] - seg[:-1], np.diff(seg)) + np.arange(seg[-1])
        mass[dest] = piece_mass
    return dataclasses.replace(profile, quality=Quality(mass, domain), _stats_cache={})


def optimum(answer, name: str) -> tuple[int, int]:
    """ARX's optimum for quality model ``name``: the best of every satisfying node of ``answer`` (a
    :class:`~microrelease.core.lattice.search.Answer`), and the best k-minimal node (they differ when the
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
    module docstring: what a release's report gives."""
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
        if profile is not None and profile.models and name == "loss":
            raise InvalidParameterError(f"the policy {name!r} does not yet take privacy models beyond k-anonymity "
                                        "(l-diversity, t-closeness): their failing classes carry no share mass",
                                        parameter="policy")
        if profile is None or getattr(profile, "quality", None) is None and QUALITY_MODELS[name].needs_mass:
            raise InvalidParameterError(f"the policy {name!r} needs a lattice profile built with quality=True",
                                        parameter="policy")
        return QUALITY_MODELS[name].score(profile, stats.k)[candidates]
    return score
