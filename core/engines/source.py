"""Where the rows live: a DataFrame in memory, or CSV / Parquet files read by an engine.

The files of one source are checked before any engine runs: each must exist and be readable, and
all must have the same columns (a column missing from one partition is named with its file). A CSV
must pass the one reading rule of ``microrelease.core.data.reading`` (one streaming pass, done
once per file version), so that every engine refuses the same files with the same message; of a
Parquet file only the footer is read, and its column names pass the same rule.
"""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from microrelease.core.data.reading import file_separator, frame_checksum, validate_csv, validate_names
from microrelease.core.exceptions import DataError

# Parquet column types whose text form every engine writes the same way (checked by check_types).
TEXT_TYPES = ("string", "large_string", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
              "uint64", "float", "double", "null")  # not halffloat: DuckDB reads its NaN as 'nan'


def _format_of(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return "parquet"
    if suffix in (".csv", ".tsv", ".txt", ".gz"):
        return "csv"
    raise DataError(f"{path}: cannot tell the format from the suffix {suffix!r}; use .csv or .parquet")


def _expand(data: str | Path | Sequence[str | Path]) -> tuple[Path, ...]:
    items = [data] if isinstance(data, str | Path) else list(data)
    paths: list[Path] = []
    for item in items:
        item = Path(item)
        if item.is_dir():
            found = sorted(item.glob("*.parquet")) or sorted(item.glob("*.csv"))
            if not found:
                raise DataError(f"{item}: folder holds no *.parquet or *.csv partitions")
            paths.extend(found)
        elif any(ch in str(item) for ch in "*?["):
            found = sorted(Path(p) for p in glob.glob(str(item)))
            if not found:
                raise DataError(f"{item}: no file matches this pattern")
            paths.extend(found)
        else:
            paths.append(item)
    if not paths:
        raise DataError("no input file given")
    return tuple(paths)


@dataclass(frozen=True, eq=False)
class Source:
    """The input table: ``frame`` (in memory) or ``paths`` of one ``format`` (CSV with ``sep``).

    Parameters
    ----------
    paths : tuple of Path, optional
        The input files.
    format : str, optional
        Their format (``"csv"`` or ``"parquet"``).
    sep : str, default ","
        The CSV separator.
    frame : pandas.DataFrame, optional
        An in-memory table instead of files.
    """

    paths: tuple[Path, ...] = ()
    format: str = ""
    sep: str = ","
    frame: pd.DataFrame | None = None

    @classmethod
    def of(cls, data: str | Path | Sequence[str | Path] | pd.DataFrame, *, sep: str | None = None) -> Source:
        """A DataFrame, a file, a folder of partitions, a glob pattern or a list of files."""
        if isinstance(data, pd.DataFrame):
            if len(data.columns) != len(set(map(str, data.columns))):
                raise DataError("the DataFrame has duplicate column names")
            return cls(frame=data.rename(columns=str))
        paths = _expand(data)
        formats = {_format_of(p) for p in paths}
        if len(formats) > 1:
            raise DataError(f"mixed formats in one input: {sorted(formats)}")
        fmt = formats.pop()
        for p in paths:
            if not p.is_file():
                raise DataError(f"data file not found: {p}")
        if fmt == "csv" and sep is None:
            sep = file_separator(paths[0])
        return cls(paths, fmt, sep or ",")

    @property
    def description(self) -> str:
        if self.frame is not None:
            return "<DataFrame>"
        return str(self.paths[0]) if len(self.paths) == 1 else f"{self.paths[0].parent} ({len(self.paths)} files)"

    def file_columns(self, path: Path) -> list[str]:
        """Column names of one file: a CSV's header once the whole file has passed the reading rule
        (``validate_csv``, which every engine relies on), or a
        Parquet file's footer, whose names pass the same rule."""
        if self.format == "csv":
            return list(validate_csv(path, self.sep).columns)
        try:
            import pyarrow.parquet as pq  # heavy: pyarrow.parquet, for parquet files only

            names = list(pq.read_schema(path).names)
        except OSError as exc:
            raise DataError(f"cannot read {path}: {exc.strerror or exc}") from None
        except Exception as exc:  # pyarrow's errors for a file that is not Parquet
            raise DataError(f"{path} is not a readable Parquet file: {exc}") from None
        validate_names(path, names, part="the schema")
        return names

    def columns(self) -> list[str]:
        """The table's columns; DataError naming the file and the columns if partitions differ."""
        if self.frame is not None:
            return list(self.frame.columns)
        first: list[str] | None = None
        for path in self.paths:
            cols = self.file_columns(path)
            if first is None:
                first = cols
            elif sorted(cols) != sorted(first):
                missing, extra = sorted(set(first) - set(cols)), sorted(set(cols) - set(first))
                raise DataError(f"{path}: its columns differ from those of {self.paths[0]}: "
                                f"missing {missing}, extra {extra}")
            elif self.format == "csv" and cols != first:  # CSV partitions are read by position
                raise DataError(f"{path}: its columns are in another order than in {self.paths[0]}")
        return first or []

    def blank_lines(self) -> int:
        """Blank lines of the CSV files, which no engine reads as rows (0 for Parquet or a DataFrame);
        known from the reading rule's pass, so free once the columns were read."""
        if self.frame is not None or self.format != "csv":
            return 0
        return sum(validate_csv(path, self.sep).blank_lines for path in self.paths)

    def validate_types(self, columns: Sequence[str]) -> None:
        """QI values must have one text form in every engine: text, integer or float columns."""
        if self.frame is not None:
            return
        if self.format == "parquet":
            import pyarrow.parquet as pq  # heavy: pyarrow.parquet, for parquet files only

            for path in self.paths:
                schema = pq.read_schema(path)
                for name in columns:
                    kind = str(schema.field(name).type)
                    if kind not in TEXT_TYPES:
                        raise DataError(f"{path}: column {name!r} has type {kind}; QI and output columns must "
                                        "be text, integer or floating point (cast it first)")

    def sort_bytes_estimate(self) -> int:
        """About what the rows take in a DuckDB sort: twice a CSV's size (its text, plus the sort's
        keys and blocks), or 8 bytes per Parquet cell and 16 per row (measured at 50M adult rows with
        the QI labels as ENUMs: 67 bytes per row of 9 columns)."""
        if self.frame is not None:
            return int(self.frame.memory_usage(deep=True).sum())
        if self.format == "parquet":
            import pyarrow.parquet as pq  # heavy: pyarrow.parquet, for parquet files only

            total = 0
            for path in self.paths:
                meta = pq.ParquetFile(path).metadata
                total += meta.num_rows * (8 * meta.num_columns + 16)
            return total
        return 2 * sum(p.stat().st_size for p in self.paths)

    def checksum(self) -> str:
        """SHA-256 over the files' bytes in order (or the DataFrame's content)."""
        if self.frame is not None:
            return frame_checksum(self.frame)
        digest = hashlib.sha256()
        for path in self.paths:
            with open(path, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
        return "sha256:" + digest.hexdigest()
