"""The independent study checker (study_checker.py) on a hand-made study of 4 patients, a satellite and
two event tables, with a hand-made 2-anonymous release: it passes, and each kind of fault put into it
is caught with a message. Its history matcher agrees with brute force on small random cases."""

from __future__ import annotations

import itertools
import random
from datetime import date, datetime, timedelta
from pathlib import Path

import pandas as pd
import pytest
from study_checker import check_study, match_history  # noqa: E402 (tests/ is on the path)

KINDS = ("dates", "integers", "numbers", "timestamps")
PSEUDONYM = {"P1": "R7", "P2": "R3", "P3": "R9", "P4": "R1"}
CONFIG = """
[entities]
name = "patients"
file = "in/patients.csv"
id = "patient_id"
qi = ["age", "sex"]
identifiers = ["name"]
drop = ["cost"]
hierarchy_dir = "h"

[[satellites]]
name = "insurance"
file = "in/insurance.csv"
qi = ["plan"]
identifiers = ["policy_number"]
hierarchies = { plan = "h/plans.csv" }

[[events]]
name = "diagnoses"
file = "in/diagnoses.csv"
sequence_key = "visit_id"
time = "date"
codes = ["icd"]
drop = ["doctor"]

[[events]]
name = "prescriptions"
file = "in/prescriptions.csv"
sequence_key = "visit_id"
time = "date"
codes = ["drug", "dose"]
hierarchies = { drug = "h/drugs.csv", dose = "h/hierarchy_dose.csv" }
"""
HIERARCHIES = {  # file -> ARX rows
    "hierarchy_age.csv": ["23;20-29;*", "27;20-29;*", "31;30-39;*", "35;30-39;*"],
    "hierarchy_sex.csv": ["M;*", "F;*"],
    "plans.csv": ["Basic;Public;*", "Plus;Public;*", "Gold;Private;*", "Silver;Private;*"],
    "study_hierarchy_icd.csv": ["A01;A;*", "A02;A;*", "B01;B;*", "B02;B;*"],
    "drugs.csv": ["asp;analgesic;*", "ibu;analgesic;*", "amox;antibiotic;*"],
    "hierarchy_dose.csv": ["low;*", "high;*"],
}
# input visits: (patient, visit, day); P2-c's diagnosis is suppressed, P4-a and P4-b make one released visit
DIAGNOSES = [("P1", "a", 2, "A01"), ("P1", "b", 40, "B01"), ("P2", "a", 4, "A02"), ("P2", "b", 31, "B02"),
             ("P2", "c", 60, "A01"), ("P3", "a", 9, "A01"), ("P3", "b", 19, "A02"), ("P4", "a", 7, "A01"),
             ("P4", "c", 24, "B02")]
PRESCRIPTIONS = [("P1", "a", 2, "asp", "low"), ("P2", "a", 4, "ibu", "low"), ("P3", "a", 9, "amox", "high"),
                 ("P4", "b", 11, "amox", "high")]
# released visits per group: (rank, first day, last day, [(table, codes...)] in position order)
HISTORIES = {("R7", "R3"): [(1, 2, 4, [("diagnoses", "A"), ("prescriptions", "analgesic", "low")]),
                            (2, 31, 40, [("diagnoses", "B")])],
             ("R9", "R1"): [(1, 7, 11, [("diagnoses", "A01"), ("prescriptions", "amox", "high")]),
                            (2, 19, 24, [("diagnoses", "*")])]}


def time_text(kind: str, day: int, released: bool = False) -> str:
    """A time as the input writes it, or as the release writes it (timestamps then in UTC)."""
    if kind == "dates":
        return (date(2024, 1, 1) + timedelta(days=day)).isoformat()
    if kind == "integers":
        return str(1_600_000_000 + day * 86_400)
    if kind == "numbers":
        return repr(-1.5 + day * 0.1)
    local = datetime(2024, 1, 1, 10, 0) + timedelta(days=day)  # at +02:00, i.e. 08:00 UTC
    return (local - timedelta(hours=2)).isoformat() + "Z" if released else local.isoformat() + "+02:00"


def interval(kind: str, first: int, last: int) -> str:
    return f"{time_text(kind, first, True)}..{time_text(kind, last, True)}"


def write_study(root: Path, kind: str) -> Path:
    (root / "in").mkdir(parents=True)
    (root / "h").mkdir()
    for name, rows in HIERARCHIES.items():
        (root / "h" / name).write_text("\n".join(rows) + "\n")
    frames = {
        "patients": pd.DataFrame({"patient_id": ["P1", "P2", "P3", "P4"], "name": ["Ann", "Bob", "Cid", "Dee"],
                                  "age": ["23", "27", "31", "35"], "sex": ["M", "M", "F", "F"],
                                  "cost": ["1", "2", "3", "4"]}),
        "insurance": pd.DataFrame([("P1", "N1", "Basic"), ("P1", "N2", "Gold"), ("P2", "N3", "Plus"),
                                   ("P2", "N4", "Silver"), ("P3", "N5", "Basic"), ("P4", "N6", "Plus"),
                                   ("P4", "N7", "Gold")], columns=["patient_id", "policy_number", "plan"]),
        "diagnoses": pd.DataFrame([(p, f"{p}-{v}", time_text(kind, d), icd, "Dr X") for p, v, d, icd in DIAGNOSES],
                                  columns=["patient_id", "visit_id", "date", "icd", "doctor"]),
        "prescriptions": pd.DataFrame([(p, f"{p}-{v}", time_text(kind, d), drug, dose)
                                       for p, v, d, drug, dose in PRESCRIPTIONS],
                                      columns=["patient_id", "visit_id", "date", "drug", "dose"]),
    }
    for name, frame in frames.items():
        # rows in a scrambled order: the checker must not rely on the input's order
        frame.sample(frac=1, random_state=3).to_csv(root / "in" / f"{name}.csv", index=False)
    (root / "study.toml").write_text(CONFIG)
    return root / "study.toml"


def valid_release(kind: str) -> dict[str, pd.DataFrame]:
    events: dict[str, list] = {"diagnoses": [], "prescriptions": []}
    for group, visits in HISTORIES.items():
        for rid in group:
            for rank, first, last, evs in visits:
                for position, (table, *codes) in enumerate(evs, start=1):
                    events[table].append((rid, f"{rid}-V{rank}", interval(kind, first, last), *codes, position))
    return {
        "patients": pd.DataFrame({"patient_id": ["R7", "R3", "R9", "R1"], "age": ["20-29", "20-29", "30-39", "30-39"],
                                  "sex": ["M", "M", "F", "F"]}),
        "insurance": pd.DataFrame({"patient_id": ["R9", "R7", "R3", "R7", "R1", "R3"],
                                   "plan": ["Public", "Private", "Public", "Public", "Public", "Private"]}),
        "diagnoses": pd.DataFrame(events["diagnoses"], columns=["patient_id", "visit_id", "date", "icd", "position"]),
        "prescriptions": pd.DataFrame(events["prescriptions"],
                                      columns=["patient_id", "visit_id", "date", "drug", "dose", "position"]),
    }


def audit_of(config: Path, release: dict[str, pd.DataFrame]) -> dict:
    """The audit the anonymizer would write for ``release``: counts taken from the files."""
    n_in = {t: len(pd.read_csv(config.parent / "in" / f"{t}.csv")) for t in ("insurance", "diagnoses", "prescriptions")}
    n_out = {t: len(release[t]) for t in n_in}
    events = {t: {"input_events": n_in[t], "released_events": n_out[t], "suppressed_events": n_in[t] - n_out[t]}
              for t in ("diagnoses", "prescriptions")}
    return {"seeded": False, "events": events,
            "satellites": [{"name": "insurance", "input_rows": n_in["insurance"], "released_rows": n_out["insurance"],
                            "suppressed_rows": n_in["insurance"] - n_out["insurance"]}]}


def check(tmp_path: Path, kind: str = "dates", mutate=None, pseudonym=PSEUDONYM, audit_mutate=None):
    config = write_study(tmp_path / "study", kind)
    release = valid_release(kind)
    audit = audit_of(config, release)  # the valid release's counts: a mutation may break them
    if mutate is not None:
        mutate(release, kind)
    if audit_mutate is not None:
        audit_mutate(audit)
    out = tmp_path / "out"
    out.mkdir(parents=True)
    for name, frame in release.items():
        frame.sample(frac=1, random_state=5).to_csv(out / f"{name}.csv", index=False)
    return check_study(config, out, pseudonym, 2, audit)


@pytest.mark.parametrize("kind", KINDS)
def test_valid_release_passes(tmp_path, kind):
    verdict = check(tmp_path, kind)
    assert verdict.problems() == []
    assert verdict.smallest_shared == 2 and verdict.ok(2) and not verdict.ok(3)
    assert set(verdict.smallest_class) in ({"R7", "R3"}, {"R9", "R1"})


def set_cells(table: str, rows, column: str, value: str):
    def mutate(release, kind):
        frame = release[table]
        frame.loc[frame.index.isin(rows) if not callable(rows) else rows(frame), column] = (
            value(kind) if callable(value) else value)
    return mutate


def first_visit_of_group_one(frame):
    return frame["visit_id"].isin(["R7-V1", "R3-V1"])


def swap_visits(release, kind):
    for table in ("diagnoses", "prescriptions"):
        frame = release[table]
        one = frame["patient_id"].isin(["R7", "R3"])
        frame.loc[one, "visit_id"] = frame.loc[one, "visit_id"].map(
            lambda v: v.replace("-V1", "-V2") if v.endswith("-V1") else v.replace("-V2", "-V1"))


def extra_satellite_rows(release, kind):
    extra = pd.DataFrame({"patient_id": ["R7", "R3"], "plan": ["Public", "Public"]})
    release["insurance"] = pd.concat([release["insurance"], extra], ignore_index=True)


def add_column(table: str, column: str):
    def mutate(release, kind):
        release[table][column] = "x"
    return mutate


@pytest.mark.parametrize(("mutate", "expected"), [
    # a QI that does not generalize its source (both members, so that they still look alike)
    (set_cells("patients", [0, 1], "age", "30-39"), "patients: entity 'R7': age '30-39' does not generalize the "
                                                    "source '23'"),
    (extra_satellite_rows, "insurance: entity 'R7': only 2 of its 3 released rows match distinct input rows"),
    (set_cells("diagnoses", lambda f: f["visit_id"].isin(["R9-V2", "R1-V2"]), "icd", "analgesic"),
     "entity 'R9' visit V2: event 1 (diagnoses ('analgesic',)) generalizes no input event of diagnoses"),
    (lambda r, kind: [set_cells(t, first_visit_of_group_one, "date", interval(kind, 3, 4))(r, kind)
                      for t in ("diagnoses", "prescriptions")],
     "entity 'R7' visit V1: event 1 (diagnoses ('A',)) has no such input event at a time inside"),
    (swap_visits, "entity 'R7' visit V2: event 1 (diagnoses ('A',)) cannot be matched in order"),
    (add_column("patients", "name"), "patients.csv: column 'name' is an identifier or dropped column"),
    (add_column("diagnoses", "doctor"), "diagnoses.csv: column 'doctor' is an identifier or dropped column"),
], ids=["qi", "satellite-row", "other-table-code", "time-outside", "swapped-visits", "identifier", "dropped"])
@pytest.mark.parametrize("kind", KINDS)
def test_untruthful_release_is_caught(tmp_path, mutate, expected, kind):
    verdict = check(tmp_path, kind, mutate)
    assert any(p.startswith(expected) for p in verdict.untruthful), verdict.untruthful
    assert not verdict.ok(2) and not verdict.malformed


def test_entity_unlike_its_partner_is_caught(tmp_path):
    verdict = check(tmp_path, mutate=set_cells("patients", [3], "sex", "*"))  # R1: F -> * is truthful
    assert verdict.problems() == []
    assert verdict.smallest_shared == 1 and not verdict.ok(2) and verdict.ok(1)
    assert verdict.smallest_class in (("R1",), ("R9",))


@pytest.mark.parametrize(("table", "key", "counted"), [("diagnoses", "suppressed_events", "events"),
                                                        ("prescriptions", "released_events", "events"),
                                                        ("insurance", "suppressed_rows", "rows")])
def test_audit_off_by_one_is_caught(tmp_path, table, key, counted):
    def off_by_one(audit):
        counts = audit["events"][table] if counted == "events" else audit["satellites"][0]
        counts[key] += 1
    verdict = check(tmp_path, audit_mutate=off_by_one)
    assert len(verdict.accounting) == 1 and verdict.accounting[0].startswith(f"{table}: ")
    assert verdict.untruthful == () and not verdict.ok(2)


def test_audit_without_counts_is_caught(tmp_path):
    verdict = check(tmp_path, audit_mutate=lambda audit: audit.pop("satellites"))
    assert verdict.accounting == ("the audit has no ('input_rows', 'released_rows', 'suppressed_rows') for "
                                  "'insurance'",)


def test_entity_missing_or_repeated_is_caught(tmp_path):
    def drop_r1_repeat_r7(release, kind):
        patients = release["patients"]
        release["patients"] = pd.concat([patients[patients["patient_id"] != "R1"], patients.iloc[[0]]])
    verdict = check(tmp_path, mutate=drop_r1_repeat_r7)
    assert sorted(verdict.accounting) == ["patients: input entity 'P4' (released as 'R1') is not released",
                                          "patients: released id 'R7' appears 2 times"]
    assert verdict.malformed == ("insurance: rows of 'R1', not a released entity",)


def test_input_id_as_released_id_is_caught(tmp_path):
    def rename(release, kind):
        for frame in release.values():
            frame["patient_id"] = frame["patient_id"].replace("R7", "P2")
            if "visit_id" in frame:
                frame["visit_id"] = frame["visit_id"].str.replace("R7-", "P2-")
    verdict = check(tmp_path, mutate=rename, pseudonym={**PSEUDONYM, "P1": "P2"})
    assert "patients.csv: the id column 'patient_id' holds input ids ['P2']" in verdict.untruthful
    assert verdict.accounting == () and verdict.smallest_shared == 2


def test_malformed_visits_are_caught(tmp_path):
    verdict = check(tmp_path, mutate=set_cells("diagnoses", lambda f: f["visit_id"] == "R9-V2", "visit_id", "R9-V3"))
    assert "entity 'R9': visit ranks ['1', '3'] are not 1..2" in verdict.malformed
    verdict = check(tmp_path / "b", mutate=set_cells("prescriptions", lambda f: f["patient_id"] == "R7", "position", 1))
    assert any(p.startswith("entity 'R7' visit V1: times") for p in verdict.malformed)


def test_bad_config_is_refused_by_name(tmp_path):
    config = write_study(tmp_path, "dates")
    config.write_text(CONFIG.replace('hierarchy_dir = "h"', ""))
    with pytest.raises(ValueError, match="no hierarchy for column 'age'"):
        check_study(config, tmp_path, PSEUDONYM, 2)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        check_study(config, tmp_path, PSEUDONYM, 0)


# ---- the history matcher against brute force ----

def generalizes(table: int, released: tuple, codes: tuple) -> bool:
    return released == codes or released == ("*",)


def brute_force(released, inputs) -> bool:
    """Try every injective assignment of released events to input events (the rule, spelled out)."""
    flat = [(vi, time, table, codes) for vi, visit in enumerate(inputs) for time, table, codes in visit]
    slots = [(r, low, high, table, codes) for r, (low, high, evs) in enumerate(released) for table, codes in evs]
    for choice in itertools.permutations(range(len(flat)), len(slots)):
        picked = [flat[i] for i in choice]
        if not all(p[2] == s[3] and generalizes(s[3], s[4], p[3]) and s[1] <= p[1] <= s[2]
                   for s, p in zip(slots, picked, strict=True)):
            continue
        in_order = all(picked[n][:2] <= picked[n + 1][:2] for n in range(len(slots) - 1)
                       if slots[n][0] == slots[n + 1][0])
        used = [[p[0] for s, p in zip(slots, picked, strict=True) if s[0] == r] for r in range(len(released))]
        if in_order and all(max(used[r]) < min(used[r + 1]) for r in range(len(released) - 1)):
            return True
    return False


def test_match_history_agrees_with_brute_force():
    rand = random.Random(16)
    outcomes = []
    for _ in range(3000):
        inputs = [[(rand.randint(0, 4), rand.randint(0, 1), (rand.choice("xy"),)) for _ in range(rand.randint(1, 3))]
                  for _ in range(rand.randint(1, 3))]
        released = []
        for _ in range(rand.randint(1, 2)):
            low = rand.randint(0, 4)
            released.append((low, rand.randint(low, 4), [(rand.randint(0, 1), (rand.choice("xy*"),))
                                                         for _ in range(rand.randint(1, 2))]))
        expected = brute_force(released, inputs)
        failed = match_history(released, inputs, generalizes)
        assert (failed is None) == expected, (released, inputs, failed)
        outcomes.append(expected)
    assert 0.1 < sum(outcomes) / len(outcomes) < 0.9  # both answers are exercised
