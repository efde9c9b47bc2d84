"""adult-sample's population re-counted with pandas from the ARX hierarchy files (independent of the
core's coding), for the k-map tests of the command line, the dashboard's state and the browser."""

from __future__ import annotations

import pandas as pd

from microrelease.core.data.samples import sample

QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]
READ = {"sep": ";", "dtype": str, "keep_default_na": False}


def generalized(frame: pd.DataFrame, vector) -> pd.DataFrame:
    """``frame``'s QI columns generalized to ``vector`` (levels in QI order) by the hierarchy files."""
    folder = sample("adult-sample").folder
    out = {}
    for q, level in zip(QI, vector, strict=True):
        rows = pd.read_csv(folder / f"adult_hierarchy_{q}.csv", header=None, **READ)
        out[q] = frame[q].map(dict(zip(rows[0], rows[level], strict=True)))
    return pd.DataFrame(out)


def class_counts(path, vector) -> pd.Series:
    """The rows of the table at ``path`` per class of ``vector``."""
    return generalized(pd.read_csv(path, **READ), vector).groupby(QI).size()


def population_counts(vector) -> pd.Series:
    """The population's (the whole adult table's) records per class of ``vector``."""
    return class_counts(sample("adult-sample").population_path, vector)
