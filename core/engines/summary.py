"""The one pass over the rows: a table reduced to its frequency set, wherever the rows live.

Samarati §4.1: every question about k-anonymity at any node is answered by the frequency set (the
distinct QI combinations with their counts). ``summarize`` has an engine compute it (pandas,
DuckDB or Dask), checks every value against its QI's hierarchy, and encodes it. The result,
``TableSummary``, is all the lattice search needs (``microrelease.core.build_profile``
accepts it like a ``Dataset``); the rows are read again only to release.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from microrelease.core.data.dataset import resolve_hierarchies
from microrelease.core.data.roles import Schema
from microrelease.core.engines import COUNT, Engine, Source, make_engine
from microrelease.core.exceptions import CoverageError, DataError
from microrelease.core.lattice.frequency import FrequencySet, FrequencySource
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy


@dataclass(frozen=True, eq=False)
class TableSummary(FrequencySource):
    """A table's frequency set, hierarchies (in QI order) and provenance; no rows.

    Parameters
    ----------
    source : Source
        Where the rows are.
    schema : Schema
        The columns' roles.
    hierarchies : tuple of Hierarchy
        One per quasi-identifier, in QI order.
    frequency : FrequencySet
        The frequency set of the quasi-identifiers.
    columns : tuple of str
        The table's columns.
    engine : Engine
        The engine that read the rows.
    missing_counts : dict of str to int, optional
        Per column, its count of missing values.
    checksum : str, optional
        The input's checksum.
    blank_lines_skipped : int, default 0
        Blank lines skipped.
    """

    source: Source
    schema: Schema
    hierarchies: tuple[Hierarchy, ...]
    frequency: FrequencySet
    columns: tuple[str, ...]
    engine: Engine
    missing_counts: dict[str, int] = field(default_factory=dict)
    checksum: str = ""
    blank_lines_skipped: int = 0  # blank lines of the CSV files, not rows (the report says how many)

    @property
    def rows(self) -> Source:
        return self.source


def encode_frequency(table: pa.Table, hierarchies: Sequence[Hierarchy]) -> tuple[FrequencySet, tuple, dict]:
    """Text frequency set (an Arrow table from an engine) -> ground codes, with the missing-value
    rule and a coverage check.

    Each column is dictionary-encoded first, so only its distinct values become Python strings: a
    frequency set of a million combinations stays a few tens of MB. Returns the encoded set (tuples
    sorted), the hierarchies (extended where values are missing) and the rows with a missing value
    per QI.
    """
    counts = table.column(COUNT).to_numpy().astype(np.int64)
    codes = np.empty((table.num_rows, len(hierarchies)), dtype=np.int32)
    used, missing_counts = [], {}
    for i, h in enumerate(hierarchies):
        encoded = pc.dictionary_encode(table.column(h.attribute).combine_chunks())
        values = encoded.dictionary.to_pylist()
        index = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        rows_per_value = np.bincount(index, weights=counts, minlength=len(values)).astype(np.int64)
        if MISSING in values:
            missing_counts[h.attribute] = int(rows_per_value[values.index(MISSING)])
            h = h.with_missing()
        ground = np.array([h.index.get(v, -1) for v in values], dtype=np.int32)
        if (ground < 0).any():
            raise CoverageError(h.attribute, {v: int(rows_per_value[j]) for j, v in enumerate(values) if ground[j] < 0})
        codes[:, i] = ground[index]
        used.append(h)
    tuples, inverse = np.unique(codes, axis=0, return_inverse=True)
    merged = np.bincount(inverse.reshape(-1), weights=counts, minlength=len(tuples)).astype(np.int64)
    return FrequencySet(tuples.astype(np.int32), merged), tuple(used), missing_counts


def summarize(
    data: str | Path | Sequence[str | Path] | pd.DataFrame | Source,
    *,
    qi: Sequence[str],
    hierarchies: Mapping[str, Hierarchy | str | Path] | None = None,
    hierarchy_dir: str | Path | None = None,
    identifiers: Sequence[str] = (),
    sensitive: Sequence[str] = (),
    engine: str | Engine = "duckdb",
    engine_options: Mapping[str, object] | None = None,
    sep: str | None = None,
    checksum: bool = True,
    progress=None,
    should_stop=None,
) -> TableSummary:
    """Read the rows once with ``engine`` and return the table's ``TableSummary``.

    ``data``: a DataFrame (engine 'pandas'), a CSV or Parquet file, a folder of partitions, a glob
    pattern or a list of files. Every file is checked for the role columns first (a column missing
    from one partition is named with its file); the hierarchies are resolved before the rows are read.

    Parameters
    ----------
    data : str, Path, sequence of paths, pandas.DataFrame or Source
        The rows: files, a DataFrame or a source.
    qi : sequence of str
        The quasi-identifiers.
    hierarchies : mapping, optional
        Per quasi-identifier, a ``Hierarchy`` or an ARX file.
    hierarchy_dir : str or Path, optional
        A folder with the hierarchy files.
    identifiers : sequence of str, optional
        Direct identifiers.
    sensitive : sequence of str, optional
        Sensitive attributes.
    engine : str or Engine, default "duckdb"
        The engine of the one pass (a key of ``ENGINES``).
    engine_options : mapping, optional
        Options of the engine.
    sep : str, optional
        The files' separator.
    checksum : bool, default True
        Compute the input's checksum.
    progress : callable, optional
        Called with the progress.
    should_stop : callable, optional
        Polled; when it returns true the pass raises ``Cancelled``.

    Returns
    -------
    TableSummary
        The frequency set and schema, without the rows in memory.
    """
    source = data if isinstance(data, Source) else Source.of(data, sep=sep)
    if source.frame is not None and isinstance(engine, str) and engine != "pandas":
        engine = "pandas"  # a DataFrame is already in memory: no other engine would help
    engine = make_engine(engine, **dict(engine_options or {}))
    schema = Schema(tuple(qi), tuple(identifiers), tuple(sensitive))
    columns = source.columns()
    schema.validate_columns(columns)
    source.validate_types(schema.quasi_identifiers)
    resolved = resolve_hierarchies(schema, hierarchies, hierarchy_dir)
    frame = engine.frequency(source, schema.quasi_identifiers, progress=progress, should_stop=should_stop)
    if frame.num_rows == 0:
        raise DataError(f"{source.description} has no rows")
    freq, used, missing_counts = encode_frequency(frame, resolved)
    return TableSummary(source, schema, used, freq, tuple(columns), engine, missing_counts,
                        source.checksum() if checksum else "", source.blank_lines())
