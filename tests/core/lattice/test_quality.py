"""ARX's quality models for every node from the profile: against ARX's own optima on adult, and against
definitions written here row by row on small random tables (no code of quality.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sweeps import sweep

from microrelease.core import Criteria
from microrelease.core.data.dataset import load_dataset
from microrelease.core.data.samples import load_sample
from microrelease.core.lattice.profile import build_profile
from microrelease.core.lattice.quality import QUALITY_MODELS, optimum
from microrelease.core.lattice.search import query

from quality_definitions import brute_force, random_table

ADULT_QI = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation")


@pytest.fixture(scope="module")
def adult():
    return build_profile(load_sample("adult", qi=ADULT_QI), quality=True)


def test_the_loss_and_height_optima_are_arx_s_on_adult(adult):
    """ARX's optima and values for this data and these hierarchies (issue 17): MaxSup 1 % = ⌊0.01 n⌋ rows."""
    answer = query(adult, 5, 0)
    best, _ = optimum(answer, "loss")
    assert answer.lattice.node(best) == (0, 4, 0, 2, 3, 2, 2, 1)
    assert QUALITY_MODELS["loss"].score(adult, 5)[best] == pytest.approx(0.591585, abs=5e-7)
    height, _ = optimum(answer, "height")
    assert answer.lattice.node_heights[height] == 13
    answer = query(adult, 5, adult.n_rows // 100)
    best, _ = optimum(answer, "loss")
    assert answer.lattice.node(best) == (0, 3, 0, 1, 3, 1, 1, 2)
    assert QUALITY_MODELS["loss"].score(adult, 5)[best] == pytest.approx(0.358785, abs=5e-7)
    assert answer.stats.suppressed[best] == 273


def test_the_compiled_profile_has_the_plain_profile_s_histograms_and_the_direct_path_s_masses(adult):
    plain = build_profile(load_sample("adult", qi=ADULT_QI[:5]))
    compiled = build_profile(load_sample("adult", qi=ADULT_QI[:5]), quality=True, strategy="numba")
    direct = build_profile(load_sample("adult", qi=ADULT_QI[:5]), quality=True, strategy="direct")
    for p in (compiled, direct):
        assert np.array_equal(p.offsets, plain.offsets) and np.array_equal(p.sizes, plain.sizes)
        assert np.array_equal(p.counts, plain.counts)
    np.testing.assert_allclose(compiled.quality.mass, direct.quality.mass, rtol=1e-12)


@pytest.mark.parametrize("seed", sweep(range(6)))
def test_every_model_at_every_node_equals_its_definition(seed, tmp_path):
    rng = np.random.default_rng(seed)
    table, hierarchies = random_table(rng, int(rng.integers(5, 60)))
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    dataset = load_dataset(path, qi=("age", "sex", "zip"), hierarchies={h.attribute: h for h in hierarchies})
    profile = build_profile(dataset, quality=True)
    for k in (1, 2, 3, 5):
        scores = {name: q.score(profile, k) for name, q in QUALITY_MODELS.items()}
        for i, node in enumerate(profile.lattice):
            expected = brute_force(table, hierarchies, node, k)
            for name, value in expected.items():
                assert scores[name][i] == pytest.approx(value, rel=1e-9, abs=1e-12), (name, node, k)


@pytest.mark.parametrize("seed", sweep(range(4)))
def test_under_l_diversity_every_model_at_every_node_equals_its_definition(seed, tmp_path):
    """The classes failing distinct l-diversity are suppressed whatever k is; the compiled roll-up and the
    node-by-node path agree with the definitions."""
    from microrelease.core.models.model_profile import build_model_profile
    from microrelease.core.models.sensitive import prepare_models

    rng = np.random.default_rng(100 + seed)
    table, hierarchies = random_table(rng, int(rng.integers(8, 60)))
    table["disease"] = rng.choice(["flu", "cold", "ulcer"], len(table), p=[0.6, 0.3, 0.1])
    path = tmp_path / "t.csv"
    table.to_csv(path, index=False)
    dataset = load_dataset(path, qi=("age", "sex", "zip"), hierarchies={h.attribute: h for h in hierarchies},
                           sensitive=("disease",))
    frequency, models = prepare_models(dataset, "disease", {"l_diversity": "distinct:2"})
    for strategy in ("numba", "numpy"):
        profile = build_model_profile(dataset, frequency, models, strategy=strategy, quality=True)
        for k in (1, 2, 4):
            scores = {name: q.score(profile, k) for name, q in QUALITY_MODELS.items()}
            for i, node in enumerate(profile.lattice):
                expected = brute_force(table[["age", "sex", "zip"]], hierarchies, node, k, fails=lambda gen: (
                    table["disease"].groupby([gen[c] for c in gen.columns]).transform("nunique").to_numpy() < 2))
                for name, value in expected.items():
                    assert scores[name][i] == pytest.approx(value, rel=1e-9, abs=1e-9), (strategy, name, node, k)


def test_the_optimum_is_the_best_satisfying_node_and_the_best_k_minimal_one_is_given_too(adult):
    answer = query(adult, 5, adult.n_rows // 100)
    for name, model in QUALITY_MODELS.items():
        best, best_minimal = optimum(answer, name)
        score = np.round(model.score(adult, 5), 9)
        assert answer.satisfying[best] and answer.minimal[best_minimal]
        assert score[best] == score[answer.satisfying].min()
        assert score[best_minimal] == score[answer.minimal].min() >= score[best]


def test_dm_star_with_t_closeness_has_arx_s_optimum_and_counts_the_failing_classes():
    """ARX's DM* optimum on adult (QIs as below, sensitive occupation, equal-distance 0.2-closeness,
    k = 5, 4 % suppression): [1,4,1,0,3,2,2,1] with 311,880,088; the classes failing the model count."""
    from microrelease.core.models.model_profile import build_model_profile
    from microrelease.core.models.sensitive import prepare_models

    qi = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "salary-class")
    dataset = load_sample("adult", qi=qi)
    frequency, models = prepare_models(dataset, "occupation", {"t_closeness": "0.2:equal"})
    compiled = build_model_profile(dataset, frequency, models)
    assert np.array_equal(compiled.failing_sq, build_model_profile(dataset, frequency, models, strategy="numpy").failing_sq)
    answer = query(compiled, 5, "4%")
    best, _ = optimum(answer, "dm-star")
    assert answer.lattice.node(best) == (1, 4, 1, 0, 3, 2, 2, 1)
    assert QUALITY_MODELS["dm-star"].score(compiled, 5)[best] == 311_880_088
    # the failing classes' squares are those of the classes a node's release drops for the model
    from microrelease.core.lattice.node_release import node_suppression

    node = answer.lattice.node(best)
    suppression = node_suppression(dataset, node, Criteria.of(5, *models, sensitive=frequency))
    failing = np.zeros(len(suppression.sizes), dtype=bool)
    for fails in suppression.failing.values():
        failing |= fails
    assert compiled.failing_sq[best] == (suppression.sizes[failing].astype(np.int64) ** 2).sum()



def test_nu_entropy_where_every_class_fails_a_model_at_every_node():
    """Height-0 hierarchies, two one-row classes, distinct 2-diversity: every class fails everywhere, no
    (size, count) pair is kept, and the entropy reads the failing classes alone (it indexed the empty
    pairs); the pruned search gives the same score."""
    from microrelease.core import (
        Criteria,
        Hierarchy,
        build_model_profile,
        load_dataset,
        prepare_models,
        query,
    )
    from microrelease.core.search import search_pruned

    frame = pd.DataFrame({"a": ["x", "x"], "b": ["u", "v"], "s": ["p", "q"]})
    ds = load_dataset(frame, qi=["a", "b"], hierarchies={"a": Hierarchy("a", (("x",),)),
                                                        "b": Hierarchy("b", (("u",), ("v",)))}, sensitive=["s"])
    prepared = prepare_models(ds, "s", {"l_diversity": "distinct:2"})
    answer = query(build_model_profile(ds, prepared.sensitive_frequency, prepared.models, quality=True), 1, 2)
    best = answer.preferred("nu-entropy")
    pruned = search_pruned(ds, Criteria.of(1, *prepared.models, sensitive=prepared.sensitive_frequency), 2,
                           "nu-entropy")
    assert best.suppressed == 2 and pruned.preferred("nu-entropy").vector == best.vector
    assert pruned.score("nu-entropy", best.vector) == pytest.approx(answer.score("nu-entropy", best.vector))
