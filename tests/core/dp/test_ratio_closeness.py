"""Ratio closeness (the route from t-closeness to DP): every class within exp(±ε/2) of the table's bin
shares and k-anonymous, checked from the released frame with plain pandas; against the stratified
baseline on CASC Census; against brute force over every partition of tiny tables; bad input named."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from microrelease.core import DataError, InvalidParameterError
from microrelease.core.data.samples import microdata_sample
from microrelease.core.dp.ratio_closeness import ratio_closeness_release, stratified_baseline

CENSUS = microdata_sample("census")
QI = list(CENSUS.qi)
METHODS = [ratio_closeness_release, stratified_baseline]


@pytest.fixture(scope="module")
def census() -> pd.DataFrame:
    return pd.read_csv(CENSUS.path)


@pytest.fixture(scope="module")
def census_at_1(census):
    """The release the user measured: ε = 1, k = 5, PEARNVAL in 4 bins over (0, 1e5)."""
    return ratio_closeness_release(census, QI, "PEARNVAL", epsilon=1, k=5, bounds=(0, 1e5), bins=4)


def value_bins(values: pd.Series, bounds=None, bins=4, cuts=None) -> pd.Series:
    """The declared bins, recomputed with pd.cut (equal widths left-closed, the top one closed; cuts
    right-closed)."""
    if cuts is not None:
        return pd.cut(values, [-np.inf, *cuts, np.inf], right=True, labels=False)
    lo, hi = bounds
    edges = np.linspace(lo, hi, bins + 1)
    edges[-1] = np.inf  # the top bin holds hi, and the clamped values above it
    return pd.cut(values.clip(lo, hi), edges, right=False, labels=False)


def verify_release(table: pd.DataFrame, qi: list[str], confidential: str, r, *, epsilon: float, k: int,
                  bins: pd.Series) -> pd.Series:
    """Everything the release promises, from its released frame; returns the classes found there."""
    released = r.released
    assert released[confidential].equals(table[confidential])  # truthful
    rest = [c for c in table.columns if c not in qi]
    assert released[rest].equals(table[rest])
    # classes: records sharing a class share one QI row, the class means of the original QIs
    classes = pd.Series(r.classes, index=table.index)
    means = table[qi].groupby(classes).transform("mean")
    np.testing.assert_allclose(released[qi].to_numpy(float), means.to_numpy(float), rtol=1e-9, atol=1e-9)
    rows = released[qi].round(9).astype(str).agg("|".join, axis=1)
    assert rows.groupby(classes).nunique().eq(1).all()
    # k-anonymity of the released QIs themselves
    assert rows.value_counts().min() >= k
    assert classes.value_counts().min() >= k
    # the bound, with pandas: every class's share of every bin present over the table's share
    p = bins.value_counts(normalize=True)
    share = pd.crosstab(classes, bins, normalize="index").reindex(columns=p.index, fill_value=0)
    with np.errstate(divide="ignore"):
        worst = np.abs(np.log(share / p)).to_numpy().max()
    assert worst <= epsilon / 2 + 1e-9
    assert math.isclose(r.epsilon_achieved, 2 * worst, rel_tol=1e-9, abs_tol=1e-12)
    assert r.epsilon_target == epsilon and math.isclose(r.t, math.exp(epsilon / 2))
    assert list(r.bin_counts) == [int((bins == v).sum()) for v in range(len(r.bin_counts))]
    # no partition meeting the bound has more classes than the rarest present bin has records
    assert classes.nunique() <= min(bins.value_counts().min(), len(table) // k)
    assert classes.nunique() <= r.class_ceiling
    assert (r.single_class_reason is None) == (classes.nunique() > 1)
    return classes


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("epsilon", [0.5, 1.0, 4.0])
def test_census_classes_are_k_anonymous_and_within_the_bound(census, census_at_1, method, epsilon):
    r = (census_at_1 if (method, epsilon) == (ratio_closeness_release, 1.0)
         else method(census, QI, "PEARNVAL", epsilon=epsilon, k=5, bounds=(0, 1e5), bins=4))
    verify_release(census, QI, "PEARNVAL", r, epsilon=epsilon, k=5,
                  bins=value_bins(census["PEARNVAL"], bounds=(0, 1e5), bins=4))
    assert r.clamped == 0 and r.method == ("ratio-partition" if method is ratio_closeness_release
                                          else "stratified-baseline")


def sse_sst(table: pd.DataFrame, released: pd.DataFrame, qi: list[str]) -> float:
    """QI information loss, % (standardized with the original's mean and sample sd)."""
    x = table[qi].to_numpy(float)
    z = (x - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    z_released = (released[qi].to_numpy(float) - x.mean(axis=0)) / x.std(axis=0, ddof=1)
    return 100 * ((z - z_released) ** 2).sum() / ((z - z.mean(axis=0)) ** 2).sum()


def test_census_beats_the_stratified_baseline_at_epsilon_1(census, census_at_1):
    ours = census_at_1
    base = stratified_baseline(census, QI, "PEARNVAL", epsilon=1, k=5, bounds=(0, 1e5))
    bins = value_bins(census["PEARNVAL"], bounds=(0, 1e5))
    # every class must hold a record of every bin, so the rarest bin's count is the most classes
    # possible; both reach it, so "more classes" can only be "as many"
    most = int(bins.value_counts().min())
    assert len(ours.class_sizes) == len(base.class_sizes) == most
    loss, base_loss = sse_sst(census, ours.released, QI), sse_sst(census, base.released, QI)
    assert math.isclose(loss, ours.sse_sst, rel_tol=1e-9) and math.isclose(base_loss, base.sse_sst, rel_tol=1e-9)
    assert loss < base_loss


def test_a_bin_absent_from_the_table_sets_no_constraint(census, census_at_1):
    # 8 bins of 25,000 over (0, 2e5): the top four are empty, the rest are the 4 bins over (0, 1e5)
    wide = ratio_closeness_release(census, QI, "PEARNVAL", epsilon=1, k=5, bounds=(0, 2e5), bins=8)
    assert wide.bin_counts[4:] == (0, 0, 0, 0)
    verify_release(census, QI, "PEARNVAL", wide, epsilon=1, k=5,
                  bins=value_bins(census["PEARNVAL"], bounds=(0, 2e5), bins=8))
    narrow = census_at_1
    np.testing.assert_array_equal(wide.classes, narrow.classes)
    assert wide.epsilon_achieved == narrow.epsilon_achieved


def test_values_outside_the_bounds_are_clamped_and_counted(census):
    r = ratio_closeness_release(census, QI, "PEARNVAL", epsilon=2, k=5, bounds=(1000, 5e4), bins=3)
    assert r.clamped == int(((census["PEARNVAL"] < 1000) | (census["PEARNVAL"] > 5e4)).sum()) > 0
    verify_release(census, QI, "PEARNVAL", r, epsilon=2, k=5,
                  bins=value_bins(census["PEARNVAL"], bounds=(1000, 5e4), bins=3))


def test_declared_cuts_make_right_closed_bins(census):
    cuts = [20000, 39000, 60000]  # 39000 is a data value: it belongs to the second bin
    assert (census["PEARNVAL"] == 39000).any()
    r = ratio_closeness_release(census, QI, "PEARNVAL", epsilon=1, k=5, cuts=cuts)
    verify_release(census, QI, "PEARNVAL", r, epsilon=1, k=5, bins=value_bins(census["PEARNVAL"], cuts=cuts))
    assert r.cuts == tuple(float(c) for c in cuts) and r.clamped == 0


def small_table(n: int, rare: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                         "secret": np.r_[np.zeros(n - rare), np.full(rare, 10.0)]})


def test_a_bin_with_one_record_leaves_one_class_and_says_why():
    table = small_table(60, rare=1)
    r = ratio_closeness_release(table, ["a", "b"], "secret", epsilon=1, k=3, cuts=[5])
    assert len(r.class_sizes) == 1 and r.epsilon_achieved == 0
    assert "(5, inf)" in r.single_class_reason and "1 record" in r.single_class_reason
    np.testing.assert_allclose(r.released[["a", "b"]].to_numpy(), np.tile(table[["a", "b"]].mean(), (60, 1)))


def test_a_rare_bin_limits_the_classes_to_its_records():
    table = small_table(60, rare=4)
    r = ratio_closeness_release(table, ["a", "b"], "secret", epsilon=2, k=3, cuts=[5])
    classes = verify_release(table, ["a", "b"], "secret", r, epsilon=2, k=3,
                            bins=value_bins(table["secret"], cuts=[5]))
    # every class needs one of the 4 rare records (share 1/15), within a class of 15/e to 15e records:
    # 4 classes of 15 fit, and no more can
    assert classes.nunique() == 4


def test_a_rare_bin_no_class_size_fits_leaves_one_class_and_says_why():
    # 7 of 60 records: a class holding q of them needs 60q/7 · exp(±0.005) records, no whole number for
    # q <= 3; of two classes or more, one holds at most 3
    table = small_table(60, rare=7)
    assert not any(math.ceil(60 * q / 7 * math.exp(-0.005)) <= 60 * q / 7 * math.exp(0.005) for q in range(1, 4))
    r = ratio_closeness_release(table, ["a", "b"], "secret", epsilon=0.01, k=3, cuts=[5])
    assert len(r.class_sizes) == 1 and r.epsilon_achieved == 0
    assert "(5, inf)" in r.single_class_reason and "7 of 60" in r.single_class_reason


def test_k_above_half_the_table_is_one_class():
    table = small_table(20, rare=10)
    r = ratio_closeness_release(table, ["a", "b"], "secret", epsilon=1, k=11, cuts=[5])
    assert len(r.class_sizes) == 1 and "k = 11" in r.single_class_reason


@pytest.mark.parametrize(("kwargs", "parameter", "match"), [
    ({"bounds": (0, 1e5), "cuts": [5e4]}, "cuts", "exactly one of 'bounds'"),
    ({}, "bounds", "exactly one of 'bounds'"),
    ({"cuts": [5e4, 2e4]}, "cuts", "strictly increasing"),
    ({"cuts": [2e4, 2e4]}, "cuts", "strictly increasing"),
    ({"cuts": [0, np.inf]}, "cuts", "finite"),
    ({"bounds": (1e5, 0)}, "bounds", "lo < hi"),
    ({"bounds": (0, 1e5), "k": 1081}, "k", "at most the number of rows"),
    ({"bounds": (0, 1e5), "epsilon": 0}, "epsilon", "positive"),
    ({"bounds": (0, 1e5), "bins": 0}, "bins", "at least 1"),
    ({"bounds": (0, 1e5), "confidential": "AGI"}, "confidential", "also among the QIs"),
])
@pytest.mark.parametrize("method", METHODS)
def test_bad_parameters_are_named(census, method, kwargs, parameter, match):
    arguments = {"confidential": "PEARNVAL", "epsilon": 1, "k": 5, **kwargs}
    confidential = arguments.pop("confidential")
    with pytest.raises(InvalidParameterError, match=match) as caught:
        method(census, QI, confidential, **arguments)
    assert caught.value.parameter == parameter


@pytest.mark.parametrize(("qi", "confidential", "match"), [
    (["AGI", "nope"], "PEARNVAL", "unknown QI column.*'nope'"),
    (["AGI", "FEDTAX"], "nope", "unknown confidential attribute column.*'nope'"),
    (["AGI", "word"], "PEARNVAL", "QI 'word' must be numeric"),
    (["AGI", "FEDTAX"], "word", "confidential attribute 'word' must be numeric"),
])
def test_bad_columns_are_named(census, qi, confidential, match):
    table = census.assign(word=["x"] * len(census))
    with pytest.raises(DataError, match=match):
        ratio_closeness_release(table, qi, confidential, epsilon=1, k=5, bounds=(0, 1e5))


# --- small random tables, and brute force over every partition ----------------------------------------------


@st.composite
def small_cases(draw, max_rows: int = 30):
    n = draw(st.integers(4, max_rows))
    qi = draw(st.lists(st.lists(st.integers(0, 6), min_size=2, max_size=2), min_size=n, max_size=n))
    secret = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    table = pd.DataFrame(qi, columns=["a", "b"]).assign(secret=secret)
    if (table[["a", "b"]].nunique() < 2).any():
        table.loc[0, "a"], table.loc[1, "a"], table.loc[0, "b"], table.loc[1, "b"] = 0, 6, 0, 6
    epsilon = draw(st.sampled_from([0.2, 0.7, 1.0, 2.0, 5.0]))
    k = draw(st.integers(1, max(1, n // 2)))
    if draw(st.booleans()):
        binning = {"cuts": sorted(draw(st.sets(st.sampled_from([0.5, 1.5, 2.5, 3.5, 4.5, 7.0]), max_size=3)))}
    else:
        binning = {"bounds": (0, draw(st.sampled_from([4, 5, 9]))), "bins": draw(st.integers(1, 4))}
    return table, epsilon, k, binning


@settings(max_examples=60)
@given(small_cases(), st.sampled_from(METHODS))
def test_random_tables_meet_the_bound_and_k(case, method):
    table, epsilon, k, binning = case
    r = method(table, ["a", "b"], "secret", epsilon=epsilon, k=k, **binning)
    verify_release(table, ["a", "b"], "secret", r, epsilon=epsilon, k=k, bins=value_bins(table["secret"], **binning))


def partitions(items: list[int]):
    """Every set partition of ``items`` (Bell(n) of them)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for smaller in partitions(rest):
        for i in range(len(smaller)):
            yield smaller[:i] + [[first, *smaller[i]]] + smaller[i + 1:]
        yield [[first], *smaller]


def most_classes(bins: np.ndarray, epsilon: float, k: int) -> int:
    """The largest number of classes of any partition meeting the bound and k, by brute force."""
    p = np.bincount(bins) / len(bins)
    best = 1
    for partition in partitions(list(range(len(bins)))):
        if len(partition) <= best:
            continue
        ok = True
        for members in partition:
            share = np.bincount(bins[members], minlength=len(p)) / len(members)
            with np.errstate(divide="ignore"):
                if len(members) < k or np.abs(np.log(share[p > 0] / p[p > 0])).max() > epsilon / 2 + 1e-12:
                    ok = False
                    break
        if ok:
            best = len(partition)
    return best


@settings(max_examples=40)
@given(st.lists(st.integers(0, 2), min_size=4, max_size=8), st.sampled_from([0.5, 1.0, 2.0, 4.0]),
       st.integers(1, 3))
def test_classes_never_exceed_the_brute_force_most_nor_the_ceiling_undercuts_it(secret, epsilon, k):
    n = len(secret)
    k = min(k, n)
    table = pd.DataFrame({"a": np.arange(n, dtype=float), "b": (np.arange(n) * 5 % 7).astype(float),
                          "secret": secret})
    r = ratio_closeness_release(table, ["a", "b"], "secret", epsilon=epsilon, k=k, cuts=[0.5, 1.5])
    best = most_classes(np.asarray(secret), epsilon, k)
    assert len(r.class_sizes) <= best <= r.class_ceiling


def count_matrices(sizes: list[int], bin_counts: list[int]):
    """Every matrix of whole counts with these row and column sums."""
    if len(sizes) == 1:
        yield [list(bin_counts)]
        return
    def rows(total, left, prefix):
        if len(prefix) == len(left) - 1:
            if total <= left[-1]:
                yield [*prefix, total]
            return
        for q in range(min(total, left[len(prefix)]) + 1):
            yield from rows(total - q, left, [*prefix, q])
    for first in rows(sizes[0], bin_counts, []):
        rest = [b - q for b, q in zip(bin_counts, first, strict=True)]
        for others in count_matrices(sizes[1:], rest):
            yield [first, *others]


@settings(max_examples=80)
@given(st.lists(st.integers(0, 5), min_size=2, max_size=3), st.integers(1, 3),
       st.sampled_from([0.1, 0.3, 0.7, 1.5]))
def test_planned_bin_counts_exist_exactly_when_brute_force_finds_some(bin_counts, n_classes, theta):
    from microrelease.core.dp.ratio_partition import compositions

    n = sum(bin_counts)
    if n < n_classes:
        return
    sizes = [n // n_classes + (c < n % n_classes) for c in range(n_classes)]
    p = np.array(bin_counts) / n
    present = p > 0

    def fits(matrix) -> bool:
        share = np.array(matrix, dtype=float) / np.array(sizes)[:, None]
        with np.errstate(divide="ignore"):
            return bool((np.abs(np.log(share[:, present] / p[present])) <= theta + 1e-12).all())

    exists = any(fits(m) for m in count_matrices(sizes, bin_counts))
    plan = compositions(np.array(sizes), np.array(bin_counts), theta)
    assert (plan is not None) == exists
    if plan is not None:
        assert plan.sum(axis=1).tolist() == sizes and plan.sum(axis=0).tolist() == bin_counts and fits(plan)
