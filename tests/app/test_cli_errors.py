"""Bad options and inputs on the command line: one line naming the option or file, exit status 2; the
flag of a parameter the core names comes first. Any other exception is a bug and is not hidden."""

from __future__ import annotations

import argparse

import pytest

from microrelease.app.cli import build_parser, main
from microrelease.app.cli.flags import FLAGS, error_line
from microrelease.core import DataError, InvalidParameterError
from microrelease.core.data.samples import sample
from microrelease.core.models.registry import spec_parameters


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
    code, _, err = run(capsys, "dp", "--sample", "eia", "--attrs", "RESSALES", "--bounds", "RESSALES=0", "--epsilon", "1",
                       "-o", str(tmp_path / "x.csv"))
    assert code == 2 and err.startswith("microrelease: error: --bounds: each item of 'bounds' must be NAME=LO:HI")
    code, _, err = run(capsys, "dp", "--sample", "eia", "--attrs", "RESSALES", "--epsilon", "1",
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
    from microrelease.app.cli import check

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
