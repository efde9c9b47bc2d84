"""Wide tables (issue 26): ``microrelease release`` of a 300-row table with 1,000, 5,000 and 10,000
columns, by each engine, in one run: wall and CPU seconds, peak resident memory (the command's own
high-water mark, or the largest sum of it and its worker processes' sampled every 50 ms, whichever is
larger: Dask's local cluster holds the rows in processes of its own), and seconds per thousand columns
(target: within 2 GB and a few seconds per thousand columns).

The table: the bundled toy sample's three QIs (age, gender, zipcode; its ARX hierarchies), 300 rows
drawn with replacement (seed 1), then N columns of integers 0..99 written as text (seed 1), ``;``
separated. Before issue 26 the DuckDB engine grew to 24 GB and was killed on 5,000 columns (its
formula-cell count planned a subquery per column), and every engine spent milliseconds of pandas per
column in the formula count and the CSV writer. Dask took 215 s on 10,000 columns (21 s per thousand):
its text columns were pyarrow strings, and each of the dozens of empty copies of a frame's structure
that building its graphs makes cost per column squared.

Run: python benchmarks/wide_tables.py [--columns 1000,5000,10000] [--engines duckdb,pandas,dask]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
TOY = ROOT / "sample_data" / "toy"
PEAK = ROOT / "tests" / "peak_memory.py"
ROWS, SEED = 300, 1
TARGET_GB, TARGET_PER_THOUSAND = 2.0, 5.0  # "a few seconds per thousand columns"


def write_table(folder: Path, columns: int) -> Path:
    path = folder / f"wide{columns}.csv"
    if not path.exists():
        rng = np.random.default_rng(SEED)
        toy = pd.read_csv(TOY / "test.csv", sep=";", dtype=str)
        base = toy.sample(ROWS, replace=True, random_state=SEED).reset_index(drop=True)
        extra = pd.DataFrame(rng.integers(0, 100, size=(ROWS, columns)).astype(str),
                             columns=[f"c{i}" for i in range(columns)])
        pd.concat([base, extra], axis=1).to_csv(path, sep=";", index=False)
    return path


def release(data: Path, out: Path, engine: str) -> dict:
    """One release as a command of its own: (wall, CPU of the command, its own peak RSS in GB, exit status)."""
    peak_file = out.with_suffix(".peak")
    env = {**os.environ, "PEAK_MEMORY_FILE": str(peak_file)}
    cmd = [sys.executable, str(PEAK), "microrelease.app.cli", "release", str(data), "--sep", ";",
           "--qi", "age,gender,zipcode", "--hierarchy-dir", str(TOY), "--k", "2", "-o", str(out), "--force",
           "--quiet", "--engine", engine]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as stderr:
        child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=stderr, text=True)
        tree = tree_peak(child)
        wall = time.perf_counter() - start
        stderr.seek(0)
        said = stderr.read()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    own = int(peak_file.read_text()) / 1024 ** 2 if peak_file.exists() else float("nan")
    return {"wall": wall, "cpu": cpu, "peak_gb": max(own, tree / 1024 ** 3), "code": child.returncode,
            "error": (said.strip().splitlines() or [""])[-1] if child.returncode else ""}


def tree_peak(child: subprocess.Popen) -> int:
    """Wait for ``child``; the largest sum of resident bytes of it and its descendants, sampled every
    50 ms: Dask's worker processes hold the rows outside the command's own memory."""
    import psutil

    peak = 0
    root = psutil.Process(child.pid)
    while child.poll() is None:
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        total = 0
        for proc in procs:
            try:
                total += proc.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        peak = max(peak, total)
        time.sleep(0.05)
    child.wait()
    return peak


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--columns", default="1000,5000,10000")
    ap.add_argument("--engines", default="duckdb,pandas,dask")
    args = ap.parse_args()
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    sizes = [int(c) for c in args.columns.split(",")]
    engines = args.engines.split(",")
    walls: dict[str, dict[int, float]] = {e: {} for e in engines}
    worst: dict[str, float] = dict.fromkeys(engines, 0.0)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for columns in sizes:
            data = write_table(folder, columns)
            print(f"{columns:,} columns x {ROWS} rows ({data.stat().st_size / 1e6:.1f} MB):", flush=True)
            for engine in engines:
                r = release(data, folder / f"out_{engine}_{columns}.csv", engine)
                walls[engine][columns] = r["wall"] if r["code"] == 0 else float("inf")
                worst[engine] = max(worst[engine], r["peak_gb"] if r["code"] == 0 else float("inf"))
                said = f"exit {r['code']}: {r['error']}" if r["code"] else "released"
                print(f"  {engine:7} {r['wall']:6.1f} s wall, {r['cpu']:6.1f} s CPU, peak {r['peak_gb']:.2f} GB; "
                      f"{said}", flush=True)
    # the cost of a thousand more columns: from the smallest table to the largest (the start-up of a
    # command, ~3 s, is in both)
    low, high = min(sizes), max(sizes)
    for engine in engines:
        per = (walls[engine][high] - walls[engine][low]) / ((high - low) / 1000) if high > low else walls[engine][low]
        verdict = "PASS" if worst[engine] <= TARGET_GB and per <= TARGET_PER_THOUSAND else "MISSED"
        print(f"{engine:7}: {per:5.1f} s per 1,000 more columns, peak at most {worst[engine]:.2f} GB; target <= "
              f"{TARGET_PER_THOUSAND:g} s and <= {TARGET_GB:g} GB -> {verdict}")
    print(f"load average at end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
