"""k-map against a population table: the joint roll-up and the profile for every K, against brute
force (the sample and the population grouped anew at every node of small random tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microrelease.core import Criteria, DataError, InvalidParameterError, load_dataset, query
from microrelease.core.lattice.node_release import node_suppression
from microrelease.core.risk.k_map import KMap, code_population, joint_profile

from brute import all_nodes, class_counter, k_minimal, level_maps
from strategies import random_cases


@st.composite
def sampled_cases(draw):
    """A random population table and a sample of its rows (at least one)."""
    case = draw(random_cases(max_rows=30))
    chosen = draw(st.lists(st.integers(0, len(case.table) - 1), min_size=1, max_size=len(case.table), unique=True))
    big_k = draw(st.integers(1, len(case.table) + 1))
    return case, [case.table[i] for i in sorted(chosen)], big_k


def _setup(case, sample_rows):
    ds = load_dataset(pd.DataFrame(sample_rows, columns=case.names), qi=case.names, hierarchies=case.hierarchies())
    return ds, code_population(case.frame(), ds)


def _brute_pairs(case, sample_rows, node):
    """Multiset of (f, F) over the node's sample classes, by grouping both tables' generalized rows."""
    maps = [level_maps(rows) for rows in case.hierarchy_rows]
    sample = class_counter(sample_rows, maps, node)
    population = class_counter(case.table, maps, node)
    pairs: dict = {}
    for key, f in sample.items():
        pairs[(f, population[key])] = pairs.get((f, population[key]), 0) + 1
    return pairs


@given(sampled_cases())
def test_joint_pairs_equal_brute_force_at_every_node_both_strategies(data):
    case, sample_rows, _ = data
    ds, population = _setup(case, sample_rows)
    for strategy in ("numba", "numpy"):
        joint = joint_profile(ds, population, strategy=strategy)
        for v in all_nodes(case.heights):
            f, big_f, counts = joint.pairs(v)
            assert dict(zip(zip(f.tolist(), big_f.tolist(), strict=True), counts.tolist(), strict=True)) \
                == _brute_pairs(case, sample_rows, v)


@given(sampled_cases())
def test_profile_for_K_gives_suppression_and_k_minimal_set_of_brute_force(data):
    case, sample_rows, big_k = data
    ds, population = _setup(case, sample_rows)
    n = len(sample_rows)
    k, max_sup = min(case.k, n), min(case.max_sup, n)
    profile = joint_profile(ds, population).profile(big_k)
    answer = query(profile, k, max_sup)
    nodes = all_nodes(case.heights)
    supp, sq = {}, {}
    for v in nodes:
        pairs = _brute_pairs(case, sample_rows, v)
        supp[v] = sum(f * c for (f, big_f), c in pairs.items() if f < k or big_f < big_k)
        sq[v] = sum(f * f * c for (f, big_f), c in pairs.items() if big_f < big_k)
    for v in nodes:
        i = ds.lattice.index(v)
        assert answer.stats.suppressed[i] == supp[v]
        assert profile.failing_sq[i] == sq[v]
        # the release path counts the same classes out
        s = node_suppression(ds, v, Criteria.of(k, KMap(big_k, population)))
        assert int(s.sizes[s.suppressed].sum()) == supp[v]
    sat = {v: supp[v] <= max_sup for v in nodes}
    assert {tuple(n.vector) for n in answer.k_minimal_nodes()} == k_minimal(nodes, sat)


@given(sampled_cases())
def test_k_map_is_monotone_up_the_lattice(data):
    case, sample_rows, big_k = data
    ds, population = _setup(case, sample_rows)
    failing = joint_profile(ds, population).profile(big_k).failing_rows
    src, tgt = ds.lattice.edges
    assert np.all(failing[tgt] <= failing[src])


def test_k_map_1_equals_k_anonymity_alone_and_K_above_population_fails_all():
    frame = pd.DataFrame({"a": list("xxyyzz"), "b": list("010101")})
    from microrelease.core import Hierarchy, build_profile

    h = {"a": Hierarchy("a", (("x", "*"), ("y", "*"), ("z", "*"))), "b": Hierarchy("b", (("0", "*"), ("1", "*")))}
    ds = load_dataset(frame.iloc[:4], qi=["a", "b"], hierarchies=h)
    joint = joint_profile(ds, code_population(frame, ds))
    plain = build_profile(ds)
    one = joint.profile(1)
    assert np.array_equal(one.stats(2).suppressed, plain.stats(2).suppressed)
    assert np.array_equal(joint.profile(7).failing_rows, np.full(ds.lattice.size, 4))
    assert joint.profile(6).failing_rows[-1] == 0  # the top class holds the whole population of 6
    assert joint.smallest_released_population((1, 1), 1, 6) == 6


def test_population_errors_name_column_value_and_combination():
    frame = pd.DataFrame({"a": list("xxy"), "b": list("010")})
    from microrelease.core import Hierarchy

    h = {"a": Hierarchy("a", (("x", "*"), ("y", "*"), ("z", "*"))), "b": Hierarchy("b", (("0", "*"), ("1", "*")))}
    ds = load_dataset(frame, qi=["a", "b"], hierarchies=h)
    with pytest.raises(DataError, match=r"population column 'a'.*'w'") as err:
        code_population(pd.DataFrame({"a": ["w", "x", "x", "y"], "b": list("0100")}), ds)
    assert err.value.parameter == "population"
    with pytest.raises(DataError, match=r"1 row\(s\) of \{'a': 'x', 'b': '0'\} but the population only 0"):
        code_population(pd.DataFrame({"a": ["x", "y"], "b": ["1", "0"]}), ds)
    with pytest.raises(DataError, match=r"\['b'\] not in the population"):
        code_population(frame[["a"]], ds)
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InvalidParameterError, match="k_map"):
            KMap(bad, None)


def test_population_with_blanks_the_sample_lacks():
    h_rows = (("x", "*"), ("y", "*"))
    from microrelease.core import Hierarchy

    sample = pd.DataFrame({"a": ["x", "y"]})
    ds = load_dataset(sample, qi=["a"], hierarchies={"a": Hierarchy("a", h_rows)})
    population = code_population(pd.DataFrame({"a": ["x", "y", None, "x"]}), ds)
    joint = joint_profile(ds, population)
    assert joint.pairs((0,))[1].tolist() == [1, 2]  # y: 1, x: 2 (sorted by f then F: both f = 1)
    assert joint.pairs((1,))[1].tolist() == [4]  # the blank generalizes to * with the others
