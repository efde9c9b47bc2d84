"""Bad input gets a clear error naming the column, value or parameter (hierarchy cases: lattice/test_hierarchies.py)."""

from __future__ import annotations

import pandas as pd
import pytest

from microrelease.core import (
    DataError,
    Hierarchy,
    InvalidParameterError,
    NoSolutionError,
    build_profile,
    generalize,
    load_dataset,
    query,
    read_table,
)
from microrelease.core.validation import parse_max_sup

SEX = Hierarchy("sex", (("M", "*"), ("F", "*")))


def small():
    return load_dataset(pd.DataFrame({"sex": ["M", "F", "M"], "id": ["a", "b", "c"]}), qi=["sex"],
                        hierarchies={"sex": SEX}, identifiers=["id"])


@pytest.mark.parametrize(("k", "exc", "message"), [
    (0, InvalidParameterError, r"'k' parameter must be at least 1\. Got 0"),
    (-3, InvalidParameterError, r"'k' parameter must be at least 1\. Got -3"),
    (4, InvalidParameterError, r"'k' parameter must be at most the number of rows \(3\)\. Got 4"),
    (2.5, TypeError, r"'k' parameter must be an integer\. Got 2\.5"),
    (True, TypeError, r"'k' parameter must be an integer"),
])
def test_bad_k(k, exc, message):
    profile = build_profile(small())
    with pytest.raises(exc, match=message):
        query(profile, k, 0)
    with pytest.raises(exc, match=message):
        generalize(small(), (0,), k)


@pytest.mark.parametrize(("max_sup", "message"), [
    (-1, r"'max_sup' parameter must be at least 0\. Got -1"),
    (4, r"'max_sup' parameter must be at most the number of rows \(3\)"),
    ("-5%", r"percentage in \[0%, 100%\]"),
    ("101%", r"percentage in \[0%, 100%\]"),
    ("lots", r"row count or a percentage"),
])
def test_bad_max_sup(max_sup, message):
    with pytest.raises(InvalidParameterError, match=message):
        query(build_profile(small()), 2, max_sup)


def test_max_sup_percentages_round_down():
    assert parse_max_sup("1%", 30162) == 301
    assert parse_max_sup("0.5%", 1000) == 5
    assert parse_max_sup("100%", 7) == 7
    assert parse_max_sup(" 12 ", 100) == 12


def test_unknown_columns_are_named():
    df = pd.DataFrame({"sex": ["M"], "age": ["3"]})
    with pytest.raises(DataError, match=r"unknown QI column\(s\) \['zip'\].*columns \['sex', 'age'\]"):
        load_dataset(df, qi=["sex", "zip"], hierarchies={"sex": SEX})
    with pytest.raises(DataError, match=r"unknown identifier column\(s\) \['name'\]"):
        load_dataset(df, qi=["sex"], hierarchies={"sex": SEX}, identifiers=["name"])
    with pytest.raises(DataError, match=r"column 'sex' is given twice"):
        load_dataset(df, qi=["sex"], hierarchies={"sex": SEX}, sensitive=["sex"])
    with pytest.raises(DataError, match=r"no hierarchy for QI 'age'"):
        load_dataset(df, qi=["sex", "age"], hierarchies={"sex": SEX})


def test_empty_table(tmp_path):
    with pytest.raises(DataError, match="the table has no rows"):
        load_dataset(pd.DataFrame({"sex": []}), qi=["sex"], hierarchies={"sex": SEX})
    (tmp_path / "header_only.csv").write_text("sex\n")
    with pytest.raises(DataError, match="the table has no rows"):
        load_dataset(tmp_path / "header_only.csv", qi=["sex"], hierarchies={"sex": SEX})
    (tmp_path / "nothing.csv").write_text("")
    with pytest.raises(DataError, match="is empty"):
        read_table(tmp_path / "nothing.csv")


def test_malformed_csv_names_the_line(tmp_path):
    (tmp_path / "bad.csv").write_text("sex,age\nM,3\nF,4,extra\n")
    with pytest.raises(DataError, match=r"bad\.csv: line 3 has 3 field\(s\) where the header has 2"):
        read_table(tmp_path / "bad.csv", sep=",")
    (tmp_path / "dup.csv").write_text("sex,sex\nM,F\n")
    with pytest.raises(DataError, match=r"duplicate column names.*\['sex'\]"):
        read_table(tmp_path / "dup.csv")
    with pytest.raises(DataError, match="data file not found"):
        read_table(tmp_path / "absent.csv")


def test_separator_is_detected(tmp_path):
    (tmp_path / "semi.csv").write_text("sex;age\nM;3\nF;4\n")
    assert list(read_table(tmp_path / "semi.csv").columns) == ["sex", "age"]
    (tmp_path / "tab.csv").write_text("sex\tage\nM\t3\n")
    assert list(read_table(tmp_path / "tab.csv").columns) == ["sex", "age"]


def test_bad_nodes_are_named():
    ds = small()
    with pytest.raises(InvalidParameterError, match=r"node \[2\]: level 2 of 'sex' is outside 0\.\.1"):
        generalize(ds, (2,), 1)
    with pytest.raises(InvalidParameterError, match=r"node \[0, 0\] has 2 levels but there are 1 QIs"):
        generalize(ds, (0, 0), 1)


def test_no_solution_is_explained():
    # a height-0 hierarchy can never merge its values: k = 2 is impossible without suppression
    h = Hierarchy("sex", (("M",), ("F",)))
    ds = load_dataset(pd.DataFrame({"sex": ["M", "F", "M"]}), qi=["sex"], hierarchies={"sex": h})
    answer = query(build_profile(ds), 2, 0)
    assert answer.find_vector().vector is None
    with pytest.raises(NoSolutionError, match=r"no generalization satisfies k=2 with MaxSup=0.*1 suppressed rows"):
        answer.preferred()


def test_unknown_policy_and_weights():
    answer = query(build_profile(small()), 1, 0)
    with pytest.raises(InvalidParameterError, match=r"'policy' parameter must be one of .*Got 'best'"):
        answer.preferred("best")
    with pytest.raises(InvalidParameterError, match=r"weight given for 'age', which is not a QI"):
        answer.preferred("weighted", {"age": 2})
    with pytest.raises(InvalidParameterError, match=r"weight of 'sex' must be a finite number >= 0"):
        answer.preferred("weighted", {"sex": -1})


def test_blank_lines_are_counted_not_silently_dropped(tmp_path):
    (tmp_path / "gaps.csv").write_text("sex,age\nM,3\n\nF,4\n\n")
    ds = load_dataset(tmp_path / "gaps.csv", qi=["sex"], hierarchies={"sex": SEX})
    assert ds.n_rows == 2 and ds.blank_lines_skipped == 2


def test_an_unknown_column_of_a_wide_table_quotes_twenty_names_and_the_count():
    import pandas as pd

    from microrelease.core import load_dataset
    from microrelease.core.exceptions import DataError

    wide = pd.DataFrame({f"c{i}": ["a", "b"] for i in range(5000)})
    with pytest.raises(DataError) as err:
        load_dataset(wide, qi=("nope",), hierarchies={})
    text = str(err.value)
    assert "unknown QI column(s) ['nope']" in text and "'c19', ... (5,000 in all)]" in text and "'c20'" not in text
    assert len(text) < 400
