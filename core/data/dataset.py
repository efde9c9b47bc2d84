"""A table with attribute roles and one hierarchy per quasi-identifier, validated and encoded.

Values are kept as text, exactly as read, so that a released file reproduces every untouched cell.
Missing values (empty cells; NaN/None in a DataFrame) follow the rule of
``microrelease.core.lattice.hierarchies.MISSING``: a value of their own unless the hierarchy maps ``""``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.reading import as_text, file_checksum, frame_checksum, read_table, validate_names
from microrelease.core.data.roles import Schema
from microrelease.core.engines.source import Source
from microrelease.core.exceptions import CoverageError, DataError
from microrelease.core.lattice.frequency import FrequencySet, FrequencySource, frequency_set
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy, find_hierarchy_file, read_arx


@dataclass(frozen=True, eq=False)
class Dataset(FrequencySource):
    """A table, its column roles and one hierarchy per QI (in QI order), checked for coverage.

    Raises DataError for an empty table or unknown columns, and CoverageError listing (with row
    counts) every QI value that its hierarchy lacks.

    Parameters
    ----------
    table : pandas.DataFrame
        The rows, every column as text.
    schema : Schema
        The columns' roles.
    hierarchies : tuple of Hierarchy
        One hierarchy per quasi-identifier, in QI order.
    checksum : str, optional
        The input file's checksum.
    source : str, optional
        Where the table was read from.
    blank_lines_skipped : int, default 0
        Blank lines of the input file that were skipped.
    hierarchy_dir : str, optional
        The folder the hierarchies were read from.
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
        self.schema.validate_columns(list(self.table.columns))
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

    A QI's hierarchy comes from ``hierarchies[name]`` (a ``Hierarchy`` or an ARX file path), or
    else from ``hierarchy_dir`` (``*_hierarchy_<name>.csv`` or ``<name>.csv``).

    Parameters
    ----------
    data : str, Path or pandas.DataFrame
        A CSV/TSV file (the separator is detected unless ``sep`` is given) or a DataFrame.
    qi : sequence of str
        The quasi-identifiers (Samarati's QI), each needing a hierarchy.
    hierarchies : mapping, optional
        Per quasi-identifier, a ``Hierarchy`` or the path of an ARX hierarchy file.
    hierarchy_dir : str or Path, optional
        A folder where the hierarchy files not given in ``hierarchies`` are looked for.
    identifiers : sequence of str, optional
        Direct identifiers (removed from every release).
    sensitive : sequence of str, optional
        Sensitive attributes (kept as is, protected by the privacy models).
    sep : str, optional
        The file's separator, if not detected.

    Returns
    -------
    Dataset
        The validated table with its schema and hierarchies.

    Raises
    ------
    DataError
        If the table or a column is unreadable or missing.
    CoverageError
        If a hierarchy does not cover a value of its attribute.
    """
    schema = Schema(tuple(qi), tuple(identifiers), tuple(sensitive))
    if isinstance(data, pd.DataFrame):
        table, checksum, source = data, "", "<DataFrame>"
        validate_names(source, list(table.columns), part="the frame")  # the rule a CSV's header meets
    else:
        table, checksum, source = read_table(data, sep=sep), file_checksum(data), str(data)
    schema.validate_columns(list(table.columns))
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
