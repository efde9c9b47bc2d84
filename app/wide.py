"""Generated wide tables: adult's 9 QIs plus synthetic QIs, for the dashboard's large-lattice mode
(``microrelease app --sample wide12``), the scale-in-QIs benchmark and the tests (one copy).

Each synthetic QI ``z1, z2, ...`` holds 12 values ``v00..v11`` drawn from a Zipf law (probability of
value i proportional to 1 / (i + 1)), independently per row and per QI, from one seeded generator
(seed ``SEED``); its hierarchy is value -> group of 4 (``g0..g2``) -> ``*`` (height 2), so each
synthetic QI triples the lattice. The rows are the bundled adult sample's, so the table is the same
on every machine.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from microrelease.core import Dataset, Hierarchy, load_dataset, load_sample, read_arx
from microrelease.core.lattice.hierarchies.arx import find_hierarchy_file

ADULT_QI = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation",
            "salary-class")
SEED = 20261202
VALUES = 12
GENERATED = {"wide12": 12}  # the app's generated samples: name -> QIs (349,920 nodes at 12)


def synthetic_hierarchy(name: str) -> Hierarchy:
    return Hierarchy(name, tuple((f"v{i:02d}", f"g{i // 4}", "*") for i in range(VALUES)))


def wide_table(n_qi: int, *, seed: int = SEED, rows: int | None = None):
    """(DataFrame, QIs, hierarchies by QI): adult with ``n_qi - 9`` synthetic QIs (``n_qi`` >= 9), or
    its first ``n_qi`` QIs when fewer; ``rows``: the first rows only."""
    adult = load_sample("adult")
    table = adult.table.copy() if rows is None else adult.table.iloc[:rows].copy()
    qi = ADULT_QI[:min(n_qi, 9)]
    hierarchies = {name: read_arx(find_hierarchy_file(adult.hierarchy_dir, name), name) for name in qi}
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, VALUES + 1)
    p /= p.sum()
    extra = []
    for j in range(max(0, n_qi - 9)):
        name = f"z{j + 1}"
        table[name] = np.array([f"v{i:02d}" for i in range(VALUES)], dtype=object)[rng.choice(VALUES, len(table), p=p)]
        hierarchies[name] = synthetic_hierarchy(name)
        extra.append(name)
    return table, (*qi, *extra), hierarchies


def wide_dataset(n_qi: int, **kwargs) -> Dataset:
    table, qi, hierarchies = wide_table(n_qi, **kwargs)
    return load_dataset(table, qi=qi, hierarchies=hierarchies)


def generated_sample(name: str) -> Dataset:
    """The generated sample ``name`` of ``GENERATED``, named after it (the Data tab's line says so)."""

    return replace(wide_dataset(GENERATED[name]), source=f"{name} (adult + {GENERATED[name] - 9} synthetic QIs, "
                                                         f"seed {SEED})")
