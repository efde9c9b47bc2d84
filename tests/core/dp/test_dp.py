"""DP mechanisms against their closed forms and the ε-DP ratio; DP microdata releases."""

from __future__ import annotations

import json
import math
from decimal import Decimal, localcontext

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microrelease.core import DataError, InvalidParameterError, VerificationError
from microrelease.core.dp import (
    Laplace,
    PrivacyWarning,
    Staircase,
    compare_noise,
    dp_release,
    least_variance_gamma,
)
from microrelease.core.dp.dp_writing import write_dp_release
from microrelease.core.dp.microdata import consecutive_groups, fixed_order
from microrelease.core.release import audit_path, report_path


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


@pytest.mark.parametrize("epsilon", [1e-17, 1e-8, 1e-4, 0.1, 1.0, 10.0])
def test_the_least_variance_gamma_is_the_papers_formula_computed_without_cancellation(epsilon):
    """Geng & Viswanath's formula in 120-digit decimals, where its cancellation does no harm."""
    with localcontext(prec=120):
        eps, one = Decimal(epsilon), Decimal(1)
        b = (-eps).exp()
        root = (b - 2 * b**2 + 2 * b**4 - b**5) ** (one / 3)
        exact = -b / (one - b) + root / (Decimal(2) ** (one / 3) * (one - b) ** 2)
    assert least_variance_gamma(epsilon) == pytest.approx(float(exact), rel=1e-12)


@pytest.mark.parametrize("gamma", ["mean-abs", "variance", "centred"])
def test_the_staircase_draws_at_a_tiny_epsilon_with_the_laplace_limit_figures(gamma):
    """Below ε ≈ 1e-16, e^(−ε) rounds to 1: 1 − b must come from expm1. As ε → 0 the staircase
    tends to Laplace of scale Δ/ε (E|X| = Δ/ε, variance 2(Δ/ε)², P(|X| <= Δ/ε) = 1 − 1/e)."""
    epsilon, sensitivity = 1e-17, 2.0
    mech = Staircase(epsilon=epsilon, sensitivity=sensitivity, gamma=gamma, rng=0)
    scale = sensitivity / epsilon
    assert mech.mean_abs() == pytest.approx(scale, rel=1e-9)
    assert mech.variance() == pytest.approx(2 * scale**2, rel=1e-9)
    assert float(mech.prob_within(scale)) == pytest.approx(1 - math.exp(-1), rel=1e-9)
    assert float(mech.cdf(0)) == 0.5 and float(mech.density(0)) == pytest.approx(1 / (2 * scale), rel=1e-9)
    noise = mech.randomise(np.zeros(20_000))
    assert np.isfinite(noise).all()
    # |X| is about exponential (sd = mean): 20,000 draws put the mean within 2.5 % at 3.5 sd
    assert np.abs(noise).mean() == pytest.approx(mech.mean_abs(), rel=0.025)
    assert np.mean(np.abs(noise) <= scale) == pytest.approx(float(mech.prob_within(scale)), abs=0.012)
    assert abs(np.mean(noise > 0) - 0.5) < 0.012


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
    before = consecutive_groups(fixed_order(x), k)
    y = x.copy()
    y[who] = new
    after = consecutive_groups(fixed_order(y), k)
    for g in range(before.max() + 1):
        old, now = set(np.flatnonzero(before == g)), set(np.flatnonzero(after == g))
        assert len(old - now) <= 1 and len(now - old) <= 1


def census():
    from microrelease.core.data.samples import microdata_sample

    return pd.read_csv(microdata_sample("census").path)


BOUNDS = {"AGI": (0, 1e5), "FICA": (0, 1e4)}
AGI_BOUNDS = {"AGI": BOUNDS["AGI"]}  # bounds of a column not released are refused


def test_dp_releases_add_the_documented_noise():
    table = census()
    base = dp_release(table, ["AGI", "FICA"], bounds=BOUNDS, epsilon=1.0, method="record-noise", rng=0)
    assert base.noise_scale == {"AGI": 2e5, "FICA": 2e4}  # sensitivity Δ, budget ε/2 each
    ir = dp_release(table, ["AGI", "FICA"], bounds=BOUNDS, epsilon=1e9, method="ir-mdav", k=10, rng=0)
    assert ir.sensitivity == {"AGI": 1e4, "FICA": 1e3}  # Δ/k
    means = np.sort(table["AGI"].to_numpy())[:10].mean()  # the lowest group of 10 (rows come out shuffled)
    assert np.allclose(np.sort(ir.released["AGI"].to_numpy())[:10], means, atol=1e-3)  # its mean, no visible noise
    with pytest.warns(PrivacyWarning, match="k = 10 <= sqrt"):
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1.0, method="fixed-order-blocks", k=10, rng=0)
    ins = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1.0, method="fixed-order-blocks", k=100, rng=0)
    assert ins.sensitivity["AGI"] == pytest.approx(len(table) // 100 * 1e5 / 100)  # (n/k)·Δ/k
    grid = ins.to_dict()["per_attribute"]["AGI"]["output_grid"]
    assert grid == 16384  # the smallest power of two >= the noise scale 10,000: values snapped to it
    assert ins.released["AGI"].nunique() <= len(table) // 100 and (ins.released["AGI"] % grid == 0).all()


def test_every_method_uses_the_noise_it_is_given_and_the_staircase_only_where_it_is_dp():
    """The mechanism is one parameter for every method (no method name overrides it). The staircase is
    refused where one record moves several released means (each costs its whole budget there)."""
    table = census()
    released = {}
    for mechanism in ("laplace", "staircase"):
        r = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1.0, method="record-noise", noise=mechanism, rng=3)
        assert r.noise == mechanism and r.to_dict()["noise"] == mechanism
        released[mechanism] = r.released["AGI"].to_numpy()
    assert not np.allclose(np.sort(released["laplace"]), np.sort(released["staircase"]))  # same seed, other noise
    for method, k in (("ir-mdav", 50), ("fixed-order-blocks", 200)):
        assert dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1.0, method=method, k=k, rng=3).noise == "laplace"
        with pytest.raises(InvalidParameterError, match="staircase noise with .* groups would not be 1-DP") as caught:
            dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1.0, method=method, noise="staircase", k=k)
        assert caught.value.parameter == "noise"
    one_group = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1.0, method="ir-mdav", noise="staircase", k=600)
    assert one_group.released["AGI"].nunique() == 1  # one mean moved by a record: the staircase is fine
    with pytest.raises(InvalidParameterError, match="'noise' parameter must be one of") as caught:
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1.0, method="record-noise", noise="gauss")
    assert caught.value.parameter == "noise"


def test_released_values_are_snapped_to_a_power_of_two_grid_no_finer_than_the_noise():
    """value + noise in floating point can only produce certain doubles, which depend on the value: at full
    precision a neighbour can be ruled out with certainty (Mironov 2012). Released values are multiples of
    a grid Λ, the smallest power of two >= the noise scale, so no such trace is left."""
    table = census()
    for method, k, noise in (("record-noise", None, "laplace"), ("record-noise", None, "staircase"),
                             ("ir-mdav", 20, "laplace"), ("fixed-order-blocks", 100, "laplace")):
        r = dp_release(table, ["AGI", "FICA"], bounds=BOUNDS, epsilon=2.0, method=method, k=k, noise=noise)
        for a, figures in r.to_dict()["per_attribute"].items():
            grid, scale = figures["output_grid"], figures["noise_scale"]
            assert scale <= grid < 2 * scale and math.log2(grid).is_integer(), (method, a)
            values = r.released[a].to_numpy()
            assert np.array_equal(values, np.round(values / grid) * grid), (method, a)


def test_a_huge_epsilon_gives_almost_no_noise_for_every_mechanism():
    for mechanism in ("laplace", "staircase"):
        r = dp_release(census(), ["AGI"], bounds=AGI_BOUNDS, epsilon=1e12, method="record-noise", noise=mechanism, rng=0)
        assert np.allclose(np.sort(r.released["AGI"]), np.sort(census()["AGI"].clip(*BOUNDS["AGI"])), atol=1e-3)


def test_bad_dp_input_is_named_or_documented():
    table = census()
    with pytest.raises(InvalidParameterError, match=r"no declared bounds for \['FICA'\]"):
        dp_release(table, ["AGI", "FICA"], bounds={"AGI": (0, 1e5)}, epsilon=1)
    with pytest.raises(InvalidParameterError, match=r"bounds of \['AGI'\] must be finite with LO < HI"):
        dp_release(table, ["AGI"], bounds={"AGI": (5, 1)}, epsilon=1)
    with pytest.raises(InvalidParameterError, match="'epsilon' parameter must be positive"):
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=0)
    with pytest.raises(InvalidParameterError, match="at most the number of rows"):
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="ir-mdav", k=5000)
    with pytest.warns(PrivacyWarning, match="clamped"):
        r = dp_release(table, ["AGI"], bounds={"AGI": (0, 50_000)}, epsilon=1, method="record-noise", rng=0)
    assert r.clamped == {"AGI": int((table["AGI"] > 50_000).sum())} and r.clamped["AGI"] > 0


def test_a_k_that_record_noise_would_ignore_and_bounds_of_a_column_not_released_are_refused():
    table = census()
    with pytest.raises(InvalidParameterError, match="'record-noise' .* k = 5 would be ignored") as caught:
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="record-noise", k=5)
    assert caught.value.parameter == "k"
    with pytest.raises(InvalidParameterError, match=r"bounds given for \['FICA'\], which are not released") as caught:
        dp_release(table, ["AGI"], bounds=BOUNDS, epsilon=1, method="ir-mdav", k=20)
    assert caught.value.parameter == "bounds"


def people_with_names() -> pd.DataFrame:
    table = census()
    return table.assign(name=[f"person {i}" for i in range(len(table))])


def test_a_dp_release_writes_only_the_attributes_unless_told_and_never_an_identifier(tmp_path):
    table = people_with_names()
    release = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="ir-mdav", k=20, identifiers=["name"],
                         rng=0)
    assert list(release.released.columns) == ["AGI"]
    assert release.not_released == tuple(c for c in table.columns if c not in ("AGI", "name"))
    report = write_dp_release(release, table, tmp_path / "dp.csv", identifiers=["name"]).data
    assert list(pd.read_csv(tmp_path / "dp.csv").columns) == ["AGI"]
    checks = {c["check"]: c for c in report["verification"]}
    assert checks["identifiers absent"] == {"check": "identifiers absent", "passed": True, "detail": "none of ['name']"}
    assert report["parameters"]["identifiers_dropped"] == ["name"]
    assert report["parameters"]["not_released"] == list(release.not_released)
    assert report["parameters"]["released_without_protection"] == []
    # a column named in keep is written as is, said in the report and warned about
    with pytest.warns(PrivacyWarning, match=r"\['FICA'\] released as is, without protection"):
        kept = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="record-noise", keep=["FICA"])
    report = write_dp_release(kept, table, tmp_path / "kept.csv").data
    written = pd.read_csv(tmp_path / "kept.csv")
    assert sorted(written["FICA"]) == sorted(table["FICA"]) and list(written.columns) == ["AGI", "FICA"]
    assert report["parameters"]["released_without_protection"] == ["FICA"]
    assert "FICA released as is, without protection" in report["parameters"]["guarantee"]
    # an identifier is never written, even kept: refused by the release, and by the writer if named there only
    with pytest.raises(InvalidParameterError, match="identifiers are never released") as caught:
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="record-noise", keep=["name"],
                   identifiers=["name"])
    assert caught.value.parameter == "keep"
    # beside a group's shared noisy value, a kept column would show who is grouped with whom: refused
    for method in ("ir-mdav", "fixed-order-blocks"):
        with pytest.raises(InvalidParameterError, match="would show which records share a") as caught:
            dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method=method, k=20, keep=["FICA"])
        assert caught.value.parameter == "keep"
    with pytest.warns(PrivacyWarning, match="without protection"):
        leaky = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="record-noise", keep=["name"])
    with pytest.raises(DataError, match=r"\['name'\] are identifiers and would be written"):
        write_dp_release(leaky, table, tmp_path / "named_late.csv", identifiers=["name"])
    assert not (tmp_path / "named_late.csv").exists()


def test_the_identifier_check_bites_on_a_dp_release_written_with_them(tmp_path, monkeypatch):
    from microrelease.core.release import table as table_module

    real = table_module.write_csv
    table = people_with_names()

    def leaks_the_names(frame, path, sep=","):  # a writer bug: the names come back on the way to disk
        real(frame.assign(name=table["name"].to_numpy()), path, sep)

    monkeypatch.setattr(table_module, "write_csv", leaks_the_names)
    release = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="ir-mdav", k=20, identifiers=["name"],
                         rng=0)
    with pytest.raises(VerificationError, match=r"identifiers absent: none of \['name'\]"):
        write_dp_release(release, table, tmp_path / "dp.csv", identifiers=["name"])
    assert list(tmp_path.iterdir()) == []


def test_bad_identifiers_of_a_dp_release_are_named():
    table = people_with_names()
    with pytest.raises(DataError, match=r"unknown column\(s\) \['nme'\] in 'identifiers'") as caught:
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="ir-mdav", k=20, identifiers=["nme"])
    assert caught.value.parameter == "identifiers"
    with pytest.raises(DataError, match=r"unknown column\(s\) \['FICO'\] in 'keep'") as caught:
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="ir-mdav", k=20, keep=["FICO"])
    assert caught.value.parameter == "keep"
    with pytest.raises(InvalidParameterError, match=r"\['AGI'\] given in 'keep' cannot be both released with noise"):
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="ir-mdav", k=20, keep=["AGI"])
    with pytest.raises(InvalidParameterError, match="now called 'fixed-order-blocks'") as caught:
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="insensitive-mdav", k=200)
    assert caught.value.parameter == "method"
    with pytest.raises(InvalidParameterError, match=r"\['AGI'\] given in 'identifiers' cannot be both") as caught:
        dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1, method="ir-mdav", k=20, identifiers=["AGI"])
    assert caught.value.parameter == "identifiers"


def test_a_tiny_epsilon_writes_a_strict_json_report(tmp_path):
    """Noise of scale Δ/ε = 1e305 overflows the loss's sums of squares: JSON has no Infinity."""
    table = census()
    release = dp_release(table, ["AGI"], bounds=AGI_BOUNDS, epsilon=1e-300, method="record-noise", rng=0)
    published = write_dp_release(release, table, tmp_path / "dp.csv")

    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    report = json.loads(report_path(tmp_path / "dp.csv").read_text(), parse_constant=refuse)
    assert report == published.data
    audit = json.loads(audit_path(tmp_path / "dp.csv").read_text(), parse_constant=refuse)
    assert audit["information_loss"]["sse_sst_percent"] == "inf"
    assert report["parameters"]["per_attribute"]["AGI"]["noise_scale"] == 1e5 / 1e-300


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
    # the gain on the box is the norm's: Laplace in the box's own norm is on par with the staircase
    norm_laplace = table.loc["box", "Laplace in the set's norm E|X|"]
    assert norm_laplace == pytest.approx(table.loc["box", "staircase E|X|"], rel=0.01)


# --- ratio closeness (the route from t-closeness to DP) -------------------------------------------------------------

def test_ratio_closeness_reaches_the_epsilon_it_promises_with_true_confidential_values():
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


def test_a_seeded_release_is_a_function_of_the_data_which_is_why_a_seed_is_for_tests_only():
    """What the warning of a seeded run says, shown: whoever knows the seed computes the release each
    neighbouring table would give and tells them apart with certainty (ε = ∞)."""
    neighbours = [pd.DataFrame({"income": [v, 50.0, 60.0]}) for v in (10.0, 90.0)]

    def release(table, seed):
        return dp_release(table, ["income"], bounds={"income": (0, 100)}, epsilon=4.0, method="record-noise", rng=seed)

    for seed in range(20):
        observed = np.sort(release(neighbours[1], seed).released["income"].to_numpy())
        assert release(neighbours[1], seed).seeded and "anyone who knows the seed can undo it" in release(
            neighbours[1], seed).guarantee
        candidates = [np.array_equal(np.sort(release(t, seed).released["income"].to_numpy()), observed)
                      for t in neighbours]
        assert candidates == [False, True]  # the seed's owner knows which table it was, every time
