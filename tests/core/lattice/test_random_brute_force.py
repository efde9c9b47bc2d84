"""The lattice's answers on random small tables with random hierarchies, against brute force.

Every node of the lattice is checked: suppression (three profile strategies, the grouping and the
outlier matrix), the k-minimal set and Find_vector, the released table and the node metrics.
The oracles are in tests/brute.py; the random cases in tests/strategies.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from microrelease.core import build_profile, generalize, load_dataset, outlier_matrix, query
from microrelease.core.lattice.generalization import suppressed_count
from microrelease.core.lattice.node_release import check_k_anonymity

from brute import all_nodes, class_counter, k_minimal, level_maps, min_satisfying_height, suppressed
from strategies import random_cases


def dataset_of(case):
    return load_dataset(case.frame(), qi=case.names, hierarchies=case.hierarchies())


def brute_sat(case):
    maps = [level_maps(rows) for rows in case.hierarchy_rows]
    nodes = all_nodes(case.heights)
    supp = {v: suppressed(class_counter(case.table, maps, v), case.k) for v in nodes}
    return nodes, supp, {v: supp[v] <= case.max_sup for v in nodes}


@given(random_cases())
def test_suppression_never_increases_up_the_lattice(case):
    nodes, supp, _ = brute_sat(case)
    ds = dataset_of(case)
    lattice = ds.lattice
    for v in nodes:
        for w in lattice.successors(v):
            assert supp[w] <= supp[v]
    # and the core's profile agrees on each edge
    stats = build_profile(ds).stats(case.k)
    src, tgt = lattice.edges
    assert np.all(stats.suppressed[tgt] <= stats.suppressed[src])


@given(random_cases())
def test_profile_answers_equal_direct_evaluation(case):
    ds = dataset_of(case)
    nodes, supp, sat = brute_sat(case)
    for strategy in ("numba", "numpy", "direct"):
        answer = query(build_profile(ds, strategy=strategy), case.k, case.max_sup)
        for v in nodes:
            i = ds.lattice.index(v)
            assert answer.stats.suppressed[i] == supp[v] == suppressed_count(ds.frequency, ds.hierarchies, v, case.k)
            assert bool(answer.satisfying[i]) == sat[v]


@given(random_cases())
def test_k_minimal_set_and_find_vector_match_brute_force(case):
    ds = dataset_of(case)
    nodes, _, sat = brute_sat(case)
    answer = query(build_profile(ds), case.k, case.max_sup)
    assert {n.vector for n in answer.k_minimal_nodes()} == k_minimal(nodes, sat)
    fv = answer.find_vector()
    if not any(sat.values()):
        assert fv.vector is None
        return
    assert sat[fv.vector]
    assert sum(fv.vector) == min_satisfying_height(nodes, sat)
    # the generic pruned search on a direct predicate gives the same set
    from microrelease.core import k_minimal as pruned_k_minimal
    from microrelease.core.lattice.generalization import satisfies

    direct = pruned_k_minimal(ds.lattice, lambda v: satisfies(ds.frequency, ds.hierarchies, v, case.k, case.max_sup))
    assert set(direct) == k_minimal(nodes, sat)


@given(random_cases())
def test_outlier_matrix_and_grouping_agree_on_every_node(case):
    ds = dataset_of(case)
    vt = outlier_matrix(ds.frequency, ds.hierarchies, case.k)
    for v in ds.lattice:
        assert vt.suppressed_count(v) == suppressed_count(ds.frequency, ds.hierarchies, v, case.k)
        assert vt.satisfies(v, case.max_sup) == (suppressed_count(ds.frequency, ds.hierarchies, v, case.k) <= case.max_sup)


@given(random_cases())
def test_released_table_is_k_anonymous_and_counts_every_row(case):
    ds = dataset_of(case)
    maps = [level_maps(rows) for rows in case.hierarchy_rows]
    for v in ds.lattice:
        gt = generalize(ds, v, case.k)
        assert len(gt.released) == len(case.table) - len(gt.suppressed_rows)
        assert len(gt.suppressed_rows) == suppressed(class_counter(case.table, maps, v), case.k)
        assert check_k_anonymity(gt.released, case.names, case.k).is_k_anonymous
        # suppressed rows are exactly those whose generalized combination is rare
        counter = class_counter(case.table, maps, v)
        rare = [i for i, row in enumerate(case.table)
                if counter[tuple(maps[q][d][row[q]] for q, d in enumerate(v))] < case.k]
        assert gt.suppressed_rows.tolist() == rare
        assert sorted(gt.released.index.tolist() + rare) == list(range(len(case.table)))


@given(random_cases(max_qis=2))
def test_metrics_follow_their_definitions(case):
    ds = dataset_of(case)
    answer = query(build_profile(ds), case.k, case.max_sup)
    maps = [level_maps(rows) for rows in case.hierarchy_rows]
    n, m = len(case.table), len(case.names)
    for v in ds.lattice:
        r = answer.node(v)
        counter = class_counter(case.table, maps, v)
        kept = [c for c in counter.values() if c >= case.k]
        supp = n - sum(kept)
        rel = sum(d / h for d, h in zip(v, case.heights, strict=True) if h)
        assert r.rel_distance == pytest.approx(rel)
        assert r.accuracy == pytest.approx(1 - rel / m)
        assert r.completeness == pytest.approx((n - supp) / n)
        assert r.distinct == len(kept)
        assert r.discernibility == sum(c * c for c in kept) + supp * n
        assert r.smallest_class == (min(kept) if kept else 0)
        assert r.max_risk == pytest.approx(1 / min(kept) if kept else 0)
