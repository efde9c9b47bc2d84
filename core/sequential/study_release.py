"""A study's release: the pipeline over all its tables, and writing one file per table.

``anonymize_study`` groups the entities by F over every table (satellites through their slots,
event tables through the merged event stream; see ``study``) and
releases each group with one record: entity QIs generalized, satellite rows matched and generalized
(``satellites``), and one history (the group's consensus) whose
events go back to their own tables. An event table's file has the entity id (pseudonyms), the sequence
key (``<pseudonym>-V<rank>``), the time (the visit's interval), its code columns and
``POSITION``, the event's rank in its visit over all event tables (the same for every member of a
group, so it tells them nothing apart, and without it a visit's order across tables would be lost).

``write_study`` writes ``<table name>.csv`` per table through the one release path and checks the
written files alone: every released entity shares its entity QIs, its rows of every satellite and its
whole history (per visit: interval and events in position order, over all tables) with >= k − 1
others; positions run 1..n in every visit; no identifier column; each table's rows add up with its
suppressed rows (counted in the audit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.exceptions import DataError
from microrelease.core.release import Published, Verification, folder_target
from microrelease.core.release.cells import shuffled
from microrelease.core.sequential.anonymize import SequentialRelease
from microrelease.core.sequential.cost import CostWeights
from microrelease.core.sequential.event_codes import SEPARATOR
from microrelease.core.sequential.guarantee import released_records, signatures, unescaped
from microrelease.core.sequential.pipeline import anonymize_sequential, in_random_blocks, publish_tables
from microrelease.core.sequential.rt_data import ENTITY_ID, IDENTIFIER, KEPT, SequentialData
from microrelease.core.sequential.satellites import anonymize_satellite
from microrelease.core.sequential.study import EVENT, VISIT, WHEN

POSITION = "position"


@dataclass(frozen=True, eq=False)
class StudyRelease:
    """``base``: the release over the entity table and the merged event stream (its pseudonyms,
    groups, intervals and losses); ``tables``: each released table by name; ``suppressed``: per
    satellite and event table, the input rows not released."""

    base: SequentialRelease
    tables: dict
    suppressed: dict

    @property
    def k(self) -> int:
        return self.base.k


def split_events(events: pd.DataFrame, data: SequentialData) -> dict[str, pd.DataFrame]:
    """The merged released events (consensus order within each visit) as one frame per event table."""
    position = events.groupby([data.entity_id, VISIT], sort=False).cumcount() + 1
    table = events[EVENT].astype(str).str.split(SEPARATOR, n=1).str[0]
    out = {}
    for t in data.event_tables:
        if POSITION in (t.id, t.sequence_key, t.time, *t.codes):
            raise DataError(f"{t.name!r} names a column {POSITION!r}: the release writes its own", parameter="config")
        mine = (table == t.name).to_numpy()
        values = [label.split(SEPARATOR)[1:] for label in events[EVENT][mine]]  # none left: an empty table
        frame = pd.DataFrame({t.id: events[data.entity_id][mine].to_numpy(), t.sequence_key: events[VISIT][mine].to_numpy(),
                              t.time: events[WHEN][mine].to_numpy()})
        codes = pd.DataFrame(values, columns=list(t.codes), dtype=object) if values else \
            pd.DataFrame({c: pd.Series(dtype=object) for c in t.codes})
        frame = pd.concat([frame, codes], axis=1)
        frame[POSITION] = position[mine].astype(str).to_numpy()
        out[t.name] = frame
    return out


def merged_from_tables(tables: dict[str, pd.DataFrame], data: SequentialData) -> pd.DataFrame:
    """The event tables as read back (text) merged into one stream, each visit's events in position
    order (written formula escapes undone): the form the check and the attackers read."""
    parts = []
    for t in data.event_tables:
        frame = tables[t.name]
        label = pd.Series(t.name, index=frame.index)
        for column in t.codes:
            label = label + SEPARATOR + unescaped(frame[column].astype(str))
        parts.append(pd.DataFrame({data.entity_id: frame[t.id].astype(str), VISIT: frame[t.sequence_key].astype(str),
                                   WHEN: frame[t.time].astype(str), EVENT: label,
                                   POSITION: pd.to_numeric(frame[POSITION], errors="coerce")}))
    merged = pd.concat(parts, ignore_index=True)
    return merged.sort_values([data.entity_id, VISIT, POSITION], kind="stable").reset_index(drop=True)


def id_column(data: SequentialData, table: str) -> str:
    """The entity id column of one of the study's tables."""
    return next(c for c, role in data.column_roles[table].items() if role == ENTITY_ID)


def anonymize_study(data: SequentialData, k: int, *, weights: CostWeights | None = None, method: str = "greedy",
                    relative_time: bool = False, relational_only: bool = False, progress=None) -> StudyRelease:
    """k-anonymize a study over all its tables (see the module docstring); ``relational_only``: group
    by the relational tables alone and release the events as they are (the baseline).

    Parameters
    ----------
    data : SequentialData
        The entities and their sequences.
    k : int
        The k of k-anonymity over both parts.
    weights : CostWeights, optional
        The cost's weights.
    method : str, default "greedy"
        The grouping method.
    relative_time : bool, default False
        Release times relative to each entity's first visit.
    relational_only : bool, default False
        Group and generalize the relational part alone (the baseline).
    progress : callable, optional
        Called with the fraction done.

    Returns
    -------
    StudyRelease
        The anonymized tables of the study.
    """
    base = anonymize_sequential(data, k, weights=weights, method=method, relative_time=relative_time,
                                relational_only=relational_only, progress=progress)
    tables = {data.name: base.entities, **split_events(base.events, data)}
    suppressed = {}
    for sat in data.satellites:
        tables[sat.name], lost = anonymize_satellite(sat, base.groups, base.pseudonym, id_column(data, sat.name))
        suppressed[sat.name] = int(lost.sum())
    for t in data.event_tables:
        suppressed[t.name] = t.rows - len(tables[t.name])
    return StudyRelease(base, tables, suppressed)


def study_signatures(tables: dict[str, pd.DataFrame], data: SequentialData,
                     merged: pd.DataFrame | None = None) -> pd.Series:
    """Per released entity (by pseudonym), one text for all it shows: its QIs, its history over all
    event tables (visits in rank order, events in position order; ``merged``: that stream, when the
    caller has it already) and its rows of every satellite."""
    merged = merged_from_tables(tables, data) if merged is None else merged
    text = signatures(tables[data.name], merged, data.entity_id, data.qi, VISIT, WHEN, EVENT)
    for sat in data.satellites:
        rows = tables[sat.name].astype(str)
        row_text = rows[list(sat.qi)].agg(SEPARATOR.join, axis=1)
        per_entity = {name: " ; ".join(sorted(group)) for name, group in row_text.groupby(rows[id_column(data, sat.name)])}
        text = text + " || " + np.array([per_entity.get(name, "") for name in text.index], dtype=object)
    return text


def _positions_ok(merged: pd.DataFrame, data: SequentialData) -> bool:
    """Every released visit's positions are 1..n, once each."""
    if merged[POSITION].isna().any():
        return False
    rank = merged.groupby([data.entity_id, VISIT], sort=False).cumcount() + 1
    return bool((rank.to_numpy() == merged[POSITION].to_numpy()).all())


def write_study(release: StudyRelease, data: SequentialData, outdir: str | Path, *, parameters: dict | None = None,
                force: bool = False, protected: Sequence[str | Path] = (), escape: bool = False,
                inputs: Sequence[str | Path] = (), relative_time: bool = False,
                attack_sample: int | None = 2000) -> Published:
    """Write ``<table>.csv`` for every table of the study and the report (see the module docstring):
    rows in random order (events in random blocks per entity, their order within kept), the report
    last; the attackers' figures and the suppressed counts go to the audit.

    Parameters
    ----------
    release : StudyRelease
        The anonymized tables.
    data : SequentialData
        The input.
    outdir : str or Path
        The release's folder.
    parameters : dict, optional
        Extra entries for the report.
    force : bool, default False
        Replace a previous release of this tool.
    protected : sequence of str or Path, optional
        Files never overwritten.
    escape : bool, default False
        Neutralize formula cells.
    inputs : sequence of str or Path, optional
        The input files (never overwritten, named in the report).
    relative_time : bool, default False
        Whether times were released relative.
    attack_sample : int or None, default 2000
        Entities attacked in the report's simulation (None: all).

    Returns
    -------
    Published
        The files written and the verification of the re-read release.
    """
    names = {name: f"{name}.csv" for name in release.tables}
    target = folder_target(outdir, tuple(names.values()), protected=[*inputs, *protected], force=force)
    event_names = {t.name for t in data.event_tables}
    tables = {name: in_random_blocks(frame, id_column(data, name)) if name in event_names else shuffled(frame)
              for name, frame in release.tables.items()}

    def verify_tables(read, tables):
        merged = merged_from_tables(read, data)
        sig = study_signatures(read, data, merged)
        shared = sig.map(sig.value_counts())
        smallest = int(shared.min()) if len(shared) else 0
        identifiers = {c for roles in data.column_roles.values() for c, role in roles.items() if role == IDENTIFIER}
        kept = [c for c, role in data.column_roles[data.name].items() if role == KEPT]
        present = {c for frame in read.values() for c in frame.columns}
        verifications = [Verification(f"{name}: rows", len(read[name]) == len(frame), f"{len(read[name])} written, {len(frame)} "
                        "expected") for name, frame in tables.items()]
        verifications += [
            Verification(f"{release.k}-anonymity over all tables", not len(shared) or smallest >= release.k,
                  f"every entity shares QIs, satellite rows and whole history with >= {smallest - 1} others"
                  + (f" (kept columns {kept} excepted: released without protection)" if kept else "")),
            Verification("positions", _positions_ok(merged, data), "every visit's events numbered 1..n over all tables"),
            Verification("identifiers absent", not identifiers & present, f"none of {sorted(identifiers)}"),
        ]
        intervals = None if relative_time else release.base.intervals
        return verifications, smallest, released_records(data, read[data.name], merged, intervals), sorted(present)

    body = {
        "kind": "relational + sequential study",
        "parameters": {"k": release.k, "tables": {"entities": data.name,
                                                  "satellites": [s.name for s in data.satellites],
                                                  "events": [t.name for t in data.event_tables]},
                       "qi": list(data.qi), "pseudonyms": "drawn from OS entropy (never seeded)", "seeded": False,
                       "relative_time": relative_time, "columns": release.base.columns, **dict(parameters or {})},
        "counts": {"input_entities": data.n_entities, "released_rows": {n: len(f) for n, f in tables.items()}},
    }
    accounting = {}
    for sat in data.satellites:
        n_in = len(sat.entity)
        accounting[sat.name] = {"input_rows": n_in, "released_rows": len(tables[sat.name]),
                                "suppressed_rows": release.suppressed[sat.name]}
    for t in data.event_tables:
        accounting[t.name] = {"input_events": t.rows, "released_events": len(tables[t.name]),
                              "suppressed_events": release.suppressed[t.name]}
    audit = {"seeded": False, "counts": accounting, "missing_qi_values": data.missing_counts}
    return publish_tables(target, names, tables, verify_tables, release=release.base, data=data, body=body,
                          audit=audit, output={"files": sorted(names.values()), "row_order": "random (drawn from OS "
                                                                                             "entropy)"},
                          escape=escape, inputs=inputs, relative_time=relative_time, attack_sample=attack_sample)
