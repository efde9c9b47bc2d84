"""Benedetti-Franconi individual risk: sdcMicro's formula rewritten here record by record, the exact
expectation it approximates summed term by term, and its known limits."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.risk.individual import (
    IndividualRisk,
    benedetti_franconi,
    class_frequencies,
    individual_risk,
    reidentifications_by_node,
)


def sdcmicro_approx(fk, Fk):
    """indivRisk(method = "approx") of sdcMicro, one record at a time."""
    pk = fk / Fk
    if fk == Fk:
        return 1 / fk
    if fk == 1:
        return pk / (1 - pk) * math.log(1 / pk)
    if fk == 2:
        return pk / (1 - pk) - (pk / (1 - pk)) ** 2 * math.log(1 / pk)
    return pk / (fk - (1 - pk))


def expected_inverse_population(f, p, tol=1e-17):
    """E[1/F] with F - f ~ NegBin(f, p): sum_h (1/h) C(h-1, f-1) p^f (1-p)^(h-f), summed until negligible."""
    if p == 1:
        return 1 / f
    total, h = 0.0, f
    while True:
        term = math.exp(math.lgamma(h) - math.lgamma(f) - math.lgamma(h - f + 1) + f * math.log(p)
                        + (h - f) * math.log1p(-p)) / h
        total += term
        if h > f + 10 and term < tol * total:
            return total
        h += 1


def weighted_sample(seed, n=400):
    rng = np.random.default_rng(seed)
    table = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.zipf(1.8, n) % 7,
                          "w": rng.uniform(1, 60, n)})
    return table


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_against_sdcmicro_formula_with_weights(seed):
    table = weighted_sample(seed)
    fk = table.groupby(["a", "b"])["w"].transform("size").to_numpy()
    Fk = table.groupby(["a", "b"])["w"].transform("sum").to_numpy()
    f, F = class_frequencies(table[["a", "b"]].to_numpy(), table["w"].to_numpy())
    np.testing.assert_array_equal(f, fk)
    np.testing.assert_allclose(F, Fk, rtol=1e-12)
    res = individual_risk(f, F)
    assert isinstance(res, IndividualRisk)
    expected = [sdcmicro_approx(a, b) for a, b in zip(fk, Fk, strict=True)]
    np.testing.assert_allclose(res.risk, expected, rtol=1e-12)
    assert res.expected_reidentifications == pytest.approx(sum(expected), rel=1e-12)
    assert res.global_risk == pytest.approx(sum(expected) / len(table), rel=1e-12)


@pytest.mark.parametrize("fraction", [0.01, 0.1, 0.5, 0.9, 1.0])
def test_constant_fraction_is_weights_one_over_fraction(fraction):
    f = np.array([1, 1, 2, 3, 3, 3, 7, 40])
    by_fraction = individual_risk(f, sampling_fraction=fraction).risk
    by_weights = individual_risk(f, f / fraction).risk
    np.testing.assert_allclose(by_fraction, by_weights, rtol=1e-12)
    np.testing.assert_allclose(by_fraction, [sdcmicro_approx(x, x / fraction) for x in f], rtol=1e-12)


@pytest.mark.parametrize("p", [0.001, 0.05, 0.3, 0.7, 0.99, 0.9999, 1 - 1e-7])
def test_exact_for_one_and_two_close_above(p):
    """For f <= 2 the formulas are E[1/F] itself; for f > 2 Franconi & Polettini's approximation lies
    a little above it (by at most 4.1 % on this grid, at f = 3)."""
    for f in (1, 2):
        assert benedetti_franconi(f, p, 1 - p) == pytest.approx(expected_inverse_population(f, p), rel=1e-9)
    for f in (3, 4, 10, 50):
        exact = expected_inverse_population(f, p)
        assert exact <= benedetti_franconi(f, p, 1 - p) <= exact * 1.05


def test_known_limits():
    # a unique record of a sample that is the whole population is re-identified for sure
    assert individual_risk([1], sampling_fraction=1.0).risk[0] == 1.0
    assert individual_risk([4, 4, 4, 4], [4, 4, 4, 4]).risk.tolist() == [0.25] * 4
    # more weight (a larger population behind the class) means less risk, for every class size
    for f in (1, 2, 3, 8):
        weights = f * np.geomspace(1.0, 1e4, 200)
        risk = individual_risk(np.full(200, f), weights).risk
        assert np.all(np.diff(risk) < 0) and risk[0] == pytest.approx(1 / f) and risk[-1] > 0
    # and a larger sample class at the same sampling fraction, too
    risk = individual_risk(np.arange(1, 30), sampling_fraction=0.2).risk
    assert np.all(np.diff(risk) < 0)


def test_continuous_where_the_series_takes_over():
    for f in (1, 2):
        q = np.array([0.99999e-4, 1.00001e-4])
        r = benedetti_franconi(np.array([f, f]), 1 - q, q)
        assert r[0] == pytest.approx(r[1], rel=1e-8)


def test_by_node_from_histograms():
    rng = np.random.default_rng(4)
    hists = [np.unique(np.unique(rng.integers(0, m, 300), return_counts=True)[1], return_counts=True)
             for m in (5, 50, 500, 5000)]
    offsets = np.concatenate(([0], np.cumsum([len(s) for s, _ in hists])))
    sizes, counts = np.concatenate([s for s, _ in hists]), np.concatenate([c for _, c in hists])
    by_node = reidentifications_by_node(offsets, sizes, counts, 0.1)
    for i, (s, c) in enumerate(hists):
        records = np.repeat(s, s * c)  # every record with its class size
        assert by_node[i] == pytest.approx(individual_risk(records, sampling_fraction=0.1).expected_reidentifications)


def test_class_frequencies_without_weights():
    f, F = class_frequencies(np.array(["x", "y", "x", "z", "x"]))
    assert f.tolist() == [3, 1, 3, 1, 3] and F.tolist() == [3.0, 1.0, 3.0, 1.0, 3.0]


def test_empty():
    res = individual_risk(np.array([], dtype=int), sampling_fraction=0.5)
    assert (res.risk.size, res.expected_reidentifications, res.global_risk) == (0, 0.0, 0.0)


@pytest.mark.parametrize(("args", "kwargs", "parameter"), [
    (([1, 2],), {}, "weight_sum"),
    (([1, 2], [5, 5]), {"sampling_fraction": 0.1}, "weight_sum"),
    (([1, 2], [5, 1]), {}, "weight_sum"),
    (([1, 2], [5, np.nan]), {}, "weight_sum"),
    (([1, 2], [5, 5, 5]), {}, "weight_sum"),
    (([0, 2],), {"sampling_fraction": 0.1}, "frequency"),
    (([1.5, 2],), {"sampling_fraction": 0.1}, "frequency"),
    (([1, 2],), {"sampling_fraction": 0.0}, "sampling_fraction"),
    (([1, 2],), {"sampling_fraction": 1.01}, "sampling_fraction"),
])
def test_bad_input_names_the_parameter(args, kwargs, parameter):
    with pytest.raises(InvalidParameterError, match=parameter) as info:
        individual_risk(*args, **kwargs)
    assert info.value.parameter == parameter


def test_bad_weights_and_labels():
    with pytest.raises(InvalidParameterError, match="weights"):
        class_frequencies([1, 2, 2], [1.0, -2.0, 3.0])
    with pytest.raises(InvalidParameterError, match="labels"):
        class_frequencies(np.zeros((2, 2, 2)))
    with pytest.raises(TypeError, match="sampling_fraction"):
        individual_risk([1], sampling_fraction="10%")
