"""``microrelease release``: write the released table (the policy's node, or ``--node``), its report
(OUT.report.json) and the report's page for a person (OUT.report.html), re-checked from the written file."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.lattice import LatticeRequest, add_lattice_options, criteria_of, read_rows
from microrelease.app.cli.options import (
    KMapRequest,
    OutputRequest,
    add_k_map_options,
    add_output_options,
    node_levels,
    non_negative,
)
from microrelease.app.cli.output import finish, protected_paths, refuse_hierarchy_names
from microrelease.app.cli.progress import progress_bar
from microrelease.app.cli.search_command import k_map_answer, k_map_model
from microrelease.app.text import plural
from microrelease.core import MicroreleaseError
from microrelease.core.lattice.node_release import NodeRelease, OutputOptions
from microrelease.core.release import file_target
from microrelease.core.validation import parse_max_sup, validate_share

NAME = "release"
HELP = "write the released table, its report and a printable HTML page of it, re-checked"


@dataclass(frozen=True)
class ReleaseRequest(LatticeRequest):
    node: tuple[int, ...] | None  # None: the policy's choice
    output: OutputRequest
    list_suppressed: int
    sampling_fraction: float | None  # the data's share of its population: the report adds the population's risk
    k_map: KMapRequest | None = None
    publish_reference: bool = False  # under t-closeness: the input's counts in the report (they disclose)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ReleaseRequest:
        return super().from_args(args, node=node_levels(args.node), output=OutputRequest.from_args(args, parquet=True),
                                 list_suppressed=args.list_suppressed,
                                 sampling_fraction=None if args.sampling_fraction is None
                                 else validate_share(args.sampling_fraction, "sampling_fraction"),  # before any work
                                 k_map=KMapRequest.from_args(args), publish_reference=args.publish_reference)


Request = ReleaseRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_lattice_options(p)
    add_k_map_options(p)
    p.add_argument("--node", help="release this node (levels in --qi order), instead of the policy's choice")
    add_output_options(p, out_help="output .csv or .parquet; the report goes to OUT.report.json, a page a person "
                                   "reads (and prints) to OUT.report.html")
    p.add_argument("--sampling-fraction", type=float, metavar="F",
                   help="the data is a sample of this share of its population: the report adds the journalist's "
                        "and marketer's risk and the estimated population uniques (Dankar et al.)")
    p.add_argument("--list-suppressed", type=non_negative, default=0, metavar="N",
                   help="list up to N suppressed classes in the report (they single out outliers: keep such a "
                        "report private); default: their number only")
    p.add_argument("--publish-reference", action="store_true",
                   help="under t-closeness, publish the input's counts of the sensitive values in the report, so that "
                        "a reader can check the claim against them; they disclose the suppressed rows: minus the "
                        "file's counts they give those rows' sensitive values. Default: the figures only")


def run(request: ReleaseRequest) -> int:
    table, output = request.table, request.output
    attributes = [*table.qi, *table.sensitive]
    protected = protected_paths([*table.inputs, request.k_map.population if request.k_map else None],
                                table.hierarchy_dir, attributes)
    file_target(output.path, protected=protected, force=output.force)  # refused before any work, not after
    refuse_hierarchy_names(output.path, table.hierarchy_dir, attributes)
    if request.time_limit is not None:  # refused before any work: a release is decided on an exact answer
        raise MicroreleaseError("applies to search only: a release is written from an exact answer (give "
                                f"{FLAGS['node']} to release a node a time-limited search found)", parameter="time_limit")
    rows = read_rows(request)
    policy, weights = request.query.policy, dict(request.query.weights)
    max_sup = parse_max_sup(request.query.max_sup, rows.dataset.n_rows)
    if request.node is not None:
        k_map = k_map_model(rows, request.k_map, request.quiet, joint=False)[0] if request.k_map else None
        spec = NodeRelease(rows.dataset, request.node, criteria_of(rows, request, k_map), max_sup)
    else:
        found, _, k_map = k_map_answer(rows, request, k_minimal=False)
        node = found.preferred(policy, weights).vector
        spec = NodeRelease(rows.dataset, node, criteria_of(rows, request, k_map), max_sup, f"policy {policy}", policy,
                           weights)
    with progress_bar(f"writing release ({request.engine.name})", request.quiet) as bar:
        published = spec.write(output.path, OutputOptions(
            sep=output.sep, escape=output.escape_formulas, force=output.force, protected=tuple(protected),
            list_classes=request.list_suppressed, sampling_fraction=request.sampling_fraction,
            publish_reference=request.publish_reference), progress=bar)
    c = published.data["counts"]
    why = c["suppressed_by_reason"]
    return finish(published, output,
                  f"released {c['released_rows']} of {plural(c['input_rows'], 'row')} at node {list(spec.node)} to "
                  f"{output.path} ({c['suppressed_rows']} suppressed: {why['class_smaller_than_k']} in classes "
                  f"smaller than k, {why['class_failing_a_privacy_model']} in larger classes failing a privacy model)")
