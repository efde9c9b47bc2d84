"""Partitions of the records whose classes keep every bin of the confidential attribute within a
factor t = exp(ε/2) of the table's share (*ratio closeness*, see ``.ratio_closeness``).

Everything here works on arrays: ``z`` the standardized QIs (n × m), ``value_bin`` the bin of every
record (0..V−1), a partition as the class number of every record (0..C−1).

- ``largest_partition_plan`` fixes the *number of classes* C and every class's *bin counts*
  (its composition) before any record is placed: the largest C whose balanced compositions all meet
  the bound and k. The compositions add up to the table's bin counts exactly, so no remainder is left
  for a last class to absorb.
- ``greedy_partition``: the thesis's "selecting the individuals that must belong to each of the
  groups", MDAV-like: the record farthest from the centroid of those left, its class made of the
  nearest records left *in each bin* up to the composition's count; then the record farthest from it.
- ``strata_partition``: the stratified baseline: class c takes the c-th slice of every bin
  along the first principal axis.
- ``refine``: local search that lowers the QI SSE while every class keeps meeting the bound:
  swapping two records of one bin between classes (counts unchanged), and moving a record to another
  class when both classes' new counts still meet the bound and k. A pass costs O(n · n_v · m) (every
  record against every record of its bin); a whole release took 1-2 s on CASC Census (1,080 records)
  and 8 s on CASC EIA (4,092).
"""

from __future__ import annotations

import numpy as np

TOLERANCE = 1e-12  # on |ln ratio|, as epsilon_achieved is computed
IMPROVEMENT = 1e-10  # smallest SSE decrease taken (standardized units), so that refine ends
MAX_PASSES = 50


def log_ratio_excess(counts: np.ndarray, p: np.ndarray) -> np.ndarray:
    """max over bins present in the table (p > 0) of |ln(p_C(v)/p(v))|, per row of ``counts``
    (C × V); infinite for a class missing a present bin."""
    counts = np.atleast_2d(counts)
    present = p > 0
    # a bin missing from a class: inf; an empty class or a negative count (a trial move): nan, which fails
    with np.errstate(divide="ignore", invalid="ignore"):
        share = counts[:, present] / counts.sum(axis=1, keepdims=True)
        return np.abs(np.log(share / p[present])).max(axis=1, initial=0.0)


def within_bound(counts: np.ndarray, p: np.ndarray, half_epsilon: float, k: int) -> np.ndarray:
    """Per row of ``counts``: at least k records and every present bin within exp(±ε/2)."""
    counts = np.atleast_2d(counts)
    return (counts.sum(axis=1) >= k) & (log_ratio_excess(counts, p) <= half_epsilon + TOLERANCE)


def class_ceiling(bin_counts: np.ndarray, half_epsilon: float, k: int) -> int:
    """An upper bound on the number of classes of any partition meeting the bound and k.

    Every class holds at least one record of every bin present (a ratio of 0 is unbounded), so at most
    min_v N_v classes; and a class holding one record of bin v has at least 1/(p_v·t) records.
    """
    n = int(bin_counts.sum())
    present = bin_counts[bin_counts > 0]
    p = present / n
    smallest = max(k, len(present), int(np.ceil(np.max(1 / (p * np.exp(half_epsilon))) - 1e-9)))
    return int(min(present.min(), n // smallest))


def _count_range(target: np.ndarray, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """The least and most whole q with |ln(q/target)| ≤ θ, by the same test as ``within_bound``
    (the products with exp(±θ) alone can round across a whole number)."""
    def fits(q):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.abs(np.log(q / target)) <= theta + TOLERANCE

    low = np.ceil(target * np.exp(-theta))
    low = np.where(fits(low - 1), low - 1, np.where(fits(low), low, low + 1))
    high = np.floor(target * np.exp(theta))
    high = np.where(fits(high + 1), high + 1, np.where(fits(high), high, high - 1))
    return low.astype(np.int64), high.astype(np.int64)


def compositions(sizes: np.ndarray, bin_counts: np.ndarray, theta: float) -> np.ndarray | None:
    """Bin counts q (C × V) with row sums ``sizes`` and column sums ``bin_counts`` and every present
    bin's |ln(q_cv/(s_c·p_v))| ≤ θ, or None when there are none.

    Classes of one size s have the same bounds [lo_v, hi_v] on q_v, so they are solved together: the
    records of each size group per bin are a flow (source → size group → bin → sink, beyond the least
    counts; max flow, integral), then a group's total T_v is split over its m classes as ⌊T_v/m⌋ or
    ⌈T_v/m⌉ (within [lo_v, hi_v], as T_v/m is), the extra records dealt round-robin, bin after bin, so
    that no class gets two extras of one bin and every class gets the same number (its size s).
    """
    p = bin_counts / bin_counts.sum()
    present = bin_counts > 0
    group_sizes, group_of, members = np.unique(sizes, return_inverse=True, return_counts=True)
    target = group_sizes[:, None] * p
    low, high = _count_range(target, theta)
    low, high = np.where(present, np.maximum(low, 1), 0), np.where(present, high, 0)
    group_need = members * (group_sizes - low.sum(axis=1))
    bin_need = bin_counts - (members[:, None] * low).sum(axis=0)
    if ((low > high).any() or (group_need < 0).any() or (bin_need < 0).any()
            or (high.sum(axis=1) < group_sizes).any() or ((members[:, None] * high).sum(axis=0) < bin_counts).any()):
        return None
    import networkx as nx  # here: its import is a third of a second of every command's start

    graph = nx.DiGraph()
    graph.add_nodes_from(["source", "sink"])
    for g in range(len(group_sizes)):
        graph.add_edge("source", ("size", g), capacity=int(group_need[g]))
        for v in np.flatnonzero(high[g] > low[g]).tolist():
            graph.add_edge(("size", g), ("bin", v), capacity=int(members[g] * (high[g, v] - low[g, v])))
    for v in range(len(bin_counts)):
        graph.add_edge(("bin", v), "sink", capacity=int(bin_need[v]))
    value, flow = nx.maximum_flow(graph, "source", "sink")
    if value < group_need.sum():
        return None
    plan = np.zeros((len(sizes), len(bin_counts)), dtype=np.int64)
    for g in range(len(group_sizes)):
        total = members[g] * low[g] + [flow[("size", g)].get(("bin", v), 0) for v in range(len(bin_counts))]
        rows = np.flatnonzero(group_of == g)
        plan[rows] = total // members[g]
        extras = np.repeat(np.arange(len(bin_counts)), total % members[g])
        np.add.at(plan, (rows[np.arange(len(extras)) % members[g]], extras), 1)
    return plan if (log_ratio_excess(plan, p) <= theta + TOLERANCE).all() else None


def largest_partition_plan(bin_counts: np.ndarray, half_epsilon: float, k: int) -> np.ndarray:
    """Bin counts (C × V) for the largest number of classes C (from ``class_ceiling`` down) of
    sizes n/C (± 1, at least k) that can meet the bound; among those counts, the ones with the
    smallest largest |ln ratio| (bisection). One class (the table, ratio 1) when no C ≥ 2 can."""
    n = int(bin_counts.sum())
    for n_classes in range(class_ceiling(bin_counts, half_epsilon, k), 1, -1):
        sizes = np.full(n_classes, n // n_classes, dtype=np.int64)
        sizes[: n % n_classes] += 1
        plan = compositions(sizes, bin_counts, half_epsilon)
        if plan is None:
            continue
        low, high = 0.0, half_epsilon
        for _ in range(16):  # θ to within ε/2¹⁷
            middle = (low + high) / 2
            tighter = compositions(sizes, bin_counts, middle)
            if tighter is None:
                low = middle
            else:
                plan, high = tighter, middle
        return plan
    return bin_counts[None, :].astype(np.int64)


def _take_class(z, value_bin, free, seed, plan, used) -> tuple[np.ndarray, int]:
    """The records of the class grown from ``seed``: for the unused composition that gives the
    smallest SSE, the nearest free records in every bin (the seed first in its own)."""
    distance = ((z - z[seed]) ** 2).sum(axis=1)
    distance[seed] = -1.0
    nearest = {}
    for v in np.unique(value_bin[free]):
        members = np.flatnonzero(free & (value_bin == v))
        nearest[v] = members[np.argsort(distance[members], kind="stable")]
    best, best_sse, best_row = None, np.inf, -1
    seen = set()
    for row in np.flatnonzero(~used):
        key = tuple(plan[row])
        if key in seen:
            continue
        seen.add(key)
        chosen = np.concatenate([nearest[v][:q] for v, q in enumerate(key) if q > 0])
        sse = ((z[chosen] - z[chosen].mean(axis=0)) ** 2).sum()
        if sse < best_sse:
            best, best_sse, best_row = chosen, sse, int(row)
    assert best is not None, "no unused composition left in the plan"
    return best, best_row


def greedy_partition(z: np.ndarray, value_bin: np.ndarray, plan: np.ndarray) -> np.ndarray:
    """MDAV-like partition with the bin counts of ``plan`` (see the module docstring)."""
    n = len(z)
    classes = np.full(n, -1, dtype=np.int64)
    free = np.ones(n, dtype=bool)
    used = np.zeros(len(plan), dtype=bool)
    label = 0
    while label < len(plan) - 1:
        left = np.flatnonzero(free)
        centre = z[left].mean(axis=0)
        seed = int(left[np.argmax(((z[left] - centre) ** 2).sum(axis=1))])
        for _ in range(2):  # the farthest from the centroid, then the farthest from it
            if label == len(plan) - 1:
                break
            members, row = _take_class(z, value_bin, free, seed, plan, used)
            classes[members], free[members], used[row] = label, False, True
            label += 1
            left = np.flatnonzero(free)
            seed = int(left[np.argmax(((z[left] - z[seed]) ** 2).sum(axis=1))])
    classes[free] = label  # exactly the last composition's counts: the plan adds up to the table's
    return classes


def first_principal_axis(z: np.ndarray) -> np.ndarray:
    """Scores on the first principal axis of ``z`` (sign fixed: largest loading positive)."""
    centred = z - z.mean(axis=0)
    axis = np.linalg.svd(centred, full_matrices=False)[2][0]
    return centred @ (axis * np.sign(axis[np.argmax(np.abs(axis))]))


def strata_partition(z: np.ndarray, value_bin: np.ndarray, plan: np.ndarray) -> np.ndarray:
    """The stratified baseline: within every bin, records in order along the first principal axis;
    class c takes the next plan[c, v] of bin v."""
    score = first_principal_axis(z)
    classes = np.empty(len(z), dtype=np.int64)
    for v in range(plan.shape[1]):
        members = np.flatnonzero(value_bin == v)
        members = members[np.argsort(score[members], kind="stable")]
        classes[members] = np.repeat(np.arange(len(plan)), plan[:, v])
    return classes


def refine(z: np.ndarray, value_bin: np.ndarray, classes: np.ndarray, p: np.ndarray, half_epsilon: float, k: int,
           *, max_passes: int = MAX_PASSES) -> np.ndarray:
    """Lower the QI SSE by swaps and moves that keep every class within the bound and k (module
    docstring). Each step taken lowers the SSE, so the search ends; at most ``max_passes`` passes."""
    classes = classes.copy()
    n_classes, n_bins = int(classes.max()) + 1, len(p)
    size = np.bincount(classes, minlength=n_classes).astype(float)
    total = np.zeros((n_classes, z.shape[1]))
    np.add.at(total, classes, z)
    counts = np.zeros((n_classes, n_bins), dtype=np.int64)
    np.add.at(counts, (classes, value_bin), 1)
    unit = np.eye(n_bins, dtype=np.int64)

    def feasibility(c: np.ndarray):
        # per class and bin: may it lose / gain one record of that bin?
        lose = np.stack([within_bound(counts[c] - unit[v], p, half_epsilon, k) for v in range(n_bins)], axis=1)
        gain = np.stack([within_bound(counts[c] + unit[v], p, half_epsilon, k) for v in range(n_bins)], axis=1)
        return lose, gain

    can_lose, can_gain = feasibility(np.arange(n_classes))
    by_bin = [np.flatnonzero(value_bin == v) for v in range(n_bins)]
    mean = total / size[:, None]
    for _ in range(max_passes):
        steps = 0
        for i in range(len(z)):
            a, v = classes[i], value_bin[i]
            # swap with j of the same bin in class b: ΔSSE = −2 d·(μ_a − μ_b) − |d|²(1/s_a + 1/s_b), d = z_j − z_i
            others = by_bin[v]
            b = classes[others]
            d = z[others] - z[i]
            swap = -2 * ((mean[a] - mean[b]) * d).sum(axis=1) - (d * d).sum(axis=1) * (1 / size[a] + 1 / size[b])
            swap[b == a] = np.inf
            j = int(np.argmin(swap))
            # move i to class b: ΔSSE = −s_a/(s_a − 1)|z_i − μ_a|² + s_b/(s_b + 1)|z_i − μ_b|²
            move = np.full(n_classes, np.inf)
            if can_lose[a, v]:
                far = ((z[i] - mean) ** 2).sum(axis=1)
                move = np.where(can_gain[:, v], size / (size + 1) * far, np.inf)
                move -= size[a] / (size[a] - 1) * far[a]
                move[a] = np.inf
            target = int(np.argmin(move))
            if min(swap[j], move[target]) >= -IMPROVEMENT:
                continue
            steps += 1
            if swap[j] <= move[target]:
                j, b = int(others[j]), int(classes[others[j]])
                total[a] += z[j] - z[i]
                total[b] += z[i] - z[j]
                mean[[a, b]] = total[[a, b]] / size[[a, b], None]
                classes[i], classes[j] = b, a
                continue
            b = target
            total[a] -= z[i]
            total[b] += z[i]
            size[a] -= 1
            size[b] += 1
            counts[a, v] -= 1
            counts[b, v] += 1
            mean[[a, b]] = total[[a, b]] / size[[a, b], None]
            classes[i] = b
            can_lose[[a, b]], can_gain[[a, b]] = feasibility(np.array([a, b]))
        if steps == 0:
            break
    return classes
