"""The small interface every engine implements, and the release plan it applies.

An engine does exactly three things with the rows, wherever they live:

- ``frequency``: one pass computing the frequency set (Samarati §4.1) of the QIs' text values;
- ``release``: generalize every row through per-QI level tables, drop the rows of suppressed
  classes, drop identifiers, and stream the result to one output (CSV or Parquet);
- ``formula_cells``: count the cells of an output that a spreadsheet would run as formulas.

Every release is written in a random row order drawn from OS entropy (see
``microrelease.core.release.cells``); the re-check re-reads the written file with ``frequency``.

All lattice work happens on the frequency set in ``microrelease.core.lattice.profile``; engines never
see the lattice. The text of a value is the same in every engine (``as_text``), so pandas,
DuckDB and Dask give the same frequency set.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd
import pyarrow as pa

from microrelease.core.data.reading import as_text
from microrelease.core.engines.source import Source
from microrelease.core.exceptions import DataError
from microrelease.core.release.cells import escape_formulas

COUNT = "__count"  # the frequency column; a name no table column is expected to use
Progress = Callable[[float], None]
ShouldStop = Callable[[], bool]


def output_format(out: str | Path) -> str:
    """'parquet' for .parquet/.pq, 'csv' for anything else (the release writes CSV by default).

    Parameters
    ----------
    out : str or Path
        The release's file.

    Returns
    -------
    str
        ``"parquet"`` or ``"csv"``.

    Examples
    --------
    >>> output_format("release.pq")
    'parquet'
    """
    return "parquet" if Path(out).suffix.lower() in (".parquet", ".pq") else "csv"


@dataclass(frozen=True, eq=False)
class ReleasePlan:
    """What to do with every row: the level table of each QI and the classes to suppress.

    ``level_tables[i]`` maps a value of QI i (its text) to its ``label`` and level ``code`` at the
    chosen node, and says whether a class kept holds that code (``written``); ``suppressed`` lists the level-code tuples (columns ``c0``..) of the classes
    smaller than k. ``columns`` are the output columns (the input's minus identifiers, in order).

    Parameters
    ----------
    qi : tuple of str
        The quasi-identifiers.
    columns : tuple of str
        The released columns, in order.
    level_tables : tuple of pandas.DataFrame
        Per quasi-identifier, its values' labels at the node.
    suppressed : pandas.DataFrame
        The classes to suppress.
    expected_rows : int
        The rows the release must have.
    sep : str, default ","
        The CSV separator.
    format : str, default "csv"
        ``"csv"`` or ``"parquet"``.
    escape : bool, default False
        Neutralize formula cells.
    """

    qi: tuple[str, ...]
    columns: tuple[str, ...]
    level_tables: tuple[pd.DataFrame, ...]
    suppressed: pd.DataFrame
    expected_rows: int
    sep: str = ","
    format: str = "csv"
    escape: bool = False  # write formula cells of non-QI columns with a leading ' (QI labels come escaped)

    def code_columns(self) -> list[str]:
        return [f"c{i}" for i in range(len(self.qi))]

    def unused_name(self, base: str) -> str:
        """A name for a working column that no output column has (an input may name columns anything)."""
        while base in self.columns:
            base += "_"
        return base


class Engine(Protocol):
    """One pass over the rows (see the module docstring)."""

    name: str

    def frequency(self, source: Source, qi: Sequence[str], *, progress: Progress | None = None,
                  should_stop: ShouldStop | None = None) -> pa.Table:
        """Distinct text combinations of ``qi`` (missing as '') with their row counts in COUNT."""
        ...

    def release(self, source: Source, plan: ReleasePlan, out: Path, *, progress: Progress | None = None,
                should_stop: ShouldStop | None = None) -> None:
        """Write the generalized, suppressed rows to ``out`` in ``plan.format``, in a random order."""
        ...

    def formula_cells(self, source: Source, columns: Sequence[str]) -> dict[str, tuple[int, int]]:
        """Per column with any: (cells a spreadsheet would run as formulas, cells escaped with ')."""
        ...


def partial_frequency(frame: pd.DataFrame, qi: Sequence[str]) -> pd.DataFrame:
    """The frequency set of one in-memory frame (or one partition of a larger table).

    Rows are grouped on their raw values first; only the distinct combinations are turned into
    text (then regrouped, as two raw values may share a text, e.g. None and '').
    """
    qi = list(qi)
    raw = frame[qi].groupby(qi, sort=False, dropna=False, observed=True).size()
    distinct = raw.index.to_frame(index=False)
    texts = pd.DataFrame({name: as_text(distinct[name]) for name in qi})
    texts[COUNT] = raw.to_numpy(dtype=np.int64)
    return texts.groupby(qi, sort=False)[COUNT].sum().reset_index()


def apply_plan(frame: pd.DataFrame, plan: ReleasePlan) -> pd.DataFrame:
    """Release one in-memory frame (or partition) by ``plan``; rows keep their order (the engines
    shuffle the whole release).

    Each QI column is factorized, so only its distinct values are turned into text and looked up;
    rows are filtered before the labels are built, and labels are taken by Arrow.

    Parameters
    ----------
    frame : pandas.DataFrame
        The rows (or a partition).
    plan : ReleasePlan
        What to do with every row.

    Returns
    -------
    pandas.DataFrame
        The released rows.
    """
    key = np.zeros(len(frame), dtype=np.int64)
    radix_product = 1.0
    levels = []
    for name, table in zip(plan.qi, plan.level_tables, strict=True):
        row_value, uniques = pd.factorize(frame[name], use_na_sentinel=False)
        text = as_text(pd.Series(uniques))  # a float column keeps its dtype: 39.0 -> '39', as in DuckDB
        position = pd.Index(table["raw"]).get_indexer(text)
        if (position < 0).any():
            absent = sorted(set(text[position < 0]))[:10]
            raise DataError(f"column {name!r}: value(s) {absent} are not in its hierarchy "
                            "(did the input change after it was profiled?)")
        row_position = position[row_value]
        level = table["code"].to_numpy(dtype=np.int64)[row_position]
        radix = int(table["code"].max()) + 1
        key = key * radix + level
        radix_product *= radix
        levels.append(level)
    keep = np.ones(len(frame), dtype=bool)
    if len(plan.suppressed) and len(frame):
        if radix_product < 2.0**62:  # one int64 key per class: a vectorized membership test
            suppressed_key = np.zeros(len(plan.suppressed), dtype=np.int64)
            for column, table in zip(plan.code_columns(), plan.level_tables, strict=True):
                suppressed_key = suppressed_key * (int(table["code"].max()) + 1) + plan.suppressed[column].to_numpy(np.int64)
            keep = ~np.isin(key, suppressed_key)
        else:
            keep = ~np.asarray(pd.MultiIndex.from_arrays(levels).isin(pd.MultiIndex.from_frame(plan.suppressed)))
    kept = frame.index[keep]
    columns = {}
    for column in plan.columns:
        if column in plan.qi:
            i = plan.qi.index(column)
            table = plan.level_tables[i]
            level_labels = table.drop_duplicates("code").sort_values("code")["label"].to_numpy(dtype=object)
            # categorical: no string is copied per row, and the type is known even for an empty
            # partition (Parquet stores it as dictionary-encoded text)
            columns[column] = pd.Categorical.from_codes(levels[i][keep], categories=level_labels)
        else:
            columns[column] = frame[column].to_numpy()[keep] if frame[column].dtype == object else frame[column][keep].array
    released = pd.DataFrame(columns, index=kept)
    if plan.escape:
        others = [c for c in plan.columns if c not in plan.qi]
        released[others] = escape_formulas(released[others])
    return released


def only_written_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with each categorical column's categories cut to the values its rows hold.

    Parquet writes a categorical's categories as the column's dictionary page: a hierarchy's values
    whose rows were all suppressed (or that never occur) would be published there.
    """
    cut = {c: frame[c].cat.remove_unused_categories() for c in frame.columns
           if isinstance(frame[c].dtype, pd.CategoricalDtype)}
    return frame.assign(**cut) if cut else frame


def concatenate(parts: Sequence[Path], out: Path, fmt: str) -> None:
    """Write ``parts`` one after another as one file: CSV bytes (the first part alone has the header),
    or Parquet row groups (copied, not parsed)."""
    if fmt == "csv":
        with open(out, "wb") as sink:
            for part in parts:
                with open(part, "rb") as piece:
                    shutil.copyfileobj(piece, sink, 1 << 20)
        return
    import pyarrow.parquet as pq  # heavy: pyarrow.parquet, for parquet files only

    schema = pq.read_schema(parts[0])
    with pq.ParquetWriter(out, schema) as writer:
        for part in parts:
            file = pq.ParquetFile(part)
            for i in range(file.num_row_groups):
                writer.write_table(file.read_row_group(i).cast(schema))
