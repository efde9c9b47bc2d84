"""``microrelease search``: the k-minimal generalizations, Find_vector and the preferred node."""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np

from microrelease.app.cli.lattice import LatticeRequest, Rows, add_lattice_options, build, read_rows
from microrelease.app.cli.options import KMapRequest, add_k_map_options
from microrelease.app.cli.progress import progress_bar
from microrelease.core import POLICIES, query
from microrelease.core.lattice.hierarchies import describe_levels, describe_vector
from microrelease.core.lattice.profile import LatticeProfile
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
    model = KMap(k_map.k, code_population(table, rows.dataset, source=k_map.population)).check()
    if not joint:
        return model, None
    with progress_bar("joint roll-up of sample and population (k-map)", quiet) as bar:
        return model, joint_profile(rows.dataset, model.population, strategy=k_map.strategy, progress=bar)


def k_map_profile(rows: Rows, request: LatticeRequest, k_map: KMapRequest) -> tuple[LatticeProfile, KMap]:
    model, joint = k_map_model(rows, k_map, request.quiet)
    return joint.profile(model.k, quality=POLICIES[request.query.policy].quality), model


Request = SearchRequest  # what main() parses the Namespace into, once


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_lattice_options(p)
    add_k_map_options(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(request: SearchRequest) -> int:
    started = time.perf_counter()
    rows = read_rows(request)
    profile, k_map = k_map_profile(rows, request, request.k_map) if request.k_map else (build(rows, request), None)
    dataset, policy, weights = rows.dataset, request.query.policy, dict(request.query.weights)
    answer = query(profile, request.query.k, request.query.max_sup, request.query.criteria)
    preferred = answer.preferred(policy, weights)
    hierarchies = dataset.hierarchies

    def named(node: dict) -> dict:  # "levels" beside "vector": {"age": "bands of 10", ...}
        vector = node["vector"]
        return {"vector": vector, "levels": describe_levels(hierarchies, vector),
                **{f: v for f, v in node.items() if f != "vector"}}

    result = {
        "n_rows": dataset.n_rows,
        "qi": list(dataset.quasi_identifiers),
        "heights": list(profile.lattice.heights),
        "lattice_size": profile.lattice.size,
        "k": answer.k,
        "max_sup": answer.max_sup,
        "missing_qi_values": dict(dataset.missing_counts),
        "engine": request.engine.name,
        **({"sensitive": rows.sensitive_frequency.attribute, "privacy_models": [m.describe() for m in rows.models]}
           if rows.models else {}),
        **({"risk_criteria": [c.describe() for c in answer.criteria]} if answer.criteria else {}),
        **({"k_map": {"criterion": k_map.describe(), "k": k_map.k, "population": request.k_map.population,
                      "population_rows": k_map.population.n_rows}} if k_map else {}),
        "find_vector": named(answer.find_vector().to_dict()),
        "k_minimal": [named({f: d[f] for f in KMIN_FIELDS}) for d in (n.to_dict() for n in answer.k_minimal_nodes())],
        "preferred": {"policy": policy, **({"weights": weights} if weights else {}), **named(preferred.to_dict())},
    }
    if POLICIES[policy].among == "satisfying":  # ARX's optimum: its score, and the best k-minimal node if other
        minimal = answer.preferred(policy, weights, among="k-minimal")
        index = np.array([profile.lattice.index(preferred.vector)])
        result["preferred"]["score"] = float(POLICIES[policy].score(profile.lattice, answer.stats, index, None)[0])
        result["preferred"]["among"] = "every satisfying node"
        result["preferred"]["best_k_minimal"] = None if minimal.vector == preferred.vector else named(minimal.to_dict())
    if request.json:
        print(json.dumps(result, indent=2))
        return 0
    seconds = time.perf_counter() - started
    print(f"{dataset.n_rows} rows, QIs {', '.join(dataset.quasi_identifiers)}; lattice of {profile.lattice.size} "
          f"nodes (heights {list(profile.lattice.heights)}) profiled in {seconds:.2f} s")
    print(f"k = {answer.k}, MaxSup = {answer.max_sup} rows")
    if k_map:
        print(f"{k_map.describe()} against the population {request.k_map.population} "
              f"({k_map.population.n_rows:,} rows)")
    fv = result["find_vector"]
    print(f"Find_vector: {list(fv['vector'])} at height {sum(fv['vector'])} after {len(fv['trace'])} probes"
          f"\n  = {describe_vector(hierarchies, fv['vector'])}")
    print(f"{len(result['k_minimal'])} k-minimal generalization(s):")
    print(f"  {'vector':<28} {'height':>6} {'suppr.':>7} {'accuracy':>8} {'complete':>8} {'distinct':>8}  levels")
    for n in result["k_minimal"]:
        print(f"  {str(n['vector']):<28} {n['height']:>6} {n['suppressed']:>7} {n['accuracy']:>8.3f} "
              f"{n['completeness']:>8.3f} {n['distinct']:>8}  {describe_vector(hierarchies, n['vector'])}")
    p = result["preferred"]
    print(f"preferred by {policy}: {p['vector']} (suppressed {p['suppressed']}, accuracy {p['accuracy']:.3f}, "
          f"completeness {p['completeness']:.3f})\n  = {describe_vector(hierarchies, p['vector'])}")
    if "score" in p:
        print(f"  {POLICIES[policy].label}: {p['score']:.6g} (the best of every satisfying node)")
    if p.get("best_k_minimal"):
        print(f"  (the best of every satisfying node; the best k-minimal one is {p['best_k_minimal']['vector']})")
    return 0
