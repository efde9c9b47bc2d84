"""A Parquet release's dictionaries list only the values of its written rows (issue 26, item 5).

A categorical column is written with its categories as the dictionary page: with a hierarchy built
from the data, the values of suppressed rows (and values the hierarchy lists that never occur) would
be published there. The table: 401 rows whose ``city`` SECRETVALUE42 is a class of one (suppressed at
k = 2, with its non-QI note SECRETNOTE7); the hierarchy also lists NEVERSEEN99; PAIRED is a class of
two, so most of Dask's partitions (each a row group of its own) hold no row of it. (DuckDB writes its
ENUM labels' entries, limited to the labels of written rows, up to the last one a row group uses:
one row group here.)
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from microrelease.core import Criteria, summarize, write_release
from microrelease.core.engines import ENGINES, DaskEngine

HIDDEN = ("SECRETVALUE42", "NEVERSEEN99", "SECRETNOTE7")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dictionaries")
    rng = np.random.default_rng(7)
    rows = pd.DataFrame({"city": rng.choice(["A", "B", "C"], 398), "sex": rng.choice(["x", "y"], 398),
                         "note": [f"n{i % 5}" for i in range(398)]})
    rare = pd.DataFrame({"city": ["PAIRED", "PAIRED", "SECRETVALUE42"], "sex": ["x", "x", "y"],
                         "note": ["n0", "n1", "SECRETNOTE7"]})
    rows = pd.concat([rows, rare], ignore_index=True).sample(frac=1, random_state=7)
    data = folder / "t.csv"
    rows.to_csv(data, sep=";", index=False)
    (folder / "city.csv").write_text("".join(f"{v};{'S' if v.startswith(('S', 'N')) else 'ABC'};*\n"
                                             for v in ["A", "B", "C", "PAIRED", *HIDDEN[:2]]))
    (folder / "sex.csv").write_text("x;*\ny;*\n")
    return data, {"city": folder / "city.csv", "sex": folder / "sex.csv"}


@pytest.mark.parametrize("name", sorted(ENGINES))
def test_parquet_dictionaries_hold_only_the_written_values(name, table, dask_client, tmp_path):
    data, hierarchies = table
    # Dask: CSV blocks of 1 kB, so the release has several partitions (row groups)
    engine = DaskEngine(scheduler=dask_client, blocksize=1000) if name == "dask" else ENGINES[name]()
    rows = pd.read_csv(data, sep=";", dtype=str, keep_default_na=False) if name == "pandas" else data
    summary = summarize(rows, qi=["city", "sex"], hierarchies=hierarchies, engine=engine, sep=";")
    out = tmp_path / "release.parquet"
    report = write_release(summary, [0, 0], out, criteria=Criteria.of(2)).data
    assert report["output"]["rows"] == 400

    raw = out.read_bytes()
    for value in HIDDEN:
        assert value.encode() not in raw, value
    file = pq.ParquetFile(out, read_dictionary=["city", "sex", "note"])
    if name == "dask":
        assert file.num_row_groups > 1
    for i in range(file.num_row_groups):
        group = file.read_row_group(i)
        for column in group.column_names:
            for chunk in group.column(column).chunks:
                written = set(chunk.dictionary.take(chunk.indices).to_pylist())
                assert set(chunk.dictionary.to_pylist()) == written, (column, i)
    assert "PAIRED" in set(pq.read_table(out).column("city").to_pylist())
    pandas_meta = json.loads(file.schema_arrow.metadata.get(b"pandas", b"{}")) if file.schema_arrow.metadata else {}
    for column in pandas_meta.get("columns", []):  # a count of categories at most, never their values
        said = column.get("metadata") or {}
        assert set(said) <= {"num_categories", "ordered", "encoding"}
        assert said.get("num_categories", 0) <= 4
