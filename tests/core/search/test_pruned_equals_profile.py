"""The pruned search gives the whole-lattice profile's answers: the k-minimal set, Find_vector's trace,
every policy's preferred node (each quality policy's optimum over every satisfying node), and each
node's figures; on random tables (hypothesis) and on adult's 8 and 9 QIs, at MaxSup 0 and above.

The profile is the oracle here (it agrees with brute force: tests/core/lattice); ARX's optima on adult
are checked against the numbers ARX gives.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from same_answers import same_node, same_preferred, same_search
from wide_data import wide_dataset

from microrelease.core import POLICIES, build_profile, load_dataset, load_sample, query
from microrelease.core.lattice.generalization import class_sizes
from microrelease.core.search import NodeEvaluator, search_pruned, supports

from strategies import random_cases

PRUNED_POLICIES = [p for p in POLICIES if supports(p)]


def assert_same_answers(dataset, k, max_sup, profile=None) -> None:
    profile = profile or build_profile(dataset, quality=True)
    answer = query(profile, k, max_sup)
    pruned = search_pruned(dataset, k, max_sup)
    same_search(pruned, answer)
    for policy in PRUNED_POLICIES:
        searched = search_pruned(dataset, k, max_sup, policy) if POLICIES[policy].quality else pruned
        if same_preferred(searched, answer, policy) and POLICIES[policy].quality:
            same_node(searched.preferred(policy, among="k-minimal"), answer.preferred(policy, among="k-minimal"))


@given(random_cases(max_qis=4, max_rows=30))
def test_random_tables(case):
    dataset = load_dataset(case.frame(), qi=case.names, hierarchies=case.hierarchies())
    assert_same_answers(dataset, case.k, case.max_sup)


@given(random_cases(max_qis=4, max_rows=30))
def test_evaluator_classes_equal_grouping_the_frequency_set(case):
    dataset = load_dataset(case.frame(), qi=case.names, hierarchies=case.hierarchies())
    evaluator = NodeEvaluator(dataset, cache_budget=1 << 12)  # a small cache: snapshots come and go
    rng = np.random.default_rng(len(case.table))
    nodes = list(dataset.lattice)
    for i in rng.permutation(len(nodes))[:40]:
        expected, _ = class_sizes(dataset.frequency, dataset.hierarchies, nodes[i])
        true_suppressed = int(expected[expected < case.k].sum())
        # block by block from the bottom, giving up once more than MaxSup rows are suppressed
        _, counts, complete = evaluator.classes(nodes[i], case.k, case.max_sup)
        if complete:
            assert sorted(counts.tolist()) == sorted(expected.tolist())
        else:
            assert true_suppressed > case.max_sup
            assert case.max_sup < int(counts[counts < case.k].sum()) <= true_suppressed
        _, counts, complete = evaluator.classes(nodes[i])
        assert complete and sorted(counts.tolist()) == sorted(expected.tolist())


@pytest.fixture(scope="module")
def adult():
    return load_sample("adult")


@pytest.mark.parametrize("max_sup", [0, "1%"])
def test_adult_8_qis(adult, max_sup):
    assert_same_answers(adult, 5, max_sup)


def test_adult_9_qis_loss_and_k_minimal():
    dataset = wide_dataset(9)
    profile = build_profile(dataset, quality=True)
    for max_sup in (0, "1%"):
        answer, pruned = query(profile, 5, max_sup), search_pruned(dataset, 5, max_sup, "loss")
        same_node(pruned.preferred("loss"), answer.preferred("loss"))
        assert pruned.k_minimal_indices.tolist() == answer.k_minimal_indices.tolist()
        assert pruned.find_vector().to_dict() == answer.find_vector().to_dict()


@pytest.mark.parametrize("max_sup, vector, loss", [(0, (0, 4, 0, 2, 3, 2, 2, 1), 0.591585),
                                                   ("1%", (0, 3, 0, 1, 3, 1, 1, 2), 0.358785)])
def test_arx_loss_optima_on_adult(adult, max_sup, vector, loss):
    """ARX 3.9.2 (Flash, Loss, k = 5) finds these optima on adult's 8 QIs."""
    pruned = search_pruned(adult, 5, max_sup, "loss")
    assert pruned.preferred("loss").vector == vector
    assert round(pruned.score("loss", vector), 6) == loss
    # the bound kept most of the lattice from being rolled up
    assert pruned.nodes_evaluated < adult.lattice.size / 4


@pytest.mark.parametrize("limit", [1e-6, 0.01, 0.05])
def test_a_time_limit_bounds_the_optimum_and_leaves_the_k_minimal_set_exact(adult, limit):
    profile = build_profile(adult, quality=True)
    answer = query(profile, 10, "5%")
    optimum = answer.score("loss", answer.preferred("loss").vector)
    limited = search_pruned(adult, 10, "5%", "loss", time_limit=limit)
    best = limited.preferred("loss")
    assert limited.lower_bound <= optimum + 1e-12 <= limited.score("loss", best.vector) + 2e-12
    if not limited.timed_out:
        assert limited.lower_bound == pytest.approx(optimum)
    # the k-minimal set and Find_vector are not timed: exact whatever the limit
    assert limited.k_minimal_indices.tolist() == answer.k_minimal_indices.tolist()
    assert limited.find_vector().to_dict() == answer.find_vector().to_dict()


def test_a_time_limit_needs_a_policy_with_a_lower_bound(adult):
    from microrelease.core import InvalidParameterError

    with pytest.raises(InvalidParameterError, match="a time limit needs a quality policy with a lower bound"):
        search_pruned(adult, 5, 0, "discernibility", time_limit=1.0)
