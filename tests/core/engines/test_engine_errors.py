"""Engine failures are named, and a failed release leaves nothing under the output's name."""

from __future__ import annotations

import socket

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from microrelease.core import (
    Cancelled,
    Criteria,
    DataError,
    InvalidParameterError,
    VerificationError,
    write_release,
)
from microrelease.core.data.reading import as_text
from microrelease.core.data.samples import sample
from microrelease.core.engines import DaskEngine, DuckDBEngine
from microrelease.core.engines.summary import summarize
from microrelease.core.exceptions import EngineError

ADULT = sample("adult")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def adult_frame() -> pd.DataFrame:
    return pd.read_csv(ADULT.path, sep=";", dtype=str, keep_default_na=False)


def leftovers(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if ".partial-" in p.name)


def test_an_unreachable_scheduler_is_named(tmp_path):
    address = f"tcp://127.0.0.1:{free_port()}"
    adult_frame().to_parquet(tmp_path / "a.parquet")
    with pytest.raises(EngineError, match=f"cannot reach the Dask scheduler at {address}"):
        summarize(tmp_path / "a.parquet", qi=ADULT.qi, hierarchy_dir=ADULT.folder,
                  engine=DaskEngine(scheduler=address, timeout=1))


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_unreadable_files_are_named(tmp_path, engine):
    with pytest.raises(DataError, match="data file not found: .*nowhere.parquet"):
        summarize(tmp_path / "nowhere.parquet", qi=["sex"], engine=engine)
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"this is not parquet at all")
    with pytest.raises(DataError, match="junk.parquet is not a readable Parquet file"):
        summarize(junk, qi=["sex"], engine=engine)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("sex,age\nMale,39\nFemale,50,extra,cells\n")
    with pytest.raises(DataError, match="ragged.csv"):
        summarize(ragged, qi=["sex", "age"], hierarchy_dir=ADULT.folder, engine=engine)


@pytest.mark.parametrize("engine", ["duckdb", "dask"])
@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_a_column_missing_from_one_partition_is_named_with_its_file(tmp_path, fmt, engine, request):
    if engine == "dask":
        engine = DaskEngine(scheduler=request.getfixturevalue("dask_client"))
    frame = adult_frame()
    folder = tmp_path / "parts"
    folder.mkdir()
    halves = [frame.iloc[:15000], frame.iloc[15000:].drop(columns=["race"])]
    for i, half in enumerate(halves):
        path = folder / f"part-{i}.{fmt}"
        half.to_parquet(path) if fmt == "parquet" else half.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"part-1\.\w+: its columns differ .* missing \['race'\]"):
        summarize(folder, qi=ADULT.qi, hierarchy_dir=ADULT.folder, engine=engine)


def test_qi_columns_of_other_parquet_types_are_refused_by_name(tmp_path):
    pd.DataFrame({"sex": ["Male", "Female"], "seen": pd.to_datetime(["2020-01-01", "2021-01-01"])}).to_parquet(
        tmp_path / "t.parquet")
    with pytest.raises(DataError, match="column 'seen' has type timestamp"):
        summarize(tmp_path / "t.parquet", qi=["seen"], hierarchies={}, engine="duckdb")


def test_a_bad_memory_limit_names_the_parameter():
    with pytest.raises(InvalidParameterError, match="'memory_limit' parameter"):
        DuckDBEngine(memory_limit="lots")


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_input_changed_after_profiling_leaves_no_output(tmp_path, engine):
    path = tmp_path / "adult.parquet"
    frame = adult_frame()
    frame.to_parquet(path)
    summary = summarize(path, qi=ADULT.qi, hierarchy_dir=ADULT.folder, engine=engine)
    frame.assign(age=frame["age"].where(frame.index > 10, "999")).to_parquet(path)
    out = tmp_path / "release.csv"
    # DuckDB's join finds no level for '999' and the re-check sees rows missing; pandas names the value.
    with pytest.raises((VerificationError, DataError), match="rows read back, .* expected|'999'"):
        write_release(summary, (1, 2, 1, 1, 2, 1, 1, 1), out, criteria=Criteria.of(5))
    assert not out.exists() and leftovers(tmp_path) == []


def test_cancel_stops_duckdb_and_leaves_no_output(tmp_path):
    from scale_data import replicate_adult

    big = replicate_adult(tmp_path / "big.csv", 40, padding=40)
    summary = summarize(big, qi=ADULT.qi, hierarchy_dir=ADULT.folder, engine="duckdb", checksum=False)
    calls = []

    def stop_on_second_poll():
        calls.append(1)
        return len(calls) > 1

    out = tmp_path / "release.parquet"
    with pytest.raises(Cancelled):
        write_release(summary, (0, 4, 0, 1, 3, 2, 0, 1), out, criteria=Criteria.of(5), should_stop=stop_on_second_poll)
    assert not out.exists() and leftovers(tmp_path) == []


def test_duckdb_reports_progress_up_to_one(tmp_path):
    seen = []
    summarize(ADULT.path, qi=ADULT.qi, hierarchy_dir=ADULT.folder, engine="duckdb", progress=seen.append)
    assert seen and seen[-1] == 1.0 and all(0.0 <= f <= 1.0 for f in seen)


@pytest.fixture(scope="module")
def duck():
    """One DuckDB connection for every example (a connection costs more than the query)."""
    import duckdb

    con = duckdb.connect()
    yield con
    con.close()


@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True, width=64),
                          st.integers(-(2**60), 2**60).map(float)), min_size=1, max_size=30))
def test_duckdb_writes_a_float_as_text_exactly_as_pandas_does(duck, values):
    from microrelease.core.engines.duckdb_engine import _text

    column = pd.Series(values, dtype="float64")
    expected = as_text(column).tolist()
    duck.register("t", pd.DataFrame({"x": column.to_numpy()}))
    got = [r[0] for r in duck.execute(f"SELECT {_text('x', 'DOUBLE')} FROM t").fetchall()]
    # pandas' NaN and None are both missing; DuckDB reads a NaN from pandas as NULL or NaN
    assert got == expected, list(zip(values, got, expected, strict=True))


def test_integers_with_missing_values_are_text_without_decimals():
    column = pd.Series([39, None, 7], dtype="Int64")
    assert as_text(column).tolist() == ["39", "", "7"]
    assert as_text(pd.Series([39.0, np.nan, 0.5])).tolist() == ["39", "", "0.5"]


def test_duckdb_writes_a_four_byte_float_as_text_exactly_as_pandas_does(duck):
    from microrelease.core.engines.duckdb_engine import _text

    column = pd.Series(np.array([0.1, 39.0, np.nan, -2.5e20, 1.5], dtype=np.float32))
    duck.register("t", pd.DataFrame({"x": column}))
    got = [r[0] for r in duck.execute(f"SELECT {_text('x', 'FLOAT')} FROM t").fetchall()]
    assert got == as_text(column).tolist()


@pytest.mark.parametrize("engine", ["pandas", "duckdb", "dask"])
def test_an_unclosed_quote_is_one_data_error_naming_the_file(tmp_path, engine, request):
    # Dask reads the head of the file when it builds its graph, outside the wait that names errors
    if engine == "dask":
        engine = DaskEngine(scheduler=request.getfixturevalue("dask_client"))
    bad = tmp_path / "unclosed.csv"
    bad.write_text('sex,age\nMale,39\n"Female,50\nMale,20\n')
    with pytest.raises(DataError, match="unclosed.csv") as caught:
        summarize(bad, qi=["sex", "age"], hierarchy_dir=ADULT.folder, engine=engine)
    assert "\n" not in str(caught.value)
