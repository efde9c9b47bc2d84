"""``microrelease sequential``: k-anonymize entities with a relational part and visit sequences
(US 9,230,132), with a report re-checked from the written tables. Either a study described by a TOML
file (``--config``: an entity table, satellite tables, several event tables) or the one-table
shorthand (an entity table and an event table, described by flags)."""

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
    columns,
    pairs,
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

a study ({F["config"]} study.toml, instead of the two tables and their column flags): an entity table, any
  number of satellite tables (rows keyed by the entity id, with their own QIs) and of event tables
  (sequence key, time, one or more code columns); a visit is a sequence-key value across the event
  tables. One file per table is written, named after it. The TOML form is in the README and in
  microrelease.core.sequential.study_config; [anonymization] there may set k, variant, relative_time
  and weights, which the flags override.
"""

# the one-table shorthand's flags: refused beside --config, which describes the tables itself
TABLE_FLAGS = ("entity_id", "qi", "identifier", "sequence_key", "order_by", "code", "code_hierarchy", "keep", "drop",
               "hierarchy", "hierarchy_dir")
DEFAULTS = {"variant": "greedy", "w_relational": 0.5, "w_sequence": 0.5, "w_time": 1.0}


@dataclass(frozen=True)
class SequentialRequest:
    config: str | None
    entities: str | None
    events: str | None
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
    method: str
    keep: tuple[str, ...]
    drop: tuple[str, ...]
    weights: Mapping[str, float]  # CostWeights' fields: relational, sequence, time
    relative_time: bool
    output: OutputRequest
    quiet: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SequentialRequest:
        settings = _input_settings(args.config, [args.entities, args.events],
                                   {name: getattr(args, name) for name in TABLE_FLAGS})
        k = _k(args.k, settings)
        weights = _weights({flag: getattr(args, flag) for flag in ("w_relational", "w_sequence", "w_time")}, settings)
        method = args.variant or settings.get("variant") or DEFAULTS["variant"]
        relative_time = bool(args.relative_time or settings.get("relative_time", False))
        return cls(args.config, args.entities, args.events, args.entity_id or "",
                   columns(args.qi, "quasi_identifiers"), columns(args.identifier, "identifiers"),
                   args.sequence_key or "", args.order_by or "", args.code or "",
                   args.code_hierarchy or "", pairs(args.hierarchy, FLAGS["hierarchies"]), args.hierarchy_dir, k,
                   method, columns(args.keep, "keep"), columns(args.drop, "drop"), weights, relative_time,
                   OutputRequest.from_args(args), args.quiet)


def _flag(name: str) -> str:
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def _input_settings(config: str | None, tables: list[str | None], table_flags: Mapping[str, object]) -> dict:
    """The input: a study file (whose [anonymization] settings are returned) or the one-table
    shorthand's two tables (``tables``: entities, events) and column flags (no settings); never
    both, never neither."""
    entities, events = tables
    if config:
        given = [_flag(n) for n in TABLE_FLAGS if table_flags[n] not in (None, "", [])]
        if entities or events or given:
            named = ["the table files" if entities or events else "", *given]
            raise MicroreleaseError(f"the study file describes the tables: drop {', '.join(n for n in named if n)}",
                                    parameter="config")
        return _study_settings(config)
    missing = [f for f, v in (("the entity table", entities), ("the event table", events),
                              *((_flag(n), table_flags[n]) for n in
                                ("entity_id", "qi", "sequence_key", "order_by", "code", "code_hierarchy")))
               if not v]
    if missing:
        raise MicroreleaseError(f"give {FLAGS['config']} study.toml, or {', '.join(missing)}")
    return {}


def _k(typed: int | None, settings: Mapping) -> int:
    """--k, or the study's k."""
    k = typed if typed is not None else settings.get("k")
    if k is None:
        raise MicroreleaseError(f"{FLAGS['k']} is required (or k in the study's [anonymization])")
    return k


def _weights(flags: Mapping[str, float | None], settings: Mapping) -> dict[str, float]:
    """The cost weights: a flag (``flags``: w_relational, w_sequence, w_time), else the study's, else the default."""
    weights = dict(settings.get("weights", {}))
    for name, flag in (("relational", "w_relational"), ("sequence", "w_sequence"), ("time", "w_time")):
        if flags[flag] is not None or name not in weights:
            weights[name] = flags[flag] if flags[flag] is not None else DEFAULTS[flag]
    return weights

def _study_settings(config: str) -> dict:
    """The study's [anonymization] settings (the study itself is read again by run())."""
    from microrelease.core.sequential.study_config import read_study  # heavy: sequential

    return dict(read_study(config).anonymization)


Request = SequentialRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class, p.epilog = argparse.RawDescriptionHelpFormatter, EPILOG
    p.add_argument("entities", nargs="?", help="entity table (CSV): one row per entity (not with --config)")
    p.add_argument("events", nargs="?", help="event table (CSV): one row per element (entity id, sequence, time, "
                                             "code) (not with --config)")
    p.add_argument("--config", help="a study described in TOML: its entity, satellite and event tables (see below)")
    p.add_argument("--entity-id", help="the entity id column (in both tables)")
    p.add_argument("--qi", help="relational quasi-identifiers A,B,...")
    p.add_argument("--identifier", default="", help="direct identifiers: never written")
    p.add_argument("--sequence-key", help="the column grouping events into sequences (visits)")
    p.add_argument("--order-by", help="the time column of the events: numbers, ISO dates or ISO timestamps (the rule "
                                      "is below)")
    p.add_argument("--code", help="the code column of the events")
    p.add_argument("--code-hierarchy", help="ARX hierarchy of the codes")
    p.add_argument("--keep", default="", help="entity columns C,D released as they are, WITHOUT protection")
    p.add_argument("--drop", default="", help="columns C,D of either table that are not released")
    add_hierarchy_options(p)
    p.add_argument("--k", type=int, help="at least k entities share every released record (or k in the study)")
    p.add_argument("--variant", choices=["greedy", "ranking"], help="grouping (see the docs; default greedy)")
    p.add_argument("--w-relational", type=float, help="weight of the relational loss in F (default 0.5)")
    p.add_argument("--w-sequence", type=float, help="weight of the sequence loss in F (default 0.5)")
    p.add_argument("--w-time", type=float, help="weight of time differences in the alignment (default 1)")
    p.add_argument("--relative-time", action="store_true", help="release visit ranks instead of time intervals")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_output_options(p, out_help="output folder: one CSV per table, report.json", folder=True)


def run(request: SequentialRequest) -> int:
    # loaded here, not at start-up: the grouping kernels take a while to import
    from microrelease.core.sequential.cost import CostWeights  # heavy: sequential
    from microrelease.core.sequential.pipeline import (  # heavy: sequential
        anonymize_sequential,
        write_sequential,
    )
    from microrelease.core.sequential.rt_data import load_sequential  # heavy: sequential

    output = request.output
    weights = CostWeights(**request.weights)  # refused before any work, not after
    if request.config:
        return run_study(request, weights)
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
        release = anonymize_sequential(data, request.k, weights=weights, method=request.method,
                                       relative_time=request.relative_time, progress=bar)
    parameters = {"variant": request.method, "weights": vars(weights)}
    published = write_sequential(release, data, output.path, parameters=parameters, force=output.force,
                                 protected=protected, escape=output.escape_formulas,
                                 inputs=[request.entities, request.events], relative_time=request.relative_time)
    report = published.data
    return finish(published, output, f"wrote {report['output']['entities']} entities and "
                                     f"{report['output']['events']} events to {output.path}; every entity shares "
                                     f"both parts with >= {report['check']['smallest_shared_set'] - 1} others")


def run_study(request: SequentialRequest, weights) -> int:
    from microrelease.core.sequential.study import load_study  # heavy: sequential
    from microrelease.core.sequential.study_config import read_study  # heavy: sequential
    from microrelease.core.sequential.study_release import anonymize_study, write_study  # heavy: sequential

    output = request.output
    study = read_study(request.config)
    names = [f"{t.name}.csv" for t in study.tables]
    folder_target(output.path, names, protected=study.files, force=output.force)
    data = load_study(study)
    if study.entities.keep:
        print(f"microrelease: warning: {list(study.entities.keep)} released as is, without protection", file=sys.stderr)
    with progress_bar("grouping entities", request.quiet) as bar:
        release = anonymize_study(data, request.k, weights=weights, method=request.method,
                                  relative_time=request.relative_time, progress=bar)
    parameters = {"variant": request.method, "weights": vars(weights)}
    published = write_study(release, data, output.path, parameters=parameters, force=output.force,
                            protected=study.files, escape=output.escape_formulas, inputs=[t.file for t in study.tables],
                            relative_time=request.relative_time)
    report = published.data
    rows = ", ".join(f"{n} {r}" for n, r in report["counts"]["released_rows"].items())
    inputs = {t.name: t.rows for t in data.event_tables} | {s.name: len(s.entity) for s in data.satellites}
    lost = ", ".join(f"{n} {release.suppressed[n] / inputs[n]:.0%}" for n in inputs if inputs[n])
    return finish(published, output, f"wrote {rows} rows to {output.path}; every entity shares all its tables with "
                                     f">= {report['check']['smallest_shared_set'] - 1} others; rows suppressed: {lost}")
