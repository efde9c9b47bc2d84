"""The README's and the docs' Python examples run as written, and CI runs the README's test command."""

from __future__ import annotations

import json
import re
from pathlib import Path

from docs_text import page, section

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DECISION = page("how-to/release-decision.md")  # the README's further API examples moved there


def test_python_example_runs(tmp_path, monkeypatch, capsys):
    block = re.search(r"## Python API\n\n```python\n(.*?)```", README, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "k-minimal nodes; Find_vector found" in out
    assert "'5-anonymity': True" in out and "False" not in out
    assert (tmp_path / "adult_k5.csv").exists() and (tmp_path / "adult_k5.report.json").exists()


def test_criteria_example_releases_under_every_criterion_it_names(tmp_path, monkeypatch, capsys):
    block = re.findall(r"```python\n(.*?)```", section(DECISION, "## In Python"), re.S)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/how-to/release-decision.md", "exec"), {})
    out = capsys.readouterr().out
    assert out.strip() == "['rows', '5-anonymity', 'distinct 2-diversity'] 14"
    report = json.loads((tmp_path / "adult_l2.report.json").read_text())
    assert report["parameters"]["criteria"] == {"k-anonymity": "5", "distinct-l-diversity": "distinct:2",
                                                "average-risk": "0.05"}
    checks = {c["check"]: c["passed"] for c in report["verification"]}
    assert checks["average re-identification risk <= 0.05"] and checks["formula cells escaped"]


def test_pruned_search_example_runs(capsys):
    block = re.findall(r"```python\n(.*?)```", section(DECISION, "## In Python"), re.S)[1]
    exec(compile(block, "docs/how-to/release-decision.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("(0, 3, 0, 1, 3, 1, 1, 2) 0.358785 ")  # ARX's Loss optimum on adult, k = 5, 1 %
    assert lines[1] == "324 k-minimal nodes"


def test_the_command_line_examples_run_on_the_bundled_sample(tmp_path):
    import shlex
    import shutil
    import subprocess
    import sys

    block = re.search(r"## Command line\n\n```bash\n(.*?)```", README, re.S).group(1)
    shutil.copytree(ROOT / "sample_data" / "hospital", tmp_path / "sample_data" / "hospital")
    script = Path(sys.executable).parent / "microrelease"
    commands = [c for c in block.replace("\\\n", " ").splitlines() if c.startswith("microrelease ")]
    assert len(commands) == 4
    for command in commands:
        done = subprocess.run([str(script), *shlex.split(command)[1:]], cwd=tmp_path, capture_output=True, text=True)
        assert done.returncode == 0, (command, done.stderr)
    report = json.loads((tmp_path / "out.report.json").read_text())
    assert all(c["passed"] for c in report["verification"])
    header = (tmp_path / "out.csv").read_text().splitlines()[0]
    assert "patient_id" not in header and "name" not in header.split(",")


def test_readme_opens_with_two_commands_and_ci_runs_the_second():
    blocks = re.findall(r"```bash\n(.*?)```", README, re.S)
    first, second = blocks[0], blocks[1]
    assert first.startswith("# 1.") and "pip install ." in first
    assert second.startswith("# 2.") and "pytest" in second
    line = second.splitlines()[1]
    assert line.index("ruff check") < line.index("mypy") < line.index("pytest")  # types checked in CI
    ci = (ROOT / ".ci" / "run").read_text()
    assert "README.md" in ci and "# 2." in ci  # .ci/run extracts and runs command 2 from the README


def test_the_slow_sweeps_are_left_out_of_command_2_and_ci_runs_them_as_a_second_step():
    import tomllib

    addopts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-m 'not slow'" in addopts
    ci = (ROOT / ".ci" / "run").read_text()
    assert ci.index('bash -c "$cmd"') < ci.index("\n.venv/bin/pytest -m slow")  # after command 2, under set -e
    assert "--durations=25" in ci and "set -euo pipefail" in ci
    assert "pytest -m slow" in README.split("```bash")[2].split("##")[0]  # said beside command 2


def test_reference_distribution_paragraph_holds(tmp_path, monkeypatch, capsys):
    """Its figures are the release's, the counts are left out unless asked for, its
    check_against_report block runs on that release (with and without the input)."""
    import shutil

    from microrelease.core import Criteria, OutputOptions, load_sample, prepare_models, write_release

    text = section(page("explanation/criteria.md"), "### Which distribution t-closeness is measured against")
    said = " ".join(text.split())
    assert "node [1,1,0,2,1,0,2,1], MaxSup 4,000: 3,044 rows suppressed, 341 classes" in said
    assert "`release --publish-reference` (`OutputOptions(publish_reference=True)`, the dashboard's export" in said
    # the outlier example is the one tests/core/models/test_reference_distribution.py releases
    assert "outlier `13000,99,HIV`, suppressed: counts HIV 1, cancer 15, cold 18, flu 7" in said
    dataset = load_sample("adult")
    prepared = prepare_models(dataset, "salary-class", {"t_closeness": "0.5"})
    criteria = Criteria.of(5, *prepared.models, sensitive=prepared.sensitive_frequency)
    reports = {publish: write_release(dataset, (1, 1, 0, 2, 1, 0, 2, 1), tmp_path / f"{name}.csv", criteria=criteria,
                                      max_sup=4000, output=OutputOptions(publish_reference=publish)).data
               for publish, name in ((True, "counts"), (False, "out"))}
    report = reports[False]
    figures = reports[True]["reference_distribution"]["models"]["0.5-closeness (equal distance)"]
    assert report["counts"]["suppressed_rows"] == 3044 and figures["classes"] == 341
    assert (f"worst class {figures['worst_vs_reference']:.4f} against the input, "
            f"{figures['worst_vs_released_file']:.4f} against the file") in said
    stated = report["reference_distribution"]["models"]["0.5-closeness (equal distance)"]
    assert "counts" not in report["reference_distribution"] and stated["worst_vs_reference"] is None
    assert stated["failing_vs_reference"] == 0 and stated["failing_vs_released_file"] >= 1
    published = reports[True]["reference_distribution"]
    assert published["counts"] == [22654, 7508] and "sensitive values of the suppressed rows" in published["note"]
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    shutil.copy(dataset.source, tmp_path / "adult.csv")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "docs/explanation/criteria.md", "exec"), {})
    first, second = capsys.readouterr().out.splitlines()
    file_worst, file_satisfies, unchecked = first.split()
    assert (file_satisfies, unchecked) == ("False", "True") and 0.5 < float(file_worst)
    worst, passes, reference = second.split()
    assert (passes, reference) == ("True", "input") and float(worst) <= 0.5
