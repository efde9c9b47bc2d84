"""MDAV speed and memory: EIA (4,092 rows) and 100k synthetic rows x 8 attributes, k = 5.

Each case runs in a fresh process (peak memory is the call's own: RSS high-water mark minus the
RSS before the call). Also prints SSE/SST and, for EIA, the linkage rate, for the three methods.

Run: python benchmarks/microaggregation.py [--rows 100000] [--k 5]
"""

from __future__ import annotations

import argparse
import time

from _fresh import in_fresh_process, parse_as_parent
from _memory import reset_peak, rss_mb


def child(task: dict) -> dict:
    import numpy as np
    import pandas as pd

    from microrelease.core.data.samples import microdata_sample
    from microrelease.core.micro.linkage import record_linkage
    from microrelease.core.micro.micro_loss import information_loss
    from microrelease.core.micro.microaggregation import microaggregate

    if task["data"] == "eia":
        s = microdata_sample("eia")
        table, qi, conf = pd.read_csv(s.path), list(s.qi), list(s.confidential)
    else:
        rng = np.random.default_rng(5)
        n = task["rows"]
        # correlated, skewed attributes (like incomes), not an easy grid
        base = rng.lognormal(size=(n, 1))
        table = pd.DataFrame(base * rng.lognormal(sigma=0.5, size=(n, 8)), columns=[f"x{j}" for j in range(8)])
        qi, conf = list(table.columns[:6]), list(table.columns[6:])
    microaggregate(table.head(50), qi=qi, confidential=conf, k=task["k"], method=task["method"])  # load compiled code
    base_mb = reset_peak()
    t = time.perf_counter()
    result = microaggregate(table, qi=qi, confidential=conf, k=task["k"], method=task["method"], rng=1,
                            strategy=task.get("strategy", "numba"))
    seconds = time.perf_counter() - t
    extra = rss_mb("VmHWM") - base_mb
    loss = information_loss(table, result.released, qi + conf).sse_sst
    risk = record_linkage(table, result.released, qi, conf, k=task["k"], sample=2000)
    return {"rows": len(table), "seconds": seconds, "extra_mb": extra, "sse_sst": loss,
            "linkage": risk.reidentified, "learned": risk.confidential_learned}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--k", type=int, default=5)
    args = parse_as_parent(parser, child)
    if args is None:
        return
    print(f"# microaggregation benchmark, k = {args.k} (linkage on a seeded sample of 2,000 records)")
    print(f"{'data':<30} {'method':<10} {'rows':>8} {'time s':>8} {'extra MB':>9} {'SSE/SST %':>10} "
          f"{'linkage':>8} {'learned':>8}")
    for data in ("eia", "synthetic"):
        for method, strategy in (("mdav-id", "numba"), ("mdav-id", "numpy"), ("mdav-swap", "numba"),
                                 ("ir-swap", "numba")):
            r = in_fresh_process(__file__, {"data": data, "rows": args.rows, "k": args.k, "method": method, "strategy": strategy})
            label = ("EIA" if data == "eia" else "synthetic, 8 attributes") + (" (numpy)" if strategy == "numpy" else "")
            print(f"{label:<30} {method:<10} {r['rows']:>8,} {r['seconds']:>8.2f} {r['extra_mb']:>9.0f} "
                  f"{r['sse_sst']:>10.2f} {r['linkage']:>8.3f} {r['learned']:>8.3f}")
    print(f"(bound 1/k = {1 / args.k:.3f}; 'learned': share of confidential values the linked record gives right)")


if __name__ == "__main__":
    main()
