"""The model profile carrying k-map (El Emam & Dankar) beside l-diversity / t-closeness in one walk
equals brute force: every node generalized row by row with dictionaries (tests/brute.py), its sample
classes' sensitive values and its population classes counted with Counter, and each check applied
to each class directly (the l-diversities and t-closeness's equal and ordered grounds by their
formulas here; the hierarchical ground by the model's own one-class check). A class is suppressed
when it is smaller than k, fails a model, or has fewer than K population records. The compiled walk
equals the numpy walk, quality figures included."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microrelease.core import POLICIES, Hierarchy, build_model_profile, load_dataset, prepare_models, query
from microrelease.core.models.privacy_model import TOLERANCE
from microrelease.core.risk.k_map import KMap, code_population

from brute import all_nodes, level_maps
from strategies import random_cases

MODELS = [{"l_diversity": "distinct:2"}, {"l_diversity": "entropy:1.5"}, {"l_diversity": "recursive:2:2"},
          {"t_closeness": "0.3"}, {"t_closeness": "0.4:ordered"}, {"t_closeness": "0.5:hierarchical"},
          {"l_diversity": "distinct:2", "t_closeness": "0.4"}]
SECRET_HIERARCHY = Hierarchy("secret", (("a", "ab", "*"), ("b", "ab", "*"), ("c", "c", "*")))


@st.composite
def k_map_cases(draw):
    """A random table with a sensitive column ``secret``, a population holding it and more rows (whose
    QI combinations the sample may lack: classes of the population alone), and K."""
    case = draw(random_cases(max_qis=3, max_rows=20))
    secret = draw(st.lists(st.sampled_from("abc"), min_size=len(case.table), max_size=len(case.table)))
    grounds = [[r[0] for r in rows] for rows in case.hierarchy_rows]
    extra = draw(st.lists(st.tuples(*(st.sampled_from(g) for g in grounds)), max_size=15))
    return case, secret, extra, draw(st.integers(1, 8)), draw(st.sampled_from(MODELS))


def _setup(case, secret, extra, spec):
    frame = case.frame().assign(secret=secret)
    ds = load_dataset(frame, qi=case.names, hierarchies=case.hierarchies(), sensitive=["secret"])
    population = code_population(pd.DataFrame([*case.table, *extra], columns=case.names), ds)
    prepared = prepare_models(ds, "secret", spec, hierarchy=SECRET_HIERARCHY)
    return ds, population, prepared


def _fails(model, counts: np.ndarray, table: np.ndarray) -> bool:
    """Whether one class (its counts over the sensitive labels) fails ``model``, by the paper's formula;
    ``table``: the whole input's counts (t-closeness's reference distribution)."""
    p, table_p = counts / counts.sum(), table / table.sum()
    if model.name == "distinct-l-diversity":  # Machanavajjhala et al.: at least l distinct values
        return int((counts > 0).sum()) < model.l
    if model.name == "entropy-l-diversity":  # -Σ p log p >= log l
        return -sum(x * math.log(x) for x in p if x > 0) < math.log(model.l) - TOLERANCE
    if model.name == "recursive-cl-diversity":  # r_1 < c (r_l + ... + r_m)
        ranked = sorted(counts.tolist(), reverse=True)
        tail = sum(ranked[model.l - 1:])
        return not (tail > 0 and ranked[0] / tail < model.c)
    if model.ground == "equal":  # Li et al.: EMD with equal distances, half the L1 distance
        return 0.5 * float(np.abs(p - table_p).sum()) > model.t + TOLERANCE
    if model.ground == "ordered":  # Li et al.: the cumulative differences, over m - 1
        m = len(p)
        emd = sum(abs(float(np.sum(p[:i + 1] - table_p[:i + 1]))) for i in range(m - 1)) / (m - 1) if m > 1 else 0.0
        return emd > model.t + TOLERANCE
    return not bool(model.satisfies_counts(counts[None, :], table)[0])  # hierarchical: the model's one-class check


def brute_node(case, secret, extra, labels, models, big_k, node, table):
    """(failing rows per check by description, rows failing any check, sizes of the passing classes)."""
    maps = [level_maps(rows) for rows in case.hierarchy_rows]

    def key(row):
        return tuple(maps[i][d][row[i]] for i, d in enumerate(node))

    values = {}
    for row, s in zip(case.table, secret, strict=True):
        values.setdefault(key(row), Counter())[s] += 1
    population = Counter(key(row) for row in [*case.table, *extra])
    by_check = {m.describe(): 0 for m in models} | {f"{big_k}-map": 0}
    failing, passing = 0, []
    for k, counter in values.items():
        counts = np.array([counter[label] for label in labels], dtype=float)
        size = int(counts.sum())
        bad = False
        for m in models:
            if _fails(m, counts, table):
                by_check[m.describe()] += size
                bad = True
        if population[k] < big_k:
            by_check[f"{big_k}-map"] += size
            bad = True
        if bad:
            failing += size
        else:
            passing.append(size)
    return by_check, failing, passing


@settings(max_examples=60, deadline=None)
@given(k_map_cases(), st.sampled_from(["numba", "numpy"]))
def test_k_map_beside_models_equals_brute_force(data, strategy):
    case, secret, extra, big_k, spec = data
    try:
        ds, population, prepared = _setup(case, secret, extra, spec)
    except Exception:  # a model that does not fit these values (l above the distinct values): refused alike
        return
    sf, models = prepared.sensitive_frequency, prepared.models
    big_k = min(big_k, population.n_rows)
    profile = build_model_profile(ds, sf, models, k_map=KMap(big_k, population), strategy=strategy)
    assert [m.describe() for m in profile.models] == [*(m.describe() for m in models), f"{big_k}-map"]
    table = np.asarray(sf.table_counts, dtype=float)
    answers = {max_sup: query(profile, case.k, max_sup) for max_sup in (0, case.max_sup)}
    for node in all_nodes(case.heights):
        i = ds.lattice.index(node)
        by_check, failing, passing = brute_node(case, secret, extra, list(sf.labels), models, big_k, node, table)
        assert {name: int(rows[i]) for name, rows in profile.failing_by_model.items()} == by_check, node
        assert int(profile.failing_rows[i]) == failing
        sizes, counts = profile.histogram(node)
        assert sorted(np.repeat(sizes, counts).tolist()) == sorted(passing)
        suppressed = failing + sum(s for s in passing if s < case.k)
        for max_sup, answer in answers.items():
            assert int(answer.stats.suppressed[i]) == suppressed
            assert int(answer.stats.distinct[i]) == sum(1 for s in passing if s >= case.k)
            assert bool(answer.satisfying[i]) == (suppressed <= max_sup), (node, max_sup)


QUALITY_POLICIES = [p for p in POLICIES if POLICIES[p].quality]


@settings(max_examples=40, deadline=None)
@given(k_map_cases())
def test_compiled_and_numpy_walks_agree_with_quality(data):
    case, secret, extra, big_k, spec = data
    try:
        ds, population, prepared = _setup(case, secret, extra, spec)
    except Exception:
        return
    k_map = KMap(min(big_k, population.n_rows), population)
    compiled, plain = (build_model_profile(ds, prepared.sensitive_frequency, prepared.models, k_map=k_map,
                                           strategy=s, quality=True) for s in ("numba", "numpy"))
    for name in ("offsets", "sizes", "counts", "failing_rows", "failing_sq"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(plain, name), err_msg=name)
    assert compiled.failing_by_model.keys() == plain.failing_by_model.keys()
    for name in plain.failing_by_model:
        np.testing.assert_array_equal(compiled.failing_by_model[name], plain.failing_by_model[name])
    every = np.arange(ds.lattice.size)
    for max_sup in (0, case.max_sup):
        a, b = query(compiled, case.k, max_sup), query(plain, case.k, max_sup)
        for policy in QUALITY_POLICIES:
            np.testing.assert_allclose(POLICIES[policy].score(ds.lattice, a.stats, every, None),
                                       POLICIES[policy].score(ds.lattice, b.stats, every, None),
                                       rtol=1e-9, atol=1e-12, err_msg=policy)


def test_a_k_map_that_is_no_kmap_is_refused_by_name():
    from microrelease.core import InvalidParameterError

    frame = pd.DataFrame({"q": ["x", "y", "x", "y"], "secret": ["a", "b", "b", "a"]})
    ds = load_dataset(frame, qi=["q"], hierarchies={"q": Hierarchy("q", (("x", "*"), ("y", "*")))},
                      sensitive=["secret"])
    prepared = prepare_models(ds, "secret", MODELS[0])
    for k_map, parameter in ((KMap(5), "population"), (5, "k_map")):
        with pytest.raises(InvalidParameterError) as caught:
            build_model_profile(ds, prepared.sensitive_frequency, prepared.models, k_map=k_map)
        assert caught.value.parameter == parameter
