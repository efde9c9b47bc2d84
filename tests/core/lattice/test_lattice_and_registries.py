"""Lattice invariants, the policy/metric registries' contracts, progress and cancellation."""

from __future__ import annotations

import dataclasses
import inspect

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microrelease.core import METRICS, POLICIES, Cancelled, Lattice, build_profile, query
from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.policies import prefer
from microrelease.core.lattice.profile import MEMORY_BUDGET, profile_frequency_set, roll_up
from microrelease.core.models.model_profile import build_model_profile


@given(st.lists(st.integers(0, 3), min_size=1, max_size=4))
def test_lattice_invariants(heights):
    lat = Lattice(tuple(heights))
    assert lat.size == np.prod([h + 1 for h in heights])
    assert sorted(lat.node_heights.tolist()) == sorted(sum(v) for v in lat)
    for v in lat:
        assert lat.node(lat.index(v)) == v
        for w in lat.successors(v):
            assert v in lat.predecessors(w) and sum(w) == sum(v) + 1
    src, tgt = lat.edges
    assert len(src) == sum(len(lat.successors(v)) for v in lat)
    g = lat.to_networkx()
    assert g.number_of_nodes() == lat.size and g.number_of_edges() == len(src)
    assert all(g.nodes[v]["height"] == sum(v) for v in g.nodes)


def test_policy_registry_contract(adult):
    profile = build_profile(adult, quality=True)  # the quality policies read its share mass
    answer = query(profile, 5, 100)
    for name, policy in POLICIES.items():
        assert dataclasses.is_dataclass(policy) and policy.name == name
        with pytest.raises(dataclasses.FrozenInstanceError):
            policy.name = "x"
        chosen = answer.preferred(name)
        # Samarati's policies choose a k-minimal node; ARX's quality models the best satisfying one
        assert chosen.k_minimal if policy.among == "k-minimal" else chosen.satisfies
        candidates = answer.k_minimal_indices if policy.among == "k-minimal" else np.flatnonzero(answer.satisfying)
        # the chosen node has the best score among the candidates
        w = np.ones(len(profile.lattice.heights))
        scores = policy.score(profile.lattice, answer.stats, candidates, w)
        best = policy.score(profile.lattice, answer.stats, np.array([answer.lattice.index(chosen.vector)]), w)
        assert best[0] == pytest.approx(scores.min())
    with pytest.raises(InvalidParameterError, match="quality=True"):  # a profile without share mass: said
        query(build_profile(adult), 5, 100).preferred("loss")


def test_policies_follow_their_definitions(adult_profile):
    answer = query(adult_profile, 10, 50)
    nodes = answer.k_minimal_nodes()
    assert answer.preferred("min-absolute").height == min(n.height for n in nodes)
    assert answer.preferred("min-relative").rel_distance == pytest.approx(min(n.rel_distance for n in nodes))
    assert answer.preferred("max-distribution").distinct == max(n.distinct for n in nodes)
    assert answer.preferred("min-suppression").suppressed == min(n.suppressed for n in nodes)
    # a heavy weight on age steers the weighted policy away from generalizing age
    heavy = answer.preferred("weighted", {"age": 100})
    assert heavy.vector[1] == min(n.vector[1] for n in nodes)


def test_ties_break_deterministically(samarati):
    answer = query(build_profile(samarati), 2, 2)
    # [0,1] and [1,0] tie on height and suppression (2 each); relative distance 0.5 < 1 picks [0,1]
    assert answer.preferred("min-absolute").vector == (0, 1)
    # equal on everything but the vector: the lexicographically smallest wins
    lat = answer.lattice
    both = np.array([lat.index((1, 0)), lat.index((0, 1))])
    assert prefer("min-suppression", lat, answer.stats, both) == lat.index((0, 1))


def test_metric_registry_contract(adult_profile):
    answer = query(adult_profile, 5, 0)
    for name, metric in METRICS.items():
        values = answer.metrics[name]
        assert metric.name == name and len(values) == adult_profile.lattice.size
    # accuracy falls and completeness rises (weakly) up every edge
    src, tgt = adult_profile.lattice.edges
    assert np.all(answer.metrics["accuracy"][tgt] < answer.metrics["accuracy"][src])
    assert np.all(answer.metrics["completeness"][tgt] >= answer.metrics["completeness"][src])
    # the average risk is the prosecutor's of core.risk (tested there against per-record definitions)
    from microrelease.core.risk.reidentification import node_risk

    np.testing.assert_allclose(answer.metrics["average_risk"], node_risk(adult_profile, 5, threshold=1.0)["average"])


def test_progress_is_reported_and_work_can_be_cancelled(adult):
    seen = []
    build_profile(adult, progress=seen.append)
    assert seen[0] == 0.0 and seen[-1] == pytest.approx(1.0) and seen == sorted(seen) and len(seen) > 5
    calls = []

    def stop_after_three():
        calls.append(1)
        return len(calls) > 3

    for strategy in ("numba", "direct"):
        calls.clear()
        with pytest.raises(Cancelled):
            build_profile(adult, strategy=strategy, should_stop=stop_after_three)


def test_every_profile_builder_defaults_to_the_one_memory_budget():
    for builder in (build_profile, profile_frequency_set, build_model_profile, roll_up):
        assert inspect.signature(builder).parameters["memory_budget"].default == MEMORY_BUDGET == 512 << 20, builder
