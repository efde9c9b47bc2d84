"""Samarati's running example (Race, ZIP; 9 rows), against the paper's published results."""

from __future__ import annotations

import pytest

from microrelease.core import build_profile, generalize, outlier_matrix, query


@pytest.mark.parametrize(
    ("max_sup", "expected"),
    [(0, {(0, 2), (1, 1)}), (2, {(1, 0), (0, 1)})],
)
def test_k_minimal_generalizations_as_published(samarati, max_sup, expected):
    answer = query(build_profile(samarati), 2, max_sup)
    assert {n.vector for n in answer.k_minimal_nodes()} == expected


def test_lattice_is_the_papers(samarati):
    lattice = samarati.lattice
    assert lattice.heights == (1, 2)
    assert lattice.size == 6
    assert lattice.successors((0, 0)) == [(1, 0), (0, 1)]
    assert lattice.predecessors((1, 1)) == [(0, 1), (1, 0)]
    graph = lattice.to_networkx()
    assert graph.number_of_nodes() == 6 and graph.number_of_edges() == 7


def test_minimal_required_suppression_at_bottom(samarati):
    # At [0,0] only (asian, 94139) occurs 3 times; the other 6 tuples are singletons.
    gt = generalize(samarati, (0, 0), 2)
    assert len(gt.suppressed_rows) == 6
    assert gt.released["ZIP"].tolist() == ["94139"] * 3
    assert gt.classes["size"].tolist() == [3]


def test_generalized_table_at_1_1(samarati):
    gt = generalize(samarati, (1, 1), 2)
    assert len(gt.suppressed_rows) == 0
    assert sorted(zip(gt.classes["Race"], gt.classes["ZIP"], gt.classes["size"], strict=True)) == [
        ("person", "9413*", 6), ("person", "9414*", 3)]


def test_outlier_matrix_of_the_example(samarati):
    vt = outlier_matrix(samarati.frequency, samarati.hierarchies, 2)
    assert len(vt.outliers) == 6  # six distinct tuples occur once
    # suppressed rows per vector, as the paper's Fig. 7 reasoning gives for k = 2
    assert {v: vt.suppressed_count(v) for v in samarati.lattice} == {
        (0, 0): 6, (0, 1): 2, (0, 2): 0, (1, 0): 2, (1, 1): 0, (1, 2): 0}


def test_find_vector_trace(samarati):
    answer = query(build_profile(samarati), 2, 0)
    result = answer.find_vector()
    assert result.vector == (0, 2)
    first = result.trace[0]
    assert (first.low, first.high, first.tried) == (0, 3, 1)
    assert first.tested == ((0, 1), (1, 0)) and first.satisfied is None
    assert result.trace[1].tried == 2 and result.trace[1].satisfied == (0, 2)
