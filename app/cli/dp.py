"""``microrelease dp``: an epsilon-differentially private release of numeric attributes, with a
report re-checked from the written file."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from microrelease.app.cli.options import (
    OutputRequest,
    add_input_options,
    add_output_options,
    non_negative,
    resolve_input,
    split,
)
from microrelease.app.cli.output import finish
from microrelease.core import read_table
from microrelease.core.data.dataset import file_checksum
from microrelease.core.data.samples import MICRODATA_SAMPLES, microdata_sample
from microrelease.core.dp.mechanisms import MECHANISMS
from microrelease.core.dp.microdata import DP_METHODS, PrivacyWarning, dp_release, parse_bounds
from microrelease.core.dp.release import write_dp_release
from microrelease.core.release import file_target

NAME = "dp"
HELP = "an epsilon-differentially private release of numeric attributes"
# Only a sample that declares bounds can be released without --bounds; the others would always fail.
BOUNDED_SAMPLES = {name: s for name, s in MICRODATA_SAMPLES.items() if s.bounds}


@dataclass(frozen=True)
class DPRequest:
    path: str | Path
    attributes: tuple[str, ...]
    bounds: Mapping[str, tuple[float, float]]
    epsilon: float
    method: str
    noise: str
    k: int | None
    identifiers: tuple[str, ...]
    seed: int | None
    sep: str | None
    output: OutputRequest

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> DPRequest:
        path, chosen = resolve_input(args, microdata_sample)
        attributes = split(args.attrs) or ((*chosen.qi, *chosen.confidential) if chosen else ())
        # declared bounds only: the sample's are public round figures, never the data's own range
        # (a sample declares bounds for all its columns: those of the attributes released are the ones used)
        bounds = parse_bounds(args.bounds) if args.bounds or not chosen else {
            name: bound for name, bound in chosen.bounds_dict.items() if name in attributes}
        return cls(path, attributes, bounds, args.epsilon, args.method, args.noise, args.k, split(args.identifier), args.seed,
                   args.sep, OutputRequest.from_args(args))


Request = DPRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_options(p, BOUNDED_SAMPLES, data_help="CSV file (or use --sample)",
                      sample_help="a bundled CASC data set that declares its bounds")
    p.add_argument("--attrs", default="", help="numeric attributes to release with noise A,B,...")
    p.add_argument("--bounds", default="", help="declared domain bounds A=LO:HI,... (required: never from the data)")
    p.add_argument("--epsilon", type=float, required=True, help="the privacy budget, split evenly over the attributes")
    p.add_argument("--method", default="ir-mdav", choices=sorted(DP_METHODS), help="how the noise is applied")
    p.add_argument("--noise", default="laplace", choices=sorted(MECHANISMS),
                   help="the noise mechanism (staircase: the optimal noise of the thesis)")
    p.add_argument("--k", type=int, help="cluster size of the microaggregation methods")
    p.add_argument("--identifier", default="", help="identifier columns: dropped from the output")
    p.add_argument("--seed", type=non_negative, default=None, help="seed of the noise (for reproducible tests only)")
    add_output_options(p, out_help="output CSV; the report goes to OUT.report.json")


def run(request: DPRequest) -> int:
    path, output = request.path, request.output
    file_target(output.path, protected=[path], force=output.force)  # refused before any work, not after
    table = read_table(path, sep=request.sep)
    with warnings.catch_warnings(record=True) as caught:  # the core drops the identifiers, and checks the file
        warnings.simplefilter("always", PrivacyWarning)
        release = dp_release(table, list(request.attributes), bounds=dict(request.bounds), epsilon=request.epsilon,
                             method=request.method, noise=request.noise, k=request.k,
                             identifiers=list(request.identifiers), rng=request.seed)
    for w in caught:
        print(f"microrelease: warning: {w.message}", file=sys.stderr)
    published = write_dp_release(release, table, output.path, identifiers=list(request.identifiers), source=str(path),
                                 checksum=file_checksum(path), sep=output.sep,
                                 warnings_raised=[str(w.message) for w in caught], escape=output.escape_formulas,
                                 force=output.force)
    report = published.data
    return finish(published, output, f"{request.method} ({request.noise} noise) at epsilon={request.epsilon:g}: wrote "
                                     f"{report['output']['rows']} rows to {output.path}; SSE/SST "
                                     f"{float(report['information_loss']['sse_sst_percent']):.2f} %")
