"""What every released table goes through before it is written: a random row order, and the
spreadsheet-formula rule.

**Row order carries nothing.** Input order often means something (sorted by name, by date of
admission), and class members written side by side show the classes; so every release is written
in an order drawn from the operating system's entropy (``numpy.random.default_rng()`` with no seed),
never from a user's seed, which the user might publish or which could be found by trying seeds.

**Formula cells.** A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
(and that is not a number) is run as a formula by spreadsheet programs (CSV injection). Releases
count such cells in their report; on request they are written with a leading ``'``, which
spreadsheets show but do not run.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.release.publishing import Verification, Verified

FORMULA_START = "=+-@\t\r"
# A cell that starts like a formula but is a number ("-5", "+1.5e3") is data, not a formula.
NUMBER = r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?"
FORMULA = r"^[=+\-@\t\r]"


def shuffled(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame``'s rows in an order drawn from OS entropy (index reset).

    Parameters
    ----------
    frame : pandas.DataFrame
        A table to release.

    Returns
    -------
    pandas.DataFrame
        The new table.
    """
    order = np.random.default_rng().permutation(len(frame))
    return frame.iloc[order].reset_index(drop=True)


def formula_mask(column: pd.Series) -> np.ndarray:
    """Which cells of a column would a spreadsheet run as a formula."""
    if not (pd.api.types.is_object_dtype(column) or pd.api.types.is_string_dtype(column)
            or isinstance(column.dtype, pd.CategoricalDtype)):
        return np.zeros(len(column), dtype=bool)
    if isinstance(column.dtype, pd.CategoricalDtype):
        categories = pd.Series(column.cat.categories.astype(str))
        bad = formula_mask(categories)
        codes = column.cat.codes.to_numpy()
        return (codes >= 0) & bad[np.maximum(codes, 0)] if len(bad) else np.zeros(len(column), dtype=bool)
    text = column.astype(str)
    starts = text.str.match(FORMULA).to_numpy(dtype=bool, na_value=False).copy()
    if starts.any():
        starts[starts] = ~text[starts].str.fullmatch(NUMBER).to_numpy(dtype=bool, na_value=False)
    return starts


def formula_counts(column: pd.Series, weights: pd.Series | None = None) -> tuple[int, int]:
    """(formula cells, cells escaped with a leading ``'``) of a column; ``weights``: rows per cell
    when the column holds distinct values with their counts."""
    unescaped = formula_mask(column)
    escaped = np.zeros(len(column), dtype=bool)
    if isinstance(column.dtype, pd.CategoricalDtype) or pd.api.types.is_object_dtype(column) \
            or pd.api.types.is_string_dtype(column):
        text = column.astype(str)
        escaped = text.str.startswith("'").to_numpy(dtype=bool, na_value=False) & formula_mask(text.str.slice(1))
    w = np.ones(len(column), dtype=np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    return int(w[unescaped].sum()), int(w[escaped].sum())


def formula_cells(frame: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """Per column with any: (formula cells, cells escaped with a leading ``'``). Only the columns with a
    cell starting like either are counted: every cell's first character is read in one pass over the
    text columns (a count per column costs milliseconds of pandas each: 20 s for 5,000 columns).

    Parameters
    ----------
    frame : pandas.DataFrame
        A table to release.

    Returns
    -------
    dict of str to (int, int)
        Per column: formula cells, escaped cells.
    """
    text = [c for c in frame.columns if pd.api.types.is_object_dtype(frame[c]) or pd.api.types.is_string_dtype(frame[c])]
    may = set(_starting_like_a_formula(frame, text))
    return {str(c): counted for c in frame.columns if (c in may or c not in text)
            and any(counted := formula_counts(frame[c]))}


_CANDIDATE = frozenset(FORMULA_START + "'")
_starts_like = np.frompyfunc(lambda v: (v if isinstance(v, str) else str(v))[:1] in _CANDIDATE, 1, 1)


def _starting_like_a_formula(frame: pd.DataFrame, columns: list) -> list:
    """Those of ``columns`` (text) holding a cell whose first character starts a formula or is ``'``
    (as ``formula_counts`` reads them: ``str`` of each cell)."""
    if not columns or not len(frame):
        return []
    cells = frame[columns].to_numpy(dtype=object)  # rows x columns
    hit = _starts_like(cells).astype(bool).any(axis=0)
    return [c for c, h in zip(columns, hit, strict=True) if h]


def escape_column(column: pd.Series) -> pd.Series:
    """``column`` with every formula cell prefixed by ``'`` (other cells untouched)."""
    mask = formula_mask(column)
    if not mask.any():
        return column
    column = column.astype(object).copy()
    column[mask] = "'" + column[mask].astype(str)
    return column


def escape_formulas(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every formula cell prefixed by ``'`` (other cells untouched).

    Parameters
    ----------
    frame : pandas.DataFrame
        A table to release.

    Returns
    -------
    pandas.DataFrame
        The new table.
    """
    out = frame.copy()
    for c in frame.columns:
        out[c] = escape_column(frame[c])
    return out


def formula_headers(columns) -> list[str]:
    """Column names a spreadsheet would run as formulas (the header row is cells too)."""
    names = pd.Series([str(c) for c in columns], dtype=object)
    return names[formula_mask(names)].tolist() if len(names) else []


def refuse_formula_headers(columns) -> None:
    """Escaping cells but not the header would leave a formula in the file: a renamed column is the
    user's call, so such a header is refused by name."""
    bad = formula_headers(columns)
    if bad:
        raise InvalidParameterError(f"column name(s) {bad} would run as formulas in a spreadsheet; rename them "
                                    "before releasing with escaped formulas")


def with_formula_verification(verifications: list, found: dict[str, tuple[int, int]], escape: bool, columns=()):
    """``verifications`` plus the formula-cell verification, and the report's entry (cells per column, and header
    cells among ``columns``).

    Parameters
    ----------
    verifications : list
        The verifications so far.
    found : dict of str to (int, int)
        What ``formula_cells`` found.
    escape : bool
        Whether formula cells were escaped.
    columns : sequence of str, optional
        The header's cells.

    Returns
    -------
    Verified
        The checks with the formula-cell check, and the report's entry as a fact.
    """
    headers = formula_headers(columns)
    found = {**found, **{f"<header> {h}": (1, 0) for h in headers}}
    unescaped = sum(u for u, _ in found.values())
    escaped = sum(e for _, e in found.values())
    check = Verification("formula cells escaped" if escape else "formula cells counted", not (escape and unescaped),
                  f"{unescaped} cells a spreadsheet would run as formulas" + (f", {escaped} escaped" if escape else ""))
    facts = {"formula_cells": {"escape_formulas": escape, "unescaped": unescaped, "escaped": escaped,
                               "by_column": {c: {"unescaped": u, "escaped": e} for c, (u, e) in found.items()}}}
    return Verified((*verifications, check), facts)
