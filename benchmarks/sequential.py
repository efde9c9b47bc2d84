"""Relational + sequential anonymization: time and memory for 2,000 and 20,000 synthetic patients
(k = 5), each in a fresh process; with the guarantee check and the attack success rate; and the
claim's literal grouping (one global ranking) against the greedy one on 2,000 patients.

Run: python benchmarks/sequential.py [--sizes 2000,20000] [--k 5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _fresh import in_fresh_process, parse_as_parent
from _memory import reset_peak, rss_mb


def child(task: dict) -> dict:
    import importlib.util

    from microrelease.core.data.samples import sample_data_folder
    from microrelease.core.sequential.guarantee import check_release, subsequence_attack
    from microrelease.core.sequential.model import load_sequential
    from microrelease.core.sequential.release import anonymize_sequential

    folder = sample_data_folder("hospital")
    spec = importlib.util.spec_from_file_location("generate", folder / "generate.py")
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    with tempfile.TemporaryDirectory() as tmp:
        generator.write(Path(tmp), task["patients"])
        data = load_sequential(Path(tmp) / "patients.csv", Path(tmp) / "visits.csv", entity_id="patient_id",
                               qi=["age", "sex", "zip"], sequence_key="visit_id", order_by="day", code="code",
                               code_hierarchy=Path(tmp) / "hospital_hierarchy_code.csv", hierarchy_dir=tmp,
                               identifiers=["name"])
    anonymize_sequential(load_small(data), 2)  # load the compiled cost function
    base = reset_peak()
    t = time.perf_counter()
    release = anonymize_sequential(data, task["k"], variant=task.get("variant", "greedy"))
    seconds = time.perf_counter() - t
    extra = rss_mb("VmHWM") - base
    shared = check_release(release.entities, release.events, entity_id="patient_id", qi=data.qi,
                           sequence_key="visit_id", order_by="day", code="code")
    attack = subsequence_attack(data, release.entities, release.events, release.pseudonym, m=2, sample=500)
    return {"entities": data.n_entities, "events": int(len(data.codes)), "seconds": seconds, "extra_mb": extra,
            "smallest_shared": int(shared.min()), "attack": attack, "relational_loss": release.relational_loss,
            "sequence_loss": release.sequence_loss}


def load_small(data):
    """The first 10 entities of ``data`` (for warming up the compiled code)."""
    from microrelease.core.sequential.model import SequentialData

    ids = data.entities[data.entity_id].head(10)
    return SequentialData(data.entities.head(10), data.events[data.events[data.entity_id].isin(ids)],
                          data.entity_id, data.qi, data.identifiers, data.hierarchies, data.code_hierarchy,
                          data.sequence_key, data.order_by, data.code)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2000,20000")
    parser.add_argument("--k", type=int, default=5)
    args = parse_as_parent(parser, child)
    if args is None:
        return
    print(f"# relational + sequential anonymization, k = {args.k}")
    print(f"{'variant':<8} {'entities':>9} {'events':>8} {'time s':>8} {'extra MB':>9} {'min shared':>11} {'attack':>7} "
          f"{'rel. loss':>10} {'seq. loss':>10}")
    sizes = [int(s) for s in args.sizes.split(",")]
    # the claim's literal reading (one global ranking) beside the greedy grouping, on the smallest size
    runs = [("greedy", size) for size in sizes] + [("ranking", sizes[0])]
    for variant, size in runs:
        task = {"patients": size, "k": args.k, "variant": variant}
        r = in_fresh_process(__file__, task)
        print(f"{variant:<8} {r['entities']:>9,} {r['events']:>8,} {r['seconds']:>8.1f} {r['extra_mb']:>9.0f} "
              f"{r['smallest_shared']:>11} {r['attack']:>7.3f} {r['relational_loss']:>10.3f} {r['sequence_loss']:>10.3f}")


if __name__ == "__main__":
    main()
