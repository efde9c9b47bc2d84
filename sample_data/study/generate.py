"""Generate the synthetic multi-table study (seeded; the CSV files beside this script are its output).

Run: python sample_data/study/generate.py [--patients 1000] [--seed 2016] [--out sample_data/study]

One entity table, one satellite table and two event tables, keyed by ``patient_id``:

- ``patients.csv``: patient_id, name (a direct identifier), age 18-90 (uniform), sex F/M, ZIP one of
  40 codes 47600-47639 (4 areas 476[0-3]*), cost (not a QI; the study drops it). Same ranges and
  hierarchies as the hospital sample.
- ``insurance.csv`` (one-to-many, 1-3 rows per patient): patient_id, policy_number (a direct
  identifier, unique), plan (Basic, Standard under Public; Plus, Premium under Private), since (a
  year 2010-2024, distinct and increasing within a patient).
- ``diagnoses.csv``: patient_id, visit_id, date, icd. Each patient has 1-6 visits (geometric, mean
  about 2.4) on distinct, increasing ISO dates in 2022-2023, and 1-4 distinct codes per visit from
  an ICD-like hierarchy of 3 chapters x 4 blocks x 5 codes (A00..C34). A patient has one or two
  "conditions" (chapters) and draws most codes from them, so histories are realistic enough to link.
- ``prescriptions.csv``: patient_id, visit_id, date (the visit's date), drug, dose; 0-3 distinct
  drugs per visit (24 drugs in 6 classes in 2 groups), mostly of a class treating a chapter
  diagnosed at that visit; dose low/medium/high.

Hierarchies are written as ``hierarchy_<column>.csv`` (ARX format: ``;``, no header, one row per
ground value, the top ``*`` last). ``study.toml`` (written by hand, not by this script) describes the
files to microrelease. Entirely synthetic: no real person, policy or prescription.
"""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd

CHAPTERS = ("A", "B", "C")
PLANS = {"Basic": "Public", "Standard": "Public", "Plus": "Private", "Premium": "Private"}
YEARS = range(2010, 2025)
# drug class -> (group, drugs); each chapter is treated by two classes (TREATS)
DRUG_CLASSES = {
    "Antibiotic": ("Anti-infective", ("amoxicillin", "azithromycin", "ciprofloxacin", "doxycycline")),
    "Antiviral": ("Anti-infective", ("aciclovir", "oseltamivir", "tenofovir", "valaciclovir")),
    "Antifungal": ("Anti-infective", ("fluconazole", "itraconazole", "nystatin", "terbinafine")),
    "Analgesic": ("Supportive", ("ibuprofen", "naproxen", "paracetamol", "tramadol")),
    "Corticosteroid": ("Supportive", ("budesonide", "dexamethasone", "hydrocortisone", "prednisolone")),
    "Antineoplastic": ("Supportive", ("capecitabine", "imatinib", "methotrexate", "tamoxifen")),
}
TREATS = {"A": ("Antibiotic", "Analgesic"), "B": ("Antiviral", "Antifungal"),
          "C": ("Antineoplastic", "Corticosteroid")}
DOSES = ("low", "medium", "high")
FIRST_DAY = dt.date(2022, 1, 1)
DAYS = 730  # two years of visit dates


def icd_hierarchy() -> pd.DataFrame:
    rows = []
    for chapter in CHAPTERS:
        for block in range(4):
            for code in range(5):
                rows.append((f"{chapter}{block}{code}", f"{chapter}{block}*", f"{chapter}**", "*"))
    return pd.DataFrame(rows)


def age_hierarchy() -> pd.DataFrame:
    return pd.DataFrame([(str(a), f"{a // 5 * 5}-{a // 5 * 5 + 4}", f"{a // 20 * 20}-{a // 20 * 20 + 19}", "*")
                         for a in range(18, 91)])


def zip_hierarchy() -> pd.DataFrame:
    return pd.DataFrame([(f"476{z:02d}", f"476{z // 10}*", "476**", "*") for z in range(40)])


def sex_hierarchy() -> pd.DataFrame:
    return pd.DataFrame([("F", "*"), ("M", "*")])


def plan_hierarchy() -> pd.DataFrame:
    return pd.DataFrame([(plan, sector, "*") for plan, sector in PLANS.items()])


def since_hierarchy() -> pd.DataFrame:
    return pd.DataFrame([(str(y), f"{y // 5 * 5}-{y // 5 * 5 + 4}", f"{y // 10 * 10}s", "*") for y in YEARS])


def drug_hierarchy() -> pd.DataFrame:
    return pd.DataFrame([(drug, cls, group, "*") for cls, (group, drugs) in DRUG_CLASSES.items() for drug in drugs])


def dose_hierarchy() -> pd.DataFrame:
    return pd.DataFrame([(dose, "*") for dose in DOSES])


def _distinct(draw, n: int) -> list[str]:
    """n distinct values from ``draw()``, in the order drawn (a visit lists a code or a drug once)."""
    values: list[str] = []
    while len(values) < n:
        value = draw()
        if value not in values:
            values.append(value)
    return values


def _chapter(rng: np.random.Generator, likely: list[str]) -> str:
    """Mostly one of the ``likely`` chapters, sometimes any (another complaint)."""
    return str(rng.choice(likely) if rng.random() < 0.85 else rng.choice(CHAPTERS))


def _visit(rng: np.random.Generator, conditions: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """One visit: 1-4 distinct codes, mostly of the patient's conditions; 0-3 distinct (drug, dose),
    mostly of a class treating a chapter diagnosed at this visit."""
    codes = _distinct(lambda: f"{_chapter(rng, conditions)}{rng.integers(0, 4)}{rng.integers(0, 5)}",
                      int(rng.integers(1, 5)))
    seen = sorted({code[0] for code in codes})
    drugs = _distinct(lambda: str(rng.choice(DRUG_CLASSES[str(rng.choice(TREATS[_chapter(rng, seen)]))][1])),
                      int(rng.integers(0, 4)))
    return codes, [(drug, str(rng.choice(DOSES, p=[0.3, 0.5, 0.2]))) for drug in drugs]


def generate(patients: int = 1000, seed: int = 2016) -> dict[str, pd.DataFrame]:
    """The four tables by file stem: patients, insurance, diagnoses, prescriptions."""
    rng = np.random.default_rng(seed)
    ids = [f"P{i:05d}" for i in range(patients)]
    entities = pd.DataFrame({
        "patient_id": ids,
        "name": [f"Patient {i}" for i in range(patients)],
        "age": rng.integers(18, 91, patients).astype(str),
        "sex": rng.choice(["F", "M"], patients),
        "zip": [f"476{z:02d}" for z in rng.integers(0, 40, patients)],
        "cost": rng.integers(100, 20_000, patients),
    })

    policies = rng.integers(1, 4, patients)
    numbers = rng.choice(10**8, size=int(policies.sum()), replace=False)  # unique policy numbers
    insurance = pd.DataFrame(
        [(pid, str(rng.choice(list(PLANS))), str(year)) for pid, count in zip(ids, policies, strict=True)
         for year in np.sort(rng.choice(np.array(YEARS), size=count, replace=False))],
        columns=["patient_id", "plan", "since"])
    insurance.insert(1, "policy_number", [f"POL-{number:08d}" for number in numbers])

    diagnoses, prescriptions = [], []
    for pid in ids:
        conditions = [str(c) for c in rng.choice(CHAPTERS, size=rng.integers(1, 3), replace=False)]
        n_visits = min(6, int(rng.geometric(0.4)))
        days = np.sort(rng.choice(DAYS, size=n_visits, replace=False))
        for v, day in enumerate(days):
            visit, date = f"{pid}-V{v + 1}", (FIRST_DAY + dt.timedelta(days=int(day))).isoformat()
            codes, drugs = _visit(rng, conditions)
            diagnoses += [(pid, visit, date, code) for code in codes]
            prescriptions += [(pid, visit, date, drug, dose) for drug, dose in drugs]
    return {
        "patients": entities,
        "insurance": insurance,
        "diagnoses": pd.DataFrame(diagnoses, columns=["patient_id", "visit_id", "date", "icd"]),
        "prescriptions": pd.DataFrame(prescriptions, columns=["patient_id", "visit_id", "date", "drug", "dose"]),
    }


HIERARCHIES = {"age": age_hierarchy, "sex": sex_hierarchy, "zip": zip_hierarchy, "plan": plan_hierarchy,
               "since": since_hierarchy, "icd": icd_hierarchy, "drug": drug_hierarchy, "dose": dose_hierarchy}


def write(out: Path, patients: int = 1000, seed: int = 2016) -> None:
    out.mkdir(parents=True, exist_ok=True)
    # "\n" on every platform, so that the files are the same bytes wherever they are made
    for stem, frame in generate(patients, seed).items():
        frame.to_csv(out / f"{stem}.csv", index=False, lineterminator="\n")
    for column, hierarchy in HIERARCHIES.items():
        hierarchy().to_csv(out / f"hierarchy_{column}.csv", sep=";", header=False, index=False, lineterminator="\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2016)
    parser.add_argument("--out", default=str(Path(__file__).parent))
    args = parser.parse_args()
    write(Path(args.out), args.patients, args.seed)
