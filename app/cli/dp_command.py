"""``microrelease dp``: an epsilon-differentially private release of numeric attributes, with a
report re-checked from the written file."""

from __future__ import annotations

import argparse
import sys
import warnings
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
from microrelease.core.dp.dp_writing import write_dp_release
from microrelease.core.dp.mechanisms import MECHANISMS
from microrelease.core.dp.microdata import DP_METHODS, dp_release, parse_bounds
from microrelease.core.dp.ratio_closeness import ratio_closeness_release
from microrelease.core.dp.ratio_release import write_ratio_closeness
from microrelease.core.exceptions import PrivacyWarning
from microrelease.core.release import file_target

NAME = "dp"
HELP = "an epsilon-differentially private release of numeric attributes (or the ratio-closeness route)"
RATIO = "ratio-closeness"  # the route from t-closeness (multiplicative) to DP: true values, k-anonymous QIs
METHODS = (*DP_METHODS, RATIO)
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
    keep: tuple[str, ...]
    linked: bool
    seed: int | None
    qi: tuple[str, ...]  # ratio-closeness: the QIs released as class centroids
    confidential: str  # ratio-closeness: the attribute released as it is
    bins: int
    cuts: tuple[float, ...] | None
    sep: str | None
    output: OutputRequest
    quiet: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> DPRequest:
        path, chosen = resolve_input(args, microdata_sample)
        identifiers = _identifiers(columns(args.identifier, "identifiers"), chosen)
        bounds_text = ",".join(args.bounds)  # --bounds is repeatable; a column bounded twice is refused
        _validate_method(args.method)
        if args.method == RATIO:
            _refuse_noise_options({"attributes": args.attrs, "noise": args.noise, "linked": args.linked_records,
                                   "rng": args.seed is not None})
            qi = _ratio_qi(columns(args.qi, "quasi_identifiers"), args.confidential, chosen)
            cuts = _cuts(args.cuts)
            bounds = _ratio_bounds(bounds_text, args.confidential, chosen, cuts)
            return cls(path, (), bounds, args.epsilon, RATIO, "", args.k, identifiers, columns(args.keep, "keep"),
                       False, None, qi=qi, confidential=args.confidential, bins=args.bins, cuts=cuts, sep=args.sep,
                       output=OutputRequest.from_args(args), quiet=args.quiet)
        _refuse_ratio_options({"quasi_identifiers": args.qi, "confidential": args.confidential, "cuts": args.cuts})
        attributes = columns(args.attrs, "attributes") or _sample_attributes(chosen)
        bounds = _noise_bounds(bounds_text, chosen, attributes)
        return cls(path, attributes, bounds, args.epsilon, args.method, args.noise or "laplace", args.k, identifiers,
                   columns(args.keep, "keep"), args.linked_records, args.seed, qi=(), confidential="", bins=args.bins,
                   cuts=None, sep=args.sep, output=OutputRequest.from_args(args), quiet=args.quiet)


def _identifiers(typed: tuple[str, ...], chosen) -> tuple[str, ...]:
    """The typed identifiers, and a sample's declared ones: never released, whatever was typed."""
    return tuple(dict.fromkeys([*typed, *(chosen.identifiers if chosen else ())]))


def _validate_method(method: str) -> None:
    """--method: a noise method or the ratio-closeness route (t-closeness is pointed to the latter)."""
    if method not in METHODS:
        hint = (f" (t-closeness, Li et al.'s EMD bound, is a privacy model of search and release; its "
                f"multiplicative form, the route to DP, is {RATIO})" if method == "t-closeness" else "")
        raise MicroreleaseError(f"{FLAGS['method']} must be one of {', '.join(METHODS)}; got {method!r}{hint}")


def _refuse_noise_options(given: Mapping[str, object]) -> None:
    """The noise routes' options (parameter -> what was given), refused under ratio-closeness."""
    for name, value in given.items():
        if value:
            raise MicroreleaseError(f"{FLAGS[name]} is not used by {FLAGS['method']} {RATIO} "
                                    "(no noise: true values)")


def _refuse_ratio_options(given: Mapping[str, object]) -> None:
    """The ratio-closeness options (parameter -> what was given), refused under a noise method."""
    for name, value in given.items():
        if value:
            raise MicroreleaseError(f"{FLAGS[name]} is for {FLAGS['method']} {RATIO}; the noise methods take "
                                    f"{FLAGS['attributes']}")


def _ratio_qi(typed: tuple[str, ...], confidential: str, chosen) -> tuple[str, ...]:
    """The QIs (typed, or the sample's), required with the confidential attribute."""
    qi = typed or (chosen.qi if chosen else ())
    if not qi or not confidential:
        raise MicroreleaseError(f"{FLAGS['method']} {RATIO} needs {FLAGS['quasi_identifiers']} (or a "
                                f"sample's) and {FLAGS['confidential']}")
    return tuple(qi)


def _cuts(text: str) -> tuple[float, ...] | None:
    """--cuts C1,C2,...: declared bin edges; None when not given."""
    if not text:
        return None
    try:
        return tuple(float(c) for c in split(text))
    except ValueError:
        raise MicroreleaseError(f"{FLAGS['cuts']} expects numbers C1,C2,...; got {text!r}") from None


def _ratio_bounds(bounds_text: str, confidential: str, chosen,
                  cuts: tuple[float, ...] | None) -> Mapping[str, tuple[float, float]]:
    """The confidential attribute's bounds for its equal-width bins: given, or the sample's (not with --cuts)."""
    given = parse_bounds(bounds_text) if bounds_text else {}
    bounds = given or ({confidential: chosen.bounds_dict[confidential]}
                       if chosen and cuts is None and confidential in chosen.bounds_dict else {})
    unused = [name for name in given if name != confidential]
    if unused or (cuts is not None and given):
        raise MicroreleaseError(f"{FLAGS['bounds']} is only for the confidential attribute's equal-width "
                                f"bins (give it, or {FLAGS['cuts']}, not both); got {sorted(given)}")
    return bounds


def _sample_attributes(chosen) -> tuple[str, ...]:
    """A sample's attributes released with noise when none is typed: its QIs and confidential ones."""
    return (*chosen.qi, *chosen.confidential) if chosen else ()


def _noise_bounds(bounds_text: str, chosen, attributes: tuple[str, ...]) -> Mapping[str, tuple[float, float]]:
    """Declared bounds only: the sample's are public round figures, never the data's own range (a
    sample declares bounds for all its columns: those of the attributes released are the ones used)."""
    if bounds_text or not chosen:
        return parse_bounds(bounds_text)
    return {name: bound for name, bound in chosen.bounds_dict.items() if name in attributes}


Request = DPRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_input_options(p, BOUNDED_SAMPLES, data_help="CSV file (or use --sample)",
                      sample_help="a bundled CASC data set that declares its bounds")
    p.add_argument("--attrs", default="", help="numeric attributes to release with noise A,B,...")
    p.add_argument("--bounds", action="append", default=[], metavar="A=LO:HI,...",
                   help="declared domain bounds (required: never from the data; repeatable)")
    p.add_argument("--epsilon", type=float, required=True, help="the privacy budget, split evenly over the attributes")
    p.add_argument("--method", default="ir-mdav", metavar="{" + ",".join(METHODS) + "}",
                   help=f"how the noise is applied; {RATIO}: no noise, k-anonymous QIs whose classes keep the "
                        "confidential attribute's declared bins within exp(epsilon/2) of the table's shares")
    p.add_argument("--noise", default=None, choices=sorted(MECHANISMS),
                   help="the noise mechanism (default laplace; staircase: the optimal noise of the thesis)")
    p.add_argument("--qi", default="", help=f"{RATIO}: numeric QIs A,B,... released as class centroids")
    p.add_argument("--confidential", default="", help=f"{RATIO}: the numeric attribute released as it is")
    p.add_argument("--bins", type=int, default=4, help=f"{RATIO}: equal-width bins over the confidential attribute's "
                                                       "declared --bounds C=LO:HI")
    p.add_argument("--cuts", default="", help=f"{RATIO}: declared bin edges C1,C2,... instead of --bins")
    p.add_argument("--k", type=int, help="cluster size of the microaggregation methods")
    p.add_argument("--identifier", default="", help="identifier columns: never released")
    p.add_argument("--keep", default="", help="other columns C,D to release as they are, WITHOUT protection (by "
                                              "default only the attributes are released, with noise)")
    p.add_argument("--linked-records", action="store_true",
                   help="ir-mdav on several attributes: keep records whole (the file is then not epsilon-DP as a "
                        "whole: which records share a group is released as is); by default each column is "
                        "released in its own random order")
    p.add_argument("--seed", type=non_negative, default=None, help="seed of the noise: " + SEED_HELP)
    add_quiet_option(p)
    add_output_options(p, out_help="output CSV; the report goes to OUT.report.json")


def run(request: DPRequest) -> int:
    """Read, release, write and re-check, with a bar moving at each of the three steps."""
    path, output = request.path, request.output
    file_target(output.path, protected=[path], force=output.force)  # refused before any work, not after
    with progress_bar(f"{NAME} {request.method}", request.quiet) as bar:
        bar(0.0)
        table = read_table(path, sep=request.sep)
        bar(1 / 3)
        return (run_ratio if request.method == RATIO else run_noise)(request, table, bar)


def run_noise(request: DPRequest, table, bar) -> int:
    """The noise routes: noisy values written, the report re-checked from the file."""
    path, output = request.path, request.output
    warn_if_seeded(request.seed)
    with warnings.catch_warnings(record=True) as caught:  # the core drops the identifiers, and checks the file
        warnings.simplefilter("always", PrivacyWarning)
        release = dp_release(table, list(request.attributes), bounds=dict(request.bounds), epsilon=request.epsilon,
                             method=request.method, noise=request.noise, k=request.k,
                             identifiers=list(request.identifiers), keep=list(request.keep),
                             linked=request.linked, rng=request.seed)
    bar(2 / 3)
    caught = [w for w in caught if issubclass(w.category, PrivacyWarning)]
    for w in caught:
        print(f"microrelease: warning: {w.message}", file=sys.stderr)
    published = write_dp_release(release, table, output.path, identifiers=list(request.identifiers), source=str(path),
                                 checksum=file_checksum(path), sep=output.sep,
                                 warnings_raised=[str(w.message) for w in caught], escape=output.escape_formulas,
                                 force=output.force)
    bar(1.0)
    report = published.data
    loss = "undefined (a constant attribute)" if release.loss is None else f"{release.loss.sse_sst:.2f} %"
    return finish(published, output, f"{request.method} ({request.noise} noise) at epsilon={request.epsilon:g}: wrote "
                                     f"{plural(report['output']['rows'], 'row')} to {output.path}; SSE/SST {loss}\n"
                                     f"guarantee: {release.guarantee}")


def run_ratio(request: DPRequest, table, bar) -> int:
    """The ratio-closeness route: classes built, written, and the epsilon achieved read from the file."""
    output = request.output
    conf = request.confidential
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        release = ratio_closeness_release(table, list(request.qi), conf, epsilon=request.epsilon, k=request.k,
                                          bounds=request.bounds.get(conf) if request.cuts is None else None,
                                          bins=request.bins, cuts=request.cuts)
        if request.keep:
            warnings.warn(f"{list(request.keep)} released as is, without protection", PrivacyWarning, stacklevel=1)
    bar(2 / 3)
    if release.single_class_reason:
        print(f"microrelease: warning: one class only: {release.single_class_reason}", file=sys.stderr)
    if release.clamped:
        print(f"microrelease: warning: {release.clamped} value(s) of {conf} outside the declared bounds, counted in "
              "the end bins (and released as they are)", file=sys.stderr)
    caught = [w for w in caught if issubclass(w.category, PrivacyWarning)]
    for w in caught:
        print(f"microrelease: warning: {w.message}", file=sys.stderr)
    published = write_ratio_closeness(release, table, output.path, identifiers=list(request.identifiers),
                                      keep=list(request.keep), source=str(request.path),
                                      checksum=file_checksum(request.path), sep=output.sep,
                                      warnings_raised=[str(w.message) for w in caught],
                                      escape=output.escape_formulas, force=output.force)
    bar(1.0)
    found = published.data["file"]
    return finish(published, output, f"{RATIO} at epsilon={request.epsilon:g}, k={request.k}: wrote "
                                     f"{plural(published.data['output']['rows'], 'row')} to {output.path}; "
                                     f"{plural(found['classes'], 'class', 'classes')} (smallest {found['smallest_class']}), epsilon on the declared bins "
                                     f"{found['epsilon_on_declared_bins']:.4g} (read from the file), QI SSE/SST "
                                     f"{release.sse_sst:.2f} %")
