"""``microrelease search``: the k-minimal generalizations, Find_vector and the preferred node."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

from microrelease.app.cli.flags import FLAGS
from microrelease.app.cli.lattice import LatticeRequest, Rows, add_lattice_options, answer, read_rows
from microrelease.app.cli.options import KMapRequest, add_k_map_options
from microrelease.app.cli.progress import progress_bar
from microrelease.app.text import plural
from microrelease.core import POLICIES, build_model_profile
from microrelease.core.lattice.hierarchies import describe_levels, describe_vector
from microrelease.core.risk.k_map import KMap, code_population, joint_profile, read_population

NAME = "search"
HELP = "k-minimal generalizations, Find_vector and the preferred node"
KMIN_FIELDS = ("vector", "height", "suppressed", "accuracy", "completeness", "distinct", "rel_distance", "max_risk",
               "average_risk")


@dataclass(frozen=True)
class SearchRequest(LatticeRequest):
    json: bool
    k_map: KMapRequest | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> SearchRequest:
        return super().from_args(args, json=args.json, k_map=KMapRequest.from_args(args))


def k_map_model(rows: Rows, k_map: KMapRequest, quiet: bool, *, joint: bool = True) -> tuple[KMap, object]:
    """The k-map model on the population table, and (``joint``) the joint roll-up of sample and population."""
    table = read_population(k_map.population)
    model = KMap(k_map.k, code_population(table, rows.dataset, source=k_map.population)).validate()
    if not joint:
        return model, None
    with progress_bar("joint roll-up of sample and population (k-map)", quiet) as bar:
        return model, joint_profile(rows.dataset, model.population, strategy=k_map.strategy, progress=bar)


def k_map_answer(rows: Rows, request: LatticeRequest, *, k_minimal: bool = True) -> tuple:
    """(answer, choice, the k-map model or None): the question answered as ``answer`` does (the joint
    roll-up of sample and population is made only if the whole-lattice profile answers)."""
    if not request.k_map:
        return (*answer(rows, request, k_minimal=k_minimal), None)
    model, _ = k_map_model(rows, request.k_map, request.quiet, joint=False)

    def profile():
        quality = POLICIES[request.query.policy].reads_quality_profile
        if rows.models:  # k-map beside l-diversity / t-closeness: the population joined into the models' walk
            with progress_bar("lattice profile with privacy models and k-map", request.quiet) as bar:
                return build_model_profile(rows.dataset, rows.sensitive_frequency, rows.models, k_map=model,
                                           strategy=request.k_map.strategy, progress=bar, quality=quality)
        with progress_bar("joint roll-up of sample and population (k-map)", request.quiet) as bar:
            joint = joint_profile(rows.dataset, model.population, strategy=request.k_map.strategy, progress=bar)
        return joint.profile(model.k, quality=quality)

    found, choice = answer(rows, request, k_map=model, k_map_profile=profile, k_minimal=k_minimal)
    return found, choice, model


Request = SearchRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_lattice_options(p)
    add_k_map_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(request: SearchRequest) -> int:
    started = time.perf_counter()
    rows = read_rows(request)
    found, choice, k_map = k_map_answer(rows, request)
    dataset, policy, weights = rows.dataset, request.query.policy, dict(request.query.weights)
    preferred = found.preferred(policy, weights)
    lattice = found.lattice
    limited = request.time_limit is not None  # a best-effort search: the k-minimal set is not tagged
    hierarchies = dataset.hierarchies

    def named(node: dict) -> dict:  # "levels" beside "vector": {"age": "bands of 10", ...}
        vector = node["vector"]
        return {"vector": vector, "levels": describe_levels(hierarchies, vector),
                **{f: v for f, v in node.items() if f != "vector"}}

    result = {
        "n_rows": dataset.n_rows,
        "qi": list(dataset.quasi_identifiers),
        "heights": list(lattice.heights),
        "lattice_size": lattice.size,
        "search": {"strategy": choice.search, "reason": choice.reason,
                   **({"nodes_evaluated": found.nodes_evaluated} if choice.search == "pruned" else {})},
        "k": found.k,
        "max_sup": found.max_sup,
        "missing_qi_values": dict(dataset.missing_counts),
        "engine": request.engine.name,
        **({"sensitive": rows.sensitive_frequency.attribute, "privacy_models": [m.describe() for m in rows.models]}
           if rows.models else {}),
        **({"risk_criteria": [c.describe() for c in found.criteria]} if found.criteria else {}),
        **({"k_map": {"criterion": k_map.describe(), "k": k_map.k, "population": request.k_map.population,
                      "population_rows": k_map.population.n_rows}} if k_map else {}),
        # the trace lists every vector each probe tested: built as JSON only when printed as JSON
        "find_vector": None if limited or not request.json else named(found.find_vector().to_dict()),
        "k_minimal": None if limited else [named({f: d[f] for f in KMIN_FIELDS})
                                           for d in (n.to_dict() for n in found.k_minimal_nodes())],
        "preferred": {"policy": policy, **({"weights": weights} if weights else {}), **named(preferred.to_dict())},
    }
    if POLICIES[policy].among == "satisfying":  # ARX's optimum: its score, and the best k-minimal node if other
        result["preferred"]["score"] = found.score(policy, preferred.vector)
        result["preferred"]["among"] = "every satisfying node"
        if limited:
            if found.timed_out:
                result["preferred"]["among"] = "the satisfying nodes searched in time"
            timed_out = found.timed_out
            result["preferred"]["time_limited"] = {
                "seconds": request.time_limit, "stopped": timed_out, "lower_bound": found.lower_bound,
                "gap": result["preferred"]["score"] - found.lower_bound}
        else:
            minimal = found.preferred(policy, weights, among="k-minimal")
            result["preferred"]["best_k_minimal"] = (None if minimal.vector == preferred.vector
                                                     else named(minimal.to_dict()))
    if request.json:
        print(json.dumps(result, indent=2))
        return 0
    seconds = time.perf_counter() - started
    how = ("profiled" if choice.search == "profile" else
           f"searched ({found.nodes_evaluated:,} nodes evaluated, the pruned search)")
    print(f"{plural(dataset.n_rows, 'row')}, QIs {', '.join(dataset.quasi_identifiers)}; lattice of {lattice.size} "
          f"nodes (heights {list(lattice.heights)}) {how} in {seconds:.2f} s")
    print(f"k = {found.k}, MaxSup = {plural(found.max_sup, 'row')}")
    if k_map:
        print(f"{k_map.describe()} against the population {request.k_map.population} "
              f"({plural(k_map.population.n_rows, 'row', spec=',')})")
    if limited:
        print(f"k-minimal set and Find_vector: not computed under {FLAGS['time_limit']} (a best-effort quality search)")
    else:
        fv = found.find_vector()
        if fv.vector is None:  # its binary search starts at the top, which a non-monotone criterion may fail
            print(f"Find_vector: no vector found after {len(fv.trace)} probes (the fully generalized table does not "
                  "satisfy; with a criterion that is not monotone a node below it may, as the k-minimal set shows)")
        else:
            print(f"Find_vector: {list(fv.vector)} at height {sum(fv.vector)} after {len(fv.trace)} probes"
                  f"\n  = {describe_vector(hierarchies, fv.vector)}")
        print(f"{len(result['k_minimal'])} k-minimal generalization(s):")
        print(f"  {'vector':<28} {'height':>6} {'suppr.':>7} {'accuracy':>8} {'complete':>8} {'distinct':>8}  levels")
        for n in result["k_minimal"]:
            print(f"  {str(n['vector']):<28} {n['height']:>6} {n['suppressed']:>7} {n['accuracy']:>8.3f} "
                  f"{n['completeness']:>8.3f} {n['distinct']:>8}  {describe_vector(hierarchies, n['vector'])}")
    p = result["preferred"]
    print(f"preferred by {policy}: {p['vector']} (suppressed {p['suppressed']}, accuracy {p['accuracy']:.3f}, "
          f"completeness {p['completeness']:.3f})\n  = {describe_vector(hierarchies, p['vector'])}")
    if "score" in p:
        stopped = p.get("time_limited", {}).get("stopped")
        print(f"  {POLICIES[policy].label}: {p['score']:.6g} "
              f"({'the best node found in time' if stopped else 'the best of every satisfying node'})")
    if "time_limited" in p:
        t = p["time_limited"]
        if t["stopped"]:
            print(f"  time limit of {t['seconds']:g} s reached: the best node found; no satisfying node scores below "
                  f"{t['lower_bound']:.6g}, so the optimum is at most {t['gap']:.6g} better")
        else:
            print(f"  the search ended within the time limit of {t['seconds']:g} s: this is the optimum")
    if p.get("best_k_minimal"):
        print(f"  (the best of every satisfying node; the best k-minimal one is {p['best_k_minimal']['vector']})")
    return 0
