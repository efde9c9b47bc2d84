"""State of the Sequences tab (param only): the sample, k, the release, the three attackers before and after.

Two bundled samples: the hospital (patients and one event table of visit codes) and the study
(patients, their insurance rows, and visits made of diagnoses and prescriptions: three tables besides
the patients'). For a responsive page the tab works on the first 500 patients of each; the command
line and the benchmark run the whole data sets. Every patient is attacked (see
``microrelease.core.sequential.attacks`` for what each attacker knows and does).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import param

from microrelease.app.caching import computed_once
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential.anonymize import SequentialRelease
from microrelease.core.sequential.attacks import ATTACKER_TEXT, attack_figures, plan_attacks
from microrelease.core.sequential.event_codes import split_label
from microrelease.core.sequential.guarantee import released_records, verify_release
from microrelease.core.sequential.pipeline import anonymize_sequential
from microrelease.core.sequential.rt_data import SequentialData, load_sequential
from microrelease.core.sequential.study import EVENT, VISIT, WHEN, load_study
from microrelease.core.sequential.study_config import read_study
from microrelease.core.sequential.study_release import anonymize_study, merged_from_tables, study_signatures

PATIENTS = 500
CURVE_KS = (2, 3, 5, 10)
BEFORE, RELATIONAL, BOTH = "before", "relational part only", "both parts"
HOSPITAL, STUDY = "hospital", "study"
SAMPLES = {"hospital: patients + visit codes": HOSPITAL,
           "study: patients + insurance + diagnoses + prescriptions": STUDY}


def _of(frame: pd.DataFrame, ids) -> pd.DataFrame:
    return frame[frame["patient_id"].isin(ids)]


@computed_once(maxsize=2)
def dataset(sample: str) -> SequentialData:
    """The first 500 patients of a bundled sample, with all their rows."""
    if sample == STUDY:
        study = read_study(sample_data_folder("study") / "study.toml")
        tables = {t.name: pd.read_csv(t.file, dtype=str, keep_default_na=False) for t in study.tables}
        ids = tables[study.entities.name]["patient_id"].head(PATIENTS)
        return load_study(study, {name: _of(frame, ids) for name, frame in tables.items()})
    folder = sample_data_folder("hospital")
    entities = pd.read_csv(folder / "patients.csv", dtype=str, keep_default_na=False).head(PATIENTS)
    events = _of(pd.read_csv(folder / "visits.csv", dtype=str, keep_default_na=False), entities["patient_id"])
    return load_sequential(entities, events, entity_id="patient_id", qi=["age", "sex", "zip"], sequence_key="visit_id",
                           order_by="day", code="code", code_hierarchy=folder / "hospital_hierarchy_code.csv",
                           hierarchy_dir=folder, identifiers=["name"])


def hospital() -> SequentialData:
    return dataset(HOSPITAL)


@dataclass(frozen=True, eq=False)
class Shown:
    """A release as the tab shows it: ``base`` (pseudonyms, groups, losses), the released entity
    table, the released events as one stream (columns: id, visit, time, code, as the data names them)
    and the released rows of every satellite (by name)."""

    base: SequentialRelease
    entities: pd.DataFrame
    events: pd.DataFrame
    satellites: dict


@computed_once(maxsize=2)
def attack_plan(sample: str):
    """Every patient attacked, with the knowledge drawn once: the same for every release of the sample."""
    return plan_attacks(dataset(sample), sample=None)


@computed_once(maxsize=32)
def release_figures(k: int, relational_only: bool, sample: str = HOSPITAL):
    """The release at k (``Shown``), each attacker's success before and after it
    (``attack_figures``), and the fewest patients sharing a whole released record."""
    data = dataset(sample)
    if sample == STUDY:
        release = anonymize_study(data, k, relational_only=relational_only)
        events = merged_from_tables(release.tables, data)
        signature = study_signatures(release.tables, data, events)
        shared = int(signature.map(signature.value_counts()).min())
        shown = Shown(release.base, release.tables[data.name], events,
                      {s.name: release.tables[s.name] for s in data.satellites})
    else:
        base = anonymize_sequential(data, k, relational_only=relational_only)
        shared = int(verify_release(base.entities, base.events, entity_id="patient_id", qi=data.qi,
                                   sequence_key="visit_id", order_by="day", code="code").min())
        shown = Shown(base, base.entities, base.events, {})
    released = released_records(data, shown.entities, shown.events, shown.base.intervals)
    return shown, attack_figures(data, released, shown.base.pseudonym, plan=attack_plan(sample)), shared


def release_for(k: int, relational_only: bool, sample: str = HOSPITAL):
    """(release, success of the QIs + 2 codes attacker against it, fewest patients sharing a record)."""
    shown, figures, shared = release_figures(k, relational_only, sample)
    return shown.base, figures["qi_2_codes"]["after"], shared


def _curve_rows(k: int, sample: str) -> list[dict]:
    both, relational = release_figures(k, False, sample)[1], release_figures(k, True, sample)[1]
    return [{"k": k, "attacker": text, BEFORE: both[name]["before"], RELATIONAL: relational[name]["after"],
             BOTH: both[name]["after"], "1/k": 1 / k} for name, text in ATTACKER_TEXT.items()]


@computed_once(maxsize=2)
def attack_curves(sample: str = HOSPITAL) -> pd.DataFrame:
    """Per k and attacker: success before, against the relational-only release, against the release of
    both parts, and 1/k."""
    return pd.DataFrame([row for k in CURVE_KS for row in _curve_rows(k, sample)])


def code_text(data: SequentialData, label: str) -> str:
    """A code as the page shows it: a study's event code as its column values (``nystatin/medium``)."""
    return "/".join(split_label(label)[1]) if data.event_tables else label


class SequencesState(param.Parameterized):
    sample = param.Selector(default=HOSPITAL, objects=SAMPLES)
    k = param.Selector(default=5, objects=list(CURVE_KS))

    def figures(self) -> dict:
        """The release at k: fewest patients sharing a whole record, losses, codes suppressed, attacks' success."""
        shown, figures, shared = release_figures(self.k, False, self.sample)
        return {"patients": PATIENTS, "shared": shared, "relational_loss": shown.base.relational_loss,
                "sequence_loss": shown.base.sequence_loss,
                "suppressed_codes": int(shown.base.suppressed_elements.sum()),
                "attack": figures["qi_2_codes"]["after"], "full_knowledge": figures["full_knowledge"]["after"]}

    def tables(self) -> str:
        """The tables of the sample, as one line."""
        data = dataset(self.sample)
        events = ", ".join(t.name for t in data.event_tables) or "visits"
        satellites = "".join(f", {s.name} ({', '.join(s.qi)})" for s in data.satellites)
        return f"patients ({', '.join(data.qi)}){satellites}; visits made of {events}"

    def attackers(self) -> pd.DataFrame:
        """The three attackers at k: success before, relational part only, both parts, beside 1/k."""
        # the two releases at k only: the curves over every k are the plot's, drawn after the page
        return pd.DataFrame(_curve_rows(self.k, self.sample)).drop(columns="k")

    def timelines(self, n: int = 4) -> pd.DataFrame:
        """The first n patients before and after: QIs, satellite rows, visits with their codes."""
        data = dataset(self.sample)
        shown = release_figures(self.k, False, self.sample)[0]
        visit, when, code = (VISIT, WHEN, EVENT) if data.event_tables else ("visit_id", "day", "code")
        rows = []
        for e in range(n):
            name = shown.base.pseudonym[e]
            before = " / ".join(f"{data.time_scale.text(data.times[data.code_ptr[v]])}: " + " ".join(
                code_text(data, data.code_hierarchy.ground[c]) for c in data.codes[data.code_ptr[v]:data.code_ptr[v + 1]])
                for v in range(data.visit_ptr[e], data.visit_ptr[e + 1]))
            mine = shown.events[shown.events[data.entity_id] == name]
            after = " / ".join(f"{t}: " + " ".join(code_text(data, c) for c in group[code])
                               for (_, t), group in mine.groupby([visit, when], sort=False))
            released = shown.entities.set_index(data.entity_id).loc[name]
            qi_before = ", ".join(str(data.entities[q].iloc[e]) for q in data.qi)
            qi_after = ", ".join(str(released[q]) for q in data.qi)
            for sat in data.satellites:
                mine_before = sat.codes[sat.row_ptr[e]:sat.row_ptr[e + 1]]
                qi_before += " [" + "; ".join(" ".join(h.ground[c] for h, c in zip(sat.hierarchies, row, strict=True))
                                               for row in mine_before) + "]"
                frame = shown.satellites[sat.name]
                qi_after += " [" + "; ".join(" ".join(row) for row in
                                             frame[frame[data.entity_id] == name][list(sat.qi)].to_numpy()) + "]"
            rows.append({"patient": data.entities[data.entity_id].iloc[e], "before": f"{qi_before} | {before}",
                         "after": f"{qi_after} | {after or '(all suppressed)'}"})
        return pd.DataFrame(rows)
