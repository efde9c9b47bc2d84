"""sample_data/adult/adult-sample.csv is what sample_data/README.md says: regenerated here byte for byte
from adult.csv (numpy's legacy generator, seed 17, 10 % without replacement, adult's order)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from microrelease.core.data.samples import sample


def test_adult_sample_regenerates_byte_for_byte():
    s = sample("adult-sample")
    adult = pd.read_csv(s.population_path, sep=";", dtype=str, keep_default_na=False)
    rows = np.sort(np.random.RandomState(17).choice(len(adult), len(adult) // 10, replace=False))
    regenerated = adult.iloc[rows].to_csv(sep=";", index=False, lineterminator="\n").encode()
    assert len(rows) == 3016
    assert regenerated == s.path.read_bytes()


def test_adult_sample_rows_are_adult_rows_in_adult_s_order():
    """Independently of pandas: every line of the sample is the next matching line of adult (a subsequence)."""
    s = sample("adult-sample")
    adult = s.population_path.read_bytes().splitlines()
    lines = s.path.read_bytes().splitlines()
    assert lines[0] == adult[0]
    found = iter(adult[1:])
    assert all(any(line == a for a in found) for line in lines[1:])
    assert len(lines) - 1 == (len(adult) - 1) // 10
