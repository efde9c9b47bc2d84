"""The search under privacy criteria beside k: the pruned search beside the whole-lattice profile, same
question, same machine, one run.

Each figure is a whole ``microrelease search --policy loss --json`` process (k = 5), timed fresh
(process CPU = user + system; peak RSS), with ``--strategy pruned`` and ``--strategy profile``:

- adult's 8 QIs under distinct 2-diversity, entropy 1.5-diversity and 0.3-closeness on salary-class,
  and under an average risk of at most 0.05, at MaxSup 0 and 1 % (without suppression the
  l-diversities and t-closeness are monotone and the tags spread; with it they are not, and the pruned
  search evaluates every node k-anonymity alone leaves open);
- adult-sample (3,016 rows) under 10-map against the whole adult table, alone and beside distinct
  2-diversity (which no profile answers: pruned only);
- the wide table of benchmarks/scale_qis.py at 10 and 11 QIs under an average risk of at most 0.05
  (profile at 10 only: at 11 it needs more memory than this machine has).

Both searches must name the same optimum (the line says ``same`` or ``DIFFERENT``). ARX is not run here:
the driver of benchmarks/scale_qis.py measures k-anonymity only.

Run: python benchmarks/criteria_search.py [--workdir /tmp/microrelease-qis]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_qis import measured, write_table  # noqa: E402 - the benchmarks folder is not a package

MODELS = [["--sensitive", "salary-class", "--l-diversity", "distinct:2"],
          ["--sensitive", "salary-class", "--l-diversity", "entropy:1.5"],
          ["--sensitive", "salary-class", "--t-closeness", "0.3"],
          ["--max-risk", "0.05"]]


def search(source: list[str], criteria: list[str], max_sup: str, strategy: str) -> dict:
    cmd = [sys.executable, "-m", "microrelease.app.cli", "search", *source, "--k", "5", "--max-sup", max_sup,
           "--policy", "loss", *criteria, "--strategy", strategy, "--quiet", "--json"]
    r = measured(cmd)
    if r["code"] == 0:
        out = json.loads(r["out"])
        r["vector"], r["score"] = out["preferred"]["vector"], out["preferred"]["score"]
        r["nodes"] = out["search"].get("nodes_evaluated")
    else:
        r["vector"] = r["score"] = r["nodes"] = None
        r["error"] = (r["err"].strip().splitlines() or ["?"])[-1]
    return r


def line(label: str, pruned: dict, profile: dict | None) -> None:
    def figure(r):
        if r is None:
            return "-"
        if r["code"] != 0:
            return f"failed: {r['error'][:60]}"
        return f"{r['cpu']:6.1f} s CPU, {r['rss_gb']:.2f} GB"

    ratio = same = ""
    if profile is not None and pruned["code"] == 0 and profile["code"] == 0:
        ratio = f"  pruned/profile CPU {pruned['cpu'] / profile['cpu']:.2f}x"
        same = "  same optimum" if pruned["vector"] == profile["vector"] else "  DIFFERENT optimum"
    nodes = f", {pruned['nodes']:,} nodes evaluated" if pruned.get("nodes") else ""
    print(f"{label:<52} pruned {figure(pruned)}{nodes} | profile {figure(profile)}{ratio}{same}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", default="/tmp/microrelease-qis")
    args = parser.parse_args()
    adult = ["--sample", "adult"]
    for criteria in MODELS:
        for max_sup in ("0", "1%"):
            label = f"adult 8 QIs, {' '.join(criteria[-2:])}, MaxSup {max_sup}"
            line(label, search(adult, criteria, max_sup, "pruned"), search(adult, criteria, max_sup, "profile"))
    sample = ["--sample", "adult-sample"]
    k_map = ["--k-map", "10"]
    line("adult-sample, --k-map 10, MaxSup 1%", search(sample, k_map, "1%", "pruned"),
         search(sample, k_map, "1%", "profile"))
    both = [*k_map, "--sensitive", "salary-class", "--l-diversity", "distinct:2"]
    line("adult-sample, --k-map 10 + distinct:2, MaxSup 1%", search(sample, both, "1%", "pruned"), None)
    workdir = Path(args.workdir)
    for n_qi in (10, 11):
        data, folder, qi = write_table(n_qi, workdir)
        source = [str(data), "--qi", ",".join(qi), "--hierarchy-dir", str(folder)]
        risk = ["--max-risk", "0.05"]
        line(f"wide {n_qi} QIs, --max-risk 0.05, MaxSup 1%", search(source, risk, "1%", "pruned"),
             search(source, risk, "1%", "profile") if n_qi == 10 else None)


if __name__ == "__main__":
    main()
