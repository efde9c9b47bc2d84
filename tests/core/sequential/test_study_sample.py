"""The bundled multi-table study (sample_data/study): the files are the generator's output, every value
is covered by its hierarchy, visits are well formed, and study.toml names what exists."""

from __future__ import annotations

import datetime as dt
import importlib.util
import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from microrelease.core.lattice.hierarchies import read_arx

# The repository's folder, not the installed package's: a wheel ships the CSV files only
STUDY = Path(__file__).resolve().parents[3] / "sample_data" / "study"
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def generator():
    spec = importlib.util.spec_from_file_location("study_generate", STUDY / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read(folder: Path, file: str) -> pd.DataFrame:
    return pd.read_csv(folder / file, dtype=str, keep_default_na=False)


def sections(config: dict) -> list[tuple[str, dict]]:
    """(kind, table section) for the entity table, each satellite and each event table."""
    return ([("entities", config["entities"])] + [("satellites", s) for s in config.get("satellites", [])]
            + [("events", e) for e in config.get("events", [])])


@pytest.fixture(scope="module")
def config() -> dict:
    with open(STUDY / "study.toml", "rb") as fh:
        return tomllib.load(fh)


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> Path:
    """A smaller study from another seed: the checks below hold for the generator, not one draw."""
    out = tmp_path_factory.mktemp("study")
    generator().write(out, patients=150, seed=7)
    return out


def test_the_generator_reproduces_the_bundled_files(tmp_path):
    generator().write(tmp_path)
    made = sorted(p.name for p in tmp_path.iterdir())
    assert made == sorted(p.name for p in STUDY.glob("*.csv"))
    for name in made:
        assert (tmp_path / name).read_bytes() == (STUDY / name).read_bytes(), name
    assert sum((STUDY / name).stat().st_size for name in made) < 1.5e6


def test_study_toml_names_existing_files_and_columns(config):
    assert config["anonymization"] == {"k": 5}
    assert [e["name"] for _, e in sections(config)] == ["patients", "insurance", "diagnoses", "prescriptions"]
    entity_id = config["entities"]["id"]
    for kind, table in sections(config):
        frame = read(STUDY, table["file"])
        roles = [table.get("id", entity_id)] + [table[key] for key in ("sequence_key", "time") if key in table]
        for key in ("qi", "codes", "identifiers", "keep", "drop"):
            roles += table.get(key, [])
        # every column has exactly one role: none is left to a default
        assert sorted(roles) == sorted(frame.columns), table["name"]
        graded = table.get("qi", []) + table.get("codes", [])
        assert sorted(table["hierarchies"]) == sorted(graded), table["name"]
        assert all((STUDY / path).is_file() for path in table["hierarchies"].values())
        assert (kind == "events") == ("sequence_key" in table)
    assert config["entities"]["drop"] == ["cost"]
    assert [config["entities"]["identifiers"], config["satellites"][0]["identifiers"]] == [["name"], ["policy_number"]]


@pytest.mark.parametrize("where", ["bundled", "other seed"])
def test_every_value_is_covered_by_its_hierarchy(config, other, where):
    folder = STUDY if where == "bundled" else other
    for _, table in sections(config):
        frame = read(folder, table["file"])
        assert not (frame == "").any().any(), f"blank cells in {table['file']}"
        for column, path in table["hierarchies"].items():
            hierarchy = read_arx(folder / path, column)
            assert all(row[-1] == "*" for row in hierarchy.rows), path
            missing = set(frame[column]) - set(hierarchy.ground)
            assert not missing, f"{table['file']}:{column} values not in {path}: {sorted(missing)[:5]}"


@pytest.mark.parametrize("where", ["bundled", "other seed"])
def test_tables_are_keyed_and_visits_well_formed(other, where):
    folder = STUDY if where == "bundled" else other
    patients, insurance = read(folder, "patients.csv"), read(folder, "insurance.csv")
    diagnoses, prescriptions = read(folder, "diagnoses.csv"), read(folder, "prescriptions.csv")
    ids = set(patients["patient_id"])
    assert patients["patient_id"].is_unique and patients["name"].is_unique
    assert insurance["policy_number"].is_unique
    assert set(insurance.groupby("patient_id").size()) <= {1, 2, 3} and set(insurance["patient_id"]) == ids
    assert set(diagnoses["patient_id"]) == ids and set(prescriptions["patient_id"]) <= ids

    # a visit: one patient, one ISO date, in both event tables; every visit has a diagnosis
    for frame in (diagnoses, prescriptions):
        for date in set(frame["date"]):
            assert ISO_DATE.fullmatch(date) and dt.date.fromisoformat(date).isoformat() == date, date
    visits = diagnoses.groupby("visit_id").agg(patient_id=("patient_id", "first"), date=("date", "first"),
                                               patients=("patient_id", "nunique"), dates=("date", "nunique"))
    assert (visits["patients"] == 1).all() and (visits["dates"] == 1).all()
    assert set(prescriptions["visit_id"]) <= set(visits.index)
    joined = prescriptions.merge(visits[["patient_id", "date"]], left_on="visit_id", right_index=True,
                                 suffixes=("", "_of_visit"))
    assert len(joined) == len(prescriptions)
    assert (joined["patient_id"] == joined["patient_id_of_visit"]).all()
    assert (joined["date"] == joined["date_of_visit"]).all()
    assert set(diagnoses.groupby("visit_id").size()) <= {1, 2, 3, 4}
    assert set(prescriptions.groupby("visit_id").size()) <= {1, 2, 3}
    assert not diagnoses.duplicated(["visit_id", "icd"]).any()
    assert not prescriptions.duplicated(["visit_id", "drug"]).any()

    # visits P-V1, P-V2, ... numbered without gaps, 1-6 per patient, dates strictly increasing by rank
    for pid, own in visits.groupby("patient_id"):
        rank = own.index.str.removeprefix(f"{pid}-V").astype(int)
        order = own.assign(rank=rank).sort_values("rank")
        assert list(order["rank"]) == list(range(1, len(own) + 1)) and len(own) <= 6, pid
        dates = [dt.date.fromisoformat(d) for d in order["date"]]
        assert all(a < b for a, b in zip(dates, dates[1:], strict=False)), pid


def test_prescriptions_follow_the_diagnoses():
    """Most drugs are of a class treating a chapter diagnosed at the same visit (the generator's
    correlation): well above what drugs drawn regardless of the diagnoses would give."""
    module = generator()
    diagnoses, prescriptions = read(STUDY, "diagnoses.csv"), read(STUDY, "prescriptions.csv")
    classes = {row[0]: row[1] for row in read_arx(STUDY / "hierarchy_drug.csv", "drug").rows}
    chapters = diagnoses.assign(chapter=diagnoses["icd"].str[0]).groupby("visit_id")["chapter"].agg(set)
    treated = [any(classes[drug] in module.TREATS[c] for c in chapters[visit])
               for visit, drug in zip(prescriptions["visit_id"], prescriptions["drug"], strict=True)]
    # a drug of a class drawn regardless of the diagnoses would: 2/6 per chapter diagnosed, about 0.5 here
    assert sum(treated) / len(treated) > 0.8
