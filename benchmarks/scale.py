"""Speed and memory of the one pass over the rows, per engine, at 1M / 10M / 50M rows.

Tables are sampled with replacement from adult (seeded; see tests/scale_data.py) and written to
Parquet once (kept in --workdir). For each size and engine it prints, each measured in a fresh
process so that peak memory is the call's own:
- the frequency-set time and its extra peak memory (RSS high-water mark minus the RSS before the
  call; for Dask, the client plus both workers),
- the whole-lattice profile time, and the release time (k = 10 per adult-sized share of rows,
  MaxSup = 0.5%, the min-relative preferred node, to Parquet in a random row order, re-checked from the file),
- in the same run, a bare DuckDB GROUP BY over the same file as the floor, and the ratios.
With --compare-python (the interpreter of an install of older code, e.g. a venv built from a git
worktree of the last commit), the DuckDB release is also measured with that code on the same files,
right after the current one, and old and new seconds, new/old, extra memory and the new release's
time split (write, re-read group-by, formula-cell count, the rest) are printed side by side.
Then the worst case: 1M rows of uniformly random QIs (about a million distinct combinations), and
the adult profile times against the targets (8 QIs <= 0.3 s, 9 QIs <= 0.6 s).

pandas is skipped where its rows would not fit comfortably in this machine's memory (it keeps
every cell as a Python object); the skip is printed with its reason.

Run: python benchmarks/scale.py [--rows 1M,10M,50M] [--workdir /tmp/microrelease-bench]
                               [--compare-python /tmp/venv-before/bin/python]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from _fresh import in_fresh_process, parse_as_parent
from _memory import reset_peak, rss_mb

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

QI = ("sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation")
PANDAS_MAX_ROWS = 60_000_000
ADULT_ROWS = 30_162
RELEASE_LIMIT = 1.5  # the new DuckDB release may take at most this many times the old one
# the engine calls a release is made of, timed separately (the old code's, then the new code's)
RELEASE_PHASES = {"release": "write", "inspect": "re-check", "frequency": "re-read group-by",
                  "formula_cells": "formula count"}


def release_function(old: bool):
    """``release(summary, node, k, target, max_sup) -> report dict``, for the installed code: the
    old streamed release (``stream_release``, before the random row order) or the current one."""
    if old:
        from microrelease.core.streaming import stream_release

        return lambda summary, node, k, target, max_sup: stream_release(summary, node, k, target,
                                                                        max_sup=max_sup).data
    from microrelease.core import Criteria, OutputOptions
    from microrelease.core.lattice.node_release import write_release

    return lambda summary, node, k, target, max_sup: write_release(summary, node, target, criteria=Criteria.of(k), max_sup=max_sup, output=OutputOptions(force=True)).data


def time_phases(engine) -> dict[str, float]:
    """Wrap ``engine``'s release-related methods (those it has) to add up their seconds."""
    spent: dict[str, float] = {}
    for method in RELEASE_PHASES:
        call = getattr(engine, method, None)
        if call is None:
            continue

        def timed(*args, _call=call, _method=method, **kwargs):
            t = time.perf_counter()
            try:
                return _call(*args, **kwargs)
            finally:
                spent[_method] = spent.get(_method, 0.0) + time.perf_counter() - t

        setattr(engine, method, timed)
    return spent


def child(task: dict) -> dict:
    """One measurement, in this (fresh) process."""
    from microrelease.core import build_profile, query
    from microrelease.core.data.samples import sample
    from microrelease.core.engines import DaskEngine
    from microrelease.core.engines.summary import summarize

    adult = sample("adult")
    path = Path(task["path"])
    out: dict = {}
    if task["kind"] == "floor":
        import duckdb

        con = duckdb.connect()
        cols = ", ".join(f'"{q}"' for q in QI)
        base = reset_peak()
        t = time.perf_counter()
        table = con.sql(f"SELECT {cols}, count(*) AS n FROM read_parquet('{path}') GROUP BY ALL").to_arrow_table()
        out.update(seconds=time.perf_counter() - t, extra_mb=rss_mb("VmHWM") - base, distinct=table.num_rows)
        return out

    engine_name = task["engine"]
    client = cluster = None
    if engine_name == "dask":
        import distributed

        from microrelease.core.engines.dask_engine import local_cluster

        cluster = local_cluster(n_workers=2, threads_per_worker=1, processes=True, silence_logs=50)
        client = distributed.Client(cluster, set_as_default=False)
        engine = DaskEngine(scheduler=client)
        client.run(reset_peak)
        worker_base = client.run(rss_mb)
    else:
        from microrelease.core.engines import make_engine

        engine = make_engine(engine_name)
    data = path
    if engine_name == "pandas":
        import pandas as pd

        data = pd.read_parquet(path)  # the pandas engine works on rows already in memory
    base = reset_peak()
    t = time.perf_counter()
    summary = summarize(data, qi=QI, hierarchy_dir=adult.folder, engine=engine, checksum=False)
    out["freq_seconds"] = time.perf_counter() - t
    out["freq_extra_mb"] = rss_mb("VmHWM") - base
    if client is not None:
        peaks = client.run(lambda: rss_mb("VmHWM"))
        out["freq_extra_mb"] += sum(peaks[w] - worker_base[w] for w in peaks)
    out["distinct"] = summary.frequency.n_distinct
    build_profile(summarize(adult.path, qi=adult.qi, hierarchy_dir=adult.folder))  # load numba's compiled kernels
    base = reset_peak()
    t = time.perf_counter()
    profile = build_profile(summary)
    out["profile_seconds"] = time.perf_counter() - t
    out["profile_extra_mb"] = rss_mb("VmHWM") - base
    if task.get("release", True):
        k = task["k"]
        answer = query(profile, k, "0.5%")
        node = answer.preferred().vector
        target = Path(task["workdir"]) / f"release-{engine_name}-{path.stem}.parquet"
        release = release_function(task.get("old", False))
        if hasattr(summary.engine, "shuffle_buckets"):
            out["buckets"] = summary.engine.shuffle_buckets(summary.source)
        phases = time_phases(summary.engine)
        base = reset_peak()
        t = time.perf_counter()
        report = release(summary, node, k, target, answer.max_sup)
        out["release_seconds"] = time.perf_counter() - t
        out["release_extra_mb"] = rss_mb("VmHWM") - base
        out["release_phases"] = phases
        out["released_rows"] = report["output"]["rows"]
        out["node"] = list(node)
        out["k_minimal"] = len(answer.k_minimal_indices)
    if client is not None:
        client.close()
        cluster.close()
    return out


def measure(task: dict, python: str = sys.executable) -> dict:
    """Run ``child(task)`` in a fresh process of ``python`` (another install's interpreter for --compare-python)."""
    return in_fresh_process(__file__, task, python=python, errors="report")


def compare_release(path: Path, k: int, workdir: Path, old_python: str, repeat: int) -> dict:
    """The DuckDB release of ``path`` by the old code (``old_python``) and the current one, alternately
    in fresh processes, ``repeat`` times each; the median run of each (by seconds)."""
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    for _ in range(repeat):
        for which, python in (("old", old_python), ("new", sys.executable)):
            folder = workdir / f"release-{which}"  # the two codes never write over each other's files
            folder.mkdir(exist_ok=True)
            r = measure({"kind": "engine", "engine": "duckdb", "path": str(path), "workdir": str(folder), "k": k,
                         "old": which == "old"}, python)
            if "error" in r:
                raise SystemExit(f"{which} code ({python}) failed on {path}: {r['error']}")
            runs[which].append(r)
    return {which: sorted(rs, key=lambda r: r["release_seconds"])[(len(rs) - 1) // 2] for which, rs in runs.items()}


def split(r: dict) -> str:
    """'write 1.2 s, re-read group-by 0.3 s, ..., rest 0.1 s' for one release measurement."""
    phases = r["release_phases"]
    parts = [f"{RELEASE_PHASES[m]} {phases[m]:.2f} s" for m in RELEASE_PHASES if m in phases]
    parts.append(f"rest {r['release_seconds'] - sum(phases.values()):.2f} s")
    if "buckets" in r:
        parts[0] += f" ({r['buckets']} bucket{'s' if r['buckets'] > 1 else ''})"
    return ", ".join(parts)


def print_comparison(n: int, both: dict, old_python: str, repeat: int) -> float:
    old, new = both["old"], both["new"]
    ratio = new["release_seconds"] / old["release_seconds"]
    print(f"\nDuckDB release, old code ({old_python}) vs new, same file, fresh processes"
          f"{f', median of {repeat}' if repeat > 1 else ''}:")
    print(f"  old {old['release_seconds']:.2f} s ({old['release_extra_mb']:.0f} MB extra), "
          f"new {new['release_seconds']:.2f} s ({new['release_extra_mb']:.0f} MB extra): new/old {ratio:.2f}x "
          f"(limit {RELEASE_LIMIT}x: {'met' if ratio <= RELEASE_LIMIT else 'MISSED'})")
    print(f"  old: {split(old)}")
    print(f"  new: {split(new)}")
    if (old["released_rows"], old["node"]) != (new["released_rows"], new["node"]):
        print(f"  old and new DISAGREE: {old['released_rows']:,} rows at {old['node']} vs "
              f"{new['released_rows']:,} rows at {new['node']}")
    return ratio


def parse_rows(text: str) -> list[int]:
    scale = {"K": 1_000, "M": 1_000_000}
    return [int(float(t[:-1]) * scale[t[-1].upper()]) if t[-1].upper() in scale else int(t)
            for t in text.split(",")]


def adult_profile_times(repeat: int = 5) -> None:
    from microrelease.core import build_profile, load_sample
    from microrelease.core.data.samples import sample

    print("\n## adult profile against the targets (median of 5, wall; 2 threads)")
    for n_qi, target in ((8, 0.3), (9, 0.6)):
        qi = sample("adult").qi + (("salary-class",) if n_qi == 9 else ())
        ds = load_sample("adult", qi=qi)
        build_profile(ds)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            build_profile(ds)
            times.append(time.perf_counter() - t)
        wall = statistics.median(times)
        print(f"{n_qi} QIs: {wall:.3f} s (target {target} s: {'met' if wall <= target else 'MISSED'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1M,10M,50M")
    parser.add_argument("--engines", default="duckdb,dask,pandas")
    parser.add_argument("--workdir", default="/tmp/microrelease-bench")
    parser.add_argument("--compare-python", metavar="PYTHON",
                        help="interpreter of an install of older code: also time its DuckDB release, side by side")
    parser.add_argument("--compare-repeat", type=int, default=1, metavar="N",
                        help="with --compare-python: old and new releases N times each, alternately (median)")
    args = parse_as_parent(parser, child)
    if args is None:
        return

    from scale_data import resample_adult, uniform_random

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    print(f"# microrelease scale benchmark ({os.cpu_count()} cores)")
    adult_profile_times()
    compared = []
    for n in parse_rows(args.rows):
        path = workdir / f"adult_{n}.parquet"
        if not path.exists():
            t = time.perf_counter()
            resample_adult(path, n)
            print(f"\n(wrote {path}: {path.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - t:.1f} s)")
        floor = measure({"kind": "floor", "path": str(path)})
        k = max(10, round(10 * n / ADULT_ROWS))  # each adult row is drawn about n / 30,162 times
        print(f"\n## {n:,} rows resampled from adult (Parquet, {path.stat().st_size / 1e6:.0f} MB); "
              f"k = {k}, MaxSup = 0.5%")
        print(f"floor: bare DuckDB GROUP BY: {floor['seconds']:.2f} s, {floor['extra_mb']:.0f} MB extra, "
              f"{floor['distinct']:,} groups")
        print(f"{'engine':<8} {'freq s':>8} {'vs floor':>9} {'freq MB':>8} {'profile s':>10} {'release s':>10} "
              f"{'released':>11} preferred")
        results = {}
        for name in args.engines.split(","):
            if name == "pandas" and n > PANDAS_MAX_ROWS:
                print(f"{name:<8} skipped: over {PANDAS_MAX_ROWS:,} rows, pandas would hold them all in memory")
                continue
            r = measure({"kind": "engine", "engine": name, "path": str(path), "workdir": str(workdir), "k": k})
            if "error" in r:
                print(f"{name:<8} failed: {r['error']}")
                continue
            results[name] = r
            print(f"{name:<8} {r['freq_seconds']:>8.2f} {r['freq_seconds'] / floor['seconds']:>8.2f}x "
                  f"{r['freq_extra_mb']:>8.0f} {r['profile_seconds']:>10.3f} {r['release_seconds']:>10.2f} "
                  f"{r['released_rows']:>11,} {r['node']}")
        if "dask" in results and "duckdb" in results:
            print(f"Dask (local, 2 workers) / DuckDB, frequency set: "
                  f"{results['dask']['freq_seconds'] / results['duckdb']['freq_seconds']:.1f}x")
        same = {(r["released_rows"], tuple(r["node"]), r["k_minimal"], r["distinct"]) for r in results.values()}
        print(f"engines agree on distinct combinations, k-minimal count, preferred node and released rows: "
              f"{'yes' if len(same) == 1 else 'NO: ' + str(same)}")
        if args.compare_python:
            both = compare_release(path, k, workdir, args.compare_python, args.compare_repeat)
            compared.append((n, both, print_comparison(n, both, args.compare_python, args.compare_repeat)))

    if compared:
        print(f"\n## DuckDB release, old vs new code, in this run (limit: new <= {RELEASE_LIMIT}x old)")
        print(f"{'rows':>11} {'old s':>7} {'new s':>7} {'new/old':>8} {'old MB':>7} {'new MB':>7}")
        for n, both, ratio in compared:
            old, new = both["old"], both["new"]
            print(f"{n:>11,} {old['release_seconds']:>7.2f} {new['release_seconds']:>7.2f} {ratio:>7.2f}x "
                  f"{old['release_extra_mb']:>7.0f} {new['release_extra_mb']:>7.0f}"
                  f"{'' if ratio <= RELEASE_LIMIT else '  over the limit'}")

    from microrelease.core.data.dataset import resolve_hierarchies
    from microrelease.core.data.roles import Schema
    from microrelease.core.data.samples import sample

    worst = workdir / "uniform_1000000.parquet"
    if not worst.exists():
        uniform_random(worst, 1_000_000, resolve_hierarchies(Schema(QI), None, sample("adult").folder))
    r = measure({"kind": "engine", "engine": "duckdb", "path": str(worst), "workdir": str(workdir), "release": False,
                 "k": 2})
    print("\n## worst case: 1,000,000 rows of uniformly random QIs (DuckDB)")
    print(f"{r['distinct']:,} distinct combinations; frequency set {r['freq_seconds']:.2f} s, "
          f"{r['freq_extra_mb']:.0f} MB extra; profile {r['profile_seconds']:.1f} s, "
          f"{r['profile_extra_mb']:.0f} MB extra")


if __name__ == "__main__":
    main()
