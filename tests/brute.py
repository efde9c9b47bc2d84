"""Brute-force oracles, written without any of microrelease.core's machinery.

Hierarchies are plain lists of rows (ground value first); every node is evaluated by generalizing
each row with dictionaries and counting with collections.Counter; minimality is checked against
*every* vector strictly below, not just direct predecessors.
"""

from __future__ import annotations

import itertools
from collections import Counter


def level_maps(rows: list[tuple[str, ...]]) -> list[dict[str, str]]:
    return [{r[0]: r[j] for r in rows} for j in range(len(rows[0]))]


def all_nodes(heights: list[int]) -> list[tuple[int, ...]]:
    return list(itertools.product(*(range(h + 1) for h in heights)))


def class_counter(table: list[tuple[str, ...]], maps: list[list[dict[str, str]]], node) -> Counter:
    return Counter(tuple(maps[i][d][row[i]] for i, d in enumerate(node)) for row in table)


def suppressed(counter: Counter, k: int) -> int:
    return sum(c for c in counter.values() if c < k)


def below(u, v) -> bool:
    """u strictly below v in the lattice order."""
    return u != v and all(a <= b for a, b in zip(u, v, strict=True))


def k_minimal(nodes, sat: dict) -> set:
    good = [v for v in nodes if sat[v]]
    return {v for v in good if not any(below(u, v) for u in good)}


def min_satisfying_height(nodes, sat: dict) -> int:
    return min(sum(v) for v in nodes if sat[v])


def mdav_reference(z, k: int) -> list[list[int]]:
    """MDAV written plainly (lists of row numbers, distances recomputed from scratch), with the
    documented tie rule: the first row in input order wins. Returns the groups as sorted row lists."""
    remaining = list(range(len(z)))
    groups = []

    def dist(i, point):
        return sum((a - b) ** 2 for a, b in zip(z[i], point, strict=True))

    def farthest(point):
        best = max(dist(i, point) for i in remaining)
        return min(i for i in remaining if dist(i, point) == best)

    def nearest_group(row):
        point = list(z[row])
        chosen = sorted(remaining, key=lambda i: (dist(i, point), i))[:k]
        for i in chosen:
            remaining.remove(i)
        groups.append(sorted(chosen))

    def centroid():
        return [sum(z[i][j] for i in remaining) / len(remaining) for j in range(len(z[0]))]

    while len(remaining) >= 3 * k:
        r = farthest(centroid())
        s = farthest(list(z[r]))
        nearest_group(r)
        nearest_group(s)
    if len(remaining) >= 2 * k:
        nearest_group(farthest(centroid()))
    if remaining:
        groups.append(sorted(remaining))
    return groups
