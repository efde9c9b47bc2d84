"""The pandas engine: the rows in memory, as a DataFrame (given, or read whole from the files).

Right for tables that fit in memory several times over (pandas keeps every cell as a Python
object); beyond that, use DuckDB.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa

from microrelease.core.data.reading import read_table
from microrelease.core.engines.engine import (
    ReleasePlan,
    apply_plan,
    only_written_categories,
    partial_frequency,
)
from microrelease.core.engines.source import Source
from microrelease.core.exceptions import DataError
from microrelease.core.release.cells import formula_cells, shuffled
from microrelease.core.release.table import write_csv


def _read(path: Path, fmt: str, sep: str) -> pd.DataFrame:
    if fmt == "parquet":
        try:
            return pd.read_parquet(path)
        except Exception as exc:  # pyarrow's errors name neither the file nor the problem
            raise DataError(f"{path} is not a readable Parquet file: {exc}") from None
    return read_table(path, sep=sep)


class PandasEngine:
    name = "pandas"

    def _frame(self, source: Source) -> pd.DataFrame:
        if source.frame is not None:
            return source.frame
        source.columns()  # the reading rule (read_table checks a CSV too; the check is done once per file)
        parts = [_read(p, source.format, source.sep) for p in source.paths]
        return parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)

    def frequency(self, source, qi, *, progress=None, should_stop=None) -> pa.Table:
        if progress is not None:
            progress(0.0)
        result = pa.Table.from_pandas(partial_frequency(self._frame(source), qi), preserve_index=False)
        if progress is not None:
            progress(1.0)
        return result

    def release(self, source, plan: ReleasePlan, out: Path, *, progress=None, should_stop=None) -> None:
        released = shuffled(apply_plan(self._frame(source), plan))
        if plan.format == "parquet":
            only_written_categories(released).to_parquet(out, index=False)
        else:
            write_csv(released, out, plan.sep)

    def formula_cells(self, source, columns):
        return formula_cells(self._frame(source)[list(columns)])
