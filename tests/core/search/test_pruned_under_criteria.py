"""The pruned search under criteria beside k gives the whole-lattice profiles' answers (the k-minimal
set, Find_vector's trace, every policy's preferred node) for each l-diversity, each t-closeness ground,
k-map, k-map beside each l-diversity and t-closeness (the model profile with the population joined in;
on random tables and on adult-sample with its population) and each risk limit, at MaxSup 0 and above;
and, where no profile answers (a model, k-map and a risk limit at once), the answers of brute force:
every node's release under the
criteria (the release's own suppression, checked against grouping by hand in
tests/core/criteria), k-minimal read against every node below, the Loss optimum scored by the report's
quality formulas."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from same_answers import same_preferred, same_search
from sweeps import sweep

from microrelease.core import (
    POLICIES,
    Criteria,
    build_model_profile,
    build_profile,
    load_dataset,
    load_sample,
    parse_criteria,
    prepare_models,
    query,
)
from microrelease.core.exceptions import NoSolutionError
from microrelease.core.lattice.generalization import class_representatives, class_sizes, generalize_codes
from microrelease.core.lattice.node_release import node_suppression
from microrelease.core.lattice.quality import node_quality
from microrelease.core.risk.k_map import KMap, code_population, joint_profile
from microrelease.core.search import search_pruned, supports

from brute import all_nodes, below
from strategies import random_cases

PRUNED_POLICIES = [p for p in POLICIES if supports(p)]
MODELS = [{"l_diversity": "distinct:2"}, {"l_diversity": "entropy:1.5"}, {"l_diversity": "recursive:2:2"},
          {"t_closeness": "0.3"}, {"t_closeness": "0.4:ordered"}, {"t_closeness": "0.5:hierarchical"}]
RISKS = [{"max_risk": "0.3"}, {"max_records_at_risk": "0.4:0.2"}, {"max_uniqueness": "0.3:0.5"}]
SECRET_HIERARCHY = {"secret": (("a", "ab", "*"), ("b", "ab", "*"), ("c", "c", "*"))}


def assert_same_answers(dataset, criteria: Criteria, max_sup, answer) -> None:
    """The pruned search with ``criteria`` against a profile's ``answer`` to the same question."""
    pruned = search_pruned(dataset, criteria, max_sup)
    same_search(pruned, answer)
    for policy in PRUNED_POLICIES:
        same_preferred(search_pruned(dataset, criteria, max_sup, policy) if POLICIES[policy].quality else pruned,
                       answer, policy)


@st.composite
def labelled_cases(draw):
    """A random table with a sensitive column ``secret`` and a population holding it."""
    case = draw(random_cases(max_qis=3, max_rows=24))
    secret = draw(st.lists(st.sampled_from("abc"), min_size=len(case.table), max_size=len(case.table)))
    extra = draw(st.lists(st.sampled_from(case.table), max_size=12))
    return case, secret, extra


def _setup(case, secret, extra):
    from microrelease.core import Hierarchy

    frame = case.frame().assign(secret=secret)
    ds = load_dataset(frame, qi=case.names, hierarchies=case.hierarchies(), sensitive=["secret"])
    population = code_population(pd.DataFrame([*case.table, *extra], columns=case.names), ds)
    return ds, population, Hierarchy("secret", SECRET_HIERARCHY["secret"])


@settings(max_examples=40, deadline=None)
@given(labelled_cases(), st.sampled_from(MODELS))
def test_each_model_equals_its_profile(data, spec):
    case, secret, extra = data
    ds, _, hierarchy = _setup(case, secret, extra)
    try:
        prepared = prepare_models(ds, "secret", spec, hierarchy=hierarchy)
    except Exception:  # a model that does not fit these values (l above the distinct values): refused alike
        return
    criteria = Criteria.of(case.k, *prepared.models, sensitive=prepared.sensitive_frequency)
    profile = build_model_profile(ds, prepared.sensitive_frequency, prepared.models, quality=True)
    for max_sup in (0, case.max_sup):
        assert_same_answers(ds, criteria, max_sup, query(profile, case.k, max_sup))


@settings(max_examples=40, deadline=None)
@given(labelled_cases(), st.integers(1, 8))
def test_k_map_equals_its_profile(data, big_k):
    case, secret, extra = data
    ds, population, _ = _setup(case, secret, extra)
    big_k = min(big_k, population.n_rows)
    joint = joint_profile(ds, population)
    criteria = Criteria.of(case.k, KMap(big_k, population))
    for max_sup in (0, case.max_sup):
        assert_same_answers(ds, criteria, max_sup, query(joint.profile(big_k, quality=True), case.k, max_sup))


@settings(max_examples=40, deadline=None)
@given(labelled_cases(), st.integers(1, 8), st.sampled_from(MODELS))
def test_k_map_beside_each_model_equals_its_profile(data, big_k, spec):
    case, secret, extra = data
    ds, population, hierarchy = _setup(case, secret, extra)
    try:
        prepared = prepare_models(ds, "secret", spec, hierarchy=hierarchy)
    except Exception:
        return
    k_map = KMap(min(big_k, population.n_rows), population)
    criteria = Criteria.of(case.k, *prepared.models, k_map, sensitive=prepared.sensitive_frequency)
    profile = build_model_profile(ds, prepared.sensitive_frequency, prepared.models, k_map=k_map, quality=True)
    for max_sup in (0, case.max_sup):
        assert_same_answers(ds, criteria, max_sup, query(profile, case.k, max_sup))


@settings(max_examples=40, deadline=None)
@given(labelled_cases(), st.sampled_from(RISKS))
def test_each_risk_limit_equals_the_profile(data, spec):
    case, secret, extra = data
    ds, _, _ = _setup(case, secret, extra)
    risk = parse_criteria(spec)
    profile = build_profile(ds, quality=True)
    for max_sup in (0, case.max_sup):
        assert_same_answers(ds, Criteria.of(case.k, *risk), max_sup, query(profile, case.k, max_sup, risk))


def brute_answers(ds, criteria: Criteria, max_sup: int):
    """(k-minimal set, Loss optimum score or None), node by node through the release's suppression."""
    sat, loss = {}, {}
    for v in all_nodes([h.height for h in ds.hierarchies]):
        s = node_suppression(ds, v, criteria)
        released = s.sizes[~s.suppressed]
        sat[v] = int(s.sizes[s.suppressed].sum()) <= max_sup and criteria.release_fault(released) is None
        if sat[v]:
            sizes, tuple_class = class_sizes(ds.frequency, ds.hierarchies, v)
            levels = generalize_codes(ds.hierarchies, ds.frequency.codes[class_representatives(tuple_class, len(sizes))], v)
            loss[v] = node_quality(ds.hierarchies, v, s.sizes, levels, s.suppressed, ds.n_rows)["loss"]
    minimal = {v for v in sat if sat[v] and not any(sat[u] for u in sat if below(u, v))}
    return minimal, (min(loss.values()) if loss else None)


@settings(max_examples=40, deadline=None)
@given(labelled_cases(), st.integers(1, 6), st.sampled_from([MODELS[0], MODELS[1], MODELS[3]]),
       st.sampled_from([None, *RISKS]))
def test_k_map_beside_a_model_and_a_risk_limit_equals_brute_force(data, big_k, spec, risk):
    case, secret, extra = data
    ds, population, hierarchy = _setup(case, secret, extra)
    try:
        prepared = prepare_models(ds, "secret", spec, hierarchy=hierarchy)
    except Exception:
        return
    criteria = Criteria.of(case.k, *prepared.models, KMap(min(big_k, population.n_rows), population),
                           *(parse_criteria(risk) if risk else ()), sensitive=prepared.sensitive_frequency)
    for max_sup in (0, case.max_sup):
        minimal, loss = brute_answers(ds, criteria, max_sup)
        pruned = search_pruned(ds, criteria, max_sup, "loss")
        assert {tuple(n.vector) for n in pruned.k_minimal_nodes()} == minimal
        if loss is None:
            with pytest.raises(NoSolutionError):
                pruned.preferred("loss")
        else:
            assert math.isclose(pruned.score("loss", pruned.preferred("loss").vector), loss, rel_tol=1e-9, abs_tol=1e-12)


@pytest.fixture(scope="module")
def adult():
    return load_sample("adult")


@pytest.mark.parametrize("spec", sweep([MODELS[0], {"l_diversity": "entropy:1.5"}, {"t_closeness": "0.3"}]))
@pytest.mark.parametrize("max_sup", [0, "1%"])
def test_adult_8_qis_under_a_model(adult, spec, max_sup):
    prepared = prepare_models(adult, "salary-class", spec)
    profile = build_model_profile(adult, prepared.sensitive_frequency, prepared.models, quality=True)
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    assert_same_answers(adult, criteria, max_sup, query(profile, 5, max_sup))


@pytest.fixture(scope="module")
def adult_sample():
    from microrelease.core.data.samples import sample
    from microrelease.core.risk.k_map import read_population

    ds = load_sample("adult-sample")
    return ds, code_population(read_population(str(sample("adult-sample").population_path)), ds)


@pytest.mark.parametrize("spec", sweep([MODELS[0], {"l_diversity": "entropy:1.5"}, {"t_closeness": "0.3"}]))
@pytest.mark.parametrize("max_sup", [0, "2%"])
def test_adult_sample_under_k_map_beside_a_model(adult_sample, spec, max_sup):
    ds, population = adult_sample
    prepared = prepare_models(ds, "salary-class", spec)
    k_map = KMap(10, population)
    profile = build_model_profile(ds, prepared.sensitive_frequency, prepared.models, k_map=k_map, quality=True)
    criteria = Criteria.of(2, *prepared.models, k_map, sensitive=prepared.sensitive_frequency)
    assert_same_answers(ds, criteria, max_sup, query(profile, 2, max_sup))


def test_adult_8_qis_under_a_risk_limit(adult):
    risk = parse_criteria({"max_risk": "0.05"})
    profile = build_profile(adult, quality=True)
    assert_same_answers(adult, Criteria.of(5, *risk), "1%", query(profile, 5, "1%", risk))


def test_models_on_a_summary_are_refused_by_name(tmp_path):
    from microrelease.core import InvalidParameterError, summarize

    adult = load_sample("adult")
    prepared = prepare_models(adult, "salary-class", MODELS[0])
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    adult.table.to_csv(tmp_path / "adult.csv", index=False)
    summary = summarize(tmp_path / "adult.csv", qi=list(adult.quasi_identifiers),
                        hierarchies=dict(zip(adult.quasi_identifiers, adult.hierarchies, strict=True)))
    with pytest.raises(InvalidParameterError, match="they need a Dataset") as caught:
        search_pruned(summary, criteria, 0)
    assert caught.value.parameter == "models"


def _two_qis():
    from microrelease.core import Hierarchy

    rows = [("a", "u"), ("a", "u"), ("a", "v"), ("b", "u"), ("a", "v"), ("b", "v")]
    return load_dataset(pd.DataFrame(rows, columns=["q0", "q1"]), qi=["q0", "q1"], hierarchies={
        "q0": Hierarchy("q0", (("a", "L", "*"), ("b", "L", "*"))), "q1": Hierarchy("q1", (("u",), ("v",)))})


def test_a_risk_limit_at_maxsup_n_finds_the_node_below_a_failing_path():
    """Under a criterion that is not monotone, a binary search along a path skipped its first node, which
    no tag then decided: here (0, 0), whose empty release satisfies the limit while every node above fails."""
    ds = _two_qis()
    risk = parse_criteria({"max_risk": "0.3"})
    profile = build_profile(ds, quality=True)
    for max_sup in (0, 3, 6):
        assert_same_answers(ds, Criteria.of(3, *risk), max_sup, query(profile, 3, max_sup, risk))
    assert [n.vector for n in search_pruned(ds, Criteria.of(3, *risk), 6).k_minimal_nodes()] == [(0, 0)]


def test_k_map_reads_a_population_with_blanks_the_sample_has_not():
    """The population's hierarchies gain a missing value the sample's lack: the population is rolled up
    in its own coding and each class looked up there."""
    from microrelease.core import Hierarchy

    frame = pd.DataFrame({"a": ["x", "y", "y", "x"], "b": ["u", "v", "u", "v"]})
    ds = load_dataset(frame, qi=["a", "b"], hierarchies={"a": Hierarchy("a", (("x", "*"), ("y", "*"))),
                                                        "b": Hierarchy("b", (("u", "*"), ("v", "*")))})
    population = code_population(pd.concat([frame, pd.DataFrame({"a": ["", "", ""], "b": ["u", "u", "v"]})]), ds)
    assert len(population.hierarchies[0].ground) == 3  # the blank joined the population's coding
    joint = joint_profile(ds, population)
    for max_sup in (0, 4):
        assert_same_answers(ds, Criteria.of(1, KMap(2, population)), max_sup,
                            query(joint.profile(2, quality=True), 1, max_sup))


def test_no_satisfying_node_is_said_with_the_criteria_at_fault():
    ds = _two_qis()
    answer = search_pruned(ds, Criteria.of(3, *parse_criteria({"max_risk": "0.01"})), 0)
    with pytest.raises(NoSolutionError, match=r"no generalization satisfies 3-anonymity, average re-identification "
                                              r"risk <= 0.01 with MaxSup=0: the fully generalized table keeps "
                                              r"within it but its release fails average re-identification risk"):
        answer.preferred("min-relative")
