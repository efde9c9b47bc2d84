"""Adult (8 QIs, 6,480 nodes): the profile's answers against a separate brute-force pass.

The brute force reads the raw files with the csv module, evaluates every node by grouping the
generalized distinct tuples anew, and checks minimality against every vector strictly below.
Slow (tens of seconds) by design.
"""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pandas as pd
import pytest

from microrelease.core import build_profile, query
from microrelease.core.data.samples import sample

QI = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def brute():
    folder = sample("adult").folder
    table = pd.read_csv(folder / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    distinct = table.groupby(QI, sort=False).size().reset_index(name="n")
    level_codes, heights = [], []
    for q in QI:
        with open(folder / f"adult_hierarchy_{q}.csv", newline="") as fh:
            rows = [r for r in csv.reader(fh, delimiter=";") if r]
        heights.append(len(rows[0]) - 1)
        per_level = []
        for j in range(len(rows[0])):
            label_of = {r[0]: r[j] for r in rows}
            per_level.append(pd.factorize(distinct[q].map(label_of))[0])
        level_codes.append(per_level)
    counts = distinct["n"].to_numpy()
    nodes = list(itertools.product(*(range(h + 1) for h in heights)))
    sizes = {}
    for v in nodes:
        key = np.zeros(len(distinct), dtype=np.int64)
        for i, d in enumerate(v):  # mixed-radix number of the generalized tuple
            codes = level_codes[i][d]
            key = key * (codes.max() + 1) + codes
        inverse = pd.factorize(key)[0]  # class sizes in order of first appearance (all uses ignore order)
        sizes[v] = np.bincount(inverse, weights=counts).astype(int)
    return nodes, sizes, len(table)


def brute_answer(nodes, sizes, k, max_sup):
    sat = np.array([sizes[v][sizes[v] < k].sum() <= max_sup for v in nodes])
    grid = np.array(nodes)
    good = grid[sat]
    minimal = set()
    for v in good:
        strictly_below = np.all(good <= v, axis=1) & np.any(good < v, axis=1)
        if not strictly_below.any():
            minimal.add(tuple(int(x) for x in v))
    min_height = int(grid[sat].sum(axis=1).min())
    return minimal, min_height


@pytest.mark.parametrize(("k", "max_sup"), [(2, 0), (5, 0), (10, 100), (50, "1%"), (100, 500), (3, 30)])
def test_k_minimal_and_find_vector_equal_brute_force(brute, adult_profile, k, max_sup):
    nodes, sizes, n = brute
    answer = query(adult_profile, k, max_sup)
    minimal, min_height = brute_answer(nodes, sizes, k, answer.max_sup)
    assert {n.vector for n in answer.k_minimal_nodes()} == minimal
    assert sum(answer.find_vector().vector) == min_height


def test_k5_without_suppression_needs_height_13(adult_profile):
    assert sum(query(adult_profile, 5, 0).find_vector().vector) == 13


def test_profile_histograms_equal_brute_force_on_every_node(brute, adult_profile):
    nodes, sizes, _ = brute
    for v in nodes:
        s, c = np.unique(sizes[v], return_counts=True)
        got_s, got_c = adult_profile.histogram(v)
        assert np.array_equal(s, got_s) and np.array_equal(c, got_c), v


def test_numpy_path_gives_the_identical_profile(adult, adult_profile):
    other = build_profile(adult, strategy="numpy")
    for name in ("offsets", "sizes", "counts"):
        assert np.array_equal(getattr(other, name), getattr(adult_profile, name))
