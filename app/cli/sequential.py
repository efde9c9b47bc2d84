"""``microrelease sequential``: k-anonymize entities with a relational part and visit sequences
(US 9,230,132), with a report re-checked from the written tables."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from dataclasses import dataclass

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.options import (
    OutputRequest,
    add_hierarchy_options,
    add_output_options,
    pairs,
    split,
)
from microrelease.app.cli.output import finish, protected_paths
from microrelease.app.cli.progress import progress_bar
from microrelease.core import MicroreleaseError, read_table
from microrelease.core.release import folder_target

NAME = "sequential"
HELP = "k-anonymize entities with a relational part and visit sequences"
F = FLAGS
EPILOG = f"""\
times ({F["order_by"]}): one kind per column, by this rule (surrounding spaces ignored, blank cells refused):
  numbers if every cell is a decimal number (inf and nan refused); else ISO dates if every cell is
  YYYY-MM-DD; else ISO timestamps if every cell is YYYY-MM-DDTHH:MM[:SS[.ffffff]] (T or a space), all
  with a zone (Z or +HH:MM/-HH:MM, written in UTC) or all without; anything else is refused, naming
  the column and some of its cells. A released visit's time is the interval FIRST..LAST (one value
  when they are equal), written exactly: integers as integers, other numbers in their shortest exact
  form, dates as dates, timestamps in ISO form.

columns: every input column needs a fate, or the run is refused naming it. Entity table: {F["entity_id"]}
  (pseudonyms), {F["quasi_identifiers"]} (generalized; a blank cell is a value of its own, as for search and release),
  {F["identifiers"]} (never written), {F["keep"]} (released as is, WITHOUT protection), {F["drop"]} (not released).
  Event table: {F["entity_id"]}, {F["sequence_key"]}, {F["order_by"]}, {F["code"]}, {F["identifiers"]} or {F["drop"]} (an event
  column cannot be kept: a value per event would tell the members of a group apart). The report
  lists each column's fate.
"""


@dataclass(frozen=True)
class SequentialRequest:
    entities: str
    events: str
    entity_id: str
    qi: tuple[str, ...]
    identifiers: tuple[str, ...]
    sequence_key: str
    order_by: str
    code: str
    code_hierarchy: str
    hierarchies: Mapping[str, str]
    hierarchy_dir: str | None
    k: int
    variant: str
    keep: tuple[str, ...]
    drop: tuple[str, ...]
    weights: Mapping[str, float]  # CostWeights' fields: relational, sequence, time
    relative_time: bool
    output: OutputRequest
    quiet: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SequentialRequest:
        qi = split(args.qi)
        if not qi:
            raise MicroreleaseError(f"{FLAGS['quasi_identifiers']} is required: the relational quasi-identifiers")
        weights = {"relational": args.w_relational, "sequence": args.w_sequence, "time": args.w_time}
        return cls(args.entities, args.events, args.entity_id, qi, split(args.identifier), args.sequence_key,
                   args.order_by, args.code, args.code_hierarchy, pairs(args.hierarchy, FLAGS["hierarchies"]),
                   args.hierarchy_dir, args.k, args.variant, split(args.keep), split(args.drop), weights,
                   args.relative_time, OutputRequest.from_args(args), args.quiet)


Request = SequentialRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class, p.epilog = argparse.RawDescriptionHelpFormatter, EPILOG
    p.add_argument("entities", help="entity table (CSV): one row per entity")
    p.add_argument("events", help="event table (CSV): one row per element (entity id, sequence, time, code)")
    p.add_argument("--entity-id", required=True, help="the entity id column (in both tables)")
    p.add_argument("--qi", required=True, help="relational quasi-identifiers A,B,...")
    p.add_argument("--identifier", default="", help="direct identifiers: never written")
    p.add_argument("--sequence-key", required=True, help="the column grouping events into sequences (visits)")
    p.add_argument("--order-by", required=True, help="the time column of the events: numbers, ISO dates or ISO "
                                                     "timestamps (the rule is below)")
    p.add_argument("--code", required=True, help="the code column of the events")
    p.add_argument("--code-hierarchy", required=True, help="ARX hierarchy of the codes")
    p.add_argument("--keep", default="", help="entity columns C,D released as they are, WITHOUT protection")
    p.add_argument("--drop", default="", help="columns C,D of either table that are not released")
    add_hierarchy_options(p)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--variant", default="greedy", choices=["greedy", "ranking"], help="grouping (see the docs)")
    p.add_argument("--w-relational", type=float, default=0.5, help="weight of the relational loss in F")
    p.add_argument("--w-sequence", type=float, default=0.5, help="weight of the sequence loss in F")
    p.add_argument("--w-time", type=float, default=1.0, help="weight of time differences in the alignment")
    p.add_argument("--relative-time", action="store_true", help="release visit ranks instead of time intervals")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_output_options(p, out_help="output folder: entities.csv, events.csv, report.json", folder=True)


def run(request: SequentialRequest) -> int:
    # loaded here, not at start-up: the grouping kernels take a while to import
    from microrelease.core.sequential.cost import CostWeights
    from microrelease.core.sequential.model import load_sequential
    from microrelease.core.sequential.release import anonymize_sequential, write_sequential

    output = request.output
    weights = CostWeights(**request.weights)  # refused before any work, not after
    protected = protected_paths([request.entities, request.events, *request.hierarchies.values(),
                                 request.code_hierarchy], request.hierarchy_dir, request.qi)
    folder_target(output.path, ("entities.csv", "events.csv"), protected=protected, force=output.force)
    entities, events = read_table(request.entities), read_table(request.events)
    for name, table in (("entity", entities), ("event", events)):
        if request.entity_id not in table.columns:  # the core would call it an unknown identifier column
            raise MicroreleaseError(f"no entity id column {request.entity_id!r} in the {name} table; it has "
                                    f"{list(table.columns)}", parameter="entity_id")
    data = load_sequential(entities, events, entity_id=request.entity_id, qi=list(request.qi),
                           sequence_key=request.sequence_key, order_by=request.order_by, code=request.code,
                           code_hierarchy=request.code_hierarchy, hierarchies=dict(request.hierarchies),
                           hierarchy_dir=request.hierarchy_dir, identifiers=list(request.identifiers),
                           keep=list(request.keep), drop=list(request.drop))
    if request.keep:
        print(f"microrelease: warning: {list(request.keep)} released as is, without protection", file=sys.stderr)
    with progress_bar("grouping entities", request.quiet) as bar:
        release = anonymize_sequential(data, request.k, weights=weights, variant=request.variant,
                                       relative_time=request.relative_time, progress=bar)
    parameters = {"variant": request.variant, "weights": vars(weights)}
    published = write_sequential(release, data, output.path, parameters=parameters, force=output.force,
                                 protected=protected, escape=output.escape_formulas,
                                 inputs=[request.entities, request.events], relative_time=request.relative_time)
    report = published.data
    return finish(published, output, f"wrote {report['output']['entities']} entities and "
                                     f"{report['output']['events']} events to {output.path}; every entity shares "
                                     f"both parts with >= {report['check']['smallest_shared_set'] - 1} others")
