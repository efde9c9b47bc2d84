"""The one reading rule for CSV input, checked before any engine reads a file.

pandas, DuckDB and Dask each parse CSV their own way, and each forgives different things: pandas
fills a short row with blanks and drops what follows a NUL byte, DuckDB refuses both but words its
errors in its own terms. So every engine (and ``microrelease.core.data.reading.read_table``,
read by the dashboard and the CLI) first calls ``validate_csv``, and a file is refused for the same
causes with the same one line whatever reads it:

- a header with an empty (or blank) or a duplicate column name;
- a row with fewer or more fields than the header (a blank line is not a row: it is skipped and
  counted; a line of spaces is a short row);
- a NUL byte anywhere;
- bytes that are not UTF-8;
- a quoted value that is never closed, or text after a closing quote;
- a line that ends otherwise than the header (``\\r\\n`` among ``\\n``; DuckDB cannot read it).

The check is one streaming pass, linear in the file's size and cheap (about half a second per
million adult rows, 95 MB, against pandas' two seconds to read them): blocks cut at record ends are
checked as bytes (``isascii``/``decode`` for UTF-8, ``find`` for NUL), and numpy counts each record's
separators, less those between a pair of quotes. Python's csv module parses only from the first
block where that count cannot be trusted (a literal quote inside a value, a quote left open, a
bare carriage return). A file checked once is not checked again while its size and modification
time stay the same (a release reads its input twice).
"""

from __future__ import annotations

import codecs
import csv
import hashlib
import io
import itertools
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.exceptions import DataError
from microrelease.core.lattice.hierarchies import MISSING

BLOCK = 4 << 20  # bytes read at a time: large enough that numpy's work dominates Python's
BOM = codecs.BOM_UTF8


@dataclass(frozen=True)
class CsvShape:
    """What the check learnt of a well-formed CSV: its columns, rows and skipped blank lines."""

    columns: tuple[str, ...]
    rows: int
    blank_lines: int


@dataclass(frozen=True)
class _Fault:
    """One breach of the rule: its physical line (1 is the header) and the sentence naming it."""

    line: int
    cause: str


def validate_names(where: str | Path, names: Sequence[str], *, part: str = "line 1 (the header)") -> None:
    """Refuse an empty (or blank) or duplicate column name in ``part`` of ``where`` (a CSV's header,
    a Parquet file's schema): no report or flag could name such a column (pandas renames them
    'Unnamed: 1' or 'sex.1'; DuckDB fails in its binder)."""
    for i, name in enumerate(names):
        if not str(name).strip():
            raise DataError(f"{where}: {part} has an empty name in column {i + 1}")
    dup = sorted(n for n, times in Counter(map(str, names)).items() if times > 1)
    if dup:
        raise DataError(f"{where}: {part} has duplicate column names {dup}")


_validated: dict[tuple, CsvShape] = {}  # (path, sep, size, mtime, inode) -> shape: a file is checked once


def validate_csv(path: str | Path, sep: str) -> CsvShape:
    """Apply the rule (module docstring) to one CSV file; DataError naming the file, the line and,
    where there is one, the column of the first breach."""
    path = Path(path)
    try:
        stat = path.stat()
        key = (str(path.resolve()), sep, stat.st_size, stat.st_mtime_ns, stat.st_ino)
        if key in _validated:
            return _validated[key]
        with open(path, "rb") as fh:
            shape = _Scan(path, sep).run(fh)
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(_validated) > 256:  # the cache is for the same few files read again, not a record
        _validated.clear()
    _validated[key] = shape
    return shape


class _Scan:
    """One pass over a file's bytes (see the module docstring); ``run`` returns its shape or raises."""

    def __init__(self, path: Path, sep: str):
        if len(sep) != 1 or not sep.isascii() or sep in '"\r\n':
            raise DataError(f"{path}: the separator {sep!r} is not one ASCII character", parameter="sep")
        self.path, self.sep = path, sep
        self.columns: tuple[str, ...] = ()
        self.rows = self.blank = 0
        self.lines = 0  # physical lines before the current block
        self.offset = 0  # file offset of the current block
        self.parse_from: tuple[int, int] | None = None  # (offset, lines) where the csv module takes over
        self.crlf: bool | None = None  # the header's line end (\r\n or \n); every line ends the same

    def fail(self, fault: _Fault) -> None:
        raise DataError(f"{self.path}: line {fault.line} {fault.cause}")

    def run(self, fh) -> CsvShape:
        byte_fault = None
        for block, layout in _record_blocks(fh):
            if self.offset == 0:
                if not block.strip(BOM + b"\r\n"):
                    raise DataError(f"{self.path} is empty (no header)")
                if block.startswith(BOM):  # read as utf-8-sig by every engine
                    block, self.offset = block[len(BOM):], len(BOM)
                    layout = _Layout.of(block)
            byte_fault = _byte_fault(block, self.lines, self.sep, self.columns)
            if self.parse_from is None and not _countable(block, layout, self.sep):
                self.parse_from = (self.offset, self.lines)  # separators no longer tell the fields
            if self.parse_from is None:
                unended = not block.endswith(b"\n")
                if unended:  # the last line: ended here, so that it is a record
                    block += b"\n"
                    layout = _Layout.of(block)
                byte_fault = _first(byte_fault, self._line_ends(layout, unended))
                self._count_fields(block, layout, byte_fault.line if byte_fault else None)
            if byte_fault is not None:
                break
            self.lines += len(layout.lines) + (not block.endswith(b"\n"))
            self.offset += len(block)
        if self.offset == 0 and byte_fault is None:
            raise DataError(f"{self.path} is empty (no header)")
        if self.parse_from is not None:
            self._parse(fh, byte_fault.line if byte_fault else None)
        if byte_fault is not None:  # again, now that the header is known: to name the column
            named = _byte_fault(block, self.lines, self.sep, self.columns)
            self.fail(named if named is not None and named.line == byte_fault.line else byte_fault)
        return CsvShape(self.columns, self.rows, self.blank)

    def _line_ends(self, layout: _Layout, unended: bool = False) -> _Fault | None:
        """A line that ends otherwise than the header (\\r\\n among \\n or the reverse: DuckDB cannot
        read such a file, pandas can). Only line ends outside quoted values count; the last one
        not if ``unended`` (the file's last line has none: the scan added it)."""
        ends = layout.ends[:-1] if unended else layout.ends
        if not len(ends):
            return None
        crlf = (layout.data[np.maximum(ends - 1, 0)] == 13) & (ends > 0)  # a block begins after a \\n
        if self.crlf is None:
            self.crlf = bool(crlf[0])
        odd = np.flatnonzero(crlf != self.crlf)
        if not len(odd):
            return None
        found, wanted = ("\\r\\n", "\\n") if crlf[odd[0]] else ("\\n", "\\r\\n")
        line = self.lines + int(np.searchsorted(layout.lines, ends[odd[0]])) + 1
        return _Fault(line, f"ends with {found} where the header ends with {wanted} "
                            "(save the file with one kind of line end)")

    def _header(self, names: list[str]) -> None:
        validate_names(self.path, names)
        self.columns = tuple(names)

    def _count_fields(self, block: bytes, layout: _Layout, stop: int | None) -> None:
        """Fields per record: its separators less those inside its quoted values (``block`` begins a
        record, ends with a line end, and its quotes pair up as values' opening and closing: see
        ``_countable``); records on lines before ``stop`` only."""
        data, ends, quotes = layout.data, layout.ends, layout.quotes
        starts = np.concatenate(([0], ends[:-1] + 1))
        seps = np.flatnonzero(data == ord(self.sep))
        fields = np.diff(np.concatenate(([0], np.searchsorted(seps, ends)))) + 1
        if len(quotes):  # each (opening, closing) pair: the separators between are a value's text
            before = np.searchsorted(seps, quotes)
            record = np.searchsorted(ends, quotes[0::2])
            fields -= np.bincount(record, weights=before[1::2] - before[0::2], minlength=len(ends)).astype(np.int64)
        length = ends - starts - (data[np.maximum(ends - 1, 0)] == 13) * (ends > starts)
        if len(layout.lines) == len(ends):  # no line end inside a value: record i is line i
            line_of = self.lines + np.arange(1, len(ends) + 1)
        else:
            line_of = self.lines + np.searchsorted(layout.lines, starts) + 1  # a record's first line
        first = 0
        if not self.columns:  # the header is the block's first record
            self._header(_split(block[: ends[0]].rstrip(b"\r"), self.sep))
            first = 1
        keep = line_of < stop if stop is not None else np.ones(len(ends), dtype=bool)
        keep[:first] = False
        blank = keep & (length == 0)
        wrong = fields != len(self.columns)
        if len(self.columns) == 1:  # a line of spaces has the one field: refused as short all the same
            wrong |= (length > 0) & _only_spaces(data, starts, ends)
        bad = np.flatnonzero(keep & ~blank & wrong)
        if len(bad):
            i = int(bad[0])
            text = block[starts[i]: ends[i]].rstrip(b"\r")
            self.fail(_Fault(int(line_of[i]), _width_cause(int(fields[i]), len(self.columns), not text.strip())))
        self.blank += int(blank.sum())
        self.rows += int((keep & ~blank).sum())

    def _parse(self, fh, stop: int | None) -> None:
        """Parse with the csv module from ``parse_from`` on (up to line ``stop``, a bad byte's)."""
        assert self.parse_from is not None  # called once the csv module takes over
        offset, lines = self.parse_from
        fh.seek(offset)
        # every byte before `stop` is valid UTF-8 (checked as bytes); 'replace' only covers the
        # decoder's read-ahead past it
        text = io.TextIOWrapper(fh, encoding="utf-8", errors="replace", newline="")
        reader = csv.reader(text, delimiter=self.sep, strict=True)
        limit = csv.field_size_limit()
        csv.field_size_limit(sys.maxsize)  # long values are the engines' business, not the rule's
        try:
            self._records(reader, lines, stop)
        finally:
            csv.field_size_limit(limit)
            text.detach()

    def _records(self, reader, lines: int, stop: int | None) -> None:
        previous = 0
        while True:
            start = lines + previous + 1
            if stop is not None and start >= stop:
                return
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                cause = "has a quoted value that is never closed" if "end of data" in str(exc) else \
                    f"cannot be read as CSV: {exc}"
                self.fail(_Fault(start, cause))
            previous = reader.line_num
            if not self.columns:
                self._header(record)
            elif not record:
                self.blank += 1
            elif len(record) != len(self.columns) or (len(record) == 1 and not record[0].strip()):
                blank = len(record) == 1 and not record[0].strip()
                self.fail(_Fault(start, _width_cause(len(record), len(self.columns), blank)))
            else:
                self.rows += 1


def _first(*faults: _Fault | None) -> _Fault | None:
    """The fault on the earliest line (None if there is none)."""
    found = [f for f in faults if f is not None]
    return min(found, key=lambda f: f.line) if found else None


def _only_spaces(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per record: holds nothing but spaces, tabs and a carriage return (pandas skips such a line,
    DuckDB reads it; the rule refuses it)."""
    solid = np.concatenate(([0], np.cumsum(~np.isin(data, (9, 10, 13, 32)), dtype=np.int64)))
    return solid[ends] - solid[starts] == 0


def _width_cause(found: int, width: int, blank: bool) -> str:
    if blank:
        return f"is blank but for spaces, where the header has {width} fields"
    return f"has {found} field(s) where the header has {width}"


@dataclass(frozen=True, eq=False)
class _Layout:
    """Where a block's line ends and quotes are, found once and read by every check of the block;
    ``ends`` are the line ends outside quoted values (records' ends), in a block that begins a record."""

    data: np.ndarray
    lines: np.ndarray
    quotes: np.ndarray
    ends: np.ndarray

    @classmethod
    def of(cls, block: bytes) -> _Layout:
        data = np.frombuffer(block, dtype=np.uint8)
        lines = np.flatnonzero(data == 10)
        quotes = np.flatnonzero(data == 34) if b'"' in block else lines[:0]
        # a line end after an even number of quotes is outside a value (an escaped quote is two)
        ends = lines[np.searchsorted(quotes, lines) % 2 == 0] if len(quotes) else lines
        return cls(data, lines, quotes, ends)

    def prefix(self, cut: int) -> _Layout:
        """The layout of the block's first ``cut`` bytes."""
        def below(positions: np.ndarray) -> np.ndarray:
            return positions[: np.searchsorted(positions, cut)]

        return _Layout(self.data[:cut], below(self.lines), below(self.quotes), below(self.ends))


def _countable(block: bytes, layout: _Layout, sep: str) -> bool:
    """Whether counting separators outside quotes tells each record's fields: every quote opens a
    value (at its start) or closes one (at its end), or is half of an escaped pair, the quotes are
    even in number, and no carriage return ends a line alone. Else (a literal quote inside a value,
    text after a closing quote, an unclosed quote) the csv module parses from this block on."""
    if b"\r" in block and block.count(b"\r") != block.count(b"\r\n"):
        return False
    quotes, data = layout.quotes, layout.data
    if not len(quotes):
        return True
    if len(quotes) % 2:
        return False
    before = data[np.maximum(quotes - 1, 0)]
    after = data[np.minimum(quotes + 1, len(data) - 1)]
    adjacent = np.diff(quotes) == 1
    opens = (quotes == 0) | (before == ord(sep)) | (before == 10) | np.concatenate(([False], adjacent))
    closes = ((quotes == len(data) - 1) | (after == ord(sep)) | (after == 10) | (after == 13)
              | np.concatenate((adjacent, [False])))
    return bool(opens[0::2].all() and closes[1::2].all())


def _split(header: bytes, sep: str) -> list[str]:
    """The names of a header line (one record: its line ends are outside quotes)."""
    text = header.decode("utf-8", "replace")
    if '"' not in text:
        return text.split(sep)
    return next(csv.reader([text], delimiter=sep), [])


RECORD_LIMIT = 64 << 20  # bytes kept waiting for a record's end; past it, the csv module streams


def _record_blocks(fh):
    """The file's bytes in blocks of about BLOCK bytes with their layout, each cut after a line end
    outside quotes (but the last): no character, line or record is split between two blocks, so each
    block begins a record. A block that cannot be cut so (an unclosed quote) is given whole once
    past RECORD_LIMIT."""
    carry = b""
    while block := fh.read(BLOCK):
        data = carry + block if carry else block
        layout = _Layout.of(data)
        if not len(layout.ends) and len(data) <= RECORD_LIMIT:
            carry = data
            continue
        cut = int(layout.ends[-1]) + 1 if len(layout.ends) else len(data)
        yield data[:cut], layout.prefix(cut)
        carry = data[cut:]
    if carry:
        yield carry, _Layout.of(carry)


def _byte_fault(block: bytes, lines: int, sep: str, columns: Sequence[str]) -> _Fault | None:
    """The first NUL byte or byte that is not UTF-8 in ``block`` (whose first line is ``lines + 1``),
    naming its column when the header is known (``columns``) and the line is not the header."""
    nul = block.find(b"\0")
    bad = -1
    if not block.isascii():
        try:
            block.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad = exc.start
    if nul < 0 and bad < 0:
        return None
    at = min(p for p in (nul, bad) if p >= 0)
    line = lines + block.count(b"\n", 0, at) + 1
    start = block.rfind(b"\n", 0, at) + 1
    field = block.count(sep.encode(), start, at)  # exact but for separators inside quotes
    where = f"column {columns[field]!r}" if line > 1 and field < len(columns) else f"field {field + 1}" + " of the header" * (line == 1)
    if at == bad:
        return _Fault(line, f"has a byte that is not UTF-8 (0x{block[at]:02x}) in {where}; save the file as UTF-8")
    return _Fault(line, f"holds a NUL byte in {where} (a NUL is not text)")


def clear_cache() -> None:
    """Forget which files were checked (for tests that rewrite a file within one clock tick)."""
    _validated.clear()


__all__ = ["CsvShape", "validate_csv", "validate_names", "clear_cache"]


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
    """The separator of the CSV file at ``path`` (``detect_separator`` on its ``separator_sample``)."""
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            return detect_separator(separator_sample(fh))
    except OSError as exc:
        raise DataError(f"cannot read {path}: {exc.strerror or exc}") from None


def read_table(path: str | Path, *, sep: str | None = None) -> pd.DataFrame:
    """Read a CSV with every cell as text; a file breaking the reading rule of
    ``microrelease.core.data.reading`` raises its DataError (the same one every engine raises).

    Blank lines are not rows; their number is kept in ``df.attrs["blank_lines_skipped"]``.

    Parameters
    ----------
    path : str or Path
        The file to read.
    sep : str, optional
        The separator; detected from the file's first lines if not given.

    Returns
    -------
    pandas.DataFrame
        The table, every column read as text.

    Raises
    ------
    DataError
        If the file cannot be read as a table.
    """
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file not found: {path}")
    if sep is None:
        sep = file_separator(path)
    shape = validate_csv(path, sep)  # before pandas, which forgives ragged rows and NUL bytes
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
