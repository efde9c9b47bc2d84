"""Data with a relational part and a sequential part (US patent 9,230,132; RT-anonymity).

An *entity table* has one row per entity: an id, direct identifiers, relational QIs (each with a
hierarchy) and other attributes. An *event table* has one row per element: the entity id, the
sequence it belongs to (e.g. a visit), its time and a code from a code hierarchy. Each entity
therefore has a sequence of sequences: its visits in time order, each an ordered list of codes.
Events are sorted by (time, input order) here, so the input need not be sorted; a visit's time is
the time of its first event, and it spans its events' times. An entity without events has an empty
sequence (allowed). Times are numbers, ISO dates or ISO timestamps, by the rule of
``microrelease.core.sequential.times``.

**Every input column has one fate** (``column_roles``), and a column with none is refused by name:

- entity table: the entity id (replaced by pseudonyms), the QIs (generalized), the identifiers (never
  written), ``keep`` (released as is, without protection), ``drop`` (not released);
- event table: the entity id, the sequence key, the time and the code (all generalized or replaced),
  identifiers and ``drop`` (not released). Other event columns cannot be kept: a value per event would
  tell the members of a group apart.

``keep=None`` (the API's default) keeps every other entity column, as the column roles then say; the
command line has no such default.

Missing QI values (blank cells) follow the rule of ``microrelease.core.lattice.hierarchies.MISSING``,
as in the lattice commands: a value of their own unless the hierarchy maps ``""``; counted in
``missing_counts``. A blank entity id, sequence key, time or code is refused by name.

Everything is encoded once into flat arrays (CSR: entity -> visits -> codes, with each element's
exact time beside its code) for the compiled cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.dataset import resolve_hierarchies
from microrelease.core.data.reading import as_text, read_table
from microrelease.core.data.roles import Schema
from microrelease.core.exceptions import CoverageError, DataError
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy, read_arx
from microrelease.core.sequential.satellites import SLOTS, slot_codes, slot_hierarchies
from microrelease.core.sequential.times import INTERVAL, TimeScale, parse_times

# what each column of the input is (SequentialData.column_roles)
ENTITY_ID, QI, IDENTIFIER, KEPT, DROPPED = "entity id", "quasi-identifier", "identifier", "kept", "dropped"
SEQUENCE_KEY, TIME, CODE = "sequence key", "time", "code"
ROW_QI = "row quasi-identifier"  # a QI of a satellite table (study.py)


def _blank(values: pd.Series, what: str, column: str, parameter: str) -> None:
    n = int((values == MISSING).sum())
    if n:
        raise DataError(f"{n} {what} have a blank {column!r}", parameter=parameter)


@dataclass(frozen=True, eq=False)
class SequentialData:
    """Entities with relational QIs and visit sequences, validated and encoded.

    Parameters
    ----------
    entities : pandas.DataFrame
        The entity table.
    events : pandas.DataFrame
        The event table.
    entity_id : str
        The entity id column.
    qi : tuple of str
        The relational quasi-identifiers.
    identifiers : tuple of str
        Direct identifiers.
    hierarchies : tuple of Hierarchy
        One per quasi-identifier.
    code_hierarchy : Hierarchy
        The event codes' hierarchy.
    sequence_key : str
        The column grouping events into sequences.
    order_by : str
        The column ordering the events.
    code : str
        The event code column.
    keep : tuple of str, optional
        Entity columns released as is (None: every other one).
    drop : tuple of str, optional
        Columns of either table not released.
    satellites : tuple, optional
        A study's satellite tables.
    event_tables : tuple, optional
        A study's event tables merged into ``events``.
    table_roles : dict, optional
        The roles of those tables' columns.
    name : str, default "entities"
        The entity table's name in reports and output files.
    """

    entities: pd.DataFrame
    events: pd.DataFrame
    entity_id: str
    qi: tuple[str, ...]
    identifiers: tuple[str, ...]
    hierarchies: tuple[Hierarchy, ...]
    code_hierarchy: Hierarchy
    sequence_key: str
    order_by: str
    code: str
    keep: tuple[str, ...] | None = None  # entity columns released as is (None: every other one)
    drop: tuple[str, ...] = ()  # columns of either table not released
    # a study (study.py): satellite tables, and the event tables merged into ``events``, with the
    # roles of their columns; ``name``: the entity table's name in reports and output files
    satellites: tuple = ()
    event_tables: tuple = ()
    table_roles: dict | None = None
    name: str = "entities"
    qi_codes: np.ndarray = field(init=False, repr=False)  # entities × QIs, ground codes
    visit_ptr: np.ndarray = field(init=False, repr=False)  # entity e's visits: visit_ptr[e]:visit_ptr[e+1]
    code_ptr: np.ndarray = field(init=False, repr=False)  # visit v's codes: code_ptr[v]:code_ptr[v+1]
    codes: np.ndarray = field(init=False, repr=False)  # ground code of each element
    times: np.ndarray = field(init=False, repr=False)  # exact time of each element (see times.py)
    visit_time: np.ndarray = field(init=False, repr=False)  # each visit's first time, as a float (for F)
    time_scale: TimeScale = field(init=False, repr=False)
    column_roles: dict = field(init=False, repr=False)  # {"entities": {column: role}, "events": {...}}
    missing_counts: dict = field(init=False, repr=False)  # QI -> entities with a blank value
    # what the cost F compares: the QIs, then each satellite's slots (satellites.py), and their weights
    # in F's relational mean (a QI 1, a slot 1/SLOTS: a satellite column weighs as much as a QI)
    cost_qi_codes: np.ndarray = field(init=False, repr=False)
    cost_hierarchies: tuple[Hierarchy, ...] = field(init=False, repr=False)
    cost_qi_weights: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ents, evs = self.entities.reset_index(drop=True), self.events.reset_index(drop=True)
        roles = _column_roles(self, list(ents.columns), list(evs.columns))
        if self.event_tables:
            roles = {self.name: roles["entities"], **(self.table_roles or {})}
        ids = as_text(ents[self.entity_id])
        _blank(ids, "entities", self.entity_id, "entity_id")
        if ids.duplicated().any():
            raise DataError(f"entity ids repeat in {self.entity_id!r}: {sorted(set(ids[ids.duplicated()]))[:10]}")
        event_ids = as_text(evs[self.entity_id])
        position = pd.Index(ids).get_indexer(event_ids)
        if (position < 0).any():
            unknown = sorted(set(event_ids[position < 0]))
            raise DataError(f"{int((position < 0).sum())} event(s) for unknown entities {unknown[:10]}")
        visit = as_text(evs[self.sequence_key])
        _blank(visit, "event(s)", self.sequence_key, "sequence_key")
        exact, scale = parse_times(as_text(evs[self.order_by]), self.order_by)
        code_text = as_text(evs[self.code])
        if MISSING not in self.code_hierarchy.index:
            _blank(code_text, "event(s)", self.code, "code")
        absent = code_text[~code_text.isin(self.code_hierarchy.index.keys())].value_counts()
        if len(absent):
            raise CoverageError(self.code_hierarchy.attribute, {str(v): int(n) for v, n in absent.items()})
        hierarchies, missing = [], {}
        qi_codes = np.empty((len(ents), len(self.qi)), dtype=np.int64)
        for i, (name, h) in enumerate(zip(self.qi, self.hierarchies, strict=True)):
            values = as_text(ents[name])
            n_missing = int((values == MISSING).sum())
            if n_missing:  # the lattice commands' rule: a value of its own (see the module docstring)
                missing[name], h = n_missing, h.with_missing()
            qi_codes[:, i] = h.encode(values)
            hierarchies.append(h)
        frame = pd.DataFrame({"entity": position, "visit": visit, "time": exact,
                              "code": code_text.map(self.code_hierarchy.index).to_numpy(np.int64),
                              "row": np.arange(len(evs))})
        first_time = frame.groupby(["entity", "visit"])["time"].transform("min")
        frame = frame.assign(visit_time=first_time).sort_values(["entity", "visit_time", "visit", "time", "row"],
                                                                  kind="stable")
        visit_entity = frame[["entity", "visit"]].drop_duplicates()["entity"].to_numpy()
        visit_ptr = np.searchsorted(visit_entity, np.arange(len(ents) + 1))
        new_visit = (frame["entity"].ne(frame["entity"].shift()) | frame["visit"].ne(frame["visit"].shift())).to_numpy()
        code_ptr = np.append(np.flatnonzero(new_visit), len(frame))
        times = frame["time"].to_numpy(exact.dtype)
        for name, value in (("entities", ents), ("events", evs), ("hierarchies", tuple(hierarchies)),
                            ("qi_codes", qi_codes), ("visit_ptr", visit_ptr), ("code_ptr", code_ptr),
                            ("codes", frame["code"].to_numpy(np.int64)), ("times", times),
                            ("visit_time", times[new_visit].astype(np.float64)), ("time_scale", scale),
                            ("column_roles", roles), ("missing_counts", missing),
                            ("cost_qi_codes", np.hstack([qi_codes, *(slot_codes(s) for s in self.satellites)])),
                            ("cost_hierarchies", (*hierarchies, *(h for s in self.satellites
                                                                  for h in slot_hierarchies(s)))),
                            ("cost_qi_weights", np.array([1.0] * len(self.qi) + [1 / SLOTS] * sum(
                                SLOTS * len(s.qi) for s in self.satellites)))):
            object.__setattr__(self, name, value)

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    def visits(self, e: int) -> list[tuple[float, list[int]]]:
        """Entity e's visits as (time of the first event, as a float; [ground codes])."""
        out = []
        for v in range(self.visit_ptr[e], self.visit_ptr[e + 1]):
            out.append((float(self.visit_time[v]), self.codes[self.code_ptr[v]:self.code_ptr[v + 1]].tolist()))
        return out

    def column_fates(self, *, relative_time: bool = False, sequences: bool = True) -> dict:
        """What a release does with each input column (see ``column_roles``), in words, per table."""
        time = ("released as is" if not sequences else "replaced by the visit's rank" if relative_time
                else f"each visit's interval first{INTERVAL}last, common to its group")
        words = {ENTITY_ID: "entity id: replaced by pseudonyms drawn at random",
                 QI: "quasi-identifier: generalized to a value common to its group",
                 IDENTIFIER: "identifier: not released", KEPT: "kept: released as is, without protection",
                 DROPPED: "dropped: not released (as declared)",
                 ROW_QI: "quasi-identifier: generalized to the rows common to its group (rows without a partner "
                         "suppressed)",
                 SEQUENCE_KEY: "sequence key: replaced by the visit's rank (<pseudonym>-V1, -V2, ...)",
                 TIME: f"time ({self.time_scale.describe()}): {time}",
                 CODE: "code: generalized to its group's common ancestor, or suppressed" if sequences
                 else "code: released as is"}
        return {table: {c: words[role] for c, role in roles.items()} for table, roles in self.column_roles.items()}


def _column_roles(data: SequentialData, entity_columns: list[str], event_columns: list[str]) -> dict:
    """Each column's role (see the module docstring); DataError naming any column without one."""
    Schema(data.qi, (data.entity_id, *data.identifiers)).validate_columns(entity_columns)
    for column in (data.entity_id, data.sequence_key, data.order_by, data.code):
        if column not in event_columns:
            raise DataError(f"the event table has no column {column!r}; it has {event_columns}")
    keep, drop = tuple(data.keep or ()), tuple(data.drop)
    events_fixed = {data.entity_id: ENTITY_ID, data.sequence_key: SEQUENCE_KEY, data.order_by: TIME, data.code: CODE}
    if len(events_fixed) < 4:
        raise DataError(f"the entity id, sequence key, time and code must be four columns; got "
                        f"{[data.entity_id, data.sequence_key, data.order_by, data.code]}")
    declared = {data.entity_id: ENTITY_ID, **dict.fromkeys(data.qi, QI), **dict.fromkeys(data.identifiers, IDENTIFIER)}
    for name, group in (("keep", keep), ("drop", drop)):
        clash = [c for c in group if c in declared or c in events_fixed or (name == "drop" and c in keep)]
        if clash:
            raise DataError(f"{clash} in {name!r} already have a role (entity id, QI, identifier, sequence key, "
                            "time, code or kept)", parameter=name)
        unknown = [c for c in group if c not in entity_columns and c not in event_columns]
        if unknown:
            raise DataError(f"{unknown} in {name!r} are columns of neither table; the entity table has "
                            f"{entity_columns}, the event table {event_columns}", parameter=name)
    events_only = [c for c in keep if c not in entity_columns]
    if events_only:
        raise DataError(f"event columns {events_only} cannot be kept: a value per event would tell the members of "
                        "a group apart (drop them)", parameter="keep")
    entity_roles = {c: declared.get(c) or (DROPPED if c in drop else KEPT if data.keep is None or c in keep else None)
                    for c in entity_columns}
    event_roles = {c: events_fixed.get(c) or (IDENTIFIER if c in data.identifiers else DROPPED if c in drop else None)
                   for c in event_columns}
    for table, roles, hint in (("entity", entity_roles, "'keep' (released as is, without protection) or 'drop'"),
                               ("event", event_roles, "'drop'")):
        unnamed = [c for c, role in roles.items() if role is None]
        if unnamed:
            raise DataError(f"{table} table column(s) {unnamed} have no role: name them in {hint}, or remove them "
                            "from the input (no column is left out unnamed)",
                            parameter="keep" if table == "entity" else "drop")
    return {"entities": entity_roles, "events": event_roles}


def load_sequential(
    entities: str | Path | pd.DataFrame,
    events: str | Path | pd.DataFrame,
    *,
    entity_id: str,
    qi: Sequence[str],
    sequence_key: str,
    order_by: str,
    code: str,
    code_hierarchy: Hierarchy | str | Path,
    hierarchies: Mapping[str, Hierarchy | str | Path] | None = None,
    hierarchy_dir: str | Path | None = None,
    identifiers: Sequence[str] = (),
    keep: Sequence[str] | None = None,
    drop: Sequence[str] = (),
) -> SequentialData:
    """Read (CSV paths or DataFrames) and validate an entity table and its event table. ``keep``:
    entity columns released as is, without protection (None: every column without another role);
    ``drop``: columns of either table not released (see ``SequentialData``).

    Parameters
    ----------
    entities : str, Path or pandas.DataFrame
        The entity table.
    events : str, Path or pandas.DataFrame
        The event table.
    entity_id : str
        The entity id column (in both tables).
    qi : sequence of str
        The relational quasi-identifiers.
    sequence_key : str
        The column grouping events into sequences (e.g. a visit).
    order_by : str
        The column ordering the events.
    code : str
        The event code column.
    code_hierarchy : Hierarchy, str or Path
        The codes' hierarchy.
    hierarchies : mapping, optional
        Per quasi-identifier, a hierarchy or an ARX file.
    hierarchy_dir : str or Path, optional
        A folder with the hierarchy files.
    identifiers : sequence of str, optional
        Direct identifiers.
    keep : sequence of str, optional
        Entity columns released as is (None: every column not otherwise named).
    drop : sequence of str, optional
        Entity columns not released.

    Returns
    -------
    SequentialData
        The validated, encoded tables.

    Raises
    ------
    DataError
        If a table or column is missing or invalid.
    CoverageError
        If a hierarchy does not cover a value.
    """
    ents = entities if isinstance(entities, pd.DataFrame) else read_table(entities)
    evs = events if isinstance(events, pd.DataFrame) else read_table(events)
    schema = Schema(tuple(qi), tuple(identifiers))
    resolved = resolve_hierarchies(schema, hierarchies, hierarchy_dir)
    codes = code_hierarchy if isinstance(code_hierarchy, Hierarchy) else read_arx(code_hierarchy, code)
    return SequentialData(ents, evs, entity_id, tuple(qi), tuple(identifiers), resolved, codes, sequence_key,
                          order_by, code, None if keep is None else tuple(keep), tuple(drop))
