"""k-map on the command line: search and release with --k-map K --population FILE (or the bundled
adult-sample, whose population is the whole adult table); the release's classes are re-counted in
the population independently here."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from adult_k_map import QI, generalized, population_counts

from microrelease.app.cli import main
from microrelease.core.data.samples import sample


@pytest.mark.parametrize("node", [None, "0,2,1,1,2,2,2,1"])
def test_release_under_k_map_has_K_population_records_per_class(tmp_path, capsys, node):
    out = tmp_path / "r.csv"
    argv = ["release", "--sample", "adult-sample", "--k", "1", "--k-map", "5", "--max-sup", "5%", "-o", str(out),
            "--quiet"]
    assert main([*argv, *(["--node", node] if node else [])]) == 0
    report = json.loads((tmp_path / "r.report.json").read_text())
    vector = report["node"]["vector"]
    released = pd.read_csv(out, dtype=str, keep_default_na=False).groupby(QI).size()
    population = population_counts(vector).reindex(released.index, fill_value=0)
    assert (population >= 5).all() and len(released) > 0
    assert report["parameters"]["k_map"]["population"]["rows"] == 30162
    checks = {c["check"]: c for c in report["verification"]}
    assert checks["5-map"]["passed"] and "classes pass" in checks["5-map"]["detail"]
    by_model = report["counts"]["suppressed_by_reason"]["by_model"]
    assert report["counts"]["suppressed_rows"] == by_model["5-map"]  # k = 1: only k-map suppresses
    assert (tmp_path / "r.report.html").exists()


def test_search_k_minimal_nodes_meet_k_map_and_nodes_below_do_not(capsys):
    assert main(["search", "--sample", "adult-sample", "--k", "1", "--k-map", "5", "--json", "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["k_map"]["criterion"] == "5-map" and result["k_map"]["population_rows"] == 30162
    s = sample("adult-sample")
    frame = pd.read_csv(s.path, sep=";", dtype=str, keep_default_na=False)
    for minimal in result["k_minimal"][:3]:
        vector = minimal["vector"]
        keys = pd.MultiIndex.from_frame(generalized(frame, vector)).unique()
        assert (population_counts(vector).reindex(keys, fill_value=0) >= 5).all()
        lower = list(vector)
        lower[next(i for i, d in enumerate(vector) if d > 0)] -= 1  # one step down fails (MaxSup 0)
        keys = pd.MultiIndex.from_frame(generalized(frame, lower)).unique()
        assert (population_counts(lower).reindex(keys, fill_value=0) < 5).any()


@pytest.mark.parametrize(("extra", "flag"), [
    (["--k-map", "5"], "--population"),  # adult has no bundled population
    (["--k-map", "0", "--population", "x.csv"], "--k-map"),
    (["--population", "x.csv"], "--k-map"),
    (["--k-map", "5", "--population", "x.csv", "--strategy", "direct"], "--strategy"),
])
def test_bad_k_map_flags_are_refused_by_name(capsys, extra, flag):
    assert main(["search", "--sample", "adult", "--k", "1", *extra, "--quiet"]) == 2
    assert flag in capsys.readouterr().err


def test_population_missing_a_sample_row_is_refused_naming_the_flag(tmp_path, capsys):
    s = sample("adult-sample")
    frame = pd.read_csv(s.path, sep=";", dtype=str, keep_default_na=False)
    frame.iloc[1:].to_csv(tmp_path / "pop.csv", index=False)
    assert main(["search", "--sample", "adult-sample", "--k", "1", "--k-map", "2", "--population",
                 str(tmp_path / "pop.csv"), "--quiet"]) == 2
    assert "--population" in capsys.readouterr().err


def test_search_by_loss_under_k_map_gives_the_release_s_own_loss(tmp_path, capsys):
    """A quality policy under k-map (its quality profile rolled up for K): the node it prefers, released,
    reports the Loss the search gave."""
    qi = "sex,age,race,marital-status"
    assert main(["search", "--sample", "adult-sample", "--qi", qi, "--k", "1", "--k-map", "5", "--max-sup", "1%",
                 "--policy", "loss", "--json", "--quiet"]) == 0
    preferred = json.loads(capsys.readouterr().out)["preferred"]
    out = tmp_path / "r.csv"
    assert main(["release", "--sample", "adult-sample", "--qi", qi, "--k", "1", "--k-map", "5", "--max-sup", "1%",
                 "--policy", "loss", "-o", str(out), "--quiet"]) == 0
    report = json.loads((tmp_path / "r.report.json").read_text())
    assert report["node"]["vector"] == preferred["vector"]
    assert report["metrics"]["quality"]["loss"] == pytest.approx(preferred["score"], rel=1e-9)


@pytest.mark.parametrize("big_k", ["30163", "99999999999999999999"])
def test_a_k_above_the_population_s_rows_is_refused_naming_the_flag(capsys, big_k):
    assert main(["search", "--sample", "adult-sample", "--k", "1", "--k-map", big_k, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--k-map" in err and "population's rows (30162)" in err


def test_release_under_k_map_beside_l_diversity_holds_both_on_the_written_file(tmp_path):
    """k-map with l-diversity (one question: answered by the pruned search): every released class has >= 5 population
    records and 2 distinct salary classes, counted here from the files; the Loss the search gave is the
    release's."""
    out = tmp_path / "r.csv"
    assert main(["release", "--sample", "adult-sample", "--k", "2", "--k-map", "5", "--sensitive", "salary-class",
                 "--l-diversity", "distinct:2", "--max-sup", "2%", "--policy", "loss", "-o", str(out), "--quiet"]) == 0
    report = json.loads((tmp_path / "r.report.json").read_text())
    vector = report["node"]["vector"]
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    classes = written.groupby(QI)
    population = population_counts(vector).reindex(classes.size().index, fill_value=0)
    assert len(written) > 0 and (population >= 5).all() and (classes["salary-class"].nunique() >= 2).all()
    assert (classes.size() >= 2).all()
    assert report["parameters"]["criteria"] == {"k-anonymity": "2", "distinct-l-diversity": "distinct:2",
                                                "k-map": "5"}
    checks = {c["check"]: c["passed"] for c in report["verification"]}
    assert checks["5-map"] and checks["distinct 2-diversity"] and checks["2-anonymity"]


@pytest.mark.parametrize("strategy", ["profile", "numpy"])
def test_search_under_k_map_beside_l_diversity_by_the_profile_equals_the_pruned_search(capsys, strategy):
    """The whole-lattice profile carrying k-map beside l-diversity (once refused by name) answers as the
    pruned search does: the k-minimal set and the Loss optimum with its score."""
    argv = ["search", "--sample", "adult-sample", "--qi", "sex,age,race,marital-status", "--k", "2", "--k-map", "5",
            "--sensitive", "salary-class", "--l-diversity", "distinct:2", "--max-sup", "2%", "--policy", "loss",
            "--json", "--quiet"]
    results = {}
    for chosen in ("pruned", strategy):
        assert main([*argv, "--strategy", chosen]) == 0
        results[chosen] = json.loads(capsys.readouterr().out)
    pruned, profile = results["pruned"], results[strategy]
    assert [m["vector"] for m in profile["k_minimal"]] == [m["vector"] for m in pruned["k_minimal"]]
    assert profile["preferred"]["vector"] == pruned["preferred"]["vector"]
    assert profile["preferred"]["score"] == pytest.approx(pruned["preferred"]["score"], rel=1e-9)
    assert profile["k_map"]["criterion"] == "5-map"
