"""The Explorer on a large lattice hands the sidebar's criteria to the pruned search: under distinct
2-diversity and under an average-risk limit its k-minimal set and preferred node are those of
``search_pruned`` called directly with the same Criteria, and, on a small table searched the large way,
those of the whole-lattice profile."""

from __future__ import annotations

import pytest

pn = pytest.importorskip("panel")

from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.explorer.large import Searcher  # noqa: E402
from microrelease.app.wide import wide_table  # noqa: E402
from microrelease.core import load_dataset  # noqa: E402
from microrelease.core.criteria.criteria_set import Criteria  # noqa: E402
from microrelease.core.criteria.registry import parse_criterion  # noqa: E402
from microrelease.core.models.sensitive import prepare_models  # noqa: E402
from microrelease.core.search import search_pruned  # noqa: E402

SENSITIVE = "salary-class"
ASKED = {"models": {"sensitive_attribute": SENSITIVE, "l_kind": "distinct", "l": 2}, "risk": {"max_risk": 0.02}}


def table(n_qi: int):
    """Adult's first rows over ``n_qi`` QIs (synthetic ones past 9), salary-class left as the sensitive attribute."""
    frame, qi, hierarchies = wide_table(max(n_qi + 1, 9) if n_qi >= 9 else 9, rows=3000)
    qi = tuple(q for q in qi if q != SENSITIVE)[:n_qi]
    return load_dataset(frame, qi=qi, hierarchies={q: hierarchies[q] for q in qi})


def direct(dataset, kind: str, k: int, max_sup: int, policy: str):
    """search_pruned under the same criteria, built here from text as the command line builds them."""
    if kind == "models":
        prepared = prepare_models(dataset, SENSITIVE, {"l_diversity": "distinct:2"})
        criteria = Criteria.of(k, *prepared.models, sensitive=prepared.sensitive_frequency)
    else:
        criteria = Criteria.of(k, parse_criterion("max_risk", "0.02"))
    return search_pruned(dataset, criteria, max_sup, policy)


@pytest.fixture(scope="module")
def wide():
    return table(10)


@pytest.mark.parametrize("kind", list(ASKED))
def test_large_mode_answers_each_criterion_as_the_pruned_search(wide, kind):
    e = Explorer(wide, k=3, max_sup=30)
    assert e.large
    e.param.update(**ASKED[kind])
    for policy in ("min-relative", "loss"):
        e.policy = policy
        core = direct(wide, kind, 3, 30, policy)
        assert e.answer.k_minimal_indices.tolist() == core.k_minimal_indices.tolist()
        assert list(e.lattice.node(e.preferred)) == list(core.preferred(policy).vector)
        assert e.answer.described == tuple(c.describe() for c in core.search.criteria.others)
    plain = search_pruned(wide, 3, 30, "loss")
    assert e.answer.k_minimal_indices.tolist() != plain.k_minimal_indices.tolist()  # the criterion mattered
    if kind == "models":  # the release and the details read the models the answer was searched under
        assert [m.describe() for m in e.applied_models] == ["distinct 2-diversity"]


@pytest.mark.parametrize("kind", list(ASKED))
def test_on_a_small_table_the_large_way_answers_as_the_profile(kind):
    dataset = table(4)
    profile = Explorer(dataset, k=3, max_sup=20)
    large = Explorer(k=3, max_sup=20)
    large.load(dataset, searcher=Searcher(dataset))
    assert not profile.large and large.large
    for e in (profile, large):
        e.param.update(**ASKED[kind])
    assert profile.applied_models or kind == "risk"
    assert large.answer.k_minimal_indices.tolist() == sorted(
        profile.answer.k_minimal_indices.tolist(), key=lambda i: (profile.lattice.node_heights[i], i))
    assert large.preferred == profile.preferred


def test_models_without_a_sensitive_attribute_are_said(wide):
    e = Explorer(wide, k=3, max_sup=30)
    e.param.update(l_kind="distinct", l=2)
    assert "sensitive attribute" in e.message and not e.applied_models


def test_large_mode_answers_k_map_against_a_given_population_as_the_pruned_search(wide):
    """A population given with the table (``--population``): k-map goes to the pruned search bound to it,
    beside distinct 2-diversity too; the answer is search_pruned's under the same Criteria."""
    import pandas as pd

    from microrelease.app.explorer.population import PopulationTable
    from microrelease.core.risk.k_map import KMap, code_population

    population = PopulationTable(pd.concat([wide.table] * 3, ignore_index=True).astype(str), "population.csv")
    e = Explorer(k=2, max_sup=30, population=population)
    e.load(wide)
    assert e.large and e.population_name == "population.csv"
    bound = KMap(12, code_population(population.table, wide, source="population.csv"))
    plain = search_pruned(wide, 2, 30, "loss")
    for asked, models in (({"k_map": 12}, ()), ({**ASKED["models"], "k_map": 12}, ("distinct:2",))):
        e.param.update(**asked)
        e.policy = "loss"
        others = (bound,)
        sensitive = None
        if models:
            prepared = prepare_models(wide, SENSITIVE, {"l_diversity": models[0]})
            others, sensitive = (*prepared.models, bound), prepared.sensitive_frequency
        core = search_pruned(wide, Criteria.of(2, *others, sensitive=sensitive), 30, "loss")
        assert e.answer.k_minimal_indices.tolist() == core.k_minimal_indices.tolist()
        assert list(e.lattice.node(e.preferred)) == list(core.preferred("loss").vector)
        assert "12-map" in " ".join(e.answer.described)
        assert e.answer.k_minimal_indices.tolist() != plain.k_minimal_indices.tolist()  # k-map mattered
