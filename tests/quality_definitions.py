"""ARX's quality models written row by row from their definitions (issue 17), with no code of
microrelease's quality modules: the oracle of tests/core/lattice/test_quality.py and the k-map tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from microrelease.core.lattice.hierarchies import Hierarchy


def random_table(rng, n):
    """Three QIs with small hierarchies of different heights (one of height 0)."""
    ages = [str(a) for a in range(20, 28)]
    h_age = Hierarchy("age", tuple((a, f"{int(a) // 2 * 2}-{int(a) // 2 * 2 + 1}", f"{int(a) // 4 * 4}+", "*")
                                   for a in ages))
    h_sex = Hierarchy("sex", (("F", "*"), ("M", "*"), ("X", "*")))  # X never occurs: |D| counts it
    h_zip = Hierarchy("zip", (("z1",), ("z2",)))
    table = pd.DataFrame({"age": rng.choice(ages[:6], n), "sex": rng.choice(["F", "M"], n, p=[0.7, 0.3]),
                          "zip": rng.choice(["z1", "z2"], n, p=[0.9, 0.1])})
    return table, (h_age, h_sex, h_zip)


def brute_force(table, hierarchies, node, k, fails=None):
    """Every model at ``node``, row by row from its definition (issue 17): classes < k suppressed, and the
    rows ``fails(generalized table)`` marks (their class fails a privacy model). ``table``: the QIs only."""
    gen = pd.DataFrame({h.attribute: h.generalize(table[h.attribute], d) for h, d in zip(hierarchies, node, strict=True)})
    size = gen.groupby(list(gen.columns))[gen.columns[0]].transform("size").to_numpy()
    suppressed = size < k
    if fails is not None:
        suppressed |= fails(gen)
    n, m, s = len(table), len(hierarchies), int(suppressed.sum())
    losses, precisions = [], []
    for h, d in zip(hierarchies, node, strict=True):
        under = {label: sum(1 for g in h.ground if h.generalize([g], d)[0] == label) for label in set(gen[h.attribute])}
        share = np.where(suppressed, 1.0, gen[h.attribute].map(under).to_numpy() / len(h.ground))
        floor = n / len(h.ground)
        losses.append((share.sum() - floor) / (n - floor))
        precisions.append(np.where(suppressed, 1.0, d / h.height if h.height else 0.0).mean())
    sizes = gen.groupby(list(gen.columns)).size().to_numpy()
    released = gen[~suppressed].groupby(list(gen.columns)).size().to_numpy()
    return {"loss": float(np.prod(1 + np.array(losses)) ** (1 / m) - 1), "precision": float(np.mean(precisions)),
            "height": float(sum(node)), "discernibility": float((released ** 2).sum() + s * n),
            "dm-star": float((sizes ** 2).sum()), "aecs": n / (len(released) + (1 if s else 0)),
            "nu-entropy": nu_entropy(table, gen, suppressed), "kl-divergence": kl(table, gen, size, suppressed, hierarchies)}


def nu_entropy(table, gen, suppressed):
    """Row by row: each row's −log2 P(its value | its released value), the released value being the
    generalized one for a kept row (over all rows), then, for a suppressed row, also −log2 of the share of
    suppressed rows sharing its generalized value (ARX's non-monotonic non-uniform entropy); summed."""
    total = 0.0
    for q in table.columns:
        for r in range(len(table)):
            same_gen = gen[q] == gen[q].iloc[r]
            total -= np.log2((table[q][same_gen] == table[q].iloc[r]).sum() / same_gen.sum())
            if suppressed[r]:
                total -= np.log2((gen[q][suppressed] == gen[q].iloc[r]).sum() / suppressed.sum())
    return total


def kl(table, gen, size, suppressed, hierarchies):
    """Σ over rows of p log2(p / q): p = the share of rows equal to the row, q = its class's share spread
    over the ground tuples the class covers (suppressed rows: all suppressed rows over the whole domain)."""
    n = len(table)
    p = table.groupby(list(table.columns))[table.columns[0]].transform("size").to_numpy() / n
    area = np.ones(n)
    for h in hierarchies:
        covered = {label: sum(1 for g in h.ground if h.generalize([g], d)[0] == label)
                   for d in range(h.height + 1) for label in h.labels[d]}
        area *= np.where(suppressed, len(h.ground), gen[h.attribute].map(covered).to_numpy())
    q = np.where(suppressed, suppressed.sum(), size) / n / area
    return float((p * np.log2(p / q)).sum())


def entropy_and_kl(hierarchies, node, freq, sizes, class_levels, suppressed) -> dict:
    """Non-uniform entropy and KL divergence of one node's release, from its classes (sizes, level codes,
    which are suppressed) and the frequency set they were grouped from, by ARX's definitions."""
    n = float(freq.counts.sum())
    removed = float(sizes[suppressed].sum())
    pairs = list(enumerate(zip(hierarchies, node, strict=True)))
    generalized = np.column_stack([h.codes[d][freq.codes[:, i]] for i, (h, d) in pairs])
    index = {tuple(row): c for c, row in enumerate(class_levels.tolist())}
    tuple_class = np.array([index[tuple(row)] for row in generalized.tolist()])
    entropy, area, max_area = 0.0, np.ones(len(tuple_class)), 1.0
    for i, (h, d) in pairs:
        a = np.bincount(freq.codes[:, i], weights=freq.counts, minlength=len(h.ground))
        b = np.bincount(h.codes[d], weights=a)[h.codes[d]]  # rows holding each ground value's generalization
        held = a > 0
        entropy -= (a[held] * np.log2(a[held] / b[held])).sum()
        if removed:
            u = np.bincount(class_levels[suppressed, i], weights=sizes[suppressed])
            u = u[u > 0]
            entropy -= (u * np.log2(u / removed)).sum()
        area *= np.bincount(h.codes[d])[class_levels[tuple_class, i]]  # ground values under the class's value
        max_area *= len(h.ground)
    c = freq.counts.astype(float)
    q = np.where(suppressed[tuple_class], removed / n / max_area, sizes[tuple_class] / n / area)
    return {"nu-entropy": float(entropy), "kl-divergence": float((c * (c / n) * np.log2((c / n) / q)).sum())}
