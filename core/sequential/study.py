"""Loading a study (``study_config``) into one
``SequentialData``.

- The entity table is read as in the one-table model (its QIs, identifiers, ``keep``, ``drop``).
- Each satellite table is checked (every column is the entity id, a QI, an identifier or dropped;
  refused by name otherwise; no row of an unknown or blank entity id) and encoded
  (``satellites``).
- The event tables are merged into one event stream: a *visit* is an entity's events that share a
  sequence-key value, **across** the event tables (a visit id in diagnoses and in prescriptions is one
  visit); within it, events are ordered by time, then by table (in the study's order), then by input
  row. Each event is one event code of the in-step hierarchy of
  ``event_codes``. Time columns are parsed per table, so an error
  names its table, and must be of one kind (numbers, dates or timestamps) across the study.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.data.dataset import resolve_hierarchies
from microrelease.core.data.reading import as_text, read_table
from microrelease.core.data.roles import Schema
from microrelease.core.exceptions import DataError, MicroreleaseError
from microrelease.core.lattice.hierarchies import MISSING
from microrelease.core.sequential.event_codes import EventColumns, event_hierarchy, event_labels
from microrelease.core.sequential.rt_data import (
    CODE,
    DROPPED,
    ENTITY_ID,
    IDENTIFIER,
    KEPT,
    QI,
    ROW_QI,
    SEQUENCE_KEY,
    TIME,
    SequentialData,
)
from microrelease.core.sequential.satellites import encode_satellite
from microrelease.core.sequential.study_config import Study, TableSpec
from microrelease.core.sequential.times import parse_times

# the merged event stream's columns (never written: the release splits it back into its tables)
VISIT, WHEN, EVENT = "\x1fvisit", "\x1ftime", "\x1fevent"


@dataclass(frozen=True)
class EventTable:
    """One event table of a study, as the release writes it back."""

    name: str
    id: str
    sequence_key: str
    time: str
    codes: tuple[str, ...]
    rows: int  # input events


@contextmanager
def _table(spec: TableSpec) -> Iterator[None]:
    """Errors met while reading a table name it and the study file (not a one-table flag)."""
    try:
        yield
    except MicroreleaseError as exc:
        if exc.parameter == "config":
            raise
        raise DataError(f"{spec.name!r} ({spec.file.name}): {exc}", parameter="config") from exc


def _roles(spec: TableSpec, columns: list[str], fixed: list[tuple[str, str]], keepable: bool = False
           ) -> dict[str, str]:
    """Each column's role; DataError naming a column with none, two, or absent from the table."""
    declared: dict[str, str] = {}
    for column, role in fixed:
        if column in declared:
            raise DataError(f"column {column!r} of {spec.name!r} is given twice (as {declared[column]} and as {role})",
                            parameter="config")
        declared[column] = role
    for role, names in ((IDENTIFIER, spec.identifiers), (DROPPED, spec.drop)):
        for c in names:
            if c in declared:
                raise DataError(f"column {c!r} of {spec.name!r} is given twice (as {declared[c]} and as {role})",
                                parameter="config")
            declared[c] = role
    absent = [c for c in declared if c not in columns]
    if absent:
        raise DataError(f"{spec.name!r} ({spec.file.name}) has no column(s) {absent}; it has {columns}",
                        parameter="config")
    unnamed = [c for c in columns if c not in declared]
    if unnamed:
        where = "'keep' (released as is, without protection), 'identifiers' or 'drop'" if keepable \
            else "'identifiers' or 'drop'"
        raise DataError(f"column(s) {unnamed} of {spec.name!r} have no role: name them in {where} (no column is "
                        "left out unnamed)", parameter="config")
    return {c: declared[c] for c in columns}


def _positions(frame: pd.DataFrame, spec: TableSpec, ids: pd.Index) -> np.ndarray:
    """Each row's entity position; DataError for a blank or unknown entity id, naming the table."""
    text = as_text(frame[spec.id])
    blank = int((text == MISSING).sum())
    if blank:
        raise DataError(f"{blank} row(s) of {spec.name!r} have a blank {spec.id!r}", parameter="config")
    position = ids.get_indexer(text)
    if (position < 0).any():
        unknown = sorted(set(text[position < 0]))
        raise DataError(f"{int((position < 0).sum())} row(s) of {spec.name!r} name entities absent from the entity "
                        f"table: {unknown[:10]}", parameter="config")
    return position


def _hierarchies(spec: TableSpec, columns: tuple[str, ...]):
    if not columns:
        return ()
    return resolve_hierarchies(Schema(columns), dict(spec.hierarchies), spec.hierarchy_dir)


def _one_kind_of_time(scales: list) -> None:
    """The event tables' times are read as one column: one kind (integers and other numbers mix, as
    long as the integers stay exact as floats)."""
    kinds = {(s.kind if s.kind != "integers" else "numbers", s.zone) for s, _ in scales}
    if len(kinds) > 1:
        raise DataError("the event tables' times are of different kinds: "
                        f"{ {s.column: s.describe() for s, _ in scales} }; give them one kind", parameter="config")
    if {s.kind for s, _ in scales} == {"integers", "numbers"}:
        big = [s.column for s, exact in scales if s.kind == "integers" and np.abs(exact).max() > 2**53]
        if big:
            raise DataError(f"{big} hold integers beyond 2**53, which other tables' decimal times would make inexact: "
                            "give every table integers, or scale the times", parameter="config")


def load_study(study: Study, tables: Mapping[str, pd.DataFrame] | None = None) -> SequentialData:
    """Read and validate a study's tables (``tables``: frames by table name, instead of its files).

    Parameters
    ----------
    study : Study
        The study, from ``read_study``.
    tables : mapping of str to pandas.DataFrame, optional
        Frames by table name, instead of the study's files.

    Returns
    -------
    SequentialData
        The validated tables.

    Raises
    ------
    DataError
        If a table or column is missing or invalid.
    """
    given = dict(tables or {})

    def frame(spec: TableSpec) -> pd.DataFrame:
        if spec.name in given:
            return given[spec.name].reset_index(drop=True)
        if not spec.file.is_file():
            what = "a folder" if spec.file.is_dir() else "not found"
            raise DataError(f"{spec.name!r}: 'file' {str(spec.file)!r} is {what} (paths are relative to the study "
                            "file; use / between folders)", parameter="config")
        with _table(spec):
            return read_table(spec.file).reset_index(drop=True)

    ent = study.entities
    entities = frame(ent)
    if ent.id not in entities.columns:
        raise DataError(f"the entity table {ent.name!r} has no id column {ent.id!r}; it has {list(entities.columns)}",
                        parameter="config")
    # checked here as well as by the model, so that an error names the table and the study file
    _roles(ent, list(entities.columns), [(ent.id, ENTITY_ID), *((c, QI) for c in ent.qi), *((c, KEPT) for c in ent.keep)],
           keepable=True)
    ids = pd.Index(as_text(entities[ent.id]))
    if ids.has_duplicates:
        raise DataError(f"entity ids repeat in {ent.name!r} ({ent.id!r}): {sorted(set(ids[ids.duplicated()]))[:10]}",
                        parameter="config")
    roles: dict[str, dict[str, str]] = {}
    satellites = []
    for spec in study.satellites:
        table = frame(spec)
        roles[spec.name] = _roles(spec, list(table.columns), [(spec.id, ENTITY_ID), *((c, ROW_QI) for c in spec.qi)])
        if not spec.qi:
            raise DataError(f"the satellite {spec.name!r} names no 'qi': drop the table, or name its QIs",
                            parameter="config")
        with _table(spec):
            satellites.append(encode_satellite(spec.name, table, _positions(table, spec, ids), len(ids), spec.qi,
                                               _hierarchies(spec, spec.qi)))
    merged, infos, columns, scales = [], [], [], []
    for spec in study.events:
        table = frame(spec)
        if not spec.codes:
            raise DataError(f"the event table {spec.name!r} names no 'codes'", parameter="config")
        roles[spec.name] = _roles(spec, list(table.columns), [(spec.id, ENTITY_ID), (spec.sequence_key, SEQUENCE_KEY),
                                                              (spec.time, TIME), *((c, CODE) for c in spec.codes)])
        position = _positions(table, spec, ids)
        visit = as_text(table[spec.sequence_key])
        if (visit == MISSING).any():
            raise DataError(f"{int((visit == MISSING).sum())} event(s) of {spec.name!r} have a blank "
                            f"{spec.sequence_key!r}", parameter="config")
        time = as_text(table[spec.time])
        with _table(spec):
            exact, scale = parse_times(time, f"{spec.name}.{spec.time}")
            cols = EventColumns(spec.name, spec.codes, _hierarchies(spec, spec.codes))
            labels = event_labels(table, cols)
        if len(table):  # an empty table has no kind of time
            scales.append((scale, exact))
        columns.append(cols)
        merged.append(pd.DataFrame({ent.id: ids[position], VISIT: visit.to_numpy(), WHEN: time.to_numpy(),
                                    EVENT: labels.to_numpy()}))
        infos.append(EventTable(spec.name, spec.id, spec.sequence_key, spec.time, spec.codes, len(table)))
    _one_kind_of_time(scales)
    events = pd.concat(merged, ignore_index=True)
    codes = event_hierarchy(columns, events[EVENT].tolist())
    return SequentialData(entities, events, ent.id, ent.qi, ent.identifiers,
                          _hierarchies(ent, ent.qi), codes, VISIT, WHEN, EVENT, ent.keep, ent.drop,
                          tuple(satellites), tuple(infos), roles, ent.name)
