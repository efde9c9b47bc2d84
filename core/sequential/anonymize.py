"""Making a group's members indistinguishable on both parts, and writing the anonymized tables.

Relational QIs: each generalized to the lowest level of its hierarchy at which all members agree.
Sequences: a progressive multiple alignment (``alignment``). The
members are taken fewest codes first (ties: input order); the first one's visits are the starting
consensus, and each further member's visits are aligned to it by the two-level dynamic programming of
the cost function (a consensus code stands for the lowest common ancestor of the codes aligned to it;
a consensus visit for the interval of their times). A code without a partner is suppressed only after
generalization has been tried at both levels: within a visit every code that can be paired is kept at
the common ancestor (up to ``*``), and between visits two consecutive visits of the member (or of the
consensus) may merge into one released visit whose interval covers both, so that codes split over two
visits on one side are kept against one visit on the other. A merge costs w_T per visit merged plus
the widening of the interval (w_T × growth / time span), against |codes| + w_T for dropping a visit.
Consensus visits or codes that a member does not match are dropped (suppressed for everyone), as are
the member's own unmatched elements. At the end every member's sequence is the consensus: codes
generalized to their common ancestor, times to the interval first..last of the member's visits it
stands for (written exactly, see ``microrelease.core.sequential.times``), or, with
``relative_time``, just the visit's rank. Suppressed elements are counted per entity.

Entity ids are replaced by pseudonyms drawn from OS entropy (so a pseudonym says nothing of its
entity's input position); direct identifiers and dropped columns are not written, kept columns are
written as they are (see ``SequentialData``). The written
order is the release path's (``microrelease.core.sequential.pipeline.write_sequential``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from microrelease.core.exceptions import InvalidParameterError
from microrelease.core.sequential.alignment import (
    ConsensusVisit,
    GroupConsensus,
    NodeNCP,
    align_groups,
    member_visits,
)
from microrelease.core.sequential.cost import time_span
from microrelease.core.sequential.rt_data import KEPT, QI, SequentialData


def consensus_of(aligned: GroupConsensus, g: int) -> list[ConsensusVisit]:
    """Group ``g``'s consensus visits out of the compiled alignment of every group."""
    visits = range(aligned.group_ptr[g], aligned.group_ptr[g + 1])
    return [ConsensusVisit(aligned.low[v].item(), aligned.high[v].item(),
                           [(int(aligned.level[c]), int(aligned.rep[c]))
                            for c in range(aligned.code_ptr[v], aligned.code_ptr[v + 1])])
            for v in visits]


@dataclass(frozen=True, eq=False)
class SequentialRelease:
    """The anonymized tables and what it cost. ``pseudonym`` maps input entity -> released id
    (kept in memory for the attack simulation and tests; never written). ``intervals``: released id
    -> the (first, last) times of each of its released visits, in order, on the float axis of
    ``SequentialData.visit_time`` (written as such unless ``relative_time``). ``columns``: what
    happened to each input column, per table (for the report).

    Parameters
    ----------
    entities : pandas.DataFrame
        The released entity table.
    events : pandas.DataFrame
        The released event table.
    groups : numpy.ndarray
        The group number of every input entity.
    k : int
        The k of k-anonymity.
    suppressed_elements : numpy.ndarray
        The sequence elements suppressed.
    relational_loss : float
        The relational part's information loss.
    sequence_loss : float
        The sequential part's information loss.
    pseudonym : numpy.ndarray
        Input entity to released id (never written).
    intervals : dict, optional
        Released id to the (first, last) times of its released visits.
    columns : dict, optional
        What happened to each input column, per table.
    """

    entities: pd.DataFrame
    events: pd.DataFrame
    groups: np.ndarray
    k: int
    suppressed_elements: np.ndarray  # per entity
    relational_loss: float  # mean NCP of the released QI values
    sequence_loss: float  # share of codes suppressed plus mean NCP of the kept ones (both / elements)
    pseudonym: np.ndarray = field(repr=False)
    intervals: dict = field(default_factory=dict, repr=False)
    columns: dict = field(default_factory=dict, repr=False)


def anonymize_groups(data: SequentialData, groups: np.ndarray, k: int, *, w_time: float = 1.0,
                     relative_time: bool = False, sequences: bool = True) -> SequentialRelease:
    """Generalize every group on both parts and build the output tables. ``sequences=False`` leaves
    the sequences as they are (the relational-only baseline the attack is compared with).

    Parameters
    ----------
    data : SequentialData
        The entities and their sequences.
    groups : numpy.ndarray
        The group number of every entity.
    k : int
        The k of k-anonymity.
    w_time : float, default 1.0
        The weight of a visit's time against its codes.
    relative_time : bool, default False
        Release times relative to each entity's first visit.
    sequences : bool, default True
        Generalize the sequences too.

    Returns
    -------
    SequentialRelease
        The anonymized tables and their loss.
    """
    _validate_time_weight(w_time)
    names = _pseudonyms(data.n_entities)
    members = _group_members(groups)
    qi_labels, rel_ncp = _generalize_relational(data, members)
    if sequences:
        sequence_part = _align_sequences(data, groups, members, names, w_time=w_time, relative_time=relative_time)
    else:
        sequence_part = _copy_sequences(data, members, names)
    return _assemble(data, groups, k, names, qi_labels, rel_ncp, sequence_part,
                     relative_time=relative_time, sequences=sequences)


@dataclass
class _SequencePart:
    """What the sequence step produces: the event rows, the released visits' intervals, the codes
    suppressed per entity and the NCP of every kept code (once per member)."""

    rows: list[tuple[object, ...]]
    intervals: dict[str, tuple[np.ndarray, ...]]
    suppressed: np.ndarray
    kept_ncp: list[float]


def _validate_time_weight(w_time: float) -> None:
    """The time weight: a finite number at least 0 (a bool is refused)."""
    if isinstance(w_time, bool) or not isinstance(w_time, (int, float)) or not (math.isfinite(w_time) and w_time >= 0):
        raise InvalidParameterError(f"The 'weight_time' parameter must be finite and at least 0. Got {w_time!r} "
                                    "instead.", parameter="weight_time")


def _pseudonyms(n: int) -> np.ndarray:
    """One pseudonym per entity, in a random order."""
    # Pseudonyms from OS entropy, never from a user's seed: with the seed, anyone could map every
    # pseudonym back to its input position.
    generator = np.random.default_rng()
    return np.array([f"E{i:06d}" for i in generator.permutation(n)], dtype=object)


def _group_members(groups: np.ndarray) -> list[list[int]]:
    """Each group's members, in input order, without a scan of every entity per group."""
    by_group = np.argsort(groups, kind="stable")
    starts = np.searchsorted(groups[by_group], np.arange(int(groups.max()) + 2 if len(groups) else 1))
    return [[int(e) for e in by_group[starts[g]:starts[g + 1]]]
            for g in range(int(groups.max()) + 1 if len(groups) else 0)]


def _generalize_relational(data: SequentialData, members: list[list[int]]) -> tuple[list[np.ndarray], np.ndarray]:
    """The relational part: every QI of a group generalized to the lowest level of its hierarchy at
    which all members agree. Returns the released label of every entity per QI, and its NCP."""
    n = data.n_entities
    rel_ncp = np.zeros((n, len(data.qi)))
    qi_trees = [NodeNCP(hq) for hq in data.hierarchies]
    qi_labels = [np.empty(n, dtype=object) for _ in data.qi]  # filled per group, set once (not per .loc)
    for group in members:
        for q, hq in enumerate(data.hierarchies):
            values = data.qi_codes[group, q]
            level = next(lv for lv in range(hq.height + 1) if len(set(hq.codes[lv][values])) == 1)
            qi_labels[q][group] = hq.labels[level][hq.codes[level][values[0]]]
            rel_ncp[group, q] = qi_trees[q].ncp(level, int(values[0]))
    return qi_labels, rel_ncp


def _copy_sequences(data: SequentialData, members: list[list[int]], names: np.ndarray) -> _SequencePart:
    """``sequences=False``: every member's visits written as they are (nothing suppressed)."""
    scale, h = data.time_scale, data.code_hierarchy
    part = _SequencePart([], {}, np.zeros(data.n_entities, dtype=np.int64), [])
    for group in members:
        for e in group:
            visits = member_visits(data, e)
            part.intervals[names[e]] = (np.array([float(v[0]) for v in visits]),
                                        np.array([float(v[1]) for v in visits]))
            a = data.code_ptr[data.visit_ptr[e]]
            for rank, (_, _, codes) in enumerate(visits, start=1):
                part.rows.extend((names[e], f"{names[e]}-V{rank}", scale.text(data.times[a + x]), h.ground[c])
                                 for x, c in enumerate(codes))
                a += len(codes)
    return part


def _align_sequences(data: SequentialData, groups: np.ndarray, members: list[list[int]], names: np.ndarray, *,
                     w_time: float, relative_time: bool) -> _SequencePart:
    """The sequence part: every group's consensus (the multiple alignment), what it suppresses of each
    member, and the consensus written for every member."""
    part = _SequencePart([], {}, np.zeros(data.n_entities, dtype=np.int64), [])
    if not len(groups):
        return part
    # every group's consensus at once, compiled (alignment_oracle.group_consensus is its oracle in the tests)
    aligned = align_groups(data, groups, w_time=w_time, span=time_span(data))
    tree = NodeNCP(data.code_hierarchy)
    for g, group in enumerate(members):
        consensus = consensus_of(aligned, g)
        part.kept_ncp.extend(tree.ncp(level, rep) * len(group) for v in consensus for level, rep in v.codes)
        _suppress(data, group, sum(len(v.codes) for v in consensus), part.suppressed)
        _write_consensus(data, group, names, consensus, part, relative_time=relative_time)
    return part


def _suppress(data: SequentialData, group: list[int], n_kept: int, suppressed: np.ndarray) -> None:
    """Suppression: each member loses the codes the consensus does not keep."""
    for e in group:
        suppressed[e] = int(data.code_ptr[data.visit_ptr[e + 1]] - data.code_ptr[data.visit_ptr[e]]) - n_kept


def _write_consensus(data: SequentialData, group: list[int], names: np.ndarray, consensus: list[ConsensusVisit],
                     part: _SequencePart, *, relative_time: bool) -> None:
    """The consensus written as every member's sequence: codes at their common ancestor, times as the
    visit's interval (or its rank, with ``relative_time``)."""
    h, scale = data.code_hierarchy, data.time_scale
    whens = [str(rank) if relative_time else scale.interval(v.low, v.high) for rank, v in enumerate(consensus, 1)]
    labels = [[h.labels[level][h.codes[level][rep]] for level, rep in v.codes] for v in consensus]
    bounds = tuple(np.array([float(getattr(v, end)) for v in consensus]) for end in ("low", "high"))
    for e in group:
        part.intervals[names[e]] = bounds
        for rank, (when, visit) in enumerate(zip(whens, labels, strict=True), start=1):
            part.rows.extend((names[e], f"{names[e]}-V{rank}", when, label) for label in visit)


def _assemble(data: SequentialData, groups: np.ndarray, k: int, names: np.ndarray, qi_labels: list[np.ndarray],
              rel_ncp: np.ndarray, part: _SequencePart, *, relative_time: bool, sequences: bool) -> SequentialRelease:
    """The output: the entity table (pseudonyms, generalized QIs, kept columns), the event table, the losses."""
    released = [c for c, role in data.column_roles[data.name].items() if role in (QI, KEPT)]
    ents = data.entities[released].copy()
    for name, column in zip(data.qi, qi_labels, strict=True):
        ents[name] = column
    ents.insert(0, data.entity_id, names)
    events = pd.DataFrame(part.rows, columns=[data.entity_id, data.sequence_key, data.order_by, data.code])
    events = events.sort_values([data.entity_id], kind="stable").reset_index(drop=True)
    total_codes = len(data.codes)
    seq_loss = (part.suppressed.sum() + float(np.sum(part.kept_ncp))) / total_codes if total_codes else 0.0
    return SequentialRelease(ents, events, groups, k, part.suppressed, float(rel_ncp.mean()) if rel_ncp.size else 0.0,
                             float(seq_loss), names, part.intervals,
                             data.column_fates(relative_time=relative_time, sequences=sequences))
