"""Row order carries nothing: every release, by every engine and method, is written in a random order.

The input is adult sorted by its QIs (so that a writer keeping input order would write each class's
members side by side, and link rows back by position), with a unique non-QI column ``row`` holding
the input position. From the written file: the Spearman correlation between input and output
positions is below 0.05, and rows of one class follow each other no more often than in a random
order (the expected share of neighbours in the same class is Σ (size/n)²).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from microrelease.core import (
    Criteria,
    load_dataset,
    microaggregate,
    summarize,
    write_microaggregation,
    write_release,
)
from microrelease.core.data.samples import sample, sample_data_folder
from microrelease.core.dp.dp_writing import write_dp_release
from microrelease.core.dp.microdata import PrivacyWarning, dp_release
from microrelease.core.engines import DaskEngine

ADULT = sample("adult")
NODE = (1, 2, 1, 1, 2, 1, 1, 1)


@pytest.fixture(scope="module")
def sorted_adult(tmp_path_factory):
    table = pd.read_csv(ADULT.path, sep=";", dtype=str, keep_default_na=False)
    table = table.sort_values(list(ADULT.qi), kind="stable").reset_index(drop=True)
    table["row"] = np.arange(len(table)).astype(str)
    path = tmp_path_factory.mktemp("order") / "adult_sorted.csv"
    table.to_csv(path, index=False)
    return path, table


@pytest.fixture(scope="module")
def sorted_by_age(sorted_adult):
    """Every third row of adult, as numbers, sorted by age; ``row`` is the input position. 10,054
    rows keep |rho| < 0.05 at 5 sd of rho under a random order (sd 1/sqrt(n-1) = 0.010; an order
    kept from the input gives rho near 1), while MDAV (O(n²/k)) and the report's linkage attack
    (O(5000·n)) cost a ninth and a third of what they cost on the whole table."""
    _, table = sorted_adult
    numeric = table.iloc[::3].assign(age=lambda t: t["age"].astype(float)).sort_values("age", kind="stable")
    return numeric.assign(row=np.arange(len(numeric)).astype(str))


def engine_named(name: str, request):
    """Dask runs on the run's one cluster (``dask_client``), started only when a Dask case runs."""
    return DaskEngine(scheduler=request.getfixturevalue("dask_client")) if name == "dask" else name


def assert_order_carries_nothing(written: pd.DataFrame, classes: list[str]):
    rho = spearmanr(written["row"].astype(int), np.arange(len(written))).statistic
    assert abs(rho) < 0.05, rho
    # one number per class (a row-wise string join costs seconds on 30,000 rows)
    key = written[classes].astype(str).groupby(classes, sort=False, dropna=False).ngroup().to_numpy()
    same_as_next = float((key[1:] == key[:-1]).mean())
    shares = np.bincount(key) / len(key)
    expected = float((shares**2).sum())
    sd = np.sqrt(expected * (1 - expected) / len(key))
    assert same_as_next < expected + 6 * sd + 1e-3, (same_as_next, expected)


@pytest.mark.parametrize("engine", ["pandas", "duckdb", "dask"])
@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_generalization_releases_are_shuffled(sorted_adult, engine, suffix, tmp_path, request):
    path, _ = sorted_adult
    if engine == "pandas":
        data = load_dataset(path, qi=ADULT.qi, hierarchy_dir=ADULT.folder)
    else:
        data = summarize(path, qi=ADULT.qi, hierarchy_dir=ADULT.folder, engine=engine_named(engine, request))
    out = tmp_path / f"release{suffix}"
    write_release(data, NODE, out, criteria=Criteria.of(5))
    assert out.is_file()  # one file, whatever the engine (Dask's parts are joined)
    written = pd.read_parquet(out) if suffix == ".parquet" else pd.read_csv(out, dtype=str, keep_default_na=False)
    assert_order_carries_nothing(written, list(ADULT.qi))


@pytest.mark.parametrize("method", ["mdav-id", "mdav-swap", "ir-swap"])
def test_microaggregated_releases_are_shuffled(sorted_by_age, method, tmp_path):
    numeric = sorted_by_age
    qi, confidential = (["age"], []) if method != "ir-swap" else ([], ["age"])
    result = microaggregate(numeric, qi=qi, confidential=confidential, k=5, method=method)
    out = tmp_path / "micro.csv"
    write_microaggregation(result, out)
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert_order_carries_nothing(written, ["age"])


@pytest.mark.parametrize("method", ["record-noise", "ir-mdav", "fixed-order-blocks"])
def test_dp_releases_are_shuffled(sorted_by_age, method, tmp_path):
    numeric = sorted_by_age
    out = tmp_path / "dp.csv"
    if method == "record-noise":  # columns may be kept with it: the input's position, kept to test the order
        with pytest.warns(PrivacyWarning, match="without protection"):
            release = dp_release(numeric, ["age"], bounds={"age": (0, 100)}, epsilon=1.0, method=method,
                                 keep=["row", "race"])
        write_dp_release(release, numeric, out)
        written = pd.read_csv(out, dtype=str, keep_default_na=False)
        assert_order_carries_nothing(written, ["race"])  # noisy ages have no classes; race groups rows
        return
    # the input is sorted by age, and so are its groups' means: an order kept would show as a rank correlation
    release = dp_release(numeric, ["age"], bounds={"age": (0, 100)}, epsilon=50.0, method=method, k=200)
    write_dp_release(release, numeric, out)
    ages = pd.read_csv(out)["age"].to_numpy()
    assert abs(spearmanr(ages, np.arange(len(ages))).statistic) < 0.05
    assert spearmanr(np.sort(ages), np.arange(len(ages))).statistic > 0.9  # what a kept order would give


def test_sequential_releases_are_shuffled(tmp_path):
    from microrelease.core.sequential.pipeline import anonymize_sequential, write_sequential
    from microrelease.core.sequential.rt_data import load_sequential

    h = sample_data_folder("hospital")
    patients = pd.read_csv(h / "patients.csv", dtype=str).sort_values(["age", "sex", "zip"], kind="stable").head(1200)
    visits = pd.read_csv(h / "visits.csv", dtype=str)
    visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    data = load_sequential(patients, visits, entity_id="patient_id", qi=["age", "sex", "zip"],
                           sequence_key="visit_id", order_by="day", code="code",
                           code_hierarchy=h / "hospital_hierarchy_code.csv", hierarchy_dir=h, identifiers=["name"])
    release = anonymize_sequential(data, 5)
    write_sequential(release, data, tmp_path / "out")
    written = pd.read_csv(tmp_path / "out" / "entities.csv", dtype=str, keep_default_na=False)
    # the input position of each written entity, through the pseudonym (kept in memory, never written)
    position = {str(p): i for i, p in enumerate(release.pseudonym)}
    rows = written["patient_id"].map(position)
    assert rows.notna().all()
    rho = spearmanr(rows.astype(int), np.arange(len(written))).statistic
    assert abs(rho) < 0.15, rho  # 1,200 entities: the sd of rho under a random order is 0.029 (0.15 is 5 sd)
    groups = written[["age", "sex", "zip"]].astype(str).agg("|".join, axis=1).to_numpy()
    assert (groups[1:] == groups[:-1]).mean() < 0.2
    # each entity's events are written together and in their order (the order of codes is data), the
    # entities' blocks in an order of their own
    events = pd.read_csv(tmp_path / "out" / "events.csv", dtype=str, keep_default_na=False)
    ids = events["patient_id"].to_numpy()
    starts = np.r_[True, ids[1:] != ids[:-1]]
    assert starts.sum() == events["patient_id"].nunique()  # one block per entity
    expected = release.events.groupby("patient_id", sort=False)["code"].agg(list)
    assert events.groupby("patient_id", sort=False)["code"].agg(list).to_dict() == expected.to_dict()
    blocks = pd.unique(ids)
    assert abs(spearmanr([position[b] for b in blocks], np.arange(len(blocks))).statistic) < 0.15


@pytest.mark.parametrize("engine", ["duckdb", "dask"])
def test_internal_column_names_never_clash_with_the_input(sorted_adult, engine, tmp_path, monkeypatch, request):
    from microrelease.core.engines import DuckDBEngine

    path, table = sorted_adult
    clashing = tmp_path / "clash.csv"
    table.assign(__microrelease_bucket="x", __microrelease_random="y").to_csv(clashing, index=False)
    if engine == "duckdb":  # force the bucket path on a small file
        monkeypatch.setattr(DuckDBEngine, "shuffle_buckets", lambda self, source: 3)
    data = summarize(clashing, qi=ADULT.qi, hierarchy_dir=ADULT.folder, engine=engine_named(engine, request))
    out = tmp_path / "release.csv"
    write_release(data, NODE, out, criteria=Criteria.of(5))
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert set(written["__microrelease_bucket"]) == {"x"} and set(written["__microrelease_random"]) == {"y"}
    assert_order_carries_nothing(written, list(ADULT.qi))
