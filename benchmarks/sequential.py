"""Relational + sequential anonymization at scale, each measurement in a fresh process:

1. time (wall and CPU) and peak memory for 2,000, 20,000 and 100,000 generated hospital patients at
   k = 5, by phase: loading, grouping (sketch + k-d tree, groups grown by the release's loss, then
   refined), the anonymization (anonymize.py as it is), and the compiled group alignment alone
   (``align_groups``); with the output check (smallest set sharing both parts) and the utility (codes
   suppressed, relational NCP);
2. the growth of the grouping's cost: the greedy comparing every remaining entity against the one
   comparing the sketch's nearest (both without refinement) on 2,000, 5,000 and 10,000 patients, with
   the ratio of their loss (group_loss.py), and the loss after the refinement;
3. end to end: the command line (``microrelease sequential``, check, attackers and reports included) on
   the largest size, wall time and the process's peak memory;
4. two patients of 1,600 visits each: F between them, and their group alignment (compiled; with
   ``--python-pair`` also the pure-Python alignment, about 3 minutes);
5. utility (codes suppressed, relational NCP, sequence loss) and the three attackers
   (:data:`microrelease.core.sequential.attacks.ATTACKERS`) before and after, beside 1/k, on the
   bundled hospital sample at k = 2, 5, 10.

Run: python benchmarks/sequential.py [--sizes 2000,20000,100000] [--exact-sizes 2000,5000,10000] [--k 5]
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from pathlib import Path

from _fresh import in_fresh_process, parse_as_parent
from _memory import reset_peak, rss_mb


def generator():
    from microrelease.core.data.samples import sample_data_folder

    spec = importlib.util.spec_from_file_location("generate", sample_data_folder("hospital") / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load(folder: Path, every: int = 1):
    import pandas as pd

    from microrelease.core.sequential.rt_data import load_sequential

    patients = pd.read_csv(folder / "patients.csv", dtype=str, keep_default_na=False).iloc[::every]
    visits = pd.read_csv(folder / "visits.csv", dtype=str, keep_default_na=False)
    if every > 1:
        visits = visits[visits["patient_id"].isin(patients["patient_id"])]
    return load_sequential(patients[["patient_id", "name", "age", "sex", "zip"]], visits, entity_id="patient_id",
                           qi=["age", "sex", "zip"], sequence_key="visit_id", order_by="day", code="code",
                           code_hierarchy=folder / "hospital_hierarchy_code.csv", hierarchy_dir=folder,
                           identifiers=["name"])


class Clock:
    """Wall and CPU seconds (all threads) of each phase."""

    def __init__(self):
        self.figures = {}

    def __call__(self, name, fn, *args, **kwargs):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        self.figures[name] = (time.perf_counter() - wall, time.process_time() - cpu)
        return out


def warm_up(folder: Path) -> None:
    """Compile (or load from numba's cache) every kernel on a few entities, outside the timings."""
    from microrelease.core.sequential.alignment import align_groups
    from microrelease.core.sequential.anonymize import anonymize_groups
    from microrelease.core.sequential.cost import CostModel, time_span
    from microrelease.core.sequential.grouping import group_entities

    small = load(folder, every=max(1, len(list(open(folder / "patients.csv"))) // 40))
    groups = group_entities(CostModel(small), 2)
    align_groups(small, groups, w_time=1.0, span=time_span(small))
    anonymize_groups(small, groups, 2)


def child_scale(task: dict) -> dict:
    from microrelease.core.sequential.alignment import align_groups
    from microrelease.core.sequential.anonymize import anonymize_groups
    from microrelease.core.sequential.cost import CostModel, time_span
    from microrelease.core.sequential.grouping import group_entities
    from microrelease.core.sequential.guarantee import verify_release

    folder, k = Path(task["folder"]), task["k"]
    warm_up(folder)
    base = reset_peak()
    clock = Clock()
    data = clock("load", load, folder)
    model = CostModel(data)
    groups = clock("grouping", group_entities, model, k)
    clock("alignment", align_groups, data, groups, w_time=1.0, span=time_span(data))
    release = clock("anonymize", anonymize_groups, data, groups, k)
    peak = rss_mb("VmHWM")
    shared = clock("check", verify_release, release.entities, release.events, entity_id="patient_id", qi=data.qi,
                   sequence_key="visit_id", order_by="day", code="code")
    return {"entities": data.n_entities, "events": int(len(data.codes)), "phases": clock.figures, "peak_mb": peak,
            "base_mb": base, "smallest_shared": int(shared.min()),
            "suppressed": float(release.suppressed_elements.sum() / len(data.codes)),
            "relational_ncp": release.relational_loss}


def child_exact(task: dict) -> dict:
    import numpy as np

    from microrelease.core.sequential.cost import CostModel
    from microrelease.core.sequential.group_loss import LossModel
    from microrelease.core.sequential.grouping import group_entities

    folder, k = Path(task["folder"]), task["k"]
    warm_up(folder)
    model = CostModel(load(folder))
    clock = Clock()
    exact = clock("every entity", group_entities, model, k, candidates=None, passes=0)
    sketched = clock("sketched", group_entities, model, k, passes=0)
    refined = clock("refined", group_entities, model, k)
    loss = LossModel(model)

    def total(groups):
        return sum(loss.loss(np.flatnonzero(groups == g))[0] for g in range(groups.max() + 1))

    return {"entities": model.data.n_entities, "phases": clock.figures, "ratio": total(sketched) / total(exact),
            "refined": total(refined) / total(exact)}


def child_cli(task: dict) -> dict:
    """The command line end to end, in this fresh process (numba's kernels loaded from its cache)."""
    from microrelease.app.cli.run import main

    folder = Path(task["folder"])
    argv = ["sequential", str(folder / "patients.csv"), str(folder / "visits.csv"), "--entity-id", "patient_id",
            "--qi", "age,sex,zip", "--identifier", "name", "--keep", "cost", "--sequence-key", "visit_id",
            "--order-by", "day", "--code", "code", "--code-hierarchy", str(folder / "hospital_hierarchy_code.csv"),
            "--hierarchy-dir", str(folder), "--k", str(task["k"]), "--quiet", "-o", task["out"]]
    wall = time.perf_counter()
    status = main(argv)
    return {"status": status, "wall": time.perf_counter() - wall, "peak_mb": rss_mb("VmHWM")}


def child_pair(task: dict) -> dict:
    import numpy as np
    import pandas as pd

    from microrelease.core.data.samples import sample_data_folder
    from microrelease.core.sequential.alignment import align_groups
    from microrelease.core.sequential.cost import CostModel, time_span
    from microrelease.core.sequential.rt_data import load_sequential

    folder = sample_data_folder("hospital")
    codes = pd.read_csv(folder / "hospital_hierarchy_code.csv", sep=";", header=None)[0].tolist()
    rng = np.random.default_rng(1)
    rows = [(p, f"{p}-V{v}", 2 * v + (p == "b"), codes[rng.integers(len(codes))])
            for p in "ab" for v in range(task["visits"]) for _ in range(rng.integers(1, 6))]
    data = load_sequential(pd.DataFrame({"patient_id": ["a", "b"], "age": ["30", "31"], "sex": ["F", "F"],
                                         "zip": ["47600", "47601"]}),
                           pd.DataFrame(rows, columns=["patient_id", "visit_id", "day", "code"]),
                           entity_id="patient_id", qi=["age", "sex", "zip"], sequence_key="visit_id", order_by="day",
                           code="code", code_hierarchy=folder / "hospital_hierarchy_code.csv", hierarchy_dir=folder)
    warm_up(folder)
    model, both, span = CostModel(data), np.zeros(2, dtype=np.int64), time_span(data)
    base = reset_peak()
    clock = Clock()
    clock("F", model.costs_from, 0, np.array([1]))
    consensus = clock("alignment", align_groups, data, both, w_time=1.0, span=span)
    out = {"events": int(len(data.codes)), "phases": clock.figures, "extra_mb": rss_mb("VmHWM") - base,
           "kept_visits": len(consensus.low)}
    if task["python"]:
        from microrelease.core.sequential.alignment_oracle import group_consensus

        clock("python alignment", group_consensus, data, [0, 1], 1.0, span)
    return out


def child_attackers(task: dict) -> dict:
    """Utility and the three attackers at one k on the bundled hospital sample (every patient a target)."""
    from microrelease.core.data.samples import sample_data_folder
    from microrelease.core.sequential.attacks import attack_figures
    from microrelease.core.sequential.guarantee import released_records
    from microrelease.core.sequential.pipeline import anonymize_sequential

    data = load(sample_data_folder("hospital"))
    release = anonymize_sequential(data, task["k"])
    released = released_records(data, release.entities, release.events, release.intervals)
    return {"suppressed": float(release.suppressed_elements.sum() / len(data.codes)),
            "relational_ncp": release.relational_loss, "sequence_loss": release.sequence_loss,
            "attackers": attack_figures(data, released, release.pseudonym, sample=None)}


def child(task: dict) -> dict:
    return {"scale": child_scale, "exact": child_exact, "pair": child_pair, "attackers": child_attackers,
            "cli": child_cli}[task["kind"]](task)


def seconds(phase) -> str:
    wall, cpu = phase
    return f"{wall:7.1f} {cpu:7.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000,100000")
    parser.add_argument("--exact-sizes", default="2000,5000,10000")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--visits", type=int, default=1600)
    parser.add_argument("--python-pair", action="store_true", help="also time the pure-Python alignment of the pair")
    args = parse_as_parent(parser, child)
    if args is None:
        return
    make = generator()
    with tempfile.TemporaryDirectory() as tmp:
        def folder(n):
            path = Path(tmp) / str(n)
            if not path.exists():
                make.write(path, n)
            return str(path)

        print(f"# 1. relational + sequential anonymization, k = {args.k} (seconds: wall, CPU of all threads)")
        print(f"{'entities':>9} {'events':>9} {'load':>15} {'grouping':>15} {'anonymize':>15} {'align only':>15} "
              f"{'check':>15} {'peak MB':>8} {'min shared':>10} {'suppressed':>10} {'rel. NCP':>8}")
        for n in (int(s) for s in args.sizes.split(",")):
            r = in_fresh_process(__file__, {"kind": "scale", "folder": folder(n), "k": args.k})
            p = r["phases"]
            print(f"{r['entities']:>9,} {r['events']:>9,} {seconds(p['load'])} {seconds(p['grouping'])} "
                  f"{seconds(p['anonymize'])} {seconds(p['alignment'])} {seconds(p['check'])} {r['peak_mb']:>8.0f} "
                  f"{r['smallest_shared']:>10} {r['suppressed']:>10.1%} {r['relational_ncp']:>8.3f}")
        print("   (peak MB: the process's resident high-water mark through load, grouping and anonymize)")

        print(f"\n# 2. the grouping's growth, k = {args.k}: every remaining entity compared vs the sketch's nearest")
        print(f"{'entities':>9} {'every entity':>15} {'sketched':>15} {'+ refined':>15} {'loss: sketched/every':>21} "
              f"{'refined/every':>14}")
        for n in (int(s) for s in args.exact_sizes.split(",")):
            r = in_fresh_process(__file__, {"kind": "exact", "folder": folder(n), "k": args.k})
            p = r["phases"]
            print(f"{r['entities']:>9,} {seconds(p['every entity'])} {seconds(p['sketched'])} {seconds(p['refined'])} "
                  f"{r['ratio']:>21.4f} {r['refined']:>14.4f}")

        largest = max(int(s) for s in args.sizes.split(","))
        print(f"\n# 3. end to end: microrelease sequential on {largest:,} patients, k = {args.k} (check, attackers, "
              "reports included)")
        r = in_fresh_process(__file__, {"kind": "cli", "folder": folder(largest), "k": args.k,
                                        "out": str(Path(tmp) / "cli_out")})
        print(f"wall {r['wall']:.1f} s, peak memory {r['peak_mb']:.0f} MB (exit status {r['status']})")

    print(f"\n# 4. two patients of {args.visits:,} visits each")
    r = in_fresh_process(__file__, {"kind": "pair", "visits": args.visits, "python": args.python_pair})
    for name, phase in r["phases"].items():
        print(f"{name:<18} {seconds(phase)} s")
    print(f"{r['events']:,} events; {r['kept_visits']:,} visits kept; extra memory {r['extra_mb']:.0f} MB")

    print("\n# 5. the bundled hospital sample: utility, and each attacker's success before / after (1/k beside)")
    print(f"{'k':>3} {'suppressed':>10} {'rel. NCP':>8} {'seq. loss':>9}  attackers (before -> after)")
    for k in (2, 5, 10):
        r = in_fresh_process(__file__, {"kind": "attackers", "k": k})
        attackers = "; ".join(f"{name}: {a['before']:.3f} -> {a['after']:.3f}" for name, a in r["attackers"].items())
        print(f"{k:>3} {r['suppressed']:>10.1%} {r['relational_ncp']:>8.3f} {r['sequence_loss']:>9.3f}  {attackers}; "
              f"1/k = {1 / k:.3f}")


if __name__ == "__main__":
    main()
