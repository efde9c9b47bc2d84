"""The whole pipeline for relational + sequential data, and writing its output with a report.

``anonymize_sequential``: cost model -> grouping -> group anonymization. ``write_sequential``
writes ``entities.csv``, ``events.csv`` and ``report.json`` into a folder, after checking the written
files alone (every entity shares both parts with at least k − 1 others; no identifier column). The
attackers' success before and after (``microrelease.core.sequential.attacks``) is measured with
the original data, so it goes to the data steward's ``audit.json``, never the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from microrelease.core.data.reading import file_checksum
from microrelease.core.release import (
    Published,
    Verification,
    Verified,
    folder_target,
    publish,
    with_formula_verification,
)
from microrelease.core.release.cells import escape_formulas, formula_cells, refuse_formula_headers, shuffled
from microrelease.core.release.table import write_csv
from microrelease.core.sequential.anonymize import SequentialRelease, anonymize_groups
from microrelease.core.sequential.attacks import ATTACKER_TEXT, attack_figures
from microrelease.core.sequential.cost import CostModel, CostWeights
from microrelease.core.sequential.grouping import group_entities
from microrelease.core.sequential.guarantee import released_records, verify_release
from microrelease.core.sequential.rt_data import SequentialData
from microrelease.core.validation import validate_k

ATTACK_MODEL = ("the attacker knows a target's original QIs and some of its original codes (or its whole history "
                "with times), knows that values are generalized, elements suppressed, visits merged and order "
                "kept, and picks at random among the consistent released records that need the fewest "
                "suppressions of what it knows, then the fewest generalization levels; success = 1/candidates "
                "when the target is among them, the mean over targets (before: against the input; after: "
                "against the written files); see microrelease.core.sequential.attacks")


def anonymize_sequential(data: SequentialData, k: int, *, weights: CostWeights | None = None,
                         method: str = "greedy", relative_time: bool = False, relational_only: bool = False,
                         progress=None) -> SequentialRelease:
    """k-anonymize ``data`` over both parts (``relational_only``: group and generalize the relational
    part alone and leave the sequences as they are, the baseline).

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
    SequentialRelease
        The anonymized tables and their loss.
    """
    k = validate_k(k, data.n_entities)
    weights = weights or CostWeights()
    if relational_only:
        weights = CostWeights(relational=1.0, sequence=0.0, time=weights.time)
    groups = group_entities(CostModel(data, weights), k, method=method, progress=progress)
    return anonymize_groups(data, groups, k, w_time=weights.time, relative_time=relative_time,
                            sequences=not relational_only)


def in_random_blocks(events: pd.DataFrame, entity_id: str) -> pd.DataFrame:
    """Events in blocks per entity, the blocks in an order drawn from OS entropy: within a block the
    order stays (the order of codes in a visit is data)."""
    names = events[entity_id].astype(str)
    blocks = pd.Series(np.random.default_rng().permutation(names.nunique()), index=names.unique())
    return events.iloc[np.argsort(names.map(blocks).to_numpy(), kind="stable")].reset_index(drop=True)


def attack_section(data: SequentialData, released, release: SequentialRelease, attack_sample: int | None,
                   relative_time: bool) -> dict:
    """The audit's attack figures: the three attackers before and after (attacks.py)."""
    figures = attack_figures(data, released, release.pseudonym, sample=attack_sample)
    return {"model": ATTACK_MODEL, "targets": min(attack_sample or data.n_entities, data.n_entities),
            "bound_1_over_k": 1 / release.k,
            "times": "ranks only: unknown to the attacker" if relative_time else "the released intervals",
            "attackers": {name: {"knows": ATTACKER_TEXT[name], **f} for name, f in figures.items()}}


def write_sequential(release: SequentialRelease, data: SequentialData, outdir: str | Path, *,
                     parameters: dict | None = None, force: bool = False,
                     protected: Sequence[str | Path] = (), escape: bool = False,
                     inputs: Sequence[str | Path] = (), relative_time: bool = False,
                     attack_sample: int | None = 2000) -> Published:
    """Write the anonymized tables and the report (see the module docstring) through the one release
    path: into a new or empty folder (or over a previous release there, with ``force``), rows of both
    tables in random order, the report last. ``inputs``: the input files, named in the report with
    their checksums (and protected). ``relative_time``: as the release was made with (its visits then
    show ranks, so the attacker learns no times). ``attack_sample``: how many entities are attacked
    (None: all).

    Parameters
    ----------
    release : SequentialRelease
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
    target = folder_target(outdir, ("entities.csv", "events.csv"), protected=[*inputs, *protected], force=force)
    intervals = None if relative_time else release.intervals  # times in memory, not parsed from the text
    tables = {"entities": shuffled(release.entities), "events": in_random_blocks(release.events, data.entity_id)}

    def verify_tables(read, tables):
        ents, evs = read["entities"], read["events"]
        shared = verify_release(ents, evs, entity_id=data.entity_id, qi=data.qi, sequence_key=data.sequence_key,
                               order_by=data.order_by, code=data.code)
        smallest = int(shared.min()) if len(shared) else 0
        verifications = [
            Verification("entities", len(ents) == data.n_entities, f"{len(ents)} written, {data.n_entities} expected"),
            Verification("events", len(evs) == len(tables["events"]), f"{len(evs)} written, {len(tables['events'])} expected"),
            Verification(f"{release.k}-anonymity over both parts", not len(shared) or smallest >= release.k,
                  f"every entity shares QIs and whole history with >= {smallest - 1} others"),
            Verification("identifiers absent", not set(data.identifiers) & (set(ents.columns) | set(evs.columns)),
                  f"none of {list(data.identifiers)}"),
        ]
        # codes and QIs as written, times from memory
        return verifications, smallest, released_records(data, ents, evs, intervals), [*ents.columns, *evs.columns]

    n_entities, n_events = len(tables["entities"]), len(tables["events"])
    body = {
        "kind": "relational + sequential",
        "parameters": {"k": release.k, "qi": list(data.qi), "identifiers_dropped": list(data.identifiers),
                       "pseudonyms": "drawn from OS entropy (never seeded)", "seeded": False,
                       "relative_time": relative_time, "columns": release.columns, **dict(parameters or {})},
        # how many events the input had (and so how many were suppressed) is the steward's: see the audit
        "counts": {"input_entities": data.n_entities, "released_entities": n_entities, "released_events": n_events},
    }
    # computed with the original data: the data steward's, not for publication
    audit = {"seeded": False,
             "counts": {"input_events": int(len(data.codes)), "suppressed_elements": int(release.suppressed_elements.sum())},
             "missing_qi_values": data.missing_counts}
    return publish_tables(target, {name: f"{name}.csv" for name in tables}, tables, verify_tables, release=release,
                          data=data, body=body, audit=audit, inputs=inputs, escape=escape, relative_time=relative_time,
                          attack_sample=attack_sample,
                          output={"entities": n_entities, "events": n_events,
                                  "row_order": "random (drawn from OS entropy)"})


def publish_tables(target, files: dict[str, str], tables: dict[str, pd.DataFrame], verify_tables, *,
                   release: SequentialRelease, data: SequentialData, body: dict, audit: dict, output: dict,
                   escape: bool, inputs: Sequence[str | Path], relative_time: bool,
                   attack_sample: int | None) -> Published:
    """The one study writer, for the relational + sequential release and a whole study alike: the
    ``tables`` (already in random order) escaped when asked, written as ``files`` (table -> file name),
    read back and checked, attacked, and published with the report last. ``verify_tables(read, tables)``:
    from the tables as written (by table name) and as meant, the release's own checks, the smallest
    shared set, the released records the attackers read and the columns the formula check names.
    ``body`` and ``audit`` get the groups, the inputs (their checksums in the audit) and the losses."""
    if escape:
        refuse_formula_headers([c for frame in tables.values() for c in frame.columns])
        tables = {name: escape_formulas(frame) for name, frame in tables.items()}

    def write(paths):
        for name, frame in tables.items():
            write_csv(frame, paths[files[name]])

    def verify(paths):
        read = {name: pd.read_csv(paths[file], dtype=str, keep_default_na=False) for name, file in files.items()}
        verifications, smallest, released, columns = verify_tables(read, tables)
        found = {f"{files[n]}:{c}": v for n, frame in read.items() for c, v in formula_cells(frame).items()}
        verified = with_formula_verification(verifications, found, escape, columns)
        attack = attack_section(data, released, release, attack_sample, relative_time)
        return Verified(verified.verifications, {**verified.facts, "check": {"smallest_shared_set": smallest}},
                        {"attack": attack})

    sizes = np.bincount(release.groups)
    body = {**body, "groups": {"count": len(sizes), "smallest": int(sizes.min()), "largest": int(sizes.max())},
            "input": [{"name": Path(p).name} for p in inputs], "output": output}
    audit = {**audit, "losses": {"relational_ncp": round(release.relational_loss, 6),
                                 "sequence": round(release.sequence_loss, 6)},
             "input": [{"name": Path(p).name, "checksum": file_checksum(p)} for p in inputs]}
    return publish(target, write, verify, body, audit=audit)
