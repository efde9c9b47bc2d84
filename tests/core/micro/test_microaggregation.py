"""MDAV and the microaggregation methods: the published Census figure, properties against a plain
reference implementation, linkage risk, and named errors for bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microrelease.core import DataError, InvalidParameterError
from microrelease.core.data.samples import microdata_sample
from microrelease.core.micro.linkage import record_linkage
from microrelease.core.micro.micro_loss import information_loss
from microrelease.core.micro.microaggregation import (
    Standardizer,
    mdav_groups,
    microaggregate,
    permute_within,
    ranking_groups,
)

from brute import mdav_reference

CENSUS = pd.read_csv(microdata_sample("census").path)


def test_mdav_id_on_census_loses_the_published_5_69_percent():
    # Domingo-Ferrer & Torra (2005) and sdcMicro's mdav: SSE/SST = 5.69 % for k = 3, 13 attributes
    attributes = list(CENSUS.columns)
    result = microaggregate(CENSUS, qi=attributes, k=3, method="mdav-id")
    assert round(information_loss(CENSUS, result.released, attributes).sse_sst, 2) == 5.69
    assert set(result.group_sizes) == {3}


@st.composite
def numeric_tables(draw):
    n = draw(st.integers(1, 40))
    p = draw(st.integers(1, 3))
    # few distinct values, so that ties in distance are common
    values = draw(st.lists(st.lists(st.integers(0, 4), min_size=p, max_size=p), min_size=n, max_size=n))
    k = draw(st.integers(1, n))
    return np.array(values, dtype=float), k


@given(numeric_tables())
def test_mdav_matches_the_plain_reference_and_sizes_are_k_to_2k_minus_1(case):
    z, k = case
    group = mdav_groups(z, k)
    ours = sorted(sorted(np.flatnonzero(group == g).tolist()) for g in range(group.max() + 1))
    assert ours == sorted(mdav_reference(z.tolist(), k))
    sizes = np.bincount(group)
    assert sizes.min() >= k and (sizes.max() <= 2 * k - 1 or len(sizes) == 1)


def frame(z) -> pd.DataFrame:
    return pd.DataFrame(z, columns=[f"a{j}" for j in range(z.shape[1])]).assign(secret=np.arange(len(z)) * 1.5)


@given(numeric_tables(), st.integers(0, 2**32 - 1))
def test_methods_keep_their_promises(case, seed):
    z, k = case
    z = z + np.arange(z.shape[1])  # columns differ, and none is constant below
    z[0] += 0.5
    if len(z) < 2 or (z.std(axis=0) == 0).any():
        return
    table = frame(z)
    qi = [c for c in table.columns if c != "secret"]

    ident = microaggregate(table, qi=qi, confidential=["secret"], k=k, method="mdav-id")
    sizes = ident.released.groupby(qi).size()
    assert sizes.min() >= k  # k-anonymous on the QIs
    np.testing.assert_allclose(ident.released[qi].mean(), table[qi].mean())  # centroids keep means
    assert ident.released["secret"].equals(table["secret"])

    swap = microaggregate(table, qi=qi, confidential=["secret"], k=k, method="mdav-swap", rng=seed)
    for name in qi:  # same multiset, moved only inside MDAV groups
        assert sorted(swap.released[name]) == sorted(table[name])
    for g in range(swap.groups.max() + 1):
        rows = np.flatnonzero(swap.groups == g)
        released = sorted(map(tuple, swap.released.loc[rows, qi].to_numpy()))
        assert released == sorted(map(tuple, table.loc[rows, qi].to_numpy()))

    ir = microaggregate(table, qi=qi, confidential=["secret"], k=k, method="ir-swap", rng=seed)
    assert sorted(ir.released["secret"]) == sorted(table["secret"])
    groups = ir.attribute_groups["secret"]
    sizes = np.bincount(groups)
    assert sizes.min() >= k and (sizes.max() <= 2 * k - 1 or len(sizes) == 1)
    for g in range(groups.max() + 1):
        rows = np.flatnonzero(groups == g)
        assert sorted(ir.released.loc[rows, "secret"]) == sorted(table.loc[rows, "secret"])
    assert ir.released[qi].equals(table[qi])


@given(st.lists(st.integers(0, 5), min_size=1, max_size=50), st.integers(0, 2**32 - 1))
def test_permutations_never_cross_groups(labels, seed):
    group = np.array(labels)
    perm = permute_within(group, np.random.default_rng(seed))
    assert sorted(perm) == list(range(len(group))) and (group[perm] == group).all()


def test_ranking_groups_are_consecutive_in_rank():
    values = np.array([5, 1, 4, 2, 3, 9, 0])
    group = ranking_groups(values, 3)
    assert group.tolist() == [1, 0, 1, 0, 1, 1, 0]  # ranks 0-2 -> 0; ranks 3-6 -> 1 (the short tail joins)


@pytest.mark.parametrize("method", ["mdav-id", "mdav-swap"])
@pytest.mark.parametrize("k", [3, 5, 10])
def test_linkage_on_census_stays_near_one_over_k(method, k):
    sample = microdata_sample("census")
    qi, conf = list(sample.qi), list(sample.confidential)
    result = microaggregate(CENSUS, qi=qi, confidential=conf, k=k, method=method, rng=11)
    risk = record_linkage(CENSUS, result.released, qi, conf, k=k)
    n = len(CENSUS)
    slack = 3 * np.sqrt((1 / k) * (1 - 1 / k) / n)  # three standard errors of a share of n records
    assert risk.reidentified <= 1 / k + slack
    assert record_linkage(CENSUS, CENSUS, qi, conf, k=1).reidentified == 1.0


def test_ir_swap_guesses_distinct_values_right_about_one_time_in_k():
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"q": rng.normal(size=2000), "secret": rng.permutation(2000).astype(float)})
    result = microaggregate(table, qi=["q"], confidential=["secret"], k=5, method="ir-swap", rng=1)
    risk = record_linkage(table, result.released, ["q"], ["secret"], k=5)
    assert risk.reidentified == 1.0  # the QIs are released as they are
    assert abs(risk.confidential_learned - 1 / 5) < 3 * np.sqrt(0.2 * 0.8 / 2000)


@pytest.mark.parametrize(("table", "kwargs", "error", "message"), [
    (pd.DataFrame({"a": ["x", "y", "z"], "b": [1, 2, 3]}), {"qi": ["a", "b"], "k": 2}, DataError,
     "QI 'a' must be numeric"),
    (pd.DataFrame({"a": [1, 1, 1], "b": [1, 2, 3]}), {"qi": ["a", "b"], "k": 2}, DataError,
     "['a'] are constant"),
    (pd.DataFrame({"a": [1, 2, 3]}), {"qi": ["a"], "k": 4}, InvalidParameterError,
     "at most the number of rows (3)"),
    (pd.DataFrame({"a": [1.0, np.nan, 3.0]}), {"qi": ["a"], "k": 1}, DataError, "'a' has 1 missing value"),
    (pd.DataFrame({"a": [1, 2, 3]}), {"qi": ["a"], "k": 2, "method": "ir-swap"}, DataError,
     "ir-swap permutes confidential attributes"),
    (pd.DataFrame({"a": [1, 2, 3]}), {"qi": ["zz"], "k": 2}, DataError, "unknown QI column(s) ['zz']"),
    (pd.DataFrame({"a": [1, 2, 3]}), {"qi": ["a"], "k": 2, "method": "mdav"}, InvalidParameterError,
     "'method' parameter must be one of"),
])
def test_bad_input_is_named(table, kwargs, error, message):
    with pytest.raises(error) as excinfo:
        microaggregate(table, **kwargs)
    assert message in str(excinfo.value)


def test_standardizer_uses_the_sample_standard_deviation():
    x = np.array([[1.0], [2.0], [3.0], [6.0]])
    z = Standardizer.fit(x, ["a"])(x)
    assert np.isclose(z.std(ddof=1), 1.0) and np.isclose(z.mean(), 0.0)


@given(numeric_tables(), st.floats(0.1, 10))
def test_compiled_and_numpy_mdav_agree(case, scale):
    z, k = case
    z = z * scale + np.sin(np.arange(z.size)).reshape(z.shape)  # non-integer values too
    np.testing.assert_array_equal(mdav_groups(z, k), mdav_groups(z, k, strategy="numpy"))
