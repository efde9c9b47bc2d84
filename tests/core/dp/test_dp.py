"""DP mechanisms against their closed forms and the ε-DP ratio; DP microdata releases."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microrelease.core import InvalidParameterError
from microrelease.core.dp import (
    Laplace,
    PrivacyWarning,
    Staircase,
    compare_noise,
    dp_release,
    least_variance_gamma,
)
from microrelease.core.dp.microdata import consecutive_groups, insensitive_order


def mechanisms(epsilon: float, sensitivity: float = 1.0):
    yield Laplace(epsilon=epsilon, sensitivity=sensitivity)
    for gamma in ("mean-abs", "variance", "centred", 0.1, 1.0):
        yield Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=gamma)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0])
@pytest.mark.parametrize("sensitivity", [1.0, 2.5])
def test_densities_integrate_to_one_and_bound_the_ratio_by_e_to_the_epsilon(epsilon, sensitivity):
    reach = sensitivity * (60 / epsilon + 5)
    x = np.linspace(-reach, reach, 400_001)
    for mech in mechanisms(epsilon, sensitivity):
        assert np.trapezoid(mech.density(x), x) == pytest.approx(1, abs=2e-3), mech
        assert float(mech.cdf(reach)) == pytest.approx(1, abs=1e-9) and float(mech.cdf(0)) == pytest.approx(0.5)
        grid = np.linspace(-5 * sensitivity, 5 * sensitivity, 2001)
        for d in np.linspace(-sensitivity, sensitivity, 41):
            assert np.all(mech.density(grid) <= math.exp(epsilon) * mech.density(grid + d) * (1 + 1e-12)), (mech, d)


def test_published_figures_at_epsilon_one():
    laplace = Laplace(epsilon=1, sensitivity=1)
    assert laplace.mean_abs() == 1 and laplace.variance() == 2
    assert Staircase(epsilon=1, gamma="mean-abs").mean_abs() == pytest.approx(math.exp(0.5) / (math.e - 1))
    assert float(Staircase(epsilon=1, gamma="centred").prob_within(0.5)) == pytest.approx(math.tanh(0.5))
    assert float(laplace.prob_within(0.5)) == pytest.approx(1 - math.exp(-0.5))
    table = compare_noise(1.0).set_index("mechanism")
    assert (table.loc["staircase (centred)", "P(|X|<=0.5Δ)"] > table.loc["laplace", "P(|X|<=0.5Δ)"])


@pytest.mark.parametrize("epsilon", [0.2, 1.0, 3.0])
def test_closed_forms_equal_numerical_integrals_and_the_presets_are_optimal(epsilon):
    x = np.linspace(0, 80 / epsilon + 10, 800_001)
    for mech in mechanisms(epsilon):
        f = mech.density(x)
        assert 2 * np.trapezoid(x * f, x) == pytest.approx(mech.mean_abs(), rel=2e-3)
        assert 2 * np.trapezoid(x * x * f, x) == pytest.approx(mech.variance(), rel=2e-3)
    gammas = np.linspace(0.001, 1, 4000)
    variances = [Staircase(epsilon=epsilon, gamma=float(g)).variance() for g in gammas]
    mean_abs = [Staircase(epsilon=epsilon, gamma=float(g)).mean_abs() for g in gammas]
    assert least_variance_gamma(epsilon) == pytest.approx(gammas[int(np.argmin(variances))], abs=1e-3)
    assert 1 / (1 + math.exp(epsilon / 2)) == pytest.approx(gammas[int(np.argmin(mean_abs))], abs=1e-3)


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"epsilon": 0}, InvalidParameterError, "'epsilon' parameter must be positive"),
    ({"epsilon": -1}, InvalidParameterError, "'epsilon' parameter must be positive"),
    ({"epsilon": "1"}, TypeError, "'epsilon' parameter must be a real number"),
    ({"epsilon": 1, "sensitivity": 0}, InvalidParameterError, "'sensitivity' parameter must be positive"),
    ({"epsilon": 1, "gamma": 1.5}, InvalidParameterError, "'gamma' parameter must be in (0, 1]"),
    ({"epsilon": 1, "gamma": "best"}, InvalidParameterError, "'gamma' parameter must be in (0, 1] or one of"),
])
def test_bad_mechanism_parameters_are_named(kwargs, error, message):
    with pytest.raises(error) as excinfo:
        Staircase(**kwargs)
    assert message in str(excinfo.value)


@st.composite
def tables_and_a_change(draw):
    n = draw(st.integers(2, 40))
    m = draw(st.integers(1, 3))
    values = st.lists(st.integers(0, 6), min_size=m, max_size=m)
    rows = draw(st.lists(values, min_size=n, max_size=n))
    who = draw(st.integers(0, n - 1))
    new = draw(values)
    k = draw(st.integers(1, n))
    return np.array(rows, dtype=float) / 6, who, np.array(new, dtype=float) / 6, k


@given(tables_and_a_change())
def test_changing_one_record_changes_each_insensitive_cluster_by_at_most_one_record(case):
    x, who, new, k = case
    before = consecutive_groups(insensitive_order(x), k)
    y = x.copy()
    y[who] = new
    after = consecutive_groups(insensitive_order(y), k)
    for g in range(before.max() + 1):
        old, now = set(np.flatnonzero(before == g)), set(np.flatnonzero(after == g))
        assert len(old - now) <= 1 and len(now - old) <= 1


def census():
    from microrelease.core.data.samples import microdata_sample

    return pd.read_csv(microdata_sample("census").path)


BOUNDS = {"AGI": (0, 1e5), "FICA": (0, 1e4)}


def test_dp_releases_add_the_documented_noise():
    table = census()
    base = dp_release(table, ["AGI", "FICA"], bounds=BOUNDS, epsilon=1.0, method="record-noise", rng=0)
    assert base.noise_scale == {"AGI": 2e5, "FICA": 2e4}  # sensitivity Δ, budget ε/2 each
    ir = dp_release(table, ["AGI", "FICA"], bounds=BOUNDS, epsilon=1e9, method="ir-mdav", k=10, rng=0)
    assert ir.sensitivity == {"AGI": 1e4, "FICA": 1e3}  # Δ/k
    order = np.argsort(table["AGI"].to_numpy(), kind="stable")
    means = table["AGI"].to_numpy()[order[:10]].mean()
    assert np.allclose(ir.released["AGI"].to_numpy()[order[:10]], means, atol=1e-3)  # group means, no visible noise
    with pytest.warns(PrivacyWarning, match="k = 10 <= sqrt"):
        dp_release(table, ["AGI"], bounds=BOUNDS, epsilon=1.0, method="insensitive-mdav", k=10, rng=0)
    ins = dp_release(table, ["AGI"], bounds=BOUNDS, epsilon=1.0, method="insensitive-mdav", k=100, rng=0)
    assert ins.sensitivity["AGI"] == pytest.approx(len(table) // 100 * 1e5 / 100)  # (n/k)·Δ/k
    assert ins.released["AGI"].nunique() == len(table) // 100


@pytest.mark.parametrize("method, k", [("record-noise", None), ("ir-mdav", 50), ("insensitive-mdav", 200)])
def test_every_method_uses_the_noise_it_is_given(method, k):
    """The mechanism is one parameter for every method (no method name overrides it)."""
    table = census()
    released = {}
    for mechanism in ("laplace", "staircase"):
        r = dp_release(table, ["AGI"], bounds=BOUNDS, epsilon=1.0, method=method, noise=mechanism, k=k, rng=3)
        assert r.noise == mechanism and r.to_dict()["noise"] == mechanism
        released[mechanism] = r.released["AGI"].to_numpy()
    assert not np.allclose(released["laplace"], released["staircase"])  # same seed, other mechanism
    with pytest.raises(InvalidParameterError, match="'noise' parameter must be one of") as caught:
        dp_release(table, ["AGI"], bounds=BOUNDS, epsilon=1.0, method=method, noise="gauss", k=k)
    assert caught.value.parameter == "noise"


def test_a_huge_epsilon_gives_almost_no_noise_for_every_mechanism():
    for mechanism in ("laplace", "staircase"):
        r = dp_release(census(), ["AGI"], bounds=BOUNDS, epsilon=1e12, method="record-noise", noise=mechanism, rng=0)
        assert np.allclose(r.released["AGI"], census()["AGI"].clip(*BOUNDS["AGI"]), atol=1e-3)


def test_bad_dp_input_is_named_or_documented():
    table = census()
    with pytest.raises(InvalidParameterError, match=r"no declared bounds for \['FICA'\]"):
        dp_release(table, ["AGI", "FICA"], bounds={"AGI": (0, 1e5)}, epsilon=1)
    with pytest.raises(InvalidParameterError, match=r"bounds of \['AGI'\] must be finite with LO < HI"):
        dp_release(table, ["AGI"], bounds={"AGI": (5, 1)}, epsilon=1)
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter must be positive"):
        dp_release(table, ["AGI"], bounds=BOUNDS, epsilon=0)
    with pytest.raises(InvalidParameterError, match="at most the number of rows"):
        dp_release(table, ["AGI"], bounds=BOUNDS, epsilon=1, method="ir-mdav", k=5000)
    with pytest.warns(PrivacyWarning, match="clamped"):
        r = dp_release(table, ["AGI"], bounds={"AGI": (0, 50_000)}, epsilon=1, method="record-noise", rng=0)
    assert r.clamped == {"AGI": int((table["AGI"] > 50_000).sum())} and r.clamped["AGI"] > 0


# --- multivariate staircase --------------------------------------------------------------------

@pytest.mark.parametrize("norm", ["l1", "linf"])
@pytest.mark.parametrize("dimension", [1, 2, 3])
def test_multivariate_staircase_is_a_density_and_epsilon_dp_in_its_gauge(norm, dimension):
    from microrelease.core.dp.multivariate import MultivariateStaircase

    mech = MultivariateStaircase(epsilon=1.0, dimension=dimension, norm=norm, gamma=0.4, rng=3)
    rng = np.random.default_rng(0)
    # mass in polar form: ∫ p(r·e₁) · d·V_d·r^(d−1) dr, with the unit ball's volume V_d
    # (2^d/d! for the L1 ball, 2^d for the box) and p read from the density along one axis
    r = np.linspace(0, 80, 1_600_001)
    axis = np.zeros((len(r), dimension))
    axis[:, 0] = r
    unit_volume = 2.0**dimension / math.factorial(dimension) if norm == "l1" else 2.0**dimension
    mass = np.trapezoid(mech.density(axis) * dimension * unit_volume * r ** (dimension - 1), r)
    assert mass == pytest.approx(1, abs=1e-3)
    x = rng.normal(scale=3, size=(20_000, dimension))
    shifts = mech._directions(20_000) * rng.uniform(0, 1, size=(20_000, 1))  # ‖d‖_K <= Δ = 1
    assert np.all(mech.density(x) <= math.exp(1.0) * mech.density(x + shifts) * (1 + 1e-12))
    sample = mech.randomise(np.zeros((100_000, dimension)))
    assert mech.gauge(sample).mean() == pytest.approx(mech.expected_norm(), rel=0.02)


def test_gauge_staircase_beats_per_coordinate_laplace_on_a_box():
    from microrelease.core.dp.multivariate import compare_multivariate

    table = compare_multivariate(1.0, 5).set_index("sensitivity set")
    assert table.loc["box", "ratio"] > 2  # Laplace must pay the box's L1 sensitivity d·Δ
    assert table.loc["L1 ball", "ratio"] >= 0.999  # never worse than Laplace on the L1 ball


# --- ratio closeness (the route from t-closeness to DP) -------------------------------------------------------------

def test_t_closeness_route_reaches_the_epsilon_it_promises_with_true_confidential_values():
    from microrelease.core.data.samples import microdata_sample
    from microrelease.core.dp.ratio_closeness import ratio_closeness_release

    s = microdata_sample("census")
    table = census()
    for epsilon in (2.0, 4.0):
        r = ratio_closeness_release(table, list(s.qi)[:3], "PEARNVAL", epsilon=epsilon, bounds=(0, 1e5), k=5, bins=2)
        assert r.epsilon_achieved <= epsilon + 1e-9 and r.class_sizes.min() >= 5
        assert r.released["PEARNVAL"].equals(table["PEARNVAL"])  # truthful
        # every class holds each bin in a proportion within exp(ε/2) of the table's, recomputed here
        bins = np.minimum((table["PEARNVAL"] / 5e4).astype(int), 1)
        p = bins.value_counts(normalize=True)
        for _, members in bins.groupby(r.classes):
            q = members.value_counts(normalize=True).reindex(p.index, fill_value=0)
            assert np.all(np.abs(np.log(q / p)) <= epsilon / 2 + 1e-9)


# --- prior knowledge refinement -------------------------------------------------------------------

def test_prior_refinement_is_epsilon_dp_and_sharper_priors_answer_better():
    from microrelease.core.dp.prior import PriorRefinement, normal_prior

    edges = np.linspace(0, 100, 21)
    for spread in (50, 20, 5):
        mech = PriorRefinement(epsilon=1.0, edges=edges, prior=normal_prior(edges, 42, spread))
        outputs = np.array([mech.output_distribution(v) for v in (edges[:-1] + 2.5)])
        ratio = outputs[:, None, :] / outputs[None, :, :]
        assert ratio.max() <= math.exp(1.0) + 1e-12  # any two answers, any output
        assert (outputs / mech.prior).max() <= math.exp(0.5) + 1e-12  # knowledge gain over the prior
    sharp = PriorRefinement(epsilon=1.0, edges=edges, prior=normal_prior(edges, 42, 5))
    vague = PriorRefinement(epsilon=1.0, edges=edges, prior=normal_prior(edges, 42, 50))
    assert sharp.accuracy(42) > vague.accuracy(42) and sharp.expected_abs_error(42) < vague.expected_abs_error(42)
    with pytest.raises(InvalidParameterError, match="'prior' parameter"):
        PriorRefinement(epsilon=1, edges=edges, prior=[1.0])
