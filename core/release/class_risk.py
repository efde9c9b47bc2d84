"""Re-identification risk of a released table, from the sizes of its equivalence classes.

Prosecutor model: an attacker who knows a person is in the file and knows their QI values picks one
record of that person's class, so a record in a class of size s is re-identified with probability 1/s.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from microrelease.core.risk.reidentification import prosecutor
from microrelease.core.risk.uniqueness import dankar

THRESHOLDS = (2, 3, 5, 10, 20)  # records in classes smaller than these: risk above 1/2, 1/3, ... 1/20


def class_figures(sizes: Sequence[int] | np.ndarray, thresholds: Sequence[int] = THRESHOLDS) -> dict:
    """``{"classes": …, "risk": …}`` for classes of the given ``sizes`` (one entry per class).

    ``classes``: count, rows, smallest, largest and the histogram as ``[size, number of classes]``
    pairs in size order. ``risk``: the highest (1 / smallest class), the average prosecutor risk
    (the mean of 1/s over records = classes / rows) and, for each threshold t, the records in classes
    of fewer than t rows and their share of the rows.
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    sizes = sizes[sizes > 0]
    values, counts = np.unique(sizes, return_counts=True)
    rows = int(sizes.sum())
    smallest = int(values[0]) if len(values) else 0
    highest, average = prosecutor(sizes)  # the risk family's formula, as table_risk reads it
    below = [{"below": int(t), "records": (n := int(sizes[sizes < t].sum())), "share": n / rows if rows else 0.0}
             for t in thresholds]
    return {
        "classes": {"count": len(sizes), "rows": rows, "smallest": smallest,
                    "largest": int(values[-1]) if len(values) else 0,
                    "histogram": [[int(s), int(c)] for s, c in zip(values, counts, strict=True)]},
        "risk": {"highest": highest, "average_prosecutor": average, "records_in_small_classes": below},
    }


def population_risk(sizes: Sequence[int] | np.ndarray, sampling_fraction: float) -> dict:
    """The released classes of a sample of a share ``sampling_fraction`` of its population: the
    estimated population uniques (Dankar et al.'s rule, ``microrelease.core.risk.uniqueness``), as a
    share of the population and a number of people (None without an estimate). Not the journalist's
    risk: only a population table gives class sizes in the population (f / fraction would call a
    sample unique safe when it may be a population unique)."""

    sizes = np.asarray(sizes, dtype=np.int64)
    values, counts = np.unique(sizes, return_counts=True)
    est = dankar(values, counts, sampling_fraction)
    return {"sampling_fraction": sampling_fraction, "population_records": float(sizes.sum() / sampling_fraction),
            "uniques_share": est.share if est.converged else None,
            "uniques": est.uniques if est.converged else None, "uniqueness_model": est.model}
