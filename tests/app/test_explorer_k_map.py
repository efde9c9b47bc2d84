"""k-map in the dashboard's state: enabled by a known population, derived per K from one joint roll-up,
beside l-diversity / t-closeness the models' profile with the population joined in (answering as the
pruned search does), and the export writes the release the screen shows. Population
counts are re-counted here with pandas from the ARX hierarchy files (independent of the core's coding)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("panel")

from adult_k_map import QI, population_counts  # noqa: E402

from microrelease.app.cli import main  # noqa: E402
from microrelease.app.explorer.explorer import Explorer  # noqa: E402
from microrelease.app.tabs.compare.compare_state import CompareState  # noqa: E402
from microrelease.app.tabs.export.export_state import ExportState  # noqa: E402
from microrelease.core import Criteria, load_sample  # noqa: E402
from microrelease.core.data.samples import sample  # noqa: E402
from microrelease.core.search import search_pruned  # noqa: E402


@pytest.fixture(scope="module")
def explorer() -> Explorer:
    e = Explorer(load_sample("adult-sample"), k=1)
    e.k_map = 5  # the joint roll-up is built here and now (no page)
    return e


def test_k_map_is_enabled_by_a_known_population_only():
    assert Explorer(load_sample("adult-sample")).population_name == "adult.csv"
    plain = Explorer(load_sample("toy"))
    assert plain.population_name == ""
    plain.k_map = 3
    assert plain.applied_k_map is None and "population" in plain.message and not plain.profile.models


def test_the_dashboard_answers_k_map_as_the_command_line_does(explorer, capsys):
    for k_map, max_sup in ((5, 0), (10, 30)):
        explorer.k_map, explorer.max_sup = k_map, max_sup
        assert main(["search", "--sample", "adult-sample", "--k", "1", "--k-map", str(k_map), "--max-sup",
                     str(max_sup), "--json", "--quiet"]) == 0
        found = json.loads(capsys.readouterr().out)
        assert explorer.k_minimal_vectors() == [n["vector"] for n in found["k_minimal"]]
        assert list(explorer.lattice.node(explorer.preferred)) == found["preferred"]["vector"]
        assert explorer.applied_k_map.k == k_map and explorer.profile.models == (explorer.applied_k_map,)
    explorer.k_map, explorer.max_sup = 5, 0


def test_a_k_change_recolours_without_a_new_roll_up_and_keeps_the_selection(explorer):
    joint = explorer.joint
    explorer.selected = int(explorer.preferred)
    before = explorer.status().copy()
    explorer.k_map = 50
    assert explorer.joint is joint and explorer.selected is not None
    after = explorer.status()
    assert (before != after).any()
    # more population records needed: a node satisfying 50-map satisfies 5-map
    assert not (explorer.answer.satisfying & (before == 0)).any()
    explorer.k_map = 5


def test_node_details_give_the_smallest_released_class_s_population(explorer):
    explorer.max_sup = 60
    try:
        for node in (int(explorer.preferred), int(np.flatnonzero(explorer.answer.satisfying)[-1])):
            vector = explorer.lattice.node(node)
            sizes = explorer.release(node).released.groupby(QI).size()  # generalized already
            population = population_counts(vector).reindex(sizes.index)
            assert (population >= 5).all()
            want = int(population[sizes == sizes.min()].min())
            assert explorer.smallest_released_population(node) == want
    finally:
        explorer.max_sup = 0


def test_k_map_beside_l_diversity_applies_the_model_profile_with_the_population():
    e = Explorer(load_sample("adult-sample"), k=2)
    e.max_sup = 60
    e.k_map = 5
    e.sensitive_attribute, e.l_kind = "salary-class", "distinct"
    assert e.message == "" and e.applied_k_map.k == 5 and len(e.applied_models) == 1
    assert [m.describe() for m in e.profile.models] == ["distinct 2-diversity", "5-map"]
    criteria = Criteria.of(2, *e.applied_models, e.applied_k_map, sensitive=e.applied_frequency)
    pruned = search_pruned(e.dataset, criteria, 60)
    assert e.k_minimal_vectors() == [list(n.vector) for n in pruned.k_minimal_nodes()]
    assert list(e.lattice.node(e.preferred)) == list(pruned.preferred(e.policy).vector)
    node = int(e.preferred)
    vector = e.lattice.node(node)
    released = e.release(node).released  # generalized already
    classes = released.groupby(QI)
    population = population_counts(vector).reindex(classes.size().index)
    assert len(released) > 0 and (population >= 5).all() and (classes["salary-class"].nunique() >= 2).all()
    assert e.dataset.n_rows - len(released) == e.answer.node(node).suppressed
    sizes = classes.size()
    assert e.smallest_released_population(node) == int(population[sizes == sizes.min()].min())
    export = ExportState(explorer=e)
    assert export.refusal(e.preferred) == ""
    assert export.decision().criteria.k_map is e.applied_k_map and export.decision().criteria.models == e.applied_models
    e.k_map = 10  # a new K: the models' profile with the population again
    assert e.applied_k_map.k == 10 and [m.describe() for m in e.profile.models] == ["distinct 2-diversity", "10-map"]
    e.l_kind = "none"  # the models let go: k-map alone, from the joint roll-up
    assert e.applied_k_map.k == 10 and e.applied_models == () and e.profile.models == (e.applied_k_map,)
    assert e.message == "" and export.refusal(e.preferred) == ""


def test_a_privacy_model_that_cannot_apply_refuses_the_export():
    e = Explorer(load_sample("adult"), k=5)
    e.sensitive_attribute, e.l_kind, e.l = "salary-class", "distinct", 5  # salary-class has 2 values
    assert not e.applied_models and e.message
    assert "privacy models" in ExportState(explorer=e).refusal(e.preferred)


def test_a_population_given_on_the_command_line_is_the_one_used_even_for_a_bundled_sample(tmp_path):
    from microrelease.app.explorer.population import PopulationTable, population_for

    frame = pd.read_csv(sample("adult-sample").population_path, sep=";", dtype=str, keep_default_na=False)
    given = PopulationTable(frame.head(20000), str(tmp_path / "mine.csv"))
    assert population_for(load_sample("adult-sample"), given) is given
    assert population_for(load_sample("adult-sample"), None).name == "adult.csv"


def test_a_quality_policy_under_k_map_prefers_what_the_command_line_prefers(explorer, capsys):
    """Choosing Loss rolls the K in force up again with the quality figures; K changes keep them."""
    explorer.max_sup = 30
    try:
        for k_map in (5, 10):
            explorer.k_map = k_map
            explorer.policy = "loss"
            assert explorer.profile.quality is not None and explorer.message == ""
            assert main(["search", "--sample", "adult-sample", "--k", "1", "--k-map", str(k_map), "--max-sup", "30",
                         "--policy", "loss", "--json", "--quiet"]) == 0
            found = json.loads(capsys.readouterr().out)["preferred"]
            assert list(explorer.lattice.node(explorer.preferred)) == found["vector"]
    finally:
        explorer.policy, explorer.max_sup, explorer.k_map = "min-relative", 0, 5
    assert explorer.message == "" and explorer.preferred is not None


def test_the_export_writes_the_k_map_the_screen_shows(explorer, tmp_path):
    explorer.max_sup = 60
    try:
        explorer.selected = None
        export = ExportState(explorer=explorer)
        assert export.decision().criteria.k_map is explorer.applied_k_map
        published = export.write(tmp_path / "r.csv")
        report = json.loads((tmp_path / "r.report.json").read_text())
        assert report["parameters"]["k_map"]["criterion"] == "5-map"
        assert report["node"]["vector"] == list(explorer.lattice.node(explorer.preferred))
        assert published is not None
        written = pd.read_csv(tmp_path / "r.csv", dtype=str, keep_default_na=False).groupby(QI).size()
        population = population_counts(report["node"]["vector"]).reindex(written.index, fill_value=0)
        assert (population >= 5).all()
        assert report["counts"]["suppressed_rows"] == explorer.answer.node(explorer.preferred).suppressed
    finally:
        explorer.max_sup = 0


def test_compare_distributions_hold_the_rows_k_map_releases(explorer):
    explorer.max_sup = 60
    try:
        s = CompareState(explorer=explorer)
        node = int(explorer.preferred)
        s.pins = [node]
        frame = s.distributions(max_bars=None)["sex"]
        mine = frame[frame["release"] == s.vector(node)]
        released = mine.loc[mine["value"] != "(suppressed)", "rows"].sum()
        assert released == len(explorer.release(node).released)
        assert explorer.dataset.n_rows - released == explorer.answer.node(node).suppressed
    finally:
        explorer.max_sup = 0


def test_a_k_map_above_the_population_s_rows_is_said_and_refuses_the_export():
    e = Explorer(load_sample("adult-sample"), k=1)
    e.k_map = 30163
    assert e.applied_k_map is None and "population's rows (30162)" in e.message
    assert "30163-map" in ExportState(explorer=e).refusal(e.preferred)
