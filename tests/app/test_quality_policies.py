"""ARX's quality models as policies from the command line and the dashboard's state: the best of every
satisfying node, said as such, with ARX's figures on adult."""

from __future__ import annotations

import json

import pytest

from microrelease.app.cli import main
from microrelease.app.explorer.state import Explorer
from microrelease.core import load_sample
from microrelease.core.lattice.quality import QUALITY_MODELS

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


def test_loss_with_a_privacy_model_is_refused_naming_the_policy(capsys):
    code = main(["search", "--sample", "adult", "--k", "5", "--policy", "loss", "--sensitive", "salary-class",
                 "--l-diversity", "distinct:2", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("microrelease: error: --policy: the policy 'loss' does not yet take")


def test_choosing_loss_in_the_dashboard_builds_the_share_mass_once_and_prefers_arx_s_optimum():
    explorer = Explorer(dataset=load_sample("adult", qi=tuple(QI.split(","))))
    assert explorer.profile.quality is None  # the plain profile first: the page does not wait for it
    explorer.k, explorer.max_sup = 5, explorer.dataset.n_rows // 100
    explorer.policy = "loss"
    assert explorer.profile.quality is not None and explorer.message == ""
    assert explorer.profile.lattice.node(explorer.preferred) == (0, 3, 0, 1, 3, 1, 1, 2)
