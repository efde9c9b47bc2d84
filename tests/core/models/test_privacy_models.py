"""l-diversity and t-closeness: the paper's example, EMD against a transport LP, brute-force
properties on random tables, and named errors."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.optimize import linprog

from microrelease.core import (
    Criteria,
    DataError,
    Hierarchy,
    InvalidParameterError,
    build_profile,
    generalize,
    load_dataset,
    query,
)
from microrelease.core.models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
from microrelease.core.models.model_profile import build_model_profile, explain_node
from microrelease.core.models.sensitive import sensitive_frequency
from microrelease.core.models.t_closeness import TCloseness, emd_hierarchical

from brute import all_nodes, k_minimal, level_maps
from strategies import hierarchy_rows, random_cases

DISEASES = [
    ("gastric ulcer", "stomach disease", "digestive system disease", "respiratory & digestive disease"),
    ("gastritis", "stomach disease", "digestive system disease", "respiratory & digestive disease"),
    ("stomach cancer", "stomach disease", "digestive system disease", "respiratory & digestive disease"),
    ("flu", "respiratory infection", "vascular lung disease", "respiratory & digestive disease"),
    ("bronchitis", "respiratory infection", "vascular lung disease", "respiratory & digestive disease"),
    ("pneumonia", "respiratory infection", "vascular lung disease", "respiratory & digestive disease"),
]
LI_ET_AL = pd.DataFrame(
    [("47677", 29, 3, "gastric ulcer"), ("47602", 22, 4, "gastritis"), ("47678", 27, 5, "stomach cancer"),
     ("47905", 43, 6, "gastritis"), ("47909", 52, 11, "flu"), ("47906", 47, 8, "bronchitis"),
     ("47605", 30, 7, "bronchitis"), ("47673", 36, 9, "pneumonia"), ("47607", 32, 10, "stomach cancer")],
    columns=["ZIP", "Age", "Salary", "Disease"])
CLASSES = [["47677", "47678", "47673"], ["47905", "47909", "47906"], ["47602", "47605", "47607"]]


def transport_emd(p, q, ground) -> float:
    """EMD by a generic transport linear program: min Σ f_ij d_ij, Σ_j f_ij = p_i, Σ_i f_ij = q_j."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m:(i + 1) * m] = 1
        a_eq[m + i, i::m] = 1
    done = linprog(np.asarray(ground).reshape(-1), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    assert done.success
    return float(done.fun)


def hierarchical_ground(h: Hierarchy, values) -> np.ndarray:
    codes = h.codes
    return np.array([[min(level for level in range(h.height + 1)
                          if codes[level, h.index[a]] == codes[level, h.index[b]]) / h.height
                      for b in values] for a in values])


def class_counts(column: str, values: list) -> np.ndarray:
    rows = [LI_ET_AL[LI_ET_AL["ZIP"].isin(zips)][column].tolist() for zips in CLASSES]
    return np.array([[r.count(v) for v in values] for r in rows], dtype=float)


def test_li_et_al_example_ordered_salary_is_one_sixth():
    values = sorted(LI_ET_AL["Salary"])
    counts = class_counts("Salary", values)
    table = counts.sum(axis=0)
    emd = TCloseness(1, "ordered").statistic(counts, table)
    assert emd.max() == pytest.approx(1 / 6)
    ground = np.abs(np.subtract.outer(np.arange(9), np.arange(9))) / 8
    for row, value in zip(counts, emd, strict=True):
        assert value == pytest.approx(transport_emd(row / row.sum(), table / table.sum(), ground))


def test_li_et_al_example_hierarchical_disease_is_8_27():
    h = Hierarchy("Disease", tuple(DISEASES))
    values = [r[0] for r in DISEASES]
    counts = class_counts("Disease", values)
    table = counts.sum(axis=0)
    model = TCloseness(1, "hierarchical", h, tuple(h.index[v] for v in values))
    emd = model.statistic(counts, table)
    assert emd.max() == pytest.approx(8 / 27)  # the paper prints 0.278; its own formula gives 8/27
    ground = hierarchical_ground(h, values)
    for row, value in zip(counts, emd, strict=True):
        assert value == pytest.approx(transport_emd(row / row.sum(), table / table.sum(), ground))


@given(hierarchy_rows("s"), st.data())
def test_hierarchical_emd_equals_the_transport_lp(rows, data):
    h = Hierarchy("s", tuple(rows))
    if h.height == 0:
        return
    m = len(h.ground)
    p = np.array(data.draw(st.lists(st.integers(0, 5), min_size=m, max_size=m)), dtype=float)
    q = np.array(data.draw(st.lists(st.integers(0, 5), min_size=m, max_size=m)), dtype=float)
    if p.sum() == 0 or q.sum() == 0:
        return
    p, q = p / p.sum(), q / q.sum()
    ours = emd_hierarchical(p[None, :], q[None, :], h, np.arange(m))[0]
    assert ours == pytest.approx(transport_emd(p, q, hierarchical_ground(h, list(h.ground))), abs=1e-9)


# --- brute force on random tables ------------------------------------------------------------

def brute_satisfies(model, values: list[str], table_values: list[str], order: list[str]) -> bool:
    """The models' definitions written plainly, one class at a time."""
    counts = [values.count(v) for v in order]
    n = len(values)
    if isinstance(model, DistinctLDiversity):
        return len(set(values)) >= model.l
    if isinstance(model, EntropyLDiversity):
        return -sum(c / n * math.log(c / n) for c in counts if c) >= math.log(model.l) - 1e-12
    if isinstance(model, RecursiveCLDiversity):
        r = sorted(counts, reverse=True)
        return r[0] < model.c * sum(r[model.l - 1:])
    p = [c / n for c in counts]
    q = [table_values.count(v) / len(table_values) for v in order]
    if model.ground == "equal":
        emd = sum(abs(a - b) for a, b in zip(p, q, strict=True)) / 2
    else:
        cum, emd = 0.0, 0.0
        for a, b in zip(p[:-1], q[:-1], strict=True):
            cum += a - b
            emd += abs(cum)
        emd /= max(1, len(order) - 1)
    return emd <= model.t + 1e-12


@st.composite
def model_cases(draw):
    case = draw(random_cases(max_qis=2, max_rows=20))
    secrets = [draw(st.sampled_from(["1", "2", "3", "5"])) for _ in case.table]
    n_values = len(set(secrets))
    kind = draw(st.sampled_from(["distinct", "entropy", "recursive", "equal", "ordered"]))
    if kind == "distinct":
        model = DistinctLDiversity(draw(st.integers(1, n_values)))
    elif kind == "entropy":
        model = EntropyLDiversity(draw(st.floats(1, n_values)))
    elif kind == "recursive":
        model = RecursiveCLDiversity(draw(st.floats(0.5, 4)), draw(st.integers(1, n_values)))
    else:
        model = TCloseness(draw(st.floats(0.01, 1)), kind)
    return case, secrets, model


@given(model_cases())
def test_model_profile_matches_brute_force_is_monotone_and_releases_only_passing_classes(mc):
    case, secrets, model = mc
    table = pd.DataFrame(case.table, columns=case.names).assign(secret=secrets)
    hierarchies = {n: Hierarchy(n, tuple(rows)) for n, rows in zip(case.names, case.hierarchy_rows, strict=True)}
    ds = load_dataset(table, qi=case.names, hierarchies=hierarchies, sensitive=["secret"])
    sf = sensitive_frequency(ds, "secret")
    profile = build_model_profile(ds, sf, [model])
    stats = profile.stats(case.k)
    maps = [level_maps(rows) for rows in case.hierarchy_rows]
    order = list(sf.labels)
    for v in all_nodes(case.heights):
        classes: dict = {}
        for row, secret in zip(case.table, secrets, strict=True):
            classes.setdefault(tuple(maps[i][d][row[i]] for i, d in enumerate(v)), []).append(secret)
        expected = sum(len(vals) for vals in classes.values()
                       if len(vals) < case.k or not brute_satisfies(model, vals, secrets, order))
        assert stats.suppressed[ds.lattice.index(v)] == expected
    # The declared monotonicity holds. Without suppression (the published sense): where no class
    # fails the model, no class fails it higher up either. With suppression: the rows failing it
    # never grow up an edge (not declared by l-diversity or t-closeness: a failing class can drag a
    # passing one down when they merge).
    fails_model = profile.failing_rows > 0
    src, dst = ds.lattice.edges
    if model.monotone_generalization:
        assert not np.any(~fails_model[src] & fails_model[dst])
    if model.monotone_suppression:
        assert np.all(profile.failing_rows[dst] <= profile.failing_rows[src])
    # every class that a release keeps satisfies k and the model (checked with the plain definitions)
    v = all_nodes(case.heights)[-1 if len(secrets) % 2 else 0]
    released = generalize(ds, v, case.k, sensitive_frequency=sf, models=[model]).released
    for _, values in released.groupby(case.names)["secret"]:
        assert len(values) >= case.k and brute_satisfies(model, list(values), secrets, order)
    # the k-minimal set is exact: satisfying, and no satisfying node anywhere below
    answer = query(profile, case.k, case.max_sup)
    nodes = all_nodes(case.heights)
    sat = {v: bool(answer.satisfying[ds.lattice.index(v)]) for v in nodes}
    assert {answer.lattice.node(int(i)) for i in answer.k_minimal_indices} == k_minimal(nodes, sat)


@given(random_cases())
def test_without_extra_models_the_profile_is_plain_k_anonymity(case):
    table = pd.DataFrame(case.table, columns=case.names).assign(secret="x")
    hierarchies = {n: Hierarchy(n, tuple(rows)) for n, rows in zip(case.names, case.hierarchy_rows, strict=True)}
    ds = load_dataset(table, qi=case.names, hierarchies=hierarchies, sensitive=["secret"])
    plain, with_none = build_profile(ds), build_model_profile(ds, sensitive_frequency(ds, "secret"), [])
    for k in {1, case.k}:
        np.testing.assert_array_equal(plain.stats(k).suppressed, with_none.stats(k).suppressed)
        np.testing.assert_array_equal(plain.stats(k).distinct, with_none.stats(k).distinct)


def test_bad_models_are_named():
    ds = load_dataset(LI_ET_AL.astype(str), qi=["ZIP"], hierarchies={"ZIP": Hierarchy("ZIP", tuple(
        (z, z[:3] + "**", "*") for z in sorted(LI_ET_AL["ZIP"])))}, sensitive=["Disease"])
    sf = sensitive_frequency(ds, "Disease")
    with pytest.raises(DataError, match="'ZIP' is also a QI"):
        sensitive_frequency(ds, "ZIP")
    with pytest.raises(InvalidParameterError, match="l = 7 is larger than the 6 distinct values of 'Disease'"):
        build_model_profile(ds, sf, [DistinctLDiversity(7)])
    for t in (0, 1.5, -0.1):
        with pytest.raises(InvalidParameterError, match=r"'t' parameter must be in \(0, 1\]"):
            build_model_profile(ds, sf, [TCloseness(t)])
    with pytest.raises(InvalidParameterError, match="hierarchical t-closeness needs a hierarchy for 'Disease'"):
        build_model_profile(ds, sf, [TCloseness(0.3, "hierarchical")])


def adult_without_occupation():
    from microrelease.core.data.samples import sample

    adult = sample("adult")
    return load_dataset(adult.path, qi=[q for q in adult.qi if q != "occupation"], hierarchy_dir=adult.folder,
                        sensitive=["occupation"])


def test_release_under_a_model_suppresses_what_the_profile_says_and_rechecks_it(tmp_path):
    from microrelease.core import write_release

    ds = adult_without_occupation()
    sf = sensitive_frequency(ds, "occupation")
    models = [EntropyLDiversity(3)]
    answer = query(build_model_profile(ds, sf, models), 5, "1%")
    best = answer.preferred()
    report = write_release(ds, best.vector, tmp_path / "out.csv", criteria=Criteria.of(5, *models, sensitive=sf), max_sup=answer.max_sup).data
    assert report["counts"]["suppressed_rows"] == best.suppressed == report["metrics"]["suppressed"] and report["parameters"]["privacy_models"]
    back = pd.read_csv(tmp_path / "out.csv", dtype=str, keep_default_na=False)
    for _, values in back.groupby(list(ds.quasi_identifiers))["occupation"]:
        p = values.value_counts(normalize=True).to_numpy()
        assert -(p * np.log(p)).sum() >= math.log(3) - 1e-9 and len(values) >= 5
    # explain lists exactly the classes whose rows the model suppresses at that node (k = 1)
    profile = build_model_profile(ds, sf, models)
    i = ds.lattice.index(best.vector)
    failing = explain_node(ds, sf, best.vector, models, k=1)
    assert failing["size"].sum() == profile.failing_rows[i]
    assert (failing["entropy 3-diversity"] < 3).all()


def test_search_cli_with_models(capsys):
    import json

    from microrelease.app.cli import main

    qi = "sex,age,race,marital-status,education,native-country,workclass"
    assert main(["search", "--sample", "adult", "--qi", qi, "--sensitive", "occupation", "--l-diversity",
                 "entropy:3", "--t-closeness", "0.3:hierarchical", "--k", "5", "--max-sup", "1%", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["privacy_models"] == ["entropy 3-diversity", "0.3-closeness (hierarchical distance)"]
    assert result["sensitive"] == "occupation" and result["k_minimal"]
    for argv, message in [
        (["--sensitive", "occupation", "--l-diversity", "distinct:3"], "is given twice"),
        (["--qi", qi, "--sensitive", "occupation", "--l-diversity", "distinct:30"], "l = 30 is larger than the 14"),
        (["--qi", qi, "--sensitive", "occupation", "--t-closeness", "1.5"], "'t' parameter must be in (0, 1]"),
        (["--qi", qi, "--sensitive", "occupation", "--l-diversity", "many:3"],
         "--l-diversity: The 'l_diversity' parameter expects distinct:L, entropy:L or recursive:C:L; got 'many:3'"),
        (["--qi", qi, "--sensitive", "occupation", "--l-diversity", "distinct:3", "--engine", "duckdb"],
         "use --engine pandas"),
    ]:
        assert main(["search", "--sample", "adult", "--k", "5", *argv]) == 2
        assert message in capsys.readouterr().err


SECRET_TREE = Hierarchy("secret", (("1", "low", "*"), ("2", "low", "*"), ("3", "high", "*"), ("5", "high", "*")))


@given(model_cases(), st.floats(0.05, 1))
def test_compiled_and_numpy_model_profiles_agree(mc, t):
    case, secrets, model = mc
    table = pd.DataFrame(case.table, columns=case.names).assign(secret=secrets)
    hierarchies = {n: Hierarchy(n, tuple(rows)) for n, rows in zip(case.names, case.hierarchy_rows, strict=True)}
    ds = load_dataset(table, qi=case.names, hierarchies=hierarchies, sensitive=["secret"])
    sf = sensitive_frequency(ds, "secret", SECRET_TREE)
    models = [model, TCloseness(t, "hierarchical", SECRET_TREE, tuple(SECRET_TREE.index[v] for v in sf.labels))]
    compiled = build_model_profile(ds, sf, models, strategy="numba")
    plain = build_model_profile(ds, sf, models, strategy="numpy")
    for k in {1, case.k}:
        np.testing.assert_array_equal(compiled.stats(k).suppressed, plain.stats(k).suppressed)
        np.testing.assert_array_equal(compiled.stats(k).distinct, plain.stats(k).distinct)
    for name in plain.failing_by_model:
        np.testing.assert_array_equal(compiled.failing_by_model[name], plain.failing_by_model[name])


def test_the_model_profile_reports_progress_and_can_be_cancelled():
    from microrelease.core import Cancelled

    ds = adult_without_occupation()
    sf = sensitive_frequency(ds, "occupation")
    models = [EntropyLDiversity(3)]
    for strategy in ("numba", "numpy"):
        seen = []
        if strategy == "numba":  # the numpy oracle is slow on the whole adult lattice: cancelled only
            build_model_profile(ds, sf, models, strategy=strategy, progress=seen.append)
            assert seen[0] == 0.0 and seen[-1] == pytest.approx(1.0) and seen == sorted(seen) and len(seen) > 5
        calls = []

        def stop_after_three(calls=calls):
            calls.append(1)
            return len(calls) > 3

        with pytest.raises(Cancelled):
            build_model_profile(ds, sf, models, strategy=strategy, should_stop=stop_after_three)
        assert len(calls) == 4  # polled between chunks, and stopped at the first True
