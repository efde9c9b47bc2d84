"""Whole-lattice profile and query speed on adult, against a brute-force pass in the same run.

For 8 QIs (6,480 nodes) and 9 QIs (+ salary-class, 12,960 nodes) it prints:
- the profile time (median of several runs; wall and CPU; numba on all cores, numba on one thread,
  and the pure-numpy roll-up),
- the median time of 100 random (k, MaxSup, policy) queries answered from the profile (each query:
  satisfying set, k-minimal set with metrics, Find_vector and the preferred node; measured cold,
  with the profile's per-k cache emptied first),
- a brute-force pass that groups the frequency set anew at every node (what a tool without the
  profile does for each query), and the ratios.

Then, for 8 QIs with the profile built with quality=True (issue 17), the time to evaluate risk and
quality over every node, side by side in one run (median of several runs, wall and CPU; each row cold,
with the profile's per-k cache emptied first): each quality model's optimum (k = 5, MaxSup 1 %), every
re-identification risk figure of every node, Dankar's population uniqueness at 10 % and 50 %, and the
expected re-identifications (Benedetti-Franconi); their total against the issue's target; and the extra
time of building the profile with quality=True.

Then (``--only k-map``), k-map against a population table on the 8-QI adult: the 10 % adult-sample
against the whole adult table as its population; the joint roll-up of sample and population (numba and
the numpy oracle), and deriving the profile for a new K from it, with its query.

Run: python benchmarks/lattice.py [--repeat 5] [--queries 100] [--seed 7] [--only profile|models|risk-quality|k-map]
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
TARGET_RISK_QUALITY = 0.2  # s for every risk and quality figure of every node, beyond the profile (issue 17)


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
    from microrelease.core.models.model_profile import build_model_profile
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


def run_risk_quality(repeat: int) -> None:
    """Every risk and quality figure of every node of the 8-QI adult lattice, from one profile built with
    quality=True; then the extra time of that profile against the plain one."""
    from microrelease.core.lattice.quality import QUALITY_MODELS, optimum
    from microrelease.core.risk.individual import reidentifications_by_node
    from microrelease.core.risk.reidentification import node_risk
    from microrelease.core.risk.uniqueness import uniqueness_by_node

    qi = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation")
    ds = load_sample("adult", qi=qi)  # the 8 QIs
    ds.frequency  # noqa: B018 - the one pass over rows, outside the timings
    profile = build_profile(ds, quality=True)  # also loads the compiled kernels from numba's cache
    build_profile(ds)
    k, max_sup, threshold = 5, "1%", 0.2
    print(f"\n## adult, {len(ds.quasi_identifiers)} QIs, profile with quality=True: risk and quality of every node "
          f"({profile.lattice.size} nodes, {len(profile.sizes)} (size, count) pairs; k = {k}, MaxSup {max_sup}; "
          f"median of {repeat} runs, each cold)")
    hist = (profile.offsets, profile.sizes, profile.counts)

    def once_per_profile():  # running sums every k reads (rows, squares; each QI's share mass)
        profile.__dict__.pop("_prefix", None)
        profile.quality.__dict__.pop("cumulative", None)
        return profile._prefix, profile.quality.cumulative

    once = [timed(once_per_profile) for _ in range(repeat)]
    print(f"{'once per profile: prefix sums':<40} wall {statistics.median(w for _, w, _ in once) * 1000:8.1f} ms   "
          f"cpu {statistics.median(c for _, _, c in once) * 1000:8.1f} ms (kept with the profile; not in the rows)")
    items = [(f"quality {name} optimum", lambda name=name: optimum(query(profile, k, max_sup), name))
             for name in QUALITY_MODELS]
    items += [(f"node_risk (threshold {threshold}, pi 10 %)",
               lambda: node_risk(profile, k, threshold=threshold, sampling_fraction=0.1))]
    items += [(f"uniqueness dankar, pi {f * 100:.0f} %", lambda f=f: uniqueness_by_node(*hist, f, model="dankar"))
              for f in (0.1, 0.5)]
    items += [("reidentifications_by_node, pi 10 %", lambda: reidentifications_by_node(*hist, 0.1))]

    def everything():  # what one client asking for all of them pays: the per-k class figures shared
        answer = query(profile, k, max_sup)
        for name in QUALITY_MODELS:
            optimum(answer, name)
        node_risk(profile, k, threshold=threshold, sampling_fraction=0.1)
        for f in (0.1, 0.5):
            uniqueness_by_node(*hist, f, model="dankar")
        reidentifications_by_node(*hist, 0.1)

    items.append(("all of them in one pass", everything))
    walls, cpus = {label: [] for label, _ in items}, {label: [] for label, _ in items}
    for _ in range(repeat):  # round robin, so that a slower moment of the machine touches every row alike
        for label, fn in items:
            def cold(fn=fn):
                profile._stats_cache.clear()  # no per-k figures kept from the row before
                return fn()
            _, wall, cpu = timed(cold)
            walls[label].append(wall)
            cpus[label].append(cpu)
    wall = {label: statistics.median(v) for label, v in walls.items()}
    cpu = {label: statistics.median(v) for label, v in cpus.items()}
    for label, _ in items[:-1]:
        print(f"{label:<40} wall {wall[label] * 1000:8.1f} ms   cpu {cpu[label] * 1000:8.1f} ms")
    rows = [label for label, _ in items[:-1]]
    sum_wall, sum_cpu = sum(wall[r] for r in rows), sum(cpu[r] for r in rows)
    print(f"{'sum of the rows (each pays k figures)':<40} wall {sum_wall * 1000:8.1f} ms   cpu {sum_cpu * 1000:8.1f} ms")
    together = "all of them in one pass"
    print(f"{together:<40} wall {wall[together] * 1000:8.1f} ms   cpu {cpu[together] * 1000:8.1f} ms")

    plain_walls, plain_cpus, quality_walls, quality_cpus = [], [], [], []
    for _ in range(repeat):  # alternated, as above
        _, w, c = timed(lambda: build_profile(ds))
        plain_walls.append(w)
        plain_cpus.append(c)
        _, w, c = timed(lambda: build_profile(ds, quality=True))
        quality_walls.append(w)
        quality_cpus.append(c)
    plain = statistics.median(plain_walls), statistics.median(plain_cpus)
    quality = statistics.median(quality_walls), statistics.median(quality_cpus)
    print(f"profile {'plain':<32} wall {plain[0] * 1000:8.1f} ms   cpu {plain[1] * 1000:8.1f} ms")
    print(f"profile {'quality=True':<32} wall {quality[0] * 1000:8.1f} ms   cpu {quality[1] * 1000:8.1f} ms")
    print(f"ratios: quality / plain profile = {quality[0] / plain[0]:.1f}× (wall), {quality[1] / plain[1]:.1f}× (cpu), "
          f"+{(quality[0] - plain[0]) * 1000:.0f} ms wall; risk and quality (one pass) / quality profile = "
          f"{wall[together] / quality[0]:.2f}× (wall)")
    from microrelease.core.models.model_profile import build_model_profile
    from microrelease.core.models.sensitive import prepare_models

    applied = prepare_models(load_sample("adult", qi=qi), "salary-class", {"l_diversity": "distinct:2"})
    with_models = [[], []]
    for _ in range(repeat):  # alternated, as above
        for j, quality_too in enumerate((False, True)):
            with_models[j].append(timed(lambda q=quality_too: build_model_profile(ds, *applied, quality=q))[1])
    plain_m, quality_m = (statistics.median(v) for v in with_models)
    print(f"profile {'distinct 2-diversity':<32} wall {plain_m * 1000:8.1f} ms; with quality=True "
          f"{quality_m * 1000:.1f} ms ({quality_m / plain_m:.1f}×)")
    verdict = "PASS" if wall[together] <= TARGET_RISK_QUALITY else "MISSED"
    print(f"target: risk and quality of every node ≤ {TARGET_RISK_QUALITY * 1000:.0f} ms beyond the profile -> "
          f"{verdict} (one pass: {wall[together] * 1000:.0f} ms wall, {cpu[together] * 1000:.0f} ms cpu; the rows one by "
          f"one sum to {sum_wall * 1000:.0f} ms wall)")


def run_k_map(repeat: int) -> None:
    """k-map: the joint roll-up once, then each K a numpy derivation (what the dashboard pays as K moves)."""
    import pandas as pd

    from microrelease.core.risk.k_map import code_population, joint_profile

    s = sample("adult-sample")
    ds = load_sample("adult-sample")
    population = code_population(pd.read_csv(s.population_path, sep=";", dtype=str, keep_default_na=False), ds)
    print(f"\n## k-map: adult-sample ({ds.n_rows} rows) against adult ({population.n_rows} rows), 8 QIs, "
          f"{ds.lattice.size} nodes")
    joint_profile(ds, population)  # compile / load the cached kernel first
    for strategy in ("numba", "numpy"):
        wall, cpu = median_run(lambda st=strategy: joint_profile(ds, population, strategy=st), repeat)
        print(f"joint roll-up ({strategy}): {wall:.3f} s wall, {cpu:.3f} s cpu")
    joint = joint_profile(ds, population)
    for big_k in (2, 5, 10, 20):
        joint._cache.clear()
        (_, wall, _) = timed(lambda b=big_k: joint.profile(b))
        (answer, q_wall, _) = timed(lambda b=big_k: query(joint.profile(b), 1, 0))
        print(f"new K = {big_k}: profile derived in {wall * 1000:.1f} ms, query (k = 1, MaxSup 0) "
              f"{q_wall * 1000:.1f} ms; {len(answer.k_minimal_nodes())} k-minimal nodes")
    joint.profile(5, quality=True)  # compile / load the cached quality kernel first
    walls = []
    for _ in range(repeat):
        joint._cache.clear()
        walls.append(timed(lambda: joint.profile(5, quality=True))[1])
    print(f"new K = 5 with the quality figures (a quality policy chosen; one more roll-up): "
          f"{statistics.median(walls):.3f} s wall")
    plain = build_profile(ds)
    (_, wall, _) = timed(lambda: build_profile(ds))
    print(f"k-anonymity profile of the sample alone: {wall:.3f} s")
    for label, profile, k in (("5-map (k = 1)", joint.profile(5), 1), ("5-anonymity", plain, 5)):
        for max_sup in (0, "1%"):
            minimal = query(profile, k, max_sup).k_minimal_nodes()
            print(f"  {label}, MaxSup {max_sup}: {len(minimal)} k-minimal nodes, lowest height "
                  f"{min(sum(n.vector) for n in minimal)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", choices=("profile", "models", "risk-quality", "k-map"), help="run one section")
    args = parser.parse_args()
    print(f"# microrelease lattice benchmark ({os.cpu_count()} cores)")
    if args.only in (None, "profile"):
        for n_qi in (8, 9):
            run(n_qi, args.repeat, args.queries, args.seed)
    if args.only in (None, "models"):
        run_models(min(args.repeat, 3))
    if args.only in (None, "risk-quality"):
        run_risk_quality(args.repeat)
    if args.only in (None, "k-map"):
        run_k_map(args.repeat)


if __name__ == "__main__":
    main()
