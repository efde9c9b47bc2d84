"""State of the Sequences tab (param only): k, the release, the three attackers before and after.

For a responsive page the tab works on the first 500 patients of the bundled hospital sample; the
command line and the benchmark run the whole data set. Every patient is attacked (see
:mod:`microrelease.core.sequential.guarantee` for what each attacker knows and does).
"""

from __future__ import annotations

import pandas as pd
import param

from microrelease.app.shared import computed_once
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential.guarantee import (
    ATTACKER_TEXT,
    attack_figures,
    check_release,
    released_records,
)
from microrelease.core.sequential.model import SequentialData, load_sequential
from microrelease.core.sequential.release import anonymize_sequential

PATIENTS = 500
CURVE_KS = (2, 3, 5, 10)
BEFORE, RELATIONAL, BOTH = "before", "relational part only", "both parts"


@computed_once(maxsize=1)
def hospital() -> SequentialData:
    folder = sample_data_folder("hospital")
    entities = pd.read_csv(folder / "patients.csv", dtype=str, keep_default_na=False).head(PATIENTS)
    events = pd.read_csv(folder / "visits.csv", dtype=str, keep_default_na=False)
    events = events[events["patient_id"].isin(entities["patient_id"])]
    return load_sequential(entities, events, entity_id="patient_id", qi=["age", "sex", "zip"], sequence_key="visit_id",
                           order_by="day", code="code", code_hierarchy=folder / "hospital_hierarchy_code.csv",
                           hierarchy_dir=folder, identifiers=["name"])


@computed_once(maxsize=16)
def release_figures(k: int, relational_only: bool):
    """The release at k, each attacker's success before and after it (``attack_figures``), and the
    fewest patients sharing a whole released record."""
    data = hospital()
    release = anonymize_sequential(data, k, relational_only=relational_only)
    released = released_records(data, release.entities, release.events, release.intervals)
    figures = attack_figures(data, released, release.pseudonym, sample=None)
    shared = check_release(release.entities, release.events, entity_id="patient_id", qi=data.qi,
                           sequence_key="visit_id", order_by="day", code="code")
    return release, figures, int(shared.min())


def release_for(k: int, relational_only: bool):
    """(release, success of the QIs + 2 codes attacker against it, fewest patients sharing a record)."""
    release, figures, shared = release_figures(k, relational_only)
    return release, figures["qi_2_codes"]["after"], shared


@computed_once(maxsize=1)
def attack_curves() -> pd.DataFrame:
    """Per k and attacker: success before, against the relational-only release, against the release of
    both parts, and 1/k."""
    rows = []
    for k in CURVE_KS:
        both, relational = release_figures(k, False)[1], release_figures(k, True)[1]
        for name, text in ATTACKER_TEXT.items():
            rows.append({"k": k, "attacker": text, BEFORE: both[name]["before"],
                         RELATIONAL: relational[name]["after"], BOTH: both[name]["after"], "1/k": 1 / k})
    return pd.DataFrame(rows)


class SequencesState(param.Parameterized):
    k = param.Selector(default=5, objects=list(CURVE_KS))

    def figures(self) -> dict:
        """The release at k: fewest patients sharing a whole record, losses, codes suppressed, attacks' success."""
        release, figures, shared = release_figures(self.k, False)
        return {"patients": PATIENTS, "shared": shared, "relational_loss": release.relational_loss,
                "sequence_loss": release.sequence_loss, "suppressed_codes": int(release.suppressed_elements.sum()),
                "attack": figures["qi_2_codes"]["after"], "full_knowledge": figures["full_knowledge"]["after"]}

    def attackers(self) -> pd.DataFrame:
        """The three attackers at k: success before, relational part only, both parts, beside 1/k."""
        curves = attack_curves()
        return curves[curves["k"] == self.k].drop(columns="k").reset_index(drop=True)

    def timelines(self, n: int = 4) -> pd.DataFrame:
        data = hospital()
        release = release_figures(self.k, False)[0]
        rows = []
        for e in range(n):
            before = " / ".join(f"day {t:g}: " + " ".join(data.code_hierarchy.ground[c] for c in codes)
                                for t, codes in data.visits(e))
            mine = release.events[release.events["patient_id"] == release.pseudonym[e]]
            after = " / ".join(f"{when}: " + " ".join(group["code"])
                               for (_, when), group in mine.groupby(["visit_id", "day"], sort=False))
            rel = release.entities.set_index("patient_id").loc[release.pseudonym[e]]
            rows.append({"patient": data.entities["patient_id"].iloc[e],
                         "before": f"{data.entities['age'].iloc[e]}, {data.entities['sex'].iloc[e]}, "
                                   f"{data.entities['zip'].iloc[e]} | {before}",
                         "after": f"{rel['age']}, {rel['sex']}, {rel['zip']} | {after or '(all suppressed)'}"})
        return pd.DataFrame(rows)
