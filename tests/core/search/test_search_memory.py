"""Questions asked one after another of one evaluator and one SearchMemory (what the dashboard does on a
large lattice) get the whole-lattice profile's answers: the k-minimal set, Find_vector's trace, the
preferred node of the policy asked and each node's figures, whatever the earlier questions were; and a
repeated k reuses the tags (fewer nodes evaluated). Under criteria beside k nothing is reused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from same_answers import same_preferred, same_search

from microrelease.core import (
    POLICIES,
    Criteria,
    build_model_profile,
    build_profile,
    load_dataset,
    load_sample,
    prepare_models,
    query,
)
from microrelease.core.search import NodeEvaluator, SearchMemory, search_pruned
from microrelease.core.search.memory import Histogram

from strategies import random_cases

POLICY_NAMES = sorted(POLICIES)


def same_as_profile(dataset, profile, pruned, k, max_sup, policy) -> None:
    answer = query(profile, k, max_sup)
    same_search(pruned, answer)
    same_preferred(pruned, answer, policy)


@given(random_cases(max_qis=4, max_rows=30), st.data())
def test_a_sequence_of_questions_sharing_one_memory(case, data):
    dataset = load_dataset(case.frame(), qi=case.names, hierarchies=case.hierarchies())
    profile = build_profile(dataset, quality=True)
    evaluator = NodeEvaluator(dataset, cache_budget=1 << 12)  # a small cache: snapshots come and go
    memory = SearchMemory(evaluator.heights)
    n = dataset.n_rows
    questions = data.draw(st.lists(st.tuples(st.integers(1, n), st.integers(0, n), st.sampled_from(POLICY_NAMES)),
                                   min_size=2, max_size=5))
    for k, max_sup, policy in [(case.k, case.max_sup, "min-relative"), *questions]:
        pruned = search_pruned(dataset, k, max_sup, policy, evaluator=evaluator, memory=memory)
        same_as_profile(dataset, profile, pruned, k, max_sup, policy)
        answer = query(profile, k, max_sup)
        for i in range(dataset.lattice.size):  # every node's figures, whether rolled up or remembered
            f = pruned.search.known(i)
            if f is not None:
                assert f.suppressed == int(answer.stats.suppressed[i])
                assert f.distinct == int(answer.stats.distinct[i])
                assert f.released_sq == int(answer.stats.released_sq[i])


@given(st.lists(st.integers(1, 9), min_size=1, max_size=40), st.integers(1, 12))
def test_a_histogram_gives_the_figures_of_its_classes(counts, k):
    from microrelease.core.search.evaluator_kernels import class_figures

    counts = np.array(counts, dtype=np.int64)
    f = Histogram.of(counts).figures(k)
    assert (f.suppressed, f.distinct, f.smallest, f.released_sq, f.all_sq) == tuple(
        int(x) for x in class_figures(counts, k))
    assert f.classes == len(counts) and Histogram.of(counts).suppressed(k) == f.suppressed


def test_a_k_change_evaluates_only_the_nodes_left_open():
    adult = load_sample("adult")
    evaluator = NodeEvaluator(adult)
    memory = SearchMemory(evaluator.heights)
    first = search_pruned(adult, 5, 0, evaluator=evaluator, memory=memory)
    first.k_minimal_indices  # noqa: B018 - the whole lattice tagged
    again = search_pruned(adult, 5, 0, evaluator=evaluator, memory=memory)
    assert again.k_minimal_indices.tolist() == first.k_minimal_indices.tolist()
    assert again.nodes_evaluated < first.nodes_evaluated / 4  # the minimal nodes' figures, read again
    fresh, reused = search_pruned(adult, 8, 10), search_pruned(adult, 8, 10, evaluator=evaluator, memory=memory)
    assert reused.k_minimal_indices.tolist() == fresh.k_minimal_indices.tolist()
    assert reused.nodes_evaluated < fresh.nodes_evaluated


def test_criteria_beside_k_neither_learn_nor_reuse():
    adult = load_sample("adult")
    evaluator = NodeEvaluator(adult)
    memory = SearchMemory(evaluator.heights)
    search_pruned(adult, 5, 0, evaluator=evaluator, memory=memory).k_minimal_indices  # noqa: B018
    learnt = dict(memory.histograms)
    prepared = prepare_models(adult, "salary-class", {"t_closeness": "0.3"})
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    profile = build_model_profile(adult, prepared.sensitive_frequency, prepared.models, quality=True)
    pruned = search_pruned(adult, criteria, 0, evaluator=evaluator, memory=memory)
    assert pruned.k_minimal_indices.tolist() == query(profile, 5, 0).k_minimal_indices.tolist()
    assert pruned.search.memory is None and memory.histograms.keys() == learnt.keys()


def test_a_memory_is_one_lattices():
    adult = load_sample("adult")
    with pytest.raises(ValueError, match="another lattice"):
        search_pruned(adult, 5, 0, memory=SearchMemory((1, 2)))


def test_a_memory_is_one_tables():
    """Two tables of the same lattice (one QI x, y -> *): the memory of the first must not answer for the
    second, where node [0] is not 2-anonymous (a reviewer's reproducer)."""
    import pandas as pd

    from microrelease.core import Hierarchy, load_dataset

    def table(values):
        return load_dataset(pd.DataFrame({"a": values}), qi=["a"],
                            hierarchies={"a": Hierarchy("a", (("x", "*"), ("y", "*")))})

    first, second = table(["x", "x", "y", "y"]), table(["x", "y", "y", "y"])
    memory = SearchMemory(NodeEvaluator(first).heights)
    assert search_pruned(first, 2, 0, memory=memory).k_minimal_indices.tolist() == [0]
    with pytest.raises(ValueError, match="another table's rows"):
        search_pruned(second, 2, 0, memory=memory)
    assert search_pruned(second, 2, 0).k_minimal_indices.tolist() == [1]
