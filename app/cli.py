"""The ``microrelease`` command line: search the lattice, release a node, check a file.

Errors in the input print one line naming the column, value or parameter, and exit with status 2.
``check`` exits 0 when the file is k-anonymous and 1 when it is not.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

from microrelease.app.cli_output import (
    Terminated,
    add_output_options,
    finish,
    install_signal_handlers,
    protected_paths,
    refuse_hierarchy_names,
)
from microrelease.core import (
    POLICIES,
    Dataset,
    MicroreleaseError,
    build_profile,
    check_k_anonymity,
    load_dataset,
    query,
    read_table,
)
from microrelease.core.data.dataset import file_checksum
from microrelease.core.data.samples import MICRODATA_SAMPLES, SAMPLES, microdata_sample, sample
from microrelease.core.dp.microdata import DP_METHODS, PrivacyWarning, dp_release, parse_bounds
from microrelease.core.dp.release import write_dp_release
from microrelease.core.engines import ENGINES
from microrelease.core.engines.summary import TableSummary, summarize
from microrelease.core.exceptions import DataError, InvalidParameterError
from microrelease.core.lattice.hierarchies import find_hierarchy_file, read_arx
from microrelease.core.lattice.release import NodeRelease
from microrelease.core.micro.microaggregation import METHODS, microaggregate
from microrelease.core.micro.release import write_microaggregation
from microrelease.core.models.definitions import TCloseness, parse_l_diversity, parse_t_closeness
from microrelease.core.models.profile import build_model_profile, sensitive_frequency
from microrelease.core.release import file_target, folder_target
from microrelease.core.validation import parse_max_sup


class ProgressBar:
    """A one-line progress bar on stderr (drawn only on a terminal, silenced by --quiet)."""

    def __init__(self, label: str, quiet: bool, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = not quiet and self.stream.isatty()
        self.label = label

    def __call__(self, fraction: float) -> None:
        if self.enabled:
            filled = int(round(30 * fraction))
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {fraction:4.0%}")
            self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")


def _split(text: str | None) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()] if text else []


def _pairs(items: Sequence[str], option: str) -> dict[str, str]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise MicroreleaseError(f"{option} expects NAME=VALUE, got {item!r}")
        out[name.strip()] = value.strip()
    return out


def _weights(items: Sequence[str], policy: str | None = None) -> dict[str, float]:
    """The --weights; refused when ``policy`` (if given) does not use them, rather than ignored."""
    weights = {}
    for name, value in _pairs([part for item in items for part in _split(item)], "--weights").items():
        try:
            weights[name] = float(value)
        except ValueError:
            raise MicroreleaseError(f"--weights: the weight of {name!r} must be a number, got {value!r}") from None
    if weights and policy is not None and not POLICIES[policy].uses_weights:
        users = sorted(name for name, p in POLICIES.items() if p.uses_weights)
        raise MicroreleaseError(f"--weights applies to --policy {' / '.join(users)} only, not --policy {policy}")
    return weights


def _separator(text: str) -> str:
    """argparse type of --sep / --out-sep: one character that can separate CSV fields."""
    if len(text) != 1 or text in "\"\r\n":
        raise argparse.ArgumentTypeError(f"must be one character, not a quote or a line break. Got {text!r} instead.")
    return text


def _non_negative(text: str) -> int:
    """argparse type of --seed (what NumPy's generators accept) and --list-suppressed."""
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"must be a non-negative integer. Got {text!r} instead.")
    return int(text)


def _add_data_options(p: argparse.ArgumentParser, *, hierarchies: bool = True) -> None:
    p.add_argument("data", nargs="?", help="CSV or Parquet file, folder of partitions or glob (or use --sample)")
    p.add_argument("--sample", choices=sorted(SAMPLES), help="use a bundled sample data set with its hierarchies")
    p.add_argument("--qi", help="quasi-identifiers A,B,... in this order (vectors follow it)")
    p.add_argument("--identifier", default="", help="identifier columns C,D: dropped from every output")
    p.add_argument("--sensitive", default="", help="sensitive column(s)")
    p.add_argument("--sep", type=_separator, default=None, help="field separator of DATA (default: detected)")
    if hierarchies:
        p.add_argument("--hierarchy", action="append", default=[], metavar="A=PATH", help="ARX hierarchy file of QI A")
        p.add_argument("--hierarchy-dir", help="folder with *_hierarchy_A.csv or A.csv per QI")
        p.add_argument("--strategy", default="auto", choices=["auto", "numba", "numpy", "direct"],
                       help="how the whole-lattice profile is computed")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_model_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("privacy models on the --sensitive attribute (beside k-anonymity)")
    g.add_argument("--l-diversity", metavar="SPEC", help="distinct:L, entropy:L or recursive:C:L")
    g.add_argument("--t-closeness", metavar="T[:DIST]",
                   help="EMD to the table's distribution <= T; DIST equal (default), ordered or hierarchical "
                        "(the sensitive attribute's hierarchy from --hierarchy / --hierarchy-dir)")


def _models(args):
    """(Dataset, SensitiveFrequency, models) when l-diversity / t-closeness are asked for, else None."""
    if not (args.l_diversity or args.t_closeness):
        return None
    sensitive = _split(args.sensitive)
    if len(sensitive) != 1:
        raise MicroreleaseError("--l-diversity / --t-closeness need exactly one --sensitive attribute")
    if args.engine not in (None, "pandas"):
        raise MicroreleaseError("l-diversity and t-closeness run in memory: use --engine pandas (or leave --engine out)")
    dataset = _load(args)
    attribute = sensitive[0]
    models = []
    if args.l_diversity:
        models.append(parse_l_diversity(args.l_diversity))
    hierarchy = None
    if args.t_closeness:
        t, distance = parse_t_closeness(args.t_closeness)
        if distance == "hierarchical":
            path, _, hierarchy_dir = _resolve_data(args)
            given = _pairs(args.hierarchy, "--hierarchy").get(attribute)
            found = given or (find_hierarchy_file(hierarchy_dir, attribute) if hierarchy_dir else None)
            hierarchy = read_arx(found, attribute) if found else None
        models.append(TCloseness(t, distance, hierarchy))
    sf = sensitive_frequency(dataset, attribute, hierarchy)
    models = [TCloseness(m.t, m.distance, m.hierarchy, sf.ground_order) if isinstance(m, TCloseness) else m
              for m in models]
    return dataset, sf, models


def _add_engine_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("engine (the one pass over the rows)")
    g.add_argument("--engine", default=None, choices=sorted(ENGINES),
                   help="duckdb: files read in place, larger than memory (default); pandas: in memory; "
                        "dask: on a Dask cluster")
    g.add_argument("--memory-limit", help="duckdb: memory limit such as 2GB (default: DuckDB's, 80%% of RAM)")
    g.add_argument("--spill-dir", help="duckdb: folder for what does not fit in memory (default: a temporary one)")
    g.add_argument("--threads", type=int, help="duckdb: threads (default: all cores)")
    g.add_argument("--scheduler", help="dask: scheduler address tcp://host:8786 (default: a local cluster)")


def _engine_options(args) -> dict:
    args.engine = args.engine or "duckdb"
    if args.scheduler and args.engine != "dask":
        raise MicroreleaseError(f"--scheduler applies to --engine dask, not --engine {args.engine}")
    if args.engine == "duckdb":
        return {"memory_limit": args.memory_limit, "spill_dir": args.spill_dir, "threads": args.threads}
    ignored = [flag for flag, value in (("--memory-limit", args.memory_limit), ("--spill-dir", args.spill_dir),
                                        ("--threads", args.threads)) if value]
    if ignored:
        raise MicroreleaseError(f"{', '.join(ignored)} apply to --engine duckdb, not --engine {args.engine}")
    return {"scheduler": args.scheduler} if args.engine == "dask" else {}


def _add_query_options(p: argparse.ArgumentParser, *, k_required: bool = True) -> None:
    p.add_argument("--k", type=int, required=k_required, help="every released QI combination has >= k rows")
    p.add_argument("--max-sup", default="0", help="MaxSup: rows that may be suppressed (N) or a share (1%%)")
    p.add_argument("--policy", default="min-relative", choices=sorted(POLICIES), help="preference policy")
    p.add_argument("--weights", action="append", default=[], metavar="A=2,B=1", help="weights for --policy weighted")


def _resolve_data(args) -> tuple[str | Path, list[str], str | None]:
    if args.sample and args.data:
        raise MicroreleaseError("give either DATA or --sample, not both")
    if args.sample:
        s = sample(args.sample)
        qi = _split(args.qi) or list(s.qi)
        return s.path, qi, getattr(args, "hierarchy_dir", None) or str(s.folder)
    if not args.data:
        raise MicroreleaseError("no data: give a CSV file or --sample NAME")
    qi = _split(args.qi)
    if not qi:
        raise MicroreleaseError("--qi is required: the quasi-identifier columns, in order")
    return args.data, qi, getattr(args, "hierarchy_dir", None)


def _load(args) -> Dataset:
    path, qi, hierarchy_dir = _resolve_data(args)
    return load_dataset(
        path, qi=qi, hierarchies=_pairs(args.hierarchy, "--hierarchy"), hierarchy_dir=hierarchy_dir,
        identifiers=_split(args.identifier), sensitive=_split(args.sensitive), sep=args.sep,
    )


def _summarize(args) -> TableSummary:
    path, qi, hierarchy_dir = _resolve_data(args)
    options = _engine_options(args)  # also settles the default engine
    bar = ProgressBar(f"reading rows ({args.engine})", args.quiet)
    try:
        return summarize(
            path, qi=qi, hierarchies=_pairs(args.hierarchy, "--hierarchy"), hierarchy_dir=hierarchy_dir,
            identifiers=_split(args.identifier), sensitive=_split(args.sensitive), sep=args.sep,
            engine=args.engine, engine_options=options, progress=bar,
        )
    finally:
        bar.close()


def _profile(dataset: Dataset | TableSummary, args):
    bar = ProgressBar("lattice profile", args.quiet)
    try:
        return build_profile(dataset, strategy=args.strategy, progress=bar)
    finally:
        bar.close()


KMIN_FIELDS = ("vector", "height", "suppressed", "accuracy", "completeness", "distinct", "rel_distance")


def cmd_search(args) -> int:
    weights = _weights(args.weights, args.policy)  # refused before the rows are read
    with_models = _models(args)
    started = time.perf_counter()
    if with_models:
        dataset, sf, models = with_models
        args.engine = "pandas"
        bar = ProgressBar("lattice profile with privacy models", args.quiet)
        try:
            profile = build_model_profile(dataset, sf, models, progress=bar)
        finally:
            bar.close()
    else:
        dataset = _summarize(args)
        profile = _profile(dataset, args)
    answer = query(profile, args.k, args.max_sup)
    preferred = answer.preferred(args.policy, weights)
    result = {
        "n_rows": dataset.n_rows,
        "qi": list(dataset.quasi_identifiers),
        "heights": list(profile.lattice.heights),
        "lattice_size": profile.lattice.size,
        "k": answer.k,
        "max_sup": answer.max_sup,
        "missing_qi_values": dict(dataset.missing_counts),
        "engine": args.engine,
        **({"sensitive": with_models[1].attribute, "privacy_models": [m.describe() for m in with_models[2]]}
           if with_models else {}),
        "find_vector": answer.find_vector().to_dict(),
        "k_minimal": [{f: n.to_dict()[f] for f in KMIN_FIELDS} for n in answer.k_minimal_nodes()],
        "preferred": {"policy": args.policy, **({"weights": weights} if weights else {}), **preferred.to_dict()},
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    seconds = time.perf_counter() - started
    print(f"{dataset.n_rows} rows, QIs {', '.join(dataset.quasi_identifiers)}; lattice of {profile.lattice.size} "
          f"nodes (heights {list(profile.lattice.heights)}) profiled in {seconds:.2f} s")
    print(f"k = {answer.k}, MaxSup = {answer.max_sup} rows")
    print(f"Find_vector: {list(result['find_vector']['vector'])} at height {sum(result['find_vector']['vector'])} "
          f"after {len(result['find_vector']['trace'])} probes")
    print(f"{len(result['k_minimal'])} k-minimal generalization(s):")
    print(f"  {'vector':<28} {'height':>6} {'suppr.':>7} {'accuracy':>8} {'complete':>8} {'distinct':>8}")
    for n in result["k_minimal"]:
        print(f"  {str(n['vector']):<28} {n['height']:>6} {n['suppressed']:>7} {n['accuracy']:>8.3f} "
              f"{n['completeness']:>8.3f} {n['distinct']:>8}")
    p = result["preferred"]
    print(f"preferred by {args.policy}: {p['vector']} (suppressed {p['suppressed']}, accuracy {p['accuracy']:.3f}, "
          f"completeness {p['completeness']:.3f})")
    return 0


def _protected(args, data, qi: Sequence[str], hierarchy_dir) -> list[Path]:
    """Input and hierarchy files of this command: never written, never held by an output folder."""
    explicit = _pairs(getattr(args, "hierarchy", []), "--hierarchy").values()
    return protected_paths([data, getattr(args, "data", None)], explicit, hierarchy_dir,
                           [*qi, *_split(getattr(args, "sensitive", ""))])


def cmd_release(args) -> int:
    path, qi, hierarchy_dir = _resolve_data(args)
    protected = _protected(args, path, qi, hierarchy_dir)
    file_target(args.out, protected=protected, force=args.force)  # refused before any work, not after
    refuse_hierarchy_names(args.out, hierarchy_dir, [*qi, *_split(args.sensitive)])
    weights = _weights(args.weights, args.policy)
    with_models = _models(args)
    dataset = with_models[0] if with_models else _summarize(args)
    sensitive, models = (with_models[1], tuple(with_models[2])) if with_models else (None, ())
    max_sup = parse_max_sup(args.max_sup, dataset.n_rows)
    if args.node:
        try:
            node = tuple(int(x) for x in _split(args.node))
        except ValueError:
            raise MicroreleaseError(f"--node expects levels like 0,4,1; got {args.node!r}") from None
        spec = NodeRelease(dataset, node, args.k, max_sup, sensitive, models)
    else:
        profile = build_model_profile(*with_models) if with_models else _profile(dataset, args)
        answer = query(profile, args.k, max_sup)
        node = answer.preferred(args.policy, weights).vector
        spec = NodeRelease(dataset, node, args.k, max_sup, sensitive, models, f"policy {args.policy}",
                           args.policy, weights)
    bar = ProgressBar(f"writing release ({'pandas' if with_models else dataset.engine.name})", args.quiet)
    try:
        published = spec.write(args.out, sep=args.out_sep, escape=args.escape_formulas, force=args.force,
                               protected=protected, list_classes=args.list_suppressed, progress=bar)
    finally:
        bar.close()
    c = published.data["counts"]
    why = c["suppressed_by_reason"]
    return finish(published, args,
                  f"released {c['released_rows']} of {c['input_rows']} rows at node {list(spec.node)} to {args.out} "
                  f"({c['suppressed_rows']} suppressed: {why['class_smaller_than_k']} in classes smaller than k, "
                  f"{why['class_failing_a_privacy_model']} in classes failing a privacy model)")


def cmd_check(args) -> int:
    if args.k < 1:  # every table is "0-anonymous": such a check would always pass
        raise InvalidParameterError(f"The '--k' option must be at least 1. Got {args.k} instead.")
    path, qi, _ = _resolve_data(args)
    table = read_table(path, sep=args.sep)
    if len(table) == 0:  # no rows is no evidence of anonymity
        raise DataError(f"{path} has a header but no rows: nothing to check")
    result = check_k_anonymity(table, qi, args.k, limit=args.limit)
    if args.json:
        print(json.dumps(result.to_dict(args.limit), indent=2))
    else:
        verdict = "is" if result.is_k_anonymous else "is NOT"
        print(f"{path} {verdict} {args.k}-anonymous over {', '.join(qi)} ({result.n_rows} rows, {result.n_classes} classes)")
        print("smallest classes:")
        print(result.smallest_classes.to_string(index=False))
    return 0 if result.is_k_anonymous else 1


def cmd_microaggregate(args) -> int:
    if args.sample and args.data:
        raise MicroreleaseError("give either DATA or --sample, not both")
    if args.sample:
        s = microdata_sample(args.sample)
        path, checksum = s.path, file_checksum(s.path)
        qi, confidential = _split(args.qi) or list(s.qi), _split(args.confidential) or list(s.confidential)
        identifiers = _split(args.identifier) or list(s.identifiers)
    elif args.data:
        path, checksum = args.data, file_checksum(args.data)
        qi, confidential, identifiers = _split(args.qi), _split(args.confidential), _split(args.identifier)
    else:
        raise MicroreleaseError("no data: give a CSV file or --sample NAME")
    file_target(args.out, protected=[path], force=args.force)  # refused before any work, not after
    table = read_table(path, sep=args.sep)
    k_per_attribute = {name: int(v) if v.strip().lstrip("-").isdigit() else v
                       for name, v in _pairs([p for item in args.k_per_attribute for p in _split(item)],
                                             "--k-per-attribute").items()}
    bad = [f"{n}={v}" for n, v in k_per_attribute.items() if not isinstance(v, int)]
    if bad:
        raise MicroreleaseError(f"--k-per-attribute expects whole numbers, got {bad}")
    bar = ProgressBar("microaggregating", args.quiet)
    try:
        result = microaggregate(table, qi=qi, confidential=confidential, k=args.k, method=args.method,
                                k_per_attribute=k_per_attribute or None, identifiers=identifiers, rng=args.seed,
                                progress=bar)
    finally:
        bar.close()
    published = write_microaggregation(result, args.out, identifiers=identifiers, source=str(path),
                                       checksum=checksum, sep=args.out_sep, escape=args.escape_formulas,
                                       force=args.force)
    report = published.data
    risk = report["linkage_risk"]["released"]
    linked = f", linkage {risk['reidentified']:.3f} (1/k = {risk['bound_1_over_k']:.3f})" if risk else ""
    return finish(published, args, f"{args.method} with k={args.k}: wrote {report['output']['rows']} rows to "
                                   f"{args.out}; SSE/SST {report['information_loss']['sse_sst_percent']:.2f} %{linked}")


def cmd_dp(args) -> int:
    if args.sample and args.data:
        raise MicroreleaseError("give either DATA or --sample, not both")
    if args.sample:
        s = microdata_sample(args.sample)
        path = s.path
        attributes = _split(args.attrs) or [*s.qi, *s.confidential]
        bounds = parse_bounds(args.bounds) if args.bounds else s.bounds_dict
    elif args.data:
        path, attributes, bounds = args.data, _split(args.attrs), parse_bounds(args.bounds or "")
    else:
        raise MicroreleaseError("no data: give a CSV file or --sample NAME")
    file_target(args.out, protected=[path], force=args.force)  # refused before any work, not after
    table = read_table(path, sep=args.sep)
    identifiers = _split(args.identifier)
    unknown = [c for c in identifiers if c not in table.columns]
    if unknown:
        raise MicroreleaseError(f"unknown identifier column(s) {unknown}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyWarning)
        release = dp_release(table.drop(columns=identifiers), attributes, bounds=bounds, epsilon=args.epsilon,
                             method=args.method, k=args.k, rng=args.seed)
    for w in caught:
        print(f"microrelease: warning: {w.message}", file=sys.stderr)
    published = write_dp_release(release, table, args.out, source=str(path), checksum=file_checksum(path),
                                 sep=args.out_sep, warnings_raised=[str(w.message) for w in caught],
                                 escape=args.escape_formulas, force=args.force)
    report = published.data
    return finish(published, args, f"{args.method} at epsilon={args.epsilon:g}: wrote {report['output']['rows']} rows "
                                   f"to {args.out}; SSE/SST {report['information_loss']['sse_sst_percent']:.2f} %")


def cmd_sequential(args) -> int:
    from microrelease.core.sequential.cost import CostWeights
    from microrelease.core.sequential.model import load_sequential
    from microrelease.core.sequential.release import anonymize_sequential, write_sequential

    qi = _split(args.qi)
    if not qi:
        raise MicroreleaseError("--qi is required: the relational quasi-identifiers")
    hierarchies = _pairs(args.hierarchy, "--hierarchy")
    protected = protected_paths([args.entities, args.events], [*hierarchies.values(), args.code_hierarchy],
                                args.hierarchy_dir, qi)
    folder_target(args.out, ("entities.csv", "events.csv"), protected=protected, force=args.force)
    data = load_sequential(args.entities, args.events, entity_id=args.entity_id, qi=qi,
                           sequence_key=args.sequence_key, order_by=args.order_by, code=args.code,
                           code_hierarchy=args.code_hierarchy, hierarchies=hierarchies,
                           hierarchy_dir=args.hierarchy_dir, identifiers=_split(args.identifier))
    weights = CostWeights(args.w_relational, args.w_sequence, args.w_time)
    bar = ProgressBar("grouping entities", args.quiet)
    try:
        release = anonymize_sequential(data, args.k, weights=weights, variant=args.variant,
                                       relative_time=args.relative_time, progress=bar)
    finally:
        bar.close()
    published = write_sequential(release, data, args.out, parameters={"variant": args.variant,
                                                                      "weights": vars(weights)},
                                 force=args.force, protected=protected, escape=args.escape_formulas,
                                 inputs=[args.entities, args.events])
    report = published.data
    return finish(published, args, f"wrote {report['output']['entities']} entities and {report['output']['events']} "
                                   f"events to {args.out}; every entity shares both parts with >= "
                                   f"{report['check']['smallest_shared_set'] - 1} others; attack success "
                                   f"{report['attack']['success_rate']:.3f} (1/k = {1 / args.k:.3f})")


def cmd_app(args) -> int:
    from microrelease.app.main import serve  # Panel is loaded only for this command

    dataset = _load(args) if (args.data or args.qi) else None
    serve(host=args.host, port=args.port, sample=args.sample or "adult", dataset=dataset, show=args.show)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="microrelease", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("search", help="k-minimal generalizations, Find_vector and the preferred node")
    _add_data_options(p)
    _add_query_options(p)
    _add_engine_options(p)
    _add_model_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("release", help="write the released table and its report, re-checked")
    _add_data_options(p)
    _add_query_options(p)
    _add_engine_options(p)
    _add_model_options(p)
    p.add_argument("--node", help="release this node (levels in --qi order), instead of the policy's choice")
    p.add_argument("-o", "--out", required=True,
                   help="output .csv or .parquet; the report goes to OUT.report.json")
    p.add_argument("--out-sep", type=_separator, default=",", help="field separator of the output (default ,)")
    add_output_options(p)
    p.add_argument("--list-suppressed", type=_non_negative, default=0, metavar="N",
                   help="list up to N suppressed classes in the report (they single out outliers: keep such a "
                        "report private); default: their number only")
    p.add_argument("--json", action="store_true", help="print the report")
    p.set_defaults(func=cmd_release)

    p = sub.add_parser("microaggregate", help="MDAV-ID, MDAV-SWAP or IR-SWAP on numeric attributes, with a report")
    p.add_argument("data", nargs="?", help="CSV file (or use --sample)")
    p.add_argument("--sample", choices=sorted(MICRODATA_SAMPLES), help="a bundled CASC data set")
    p.add_argument("--qi", default="", help="numeric quasi-identifiers A,B,... (MDAV groups on them)")
    p.add_argument("--confidential", default="", help="numeric confidential attributes (ir-swap permutes them)")
    p.add_argument("--identifier", default="", help="identifier columns: dropped from the output")
    p.add_argument("--k", type=int, required=True, help="group size: at least k records per group")
    p.add_argument("--method", default="mdav-id", choices=sorted(METHODS), help="how groups are released")
    p.add_argument("--k-per-attribute", action="append", default=[], metavar="A=5",
                   help="ir-swap: a k of its own for confidential attribute A")
    p.add_argument("--seed", type=_non_negative, default=None, help="seed of the random permutations (swap methods)")
    p.add_argument("--sep", type=_separator, default=None, help="field separator of DATA (default: detected)")
    p.add_argument("-o", "--out", required=True, help="output CSV; the report goes to OUT.report.json")
    p.add_argument("--out-sep", type=_separator, default=",", help="field separator of the output (default ,)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_output_options(p)
    p.add_argument("--json", action="store_true", help="print the report")
    p.set_defaults(func=cmd_microaggregate)

    p = sub.add_parser("dp", help="an epsilon-differentially private release of numeric attributes")
    p.add_argument("data", nargs="?", help="CSV file (or use --sample)")
    p.add_argument("--sample", choices=sorted(MICRODATA_SAMPLES), help="a bundled CASC data set")
    p.add_argument("--attrs", default="", help="numeric attributes to release with noise A,B,...")
    p.add_argument("--bounds", default="", help="declared domain bounds A=LO:HI,... (required: never from the data)")
    p.add_argument("--epsilon", type=float, required=True, help="the privacy budget, split evenly over the attributes")
    p.add_argument("--method", default="ir-mdav", choices=sorted(DP_METHODS), help="how the noise is applied")
    p.add_argument("--k", type=int, help="cluster size of the microaggregation methods")
    p.add_argument("--identifier", default="", help="identifier columns: dropped from the output")
    p.add_argument("--seed", type=_non_negative, default=None, help="seed of the noise (for reproducible tests only)")
    p.add_argument("--sep", type=_separator, default=None, help="field separator of DATA (default: detected)")
    p.add_argument("-o", "--out", required=True, help="output CSV; the report goes to OUT.report.json")
    p.add_argument("--out-sep", type=_separator, default=",", help="field separator of the output (default ,)")
    add_output_options(p)
    p.add_argument("--json", action="store_true", help="print the report")
    p.set_defaults(func=cmd_dp)

    p = sub.add_parser("sequential", help="k-anonymize entities with a relational part and visit sequences")
    p.add_argument("entities", help="entity table (CSV): one row per entity")
    p.add_argument("events", help="event table (CSV): one row per element (entity id, sequence, time, code)")
    p.add_argument("--entity-id", required=True, help="the entity id column (in both tables)")
    p.add_argument("--qi", required=True, help="relational quasi-identifiers A,B,...")
    p.add_argument("--identifier", default="", help="direct identifiers: never written")
    p.add_argument("--sequence-key", required=True, help="the column grouping events into sequences (visits)")
    p.add_argument("--order-by", required=True, help="the time (or order) column of the events")
    p.add_argument("--code", required=True, help="the code column of the events")
    p.add_argument("--code-hierarchy", required=True, help="ARX hierarchy of the codes")
    p.add_argument("--hierarchy", action="append", default=[], metavar="A=PATH", help="ARX hierarchy of QI A")
    p.add_argument("--hierarchy-dir", help="folder with *_hierarchy_A.csv or A.csv per QI")
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--variant", default="greedy", choices=["greedy", "ranking"], help="grouping (see the docs)")
    p.add_argument("--w-relational", type=float, default=0.5, help="weight of the relational loss in F")
    p.add_argument("--w-sequence", type=float, default=0.5, help="weight of the sequence loss in F")
    p.add_argument("--w-time", type=float, default=1.0, help="weight of time differences in the alignment")
    p.add_argument("--relative-time", action="store_true", help="release visit ranks instead of time intervals")
    p.add_argument("-o", "--out", required=True, help="output folder: entities.csv, events.csv, report.json")
    add_output_options(p, folder=True)
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_sequential)

    p = sub.add_parser("app", help="serve the dashboard (opens on the bundled adult sample)")
    _add_data_options(p)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=5006, help="port (default 5006)")
    p.add_argument("--show", action="store_true", help="open a browser")
    p.set_defaults(func=cmd_app)

    p = sub.add_parser("check", help="is a file k-anonymous over some columns? lists the smallest classes")
    _add_data_options(p, hierarchies=False)
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--limit", type=int, default=10, help="how many smallest classes to list")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    previous = signal.getsignal(signal.SIGTERM)
    if args.command != "app":  # the server stops on SIGTERM as servers do; commands clean up first
        install_signal_handlers()
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("microrelease: interrupted (SIGINT); temporary files removed, nothing left half-written", file=sys.stderr)
        return 130
    except Terminated:
        print("microrelease: terminated (SIGTERM); temporary files removed, nothing left half-written", file=sys.stderr)
        return 143
    except (MicroreleaseError, ValueError, TypeError) as exc:
        print(f"microrelease: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `... --json | head`: the reader left; nothing to say to it
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as exc:  # a full disk or a folder we may not read: one line naming the path
        print(f"microrelease: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
