"""The search at many quasi-identifiers: microrelease's pruned search beside ARX's Flash, same data, one run.

The table is adult's 9 QIs plus synthetic QIs of height 2 (12 Zipf-distributed values, value -> group
of 4 -> ``*``; seed 20261202; see microrelease/app/wide.py), so each added QI triples the lattice. For 9 to
15 QIs (``--qis``) it writes the table and its ARX hierarchies once (``--workdir``), then times whole
processes, each in a fresh process (process CPU = user + system of the process and its children; peak
RSS of the largest process):

- ``microrelease search --policy loss`` (k = 5, MaxSup 1 %; auto strategy: the pruned search above
  20,000 nodes), its nodes evaluated and optimum;
- ``microrelease search`` with the default policy (min-relative: the exact k-minimal set);
- the whole-lattice profile (``--strategy profile``) where it fits (``--profile-max`` QIs, default 11);
- ARX 3.9.2's Flash (OPTIMAL, Loss, its 100,000-node threshold lifted) through the driver ``Bench`` of
  an ARX build, when Java and the build are present (``--arx DIR``, default ``../shared/tools/arx``
  beside the repository; see its README); otherwise the figures measured on this kind of machine
  (2 cores) on 2026-12-01 are printed as the reference, marked as such.

Then the 8-QI figures: one Loss answer's search CPU (rows already read, kernels warm) and the 8-question
grid (k in 2, 5, 10, 20 x MaxSup 0, 1 %, one evaluator shared), against ARX's 0.3 s and 1.16 s
(``anonymize()`` thread CPU); 9 QIs' peak RSS for one Loss answer; and the cold start: the first-ever
``search`` with an empty numba cache (``NUMBA_CACHE_DIR`` a new folder), CPU against the 8 s target.

Run: python benchmarks/scale_qis.py [--qis 9-15] [--workdir /tmp/microrelease-qis] [--arx DIR] [--profile-max 11]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

K, MAX_SUP = 5, "1%"
# ARX 3.9.2 Flash, same table and machine kind, 2026-12-01 (process CPU s, peak RSS GB, nodes checked)
ARX_REFERENCE = {9: (5.0, 0.32, 1160), 10: (7.7, 0.38, 2371), 11: (10.1, 0.63, 4791), 12: (16.7, 0.83, 9382),
                 13: (32.0, 1.0, None), 15: (116.0, 1.0, 53314)}
ARX_ONE_ANSWER_8, ARX_GRID_8 = 0.3, 1.16  # s: anonymize() thread CPU, one answer and the 8-question grid
TARGET_RSS_GB, TARGET_RSS_9_GB, TARGET_COLD_S = 1.5, 0.5, 8.0


def write_table(n_qi: int, workdir: Path) -> tuple[Path, Path, list[str]]:
    """The wide table as ``;``-separated CSV and one ARX hierarchy per QI (``adult_hierarchy_<QI>.csv``)."""
    from microrelease.app.wide import wide_table
    from microrelease.core import write_arx

    folder = workdir / f"qi{n_qi}"
    data = folder / "data.csv"
    table, qi, hierarchies = wide_table(n_qi)
    if not data.exists():
        folder.mkdir(parents=True, exist_ok=True)
        table[list(qi)].to_csv(data, sep=";", index=False)
        for name in qi:
            write_arx(hierarchies[name], folder / f"adult_hierarchy_{name}.csv")
    return data, folder, list(qi)


def measured(cmd: list[str], env: dict | None = None, timeout: float = 3600) -> dict:
    """Run ``cmd`` in a fresh process: its output and exit code, its CPU (user + system, with what it
    waited for) and peak RSS, from the kernel's accounting of the finished process (``wait4``)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > timeout:
                proc.kill()
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return {"out": out.read(), "err": err.read(), "code": proc.returncode, "wall": time.monotonic() - start,
                "cpu": usage.ru_utime + usage.ru_stime, "rss_gb": usage.ru_maxrss / (1 << 20)}


def microrelease(data: Path, folder: Path, qi: list[str], *args: str, env: dict | None = None) -> dict:
    cmd = [sys.executable, "-m", "microrelease.app.cli", "search", str(data), "--qi", ",".join(qi),
           "--hierarchy-dir", str(folder), "--k", str(K), "--max-sup", MAX_SUP, "--quiet", *args]
    r = measured(cmd, env)
    evaluated = re.search(r"\(([\d,]+) nodes evaluated", r["out"])
    preferred = re.search(r"preferred by [\w-]+: (\[[\d, ]+\])", r["out"])
    kmin = re.search(r"(\d+) k-minimal generalization", r["out"])
    r["nodes"] = int(evaluated.group(1).replace(",", "")) if evaluated else None
    r["vector"] = preferred.group(1) if preferred else None
    r["k_minimal"] = int(kmin.group(1)) if kmin else None
    if r["code"] != 0:
        r["error"] = (r["err"].strip().splitlines() or ["?"])[-1]
    return r


def arx(arx_dir: Path, data: Path, folder: Path, qi: list[str]) -> dict | None:
    java = shutil.which("java")
    if not java or not (arx_dir / "Bench.class").exists():
        return None
    jars = sorted(str(p) for p in (arx_dir / "lib").glob("*.jar"))
    cp = ":".join([str(arx_dir), str(arx_dir / "classes"), str(arx_dir / "stub"), *jars])
    r = measured([java, "-Xmx6g", "-cp", cp, "Bench", str(data), str(folder), ",".join(qi), str(K), "0.01",
                  "OPTIMAL", "0", "1", "0", "2147483647"])
    for line in r["out"].splitlines():
        if line.startswith("{") and '"run0"' in line:
            run = json.loads(line)
            r["thread_cpu"] = run.get("cpu_ms", 0) / 1000
            r["nodes"] = run.get("checked")
            r["vector"] = "[" + ", ".join(run.get("optimum", "").split(",")) + "]" if run.get("optimum") else None
            r["error"] = run.get("error")
    return r


def in_process_figures() -> None:
    """One Loss answer and the 8-question grid at 8 QIs, rows read and kernels warm (CPU of this process)."""
    from microrelease.core import load_sample
    from microrelease.core.search import NodeEvaluator, search_pruned

    adult = load_sample("adult")
    adult.frequency  # noqa: B018 - the rows read, as ARX's figure excludes reading them
    search_pruned(adult, K, MAX_SUP, "loss").preferred("loss")  # kernels loaded
    ones, grids = [], []
    for _ in range(5):
        t = time.process_time()
        search_pruned(adult, K, MAX_SUP, "loss").preferred("loss")
        ones.append(time.process_time() - t)
        t = time.process_time()
        evaluator = NodeEvaluator(adult)
        for k in (2, 5, 10, 20):
            for max_sup in (0, "1%"):
                search_pruned(adult, k, max_sup, "loss", evaluator=evaluator).preferred("loss")
        grids.append(time.process_time() - t)
    one, grid = sorted(ones)[2], sorted(grids)[2]
    print(f"8 QIs, one Loss answer (k={K}, {MAX_SUP}): {one:.3f} s CPU (ARX {ARX_ONE_ANSWER_8} s: "
          f"{one / ARX_ONE_ANSWER_8:.2f}x); the 8-question grid: {grid:.3f} s (ARX {ARX_GRID_8} s: "
          f"{grid / ARX_GRID_8:.2f}x)  [median of 5]")


def cold_start(data: Path, folder: Path, qi: list[str]) -> None:
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        r = microrelease(data, folder, qi, "--policy", "loss", env=env)
        warm = microrelease(data, folder, qi, "--policy", "loss", env=env)
    print(f"cold start (empty numba cache), first search --policy loss at {len(qi)} QIs: {r['cpu']:.1f} s CPU "
          f"(target {TARGET_COLD_S} s); the next one: {warm['cpu']:.1f} s")


def parse_range(text: str) -> list[int]:
    lo, _, hi = text.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qis", default="9-15")
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "microrelease-qis"))
    ap.add_argument("--arx", default=str(ROOT.parent / "shared" / "tools" / "arx"))
    ap.add_argument("--profile-max", type=int, default=11)
    args = ap.parse_args()
    workdir = Path(args.workdir)
    arx_dir = Path(args.arx)
    print(f"k = {K}, MaxSup = {MAX_SUP}; process CPU (user + system) and peak RSS of fresh processes")
    print(f"{'QIs':>3} {'nodes':>10}  {'what':<34} {'CPU s':>8} {'RSS GB':>7} {'evaluated':>10}  optimum / note")
    for n_qi in parse_range(args.qis):
        data, folder, qi = write_table(n_qi, workdir)
        from microrelease.app.wide import wide_table
        from microrelease.core.lattice.distance_vectors import Lattice

        _, _, hierarchies = wide_table(n_qi, rows=1)
        size = Lattice(tuple(hierarchies[q].height for q in qi)).size
        rows = [("microrelease search --policy loss", microrelease(data, folder, qi, "--policy", "loss")),
                ("microrelease search (min-relative)", microrelease(data, folder, qi))]
        if n_qi <= args.profile_max:
            rows.append(("whole-lattice profile, Loss", microrelease(data, folder, qi, "--policy", "loss",
                                                                     "--strategy", "profile")))
        peer = arx(arx_dir, data, folder, qi)
        for what, r in rows:
            note = r.get("error") or (r["vector"] or "") + (f", {r['k_minimal']} k-minimal" if r["k_minimal"] else "")
            nodes = f"{r['nodes']:,}" if r["nodes"] else "-"
            print(f"{n_qi:>3} {size:>10,}  {what:<34} {r['cpu']:>8.1f} {r['rss_gb']:>7.2f} {nodes:>10}  {note}")
        ours = rows[0][1]
        if peer is not None:
            nodes = f"{peer['nodes']:,}" if peer.get("nodes") else "-"
            print(f"{n_qi:>3} {size:>10,}  {'ARX Flash (process)':<34} {peer['cpu']:>8.1f} {peer['rss_gb']:>7.2f} "
                  f"{nodes:>10}  {peer.get('error') or peer.get('vector')} (anonymize() thread "
                  f"{peer.get('thread_cpu', 0):.1f} s)")
            print(f"{'':>16}Loss CPU ours / ARX's: {ours['cpu'] / peer['cpu']:.2f}x; same optimum: "
                  f"{ours['vector'] == peer.get('vector')}; RSS {ours['rss_gb']:.2f} GB (target <= {TARGET_RSS_GB})")
        elif n_qi in ARX_REFERENCE:
            cpu, rss, nodes = ARX_REFERENCE[n_qi]
            print(f"{n_qi:>3} {size:>10,}  {'ARX Flash (reference, not run)':<34} {cpu:>8.1f} {rss:>7.2f} "
                  f"{(f'{nodes:,}' if nodes else '-'):>10}  no Java or ARX build here: measured 2026-12-01")
            print(f"{'':>16}Loss CPU ours / ARX's reference: {ours['cpu'] / cpu:.2f}x; RSS {ours['rss_gb']:.2f} GB "
                  f"(target <= {TARGET_RSS_GB})")
    in_process_figures()
    data, folder, qi = write_table(9, workdir)
    r = microrelease(data, folder, qi, "--policy", "loss", "--strategy", "pruned")
    print(f"9 QIs, one Loss answer (pruned search, whole process): peak RSS {r['rss_gb']:.2f} GB (target <= "
          f"{TARGET_RSS_9_GB} GB), {r['cpu']:.1f} s CPU")
    cold_start(*write_table(8, workdir))


if __name__ == "__main__":
    main()
