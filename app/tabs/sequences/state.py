"""State of the Sequences tab (param only): k, the release, the attack curves.

For a responsive page the tab works on the first 500 patients of the bundled hospital sample; the
command line and the benchmark run the whole data set.
"""

from __future__ import annotations

import pandas as pd
import param

from microrelease.app.shared import computed_once
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.sequential.guarantee import check_release, subsequence_attack
from microrelease.core.sequential.model import SequentialData, load_sequential
from microrelease.core.sequential.release import anonymize_sequential

PATIENTS = 500
CURVE_KS = (2, 3, 5, 10)


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
def release_for(k: int, relational_only: bool):
    data = hospital()
    release = anonymize_sequential(data, k, relational_only=relational_only)
    attack = subsequence_attack(data, release.entities, release.events, release.pseudonym, m=2, sample=300)
    shared = check_release(release.entities, release.events, entity_id="patient_id", qi=data.qi,
                           sequence_key="visit_id", order_by="day", code="code")
    return release, attack, int(shared.min())


@computed_once(maxsize=1)
def attack_curves() -> pd.DataFrame:
    rows = []
    for k in CURVE_KS:
        for only in (False, True):
            rows.append({"k": k, "protection": "relational part only" if only else "both parts",
                         "attack": release_for(k, only)[1], "bound": 1 / k})
    return pd.DataFrame(rows)


class SequencesState(param.Parameterized):
    k = param.Selector(default=5, objects=list(CURVE_KS))

    def figures(self) -> dict:
        """The release at k: fewest patients sharing a whole record, losses, codes suppressed, attack success."""
        release, attack, shared = release_for(self.k, False)
        return {"patients": PATIENTS, "shared": shared, "relational_loss": release.relational_loss,
                "sequence_loss": release.sequence_loss, "suppressed_codes": int(release.suppressed_elements.sum()),
                "attack": attack}

    def timelines(self, n: int = 4) -> pd.DataFrame:
        data = hospital()
        release = release_for(self.k, False)[0]
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
