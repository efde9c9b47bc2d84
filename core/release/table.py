"""The one release path for a table held in memory (microaggregation, DP microdata): one CSV file."""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.exceptions import OutputError
from microrelease.core.release.cells import (
    escape_formulas,
    formula_cells,
    refuse_formula_headers,
    shuffled,
    with_formula_verification,
)
from microrelease.core.release.publishing import Published, Verification, publish
from microrelease.core.release.target import file_target

# (table read back, the input's rows as the file should hold them: formula cells escaped if asked)
# -> the method's own checks on the written file
TableVerifications = Callable[[pd.DataFrame, pd.DataFrame], Sequence[Verification]]


def publish_table(released: pd.DataFrame, out: str | Path, verifications: TableVerifications, body: Mapping, *, sep: str = ",",
                  escape: bool = False, force: bool = False, source: str = "<DataFrame>",
                  protected: Sequence[str | Path] = (), audit: Mapping | None = None) -> Published:
    """Write ``released`` as CSV in a random row order (formula cells escaped on request), read it back,
    run ``checks`` and the formula-cell count on it, and put it in place with its report. ``checks``
    get the table read back and ``released`` as written (escaped if asked), in its original order;
    ``audit``: the data steward's figures, written apart (see ``publishing``)."""
    if Path(out).suffix.lower() in (".parquet", ".pq"):
        raise OutputError(f"{out}: this release is written as CSV; give a .csv name (nothing was written)")
    target = file_target(out, protected=[*([source] if source != "<DataFrame>" else []), *protected], force=force)
    if escape:
        refuse_formula_headers(released.columns)
        released = escape_formulas(released)
    table = shuffled(released)
    name = target.names[0]

    def write(paths):
        write_csv(table, paths[name], sep)

    def verify(paths):
        back = pd.read_csv(paths[name], sep=sep, dtype=str, keep_default_na=False)
        return with_formula_verification(list(verifications(back, released)), formula_cells(back), escape, back.columns)

    return publish(target, write, verify, body, audit=audit)


def write_csv(table: pd.DataFrame, path: Path, sep: str = ",") -> None:
    """CSV as pandas writes it, but a cell holding a carriage return is quoted too (Python's csv
    quotes what holds a character of the line terminator, so CR LF lines are used then).

    A table of text only (what a release of a CSV input is) is written by Python's csv module, as
    pandas writes it (its writer is that module's; missing values empty) at a fifth of pandas' cost
    per cell; other tables by pandas, which formats their numbers and dates."""
    text = [c for c in table.columns if pd.api.types.is_object_dtype(table[c]) or pd.api.types.is_string_dtype(table[c])]
    cells = table[text].to_numpy(dtype=object, copy=True)  # a view of the frame may be read-only
    terminator = "\r\n" if _holds_cr(cells).astype(bool).any() else "\n"
    if len(text) < len(table.columns):
        table.to_csv(path, index=False, sep=sep, lineterminator=terminator)
        return
    cells[pd.isna(cells)] = ""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f, delimiter=sep, lineterminator=terminator, quoting=csv.QUOTE_MINIMAL)
        writer.writerow([str(c) for c in table.columns])
        writer.writerows(cells.tolist())


_holds_cr = np.frompyfunc(lambda v: isinstance(v, str) and "\r" in v, 1, 1)


def shape_verifications(back: pd.DataFrame, expected: pd.DataFrame, identifiers: Sequence[str]) -> list[Verification]:
    """What every in-memory release checks first on its file: rows, columns, no identifier column."""
    return [Verification("rows", len(back) == len(expected), f"{len(back)} rows read back, {len(expected)} expected"),
            Verification("columns", list(back.columns) == list(expected.columns), f"{len(back.columns)} columns"),
            Verification("identifiers absent", not set(back.columns) & set(identifiers), f"none of {list(identifiers)}")]


def untouched_verification(back: pd.DataFrame, original: pd.DataFrame, changed: Sequence[str]) -> Verification:
    """The columns a method does not change hold the input's rows (in another order)."""
    untouched = [c for c in back.columns if c not in set(changed)]
    return Verification("other columns unchanged", same_rows(back, original, untouched),
                 f"{len(untouched)} columns hold the input's rows (in another order)")


def input_name(source: str) -> str:
    """A report names its input by file name only (it may travel with the release)."""
    return Path(source).name if source != "<DataFrame>" else source


def same_rows(back: pd.DataFrame, original: pd.DataFrame, columns: Sequence[str]) -> bool:
    """Do ``columns`` of the file read back hold the same rows as the input's, in any order?"""
    if not columns:
        return True
    ours = back[list(columns)].astype(str)
    theirs = original[list(columns)].astype(str)
    order = list(columns)
    return ours.sort_values(order).reset_index(drop=True).equals(theirs.sort_values(order).reset_index(drop=True))
