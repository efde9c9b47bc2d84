"""Whole-lattice profile and query speed on adult, against a brute-force pass in the same run.

For 8 QIs (6,480 nodes) and 9 QIs (+ salary-class, 12,960 nodes) it prints:
- the profile time (median of several runs; wall and CPU; numba on all cores, numba on one thread,
  and the pure-numpy roll-up),
- the median time of 100 random (k, MaxSup, policy) queries answered from the profile (each query:
  satisfying set, k-minimal set with metrics, Find_vector and the preferred node; measured cold,
  with the profile's per-k cache emptied first),
- a brute-force pass that groups the frequency set anew at every node (what a tool without the
  profile does for each query), and the ratios.

Run: python benchmarks/lattice.py [--repeat 5] [--queries 100] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from microrelease.core import POLICIES, build_profile, load_sample, query
from microrelease.core.data.samples import sample

TARGET_PROFILE = {8: 0.3, 9: 0.6}
TARGET_QUERY_MS = 5.0


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def median_run(fn, repeat):
    walls, cpus = [], []
    for _ in range(repeat):
        _, w, c = timed(fn)
        walls.append(w)
        cpus.append(c)
    return statistics.median(walls), statistics.median(cpus)


def run(n_qi: int, repeat: int, n_queries: int, seed: int) -> None:
    qi = sample("adult").qi + (("salary-class",) if n_qi == 9 else ())
    ds = load_sample("adult", qi=qi)
    ds.frequency  # noqa: B018 - the one pass over rows, outside the timings
    build_profile(ds)  # load compiled kernels from numba's cache
    print(f"\n## adult, {n_qi} QIs: {ds.n_rows} rows, {ds.frequency.n_distinct} distinct combinations, "
          f"{ds.lattice.size} nodes")

    profile = build_profile(ds)
    rows = []
    for label, kwargs in [("numba, all cores", {}), ("numba, 1 thread", {"workers": 1}),
                          ("numpy roll-up", {"strategy": "numpy"})]:
        wall, cpu = median_run(lambda kw=kwargs: build_profile(ds, **kw), repeat)
        rows.append((label, wall, cpu))
    for label, wall, cpu in rows:
        print(f"profile {label:<18} wall {wall * 1000:8.1f} ms   cpu {cpu * 1000:8.1f} ms")

    rng = np.random.default_rng(seed)
    policies = sorted(POLICIES)
    times = []
    for _ in range(n_queries):
        k = int(rng.integers(2, 101))
        max_sup = int(rng.integers(0, ds.n_rows // 50))
        policy = policies[int(rng.integers(len(policies)))]

        def one_query(k=k, max_sup=max_sup, policy=policy):
            profile._stats_cache.clear()  # measure a cold query: no per-k figures kept from before
            answer = query(profile, k, max_sup)
            answer.k_minimal_nodes()
            answer.find_vector()
            return answer.preferred(policy)

        times.append(timed(one_query)[1])
    q_ms = statistics.median(times) * 1000
    print(f"query (k, MaxSup, policy), median of {n_queries}: {q_ms:.2f} ms  (p90 {np.percentile(times, 90) * 1000:.2f} ms)")

    _, brute_wall, brute_cpu = timed(lambda: build_profile(ds, strategy="direct", workers=1))
    best_wall = rows[0][1]
    print(f"brute force: every node grouped anew    wall {brute_wall * 1000:8.1f} ms   cpu {brute_cpu * 1000:8.1f} ms")
    print(f"ratios: brute / profile = {brute_wall / best_wall:.0f}× (wall), {brute_cpu / rows[1][2]:.0f}× (cpu, 1 thread); "
          f"brute / query = {brute_wall / (q_ms / 1000):.0f}×")
    print(f"targets: profile ≤ {TARGET_PROFILE[n_qi] * 1000:.0f} ms -> "
          f"{'met' if best_wall <= TARGET_PROFILE[n_qi] else 'MISSED'} (wall); "
          f"query ≤ {TARGET_QUERY_MS:.0f} ms -> {'met' if q_ms <= TARGET_QUERY_MS else 'MISSED'}")


def run_models(repeat: int) -> None:
    """Time to the k-minimal set (k = 5, MaxSup = 1 %) with privacy models on a sensitive attribute:
    the model profile (every node, its classes' sensitive distributions rolled up), then the query."""
    from microrelease.core import load_dataset
    from microrelease.core.models.l_diversity import EntropyLDiversity
    from microrelease.core.models.profile import build_model_profile
    from microrelease.core.models.sensitive import sensitive_frequency
    from microrelease.core.models.t_closeness import TCloseness

    adult = sample("adult")
    print("\n## adult with privacy models (k = 5, MaxSup = 1 %): time to the k-minimal set")
    cases = [("entropy 3-diversity, occupation sensitive (7 QIs)", [q for q in adult.qi if q != "occupation"],
              "occupation", lambda sf: EntropyLDiversity(3)),
             ("0.2-closeness (equal distance), salary-class sensitive (8 QIs)", list(adult.qi), "salary-class",
              lambda sf: TCloseness(0.2, "equal"))]
    for label, qi, attribute, make in cases:
        ds = load_dataset(adult.path, qi=qi, hierarchy_dir=adult.folder, sensitive=[attribute])
        sf = sensitive_frequency(ds, attribute)
        plain = timed(lambda ds=ds: query(build_profile(ds), 5, "1%").k_minimal_nodes())
        walls = []
        for _ in range(repeat):
            model = make(sf)
            answer, wall, _ = timed(lambda ds=ds, sf=sf, m=model: query(build_model_profile(ds, sf, [m]), 5, "1%"))
            walls.append(wall)
        n_min = len(answer.k_minimal_nodes())
        print(f"{label}: {statistics.median(walls):.2f} s ({ds.lattice.size} nodes, {n_min} k-minimal; "
              f"k-anonymity alone {plain[1]:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    print(f"# microrelease lattice benchmark ({os.cpu_count()} cores)")
    for n_qi in (8, 9):
        run(n_qi, args.repeat, args.queries, args.seed)
    run_models(min(args.repeat, 3))


if __name__ == "__main__":
    main()
