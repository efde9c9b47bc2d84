"""The command line: the JSON shape of search, release with read-back, check's exit codes, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from microrelease.app.cli import main
from microrelease.core.data.samples import microdata_sample, sample


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_search_json_has_the_documented_shape(capsys):
    folder = sample("samarati").folder
    code, out, _ = run(capsys, "search", str(folder / "samarati.csv"), "--qi", "Race,ZIP", "--hierarchy-dir", str(folder),
                       "--k", "2", "--max-sup", "2", "--json")
    assert code == 0
    result = json.loads(out)
    assert set(result) >= {"n_rows", "qi", "heights", "lattice_size", "k", "max_sup", "find_vector", "k_minimal", "preferred"}
    assert (result["n_rows"], result["qi"], result["heights"], result["lattice_size"]) == (9, ["Race", "ZIP"], [1, 2], 6)
    assert sorted(n["vector"] for n in result["k_minimal"]) == [[0, 1], [1, 0]]
    assert set(result["k_minimal"][0]) == {"vector", "levels", "height", "suppressed", "accuracy", "completeness", "distinct",
                                           "rel_distance", "max_risk", "average_risk"}
    for n in result["k_minimal"]:  # the prosecutor's risk over the released rows: classes / rows
        assert n["average_risk"] == n["distinct"] / (9 - n["suppressed"]) and n["max_risk"] <= 1 / 2
    assert result["find_vector"]["vector"] == [0, 1]
    assert result["find_vector"]["trace"][0] == {"low": 0, "high": 3, "try": 1, "tested": [[0, 1]], "satisfied": [0, 1]}
    assert result["preferred"]["policy"] == "min-relative" and result["preferred"]["vector"] == [0, 1]


def test_search_follows_the_qi_order_and_explicit_hierarchies(capsys):
    folder = sample("samarati").folder
    code, out, _ = run(capsys, "search", str(folder / "samarati.csv"), "--qi", "ZIP,Race",
                       "--hierarchy", f"ZIP={folder / 'samarati_hierarchy_ZIP.csv'}",
                       "--hierarchy", f"Race={folder / 'samarati_hierarchy_Race.csv'}", "--k", "2", "--json")
    assert code == 0
    assert sorted(n["vector"] for n in json.loads(out)["k_minimal"]) == [[1, 1], [2, 0]]


def test_max_sup_share_and_weighted_policy(capsys):
    code, out, _ = run(capsys, "search", "--sample", "adult", "--k", "5", "--max-sup", "1%", "--policy", "weighted",
                       "--weights", "age=5,sex=1", "--json")
    result = json.loads(out)
    assert code == 0 and result["max_sup"] == 301 and result["preferred"]["weights"] == {"age": 5.0, "sex": 1.0}


def test_release_and_check_round_trip(tmp_path, capsys):
    out_csv = tmp_path / "adult_k5.csv"
    code, out, _ = run(capsys, "release", "--sample", "adult", "--k", "5", "--max-sup", "100", "--policy",
                       "min-suppression", "--list-suppressed", "1000", "-o", str(out_csv))
    assert code == 0 and "re-checked" in out
    report = json.loads((tmp_path / "adult_k5.report.json").read_text())
    assert report["output"]["rows"] == 30162 - report["counts"]["suppressed_rows"]
    suppressed = report["suppressed"]
    assert sum(c["size"] for c in suppressed["classes"]) == report["counts"]["suppressed_rows"] <= 100
    assert suppressed["classes_listed"] == suppressed["classes_total"] == len(suppressed["classes"])
    assert all(c["size"] < 5 for c in suppressed["classes"])
    assert len(pd.read_csv(out_csv)) == report["output"]["rows"]
    qi = ",".join(sample("adult").qi)
    code, out, _ = run(capsys, "check", str(out_csv), "--qi", qi, "--k", "5")
    assert code == 0 and "is 5-anonymous" in out
    code, out, _ = run(capsys, "check", "--sample", "adult", "--k", "5", "--json")
    assert code == 1 and json.loads(out)["k_anonymous"] is False


def test_release_of_an_explicit_node_drops_identifiers(tmp_path, capsys):
    data = tmp_path / "people.csv"
    data.write_text("name;Race;ZIP\n" + "".join(
        f"p{i};{r};{z}\n" for i, (r, z) in enumerate(pd.read_csv(sample("samarati").path, dtype=str).values)))
    folder = sample("samarati").folder
    code, out, _ = run(capsys, "release", str(data), "--qi", "Race,ZIP", "--identifier", "name", "--hierarchy-dir",
                       str(folder), "--k", "2", "--node", "1,1", "-o", str(tmp_path / "o.csv"), "--json")
    assert code == 0
    assert json.loads(out)["node"]["vector"] == [1, 1]
    assert "name" not in pd.read_csv(tmp_path / "o.csv").columns


@pytest.mark.parametrize(("argv", "message"), [
    (["search", "--sample", "adult", "--k", "0"], "'k' parameter must be at least 1"),
    (["search", "--sample", "adult", "--k", "5", "--max-sup", "-1"], "'max_sup' parameter must be at least 0"),
    (["search", "--sample", "adult", "--qi", "sex,zip", "--k", "5"], "unknown QI column(s) ['zip']"),
    (["search", "--sample", "adult", "--k", "99999"], "at most the number of rows (30162)"),
    (["search", "--k", "2"], "no data"),
    (["release", "--sample", "samarati", "--k", "2", "--node", "0,9", "-o", "x.csv"], "level 9 of 'ZIP'"),
    (["search", "--sample", "adult", "--k", "5", "--weights", "age"], "--weights expects NAME=VALUE"),
])
def test_errors_name_the_parameter_and_exit_2(capsys, argv, message):
    code, _, err = run(capsys, *argv)
    assert code == 2 and message in err and err.startswith("microrelease: error:")


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "microrelease"
    assert script.exists(), "the microrelease console script is not installed next to this Python"
    done = subprocess.run([str(script), "search", "--sample", "samarati", "--k", "2", "--max-sup", "0"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "2 k-minimal generalization(s)" in done.stdout


def test_progress_bar_draws_on_a_terminal_and_is_silenced_by_quiet():
    import io

    from microrelease.app.cli import ProgressBar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    bar = ProgressBar("lattice profile", quiet=False, stream=stream)
    bar(0.5)
    bar(1.0)
    bar.close()
    assert "lattice profile [###############...............]  50%" in stream.getvalue()
    assert stream.getvalue().endswith("100%\n")
    quiet = Terminal()
    ProgressBar("x", quiet=True, stream=quiet)(0.5)
    assert quiet.getvalue() == ""


def test_release_to_parquet_through_duckdb_with_a_memory_limit(tmp_path, capsys):
    out = tmp_path / "adult.parquet"
    code, _, err = run(capsys, "release", "--sample", "adult", "--k", "5", "--max-sup", "1%", "--engine", "duckdb",
                       "--memory-limit", "256MB", "--spill-dir", str(tmp_path), "-o", str(out), "--json")
    assert code == 0, err
    back = pd.read_parquet(out)
    report = json.loads((tmp_path / "adult.report.json").read_text())
    assert report["input"]["engine"] == "duckdb" and report["output"]["format"] == "parquet"
    assert len(back) == report["output"]["rows"] == 30162 - report["counts"]["suppressed_rows"]
    assert back.groupby(list(sample("adult").qi)).size().min() >= 5


@pytest.mark.parametrize(("argv", "message"), [
    (["--engine", "pandas", "--memory-limit", "1GB"], "--memory-limit applies to --engine duckdb"),
    (["--engine", "duckdb", "--scheduler", "tcp://h:1"], "--scheduler applies to --engine dask"),
    (["--engine", "duckdb", "--memory-limit", "lots"], "'memory_limit' parameter must be like '64MB'"),
    (["--engine", "dask", "--sensitive", "salary-class", "--t-closeness", "0.3"], "run in memory: use --engine pandas"),
])
def test_engine_options_that_do_not_fit_are_refused(capsys, argv, message):
    code, _, err = run(capsys, "search", "--sample", "adult", "--k", "5", *argv)
    assert code == 2 and message in err


def test_microaggregate_writes_a_rechecked_release_and_report(tmp_path, capsys):
    out = tmp_path / "census.csv"
    code, printed, err = run(capsys, "microaggregate", "--sample", "census", "--k", "5", "--method", "mdav-swap",
                             "--seed", "3", "-o", str(out))
    assert code == 0, err
    assert "SSE/SST" in printed and "re-checked" in printed
    report = json.loads((tmp_path / "census.report.json").read_text())
    assert report["parameters"]["seeded"] is True and "seed" not in report["parameters"]  # the seed would undo swaps
    assert report["groups"]["smallest"] >= 5 and report["groups"]["largest"] <= 9
    assert "linkage_risk" not in report and "information_loss" not in report  # the original's figures: the audit's
    audit = json.loads((tmp_path / "census.audit.json").read_text())
    assert audit["linkage_risk"]["original"]["reidentified"] == 1.0 and audit["seeded"] is True
    assert "anyone who knows the seed can undo the protection" in err
    released, original = pd.read_csv(out), pd.read_csv(sample_census_path())
    assert len(released) == 1080 and sorted(released["AGI"]) == sorted(original["AGI"])


def sample_census_path():
    from microrelease.core.data.samples import microdata_sample

    return microdata_sample("census").path


def test_microaggregate_names_a_text_qi(tmp_path, capsys):
    code, _, err = run(capsys, "microaggregate", "--sample", "eia", "--k", "3", "--qi", "STATE,RESSALES",
                       "-o", str(tmp_path / "x.csv"))
    assert code == 2 and "QI 'STATE' must be numeric" in err
    assert not (tmp_path / "x.csv").exists()


def test_dp_release_writes_noise_and_a_report(tmp_path, capsys):
    out = tmp_path / "dp.csv"
    code, printed, err = run(capsys, "dp", "--sample", "census", "--epsilon", "1", "--method", "ir-mdav", "--k", "20",
                             "--seed", "4", "-o", str(out))
    assert code == 0, err
    report = json.loads((tmp_path / "dp.report.json").read_text())
    per = report["parameters"]["per_attribute"]
    assert report["parameters"]["epsilon_spent"] == 1.0 and len(per) == 12
    assert per["AGI"]["sensitivity"] == 1e5 / 20 and per["AGI"]["noise_scale"] == pytest.approx(1e5 / 20 / (1 / 12))
    released = pd.read_csv(out)
    # only the attributes, with noise: AFNLWGT (the sample's weight, not an attribute) is not released
    assert len(released) == 1080 and list(released.columns) == list(per)
    assert report["parameters"]["not_released"] == ["AFNLWGT"] and report["parameters"]["seeded"] is True
    assert "anyone who knows the seed can undo the protection" in err
    code, _, err = run(capsys, "dp", str(microdata_sample("eia").path), "--attrs", "RESSALES", "--epsilon", "1", "-o",
                       str(tmp_path / "e.csv"))
    assert code == 2 and "no declared bounds for ['RESSALES']" in err
    code, _, err = run(capsys, "dp", "--sample", "census", "--epsilon", "-1", "-o", str(tmp_path / "x.csv"))
    assert code == 2 and "'epsilon' parameter must be positive" in err


ONE_OF_EACH = {
    "search": ["--sample", "toy", "--k", "2", "--sensitive", "age", "--qi", "gender,zipcode", "--l-diversity", "distinct:2"],
    "release": ["--sample", "toy", "--k", "2", "--node", "1,0,1", "-o", "out.csv"],
    "check": ["--sample", "toy", "--k", "2"],
    "risk": ["--sample", "toy", "--sampling-fraction", "0.1", "--node", "1,0,1"],
    "microaggregate": ["--sample", "eia", "--k", "3", "--method", "ir-swap", "--k-per-attribute", "RESSALES=4",
                       "-o", "out.csv"],
    "dp": ["--sample", "census", "--epsilon", "1", "--k", "20", "-o", "out.csv"],
    "sequential": ["e.csv", "v.csv", "--entity-id", "id", "--qi", "a,b", "--sequence-key", "s", "--order-by", "t",
                   "--code", "c", "--code-hierarchy", "h.csv", "--hierarchy", "a=a.csv", "--k", "2", "-o", "out"],
    "app": ["--sample", "toy", "--qi", "age"],
}


def test_one_test_case_per_command():
    from microrelease.app.cli.run import COMMANDS

    assert sorted(ONE_OF_EACH) == sorted(c.NAME for c in COMMANDS)


@pytest.mark.parametrize("command", sorted(ONE_OF_EACH))
def test_each_command_reads_its_arguments_once_into_a_frozen_request(command):
    import dataclasses

    from microrelease.app.cli import build_parser

    args = build_parser().parse_args([command, *ONE_OF_EACH[command]])
    before = dict(vars(args))
    request = args.module.Request.from_args(args)
    assert vars(args) == before  # the Namespace is read, never changed
    assert dataclasses.is_dataclass(request) and type(request).__dataclass_params__.frozen
    field = dataclasses.fields(request)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(request, field, None)


def test_the_data_or_sample_choice_fills_the_samples_defaults():
    from microrelease.app.cli import build_parser

    args = build_parser().parse_args(["release", "--sample", "toy", "--k", "2", "-o", "x.csv", "--engine", "pandas"])
    request = args.module.Request.from_args(args)
    assert request.table.path == sample("toy").path and request.table.qi == sample("toy").qi
    assert request.table.hierarchy_dir == str(sample("toy").folder) and request.engine.name == "pandas"
    args = build_parser().parse_args(["microaggregate", "--sample", "eia", "--qi", "RESSALES", "--k", "3", "-o", "x.csv"])
    request = args.module.Request.from_args(args)
    assert request.qi == ("RESSALES",) and request.confidential  # what was left out comes from the sample


def test_no_namespace_leaves_the_parsing_of_its_command():
    import ast

    folder = Path(__file__).resolve().parents[2] / "app"
    readers = {}
    for path in folder.rglob("*.py"):
        tree = ast.parse(path.read_text())
        if path.parent.name != "cli":
            assert "argparse" not in path.read_text(), f"{path}: argument parsing belongs to app/cli"
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(a.arg == "args" for a in node.args.args):
                readers.setdefault(node.name, []).append(path.name)
            if isinstance(node, ast.Assign | ast.AugAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                assert not any(isinstance(t, ast.Attribute) and getattr(t.value, "id", "") == "args"
                               for t in targets), f"{path.name}:{node.lineno} changes the Namespace"
    assert set(readers) == {"from_args", "resolve_input"}, readers


def test_dp_leaves_the_identifiers_to_the_core_which_checks_the_written_file(tmp_path, capsys):
    rows = [(f"n{i}", f"e{i}@x", 20 + i, 1000 * i) for i in range(12)]
    pd.DataFrame(rows, columns=["name", "email", "age", "income"]).to_csv(tmp_path / "d.csv", index=False)
    out = tmp_path / "dp.csv"
    code, _, err = run(capsys, "dp", str(tmp_path / "d.csv"), "--attrs", "age", "--identifier", "email,name",
                       "--bounds", "age=0:100", "--epsilon", "1", "--method", "record-noise", "--keep", "income",
                       "-o", str(out))
    assert code == 0, err
    assert "['income'] released as is, without protection" in err
    report = json.loads((tmp_path / "dp.report.json").read_text())
    assert list(pd.read_csv(out).columns) == ["age", "income"]
    assert report["parameters"]["released_without_protection"] == ["income"]
    code, _, err = run(capsys, "dp", str(tmp_path / "d.csv"), "--attrs", "age", "--keep", "name", "--identifier",
                       "name", "--bounds", "age=0:100", "--epsilon", "1", "--method", "record-noise",
                       "-o", str(tmp_path / "never.csv"))
    assert code == 2 and "--keep:" in err and "identifiers are never released" in err
    assert not (tmp_path / "never.csv").exists()
    assert report["parameters"]["identifiers_dropped"] == ["name", "email"]  # in the table's order
    assert {c["check"]: c["passed"] for c in report["verification"]}["identifiers absent"] is True
