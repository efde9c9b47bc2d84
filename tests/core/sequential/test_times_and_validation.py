"""Issue 16 items 2, 3 and the anonymization part of 4: times as times (numbers, ISO dates, ISO
timestamps) written exactly, validation (weights, times, blank QIs, every column's fate), and codes
kept by merging visits before they are suppressed.

The released files are read back and checked with plain Python (``int``, ``float``,
``date.fromisoformat``, ``datetime.fromisoformat``), never with the module that wrote them."""

from __future__ import annotations

import json
import math
from datetime import date, datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from sweeps import sweep

from microrelease.core import DataError, Hierarchy, InvalidParameterError, load_dataset
from microrelease.core.sequential.cost import CostWeights
from microrelease.core.sequential.guarantee import verify_release
from microrelease.core.sequential.pipeline import anonymize_sequential, write_sequential
from microrelease.core.sequential.rt_data import load_sequential

CODES = Hierarchy("code", tuple((f"{c}{b}{i}", f"{c}{b}*", f"{c}**", "*") for c in "AB" for b in "01" for i in "01"))
AGE = Hierarchy("age", tuple((str(a), f"{a // 10 * 10}s", "*") for a in range(20, 40)))
KINDS = ("integers", "numbers", "dates", "naive timestamps", "aware timestamps")


def time_text(kind: str, day: int, second: int, rng) -> str:
    """An event's time as a user would write it: ``day`` orders visits, ``second`` events in a visit."""
    if kind == "integers":  # epoch seconds: 6 significant digits cannot tell them apart
        return str(1_600_000_000 + day * 86_400 + second)
    if kind == "numbers":
        return repr(-3.5 + day * 0.1 + second * 1e-4)
    if kind == "dates":
        return (date(2024, 1, 1) + timedelta(days=day)).isoformat()
    t = datetime(2024, 1, 1, 8, 0) + timedelta(days=day, seconds=second, milliseconds=250 * (second % 4))
    text = t.isoformat(sep=rng.choice(["T", " "]), timespec="milliseconds" if second % 4 else "seconds")
    # a zone per event: the instant is the local time less its offset (events may change order)
    return text + rng.choice(["Z", "+02:00", "-05:30"]) if kind == "aware timestamps" else text


def parse_time(text: str, kind: str):
    if kind == "integers":
        assert text.lstrip("-").isdigit(), text  # integers are written as integers
        return int(text)
    if kind == "numbers":
        return float(text)
    if kind == "dates":
        return date.fromisoformat(text)
    value = datetime.fromisoformat(text)
    assert (value.tzinfo is not None) == (kind == "aware timestamps"), text
    return value


def tables(kind: str, seed: int, n: int = 24):
    rng = np.random.default_rng(seed)
    entities = pd.DataFrame({"id": [f"p{i}" for i in range(n)], "name": [f"secret {i}" for i in range(n)],
                             "age": [str(a) for a in rng.integers(20, 40, n)], "cost": rng.integers(1, 99, n)})
    rows = []
    for e in entities["id"]:
        days = np.sort(rng.choice(300, size=int(rng.integers(0, 5)), replace=False))
        for v, day in enumerate(days):
            for x in range(int(rng.integers(1, 4))):
                rows.append((e, f"{e}/{v}", time_text(kind, int(day), 7 * x, rng), str(rng.choice(CODES.ground)),
                             f"dr {rng.integers(5)}"))
    events = pd.DataFrame(rows, columns=["id", "visit", "day", "code", "doctor"])
    return entities, events.sample(frac=1, random_state=seed)  # the input need not be sorted


KWARGS = {"entity_id": "id", "qi": ["age"], "sequence_key": "visit", "order_by": "day", "code": "code",
          "code_hierarchy": CODES, "hierarchies": {"age": AGE}, "identifiers": ["name"]}


def ancestors(h: Hierarchy) -> dict[str, set[str]]:
    return {row[0]: set(row) for row in h.rows}


def matched(released: list[tuple], source: list[tuple], code_anc) -> bool:
    """Can each released (low, high, label) take a distinct source (time, code) with low <= time <= high
    and the label an ancestor of the code? (Kuhn's augmenting paths: the sizes are small.)"""
    owner: dict[int, int] = {}

    def place(r: int, seen: set[int]) -> bool:
        low, high, label = released[r]
        for s, (time, code) in enumerate(source):
            if s not in seen and low <= time <= high and label in code_anc[code]:
                seen.add(s)
                if s not in owner or place(owner[s], seen):
                    owner[s] = r
                    return True
        return False

    return all(place(r, set()) for r in range(len(released)))


def released_visits(events: pd.DataFrame, kind: str) -> dict[str, list[tuple]]:
    """Released id -> [(low, high, label)] from the written events, intervals parsed with plain Python."""
    out: dict[str, list[tuple]] = {}
    for row in events.itertuples(index=False):
        ends = [parse_time(t, kind) for t in row.day.split("..")]
        assert len(ends) in (1, 2) and ends[0] <= ends[-1], row.day
        out.setdefault(row.id, []).append((ends[0], ends[-1], row.code))
    return out


# --- item 2: times as times ------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("seed", "k"), sweep([(2, 3), (1, 2)], names=2))  # (1, 2), the slower, in the slow step
def test_every_written_interval_contains_its_source_times(tmp_path, kind, seed, k):
    entities, events = tables(kind, seed)
    entities, events = entities.drop(columns="cost"), events.drop(columns="doctor")
    data = load_sequential(entities, events, **KWARGS)
    release = anonymize_sequential(data, k)
    write_sequential(release, data, tmp_path / "out")
    written = pd.read_csv(tmp_path / "out" / "events.csv", dtype=str, keep_default_na=False)
    ents = pd.read_csv(tmp_path / "out" / "entities.csv", dtype=str, keep_default_na=False)
    assert verify_release(ents, written, entity_id="id", qi=["age"], sequence_key="visit", order_by="day",
                         code="code").min() >= k
    visits = released_visits(written, kind)
    code_anc = ancestors(CODES)
    every_time = {parse_time(t, kind) for t in events["day"]}
    for e, name in enumerate(entities["id"]):
        mine = events[events["id"] == name]
        source = [(parse_time(t, kind), c) for t, c in zip(mine["day"], mine["code"], strict=True)]
        out = visits.get(release.pseudonym[e], [])
        assert all(low in every_time and high in every_time for low, high, _ in out)  # ends are input times
        assert matched(out, source, code_anc)  # each released code: one of its own, in the interval, generalized
        assert len(out) + release.suppressed_elements[e] == len(source)


def test_epoch_seconds_are_written_as_integers_not_in_six_digits():
    entities = pd.DataFrame({"id": ["x", "y"], "age": ["25", "26"]})
    events = pd.DataFrame([("x", "x1", "1600000000", "A00"), ("y", "y1", "1600000123", "A01")],
                          columns=["id", "visit", "day", "code"])
    release = anonymize_sequential(load_sequential(entities, events, **{**KWARGS, "identifiers": []}), 2)
    assert set(release.events["day"]) == {"1600000000..1600000123"}  # was 1.6e+09-1.6e+09


@pytest.mark.parametrize(("cells", "message"), [
    (["1", "inf"], r"1 event\(s\) have a time 'day' that is not finite: \['inf'\]"),
    (["nan", "2"], r"time 'day' that is not finite: \['nan'\]"),
    (["1", "1e999"], r"time 'day' that is not finite: \['1e999'\]"),
    (["1", " "], r"1 event\(s\) have a missing or non-numeric 'day' \(a blank cell\)"),
    (["2024-01-03", "tomorrow"], r"'day' must hold numbers only, .*; it has 1 ISO dates .*1 other \(e.g. \['tomorrow'\]\)"),
    (["5", "2024-01-03"], r"'day' must hold .*1 numbers \(e.g. \['5'\]\), 1 ISO dates"),
    (["2024-02-30", "2024-03-01"], r"'day' has dates that do not exist: \['2024-02-30'\]"),
    (["2024-01-03T10:00Z", "2024-01-03T11:00"], r"'day' mixes timestamps with a zone \(\['2024-01-03T10:00Z'\]\)"),
    (["2024-01-03T25:00", "2024-01-03T11:00"], r"'day' has timestamps that do not exist: \['2024-01-03T25:00'\]"),
    (["99999999999999999999", "1"], r"'day' has integers beyond 64 bits"),
])
def test_a_time_column_outside_the_rule_is_refused_by_name(cells, message):
    entities = pd.DataFrame({"id": ["x", "y"], "age": ["25", "26"]})
    events = pd.DataFrame({"id": ["x", "y"], "visit": ["x1", "y1"], "day": cells, "code": ["A00", "A01"]})
    with pytest.raises(DataError, match=message) as caught:
        load_sequential(entities, events, **{**KWARGS, "identifiers": []})
    assert caught.value.parameter == "order_by"


# --- item 3: validation ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [-1.0, math.nan, math.inf])
def test_weights_must_be_finite_and_non_negative(bad):
    entities, events = tables("integers", 3, n=6)
    data = load_sequential(entities.drop(columns="cost"), events.drop(columns="doctor"), **KWARGS)
    for name in ("relational", "sequence", "time"):
        with pytest.raises(InvalidParameterError, match=f"'weight_{name}' parameter must be finite and at least 0"):
            anonymize_sequential(data, 2, weights=CostWeights(**{name: bad}))
    from microrelease.core.sequential.anonymize import anonymize_groups

    with pytest.raises(InvalidParameterError, match="'weight_time' parameter must be finite and at least 0"):
        anonymize_groups(data, np.zeros(data.n_entities, dtype=np.int64), 2, w_time=bad)


def test_blank_qi_cells_are_a_value_of_their_own_as_in_search():
    entities = pd.DataFrame({"id": ["a", "b", "c", "d"], "age": ["", "", "25", "26"]})
    events = pd.DataFrame([(e, f"{e}1", 1, "A00") for e in "abcd"], columns=["id", "visit", "day", "code"])
    data = load_sequential(entities, events, **{**KWARGS, "identifiers": []})
    dataset = load_dataset(entities, qi=["age"], hierarchies={"age": AGE})  # what `search` does with the file
    assert data.missing_counts == dataset.missing_counts == {"age": 2}
    release = anonymize_sequential(data, 2)
    ages = release.entities.set_index("id").loc[release.pseudonym, "age"].tolist()
    # the two blanks share a value below the top; blank and 25 meet only at the top
    assert ages[:2] in (["", ""], ["*", "*"]) and all(a in ("", "*", "20s") for a in ages)
    assert verify_release(release.entities, release.events, entity_id="id", qi=["age"], sequence_key="visit",
                         order_by="day", code="code").min() >= 2


def test_every_column_is_released_dropped_as_declared_or_refused_by_name():
    entities, events = tables("integers", 4, n=6)
    kwargs = {**KWARGS}
    with pytest.raises(DataError, match=r"event table column\(s\) \['doctor'\] have no role") as caught:
        load_sequential(entities.drop(columns="cost"), events, **kwargs)  # was dropped without a word
    assert caught.value.parameter == "drop"
    with pytest.raises(DataError, match=r"entity table column\(s\) \['cost'\] have no role") as caught:
        load_sequential(entities, events, **kwargs, keep=[], drop=["doctor"])
    assert caught.value.parameter == "keep"
    with pytest.raises(DataError, match=r"event columns \['doctor'\] cannot be kept"):
        load_sequential(entities, events, **kwargs, keep=["cost", "doctor"])
    with pytest.raises(DataError, match=r"\['age'\] in 'drop' already have a role"):
        load_sequential(entities, events, **kwargs, drop=["age", "doctor"])
    with pytest.raises(DataError, match=r"\['salary'\] in 'keep' are columns of neither table"):
        load_sequential(entities, events, **kwargs, keep=["salary"], drop=["doctor"])
    kept = anonymize_sequential(load_sequential(entities, events, **kwargs, keep=["cost"], drop=["doctor"]), 2)
    dropped = anonymize_sequential(load_sequential(entities, events, **kwargs, keep=[], drop=["cost", "doctor"]), 2)
    default = anonymize_sequential(load_sequential(entities, events, **kwargs, drop=["doctor"]), 2)
    assert list(kept.entities.columns) == list(default.entities.columns) == ["id", "age", "cost"]
    assert list(dropped.entities.columns) == ["id", "age"] and list(kept.events.columns) == ["id", "visit", "day", "code"]
    assert kept.entities.set_index("id").loc[kept.pseudonym, "cost"].tolist() == entities["cost"].tolist()
    for release in (kept, dropped, default):  # the account covers every input column of both tables
        assert list(release.columns["entities"]) == list(entities.columns)
        assert list(release.columns["events"]) == list(events.columns)
    assert kept.columns["entities"]["cost"].startswith("kept: released as is, without protection")
    assert dropped.columns["entities"]["cost"].startswith("dropped") and "not released" in kept.columns["events"]["doctor"]
    assert kept.columns["entities"]["name"] == "identifier: not released"


def test_the_command_line_names_every_column_in_the_report(tmp_path, capsys):
    from microrelease.app.cli import main

    entities, events = tables("dates", 5)
    h = tmp_path / "h"
    h.mkdir()
    entities.to_csv(tmp_path / "e.csv", index=False)
    events.to_csv(tmp_path / "v.csv", index=False)
    pd.DataFrame(list(CODES.rows)).to_csv(h / "code.csv", sep=";", header=False, index=False)
    pd.DataFrame(list(AGE.rows)).to_csv(h / "age.csv", sep=";", header=False, index=False)
    args = ["sequential", str(tmp_path / "e.csv"), str(tmp_path / "v.csv"), "--entity-id", "id", "--qi", "age",
            "--identifier", "name", "--sequence-key", "visit", "--order-by", "day", "--code", "code",
            "--code-hierarchy", str(h / "code.csv"), "--hierarchy-dir", str(h), "--k", "3", "--quiet"]
    assert main([*args, "-o", str(tmp_path / "refused")]) == 2
    assert "--keep: entity table column(s) ['cost'] have no role" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()
    assert main([*args, "--keep", "cost", "--drop", "doctor", "-o", str(tmp_path / "out")]) == 0
    assert "['cost'] released as is, without protection" in capsys.readouterr().err
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    columns = report["parameters"]["columns"]
    assert list(columns["entities"]) == list(entities.columns) and list(columns["events"]) == list(events.columns)
    assert columns["events"]["day"].startswith("time (ISO dates)") and "not released" in columns["events"]["doctor"]
    written = pd.read_csv(tmp_path / "out" / "events.csv", dtype=str, keep_default_na=False)
    assert all(parse_time(end, "dates") for t in written["day"] for end in t.split(".."))


# --- item 4 (anonymization): generalize before suppressing ------------------------------------------------

def tiny(visits_by_entity):
    entities = pd.DataFrame({"id": list(visits_by_entity), "age": ["25"] * len(visits_by_entity)})
    rows = [(e, f"{e}-{v}", day, code) for e, visits in visits_by_entity.items()
            for v, (day, codes) in enumerate(visits) for code in codes]
    return load_sequential(entities, pd.DataFrame(rows, columns=["id", "visit", "day", "code"]),
                           **{**KWARGS, "identifiers": []})


def released(release, e):
    mine = release.events[release.events["id"] == release.pseudonym[e]]
    return [(when, list(group["code"])) for (_, when), group in mine.groupby(["visit", "day"], sort=False)]


def test_codes_split_over_two_visits_are_kept_in_one_wider_visit_not_suppressed():
    # y has x's two codes on two days: before, one of them was suppressed for both (2 of 4 codes)
    data = tiny({"x": [(1, ["A00", "B10"])], "y": [(1, ["A01"]), (2, ["B11"])]})
    release = anonymize_sequential(data, 2)
    assert release.suppressed_elements.tolist() == [0, 0]
    assert released(release, 0) == released(release, 1) == [("1..2", ["A0*", "B1*"])]
    # and the other way round: the consensus' two visits merge against one visit of the member
    data = tiny({"x": [(1, ["A01"]), (2, ["B11"])], "y": [(1, ["A00", "B10"])], "z": [(1, ["A00"]), (2, ["B11"])]})
    release = anonymize_sequential(data, 3)
    assert release.suppressed_elements.tolist() == [0, 0, 0]
    assert released(release, 1) == [("1..2", ["A0*", "B1*"])]


def test_unlike_codes_rise_to_their_common_ancestor_before_they_are_suppressed():
    data = tiny({"x": [(1, ["A00", "B10"]), (9, ["A11"])], "y": [(1, ["A01", "A10"]), (9, ["B00"])]})
    release = anonymize_sequential(data, 2)
    assert release.suppressed_elements.tolist() == [0, 0]
    assert released(release, 0) == [("1", ["A0*", "*"]), ("9", ["*"])]
