"""The search command at many QIs: the strategy chosen by cost, a profile that would not fit refused before
any work, a 12-QI search answered within the memory budget, and the time-limited best effort."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from docs_text import page
from wide_data import wide_table

from microrelease.app.cli import main
from microrelease.core import write_arx

TESTS = Path(__file__).resolve().parents[1]
SEARCH_PAGE = page("explanation/samarati-lattice.md")  # the README's "Which search answers" moved there


def write_wide(tmp_path, n_qi: int):
    table, qi, hierarchies = wide_table(n_qi)
    data = tmp_path / "wide.csv"
    table[list(qi)].to_csv(data, index=False)
    for name in qi:
        write_arx(hierarchies[name], tmp_path / f"wide_hierarchy_{name}.csv")
    return ["search", str(data), "--qi", ",".join(qi), "--hierarchy-dir", str(tmp_path), "--k", "5",
            "--max-sup", "1%", "--quiet"]


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def wide12(tmp_path_factory):
    return write_wide(tmp_path_factory.mktemp("wide12"), 12)


def test_a_profile_over_the_memory_budget_is_refused_before_any_work(wide12, capsys):
    code, out, err = run(capsys, *wide12, "--policy", "loss", "--strategy", "profile", "--memory-budget", "1GB")
    assert code != 0 and out == ""
    line = err.strip()
    assert "\n" not in line
    assert line.startswith("microrelease: error: --memory-budget: the whole-lattice profile of 349,920 nodes would "
                           "need about ")
    assert line.endswith("over the budget of 1.0 GB; raise the budget, or use strategy 'pruned'")
    assert line in SEARCH_PAGE  # the docs show this very line


def test_a_12_qi_search_is_answered_by_the_pruned_search_within_the_budget(wide12, tmp_path):
    """In its own process, so that its peak memory is its own (its VmHWM: see tests/peak_memory.py)."""
    out, err, peak = tmp_path / "out.json", tmp_path / "err.txt", tmp_path / "peak.txt"
    with out.open("w") as o, err.open("w") as e:
        code = subprocess.call([sys.executable, str(TESTS / "peak_memory.py"), "microrelease.app.cli", *wide12,
                                "--policy", "loss", "--json"], stdout=o, stderr=e,
                               env={**os.environ, "PEAK_MEMORY_FILE": str(peak)})
    assert code == 0, err.read_text()[-2000:]
    result = json.loads(out.read_text())
    assert result["lattice_size"] == 349_920
    assert result["search"]["strategy"] == "pruned"
    assert 0 < result["search"]["nodes_evaluated"] < result["lattice_size"] / 10, result["search"]
    assert result["preferred"]["vector"] == [0, 3, 1, 1, 3, 2, 1, 2, 0, 1, 2, 1]
    assert len(result["k_minimal"]) == 2847
    assert int(peak.read_text()) < 1.5 * (1 << 20), f"peak RSS {peak.read_text()} kB"  # at most 1.5 GB


def test_the_time_limit_gives_the_best_found_with_a_proven_bound(wide12, capsys):
    code, out, err = run(capsys, *wide12, "--policy", "loss", "--time-limit", "0.5", "--json")
    assert code == 0, err
    preferred = json.loads(out)["preferred"]
    limited = preferred["time_limited"]
    assert limited["stopped"]
    assert preferred["among"] == "the satisfying nodes searched in time"
    # the optimum's Loss (tests/core/search: the pruned search equals the profile) lies in the bound
    optimum = 0.46953  # search --policy loss on this table, without a limit (the test above's node)
    assert limited["lower_bound"] <= optimum + 1e-5 <= preferred["score"] + 1e-5
    assert limited["gap"] == pytest.approx(preferred["score"] - limited["lower_bound"])


@pytest.mark.parametrize("extra, message", [
    (["--time-limit", "5"], "--time-limit: applies to a quality policy's search"),
    (["--time-limit", "5", "--policy", "aecs"], "--time-limit: a time limit needs a quality policy with a lower bound"),
    (["--memory-budget", "1KB", "--strategy", "profile"],
     "--memory-budget: the whole-lattice profile of 36 nodes would need about "),
    (["--time-limit", "0"], "--time-limit: must be a positive number of seconds"),
    (["--memory-budget", "lots"], "--memory-budget: The 'memory_budget' parameter must be a size such as 2GB"),
])
def test_bad_flags_are_refused_naming_them(extra, message, capsys):
    try:
        code = main(["search", "--sample", "toy", "--k", "2", *extra])
    except SystemExit as exc:  # argparse's own refusal
        code = exc.code
    err = capsys.readouterr().err
    assert code != 0 and message in err, err


@pytest.mark.parametrize("criterion", [["--sensitive", "salary-class", "--l-diversity", "distinct:2"],
                                       ["--max-risk", "0.05"]])
def test_the_pruned_search_answers_under_criteria_as_the_profile_does(criterion, capsys):
    answers = {}
    for strategy in ("auto", "pruned", "profile"):
        code, out, err = run(capsys, "search", "--sample", "adult", "--k", "5", "--max-sup", "1%", "--policy", "loss",
                             *criterion, "--strategy", strategy, "--quiet", "--json")
        assert code == 0, err
        answers[strategy] = json.loads(out)
    assert answers["auto"]["search"]["strategy"] == "pruned" and answers["profile"]["search"]["strategy"] == "profile"
    expected = answers["profile"]
    for strategy in ("auto", "pruned"):
        got = answers[strategy]
        assert [n["vector"] for n in got["k_minimal"]] == [n["vector"] for n in expected["k_minimal"]]
        assert [n["suppressed"] for n in got["k_minimal"]] == [n["suppressed"] for n in expected["k_minimal"]]
        assert got["find_vector"] == expected["find_vector"]
        assert got["preferred"]["vector"] == expected["preferred"]["vector"]
        assert got["preferred"]["score"] == pytest.approx(expected["preferred"]["score"], rel=1e-12)


def test_release_refuses_a_time_limit(tmp_path, capsys):
    out = tmp_path / "out.csv"
    code, _, err = run(capsys, "release", "--sample", "adult", "--k", "5", "--policy", "loss", "--time-limit", "1",
                       "-o", str(out))
    assert code != 0 and "--time-limit: applies to search only: a release is written from an exact answer" in err
    assert not out.exists()


@pytest.mark.parametrize("policy, strategy", [("loss", "pruned"), ("min-relative", "pruned"),
                                              ("kl-divergence", "pruned")])
def test_auto_takes_the_pruned_search_for_one_question_where_it_applies(policy, strategy, capsys):
    """As docs/explanation/samarati-lattice.md says: the pruned search for one question at any size (adult: 6,480 nodes), every policy."""
    code, out, err = run(capsys, "search", "--sample", "adult", "--k", "5", "--max-sup", "1%", "--policy", policy,
                         "--quiet", "--json")
    assert code == 0, err
    assert json.loads(out)["search"]["strategy"] == strategy
