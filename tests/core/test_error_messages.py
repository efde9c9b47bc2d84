"""Bad input found by the API is named in one line: the file, line, column, value or hierarchy at fault."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from microrelease.core import DataError, Hierarchy, HierarchyError, read_arx, write_release
from microrelease.core.data.dataset import file_checksum
from microrelease.core.engines.summary import summarize
from microrelease.core.micro.microaggregation import microaggregate

A = Hierarchy("a", (("1", "*"), ("2", "*")))


@pytest.mark.parametrize(("text", "message"), [
    ("a,b\n1,x\n2,y\n" + "1" * 3_000_000 + ",z\n", r"bad\.csv: line 4 is longer than the CSV reader's limit of \d+ bytes"),
    ("a,b\n1,x\n2,y\n1,x,extra\n", r"bad\.csv: line 4 has 3 field\(s\) where the header has 2"),
    ("a,b\n1,x\n   \n2,y\n", r"bad\.csv: line 3 is blank but for spaces"),
    ('a,b\n1,x\n2,"y\n', r"bad\.csv: line 3 cannot be read: Value with unterminated quote"),
], ids=["long-line", "ragged", "blank-with-spaces", "open-quote"])
def test_duckdb_names_the_line_and_cause_of_a_bad_csv(tmp_path, text, message):
    (tmp_path / "bad.csv").write_text(text)
    with pytest.raises(DataError, match=message):
        summarize(tmp_path / "bad.csv", qi=["a"], hierarchies={"a": A}, engine="duckdb")


def test_microaggregation_refuses_infinite_values_naming_column_and_rows():
    table = pd.DataFrame({"x": ["1", "2", "3", "4"], "y": ["5", "inf", "-inf", "8"]})
    with pytest.raises(DataError, match=r"QI 'y' has 2 row\(s\) with an infinite value, e\.g\. 'inf'"):
        microaggregate(table, qi=["x", "y"], k=2)


def test_a_hierarchy_field_over_the_csv_limit_names_file_and_line(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("x;*\ny;*\n" + "z" * 200_000 + ";*\n")
    with pytest.raises(DataError, match=r"hierarchy file .*h\.csv of 'b': line 3 cannot be read as CSV"):
        read_arx(path, "b")


def test_file_checksum_names_a_missing_or_unreadable_file(tmp_path):
    with pytest.raises(DataError, match=r"data file not found: .*nope\.csv"):
        file_checksum(tmp_path / "nope.csv")
    with pytest.raises(DataError, match=f"cannot read {tmp_path}"):
        file_checksum(tmp_path)  # a folder


@pytest.mark.parametrize("rows", [
    (("30", "31", "*"), ("31", "30", "*")),  # a cycle: 30 would be released as '31'
    (("a", "x", "y", "*"), ("b", "y", "x", "*")),  # the same one level higher
    (("30", "31", "*"), ("31", "32", "*"), ("32", "32", "*")),  # 31 released as '32', which is also 32
])
def test_a_label_reused_for_another_value_is_refused(rows):
    with pytest.raises(HierarchyError, match=r"must generalize to itself at level \d.* -> "):
        Hierarchy("age", rows)


def test_a_label_may_recur_for_the_same_value():
    h = Hierarchy("sex", (("M", "M", "*"), ("F", "*", "*")))  # padding repeats a value; '*' recurs
    assert h.generalize(["M", "F"], 1) == ["M", "*"]


def test_engines_agree_on_a_float_qi_read_from_parquet(tmp_path):
    distributed = pytest.importorskip("distributed")
    from microrelease.core.engines import DaskEngine

    path = tmp_path / "t.parquet"
    pd.DataFrame({"age": [39.0, 40.5, np.nan] * 4, "sex": ["M", "F"] * 6}).to_parquet(path)
    age = Hierarchy("age", (("39", "3*", "*"), ("40.5", "4*", "*")))
    results = {}
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        for name, engine in [("duckdb", "duckdb"), ("pandas", "pandas"), ("dask", DaskEngine(scheduler=client))]:
            summary = summarize(path, qi=["age"], hierarchies={"age": age}, engine=engine)
            out = tmp_path / f"{name}.csv"
            write_release(summary, (0,), 4, out)
            released = pd.read_csv(out, dtype=str, keep_default_na=False)
            results[name] = (summary.frequency.codes.tolist(), summary.frequency.counts.tolist(),
                             summary.missing_counts, sorted(zip(released["age"], released["sex"], strict=True)))
    assert results["pandas"] == results["duckdb"] == results["dask"]
    assert sorted(set(results["duckdb"][3])) == [("", "F"), ("", "M"), ("39", "F"), ("39", "M"),
                                                 ("40.5", "F"), ("40.5", "M")]
