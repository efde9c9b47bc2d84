"""Generate the synthetic hospital data set (seeded; the files beside this script are its output).

Run: python sample_data/hospital/generate.py [--patients 2000] [--seed 2013] [--out sample_data/hospital]

Patients: age 18-90 (uniform), sex F/M, ZIP one of 40 codes 47600-47639 (in 4 areas 476[0-3]*).
Each has 1-8 visits (geometric, mean about 3) on days 1-730, increasing; each visit 1-5 codes drawn
from an ICD-like hierarchy of 3 chapters x 4 blocks x 5 codes (60 codes): a patient has one or two
"conditions" (chapters) and draws most codes from them, so sequences are realistic enough to link.
Also a name column (a direct identifier, to be masked) and a cost column (not a QI).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

CHAPTERS = ("A", "B", "C")


def code_hierarchy() -> pd.DataFrame:
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


def generate(patients: int = 2000, seed: int = 2013) -> tuple[pd.DataFrame, pd.DataFrame]:
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
    events = []
    for pid in ids:
        conditions = rng.choice(CHAPTERS, size=rng.integers(1, 3), replace=False)
        n_visits = min(8, int(rng.geometric(0.33)))
        days = np.sort(rng.choice(np.arange(1, 731), size=n_visits, replace=False))
        for v, day in enumerate(days):
            for _ in range(int(rng.integers(1, 6))):
                chapter = rng.choice(conditions) if rng.random() < 0.85 else rng.choice(CHAPTERS)
                events.append((pid, f"{pid}-V{v + 1}", int(day), f"{chapter}{rng.integers(0, 4)}{rng.integers(0, 5)}"))
    return entities, pd.DataFrame(events, columns=["patient_id", "visit_id", "day", "code"])


def write(out: Path, patients: int = 2000, seed: int = 2013) -> None:
    out.mkdir(parents=True, exist_ok=True)
    entities, events = generate(patients, seed)
    entities.to_csv(out / "patients.csv", index=False)
    events.to_csv(out / "visits.csv", index=False)
    for name, frame in (("code", code_hierarchy()), ("age", age_hierarchy()), ("zip", zip_hierarchy()),
                        ("sex", sex_hierarchy())):
        frame.to_csv(out / f"hospital_hierarchy_{name}.csv", sep=";", header=False, index=False)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=2013)
    parser.add_argument("--out", default=str(Path(__file__).parent))
    args = parser.parse_args()
    write(Path(args.out), args.patients, args.seed)
