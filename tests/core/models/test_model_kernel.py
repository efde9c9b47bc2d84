"""The compiled model kernel evaluates each kind in its own loop over a node's classes (recursive
l-diversity by selection, hierarchical EMD in place): the numpy oracle's profile, exactly, on tables
with many sensitive values, ties and a deep value hierarchy; and the sensitive frequency's rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microrelease.core import Hierarchy, build_model_profile, load_dataset, prepare_models
from microrelease.core.models.sensitive import unique_rows

VALUES = [str(v) for v in range(8)]
# three levels above the values: pairs, halves, everything
SECRET = Hierarchy("secret", tuple((v, f"p{int(v) // 2}", f"h{int(v) // 4}", "*") for v in VALUES))
AGE = Hierarchy("age", tuple((str(a), f"{a // 10 * 10}s", "*") for a in range(20, 60)))
ZIP = Hierarchy("zip", tuple((f"{z}", f"{z // 10}*", "*") for z in range(100, 140)))


def table(seed: int, skew: float) -> pd.DataFrame:
    """Rows whose sensitive values cluster (ties of counts are common in small classes)."""
    rng = np.random.default_rng(seed)
    n = 400
    weights = np.exp(-skew * np.arange(len(VALUES)))
    return pd.DataFrame({"age": rng.integers(20, 60, n).astype(str), "zip": rng.integers(100, 140, n).astype(str),
                         "secret": rng.choice(VALUES, n, p=weights / weights.sum())})


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("specs", [
    {"l_diversity": "recursive:0.6:1"}, {"l_diversity": "recursive:2:2"}, {"l_diversity": "recursive:3:3"},
    {"l_diversity": "recursive:1.2:4"}, {"l_diversity": "entropy:2.5"}, {"l_diversity": "distinct:3"},
    {"t_closeness": "0.3:hierarchical"}, {"t_closeness": "0.15:hierarchical", "l_diversity": "recursive:2:3"},
    {"t_closeness": "0.25:ordered"}, {"t_closeness": "0.2:equal"},
])
def test_each_kind_compiled_is_the_numpy_oracle_exactly(seed, specs):
    ds = load_dataset(table(seed, skew=0.2 * seed), qi=["age", "zip"], hierarchies={"age": AGE, "zip": ZIP},
                      sensitive=["secret"])
    prepared = prepare_models(ds, "secret", specs, hierarchy=SECRET)
    compiled = build_model_profile(ds, *prepared, strategy="numba")
    oracle = build_model_profile(ds, *prepared, strategy="numpy")
    for key in ("offsets", "sizes", "counts", "failing_rows"):
        np.testing.assert_array_equal(getattr(compiled, key), getattr(oracle, key))
    for name, rows in oracle.failing_by_model.items():
        np.testing.assert_array_equal(compiled.failing_by_model[name], rows)
    assert 0 < oracle.failing_rows.max()  # the models bite somewhere in this lattice


def test_unique_rows_is_numpys_unique_by_rows():
    rng = np.random.default_rng(5)
    cases = [rng.integers(0, 4, (300, 3)), rng.integers(0, 1000, (50, 2)), np.zeros((0, 4), np.int64),
             rng.integers(0, 2**40, (60, 3))]  # the last does not pack into one key: numpy's own path
    for rows in cases:
        expected = np.unique(rows, axis=0, return_counts=True)
        got = unique_rows(rows)
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])
