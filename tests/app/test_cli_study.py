"""``microrelease sequential --config study.toml -o out/``: a study from its TOML, k from the file or the
flag, the one-table flags refused beside it, errors naming --config."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from microrelease.app.cli import main
from microrelease.core.data.samples import sample_data_folder

STUDY = sample_data_folder("study")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_study_is_released_one_file_per_table_with_k_from_the_file(tmp_path, capsys):
    out = tmp_path / "out"
    code, text, err = run(capsys, "sequential", "--config", str(STUDY / "study.toml"), "-o", str(out), "--quiet")
    assert code == 0, err
    assert sorted(p.name for p in out.glob("*.csv")) == ["diagnoses.csv", "insurance.csv", "patients.csv",
                                                        "prescriptions.csv"]
    report = json.loads((out / "report.json").read_text())
    assert report["parameters"]["k"] == 5  # [anonymization] k = 5 in the file
    assert report["check"]["smallest_shared_set"] >= 5
    assert "every entity shares all its tables with >= 4 others" in text
    patients = pd.read_csv(out / "patients.csv", dtype=str)
    assert list(patients.columns) == ["patient_id", "age", "sex", "zip"]  # name (identifier) and cost (dropped) gone
    assert not set(patients["patient_id"]) & set(pd.read_csv(STUDY / "patients.csv", dtype=str)["patient_id"])


def test_the_k_flag_overrides_the_file(tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run(capsys, "sequential", "--config", str(STUDY / "study.toml"), "--k", "3", "-o", str(out),
                       "--quiet", "--w-time", "0.5")
    assert code == 0, err
    report = json.loads((out / "report.json").read_text())
    assert report["parameters"]["k"] == 3 and report["parameters"]["weights"]["time"] == 0.5


@pytest.mark.parametrize("extra, words", [
    (["--qi", "age"], "the study file describes the tables: drop --qi"),
    (["--entity-id", "patient_id", "--code", "icd"], "drop --entity-id, --code"),
])
def test_the_one_table_flags_are_refused_beside_a_study(tmp_path, capsys, extra, words):
    code, _, err = run(capsys, "sequential", "--config", str(STUDY / "study.toml"), *extra, "-o", str(tmp_path / "o"))
    assert code == 2 and words in err and "--config:" in err
    assert not (tmp_path / "o").exists()


def test_neither_a_study_nor_the_tables_is_refused_naming_both_ways(tmp_path, capsys):
    code, _, err = run(capsys, "sequential", "--k", "3", "-o", str(tmp_path / "o"))
    assert code == 2 and "give --config study.toml, or the entity table, the event table, --entity-id" in err


def test_a_study_file_error_names_the_flag_and_the_key(tmp_path, capsys):
    folder = tmp_path / "study"
    shutil.copytree(STUDY, folder)
    toml = folder / "study.toml"
    toml.write_text(toml.read_text().replace('identifiers = ["name"]', 'identifers = ["name"]'))
    code, _, err = run(capsys, "sequential", "--config", str(toml), "-o", str(tmp_path / "o"))
    assert code == 2 and err.startswith("microrelease: error: --config: [entities]: unknown key(s) ['identifers']")
    assert not (tmp_path / "o").exists()
    code, _, err = run(capsys, "sequential", "--config", str(tmp_path / "none.toml"), "-o", str(tmp_path / "o"))
    assert code == 2 and "no study file" in err


def test_a_release_never_lands_on_an_input_of_the_study(tmp_path, capsys):
    folder = tmp_path / "study"
    shutil.copytree(STUDY, folder)
    code, _, err = run(capsys, "sequential", "--config", str(folder / "study.toml"), "-o", str(folder))
    assert code == 2 and "input" in err and "(nothing was written)" in err
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in STUDY.iterdir())
