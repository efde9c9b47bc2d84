"""The three engines give the same frequency set, k-minimal set, preferred node and release.

The reference is the in-memory Dataset path (its own np.unique frequency set and row-level
generalization); pandas, DuckDB and Dask must agree with it on adult and on a 1M-row resample.
Dask runs on the run's one local cluster (``dask_client`` in conftest.py); one test starts the
engine's own cluster, while the default ports are held.
"""

from __future__ import annotations

import socket

import numpy as np
import pandas as pd
import pytest
from scale_data import resample_adult

from microrelease.core import Criteria, build_profile, load_dataset, query, write_release
from microrelease.core.data.samples import sample
from microrelease.core.engines import ENGINES, DaskEngine, DuckDBEngine
from microrelease.core.engines.summary import summarize

ADULT = sample("adult")
ENGINE_NAMES = sorted(ENGINES)


def engine_for(name, dask_client):
    return DaskEngine(scheduler=dask_client) if name == "dask" else ENGINES[name]()


def data_for(name, path):
    """The pandas engine takes a DataFrame already in memory; the others read the file."""
    if name != "pandas":
        return path
    if str(path).endswith(".parquet"):
        return pd.read_parquet(path)
    return pd.read_csv(path, sep=";", dtype=str, keep_default_na=False)


def answer_figures(summary_or_dataset, k, max_sup):
    answer = query(build_profile(summary_or_dataset), k, max_sup)
    return ([n.vector for n in answer.k_minimal_nodes()], answer.preferred("min-relative").vector,
            answer.preferred("min-suppression").vector)


@pytest.fixture(scope="module")
def adult_reference():
    ds = load_dataset(ADULT.path, qi=ADULT.qi, hierarchy_dir=ADULT.folder)
    return ds, answer_figures(ds, 5, "1%")


@pytest.mark.parametrize("name", ENGINE_NAMES)
def test_engines_agree_with_the_in_memory_path_on_adult(name, dask_client, adult_reference, tmp_path):
    ds, (kmin, preferred, min_sup) = adult_reference
    summary = summarize(data_for(name, ADULT.path), qi=ADULT.qi, hierarchy_dir=ADULT.folder,
                        engine=engine_for(name, dask_client))
    assert summary.engine.name == name and summary.n_rows == ds.n_rows == 30162
    np.testing.assert_array_equal(summary.frequency.codes, ds.frequency.codes)
    np.testing.assert_array_equal(summary.frequency.counts, ds.frequency.counts)
    assert answer_figures(summary, 5, "1%") == (kmin, preferred, min_sup)

    expected = write_release(ds, preferred, tmp_path / "reference.csv", criteria=Criteria.of(5)).data
    report = write_release(summary, preferred, tmp_path / f"{name}.csv", criteria=Criteria.of(5)).data
    assert report["output"]["rows"] == expected["output"]["rows"]
    assert report["counts"] == expected["counts"]
    assert report["metrics"] == expected["metrics"]
    ours = pd.read_csv(tmp_path / f"{name}.csv", dtype=str, keep_default_na=False)
    theirs = pd.read_csv(tmp_path / "reference.csv", dtype=str, keep_default_na=False)
    key = list(theirs.columns)
    pd.testing.assert_frame_equal(ours.sort_values(key).reset_index(drop=True),
                                  theirs.sort_values(key).reset_index(drop=True))


@pytest.fixture(scope="module")
def million(tmp_path_factory):
    return resample_adult(tmp_path_factory.mktemp("scale") / "adult_1m.parquet", 1_000_000)


@pytest.mark.slow  # at scale: CI runs it in its second step (pytest -m slow)
def test_engines_agree_on_a_million_rows(million, dask_client, tmp_path):
    # Independent reference: pandas' own value_counts over the rows, encoded by hand.
    rows = pd.read_parquet(million)
    results = {}
    for name in ENGINE_NAMES:
        summary = summarize(rows if name == "pandas" else million, qi=ADULT.qi, hierarchy_dir=ADULT.folder,
                            engine=engine_for(name, dask_client), checksum=False)
        figures = answer_figures(summary, 10, "0.5%")
        out = tmp_path / f"{name}.parquet"
        report = write_release(summary, figures[1], out, criteria=Criteria.of(10)).data
        results[name] = (summary.frequency.n_distinct, summary.n_rows, figures, report["output"]["rows"])
    assert results["pandas"] == results["duckdb"] == results["dask"]
    n_distinct, n_rows, _, released = results["duckdb"]
    assert n_rows == 1_000_000
    assert n_distinct == len(rows.value_counts(list(ADULT.qi)))
    back = pd.read_parquet(tmp_path / "duckdb.parquet")
    assert len(back) == released and back.groupby(list(ADULT.qi)).size().min() >= 10


def test_cli_engines_print_the_same_search(capsys):
    import json

    from microrelease.app.cli import main

    outputs = []
    for name in ("pandas", "duckdb"):
        assert main(["search", "--sample", "adult", "--k", "5", "--max-sup", "1%", "--engine", name, "--json"]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result.pop("engine") == name
        outputs.append(result)
    assert outputs[0] == outputs[1]


@pytest.mark.slow  # at scale: CI runs it in its second step (pytest -m slow)
def test_duckdb_profiles_and_releases_a_csv_larger_than_its_memory_limit(tmp_path):
    from scale_data import replicate_adult

    # Few copies of long rows: the CSV's bytes set the memory pressure, while the release's cost
    # grows with its rows (every shuffle bucket rescans the staged rows).
    copies = 25
    big = replicate_adult(tmp_path / "adult_x25.csv", copies, padding=400)
    assert big.stat().st_size > 5 * 64 * 2**20  # over five times the limit set below
    engine = DuckDBEngine(memory_limit="64MB", spill_dir=tmp_path, threads=2)
    summary = summarize(big, qi=ADULT.qi, hierarchy_dir=ADULT.folder, identifiers=["person_id"], engine=engine)
    ds = load_dataset(ADULT.path, qi=ADULT.qi, hierarchy_dir=ADULT.folder)
    # Every class is `copies` times larger, so k*copies on the big file is k on adult.
    np.testing.assert_array_equal(summary.frequency.counts, ds.frequency.counts * copies)
    kmin, preferred, _ = answer_figures(ds, 5, 300)
    assert answer_figures(summary, 5 * copies, 300 * copies)[:2] == (kmin, preferred)
    out = tmp_path / "release.csv"
    report = write_release(summary, preferred, out, criteria=Criteria.of(5 * copies)).data
    reference = write_release(ds, preferred, tmp_path / "ref.csv", criteria=Criteria.of(5)).data
    assert report["output"]["rows"] == reference["output"]["rows"] * copies
    assert "person_id" not in report["output"]["columns"] and report["output"]["columns"][-1] == "note"
    assert f"{5 * copies}-anonymity" in [c["check"] for c in report["verification"]]
    assert pd.read_csv(out, usecols=list(ADULT.qi), dtype=str).groupby(list(ADULT.qi)).size().min() >= 5 * copies
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def test_the_default_ports_are_taken_during_the_run(default_ports_taken):
    for port in default_ports_taken:
        with socket.socket() as s, pytest.raises(OSError):
            s.bind(("127.0.0.1", port))


def test_the_engines_own_cluster_takes_no_default_port(default_ports_taken, adult_reference):
    # With 8786, 8787 and 5006 held, a cluster started on a fixed port fails to start (RuntimeError).
    ds, _ = adult_reference
    engine = DaskEngine()
    try:
        summary = summarize(ADULT.path, qi=ADULT.qi, hierarchy_dir=ADULT.folder, engine=engine)
        np.testing.assert_array_equal(summary.frequency.counts, ds.frequency.counts)
    finally:
        engine.close()


def test_duckdb_counts_formula_cells_of_a_wide_table_as_the_pandas_oracle(tmp_path):
    """Columns counted in batches of one scan each (a query per column, UNION ALL'ed, planned 10,000
    subqueries: killed at 24 GB): the counts are the in-memory oracle's across the batch boundaries."""
    from microrelease.core.engines.duckdb_engine import FORMULA_BATCH
    from microrelease.core.engines.source import Source
    from microrelease.core.release.cells import formula_cells

    n_cols = 2 * FORMULA_BATCH + 7
    frame = pd.DataFrame({f"c{j}": [str(i * j % 97) for i in range(40)] for j in range(n_cols)})
    for j, cell in ((0, "=1+1"), (FORMULA_BATCH - 1, "@SUM(A1)"), (FORMULA_BATCH, "'=2"), (2 * FORMULA_BATCH, "+A1"),
                    (n_cols - 1, "-5")):  # "-5" is a number, not a formula
        frame.loc[j % 40, f"c{j}"] = cell
    path = tmp_path / "wide.csv"
    frame.to_csv(path, sep=";", index=False)
    found = DuckDBEngine().formula_cells(Source.of(path, sep=";"), list(frame.columns))
    expected = formula_cells(pd.read_csv(path, sep=";", dtype=str, keep_default_na=False))
    assert found == expected and set(found) == {"c0", f"c{FORMULA_BATCH - 1}", f"c{FORMULA_BATCH}", f"c{2 * FORMULA_BATCH}"}
