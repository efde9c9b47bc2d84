"""The DuckDB engine: rows stay in their CSV / Parquet files; DuckDB (embedded) streams them.

DuckDB reads the files itself, in parallel, without loading the rows into Python. With a memory
limit and a spill directory, files larger than memory work: a group-by or join that outgrows the
limit spills to disk instead of failing. Progress comes from DuckDB's own query progress, and
cancel interrupts the running query.
"""

from __future__ import annotations

import re
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa

from microrelease.core.engines.base import COUNT, ReleasePlan, Written
from microrelease.core.engines.source import Source
from microrelease.core.exceptions import Cancelled, DataError, EngineError, InvalidParameterError

_FLOATS = ("FLOAT", "DOUBLE", "REAL")


_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
          "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def _bytes(text: str) -> int:
    """'64MB' -> 64000000 (DuckDB's units: KB/MB/GB decimal, KiB/MiB/GiB binary)."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([A-Za-z]*)\s*", str(text))
    if not match or match.group(2).upper() not in _UNITS:
        raise InvalidParameterError(f"The 'memory_limit' parameter must be like '64MB' or '4GB'. Got {text!r} instead.")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _text(column: str, kind: str, alias: str = "") -> str:
    """SQL for the text of a value, equal to :func:`microrelease.core.dataset.as_text`."""
    c = f"{alias}.{quote(column)}" if alias else quote(column)
    if kind.upper() in _FLOATS:
        return (f"CASE WHEN {c} IS NULL OR isnan({c}) THEN '' "
                f"WHEN isfinite({c}) AND abs({c}) < 9007199254740992 AND {c} = trunc({c}) "
                f"THEN CAST(CAST({c} AS BIGINT) AS VARCHAR) ELSE CAST({c} AS VARCHAR) END")
    return f"COALESCE(CAST({c} AS VARCHAR), '')"


class DuckDBEngine:
    """``memory_limit`` like '64MB' or '4GB' (default: DuckDB's, 80% of RAM); ``spill_dir`` for
    what does not fit (default: a temporary folder, removed afterwards); ``threads`` (default: all)."""

    name = "duckdb"

    def __init__(self, *, memory_limit: str | None = None, spill_dir: str | Path | None = None,
                 threads: int | None = None):
        self.memory_limit = memory_limit
        self.spill_dir = spill_dir
        self.threads = threads
        # DuckDB's CSV reader takes a 32 MB buffer per file by default, which alone breaks a small
        # limit; a sixteenth of the limit (at least 4 MB: lines up to 2 MB must fit) leaves room.
        limit = _bytes(memory_limit) if memory_limit else None
        self.csv_buffer = None if limit is None else int(min(32 << 20, max(4 << 20, limit // 16)))

    def _connect(self, spill: str):
        try:
            import duckdb
        except ImportError:  # pragma: no cover - duckdb is a dependency
            raise EngineError("the duckdb engine needs the 'duckdb' package") from None
        config = {"temp_directory": spill}
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

    def _run(self, work_on, source: Source | None, progress=None, should_stop=None, tables=()):
        """Call ``work_on(connection)`` on a fresh connection in a thread, reporting the running
        query's progress and interrupting it when ``should_stop()`` says so."""
        import duckdb

        with tempfile.TemporaryDirectory(prefix="microrelease-spill-", dir=self.spill_dir) as spill:
            con = self._connect(spill)
            for name, frame in tables:
                con.register(name, frame)
            result: dict = {}

            def work():
                try:
                    result["value"] = work_on(con)
                except Exception as exc:  # re-raised in the caller's thread
                    result["error"] = exc

            thread = threading.Thread(target=work, daemon=True)
            thread.start()
            cancelled = False
            while thread.is_alive():
                thread.join(0.1)
                if should_stop is not None and not cancelled and should_stop():
                    con.interrupt()
                    cancelled = True
                if progress is not None and thread.is_alive():
                    done = con.query_progress()
                    if done >= 0:
                        progress(min(done, 100.0) / 100.0)
            con.close()
        error = result.get("error")
        if cancelled:
            raise Cancelled("the DuckDB query was cancelled")
        if isinstance(error, duckdb.Error):
            where = f" reading {source.description}" if source is not None else ""
            raise DataError(f"DuckDB failed{where}: {str(error).splitlines()[0]}") from None
        if error is not None:
            raise error
        if progress is not None:
            progress(1.0)
        return result.get("value")

    def scan(self, source: Source) -> str:
        """The table function reading every file of ``source``."""
        files = "[" + ", ".join(_literal(str(p)) for p in source.paths) + "]"
        if source.format == "parquet":
            return f"read_parquet({files}, union_by_name = true)"
        # The header read by Python fixes the columns: no sniffing, so a ragged row is an error
        # naming its line instead of a different guess of the layout.
        columns = "{" + ", ".join(f"{_literal(c)}: 'VARCHAR'" for c in source.columns()) + "}"
        buffer = f", buffer_size = {self.csv_buffer}" if self.csv_buffer else ""
        return (f"read_csv({files}, header = true, auto_detect = false, columns = {columns}, "
                f"delim = {_literal(source.sep)}, quote = '\"', escape = '\"', union_by_name = true, "
                f"strict_mode = true{buffer})")

    @staticmethod
    def _types(con, relation: str) -> dict[str, str]:
        rows = con.execute(f"DESCRIBE SELECT * FROM {relation}").fetchall()
        return {name: kind for name, kind, *_ in rows}

    def frequency(self, source, qi, *, progress=None, should_stop=None) -> pa.Table:
        if source.frame is not None:
            raise EngineError("the duckdb engine reads files; use engine='pandas' for a DataFrame")
        relation = self.scan(source)

        def work_on(con):
            types = self._types(con, relation)
            texts = ", ".join(f"{_text(q, types[q])} AS {quote(q)}" for q in qi)
            return con.sql(f"SELECT {texts}, count(*) AS {quote(COUNT)} FROM {relation} GROUP BY ALL").to_arrow_table()

        return self._run(work_on, source, progress, should_stop)

    def release(self, source, plan: ReleasePlan, out: Path, *, progress=None, should_stop=None) -> None:
        relation = self.scan(source)
        tables = [(f"__level{i}", table.astype({"raw": object, "label": object}))
                  for i, table in enumerate(plan.level_tables)]
        if len(plan.suppressed):
            tables.append(("__suppressed", plan.suppressed))
        picks = [f"l{plan.qi.index(c)}.label AS {quote(c)}" if c in plan.qi else f"t.{quote(c)}" for c in plan.columns]
        if plan.format == "parquet":
            options = "FORMAT parquet"
        else:
            options = f"FORMAT csv, HEADER true, DELIMITER {_literal(plan.sep)}"

        def work_on(con):
            types = self._types(con, relation)
            joins = " ".join(f"JOIN __level{i} AS l{i} ON {_text(name, types[name], 't')} = l{i}.raw"
                             for i, name in enumerate(plan.qi))
            query = f"SELECT {', '.join(picks)} FROM {relation} AS t {joins}"
            if len(plan.suppressed):
                match = " AND ".join(f"s.c{i} = l{i}.code" for i in range(len(plan.qi)))
                query += f" WHERE NOT EXISTS (SELECT 1 FROM __suppressed AS s WHERE {match})"
            con.execute(f"COPY ({query}) TO {_literal(str(out))} ({options})")

        self._run(work_on, source, progress, should_stop, tables)

    def inspect(self, out: Path, qi: Sequence[str], *, fmt: str = "csv", sep: str = ",") -> Written:
        back = Source((Path(out),), fmt, sep)
        relation = self.scan(back)
        groups = ", ".join(quote(q) for q in qi)

        def work_on(con):
            columns = tuple(self._types(con, relation))
            classes, rows, smallest = con.execute(
                f"SELECT count(*), COALESCE(sum(n), 0), COALESCE(min(n), 0) "
                f"FROM (SELECT count(*) AS n FROM {relation} GROUP BY {groups})").fetchone()
            return Written(int(rows), int(classes), int(smallest), columns)

        return self._run(work_on, back)
