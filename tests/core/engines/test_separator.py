"""The separator is detected from the first 64,000 characters, which cut a wide table's rows mid-line:
the cut line is not evidence (it once made a 1,000-column ``;`` file read as one column)."""

from __future__ import annotations

import numpy as np
import pytest

from microrelease.core.data.reading import SEPARATORS, detect_separator, read_table, separator_sample


def table_text(columns: int, rows: int, sep: str, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    header = sep.join(f"c{i}" for i in range(columns))
    body = [sep.join(map(str, rng.integers(0, 1000, columns))) for _ in range(rows)]
    return "\n".join([header, *body]) + "\n"


@pytest.mark.parametrize("sep", SEPARATORS)
@pytest.mark.parametrize("columns", [2, 7, 300, 1_000, 5_000, 12_000])
def test_the_separator_of_a_table_of_any_width_is_found_in_its_first_64000_characters(sep, columns):
    text = table_text(columns, 40, sep)
    assert detect_separator(text[:64_000]) == sep


def test_a_short_file_without_a_final_line_end_keeps_its_last_line():
    assert detect_separator("a;b") == ";"
    assert detect_separator("a|b\n1|2") == "|"


def test_a_wide_file_is_read_with_every_column_without_naming_its_separator(tmp_path):
    path = tmp_path / "wide.csv"
    path.write_text(table_text(1_000, 300, ";"))
    frame = read_table(path)
    assert frame.shape == (300, 1_000) and frame.columns[-1] == "c999"


def test_a_quoted_line_end_is_inside_its_value_not_between_records(tmp_path):
    text = 'a;b\n"x\ny";2\n3;4\n5;6\n'
    assert detect_separator(text) == ";"
    path = tmp_path / "quoted.csv"
    path.write_text(text)
    assert read_table(path)["a"].tolist() == ["x\ny", "3", "5"]


@pytest.mark.parametrize("sep", SEPARATORS)
def test_a_header_longer_than_the_sample_is_read_whole_before_guessing(tmp_path, sep):
    names = [f'"income (USD, {i:05d})"' for i in range(4_000)]  # 96,000 characters, commas inside quotes
    header = sep.join(names)
    assert len(header) > 64_000
    text = header + "\n" + sep.join(["1"] * 4_000) + "\n"
    path = tmp_path / "long_header.csv"
    path.write_text(text)
    with open(path) as fh:
        assert detect_separator(separator_sample(fh)) == sep
    assert detect_separator(separator_sample(text)) == sep
    assert read_table(path).shape == (1, 4_000)
