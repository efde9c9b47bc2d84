"""Utility of DP microdata on CASC Census (13 attributes, declared bounds): SSE/SST (%) of the
fixed-order-blocks (the papers' insensitive MDAV) and IR-MDAV releases for several k against the per-record baseline, for
epsilon in {0.1, 1, 10}; mean over seeded repetitions. Prints the table and the best method per epsilon.
Then ratio closeness (the route from t-closeness to DP): for epsilon in {0.5, 1, 2, 4}, k = 5, QIs the
sample's six, PEARNVAL in 4 bins over (0, 1e5): classes, smallest class, achieved epsilon and QI
SSE/SST of ratio_closeness_release beside the stratified baseline (deterministic: one run each).

Run: python benchmarks/dp.py [--repeat 5] [--only microdata|ratio-closeness]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import pandas as pd

from microrelease.core.data.samples import microdata_sample
from microrelease.core.dp import PrivacyWarning, dp_release

BASELINES = [("record-noise", "laplace"), ("record-noise", "staircase")]
CASES = [("fixed-order-blocks", 50), ("fixed-order-blocks", 100),
         ("fixed-order-blocks", 200), ("fixed-order-blocks", 540), ("ir-mdav", 5), ("ir-mdav", 20), ("ir-mdav", 100),
         ("ir-mdav", 540)]


def ratio_closeness_section() -> None:
    from microrelease.core.dp.ratio_closeness import ratio_closeness_release, stratified_baseline

    sample = microdata_sample("census")
    table = pd.read_csv(sample.path)
    print(f"# Ratio closeness on CASC Census ({len(table)} records), QIs {', '.join(sample.qi)}; PEARNVAL in 4 bins "
          "over (0, 1e5); k = 5")
    print(f"{'eps':>5} | {'ours: classes':>13} {'smallest':>8} {'eps got':>7} {'SSE/SST %':>9} {'sec':>5} | "
          f"{'baseline: classes':>17} {'smallest':>8} {'eps got':>7} {'SSE/SST %':>9} | {'loss base/ours':>14}")
    for epsilon in (0.5, 1, 2, 4):
        row = []
        for method in (ratio_closeness_release, stratified_baseline):
            started = time.perf_counter()
            r = method(table, sample.qi, "PEARNVAL", epsilon=epsilon, k=5, bounds=(0, 1e5), bins=4)
            row.append((r, time.perf_counter() - started))
        (ours, seconds), (base, _) = row
        print(f"{epsilon:>5g} | {len(ours.class_sizes):>13} {ours.class_sizes.min():>8} {ours.epsilon_achieved:>7.3f} "
              f"{ours.sse_sst:>9.1f} {seconds:>5.1f} | {len(base.class_sizes):>17} {base.class_sizes.min():>8} "
              f"{base.epsilon_achieved:>7.3f} {base.sse_sst:>9.1f} | {base.sse_sst / ours.sse_sst:>13.2f}x")
    print(f"(bin counts {ours.bin_counts}: every class holds a record of every bin, so at most "
          f"{min(ours.bin_counts)} classes; ceiling reported {ours.class_ceiling})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", choices=["microdata", "ratio-closeness"], help="run one section only")
    args = parser.parse_args()
    if args.only == "ratio-closeness":
        ratio_closeness_section()
        return
    sample = microdata_sample("census")
    table = pd.read_csv(sample.path)
    attributes = list(table.columns)
    print(f"# DP microdata on CASC Census ({len(table)} records x {len(attributes)} attributes), "
          f"SSE/SST % (mean of {args.repeat} seeds)")
    print(f"{'method':<22}" + "".join(f"{'eps=' + format(e, 'g'):>16}" for e in (0.1, 1, 10)))
    results = {}
    started = time.perf_counter()
    runs = [(method, noise, None, f"{method} ({noise})") for method, noise in BASELINES]
    runs += [(method, "laplace", k, f"{method} k={k}") for method, k in CASES]
    for method, noise, k, label in runs:
        cells = []
        for epsilon in (0.1, 1, 10):
            losses = []
            for seed in range(args.repeat):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyWarning)  # k <= sqrt(n) is shown on purpose
                    r = dp_release(table, attributes, bounds=sample.bounds_dict, epsilon=epsilon, method=method,
                                   noise=noise, k=k, rng=seed)
                losses.append(r.loss.sse_sst)  # record by record (the released rows are shuffled)
            results[(label, epsilon)] = statistics.mean(losses)
            cells.append(f"{results[(label, epsilon)]:>16,.1f}")
        print(f"{label:<22}" + "".join(cells))
    for epsilon in (0.1, 1, 10):
        best = min((v, lab) for (lab, e), v in results.items() if e == epsilon)
        base = results[("record-noise (laplace)", epsilon)]
        print(f"eps={epsilon:g}: best {best[1]} ({best[0]:,.1f} %), {base / best[0]:,.0f}x less loss than per-record Laplace")
    print(f"({time.perf_counter() - started:.1f} s)")
    if args.only is None:
        print()
        ratio_closeness_section()


if __name__ == "__main__":
    main()
