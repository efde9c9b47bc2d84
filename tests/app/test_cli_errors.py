"""Bad options and inputs on the command line: one line naming the option or file, exit status 2; the
flag of a parameter the core names comes first. Any other exception is a bug and is not hidden."""

from __future__ import annotations

import argparse

import pandas as pd
import pytest

from microrelease.app.cli import build_parser, main
from microrelease.app.cli.flags import FLAGS, error_line
from microrelease.core import DataError, InvalidParameterError
from microrelease.core.criteria.registry import spec_parameters
from microrelease.core.data.samples import microdata_sample, sample


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def parse_error(capsys, *argv) -> str:
    """argparse refuses the option: exit status 2, its message on stderr."""
    with pytest.raises(SystemExit) as exc:
        main(list(argv))
    assert exc.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize(("argv", "message"), [
    (["search", "--sample", "samarati", "--k", "2", "--sep", ",,"], "argument --sep: must be one character"),
    (["search", "--sample", "samarati", "--k", "2", "--sep", ""], "argument --sep: must be one character"),
    (["release", "--sample", "samarati", "--k", "2", "-o", "x.csv", "--out-sep", ""], "argument --out-sep: must be"),
    (["microaggregate", "--sample", "census", "--k", "5", "-o", "x.csv", "--out-sep", '"'],
     "argument --out-sep: must be one character, not a quote"),
])
def test_separators_must_be_one_character(capsys, argv, message):
    assert message in parse_error(capsys, *argv)


@pytest.mark.parametrize("argv", [
    ["microaggregate", "--sample", "census", "--k", "5", "-o", "x.csv"],
    ["dp", "--sample", "census", "--epsilon", "1", "-o", "x.csv"],
])
def test_a_negative_seed_names_the_option(capsys, argv):
    err = parse_error(capsys, *argv, "--seed", "-5")
    assert "argument --seed: must be a non-negative integer. Got '-5' instead." in err


def test_weights_without_the_weighted_policy_are_refused(capsys):
    code, _, err = run(capsys, "search", "--sample", "samarati", "--k", "2", "--weights", "Race=2")
    assert code == 2 and "--weights applies to --policy weighted only, not --policy min-relative" in err


@pytest.mark.parametrize("k", ["0", "-1"])
def test_check_refuses_k_below_1(capsys, k):
    code, out, err = run(capsys, "check", "--sample", "samarati", "--k", k)
    assert code == 2 and out == "" and f"The '--k' option must be at least 1. Got {k} instead." in err


def test_check_refuses_a_file_without_rows(tmp_path, capsys):
    (tmp_path / "empty.csv").write_text("Race,ZIP\n")
    code, out, err = run(capsys, "check", str(tmp_path / "empty.csv"), "--qi", "Race,ZIP", "--k", "2")
    assert code == 2 and out == "" and "empty.csv has a header but no rows" in err


def test_microaggregate_names_a_missing_data_file(tmp_path, capsys):
    code, _, err = run(capsys, "microaggregate", str(tmp_path / "nope.csv"), "--qi", "a", "--k", "2",
                       "-o", str(tmp_path / "x.csv"))
    assert code == 2 and f"data file not found: {tmp_path / 'nope.csv'}" in err


def test_samarati_still_checks(capsys):  # the guards above leave a valid check alone
    code, out, _ = run(capsys, "check", str(sample("samarati").path), "--qi", "Race,ZIP", "--k", "1")
    assert code == 0 and "is 1-anonymous" in out


def test_sequential_takes_no_seed_its_pseudonyms_come_from_os_entropy(capsys):
    # with a seed, the pseudonyms' permutation could be replayed to map every entity back to its row
    err = parse_error(capsys, "sequential", "e.csv", "v.csv", "--entity-id", "id", "--qi", "a", "--sequence-key", "s",
                      "--order-by", "t", "--code", "c", "--code-hierarchy", "h.csv", "--k", "2", "-o", "out",
                      "--seed", "7")
    assert "unrecognized arguments: --seed 7" in err


# --- core errors name a parameter; the command line prints the flag the user typed ------------------


def test_every_mapped_parameter_is_the_flag_of_some_command():
    options = {flag for action in subcommand_actions() for flag in action.option_strings}
    assert not {p: f for p, f in FLAGS.items() if f not in options}
    assert set(spec_parameters()) <= set(FLAGS)  # every way of giving a privacy model has its flag


def subcommand_actions():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return [action for p in sub.choices.values() for action in p._actions]


def test_the_error_line_puts_the_flag_before_the_core_message():
    assert error_line(InvalidParameterError("bad", parameter="max_sup")) == "microrelease: error: --max-sup: bad"
    assert error_line(DataError("no rows")) == "microrelease: error: no rows"  # no parameter: the message alone
    assert error_line(DataError("odd", parameter="no_such_flag")) == "microrelease: error: odd"


def test_a_missing_hierarchy_names_the_hierarchy_flag(tmp_path, capsys):
    code, _, err = run(capsys, "search", "--sample", "toy", "--hierarchy-dir", str(tmp_path), "--k", "2")
    assert code == 2 and err == (f"microrelease: error: --hierarchy: no hierarchy for QI 'age' in 'hierarchies' or in "
                                 f"the folder {tmp_path}\n")


def test_bounds_errors_name_the_bounds_flag(tmp_path, capsys):
    eia = str(microdata_sample("eia").path)  # a file: the bundled sample declares no bounds, dp does not offer it
    code, _, err = run(capsys, "dp", eia, "--attrs", "RESSALES", "--bounds", "RESSALES=0", "--epsilon", "1",
                       "-o", str(tmp_path / "x.csv"))
    assert code == 2 and err.startswith("microrelease: error: --bounds: each item of 'bounds' must be NAME=LO:HI")
    code, _, err = run(capsys, "dp", eia, "--attrs", "RESSALES", "--epsilon", "1",
                       "-o", str(tmp_path / "x.csv"))
    assert code == 2 and err.startswith("microrelease: error: --bounds: no declared bounds for ['RESSALES']")


def test_ir_swap_without_confidential_attributes_names_the_flag(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a\n1\n2\n3\n4\n")
    code, _, err = run(capsys, "microaggregate", str(tmp_path / "d.csv"), "--qi", "a", "--k", "2", "--method", "ir-swap",
                       "-o", str(tmp_path / "x.csv"))
    assert code == 2 and err.startswith("microrelease: error: --confidential: ir-swap permutes confidential attributes")


def test_a_spill_folder_that_cannot_be_made_names_the_flag(tmp_path, capsys):
    code, _, err = run(capsys, "search", "--sample", "toy", "--k", "2", "--spill-dir", str(tmp_path / "absent"))
    assert code == 2 and err.startswith(f"microrelease: error: --spill-dir: cannot make a spill folder in "
                                        f"{tmp_path / 'absent'}")


def test_a_scheduler_that_is_no_address_names_the_flag(capsys):
    pytest.importorskip("distributed")
    code, _, err = run(capsys, "search", "--sample", "toy", "--k", "2", "--engine", "dask", "--scheduler", "no-port")
    assert code == 2 and err.startswith("microrelease: error: --scheduler: the Dask scheduler address no-port")


@pytest.mark.parametrize(("flag", "spec"), [("--l-diversity", "many:3"), ("--t-closeness", "x:ordered")])
def test_a_privacy_model_spec_names_its_flag(capsys, flag, spec):
    code, _, err = run(capsys, "search", "--sample", "adult", "--qi", "sex,age", "--sensitive", "occupation", "--k", "5",
                       flag, spec)
    assert code == 2 and err.startswith(f"microrelease: error: {flag}: ") and err.count("\n") == 1


def test_only_microrelease_errors_become_status_2_anything_else_is_a_bug(monkeypatch, capsys):
    from microrelease.app.cli import check_command as check

    def broken(*args, **kwargs):
        raise ValueError("a bug, not the user's input")

    monkeypatch.setattr(check, "check_k_anonymity", broken)
    with pytest.raises(ValueError, match="a bug"):  # the traceback surfaces instead of one polite line
        main(["check", "--sample", "samarati", "--k", "2"])
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("flag", "value"), [("--w-relational", "-1"), ("--w-time", "nan"), ("--w-sequence", "inf")])
def test_a_bad_cost_weight_names_its_flag(tmp_path, capsys, flag, value):
    from microrelease.core.data.samples import sample_data_folder

    h = sample_data_folder("hospital")
    code, _, err = run(capsys, "sequential", str(h / "patients.csv"), str(h / "visits.csv"), "--entity-id", "patient_id",
                       "--qi", "age,sex,zip", "--identifier", "name", "--sequence-key", "visit_id", "--order-by", "day",
                       "--code", "code", "--code-hierarchy", str(h / "hospital_hierarchy_code.csv"),
                       "--hierarchy-dir", str(h), "--k", "5", "-o", str(tmp_path / "out"), flag, value)
    name = "weight_" + flag.removeprefix("--w-")
    assert code == 2 and err.startswith(f"microrelease: error: {flag}: The '{name}' parameter must be finite and at least 0")
    assert not (tmp_path / "out").exists()


def test_a_bad_k_of_one_attribute_names_the_k_per_attribute_flag(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,s\n" + "".join(f"{i},{i * 7 % 5}\n" for i in range(10)))
    code, _, err = run(capsys, "microaggregate", str(tmp_path / "d.csv"), "--qi", "a", "--confidential", "s", "--k", "2",
                       "--method", "ir-swap", "--k-per-attribute", "s=0", "-o", str(tmp_path / "o.csv"))
    assert code == 2 and err.startswith("microrelease: error: --k-per-attribute: The \"k_per_attribute['s']\" "
                                        "parameter must be at least 1. Got 0")


# --- the dashboard's server: a port is checked before the URL is printed --------------------------------


def test_a_taken_port_is_one_line_naming_the_port_flag_before_any_url(capsys):
    import socket

    with socket.socket() as holder:  # the OS picks a free port; holding it makes it taken
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code, out, err = run(capsys, "app", "--sample", "samarati", "--host", "127.0.0.1", "--port", str(port))
    assert code == 2 and out == ""  # no "microrelease dashboard: http://..." line for a server that never ran
    assert err == (f"microrelease: error: --port: cannot listen on 127.0.0.1:{port}: Address already in use "
                   "(choose another port)\n")


@pytest.mark.parametrize("port", ["-1", "0", "65536", "http"])
def test_a_port_out_of_range_is_refused(capsys, port):
    err = parse_error(capsys, "app", "--port", port)
    assert f"argument --port: must be a port number from 1 to 65535. Got {port!r} instead." in err


# --- dp offers only the samples that declare bounds --------------------------------------------------------


def test_dp_offers_only_the_samples_that_declare_bounds(capsys, tmp_path):
    from microrelease.core.data.samples import MICRODATA_SAMPLES

    declared = {name for name, s in MICRODATA_SAMPLES.items() if s.bounds}
    assert declared and declared != set(MICRODATA_SAMPLES)  # the test sees both kinds
    for name in sorted(MICRODATA_SAMPLES):
        argv = ["dp", "--sample", name, "--epsilon", "1", "-o", str(tmp_path / "x.csv")]
        if name in declared:
            assert build_parser().parse_args(argv).sample == name
        else:
            assert f"argument --sample: invalid choice: '{name}'" in parse_error(capsys, *argv)


# --- flags accepted and then ignored are refused -------------------------------------------------------------

MODEL_SEARCH = ["search", "--sample", "adult", "--qi", "sex,age", "--sensitive", "occupation", "--k", "5",
                "--l-diversity", "distinct:2"]


def test_strategy_under_privacy_models_reaches_the_model_profile(monkeypatch, capsys):
    from microrelease.app.cli import lattice

    seen = []
    real = lattice.build_model_profile
    monkeypatch.setattr(lattice, "build_model_profile",
                        lambda *args, **kwargs: (seen.append(kwargs["strategy"]), real(*args, **kwargs))[1])
    code, _, _ = run(capsys, *MODEL_SEARCH, "--strategy", "numpy", "--json")
    assert code == 0 and seen == ["numpy"]


def test_a_strategy_the_model_profile_lacks_is_refused(capsys):
    from microrelease.core.models.model_profile import MODEL_STRATEGIES

    assert "direct" not in MODEL_STRATEGIES
    code, out, err = run(capsys, *MODEL_SEARCH, "--strategy", "direct")
    assert code == 2 and out == ""
    assert err == ("microrelease: error: --strategy: 'direct' is not a strategy of the profile under privacy models; "
                   f"choose one of {', '.join(MODEL_STRATEGIES)}\n")


def test_a_hierarchy_given_twice_is_refused(tmp_path, capsys):
    code, _, err = run(capsys, "search", "--sample", "toy", "--k", "2", "--hierarchy", f"age={tmp_path / 'x.csv'}",
                       "--hierarchy", f"age={tmp_path / 'y.csv'}")
    assert code == 2 and err == (f"microrelease: error: --hierarchy gives 'age' twice ('{tmp_path / 'x.csv'}' and "
                                 f"'{tmp_path / 'y.csv'}'); give each name once\n")


@pytest.mark.parametrize("suffix", [".parquet", ".pq"])
def test_an_output_separator_for_a_parquet_release_is_refused(tmp_path, capsys, suffix):
    out = tmp_path / f"x{suffix}"
    code, _, err = run(capsys, "release", "--sample", "toy", "--k", "2", "-o", str(out), "--out-sep", ";")
    assert code == 2 and err == f"microrelease: error: --out-sep applies to a CSV output, not to the Parquet file {out}\n"
    assert not out.exists()


@pytest.mark.parametrize(("command", "option"), [
    (["check", "--sample", "toy", "--k", "2"], ["--identifier", "age"]),
    (["check", "--sample", "toy", "--k", "2"], ["--sensitive", "age"]),
    (["check", "--sample", "toy", "--k", "2"], ["--quiet"]),
    (["check", "--sample", "toy", "--k", "2"], ["--hierarchy", "age=x.csv"]),
    (["app", "--sample", "toy"], ["--strategy", "numpy"]),
    (["app", "--sample", "toy"], ["--sensitive", "age"]),
])
def test_a_command_takes_only_the_options_it_uses(capsys, command, option):
    # (the option's value, if any, is taken for DATA: only the option itself is unrecognized)
    assert f"unrecognized arguments: {option[0]} (see " in parse_error(capsys, *command, *option)


# --- messages that say what is wrong ---------------------------------------------------------------------------


def test_an_unknown_entity_id_names_the_entity_id_flag(tmp_path, capsys):
    from microrelease.core.data.samples import sample_data_folder

    h = sample_data_folder("hospital")
    code, _, err = run(capsys, "sequential", str(h / "patients.csv"), str(h / "visits.csv"), "--entity-id", "nope",
                       "--qi", "age,sex,zip", "--identifier", "name", "--sequence-key", "visit_id", "--order-by", "day",
                       "--code", "code", "--code-hierarchy", str(h / "hospital_hierarchy_code.csv"),
                       "--hierarchy-dir", str(h), "--k", "5", "-o", str(tmp_path / "out"))
    columns = list(pd.read_csv(h / "patients.csv", nrows=0).columns)
    assert code == 2 and err == (f"microrelease: error: --entity-id: no entity id column 'nope' in the entity table; "
                                 f"it has {columns}\n")
    assert not (tmp_path / "out").exists()


def test_a_dp_column_cannot_be_both_attribute_and_identifier(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("age,income\n30,1\n40,2\n")
    code, _, err = run(capsys, "dp", str(tmp_path / "d.csv"), "--attrs", "age,income", "--identifier", "age",
                       "--bounds", "age=0:100,income=0:10", "--epsilon", "1", "-o", str(tmp_path / "x.csv"))
    assert code == 2 and err.startswith("microrelease: error: --identifier: ['age'] given in 'identifiers' cannot be "
                                        "both released with noise and dropped") and err.count("\n") == 1
    assert not (tmp_path / "x.csv").exists()


def test_check_with_limit_0_prints_the_verdict_alone(capsys):
    code, out, _ = run(capsys, "check", "--sample", "toy", "--k", "2", "--limit", "0")
    path = sample("toy").path
    assert code == 1 and out == f"{path} is NOT 2-anonymous over age, gender, zipcode (7 rows, 7 classes)\n"


def test_check_refuses_a_negative_limit(capsys):
    assert "argument --limit: must be a non-negative integer. Got '-3' instead." in parse_error(
        capsys, "check", "--sample", "toy", "--k", "2", "--limit", "-3")


def test_one_flag_named_alone_applies_two_apply(capsys):
    code, _, err = run(capsys, "search", "--sample", "toy", "--k", "2", "--engine", "pandas", "--threads", "2")
    assert code == 2 and "--threads applies to --engine duckdb, not --engine pandas" in err
    code, _, err = run(capsys, "search", "--sample", "toy", "--k", "2", "--engine", "pandas", "--threads", "2",
                       "--memory-limit", "1GB")
    assert code == 2 and "--memory-limit, --threads apply to --engine duckdb, not --engine pandas" in err


def test_messages_take_their_flags_from_the_one_map():
    """No flag is spelled out in a message of app/cli: FLAGS is the one parameter -> flag map (the
    option declarations themselves, their help texts and docstrings aside)."""
    import ast
    import re
    from pathlib import Path

    import microrelease.app.cli as cli

    flag = re.compile(r"--[a-z][a-z-]*")
    offenders = []
    for path in sorted(Path(cli.__file__).parent.glob("*.py")):
        if path.name == "flags.py":
            continue
        tree = ast.parse(path.read_text())
        declared = set()  # string nodes inside add_argument(...) or an add_*_options(...) helper, and docstrings
        for node in ast.walk(tree):
            called = getattr(node, "func", None)
            if isinstance(node, ast.Call) and (getattr(called, "attr", "") or getattr(called, "id", "")).startswith("add_"):
                declared.update(id(n) for n in ast.walk(node))
            if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef) and ast.get_docstring(node) is not None:
                declared.add(id(node.body[0].value))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in declared:
                offenders += [f"{path.name}:{node.lineno} {f}" for f in flag.findall(node.value) if f in FLAGS.values()]
    assert not offenders


@pytest.mark.parametrize(("argv", "line"), [
    (["search", "--sample", "samarati", "--k", "nan"], "microrelease search: error: argument --k: invalid int value: 'nan'"),
    (["search", "--sample", "samarati", "--k", "2.5"], "microrelease search: error: argument --k: invalid int value: '2.5'"),
    (["search", "--sample", "samarati"], "microrelease search: error: the following arguments are required: --k"),
])
def test_an_argparse_error_is_one_line_without_the_usage(capsys, argv, line):
    err = parse_error(capsys, *argv)
    assert err.count("\n") == 1 and err.startswith(line) and "usage:" not in err


@pytest.mark.parametrize(("argv", "value", "flag"), [
    (["search", "--sample", "samarati", "--k", "2", "--max-sup", "-5%"], "'-5%'", "--max-sup"),
    (["release", "--sample", "samarati", "--k", "2", "-o", "x.csv", "--node", "-1,0"], "-1", "--node"),
])
def test_a_value_starting_with_a_dash_is_the_flags_value(capsys, tmp_path, monkeypatch, argv, value, flag):
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, *argv)
    assert code == 2 and flag in err and value in err and "expected one argument" not in err
    assert not (tmp_path / "x.csv").exists()


def test_an_epsilon_whose_noise_is_beyond_floating_point_is_refused(capsys, tmp_path):
    code, _, err = run(capsys, "dp", str(microdata_sample("eia").path), "--attrs", "RESSALES", "--bounds", "RESSALES=0:100",
                       "--epsilon", "1e-320", "--method", "record-noise", "-o", str(tmp_path / "x.csv"))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith("microrelease: error: --epsilon: epsilon 1e-320 over 1 attribute(s)") and "floating point" in err
    assert not (tmp_path / "x.csv").exists()


def test_a_subnormal_sampling_fraction_is_refused(capsys):
    code, _, err = run(capsys, "risk", "--sample", "samarati", "--sampling-fraction", "1e-320")
    assert code == 2 and "--sampling-fraction" in err and "at least 1e-15" in err


# --- what an attacker review found (column lists, bounds, folders, wording) ---------------------------------

EIA = str(microdata_sample("eia").path)
HOSPITAL = sample("toy").folder.parent / "hospital"


def sequential_args(tmp_path) -> list[str]:
    h = HOSPITAL
    return ["sequential", str(h / "patients.csv"), str(h / "visits.csv"), "--entity-id", "patient_id",
            "--identifier", "name", "--sequence-key", "visit_id", "--order-by", "day", "--code", "code",
            "--code-hierarchy", str(h / "hospital_hierarchy_code.csv"), "--hierarchy-dir", str(h), "--k", "5",
            "-o", str(tmp_path / "seq"), "--force", "--quiet"]


@pytest.mark.parametrize(("argv", "flag", "value"), [
    (["check", "{small}", "--qi", "zip,zip", "--k", "2"], "--qi", "zip,zip"),
    (["search", "{small}", "--qi", "zip", "--identifier", "age, age", "--k", "2"], "--identifier", "age, age"),
    (["microaggregate", EIA, "--qi", "RESSALES,RESSALES", "--k", "3", "-o", "{out}", "--force", "--quiet"],
     "--qi", "RESSALES,RESSALES"),
    (["microaggregate", EIA, "--qi", "RESSALES", "--confidential", "COMSALES,COMSALES", "--k", "3", "-o", "{out}"],
     "--confidential", "COMSALES,COMSALES"),
    (["dp", EIA, "--attrs", "RESSALES,RESSALES", "--bounds", "RESSALES=0:10", "--epsilon", "1", "--method",
      "record-noise", "-o", "{out}", "--force"], "--attrs", "RESSALES,RESSALES"),
    (["dp", EIA, "--attrs", "RESSALES", "--bounds", "RESSALES=0:10", "--keep", "STATE,STATE", "--epsilon", "1",
      "--method", "record-noise", "-o", "{out}"], "--keep", "STATE,STATE"),
    (["dp", EIA, "--method", "ratio-closeness", "--qi", "RESSALES,COMSALES,RESSALES", "--confidential", "RESREVENUE",
      "--epsilon", "1", "--k", "3", "-o", "{out}"], "--qi", "RESSALES,COMSALES,RESSALES"),
])
def test_a_column_named_twice_in_a_list_is_refused_naming_the_flag_and_the_value(tmp_path, capsys, argv, flag, value):
    (tmp_path / "small.csv").write_text("zip,age\n1,2\n1,3\n")
    argv = [a.replace("{small}", str(tmp_path / "small.csv")).replace("{out}", str(tmp_path / "o.csv")) for a in argv]
    code, _, err = run(capsys, *argv)
    name = value.split(",")[0].strip() if flag != "--qi" or "COMSALES" not in value else "RESSALES"
    assert code == 2 and err == (f"microrelease: error: {flag}: column {name!r} is given twice in {value!r}; give "
                                 "each column once\n")
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize(("extra", "flag"), [
    (["--qi", "age,sex,zip,sex"], "--qi"), (["--qi", "age,sex,zip", "--drop", "cost,cost"], "--drop"),
    (["--qi", "age,sex,zip", "--keep", "cost,cost"], "--keep"),
])
def test_sequential_refuses_a_column_named_twice(tmp_path, capsys, extra, flag):
    code, _, err = run(capsys, *sequential_args(tmp_path), *extra)
    assert code == 2 and err.startswith(f"microrelease: error: {flag}: column ") and "is given twice in" in err


def test_a_column_in_two_roles_names_the_flag_of_its_second(tmp_path, capsys):
    (tmp_path / "small.csv").write_text("zip,age\n1,2\n1,3\n")
    code, _, err = run(capsys, "search", str(tmp_path / "small.csv"), "--qi", "zip", "--sensitive", "zip", "--k", "2")
    assert code == 2 and err == ("microrelease: error: --sensitive: column 'zip' is given twice (as quasi-identifier "
                                 "and as sensitive)\n")
    code, _, err = run(capsys, "microaggregate", EIA, "--qi", "RESSALES", "--identifier", "RESSALES", "--k", "3",
                       "-o", str(tmp_path / "m.csv"))
    assert code == 2 and err == ("microrelease: error: --identifier: column(s) ['RESSALES'] are given both as "
                                 "identifier and as QI\n")


@pytest.mark.parametrize("bounds", [["--bounds", "RESSALES=0:10", "--bounds", "RESSALES=0:20"],
                                    ["--bounds", "RESSALES=0:10,RESSALES=0:20"]])
def test_a_column_bounded_twice_is_refused(tmp_path, capsys, bounds):
    code, _, err = run(capsys, "dp", EIA, "--attrs", "RESSALES", *bounds, "--epsilon", "1", "--method",
                       "record-noise", "-o", str(tmp_path / "d.csv"))
    assert code == 2 and err == ("microrelease: error: --bounds: the bounds of 'RESSALES' are given twice (0:10 and "
                                 "0:20); bound each column once\n")


def test_bounds_given_in_two_flags_are_both_used(tmp_path, capsys):
    code, out, err = run(capsys, "dp", EIA, "--attrs", "RESSALES,COMSALES", "--bounds", "RESSALES=0:10",
                         "--bounds", "COMSALES=0:20", "--epsilon", "1", "--method", "record-noise", "--quiet",
                         "-o", str(tmp_path / "d.csv"), "--json")
    assert code == 0, err


@pytest.mark.parametrize("method", [["--attrs", "RESSALES", "--method", "record-noise"],
                                    ["--qi", "COMSALES", "--confidential", "RESSALES", "--method", "ratio-closeness",
                                     "--k", "3"]])
def test_bounds_whose_width_overflows_are_refused_in_one_line(tmp_path, capsys, method):
    code, _, err = run(capsys, "dp", EIA, *method, "--bounds", "RESSALES=-1e308:1e308", "--epsilon", "1",
                       "-o", str(tmp_path / "d.csv"))
    assert code == 2 and err.startswith("microrelease: error: --bounds: the range ") and err.count("\n") == 1
    assert "-1e+308:1e+308 is too wide: HI - LO overflows a float" in err and "np." not in err


def test_a_hierarchy_folder_that_is_a_file_or_missing_is_named(tmp_path, capsys):
    (tmp_path / "small.csv").write_text("zip,age\n1,2\n1,3\n")
    for folder, problem in ((tmp_path / "small.csv", "is not a folder"), (tmp_path / "nope", "does not exist")):
        code, _, err = run(capsys, "search", str(tmp_path / "small.csv"), "--qi", "zip", "--k", "2",
                           "--hierarchy-dir", str(folder))
        assert code == 2 and err == f"microrelease: error: --hierarchy-dir: the hierarchy folder {folder} {problem}\n"


def test_a_previous_release_says_force(tmp_path, capsys):
    argv = ["dp", EIA, "--attrs", "RESSALES", "--bounds", "RESSALES=0:10", "--epsilon", "1", "--method",
            "record-noise", "--quiet", "-o", str(tmp_path / "d.csv")]
    assert run(capsys, *argv)[0] == 0
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.startswith("microrelease: error: --force: ") and "'force'" not in err
    assert "replaced only when forced" in err


def test_one_row_is_said_in_the_singular(tmp_path, capsys):
    (tmp_path / "one.csv").write_text("zip,age\n1,2\n")
    code, out, _ = run(capsys, "check", str(tmp_path / "one.csv"), "--qi", "zip", "--k", "1", "--limit", "0")
    assert code == 0 and out.endswith("is 1-anonymous over zip (1 row, 1 class)\n")
    code, out, _ = run(capsys, "risk", str(tmp_path / "one.csv"), "--qi", "zip")
    assert code == 0 and ": 1 row in 1 class over zip" in out


@pytest.mark.parametrize("command", ["dp", "sequential"])
def test_an_output_in_a_missing_folder_is_refused_and_nothing_is_made(tmp_path, capsys, command):
    (tmp_path / "file").write_text("x")
    for parent, problem in ((tmp_path / "no" / "such", "the folder {} does not exist; create it first"),
                            (tmp_path / "file", "{} is not a folder")):
        out = str(parent / "out.csv")
        argv = (["dp", EIA, "--attrs", "RESSALES", "--bounds", "RESSALES=0:10", "--epsilon", "1", "--method",
                 "record-noise", "-o", out] if command == "dp" else
                [*sequential_args(tmp_path)[:-4], "--qi", "age,sex,zip", "--drop", "cost", "-o", out])
        code, _, err = run(capsys, *argv)
        assert code == 2 and err == f"microrelease: error: -o {out}: {problem.format(parent)} (nothing was written)\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.parametrize(("extra", "flags"), [(["--identifier", "age"], "--identifier applies"),
                                              (["--hierarchy", "age=x.csv", "--hierarchy-dir", "h"],
                                               "--hierarchy / --hierarchy-dir apply")])
def test_the_dashboard_on_a_sample_refuses_the_table_flags_it_would_ignore(capsys, monkeypatch, extra, flags):
    import microrelease.app.serve as serve_module

    monkeypatch.setattr(serve_module, "serve", lambda **_: pytest.fail("served"))
    code, _, err = run(capsys, "app", "--sample", "toy", *extra)
    assert code == 2 and err == (f"microrelease: error: {flags} to DATA or --qi only (a sample opens with its own "
                                 "columns and hierarchies)\n")


@pytest.mark.parametrize("command", ["release", "risk"])
@pytest.mark.parametrize("node", ["1,,0", "1,x,0", "1,0,"])
def test_a_node_with_an_empty_or_bad_level_is_refused_the_same_way_by_every_command(tmp_path, capsys, command, node):
    out = ["--k", "2", "-o", str(tmp_path / "out.csv")] if command == "release" else []
    code, _, err = run(capsys, command, "--sample", "toy", "--node", node, *out)
    assert code == 2 and err == f"microrelease: error: --node: expects levels like 0,4,1; got {node!r}\n"
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(("node", "line"), [
    ("1,2", "node [1, 2] has 2 levels but there are 3 QIs ['age', 'gender', 'zipcode']"),
    ("0,9,0", "node [0, 9, 0]: level 9 of 'gender' is outside 0..1"),
    ("-1,0,0", "node [-1, 0, 0]: level -1 of 'age' is outside 0..2"),
])
def test_a_node_outside_the_lattice_is_refused_with_one_line_by_release_and_risk_alike(tmp_path, capsys, node, line):
    errors = []
    for command, out in (("release", ["--k", "2", "-o", str(tmp_path / "out.csv")]), ("risk", [])):
        code, _, err = run(capsys, command, "--sample", "toy", f"--node={node}", *out)
        assert code == 2
        errors.append(err)
    assert errors == [f"microrelease: error: --node: {line}\n"] * 2
    assert not list(tmp_path.iterdir())  # nothing written
