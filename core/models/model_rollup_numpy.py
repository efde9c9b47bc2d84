"""The model profile's roll-up in plain numpy: the same depth-first walk as
``microrelease.core.models.model_rollup_kernels``, each node's classes regrouped by sorting and the
models evaluated with their numpy checks.

Kept as the oracle of the compiled kernel (tests/core/models/test_privacy_models.py,
``test_compiled_and_numpy_model_profiles_agree``; tests/core/models/test_model_registry.py,
``test_registered_model_runs_compiled_as_its_numpy_check``), and for QIs whose codes do not pack
into one 62-bit key (where the kernel cannot run).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from microrelease.core.exceptions import Cancelled


def merge_classes(codes: np.ndarray, counts: np.ndarray, radices: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Merge the rows of ``codes`` that are equal (one sort), summing their ``counts`` rows."""
    if float(np.prod(radices, dtype=float)) < 2**62:
        key = np.zeros(len(codes), dtype=np.int64)
        for i, r in enumerate(radices):
            key = key * r + codes[:, i]
        order = np.argsort(key, kind="stable")
        ordered = key[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    else:
        _, first, inverse = np.unique(codes, axis=0, return_index=True, return_inverse=True)
        order = np.argsort(inverse.reshape(-1), kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(inverse.reshape(-1)[order]) != 0])
    if len(order) == 0:
        return codes, counts
    return codes[order[starts]], np.add.reduceat(counts[order], starts, axis=0)


def model_profile(lattice, hierarchies, root_codes: np.ndarray, root_counts: np.ndarray, table: np.ndarray,
                  models: Sequence, progress=None, should_stop=None, k_map: int = 0) -> list[tuple]:
    """One piece per node (as the compiled kernel's): (node number, segment offsets, passing class
    sizes, counts, rows failing any model, rows failing each model, the failing classes' Σ size²).

    ``k_map`` > 0: ``root_counts``' last column is each class's population records (El Emam & Dankar's
    k-map beside the models), the others the sensitive values; a class with fewer than ``k_map``
    population records fails too (counted in a last row of the rows failing each check), and a class of
    the population alone (no sample row) is no class of the data's."""
    heights = lattice.heights
    q = len(heights)
    pieces = []
    n_values = root_counts.shape[1] - (1 if k_map > 0 else 0)

    def evaluate(vec: list[int], counts: np.ndarray) -> None:
        if k_map > 0:
            population = counts[:, n_values]
            counts = counts[:, :n_values]
            held = counts.sum(axis=1) > 0
            counts, population = counts[held], population[held]
        sizes = counts.sum(axis=1).round().astype(np.int64)
        ok = np.ones(len(sizes), dtype=bool)
        by_model = np.zeros((len(models) + (1 if k_map > 0 else 0), 1), dtype=np.int64)
        for j, m in enumerate(models):
            satisfying = m.satisfies_counts(counts, table)
            by_model[j, 0] = sizes[~satisfying].sum()
            ok &= satisfying
        if k_map > 0:
            satisfying = population >= k_map
            by_model[-1, 0] = sizes[~satisfying].sum()
            ok &= satisfying
        s, c = np.unique(sizes[ok], return_counts=True)
        pieces.append((np.array([lattice.index(tuple(vec))]), np.array([0, len(s)]), s.astype(np.int64),
                       c.astype(np.int64), np.array([sizes[~ok].sum()], dtype=np.int64), by_model,
                       np.array([(sizes[~ok] ** 2).sum()], dtype=np.int64)))
        done = len(pieces)
        if should_stop is not None and done % 64 == 0 and should_stop():
            raise Cancelled("profile computation cancelled")
        if progress is not None and (done % 64 == 0 or done == lattice.size):
            progress(done / lattice.size)

    def visit(vec: list[int], codes: np.ndarray, counts: np.ndarray, first_qi: int) -> None:
        evaluate(vec, counts)
        for j in range(first_qi, q):
            if vec[j] < heights[j]:
                child = codes.copy()
                child[:, j] = hierarchies[j].parents[vec[j]][codes[:, j]]
                vec[j] += 1
                radices = [h.level_size(d) for h, d in zip(hierarchies, vec, strict=True)]
                visit(vec, *merge_classes(child, counts, radices), j)
                vec[j] -= 1

    visit([0] * q, root_codes, root_counts, 0)
    return pieces
