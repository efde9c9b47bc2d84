"""``microrelease microaggregate``: MDAV-ID, MDAV-SWAP or IR-SWAP on numeric attributes, with a
report re-checked from the written file."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.options import (
    SEED_HELP,
    OutputRequest,
    add_input_options,
    add_output_options,
    add_quiet_option,
    columns,
    non_negative,
    pairs,
    resolve_input,
    split,
    warn_if_seeded,
)
from microrelease.app.cli.output import finish
from microrelease.app.cli.progress import progress_bar
from microrelease.app.text import plural
from microrelease.core import MicroreleaseError, read_table
from microrelease.core.data.reading import file_checksum
from microrelease.core.data.samples import MICRODATA_SAMPLES, microdata_sample
from microrelease.core.micro.micro_release import write_microaggregation
from microrelease.core.micro.microaggregation import METHODS, microaggregate
from microrelease.core.release import file_target

NAME = "microaggregate"
HELP = "MDAV-ID, MDAV-SWAP or IR-SWAP on numeric attributes, with a report"


@dataclass(frozen=True)
class MicroaggregateRequest:
    path: str | Path
    qi: tuple[str, ...]
    confidential: tuple[str, ...]
    identifiers: tuple[str, ...]
    k: int
    method: str
    k_per_attribute: Mapping[str, int]
    seed: int | None
    sep: str | None
    output: OutputRequest
    quiet: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> MicroaggregateRequest:
        path, chosen = resolve_input(args, microdata_sample)
        qi, confidential = columns(args.qi, "quasi_identifiers"), columns(args.confidential, "confidential")
        identifiers = columns(args.identifier, "identifiers")
        if chosen:  # the sample's split of its columns, for what was left out
            qi, confidential = qi or chosen.qi, confidential or chosen.confidential
            identifiers = identifiers or chosen.identifiers
        k_per_attribute, bad = {}, []
        flag = FLAGS["k_per_attribute"]
        for name, value in pairs([p for item in args.k_per_attribute for p in split(item)], flag).items():
            try:
                k_per_attribute[name] = int(value)
            except ValueError:
                bad.append(f"{name}={value}")
        if bad:
            raise MicroreleaseError(f"{flag} expects whole numbers, got {bad}")
        return cls(path, qi, confidential, identifiers, args.k, args.method, k_per_attribute, args.seed, args.sep,
                   OutputRequest.from_args(args), args.quiet)


Request = MicroaggregateRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_options(p, MICRODATA_SAMPLES, data_help="CSV file (or use --sample)",
                      sample_help="a bundled CASC data set")
    p.add_argument("--qi", default="", help="numeric quasi-identifiers A,B,... (MDAV groups on them)")
    p.add_argument("--confidential", default="", help="numeric confidential attributes (ir-swap permutes them)")
    p.add_argument("--identifier", default="", help="identifier columns: dropped from the output")
    p.add_argument("--k", type=int, required=True, help="group size: at least k records per group")
    p.add_argument("--method", default="mdav-id", choices=sorted(METHODS), help="how groups are released")
    p.add_argument("--k-per-attribute", action="append", default=[], metavar="A=5",
                   help="ir-swap: a k of its own for confidential attribute A")
    p.add_argument("--seed", type=non_negative, default=None, help="swap methods: " + SEED_HELP)
    add_quiet_option(p)
    add_output_options(p, out_help="output CSV; the report goes to OUT.report.json")


def run(request: MicroaggregateRequest) -> int:
    path, output = request.path, request.output
    checksum = file_checksum(path)
    file_target(output.path, protected=[path], force=output.force)  # refused before any work, not after
    table = read_table(path, sep=request.sep)
    warn_if_seeded(request.seed)
    with progress_bar("microaggregating", request.quiet) as bar:
        result = microaggregate(table, qi=list(request.qi), confidential=list(request.confidential), k=request.k,
                                method=request.method, k_per_attribute=dict(request.k_per_attribute) or None,
                                identifiers=list(request.identifiers), rng=request.seed, progress=bar)
    published = write_microaggregation(result, output.path, identifiers=list(request.identifiers), source=str(path),
                                       checksum=checksum, sep=output.sep, escape=output.escape_formulas,
                                       force=output.force)
    report, audit = published.data, published.audit
    risk = audit["linkage_risk"]["released"]
    linked = f", linkage {float(risk['reidentified']):.3f} (1/k = {risk['bound_1_over_k']:.3f})" if risk else ""
    return finish(published, output, f"{request.method} with k={request.k}: wrote "
                                     f"{plural(report['output']['rows'], 'row')} to {output.path}; SSE/SST {float(audit['information_loss']['sse_sst_percent']):.2f} %"
                                     f"{linked}")
