"""Dask on a wide table (issue 26, item 1): its frames hold text as numpy objects, and its release of
2,000 columns is DuckDB's, cell for cell.

Under Dask's default, pyarrow strings, every empty copy of a frame's structure (Dask makes dozens
while building a release's graphs) cost per column squared: 215 s for 300 rows x 10,000 columns
(``benchmarks/wide_tables.py``). The table: the toy sample's QIs, 60 rows drawn with replacement,
then 2,000 columns of integers 0..99 as text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microrelease.core import Criteria, summarize, write_release
from microrelease.core.data.samples import sample_data_folder
from microrelease.core.engines import DaskEngine, DuckDBEngine

TOY = sample_data_folder("toy")
QI = ["age", "gender", "zipcode"]


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    rng = np.random.default_rng(1)
    toy = pd.read_csv(TOY / "test.csv", sep=";", dtype=str)
    base = toy.sample(60, replace=True, random_state=1).reset_index(drop=True)
    extra = pd.DataFrame(rng.integers(0, 100, size=(60, 2000)).astype(str), columns=[f"c{i}" for i in range(2000)])
    path = tmp_path_factory.mktemp("wide") / "wide.csv"
    pd.concat([base, extra], axis=1).to_csv(path, sep=";", index=False)
    return path


def released(engine, path, out):
    summary = summarize(path, qi=QI, hierarchy_dir=TOY, engine=engine, sep=";")
    report = write_release(summary, [0, 1, 2], out, criteria=Criteria.of(2)).data
    table = pd.read_csv(out, dtype=str, keep_default_na=False)
    return report, table.sort_values(list(table.columns)).reset_index(drop=True)


def test_a_wide_dask_release_holds_object_text_and_is_duckdbs(wide, dask_client, tmp_path):
    engine = DaskEngine(scheduler=dask_client)
    read, kinds = engine._read, []

    def spied(source, columns=None):  # the graphs' structure, as built in this process
        frame = read(source, columns)
        kinds.extend(map(str, frame._meta.dtypes))
        return frame

    engine._read = spied
    dask_report, dask_table = released(engine, wide, tmp_path / "dask.csv")
    duck_report, duck_table = released(DuckDBEngine(), wide, tmp_path / "duckdb.csv")
    assert kinds and set(kinds) == {"object"}
    same = ("rows", "columns", "format")  # the files differ by name and row order
    assert [dask_report["output"][k] for k in same] == [duck_report["output"][k] for k in same]
    assert dask_report["counts"] == duck_report["counts"]
    assert dask_report["output"]["files"][0]["bytes"] == duck_report["output"]["files"][0]["bytes"]
    assert dask_table.shape == (dask_report["output"]["rows"], 2003)
    pd.testing.assert_frame_equal(dask_table, duck_table)
