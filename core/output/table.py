"""The one release path for a table held in memory (microaggregation, DP microdata): one CSV file."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from microrelease.core.output.cells import escape_formulas, formula_cells, shuffled, with_formula_check
from microrelease.core.output.publish import Check, Published, publish
from microrelease.core.output.target import file_target

# (table read back, table as written) -> the method's own checks on the written file
TableChecks = Callable[[pd.DataFrame, pd.DataFrame], Sequence[Check]]


def publish_table(released: pd.DataFrame, out: str | Path, checks: TableChecks, body: Mapping, *, sep: str = ",",
                  escape: bool = False, force: bool = False, source: str = "<DataFrame>",
                  protected: Sequence[str | Path] = ()) -> Published:
    """Write ``released`` as CSV in a random row order (formula cells escaped on request), read it back,
    run ``checks`` and the formula-cell count on it, and put it in place with its report."""
    target = file_target(out, protected=[*([source] if source != "<DataFrame>" else []), *protected], force=force)
    table = shuffled(released)
    if escape:
        table = escape_formulas(table)
    name = target.names[0]

    def write(paths):
        table.to_csv(paths[name], index=False, sep=sep)

    def verify(paths):
        back = pd.read_csv(paths[name], sep=sep, dtype=str, keep_default_na=False)
        return with_formula_check(list(checks(back, table)), formula_cells(back), escape)

    return publish(target, write, verify, body)


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
