"""Prosecutor, journalist and marketer risk against definitions written here, record by record.

The oracle gives every record (and every population record) its own risk with a pandas group-by
and averages or maximises over records, as El Emam defines the figures; table_risk works from class
sizes. node_risk is checked against table_risk of each node's generalized table, built here with
Hierarchy.generalize and a group-by, never through the profile.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from microrelease.core import Hierarchy, build_profile, load_dataset
from microrelease.core.exceptions import DataError, InvalidParameterError
from microrelease.core.models.l_diversity import DistinctLDiversity
from microrelease.core.models.model_profile import build_model_profile
from microrelease.core.models.sensitive import sensitive_frequency
from microrelease.core.risk.reidentification import FIGURES, Risk, node_risk, population_sizes, table_risk

from strategies import random_cases

THRESHOLDS = (1.0, 0.5, 1 / 3, 0.25, 0.2, 0.1, 0.01)
QIS = ["a", "b"]


def random_tables(seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A sample and a population that contains it (the sample's rows plus more)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    sample = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y", "z", "w"], n)})
    extra = int(rng.integers(0, 120))
    more = pd.DataFrame({"a": rng.integers(0, 4, extra), "b": rng.choice(["x", "y", "z", "w", "v"], extra)})
    return sample, pd.concat([sample, more], ignore_index=True)


def expected(sample: pd.DataFrame, threshold: float, population: pd.DataFrame | None = None,
             sampling_fraction: float | None = None) -> dict[str, float]:
    """Each figure by definition, from every record's own risk."""
    f = sample.groupby(QIS)["a"].transform("size").to_numpy()
    prosecutor = 1.0 / f
    if population is not None:
        pop_size = population.groupby(QIS).size().rename("F").reset_index()
        big_f = sample.merge(pop_size, on=QIS, how="left")["F"].to_numpy(dtype=float)
        classes = sample[QIS].drop_duplicates()
        in_classes = population.merge(classes, on=QIS)  # the population records of the sample's classes
        pop_risk = 1.0 / in_classes.groupby(QIS)["a"].transform("size").to_numpy()
    else:
        big_f = f / sampling_fraction if sampling_fraction is not None else f.astype(float)
        pop_risk = None
    journalist = 1.0 / big_f
    if pop_risk is None:  # the population's class j: F_j records, each of risk 1/F_j
        per_class = sample.groupby(QIS).size().to_numpy()
        per_class = per_class / sampling_fraction if sampling_fraction is not None else per_class
        population_mean = np.repeat(1.0 / per_class, per_class).mean() if sampling_fraction is None \
            else len(per_class) / per_class.sum()
    else:
        population_mean = pop_risk.mean()
    return {
        "highest": prosecutor.max(), "average": prosecutor.mean(), "records_at_risk": (prosecutor > threshold).mean(),
        "journalist_highest": journalist.max(), "journalist_average": max(population_mean, journalist.mean()),
        "journalist_records_at_risk": (journalist > threshold).mean(), "marketer": journalist.mean(),
    }


def class_sizes_and_keys(sample: pd.DataFrame) -> tuple[np.ndarray, pd.DataFrame]:
    sizes = sample.groupby(QIS).size()
    return sizes.to_numpy(), sizes.index.to_frame(index=False)


def assert_risk(risk: Risk, want: dict[str, float]) -> None:
    for name in FIGURES:
        assert getattr(risk, name) == pytest.approx(want[name], rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("threshold", THRESHOLDS)
def test_table_risk_equals_per_record_definitions(seed, threshold):
    sample, population = random_tables(seed)
    sizes, keys = class_sizes_and_keys(sample)
    # no population: the journalist is the prosecutor, the marketer |J| / n
    assert_risk(table_risk(sizes, threshold=threshold), expected(sample, threshold))
    for fraction in (1.0, 0.5, 0.3, 0.01):
        assert_risk(table_risk(sizes, threshold=threshold, sampling_fraction=fraction),
                    expected(sample, threshold, sampling_fraction=fraction))
    big_f = population_sizes(keys, population)
    assert_risk(table_risk(sizes, threshold=threshold, population_sizes=big_f),
                expected(sample, threshold, population=population))


def test_population_is_the_sample_when_nothing_else_is_known():
    sizes = np.array([1, 2, 2, 5, 9])
    risk = table_risk(sizes, threshold=0.3)
    assert (risk.journalist_highest, risk.journalist_average, risk.journalist_records_at_risk) == \
        (risk.highest, risk.average, risk.records_at_risk)
    assert risk.marketer == risk.average == len(sizes) / sizes.sum()
    assert table_risk(sizes, threshold=0.3, sampling_fraction=1.0) == risk
    assert table_risk(sizes, threshold=0.3, population_sizes=sizes) == risk


def test_a_risk_equal_to_the_threshold_is_not_at_risk():
    # classes of 2 and 4 rows: risks 1/2 and 1/4; at threshold 1/2 neither is strictly above it
    assert table_risk([2, 4], threshold=0.5).records_at_risk == 0.0
    assert table_risk([2, 4], threshold=0.25).records_at_risk == 2 / 6
    # journalist with π = 1/2: F = 4 and 8
    assert table_risk([2, 4], threshold=0.25, sampling_fraction=0.5).journalist_records_at_risk == 0.0


def test_nothing_released_reads_zero_risk():
    risk = table_risk([], threshold=0.2, sampling_fraction=0.1)
    assert all(getattr(risk, name) == 0.0 for name in FIGURES)


def test_population_sizes_counts_rows_and_names_an_absent_class():
    sample, population = random_tables(3)
    _, keys = class_sizes_and_keys(sample)
    got = population_sizes(keys, population)
    tuples = list(keys.itertuples(index=False, name=None))
    assert got.tolist() == [sum(1 for row in population.itertuples(index=False, name=None) if row == t)
                            for t in tuples]
    # the same from plain tuples
    assert population_sizes(tuples, list(population.itertuples(index=False, name=None))).tolist() == got.tolist()
    with pytest.raises(DataError, match=r"\(9, 'q'\).*absent from the population"):
        population_sizes([*tuples, (9, "q")], population)
    with pytest.raises(DataError, match="columns"):
        population_sizes(keys, population.rename(columns={"b": "c"}))


def test_population_sizes_matches_missing_values():
    sample = pd.DataFrame({"a": ["x", None], "b": [1.0, np.nan]})
    population = pd.DataFrame({"a": ["x", None, None, "y"], "b": [1.0, np.nan, np.nan, 2.0]})
    assert population_sizes(sample, population).tolist() == [1, 2]


def generalized_sizes(case, node) -> np.ndarray:
    frame = case.frame()
    hierarchies = case.hierarchies()
    out = pd.DataFrame({name: hierarchies[name].generalize(frame[name], level)
                        for name, level in zip(case.names, node, strict=True)})
    return out.groupby(case.names).size().to_numpy()


@given(random_cases(), st.sampled_from(THRESHOLDS), st.sampled_from([None, 1.0, 0.5, 0.2, 0.07]))
def test_node_risk_equals_table_risk_of_every_generalized_table(case, threshold, fraction):
    ds = load_dataset(case.frame(), qi=case.names, hierarchies=case.hierarchies())
    profile = build_profile(ds)
    for k in sorted({1, min(2, len(case.table)), case.k, len(case.table)}):
        got = node_risk(profile, k, threshold=threshold, sampling_fraction=fraction)
        assert set(got) == set(FIGURES)
        for node in ds.lattice:
            sizes = generalized_sizes(case, node)
            want = table_risk(sizes[sizes >= k], threshold=threshold, sampling_fraction=fraction)
            i = ds.lattice.index(node)
            for name in FIGURES:
                assert got[name][i] == pytest.approx(getattr(want, name), rel=1e-12, abs=1e-15), (node, k, name)


def test_node_risk_where_everything_is_suppressed():
    frame = pd.DataFrame({"q0": ["a", "b", "b", "c", "c", "c"], "q1": ["x", "x", "y", "y", "y", "y"]})
    hierarchies = {"q0": Hierarchy("q0", (("a", "*"), ("b", "*"), ("c", "*"))),
                   "q1": Hierarchy("q1", (("x", "*"), ("y", "*")))}
    ds = load_dataset(frame, qi=["q0", "q1"], hierarchies=hierarchies)
    profile = build_profile(ds)
    got = node_risk(profile, 6, threshold=0.1, sampling_fraction=0.5)
    for node in ds.lattice:
        i = ds.lattice.index(node)
        level = pd.DataFrame({n: hierarchies[n].generalize(frame[n], d) for n, d in zip(["q0", "q1"], node, strict=True)})
        sizes = level.groupby(["q0", "q1"]).size().to_numpy()
        want = table_risk(sizes[sizes >= 6], threshold=0.1, sampling_fraction=0.5)
        assert [got[name][i] for name in FIGURES] == pytest.approx([getattr(want, name) for name in FIGURES])
    released = [i for i in range(ds.lattice.size) if got["highest"][i] > 0]
    assert released == [ds.lattice.index((1, 1))]  # only the top releases one class of 6
    assert all(got[name][0] == 0.0 for name in FIGURES)


@pytest.mark.slow  # a sweep: CI's second step (pytest -m slow)
@given(random_cases(max_rows=30), st.sampled_from(THRESHOLDS), st.sampled_from([None, 0.25]))
def test_node_risk_leaves_out_classes_failing_a_privacy_model(case, threshold, fraction):
    # a sensitive column; classes with one sensitive value fail distinct 2-diversity and are suppressed
    assume(len(case.table) >= 2)
    rng = np.random.default_rng(len(case.table))
    values = rng.permutation(["p", "q", *rng.choice(["p", "q"], len(case.table) - 2)])  # both values occur
    frame = case.frame().assign(s=values)
    ds = load_dataset(frame, qi=case.names, hierarchies=case.hierarchies(), sensitive=["s"])
    profile = build_model_profile(ds, sensitive_frequency(ds, "s"), [DistinctLDiversity(2)])
    hierarchies = case.hierarchies()
    for k in sorted({1, case.k}):
        got = node_risk(profile, k, threshold=threshold, sampling_fraction=fraction)
        for node in ds.lattice:
            level = pd.DataFrame({n: hierarchies[n].generalize(frame[n], d) for n, d in zip(case.names, node, strict=True)})
            groups = level.assign(s=frame["s"]).groupby(case.names)["s"].agg(["size", "nunique"])
            sizes = groups["size"][(groups["size"] >= k) & (groups["nunique"] >= 2)].to_numpy()
            want = table_risk(sizes, threshold=threshold, sampling_fraction=fraction)
            i = ds.lattice.index(node)
            for name in FIGURES:
                assert got[name][i] == pytest.approx(getattr(want, name), rel=1e-12, abs=1e-15), (node, k, name)


@pytest.mark.parametrize("name", ["threshold", "sampling_fraction"])
@pytest.mark.parametrize("value", [0, -0.1, 1.5, float("nan"), float("inf")])
def test_shares_outside_zero_one_are_refused(name, value):
    arguments = {"threshold": 0.2, name: value}
    with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter must be in \(0, 1\]") as error:
        table_risk([3, 4], **arguments)
    assert error.value.parameter == name
    with pytest.raises(InvalidParameterError, match=name):
        node_risk(tiny_profile(), 1, **arguments)


@pytest.mark.parametrize("value", [True, "0.2", None])
def test_a_threshold_that_is_not_a_number_is_a_type_error(value):
    with pytest.raises(TypeError, match="'threshold' parameter must be a real number"):
        table_risk([3], threshold=value)


@pytest.mark.parametrize(("arguments", "parameter", "match"), [
    ({"sizes": [3, 0]}, "sizes", "at least 1. Got 0 at class 1"),
    ({"sizes": [3, -2]}, "sizes", "at least 1"),
    ({"sizes": [2.5, 3.0]}, "sizes", "integer class sizes"),
    ({"sizes": [[1, 2]]}, "sizes", "1-D"),
    ({"population_sizes": [5]}, "population_sizes", "one size per class"),
    ({"population_sizes": [5, 3]}, "population_sizes", "Got 3.0 for class 1 of sample size 4"),
    ({"population_sizes": [5, float("nan")]}, "population_sizes", "finite"),
    ({"population_sizes": [5, 9], "sampling_fraction": 0.5}, "population_sizes", "not both"),
])
def test_bad_sizes_are_refused_by_name(arguments, parameter, match):
    arguments = {"sizes": [3, 4], "threshold": 0.2} | arguments
    with pytest.raises(InvalidParameterError, match=match) as error:
        table_risk(arguments.pop("sizes"), **arguments)
    assert error.value.parameter == parameter


def tiny_profile():
    ds = load_dataset(pd.DataFrame({"q": ["a", "b"]}), qi=["q"], hierarchies={"q": Hierarchy("q", (("a", "*"), ("b", "*")))})
    return build_profile(ds)


def test_node_risk_checks_k():
    for k in (0, 3):
        with pytest.raises(InvalidParameterError, match="'k' parameter"):
            node_risk(tiny_profile(), k, threshold=0.2)


def test_the_release_reports_prosecutor_figures_are_table_risks():
    from microrelease.core.release.class_risk import class_figures

    for sizes in ([1, 2, 3], [5], [4, 4, 7, 2, 9]):
        risk, report = table_risk(sizes, threshold=0.5), class_figures(sizes)["risk"]
        assert (report["highest"], report["average_prosecutor"]) == (risk.highest, risk.average)
    assert class_figures([])["risk"]["highest"] == table_risk([], threshold=0.5).highest == 0.0
