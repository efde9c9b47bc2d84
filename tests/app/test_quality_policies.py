"""ARX's quality models as policies from the command line and the dashboard's state: the best of every
satisfying node, said as such, with ARX's figures on adult."""

from __future__ import annotations

import json

import pytest

from microrelease.app.cli import main
from microrelease.app.explorer.explorer import Explorer
from microrelease.core import Criteria, load_sample
from microrelease.core.lattice.quality import QUALITY_MODELS

from quality_definitions import entropy_and_kl

QI = "sex,age,race,marital-status,education,native-country,workclass,occupation"


def test_search_with_the_loss_policy_finds_arx_s_optimum(capsys):
    assert main(["search", "--sample", "adult", "--qi", QI, "--k", "5", "--max-sup", "1%", "--policy", "loss",
                 "--json", "--quiet"]) == 0
    preferred = json.loads(capsys.readouterr().out)["preferred"]
    assert preferred["vector"] == [0, 3, 0, 1, 3, 1, 1, 2] and preferred["suppressed"] == 273
    assert preferred["among"] == "every satisfying node" and "best_k_minimal" in preferred
    assert preferred["score"] == pytest.approx(0.358785, abs=5e-7)  # ARX's Loss, for a steward to compare


def test_a_release_by_the_loss_policy_reports_its_loss_and_how_it_was_chosen(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["release", "--sample", "adult", "--qi", QI, "--k", "5", "--max-sup", "1%", "--policy", "loss",
                 "-o", str(out), "--quiet"]) == 0
    report = json.loads((tmp_path / "r.report.json").read_text())
    assert report["node"]["vector"] == [0, 3, 0, 1, 3, 1, 1, 2]
    assert report["metrics"]["quality"]["loss"] == pytest.approx(0.358785, abs=5e-7)
    assert "among every node that satisfies the question (ARX's optimum)" in report["decision"]["why"]
    assert report["decision"]["score"] == pytest.approx(0.358785, abs=5e-7)
    page = (tmp_path / "r.report.html").read_text()  # the page a person reads gives every quality figure
    for name in report["metrics"]["quality"]:
        assert f"{QUALITY_MODELS[name].label} (lower is better)</th>" in page
    assert "Loss (ARX) (lower is better)</th><td class=\"num\">0.3588" in page


@pytest.mark.parametrize("policy", ["loss", "nu-entropy", "kl-divergence"])
def test_a_quality_policy_under_l_diversity_picks_the_best_satisfying_node_by_its_own_classes(policy, capsys):
    """The classes failing the model are suppressed; the chosen node's figure, recounted from its classes,
    is the smallest among every node that satisfies (each recounted the same way)."""
    from microrelease.core.lattice.node_release import node_suppression
    from microrelease.core.lattice.quality import node_quality
    from microrelease.core.models.sensitive import prepare_models

    qi = "sex,age,race,marital-status"
    assert main(["search", "--sample", "adult", "--qi", qi, "--k", "5", "--max-sup", "2%", "--policy", policy,
                 "--sensitive", "salary-class", "--l-diversity", "distinct:2", "--json", "--quiet"]) == 0
    found = json.loads(capsys.readouterr().out)
    dataset = load_sample("adult", qi=tuple(qi.split(",")))
    frequency, models = prepare_models(dataset, "salary-class", {"l_diversity": "distinct:2"})
    max_sup = dataset.n_rows * 2 // 100
    figures = {}
    for node in dataset.lattice:
        s = node_suppression(dataset, node, Criteria.of(5, *models, sensitive=frequency))
        if s.sizes[s.suppressed].sum() <= max_sup:
            figures[node] = (node_quality(dataset.hierarchies, node, s.sizes, s.class_levels, s.suppressed,
                                          dataset.n_rows)
                             | entropy_and_kl(dataset.hierarchies, node, dataset.frequency, s.sizes,
                                              s.class_levels, s.suppressed))[policy]
    chosen = tuple(found["preferred"]["vector"])
    assert figures[chosen] == pytest.approx(found["preferred"]["score"], rel=1e-9)
    assert figures[chosen] == pytest.approx(min(figures.values()), rel=1e-9)


def test_choosing_loss_in_the_dashboard_builds_the_share_mass_once_and_prefers_arx_s_optimum():
    explorer = Explorer(dataset=load_sample("adult", qi=tuple(QI.split(","))))
    assert explorer.profile.quality is None  # the plain profile first: the page does not wait for it
    explorer.k, explorer.max_sup = 5, explorer.dataset.n_rows // 100
    explorer.policy = "loss"
    assert explorer.profile.quality is not None and explorer.message == ""
    assert explorer.profile.lattice.node(explorer.preferred) == (0, 3, 0, 1, 3, 1, 1, 2)


@pytest.mark.parametrize("policy", ["nu-entropy", "kl-divergence", "dm-star"])
def test_figures_reading_the_suppressed_rows_are_not_published_in_a_release_report(policy, tmp_path):
    """Non-uniform entropy, KL and DM* read how the suppressed rows' values cluster: they choose the node,
    but neither the report's quality figures nor its decision give them."""
    out = tmp_path / "r.csv"
    assert main(["release", "--sample", "adult", "--qi", "sex,age,race", "--k", "5", "--max-sup", "1%", "--policy",
                 policy, "-o", str(out), "--quiet"]) == 0
    report = json.loads((tmp_path / "r.report.json").read_text())
    assert report["metrics"]["quality"] and not {"nu-entropy", "kl-divergence", "dm-star"} & set(report["metrics"]["quality"])
    assert report["decision"]["score"] is None and f"the policy {policy}" in report["decision"]["why"]
    assert report["metrics"]["suppressed"] > 0  # so the figures would have told something of the outliers


SCORED_WITHOUT_SHARE_MASS = [name for name, q in QUALITY_MODELS.items() if not q.needs_mass]


def test_the_policies_that_declare_reading_the_quality_profile_are_the_share_mass_models():
    from microrelease.core.lattice.policies import POLICIES

    assert {p.name for p in POLICIES.values() if p.reads_quality_profile} == {"loss", "nu-entropy", "kl-divergence"}
    assert {"height", "precision", "discernibility", "dm-star", "aecs"} <= set(SCORED_WITHOUT_SHARE_MASS)


@pytest.mark.parametrize("policy", SCORED_WITHOUT_SHARE_MASS)
def test_a_question_under_a_policy_not_reading_the_quality_profile_does_not_build_it(policy, capsys, monkeypatch):
    import microrelease.core.lattice.profile as profile_module
    from microrelease.core.lattice.profile import build_profile
    from microrelease.core.lattice.search import query

    qi = "sex,age,race,marital-status"
    dataset = load_sample("adult", qi=tuple(qi.split(",")))
    k, max_sup = 5, dataset.n_rows // 100
    expected = query(build_profile(dataset, quality=True), k, max_sup).preferred(policy).vector  # as before

    def refuse(*_, **__):
        raise AssertionError("the quality profile was built")

    monkeypatch.setattr(profile_module, "build_quality", refuse)
    assert main(["search", "--sample", "adult", "--qi", qi, "--k", str(k), "--max-sup", str(max_sup), "--policy",
                 policy, "--strategy", "profile", "--json", "--quiet"]) == 0
    assert tuple(json.loads(capsys.readouterr().out)["preferred"]["vector"]) == tuple(expected)
    explorer = Explorer(dataset=dataset)
    explorer.k, explorer.max_sup = k, max_sup
    explorer.policy = policy
    assert explorer.profile.quality is None and explorer.profile.lattice.node(explorer.preferred) == tuple(expected)
