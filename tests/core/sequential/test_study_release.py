"""A study's release, checked by the independent checker (tests/study_checker.py, which calls no
anonymizer code): k-indistinguishability over all tables together, truthfulness of every released
value, and the accounting of every row, on the bundled study and on an edge-case study."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
from study_checker import check_study

from microrelease.core.data.samples import sample_data_folder
from microrelease.core.lattice.hierarchies import read_arx
from microrelease.core.sequential.study import load_study
from microrelease.core.sequential.study_config import read_study
from microrelease.core.sequential.study_release import anonymize_study, write_study

STUDY = sample_data_folder("study")


def release_and_check(toml, out, k):
    study = read_study(toml)
    data = load_study(study)
    release = anonymize_study(data, k)
    published = write_study(release, data, out, inputs=[t.file for t in study.tables], attack_sample=200)
    ids = data.entities[data.entity_id].astype(str)
    verdict = check_study(toml, out, dict(zip(ids, release.base.pseudonym, strict=True)), k,
                          json.loads(published.target.audit.read_text()))
    return data, release, published, verdict


@pytest.mark.parametrize("k", [2, 5, 10])
def test_the_bundled_study_released_at_k_passes_the_independent_checker(tmp_path, k):
    data, release, published, verdict = release_and_check(STUDY / "study.toml", tmp_path / "out", k)
    assert verdict.ok(k), verdict.problems()
    assert verdict.smallest_shared == published.data["check"]["smallest_shared_set"] >= k
    audit = json.loads(published.target.audit.read_text())
    attackers = audit["attack"]["attackers"]
    assert attackers["full_knowledge"]["after"] <= 1 / k + 1e-12
    assert attackers["full_knowledge"]["smallest_candidates_after"] >= k
    # the suppression is counted per table, and the written files hold the rest
    for name in ("insurance", "diagnoses", "prescriptions"):
        written = pd.read_csv(tmp_path / "out" / f"{name}.csv", dtype=str)
        counts = audit["counts"][name]
        suppressed = counts.get("suppressed_events", counts.get("suppressed_rows"))
        assert len(written) + suppressed == len(pd.read_csv(STUDY / f"{name}.csv"))
    report = (tmp_path / "out" / "report.json").read_text()
    assert "policy_number" not in pd.read_csv(tmp_path / "out" / "insurance.csv").columns
    assert "POL-" not in report and "Patient " not in report


def test_the_checker_catches_a_release_changed_after_writing(tmp_path):
    """The check is not vacuous on real output: one changed cell of one table is found."""
    _, _, _, verdict = release_and_check(STUDY / "study.toml", tmp_path / "out", 5)
    assert verdict.ok(5)
    path = tmp_path / "out" / "prescriptions.csv"
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    # a ground drug other than the one written: the entity no longer shares its group's record
    frame.loc[0, "drug"] = "tamoxifen" if frame.loc[0, "drug"] != "tamoxifen" else "amoxicillin"
    frame.to_csv(path, index=False)
    # without the pseudonyms, the checker's signature count alone must see it
    again = check_study(STUDY / "study.toml", tmp_path / "out", {}, 5)
    assert again.smallest_shared < 5


def edge_study(folder):
    """Unicode ids, an entity without events or satellite rows, identical entities, a 300-visit entity,
    repeated codes, timestamps with zones, two code columns."""
    folder.mkdir()
    rng = np.random.default_rng(5)
    ids = ["ü-1", "名-2", "x,3", "'=4", "e5", "e6", "e7", "e8"]
    pd.DataFrame({"pid": ids, "age": ["30", "31", "30", "45", "45", "46", "30", "30"],
                  "nm": [f"N{i}" for i in range(8)]}).to_csv(folder / "people.csv", index=False)
    pd.DataFrame({"pid": ["ü-1", "ü-1", "名-2", "e5", "e6", "e7", "e8"],
                  "plan": ["A", "B", "A", "B", "B", "A", "A"]}).to_csv(folder / "plans.csv", index=False)
    rows, drugs = [], []
    for p in ids[1:]:
        visits = 300 if p == "e5" else int(rng.integers(1, 4))
        for v in range(visits):
            when = f"2024-01-{1 + v % 28:02d}T{v % 24:02d}:00:00+02:00" if p != "e5" else \
                f"2024-{1 + v // 28 % 12:02d}-{1 + v % 28:02d}T00:{v % 60:02d}:00Z"
            for _ in range(int(rng.integers(1, 3))):
                rows.append((p, f"{p}#{v}", when, "c1" if p in ("e7", "e8") else str(rng.choice(["c1", "c2", "d1"]))))
            if rng.random() < 0.5:
                drugs.append((p, f"{p}#{v}", when, str(rng.choice(["r1", "r2"])), str(rng.choice(["lo", "hi"]))))
    pd.DataFrame(rows, columns=["pid", "visit", "at", "code"]).to_csv(folder / "codes.csv", index=False)
    pd.DataFrame(drugs, columns=["pid", "visit", "at", "drug", "dose"]).to_csv(folder / "drugs.csv", index=False)
    for name, rows in {"age": [("30", "30-39", "*"), ("31", "30-39", "*"), ("45", "40-49", "*"), ("46", "40-49", "*")],
                       "plan": [("A", "*"), ("B", "*")], "code": [("c1", "c", "*"), ("c2", "c", "*"), ("d1", "d", "*")],
                       "drug": [("r1", "*"), ("r2", "*")], "dose": [("lo", "*"), ("hi", "*")]}.items():
        (folder / f"{name}.csv").write_text("".join(";".join(r) + "\n" for r in rows))
    (folder / "study.toml").write_text("""
[entities]
name = "people"
file = "people.csv"
id = "pid"
qi = ["age"]
identifiers = ["nm"]
hierarchy_dir = "."
[[satellites]]
name = "plans"
file = "plans.csv"
qi = ["plan"]
hierarchy_dir = "."
[[events]]
name = "codes"
file = "codes.csv"
sequence_key = "visit"
time = "at"
codes = ["code"]
hierarchy_dir = "."
[[events]]
name = "drugs"
file = "drugs.csv"
sequence_key = "visit"
time = "at"
codes = ["drug", "dose"]
hierarchy_dir = "."
""")
    for name in ("age", "plan", "code", "drug", "dose"):
        read_arx(folder / f"{name}.csv", name)
    return folder / "study.toml"


@pytest.mark.parametrize("k", [2, 3])
def test_an_edge_case_study_passes_the_independent_checker(tmp_path, k):
    toml = edge_study(tmp_path / "edge")
    data, release, published, verdict = release_and_check(toml, tmp_path / "out", k)
    assert verdict.ok(k), verdict.problems()
    assert data.time_scale.kind == "timestamps" and data.time_scale.zone
    written = pd.read_csv(tmp_path / "out" / "codes.csv", dtype=str)
    assert written["at"].str.endswith("Z").all()  # in UTC, as the rule says
    shutil.rmtree(tmp_path / "out")  # made by this test


def test_a_table_whose_events_are_all_suppressed_or_empty_is_written_with_its_header(tmp_path):
    """k = 1000 on the bundled study (one group: its member with no prescription leaves none to keep)
    suppresses every prescription; an event table with a header only is a table without events. Both
    release, and pass the checker."""
    data, release, published, verdict = release_and_check(STUDY / "study.toml", tmp_path / "out", 1000)
    assert verdict.ok(1000), verdict.problems()
    empty = pd.read_csv(tmp_path / "out" / "prescriptions.csv", dtype=str)
    assert len(empty) == 0 and list(empty.columns) == ["patient_id", "visit_id", "date", "drug", "dose", "position"]
    folder = tmp_path / "study"
    shutil.copytree(STUDY, folder)
    (folder / "prescriptions.csv").write_text("patient_id,visit_id,date,drug,dose\n")
    data, release, published, verdict = release_and_check(folder / "study.toml", tmp_path / "out2", 5)
    assert verdict.ok(5), verdict.problems()
    assert published.data["counts"]["released_rows"]["prescriptions"] == 0
