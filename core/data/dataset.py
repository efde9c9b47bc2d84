"""A table with attribute roles and one hierarchy per quasi-identifier, validated and encoded.

Values are kept as text, exactly as read, so that a released file reproduces every untouched cell.
Missing values (empty cells; NaN/None in a DataFrame) follow the rule of
:data:`microrelease.core.lattice.hierarchies.MISSING`: a value of their own unless the hierarchy maps ``""``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from microrelease.core.data.reading import check_csv, check_names
from microrelease.core.data.roles import Schema
from microrelease.core.exceptions import CoverageError, DataError
from microrelease.core.lattice.frequency import FrequencySet, FrequencySource, frequency_set
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy, find_hierarchy_file, read_arx

if TYPE_CHECKING:
    from microrelease.core.engines.source import Source

SEPARATORS = [",", ";", "\t", "|"]


SAMPLE_CHARS = 64_000  # what the separator is guessed from, extended to hold two whole lines
LONGEST_SAMPLE = 64 << 20


def separator_sample(text_or_file) -> str:
    """The start of a CSV (text, or a text file open at its start) the separator is guessed from: its
    first 64,000 characters, read on until they hold the header and the next line (a header of
    thousands of long names can be longer), up to 64 MB."""
    if isinstance(text_or_file, str):
        end = len(text_or_file) if len(text_or_file) <= SAMPLE_CHARS else SAMPLE_CHARS
        while text_or_file.count("\n", 0, end) < 2 and end < min(len(text_or_file), LONGEST_SAMPLE):
            end = min(end * 2, len(text_or_file), LONGEST_SAMPLE)
        return text_or_file[:end]
    text = text_or_file.read(SAMPLE_CHARS)
    while text.count("\n") < 2 and len(text) < LONGEST_SAMPLE and (more := text_or_file.read(len(text) or 1)):
        text += more
    return text


def detect_separator(sample: str) -> str:
    """Guess the field separator of a CSV from its first records (``,`` if nothing else fits): the one
    that splits up to 50 records (quoted line ends and separators read as the csv module reads them)
    into the same number of fields, the most fields winning."""
    truncated = not sample.endswith(("\n", "\r"))
    best, best_score = ",", 0
    for sep in SEPARATORS:
        try:
            records = list(itertools.islice(csv.reader(io.StringIO(sample), delimiter=sep), 51))
        except csv.Error:
            continue
        if len(records) == 51:
            records = records[:50]
        elif truncated and len(records) > 1:
            records = records[:-1]  # cut mid-record by the sample's size
        widths = {len(r) for r in records if r}
        if len(widths) == 1 and (w := widths.pop()) > 1 and w > best_score:
            best, best_score = sep, w
    return best


def file_separator(path: str | Path) -> str:
    """The separator of the CSV file at ``path`` (:func:`detect_separator` on its :func:`separator_sample`)."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            return detect_separator(separator_sample(fh))
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_table(path: str | Path, *, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV with every cell as text; a file breaking the reading rule of
    :mod:`microrelease.core.data.reading` raises its DataError (the same one every engine raises).

    Blank lines are not rows; their number is kept in ``df.attrs["blank_lines_skipped"]``.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file not found: {path}")
    if sep is None:
        sep = file_separator(path)
    shape = check_csv(path, sep)  # before pandas, which forgives ragged rows and NUL bytes
    try:
        df = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8-sig", engine="c")
    except pd.errors.EmptyDataError:
        raise DataError(f"{path} is empty (no header, no rows)") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:  # what the rule does not cover, e.g. a huge field
        raise DataError(f"{path} is not a well-formed CSV with separator {sep!r}: {' '.join(str(exc).split())}") from None
    if len(df) != shape.rows:  # the rule and pandas disagree on what a row is: never release a guess
        raise DataError(f"{path}: pandas read {len(df)} rows where the file has {shape.rows}")
    df.attrs["blank_lines_skipped"] = shape.blank_lines
    return df


def file_checksum(path: str | Path) -> str:
    """SHA-256 of a file's bytes (recorded in release reports); DataError if it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
    except FileNotFoundError:
        raise DataError(f"data file not found: {path}") from None
    except OSError as exc:  # a folder, no permission, ...
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from None
    return "sha256:" + digest.hexdigest()


def frame_checksum(df: pd.DataFrame) -> str:
    """SHA-256 of a DataFrame's content (columns, order and values)."""
    digest = hashlib.sha256("\x1f".join(map(str, df.columns)).encode())
    digest.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return "sha256:" + digest.hexdigest()


def as_text(column: pd.Series) -> pd.Series:
    """Cells as text, the same in every engine: missing -> MISSING, integers as written, floats with
    an integral value without '.0' (39.0 -> '39'), other floats in their shortest form ('0.1')."""
    if pd.api.types.is_float_dtype(column):
        values = column.to_numpy(dtype=float, na_value=np.nan)
        missing = np.isnan(values)
        integral = ~missing & np.isfinite(values) & (np.abs(values) < 2.0**53)
        integral[integral] = np.mod(values[integral], 1) == 0
        out = np.empty(len(values), dtype=object)
        out[integral] = values[integral].astype(np.int64).astype(str)
        other = ~integral & ~missing
        out[other] = [repr(float(v)) for v in values[other]]
        out[missing] = MISSING
        return pd.Series(out, index=column.index, dtype=object)
    if pd.api.types.is_string_dtype(column) and (
        column.dtype != object or pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty")
    ):
        return column.astype(object).where(column.notna(), MISSING)  # already text: no per-cell str()
    out = column.astype(object).where(column.notna(), MISSING)
    return out.map(str).astype(object)


@dataclass(frozen=True, eq=False)
class Dataset(FrequencySource):
    """A table, its column roles and one hierarchy per QI (in QI order), checked for coverage.

    Raises DataError for an empty table or unknown columns, and CoverageError listing (with row
    counts) every QI value that its hierarchy lacks.
    """

    table: pd.DataFrame
    schema: Schema
    hierarchies: tuple[Hierarchy, ...]
    checksum: str = ""
    source: str = ""
    blank_lines_skipped: int = 0
    hierarchy_dir: str = ""  # where the QIs' hierarchies were found (a sensitive attribute's may be there too)
    codes: np.ndarray = field(init=False, repr=False)
    missing_counts: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.table, pd.DataFrame):
            raise TypeError(f"The 'table' parameter must be a pandas DataFrame. Got {type(self.table).__name__}.")
        if len(self.table) == 0:
            raise DataError("the table has no rows")
        self.schema.check_columns(list(self.table.columns))
        qi = self.schema.quasi_identifiers
        if len(self.hierarchies) != len(qi):
            raise DataError(f"{len(self.hierarchies)} hierarchies given for {len(qi)} QIs {list(qi)}")
        table = self.table.reset_index(drop=True).copy()
        for name in qi:
            table[name] = as_text(table[name])
        hierarchies, codes, missing_counts = [], np.empty((len(table), len(qi)), dtype=np.int32), {}
        for i, (name, h) in enumerate(zip(qi, self.hierarchies, strict=True)):
            if h.attribute != name:
                raise DataError(f"hierarchy #{i + 1} is for {h.attribute!r} but QI #{i + 1} is {name!r}")
            n_missing = int((table[name] == MISSING).sum())
            if n_missing:
                missing_counts[name] = n_missing
                h = h.with_missing()
            absent = h.missing_values(table[name])
            if absent:
                raise CoverageError(name, absent)
            codes[:, i] = h.encode(table[name])
            hierarchies.append(h)
        codes.setflags(write=False)
        object.__setattr__(self, "table", table)
        object.__setattr__(self, "hierarchies", tuple(hierarchies))
        object.__setattr__(self, "codes", codes)
        object.__setattr__(self, "missing_counts", missing_counts)
        if not self.checksum:
            object.__setattr__(self, "checksum", frame_checksum(self.table))

    @property
    def n_rows(self) -> int:
        return len(self.table)

    # read-only here, a field of TableSummary: FrequencySource keeps plain attributes (as properties of
    # the protocol they would be the inherited defaults of TableSummary's dataclass fields)
    @cached_property
    def frequency(self) -> FrequencySet:  # type: ignore[override]
        """The frequency set of the QIs (computed once, on first use)."""
        return frequency_set(self.codes)

    @property
    def columns(self) -> tuple[str, ...]:  # type: ignore[override]  # read-only here (see frequency)
        return tuple(self.table.columns)

    @property
    def rows(self) -> Source:
        from microrelease.core.engines.source import Source  # engines build on this module

        return Source(frame=self.table)


def load_dataset(
    data: str | Path | pd.DataFrame,
    *,
    qi: Sequence[str],
    hierarchies: Mapping[str, Hierarchy | str | Path] | None = None,
    hierarchy_dir: str | Path | None = None,
    identifiers: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    sep: str | None = None,
) -> Dataset:
    """Load a table (CSV path or DataFrame) and the hierarchy of each QI.

    A QI's hierarchy comes from ``hierarchies[name]`` (a :class:`Hierarchy` or an ARX file path), or
    else from ``hierarchy_dir`` (``*_hierarchy_<name>.csv`` or ``<name>.csv``).
    """
    schema = Schema(tuple(qi), tuple(identifiers), tuple(sensitive))
    if isinstance(data, pd.DataFrame):
        table, checksum, source = data, "", "<DataFrame>"
        check_names(source, list(table.columns), part="the frame")  # the rule a CSV's header meets
    else:
        table, checksum, source = read_table(data, sep=sep), file_checksum(data), str(data)
    schema.check_columns(list(table.columns))
    resolved = resolve_hierarchies(schema, hierarchies, hierarchy_dir)
    return Dataset(table, schema, tuple(resolved), checksum=checksum, source=source,
                   blank_lines_skipped=int(table.attrs.get("blank_lines_skipped", 0)),
                   hierarchy_dir=str(hierarchy_dir or ""))


def resolve_hierarchies(
    schema: Schema,
    hierarchies: Mapping[str, Hierarchy | str | Path] | None,
    hierarchy_dir: str | Path | None,
) -> tuple[Hierarchy, ...]:
    """One hierarchy per QI, in QI order: ``hierarchies[name]`` (object or ARX file), else a file of
    ``hierarchy_dir`` (``*_hierarchy_<name>.csv`` or ``<name>.csv``)."""
    given = dict(hierarchies or {})
    if hierarchy_dir is not None and not Path(hierarchy_dir).is_dir():  # else "no hierarchy ... in the folder"
        problem = "is not a folder" if Path(hierarchy_dir).exists() else "does not exist"
        raise DataError(f"the hierarchy folder {hierarchy_dir} {problem}", parameter="hierarchy_dir")
    unknown = [n for n in given if n not in schema.quasi_identifiers]
    if unknown:
        raise DataError(f"hierarchies given for column(s) {unknown} that are not QIs {list(schema.quasi_identifiers)}")
    resolved = []
    for name in schema.quasi_identifiers:
        spec = given.get(name)
        if spec is None and hierarchy_dir is not None:
            spec = find_hierarchy_file(hierarchy_dir, name)
        if spec is None:
            where = f" or in the folder {hierarchy_dir}" if hierarchy_dir is not None else ""
            raise DataError(f"no hierarchy for QI {name!r} in 'hierarchies'{where}", parameter="hierarchies")
        resolved.append(spec if isinstance(spec, Hierarchy) else read_arx(spec, name))
    return tuple(resolved)
