"""Data with a relational part and a sequential part (US patent 9,230,132; RT-anonymity).

An *entity table* has one row per entity: an id, direct identifiers, relational QIs (each with a
hierarchy) and other attributes. An *event table* has one row per element: the entity id, the
sequence it belongs to (e.g. a visit), its time (or order) and a code from a code hierarchy. Each
entity therefore has a sequence of sequences: its visits in time order, each an ordered list of
codes. Events are sorted by (time, input order) here, so the input need not be sorted; a visit's
time is the time of its first event. An entity without events has an empty sequence (allowed).

Everything is encoded once into flat arrays (CSR: entity -> visits -> codes) for the compiled cost.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.dataset import as_text, read_table, resolve_hierarchies
from microrelease.core.data.roles import Schema
from microrelease.core.exceptions import CoverageError, DataError
from microrelease.core.lattice.hierarchies import Hierarchy, read_arx


@dataclass(frozen=True, eq=False)
class SequentialData:
    """Entities with relational QIs and visit sequences, validated and encoded."""

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
    qi_codes: np.ndarray = field(init=False, repr=False)  # entities × QIs, ground codes
    visit_ptr: np.ndarray = field(init=False, repr=False)  # entity e's visits: visit_ptr[e]:visit_ptr[e+1]
    code_ptr: np.ndarray = field(init=False, repr=False)  # visit v's codes: code_ptr[v]:code_ptr[v+1]
    codes: np.ndarray = field(init=False, repr=False)  # ground code of each element
    visit_time: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ents, evs = self.entities.reset_index(drop=True), self.events.reset_index(drop=True)
        Schema(self.qi, (self.entity_id, *self.identifiers)).check_columns(list(ents.columns))
        for column in (self.entity_id, self.sequence_key, self.order_by, self.code):
            if column not in evs.columns:
                raise DataError(f"the event table has no column {column!r}; it has {list(evs.columns)}")
        ids = as_text(ents[self.entity_id])
        if ids.duplicated().any():
            raise DataError(f"entity ids repeat in {self.entity_id!r}: {sorted(set(ids[ids.duplicated()]))[:10]}")
        position = pd.Index(ids).get_indexer(as_text(evs[self.entity_id]))
        if (position < 0).any():
            unknown = sorted(set(as_text(evs[self.entity_id])[position < 0]))
            raise DataError(f"{int((position < 0).sum())} event(s) for unknown entities {unknown[:10]}")
        time = pd.to_numeric(evs[self.order_by], errors="coerce")
        if time.isna().any():
            raise DataError(f"{int(time.isna().sum())} event(s) have a missing or non-numeric {self.order_by!r}")
        code_text = as_text(evs[self.code])
        absent = code_text[~code_text.isin(self.code_hierarchy.index.keys())].value_counts()
        if len(absent):
            raise CoverageError(self.code_hierarchy.attribute, {str(v): int(n) for v, n in absent.items()})
        qi_codes = np.empty((len(ents), len(self.qi)), dtype=np.int64)
        for i, (name, h) in enumerate(zip(self.qi, self.hierarchies, strict=True)):
            qi_codes[:, i] = h.encode(as_text(ents[name]))
        frame = pd.DataFrame({"entity": position, "visit": as_text(evs[self.sequence_key]), "time": time.to_numpy(float),
                              "code": code_text.map(self.code_hierarchy.index).to_numpy(np.int64),
                              "row": np.arange(len(evs))})
        first_time = frame.groupby(["entity", "visit"])["time"].transform("min")
        frame = frame.assign(visit_time=first_time).sort_values(["entity", "visit_time", "visit", "time", "row"],
                                                                  kind="stable")
        visit_keys = frame[["entity", "visit"]].drop_duplicates()
        visit_entity = visit_keys["entity"].to_numpy()
        visit_ptr = np.searchsorted(visit_entity, np.arange(len(ents) + 1))
        new_visit = (frame["entity"].ne(frame["entity"].shift()) | frame["visit"].ne(frame["visit"].shift())).to_numpy()
        code_ptr = np.append(np.flatnonzero(new_visit), len(frame))
        for name, value in (("entities", ents), ("events", evs), ("qi_codes", qi_codes), ("visit_ptr", visit_ptr),
                            ("code_ptr", code_ptr), ("codes", frame["code"].to_numpy(np.int64)),
                            ("visit_time", frame["visit_time"].to_numpy(float)[new_visit])):
            object.__setattr__(self, name, value)

    @property
    def n_entities(self) -> int:
        return len(self.entities)

    def visits(self, e: int) -> list[tuple[float, list[int]]]:
        """Entity e's visits as (time, [ground codes])."""
        out = []
        for v in range(self.visit_ptr[e], self.visit_ptr[e + 1]):
            out.append((float(self.visit_time[v]), self.codes[self.code_ptr[v]:self.code_ptr[v + 1]].tolist()))
        return out


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
) -> SequentialData:
    """Read (CSV paths or DataFrames) and validate an entity table and its event table."""
    ents = entities if isinstance(entities, pd.DataFrame) else read_table(entities)
    evs = events if isinstance(events, pd.DataFrame) else read_table(events)
    schema = Schema(tuple(qi), tuple(identifiers))
    resolved = resolve_hierarchies(schema, hierarchies, hierarchy_dir)
    codes = code_hierarchy if isinstance(code_hierarchy, Hierarchy) else read_arx(code_hierarchy, code)
    return SequentialData(ents, evs, entity_id, tuple(qi), tuple(identifiers), resolved, codes, sequence_key,
                          order_by, code)
