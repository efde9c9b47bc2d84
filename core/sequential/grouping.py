"""Grouping entities by the cost F and the loss of the release (the patent's "rank by similarity, take
the first >= k").

- ``greedy`` (default, MDAV-like): seeds are taken farthest-first, the farthest from the data's centre
  (its mean F to a fixed spread of 64 entities; ties: input order) among the entities not yet grouped.
  A seed starts a group, which then grows one member at a time, k − 1 times: each time the candidate
  that adds the least *loss* joins (ties: input order). The loss (``group_loss``) is what the
  release will lose: the QIs' NCP at the group's common level, plus the codes the group's consensus
  cannot keep (suppressed for every member) and the generalization of those it keeps; the consensus is
  the group alignment the release makes (``cost_kernels``), so a candidate is judged by how much
  it would shrink it, not by F to the seed alone. The candidates are the ``candidates`` remaining
  entities nearest to the seed in a *sketch* of both parts (see ``sketch``), found with a k-d tree
  that forgets grouped entities; ``candidates=None`` compares every remaining entity. The last < k
  entities each join the group (among those of its sketch-nearest entities) whose loss grows least.
  Then ``refinement`` swaps members of neighbouring groups while the loss falls (``passes``).
  Data of at least 2 · ``BLOCK`` entities is first cut into blocks of at least ``BLOCK`` (the k-d
  tree's median cuts of the sketch), grouped independently and at the same time on up to
  ``model.workers`` threads; the blocks depend on the data alone, so the groups do not depend on the
  threads.
- ``ranking`` (the claim read literally): one seed (the farthest from the centre), every entity
  ranked by F to it, the ranking cut into consecutive groups of k, the short tail joined to the last.

Both give groups of at least k entities (if there are at least k entities).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import microrelease.core.sequential.grouping_kernels as kernels
import microrelease.core.sequential.refinement as refinement
from microrelease.core.exceptions import Cancelled, InvalidParameterError
from microrelease.core.micro.microaggregation import consecutive_groups
from microrelease.core.sequential.cost import CostModel
from microrelease.core.sequential.group_loss import LossModel
from microrelease.core.validation import validate_k

GROUPING_METHODS = ("greedy", "ranking")
SKETCH_BINS = 8  # the code histogram is taken at the lowest level of at most this many nodes
QI_SCALE = 8.0  # see sketch()
STEPS = 100  # progress reports (and cancellation checks) per phase
BLOCK = 40_000  # data of at least twice this many entities is grouped in blocks (see the docstring)

Progress = Callable[[float], None]
ShouldStop = Callable[[], bool]


def _stop_if_asked(should_stop: ShouldStop | None) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled("grouping cancelled")


def centrality(model: CostModel, sample: int = 64, *, progress: Progress | None = None,
               should_stop: ShouldStop | None = None) -> np.ndarray:
    """Mean F from every entity to a fixed, evenly spread set of entities (large = far from the centre)."""
    n = model.data.n_entities
    anchors = np.unique(np.linspace(0, n - 1, min(sample, n)).astype(np.int64))
    total = np.zeros(n)
    for i in range(0, len(anchors), 8):  # 8 anchors a step, between progress reports
        _stop_if_asked(should_stop)
        model.add_costs(anchors[i:i + 8], total)
        if progress is not None:
            progress(min(i + 8, len(anchors)) / len(anchors))
    return total / len(anchors)


def sketch(model: CostModel) -> np.ndarray:
    """A point per entity whose L1 distances roughly follow F (entities x features):

    - per QI, ``QI_SCALE`` · w_R/m · the value's position in ``Hierarchy.tree_order`` / (n − 1) (the position
      difference is a lower bound of the NCP, which between near values is several times larger: ages
      30 and 31 share a 5-year band, NCP 4/72 for a step of 1/72);
    - w_S/2 · the share of the entity's codes under each node of the lowest code level with at most
      ``SKETCH_BINS`` nodes (half the L1 distance of two shares is the share of codes that cannot be
      matched inside one such node);
    - w_S · 0.3 · log2(1 + number of codes) (unmatched lengths are suppressed).

    The scale 8 and the bins were chosen on generated hospital data (k = 2, 5, 10; w_R from 0.2 to 0.8)."""
    d, w = model.data, model.weights
    n, m = d.n_entities, d.cost_qi_codes.shape[1]
    share = d.cost_qi_weights / d.cost_qi_weights.sum() * m if m else d.cost_qi_weights
    cols = [QI_SCALE * w.relational / m * share[q] * h.tree_order()[d.cost_qi_codes[:, q]] / max(len(h.ground) - 1, 1)
            for q, h in enumerate(d.cost_hierarchies)]
    h = d.code_hierarchy
    level = next(lv for lv in range(h.height + 1) if h.level_size(lv) <= SKETCH_BINS or lv == h.height)
    bins = h.level_size(level)
    per_entity = np.diff(d.code_ptr[d.visit_ptr])
    owner = np.repeat(np.arange(n), per_entity)
    counts = np.bincount(owner * bins + h.codes[level][d.codes], minlength=n * bins).reshape(n, bins)
    share = counts / np.maximum(per_entity, 1)[:, None]
    points = np.column_stack([*cols, w.sequence / 2 * share, w.sequence * 0.3 * np.log2(1 + per_entity)])
    return np.ascontiguousarray(points, dtype=np.float64)


def group_entities(model: CostModel, k: int, *, method: str = "greedy", candidates: int | None = 128,
                   passes: int = refinement.PASSES, progress: Progress | None = None,
                   should_stop: ShouldStop | None = None) -> np.ndarray:
    """The group number of every entity (see the module docstring).

    Parameters
    ----------
    model : CostModel
        The cost F of grouping entities.
    k : int
        The least group size.
    method : str, default "greedy"
        A key of ``GROUPING_METHODS``.
    candidates : int or None, default 128
        For ``greedy``, how many remaining entities nearest the seed in the sketch are candidates
        (at least k − 1 are); None: every remaining entity.
    passes : int, default 1
        For ``greedy``, the refinement passes (``refinement``)
        over the greedy's groups; 0: none.
    progress : callable, optional
        Called with the fraction done (0..1): the centrality, the greedy and the refinement take
        a third each.
    should_stop : callable, optional
        Polled between steps; when it returns True, ``Cancelled`` is raised.

    Returns
    -------
    numpy.ndarray
        The group number of every entity.
    """
    if method not in GROUPING_METHODS:
        raise InvalidParameterError(f"The 'method' parameter must be one of {GROUPING_METHODS}. Got {method!r}.",
                                    parameter="method")
    if candidates is not None and (isinstance(candidates, bool) or not isinstance(candidates, (int, np.integer))
                                   or candidates < 1):
        raise InvalidParameterError(f"The 'candidates' parameter must be an int >= 1 or None. Got {candidates!r}.",
                                    parameter="candidates")
    n = model.data.n_entities
    k = validate_k(k, n)
    if isinstance(passes, bool) or not isinstance(passes, (int, np.integer)) or passes < 0:
        raise InvalidParameterError(f"The 'passes' parameter must be an int >= 0. Got {passes!r}.", parameter="passes")

    def part(i):
        return None if progress is None else (lambda f: progress((i + f) / 3))

    far = centrality(model, progress=part(0), should_stop=should_stop)
    if method == "ranking":
        seed = int(np.argmax(far))
        cost = model.costs_from(seed, np.arange(n))
        groups = consecutive_groups(np.lexsort((np.arange(n), cost)), k)
    else:
        want = n if candidates is None else max(int(candidates), k - 1)
        loss, points = LossModel(model), sketch(model)
        parts = blocks(points, k)
        groups = _greedy(loss, k, far, points, parts, max(1, want), part(1), should_stop)
        groups = refinement.refine_groups(loss, groups, points, parts, passes=int(passes), progress=part(2),
                                          should_stop=should_stop)
    if progress is not None:
        progress(1.0)
    return groups


def _order(far: np.ndarray) -> np.ndarray:
    """Seeds farthest first; ties in input order."""
    return np.lexsort((np.arange(len(far)), -far))


def blocks(points: np.ndarray, k: int) -> list[np.ndarray]:
    """The entities (ascending) of each block: the nodes of the sketch's k-d tree at the depth where
    each still holds at least max(``BLOCK``, k) entities."""
    n, count = len(points), 1
    while n // (2 * count) >= max(BLOCK, k):
        count *= 2
    if count == 1:
        return [np.arange(n)]
    perm, start, end, left, right, *_ = kernels.build_tree(points)
    nodes = [0]
    while len(nodes) < count:
        nodes = [c for v in nodes for c in ((left[v], right[v]) if left[v] >= 0 else (v,))]
    return [np.sort(perm[start[v]:end[v]]) for v in nodes]


class _Block:
    """A block's greedy: its entities ``ids``, numbered 0.. within it (see grouping_kernels.seed_groups)."""

    def __init__(self, ids: np.ndarray, points: np.ndarray, rank: np.ndarray):
        self.ids, self.points = ids, np.ascontiguousarray(points[ids])
        self.tree = kernels.build_tree(self.points)
        self.order = np.argsort(rank[ids], kind="stable")  # the seeds' order, in the block's numbers
        n = len(ids)
        self.alive, self.group = np.ones(n, dtype=np.bool_), np.full(n, -1, dtype=np.int64)
        self.pos, self.g, self.n_alive = 0, 0, n

    def done(self, k: int) -> bool:
        return self.pos >= len(self.ids) or self.n_alive < k

    def advance(self, count: int, k: int, want: int, arrays: tuple) -> None:
        self.pos, self.g, self.n_alive = kernels.seed_groups(
            self.ids, self.order, self.pos, min(self.pos + count, len(self.ids)), self.alive, self.n_alive, k,
            min(want, len(self.ids)), self.points, self.tree, self.group, self.g, *arrays)


def _greedy(loss: LossModel, k, far, points, parts, want, progress, should_stop) -> np.ndarray:
    n = loss.model.data.n_entities
    rank = np.empty(n, dtype=np.int64)
    rank[_order(far)] = np.arange(n)
    work = [_Block(ids, points, rank) for ids in parts]
    arrays = loss.arrays()
    while not all(b.done(k) for b in work):
        _stop_if_asked(should_stop)
        steps = [lambda b=b: b.advance(max(1, len(b.ids) // STEPS), k, want, arrays) for b in work if not b.done(k)]
        refinement.in_blocks(steps, loss.model.workers)
        if progress is not None:
            progress(1 - sum(b.n_alive for b in work) / n)
    group, offset = np.empty(n, dtype=np.int64), 0
    for b in work:
        local = _join_leftovers(loss, b.group, b.points, b.ids, want)
        group[b.ids] = local + offset
        offset += int(local.max()) + 1
    return group


def _join_leftovers(loss: LossModel, group: np.ndarray, points: np.ndarray, ids: np.ndarray, want: int) -> np.ndarray:
    """Fewer than k left: each joins, among the groups of its ``want`` sketch-nearest grouped entities,
    the one whose loss grows least (ties: the lower group number)."""
    left = np.flatnonzero(group < 0)
    placed = np.flatnonzero(group >= 0)
    for e in left:
        dist = np.abs(points[placed] - points[e]).sum(axis=1)
        near = placed[np.lexsort((placed, dist))[:want]]
        best = None
        for g in np.unique(group[near]):
            members = ids[np.flatnonzero(group == g)]
            grown = loss.loss(np.append(members, ids[e]))[0] - loss.loss(members)[0]
            if best is None or grown < best[0]:
                best = (grown, g)
        assert best is not None  # near is not empty: some group is nearest
        group[e] = best[1]
    return group
