"""Checking a relational + sequential release from its output alone, and the records it is attacked on.

``verify_release``: for every released entity, how many entities share its full relational QI
values *and* its whole sequence of visits (times and codes, in order). k-anonymity over both parts
holds when the smallest count is >= k. Computed from the output tables only, by grouping text.

A *record* is what a reader sees of one entity: its QI values and its history, visits in order, each
a time interval [low, high] and an ordered list of codes. Released records (``released_records``)
come from the written files (QIs, codes, visit order) and, for times, from the release in memory
(``SequentialRelease.intervals``; the written interval text is never parsed); original records
(``original_records``) are the input (a visit's interval spans its events' times). The attackers
that read them are in ``attacks``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.lattice.hierarchies import Hierarchy
from microrelease.core.release.cells import formula_mask
from microrelease.core.sequential.rt_data import SequentialData


def signatures(entities: pd.DataFrame, events: pd.DataFrame, entity_id: str, qi: Sequence[str], sequence_key: str,
               order_by: str, code: str) -> pd.Series:
    """One text signature per released entity: QI values | visit (time: codes) | ..."""
    ev = events.astype(str)
    visit = ev.groupby([entity_id, sequence_key], sort=False).agg(time=(order_by, "first"), codes=(code, "|".join))
    visit = visit.reset_index()
    visit["rank"] = _rank(visit[sequence_key])
    visit = visit.sort_values([entity_id, "rank"])
    seq = visit.assign(text=visit["time"] + ":" + visit["codes"]).groupby(entity_id)["text"].agg(" / ".join)
    ents = entities.astype(str).set_index(entity_id)
    rel = ents[list(qi)].agg(" , ".join, axis=1)
    return rel + " || " + seq.reindex(rel.index).fillna("")


def verify_release(entities: pd.DataFrame, events: pd.DataFrame, *, entity_id: str, qi: Sequence[str],
                  sequence_key: str, order_by: str, code: str) -> pd.Series:
    """Per released entity, the number of entities sharing both parts (its anonymity set size).

    Parameters
    ----------
    entities : pandas.DataFrame
        The released entity table.
    events : pandas.DataFrame
        The released event table.
    entity_id : str
        The entity id column.
    qi : sequence of str
        The relational quasi-identifiers.
    sequence_key : str
        The column grouping events into sequences.
    order_by : str
        The column ordering the events.
    code : str
        The event code column.

    Returns
    -------
    pandas.Series
        Per released entity, its anonymity set size.
    """
    sig = signatures(entities, events, entity_id, qi, sequence_key, order_by, code)
    return sig.map(sig.value_counts())


def _rank(visit_ids: pd.Series) -> np.ndarray:
    """A released visit's rank in its entity's history, from its id (``<entity>-V<rank>``)."""
    return visit_ids.str.extract(r"-V(\d+)$")[0].astype(int).to_numpy()


class Labels:
    """A hierarchy's labels at every level, by text: ``up[g]`` holds the ids of ground value g's
    labels from level 0 to the top, so a label generalizes g when its id is in that row."""

    def __init__(self, h: Hierarchy):
        self.ids: dict[str, int] = {}
        self.up = np.array([[self.ids.setdefault(h.labels[lv][h.codes[lv][g]], len(self.ids))
                             for lv in range(h.height + 1)] for g in range(len(h.ground))], dtype=np.int64)
        self.level = np.zeros(len(self.ids) + 1, dtype=np.int64)  # a label's lowest level (last: unknown)
        for lv in range(h.height, -1, -1):
            self.level[self.up[:, lv]] = lv
        self.table = None  # labels × ground values, when small: a look-up is faster than comparing ids
        if (len(self.ids) + 1) * len(h.ground) <= 1 << 24:
            self.table = np.zeros((len(self.ids) + 1, len(h.ground)), dtype=bool)
            self.table[self.up, np.arange(len(h.ground))[:, None]] = True

    def encode(self, text: pd.Series) -> np.ndarray:
        """Label ids of text cells; a text that is no label of the hierarchy gets -1 (generalizes nothing)."""
        return text.map(self.ids).fillna(-1).to_numpy(np.int64)

    def covers(self, labels: np.ndarray, g: int) -> np.ndarray:
        """Which labels generalize ground value g (itself included)."""
        if self.table is not None:
            return self.table[labels, g]
        return (labels[..., None] == self.up[g]).any(axis=-1)


@dataclass(frozen=True, eq=False)
class Records:
    """Records (see the module docstring) in flat arrays: QI label ids (records × QIs), record r's
    visits ``visit_ptr[r]:visit_ptr[r+1]``, visit v's codes ``code_ptr[v]:code_ptr[v+1]`` (label ids),
    each visit's interval [low, high], and each record's id."""

    ids: np.ndarray
    qi: np.ndarray
    visit_ptr: np.ndarray
    code_ptr: np.ndarray
    codes: np.ndarray
    low: np.ndarray
    high: np.ndarray


def labels_of(data: SequentialData) -> tuple[list[Labels], Labels]:
    """The labels of each QI's hierarchy and of the code hierarchy."""
    return [Labels(h) for h in data.hierarchies], Labels(data.code_hierarchy)


def original_records(data: SequentialData) -> Records:
    """The input's records: ground values, each visit's interval from its first to its last time."""
    qi_labels, code_labels = labels_of(data)
    qi = np.column_stack([lab.up[data.qi_codes[:, q], 0] for q, lab in enumerate(qi_labels)]) if data.qi \
        else np.zeros((data.n_entities, 0), dtype=np.int64)
    ids = data.entities[data.entity_id].astype(str).to_numpy()
    last = data.times[data.code_ptr[1:] - 1].astype(np.float64) if len(data.codes) else np.empty(0)
    return Records(ids, qi, data.visit_ptr, data.code_ptr, code_labels.up[data.codes, 0], data.visit_time, last)


def unescaped(column: pd.Series) -> pd.Series:
    """A cell written with a leading ``'`` to defuse a spreadsheet formula, read as the value it stands for."""
    quoted = column.str.startswith("'") & formula_mask(column.str.slice(1))
    return column.where(~quoted, column.str.slice(1))


def released_records(data: SequentialData, entities: pd.DataFrame, events: pd.DataFrame,
                     intervals: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None) -> Records:
    """The released records: QIs and codes from the written tables (text), visits in the order their
    ids give; times from ``intervals`` (released id -> each visit's lows and highs, as
    ``SequentialRelease.intervals``), or unknown ([-inf, inf]) without them."""
    qi_labels, code_labels = labels_of(data)
    ids = entities[data.entity_id].astype(str).to_numpy()
    qi = np.column_stack([lab.encode(unescaped(entities[name].astype(str)))
                          for name, lab in zip(data.qi, qi_labels, strict=True)]) if data.qi \
        else np.zeros((len(ids), 0), dtype=np.int64)
    row = pd.Index(ids).get_indexer(events[data.entity_id].astype(str))
    if (row < 0).any():
        raise InvalidParameterError("events of entities absent from the entity table", parameter="events")
    rank = _rank(events[data.sequence_key].astype(str))
    order = np.lexsort((np.arange(len(events)), rank, row))  # within a visit, codes stay in written order
    row, rank = row[order], rank[order]
    codes = code_labels.encode(unescaped(events[data.code].astype(str)).iloc[order])
    new = np.ones(len(row), dtype=bool)
    new[1:] = (row[1:] != row[:-1]) | (rank[1:] != rank[:-1])
    starts = np.flatnonzero(new)
    visit_ptr = np.searchsorted(row[starts], np.arange(len(ids) + 1))
    low, high = np.full(len(starts), -np.inf), np.full(len(starts), np.inf)
    if intervals is not None:
        for r, name in enumerate(ids):
            span = slice(visit_ptr[r], visit_ptr[r + 1])
            lo, hi = intervals.get(name, (np.empty(0), np.empty(0)))
            if len(lo) != span.stop - span.start:
                raise InvalidParameterError(f"{len(lo)} interval(s) for the {span.stop - span.start} visit(s) of "
                                            f"released entity {name!r}", parameter="intervals")
            low[span], high[span] = lo, hi
    return Records(ids, qi, visit_ptr, np.append(starts, len(row)), codes, low, high)
