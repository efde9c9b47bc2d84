"""Bad options and inputs on the command line: one line naming the option or file, exit status 2."""

from __future__ import annotations

import pytest

from microrelease.app.cli import main
from microrelease.core.data.samples import sample


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
