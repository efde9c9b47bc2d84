"""The DuckDB engine: rows stay in their CSV / Parquet files; DuckDB (embedded) streams them.

DuckDB reads the files itself, in parallel, without loading the rows into Python. With a memory
limit and a spill directory, files larger than memory work: a group-by or join that outgrows the
limit spills to disk instead of failing. Progress comes from DuckDB's own query progress, and
cancel interrupts the running query.
"""

from __future__ import annotations

import os
import re
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa

from microrelease.core.engines.engine import COUNT, ReleasePlan, concatenate
from microrelease.core.engines.source import Source
from microrelease.core.exceptions import Cancelled, DataError, EngineError, InvalidParameterError, OutputError
from microrelease.core.release.cells import FORMULA, FORMULA_START, NUMBER
from microrelease.core.validation import validate_int

_FLOATS = ("FLOAT", "DOUBLE", "REAL")


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def _bytes(text: str) -> int:
    """'64MB' -> 64000000 (DuckDB's units: KB/MB/GB decimal, KiB/MiB/GiB binary)."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).upper() not in _UNITS:
        raise InvalidParameterError(f"The 'memory_limit' parameter must be like '64MB' or '4GB'. Got {text!r} instead.",
                                    parameter="memory_limit")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _text(column: str, kind: str, alias: str = "") -> str:
    """SQL for the text of a value, equal to ``microrelease.core.data.reading.as_text``."""
    c = f"{alias}.{quote(column)}" if alias else quote(column)
    if kind.upper() in _FLOATS:
        c = f"CAST({c} AS DOUBLE)"  # a 4-byte float's text as pandas gives it (as a double)
        return (f"CASE WHEN {c} IS NULL OR isnan({c}) THEN '' "
                f"WHEN isfinite({c}) AND abs({c}) < 9007199254740992 AND {c} = trunc({c}) "
                f"THEN CAST(CAST({c} AS BIGINT) AS VARCHAR) ELSE CAST({c} AS VARCHAR) END")
    return f"COALESCE(CAST({c} AS VARCHAR), '')"


def _csv_error(text: str) -> str | None:
    """One sentence naming the file, line and cause of a DuckDB CSV error, or None if ``text`` is
    not one (DuckDB's text runs over many lines: the line itself, fixes, every reader setting)."""
    where = re.search(r"CSV Error on Line: (\d+)", text)
    if where is None:
        return None
    file = re.search(r"^\s*file = (.+)$", text, re.M)
    original = re.search(r"^Original Line: (.*)$", text, re.M)
    long = re.search(r"Maximum line size of (\d+) bytes exceeded\. Actual Size: ?(\d+)", text)
    fields = re.search(r"Expected Number of Columns: (\d+) Found: (\d+)", text)
    if long:
        cause = f"is longer than the CSV reader's limit of {long[1]} bytes ({long[2]} bytes)"
    elif fields and original and not original[1].strip():
        cause = f"is blank but for spaces, where the header has {fields[1]} fields"
    elif fields:
        cause = f"has {fields[2]} field(s) where the header has {fields[1]}"
    else:  # DuckDB states the cause last, before its "Possible fixes"
        said = [ln.strip() for ln in text.split("\nPossible", 1)[0].splitlines() if ln.strip()]
        cause = f"cannot be read: {said[-1]}"
    return f"{file[1].strip() if file else 'a CSV file'}: line {where[1]} {cause}"


class DuckDBEngine:
    """``memory_limit`` like '64MB' or '4GB' (default: DuckDB's, 80% of RAM); ``spill_dir`` for
    what does not fit (default: a temporary folder, removed afterwards); ``threads`` (default: all).

    Parameters
    ----------
    memory_limit : str, optional
        DuckDB's memory limit, like ``"4GB"``.
    spill_dir : str or Path, optional
        Where what does not fit in memory is spilled.
    threads : int, optional
        DuckDB's threads.
    """

    name = "duckdb"

    def __init__(self, *, memory_limit: str | None = None, spill_dir: str | Path | None = None,
                 threads: int | None = None):
        self.memory_limit = memory_limit
        self.spill_dir = spill_dir
        # checked here: 0 would otherwise mean DuckDB's default (every core) without a word
        self.threads = None if threads is None else validate_int(threads, "threads", low=1)
        # DuckDB's CSV reader takes a 32 MB buffer per file by default, which alone breaks a small
        # limit; a sixteenth of the limit (at least 4 MB: lines up to 2 MB must fit) leaves room.
        limit = _bytes(memory_limit) if memory_limit else None
        self.csv_buffer = None if limit is None else int(min(32 << 20, max(4 << 20, limit // 16)))
        # Parquet keeps a row group per thread in memory while writing: small ones under a small limit
        self.staging_rows = 122_880 if limit is None else int(min(122_880, max(2_048, limit // 4096)))

    def _connect(self, spill: str):
        try:
            import duckdb  # heavy: duckdb, for this engine only
        except ImportError:  # pragma: no cover - duckdb is a dependency
            raise EngineError("the duckdb engine needs the 'duckdb' package", parameter="engine") from None
        config: dict[str, str | bool | int | float | list[str]] = {"temp_directory": spill}
        if self.memory_limit:
            config["memory_limit"] = str(self.memory_limit)
        if self.threads:
            config["threads"] = int(self.threads)
        try:
            con = duckdb.connect(config=config)
        except duckdb.Error as exc:
            raise EngineError(f"DuckDB rejected the settings {config}: {exc}") from None
        # Row order means nothing in a release (keeping it would even help linking rows back to
        # the input); dropping it lets COPY stream with less memory.
        con.execute("SET enable_progress_bar = true; SET enable_progress_bar_print = false; "
                    "SET preserve_insertion_order = false")
        return con

    def _run(self, work_on, source: Source | None, progress=None, should_stop=None, tables=(), writing=None):
        """Call ``work_on(connection)`` on a fresh connection in a thread, reporting the running
        query's progress and interrupting it when ``should_stop()`` says so."""
        import duckdb  # heavy: duckdb, for this engine only

        try:
            spill_folder = tempfile.TemporaryDirectory(prefix="microrelease-spill-", dir=self.spill_dir)
        except OSError as exc:  # a spill_dir that does not exist or that we may not write
            raise EngineError(f"cannot make a spill folder in {self.spill_dir or tempfile.gettempdir()}: "
                              f"{exc.strerror or exc}", parameter="spill_dir") from None
        with spill_folder as spill:
            con = self._connect(spill)
            for name, frame in tables:
                con.register(name, frame)
            result: dict = {}
            halt = threading.Event()

            def work():
                try:
                    result["value"] = work_on(_Halting(con, halt))
                except Exception as exc:  # re-raised in the caller's thread
                    result["error"] = exc
                finally:
                    done.set()

            # An Event, not Thread.join: a join interrupted by a signal may not wait again.
            done = threading.Event()
            threading.Thread(target=work, daemon=True).start()
            cancelled = False
            try:
                while not done.wait(0.1):
                    if should_stop is not None and not cancelled and should_stop():
                        halt.set()
                        con.interrupt()
                        cancelled = True
                    if progress is not None and not done.is_set():
                        finished = con.query_progress()
                        if finished >= 0:
                            progress(min(finished, 100.0) / 100.0)
            except BaseException:  # Ctrl-C or SIGTERM: stop the work before its spill folder goes
                halt.set()
                while not done.is_set():
                    con.interrupt()
                    done.wait(0.1)
                raise
            finally:
                con.close()
        error = result.get("error")
        if cancelled:
            raise Cancelled("the DuckDB query was cancelled")
        if isinstance(error, duckdb.IOException) and writing is not None:
            raise OutputError(f"cannot write {writing}: {str(error).splitlines()[0]}") from None
        if isinstance(error, duckdb.Error):
            where = f" reading {source.description}" if source is not None else ""
            raise DataError(_csv_error(str(error)) or f"DuckDB failed{where}: {str(error).splitlines()[0]}") from None
        if error is not None:
            raise error
        if progress is not None:
            progress(1.0)
        return result.get("value")

    def scan(self, source: Source) -> str:
        """The table function reading every file of ``source``."""
        files = "[" + ", ".join(_literal(str(p)) for p in source.paths) + "]"
        columns = source.columns()  # the reading rule, before DuckDB's own (which words errors its way)
        if source.format == "parquet":
            return f"read_parquet({files}, union_by_name = true)"
        # The header read by Python fixes the columns: no sniffing, so a ragged row is an error
        # naming its line instead of a different guess of the layout. No union_by_name: it makes
        # DuckDB sniff each file, and a sniffing error names no line (CSV partitions share one
        # header, in order: Source.columns checks it).
        types = "{" + ", ".join(f"{_literal(c)}: 'VARCHAR'" for c in columns) + "}"
        buffer = f", buffer_size = {self.csv_buffer}" if self.csv_buffer else ""
        return (f"read_csv({files}, header = true, auto_detect = false, columns = {types}, "
                f"delim = {_literal(source.sep)}, quote = '\"', escape = '\"', "
                f"strict_mode = true{buffer})")

    @staticmethod
    def _types(con, relation: str) -> dict[str, str]:
        rows = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        return {name: kind for name, kind, *_ in rows}

    def frequency(self, source, qi, *, progress=None, should_stop=None) -> pa.Table:
        if source.frame is not None:
            raise EngineError("the duckdb engine reads files; use engine='pandas' for a DataFrame", parameter="engine")
        relation = self.scan(source)

        def work_on(con):
            types = self._types(con, relation)
            texts = ", ".join(f"{_text(q, types[q])} AS {quote(q)}" for q in qi)
            return con.sql(f"SELECT {texts}, count(*) AS {quote(COUNT)} FROM {relation} GROUP BY ALL").to_arrow_table()

        return self._run(work_on, source, progress, should_stop)

    def release(self, source, plan: ReleasePlan, out: Path, *, progress=None, should_stop=None) -> None:
        relation = self.scan(source)
        # Labels as categories: DuckDB reads them as ENUMs and sorts them as small integers (the
        # random order of a 50M-row release costs 5x less time and 3x less memory than as text).
        # The bucket path sorts small pieces, and its streamed staging pass keeps within a small
        # memory limit only with plain text.
        buckets = self.shuffle_buckets(source)
        tables = [(f"__level{i}", _labels(table, category=buckets == 1)) for i, table in enumerate(plan.level_tables)]
        if len(plan.suppressed):
            tables.append(("__suppressed", plan.suppressed))
        def options(header: bool = True) -> str:
            if plan.format == "parquet":
                return "FORMAT parquet"
            return f"FORMAT csv, HEADER {str(header).lower()}, DELIMITER {_literal(plan.sep)}"

        def work_on(con):
            types = self._types(con, relation)
            picks = [f"l{plan.qi.index(c)}.label" if c in plan.qi
                     else _escaped(f"t.{quote(c)}", types[c]) if plan.escape else f"t.{quote(c)}"
                     for c in plan.columns]
            joins = " ".join(f"JOIN __level{i} AS l{i} ON {_text(name, types[name], 't')} = l{i}.raw"
                             for i, name in enumerate(plan.qi))
            query = (f"SELECT {', '.join(f'{p} AS {quote(c)}' for p, c in zip(picks, plan.columns, strict=True))} "
                     f"FROM {relation} AS t {joins}")
            if len(plan.suppressed):
                match = " AND ".join(f"s.c{i} = l{i}.code" for i in range(len(plan.qi)))
                query += f" WHERE NOT EXISTS (SELECT 1 FROM __suppressed AS s WHERE {match})"
            # DuckDB seeds random() from the OS's entropy: the order carries nothing of the input's.
            if buckets == 1:
                con.execute(f"COPY ({query} ORDER BY random()) TO {_literal(str(out))} ({options()})")
                return
            # Larger than the sort's memory: rows go to random buckets (one streamed pass), then each
            # bucket is sorted by random() on its own and the buckets are written one after another.
            staging = out.with_name(out.name + ".buckets.parquet")
            made.append(staging)
            con.execute(f"COPY (SELECT *, CAST(floor(random() * {buckets}) AS INTEGER) AS {quote(bucket)} FROM ({query})) "
                        f"TO {_literal(str(staging))} (FORMAT parquet, ROW_GROUP_SIZE {self.staging_rows})")
            for b in range(buckets):
                part = out.with_name(f"{out.name}.bucket{b}")
                made.append(part)
                con.execute(f"COPY (SELECT * EXCLUDE ({quote(bucket)}) FROM read_parquet({_literal(str(staging))}) "
                            f"WHERE {quote(bucket)} = {b} ORDER BY random()) TO {_literal(str(part))} "
                            f"({options(header=b == 0)})")
                parts.append(part)

        bucket = plan.unused_name(BUCKET)
        made: list[Path] = []  # this call's temporary files, removed in every case
        parts: list[Path] = []
        try:
            self._run(work_on, source, progress, should_stop, tables, writing=out)
            if parts:
                concatenate(parts, out, plan.format)
        finally:
            for path in made:
                path.unlink(missing_ok=True)

    def shuffle_buckets(self, source: Source) -> int:
        """How many buckets the random order needs so that each one's sort fits a quarter of memory."""
        limit = _bytes(self.memory_limit) if self.memory_limit else int(0.8 * _physical_memory())
        return max(1, -(-source.sort_bytes_estimate() // max(1, limit // 4)))

    def formula_cells(self, source: Source, columns: Sequence[str]) -> dict[str, tuple[int, int]]:
        relation = self.scan(source)

        def work_on(con):
            types = self._types(con, relation)
            text = [c for c in columns if types[c].upper() == "VARCHAR"]
            if not text:
                return {}
            # The text columns unpivoted to (column, cell) in batches, one set of expressions for all:
            # a query per column (joined by UNION ALL) planned thousands of subqueries (10,000 columns:
            # killed at 24 GB), and a count per column in one SELECT still cost the planner milliseconds per
            # column. The cheap test on the first character comes first: the regular expressions only see
            # the cells it leaves (seconds per column at 50M rows otherwise).
            may_start = " OR ".join(f"starts_with(v, {_literal(ch)})" for ch in (*FORMULA_START, QUOTE))
            found = {}
            for start in range(0, len(text), FORMULA_BATCH):
                batch = text[start:start + FORMULA_BATCH]
                cells = (f"SELECT c, v FROM (UNPIVOT (SELECT {', '.join(quote(c) for c in batch)} FROM {relation}) "
                         f"ON COLUMNS(*) INTO NAME c VALUE v) WHERE {may_start}")
                rows = con.execute(f"SELECT c, count_if({_formula('v')}), count_if(starts_with(v, {_literal(QUOTE)}) "
                                   f"AND {_formula('substr(v, 2)')}) FROM ({cells}) GROUP BY c").fetchall()
                found.update({str(c): (int(u or 0), int(e or 0)) for c, u, e in rows})
            return {c: v for c, v in found.items() if any(v)}

        return self._run(work_on, source)


def _labels(table, *, category: bool):
    """A level table for DuckDB: labels as text, or as categories listing only the labels of written rows.

    DuckDB writes an ENUM's entries into a Parquet column's dictionary pages (up to the last one a row
    group uses; the unused ones as ''): a label of suppressed rows only would be published there. Such
    a label is left missing; its rows are the suppressed classes' and are not written.
    """
    if not category:
        return table.astype({"raw": object, "label": object})
    written = table["label"].where(table["written"])
    return table.assign(raw=table["raw"].astype(object),
                        label=pd.Categorical(written, categories=pd.unique(written.dropna())))


QUOTE = "'"
FORMULA_BATCH = 1024  # text columns unpivoted per scan of the file


class _Halting:
    """A connection that refuses new statements once ``halt`` is set: an interrupt stops the running
    statement, and this stops a multi-statement job from going on to the next one."""

    def __init__(self, con, halt: threading.Event):
        self._con, self._halt = con, halt

    def _stop_if_asked(self) -> None:
        if self._halt.is_set():
            raise Cancelled("the DuckDB work was stopped")

    def execute(self, *args):
        self._stop_if_asked()
        return self._con.execute(*args)

    def sql(self, *args):
        self._stop_if_asked()
        return self._con.sql(*args)

    def __getattr__(self, name):
        return getattr(self._con, name)
BUCKET = "__microrelease_bucket"


def _physical_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _formula(expr: str) -> str:
    """SQL: a spreadsheet would run the text ``expr`` as a formula (see ``microrelease.core.release.cells``)."""
    return f"(regexp_matches({expr}, {_literal(FORMULA)}) AND NOT regexp_full_match({expr}, {_literal(NUMBER)}))"


def _escaped(expr: str, kind: str) -> str:
    if kind.upper() != "VARCHAR":
        return expr
    return f"CASE WHEN {_formula(expr)} THEN {_literal(QUOTE)} || {expr} ELSE {expr} END"
