"""Risk-based privacy models on the command line: search and release honour --max-risk,
--max-records-at-risk and --max-uniqueness; the release re-checks them on the written file."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from microrelease.app.cli import main
from microrelease.core.risk.uniqueness import dankar

QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]


def released_sizes(path) -> pd.Series:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    return frame.groupby(QI).size()


def test_a_release_under_every_risk_criterion_meets_them_on_the_written_file(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["release", "--sample", "adult", "--k", "2", "--max-sup", "1%", "--max-risk", "0.05",
                 "--max-records-at-risk", "0.2:0.01", "--max-uniqueness", "0.001:0.1", "-o", str(out),
                 "--quiet"]) == 0
    sizes = released_sizes(out).to_numpy()
    assert len(sizes) / sizes.sum() <= 0.05  # average prosecutor risk, by definition
    assert sizes[sizes < 5].sum() / sizes.sum() <= 0.01  # records in classes with risk 1/size > 0.2
    values = pd.Series(sizes).value_counts().sort_index()
    assert dankar(values.index.to_numpy(), values.to_numpy(), 0.1).share <= 0.001
    report = json.loads((tmp_path / "r.report.json").read_text())
    checked = {c["check"]: c["passed"] for c in report["verification"]}
    assert all(checked[c] for c in report["parameters"]["risk_criteria"]) and len(report["parameters"]["risk_criteria"]) == 3


def test_search_chooses_among_the_nodes_meeting_the_average_risk(capsys):
    assert main(["search", "--sample", "adult", "--k", "2", "--max-sup", "1%", "--max-risk", "0.01", "--json",
                 "--quiet"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert plain["risk_criteria"] == ["average re-identification risk <= 0.01"]
    assert main(["search", "--sample", "adult", "--k", "2", "--max-sup", "1%", "--json", "--quiet"]) == 0
    without = json.loads(capsys.readouterr().out)
    assert plain["preferred"]["vector"] != without["preferred"]["vector"]  # the criterion changed the answer
    preferred = plain["preferred"]
    assert preferred["distinct"] / (30162 - preferred["suppressed"]) <= 0.01


def test_a_named_node_that_fails_a_criterion_is_refused_before_writing(tmp_path, capsys):
    out = tmp_path / "r.csv"
    code = main(["release", "--sample", "adult", "--k", "2", "--max-sup", "1%", "--node", "0,4,0,0,2,1,0,2",
                 "--max-risk", "0.0001", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("microrelease: error: --max-risk: node [0, 4, 0, 0, 2, 1, 0, 2] does not")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("flag, spec", [("--max-risk", "0"), ("--max-records-at-risk", "0.2"),
                                        ("--max-uniqueness", "0.01:1.5")])
def test_bad_specs_name_their_flag(capsys, flag, spec):
    code = main(["search", "--sample", "adult", "--k", "2", flag, spec])
    assert code == 2 and capsys.readouterr().err.startswith(f"microrelease: error: {flag}: ")


def test_a_release_of_a_sample_reports_the_population_s_risk_from_the_written_file(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["release", "--sample", "adult", "--k", "2", "--max-sup", "1%", "--sampling-fraction", "0.1",
                 "-o", str(out), "--quiet"]) == 0
    population = json.loads((tmp_path / "r.report.json").read_text())["risk"]["population"]
    sizes = released_sizes(out).to_numpy()
    values = pd.Series(sizes).value_counts().sort_index()
    est = dankar(values.index.to_numpy(), values.to_numpy(), 0.1)
    assert population["uniques_share"] == (est.share if est.converged else None)
    assert population["population_records"] == pytest.approx(sizes.sum() / 0.1)
    assert "journalist_highest" not in population  # f / fraction is no population size (see docs/how-to/risk-and-k-map.md)
    page = (tmp_path / "r.report.html").read_text()
    assert "Population uniques, estimated" in page and "sampling fraction 0.1" in page
    code = main(["release", "--sample", "adult", "--k", "2", "--sampling-fraction", "1.5", "-o", str(tmp_path / "x.csv")])
    assert code == 2 and capsys.readouterr().err.startswith("microrelease: error: --sampling-fraction: ")
    assert not (tmp_path / "x.csv").exists()


def test_a_release_says_a_node_is_k_minimal_as_the_search_under_a_risk_limit_does(tmp_path, capsys):
    """The report's minimality reads the risk limit too: a node below that meets k and MaxSup but not the
    limit does not make the chosen node non-minimal (it did, before the limit was checked there)."""
    question = ["--sample", "adult", "--k", "2", "--max-sup", "5%", "--max-records-at-risk", "0.2:0.01", "--quiet"]
    assert main(["search", *question, "--json"]) == 0
    minimal = [n["vector"] for n in json.loads(capsys.readouterr().out)["k_minimal"]]
    assert main(["release", *question, "-o", str(tmp_path / "r.csv")]) == 0
    node = json.loads((tmp_path / "r.report.json").read_text())["node"]
    assert node["vector"] in minimal and node["k_minimal"] is True, node["k_minimal_detail"]
