"""One reading rule for every engine: a malformed CSV is refused by pandas, DuckDB and Dask with the
same one line (exit status 2 on the command line), naming the file and the line, and nothing is written."""

from __future__ import annotations

import pandas as pd
import pytest
from malformed_csv import HEADER, MALFORMED, ROW  # shared with the dashboard upload test

from microrelease.app.cli import main
from microrelease.core import DataError
from microrelease.core.data.reading import read_table, validate_csv
from microrelease.core.engines import Source
from microrelease.core.engines.summary import summarize


@pytest.fixture(scope="module")
def hierarchies(tmp_path_factory):
    """Hierarchies of the QIs age and gender (the files only need to reach the reading)."""
    folder = tmp_path_factory.mktemp("h")
    (folder / "age.csv").write_text("34;*\n45;*\n")
    (folder / "gender.csv").write_text("male;*\nfemale;*\n")
    return folder


def engine_flags(engine: str, request) -> list[str]:
    if engine == "dask":  # the session's cluster: no cluster of its own per run
        return ["--engine", "dask", "--scheduler", request.getfixturevalue("dask_client").scheduler.address]
    return ["--engine", engine]


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_every_engine_refuses_a_malformed_csv_with_the_same_line(tmp_path, capsys, hierarchies, name, request):
    data, words = MALFORMED[name]
    path = tmp_path / f"{name}.csv"
    path.write_bytes(data)
    lines = {}
    for engine in ("pandas", "duckdb", "dask"):
        out = tmp_path / f"release-{engine}.csv"
        code = main(["release", str(path), "--qi", "age,gender", "--hierarchy-dir", str(hierarchies), "--k", "2",
                     "-o", str(out), "--quiet", *engine_flags(engine, request)])
        err = capsys.readouterr().err
        assert code == 2, (engine, err)
        assert err.count("\n") == 1 and "Traceback" not in err, (engine, err)
        assert sorted(p.name for p in tmp_path.iterdir()) == [path.name], engine  # nothing written
        lines[engine] = err
    assert len(set(lines.values())) == 1, lines
    assert lines["pandas"] == f"microrelease: error: {path}: {words}\n"


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_the_api_and_read_table_raise_the_same_error(tmp_path, name):
    data, words = MALFORMED[name]
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    messages = set()
    for read in (lambda: read_table(path, sep=","), lambda: validate_csv(path, ","),
                 lambda: Source.of(path, sep=",").columns(),
                 lambda: summarize(path, qi=["age"], hierarchies={}, engine="duckdb")):
        with pytest.raises(DataError) as caught:
            read()
        messages.add(str(caught.value))
    assert messages == {f"{path}: {words}"}


def test_well_formed_files_pass_and_blank_lines_are_counted(tmp_path):
    path = tmp_path / "ok.csv"
    # quotes (a separator and a line end inside one), CRLF line ends, a BOM, blank lines, no final newline
    path.write_bytes(b'\xef\xbb\xbfa,b\r\n"1,5","x\ny"\r\n\r\n2,z\r\n\r\n3,"w"')
    shape = validate_csv(path, ",")
    assert shape.columns == ("a", "b") and shape.rows == 3 and shape.blank_lines == 2
    table = read_table(path, sep=",")
    assert table["a"].tolist() == ["1,5", "2", "3"] and table.attrs["blank_lines_skipped"] == 2


def test_a_line_longer_than_a_block_is_read_whole(tmp_path, monkeypatch):
    from microrelease.core.data import reading

    monkeypatch.setattr(reading, "BLOCK", 16)
    path = tmp_path / "long.csv"
    path.write_bytes(b"a,b\n" + b"x" * 100 + b",y\n1,2\n" + b"3\n")
    with pytest.raises(DataError, match=r"long\.csv: line 4 has 1 field\(s\) where the header has 2"):
        validate_csv(path, ",")


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_parquet_column_names_pass_the_same_rule(tmp_path, engine):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"age": ["34"], "": ["x"]}), path)
    with pytest.raises(DataError, match=r"t\.parquet: the schema has an empty name in column 2"):
        summarize(path, qi=["age"], hierarchies={}, engine=engine)
    pq.write_table(pa.Table.from_arrays([pa.array(["34"]), pa.array(["x"])], names=["age", "age"]), path)
    with pytest.raises(DataError, match=r"t\.parquet: the schema has duplicate column names \['age'\]"):
        summarize(path, qi=["age"], hierarchies={}, engine=engine)
    pd.DataFrame({"age": ["34", "45"]}).to_parquet(path)  # a well-formed one is still read
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "age.csv").write_text("34;*\n45;*\n")
    assert summarize(path, qi=["age"], hierarchy_dir=folder, engine=engine).n_rows == 2


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_every_engine_counts_the_blank_lines_it_skips(tmp_path, hierarchies, engine):
    path = tmp_path / "gaps.csv"
    path.write_bytes(HEADER + ROW + b"\n" + ROW + b"\n")
    summary = summarize(path, qi=["age", "gender"], hierarchy_dir=hierarchies, engine=engine)
    assert summary.n_rows == 2 and summary.blank_lines_skipped == 2


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
def test_the_fast_count_agrees_with_the_csv_module_on_quoted_values(tmp_path, monkeypatch, block):
    import csv
    import io
    import random

    from microrelease.core.data import reading

    monkeypatch.setattr(reading, "BLOCK", block)  # records across block boundaries
    draw = random.Random(block)
    values = ["a", "", "b,c", 'say "hi"', "two\nlines", '"', '""', "x" * 30, "é", " "]
    rows = [[draw.choice(values) for _ in range(3)] for _ in range(300)]
    text = io.StringIO(newline="")
    csv.writer(text, lineterminator="\n").writerows([["p", "q", "r"], *rows])
    path = tmp_path / "q.csv"
    path.write_text(text.getvalue(), encoding="utf-8", newline="")
    shape = validate_csv(path, ",")
    assert shape.columns == ("p", "q", "r") and shape.rows == len(rows)
    assert read_table(path, sep=",").values.tolist() == rows
    short = text.getvalue() + "1,2\n"  # the physical line of the short row, after the quoted line ends
    path.write_text(short, encoding="utf-8", newline="")
    line = short.count("\n")
    with pytest.raises(DataError, match=rf"q\.csv: line {line} has 2 field\(s\) where the header has 3"):
        validate_csv(path, ",")


def test_a_literal_quote_inside_a_value_passes_and_text_after_a_closing_quote_is_refused(tmp_path):
    path = tmp_path / "q.csv"
    path.write_bytes(b'a,b\nab"c,d\n1,2\n')  # every engine reads ab"c as it is
    assert validate_csv(path, ",").rows == 2
    path.write_bytes(b'a,b\n1,2\n"ab"c,d\n')
    with pytest.raises(DataError, match=r"q\.csv: line 3 cannot be read as CSV: ',' expected after '\"'"):
        validate_csv(path, ",")


def test_the_csv_module_takes_over_mid_file_with_the_right_line_numbers(tmp_path, monkeypatch):
    from microrelease.core.data import reading

    monkeypatch.setattr(reading, "BLOCK", 64)
    monkeypatch.setattr(reading, "RECORD_LIMIT", 256)  # an open quote: the csv module streams from its block
    path = tmp_path / "q.csv"
    good = [b"a,b\n"] + [b"1,2\n"] * 40
    path.write_bytes(b"".join([*good, b'x"y,3\n', *[b"1,2\n"] * 40, b"4\n"]))  # a literal quote on line 42
    with pytest.raises(DataError, match=r"q\.csv: line 83 has 1 field\(s\) where the header has 2"):
        validate_csv(path, ",")
    path.write_bytes(b"".join([*good, b'"open,3\n', *[b"1,2\n"] * 200]))
    with pytest.raises(DataError, match=r"q\.csv: line 42 has a quoted value that is never closed"):
        validate_csv(path, ",")


@pytest.mark.parametrize("quote", [b"", b'"q",'])
def test_a_line_of_spaces_is_refused_in_a_one_column_file_too(tmp_path, quote):
    path = tmp_path / "one.csv"
    # line 2 is blank (skipped) or a quoted value; pandas would skip line 4, DuckDB read it
    path.write_bytes(b"a\n" + quote.rstrip(b",") + b"\nx\n  \ny\n")
    with pytest.raises(DataError, match=r"one\.csv: line 4 is blank but for spaces, where the header has 1 fields"):
        read_table(path, sep=",")


def test_a_dataframe_given_to_load_dataset_passes_the_same_names_rule():
    from microrelease.core import load_dataset, load_sample

    sample = load_sample("samarati")
    qi = list(sample.schema.quasi_identifiers)
    hierarchies = dict(zip(qi, sample.hierarchies, strict=True))
    with pytest.raises(DataError, match=r"<DataFrame>: the frame has an empty name in column 3"):
        load_dataset(sample.table.assign(**{" ": 1}), qi=qi, hierarchies=hierarchies)
    doubled = pd.concat([sample.table, sample.table[["ZIP"]]], axis=1)
    with pytest.raises(DataError, match=r"<DataFrame>: the frame has duplicate column names \['ZIP'\]"):
        load_dataset(doubled, qi=qi, hierarchies=hierarchies)
    assert load_dataset(sample.table, qi=qi, hierarchies=hierarchies).table.shape == sample.table.shape
