"""``microrelease risk``: the re-identification risk of a table, as it is or generalized to ``--node``.

Every figure comes from the table's equivalence classes over the QIs, every row counted (none is
suppressed: run it on a released file for the risk of that release):

- El Emam's prosecutor, journalist and marketer risk (``microrelease.core.risk.reidentification``,
  ARX's ``RiskModelSampleSummary``);
- population uniqueness estimated from the sample (``microrelease.core.risk.uniqueness``: Pitman,
  Zayatz, SNB and Dankar et al.'s rule, as ARX's ``RiskModelPopulationUniqueness``), with a population
  table also the true counts;
- Benedetti-Franconi's individual risk (``microrelease.core.risk.individual``, sdcMicro's ``indivRisk``).

The population is a table that contains the sample (``--population``; its class sizes are counted and the
sampling fraction is rows / population rows), or a sampling fraction (``--sampling-fraction``: each class's
population size is its size / fraction). With neither, the sample is taken as the population (ARX's default).
"""

from __future__ import annotations

import argparse
import json
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.options import (
    TableRequest,
    add_hierarchy_options,
    add_table_options,
    node_levels,
)
from microrelease.app.text import plural
from microrelease.core import DataError, InvalidParameterError, MicroreleaseError, read_table
from microrelease.core.data.dataset import resolve_hierarchies
from microrelease.core.data.roles import Schema
from microrelease.core.lattice.distance_vectors import Lattice
from microrelease.core.lattice.hierarchies import MISSING, Hierarchy, describe_levels
from microrelease.core.release.publishing import strict_json
from microrelease.core.risk import uniqueness
from microrelease.core.risk.individual import individual_risk
from microrelease.core.risk.reidentification import population_sizes, table_risk

NAME = "risk"
HELP = "re-identification risk of a table: prosecutor, journalist, marketer, population uniqueness, individual"
DEFAULT_THRESHOLD = 0.2  # a record is at risk above 1/5: alone in a class of fewer than 5 rows
ESTIMATORS = ("pitman", "zayatz", "snb")


@dataclass(frozen=True)
class RiskRequest:
    table: TableRequest
    node: tuple[int, ...] | None  # None: the table as it is
    population: str | None  # a population table's file
    sampling_fraction: float | None
    threshold: float
    json: bool

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RiskRequest:
        population, fraction = FLAGS["population"], FLAGS["sampling_fraction"]
        if args.population and args.sampling_fraction is not None:
            raise MicroreleaseError(f"give either {population} FILE or {fraction} F, not both")
        if args.sampling_fraction is not None:
            _share(args.sampling_fraction, "sampling_fraction", "the share of the population the data holds")
        _share(args.threshold, "threshold", "the risk a record may have without counting as at risk")
        node = node_levels(args.node)
        if node is None and (args.hierarchy or args.hierarchy_dir):  # refused, not ignored
            raise MicroreleaseError(f"{FLAGS['hierarchies']} / {FLAGS['hierarchy_dir']} apply with "
                                    f"{FLAGS['node']} only (the table as it is needs no hierarchy)")
        return cls(TableRequest.from_args(args), node, args.population, args.sampling_fraction, args.threshold,
                   args.json)


def _share(value: float, parameter: str, meaning: str) -> None:
    if not 0 < value <= 1:  # also refuses nan
        raise InvalidParameterError(f"must be in (0, 1] ({meaning}). Got {value!r} instead.", parameter=parameter)


Request = RiskRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_table_options(p)
    add_hierarchy_options(p)
    p.add_argument("--node", metavar="1,0,2", help="generalize the table to this node first (levels in --qi order; needs the "
                                  "hierarchies)")
    p.add_argument("--population", metavar="FILE",
                   help="CSV of the population the data was drawn from (it contains the data's rows); "
                        "separator detected")
    p.add_argument("--sampling-fraction", type=float, metavar="F",
                   help="the data is a sample of this share of the population, in (0, 1]")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, metavar="T",
                   help=f"a record whose risk is above this counts as at risk (default {DEFAULT_THRESHOLD})")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(request: RiskRequest) -> int:
    result = assess(request)
    print(json.dumps(strict_json(result), indent=2, allow_nan=False) if request.json else report(result))
    return 0


def _qi_columns(frame: pd.DataFrame, qi: tuple[str, ...], what: str, parameter: str) -> pd.DataFrame:
    missing = [c for c in qi if c not in frame.columns]
    if missing:
        raise DataError(f"QI column(s) {missing} not in {what}; it has {list(frame.columns)}", parameter=parameter)
    return frame[list(qi)]


def _generalize(frame: pd.DataFrame, hierarchies: tuple[Hierarchy, ...], node: tuple[int, ...]) -> pd.DataFrame:
    """Every cell replaced by its label at the node's level (missing values as the dataset treats them)."""
    out = {}
    for (name, values), h, level in zip(frame.items(), hierarchies, node, strict=True):
        if (values == MISSING).any():
            h = h.with_missing()
        out[name] = h.generalize(values, level)
    return pd.DataFrame(out, index=frame.index)


def _hierarchies(table: TableRequest, node: tuple[int, ...]) -> tuple[Hierarchy, ...]:
    hierarchies = resolve_hierarchies(Schema(table.qi), table.hierarchies, table.hierarchy_dir)
    # the lattice's own check, as release's: the same line for the same bad --node
    Lattice(tuple(h.height for h in hierarchies), table.qi).validate_node(node)
    return hierarchies


def assess(request: RiskRequest) -> dict:
    """Every figure of the report, as the JSON object ``--json`` prints."""
    table, node = request.table, request.node
    Schema(table.qi)  # a QI given twice is refused by name
    keys = _qi_columns(read_table(table.path, sep=table.sep), table.qi, f"the data {table.path}", "quasi_identifiers")
    n = len(keys)
    if n == 0:
        raise DataError(f"{table.path} has a header but no rows: no risk to measure")
    hierarchies = _hierarchies(table, node) if node is not None else None
    if hierarchies is not None:
        keys = _generalize(keys, hierarchies, node)
    record_class, classes = pd.factorize(pd.MultiIndex.from_frame(keys))
    sizes = np.bincount(record_class)
    class_keys = pd.DataFrame(list(classes), columns=list(table.qi))  # one row per class, in class order

    result = {"data": str(table.path), "qi": list(table.qi), "rows": n, "classes": len(sizes),
              "node": None if node is None else {"vector": list(node),
                                                 "levels": describe_levels(hierarchies, node)},
              "threshold": request.threshold}
    big_f, truth = None, None
    fraction = request.sampling_fraction
    if request.population:
        big_f, truth, population_rows = _population(request.population, class_keys, sizes, hierarchies, node)
        fraction = n / population_rows
        result["population"] = {"source": "population table", "file": request.population, "rows": population_rows,
                                "sampling_fraction": fraction}
    elif fraction is not None:
        result["population"] = {"source": "sampling fraction", "rows": n / fraction, "sampling_fraction": fraction,
                                "journalist": "as the prosecutor: only a population table gives class sizes in the "
                                              "population (ARX)"}
    else:
        result["population"] = {"source": "the data itself", "rows": n, "sampling_fraction": 1.0}

    # Only a population table gives each class its population size: scaling the sample's sizes by the
    # fraction would call a sample unique 1/F-safe when it may be a population unique. Without one, the
    # sample is its own population for the journalist (ARX's convention); the fraction feeds the
    # uniqueness estimate and the individual risk, which model the population's sizes.
    risk = table_risk(sizes, threshold=request.threshold, population_sizes=big_f)
    result["prosecutor"] = {"highest": risk.highest, "average": risk.average, "records_at_risk": risk.records_at_risk}
    result["journalist"] = {"highest": risk.journalist_highest, "average": risk.journalist_average,
                            "records_at_risk": risk.journalist_records_at_risk}
    result["marketer"] = {"expected_share_reidentified": risk.marketer}
    result["population_uniqueness"] = None if fraction is None else _uniqueness(sizes, fraction, truth)

    f = sizes[record_class]
    if big_f is not None:
        individual = individual_risk(f, big_f[record_class])
    else:
        individual = individual_risk(f, sampling_fraction=1.0 if fraction is None else fraction)
    above = int((individual.risk > request.threshold).sum())
    result["individual"] = {"mean": individual.global_risk, "max": float(individual.risk.max()),
                            "expected_reidentifications": individual.expected_reidentifications,
                            "records_above_threshold": above, "share_above_threshold": above / n}
    return result


def _population(path: str, class_keys: pd.DataFrame, sizes: np.ndarray, hierarchies, node) -> tuple[np.ndarray, dict, int]:
    """F_j of every sample class, the true uniques, and the population's rows, from the population table."""
    qi = tuple(class_keys.columns)
    try:
        keys = _qi_columns(read_table(path, sep=None), qi, f"the population {path}", "population")
        if hierarchies is not None:
            keys = _generalize(keys, hierarchies, node)
        big_f = population_sizes(class_keys, keys)
    except MicroreleaseError as exc:  # a missing file, value or class: the population's fault
        raise DataError(str(exc), parameter="population") from None
    short = np.flatnonzero(big_f < sizes)  # a population contains the sample: no class is smaller there
    if len(short):
        j = int(short[0])
        raise DataError(f"the population {path} has {int(big_f[j])} row(s) of the class "
                        f"{tuple(class_keys.iloc[j])}, which has {int(sizes[j])} in the data: a population contains "
                        f"the sample ({len(short)} such class(es))", parameter="population")
    uniques = int((keys.groupby(list(qi), sort=False, dropna=False).size() == 1).sum())
    truth = {"population_uniques": uniques, "share": uniques / len(keys),
             "sample_classes_unique_in_population": int((big_f == 1).sum())}
    return big_f, truth, len(keys)


def _uniqueness(sizes: np.ndarray, fraction: float, truth: dict | None) -> dict:
    values, counts = np.unique(sizes, return_counts=True)

    def figures(estimate: uniqueness.UniquenessEstimate) -> dict:
        known = estimate.converged and math.isfinite(estimate.uniques)
        return {"model": estimate.model, "uniques": estimate.uniques if known else None,
                "share": estimate.share if known else None, "converged": estimate.converged}

    chosen = uniqueness.dankar(values, counts, fraction)
    return {"population_size": chosen.population_size, "sample_uniques": chosen.sample_uniques,
            "dankar": figures(chosen),
            "estimators": {name: figures(getattr(uniqueness, name)(values, counts, fraction)) for name in ESTIMATORS},
            "true": truth}


def _percent(share: float) -> str:
    return f"{100 * share:.3g} %"


def report(result: dict) -> str:
    """The figures as a short text a data steward reads."""
    qi, node, pop = ", ".join(result["qi"]), result["node"], result["population"]
    how = "as it is" if node is None else f"generalized to node {node['vector']}"
    lines = [f"{result['data']}: {plural(result['rows'], 'row', spec=',')} in {plural(result['classes'], 'class', 'classes', spec=',')} over {qi} ({how})"]
    if node is not None:
        lines.append("  = " + ", ".join(f"{a}: {level}" for a, level in node["levels"].items()))
    if pop["source"] == "population table":
        lines.append(f"population: {pop['file']}, {plural(pop['rows'], 'row', spec=',')} (sampling fraction {pop['sampling_fraction']:.4g})")
    elif pop["source"] == "sampling fraction":
        lines.append(f"population: sampling fraction {pop['sampling_fraction']:.4g} (about {pop['rows']:,.0f} records; "
                     f"journalist = prosecutor: only {FLAGS['population']} gives class sizes in the population)")
    else:
        lines.append(f"population: the data itself (no {FLAGS['population']} or {FLAGS['sampling_fraction']}: "
                     "journalist = prosecutor)")
    lines += ["", f"re-identification risk (a record is at risk above {result['threshold']:g})",
              f"  {'model':<12} {'highest':>8} {'average':>8} {'records at risk':>16}"]
    for model in ("prosecutor", "journalist"):
        r = result[model]
        lines.append(f"  {model:<12} {r['highest']:>8.4f} {r['average']:>8.4f} {_percent(r['records_at_risk']):>16}")
    lines.append(f"  {'marketer':<12} {'':>8} {result['marketer']['expected_share_reidentified']:>8.4f}"
                 "  (expected share of records re-identified)")
    u = result["population_uniqueness"]
    lines.append("")
    if u is None:
        lines.append(f"population uniqueness: give {FLAGS['population']} or {FLAGS['sampling_fraction']} to estimate it")
    else:
        def estimate(e: dict) -> str:
            if e["uniques"] is None:
                return "no estimate (its equations have no solution here)"
            return f"{e['uniques']:,.1f} population uniques ({_percent(e['share'])} of the population)"

        lines += [f"population uniqueness (population of {u['population_size']:,.0f} records; "
                  f"{u['sample_uniques']:,} sample uniques)",
                  f"  Dankar's rule chose {u['dankar']['model']}: {estimate(u['dankar'])}"]
        lines += [f"  {name:<8} {estimate(e)}" for name, e in u["estimators"].items()]
        if u["true"] is not None:
            t = u["true"]
            lines.append(f"  true (population table): {t['population_uniques']:,} population uniques "
                         f"({_percent(t['share'])}); {t['sample_classes_unique_in_population']:,} of the data's "
                         "classes are unique in the population")
    i = result["individual"]
    lines += ["", "individual risk (Benedetti-Franconi)",
              f"  mean {i['mean']:.4f}, max {i['max']:.4f}, expected re-identifications "
              f"{i['expected_reidentifications']:,.1f}; {i['records_above_threshold']:,} records "
              f"({_percent(i['share_above_threshold'])}) above {result['threshold']:g}"]
    return "\n".join(lines)
